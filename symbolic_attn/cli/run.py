r"""``symbolic-attn run FILE.toml [--format text|latex|json] [--digits N]``: every definition
of a computation file, and every stage of it, exactly with certified decimals beside.

The file has ``[inputs]`` (integers, expression strings, or arrays of those) and
``[define]`` (named definitions, evaluated in order by
:func:`symbolic_attn.model.program.run_program`).  Today's ``[attention]`` table stays
valid: it is the definition named ``attention``.  Other tables (``claims``...) are left to
``check``.

JSON: ``{"definitions": {name: text}, "stages": {path: {"shape", "exact", "latex",
"decimal"}}}``; exact strings are read back by the tool's own parser (``e`` is Euler's
number), decimals have 30 significant digits.  Exit 0, or 2 with one line on stderr.
"""

from __future__ import annotations

import argparse
import json

import sympy

from symbolic_attn.errors import InputLimitError, ParseError
from symbolic_attn.render.display import stage_lines
from symbolic_attn.render.exact_text import exact_string
from symbolic_attn.render.latex import escape_text, matrix_latex

__all__ = ["add_parser", "run", "exact_text", "json_document"]

MAX_DIGITS = 100
JSON_DIGITS = 30
#: Expression nodes of all printed stages together (see check_printable).
MAX_PRINTED_NODES = 250_000


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="compute every definition of a file exactly, every stage with decimals beside it",
        description=(
            "Evaluate the [define] section of a TOML file in order (attention, multihead, sinusoidal, rope, "
            "alibi, layer_norm, relu, gelu, feed_forward, encoder_block, decoder_block, ...) and show every "
            "stage exactly, with certified decimals."
        ),
    )
    parser.add_argument("file", metavar="FILE.toml", help="the computation file")
    parser.add_argument("--format", choices=("text", "latex", "json"), default="text", help="output format (default text)")
    parser.add_argument("--digits", type=int, default=3, metavar="N",
                        help="decimal places shown in text and LaTeX (default 3); JSON always has 30 significant digits")
    parser.set_defaults(handler=run)


# -- showing the stages ---------------------------------------------------------------------


def exact_text(expr) -> str:
    """An exact value as text the tool's own parser reads back (:func:`~symbolic_attn.render.exact_text.exact_string`).

    >>> exact_text(sympy.E / 3 + sympy.sqrt(2))
    'sqrt(2) + e/3'
    """
    return exact_string(expr)


def json_document(trace, definitions) -> dict:
    """The JSON object of a program's trace: every stage's shape, exact, LaTeX, decimals."""
    stages = {}
    for path in trace:
        matrix = trace[path]
        stages[path] = {
            "shape": [matrix.rows, matrix.cols],
            "exact": [[exact_text(e) for e in matrix.row(i)] for i in range(matrix.rows)],
            "latex": matrix_latex(matrix, order="none"),
            "decimal": trace.decimals(path, JSON_DIGITS, significant=True),
        }
    return {"definitions": dict(definitions), "stages": stages}


def shown_paths(trace) -> list:
    """The stages worth showing: ``A.output`` is ``A`` again (and ``M.head[1].output`` is
    ``M.head[1]``), so those repeats are left out of text and LaTeX (JSON keeps them)."""
    paths = list(trace)
    present = set(paths)
    return [p for p in paths if not (p.endswith(".output") and p[: -len(".output")] in present)]


def text_report(trace, definitions, digits: int) -> str:
    texts = dict(definitions)
    blocks = []
    for path in shown_paths(trace):
        title = f"{path} = {texts[path]}" if path in texts else path
        blocks.append("\n".join(stage_lines(title, path, trace[path], trace.decimals(path, digits))))
    return "\n\n".join(blocks)


_LATEX_LINES = 12


class _Stage:
    """One stage of a trace seen as attention's display sees a result (stage, decimals)."""

    def __init__(self, trace, path):
        self.trace, self.path = trace, path

    def stage(self, _key):
        return self.trace[self.path]

    def decimals(self, _key, digits):
        return self.trace.decimals(self.path, digits)


def latex_report(trace, digits: int) -> str:
    r"""Every shown stage as amsmath ``align*`` lines within an article's ``\textwidth``
    (long closed forms entry by entry and broken over lines, as ``attention --format latex``),
    in blocks short enough to break across pages."""
    from symbolic_attn.render.display import stage_latex_lines

    blocks = []
    for path in shown_paths(trace):
        name = rf"\text{{{escape_text(path)}}}"
        lines = stage_latex_lines(_Stage(trace, path), path, name, name, digits)
        # An align* never breaks across pages: one per stage, at most _LATEX_LINES lines each
        # (a line of a fraction of exponentials is ~40 pt high; a page ~590 pt).
        blocks.extend("\\begin{align*}\n" + " \\\\\n".join(lines[start:start + _LATEX_LINES]) + "\n\\end{align*}"
                      for start in range(0, len(lines), _LATEX_LINES))
    return "\n".join(blocks)


def check_printable(trace, limit: int = MAX_PRINTED_NODES) -> None:
    """Refuse, before printing anything, a file whose closed forms are too big to show.

    Every stage is printed exactly (text, LaTeX) with certified decimals: a 32 x 32
    two-head computation with a dense W_O printed 200 MB of JSON in eight minutes.
    """
    count = 0
    for path in trace:
        for entry in trace[path]:
            for _ in sympy.preorder_traversal(entry):
                count += 1
                if count > limit:
                    raise InputLimitError(
                        f"{path}: the exact stages of this file have more than {limit} expression nodes in all, too "
                        "many to print; use smaller matrices, or the Python API "
                        "(symbolic_attn.model.program.run_program) without printing"
                    )


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.digits <= MAX_DIGITS:
        raise ParseError(f"--digits must be between 0 and {MAX_DIGITS}, got {args.digits}")
    from symbolic_attn.grading.computation import load_computation  # only this command reads computation files

    computation = load_computation(args.file)
    definitions = computation.definitions
    trace = computation.trace()
    check_printable(trace)
    if args.format == "json":
        print(json.dumps(json_document(trace, definitions), indent=2, ensure_ascii=False))
    elif args.format == "latex":
        print(latex_report(trace, args.digits))
    else:
        print(text_report(trace, definitions, args.digits))
    return 0
