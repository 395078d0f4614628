r"""Backpropagation through the feed-forward sublayer activation(X W1 + b1) W2 + b2, exactly.

With H = X W1 + b1 (``hidden``), Z = act(H) (``activated``) and the output gradient G::

    dW2 = Zᵀ G     db2 = Σ_rows G     dZ = G W2ᵀ     dH = dZ ⊙ act'(H)
    dW1 = Xᵀ dH    db1 = Σ_rows dH    dX = dH W1ᵀ

act' is exact: relu' is 1 where H > 0 and 0 where H < 0 (decided by a certified sign);
at H = 0 relu has no derivative and a convention is needed: ``relu_at_zero=0`` (PyTorch's,
the default) or ``relu_at_zero=1`` (a convention difference diagnosis reports as such).
gelu' is the derivative of the exact x·Φ(x), Φ(x) + x·φ(x), and of the tanh form.

>>> t = feed_forward_backward([[1, -1]], [[1, 0], [0, 1]], 0, [[1], [1]], 0, [[2]])
>>> t["dH"], t["dW1"], t["dX"]
(Matrix([[2, 0]]), Matrix([
[ 2, 0],
[-2, 0]]), Matrix([[2, 0]]))
>>> activation_derivative(sympy.Matrix([[0]]), "gelu")
Matrix([[1/2]])
>>> activation_derivative(sympy.Matrix([[0, -1, 2]]), "relu", relu_at_zero=1)
Matrix([[1, 0, 1]])
"""

from __future__ import annotations

import sympy

from symbolic_attn.errors import ShapeError, UndecidedError, shown
from symbolic_attn.exact.certified import certified_sign, proved_zero
from symbolic_attn.exact.convert import to_matrix
from symbolic_attn.model.backward_norm import reduce_to
from symbolic_attn.model.compose import build_trace, product
from symbolic_attn.model.feedforward import ACTIVATIONS, gelu_entry, feed_forward
from symbolic_attn.model.trace import Trace

__all__ = ["feed_forward_backward", "activation_derivative", "RELU_AT_ZERO"]

RELU_AT_ZERO = {0: "relu'(0) = 0 (PyTorch, JAX; the default)", 1: "relu'(0) = 1 (another convention)"}
_X = sympy.Dummy("x", real=True)


def _sign(x) -> int:
    if x.is_Rational:
        return 1 if x > 0 else -1 if x < 0 else 0
    sign = certified_sign(x)
    if sign is None:
        if proved_zero(x):
            return 0
        raise UndecidedError(f"relu': the sign of {shown(x)} is not decided")
    return sign


def activation_derivative(H, activation: str, relu_at_zero: int = 0) -> sympy.ImmutableMatrix:
    """act'(H) entry by entry, exactly (see the module's note on relu at 0)."""
    if relu_at_zero not in RELU_AT_ZERO or isinstance(relu_at_zero, bool):
        raise ShapeError(f"relu_at_zero must be 0 or 1, got {shown(relu_at_zero)}")
    if activation == "none":
        return sympy.ImmutableMatrix(H.rows, H.cols, [sympy.S.One] * (H.rows * H.cols))
    if activation == "relu":
        def relu_prime(x):
            sign = _sign(x)
            return sympy.Integer(relu_at_zero) if sign == 0 else sympy.S.One if sign > 0 else sympy.S.Zero
        return H.applyfunc(relu_prime)
    if activation in ("gelu", "gelu_tanh"):
        derivative = sympy.diff(gelu_entry(_X, "none" if activation == "gelu" else "tanh"), _X)
        return H.applyfunc(lambda x: derivative.subs(_X, x))
    raise ShapeError(f"unknown activation {shown(activation)!r}: expected one of {', '.join(ACTIVATIONS)}")


def feed_forward_backward(X, W1, b1=0, W2=None, b2=0, G=None, activation: str = "relu", *,
                          relu_at_zero: int = 0) -> Trace:
    """Exact gradients of ``feed_forward(X, W1, b1, W2, b2, activation)`` for the output
    gradient ``G``: stages ``dO``, ``dW2``, ``db2``, ``dZ``, ``dH``, ``dW1``, ``db1``, ``dX``
    (``db1``, ``db2`` in the shape the biases were given in)."""
    forward = feed_forward(X, W1, b1, W2, b2, activation)
    if G is None:
        raise ShapeError("feed_forward_backward: the output gradient G is missing")
    H, Z, out = forward["hidden"], forward["activated"], forward["output"]
    X, W1m, W2m = to_matrix(X, name="X"), to_matrix(W1, name="W1"), to_matrix(W2, name="W2")
    dO = to_matrix(G, name="G")
    if dO.shape != out.shape:
        raise ShapeError(f"G is {dO.rows}x{dO.cols} but the feed-forward output is {out.rows}x{out.cols}")
    dZ = product(dO, W2m.T)
    prime = activation_derivative(H, activation, relu_at_zero)
    dH = sympy.ImmutableMatrix(H.rows, H.cols, lambda i, j: dZ[i, j] * prime[i, j])
    return build_trace(
        [("dO", dO), ("dW2", product(Z.T, dO)), ("db2", reduce_to(dO, b2)), ("dZ", dZ), ("dH", dH),
         ("dW1", product(X.T, dH)), ("db1", reduce_to(dH, b1)), ("dX", product(dH, W1m.T))],
        settings={"activation": activation, "relu_at_zero": relu_at_zero},
    )

