"""What the grading speed-ups may not change (issue 22, item 6): ``sums written out`` proves a
finite sum's identity and never a wrong one; a candidate set aside by
``proofs.refute.differs_at`` is certified different, never equal; a diagnosis is the same
with and without the counterexample point; a false step is refuted before the last resorts,
a true one still reaches them."""

import pytest
import sympy

from symbolic_attn.errors import ProofError, SymbolicAttnError
from symbolic_attn.proofs.prove import prove_equal
from symbolic_attn.proofs.refute import differs_at
from symbolic_attn.steps.decide import decide_step
from symbolic_attn.steps.wrong_rules import explain

from tests.test_steps_mistakes import CASES

j, l = sympy.symbols("j l", integer=True)  # noqa: E741 -- the letters of the examples
s = sympy.IndexedBase("s", real=True)
v = sympy.IndexedBase("v", real=True)
c = sympy.Symbol("c", real=True)
p = sympy.Symbol("p", positive=True)


def test_sums_over_concrete_ranges_are_written_out():
    written = sum(sympy.exp(s[k]) * v[k] for k in (3, 2, 1)) / sum(sympy.exp(s[k]) for k in (3, 2, 1))
    as_sums = sympy.Sum(sympy.exp(s[j]) * v[j], (j, 1, 3)) / sympy.Sum(sympy.exp(s[l]), (l, 1, 3))
    assert prove_equal(written, as_sums).strategy == "sums written out"


@pytest.mark.parametrize("left, right", [
    (sympy.Sum(v[j], (j, 1, 3)), v[1] + v[2]),                        # a term left out
    (sympy.Sum(v[j], (j, 1, 3)), v[1] + v[2] + v[3] + v[4]),          # one term too many
    (sympy.Sum(v[j] * c, (j, 0, 2)), c * (v[1] + v[2] + v[3])),       # the range shifted
], ids=["a term left out", "a term too many", "the range shifted"])
def test_a_wrong_finite_sum_is_never_proved(left, right):
    with pytest.raises(SymbolicAttnError):
        prove_equal(left, right)


def test_differs_at_says_differ_only_where_certified():
    a = sympy.Symbol("a", real=True)
    assert differs_at(sympy.exp(a + c), sympy.exp(a) + sympy.exp(c), {"a": 0, "c": 1})
    for point in ({"a": 0, "c": 1}, {"a": sympy.Rational(-3, 7), "c": 5}):
        assert not differs_at(sympy.exp(a + c), sympy.exp(a) * sympy.exp(c), point)  # equal: never "differ"
    assert not differs_at(c * v[2], 0, {"c": 1})  # v[2] has no value: nothing said
    assert not differs_at(1 / c, 0, {"c": 0})  # not defined there: nothing said
    assert not differs_at(p, -1, {"p": -1})  # a value p's flag excludes: not a point of p
    n = sympy.Symbol("n", integer=True, positive=True)
    total = sympy.Sum(v[j], (j, 1, n))
    assert differs_at(total, v[1], {"n": 2, "v[1]": 1, "v[2]": 1})
    assert not differs_at(total, v[1] + v[2], {"n": 2, "v[1]": 1, "v[2]": 1})


@pytest.mark.parametrize("mistake", list(CASES))
def test_the_point_changes_no_diagnosis(mistake):
    left, wrong, _ = CASES[mistake]
    step = decide_step(left, wrong, "=", diagnose=False)
    if step.counterexample is None:
        pytest.skip("no counterexample point for this step")
    assert explain(left, wrong, point=step.counterexample) == explain(left, wrong) == mistake


def test_a_false_step_is_refuted_before_the_last_resorts_and_a_true_one_reaches_them():
    x = sympy.Symbol("x", positive=True)
    with pytest.raises(ProofError):  # false: refuted at a point, simplify never needed
        prove_equal(sympy.sin(x) ** 2 + sympy.cos(x) ** 2, 2)
    # true, and only simplify shows it: no point refutes it, so it still gets there
    assert prove_equal(sympy.log(sympy.exp(x) + 1) - sympy.log(1 + sympy.exp(-x)), x).strategy == "simplify"
