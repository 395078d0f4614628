r"""Filling the notes' blocks from a computed trace, with every claim of the prose checked.

Every number comes from :func:`~symbolic_attn.model.attention.attention` (exact) and its
certified ``decimals``; every claim the prose makes ("the weights do not change", "the
output is exactly [1, 0]") is decided by :func:`~symbolic_attn.proofs.prove.prove_equal`
while the blocks are built, so a wrong claim stops the build with a ProofError instead of
being printed.

>>> check(sympy.Integer(1), sympy.Integer(2), "one is two")
Traceback (most recent call last):
...
symbolic_attn.errors.ProofError: worked example: one is two: ...
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy

from symbolic_attn.errors import ProofError, UndecidedError
from symbolic_attn.exact.certified import decimal_string
from symbolic_attn.model.masks import Mask
from symbolic_attn.proofs.prove import prove_equal
from symbolic_attn.render.blocks import Panel, beside, dec_matrix, matrix, tex, vec

__all__ = ["check", "row_line", "normalize_rows", "denominator", "heat", "mask_panel", "stage_line", "trace_heat"]


def check(lhs, rhs, claim: str) -> None:
    """Decide a claim of the prose with prove_equal; a failure stops the notes."""
    try:
        prove_equal(lhs, rhs)
    except (ProofError, UndecidedError) as error:
        raise ProofError(f"worked example: {claim}: {error}") from None


def _sub(base: str, label: str) -> str:
    return f"{base}_{{{label}}}" if label else base


def row_line(name: str, result, stage: str, i: int, over: tuple = ()) -> str:
    r"""``name &= exact row \approx decimals`` for row ``i`` of a stage.

    ``over=(D_latex, D)`` prints the row as ``\frac{1}{D}`` times its numerators, which
    keeps a long shared denominator from being repeated in every entry.
    """
    entries = list(result.stage(stage).row(i))
    shown = result.decimals(stage, 3)[i]
    if all(e.is_Integer for e in entries):
        return f"{name} &= {vec(entries)}"
    if over:
        name_d, total = over
        numerators = [e * total for e in entries]
        check(sympy.Matrix([[n / total for n in numerators]]), sympy.Matrix([entries]), f"{name}: 1/D form")
        return f"{name} &= \\frac{{1}}{{{name_d}}} {vec(numerators)} {beside(entries, shown)}"
    return f"{name} &= {vec(entries)} {beside(entries, shown)}"


def denominator(result, i: int):
    """The softmax denominator of row ``i``: the sum of exp over the allowed keys."""
    return sympy.Add(*[sympy.exp(s) for s, ok in zip(result.scaled.row(i), result.mask.allowed[i]) if ok])


def normalize_rows(result, i: int, label: str, factor: bool = False) -> tuple:
    """The normalize step of row ``i`` spelled out: exponentials, their sum, the weights.

    The spelled-out weights are checked against the core's weights, not trusted.
    ``factor=True`` prints the weights as ``1/D`` times the exponentials.
    """
    allowed = result.mask.allowed[i]
    exps = [sympy.exp(s) if ok else sympy.S.Zero for s, ok in zip(result.scaled.row(i), allowed)]
    total = denominator(result, i)
    check(sympy.Matrix([[e / total for e in exps]]), result.weights.row(i), f"row {i + 1}: weights = exp / sum")
    e_name = f"e^{{s'_{{{label}}}}}" if label else "e^{s'}"
    d_name, a_name = _sub("D", label), _sub("a", label)
    if all(e.is_Integer for e in exps):
        exps_line = f"{e_name} &= {vec(exps)}"
    else:
        exps_line = f"{e_name} &= {vec(exps)} {beside(exps, [decimal_string(e, 3) for e in exps])}"
    if not all(allowed):
        exps_line += r" \quad \text{(blocked keys: exactly } 0\text{)}"
    sum_line = f"{d_name} &= {tex(total)}"
    if not total.is_Integer:
        sum_line += f" \\approx {decimal_string(total, 3)}"
    weights = row_line(f"{a_name} = {e_name} / {d_name}", result, "weights", i, over=(d_name, total) if factor else ())
    return exps_line, sum_line, weights


def heat(result, title: str, rows: Sequence[str], cols: Sequence[str], allowed=None) -> Panel:
    grid = allowed if allowed is not None else result.mask.allowed
    return Panel("heat", title, tuple(map(tuple, grid)), tuple(rows), tuple(cols),
                 tuple(tuple(r) for r in result.decimals("weights", 3)))


def mask_panel(mask: Mask, title: str, rows, cols) -> Panel:
    return Panel("mask", title, mask.allowed, tuple(rows), tuple(cols))


def stage_line(name: str, trace, path: str, shown=None, claim: str = "") -> str:
    r"""``name &= matrix \approx decimals`` for a whole stage of a :class:`~symbolic_attn.model.trace.Trace`.

    ``shown`` is a simpler exact form to print instead of the stage's own expression; it is
    checked equal to the stage first (``claim`` names the claim), so a wrong form stops the
    notes.  Decimals (certified, from ``trace.decimals``) follow unless every entry is rational.

    >>> from symbolic_attn.model.layernorm import layer_norm
    >>> stage_line("y", layer_norm([[1, 3]]), "output", sympy.Matrix([[-1, 1]]))
    'y &= \\begin{bmatrix}-1 & 1\\end{bmatrix}'
    >>> stage_line("y", layer_norm([[1, 3]]), "output", sympy.Matrix([[1, -1]]), "LN[1, 3]")
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.ProofError: worked example: LN[1, 3]: ...
    """
    exact = trace[path]
    if shown is not None:
        check(shown, exact, claim or f"{name} = {path}")
        exact = sympy.ImmutableMatrix(shown)
    line = f"{name} &= {matrix(exact)}"
    if all(e.is_Rational for e in exact):
        return line
    return line + r" \approx " + dec_matrix(trace.decimals(path, 3))


def trace_heat(trace, path: str, title: str, rows: Sequence[str], cols: Sequence[str]) -> Panel:
    """A heat panel of the weights stage ``path`` of a trace (every key visible)."""
    values = tuple(tuple(r) for r in trace.decimals(path, 3))
    allowed = tuple(tuple(True for _ in r) for r in values)
    return Panel("heat", title, allowed, tuple(rows), tuple(cols), values)
