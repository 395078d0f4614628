r"""The position-wise feed-forward sublayer, exactly: activation(X W1 + b1) W2 + b2.

Activations: ``relu`` (max(0, x), decided by a certified sign, never a float), ``gelu``
(the exact x·Φ(x) = x/2 · (1 + erf(x/√2))) and ``gelu_tanh`` (the tanh approximation
x/2 · (1 + tanh(√(2/π)(x + 0.044715 x³))), with 0.044715 exactly 44715/10⁶).
Biases b1, b2 are numbers or 1 x width rows, repeated over the rows.

>>> relu([[-1, 2], ["sqrt(2) - 2", "pi - 3"]])["output"]
Matrix([
[0,       2],
[0, -3 + pi]])
>>> gelu([[0, 1]])["output"]
Matrix([[0, erf(sqrt(2)/2)/2 + 1/2]])
>>> gelu([[1]])["output"] == sympy.Matrix([[(1 + sympy.erf(1 / sympy.sqrt(2))) / 2]])
True
>>> t = feed_forward([[1, -1]], [[1, 0], [0, 1]], [[0, 1]], [[1], [1]], 0)
>>> t["hidden"], t["activated"], t["output"]
(Matrix([[1, 0]]), Matrix([[1, 0]]), Matrix([[1]]))
"""

from __future__ import annotations

import sympy

from symbolic_attn.errors import ShapeError, UndecidedError, shown
from symbolic_attn.exact.certified import certified_sign, proved_zero
from symbolic_attn.model.compose import as_operand, build_trace, product, row_broadcast
from symbolic_attn.model.trace import Trace

__all__ = ["relu", "gelu", "gelu_entry", "feed_forward", "ACTIVATIONS", "GELU_TANH_COEFFICIENT"]

GELU_TANH_COEFFICIENT = sympy.Rational(44715, 1_000_000)
ACTIVATIONS = ("relu", "gelu", "gelu_tanh", "none")


def _relu_entry(x):
    if x.is_Rational:
        return x if x > 0 else sympy.S.Zero
    if x.free_symbols:
        return sympy.Max(0, x)
    sign = certified_sign(x)
    if sign is None:
        if proved_zero(x):
            return sympy.S.Zero
        raise UndecidedError(f"relu: the sign of {shown(x)} is not decided")
    return x if sign > 0 else sympy.S.Zero


def gelu_entry(x, approximate: str):
    """GELU of one exact entry: x·Φ(x) (``"none"``) or the tanh form (``"tanh"``)."""
    if approximate == "none":
        return x * (1 + sympy.erf(x / sympy.sqrt(2))) / 2
    inner = sympy.sqrt(2 / sympy.pi) * (x + GELU_TANH_COEFFICIENT * x**3)
    return x * (1 + sympy.tanh(inner)) / 2


def relu(X) -> Trace:
    """max(0, x) entry by entry; one stage, ``output``."""
    X = as_operand(X, "relu input")
    return build_trace([("output", X.applyfunc(_relu_entry))], settings={"activation": "relu"})


def gelu(X, approximate: str = "none") -> Trace:
    """GELU entry by entry: exact x·Φ(x) (``approximate="none"``) or the tanh form."""
    if approximate not in ("none", "tanh"):
        raise ShapeError(f"gelu: unknown approximate {shown(approximate)!r}: expected 'none' or 'tanh'")
    X = as_operand(X, "gelu input")
    return build_trace([("output", X.applyfunc(lambda x: gelu_entry(x, approximate)))],
                       settings={"activation": "gelu", "approximate": approximate})


def activate(X, activation: str) -> sympy.ImmutableMatrix:
    """``X`` through the named activation (one of :data:`ACTIVATIONS`)."""
    if activation == "relu":
        return relu(X)["output"]
    if activation == "gelu":
        return gelu(X)["output"]
    if activation == "gelu_tanh":
        return gelu(X, "tanh")["output"]
    if activation == "none":
        return as_operand(X, "input")
    raise ShapeError(f"unknown activation {shown(activation)!r}: expected one of {', '.join(ACTIVATIONS)}")


def feed_forward(X, W1, b1=0, W2=None, b2=0, activation: str = "relu") -> Trace:
    """activation(X W1 + b1) W2 + b2; stages ``hidden``, ``activated``, ``output``."""
    if activation not in ACTIVATIONS:
        raise ShapeError(f"feed_forward: unknown activation {shown(activation)!r}: expected one of {', '.join(ACTIVATIONS)}")
    X, W1 = as_operand(X, "feed_forward input"), as_operand(W1, "W1")
    if W2 is None:
        raise ShapeError("feed_forward: W2 is missing")
    W2 = as_operand(W2, "W2")
    if X.cols != W1.rows:
        raise ShapeError(f"feed_forward: X is {X.rows}x{X.cols} and W1 is {W1.rows}x{W1.cols}: W1 needs {X.cols} rows")
    if W1.cols != W2.rows:
        raise ShapeError(f"feed_forward: W1 is {W1.rows}x{W1.cols} and W2 is {W2.rows}x{W2.cols}: W2 needs {W1.cols} rows")
    hidden = sympy.ImmutableMatrix(product(X, W1) + row_broadcast(b1, X.rows, W1.cols, "b1"))
    activated = activate(hidden, activation)
    output = sympy.ImmutableMatrix(product(activated, W2) + row_broadcast(b2, X.rows, W2.cols, "b2"))
    return build_trace([("hidden", hidden), ("activated", activated), ("output", output)],
                       settings={"activation": activation})
