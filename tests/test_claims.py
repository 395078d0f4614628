"""Claims: parsing claimed text (never eval) and certified judging by written precision."""

from fractions import Fraction

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from symbolic_attn.grading.claims import Element, judge_element, judge_values, parse_claimed, parse_rule
from symbolic_attn.errors import ParseError

R = sympy.Rational


def judge(exact, text, rule=None):
    (element,) = parse_claimed(text).elements
    return judge_element(exact, element, rule).ok


# ------------------------------------------------------------------ parsing


@pytest.mark.parametrize(
    "text, shape, kinds",
    [
        ("0.140", None, ["decimal"]),
        ("-3", None, ["exact"]),
        ("2/6", None, ["exact"]),
        ("sqrt(2)/2", None, ["exact"]),
        ("[0.401, 0.198, 1/2]", (3,), ["decimal", "decimal", "exact"]),
        ("[[1, 0], [0.5, 0.50]]", (2, 2), ["exact", "exact", "decimal", "decimal"]),
        ("[log(8, 2), 1]", (2,), ["exact", "exact"]),
        ("1.5e-3", None, ["decimal"]),
    ],
    ids=["decimal", "integer", "fraction", "expression", "vector", "matrix", "comma-in-call", "scientific"],
)
def test_parse_claimed(text, shape, kinds):
    claimed = parse_claimed(text)
    assert claimed.shape == shape
    assert [e.kind for e in claimed.elements] == kinds


def test_decimals_keep_their_written_precision_and_are_exact():
    a, b = parse_claimed("[0.5, 0.50]").elements
    assert (a.value, a.decimals, a.half_unit) == (R(1, 2), 1, R(1, 20))
    assert (b.value, b.decimals, b.half_unit) == (R(1, 2), 2, R(1, 200))
    assert isinstance(a.value, sympy.Rational)


@pytest.mark.parametrize(
    "text, message",
    [
        ("", r"^empty expression$"),
        ("[1, [2]]", r"^a matrix entry must be a number, not a matrix"),
        ("[[1], [2, 3]]", r"^row 2 has 2 entries, row 1 has 1"),
        ("[[[1]]]", r"^a matrix entry must be a number, not a matrix"),
        ("[1,,2]", r"^missing entry before ','"),
        ("[1, 2", r"^unclosed '\[' opened at column 1"),
        ("1]", r"^('\]' at column 2 closes no bracket|a list needs brackets|malformed)"),
        ("0.330, 0.670", r"^a list needs brackets: write \[0\.330, 0\.670\]"),
        ("0,245", r"^a decimal comma is not read: write 0\.245 \(or \[0, 245\] for a list\)$"),
        ("0.\u09e7\u09ec\u09ed", r"^non-ASCII character"),
        ("\U0001d7ce.\U0001d7cf", r"^non-ASCII character"),
        ("__import__('os').system('true')", r"^only named functions may be called"),
        ("9**9**9**9", r"exceeds the limit"),
        ("1" * 10**6, r"exceeds the limit"),
        ("(" * 5000 + "1" + ")" * 5000, r"exceeds the limit|nested"),
        ("0." + "1" * 500, r"^a number with 500 digits at column 3 exceeds the limit of 400$"),
    ],
    ids=["empty", "mixed", "ragged", "deep", "missing", "unclosed", "unopened", "bare-list", "decimal-comma", "bengali", "math-bold", "code", "tower", "megadigits", "parens", "long-decimal"],
)
def test_parse_claimed_refuses(text, message):
    with pytest.raises(ParseError, match=message):
        parse_claimed(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="[](),.0123456789+-*/^eE _abcsqrtlnxp@", max_size=60))
def test_parse_claimed_fuzz_only_parse_errors(text):
    try:
        claimed = parse_claimed(text)
    except ParseError:
        return
    assert all(isinstance(e.value, sympy.Expr) and not e.value.has(sympy.Float) for e in claimed.elements)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_parse_claimed_fuzz_any_text(text):
    try:
        parse_claimed(text)
    except ParseError:
        pass


# ------------------------------------------------------------------ judging


@pytest.mark.parametrize(
    "exact, text, ok",
    [
        (R(1, 3), "1/3", True),
        (R(1, 3), "2/6", True),
        (R(1, 3), "0.333", True),
        (R(1, 3), "0.334", False),
        (R(1, 3), "0", False),
        (sympy.sqrt(2) / 2, "1/sqrt(2)", True),
        (sympy.sqrt(2) / 2, "0.7071", True),
        (sympy.sqrt(2) / 2, "0.7072", False),
        (sympy.sqrt(2) / 2, "0.707", True),
        (sympy.sqrt(2) / 2, "707/1000", False),  # an exact claim must be exact
        (sympy.Integer(2), "2", True),
        (sympy.Integer(2), "2.0", True),
        (sympy.Integer(2), "1.9", False),
    ],
)
def test_judge_by_written_form(exact, text, ok):
    assert judge(exact, text) is ok


def test_exactly_halfway_passes_either_way():
    # 1/8 = 0.125 lies exactly half a unit from 0.12 and from 0.13.
    assert judge(R(1, 8), "0.12") and judge(R(1, 8), "0.13")
    assert not judge(R(1, 8), "0.14") and not judge(R(1, 8), "0.11")


def test_halfway_value_in_disguise_is_proved_not_guessed():
    # (sqrt 2 + 1)(sqrt 2 - 1)/8 is exactly 1/8, written so that intervals never settle it.
    disguised = sympy.Mul(sympy.sqrt(2) + 1, sympy.sqrt(2) - 1, R(1, 8), evaluate=False)
    assert judge(disguised, "0.13") and judge(disguised, "0.12")
    assert not judge(disguised, "0.14")


@pytest.mark.parametrize("sign, passes, fails", [(1, "0.13", "0.12"), (-1, "0.12", "0.13")])
def test_irrational_a_hair_from_the_boundary(sign, passes, fails):
    # 1/8 +- sqrt(2) 10^-40: 0.125 rounds either way, this one only one way.
    x = R(1, 8) + sign * sympy.sqrt(2) * R(1, 10**40)
    assert judge(x, passes) and not judge(x, fails)


def test_rules_tolerance_relative_sig_figs():
    x = sympy.sqrt(2)  # 1.41421356...
    assert judge(x, "1.41", parse_rule("tolerance", "0.005"))
    assert not judge(x, "1.41", parse_rule("tolerance", "0.004"))
    assert judge(x, "1.4", parse_rule("relative", "0.02"))
    assert not judge(x, "1.4", parse_rule("relative", "0.005"))
    assert judge(x, "1.41", parse_rule("sig_figs", 3))
    assert not judge(x, "1.42", parse_rule("sig_figs", 3))
    assert judge(R(1432), "1400", parse_rule("sig_figs", 2))
    # On the boundary of an absolute tolerance: |1/8 - 0.1| = 0.025 exactly.
    assert judge(R(1, 8), "0.1", parse_rule("tolerance", "0.025"))
    assert not judge(R(1, 8), "0.1", parse_rule("tolerance", "0.0249"))


def test_relative_boundary_is_decided_exactly():
    # |x - 1| <= x/2 at x = 2/3 exactly (the lower boundary), written irrationally.
    x = sympy.Mul(sympy.sqrt(2) + 1, sympy.sqrt(2) - 1, R(2, 3), evaluate=False)
    assert judge(x, "1", parse_rule("relative", "1/2"))


@pytest.mark.parametrize("kind, amount, message", [
    ("sig_figs", 0, r"^sig_figs must be an integer from 1 to 50, got 0$"),
    ("tolerance", "-1", r"^tolerance must be a non-negative rational number"),
    ("relative", "sqrt(2)", r"^relative must be a non-negative rational number"),
])
def test_parse_rule_refuses(kind, amount, message):
    with pytest.raises(ParseError, match=message):
        parse_rule(kind, amount)


def test_symbolic_values_exact_only():
    a, b = sympy.symbols("a b", real=True)
    claimed = parse_claimed("[(a + b)/2, a]", {"a": a, "b": b})
    verdicts = judge_values([a / 2 + b / 2, b], claimed)
    assert [v.ok for v in verdicts] == [True, False]
    undecided = judge_element(a, Element("0.5", R(1, 2), "decimal", 1, R(1, 20)))
    assert not undecided.ok and undecided.note.startswith("undecided")
    assert undecided.state == "undecided"


@settings(max_examples=300, deadline=None)
@given(st.fractions(min_value=-10, max_value=10, max_denominator=10**6), st.integers(0, 5), st.integers(-2, 2))
def test_decimal_judging_matches_exact_reference(x, k, shift):
    """Against an independent integer-arithmetic reference: pass iff |x - c| <= 1/2 10^-k."""
    unit = Fraction(1, 10**k)
    nearest = (x / unit + Fraction(1, 2)).__floor__() + shift
    c = nearest * unit
    text = ("-" if c < 0 else "") + f"{abs(nearest) // 10**k}" + (f".{abs(nearest) % 10**k:0{k}d}" if k else "")
    if k == 0:
        text += ".0"  # written as a decimal with 1 place: adjust the reference
        unit = Fraction(1, 10)
    expected = abs(x - c) <= unit / 2
    assert judge(R(x.numerator, x.denominator), text) is expected
