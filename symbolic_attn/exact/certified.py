"""Certified decimals: rigorous interval bounds, raised in precision until the answer is sure.

A decimal shown by symbolic_attn is never "what floating point happened to print".  Each
exact value is enclosed in an interval by python-flint's ``arb`` ball arithmetic (every
operation rounds outward, so the true value is always inside), and a digit is printed only
when *every* point of the interval rounds to it.  If the interval is too wide, the
precision is doubled and the value recomputed.  A value that sits exactly on a rounding
boundary can only be rational; rationals are rounded exactly, with integer arithmetic.

Rounding is half away from zero (0.0625 to three places is 0.063).

>>> import sympy
>>> decimal_string(sympy.Rational(1, 6), 3)
'0.167'
>>> decimal_string(sympy.sqrt(2) / 2, 30, significant=True)
'0.707106781186547524400844362105'
>>> decimal_string(sympy.exp(1) - sympy.E, 3)
'0.000'
>>> decimal_string(sympy.erf(1), 20, significant=True), decimal_string(sympy.tanh(1), 5)  # GELU's functions
('0.84270079294971486934', '0.76159')
>>> within(sympy.Rational(1, 8), Fraction(13, 100), Fraction(1, 200))  # halfway passes
True
>>> within(sympy.sqrt(2), Fraction(1414, 1000), Fraction(1, 2000))
True
>>> within(sympy.sqrt(2), Fraction(1415, 1000), Fraction(1, 2000))
False
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import flint
import sympy

from symbolic_attn.errors import FloatInputError, UndecidedError, shown
# The rounding itself (integers only) lives in exact.rounding; re-exported here.
from symbolic_attn.exact.intervals import (
    MAX_PRECISION,
    MAX_ZERO_TEST_OPS,
    START_PRECISION,
    certified_sign,
    check_precision,
    proved_zero,
    to_arb,
    with_rising_precision,
    working_precision,
)
from symbolic_attn.exact.rounding import (
    MAX_DIGITS,
    certified_decimal,
    check_digits,
    quotient_decimal,
    rational_decimal,
)

__all__ = [
    "to_arb",
    "check_digits",
    "rational_decimal",
    "quotient_decimal",
    "certified_decimal",
    "decimal_string",
    "exact_value",
    "within",
    "proved_zero",
    "with_rising_precision",
    "certified_sign",
    "working_precision",
    "check_precision",
    "START_PRECISION",
    "MAX_PRECISION",
    "MAX_DIGITS",
]

def _certain_le(left: flint.arb, right: flint.arb) -> bool | None:
    """True/False when the balls decide ``left <= right``; None when they overlap."""
    if left < right:
        return True
    if left > right:
        return False
    return None


def exact_value(value: Any) -> sympy.Expr:
    """``value`` as an exact SymPy expression, for the functions that round or compare it.

    A SymPy expression is taken as it is (a SymPy ``Float`` inside is refused); an int,
    Fraction or Decimal is converted exactly; text is read by the one input language
    (:func:`~symbolic_attn.exact.parse.parse_expression`, never ``sympify``/``eval``); a
    binary float is a :class:`FloatInputError`; anything else (None, a list...) a typed
    error naming it (:func:`~symbolic_attn.exact.convert.to_exact`).

    >>> exact_value("1/3"), exact_value(2)
    (1/3, 2)
    >>> exact_value(0.5)
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.FloatInputError: binary float 0.5 refused: write the string '0.5' (exactly 1/2) or Fraction(1, 2)
    """
    if isinstance(value, sympy.Expr) and not isinstance(value, sympy.MatrixBase):
        if value.has(sympy.Float):
            raise FloatInputError(f"SymPy Float in {shown(value)} refused: use Rational or a decimal string")
        return value
    from symbolic_attn.exact.convert import to_exact  # above this module; the enclosures are in .intervals

    return to_exact(value)


def decimal_string(expr: Any, digits: int, significant: bool = False) -> str:
    """The correctly rounded decimal of an exact real value, certified.

    ``expr`` is an exact value (see :func:`exact_value`: text such as ``'1/3'`` is read by
    the one input language, a binary float is refused with :class:`FloatInputError`).

    Raises :class:`UndecidedError` for symbolic values, or if no precision up to
    :data:`MAX_PRECISION` separates the value from a rounding boundary and it cannot be
    proved to be the rational it seems to be.
    """
    digits = check_digits(digits, significant)
    expr = exact_value(expr)
    if expr is sympy.S.NegativeInfinity:  # a blocked score of the masked stage, printed as it is read
        return "-inf"
    if expr.is_Rational:
        return rational_decimal(Fraction(int(expr.p), int(expr.q)), digits, significant)
    text = with_rising_precision(lambda: certified_decimal(to_arb(expr), digits, significant))
    if text is not None:
        return text
    # Irrational values are never on a boundary; a value that stays on one may be an exact
    # rational (such as 0) in disguise.  Only a proof may say so.
    exact = _proved_rational(expr)
    if exact is not None:
        return rational_decimal(exact, digits, significant)
    raise UndecidedError(
        f"cannot certify {digits} digits of {shown(expr)}: not decided at {MAX_PRECISION} bits of precision "
        "(a value extremely close to a rounding boundary)"
    )


def within(expr: Any, center: Fraction, radius: Fraction) -> bool:
    """Certified ``|expr - center| <= radius`` (the boundary counts as inside).

    The answer comes from intervals of rising precision; when the distance sits on the
    boundary (possible only if it is rational), it is decided exactly.
    """
    expr = exact_value(expr)
    if expr.is_Rational:
        return abs(Fraction(int(expr.p), int(expr.q)) - center) <= radius
    inside = with_rising_precision(lambda: _certain_le(abs(to_arb(expr) - to_arb(center)), to_arb(radius)))
    if inside is not None:
        return inside
    exact = _proved_rational(expr)
    if exact is not None:
        return abs(exact - center) <= radius
    raise UndecidedError(
        f"cannot decide whether |{shown(expr)} - {center}| <= {radius} at {MAX_PRECISION} bits of precision"
    )


def _proved_rational(expr: Any) -> Fraction | None:
    """The rational ``expr`` equals, when exact algebra proves it; otherwise None.

    Reached only when intervals of :data:`MAX_PRECISION` bits cannot separate ``expr`` from
    a rational boundary, which in practice means ``expr`` is that rational in disguise.
    ``simplify`` only *proposes* the rational; :func:`proved_zero` must confirm it.
    """
    # simplify's cost grows without bound with the expression: only small ones are tried
    # (a larger value on a boundary stays undecided, which the callers report honestly).
    if expr.count_ops() > MAX_ZERO_TEST_OPS:
        return None
    candidate = sympy.simplify(expr)
    if not candidate.is_Rational or not proved_zero(expr - candidate):
        return None
    return Fraction(int(candidate.p), int(candidate.q))
