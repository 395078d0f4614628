"""Issue 22: steps about random variables -- each rule of expectation proves its true step
and refuses a wrong variant; a step that needs what was not declared (independence, a
moment) is never proved; a false one gets a distribution the declarations allow."""

import json

import pytest
import sympy

from symbolic_attn.steps.declarations import parse_declarations
from symbolic_attn.steps.decide import decide_step
from symbolic_attn.steps.expectation import reduce_random
from symbolic_attn.steps.grammar import read_math
from symbolic_attn.steps.report import check_text

INDEPENDENT = "n: positive integer; i, l: integer 1..n; q, k: random vector n, all components independent, mean 0, variance 1"
DEPENDENT = "n: positive integer; i, l: integer 1..n; q, k: random vector n, mean 0, variance 1"
SCALARS = "X, Y: random, independent, mean 0, variance 1"
UNRELATED = "X, Y: random, mean 0, variance 1"
SYMBOLIC = "m: real; s: positive; a: real; X: random, mean m, variance s"


def decide(left: str, right: str, symbols: str, relation: str = "="):
    declarations = parse_declarations(symbols)
    sides = [read_math(text, declarations).expr for text in (left, right)]
    return decide_step(*sides, relation, tuple(declarations.assumptions()), randomness=declarations.randomness(),
                       ranges=declarations.index_ranges())


# (left, right, declarations): each true under its declarations, by the rule named
PROVED = {
    "definition of Var": (r"\operatorname{Var}(X)", r"\mathbb{E}[X^2] - \mathbb{E}[X]^2", SYMBOLIC),
    "declared mean": (r"\mathbb{E}[X]", "m", SYMBOLIC),
    "declared second moment": (r"\mathbb{E}[X^2]", "s + m^2", SYMBOLIC),
    "linearity": (r"\mathbb{E}[2X + 3]", "2m + 3", SYMBOLIC),
    "constant out of Var, squared": (r"\operatorname{Var}(a X + 3)", r"a^2 s", SYMBOLIC),
    "independent product": (r"\mathbb{E}[X Y]", r"\mathbb{E}[X]\,\mathbb{E}[Y]", SCALARS),
    "independent variances add": (r"\operatorname{Var}(X + Y)", r"\operatorname{Var}(X) + \operatorname{Var}(Y)",
                                  SCALARS),
    "the diagonal of a double sum": (r"\sum_{i=1}^{n} \sum_{l=1}^{n} \mathbb{E}[q_i q_l]", "n", INDEPENDENT),
    "square of a sum": (r"\mathbb{E}\left[\left(\sum_{i=1}^{n} q_i\right)^2\right]", "n", INDEPENDENT),
    "variance of the dot product": (r"\operatorname{Var}(q \cdot k)", "n", INDEPENDENT),
    "scaled dot product": (r"\operatorname{Var}\left(\frac{q \cdot k}{\sqrt{n}}\right)", "1", INDEPENDENT),
    "one product's variance": (r"\operatorname{Var}(q_i k_i)", "1", INDEPENDENT),
    "second moments need no independence": (r"\mathbb{E}[q_i^2] + \mathbb{E}[k_l^2]", "2", DEPENDENT),
    "an expectation of a number": (r"\mathbb{E}[3]", "3", SCALARS),
    "the variance of any sum": (r"\operatorname{Var}(X + Y)",
                                r"\operatorname{Var}(X) + \operatorname{Var}(Y) + 2 \operatorname{Cov}(X, Y)", UNRELATED),
    "independent: no covariance": (r"\operatorname{Cov}(X, Y)", "0", SCALARS),
    "an unknown moment is the same unknown": (r"\mathbb{E}[q_i^4] + \mathbb{E}[q_i^4]", r"2\mathbb{E}[q_i^4]",
                                              INDEPENDENT),
}

# (left, right, declarations): each false, refuted at values or in a distribution allowed
FALSE = {
    "variances of dependent terms": (r"\operatorname{Var}(X + Y)", r"\operatorname{Var}(X) + \operatorname{Var}(Y)",
                                     UNRELATED),
    "a product of dependent variables": (r"\mathbb{E}[X Y]", r"\mathbb{E}[X]\,\mathbb{E}[Y]", UNRELATED),
    "the constant not squared": (r"\operatorname{Var}(a X)", r"a \operatorname{Var}(X)", SYMBOLIC),
    "i may equal l": (r"\mathbb{E}[q_i q_l]", "0", INDEPENDENT),
    "the square of a sum is not the sum of squares of n^2": (
        r"\mathbb{E}\left[\left(\sum_{i=1}^{n} q_i\right)^2\right]", "n^2", INDEPENDENT),
    "a fourth moment is not declared 1": (r"\mathbb{E}[q_i^4]", "1", INDEPENDENT),
    "Jensen": (r"\mathbb{E}[\exp(X)]", r"\exp(\mathbb{E}[X])", SYMBOLIC),
    "a random variable is not its mean": (r"\mathbb{E}[X]", "X", SCALARS),
    "a covariance not declared zero": (r"\operatorname{Cov}(X, Y)", "0", UNRELATED),
    "the dot product without independence": (r"\operatorname{Var}(q_i k_i)", r"\mathbb{E}[q_i^2]\,\mathbb{E}[k_i^2]",
                                             DEPENDENT),
    "scaled by sqrt(n), not n": (r"\operatorname{Var}\left(\frac{q \cdot k}{\sqrt{n}}\right)", r"\sqrt{n}",
                                 INDEPENDENT),
}


@pytest.mark.parametrize("name", list(PROVED))
def test_a_true_step_is_proved_by_the_rules_of_expectation(name):
    step = decide(*PROVED[name])
    assert step.verdict == "proved", (name, step)
    assert "rules of expectation" in step.reason


@pytest.mark.parametrize("name", list(FALSE))
def test_a_false_step_is_refuted_with_a_counterexample(name):
    step = decide(*FALSE[name])
    assert step.verdict == "false", (name, step)
    assert step.counterexample, step


@pytest.mark.parametrize("left, right, symbols", [
    # a moment that may differ between components: not proved, and no model refutes it
    (r"\mathbb{E}[q_i^4]", r"\mathbb{E}[q_l^4]", INDEPENDENT),
    # two statements not declared independent: dependence unknown, so not proved
    (r"\mathbb{E}[X Y]", "0", "X: random, mean 0, variance 1; Y: random, mean 0, variance 1"),
    # a delta over a range the index is not known to lie in
    (r"\sum_{l=1}^{2} \mathbb{E}[q_i q_l]", "1", INDEPENDENT),
])
def test_what_the_declarations_do_not_settle_is_undecided(left, right, symbols):
    step = decide(left, right, symbols)
    assert step.verdict == "undecided", step


def test_independence_declared_in_two_statements_is_one_collection():
    two = "X: random, independent, mean 0, variance 1; Y: random, independent, mean 0, variance 1"
    assert decide(r"\mathbb{E}[X Y]", "0", two).verdict == "proved"


def test_named_mistakes_of_variance():
    assert decide(*FALSE["variances of dependent terms"]).diagnosis == "variance_of_sum"
    assert decide(*FALSE["the constant not squared"]).diagnosis == "variance_scale"
    assert decide(*FALSE["a product of dependent variables"]).diagnosis is None


def test_the_counterexample_is_a_distribution_in_the_students_letters():
    step = decide(*FALSE["variances of dependent terms"])
    shown = step.counterexample
    assert shown["X"] == shown["Y"], shown  # the two share one base variable: X = Y
    base = shown["X"]
    assert "probability" in shown[base]
    step = decide(*FALSE["the constant not squared"])
    assert "a" in step.counterexample and set(step.counterexample) <= {"a", "s"}  # values of the letters suffice


def test_the_reduction_is_an_identity_not_a_simplification():
    """Rule 3's cases add up to the whole: E[q_i q_l] is the delta, equal to 1 at i = l."""
    declarations = parse_declarations(INDEPENDENT)
    value = reduce_random(read_math(r"\mathbb{E}[q_i q_l]", declarations).expr, declarations.randomness(),
                          declarations.index_ranges())
    i, other = declarations.symbols["i"], declarations.symbols["l"]
    assert value == sympy.KroneckerDelta(i, other)
    dependent = parse_declarations(DEPENDENT)
    unknown = reduce_random(read_math(r"\mathbb{E}[q_i k_i]", dependent).expr, dependent.randomness(),
                            dependent.index_ranges())
    assert unknown.func.__name__ == "Expectation"  # never factored without independence


def test_the_steps_command_reports_a_distribution_in_json(tmp_path):
    path = tmp_path / "v.md"
    path.write_text(f"<!-- symbols: {UNRELATED} -->\n\n$$\n\\operatorname{{Var}}(X + Y) = "
                    "\\operatorname{Var}(X) + \\operatorname{Var}(Y)\n$$\n", encoding="utf-8")
    report = check_text(path.read_text(encoding="utf-8"), "md", "v.md")
    data = json.loads(json.dumps(report.as_dict()))
    (step,) = data["chains"][0]["steps"]
    assert step["verdict"] == "false" and step["diagnosis"] == "variance_of_sum"
    assert all(isinstance(v, str) for v in step["counterexample"].values())
    assert report.exit_code == 1


@pytest.mark.parametrize("symbols, reason", [
    ("q: random vector 2, independent", "ambiguous for random vectors"),
    ("X: random, mean", "unknown property"),
    ("X: random, variance -1", "at least 0"),
    ("X: random, skewness 0", "unknown property"),
])
def test_bad_random_declarations_are_refused(symbols, reason):
    from symbolic_attn.errors import StepReadError

    with pytest.raises(StepReadError, match=reason):
        parse_declarations(symbols)


def test_an_expectation_inside_an_expectation_is_a_number():
    assert decide(r"\mathbb{E}\left[X \mathbb{E}[Y]\right]", r"\mathbb{E}[X]\,\mathbb{E}[Y]",
                  "X, Y: random").verdict == "proved"


@pytest.mark.parametrize("left", [
    r"\mathbb{E}\left[(X + Y + 1)^{60}\right]",
    r"\mathbb{E}\left[\left(\sum_{i=1}^{n} q_i\right)^{9}\right]",
])
def test_an_expectation_too_large_to_expand_is_undecided_and_says_so(left):
    step = decide(left, "1", INDEPENDENT + "; X, Y: random, independent")
    assert step.verdict in ("undecided", "false"), step
    if step.verdict == "undecided":
        assert "split the step" in step.reason or "too large" in step.reason


@pytest.mark.parametrize("left, right, symbols, verdict", [
    # what SymPy forgets when it builds the value (sqrt(c)**2 is c): the reader keeps it
    (r"\sqrt{c}^2", "c", "c: real", "undecided"),
    (r"\sqrt{c}^2", "c", "c: nonnegative", "proved"),
    (r"e^{\log c}", "c", "c: real", "undecided"),
    (r"e^{\log c}", "c", "c: positive", "proved"),
    (r"c^{1/2} c^{1/2}", "c", "c: real", "undecided"),
    (r"\sqrt{\mathbb{E}[X]}^2", r"\mathbb{E}[X]", "X: random, mean -1", "false"),
    (r"\sqrt{\operatorname{Var}(X)}^2", r"\operatorname{Var}(X)", "X: random, variance 4", "proved"),
    (r"\frac{\mathbb{E}[X]}{\mathbb{E}[X]}", "1", "X: random", "undecided"),
])
def test_a_side_is_decided_only_where_it_is_a_real_number(tmp_path, left, right, symbols, verdict):
    report = check_text(f"% symbols: {symbols}\n\\begin{{align*}}\n{left} &= {right}\n\\end{{align*}}\n", "tex", "d.tex")
    (step,) = report.chains[0].steps
    assert step.verdict.verdict == verdict, step
