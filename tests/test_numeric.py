"""Certified decimals: every printed digit is proved, including on rounding boundaries."""

from fractions import Fraction

import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from symbolic_attn.errors import UndecidedError
from symbolic_attn.exact.certified import decimal_string, rational_decimal, within

R = sympy.Rational


@pytest.mark.parametrize(
    "value, digits, significant, expected",
    [
        (R(1, 16), 3, False, "0.063"),  # exactly halfway: away from zero
        (R(-1, 16), 3, False, "-0.063"),
        (R(1, 6), 3, False, "0.167"),
        (R(-1, 10**6), 3, False, "0.000"),  # no "-0.000"
        (R(9995, 10000), 3, True, "1.00"),  # carry into a new digit
        (R(1, 3), 30, True, "0.333333333333333333333333333333"),
        (sympy.Integer(0), 30, True, "0"),
        (R(1, 10**40), 3, True, "1.00e-40"),
        (sympy.sqrt(2), 3, False, "1.414"),
        (sympy.exp(1), 30, True, "2.71828182845904523536028747135"),
        (sympy.pi * 10**40, 3, True, "3.14e+40"),
    ],
    ids=lambda v: str(v)[:20],
)
def test_rounding(value, digits, significant, expected):
    assert decimal_string(value, digits, significant) == expected


def test_value_hiding_on_a_boundary_is_proved_rational():
    # (sqrt2 + 1)(sqrt2 - 1)/16 is 1/16 = 0.0625 exactly, on the 3-place boundary: intervals
    # can never decide it, so the exact value is proved and then rounded exactly.
    hidden = (sympy.sqrt(2) + 1) * (sympy.sqrt(2) - 1) / 16
    assert not hidden.is_Rational
    assert decimal_string(hidden, 3) == "0.063"


def test_within_decides_boundaries_exactly():
    assert within(R(1, 8), Fraction(13, 100), Fraction(1, 200))  # |0.125-0.13| = 0.005: halfway passes
    assert not within(R(1, 8) + R(1, 10**30), Fraction(12, 100), Fraction(1, 200))
    assert within(sympy.sqrt(2), Fraction(1414, 1000), Fraction(1, 2000))
    assert not within(sympy.sqrt(2), Fraction(1415, 1000), Fraction(1, 2000))


def test_symbolic_values_have_no_decimal():
    with pytest.raises(UndecidedError, match=r"free symbols"):
        decimal_string(sympy.Symbol("x") + 1, 3)


@given(st.fractions(max_denominator=10**9), st.integers(0, 12))
def test_rational_rounding_matches_integer_arithmetic(value, places):
    text = rational_decimal(value, places)
    scaled = value * 10**places
    nearest = int(abs(scaled) + Fraction(1, 2)) * (1 if scaled >= 0 else -1)
    assert Fraction(text) == Fraction(nearest, 10**places)
    assert abs(Fraction(text) - value) <= Fraction(1, 2 * 10**places)


@given(st.integers(2, 10**6).filter(lambda k: int(k**0.5) ** 2 != k), st.integers(0, 25))
def test_irrational_rounding_is_within_half_an_ulp(k, places):
    text = decimal_string(sympy.sqrt(k), places)
    # (c - h)^2 < k < (c + h)^2, checked in exact integers.
    c, h = Fraction(text), Fraction(1, 2 * 10**places)
    assert (c - h) ** 2 < k < (c + h) ** 2


def test_values_extremely_close_to_a_boundary_are_still_decided():
    # 1/8 + e^-10000 needs about 14,400 bits to separate from the boundary 0.125 +- 0.005.
    above, below = R(1, 8) + sympy.exp(-10000), R(1, 8) - sympy.exp(-10000)
    assert within(above, Fraction(13, 100), Fraction(1, 200)) and not within(above, Fraction(12, 100), Fraction(1, 200))
    assert within(below, Fraction(12, 100), Fraction(1, 200)) and not within(below, Fraction(13, 100), Fraction(1, 200))


@pytest.mark.parametrize("value", [sympy.pi ** (sympy.pi ** (sympy.pi**sympy.pi)), sympy.exp(-(10**6))], ids=["huge", "tiny"])
def test_magnitudes_beyond_printing_are_refused_not_hung(value):
    with pytest.raises(UndecidedError, match=r"too large or too small to show as a decimal"):
        decimal_string(value, 3, significant=True)


def test_tiny_values_round_to_zero_places_without_being_expanded():
    assert decimal_string(sympy.exp(-(10**6)), 3) == "0.000"
    assert decimal_string(-sympy.exp(-(10**6)), 30) == "0." + "0" * 30


def test_tiny_weights_keep_their_significant_digits():
    import mpmath

    from symbolic_attn.model.attention import attention_from_scores

    weights = attention_from_scores([[0, 8000]], [[1], [2]]).decimals("weights", 30, significant=True)
    with mpmath.workdps(60):  # an independent evaluation, to well beyond the 30 digits shown
        expected = mpmath.nstr(1 / (1 + mpmath.exp(8000)), 30, min_fixed=1, max_fixed=0)
    from decimal import Decimal

    assert Decimal(weights[0][0]) == Decimal(expected)  # mpmath drops the trailing zero
    assert weights[0][0] == "4.40701748898901325239212049070e-3475"
    assert weights[0][1] == "1.00000000000000000000000000000"


# -- certified_decimal: rounding a ball from arb's decimal enclosure -----------------------

import flint  # noqa: E402 -- imports of the section below

from symbolic_attn.errors import DigitsError  # noqa: E402 -- imports of the section below
from symbolic_attn.exact.certified import certified_decimal, check_digits, working_precision  # noqa: E402 -- imports of the section below


def ball(text):
    with working_precision(256):  # the default 53 bits would widen these balls
        return flint.arb(text)


@pytest.mark.parametrize(
    "ball, digits, significant, expected",
    [
        (flint.arb(1), 30, True, "1." + "0" * 29),  # exact: decided at once
        (flint.arb(0), 30, True, "0"),
        (flint.arb(0), 3, False, "0.000"),
        (ball("1 +/- 1e-40"), 30, True, "1." + "0" * 29),  # both ends round to 1.000...
        (ball("0.99999999999999999999999999999999 +/- 1e-40"), 30, True, "1." + "0" * 29),
        (ball("1 +/- 1e-40"), 3, False, "1.000"),
        (ball("-0.0625 +/- 1e-40"), 3, False, None),  # straddles the boundary -0.0625
        (ball("0.0625 +/- 1e-40"), 2, True, None),
        (ball("0 +/- 1e-40"), 3, True, None),  # no leading digit
        (ball("0 +/- 1e-40"), 3, False, "0.000"),
        (ball("123456.5 +/- 1e-20"), 3, True, "123000"),
        (ball("1.2351e40 +/- 1e10"), 3, True, "1.24e+40"),
        (ball("-0.0000012345 +/- 1e-30"), 3, True, "-1.23e-6"),
        (ball("9.9996 +/- 1e-30"), 4, True, "10.00"),  # carry into a new digit
        (ball("inf"), 3, False, None),
        (ball("nan"), 3, True, None),
    ],
    ids=["one", "zero-sig", "zero-places", "around-1", "just-below-1", "around-1-places", "boundary-places",
         "boundary-sig", "reaches-zero-sig", "reaches-zero-places", "fixed", "scientific", "tiny-negative", "carry", "inf", "nan"],
)
def test_certified_decimal_of_balls(ball, digits, significant, expected):
    assert certified_decimal(ball, digits, significant) == expected


@given(st.fractions(min_value=-10**6, max_value=10**6, max_denominator=10**6), st.integers(1, 40), st.booleans())
def test_certified_decimal_agrees_with_exact_rounding(value, digits, significant):
    """A narrow ball around a rational rounds like the rational, unless it straddles a boundary."""
    exact = rational_decimal(value, digits, significant)
    with_ball = certified_decimal(flint.arb(flint.fmpq(value.numerator, value.denominator)), digits, significant)
    assert with_ball in (exact, None)
    if value.denominator & (value.denominator - 1) == 0:  # a dyadic rational: the ball is exact
        assert with_ball == exact


@pytest.mark.parametrize("digits, significant", [(-1, False), (0, True), (1001, True), (2.0, False), (False, False)],
                         ids=["negative", "zero-sig", "too-many", "float", "bool"])
def test_digit_counts_are_checked_everywhere(digits, significant):
    with pytest.raises(DigitsError, match=r"^digit count "):
        check_digits(digits, significant)
    with pytest.raises(DigitsError, match=r"^digit count "):
        rational_decimal(Fraction(1, 3), digits, significant)
    with pytest.raises(DigitsError, match=r"^digit count "):
        decimal_string(sympy.sqrt(2), digits, significant)


def test_values_just_beside_a_rounding_boundary_are_decided():
    # Found by the property above: sqrt(999997) = 999.99849999887..., 1.1e-9 below the
    # boundary 999.9985; the decimal conversion must use the digits the precision gives.
    assert decimal_string(sympy.sqrt(999997), 3) == "999.998"
    assert decimal_string(sympy.sqrt(999997), 7, significant=True) == "999.9985"
    tiny = sympy.sqrt(2) / sympy.Integer(10) ** 40
    assert decimal_string(sympy.Rational(1, 16) + tiny, 3) == "0.063"  # just above the tie 0.0625
    assert decimal_string(sympy.Rational(1, 16) - tiny, 3) == "0.062"  # just below it
    assert decimal_string(sympy.Rational(1, 16) - tiny, 2, significant=True) == "0.062"
