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

import operator
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any, SupportsIndex, TypeVar, cast

import flint
import sympy

from symbolic_attn.errors import DigitsError, FloatInputError, UndecidedError, shown
# The rounding itself (integers only) lives in exact.rounding; re-exported here.
from symbolic_attn.exact.rounding import (
    MAX_DIGITS,
    certified_decimal,
    check_digits,
    decimal_text,
    rational_decimal,
)

__all__ = [
    "to_arb",
    "check_digits",
    "rational_decimal",
    "decimal_text",
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

_T = TypeVar("_T")

#: Bits of working precision for the first attempt, and the most we try before giving up
#: (then an exact proof is attempted; if that fails too, the answer is "undecided").
START_PRECISION = 128
MAX_PRECISION = 32768
def check_precision(bits: SupportsIndex) -> int:
    """``bits`` as an int, if it is a usable working precision (16 to 4 * MAX_PRECISION).

    >>> check_precision(0)
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.DigitsError: precision of 0 bits is outside 16..131072
    """
    if isinstance(bits, bool) or not hasattr(type(bits), "__index__"):
        raise DigitsError(f"precision must be a whole number of bits, got {shown(bits)!r} ({type(bits).__name__})")
    bits = operator.index(bits)
    if not 16 <= bits <= 4 * MAX_PRECISION:
        count = bits if bits.bit_length() <= 64 else "a huge number of"
        raise DigitsError(f"precision of {count} bits is outside 16..{4 * MAX_PRECISION}")
    return bits


@contextmanager
def working_precision(bits: int) -> Iterator[None]:
    """Set arb's (global) working precision for the duration of a ``with`` block."""
    saved = flint.ctx.prec
    flint.ctx.prec = bits
    try:
        yield
    finally:
        flint.ctx.prec = saved


def to_arb(expr: Any) -> flint.arb:
    """An ``arb`` ball guaranteed to contain the exact real value of ``expr``.

    Call it inside :func:`working_precision`.  Raises :class:`UndecidedError` for values
    with free symbols or that are not real numbers.
    """
    if isinstance(expr, (int, Fraction)):
        return flint.arb(flint.fmpq(Fraction(expr).numerator, Fraction(expr).denominator))
    if expr.is_Rational:
        return flint.arb(flint.fmpq(int(expr.p), int(expr.q)))
    if expr.free_symbols:
        raise UndecidedError(f"{shown(expr)} has free symbols {sorted(map(str, expr.free_symbols))}; it has no decimal value")
    value = _arb_of(expr)
    if not value.is_finite():
        raise UndecidedError(f"{shown(expr)} is not a finite real number (or too large to enclose)")
    return value


def _arb_of(expr: Any) -> flint.arb:
    if expr.is_Rational:
        return flint.arb(flint.fmpq(int(expr.p), int(expr.q)))
    if expr is sympy.pi:
        return flint.arb.pi()
    if expr is sympy.E:
        return flint.arb(1).exp()
    if expr.is_Add:
        total = flint.arb(0)
        for term in expr.args:
            total += _arb_of(term)
        return total
    if expr.is_Mul:
        product = flint.arb(1)
        for factor in expr.args:
            product *= _arb_of(factor)
        return product
    if expr.is_Pow:
        base, exponent = expr.args
        if exponent.is_Integer:
            return _arb_of(base) ** int(exponent)
        if exponent.is_Rational:
            return _arb_of(base) ** flint.fmpq(int(exponent.p), int(exponent.q))
        return _arb_of(base) ** _arb_of(exponent)
    if isinstance(expr, sympy.exp):
        return _arb_of(expr.args[0]).exp()
    if isinstance(expr, sympy.log) and len(expr.args) == 1:
        return _arb_of(expr.args[0]).log()
    if isinstance(expr, (sympy.sin, sympy.cos, sympy.tan, sympy.sinh, sympy.cosh, sympy.tanh, sympy.atan, sympy.erf)):
        return getattr(_arb_of(expr.args[0]), type(expr).__name__)()
    if isinstance(expr, (sympy.asin, sympy.acos)):
        # Outside [-1, 1] arb returns a non-finite ball: the value is then undecided.
        return getattr(_arb_of(expr.args[0]), type(expr).__name__)()
    if isinstance(expr, sympy.Abs):
        return abs(_arb_of(expr.args[0]))
    raise UndecidedError(f"no certified evaluation for {type(expr).__name__} in {shown(expr)}")


def with_rising_precision(attempt: Callable[[], _T | None]) -> _T | None:
    """Run ``attempt()`` at START_PRECISION, doubling up to MAX_PRECISION, until it answers.

    ``attempt`` computes with arb at the current working precision and returns None while
    its intervals are too wide to decide; the first other answer is returned (else None).
    """
    bits = START_PRECISION
    while bits <= MAX_PRECISION:
        with working_precision(bits):
            answer = attempt()
        if answer is not None:
            return answer
        bits *= 2
    return None


def certified_sign(expr: Any) -> int | None:
    """-1, 0 or 1: the sign of ``expr`` proved by intervals (0 only for a literal zero);
    None when no precision up to MAX_PRECISION decides it."""
    if expr == 0:
        return 0

    if getattr(expr, "free_symbols", None):
        to_arb(expr)  # raises UndecidedError naming the free symbols

    def attempt() -> int | None:
        try:
            ball = to_arb(expr)
        except UndecidedError:
            # A ball too wide at this precision (acos of a number just below 1 may touch
            # the domain's edge): try again with more bits.
            return None
        return 1 if ball > 0 else -1 if ball < 0 else None

    return with_rising_precision(attempt)


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
    from symbolic_attn.exact.convert import to_exact  # convert imports the parser, which needs this module

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


def _plainly_algebraic(expr: Any) -> bool | None:  # None (falsy): SymPy's fuzzy 'not known'
    """True when ``expr`` is built from rationals and ``i`` by ``+``, ``*`` and rational powers.

    The structural test, not SymPy's ``is_algebraic``: that one asks for signs, and SymPy
    answers sign questions by evaluating numerically (slow, and nothing to build on).

    >>> _plainly_algebraic(sympy.sqrt(2) + sympy.Rational(1, 3) * 5 ** sympy.Rational(1, 3))
    True
    >>> _plainly_algebraic(sympy.exp(1) + 1), _plainly_algebraic(sympy.GoldenRatio - sympy.cos(sympy.pi / 7))
    (False, True)
    """
    if expr.is_Rational or expr is sympy.I:
        return True
    if isinstance(expr, (sympy.Add, sympy.Mul)):
        return all(_plainly_algebraic(arg) for arg in expr.args)
    if isinstance(expr, sympy.Pow):
        return expr.exp.is_Rational and _plainly_algebraic(expr.base)
    if isinstance(expr, sympy.core.numbers.NumberSymbol):
        return expr.is_algebraic is True  # the golden ratio yes, pi and e no: a fact of the class
    if isinstance(expr, (sympy.sin, sympy.cos, sympy.tan)):
        return cast(bool | None, (expr.args[0] / sympy.pi).is_Rational)  # trigonometric values at rational multiples of pi
    return False


#: Above this many operations the exact zero test gives up (it is then "not proved").
MAX_ZERO_TEST_OPS = 400


def proved_zero(expr: Any) -> bool:
    """True only when exact algebra shows that the symbol-free ``expr`` is exactly 0.

    No floating-point evaluation is ever consulted: ``expand`` (valid rewriting only), then,
    for an algebraic number, its minimal polynomial (exact arithmetic in a number field).
    False means "not proved", never "nonzero": a certified nonzero comes from
    :func:`certified_sign`.

    >>> proved_zero(sympy.sqrt(8) - 2 * sympy.sqrt(2))
    True
    >>> proved_zero((1 + sympy.sqrt(2)) ** 2 - 3 - 2 * sympy.sqrt(2))
    True
    >>> proved_zero(sympy.acos(1 - sympy.Rational(1, 10**7)))
    False
    """
    expr = sympy.sympify(expr, strict=True)
    if expr == 0:
        return True
    if expr.free_symbols or expr.has(sympy.Float) or expr.count_ops() > MAX_ZERO_TEST_OPS:
        return False
    expanded = sympy.expand(expr)
    if expanded == 0:
        return True
    if not _plainly_algebraic(expanded):
        return False
    x = sympy.Dummy("x")
    try:
        return cast(bool, sympy.minimal_polynomial(expanded, x) == x)
    except (NotImplementedError, ValueError, TypeError):
        return False
