r"""``symbolic-attn run FILE.toml [--format text|latex|markdown|json] [--digits N] [--stage PATH]...
[--decimals-only]``: every definition of a computation file, and every stage of it, exactly
with certified decimals beside.

The file has ``[inputs]`` (integers, expression strings, or arrays of those) and
``[define]`` (named definitions, evaluated in order by
:func:`symbolic_attn.model.program.run_each`).  Today's ``[attention]`` table stays
valid: it is the definition named ``attention``.  Other tables (``claims``...) are left to
``check``.

Shown at a size people can read: every entry is written in its canonical form (what is
proved rational is that rational, :class:`~symbolic_attn.render.exact_text.Canonical`), the
same in text, LaTeX and JSON; a form of more than
:data:`~symbolic_attn.render.exact_text.PRINT_BUDGET` nodes is not printed (its place says
``(exact form: N nodes, not printed)``, beside its certified decimal).  Each definition is
computed on its own, under a bound of :data:`RUN_NODE_LIMIT` nodes per entry passed on: a
definition whose exact value is larger (or that uses one) says why in its place, the others
are shown, and the exit status is 1.

``--stage PATH`` (repeatable) shows only those stages (paths as in the trace: ``A.weights``,
``M.head[1].output``; an unknown path is an error naming the known ones);
``--decimals-only`` shows only the certified decimals.  LaTeX labels are mathematical
(:mod:`symbolic_attn.render.labels`: ``A^{(1)}`` for ``M.head[1].weights``).  Markdown: each
stage a ``####`` heading (its path) and a ``$$\begin{aligned}...\end{aligned}$$`` display
(KaTeX and MathJax read it).

JSON: ``{"definitions": {name: text}, "stages": {path: {"shape", "exact", "latex",
"decimal"}}, "not_shown": {name: why}}``; exact strings are read back by the tool's own
parser (``e`` is Euler's number), ``null`` for an entry not printed (then the stage has
``"not_printed": {"i,j": nodes}`` and ``"latex": null``); decimals have 30 significant
digits; ``--decimals-only`` keeps ``shape`` and ``decimal``.  Exit 0; 1 when a definition
was not shown; 2 with one line on stderr for bad input.
"""

from __future__ import annotations

import argparse
import json
import sys

from symbolic_attn.cli.options import add_format_option, examples_epilog
from symbolic_attn.exact.deadline import Deadline
from symbolic_attn.errors import ParseError, StageError, SymbolicAttnError, shown
from symbolic_attn.exact.limits import DEFAULT_LIMITS
from symbolic_attn.model.compose import ClosedFormTooLarge, node_limit
from symbolic_attn.model.trace import check_path, known_path
from symbolic_attn.render.display import canonical_rows, stage_latex_lines, stage_lines
from symbolic_attn.render.exact_text import PRINT_BUDGET, Canonical, exact_string
from symbolic_attn.render.labels import entry_label, stage_label
from symbolic_attn.render.latex import escape_text, matrix_latex

__all__ = ["add_parser", "run", "exact_text", "json_document", "RUN_NODE_LIMIT", "FORMATS"]

MAX_DIGITS = 100
JSON_DIGITS = 30
FORMATS = ("text", "latex", "markdown", "json")
#: Nodes one entry passed on from a sublayer or definition to the next may have in ``run``
#: (the Python API keeps :data:`~symbolic_attn.model.compose.MAX_NODES`): the exact
#: expression bound of the input language (``Limits.max_expression_nodes``).
RUN_NODE_LIMIT = DEFAULT_LIMITS.max_expression_nodes
#: Expression nodes of all printed closed forms together; past it, only forms of at most
#: :data:`SMALL_BUDGET` nodes are printed (every entry keeps its certified decimals).
MAX_PRINTED_NODES = 250_000
SMALL_BUDGET = 20
#: Seconds one definition may take to compute exactly; past it, it is not shown (its place
#: says so) and the others are.  Exact closed forms of stacked sublayers can grow past what
#: SymPy builds in reasonable time (attention over a block's output) well below any node bound.
DEFINITION_SECONDS = 10.0


def _too_slow(name: str, seconds: float) -> ClosedFormTooLarge:
    """What a definition that ran out of its :data:`DEFINITION_SECONDS` becomes: not shown, in its place."""
    return ClosedFormTooLarge(f"its exact closed form took more than {seconds:g} s to compute (exact values grow "
                              "with every sublayer); its decimals are not computed either")


def _Deadline(seconds: float) -> Deadline:
    """One definition's wall-clock bound (:class:`~symbolic_attn.exact.deadline.Deadline`)."""
    return Deadline(seconds, _too_slow)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="compute every definition of a file exactly, every stage with decimals beside it",
        description=(
            "Evaluate the [define] section of a TOML file in order (attention, multihead, sinusoidal, rope, "
            "alibi, layer_norm, relu, gelu, feed_forward, encoder_block, decoder_block, ...) and show every "
            "stage exactly, with certified decimals. Each definition is shown on its own: one whose exact value "
            "is too large to compute says why in its place (exit 1)."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=examples_epilog(
            "symbolic-attn run examples/define/layer_norm.toml",
            "symbolic-attn run examples/define/layer_norm.toml --digits 6",
            "symbolic-attn run examples/define/issue.toml --stage A.weights --stage N",
            "symbolic-attn run examples/define/encoder.toml --decimals-only --format markdown",
            notes="Exit status: 0 every definition shown, 1 a definition not shown (too large to compute "
                  "exactly;\nits place says why), 2 an unreadable or invalid file.",
        ),
    )
    parser.add_argument("file", metavar="FILE.toml", help="the computation file")
    add_format_option(parser, FORMATS)
    parser.add_argument("--digits", type=int, default=3, metavar="N",
                        help=f"decimal places shown in text, LaTeX and Markdown, 0 to {MAX_DIGITS} (default 3); JSON "
                             f"always has {JSON_DIGITS} significant digits")
    parser.add_argument("--stage", action="append", metavar="PATH",
                        help="show only this stage (repeatable; paths as in the trace: A.weights, M.head[1].output)")
    parser.add_argument("--decimals-only", action="store_true", help="show only the certified decimals, no closed forms")
    parser.set_defaults(handler=run)


# -- showing the stages ---------------------------------------------------------------------


def exact_text(expr) -> str:
    """An exact value as text the tool's own parser reads back (:func:`~symbolic_attn.render.exact_text.exact_string`).

    >>> import sympy
    >>> exact_text(sympy.E / 3 + sympy.sqrt(2))
    'sqrt(2) + e/3'
    """
    return exact_string(expr)


class _Shown:
    """What ``run`` shows of one file: the computed trace, the definitions left out, the
    stages selected, one canonical form per value and one set of decimals per matrix."""

    def __init__(self, trace, missing: dict, definitions, stages=None, digits: int = 3, deadline=None):
        self.trace, self.missing, self.digits = trace, missing, digits
        self.deadline = deadline or _Deadline(DEFINITION_SECONDS)
        self.texts = dict(definitions)
        self.order = [name for name, _ in definitions]
        self.canonical = Canonical()
        self._decimals: dict = {}
        self.selected = bool(stages)
        self.items = self._select(stages)
        self.budget = PRINT_BUDGET

    # -- which stages, in which order ---------------------------------------------------

    def _select(self, stages) -> list:
        """[("stage", path) | ("missing", name)] in the order shown."""
        if not stages:
            items = []
            for name in self.order:
                if name in self.missing:
                    items.append(("missing", name))
                else:
                    items += [("stage", path) for path in shown_paths(self.trace) if path.split(".")[0] == name]
            return items
        paths = list(self.trace)
        items = []
        for given in stages:
            check_path(given)
            path = known_path(given, paths)
            if path in self.trace:
                item = ("stage", path)
            elif given.split(".")[0] in self.missing:
                item = ("missing", given.split(".")[0])
            else:
                known = ", ".join(paths + list(self.missing)) or "none"
                raise StageError(f"unknown stage {shown(given)!r}: expected one of {known}")
            if item not in items:
                items.append(item)
        return items

    def stage_paths(self) -> list:
        return [path for kind, path in self.items if kind == "stage"]

    def not_shown(self) -> list:
        return [name for kind, name in self.items if kind == "missing"]

    # -- values -------------------------------------------------------------------------

    def compute(self) -> None:
        """Build every selected stage (stages may be lazy); a definition whose stage is too
        large to compute joins the ones not shown, in the place of its first stage."""
        for kind, path in list(self.items):
            if kind != "stage":
                continue
            try:
                with self.deadline(path.split(".")[0]):
                    self.trace[path]
            except ClosedFormTooLarge as error:
                name = path.split(".")[0]
                self.missing[name] = str(error)
                first = next(i for i, (_kind, p) in enumerate(self.items) if p.split(".")[0] == name)
                rest = [item for item in self.items if item[1].split(".")[0] != name]
                self.items = rest[:first] + [("missing", name)] + rest[first:]

    def decimals(self, path: str, digits: int, significant: bool = False):
        """Certified decimals of a stage, once per matrix: from the remembered enclosures of
        the canonical forms (the same certified rounding), else the trace's own route."""
        matrix = self.trace[path]
        key = (matrix, digits, significant)
        if key not in self._decimals:
            try:
                rows = [[self.canonical.decimal(entry, digits, significant) for entry in matrix.row(i)]
                        for i in range(matrix.rows)]
            except SymbolicAttnError:  # nan weights (a library's policy copied): the trace says how
                rows = self.trace.decimals(path, digits, significant)
            self._decimals[key] = rows
        return self._decimals[key]

    def choose_budget(self, exact: bool) -> None:
        """The per-entry print budget: :data:`PRINT_BUDGET`, or :data:`SMALL_BUDGET` when the
        printed forms would have more than :data:`MAX_PRINTED_NODES` nodes in all."""
        if not exact:
            return
        total = 0
        for path in self.stage_paths():
            for entry in self.trace[path]:
                nodes = self.canonical.nodes(self.canonical(entry))
                if nodes <= PRINT_BUDGET:
                    total += nodes
        if total > MAX_PRINTED_NODES:
            self.budget = SMALL_BUDGET

    def reason(self, name: str) -> str:
        """Why a definition is not shown, without the repeated ``definition 'N': ``."""
        text = self.missing[name]
        prefix = f"definition {name!r}: "
        return text[len(prefix):] if text.startswith(prefix) else text

    def title(self, path: str) -> str:
        return f"{path} = {self.texts[path]}" if path in self.texts else path


def shown_paths(trace) -> list:
    """The stages worth showing: ``A.output`` is ``A`` again (and ``M.head[1].output`` is
    ``M.head[1]``), so those repeats are left out of text and LaTeX (JSON keeps them)."""
    paths = list(trace)
    present = set(paths)
    return [p for p in paths if not (p.endswith(".output") and p[: -len(".output")] in present)]


def text_report(view: _Shown, exact: bool = True) -> str:
    blocks = []
    for kind, path in view.items:
        if kind == "missing":
            blocks.append(f"{view.title(path)}\n  not shown: {view.reason(path)}")
            continue
        blocks.append("\n".join(stage_lines(view.title(path), path, view.trace[path], view.decimals(path, view.digits),
                                            canonical=view.canonical, exact=exact, budget=view.budget)))
    return "\n\n".join(blocks)


_LATEX_LINES = 12


class _Stage:
    """One stage of a trace seen as attention's display sees a result (stage, decimals)."""

    def __init__(self, view: _Shown, path: str):
        self.view, self.path = view, path

    def stage(self, _key):
        return self.view.trace[self.path]

    def decimals(self, _key, digits):
        return self.view.decimals(self.path, digits)


def _latex_lines(view: _Shown, path: str, exact: bool) -> list:
    return stage_latex_lines(_Stage(view, path), path, path, stage_label(path), view.digits,
                             entry_label=lambda i, j: entry_label(path, i, j), canonical=view.canonical,
                             exact=exact, budget=view.budget)


def _missing_latex(view: _Shown, name: str) -> str:
    return rf"\mathrm{{{escape_text(name)}}} &\quad \text{{not shown: its exact value is too large to compute}}"


def latex_report(view: _Shown, exact: bool = True) -> str:
    r"""Every shown stage as amsmath ``align*`` lines within an article's ``\textwidth``
    (long closed forms entry by entry and broken over lines, as ``attention --format latex``),
    in blocks short enough to break across pages; labels from :mod:`symbolic_attn.render.labels`."""
    blocks = []
    for kind, path in view.items:
        if kind == "missing":
            blocks.append(f"% {path}: not shown: {' '.join(view.reason(path).split())}\n"
                          f"\\begin{{align*}}\n{_missing_latex(view, path)}\n\\end{{align*}}")
            continue
        lines = _latex_lines(view, path, exact)
        # An align* never breaks across pages: one per stage, at most _LATEX_LINES lines each
        # (a line of a fraction of exponentials is ~40 pt high; a page ~590 pt).
        blocks.extend("\\begin{align*}\n" + " \\\\\n".join(lines[start:start + _LATEX_LINES]) + "\n\\end{align*}"
                      for start in range(0, len(lines), _LATEX_LINES))
    return "\n".join(blocks)


def markdown_report(view: _Shown, exact: bool = True) -> str:
    r"""Each stage a ``####`` heading (its path, and the definition's text) and one
    ``$$\begin{aligned}...\end{aligned}$$`` display: the same lines as LaTeX."""
    blocks = []
    for kind, path in view.items:
        heading = f"#### `{path}`" + (f" = `{view.texts[path]}`" if path in view.texts else "")
        if kind == "missing":
            blocks.append(f"{heading}\n\nNot shown: {view.reason(path)}")
            continue
        body = " \\\\\n".join(_latex_lines(view, path, exact))
        blocks.append(f"{heading}\n\n$$\n\\begin{{aligned}}\n{body}\n\\end{{aligned}}\n$$")
    return "\n\n".join(blocks)


def json_document(view: _Shown, exact: bool = True) -> dict:
    """The JSON object of a program's trace: every stage's shape, exact, LaTeX, decimals.

    Without ``--stage`` every path is there (``A.output`` too).
    """
    stages = {}
    if view.selected:
        paths = view.stage_paths()
    else:
        paths = [path for path in view.trace if path.split(".")[0] not in view.missing]
    for path in paths:
        matrix = view.trace[path]
        stage = {"shape": [matrix.rows, matrix.cols]}
        if exact:
            rows, skipped = canonical_rows(matrix, view.canonical, view.budget)
            stage["exact"] = rows
            stage["latex"] = None if skipped else matrix_latex(view.canonical.matrix(matrix), order="none")
            if skipped:
                stage["not_printed"] = skipped
        stage["decimal"] = view.decimals(path, JSON_DIGITS, significant=True)
        stages[path] = stage
    document = {"definitions": dict(view.texts), "stages": stages}
    if view.not_shown():
        document["not_shown"] = {name: view.reason(name) for name in view.not_shown()}
    return document


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.digits <= MAX_DIGITS:
        raise ParseError(f"--digits must be between 0 and {MAX_DIGITS}, got {args.digits}")
    from symbolic_attn.grading.computation import load_computation  # only this command reads computation files
    from symbolic_attn.model.program import run_each

    computation = load_computation(args.file)
    exact = not args.decimals_only
    with node_limit(RUN_NODE_LIMIT):
        trace, missing = run_each(computation.inputs, computation.definitions, guard=_Deadline(DEFINITION_SECONDS))
        view = _Shown(trace, dict(missing), computation.definitions, getattr(args, "stage", None), args.digits)
        view.compute()
        view.choose_budget(exact)
        if args.format == "json":
            text = json.dumps(json_document(view, exact), indent=2, ensure_ascii=False)
        elif args.format == "latex":
            text = latex_report(view, exact)
        elif args.format == "markdown":
            text = markdown_report(view, exact)
        else:
            text = text_report(view, exact)
    print(text)
    left_out = view.not_shown()
    if left_out:
        print(f"symbolic-attn: not shown: {', '.join(left_out)} (too large to compute exactly; see its place)",
              file=sys.stderr)
        return 1
    return 0
