"""Python values -> exact SymPy values.  The float policy lives here, and only here.

Accepted: ``int``, :class:`fractions.Fraction`, :class:`decimal.Decimal` (an exact
decimal), SymPy numbers, symbols and expressions, and text (through the safe parser
:mod:`symbolic_attn.exact.parse`).  Matrices: nested lists or tuples of those, SymPy
matrices, objects with ``tolist()`` (NumPy arrays of integers), or matrix text.

**Float policy: refuse.**  A Python ``float`` (or a SymPy ``Float``) is a binary
approximation -- ``0.1`` is really 0.1000000000000000055511151231257827... -- so
silently converting it would put a rounding into an exact result.  It is refused with
a :class:`FloatInputError` that shows the exact spelling to use instead.

>>> to_exact("0.43"), to_exact(Fraction(1, 3)), to_exact(2)
(43/100, 1/3, 2)
>>> to_exact(0.1)
Traceback (most recent call last):
...
symbolic_attn.errors.FloatInputError: binary float 0.1 refused: write the string '0.1' (exactly 1/10) or Fraction(1, 10)
>>> to_matrix([[1, "1/2"], [0, "sqrt(2)"]])
Matrix([
[1,     1/2],
[0, sqrt(2)]])
"""

import operator
from decimal import Decimal
from fractions import Fraction
from typing import Any, cast

import sympy

from symbolic_attn.errors import FloatInputError, InputLimitError, ParseError, ShapeError, shown
from symbolic_attn.exact.limits import DEFAULT_LIMITS, Limits, check_value
from symbolic_attn.exact.parse import parse_expression, parse_matrix

__all__ = ["to_exact", "to_matrix"]


def to_exact(value: Any, *, limits: Limits = DEFAULT_LIMITS) -> sympy.Expr:
    """One exact SymPy scalar from an int, Fraction, Decimal, SymPy value or text.

    NumPy scalars follow the same policy: ``np.int64(2)`` is the integer 2, a NumPy float
    is refused with the float hint.  Every value is bounded as the parser bounds what it
    builds (:func:`~symbolic_attn.exact.limits.check_value`); a Decimal's exponent and digits
    are checked before it is converted (``Decimal('1e999999999')`` would take forever).

    >>> import numpy as np
    >>> to_exact(np.int64(2)), to_exact(Decimal("0.25"))
    (2, 1/4)
    >>> to_exact(np.float64(0.5))
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.FloatInputError: binary float 0.5 refused: write the string '0.5' (exactly 1/2) or Fraction(1, 2)
    """
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        raise ParseError(f"a boolean ({shown(value)}) is not a number; use 1 or 0")
    if isinstance(value, float):  # numpy.float64 is a float too
        raise FloatInputError(_float_hint(value))
    if isinstance(value, int):
        return check_value(sympy.Integer(_bounded_int(value, limits)), limits)
    if isinstance(value, Fraction):
        _bounded_int(value.numerator, limits)
        _bounded_int(value.denominator, limits)
        return sympy.Rational(value.numerator, value.denominator)
    if isinstance(value, Decimal):
        return _decimal(value, limits)
    if isinstance(value, str):
        result = parse_expression(value, limits=limits)
        if result is sympy.S.NegativeInfinity:
            raise ParseError(f"-inf is not a number here: {shown(value)!r} (minus infinity is read only as an "
                             "entry of a score matrix or a mask, or as a claimed value)")
        if isinstance(result, sympy.MatrixBase):
            raise ParseError(f"expected a number, got a matrix: {shown(value)!r}")
        return result
    if isinstance(value, sympy.MatrixBase):
        raise ParseError("expected a number, got a matrix")
    if isinstance(value, sympy.Basic):
        if not isinstance(value, sympy.Expr):
            # sympy.true, sets, relations...: not numbers, whatever they print as.
            raise ParseError(f"a SymPy {type(value).__name__} ({shown(value)}) is not a number")
        if value.has(sympy.Float):
            floats = sorted(shown(f) for f in value.atoms(sympy.Float))
            raise FloatInputError(
                f"SymPy Float {floats[0]} in {shown(value)} refused: use Rational or a decimal string"
            )
        if value.has(sympy.nan, sympy.zoo) or value.has(sympy.oo, -sympy.oo):
            raise ParseError(f"not a finite number: {shown(value)}")
        check_value(value, limits)
        if value.is_number and value.is_extended_real is False:
            raise ParseError(f"not a real number: {shown(value)} (attention here is over the reals)")
        return value
    # NumPy scalars and the like: integers through __index__, floats through the float policy.
    if hasattr(value, "__index__"):
        try:
            return to_exact(operator.index(value), limits=limits)
        except TypeError:
            pass
    if hasattr(value, "item") and hasattr(value, "dtype"):
        item = value.item()
        if isinstance(item, (int, float, bool)):
            return to_exact(item, limits=limits)
    raise ParseError(f"cannot use a {shown(type(value).__name__)} as an exact number: {shown(value, 60)}")


def _bounded_int(number: int, limits: Limits) -> int:
    """The integer itself, if it is within ``max_result_bits`` (never formatted when huge)."""
    if number.bit_length() > limits.max_result_bits:
        raise InputLimitError(
            f"an integer of about {number.bit_length() * 3 // 10} digits exceeds the limit of "
            f"{limits.max_result_bits * 3 // 10} digits"
        )
    return number


def _decimal(value: Decimal, limits: Limits) -> sympy.Rational:
    """An exact Decimal, its size checked before Fraction multiplies out the exponent."""
    if not value.is_finite():
        raise ParseError(f"not a finite number: {shown(value)}")
    sign, digits, exponent = value.as_tuple()
    if len(digits) > limits.max_digits:
        raise InputLimitError(f"a Decimal of {len(digits)} digits exceeds the limit of {limits.max_digits}")
    if abs(cast(int, exponent)) > limits.max_decimal_exponent:  # finite: an int
        raise InputLimitError(
            f"a Decimal with exponent {exponent} exceeds the limit of {limits.max_decimal_exponent}"
        )
    fraction = Fraction(value)
    return sympy.Rational(fraction.numerator, fraction.denominator)


def to_matrix(value: Any, *, name: str = "matrix", limits: Limits = DEFAULT_LIMITS) -> sympy.ImmutableMatrix:
    """An exact SymPy matrix from nested lists, a SymPy matrix, an array or matrix text.

    ``name`` is used in error messages (``"Q"``, ``"scores"``...); ``limits`` bounds text.
    """
    if isinstance(value, str):
        try:
            matrix = parse_matrix(value, limits=limits)
        except ParseError as error:
            raise type(error)(f"{name}: {error}") from None
    elif isinstance(value, sympy.MatrixBase):
        matrix = sympy.ImmutableMatrix(value)
        for entry in matrix:
            to_exact(entry)
    else:
        if hasattr(value, "tolist"):
            value = value.tolist()
        if not isinstance(value, (list, tuple)) or not value:
            raise ParseError(f"{name}: expected a non-empty list of rows, got {type(value).__name__}")
        rows = value if isinstance(value[0], (list, tuple)) else [value]
        width = len(rows[0])
        limits = DEFAULT_LIMITS
        if len(rows) * width > limits.max_entries or len(rows) > limits.max_rows or width > limits.max_cols:
            raise ShapeError(f"{name}: {len(rows)}x{width} exceeds the size limit")
        exact_rows = []
        for number, row in enumerate(rows, start=1):
            if not isinstance(row, (list, tuple)) or len(row) != width:
                raise ShapeError(f"{name}: row {number} has {len(row) if isinstance(row, (list, tuple)) else 'no'} entries, row 1 has {width}")
            exact_rows.append([_entry(entry, name, number, column) for column, entry in enumerate(row, start=1)])
        matrix = sympy.ImmutableMatrix(exact_rows)
    if matrix.rows == 0 or matrix.cols == 0:
        raise ShapeError(f"{name}: empty matrix ({matrix.rows}x{matrix.cols})")
    return matrix


def _entry(entry: Any, name: str, row: int, column: int) -> Any:
    try:
        return to_exact(entry)
    except (ParseError, FloatInputError) as error:
        raise type(error)(f"{name}[{row},{column}]: {error}") from None


def _float_hint(value: float) -> str:
    shortest = float.__repr__(float(value))  # numpy 2's repr is 'np.float64(0.5)'; this is '0.5'
    exact = Fraction(shortest) if "inf" not in shortest and "nan" not in shortest else None
    if exact is None:
        return f"binary float {shortest} refused: not a finite exact number"
    return (
        f"binary float {shortest} refused: write the string '{shortest}' (exactly {exact}) "
        f"or Fraction({exact.numerator}, {exact.denominator})"
    )
