r"""The exact vector-Jacobian product of any computation, by exact differentiation.

:func:`vector_jacobian` recomputes a computation with one input replaced by a matrix of
fresh real symbols, differentiates every entry of its result exactly
(``sympy.diff`` on the exact closed forms, never a finite difference), contracts with the
output gradient G and substitutes the input's own values::

    grad_ij = Σ_kl G_kl · ∂E_kl/∂X_ij   at X

This is independent of the named backward passes (:mod:`.backward`, :mod:`.backward_norm`,
:mod:`.backward_ffn`, :mod:`.backward_heads`), which is what makes it a check of them.
relu is not differentiable at 0: a derivative that needs relu'(0) is refused
(:class:`~symbolic_attn.errors.UndecidedError`) rather than given SymPy's Heaviside(0) = 1/2.

>>> from symbolic_attn.model.layernorm import layer_norm
>>> vector_jacobian(lambda v: layer_norm(v["X"]), {"X": sympy.Matrix([[1, 3]])}, sympy.Matrix([[1, 0]]), "X")
Matrix([[0, 0]])
>>> from symbolic_attn.model.feedforward import relu
>>> vector_jacobian(lambda v: relu(v["X"]), {"X": sympy.Matrix([[2, -1]])}, sympy.Matrix([[3, 3]]), "X")
Matrix([[3, 0]])
>>> vector_jacobian(lambda v: relu(v["X"]), {"X": sympy.Matrix([[0]])}, sympy.Matrix([[1]]), "X")
Traceback (most recent call last):
...
symbolic_attn.errors.UndecidedError: grad: the derivative needs relu'(0) (or a step at 0), which is not defined; use feed_forward_backward, whose relu_at_zero chooses a convention
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import sympy

from symbolic_attn.errors import ShapeError, UndecidedError, shown
from symbolic_attn.exact.certified import certified_sign, proved_zero
from symbolic_attn.exact.convert import to_matrix
from symbolic_attn.model.compose import output_of

__all__ = ["vector_jacobian", "symbolic_matrix"]


def symbolic_matrix(rows: int, cols: int, name: str) -> sympy.ImmutableMatrix:
    """A rows x cols matrix of fresh real symbols (Dummies: they never meet a user's symbol)."""
    return sympy.ImmutableMatrix(rows, cols, lambda i, j: sympy.Dummy(f"{name}_{i + 1}{j + 1}", real=True))


def _step(argument, point) -> sympy.Expr:
    """Heaviside(argument) at the point: 1 or 0 by a certified sign; refused at 0."""
    value = argument.xreplace(point)
    if value.is_Rational:
        sign = 1 if value > 0 else -1 if value < 0 else 0
    else:
        sign = certified_sign(value)
        if sign is None and proved_zero(value):
            sign = 0
    if sign is None:
        raise UndecidedError(f"grad: the sign of {shown(value)} is not decided")
    if sign == 0:
        raise UndecidedError("grad: the derivative needs relu'(0) (or a step at 0), which is not defined; use "
                             "feed_forward_backward, whose relu_at_zero chooses a convention")
    return sympy.S.One if sign > 0 else sympy.S.Zero


def _at(expr, point) -> sympy.Expr:
    steps = {h: _step(h.args[0], point) for h in expr.atoms(sympy.Heaviside)}
    if steps:
        expr = expr.xreplace(steps)
    return expr.xreplace(point)


def vector_jacobian(compute: Callable[[dict], object], inputs: Mapping, G, wrt: str) -> sympy.ImmutableMatrix:
    """Σ_kl G_kl ∂E_kl/∂X at the inputs, where ``E = compute(inputs)`` (a matrix, or a
    trace whose ``output`` is taken) and ``X = inputs[wrt]``; the result has X's shape."""
    if wrt not in inputs:
        raise ShapeError(f"grad: wrt {shown(wrt)!r} is not an input (expected one of {', '.join(map(str, inputs))})")
    X = to_matrix(inputs[wrt], name=wrt)
    symbols = symbolic_matrix(X.rows, X.cols, wrt)
    E = output_of(compute({**inputs, wrt: symbols}))
    G = to_matrix(G, name="G")
    if G.shape != E.shape:
        raise ShapeError(f"grad: G is {G.rows}x{G.cols} but the computation's result is {E.rows}x{E.cols}")
    point = {s: x for s, x in zip(symbols, X)}
    terms = [(g, e) for g, e in zip(G, E) if g != 0]
    entries = []
    for s in symbols:
        total = sympy.Add(*[g * sympy.diff(e, s) for g, e in terms])
        entries.append(_at(total, point))
    return sympy.ImmutableMatrix(X.rows, X.cols, entries)
