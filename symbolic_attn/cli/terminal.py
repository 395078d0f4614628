r"""What ``attention`` prints: the stages chosen (``--stage``), closed forms only where they
say something (``--exact``), blocked entries marked.

The layout of a stage is the one of :mod:`symbolic_attn.render.display` (shared with
``run``): a grid of certified decimals, then each entry exactly beside its decimal.  Here:

* ``--exact all`` prints a closed-form line for every entry; ``nontrivial`` (the default)
  only for an entry that is not a rational number (an integer, a fraction and a blocked
  ``-inf`` are already what the grid shows, or the grid rounds them plainly); ``none``
  prints the grids alone, as ``--decimals-only`` does, and never builds a closed form.
* ``--stage PATH`` (repeatable) shows only those stages, named as in the result's trace:
  ``query``, ``key``, ``value``, ``scores``, ``scaled``, ``masked``, ``weights``, ``output``.
* The mask is shown (``mask M``: ``1`` may attend, ``·`` blocked); in the grids a blocked
  score is in parentheses, a masked score is ``−∞`` and a weight that the mask makes
  exactly 0 is ``·``; a closed-form line of a blocked entry ends with ``(blocked)``.

>>> from symbolic_attn.model.attention import attention_from_scores
>>> from symbolic_attn.model.masks import Mask
>>> result = attention_from_scores([["0", "ln(2)", "ln(3)"]], [[1, 0], [0, 2], [3, 1]], mask=Mask.keep([[1, 1, 0]]))
>>> print(text_report(result, 3, stages=["masked", "weights"]))
attention from given scores: n=1 queries, m=3 keys, d_v=2; scale 1 (none); mask keep [[1,1,0]]
<BLANKLINE>
mask M, 1 = may attend, · = blocked (1x3)
  [ 1  1  · ]
<BLANKLINE>
masked scores S + M (-inf where blocked) (1x3)
  [ 0.000  0.693     −∞ ]
  S+M[1,2] = log(2)  ≈ 0.693
<BLANKLINE>
weights A = softmax(S) (1x3)
  [ 0.333  0.667      · ]
>>> print(text_report(result, 3, stages=["weights"], exact="all"))  # doctest: +ELLIPSIS
attention ...
<BLANKLINE>
weights A = softmax(S) (1x3)
  [ 0.333  0.667      · ]
  A[1,1] = 1/3  ≈ 0.333
  A[1,2] = 2/3  ≈ 0.667
  A[1,3] = 0  (blocked)
"""

from __future__ import annotations

import difflib
import json
import re

import sympy

from symbolic_attn.errors import StageError, safe_text
from symbolic_attn.model.attention import STAGES
from symbolic_attn.render import display
from symbolic_attn.render.exact_text import exact_rows, exact_string
from symbolic_attn.render.latex import DISPLAY_WIDTH, bracketed_rows, escape_text, latex_width, matrix_latex

__all__ = ["EXACT_MODES", "STAGE_PATHS", "choose_stages", "text_report", "latex_blocks", "latex_report",
           "markdown_report", "json_report"]

#: ``--exact``: a closed-form line for every entry, for the non-rational ones, or none.
EXACT_MODES = ("all", "nontrivial", "none")
#: Every path ``--stage`` may name, in the order they are shown.
STAGE_PATHS = ("query", "key", "value", *STAGES)
_INPUTS = {"query": ("Q", "queries Q"), "key": ("K", "keys K"), "value": ("V", "values V")}
_LATEX_INPUTS = {"query": "Q", "key": "K", "value": "V"}
_MINUS_INFINITY = "−∞"
_BLOCKED_ZERO = "·"


class _Outline:
    """A result seen by display's text report with every stage a 1x1 zero: what it prints
    is display's own header and stage titles, and nothing is computed for it."""

    def __init__(self, result):
        self._result = result

    def __getattr__(self, name):
        return getattr(self._result, name)

    def stage(self, key):
        return sympy.ImmutableMatrix([[0]])

    def decimals(self, key, digits, significant=False):
        return [["0"]]


def _outline(result) -> tuple:
    """(display's header line, [(path, symbol, title)] of the stages it shows), from
    :func:`symbolic_attn.render.display.text_report` itself, so that they never differ."""
    header, *blocks = display.text_report(_Outline(result), 0).split("\n\n")
    stages = []
    for block in blocks:
        title, _grid, entry = block.split("\n")[:3]
        symbol = entry.strip().split("[1,1]")[0]
        stages.append((_PATHS[symbol], symbol, title.removesuffix(" (1x1)")))
    return header, stages


#: The stage each of display's entry symbols names.
_PATHS = {"S": "scores", "S'": "scaled", "S+M": "masked", "S'+M": "masked", "A": "weights", "Z": "output"}


def choose_stages(result, wanted=None) -> list:
    """(path, symbol, title) of each stage shown: the usual ones (the scaled scores when
    there is a scale, the masked ones when there is a mask), or those ``wanted`` in the
    order of :data:`STAGE_PATHS`.  An unknown path is a :class:`StageError` with the
    closest path suggested.

    >>> from symbolic_attn.model.attention import attention_from_scores
    >>> result = attention_from_scores([[0, 1]], [[1], [2]])
    >>> [path for path, _, _ in choose_stages(result)]
    ['scores', 'weights', 'output']
    >>> choose_stages(result, ["weight"])
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.StageError: --stage: unknown stage 'weight' (did you mean 'weights'?): expected one of value, scores, scaled, masked, weights, output
    """
    usual = _outline(result)[1]
    if not wanted:
        return usual
    known = [path for path in STAGE_PATHS if path in result.trace]
    for path in wanted:
        if path not in known:
            close = difflib.get_close_matches(path, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise StageError(f"--stage: unknown stage {safe_text(repr(path), 40)}{hint}: expected one of "
                             f"{', '.join(known)}")
    source = "S'" if result.scale != 1 else "S"
    titles = {**{path: (symbol, title) for path, symbol, title in usual}, **_INPUTS}
    titles.setdefault("scaled", ("S'", "scaled scores S' = scale * S"))
    titles.setdefault("masked", (f"{source}+M", f"masked scores {source} + M (-inf where blocked)"))
    return [(path, *titles[path]) for path in known if path in wanted]


def _header(result, mask_spec=None) -> str:
    """display's header line (the mask echoed as the user wrote it)."""
    return display.text_report(_Outline(result), 0, mask_spec=mask_spec).split("\n", 1)[0]


def _masked(result) -> bool:
    return not all(all(row) for row in result.mask.allowed)


def _matrix(result, path):
    return result.stage(path) if path in STAGES else result.trace[path]


def _decimals(result, path, digits, significant=False):
    if path in STAGES:
        return result.decimals(path, digits, significant)
    return result.trace.decimals(path, digits, significant)


def _blocked(result, path):
    """The positions of ``path`` the mask blocks: (i, j) -> True (0-based); none for inputs."""
    if path not in ("scores", "scaled", "masked", "weights"):
        return set()
    return {(i, j) for i, row in enumerate(result.mask.allowed) for j, ok in enumerate(row) if not ok}


def _zero_by_mask(result, i) -> bool:
    """A blocked weight of row ``i`` is exactly 0: the mask renormalizes, and the row has an
    allowed key (or the empty-row policy gives zeros)."""
    options = result.options
    if options.masking == "zero_score" or options.axis != "keys":
        return False
    return any(result.mask.allowed[i]) or options.on_empty_row == "zeros"


def _grid(result, path, decimals) -> list:
    blocked = _blocked(result, path)
    cells = []
    for i, row in enumerate(decimals):
        marked = []
        for j, shown in enumerate(row):
            shown = shown or "?"
            if shown == "-inf":
                shown = _MINUS_INFINITY
            elif (i, j) in blocked and path == "weights" and _zero_by_mask(result, i):
                shown = _BLOCKED_ZERO
            elif (i, j) in blocked and path in ("scores", "scaled"):
                shown = f"({shown})"
            marked.append(shown)
        cells.append(marked)
    width = max(len(cell) for row in cells for cell in row)
    return ["  [ " + "  ".join(cell.rjust(width) for cell in row) + " ]" for row in cells]


def stage_text(result, path, symbol, title, digits, exact="nontrivial") -> list:
    """One stage as text lines (see the module's docstring)."""
    decimals = _decimals(result, path, digits)
    rows, cols = len(decimals), len(decimals[0])
    blocked = _blocked(result, path)
    note = "; blocked entries in parentheses" if blocked and path in ("scores", "scaled") else ""
    lines = [f"{title} ({rows}x{cols}){note}"] + _grid(result, path, decimals)
    if exact == "none":
        return lines
    matrix = _matrix(result, path)
    entries = display.stage_lines(title, symbol, matrix, decimals)[1 + rows:]
    for index, line in enumerate(entries):
        i, j = divmod(index, cols)
        entry = matrix[i, j]
        if exact == "nontrivial" and (entry.is_Rational or entry is sympy.S.NegativeInfinity):
            continue
        lines.append(line + ("  (blocked)" if (i, j) in blocked else ""))
    return lines


def _mask_lines(result) -> list:
    n, m = result.mask.shape
    rows = ["  [ " + "  ".join("1" if ok else _BLOCKED_ZERO for ok in row) + " ]" for row in result.mask.allowed]
    return [f"mask M, 1 = may attend, {_BLOCKED_ZERO} = blocked ({n}x{m})"] + rows


def text_report(result, digits: int = 3, mask_spec: str | None = None, stages=None, exact: str = "nontrivial") -> str:
    """The header, the mask (when there is one and a stage it acts on is shown), then each
    stage chosen (:func:`choose_stages`) with closed-form lines as ``exact`` says."""
    if exact not in EXACT_MODES:
        raise StageError(f"--exact: expected one of {', '.join(EXACT_MODES)}, got {safe_text(repr(exact), 30)}")
    chosen = choose_stages(result, stages)
    lines = [_header(result, mask_spec)]
    if _masked(result) and any(path in STAGES for path, _, _ in chosen):
        lines += [""] + _mask_lines(result)
    for path, symbol, title in chosen:
        lines += [""] + stage_text(result, path, symbol, title, digits, exact)
    return "\n".join(lines)


# -- LaTeX, Markdown, JSON with --stage and --decimals-only ------------------------------------


class _Stages:
    """A result seen as display's LaTeX layout sees one: ``stage(path)``, ``decimals(path, digits)``."""

    def __init__(self, result):
        self.result = result

    def stage(self, path):
        return _matrix(self.result, path)

    def decimals(self, path, digits):
        return _decimals(self.result, path, digits)


def _latex_names(result) -> dict:
    softmax = r"\operatorname{softmax}_M" if _masked(result) else r"\operatorname{softmax}"
    source = "S'" if result.scale != 1 else "S"
    from symbolic_attn.render.latex import expr_latex

    return {
        **_LATEX_INPUTS,
        "scores": r"S" if result.query is None else r"S = QK^{\mathsf{T}}",
        "scaled": r"S' = " + expr_latex(result.scale) + r"\, S",
        "masked": rf"{source} + M_{{-\infty}}",
        "weights": rf"A = {softmax}({source})",
        "output": r"Z = AV",
    }


_LINES_PER_BLOCK = 30


def latex_blocks(result, digits: int = 3, stages=None, decimals_only: bool = False) -> list:
    r"""The ``align*`` blocks of ``attention --format latex``: display's whole report, or
    the stages chosen, or (``decimals_only``) their decimal matrices alone."""
    if not stages and not decimals_only:
        return re.findall(r"\\begin\{align\*\}.*?\\end\{align\*\}", display.latex_report(result, digits), re.S)
    chosen = choose_stages(result, stages)
    names = _latex_names(result)
    blocks = []
    if _masked(result) and any(path in STAGES for path, _, _ in chosen):
        grid, note = matrix_latex(sympy.Matrix(result.mask.keep_grid())), r"\text{(1 = may attend)}"
        if latex_width(f"M = {grid} \\quad {note}") <= DISPLAY_WIDTH:
            blocks.append([rf"M &= {grid} \quad {note}"])
        else:
            blocks.append([rf"M &= {grid}", rf"&{note}"])
    for path, symbol, _title in chosen:
        if decimals_only:
            blocks.append([rf"{names[path]} &\approx {_decimal_matrix(_decimals(result, path, digits))}"])
        else:
            blocks.append(display.stage_latex_lines(_Stages(result), path, symbol, names[path], digits))
    out = []
    for lines in blocks:
        for start in range(0, len(lines), _LINES_PER_BLOCK):
            out.append("\\begin{align*}\n" + " \\\\\n".join(lines[start:start + _LINES_PER_BLOCK]) + "\n\\end{align*}")
    return out


def _decimal_matrix(decimals) -> str:
    """Certified decimals as a bmatrix: a number as math, ``-inf`` as ``-\\infty``,
    anything else (``nan``, unknown) as text."""
    def cell(decimal):
        if decimal and re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", decimal):
            return decimal
        return r"-\infty" if decimal == "-inf" else r"\text{" + escape_text(decimal or "?") + "}"

    return bracketed_rows([" & ".join(cell(d) for d in row) for row in decimals], len(decimals[0]))


def latex_report(result, digits: int = 3, stages=None, decimals_only: bool = False) -> str:
    return "\n".join(latex_blocks(result, digits, stages, decimals_only))


def markdown_report(result, digits: int = 3, mask_spec: str | None = None, stages=None,
                    decimals_only: bool = False) -> str:
    r"""The header as a paragraph, then each ``align*`` block between ``$$`` lines (KaTeX,
    MathJax and MkDocs' arithmatex read them)."""
    header = _header(result, mask_spec)
    for char in "\\`*_[]<>|":
        header = header.replace(char, "\\" + char)
    blocks = latex_blocks(result, digits, stages, decimals_only)
    return "\n\n".join([header] + [f"$$\n{block}\n$$" for block in blocks])


def json_report(result, stages=None, decimals_only: bool = False) -> str:
    """display's JSON document; with ``stages``, only those stages; with ``decimals_only``,
    each stage's ``decimal`` alone (no closed form is built)."""
    if not stages and not decimals_only:
        return display.json_report(result)
    n, m, d_k, d_v = result.shape
    document = {"shape": {"n": n, "m": m, "d_k": d_k, "d_v": d_v},
                "scale": exact_string(result.scale), "mask": result.mask.keep_grid()}
    paths = [path for path, _, _ in choose_stages(result, stages)] if stages else list(STAGES)
    for path in paths:
        entry = {}
        if not decimals_only:
            matrix = _matrix(result, path)
            entry = {"exact": exact_rows(matrix), "latex": matrix_latex(matrix, order="none")}
        entry["decimal"] = _decimals(result, path, display.JSON_DIGITS, significant=True)
        document[path] = entry
    return json.dumps(document, indent=2, ensure_ascii=False)
