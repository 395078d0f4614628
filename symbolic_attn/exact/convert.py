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

from decimal import Decimal
from fractions import Fraction

import sympy

from symbolic_attn.errors import FloatInputError, ParseError, ShapeError, shown
from symbolic_attn.exact.limits import DEFAULT_LIMITS, Limits
from symbolic_attn.exact.parse import parse_expression, parse_matrix

__all__ = ["to_exact", "to_matrix"]


def to_exact(value) -> sympy.Expr:
    """One exact SymPy scalar from an int, Fraction, Decimal, SymPy value or text."""
    if isinstance(value, bool):
        raise ParseError(f"a boolean ({value}) is not a number; use 1 or 0")
    if isinstance(value, int):
        return sympy.Integer(value)
    if isinstance(value, float):
        raise FloatInputError(_float_hint(value))
    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ParseError(f"not a finite number: {value}")
        return to_exact(Fraction(value))
    if isinstance(value, str):
        result = parse_expression(value)
        if isinstance(result, sympy.MatrixBase):
            raise ParseError(f"expected a number, got a matrix: {value!r}")
        return result
    if isinstance(value, sympy.MatrixBase):
        raise ParseError("expected a number, got a matrix")
    if isinstance(value, sympy.Basic):
        if value.has(sympy.Float):
            floats = sorted(str(f) for f in value.atoms(sympy.Float))
            raise FloatInputError(f"SymPy Float {floats[0]} in {value} refused: use Rational or a decimal string")
        if value.has(sympy.nan, sympy.zoo) or value.has(sympy.oo, -sympy.oo):
            raise ParseError(f"not a finite number: {shown(value)}")
        if value.is_number and value.is_extended_real is False:
            raise ParseError(f"not a real number: {shown(value)} (attention here is over the reals)")
        return value
    # NumPy integer scalars and similar: exact only if they are integers.
    if hasattr(value, "is_integer") and hasattr(value, "item"):
        return to_exact(value.item())
    raise ParseError(f"cannot use a {type(value).__name__} as an exact number: {value!r}"[:200])


def to_matrix(value, *, name: str = "matrix", limits: Limits = DEFAULT_LIMITS) -> sympy.ImmutableMatrix:
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


def _entry(entry, name, row, column):
    try:
        return to_exact(entry)
    except (ParseError, FloatInputError) as error:
        raise type(error)(f"{name}[{row},{column}]: {error}") from None


def _float_hint(value: float) -> str:
    shortest = repr(value)
    exact = Fraction(shortest) if "inf" not in shortest and "nan" not in shortest else None
    if exact is None:
        return f"binary float {shortest} refused: not a finite exact number"
    return (
        f"binary float {shortest} refused: write the string '{shortest}' (exactly {exact}) "
        f"or Fraction({exact.numerator}, {exact.denominator})"
    )
