r"""Layer normalization, exactly, over each row (as PyTorch's ``nn.LayerNorm``).

For a row x of width d::

    mean = (1/d) Σ x_j            variance = (1/d) Σ (x_j − mean)²   (biased, as PyTorch)
    output_j = gamma_j · (x_j − mean) / sqrt(variance + eps) + beta_j

``eps`` sits *inside* the square root and may be any exact value >= 0.  ``gamma`` and
``beta`` are numbers, 1 x d rows (repeated over the rows) or full n x d matrices.

The settings ``variance="unbiased"`` (divide by d − 1), ``eps_placement="outside"``
(sqrt(variance) + eps) and ``affine=False`` (gamma and beta ignored) are the classic
mistakes, kept as settings of this one implementation so that diagnosis can reproduce them.

>>> t = layer_norm([[1, 3], [2, 6]])
>>> t["mean"].T, t["variance"].T
(Matrix([[2, 4]]), Matrix([[1, 4]]))
>>> t["output"]
Matrix([
[-1, 1],
[-1, 1]])
>>> layer_norm([[1, 3]], eps="1/100")["output"]
Matrix([[-10*sqrt(101)/101, 10*sqrt(101)/101]])
>>> layer_norm([[1, 3]], gamma=[[2, 1]], beta=[[0, 5]])["output"]
Matrix([[-2, 6]])
>>> layer_norm([[1, 2], [5, 5]])
Traceback (most recent call last):
...
symbolic_attn.errors.ZeroVarianceError: layer_norm row 2: variance is exactly 0 and eps = 0, so (x - mean)/sqrt(variance + eps) divides by zero (row [5, 5]); give eps > 0
"""

from __future__ import annotations

import sympy

from symbolic_attn.errors import ShapeError, UndecidedError, ZeroVarianceError, shown
from symbolic_attn.exact.certified import certified_sign, proved_zero
from symbolic_attn.exact.convert import to_exact
from symbolic_attn.model.compose import as_operand, build_trace, check_choice, check_flag, row_broadcast
from symbolic_attn.model.trace import Trace

__all__ = ["layer_norm", "VARIANCES", "EPS_PLACEMENTS"]

VARIANCES = {"biased": "divide by d (PyTorch, the paper; correct)", "unbiased": "divide by d - 1 (a mistake here)"}
EPS_PLACEMENTS = {"inside": "sqrt(variance + eps) (correct)", "outside": "sqrt(variance) + eps (a mistake)"}


def layer_norm(X, eps=0, gamma=1, beta=0, *, variance: str = "biased", eps_placement: str = "inside",
               affine: bool = True) -> Trace:
    """Exact LayerNorm of each row of ``X``; stages mean, centered, variance, std,
    normalized, output (``std`` is the denominator actually used)."""
    check_choice(variance, VARIANCES, "layer_norm: variance")
    check_choice(eps_placement, EPS_PLACEMENTS, "layer_norm: eps_placement")
    X = as_operand(X, "layer_norm input")
    n, d = X.shape
    check_flag(affine, "layer_norm: affine")
    eps = _check_eps(to_exact(eps))
    divisor = d if variance == "biased" else d - 1
    if divisor == 0:
        raise ShapeError("layer_norm: the unbiased variance of a row of width 1 divides by d - 1 = 0")
    gamma_m = row_broadcast(gamma, n, d, "gamma")
    beta_m = row_broadcast(beta, n, d, "beta")
    means = [sympy.Add(*X.row(i)) / d for i in range(n)]
    centered = sympy.ImmutableMatrix(n, d, lambda i, j: X[i, j] - means[i])
    variances = [sympy.Add(*[c**2 for c in centered.row(i)]) / divisor for i in range(n)]
    stds = []
    for i, var in enumerate(variances):
        _check_denominator(var, eps, i, X)
        stds.append(sympy.sqrt(var + eps) if eps_placement == "inside" else sympy.sqrt(var) + eps)
    normalized = sympy.ImmutableMatrix(n, d, lambda i, j: centered[i, j] / stds[i])
    if affine:
        output = sympy.ImmutableMatrix(n, d, lambda i, j: gamma_m[i, j] * normalized[i, j] + beta_m[i, j])
    else:
        output = normalized
    return build_trace(
        [
            ("mean", sympy.ImmutableMatrix(n, 1, means)),
            ("centered", centered),
            ("variance", sympy.ImmutableMatrix(n, 1, variances)),
            ("std", sympy.ImmutableMatrix(n, 1, stds)),
            ("normalized", normalized),
            ("output", output),
        ],
        settings={"eps": eps, "variance": variance, "eps_placement": eps_placement, "affine": affine},
    )


def _check_eps(eps):
    """``eps`` if it is certainly >= 0 (an exact 0, a disguised 0 proved so, or a certified
    positive value); a negative eps, or one whose sign no interval decides, is refused."""
    if eps.free_symbols:
        if eps.is_nonnegative is False:  # -t with t declared positive is negative
            raise ShapeError(f"layer_norm: eps must be >= 0, got {shown(eps)}")
        return eps
    try:
        sign = certified_sign(eps)
    except UndecidedError:
        sign = None
    if sign is None and _is_zero(eps):
        return sympy.S.Zero
    if sign is None:
        raise UndecidedError(f"layer_norm: eps {shown(eps)}: its sign is not decided (it must be certainly >= 0)")
    if sign < 0:
        raise ShapeError(f"layer_norm: eps must be >= 0, got {shown(eps)}")
    return eps


def _check_denominator(var, eps, i, X) -> None:
    """Row ``i`` divides by sqrt(var + eps) (or sqrt(var) + eps), with var >= 0 and eps >= 0:
    it is certainly > 0 when var or eps is; both exactly 0 is a ZeroVarianceError, and a
    variance whose sign nothing decides (with eps = 0) is refused as undecided."""
    if eps != 0 and not eps.free_symbols:
        return  # eps was certified > 0 by _check_eps
    if var.free_symbols or eps.free_symbols:
        return
    if var.is_Rational and var != 0:
        return
    try:
        sign = certified_sign(var)
    except UndecidedError:
        sign = None
    if sign == 1:
        return
    if sign == 0 or proved_zero(var):
        raise ZeroVarianceError(
            f"layer_norm row {i + 1}: variance is exactly 0 and eps = 0, so (x - mean)/sqrt(variance + eps) "
            f"divides by zero (row {shown(list(X.row(i)), 60)}); give eps > 0"
        )
    raise UndecidedError(
        f"layer_norm row {i + 1}: the variance {shown(var)} is not certainly > 0 and eps = 0, so the "
        "division by sqrt(variance + eps) is not certainly defined; give eps > 0"
    )


def _is_zero(value) -> bool:
    """Exactly zero (proved), for symbol-free values; a symbolic value is not known to be 0."""
    if value == 0:
        return True
    if value.free_symbols:
        return False
    try:
        sign = certified_sign(value)
    except UndecidedError:
        sign = None
    return sign is None and proved_zero(value)
