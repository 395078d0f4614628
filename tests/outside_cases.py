"""Outside adversarial cases for the symbolic_attn proof checker.

Written from the README and the public docstrings only (black box).  Every case is a
one-step derivation (or, for the class ``printed``, a small probe object) built by a
builder function; the table ``CASES`` lists ``(id, class, truth, builder)``.

Run:  SYMPY_GROUND_TYPES=python python tests/outside_cases.py > out.jsonl   (from the repository root)
One JSON line per case on stdout, a summary on stderr.

Verdicts:
  accepted  -- d.verify() returned (for ``printed``: clean misleading output was produced);
  rejected  -- a ProofError (or subclass) was raised (for ``printed``: the output was
               refused or visibly marked as not verified);
  crashed   -- any other exception escaped (incl. a per-case timeout, error_type "Timeout").

Every FALSE case carries a comment giving an admissible counterexample (values satisfying
every declared flag and stated condition where the step fails or is undefined), or, for
inconsistent premises, says why nothing may be proved from them.
"""

from __future__ import annotations

import json
import signal
import sys
import time

import sympy
from sympy import (
    Abs, And, Eq, Function, Idx, IndexedBase, Integer, Integral, Interval, KroneckerDelta, Lambda,
    Max, Min, MatrixSymbol, Identity, ImmutableMatrix, Ne, Piecewise, Poly, Product, Q, Rational,
    Sum, Symbol, acos, acot, asec, asin, atan, ceiling, cos, cosh, cot, coth, csc, csch, exp, floor,
    log, nan, oo, pi, sec, sech, sign, sin, sinh, sqrt, tan, tanh,
)

from symbolic_attn.errors import ProofError
from symbolic_attn.proofs.chain import Assumption, Computed, Derivation, Scope, Step
from symbolic_attn.proofs.operators import MaskedSoftmax, RowSoftmax, Sigmoid, SoftmaxAt
from symbolic_attn.proofs.prove import Frac
from symbolic_attn.proofs.result import Case, Check, Counterexample, Result
from symbolic_attn.proofs.rules import Bijection, reindex_by, rename_index, shift_index, split_blocks

TIMEOUT_SECONDS = 60

# ----------------------------------------------------------------------------- symbols
n = Symbol("n", integer=True, positive=True)
i, j, k, m = sympy.symbols("i j k m", integer=True, positive=True)
u = Symbol("u", integer=True, positive=True)          # a free position 1..n
q = Symbol("q", integer=True, nonnegative=True)        # an index that may be 0
e_int = Symbol("e", integer=True)                      # an integer exponent of unknown sign
h = Symbol("h", integer=True, nonnegative=True)        # number of blocks
w = Symbol("w", integer=True, positive=True)           # block width
g, r, c = sympy.symbols("g r c", integer=True, positive=True)
s = IndexedBase("s", real=True)
t = IndexedBase("t", real=True)
p = IndexedBase("p", positive=True)
a_nn = IndexedBase("a", nonnegative=True)
x, y, z = sympy.symbols("x y z", real=True)
a, b = sympy.symbols("a b", real=True)
xp, yp = sympy.symbols("x y", positive=True)
xn = Symbol("x", negative=True)
zc = Symbol("z")                                       # complex (no flags)
N = Symbol("N", positive=True)                         # positive, NOT declared integer
tt = Symbol("t", real=True)                            # a real (maybe non-integer) target
rr = Symbol("r", real=True)
A = MatrixSymbol("A", 2, 2)
B = MatrixSymbol("B", 2, 2)
A3 = MatrixSymbol("A", 3, 3)
An = MatrixSymbol("A", n, n)
Bn = MatrixSymbol("B", n, n)


def one(title, start, rhs, why="step under test", using=(), rules=(), relation="=", assumptions=(),
        scope=None, cited=False):
    """A one-step derivation; every stated assumption is named in ``using`` unless given."""
    assumptions = list(assumptions)
    if not using and assumptions:
        using = tuple(x_.label for x_ in assumptions)
    step = Step(rhs, why, using=tuple(using), rules=tuple(rules), relation=relation, cited=cited)
    kwargs = {}
    if scope is not None:
        kwargs["scope"] = scope
    return Derivation(title, start, [step], assumptions=assumptions, **kwargs)


def cond(label, condition, text=None):
    return Assumption(label, text or f"stated: {condition}", condition=condition)


def S1(f, var=k, lo=1, hi=n):
    return Sum(f, (var, lo, hi))


# ============================================================================ binder
def b01():
    # FALSE: n=2, s12=1, other s=0: lhs 1, rhs 0.
    return one("b01", Sum(Sum(s[i, j], (j, 1, n)), (i, 1, n)), n * Sum(s[i, i], (i, 1, n)))


def b02():
    # FALSE: n=2, s21=1, others 0: lower triangle 1, upper triangle 0.
    return one("b02", Sum(Sum(s[i, j], (j, 1, i)), (i, 1, n)), Sum(Sum(s[i, j], (j, i, n)), (i, 1, n)))


def b03():
    # TRUE: sum_i sum_j delta_ij = n.
    return one("b03", Sum(Sum(KroneckerDelta(i, j), (j, 1, n)), (i, 1, n)), n)


def b04():
    # TRUE: same, with the rule sum.delta (inner sum: j = i, and 1 <= i <= n since i is the outer index).
    return one("b04", Sum(Sum(KroneckerDelta(i, j), (j, 1, n)), (i, 1, n)), Sum(1, (i, 1, n)),
               rules=("sum.delta",))


def b05():
    # TRUE: swapping the order of a triangular double sum.
    return one("b05", Sum(Sum(s[i, j], (j, 1, i)), (i, 1, n)), Sum(Sum(s[i, j], (i, j, n)), (j, 1, n)))


def b06():
    # FALSE: inner k runs to the OUTER k.  n=2, s=(0,1): lhs 0 + (0+1) = 1, rhs 1*0 + 2*1 = 2.
    return one("b06", Sum(Sum(s[k], (k, 1, k)), (k, 1, n)), Sum(k * s[k], (k, 1, n)))


def b07():
    # TRUE: sum_{K=1}^n sum_{k=1}^K s_k = sum_m (n - m + 1) s_m.
    return one("b07", Sum(Sum(s[k], (k, 1, k)), (k, 1, n)), Sum((n - m + 1) * s[m], (m, 1, n)))


def b08():
    # FALSE: the outer k multiplies the inner sum (which rebinds k).  n=2: lhs (1+2)*3 = 9, rhs 1+4 = 5.
    return one("b08", Sum(k * Sum(k, (k, 1, n)), (k, 1, n)), Sum(k**2, (k, 1, n)))


def b09():
    # TRUE: sum_k k * (n(n+1)/2) = (n(n+1)/2)^2.
    return one("b09", Sum(k * Sum(k, (k, 1, n)), (k, 1, n)), (n * (n + 1) / 2) ** 2)


def b10():
    # FALSE: n=2, s=(1,-1): lhs (s1+s2)^2 = 0, rhs 2*(1+1) = 4.
    return one("b10", Sum(Sum(s[i] * s[j], (j, 1, n)), (i, 1, n)), n * Sum(s[i] ** 2, (i, 1, n)))


def b11():
    # TRUE: sum_i sum_j s_i s_j = (sum_i s_i)^2.
    return one("b11", Sum(Sum(s[i] * s[j], (j, 1, n)), (i, 1, n)), Sum(s[i], (i, 1, n)) ** 2)


def b12():
    # FALSE: the summand does not depend on j.  n=2, s_i=1: lhs 2, rhs 1.
    return one("b12", Sum(s[i], (j, 1, n)), s[i])


def b13():
    # FALSE: rename k -> j with j free in the summand.  n=2, j=1, s=(1,1), t=(1,0): lhs 2, rhs 1.
    return one("b13", Sum(s[k] * t[j], (k, 1, n)), Sum(s[j] * t[j], (j, 1, n)), rules=(rename_index(k, j),))


def b14():
    # FALSE: rename k -> i with i free inside a delta.  n=2, i=1, s=(0,1): lhs s_1 = 0, rhs 1.
    return one("b14", Sum(KroneckerDelta(i, k) * s[k], (k, 1, n)), Sum(s[i], (i, 1, n)),
               rules=(rename_index(k, i),))


def b15():
    # FALSE: rename k -> j where j is bound by the inner sum (capture).
    # n=2, s12=1 else 0: lhs s11+s12+s22 = 1, rhs s11+s11+s22 = 0.
    return one("b15", Sum(Sum(s[j, k], (j, 1, k)), (k, 1, n)), Sum(Sum(s[j, j], (j, 1, j)), (j, 1, n)),
               rules=(rename_index(k, j),))


def b16():
    # TRUE: rename to a fresh name.
    return one("b16", Sum(s[k] * t[j], (k, 1, n)), Sum(s[m] * t[j], (m, 1, n)), rules=(rename_index(k, m),))


def b17():
    # FALSE: shift by the bound index itself.  n=2, s0=0, s1=s2=1: lhs 2, rhs n*s0 = 0.
    return one("b17", Sum(s[k], (k, 1, n)), Sum(s[0], (k, k + 1, n + k)), rules=(shift_index(k),))


def b18():
    # TRUE: shift by a free integer j.
    return one("b18", Sum(s[k], (k, 1, n)), Sum(s[k - j], (k, 1 + j, n + j)), rules=(shift_index(j),))


def b19():
    # FALSE: shift with the wrong sign.  n=1: lhs s1, rhs s3.
    return one("b19", Sum(s[k], (k, 1, n)), Sum(s[k + 1], (k, 2, n + 1)), rules=(shift_index(1),))


def b20():
    # FALSE: split_blocks with block name g free in the summand.
    # h=2, w=1, g=1, s=(1,1), t=(1,0): lhs t1*(s1+s2) = 2, rhs s1 t1 + s2 t2 = 1.
    return one("b20", Sum(s[c] * t[g], (c, 1, h * w)),
               Sum(Sum(s[(g - 1) * w + r] * t[g], (r, 1, w)), (g, 1, h)), rules=(split_blocks(w, g, r),))


def b21():
    # FALSE: split_blocks with block and position both named r (inner r shadows outer).
    # h=2, w=1, s=(0,1): lhs s1+s2 = 1, rhs sum_{R=1}^2 s_{(r-1)+r at r=1} = 2 s1 = 0.
    return one("b21", Sum(s[c], (c, 1, h * w)), Sum(Sum(s[(r - 1) * w + r], (r, 1, w)), (r, 1, h)),
               rules=(split_blocks(w, r, r),))


def b22():
    # TRUE: split_blocks with fresh names.
    return one("b22", Sum(s[c], (c, 1, h * w)), Sum(Sum(s[(g - 1) * w + r], (r, 1, w)), (g, 1, h)),
               rules=(split_blocks(w, g, r),))


def b23():
    # FALSE: delta.substitute j -> i inside a sum that binds i (capture).
    # i=j=1, n=2, s21=1 else 0: lhs 1*(s11+s21) = 1, rhs s11+s22 = 0.
    return one("b23", KroneckerDelta(i, j) * Sum(s[i, j], (i, 1, n)), KroneckerDelta(i, j) * Sum(s[i, i], (i, 1, n)),
               rules=("delta.substitute",))


def b24():
    # TRUE: delta.substitute with no capture.
    return one("b24", KroneckerDelta(i, j) * Sum(s[k, j], (k, 1, n)), KroneckerDelta(i, j) * Sum(s[k, i], (k, 1, n)),
               rules=("delta.substitute",))


def b25():
    # FALSE: the delta's target n is outside the inner range 1..k for k < n.
    # n=2, s2=1: lhs = s2 (only k=2 contributes) = 1, rhs 2*s2 = 2.
    return one("b25", Sum(Sum(KroneckerDelta(j, n) * s[j], (j, 1, k)), (k, 1, n)), Sum(s[n], (k, 1, n)),
               rules=("sum.delta",))


def b26():
    # TRUE: inner target k lies in 1..n because k is the outer index.
    return one("b26", Sum(Sum(KroneckerDelta(j, k) * s[j], (j, 1, n)), (k, 1, n)), Sum(s[k], (k, 1, n)),
               rules=("sum.delta",))


def b27():
    # FALSE: n=2, s=[[1,2],[1,1]]: lhs 2, rhs (1*1)^2 = 1.
    return one("b27", Product(Product(s[i, j], (j, 1, n)), (i, 1, n)), Product(s[i, i], (i, 1, n)) ** n)


def b28():
    # FALSE: n=2, s21=2, others 1: lower product 2, upper product 1.
    return one("b28", Product(Product(s[i, j], (j, 1, i)), (i, 1, n)), Product(Product(s[i, j], (j, i, n)), (i, 1, n)))


def b29():
    # FALSE: n=2, all s=1: lhs (1+1)(1+1) = 4, rhs 1+1 = 2.
    return one("b29", Product(Sum(s[i, j], (j, 1, n)), (i, 1, n)), Sum(Product(s[i, j], (i, 1, n)), (j, 1, n)))


def b30():
    # FALSE: inner k runs to the outer k.  n=2, s=(1,2): lhs s1*(s1 s2) = 2, rhs s1 s2^2 = 4.
    return one("b30", Product(Product(s[k], (k, 1, k)), (k, 1, n)), Product(s[k] ** k, (k, 1, n)))


def b31():
    # TRUE: prod_{K=1}^n prod_{k=1}^K s_k = prod_m s_m^(n-m+1).
    return one("b31", Product(Product(s[k], (k, 1, k)), (k, 1, n)), Product(s[m] ** (n - m + 1), (m, 1, n)))


def b32():
    # FALSE: x is bound in the integral.  x=0: lhs 1/3, rhs 0.
    return one("b32", Integral(x**2, (x, 0, 1)), x / 3)


def b35():
    # FALSE: a bound index that PRINTS as k but is another symbol (no flags) than the free k.
    # n=2, free k=1, s=(1,2): lhs s_1*(s1+s2) = 3, rhs 1+4 = 5.
    kk = Symbol("k")
    return one("b35", Sum(s[kk] * s[k], (kk, 1, n)), Sum(s[k] ** 2, (k, 1, n)))


def b36():
    # FALSE: off by one in the swapped triangle.  n=1, s1=1: lhs 1, rhs 0.
    return one("b36", Sum(Sum(s[j], (j, 1, i)), (i, 1, n)), Sum((n - j) * s[j], (j, 1, n)))


def b37():
    # TRUE: sum_{i=1}^n sum_{j=1}^i s_j = sum_j (n - j + 1) s_j.
    return one("b37", Sum(Sum(s[j], (j, 1, i)), (i, 1, n)), Sum((n - j + 1) * s[j], (j, 1, n)))


def b39():
    # FALSE: naive swap turns the lower triangle into the upper one.  n=2, s21=1: lhs 1, rhs 0.
    return one("b39", Sum(Sum(s[i, j], (j, 1, i)), (i, 1, n)), Sum(Sum(s[i, j], (i, 1, j)), (j, 1, n)))


def b40():
    # FALSE: linearity then a sum over j of the FREE k.  n=1, k=2: lhs s1+1, rhs s1+2.
    return one("b40", Sum(s[k] + k, (k, 1, n)), Sum(s[k], (k, 1, n)) + Sum(k, (j, 1, n)),
               rules=("sum.linearity",))


def b41():
    # FALSE: renaming j -> k would capture the free k.  n=1, k=2: lhs 2, rhs 1.
    return one("b41", Sum(k, (j, 1, n)), Sum(k, (k, 1, n)))


def b42():
    # FALSE: n=2, free k=1, s=(1,0): lhs n*s_k = 2, rhs 1.
    return one("b42", Sum(s[k], (j, 1, n)), Sum(s[k], (k, 1, n)))


# ============================================================================ range
def r01():
    # FALSE: k declared positive but the range starts at 0.  n=1: (0-1)+(1-1) = -1 < 0.
    return one("r01", Sum(k - 1, (k, 0, n)), Integer(0), relation=">=")


def r02():
    # FALSE: the k=0 term is Max(0,1)=1 vs 0, for every n.
    return one("r02", Sum(Max(k, 1), (k, 0, n)), Sum(k, (k, 0, n)))


def r03():
    # FALSE: k=0 term |0-1| = 1 vs -1.  n=1: lhs 1, rhs -1.
    return one("r03", Sum(Abs(k - 1), (k, 0, n)), Sum(k - 1, (k, 0, n)))


def r04():
    # FALSE: sign(0) = 0, so the sum is n, not n+1.
    return one("r04", Sum(sign(k), (k, 0, n)), n + 1)


def r05():
    # FALSE: the k=0 term s_0/0 is undefined (k declared positive, range from 0).
    return one("r05", Sum(s[k] / k, (k, 0, n)), Sum(s[k] / k, (k, 1, n)))


def r06():
    # FALSE: the fact k >= 2 is about the FREE k.  n=1 (free k=2): lhs Max(1,2) = 2, rhs 1.
    return one("r06", Sum(Max(k, 2), (k, 1, n)), Sum(k, (k, 1, n)), assumptions=[cond("F1", k >= 2)])


def r07():
    # FALSE: s_k > 0 only for the free k.  n=2, free k=1, s=(1,-5): sum = -4.
    return one("r07", Sum(s[k], (k, 1, n)), Integer(0), relation=">", rules=("sum.positive",),
               assumptions=[cond("F1", s[k] > 0)])


def r08():
    # FALSE: s_k >= 0 only for the free k.  n=2, free k=1, s=(1,-1): sum 0 < s_1 = 1.
    return one("r08", Sum(s[k], (k, 1, n)), s[1], relation=">=", rules=("sum.ge_term",),
               assumptions=[cond("F1", s[k] >= 0)])


def r09():
    # FALSE: N positive but not integer.  N = 5/2: sum_{k=1}^{5/2} 1 = 2 (k = 1, 2) != 5/2.
    return one("r09", Sum(1, (k, 1, N)), N)


def r10():
    # FALSE: sum_{k=1}^{5/2} 1 has the terms k=1,2: it is 2.
    return one("r10", Sum(1, (k, 1, Rational(5, 2))), Rational(5, 2))


def r11():
    # FALSE: sum_{k=1}^{5/2} k = 1 + 2 = 3, not 35/8 (the polynomial formula at 5/2).
    return one("r11", Sum(k, (k, 1, Rational(5, 2))), Rational(35, 8))


def r12():
    # FALSE: N = 5/2: lhs 3, rhs 35/8.
    return one("r12", Sum(k, (k, 1, N)), N * (N + 1) / 2)


def r13():
    # FALSE: with N = 5/2 stated, sum_{k=1}^{N} 1 = 2 != 5/2.
    half = Assumption("N", "$N = 5/2$", r"N = \tfrac{5}{2}", rewrite=lambda e: e.xreplace({N: Rational(5, 2)}))
    return one("r13", Sum(1, (k, 1, N)), Rational(5, 2), assumptions=[half])


def r14():
    # FALSE: a half-integer range: integer k in [1/2, 5/2] gives 2 terms, the "a, a+1, ..." reading 3: never 5/2.
    return one("r14", Sum(1, (k, Rational(1, 2), Rational(5, 2))), Rational(5, 2))


def r15():
    # FALSE: split_last with a non-integer upper limit.  N = 3/2: lhs s_1, rhs (empty sum) + s_{3/2}.
    return one("r15", Sum(s[k], (k, 1, N)), Sum(s[k], (k, 1, N - 1)) + s[N], rules=("sum.split_last",))


def r16():
    # FALSE: positivity of 2k-1 holds for k >= 1 only; the range starts at 0.  n=1: -1 + 1 = 0, not > 0.
    return one("r16", Sum(2 * k - 1, (k, 0, n)), Integer(0), relation=">", rules=("sum.positive",))


def r17():
    # FALSE: 2k-1 >= 0 fails at k=0.  n=1: sum 0 < term k=n: 1.
    return one("r17", Sum(2 * k - 1, (k, 0, n)), 2 * n - 1, relation=">=", rules=("sum.ge_term",))


def r18():
    # FALSE: a non-integer target t of the delta.  n=2, t=3/2 (1 <= t <= n): lhs 0, rhs 3/2.
    return one("r18", Sum(KroneckerDelta(k, tt) * k, (k, 1, n)), tt, rules=("sum.delta",),
               assumptions=[cond("F1", And(tt >= 1, tt <= n))])


def r19():
    # FALSE: the target n+1 is outside 1..n: lhs 0, rhs n+1.
    return one("r19", Sum(KroneckerDelta(k, n + 1) * k, (k, 1, n)), n + 1, rules=("sum.delta",))


def r20():
    # FALSE: q may be 0 (declared nonnegative, q <= n stated).  q=0: lhs 0, rhs 1.
    return one("r20", Sum(KroneckerDelta(k, q) * (k + 1), (k, 1, n)), q + 1, rules=("sum.delta",),
               assumptions=[cond("F1", q <= n)])


def r21():
    # FALSE: the "term" k = n+1 is outside the range.  n=1: 1 >= 4 is false.
    return one("r21", Sum(k**2, (k, 1, n)), (n + 1) ** 2, relation=">=", rules=("sum.ge_term",))


def r22():
    # FALSE: 1 = f(0) with f(k) = 2^-k, but 0 is outside 1..n: sum = 1 - 2^-n < 1.
    return one("r22", Sum(Rational(1, 2) ** k, (k, 1, n)), Integer(1), relation=">=", rules=("sum.ge_term",))


def r23():
    # FALSE: s_{3/2} is not a term.  n=2, s1=s2=0, s_{3/2}=1: 0 >= 1 false.
    return one("r23", Sum(s[k] ** 2, (k, 1, n)), s[Rational(3, 2)] ** 2, relation=">=", rules=("sum.ge_term",))


def r24():
    # FALSE: the empty product is 1.
    return one("r24", Product(s[k], (k, 1, 0)), Integer(0))


def r25():
    # FALSE: k declared positive, but the product from 0 has the factor 0: lhs 0, rhs n! >= 1.
    return one("r25", Product(k, (k, 0, n)), sympy.factorial(n))


def r26():
    # TRUE: telescoping product.
    return one("r26", Product(k / (k + 1), (k, 1, n)), 1 / (n + 1))


def r27():
    # FALSE: n=1: sum_{k=1}^{-1} 1 is empty (0) by the README's convention, rhs -1.
    return one("r27", Sum(1, (k, 1, n - 2)), n - 2)


def r28():
    # FALSE: outer i declared positive starts at 0; inner range 1..i-1 reversed at i=0.
    # n=1: lhs 0 (empty inner sums), rhs (0-1) + (1-1) = -1.
    return one("r28", Sum(Sum(1, (j, 1, i - 1)), (i, 0, n)), Sum(i - 1, (i, 0, n)))


def r29():
    # TRUE: sum_{i=0}^n sum_{j=1}^i 1 = sum_{i=0}^n i (the i=0 inner sum is empty).
    return one("r29", Sum(Sum(1, (j, 1, i)), (i, 0, n)), Sum(i, (i, 0, n)))


def r30():
    # FALSE: the fact k <= n is about the free k.  n=1: Min(1,1)+Min(2,1) = 2, rhs 1+2 = 3.
    return one("r30", Sum(Min(k, n), (k, 1, n + 1)), Sum(k, (k, 1, n + 1)), assumptions=[cond("F1", k <= n)])


def r31():
    # TRUE
    return one("r31", Sum(1, (k, 1, n)), n)


def r32():
    # TRUE: sum_{k=0}^n (k-1) = (n+1)(n-2)/2 >= -1 for every n >= 1.
    return one("r32", Sum(k - 1, (k, 0, n)), Integer(-1), relation=">=")


def r35():
    # FALSE: s_k > 0 for the free k only.  n=2, free k=1, s=(1,-1): lhs 2, rhs 0.
    return one("r35", Sum(Abs(s[k]), (k, 1, n)), Sum(s[k], (k, 1, n)), assumptions=[cond("F1", s[k] > 0)])


def r36():
    # FALSE: k declared positive, range from 0: the k=0 term is sqrt(-1) = i, so the sum is not real (not >= 0).
    return one("r36", Sum(sqrt(k - 1), (k, 0, n)), Integer(0), relation=">=")


def r37():
    # FALSE: the k=0 term log(0^2) is undefined (k declared positive, range from 0).
    return one("r37", Sum(log(k**2), (k, 0, n)), 2 * Sum(log(k), (k, 0, n)))


def r38():
    # FALSE: k=0 term Min(0, 1) = 0, so the sum is n, not n+1.
    return one("r38", Sum(Min(k, 1), (k, 0, n)), n + 1)


def r39():
    # FALSE: sign(0) = 0 is a factor: the product is 0, not 1.
    return one("r39", Product(sign(k), (k, 0, n)), Integer(1))


def r40():
    # FALSE: q declared nonnegative, range from -1: q=-1 term |-1| = 1 vs -1.  n=0... n=1: lhs 2, rhs 0.
    return one("r40", Sum(Abs(q), (q, -1, n)), Sum(q, (q, -1, n)))


def r41():
    # FALSE: i declared positive, outer range from 0; i=0 row gives Max(0,1)=1 vs 0.  n=1, s1=1: lhs 2, rhs 1.
    return one("r41", Sum(Sum(Max(i, 1) * s[j], (j, 1, n)), (i, 0, n)), Sum(Sum(i * s[j], (j, 1, n)), (i, 0, n)))


def r42():
    # FALSE: k declared positive, product from 0: the k=0 factor |0 - 1| + 1 = 2 vs 0.  n=1: lhs 2*1 = 2, rhs 0*1 = 0.
    return one("r42", Product(Abs(k - 1) + 1, (k, 0, n)), Product(k, (k, 0, n)))


def r43():
    # FALSE: a bound index declared positive with an integer lower limit -n; k = -n..n includes k = 0.
    # Max(k, 1) = k is false at k = 0 and every k <= 0: n=1: lhs 1+1+1 = 3, rhs -1+0+1 = 0.
    return one("r43", Sum(Max(k, 1), (k, -n, n)), Sum(k, (k, -n, n)))


# ============================================================================ domain
def d01():
    # FALSE: x=0: cot(0) undefined, rhs 1.
    return one("d01", cot(x) * sin(x), cos(x))


def d02():
    # FALSE: x=pi/2: sec undefined.
    return one("d02", sec(x) * cos(x), Integer(1))


def d03():
    # FALSE: x=0: csc undefined.
    return one("d03", csc(x) * sin(x), Integer(1))


def d04():
    # FALSE: x=0: coth undefined.
    return one("d04", coth(x) * tanh(x), Integer(1))


def d05():
    # FALSE: x=0: csch undefined.
    return one("d05", csch(x) * sinh(x), Integer(1))


def d06():
    # TRUE: sech x cosh x = 1 (cosh x >= 1).
    return one("d06", sech(x) * cosh(x), Integer(1))


def d07():
    # FALSE: SymPy's acot has range (-pi/2, pi/2]: x=-1: acot(-1) = -pi/4, rhs 3pi/4.
    return one("d07", acot(x), pi / 2 - atan(x))


def d08():
    # FALSE: x=-2: asec(-2) = 2pi/3, atan(sqrt 3) = pi/3.
    return one("d08", asec(x), atan(sqrt(x**2 - 1)))


def d09():
    # FALSE: x=y=-1: log 1 = 0, rhs 2 i pi.
    return one("d09", log(x * y), log(x) + log(y))


def d10():
    # FALSE: x=-1: log 1 = 0, rhs 2 i pi.
    return one("d10", log(x**2), 2 * log(x))


def d11():
    # FALSE: x=y=-1: sqrt(1) = 1, rhs i*i = -1.
    return one("d11", sqrt(x * y), sqrt(x) * sqrt(y))


def d12():
    # FALSE: x=-1: lhs 1, rhs -1.
    return one("d12", sqrt(x**2), x)


def d13():
    # FALSE: x=-1, a=2, b=1/2: ((-1)^2)^(1/2) = 1, (-1)^1 = -1.
    return one("d13", (x**a) ** b, x ** (a * b))


def d14():
    # FALSE: x=0, y=1: 0/0 undefined.
    return one("d14", Frac(x**y, x**y), Integer(1))


def d15():
    # FALSE: x=y=-1, a=1/2: 1 vs i*i = -1.
    return one("d15", (x * y) ** a, x**a * y**a)


def d16():
    # FALSE: A singular (A = 0), e = 1: A^{-1} does not exist.
    return one("d16", A**e_int * A ** (-e_int), Identity(2))


def d17():
    # TRUE: with A invertible stated, A^e A^{-e} = I for every integer e.
    return one("d17", A**e_int * A ** (-e_int), Identity(2),
               assumptions=[Assumption("INV", "$A$ is invertible", condition=Q.invertible(A))])


def d18():
    # FALSE: A singular: A A^{-1} undefined.
    return one("d18", A * A.I, Identity(2))


def d19():
    # FALSE: x=y=2 (xy != 1): atan 2 + atan 2 = 2.214..., atan(-4/3) = -0.927...
    return one("d19", atan(x) + atan(y), atan((x + y) / (1 - x * y)),
               assumptions=[cond("F1", Ne(x * y, 1))])


def d20():
    # FALSE: x = pi: asin(0) = 0.
    return one("d20", asin(sin(x)), x)


def d21():
    # FALSE: x = pi: atan(0) = 0.
    return one("d21", atan(tan(x)), x)


def d22():
    # FALSE: x = 1/2: floor(1) = 1, 2 floor(1/2) = 0.
    return one("d22", floor(2 * x), 2 * floor(x))


def d23():
    # FALSE: x = 0: ceiling 0 = 0, floor 0 + 1 = 1.
    return one("d23", ceiling(x), floor(x) + 1)


def d24():
    # FALSE: x=1, y=-1: 0 vs 2.
    return one("d24", Abs(x + y), Abs(x) + Abs(y))


def d25():
    # FALSE: x=0: sign(0)^2 = 0.
    return one("d25", sign(x) ** 2, Integer(1))


def d26():
    # TRUE: sign(x)|x| = x (also at 0).
    return one("d26", sign(x) * Abs(x), x)


def d27():
    # FALSE: x=-1: lhs 1, rhs -1.
    return one("d27", Piecewise((x, x > 0), (-x, True)), x)


def d28():
    # TRUE
    return one("d28", Piecewise((x, x > 0), (-x, True)), Abs(x))


def d29():
    # FALSE: x=0, y=1: 1 vs -1.
    return one("d29", Max(x, y) - Min(x, y), x - y)


def d30():
    # FALSE: z = 2 i pi: log(exp(2 i pi)) = log 1 = 0.
    return one("d30", log(exp(zc)), zc)


def d31():
    # FALSE: x = -1: principal cube root of -1 is 1/2 + i sqrt(3)/2.
    return one("d31", (x**3) ** Rational(1, 3), x)


def d32():
    # FALSE: x = -1: acos(cos(-1)) = 1.
    return one("d32", acos(cos(x)), x)


def d33():
    # FALSE: x = 0: 0/0 undefined.
    return one("d33", Frac(x, x), Integer(1))


def d35():
    # FALSE: x = 0: log 0 undefined.
    return one("d35", exp(log(x)), x)


def d37():
    # TRUE
    return one("d37", log(xp * yp), log(xp) + log(yp))


def d38():
    # TRUE: x > 0, a, b real.
    return one("d38", (xp**a) ** b, xp ** (a * b))


def d39():
    # FALSE: x = pi/2: tan(pi) = 0 but tan(pi/2) is undefined on the right.
    return one("d39", tan(2 * x), 2 * tan(x) / (1 - tan(x) ** 2))


def d40():
    # FALSE: x = pi: cos(pi) = -1, tan(pi/2) undefined on the right.
    return one("d40", cos(x), (1 - tan(x / 2) ** 2) / (1 + tan(x / 2) ** 2))


def d41():
    # FALSE: x=1, y=-1: 1/i = -i, sqrt(-1) = i.
    return one("d41", sqrt(x) / sqrt(y), sqrt(x / y))


def d43():
    # FALSE: x=-1, y=2: log 1 = 0, 2 log(-1) = 2 i pi.
    return one("d43", log(x**y), y * log(x))


def d45():
    # FALSE: x=y=1/2: floor 1 = 1, 0 + 0 = 0.
    return one("d45", floor(x + y), floor(x) + floor(y))


def d46():
    # TRUE: sqrt(x^2) = |x| for real x.
    return one("d46", sqrt(x**2), Abs(x))


def d47():
    # FALSE: exp(log x) written unevaluated; x = 0: log 0 undefined.
    return one("d47", exp(log(x), evaluate=False), x)


def d48():
    # FALSE: A A^{-1} written unevaluated; A singular (A = 0): no inverse.
    return one("d48", sympy.MatMul(A, sympy.Inverse(A), evaluate=False), Identity(2))


def d49():
    # FALSE: A^e A^{-e} written unevaluated; A = 0, e = 1: no inverse.
    return one("d49", sympy.MatMul(sympy.MatPow(A, e_int), sympy.MatPow(A, -e_int), evaluate=False), Identity(2))


def d50():
    # TRUE twin: A A^{-1} = I with A invertible stated.
    return one("d50", sympy.MatMul(A, sympy.Inverse(A), evaluate=False), Identity(2),
               assumptions=[Assumption("INV", "$A$ is invertible", condition=Q.invertible(A))])


def d51():
    # FALSE: |x| = x needs x >= 0; x = -1.  (SymPy would not evaluate it; the checker must refute or refuse.)
    return one("d51", Abs(x - 1), x - 1)


def d52():
    # FALSE: Max(x, 1/x) = x for real x != 0 stated: x = 1/2: Max = 2.
    return one("d52", Max(x, 1 / x), x, assumptions=[cond("H1", Ne(x, 0))])


# ============================================================================ assumptions
def a01():
    # FALSE premises: no real x has x > 1 and x < 1/2; the step is false at x=0 (1 + 0 != 0).
    return one("a01", Max(x, 1) + Min(x, Rational(1, 2)), 2 * x,
               assumptions=[cond("H1", x > 1), cond("H2", x < Rational(1, 2))])


def a02():
    # FALSE premises in one And; step false at x=0.
    return one("a02", Max(x, 1) + Min(x, Rational(1, 2)), 2 * x,
               assumptions=[cond("H1", And(x > 1, x < Rational(1, 2)))])


def a03():
    # FALSE premises, pairwise consistent but jointly not (x > y > z > x); step false at (1,2,3): 8 vs 6.
    return one("a03", Max(x, y) + Max(y, z) + Max(z, x), x + y + z,
               assumptions=[cond("H1", x > y), cond("H2", y > z), cond("H3", z > x)])


def a04():
    # FALSE: x declared positive, x < 0 stated: contradiction; the step |x| = -x is false for every positive x.
    return one("a04", Abs(xp), -xp, assumptions=[cond("H1", xp < 0)])


def a05():
    # FALSE: n positive integer but n < 1/2 stated; step false at n=1 (Max(2,1) = 2).
    return one("a05", Max(2 * n, 1), Integer(1), assumptions=[cond("H1", n < Rational(1, 2))])


def a06():
    # FALSE: p declared positive, p_1 < 0 stated; |p_1| = -p_1 false for every positive p_1.
    return one("a06", Abs(p[1]), -p[1], assumptions=[cond("H1", p[1] < 0)])


def a07():
    # FALSE: a sum of positive p_k stated negative; the step is false for every admissible p.
    total = Sum(p[k], (k, 1, n))
    return one("a07", Abs(total), -total, assumptions=[cond("H1", total < 0)])


def a08():
    # FALSE premises n >= 2 and n <= 1; step false at n=1: 2 + 1 = 3 vs 2.
    return one("a08", Max(n, 2) + Min(n, 1), 2 * n, assumptions=[cond("H1", n >= 2), cond("H2", n <= 1)])


def _sigma(expr):
    return Lambda(k, expr)


def a09():
    # FALSE: k -> 2k is not a bijection of 1..n.  n=1: s_1 vs s_2.
    sig = _sigma(2 * k)
    return one("a09", Sum(s[k], (k, 1, n)), Sum(s[2 * k], (k, 1, n)), rules=(reindex_by(sig),),
               assumptions=[Assumption("BJ", "k -> 2k is a bijection of 1..n", condition=Bijection(sig, 1, n))])


def a10():
    # FALSE: k -> k+1 maps 1..n onto 2..n+1.  n=1: s_1 vs s_2.
    sig = _sigma(k + 1)
    return one("a10", Sum(s[k], (k, 1, n)), Sum(s[k + 1], (k, 1, n)), rules=(reindex_by(sig),),
               assumptions=[Assumption("BJ", "k -> k+1 is a bijection of 1..n", condition=Bijection(sig, 1, n))])


def a11():
    # FALSE: constant map.  n=2, s=(0,1): lhs 1, rhs 0.
    return one("a11", Sum(s[k], (k, 1, n)), Sum(s[1], (k, 1, n)), rules=(reindex_by(Lambda(k, 1)),),
               assumptions=[Assumption("BJ", "k -> 1 is a bijection of 1..n",
                                       condition=Bijection(Lambda(k, 1), 1, n))])


def a12():
    # TRUE: k -> n+1-k is a bijection of 1..n.
    sig = _sigma(n + 1 - k)
    return one("a12", Sum(s[k], (k, 1, n)), Sum(s[n + 1 - k], (k, 1, n)), rules=(reindex_by(sig),),
               assumptions=[Assumption("BJ", "reversal", condition=Bijection(sig, 1, n))])


def a13():
    # TRUE: an abstract permutation sigma of 1..n.
    sigma = Function("sigma")
    return one("a13", Sum(s[k], (k, 1, n)), Sum(s[sigma(k)], (k, 1, n)), rules=(reindex_by(sigma),),
               assumptions=[Assumption("BJ", "sigma permutes 1..n", condition=Bijection(sigma, 1, n))])


def a14():
    # FALSE: the rewrite "|x| = x since x > 0" drops EVERY absolute value.  x=1, y=-1: |y| = 1 != -1.
    hyp = Assumption("H1", "$x > 0$, so $|x| = x$", r"x > 0", condition=x > 0,
                     rewrite=lambda e: e.replace(Abs, lambda arg: arg))
    return one("a14", Abs(y), y, assumptions=[hyp])


def a15():
    # FALSE: x declared negative but the rewrite says x = 1: no admissible x; x + 1 = 2 is false for every negative x.
    hyp = Assumption("H1", "$x = 1$", "x = 1", rewrite=lambda e: e.xreplace({xn: Integer(1)}))
    return one("a15", xn + 1, Integer(2), assumptions=[hyp])


def a16():
    # FALSE: the rewrite x = 1 and the condition x > 2 of the same assumption contradict; x^2 = 1 false for x > 2.
    hyp = Assumption("H1", "$x = 1$ and $x > 2$", "x = 1", condition=x > 2,
                     rewrite=lambda e: e.xreplace({x: Integer(1)}))
    return one("a16", x**2, Integer(1), assumptions=[hyp])


def a18():
    # FALSE: the reversal is a bijection of 1..n, used on 0..n.  n=1: s0 + s1 vs s2 + s1.
    sig = _sigma(n + 1 - k)
    return one("a18", Sum(s[k], (k, 0, n)), Sum(s[n + 1 - k], (k, 0, n)), rules=(reindex_by(sig),),
               assumptions=[Assumption("BJ", "reversal of 1..n", condition=Bijection(sig, 1, n))])


def a19():
    # TRUE: consistent premises 1 < x < 3.
    return one("a19", Max(x, 1) + Min(x, 3), 2 * x, assumptions=[cond("H1", x > 1), cond("H2", x < 3)])


def a20():
    # FALSE premises: x real with x^2 < 0; step false at x = 1 (Min(1, 0) = 0 != 1).
    return one("a20", Min(x**2, 0), x**2, assumptions=[cond("H1", x**2 < 0)])


def a21():
    # FALSE premises: x = 1 and x != 1; step false at x = 0 (1 + 1 vs 1).
    return one("a21", Max(x, 1) + Frac(x - 1, x - 1), x + 1,
               assumptions=[cond("H1", Eq(x, 1)), cond("H2", Ne(x, 1))])


def a22():
    # FALSE premise x > x + 1; step false at x = 0: Max(0, 1) = 1 != 0.
    return one("a22", Max(x, x + 1), x, assumptions=[cond("H1", x > x + 1)])


def a23():
    # FALSE: k -> k^2 is not a bijection of 1..n.  n=2: s1 + s2 vs s1 + s4.
    sig = _sigma(k**2)
    return one("a23", Sum(s[k], (k, 1, n)), Sum(s[k**2], (k, 1, n)), rules=(reindex_by(sig),),
               assumptions=[Assumption("BJ", "k -> k^2 is a bijection of 1..n", condition=Bijection(sig, 1, n))])


def a24():
    # FALSE: the condition is about ANOTHER symbol printed "y" (no flags); the step's real y is unconstrained.
    # y = 0: Max(0, 1) = 1 != 0.
    y_other = Symbol("y")
    return one("a24", Max(y, 1), y, assumptions=[cond("H1", y_other > 1)])


def a25():
    # FALSE: condition about the Idx-free free k used for a bound k via Sum of Max with an Eq fact.
    # k = 3 stated (free k); n = 1: Max(1, 3) = 3 vs 1.
    return one("a25", Sum(Max(k, 3), (k, 1, n)), Sum(k, (k, 1, n)), assumptions=[cond("H1", Eq(k, 3))])


def a26():
    # FALSE premises x + y > 2, x < 1, y < 1 (pairwise consistent, jointly not); step false at x = y = 0: 4 vs 2.
    return one("a26", Max(x + y, 2) + Max(x, 1) + Max(y, 1), x + y + 2,
               assumptions=[cond("H1", x + y > 2), cond("H2", x < 1), cond("H3", y < 1)])


def a27():
    # FALSE premise n^2 < 1 for a positive integer n; step false at n = 2 (Max(4, 1) = 4).
    return one("a27", Max(n**2, 1), Integer(1), assumptions=[cond("H1", n**2 < 1)])


def a28():
    # FALSE premises x >= 1, x <= 1, x != 1 (jointly inconsistent); step false at x = 2: (2 - 1)/1 = 1 != 0.
    return one("a28", Frac(Max(x, 1) - Min(x, 1), x - 1), Integer(0),
               assumptions=[cond("H1", x >= 1), cond("H2", x <= 1), cond("H3", Ne(x, 1))])


def a29():
    # FALSE premises s1 > s2 > s3 > s1 (cyclic); step false at s = (1, 2, 3): 2 + 3 + 3 = 8 vs 6.
    return one("a29", Max(s[1], s[2]) + Max(s[2], s[3]) + Max(s[3], s[1]), s[1] + s[2] + s[3],
               assumptions=[cond("H1", s[1] > s[2]), cond("H2", s[2] > s[3]), cond("H3", s[3] > s[1])])


def a30():
    # FALSE: x declared positive, rewrite x = -1: no admissible x; x + 1 = 0 is false for every positive x.
    hyp = Assumption("H1", "$x = -1$", "x = -1", rewrite=lambda e: e.xreplace({xp: Integer(-1)}))
    return one("a30", xp + 1, Integer(0), assumptions=[hyp])


def a31():
    # FALSE: Z defined as sum_k e^{s_k} (> 0) and stated Z < 0: contradiction; Max(Z, 0) = 0 is false for Z > 0.
    Zr = Symbol("Z", real=True)
    hyp = Assumption("D1", "$Z = \\sum_k e^{s_k}$ and $Z < 0$", condition=Zr < 0,
                     rewrite=lambda e: e.xreplace({Zr: Sum(exp(s[k]), (k, 1, n))}))
    return one("a31", Max(Zr, 0), Integer(0), assumptions=[hyp])


def a32():
    # FALSE premises x^2 < 1 and x > 1 (jointly inconsistent); step false at x = 0: 1 + 0 vs 0.
    return one("a32", Max(x, 1) + Min(x**2, 1), x + x**2,
               assumptions=[cond("H1", x**2 < 1), cond("H2", x > 1)])


# ============================================================================ crash
BIG = 10**315652 + 7          # 315,653 digits


def _nested_sin(arg, depth):
    e_ = arg
    for _ in range(depth):
        e_ = sin(e_)
    return e_


def c01():
    # TRUE
    return one("c01", Sum(Sum(s[i, j] ** 2, (j, 1, n)), (i, 1, n)), Integer(0), relation=">=")


def c02():
    # TRUE
    return one("c02", Sum(Sum(exp(s[i, j]), (j, 1, n)), (i, 1, n)), Integer(0), relation=">")


def c03():
    # FALSE: n=1, s11=-1: -1 < 0.
    return one("c03", Sum(Sum(s[i, j], (j, 1, n)), (i, 1, n)), Integer(0), relation=">=")


def c04():
    # FALSE: residual BIG != 0 (a 315,653-digit integer).
    return one("c04", x + Integer(BIG), x)


def c05():
    # TRUE
    return one("c05", x + Integer(BIG), Integer(BIG) + x)


def c06():
    # FALSE: BIG != BIG + 1.
    return one("c06", Integer(BIG), Integer(BIG) + 1)


def c07():
    # FALSE: nested sin 1200 deep of x vs of x+1 differ (x = 0: sin^1200(0) = 0, sin^1200(1) > 0).
    return one("c07", _nested_sin(x, 1200), _nested_sin(x + 1, 1200))


def c08():
    # TRUE: the same deep expression plus x, reordered.
    deep = _nested_sin(x, 1200)
    return one("c08", deep + x, x + deep)


def c09():
    # TRUE: sum_{k=1}^{10^100} k = 10^100 (10^100 + 1)/2.
    big = Integer(10) ** 100
    return one("c09", Sum(k, (k, 1, big)), big * (big + 1) / 2)


def c10():
    # FALSE: H_{10^12} = 28.2082... != 28.
    return one("c10", Sum(1 / k, (k, 1, Integer(10) ** 12)), Integer(28))


def c11():
    # FALSE: s2 = -1, others 0: 1e9-term sum -1 < s1 = 0.
    return one("c11", Sum(s[k], (k, 1, Integer(10) ** 9)), s[1], relation=">=")


def c12():
    # FALSE: a string right side "x + 2" (x + 1 != x + 2).
    return one("c12", x + 1, "x + 2")


def c13():
    # FALSE: an arbitrary Python object as the right side.
    return one("c13", x + 1, object())


def c14():
    # FALSE: a relation is not an expression equal to x.
    return one("c14", x, Eq(x, 1))


def c15():
    # FALSE: x is not the interval [0, 1].
    return one("c15", x, Interval(0, 1))


def c16():
    # FALSE: an unknown relation "!=" used on equal sides (x + 1 != x + 1 is false).
    return one("c16", x + 1, x + 1, relation="!=")


def c17():
    # FALSE: names an assumption that is not stated; x != x + 1.
    return one("c17", x, x + 1, using=("NOPE",))


def c19():
    # FALSE: no start expression.
    return one("c19", None, x)


def c20():
    # TRUE: sum_{k>=1} 2^-k = 1 (infinite range).
    return one("c20", Sum(Rational(1, 2) ** k, (k, 1, oo)), Integer(1))


def c21():
    # FALSE: x = 1: 2^3000 vs 2.
    return one("c21", (x + 1) ** 3000, x**3000 + 1)


def c22():
    # FALSE: Python ints 1 = 2.
    return one("c22", 1, 2)


def c23():
    # FALSE: a Poly object: x^2 + 1 != x^2 + 2.
    return one("c23", Poly(x**2 + 1, x), x**2 + 2)


def c24():
    # FALSE: a 1x2 row is not a 2x1 column.
    return one("c24", ImmutableMatrix([[1, 2]]), ImmutableMatrix([[1], [2]]))


def c25():
    # FALSE: nan is not x.
    return one("c25", x, nan)


def c27():
    # FALSE: a 40-fold nested sum of 1 over 1..n is n^40, not n^40 + 1.
    idx = sympy.symbols("k1:41", integer=True, positive=True)
    e_ = Integer(1)
    for v in idx:
        e_ = Sum(e_, (v, 1, n))
    return one("c27", e_, n**40 + 1)


def c29():
    # FALSE: f = exp(2x): f' = 2 exp(2x) != exp(2x).
    f = Function("f")
    return one("c29", sympy.Derivative(f(x), x), f(x))


def c30():
    # FALSE: an antiderivative of x is x^2/2 (+C), not x^2 (their difference x^2/2 is not constant).
    return one("c30", Integral(x, x), x**2)


def c31():
    # FALSE: a MatrixSymbol of symbolic shape against a number.
    return one("c31", sympy.Trace(An), Integer(0))


def c32():
    # TRUE: a sum over a sympy Idx equals the same sum over a symbol.
    kI = Idx("k", (1, n))
    return one("c32", Sum(s[kI], (kI, 1, n)), Sum(s[k], (k, 1, n)))


def c33():
    # TRUE: a continued fraction 300 levels deep equals F(302)/F(301) (Fibonacci).
    e_ = Integer(1)
    for _ in range(300):
        e_ = Frac(Integer(1), 1 + e_)
    return one("c33", e_, sympy.fibonacci(301) / sympy.fibonacci(302))


def c34():
    # FALSE: exp(exp(exp(10))) is not 0 (refuting needs care, not a huge evaluation).
    return one("c34", exp(exp(exp(Integer(10)))), Integer(0))


def c35():
    # FALSE: sum_{k=1}^{10^6} k^k is not 0.
    return one("c35", Sum(k**k, (k, 1, Integer(10) ** 6)), Integer(0))


def c36():
    # TRUE: x^(10^100) * x = x^(10^100 + 1).
    big = Integer(10) ** 100
    return one("c36", x**big * x, x ** (big + 1))


def c37():
    # TRUE: entries of a product of symbolic-shape matrices.
    return one("c37", Sum(An[i, k] * Bn[k, j], (k, 0, n - 1)), (An * Bn)[i, j])


def c38():
    # FALSE: nested sin 400 deep (smaller than c07): sin^400(x) != sin^400(x + 1) at x = 0.
    return one("c38", _nested_sin(x, 400), _nested_sin(x + 1, 400))


def c39():
    # FALSE: Rational(1, BIG) is not 0.
    return one("c39", Rational(1, BIG), Integer(0))


def c40():
    # FALSE: a 400-term sum of distinct symbols against a 399-term one.
    xs = sympy.symbols("v0:400", real=True)
    return one("c40", sympy.Add(*xs), sympy.Add(*xs[:-1]))


# ============================================================================ completeness (TRUE)
def t01():
    # TRUE: r != 1 stated.
    return one("t01", Sum(rr**q, (q, 0, n)), (rr ** (n + 1) - 1) / (rr - 1),
               assumptions=[cond("R1", Ne(rr, 1))])


def t02():
    return one("t02", Sum(1 / (k * (k + 1)), (k, 1, n)), n / (n + 1))


def t03():
    return one("t03", Sum(k, (k, 1, 100)), Integer(5050))


def t04():
    return one("t04", A3.I.T, A3.T.I, assumptions=[Assumption("INV", "$A$ invertible", condition=Q.invertible(A3))])


def t05():
    return one("t05", sympy.Trace(An.T * Bn), sympy.Trace(Bn.T * An))


def t06():
    return one("t06", sympy.Trace(A.T * B), sympy.Trace(B.T * A), rules=("matrix.entries",))


def t07():
    return one("t07", exp(x), 1 + x, relation=">=")


def t08():
    return one("t08", exp(s[u]) / Sum(exp(s[k]), (k, 1, n)), Integer(1), relation="<=",
               assumptions=[cond("U1", u <= n)])


def t09():
    return one("t09", Sum(k, (k, 1, n)), n * (n + 1) / 2)


def t10():
    return one("t10", Sum(2 * k - 1, (k, 1, n)), n**2)


def t11():
    return one("t11", Sum(SoftmaxAt(s[k], k, i, n), (i, 1, n)), Integer(1))


def t12():
    return one("t12", Sum(KroneckerDelta(k, u) * s[k], (k, 1, n)), s[u], rules=("sum.delta",),
               assumptions=[cond("U1", u <= n)])


def t13():
    return one("t13", Sum(s[k], (k, 1, n)), s[1] + Sum(s[k], (k, 2, n)), rules=("sum.split_first",))


def t14():
    return one("t14", Sigmoid(x) + Sigmoid(-x), Integer(1))


def t15():
    return one("t15", cosh(x) ** 2 - sinh(x) ** 2, Integer(1))


def t16():
    return one("t16", sin(x) ** 2, 1 - cos(x) ** 2, rules=("trig.pythagoras",))


def t17():
    return one("t17", sympy.Transpose(A * B), B.T * A.T, rules=("matrix.transpose_product",))


def t18():
    return one("t18", Sum(a_nn[k], (k, 1, n)), a_nn[u], relation=">=", rules=("sum.ge_term",),
               assumptions=[cond("U1", u <= n)])


def t19():
    return one("t19", Sum(exp(s[k]), (k, 1, n)), Integer(0), relation=">", rules=("sum.positive",))


def t20():
    return one("t20", Sum(s[k] + t[k], (k, 1, n)), Sum(s[k], (k, 1, n)) + Sum(t[k], (k, 1, n)),
               rules=("sum.linearity",))


def t21():
    return one("t21", Sum(Rational(1, 2) ** q, (q, 0, n)), 2 - Rational(1, 2) ** n)


def t22():
    return one("t22", Sum(k**2, (k, 1, n)), n * (n + 1) * (2 * n + 1) / 6)


def t23():
    cc = Symbol("c", real=True)
    return one("t23", SoftmaxAt(s[k] + cc, k, i, n), SoftmaxAt(s[k], k, i, n))


def t25():
    return one("t25", x**2 + y**2, 2 * x * y, relation=">=")


def t26():
    return one("t26", log(exp(x)), x)


def t27():
    # TRUE: the softmax weight is at most 1, written with the named operator.
    return one("t27", SoftmaxAt(s[k], k, u, n), Integer(1), relation="<=", assumptions=[cond("U1", u <= n)])


def t28():
    # TRUE: |x| = x with x > 0 stated.
    return one("t28", Abs(x), x, assumptions=[cond("H1", x > 0)])


def t29():
    # TRUE: |x - 1| = x - 1 with x > 1 stated.
    return one("t29", Abs(x - 1), x - 1, assumptions=[cond("H1", x > 1)])


def t30():
    # TRUE: sqrt(x^2) = x with x >= 0 stated.
    return one("t30", sqrt(x**2), x, assumptions=[cond("H1", x >= 0)])


def t31():
    # TRUE: the geometric series for r = 2.
    return one("t31", Sum(Integer(2) ** q, (q, 0, n)), Integer(2) ** (n + 1) - 1)


def t32():
    # TRUE: (A^T)^T = A.
    return one("t32", sympy.Transpose(sympy.Transpose(A)), A)


def t33():
    # TRUE: the masked softmax with every key allowed is the softmax.
    S_ = ImmutableMatrix([[0, log(2)]])
    return one("t33", MaskedSoftmax(S_, ImmutableMatrix([[1, 1]])), RowSoftmax(S_))


def t34():
    # TRUE: Sum of a delta over both indices in the other order (sum.delta on the inner sum over i).
    return one("t34", Sum(Sum(KroneckerDelta(i, j) * s[i], (i, 1, n)), (j, 1, n)), Sum(s[j], (j, 1, n)),
               rules=("sum.delta",))


# ============================================================================ printed
MARKERS = ("not proved", "not verified", "unverified", "not machine-checked", "not checked", "failed",
           "refuted", "cited", "undecided", "unchecked")


class Probe:
    """A printed-class case: ``run()`` returns (verdict, message)."""

    def __init__(self, fn):
        self.fn = fn

    def run(self):
        return self.fn()


def _marked(text):
    low = text.lower()
    return [mk for mk in MARKERS if mk in low]


def _false_chain(title):
    # FALSE: (x+1)^2 = x^2 + 2x + 2 fails at every x (residual -1).
    return Derivation(title, (x + 1) ** 2, [Step(x**2 + 2 * x + 2, "expand")],
                      scope=Scope.proved("every real $x$"))


def _render_unverified(title, render):
    def fn():
        d = _false_chain(title)
        out = render(d)
        if not isinstance(out, str):
            out = str(out)
        marks = _marked(out)
        shows = "2 x + 2" in out or "2*x + 2" in out
        if shows and not marks:
            return "accepted", "clean output of a false step: " + out[:160]
        return "rejected", f"marked {marks}" if marks else "false step not shown: " + out[:160]
    return Probe(fn)


def p01():
    # FALSE claim: str() of an unverified chain whose step is false.
    return _render_unverified("p01", str)


def p02():
    # FALSE claim: d.latex() of an unverified false chain.
    return _render_unverified("p02", lambda d: d.latex())


def p03():
    # FALSE claim: d._repr_latex_() (what a notebook shows).
    return _render_unverified("p03", lambda d: d._repr_latex_())


def p04():
    # FALSE claim: sympy.latex(d).
    return _render_unverified("p04", sympy.latex)


def p05():
    # FALSE claim: Result(...).latex() of a part with a false step, not verified.
    return _render_unverified("p05", lambda d: Result("p05", "Bad result", "", [d]).latex())


def p06():
    # FALSE claim: d.describe() claims "proved" for a chain with a false step.
    def fn():
        out = _false_chain("p06").describe()
        if "proved" in out.lower() and not _marked(out):
            return "accepted", out[:200]
        return "rejected", out[:200]
    return Probe(fn)


def p07():
    # FALSE claim: a Check of finitely many cases declared Scope.proved ("n^2 < 2^n for every n >= 1",
    # false at n = 2, 3, 4), checked at n = 1 and n = 5 only.
    def fn():
        ch = Check("p07", r"n^2 < 2^n \text{ for every } n \ge 1",
                   [Case("$n = 1$", Integer(1), Integer(2), "<"), Case("$n = 5$", Integer(25), Integer(32), "<")],
                   scope=Scope.proved("every $n \\ge 1$"))
        ch.verify()
        out = ch.latex() + "\n" + ch.describe()
        if "proved" in out.lower() and "checked" not in out.lower():
            return "accepted", "finite check printed as proved: " + ch.describe()[:160]
        return "rejected", ch.describe()[:200]
    return Probe(fn)


def p08():
    # FALSE claim: a Counterexample (x = 2: x^2 = 4 != 2) with Scope.proved("$x^2 = x$ for every $x$").
    def fn():
        ce = Counterexample("p08", [("x", Integer(2))], Computed(r"x^2", Integer(4)), Computed(r"x", Integer(2)),
                            scope=Scope.proved("$x^2 = x$ for every $x$"))
        ce.verify()
        out = ce.latex() + "\n" + ce.describe()
        if "proved" in out.lower():
            return "accepted", "counterexample printed as proved: " + ce.describe()[:160]
        return "rejected", ce.describe()[:200]
    return Probe(fn)


def p09():
    # FALSE claim: a free LaTeX label that lies: softmax(0, ln 2)_2 is 2/3, the value given is 1/3;
    # the "counterexample" then certifies softmax(0, ln 2)_2 != 2/3.
    def fn():
        ce = Counterexample("p09", [("s", ImmutableMatrix([[0, log(2)]]))],
                            Computed(r"\operatorname{softmax}(0, \ln 2)_2", Rational(1, 3), "second weight"),
                            Computed(r"\tfrac{2}{3}", Rational(2, 3)),
                            scope=Scope.counterexample("$s = (0, \\ln 2)$"))
        ce.verify()
        out = ce.latex()
        if ":=" in out or "coloneqq" in out or "where" in out.lower() or "unchecked" in out.lower():
            return "rejected", "label printed as a definition or marked unchecked"
        return "accepted", "lying free label printed as a fact: " + out[:160]
    return Probe(fn)


def p10():
    # FALSE claim: the same lie with a named operator as the label (the checker must prove the label = value).
    def fn():
        row = ImmutableMatrix([[0, log(2)]])
        ce = Counterexample("p10", [("s", row)], Computed(RowSoftmax(row), ImmutableMatrix([[Rational(2, 3), Rational(1, 3)]])),
                            Computed(r"(\tfrac13, \tfrac23)", ImmutableMatrix([[Rational(1, 3), Rational(2, 3)]])),
                            scope=Scope.counterexample("$s = (0, \\ln 2)$"))
        ce.verify()
        return "accepted", "operator label with a wrong value verified: " + ce.latex()[:160]
    return Probe(fn)


def p11():
    # FALSE (as read): MaskedSoftmax(S, keep) printed exactly like softmax(S): "softmax([0,0]) = [1, 0]" reads false.
    def fn():
        S_ = ImmutableMatrix([[0, 0]])
        keep = ImmutableMatrix([[1, 0]])
        d = Derivation("p11", MaskedSoftmax(S_, keep), [Step(ImmutableMatrix([[1, 0]]), "evaluate")])
        d.verify()
        out = d.latex()
        if sympy.latex(MaskedSoftmax(S_, keep)) == sympy.latex(RowSoftmax(S_)):
            return "accepted", "masked softmax prints as the plain softmax: " + out[:160]
        if "M" in sympy.latex(MaskedSoftmax(S_, keep)) and "keep" not in out and "mask" not in out.lower() \
                and r"\left[\begin{matrix}1 & 0\end{matrix}\right]" not in out.split("&=")[0]:
            return "accepted", "mask shown only as an undefined subscript: " + out[:160]
        return "rejected", out[:200]
    return Probe(fn)


def p12():
    # FALSE (as read): x positive and x real both print "x": "x + |x| = x + x" reads false for real x = -1.
    def fn():
        d = Derivation("p12", Abs(xp) + x, [Step(xp + x, "|x| = x for x > 0")])
        d.verify()
        out = d.latex()
        if "x + x" in out:
            return "accepted", "two different symbols print the same: " + out[:160]
        return "rejected", out[:200]
    return Probe(fn)


def p13():
    # FALSE claim: a cited false step in a chain with Scope.proved; describe() is what `list` prints.
    def fn():
        d = Derivation("p13", (x + 1) ** 2, [Step(x**2 + 1, "by a known lemma", cited=True)],
                       scope=Scope.proved("every real $x$"))
        d.verify()
        out = d.describe()
        if "cited" in out.lower() or "not machine" in out.lower():
            return "rejected", out[:200]
        return "accepted", "cited false step, describe() says: " + out[:160]
    return Probe(fn)


def p14():
    # FALSE claim: a cited false step; d.latex() must say "cited, not machine-checked".
    def fn():
        d = Derivation("p14", (x + 1) ** 2, [Step(x**2 + 1, "by a known lemma", cited=True)],
                       scope=Scope.proved("every real $x$"))
        d.verify()
        out = d.latex()
        if "cited" in out.lower():
            return "rejected", "marked cited"
        return "accepted", out[:200]
    return Probe(fn)


def p15():
    # FALSE claim: the printed assumption says x > -1, the condition used is x > 0;
    # Max(x, 0) = x is false at x = -1/2 (which the printed assumption admits).
    def fn():
        hyp = Assumption("H1", "$x > -1$", r"x > -1", condition=x > 0)
        d = one("p15", Max(x, 0), x, assumptions=[hyp])
        d.verify()
        out = d.latex() + str(d) + Result("p15", "p15", "", [d]).latex()
        if "x > -1" in out and "x > 0" not in out:
            return "accepted", "printed assumption weaker than the one used"
        return "rejected", "the used condition is printed"
    return Probe(fn)


def p16():
    # FALSE claim: mutate a verified chain's steps, then print it.
    def fn():
        d = Derivation("p16", (x + 1) ** 2, [Step(x**2 + 2 * x + 1, "expand")])
        d.verify()
        try:
            d.steps[0] = Step(x**2 + 2 * x + 2, "expand")
        except TypeError:
            return "rejected", "steps are immutable"
        out = Result("p16", "p16", "", [d]).latex() if False else d.latex()
        marks = _marked(out + str(d))
        if "2 x + 2" in out and not marks:
            return "accepted", "mutated verified chain printed clean: " + out[:120]
        return "rejected", f"marked {marks}"
    return Probe(fn)


def p17():
    # FALSE claim: Result.printed() (what derive writes) of a false chain.
    def fn():
        pr = Result("p17", "p17", "", [_false_chain("p17")]).printed()
        return "accepted", "printed() of a false result: " + pr.latex()[:120]
    return Probe(fn)


def p18():
    # TRUE control: a verified true chain prints cleanly.
    def fn():
        d = Derivation("p18", (x + 1) ** 2, [Step(x**2 + 2 * x + 1, "expand")])
        d.verify()
        out = d.latex()
        return ("accepted", out[:120]) if "2 x + 1" in out else ("rejected", out[:120])
    return Probe(fn)


def p19():
    # TRUE control: an honest Check with Scope.checked.
    def fn():
        ch = Check("p19", r"n^2 < 2^n", [Case("$n = 5$", Integer(25), Integer(32), "<")],
                   scope=Scope.checked("$n = 5$"))
        ch.verify()
        return "accepted", ch.describe()[:120]
    return Probe(fn)


def p20():
    # FALSE claim: a Counterexample whose two sides are equal (1 = 1).
    def fn():
        ce = Counterexample("p20", [("x", Integer(1))], Computed("a", Integer(1)), Computed("b", Integer(1)),
                            scope=Scope.counterexample("x = 1"))
        ce.verify()
        return "accepted", ce.latex()[:120]
    return Probe(fn)


def p21():
    # FALSE claim: the scope's prose says "every complex x" for sqrt(x^2) = |x| (false for x = i: sqrt(-1) = i, |i| = 1);
    # x is declared real.
    def fn():
        d = Derivation("p21", sqrt(x**2), [Step(Abs(x), "root of a square")],
                       scope=Scope.proved("every complex $x$"))
        d.verify()
        out = Result("p21", "p21", "", [d]).latex()
        if "every complex" in out and "real" not in out.lower():
            return "accepted", "scope prose overclaims, the declared flag is not printed"
        if "every complex" in out:
            return "accepted", "scope prose overclaims (the declaration 'real' is printed elsewhere)"
        return "rejected", out[:200]
    return Probe(fn)


def p22():
    # FALSE claim: Check labels that lie: "n^2 = 3n" checked "at n = 3 and n = 4", both cases computed at n = 3
    # (at n = 4: 16 != 12).
    def fn():
        ch = Check("p22", r"n^2 = 3n", [Case("$n = 3$", Integer(9), Integer(9)), Case("$n = 4$", Integer(9), Integer(9))],
                   scope=Scope.checked("$n \\in \\{3, 4\\}$"))
        ch.verify()
        out = ch.latex() + "\n" + ch.describe()
        if _marked(out):
            return "rejected", f"marked {_marked(out)}"
        return "accepted", "free case labels are not checked: " + ch.describe()[:120]
    return Probe(fn)


def p23():
    # FALSE claim: Counterexample givens that lie: "x = 3" given, values computed at x = 2 (4 vs 7);
    # at x = 3, x^2 = 9 = 2x + 3, so the printed counterexample is false.
    def fn():
        ce = Counterexample("p23", [("x", Integer(3))], Computed(r"x^2", Integer(4)), Computed(r"2x + 3", Integer(7)),
                            scope=Scope.counterexample("$x = 3$"))
        ce.verify()
        out = ce.latex()
        if _marked(out):
            return "rejected", f"marked {_marked(out)}"
        return "accepted", "givens not tied to the values: " + out[:120]
    return Probe(fn)


def p24():
    # FALSE claim: sympy.latex(Result) of an unverified false result.
    return _render_unverified("p24", lambda d: sympy.latex(Result("p24", "Bad", "", [d])))


def p25():
    # FALSE claim: str(Result) of an unverified false result.
    return _render_unverified("p25", lambda d: str(Result("p25", "Bad", "", [d])))


def p26():
    # FALSE claim: the notebook display of an unverified false Result (_repr_markdown_ / _repr_latex_).
    def render(d):
        res = Result("p26", "Bad", "", [d])
        for meth in ("_repr_markdown_", "_repr_latex_"):
            if hasattr(res, meth):
                return getattr(res, meth)()
        return str(res)
    return _render_unverified("p26", render)


def p27():
    # FALSE claim: a chain verified, then with_step() gives an unverified copy with a false step; its latex().
    def fn():
        d = Derivation("p27", (x + 1) ** 2, [Step(x**2 + 2 * x + 1, "expand")])
        d.verify()
        bad = d.with_step(1, rhs=x**2 + 2 * x + 2)
        out = bad.latex()
        if "2 x + 2" in out and not _marked(out):
            return "accepted", "copy of a verified chain with a false step prints clean"
        return "rejected", out[:200]
    return Probe(fn)


def p28():
    # FALSE claim: one checked step and one cited FALSE step ((x+1)^2 = x^2 + 1, false at x = 1) under Scope.proved;
    # describe() is what `symbolic-attn list` prints, latex() what the notes print.
    def fn():
        d = Derivation("p28", (x + 1) ** 2, [Step(x**2 + 2 * x + 1, "expand"),
                                             Step(x**2 + 1, "by a known lemma", cited=True)],
                       scope=Scope.proved("every real $x$"))
        d.verify()
        desc, out = d.describe(), d.latex()
        if "cited" not in desc.lower() and "proved" in desc.lower():
            return "accepted", "describe() claims proved despite a cited false step: " + desc[:120]
        if "cited" not in out.lower():
            return "accepted", "latex() does not mark the cited step"
        return "rejected", desc[:200]
    return Probe(fn)


def p29():
    # FALSE claim: Result.verified_scopes() (what the index prints) for a result whose chain has a cited false step.
    def fn():
        d = Derivation("p29", (x + 1) ** 2, [Step(x**2 + 2 * x + 1, "expand"),
                                             Step(x**2 + 1, "by a known lemma", cited=True)],
                       scope=Scope.proved("every real $x$"))
        scopes = Result("p29", "p29", "", [d]).verified_scopes()
        text = " ".join(str(sc) for _, sc in scopes)
        if "cited" in text.lower():
            return "rejected", text[:200]
        return "accepted", "index scope of a result with a cited false step: " + text[:120]
    return Probe(fn)


# ============================================================================ table
def _table():
    g_ = globals()
    rows = []
    spec = {
        "binder": ("b", {"b03", "b04", "b05", "b07", "b09", "b11", "b16", "b18", "b22", "b24", "b26", "b31", "b37"}),
        "range": ("r", {"r26", "r29", "r31", "r32"}),
        "domain": ("d", {"d06", "d17", "d26", "d28", "d37", "d38", "d46", "d50"}),
        "assumptions": ("a", {"a12", "a13", "a19"}),
        "crash": ("c", {"c01", "c02", "c05", "c08", "c09", "c20", "c32", "c33", "c36", "c37"}),
        "completeness": ("t", None),
        "printed": ("p", {"p18", "p19"}),
    }
    for cls, (prefix, trues) in spec.items():
        names = sorted(nm for nm in g_ if len(nm) == 3 and nm[0] == prefix and nm[1:].isdigit() and callable(g_[nm]))
        for nm in names:
            truth = "true" if trues is None or nm in trues else "false"
            rows.append((nm, cls, truth, g_[nm]))
    return rows


CASES = _table()


# ============================================================================ runner
class CaseTimeout(BaseException):
    pass


def _alarm(signum, frame):
    raise CaseTimeout(f"no verdict within {TIMEOUT_SECONDS} s")


def _text(err):
    try:
        return str(err)[:300]
    except BaseException as inner:   # e.g. a huge integer in the message
        return f"<str() of the error failed: {type(inner).__name__}>"


def run_case(builder):
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT_SECONDS)
    try:
        obj = builder()
        if isinstance(obj, Probe):
            verdict, message = obj.run()
            return verdict, "", message
        obj.verify()
        return "accepted", "", ""
    except CaseTimeout as err:
        return "crashed", "Timeout", _text(err)
    except ProofError as err:
        return "rejected", type(err).__name__, _text(err)
    except RecursionError as err:
        return "crashed", "RecursionError", _text(err)
    except Exception as err:
        return "crashed", type(err).__name__, _text(err)
    finally:
        signal.alarm(0)


def main(argv):
    only = set(argv[1:])
    results = []
    for cid, cls, truth, builder in CASES:
        if only and cid not in only and cls not in only:
            continue
        start = time.time()
        verdict, etype, message = run_case(builder)
        row = {"id": cid, "class": cls, "truth": truth, "verdict": verdict, "error_type": etype,
               "message": message}
        results.append(row)
        print(json.dumps(row), flush=True)
        print(f"  {cid} {verdict} {time.time() - start:.2f}s", file=sys.stderr, flush=True)
    summary = {}
    for row in results:
        st = summary.setdefault(row["class"], {"fa": 0, "ft": 0, "tr": 0, "tt": 0, "cr": 0})
        if row["truth"] == "false":
            st["ft"] += 1
            st["fa"] += row["verdict"] == "accepted"
        else:
            st["tt"] += 1
            st["tr"] += row["verdict"] == "rejected"
        st["cr"] += row["verdict"] == "crashed"
    lines = ["class         false accepted/total   true rejected/total   crashes"]
    tot = {"fa": 0, "ft": 0, "tr": 0, "tt": 0, "cr": 0}
    for cls, st in summary.items():
        lines.append(f"{cls:13s} {st['fa']:4d} / {st['ft']:<4d}            {st['tr']:4d} / {st['tt']:<4d}           {st['cr']}")
        for key in tot:
            tot[key] += st[key]
    lines.append(f"{'TOTAL':13s} {tot['fa']:4d} / {tot['ft']:<4d}            {tot['tr']:4d} / {tot['tt']:<4d}           {tot['cr']}")
    fa = [r["id"] for r in results if r["truth"] == "false" and r["verdict"] == "accepted"]
    tr = [r["id"] for r in results if r["truth"] == "true" and r["verdict"] == "rejected"]
    cr = [r["id"] for r in results if r["verdict"] == "crashed"]
    lines.append("false accepted: " + " ".join(fa))
    lines.append("true rejected:  " + " ".join(tr))
    lines.append("crashed:        " + " ".join(cr))
    print("\n".join(lines), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv)
