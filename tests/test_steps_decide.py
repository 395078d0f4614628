"""Issue 22: one step of a student's chain decided by the sound checker (proved / false /
undecided), each verdict shown with a wrong variant beside the right one."""

import pytest
import sympy

from symbolic_attn.steps.decide import StepVerdict, decide_step

n = sympy.Symbol("n", integer=True, positive=True)
j = sympy.Symbol("j", integer=True)
c = sympy.Symbol("c", real=True)
x = sympy.IndexedBase("x", real=True)
t = sympy.Symbol("t", real=True)


def total(term):
    return sympy.Sum(term, (j, 1, n))


# (left, relation, right, written, expected verdict)
STEPS = [
    ("shift out of the sum", total(sympy.exp(x[j] + c)), "=", sympy.exp(c) * total(sympy.exp(x[j])), None, "proved"),
    ("e^c added, not multiplied", total(sympy.exp(x[j] + c)), "=", sympy.exp(c) + total(sympy.exp(x[j])), None, "false"),
    ("e^(a+b) = e^a e^b", sympy.exp(t + c), "=", sympy.exp(t) * sympy.exp(c), None, "proved"),
    ("e^(a+b) = e^a + e^b", sympy.exp(t + c), "=", sympy.exp(t) + sympy.exp(c), None, "false"),
    ("a constant pulled out", total(c * x[j]), "=", c * total(x[j]), None, "proved"),
    ("the index pulled out", total(j * x[j]), "=", j * total(x[j]), None, "false"),
    ("rounded right", sympy.E / (1 + sympy.E), "approx", sympy.Rational(731, 1000), "0.731", "proved"),
    ("rounded wrong", sympy.E / (1 + sympy.E), "approx", sympy.Rational(73, 100), "0.730", "false"),
    ("exactly halfway passes", sympy.Rational(1, 8), "approx", sympy.Rational(13, 100), "0.13", "proved"),
    ("just past halfway fails", sympy.Rational(1, 8) + sympy.Rational(1, 10**9), "approx", sympy.Rational(12, 100),
     "0.12", "false"),
    ("rounded to an integer", sympy.pi, "approx", sympy.Integer(3), "3", "proved"),
    ("not a decimal", sympy.pi, "approx", sympy.pi, "\\pi", "undecided"),
    ("an inequality", sympy.exp(t), ">", t, None, "proved"),
    ("a false inequality", t**2, ">", t, None, "false"),
    ("a false non-strict one", sympy.exp(t), "<=", t, None, "false"),
    ("equal is not greater", t**2 + 1, ">", t**2 + 1, None, "false"),
    # true, and beyond the sign rules (cos is not bounded there): never refuted, undecided
    ("true but not proved by the rules", sympy.cos(t) + 2, ">", 0, None, "undecided"),
]


@pytest.mark.parametrize("label, left, relation, right, written, expected", STEPS, ids=[s[0] for s in STEPS])
def test_each_step_gets_its_verdict(label, left, relation, right, written, expected):
    step = decide_step(left, right, relation, written=written)
    assert isinstance(step, StepVerdict) and step.verdict == expected, step


def test_a_false_step_has_a_counterexample_in_the_students_letters():
    step = decide_step(total(sympy.exp(x[j] + c)), sympy.exp(c) + total(sympy.exp(x[j])), "=")
    assert step.verdict == "false" and step.reason.startswith("false: the two sides differ")
    point = step.counterexample
    assert {"c", "n"} <= set(point) and any(name.startswith("x[") for name in point)
    # the point really is a counterexample: both sides, written out there, differ
    at = {c: point["c"], n: point["n"]}
    values = {x[k]: point[f"x[{k}]"] for k in range(1, int(point["n"]) + 1)}
    left = total(sympy.exp(x[j] + c)).subs(at).doit().xreplace(values)
    right = (sympy.exp(c) + total(sympy.exp(x[j]))).subs(at).doit().xreplace(values)
    assert sympy.simplify(left - right) != 0 and (left - right).evalf(30) != 0
    assert step.as_dict()["counterexample"] == {name: str(value) for name, value in point.items()}


def test_a_false_inequality_has_its_counterexample():
    step = decide_step(t**2, t, ">")
    assert step.verdict == "false" and step.counterexample == {"t": sympy.Rational(1, 2)}
    # and the point is one: (1/2)^2 > 1/2 is false
    assert not (sympy.Rational(1, 4) > sympy.Rational(1, 2))


def test_a_step_needing_a_condition_is_undecided_and_says_which():
    step = decide_step(sympy.log(t**2), 2 * sympy.log(t), "=")
    assert step.verdict == "undecided" and "needs" in step.reason and "t**2 > 0" in step.reason


def test_an_approximation_of_letters_is_undecided():
    step = decide_step(sympy.exp(t), sympy.Rational(1), "approx", written="1.0")
    assert step.verdict == "undecided" and "letters (t)" in step.reason


def test_an_unknown_relation_is_refused():
    with pytest.raises(ValueError, match="unknown relation '~'"):
        decide_step(t, t, "~")


def test_letters_declared_but_unused_do_not_keep_a_false_step_from_its_counterexample():
    """Index ranges of letters the step does not use (i, j, l in 1..n) still hold at the
    point: n is given the largest value whatever order the facts name it in."""
    from symbolic_attn.steps.report import check_text

    text = ("<!-- symbols: s, v: real vector 3; n: positive integer; i, j, l: integer 1..n -->\n$$\n"
            "e^{s_2} v_3 + e^{s_3} v_2 = e^{s_2} v_2 + e^{s_3} v_3\n$$\n")
    (step,) = check_text(text, "md", "x.md").chains[0].steps
    assert step.verdict.verdict == "false" and step.verdict.counterexample, step
