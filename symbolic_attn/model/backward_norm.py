r"""Backpropagation through LayerNorm, exactly (the forward is :func:`~symbolic_attn.model.layernorm.layer_norm`).

For a row x of width d with mean μ, centred values c = x − μ, variance v = Σ c²/d,
s = sqrt(v + eps), x̂ = c/s and y = γ ⊙ x̂ + β, the gradient G = dL/dy gives::

    dxhat = G ⊙ γ
    dvar  = −(1/2) Σ_j dxhat_j c_j / s³                      (one per row)
    dmean = −Σ_j dxhat_j / s + dvar · (−2/d) Σ_j c_j         (the second term is exactly 0)
    dX_j  = dxhat_j / s + dvar · 2 c_j / d + dmean / d
    dgamma = Σ_rows G ⊙ x̂        dbeta = Σ_rows G

``dgamma`` and ``dbeta`` have the shape gamma and beta were given in: a number gives one
1 x 1 sum over every entry, a 1 x d row a sum over the rows, a full n x d matrix the
entries themselves.

The settings ``variance="unbiased"`` (d − 1 in the forward and the backward),
``mean_path=False`` (dX = dxhat / s, the mean and variance treated as constants) and
``beta_summed=False`` (dbeta = G, not summed over the rows) are classic mistakes, kept as
settings of this one implementation.

>>> t = layer_norm_backward([[1, 3]], [[1, 0]])
>>> t["dxhat"], t["dvar"], t["dmean"]
(Matrix([[1, 0]]), Matrix([[1/2]]), Matrix([[-1]]))
>>> t["dX"], t["dgamma"], t["dbeta"]
(Matrix([[0, 0]]), Matrix([[-1]]), Matrix([[1]]))
>>> layer_norm_backward([[0, 1, 5]], [[1, 0, 0]])["dX"]
Matrix([[4*sqrt(42)/147, -5*sqrt(42)/147, sqrt(42)/147]])
"""

from __future__ import annotations

import sympy

from symbolic_attn.errors import ShapeError
from symbolic_attn.model.compose import as_operand, build_trace, check_flag
from symbolic_attn.model.layernorm import VARIANCES, layer_norm
from symbolic_attn.model.trace import Trace
from symbolic_attn.exact.convert import to_matrix

__all__ = ["layer_norm_backward", "reduce_to"]


def reduce_to(gradient: sympy.ImmutableMatrix, parameter) -> sympy.ImmutableMatrix:
    """The gradient of a broadcast parameter: ``gradient`` (n x d) summed back to the shape
    ``parameter`` was given in (a number: 1 x 1; a 1 x d row: over the rows; n x d: as is).

    >>> reduce_to(sympy.Matrix([[1, 2], [3, 4]]), 1), reduce_to(sympy.Matrix([[1, 2], [3, 4]]), [[1, 1]])
    (Matrix([[10]]), Matrix([[4, 6]]))
    """
    n, d = gradient.shape
    if not isinstance(parameter, (sympy.MatrixBase, list, tuple, str)):
        return sympy.ImmutableMatrix([[sympy.Add(*gradient)]])
    shape = to_matrix(parameter, name="parameter").shape
    if shape == (n, d):
        return gradient
    if shape == (1, d):
        return sympy.ImmutableMatrix(1, d, [sympy.Add(*gradient.col(j)) for j in range(d)])
    if shape == (1, 1):
        return sympy.ImmutableMatrix([[sympy.Add(*gradient)]])
    raise ShapeError(f"a parameter of shape {shape[0]}x{shape[1]} does not broadcast to {n}x{d}")


def layer_norm_backward(X, G, eps=0, gamma=1, beta=0, *, variance: str = "biased", mean_path: bool = True,
                        beta_summed: bool = True) -> Trace:
    """Exact gradients of ``layer_norm(X, eps, gamma, beta)`` for the output gradient ``G``:
    stages ``dO`` (= G), ``dbeta``, ``dgamma``, ``dxhat``, ``dvar``, ``dmean``, ``dX``."""
    check_flag(mean_path, "layer_norm_backward: mean_path")
    check_flag(beta_summed, "layer_norm_backward: beta_summed")
    forward = layer_norm(X, eps, gamma, beta, variance=variance)
    X = as_operand(X, "layer_norm input")
    n, d = X.shape
    divisor = d if variance == "biased" else d - 1
    assert variance in VARIANCES
    dO = to_matrix(G, name="G")
    if dO.shape != (n, d):
        raise ShapeError(f"G is {dO.rows}x{dO.cols} but the LayerNorm output is {n}x{d}")
    c, xhat, std = forward["centered"], forward["normalized"], forward["std"]
    gamma_m = _broadcast(gamma, n, d)
    dxhat = sympy.ImmutableMatrix(n, d, lambda i, j: dO[i, j] * gamma_m[i, j])
    dvar, dmean, dX = [], [], []
    for i in range(n):
        s = std[i, 0]
        v = -sympy.Rational(1, 2) * sympy.Add(*[dxhat[i, j] * c[i, j] for j in range(d)]) / s**3
        mu = -sympy.Add(*dxhat.row(i)) / s + v * (-2 * sympy.Add(*c.row(i)) / divisor)
        dvar.append(v)
        dmean.append(mu)
        if mean_path:
            dX.append([dxhat[i, j] / s + v * 2 * c[i, j] / divisor + mu / d for j in range(d)])
        else:
            dX.append([dxhat[i, j] / s for j in range(d)])
    grad_xhat = sympy.ImmutableMatrix(n, d, lambda i, j: dO[i, j] * xhat[i, j])
    return build_trace(
        [("dO", dO), ("dbeta", reduce_to(dO, beta) if beta_summed else dO), ("dgamma", reduce_to(grad_xhat, gamma)),
         ("dxhat", dxhat), ("dvar", sympy.ImmutableMatrix(n, 1, dvar)), ("dmean", sympy.ImmutableMatrix(n, 1, dmean)),
         ("dX", sympy.ImmutableMatrix(dX))],
        settings={"eps": forward.settings["eps"], "variance": variance, "mean_path": mean_path,
                  "beta_summed": beta_summed},
    )


def _broadcast(value, n, d):
    from symbolic_attn.model.compose import row_broadcast

    return row_broadcast(value, n, d, "gamma")
