"""prove_equal decides equality by documented strategies; numbers may refute, never prove."""

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from symbolic_attn.model.attention import softmax
from symbolic_attn.errors import InexactStepError, ProofError, SideConditionError, UndecidedError
from symbolic_attn.proofs.prove import Assumption, Frac, prove_equal, prove_positive, prove_unequal

x, y = sympy.symbols("x y")
c = sympy.Symbol("c", real=True)
n = sympy.Symbol("n", integer=True, positive=True)
i, k = sympy.symbols("i k", integer=True, positive=True)
s = sympy.IndexedBase("s", real=True)
f = sympy.Function("f")
A = sympy.MatrixSymbol("A", 2, 2)
B = sympy.MatrixSymbol("B", 2, 2)

PROVED = [
    ("structural", x + y, y + x, "structural"),
    ("expand", x * (y + 1), x * y + x, "expand"),
    ("cancel-with-condition", (x**2 - 1) / (x - 1), x + 1, "cancel"),
    ("exp-log", sympy.exp(2 * sympy.log(x)) * sympy.exp(x + y), x**2 * sympy.exp(x) * sympy.exp(y), "expand"),
    ("shift-sum", sympy.exp(s[i] + c) / sympy.Sum(sympy.exp(s[k] + c), (k, 1, n)),
     sympy.exp(s[i]) / sympy.Sum(sympy.exp(s[k]), (k, 1, n)), "sum rules"),  # a sum: the sum rules right after expand
    ("sum-of-ones", sympy.Sum(1, (k, 1, n)), n, "sum rules"),
    ("trig-as-exp", sympy.sin(x) ** 2 + sympy.cos(x) ** 2, 1, "rewrite exp"),
    ("matrix-entrywise", sympy.Matrix([[x * (x + 1)]]), sympy.Matrix([[x**2 + x]]), "entrywise"),
    ("matrix-expression", sympy.Transpose(A * B), B.T * A.T, "entrywise"),
    ("display-frac", Frac(x, 2), x / 2, "structural"),
]


NOT_ONE = Assumption("A1", "x is not 1", condition=sympy.Ne(x, 1))


@pytest.mark.parametrize("lhs, rhs, strategy", [case[1:] for case in PROVED], ids=[case[0] for case in PROVED])
def test_proved_by_the_documented_strategy(lhs, rhs, strategy):
    assert prove_equal(lhs, rhs, [NOT_ONE]).strategy == strategy


def test_cancelling_needs_the_stated_condition():
    with pytest.raises(SideConditionError, match=r"^needs x - 1 != 0 \(denominator\)"):
        prove_equal((x**2 - 1) / (x - 1), x + 1)


REFUTED = [
    ("constant", x + 1, x + 2, r"^refuted: residual -1 is not zero$"),
    ("wrong-sign", sympy.exp(x - y), sympy.exp(x + y), r"^refuted: residual .* is -?[0-9.]+ at x=1/2, y=-5/3$"),
    ("wrong-index", sympy.exp(s[i]) / sympy.Sum(sympy.exp(s[k]), (k, 1, n)),
     sympy.exp(s[k]) / sympy.Sum(sympy.exp(s[k]), (k, 1, n)), r"^refuted: .* at i=1, k=2, n=5$"),
    ("matrix-entry", sympy.Matrix([[1, x]]), sympy.Matrix([[1, x + 1]]), r"^entry \(1, 2\): refuted"),
    ("shape", sympy.Matrix([[1, 2]]), sympy.Matrix([[1], [2]]), r"^refuted: shapes"),
]


@pytest.mark.parametrize("lhs, rhs, pattern", [case[1:] for case in REFUTED], ids=[case[0] for case in REFUTED])
def test_refuted_names_the_residual(lhs, rhs, pattern):
    with pytest.raises(ProofError, match=pattern):
        prove_equal(lhs, rhs)


def test_numbers_never_prove():
    # x (2x - 1) vanishes at the first refutation point x = 1/2: not a proof; another point refutes.
    with pytest.raises(ProofError, match=r"^refuted: residual 2\*x\*\*2 - x is 52/25 at x=-4/5$"):
        prove_equal(x * (2 * x - 1), 0)


def test_unknown_functions_are_undecided_not_passed():
    with pytest.raises(UndecidedError):
        prove_equal(f(x + 1), f(x) + 1)


def test_matrix_expression_without_rule_is_refuted_by_entries():
    P = sympy.MatrixSymbol("P", 2, 2)
    with pytest.raises(ProofError, match=r"^entry \(1, 1\): refuted: .* at A\[0,0\]=1/2, "):
        prove_equal(P.T * P * A, A)


def test_assumption_rule_is_what_proves_the_step():
    P = sympy.MatrixSymbol("P", 2, 2)
    orthogonal = Assumption("A1", "P orthogonal", rewrite=lambda e: e.subs(P.T * P, sympy.Identity(2)))
    assert prove_equal(P.T * P * A, A, [orthogonal]).strategy in {"assumptions", "entrywise"}


def test_floats_are_refused():
    with pytest.raises(InexactStepError, match="^Python float 0.5"):
        prove_equal(0.5, sympy.Rational(1, 2))


def test_prove_positive_uses_signs_not_numbers():
    t = sympy.Symbol("t", real=True)
    assert prove_positive(sympy.exp(t) / (1 + sympy.exp(t))).strategy == "sign calculus"
    with pytest.raises(UndecidedError, match=r"^cannot show"):
        prove_positive(t)


def test_prove_unequal_certifies_a_difference():
    found = prove_unequal(sympy.Matrix([[1, sympy.exp(1)]]), sympy.Matrix([[1, 3]]))
    assert (found.where, found.approx) == ("entry (1, 2)", "-0.281718")
    with pytest.raises(ProofError, match="not a counterexample"):
        prove_unequal(sympy.Rational(1, 2), sympy.Rational(2, 4))
    with pytest.raises(UndecidedError, match="free symbols"):
        prove_unequal(x, 1)


small = st.fractions(min_value=-3, max_value=3, max_denominator=4).map(sympy.Rational)


@settings(max_examples=15, deadline=None)
@given(st.lists(small, min_size=1, max_size=3), small)
def test_shift_invariance_of_the_core_is_proved(scores, shift):
    row = sympy.Matrix([scores])
    shifted = row.applyfunc(lambda value: value + shift)
    assert prove_equal(softmax(shifted), softmax(row)).strategy in {"structural", "entrywise"}


@settings(max_examples=15, deadline=None)
@given(st.lists(small, min_size=1, max_size=4))
def test_rows_sum_to_exactly_one(scores):
    assert prove_equal(sum(softmax(sympy.Matrix([scores]))), 1)


def test_forty_symbols_do_not_exhaust_the_refutation_points():
    many = sympy.symbols("x0:40")
    with pytest.raises(ProofError, match=r"^refuted: residual x0\*x1\*"):
        prove_equal(sympy.Mul(*many), sympy.Mul(*many[:-1]))
    integers = sympy.symbols("n0:40", integer=True, positive=True, even=True)
    with pytest.raises(ProofError, match=r"^refuted"):
        prove_equal(sympy.Add(*integers), sympy.Add(*integers[:-1]))


FLAGGED = [
    ("negative", sympy.Symbol("x", negative=True), lambda v: v < 0),
    ("nonpositive", sympy.Symbol("x", nonpositive=True), lambda v: v <= 0),
    ("positive", sympy.Symbol("x", positive=True), lambda v: v > 0),
    ("even", sympy.Symbol("m", integer=True, even=True), lambda v: v.is_Integer and v % 2 == 0),
    ("odd", sympy.Symbol("m", integer=True, odd=True), lambda v: v.is_Integer and v % 2 == 1),
    ("negative-integer", sympy.Symbol("m", integer=True, negative=True), lambda v: v.is_Integer and v < 0),
]


@pytest.mark.parametrize("symbol, valid", [f[1:] for f in FLAGGED], ids=[f[0] for f in FLAGGED])
def test_refutation_points_satisfy_every_declared_flag(symbol, valid):
    import re

    with pytest.raises(ProofError, match=r"^refuted: .* at ") as caught:
        prove_equal(symbol * (symbol - 100), 1)
    value = sympy.Rational(re.search(r" at \w+=(-?[0-9/]+)$", str(caught.value)).group(1))
    assert valid(value)


def test_a_point_outside_a_stated_condition_is_not_used():
    # x - 3 > 0 is stated: the default points (1/2, -5/3, ...) are not valid; honest answer.
    stated = Assumption("A1", "x > 3", condition=x > 3)
    assert prove_equal(sympy.Abs(x - 3), x - 3, [stated]).strategy == "order"  # |x - 3| = x - 3 there
    with pytest.raises((ProofError, UndecidedError)) as caught:
        prove_equal(sympy.Abs(x - 3) * sympy.exp(x), (x - 2) * sympy.exp(x), [stated])
    assert "at x=1/2" not in str(caught.value) and "at x=-5/3" not in str(caught.value)


def test_numbers_are_decided_exactly_or_by_certified_intervals():
    near_one = sympy.acos(1 - sympy.Rational(1, 10**40))
    with pytest.raises(ProofError, match=r"^refuted: residual acos"):
        prove_equal(near_one, 0)
    assert prove_equal(sympy.sqrt(3 + 2 * sympy.sqrt(2)), 1 + sympy.sqrt(2)).strategy == "exact arithmetic"
    assert prove_equal(sympy.cos(1) ** 2 + sympy.sin(1) ** 2, 1).strategy == "exact arithmetic"
