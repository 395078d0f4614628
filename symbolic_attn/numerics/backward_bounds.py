r"""The float error bound an attention *backward* pass is held to, per dtype.

A running error analysis of the standard backward pass of attention, in the model of
:mod:`.bounds` (read it first): every operation is correctly rounded,
``fl(a op b) = (a op b)(1 + delta)`` with ``|delta| <= u``; ``k`` chained roundings give
``|theta_k| <= gamma_k = k u / (1 - k u)`` and ``(1 + theta_j)(1 + theta_k) = 1 + theta_{j+k}``
(Higham, Lemma 3.3); a sum of ``p`` products is computed in *any* order (pairwise,
blocked, FMA) with ``|fl(sum x_l y_l) - sum x_l y_l| <= gamma_p sum |x_l y_l|``; ``exp``
within ``EXP_ULPS``; every underflow adds at most lambda, the smallest normal number.

Notation: exact inputs Q (n x d_k), K (m x d_k), V (m x d_v), the upstream gradient
G = dO (n x d_v) -- all exactly the floats the kernel received --, the scale c; exact A, O
and the stages of :func:`~symbolic_attn.model.backward.attention_backward`.  Each step
below turns entrywise bounds ``E_X >= |X~ - X|`` of its operands into one on its result;
``|X|`` is the exact magnitude (an upper bound of it, read off a certified ball).

**0. The scale.**  A kernel applies c to the scores (t = c fl(q.k)), to Q (t = fl(cq).k)
or sqrt(c) to both Q and K (t = fl(sqrt(c) q).fl(sqrt(c) k), PyTorch's math path); c
itself is formed from d_k (sqrt, reciprocal, a second sqrt, a cast to the dtype: <= 4
roundings, and used twice in the sqrt(c) form) and applied by <= 2 products.  Every
term of every logit and of every gradient dQ, dK therefore carries at most
``SCALE_ROUNDINGS = 10`` roundings from the scale, whichever form the kernel uses:

    |t~_ij - t_ij| <= D_ij = gamma_{d_k + 10} |c| sum_l |q_il k_jl| + d_k lambda

(0 only when the products and c and sqrt(c) are exact: c an even power of two, as
:func:`~.bounds.logit_bounds` decides; a power of two such as 1/2 has an irrational
square root, so it is *not* exact in the sqrt(c) form -- the false alarm of issue 25).

**1. Forward weights and output.**  ``B = weight_bounds(t, A, mask, D)`` and
``E_O = output_bounds(A, B, V)`` of :mod:`.bounds` (the backward reuses the forward's
weights, or recomputes them the same way).  A blocked weight is exactly 0: B = 0 there.

**1'. Weights recomputed from a saved log-sum-exp** (FlashAttention's backward):
``p_j = exp(fl(t~_j - L~))`` with ``L~ = fl(M~ + fl(log l~))``, M~ the row maximum and
``l~ = fl(sum_k exp(fl(t~_k - M~)))``.  With ``X'_k = D_k + D_max + u(|t_k - M| + D_k + D_max)``
(D_max the row's largest D), ``|log l~ - log l| <= Lam = max X' - log((1 - E)(1 - gamma_m))``;
log within E relative (l >= 1, so |log l| <= log m + Lam), so

    |L~ - L| <= Delta = D_max + Lam + E (log m + Lam) + u (|L| + D_max + Lam + E (log m + Lam))
    delta_j = D_j + Delta + 2u (|t_j - L| + D_j + Delta)        (2u: exp2 of a scaled argument)
    B'_j = w_j max(expm1(delta_j)(1 + E) + E, 1 - e^(-delta_j)(1 - E)) + lambda

and the backward uses ``max(B, B')`` for its weights (and for the output O in step 4): a
kernel may recompute the weights either way.  B' grows with u |L|, the size of the logits,
which is why the forward bound of :mod:`.bounds` does not cover this form.

**2. dV = Aᵀ G** (n products per entry):

    E_dV_jc = sum_i B_ij |G_ic| + gamma_n sum_i (A_ij + B_ij) |G_ic| + n lambda

**3. dA = G Vᵀ** (exact operands, d_v products):
``E_dA_ij = gamma_{d_v} sum_c |G_ic V_jc| + d_v lambda``.

**4. The row sum**, in either of its two forms, which are equal exactly but round
differently: r = rowsum(dA ⊙ A) and FlashAttention's D = rowsum(dO ⊙ O):

    E_r = sum_j (E_dA A + |dA| B + E_dA B) + gamma_m sum_j (|dA| + E_dA)(A + B) + m lambda
    E_D = sum_c |G_ic| E_O_ic + gamma_{d_v} sum_c |G_ic| (|O_ic| + E_O_ic) + d_v lambda

and the bound takes ``max(E_r, E_D)``: a kernel may use either.

**5. dScaled = A ⊙ (dA - r)** on allowed positions (exactly 0 where blocked: the kernel
multiplies by a weight that is exactly 0).  Computed as ``A~ ⊙ fl(dA~ - r~)``
(PyTorch's softmax backward) or ``fl(A~ ⊙ dA~) - fl(A~ ⊙ r~)`` (JAX's transposed jvp),
both within

    E_S_ij = B_ij |dA_ij - r_i| + (A_ij + B_ij)(E_dA_ij + E_r_i)
             + gamma_J (A_ij + B_ij)(|dA_ij| + E_dA_ij + |r_i| + E_r_i) + J lambda

with ``J = JACOBIAN_ROUNDINGS = 4`` (2 suffice for either form; 4 leaves room for a
fused or reordered one).  The first line is ``|A~ x~ - A x| <= |A~ - A||x| + |A~||x~ - x|``.

**6. dQ = c dScaled K and dK = c dScaledᵀ Q** (m and n products, the scale's roundings of
step 0 on every term):

    E_dQ_il = |c| (sum_j E_S_ij |K_jl| + gamma_{m+10} sum_j (|dScaled_ij| + E_S_ij)|K_jl|) + (m + 10) lambda max(1, |c|)
    E_dK_jl = |c| (sum_i E_S_ij |Q_il| + gamma_{n+10} sum_i (|dScaled_ij| + E_S_ij)|Q_il|) + (n + 10) lambda max(1, |c|)

The bounds are evaluated in double precision from upper bounds of the exact magnitudes
and enlarged by 2^-40 relative (:func:`~.bounds.inflate`), as the forward bounds are.

**The mistakes** are bounded by the same steps on their own exact values: the row sum
replaced by a term rho_ij (0 for the diagonal Jacobian; A_ij dA_ij when the row sum is
missing, with ``E_rho = B |dA| + (A + B) E_dA + u (A + B)(|dA| + E_dA) + lambda``), the
factor c of step 6 left out, or dScaled transposed in step 6.

Not covered (the oracle fails such kernels rather than widening every bound): autodiff
*through* a hand-written exp / sum / division softmax (more roundings than J), half
precision and mixed-precision accumulation.

>>> from symbolic_attn.numerics.backends import FORMATS
>>> f64 = FORMATS["float64"]
>>> gradient_logit_bounds([[1, 2]], [[3, 4]], sympy.Rational(1, 4), f64)   # sqrt(1/4) = 1/2: exact
[[0.0]]
>>> gradient_logit_bounds([[1, 2]], [[3, 4]], sympy.Rational(1, 2), f64)[0][0] > 0
True
>>> one = [[1.0]]
>>> b = backward_bounds(weights=one, weight_error=[[0.0]], output=one, output_error=[[0.0]], query=one,
...     key=one, value=one, grad=one, dA=one, rho=one, diff=[[0.0]], dscaled=[[0.0]], scale=1.0, fmt=f64)
>>> sorted(b), 0 < b["dQ"][0][0] < 1e-14
(['dA', 'dK', 'dQ', 'dS', 'dV', 'r'], True)
"""

from __future__ import annotations

import math
from fractions import Fraction

import sympy

from symbolic_attn.numerics.backends import FloatFormat
from symbolic_attn.numerics.bounds import EXP_ULPS, inflate, logit_bounds, representable

__all__ = ["SCALE_ROUNDINGS", "JACOBIAN_ROUNDINGS", "ROW_TERMS", "gradient_logit_bounds", "logsumexp_weight_bounds",
           "backward_bounds"]

#: Roundings from the scale on every term of a logit and of dQ, dK (step 0).
SCALE_ROUNDINGS = 10
#: Roundings of one entry of dScaled beyond its operands' (step 5).
JACOBIAN_ROUNDINGS = 4
#: What is subtracted from dA in step 5: the row sum (correct), nothing, or A ⊙ dA.
ROW_TERMS = ("rowsum", "none", "own")


def _fraction(x) -> Fraction:
    x = sympy.sympify(x)
    return Fraction(int(x.p), int(x.q))


def _even_power_of_two(c) -> bool:
    """c = 2^(2e): then sqrt(c) = 2^e is exact too."""
    if not (isinstance(c, sympy.Basic) and c.is_Rational and c > 0):
        return False
    value = _fraction(c)
    num, den = value.numerator, value.denominator
    if num & (num - 1) or den & (den - 1):
        return False
    return (num.bit_length() - den.bit_length()) % 2 == 0


def gradient_logit_bounds(query, key, scale, fmt: FloatFormat) -> list[list[float]]:
    """D_ij of step 0: the logit error whichever way the kernel applies the scale."""
    c = sympy.sympify(scale)
    rows_q = [[_fraction(x) for x in row] for row in (query.tolist() if hasattr(query, "tolist") else query)]
    rows_k = [[_fraction(x) for x in row] for row in (key.tolist() if hasattr(key, "tolist") else key)]
    size = abs(float(c)) * (1 + 2.0 ** -50)  # an upper bound of |c|
    exact = logit_bounds(rows_q, rows_k, c, fmt) if _even_power_of_two(c) else None
    if exact is not None:
        root = _fraction(sympy.sqrt(c))
        fits = all(representable(x * root, fmt) for row in rows_q + rows_k for x in row)
        exact = exact if fits else None
    gamma, lam, d = fmt.gamma(len(rows_q[0]) + SCALE_ROUNDINGS), fmt.smallest_normal, len(rows_q[0])
    bounds = []
    for i, q in enumerate(rows_q):
        row = []
        for j, k in enumerate(rows_k):
            if exact is not None and exact[i][j] == 0.0:
                row.append(0.0)
            else:
                total = float(sum(abs(a * b) for a, b in zip(q, k)))
                row.append(inflate(gamma * size * total * (1 + 2.0 ** -50) + d * lam))
        bounds.append(row)
    return bounds


def logsumexp_weight_bounds(logits, weights, allowed, logit_error, fmt: FloatFormat) -> list[list[float]]:
    """B'_ij of step 1': weights recomputed as exp(t - L) from a saved log-sum-exp L.

    ``logits`` and ``weights`` are the exact values as floats, ``allowed`` the mask grid
    (every row with a key), ``logit_error`` the D of step 0; blocked weights get 0.
    """
    u, lam = fmt.unit_roundoff, fmt.smallest_normal
    E = 2 * EXP_ULPS * u
    result = []
    for t, w, ok, D in zip(logits, weights, allowed, logit_error):
        m = len(t)
        keys = [j for j in range(m) if ok[j]]
        top = max(t[j] for j in keys)
        most = max(D[j] for j in keys)
        spread = max(D[k] + most + u * (abs(t[k] - top) + D[k] + most) for k in keys)
        Lam = spread - math.log((1 - E) * (1 - fmt.gamma(m)))
        log_l = math.log(len(keys)) + Lam
        L = top + math.log(sum(math.exp(t[k] - top) for k in keys))
        Delta = most + Lam + E * log_l + u * (abs(L) + most + Lam + E * log_l)
        slack = 2.0 ** -50 * (abs(L) + 1)  # L and t_j - L are evaluated in double
        row = [0.0] * m
        for j in keys:
            delta = D[j] + Delta + 2 * u * (abs(t[j] - L) + slack + abs(t[j]) * 2.0 ** -50 + D[j] + Delta)
            if delta > 700:
                row[j] = math.inf
                continue
            grow = max(math.expm1(delta) * (1 + E) + E, 1 - math.exp(-delta) * (1 - E))
            row[j] = inflate(w[j] * grow * (1 + 2.0 ** -50) + lam)
        result.append(row)
    return result


def _cols(matrix):
    return [list(col) for col in zip(*matrix)]


def backward_bounds(*, weights, weight_error, output, output_error, query, key, value, grad, dA, rho, diff,
                    dscaled, scale: float, fmt: FloatFormat, row_term: str = "rowsum",
                    transposed: bool = False) -> dict[str, list[list[float]]]:
    """The bounds of steps 2-6, entry by entry (lists of float rows).

    Every argument but the errors is an upper bound of an exact magnitude: ``weights`` A
    (0 where blocked), ``output`` O, ``dA`` = |G Vᵀ|, ``rho`` the subtracted term (n x m:
    the row sum broadcast, 0, or |A dA|), ``diff`` = |dA - rho|, ``dscaled`` the variant's
    |dScaled|; ``scale`` the factor |c| of step 6 (1 when it is left out); ``row_term``
    which term rho is (:data:`ROW_TERMS`); ``transposed``: dQ from dScaledᵀ (n = m).
    Returns the bounds of "dV", "dA", "r" (n x 1), "dS" (dScaled), "dQ" and "dK".
    """
    A, B, Out, EO, Q, K, V, G = weights, weight_error, output, output_error, query, key, value, grad
    n, m, d_v = len(A), len(A[0]), len(V[0])
    u, lam, gamma = fmt.unit_roundoff, fmt.smallest_normal, fmt.gamma
    dV = [[sum(B[i][j] * G[i][c] + gamma(n) * (A[i][j] + B[i][j]) * G[i][c] for i in range(n)) + n * lam
           for c in range(d_v)] for j in range(m)]
    EdA = [[gamma(d_v) * sum(G[i][c] * V[j][c] for c in range(d_v)) + d_v * lam for j in range(m)] for i in range(n)]
    r = []
    for i in range(n):
        by_weights = sum(EdA[i][j] * A[i][j] + dA[i][j] * B[i][j] + EdA[i][j] * B[i][j]
                         + gamma(m) * (dA[i][j] + EdA[i][j]) * (A[i][j] + B[i][j]) for j in range(m)) + m * lam
        by_output = sum(G[i][c] * EO[i][c] + gamma(d_v) * G[i][c] * (Out[i][c] + EO[i][c]) for c in range(d_v)) + d_v * lam
        r.append(max(by_weights, by_output))
    J = JACOBIAN_ROUNDINGS
    dS = []
    for i in range(n):
        row = []
        for j in range(m):
            if A[i][j] == 0 and B[i][j] == 0:  # blocked: exactly 0
                row.append(0.0)
                continue
            a = A[i][j] + B[i][j]
            if row_term == "rowsum":
                Erho = r[i]
            elif row_term == "none":
                Erho = 0.0
            else:
                Erho = B[i][j] * dA[i][j] + a * EdA[i][j] + u * a * (dA[i][j] + EdA[i][j]) + lam
            row.append(B[i][j] * diff[i][j] + a * (EdA[i][j] + Erho)
                       + gamma(J) * a * (dA[i][j] + EdA[i][j] + rho[i][j] + Erho) + J * lam)
        dS.append(row)
    S, ES = dscaled, dS
    if transposed:
        S, ES = _cols(S), _cols(ES)
    c, R = scale, SCALE_ROUNDINGS
    tail_q, tail_k = (m + R) * lam * max(1.0, c), (n + R) * lam * max(1.0, c)
    d_k = len(Q[0])
    dQ = [[c * sum(ES[i][j] * K[j][col] + gamma(m + R) * (S[i][j] + ES[i][j]) * K[j][col] for j in range(m)) + tail_q
           for col in range(d_k)] for i in range(n)]
    dK = [[c * sum(ES[i][j] * Q[i][col] + gamma(n + R) * (S[i][j] + ES[i][j]) * Q[i][col] for i in range(n)) + tail_k
           for col in range(d_k)] for j in range(m)]
    grow = lambda grid: [[inflate(x) for x in row] for row in grid]  # noqa: E731
    return {"dV": grow(dV), "dA": grow(EdA), "r": grow([[x] for x in r]), "dS": grow(dS), "dQ": grow(dQ), "dK": grow(dK)}
