r"""The float error bound an attention implementation is held to, per dtype.

Not a hand-picked tolerance: the standard rounding-error analysis of the dot product and
of softmax (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., section
3.1 and Lemma 3.1; Blanchard, Higham & Mary, "Accurate computation of the log-sum-exp and
softmax functions", 2021), evaluated entry by entry on the exact case.

Model: every operation is correctly rounded, fl(a op b) = (a op b)(1 + delta) with
``|delta| <= u`` (u = 2^-24 for float32, 2^-53 for float64), and n chained roundings give
``|theta_n| <= gamma_n = n u / (1 - n u)``.  Library ``exp`` is not correctly rounded; we
assume it within ``EXP_ULPS = 4`` ulps (relative error ``E = 8u``): numpy's SIMD float32
exp documents under 2.6 ulp, glibc and XLA under 1-2 ulp.  Underflow adds at most the
smallest normal number lambda per rounding (flush-to-zero included).

**1. Logits.**  s_ij = q_i . k_j with d = d_k products, summed in *any* order (pairwise,
blocked BLAS, FMA): ``|fl(s) - s| <= gamma_d sum_l |q_il k_jl|``.  Forming the scale
(sqrt, reciprocal) and applying it (to the scores or to Q) adds at most 4 roundings, so
the logit t = c s is computed with

    |t~_ij - t_ij| <= D_ij = gamma_{d_k + 4} |c| sum_l |q_il k_jl|.

D_ij = 0 when the computation is exact: every product is a multiple of 2^e with
``sum |q_il k_jl| <= 2^(p + e)`` (then every partial sum, in any order, is representable)
and c is a power of two (e.g. d_k = 4: the scale 1/2 is exact).

**2. Weights.**  A row with allowed keys A, x_k = fl(t~_k - max t~) (relative error u,
so |eta_k| <= u X_k with X_k = |t_k - max t| + D_k + max_A D), e_k = exp(x_k)(1 + eps_k)
with |eps_k| <= E, a sum of at most m terms (|theta_k| <= gamma_m) and a division (done
as a reciprocal and a product: (1 +- u)^2).  With g_k = e^{Delta_k + eta_k}(1 + eps_k),
exactly ``w~_j = w_j (1 + delta)^2 / (w_j (1 + theta_j) + sum_{k != j} w_k (g_k / g_j)(1 + theta_k))``,
and ``g_k / g_j`` lies within ``e^{+-(D_k + D_j + u (X_k + X_j))} ((1 + E)/(1 - E))^{+-1}``, so

    hi_j = (1 + u)^2 / ((1 - gamma_m)(w_j + sum_{k != j} w_k e^{-(D_k + D_j) - u (X_k + X_j)} (1 - E)/(1 + E)))
    lo_j = (1 - u)^2 / ((1 + gamma_m)(w_j + sum_{k != j} w_k e^{+(D_k + D_j) + u (X_k + X_j)} (1 + E)/(1 - E)))

bound w~_j / w_j (a dominant weight stays tight however large the logit errors of
negligible keys), and so ``|w~_j - w_j| <= w_j max(hi_j - 1, 1 - lo_j) + 2 lambda``.  A blocked key must get
exactly 0 (exp(-inf) = 0; finfo.min also underflows to exactly 0).  Implementations that
normalize after the product with V (flash attention) are covered by the same factors.

**3. Output.**  o_ic = sum_j w_j v_jc with at most m products and sums:

    |o~_ic - o_ic| <= sum_j |v_jc| B_ij + gamma_m sum_j (w_j + B_ij) |v_jc| + m lambda.

This is the bound of the standard algorithm (subtract the row maximum, exp, sum, divide).
Computing ``exp(t - logsumexp(t))`` instead rounds the log-sum-exp, a number as large as
the logits, and so loses about ``u |max t|`` more (Blanchard, Higham & Mary): with logits
near 1000 it exceeds this bound (measured: 101 float64 ulps of a weight against 6), and
the oracle says so rather than widening the bound for every implementation.

Fully masked rows follow the declared policy: "zeros" must be exactly 0, "uniform" is the
row of equal logits (D = 0), "nan" must be NaN (a bound of NaN below means "NaN expected").
The bounds are evaluated in double precision and enlarged by 2^-40 relative to cover that.

>>> from symbolic_attn.numerics.backends import FORMATS
>>> f32 = FORMATS["float32"]
>>> logit_bounds([[1, 2]], [[3, 4]], 1, f32)           # 1*3 + 2*4: exact in float32
[[0.0]]
>>> logit_bounds([["1/3", 0]], [[1, 0]], 1, f32)[0][0] > 0
True
>>> b = weight_bounds([[0.0, 0.0]], [[0.5, 0.5]], [[True, True]], [[0.0, 0.0]], f32)
>>> 0 < b[0][0] < 12 * 2 ** -24
True
"""

from __future__ import annotations

import math
from fractions import Fraction

import sympy

from symbolic_attn.exact.convert import to_exact
from symbolic_attn.numerics.backends import FloatFormat

__all__ = ["EXP_ULPS", "SCALE_ROUNDINGS", "logit_bounds", "weight_bounds", "output_bounds", "representable", "inflate"]

#: Assumed accuracy of the library's exp, in ulps of the result.
EXP_ULPS = 4
#: Roundings allowed for forming and applying the scale (sqrt, reciprocal, product, cast).
SCALE_ROUNDINGS = 4
_SLACK = 1 + 2.0 ** -40


def inflate(bound: float) -> float:
    """A bound evaluated in double precision, enlarged to cover its own evaluation."""
    return bound * _SLACK


def _fraction(value) -> Fraction:
    if isinstance(value, Fraction):
        return value
    value = to_exact(value)
    return Fraction(int(value.p), int(value.q))


def _power_of_two(value: Fraction) -> bool:
    value = abs(value)
    return value != 0 and value.numerator & (value.numerator - 1) == 0 and value.denominator & (value.denominator - 1) == 0


def _valuation(value: Fraction) -> int | None:
    """e with value = odd * 2^e, or None when value is not a dyadic rational."""
    den = value.denominator
    if den & (den - 1):
        return None
    num = abs(value.numerator)
    return (num & -num).bit_length() - 1 - (den.bit_length() - 1)


def representable(value: Fraction, fmt: FloatFormat) -> bool:
    """Whether ``value`` is exactly a (finite) number of the format."""
    if value == 0:
        return True
    e = _valuation(value)
    if e is None or abs(value) > fmt.largest:
        return False
    odd = abs(value) / Fraction(2) ** e
    return odd.numerator < 2 ** fmt.precision and e >= fmt.min_exponent - fmt.precision + 1


def _exact_dot(terms: list[Fraction], fmt: FloatFormat) -> bool:
    """Every partial sum of ``terms``, in any order, is representable (so fl is exact)."""
    nonzero = [t for t in terms if t != 0]
    if not nonzero:
        return True
    valuations = [_valuation(t) for t in nonzero]
    if None in valuations:
        return False
    e = min(valuations)
    total = sum(abs(t) for t in nonzero)
    return e >= fmt.min_exponent - fmt.precision + 1 and total <= Fraction(2) ** (fmt.precision + e) and total <= fmt.largest


def logit_bounds(query, key, scale, fmt: FloatFormat) -> list[list[float]]:
    """D_ij: the error bound of the computed logit scale * q_i . k_j (step 1 above)."""
    Q = [[_fraction(x) for x in row] for row in _rows(query)]
    K = [[_fraction(x) for x in row] for row in _rows(key)]
    c = to_exact(scale) if not isinstance(scale, sympy.Basic) else scale
    exact_scale = bool(c.is_Rational) and _power_of_two(_fraction(c))
    size = abs(float(c))
    gamma = fmt.gamma(len(Q[0]) + SCALE_ROUNDINGS)
    bounds = []
    for q in Q:
        row = []
        for k in K:
            terms = [a * b for a, b in zip(q, k)]
            if exact_scale and _exact_dot(terms, fmt) and all(representable(t * _fraction(c), fmt) for t in terms):
                row.append(0.0)
            else:
                row.append(inflate(gamma * size * float(sum(abs(t) for t in terms))))
        bounds.append(row)
    return bounds


def _rows(matrix):
    if isinstance(matrix, sympy.MatrixBase):
        return matrix.tolist()
    return matrix


def weight_bounds(logits, weights, allowed, logit_error, fmt: FloatFormat, empty_row: str = "error") -> list[list[float]]:
    """B_ij for the softmax weights (step 2), from the exact logits and weights as floats.

    ``allowed`` is the mask grid; rows without an allowed key follow ``empty_row``.
    """
    u, lam = fmt.unit_roundoff, fmt.smallest_normal
    E = 2 * EXP_ULPS * u
    result = []
    for t, w, ok, D in zip(logits, weights, allowed, logit_error):
        m = len(t)
        gamma = fmt.gamma(m)
        keys = [j for j in range(m) if ok[j]]
        if not keys:
            if empty_row == "nan":
                result.append([math.nan] * m)
                continue
            if empty_row == "zeros":
                result.append([0.0] * m)
                continue
            # uniform: the row of equal logits, every key taking part, exactly computed.
            keys, t, D = list(range(m)), [0.0] * m, [0.0] * m
        top = max(t[j] for j in keys)
        most = max(D[j] for j in keys)
        X = {j: abs(t[j] - top) + D[j] + most for j in keys}
        row = [0.0] * m
        for j in keys:
            others = [k for k in keys if k != j]
            near = sum(w[k] * _exp(-(D[k] + D[j]) - u * (X[k] + X[j])) for k in others) * (1 - E) / (1 + E)
            far = sum(w[k] * _exp(D[k] + D[j] + u * (X[k] + X[j])) for k in others) * (1 + E) / (1 - E)
            hi = _ratio((1 + u) ** 2, (1 - gamma) * (w[j] + near))
            lo = _ratio((1 - u) ** 2, (1 + gamma) * (w[j] + far))
            spread = max(hi - 1, 1 - lo)
            row[j] = math.inf if math.isnan(spread) or math.isinf(spread) else inflate(w[j] * spread + 2 * lam)
        result.append(row)
    return result


def _exp(x: float) -> float:
    # exp of a bound's exponent: beyond double range the bound is simply infinite.
    return math.inf if x > 700 else math.exp(x)


def _ratio(numerator, denominator):
    return math.inf if denominator <= 0 or math.isinf(numerator) else numerator / denominator


def output_bounds(weights, weight_error, value, fmt: FloatFormat) -> list[list[float]]:
    """The bound on each output entry (step 3); NaN where NaN weights are expected."""
    V = [[abs(float(x)) for x in row] for row in _rows(value)]
    lam = fmt.smallest_normal
    result = []
    for w, B in zip(weights, weight_error):
        m = len(w)
        gamma = fmt.gamma(m)
        if any(math.isnan(b) for b in B):
            result.append([math.nan] * len(V[0]))
            continue
        row = []
        for c in range(len(V[0])):
            spread = sum(V[j][c] * B[j] for j in range(m))
            size = sum((abs(w[j]) + B[j]) * V[j][c] for j in range(m))
            total = spread + gamma * size + m * lam
            row.append(math.inf if math.isnan(total) else inflate(total))
        result.append(row)
    return result
