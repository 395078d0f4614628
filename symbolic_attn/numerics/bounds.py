r"""The float error bound an attention implementation is held to, per dtype.

Not a hand-picked tolerance: the standard rounding-error analysis of the dot product and
of softmax (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., section
3.1 and Lemma 3.1; Blanchard, Higham & Mary, "Accurate computation of the log-sum-exp and
softmax functions", 2021), evaluated entry by entry on the exact case.

Model: every operation is correctly rounded, fl(a op b) = (a op b)(1 + delta) with
``|delta| <= u`` (u = 2^-11 float16, 2^-8 bfloat16, 2^-24 float32, 2^-53 float64; u of the
*input* dtype), and n chained roundings give ``|theta_n| <= gamma_n = n u / (1 - n u)``.
Library ``exp`` and ``log`` are not correctly rounded; we assume them within ``EXP_ULPS =
4`` ulps (relative error ``E = 8u``): numpy's SIMD float32 exp documents under 2.6 ulp,
glibc and XLA under 1-2 ulp.  Underflow adds at most the smallest normal number lambda per
rounding (flush-to-zero included).  A kernel may compute in a finer format than its
inputs (mixed precision: float16/bfloat16 inputs, float32 accumulation and softmax, as
PyTorch and JAX do): every rounding of the finer format is below u, and the casts back to
the input format are counted below, so the same bound holds.

The bound covers every standard kernel, not one algorithm:

* **the scale** applied to the scores, to Q, or to Q and K each by sqrt(c) (PyTorch's
  math path): forming c (sqrt, reciprocal, a cast), its square root and the two products
  are at most ``SCALE_ROUNDINGS = 8`` roundings;
* **any summation order** of the dot products, blocked BLAS and fused multiply-adds;
* **blocked (online) softmax**, FlashAttention's rescaling: a key's exp is multiplied by at
  most one rescaling factor exp(m_old - m_new) per later block (at most m blocks), each with
  the error of an exp, and the rescaled sums take one more rounding per block;
* **log-sum-exp forms**, ``exp(t - logsumexp(t))``: the weight's argument is off by the
  rounding of lse, a number as large as the logits (Blanchard, Higham & Mary);
* **a final cast** of weights or output to the input format.

**1. Logits.**  s_ij = q_i . k_j with d = d_k products, summed in any order:
``|fl(s) - s| <= gamma_d sum_l |q_il k_jl|``, so the logit t = c s is computed with

    |t~_ij - t_ij| <= D_ij = gamma_{d_k + 8} |c| sum_l |q_il k_jl|.

D_ij = 0 when the computation is exact on every path: c is a power of four (so sqrt(c) is a
power of two: d_k = 4 gives c = 1/2, whose square root is rounded), every product is a
multiple of 2^e with ``sum |q_il k_jl| <= 2^(p + e)`` (then every partial sum, in any order,
is representable) and the scaled entries are representable.

**2. Weights.**  A row with allowed keys A, x_k = fl(t~_k - max t~) (relative error u,
so |eta_k| <= u X_k with X_k = |t_k - max t| + D_k + max_A D), e_k = exp(x_k)(1 + eps_k),
times up to b = m rescaling factors, each within a factor ``(1 +- E) e^(+- u X)`` (their
arguments telescope), a sum of at most m terms rounded at most 2m times (gamma_2m) and a
division (done as a reciprocal and a product) and a cast: (1 +- u)^3.  With
``F = ((1 + E)/(1 - E))^(m + 1)`` and ``Y_kj = D_k + D_j + 2u (X_k + X_j)``,

    hi_j = (1 + u)^3 / ((1 - gamma_2m)(w_j + sum_{k != j} w_k e^{-Y_kj} / F))
    lo_j = (1 - u)^3 / ((1 + gamma_2m)(w_j + sum_{k != j} w_k e^{+Y_kj} F))

bound w~_j / w_j (a dominant weight stays tight however large the logit errors of
negligible keys).  The log-sum-exp form gives ``w~_j / w_j`` within ``e^(+-L_j) (1 +- E)^2``
with ``L_j = D_j + max_A D + 2u max_A X + gamma_2m + E + 2u |lse| + u |t_j - lse| + 8u
(|log S| + 1)`` (S the sum of exp(t - max t)), and the weight is held to the larger of the two:
``|w~_j - w_j| <= w_j max(hi_j - 1, 1 - lo_j, spread of L_j) + 2 lambda``.  A blocked
key must get exactly 0 (exp(-inf) = 0; finfo.min also underflows to exactly 0).
Implementations that normalize after the product with V (flash attention) are covered by
the same factors.

**3. Output.**  o_ic = sum_j w_j v_jc with at most m products and sums, rescaled once per
block and cast:

    |o~_ic - o_ic| <= sum_j |v_jc| B_ij + gamma_{2m+1} sum_j (w_j + B_ij) |v_jc| + m lambda.

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
>>> 0 < b[0][0] < 40 * 2 ** -24
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
#: Roundings allowed for forming and applying the scale: sqrt, reciprocal, a cast, its
#: square root (squared: two), the products with Q and K (PyTorch's sqrt(c) q . sqrt(c) k).
SCALE_ROUNDINGS = 8
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


def _power_of_four(value: Fraction) -> bool:
    """A power of two with an even exponent: its square root is a power of two too."""
    return _power_of_two(value) and (value.numerator.bit_length() - value.denominator.bit_length()) % 2 == 0


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
    exact_scale = bool(c.is_Rational) and _power_of_four(_fraction(c))
    size = abs(float(c))
    gamma = fmt.gamma(len(Q[0]) + SCALE_ROUNDINGS)
    bounds = []
    root = _root(_fraction(c)) if exact_scale else None
    for q in Q:
        row = []
        for k in K:
            terms = [a * b for a, b in zip(q, k)]
            if root is not None and _exact_dot(terms, fmt) and all(representable(t * _fraction(c), fmt) for t in terms) \
                    and all(representable(x * root, fmt) and representable(x * _fraction(c), fmt) for x in (*q, *k)):
                row.append(0.0)
            else:
                row.append(inflate(gamma * size * float(sum(abs(t) for t in terms))))
        bounds.append(row)
    return bounds


def _root(value: Fraction) -> Fraction:
    """The square root of a power of four (a power of two)."""
    num, den = abs(value.numerator), value.denominator
    return Fraction(1 << ((num.bit_length() - 1) // 2), 1 << ((den.bit_length() - 1) // 2))


def _rows(matrix):
    if isinstance(matrix, sympy.MatrixBase):
        return matrix.tolist()
    return matrix


def weight_bounds(logits, weights, allowed, logit_error, fmt: FloatFormat, empty_row: str = "error",
                  logsumexp: bool = True) -> list[list[float]]:
    """B_ij for the softmax weights (step 2), from the exact logits and weights as floats.

    ``allowed`` is the mask grid; rows without an allowed key follow ``empty_row``.
    ``logsumexp=False`` leaves out the log-sum-exp form (whose rounding of lse makes the
    bound vacuous once |logits| ~ 1/u): diagnosis holds a *bug's* variant to the standard
    and online algorithms only, so that a -1e9 fill stays distinguishable.
    """
    u, lam = fmt.unit_roundoff, fmt.smallest_normal
    E = 2 * EXP_ULPS * u
    result = []
    for t, w, ok, D in zip(logits, weights, allowed, logit_error):
        m = len(t)
        gamma = fmt.gamma(2 * m)
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
        F = ((1 + E) / (1 - E)) ** (len(keys) + 1)  # one exp, and a rescaling per later block
        lse = _logsumexp(t, w, keys, D, X, u, E, gamma)
        row = [0.0] * m
        for j in keys:
            others = [k for k in keys if k != j]
            near = sum(_scaled(w[k], t[k] - top, -(D[k] + D[j]) - 2 * u * (X[k] + X[j])) for k in others) / F
            far = sum(_scaled(w[k], t[k] - top, D[k] + D[j] + 2 * u * (X[k] + X[j])) for k in others) * F
            hi = _ratio((1 + u) ** 3, (1 - gamma) * (w[j] + near))
            lo = _ratio((1 - u) ** 3, (1 + gamma) * (w[j] + far))
            L = lse(j) if logsumexp else 0.0
            lse_spread = max(_exp(L) * (1 + E) ** 2 - 1, 1 - _exp(-L) * (1 - E) ** 2) if logsumexp else 0.0
            spread = max(hi - 1, 1 - lo, lse_spread)
            if w[j] > 0 and math.isfinite(spread):
                row[j] = inflate(w[j] * spread + 2 * lam)
                continue
            # A negligible key (its weight underflowed, or a factor overflowed): in logarithms,
            # w_j hi_j and w_j e^L (1 + E)^2, with log w_j = t_j - lse.
            log_w = t[j] - top - math.log(math.fsum(_exp(t[k] - top) for k in keys))
            standard = log_w + math.log((1 + u) ** 3 / (1 - gamma)) - _log(w[j] + near)
            lse_part = _exp(log_w + L) * (1 + E) ** 2 if logsumexp else 0.0
            row[j] = inflate(max(_exp(standard), lse_part) + 2 * lam)
        result.append(row)
    return result


def _logsumexp(t, w, keys, D, X, u, E, gamma):
    """L_j: the error of the argument of exp in ``exp(t_j - logsumexp(t))``, per key j.

    Relative to the computed maximum m~ (within D_top of the exact one; exactly the key's
    own logit when one key is the maximum by a margin), key k's shifted logit is off by P_k;
    log S~ is off by Lerr (the weighted P, the sum's and the exp's roundings); lse = m~ +
    log S~ is rounded by at most min(u |lse|, log S~) (m~ is itself a float), then t_j - lse.
    """
    top = max(t[k] for k in keys)
    most = max(D[k] for k in keys)
    contenders = [k for k in keys if t[k] + D[k] >= top - most]
    D_top = max(D[k] for k in contenders)
    alone = contenders[0] if len(contenders) == 1 else None
    P = {k: 0.0 if k == alone else D[k] + D_top + u * X[k] for k in keys}
    S = math.fsum(_exp(t[k] - top) for k in keys)
    log_S = math.log(S)
    up = sum(_scaled(w[k], t[k] - top, P[k]) for k in keys) * (1 + E) * (1 + gamma)
    down = sum(_scaled(w[k], t[k] - top, -P[k]) for k in keys) * (1 - E) * (1 - gamma)
    Lerr = max(_log(up), -_log(down)) + 8 * u * (log_S + 1)
    rounding = min(u * (abs(top + log_S) + D_top + Lerr), log_S + Lerr)

    def error(j):
        return P[j] + Lerr + rounding + u * (abs(t[j] - top - log_S) + P[j] + Lerr + log_S + 1)

    return error


def _scaled(weight: float, shifted: float, x: float) -> float:
    """weight * e^x; a weight that underflowed double (its logit ``shifted`` below the row's
    maximum, so weight <= e^shifted) is taken in logarithms: 0 * inf is not a bound."""
    if weight > 0 and x < 700:
        return weight * math.exp(x)
    return _exp(shifted + x) if weight == 0 else math.inf


def _log(x: float) -> float:
    return math.inf if x <= 0 or math.isinf(x) else math.log(x)


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
        gamma = fmt.gamma(2 * m + 1)
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
