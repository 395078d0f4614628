"""The rule library: every rule proves its true instance and rejects a broken one, naming why."""

import pytest
import sympy
from sympy import Sum, exp

from symbolic_attn.errors import ProofError, SideConditionError, UndecidedError
from symbolic_attn.proofs.chain import Derivation, Scope, Step
from symbolic_attn.proofs.operators import Sigmoid, SoftmaxAt
from symbolic_attn.proofs.prove import Assumption, prove_equal
from symbolic_attn.proofs.rules import RULES, Bijection, rename_index, reindex_by, shift_index, split_blocks

n = sympy.Symbol("n", integer=True, positive=True)
m = sympy.Symbol("m", integer=True)
i, j, k, b = sympy.symbols("i j k b", integer=True, positive=True)
f = sympy.IndexedBase("f", real=True)
g = sympy.IndexedBase("g", real=True)
w = sympy.IndexedBase("w", nonnegative=True)
s = sympy.IndexedBase("s", real=True)
c = sympy.Symbol("c", real=True)
sigma = sympy.Function("sigma")
A, B, C = (sympy.MatrixSymbol(name, n, n) for name in "ABC")
A2, B2 = sympy.MatrixSymbol("A", 2, 2), sympy.MatrixSymbol("B", 2, 2)
R = sympy.MatrixSymbol("R", 1, 2)

BIJ = Assumption("A1", "sigma permutes 1..n", condition=Bijection(sigma, 1, n))
IN_RANGE = Assumption("A2", "b in 1..n", condition=b <= n)


def _sum(term, low=1, high=n):
    return Sum(term, (k, low, high))


# (id, lhs, rhs, rules, assumptions)
TRUE = [
    ("linearity", _sum(f[k] + g[k]), _sum(f[k]) + _sum(g[k]), ["sum.linearity"], []),
    ("factor-out", _sum(c * f[k]), c * _sum(f[k]), ["sum.factor_out"], []),
    ("swap", _sum(Sum(f[k] * g[j, k], (j, 1, 2 * n))), Sum(_sum(f[k] * g[j, k]), (j, 1, 2 * n)), ["sum.swap"], []),
    ("split-first", _sum(f[k]), f[1] + _sum(f[k], 2, n), ["sum.split_first"], []),
    ("split-last", _sum(f[k]), _sum(f[k], 1, n - 1) + f[n], ["sum.split_last"], []),
    ("shift", _sum(f[k]), _sum(f[k - 2], 3, n + 2), [shift_index(2)], []),
    ("rename", _sum(f[k]), Sum(f[j], (j, 1, n)), [rename_index(k, j)], []),
    ("reindex", _sum(f[sigma(k)]), _sum(f[k]), [reindex_by(sigma)], [BIJ]),
    ("delta", _sum(sympy.KroneckerDelta(k, b) * f[k]), f[b], ["sum.delta"], [IN_RANGE]),
    ("transpose", sympy.Transpose(A * B), B.T * A.T, ["matrix.transpose_product"], []),
    ("trace", sympy.Trace(A * B * C), sympy.Trace(C * A * B), ["matrix.trace_cyclic"], []),
    ("expand", (A + B) * C, A * C + B * C, ["matrix.expand"], []),
    ("entries", sympy.Trace(A2 * B2), sympy.Trace(B2 * A2), ["matrix.entries"], []),
    ("scalar", R * sympy.ImmutableMatrix([[1], [1]]), R[0, 0] + R[0, 1], ["matrix.scalar"], []),
    ("blocks", Sum(f[k], (k, 1, 2 * n)), Sum(f[2 * (j - 1) + i], (i, 1, 2), (j, 1, n)), [split_blocks(2, j, i)], []),
    ("delta-substitute", sympy.KroneckerDelta(i, j) * f[j], sympy.KroneckerDelta(i, j) * f[i], ["delta.substitute"], []),
    ("pythagoras", _sum(sympy.sin(s[k]) ** 2 + sympy.cos(s[k]) ** 2), n, ["trig.pythagoras"], []),
]


@pytest.mark.parametrize("lhs, rhs, rules, assumptions", [t[1:] for t in TRUE], ids=[t[0] for t in TRUE])
def test_rule_proves_its_instance(lhs, rhs, rules, assumptions):
    proof = prove_equal(lhs, rhs, assumptions, rules)
    assert proof.rules and proof.rules[0].startswith(tuple(r if isinstance(r, str) else r.name.split("(")[0]
                                                           for r in rules))


UNPROVED = (ProofError, UndecidedError)
BROKEN = [
    ("linearity-lost-term", _sum(f[k] + g[k]), _sum(f[k]), ["sum.linearity"], [], ProofError, r"refuted"),
    ("factor-out-depends-on-index", _sum(k * f[k]), k * _sum(f[k]), ["sum.factor_out"], [], ProofError,
     r"does not apply|refuted|not shown"),
    ("swap-dependent-range", Sum(Sum(f[k] * g[j], (j, 1, k)), (k, 1, n)), Sum(Sum(f[k] * g[j], (k, 1, n)), (j, 1, k)),
     ["sum.swap"], [], UNPROVED, r"does not apply|refuted|not shown"),
    ("split-first-empty-range", Sum(f[k], (k, 1, m)), f[1] + Sum(f[k], (k, 2, m)), ["sum.split_first"], [],
     SideConditionError, r"not reversed|is not empty"),
    ("split-last-wrong-term", _sum(f[k]), _sum(f[k], 1, n - 1) + f[1], ["sum.split_last"], [], ProofError, r"refuted"),
    ("shift-limits-not-moved", _sum(f[k]), _sum(f[k - 2]), [shift_index(2)], [], ProofError, r"refuted|not shown"),
    ("rename-capture", _sum(f[k] * j), Sum(f[j] * j, (j, 1, n)), [rename_index(k, j)], [], SideConditionError,
     r"already occurs"),
    ("reindex-not-a-bijection", _sum(f[sigma(k)]), _sum(f[k]), [reindex_by(sigma)], [], SideConditionError,
     r"bijection"),
    ("delta-out-of-range", _sum(sympy.KroneckerDelta(k, b) * f[k]), f[b], ["sum.delta"], [], SideConditionError,
     r"-b \+ n >= 0"),
    ("transpose-order-kept", sympy.Transpose(A * B), A.T * B.T, ["matrix.transpose_product"], [], UNPROVED,
     r"not shown"),
    ("trace-not-cyclic", sympy.Trace(A * B * C), sympy.Trace(A * C * B), ["matrix.trace_cyclic"], [], UNPROVED,
     r"not shown|does not apply"),
    ("expand-commuted", (A + B) * C, C * A + C * B, ["matrix.expand"], [], UNPROVED, r"not shown"),
    ("entries-wrong", sympy.Trace(A2 * B2), sympy.Trace(A2) * sympy.Trace(B2), ["matrix.entries"], [], ProofError,
     r"refuted|not shown"),
    ("scalar-not-1x1", R, R[0, 0], ["matrix.scalar"], [], SideConditionError, r"only a 1x1 matrix"),
    ("blocks-wrong-offset", Sum(f[k], (k, 1, 2 * n)), Sum(f[2 * j + i], (i, 1, 2), (j, 1, n)),
     [split_blocks(2, j, i)], [], ProofError, r"refuted|not shown"),
    ("blocks-not-a-multiple", Sum(f[k], (k, 1, 2 * n + 1)), Sum(f[2 * (j - 1) + i], (i, 1, 2), (j, 1, n)),
     [split_blocks(2, j, i)], [], ProofError, r"does not apply|refuted"),
    ("delta-substitute-without-delta", sympy.KroneckerDelta(i, j) * f[j] + f[j], sympy.KroneckerDelta(i, j) * f[i] + f[i],
     ["delta.substitute"], [], ProofError, r"refuted"),
    ("pythagoras-wrong-sign", sympy.sin(c) ** 2 - sympy.cos(c) ** 2, 1, ["trig.pythagoras"], [], ProofError,
     r"refuted"),
    ("unknown-rule", _sum(f[k]), _sum(f[k]), ["sum.magic"], [], ProofError, r"unknown rule"),
    ("rule-not-used", f[1], f[1] + 0, ["sum.linearity"], [], ProofError, r"does not apply"),
]


@pytest.mark.parametrize("lhs, rhs, rules, assumptions, error, pattern", [t[1:] for t in BROKEN],
                         ids=[t[0] for t in BROKEN])
def test_rule_rejects_a_broken_instance(lhs, rhs, rules, assumptions, error, pattern):
    with pytest.raises(error, match=pattern):
        prove_equal(lhs, rhs, assumptions, rules)


def test_every_rule_has_a_broken_instance():
    tested = {t[3][0] if isinstance(t[3][0], str) else t[3][0].name.split("(")[0] for t in BROKEN}
    assert set(RULES) | {"sum.shift", "sum.rename", "sum.reindex", "sum.blocks"} <= tested | {"sum.magic"}


# ------------------------------------------------------------------ inequality rules, in chains


def test_sum_ge_term_and_positive():
    chain = Derivation("mass", _sum(w[k] * exp(s[k])), [
        Step(w[b] * exp(s[b]), "term b", relation=">=", using=("A2",), rules=("sum.ge_term",)),
    ], assumptions=[IN_RANGE], scope=Scope.proved("every n"))
    chain.verify()
    with pytest.raises(SideConditionError, match=r"^step 1 of 'mass': .*needs -b \+ n >= 0"):
        chain.without_assumption("A2").with_step(1, using=()).verify()
    signed = Derivation("signed", _sum(f[k]), [
        Step(f[b], "term b", relation=">=", using=("A2",), rules=("sum.ge_term",))], assumptions=[IN_RANGE])
    with pytest.raises(SideConditionError, match=r"^step 1 of 'signed': .*rule sum.ge_term: needs every term"):
        signed.verify()
    positive = Derivation("positive", _sum(exp(s[k])), [Step(sympy.Integer(0), "terms > 0", relation=">",
                                                             rules=("sum.positive",))])
    positive.verify()
    empty = Derivation("maybe empty", Sum(exp(s[k]), (k, 1, m)), [Step(sympy.Integer(0), "terms > 0", relation=">")])
    with pytest.raises(ProofError, match=r"^step 1 of 'maybe empty'"):
        empty.verify()


# --------------------------------------------------------------- the six true steps of the issue

x = sympy.Symbol("x", real=True)
x_nonpositive = sympy.Symbol("x", nonpositive=True)

SIX = [
    ("softmax-sums-to-one", Sum(SoftmaxAt(s[k], k, i, n), (i, 1, n)), sympy.Integer(1), []),
    ("centred-scores-sum-to-zero", Sum(s[i] - _sum(s[k]) / n, (i, 1, n)), sympy.Integer(0), []),
    ("sigmoid-tanh", Sigmoid(x), (1 + sympy.tanh(x / 2)) / 2, []),
    ("trace-cyclic", sympy.Trace(A * B), sympy.Trace(B * A), ["matrix.trace_cyclic"]),
    ("noncommutative-square", (A + B) ** 2, A**2 + A * B + B * A + B**2, ["matrix.expand"]),
    ("min-exp", sympy.Min(exp(x_nonpositive), 1), exp(x_nonpositive), []),
]


@pytest.mark.parametrize("lhs, rhs, rules", [t[1:] for t in SIX], ids=[t[0] for t in SIX])
def test_the_six_true_steps_verify(lhs, rhs, rules):
    prove_equal(lhs, rhs, (), rules)


def test_their_wrong_variants_fail():
    with pytest.raises(ProofError):
        prove_equal(Sum(SoftmaxAt(s[k], k, i, n), (i, 1, n - 1)), 1)
    with pytest.raises(ProofError):
        prove_equal(Sigmoid(x), (1 - sympy.tanh(x / 2)) / 2)
    with pytest.raises(ProofError):
        prove_equal(sympy.Min(exp(x), 1), exp(x))  # x real: e^x > 1 for x > 0
