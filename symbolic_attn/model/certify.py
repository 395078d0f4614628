r"""Certified decimals for the model's closed forms, erf and tanh included.

GELU brings ``erf`` (its exact form x·Φ(x)) and ``tanh`` (its usual approximation);
:func:`symbolic_attn.exact.certified.to_arb` encloses both with arb's rigorous ``erf``
and ``tanh``, so this module only delegates to :mod:`symbolic_attn.exact.certified`
(kept so that the model layer's callers have one name for "a stage's decimals").

>>> import sympy
>>> decimal_text(sympy.erf(1), 20, significant=True)
'0.84270079294971486934'
>>> decimal_text(sympy.Rational(1, 2) * (1 + sympy.tanh(1)), 5)
'0.88080'
>>> matrix_decimals(sympy.Matrix([[sympy.sin(1), sympy.Symbol("x")]]), 3)
[['0.841', None]]
"""

from __future__ import annotations

import flint
import sympy

from symbolic_attn.exact.certified import decimal_string, to_arb

__all__ = ["arb_value", "decimal_text", "matrix_decimals"]


def arb_value(expr) -> flint.arb:
    """An arb ball containing ``expr`` (call inside ``working_precision``); erf and tanh too."""
    return to_arb(expr)


def decimal_text(expr, digits: int, significant: bool = False) -> str:
    """The certified rounding of one exact value (see :func:`decimal_string`)."""
    return decimal_string(sympy.sympify(expr, strict=True), digits, significant)


def matrix_decimals(matrix, digits: int, significant: bool = False) -> list[list[str | None]]:
    """Certified decimals of every entry, row by row (``None`` for entries with symbols)."""
    return [[None if e.free_symbols else decimal_text(e, digits, significant) for e in matrix.row(i)]
            for i in range(matrix.rows)]
