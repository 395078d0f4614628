"""Rounding decisions with integer arithmetic: a rational, or every point of an arb ball.

Rounding is half away from zero (0.0625 to three places is 0.063).  A ball is first
enclosed in a decimal interval by arb's own rigorous conversion, then both ends are rounded
with integers; rounding is monotone, so equal roundings of both ends are the rounding of
every point of the ball, the exact value included.  The precision loop, the enclosures and
the exact proofs are in :mod:`symbolic_attn.exact.certified`.

>>> rational_decimal(Fraction(1, 16), 3), rational_decimal(Fraction(-2, 3), 30, True)
('0.063', '-0.666666666666666666666666666667')
"""

from __future__ import annotations

import operator
from fractions import Fraction
from typing import SupportsIndex, cast

import flint

from symbolic_attn.errors import DigitsError, UndecidedError, shown

__all__ = ["check_digits", "rational_decimal", "quotient_decimal", "certified_decimal", "MAX_DIGITS"]

#: Decimals are shown up to about 10**3010 (2**10000) and, with significant digits, down to
#: about 10**-22000; anything further out is refused rather than printed digit by digit.
#: (Places after the point need no lower limit: a tiny value rounds to 0.000.)
MAX_DECIMAL_EXPONENT = 3010
MIN_DECIMAL_EXPONENT = -22_000
#: The most digits (places, or significant digits) a decimal may be asked for.
MAX_DIGITS = 1000


def check_digits(digits: SupportsIndex, significant: bool = False) -> int:
    """``digits`` as an int, if it is a valid digit count: 0..MAX_DIGITS places after the
    point, or 1..MAX_DIGITS significant digits; otherwise a :class:`DigitsError`.

    >>> check_digits(3)
    3
    >>> check_digits(-3)
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.DigitsError: digit count -3 is outside 0..1000 (places after the point)
    >>> check_digits(0, significant=True)
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.DigitsError: digit count 0 is outside 1..1000 (significant digits)
    """
    if not isinstance(significant, bool):
        raise DigitsError(f"significant must be True or False, got {shown(significant)!r} ({type(significant).__name__})")
    # bool is an int, and a float or a string is not a count; NumPy integers are.
    if isinstance(digits, bool) or not hasattr(type(digits), "__index__"):
        raise DigitsError(f"digit count must be a whole number, got {shown(digits)!r} ({type(digits).__name__})")
    digits = operator.index(digits)
    lowest = 1 if significant else 0
    if not lowest <= digits <= MAX_DIGITS:
        what = "significant digits" if significant else "places after the point"
        # Not str(digits): Python refuses to print an int of more than 4300 digits.
        count = digits if digits.bit_length() <= 64 else f"about {'-' if digits < 0 else ''}10^{int(digits.bit_length() * 0.30103)}"
        raise DigitsError(f"digit count {count} is outside {lowest}..{MAX_DIGITS} ({what})")
    return digits


# Rounding works on exact fractions given as integer pairs (num, den > 0): plain integer
# arithmetic, because this runs for every displayed entry.


def _round_half_away(num: int, den: int, places: int) -> int:
    """round(num/den * 10**places), ties away from zero."""
    if places >= 0:
        num *= 10**places
    else:
        den *= 10**-places
    magnitude = (2 * abs(num) + den) // (2 * den)
    return magnitude if num >= 0 else -magnitude


def _decimal_exponent(num: int, den: int) -> int:
    """floor(log10(|num/den|)) for a nonzero fraction, computed exactly.

    Estimated from bit lengths (str() of a huge integer is slow, or refused), then
    corrected by exact integer comparisons.
    """
    num = abs(num)

    def at_least(power: int) -> bool:  # num/den >= 10**power
        return cast(bool, num >= den * 10**power if power >= 0 else num * 10**-power >= den)  # int ** int is Any to mypy

    guess = (num.bit_length() - den.bit_length()) * 30103 // 100000
    while not at_least(guess):
        guess -= 1
    while at_least(guess + 1):
        guess += 1
    return guess


def _format(integer: int, places: int) -> str:
    """``integer / 10**places`` written as a decimal (places may be negative)."""
    sign = "-" if integer < 0 else ""  # a value that rounds to zero prints without a sign
    digits = str(abs(integer))
    if places <= 0:
        return sign + digits + "0" * -places
    digits = digits.rjust(places + 1, "0")
    return f"{sign}{digits[:-places]}.{digits[-places:]}"


def _scientific(integer: int, significant: int, exponent: int) -> str:
    sign = "-" if integer < 0 else ""
    digits = str(abs(integer))
    mantissa = digits[0] + ("." + digits[1:] if significant > 1 else "")
    return f"{sign}{mantissa}e{exponent:+d}"


def rational_decimal(value: Fraction, digits: int, significant: bool = False) -> str:
    """Round an exact rational: ``digits`` places after the point, or significant digits.

    >>> rational_decimal(Fraction(1, 16), 3), rational_decimal(Fraction(-2, 3), 4, True)
    ('0.063', '-0.6667')
    """
    digits = check_digits(digits, significant)
    return quotient_decimal(value.numerator, value.denominator, digits, significant)


def quotient_decimal(numerator: int, denominator: int, digits: int, significant: bool = False) -> str:
    """:func:`rational_decimal` of ``numerator/denominator`` (denominator > 0), for a digit
    count already checked by :func:`check_digits` (the attention decimals' fast path)."""
    exact = (numerator, denominator)
    return cast(str, _round_interval(exact, exact, digits, significant))  # equal ends always round alike


def _round_interval(low: tuple[int, int], high: tuple[int, int], digits: int, significant: bool) -> str | None:
    """The rounding shared by every point of [low, high], or None if they disagree.

    Rounding half away from zero is a monotone function, so when both endpoints round to
    the same number, so does every point between them, the exact value included.
    """
    if not significant:
        first = _round_half_away(*low, digits)
        if first != _round_half_away(*high, digits):
            return None
        return _format(first, digits)
    if low[0] == 0 and high[0] == 0:
        return "0"
    if (low[0] <= 0 <= high[0]) or (low[0] < 0) != (high[0] < 0):
        return None
    exponent = _decimal_exponent(*low)
    if _decimal_exponent(*high) != exponent:
        return None
    places = digits - 1 - exponent
    first = _round_half_away(*low, places)
    if first != _round_half_away(*high, places):
        return None
    if abs(first) == 10**digits:  # 9.995 -> 10.0: one more digit before the point
        first //= 10
        places -= 1
        exponent += 1
    if -5 <= exponent < 30:
        return _format(first, places)
    return _scientific(first, digits, exponent)


def certified_decimal(ball: flint.arb, digits: int, significant: bool = False) -> str | None:
    """The certified rounding of every point in ``ball``, or None if the ball is too wide.

    ``digits`` must be valid (:func:`check_digits`).  The ball is first enclosed in a
    decimal interval ``[mid - rad, mid + rad] * 10**exp`` of integers (arb's own rigorous
    conversion, a few digits beyond those shown), then both ends are rounded with integer
    arithmetic: rounding is monotone, so equal roundings of both ends are the rounding of
    every point.  An exact ball (radius 0, such as an exact 0 or 1) decides at once.  When
    that does not decide, the conversion is done again with as many digits as the ball is
    accurate to, so that a value close to a rounding boundary is decided once the working
    precision is high enough (and not held back by the conversion).

    >>> certified_decimal(flint.arb(1), 30, significant=True)
    '1.00000000000000000000000000000'
    >>> certified_decimal(flint.arb(0), 3), certified_decimal(flint.arb(0), 3, True)
    ('0.000', '0')
    >>> print(certified_decimal(flint.arb("0.0625 +/- 1e-30"), 3))  # straddles 0.0625
    None
    >>> certified_decimal(flint.arb("999.998499998875 +/- 1e-14"), 3)  # 1.1e-9 below 999.9985
    '999.998'
    """
    text = _certified_decimal(ball, digits, significant)
    if text is not None:
        return text
    accurate = _accurate_digits(ball)
    return _certified_decimal(ball, digits, significant, accurate) if accurate > digits + 8 else None


def _accurate_digits(ball: flint.arb) -> int:
    """Decimal digits ``ball`` determines (its relative accuracy, at most the working precision),
    at most :data:`MAX_CONVERSION_DIGITS`."""
    bits = min(ball.rel_accuracy_bits(), flint.ctx.prec)
    return cast(int, max(0, min(bits * 30103 // 100000 + 2, MAX_CONVERSION_DIGITS)))  # flint is untyped


#: The most decimal digits a ball is converted to (Python prints integers of up to 4300
#: digits): a value closer than that to a rounding boundary is left to the exact proof.
MAX_CONVERSION_DIGITS = 4000


def _certified_decimal(ball: flint.arb, digits: int, significant: bool = False, more: int = 0) -> str | None:
    """:func:`certified_decimal`, converting with at least ``more`` decimal digits."""
    # Enough digits that the conversion never hides the answer: two beyond the last one
    # shown (arb adds a few more); for places, first a coarse look at the magnitude.
    mid, rad, exp10 = ball.mid_rad_10exp(max(digits + 2 if significant else 8, more))
    mid, rad, exp10 = int(mid), int(rad), int(exp10)
    if not (mid or rad):  # arb's answer for an exact 0, and for infinities and NaN
        if not ball.is_finite():
            return None
        return "0" if significant else _format(0, digits)
    if significant:
        # The common case first (it runs for every entry of a stage): the ends of the
        # interval have the same number of digits, so both round at the same place.
        size = mid if mid > 0 else -mid
        if rad >= size:
            return None  # the ball reaches 0: no leading digit yet
        low, high = size - rad, size + rad
        length = len(str(low))
        exponent = length - 1 + exp10
        if length > digits and high < _power10(length) and MIN_DECIMAL_EXPONENT <= exponent <= MAX_DECIMAL_EXPONENT:
            unit = _power10(length - digits)
            first, remainder = divmod(low, unit)
            first += 2 * remainder >= unit
            last, remainder = divmod(high, unit)
            last += 2 * remainder >= unit
            if first != last:
                return None
            if first < _power10(digits):
                first = first if mid > 0 else -first
                if -5 <= exponent < 30:
                    return _format(first, digits - 1 - exponent)
                return _scientific(first, digits, exponent)
    top = abs(mid) + rad  # |x| <= top * 10**exp10
    top_exponent = len(str(top)) - 1 + exp10  # |x| < 10**(top_exponent + 1)
    if not significant and top_exponent < -digits - 1:
        return _format(0, digits)  # below half a unit of the last place: rounds to zero
    if top_exponent > MAX_DECIMAL_EXPONENT or (significant and top_exponent < MIN_DECIMAL_EXPONENT):
        raise UndecidedError(
            f"a value of magnitude about 10^{top_exponent} is too large or too small to show as a decimal"
        )
    if not significant and max(top_exponent + digits + 3, more) > 8:
        mid, rad, exp10 = ball.mid_rad_10exp(max(top_exponent + digits + 3, more))
        mid, rad, exp10 = int(mid), int(rad), int(exp10)
    low, high = mid - rad, mid + rad  # the ball lies in [low, high] * 10**exp10
    if not significant:
        first = _round_scaled(low, exp10 + digits)
        if first != _round_scaled(high, exp10 + digits):
            return None
        return _format(first, digits)
    if low <= 0 <= high:
        return None
    rounded = _round_significant(low, exp10, digits)
    if rounded != _round_significant(high, exp10, digits):
        return None
    first, places, exponent = rounded
    if -5 <= exponent < 30:
        return _format(first, places)
    return _scientific(first, digits, exponent)


_POWERS_OF_TEN = [10**k for k in range(64)]


def _power10(k: int) -> int:
    return _POWERS_OF_TEN[k] if k < 64 else cast(int, 10**k)


def _round_scaled(value: int, shift: int) -> int:
    """round(value * 10**shift), ties away from zero."""
    if shift >= 0:
        return cast(int, value * 10**shift)
    unit: int = 10**-shift
    quotient, remainder = divmod(abs(value), unit)
    if 2 * remainder >= unit:
        quotient += 1
    return quotient if value >= 0 else -quotient


def _round_significant(value: int, exp10: int, digits: int) -> tuple[int, int, int]:
    """``value * 10**exp10`` (nonzero) rounded to ``digits`` significant digits, as
    (integer, places, decimal exponent of the rounded value): 0.9999996 and 1.0000001
    both give (100000, 5, 0), which is what lets a ball around 1 decide."""
    exponent = len(str(abs(value))) - 1 + exp10  # floor(log10 |value * 10**exp10|)
    places = digits - 1 - exponent
    rounded = _round_scaled(value, exp10 + places)
    if abs(rounded) == 10**digits:  # 9.995 -> 10.0: one more digit before the point
        rounded //= 10
        places -= 1
        exponent += 1
    return rounded, places, exponent
