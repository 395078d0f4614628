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
from fractions import Fraction

import sympy

from symbolic_attn.render.latex import expr_latex, matrix_latex

__all__ = ["text_report", "latex_report", "json_report", "JSON_DIGITS"]

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
    rows.append(("weights", "A", f"weights A = softmax({source})"))
    rows.append(("output", "Z", "output Z = A V"))
    return rows


def _describe_scale(result) -> str:
    if result.d_k is not None and result.scale == 1 / sympy.sqrt(result.d_k):
        return f"scale {sympy.sstr(result.scale)} (1/sqrt(d_k))"
    if result.scale == 1:
        return "scale 1 (none)"
    return f"scale {sympy.sstr(result.scale)}"


def _describe_mask(result) -> str:
    allowed = result.mask.allowed
    if all(all(row) for row in allowed):
        return "mask none"
    if all(ok == (j <= i) for i, row in enumerate(allowed) for j, ok in enumerate(row)):
        return "mask causal"
    return "mask keep " + str(result.mask.keep_grid()).replace(" ", "")


def _header(result) -> str:
    n, m, d_k, d_v = result.shape
    kind = "attention" if result.query is not None else "attention from given scores"
    widths = f"d_k={d_k}, d_v={d_v}" if d_k is not None else f"d_v={d_v}"
    extra = []
    if result.options.masking != "renormalize":
        extra.append(f"masking {result.options.masking}")
    if result.options.axis != "keys":
        extra.append(f"softmax over {result.options.axis}")
    return f"{kind}: n={n} queries, m={m} keys, {widths}; {_describe_scale(result)}; {_describe_mask(result)}" + "".join(
        f"; {e}" for e in extra
    )


def _relation(entry, shown: str) -> str:
    """'=' when the decimal shown is the exact value, '≈' when it is a rounding."""
    if entry.is_Rational and Fraction(int(entry.p), int(entry.q)) == Fraction(shown):
        return "="
    return "≈"


def text_report(result, digits: int = 3) -> str:
    """Each stage as a grid of decimals, then each entry exactly beside its decimal."""
    lines = [_header(result)]
    for key, symbol, title in _stages(result):
        matrix = result.stage(key)
        decimals = result.decimals(key, digits)
        lines += ["", f"{title} ({matrix.rows}x{matrix.cols})"]
        width = max(len(d or "?") for row in decimals for d in row)
        for row in decimals:
            lines.append("  [ " + "  ".join((d or "?").rjust(width) for d in row) + " ]")
        for i in range(matrix.rows):
            for j in range(matrix.cols):
                entry, shown = matrix[i, j], decimals[i][j]
                exact = sympy.sstr(entry, order="none")
                if shown is None:
                    lines.append(f"  {symbol}[{i + 1},{j + 1}] = {exact}")
                elif entry.is_Integer:
                    lines.append(f"  {symbol}[{i + 1},{j + 1}] = {exact}")
                else:
                    lines.append(f"  {symbol}[{i + 1},{j + 1}] = {exact}  {_relation(entry, shown)} {shown}")
    return "\n".join(lines)


def latex_report(result, digits: int = 3) -> str:
    r"""The stages as one amsmath ``align*``: exact matrix, then its decimals.

    A mask, when there is one, is shown as its keep-grid M (1 = may attend), and the
    weights as :math:`\operatorname{softmax}_M`.
    """
    masked = not all(all(row) for row in result.mask.allowed)
    softmax = r"\operatorname{softmax}_M" if masked else r"\operatorname{softmax}"
    source = "S'" if result.scale != 1 else "S"
    names = {
        "scores": r"S" if result.query is None else r"S &= QK^{\mathsf{T}}",
        "scaled": r"S' &= " + expr_latex(result.scale) + r"\, S",
        "weights": rf"A &= {softmax}({source})",
        "output": r"Z &= AV",
    }
    rows = []
    if masked:
        rows.append(r"M &= " + matrix_latex(sympy.Matrix(result.mask.keep_grid())) + r" && \text{(1 = may attend)}")
    for key, _symbol, _title in _stages(result):
        lhs = names[key] if "&" in names[key] else names[key] + " &"
        decimals = result.decimals(key, digits)
        approx = r"\begin{bmatrix}" + r" \\ ".join(" & ".join(d or "?" for d in row) for row in decimals) + r"\end{bmatrix}"
        rows.append(f"{lhs} = {matrix_latex(result.stage(key), order='none')} \\approx {approx}")
    return "\\begin{align*}\n" + " \\\\\n".join(rows) + "\n\\end{align*}"


def json_report(result) -> str:
    """A JSON object: the shape, then per stage its exact strings, LaTeX and 30-digit decimals."""
    n, m, d_k, d_v = result.shape
    document = {
        "shape": {"n": n, "m": m, "d_k": d_k, "d_v": d_v},
        "scale": sympy.sstr(result.scale),
        "mask": result.mask.keep_grid(),
    }
    for key in ("scores", "scaled", "weights", "output"):
        matrix = result.stage(key)
        document[key] = {
            "exact": [[sympy.sstr(e, order="none") for e in matrix.row(i)] for i in range(matrix.rows)],
            "latex": matrix_latex(matrix, order="none"),
            "decimal": result.decimals(key, JSON_DIGITS, significant=True),
        }
    return json.dumps(document, indent=2, ensure_ascii=False)
