"""Issue 22, item 3: a false step is named by the wrong rule that, proved, makes it; the
right step beside it is proved and names nothing; a false step no rule makes is named by
none."""

import pytest
import sympy

from symbolic_attn.model.mistakes import CATALOGUE, ids
from symbolic_attn.steps.decide import decide_step
from symbolic_attn.steps.randomness import RandomFamily, Randomness, Var
from symbolic_attn.steps.wrong_rules import WRONG_RULES, explain

n = sympy.Symbol("n", integer=True, positive=True)
i, j = sympy.symbols("i j", integer=True, positive=True)
c = sympy.Symbol("c", real=True)
a, b = sympy.symbols("a b", positive=True)
d = sympy.Symbol("d_k", positive=True)
x = sympy.IndexedBase("x", real=True)
A, B = sympy.MatrixSymbol("A", 2, 2), sympy.MatrixSymbol("B", 2, 2)
#: w: a random vector with mean 0 and variance 1, its components NOT declared independent.
w = sympy.IndexedBase("w", real=True)
RANDOM = Randomness((RandomFamily(("w",), "vector", False, sympy.Integer(0), sympy.Integer(1)),))


def total(term):
    return sympy.Sum(term, (j, 1, n))


# mistake id: (left, the wrong right side, the right right side)
CASES = {
    "exp_of_sum": (sympy.exp(a + b), sympy.exp(a) + sympy.exp(b), sympy.exp(a) * sympy.exp(b)),
    "sum_term_left_out": (total(x[j] + c), total(x[j]) + c, total(x[j]) + n * c),
    "dependent_factor_out": (total(x[j] * sympy.exp(x[j])), x[j] * total(sympy.exp(x[j])), total(x[j] * sympy.exp(x[j]))),
    "shift_added": (total(sympy.exp(x[j] + c)), sympy.exp(c) + total(sympy.exp(x[j])),
                    sympy.exp(c) * total(sympy.exp(x[j]))),
    "log_of_sum": (sympy.log(a**2 + b**2 + 1), sympy.log(a**2) + sympy.log(b**2 + 1), sympy.log(a**2 + b**2 + 1)),
    "cancelled_a_term": (sympy.exp(x[i]) / total(sympy.exp(x[j])), 1 / n,
                         1 / total(sympy.exp(x[j] - x[i]))),
    "index_captured": (total(sympy.exp(x[j] - x[i])), n, sympy.exp(-x[i]) * total(sympy.exp(x[j]))),
    "sqrt_dk_vs_dk": (a / sympy.sqrt(d), a / d, a * d ** sympy.Rational(-1, 2)),
    "variance_of_sum": (Var(a * w[1] + b * w[2]), Var(a * w[1]) + Var(b * w[2]), Var(b * w[2] + a * w[1])),
    "variance_scale": (Var(c * w[1]), c * Var(w[1]), c**2 * Var(w[1])),
    "softmax_scale": (sympy.exp(c * x[i]) / total(sympy.exp(c * x[j])), sympy.exp(x[i]) / total(sympy.exp(x[j])),
                      sympy.exp(c * x[i]) / total(sympy.exp(c * x[j]))),
    "transpose_order": (sympy.Transpose(A * B), A.T * B.T, B.T * A.T),
}


def test_every_wrong_rule_of_the_catalogue_has_a_case():
    assert set(CASES) == set(WRONG_RULES) == set(ids("step"))


@pytest.mark.parametrize("mistake", list(CASES))
def test_the_wrong_step_is_named_and_the_right_one_is_proved(mistake):
    left, wrong, right = CASES[mistake]
    step = decide_step(left, wrong, "=", randomness=RANDOM)
    assert step.verdict in ("false", "undecided"), step  # never proved
    assert explain(left, wrong, randomness=RANDOM) == mistake
    if step.verdict == "false":
        assert step.diagnosis == mistake and step.sentence() == CATALOGUE[mistake].sentence()
    proved = decide_step(left, right, "=", randomness=RANDOM)
    assert proved.verdict == "proved" and proved.diagnosis is None, proved


@pytest.mark.parametrize("mistake", list(CASES))
def test_written_the_other_way_round_it_is_named_too(mistake):
    left, wrong, _ = CASES[mistake]
    assert explain(wrong, left, randomness=RANDOM) == mistake


def test_a_false_step_no_rule_makes_is_named_by_none():
    step = decide_step(sympy.exp(a), sympy.exp(b) + 1, "=")
    assert step.verdict == "false" and step.diagnosis is None and step.sentence() is None
    assert explain(total(sympy.exp(x[j])), n * sympy.exp(x[1])) is None
