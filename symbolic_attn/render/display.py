r"""How an :class:`~symbolic_attn.model.attention.AttentionResult` is shown: text, LaTeX, JSON.

Every stage is shown exactly, with certified decimals beside it.  ``≈`` marks a rounded
decimal; ``=`` marks a decimal that *is* the exact value.

>>> from symbolic_attn.model.attention import attention_from_scores
>>> result = attention_from_scores([["0", "ln(2)", "ln(3)"]], [[1, 0], [0, 2], [3, 1]])
>>> print(text_report(result, digits=3))  # doctest: +NORMALIZE_WHITESPACE
attention from given scores: n=1 queries, m=3 keys, d_v=2; scale 1 (none); mask none
<BLANKLINE>
scores S (1x3)
  [ 0.000  0.693  1.099 ]
  S[1,1] = 0
  S[1,2] = log(2)  ≈ 0.693
  S[1,3] = log(3)  ≈ 1.099
<BLANKLINE>
weights A = softmax(S) (1x3)
  [ 0.167  0.333  0.500 ]
  A[1,1] = 1/6  ≈ 0.167
  A[1,2] = 1/3  ≈ 0.333
  A[1,3] = 1/2  = 0.500
<BLANKLINE>
output Z = A V (1x2)
  [ 1.667  1.167 ]
  Z[1,1] = 5/3  ≈ 1.667
  Z[1,2] = 7/6  ≈ 1.167
"""

from __future__ import annotations

import json
import re
from fractions import Fraction

import sympy

from symbolic_attn.errors import safe_text
from symbolic_attn.render.exact_text import PRINT_BUDGET, Canonical, canonical_string, exact_string, not_printed
from symbolic_attn.render.latex import DISPLAY_WIDTH, bracketed_rows, escape_text, expr_latex, fitted_lines, latex_width, matrix_latex

__all__ = ["text_report", "latex_report", "json_report", "JSON_DIGITS", "stage_lines", "stage_latex_lines", "canonical_rows"]

#: Significant digits of the ``decimal`` field in JSON output.
JSON_DIGITS = 30


def _stages(result):
    """(key, symbol, title, matrix) for each stage worth showing, in order."""
    given = result.query is None
    scaled_title = "scaled scores S' = scale * S" if result.scale != 1 else None
    rows = [("scores", "S", "scores S" if given else "scores S = Q K^T")]
    if scaled_title:
        rows.append(("scaled", "S'", scaled_title))
    source = "S'" if scaled_title else "S"
    if not all(all(row) for row in result.mask.allowed):
        rows.append(("masked", "S'+M" if scaled_title else "S+M",
                     f"masked scores {source} + M (-inf where blocked)"))
    rows.append(("weights", "A", f"weights A = softmax({source})"))
    rows.append(("output", "Z", "output Z = A V"))
    return rows


def _describe_scale(result) -> str:
    if result.d_k is not None and result.scale == 1 / sympy.sqrt(result.d_k):
        return f"scale {exact_string(result.scale)} (1/sqrt(d_k))"
    if result.scale == 1:
        return "scale 1 (none)"
    return f"scale {exact_string(result.scale)}"


def _canonical_mask(result) -> str:
    allowed = result.mask.allowed
    if all(all(row) for row in allowed):
        return "none"
    if all(ok == (j <= i) for i, row in enumerate(allowed) for j, ok in enumerate(row)):
        return "causal"
    return "keep:" + str(result.mask.keep_grid()).replace(" ", "")


def _describe_mask(result, given: str | None = None) -> str:
    """The mask as the user spelled it (``given``, escaped), else as a keep-grid;
    with its plain name in parentheses when a grid turns out to be none or causal."""
    canonical = _canonical_mask(result)
    if given is None:
        return "mask " + (canonical if canonical in ("none", "causal") else canonical.replace(":", " ", 1))
    shown_spec = safe_text(given.strip(), 120)
    if getattr(result, "written_blocked", None):
        shown_spec += " and -inf in the scores"
        plain = canonical in ("none", "causal")
        return f"mask {shown_spec}" + (f" (= {canonical})" if plain else f" (= {canonical.replace(':', ' ', 1)})")
    plain = canonical in ("none", "causal") and given.strip() != canonical
    return f"mask {shown_spec}" + (f" (= {canonical})" if plain else "")


def _header(result, mask_spec=None) -> str:
    n, m, d_k, d_v = result.shape
    kind = "attention" if result.query is not None else "attention from given scores"
    widths = f"d_k={d_k}, d_v={d_v}" if d_k is not None else f"d_v={d_v}"
    extra = []
    if result.options.masking != "renormalize":
        extra.append(f"masking {result.options.masking}")
    if result.options.axis != "keys":
        extra.append(f"softmax over {result.options.axis}")
    return f"{kind}: n={n} queries, m={m} keys, {widths}; {_describe_scale(result)}; {_describe_mask(result, mask_spec)}" + "".join(
        f"; {e}" for e in extra
    )


def _relation(entry, shown: str) -> str:
    """'=' when the decimal shown is the exact value, '≈' when it is a rounding."""
    if entry.is_Rational and Fraction(int(entry.p), int(entry.q)) == Fraction(shown):
        return "="
    return "≈"


def text_report(result, digits: int = 3, mask_spec: str | None = None) -> str:
    """Each stage as a grid of decimals, then each entry exactly beside its decimal.

    Exact values are written as the parser reads them (:mod:`~symbolic_attn.render.exact_text`);
    ``mask_spec`` is the mask as the user wrote it, echoed (escaped) in the header.
    """
    lines = [_header(result, mask_spec)]
    canonical = Canonical()
    for key, symbol, title in _stages(result):
        lines += [""] + stage_lines(title, symbol, result.stage(key), result.decimals(key, digits), canonical=canonical)
    return "\n".join(lines)


def stage_lines(title: str, symbol: str, matrix, decimals, *, canonical: Canonical | None = None,
                exact: bool = True, budget: int = PRINT_BUDGET) -> list[str]:
    """One stage as text: its grid of decimals, then every entry exactly beside its decimal.

    The one layout of a stage in text, shared by ``attention`` and ``run``.  Each entry is
    written in its canonical form (:class:`~symbolic_attn.render.exact_text.Canonical`:
    what is proved rational is shown as that rational); a form of more than ``budget``
    nodes is not printed, its place says so beside the certified decimal.  ``exact=False``
    (``--decimals-only``) shows the grid alone.

    >>> import sympy
    >>> a = sympy.exp(sympy.sqrt(2) / 2)
    >>> m = sympy.Matrix([[sympy.Rational(1, 3), 1, 1 / (2 * (1 + a)) + a / (2 * (1 + a)), a + 1]])
    >>> print("\\n".join(stage_lines("weights A", "A", m, [["0.333", "1.000", "0.500", "3.028"]], budget=4)))
    weights A (1x4)
      [ 0.333  1.000  0.500  3.028 ]
      A[1,1] = 1/3  ≈ 0.333
      A[1,2] = 1
      A[1,3] = 1/2  = 0.500
      A[1,4] ≈ 3.028  (exact form: 8 nodes, not printed)
    """
    lines = [f"{title} ({matrix.rows}x{matrix.cols})"]
    width = max(len(d or "?") for row in decimals for d in row)
    for row in decimals:
        lines.append("  [ " + "  ".join((d or "?").rjust(width) for d in row) + " ]")
    if not exact:
        return lines
    canonical = canonical or Canonical()
    for i in range(matrix.rows):
        for j in range(matrix.cols):
            entry, shown = canonical(matrix[i, j]), decimals[i][j]
            text, nodes = canonical_string(entry, canonical, budget)
            where = f"{symbol}[{i + 1},{j + 1}]"
            if text is None:
                lines.append(f"  {where} ≈ {shown or '?'}  {not_printed(nodes)}")
            elif shown is None or entry.is_Integer or entry is sympy.S.NegativeInfinity:
                lines.append(f"  {where} = {text}")
            else:
                lines.append(f"  {where} = {text}  {_relation(entry, shown)} {shown}")
    return lines


def canonical_rows(matrix, canonical: Canonical | None = None, budget: int = PRINT_BUDGET) -> tuple[list, dict]:
    """(every entry's canonical exact string, ``None`` beyond ``budget``; {"i,j": nodes} of
    those not printed, counted from 1): the JSON form of a stage's exact values."""
    canonical = canonical or Canonical()
    rows, skipped = [], {}
    for i in range(matrix.rows):
        row = []
        for j in range(matrix.cols):
            text, nodes = canonical_string(matrix[i, j], canonical, budget)
            if text is None:
                skipped[f"{i + 1},{j + 1}"] = nodes
            row.append(text)
        rows.append(row)
    return rows, skipped


#: Display lines per ``align*``: pages may break between environments, never inside one.
_LINES_PER_BLOCK = 30


def latex_report(result, digits: int = 3) -> str:
    r"""The stages as amsmath ``align*`` blocks, every line within an article's ``\textwidth``.

    A stage whose exact matrix fits on a line is shown whole, its decimals on the next
    line; otherwise entry by entry, long closed forms broken over several lines
    (:func:`~symbolic_attn.render.latex.fitted_lines`), each ending with its decimal.  A
    mask, when there is one, is shown as its keep-grid M (1 = may attend), and the weights
    as :math:`\operatorname{softmax}_M`.
    """
    masked = not all(all(row) for row in result.mask.allowed)
    softmax = r"\operatorname{softmax}_M" if masked else r"\operatorname{softmax}"
    source = "S'" if result.scale != 1 else "S"
    names = {
        "scores": r"S" if result.query is None else r"S = QK^{\mathsf{T}}",
        "scaled": r"S' = " + expr_latex(result.scale) + r"\, S",
        "masked": rf"{source} + M_{{-\infty}}",
        "weights": rf"A = {softmax}({source})",
        "output": r"Z = AV",
    }
    blocks = []
    if masked:
        grid, note = matrix_latex(sympy.Matrix(result.mask.keep_grid())), r"\text{(1 = may attend)}"
        if latex_width(f"M = {grid} \\quad {note}") <= DISPLAY_WIDTH:
            blocks.append([rf"M &= {grid} \quad {note}"])
        else:
            blocks.append([rf"M &= {grid}", rf"&{note}"])
    for key, symbol, _title in _stages(result):
        blocks.append(stage_latex_lines(result, key, symbol.replace("'", "'"), names[key], digits))
    out = []
    for lines in blocks:
        for start in range(0, len(lines), _LINES_PER_BLOCK):
            out.append("\\begin{align*}\n" + " \\\\\n".join(lines[start : start + _LINES_PER_BLOCK]) + "\n\\end{align*}")
    return "\n".join(out)


def _decimal_cell(decimal) -> str:
    """A decimal as math; anything else (``nan``, unknown) as text."""
    if decimal and re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", decimal):
        return decimal
    if decimal == "-inf":
        return r"-\infty"
    return r"\text{" + escape_text(decimal or "?") + "}"


def _decimal_matrix(decimals) -> str:
    return bracketed_rows([" & ".join(_decimal_cell(d) for d in row) for row in decimals], len(decimals[0]))


def stage_latex_lines(result, key, symbol, name, digits, *, entry_label=None, canonical: Canonical | None = None,
                      exact: bool = True, budget: int = PRINT_BUDGET) -> list[str]:
    r"""One stage as the lines of an ``align*`` (joined by ``\\``), each within ``\textwidth``.

    The one LaTeX layout of a stage, shared by ``attention --format latex`` and ``run``.
    ``result`` is anything with ``stage(key)`` (the exact matrix) and ``decimals(key, digits)``;
    ``name`` is the left-hand side and ``symbol`` labels the entries when the matrix is shown
    entry by entry (its long closed forms broken over lines, each ending with its decimal),
    unless ``entry_label(row, col)`` (from 1) gives each entry's label.  Entries are written
    in their canonical form, as in text and JSON; a form over ``budget`` nodes is not
    printed (its place says so, with the decimal); ``exact=False`` shows the decimals only.

    >>> import sympy
    >>> from types import SimpleNamespace
    >>> stage = SimpleNamespace(stage=lambda key: sympy.Matrix([[sympy.Rational(1, 3), 1]]),
    ...                         decimals=lambda key, digits: [["0.333", "1.000"]])
    >>> print("\n".join(stage_latex_lines(stage, "weights", "A", "A", 3)))
    A &= \begin{bmatrix}\frac{1}{3} & 1\end{bmatrix}
    &\approx \begin{bmatrix}0.333 & 1.000\end{bmatrix}
    >>> print("\n".join(stage_latex_lines(stage, "weights", "A", "A", 3, exact=False)))
    A &\approx \begin{bmatrix}0.333 & 1.000\end{bmatrix}
    >>> root = SimpleNamespace(stage=lambda key: sympy.Matrix([[sympy.sqrt(2) / 2, sympy.Rational(1, 3)]]),
    ...                        decimals=lambda key, digits: [["0.707", "0.333"]])
    >>> print("\n".join(stage_latex_lines(root, "x", "x", "x", 3, budget=1, entry_label=lambda i, j: f"x^{{(2)}}_{{{i}{j}}}")))
    x &\approx \begin{bmatrix}0.707 & 0.333\end{bmatrix}
    x^{(2)}_{11} &\approx 0.707 \quad \text{(exact form: 5 nodes, not printed)}
    x^{(2)}_{12} &= \frac{1}{3} \approx 0.333
    """
    canonical = canonical or Canonical()
    matrix = result.stage(key)
    decimals = result.decimals(key, digits)
    approx = _decimal_matrix(decimals)
    lhs_width = latex_width(name)
    fits = lhs_width + latex_width(approx) + 20 <= DISPLAY_WIDTH
    if not exact and fits:
        return [rf"{name} &\approx {approx}"]
    forms = canonical.matrix(matrix) if exact else matrix
    small = exact and all(entry.is_Rational or canonical.nodes(entry) <= budget for entry in forms)
    if small:
        whole = matrix_latex(forms, order="none")
        if lhs_width + latex_width(whole) + 20 <= DISPLAY_WIDTH and fits:
            return [f"{name} &= {whole}", rf"&\approx {approx}"]
    # Entry by entry.  The decimal grid is shown first when it fits.
    lines = [f"{name} &" + (rf"\approx {approx}" if fits else r"\text{, entry by entry:}")]
    base = symbol.rstrip("'")
    primes = "'" * (len(symbol) - len(base))
    for i in range(matrix.rows):
        for j in range(matrix.cols):
            label = entry_label(i + 1, j + 1) if entry_label else f"{base}{primes}_{{{i + 1},{j + 1}}}"
            budget_width = DISPLAY_WIDTH - latex_width(label) - 30
            entry, shown = forms[i, j], decimals[i][j]
            nodes = canonical.nodes(entry) if exact else 0
            if not exact or (nodes > budget and not entry.is_Rational):
                if entry.is_Integer:
                    lines.append(f"{label} &= {entry}")
                    continue
                note = rf" \quad \text{{{not_printed(nodes)}}}" if exact else ""
                lines.append(rf"{label} &\approx {_decimal_cell(shown)}{note}")
                continue
            pieces = fitted_lines(entry, budget_width)
            decimal = _decimal_tail(entry, shown, budget_width)
            if len(decimal) == 1 and latex_width(pieces[-1] + decimal[0]) <= budget_width:
                pieces[-1] += decimal[0]
                decimal = []
            lines.append(f"{label} &= {pieces[0]}")
            lines.extend(rf"&\quad {piece}" for piece in pieces[1:])
            lines.extend(rf"&{piece}" for piece in decimal)
    return lines


def _decimal_tail(entry, shown, budget) -> list[str]:
    """`` \approx 0.330`` (or ``=``), a long decimal broken between digits."""
    if shown is None or entry.is_Integer or _decimal_cell(shown) != shown:  # nan: the entry says it
        return []
    relation = r"=" if _relation(entry, shown) == "=" else r"\approx"
    per_line = max(int((budget - 30) // 5.0), 8)
    chunks = [shown[k : k + per_line] for k in range(0, len(shown), per_line)]
    return [f" {relation} {chunks[0]}"] + [rf"\quad {chunk}" for chunk in chunks[1:]]


def json_report(result) -> str:
    """A JSON object: the shape, then per stage its exact strings (canonical, ``null`` past
    the print budget, with ``not_printed``: {"i,j": nodes}), LaTeX and 30-digit decimals."""
    n, m, d_k, d_v = result.shape
    document = {
        "shape": {"n": n, "m": m, "d_k": d_k, "d_v": d_v},
        "scale": exact_string(result.scale),
        "mask": result.mask.keep_grid(),
    }
    canonical = Canonical()
    for key in ("scores", "scaled", "masked", "weights", "output"):
        matrix = result.stage(key)
        rows, skipped = canonical_rows(matrix, canonical)
        document[key] = {
            "exact": rows,
            "latex": _matrix_latex_or_none(matrix, canonical, skipped),
            "decimal": result.decimals(key, JSON_DIGITS, significant=True),
        }
        if skipped:
            document[key]["not_printed"] = skipped
    return json.dumps(document, indent=2, ensure_ascii=False)


def _matrix_latex_or_none(matrix, canonical: Canonical, skipped: dict):
    """The LaTeX of the canonical matrix, or None when some entry is not printed."""
    return None if skipped else matrix_latex(canonical.matrix(matrix), order="none")
