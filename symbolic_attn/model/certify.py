r"""Certified decimals for the model's closed forms, erf and tanh included.

:func:`symbolic_attn.exact.certified.to_arb` encloses rationals, sums, products, powers,
exp, log, sin, cos and tan.  GELU brings ``erf`` (its exact form x·Φ(x)) and ``tanh``
(its usual approximation), which that converter does not know; this module encloses those
two with arb's own rigorous ``erf`` and ``tanh`` and hands every other node back to
``to_arb``.  Expressions without erf or tanh go straight to
:func:`~symbolic_attn.exact.certified.decimal_string`, unchanged.

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

from symbolic_attn.errors import UndecidedError, shown
from symbolic_attn.exact.certified import (
    MAX_PRECISION,
    certified_decimal,
    decimal_string,
    proved_zero,
    rational_decimal,
    to_arb,
    with_rising_precision,
)

__all__ = ["arb_value", "decimal_text", "matrix_decimals"]

_OWN = (sympy.erf, sympy.tanh)


def arb_value(expr) -> flint.arb:
    """An arb ball containing ``expr`` (call inside ``working_precision``); erf and tanh too."""
    if not expr.has(*_OWN):
        return to_arb(expr)
    if expr.free_symbols:
        raise UndecidedError(f"{shown(expr)} has free symbols; it has no decimal value")
    if isinstance(expr, sympy.erf):
        return arb_value(expr.args[0]).erf()
    if isinstance(expr, sympy.tanh):
        return arb_value(expr.args[0]).tanh()
    if expr.is_Add:
        total = flint.arb(0)
        for term in expr.args:
            total += arb_value(term)
        return total
    if expr.is_Mul:
        product = flint.arb(1)
        for factor in expr.args:
            product *= arb_value(factor)
        return product
    if expr.is_Pow:
        base, exponent = expr.args
        if exponent.is_Integer:
            return arb_value(base) ** int(exponent)
        if exponent.is_Rational:
            return arb_value(base) ** flint.fmpq(int(exponent.p), int(exponent.q))
        return arb_value(base) ** arb_value(exponent)
    if isinstance(expr, (sympy.exp, sympy.sin, sympy.cos, sympy.tan)):
        inner = arb_value(expr.args[0])
        return getattr(inner, type(expr).__name__)()
    if isinstance(expr, sympy.log) and len(expr.args) == 1:
        return arb_value(expr.args[0]).log()
    raise UndecidedError(f"no certified evaluation for {type(expr).__name__} in {shown(expr)}")


def decimal_text(expr, digits: int, significant: bool = False) -> str:
    """The certified rounding of one exact value (see :func:`decimal_string`)."""
    expr = sympy.sympify(expr, strict=True)
    if expr.is_Rational or not expr.has(*_OWN):
        return decimal_string(expr, digits, significant)

    def attempt():
        ball = arb_value(expr)
        return certified_decimal(ball, digits, significant) if ball.is_finite() else None

    text = with_rising_precision(attempt)
    if text is not None:
        return text
    # Only an exact zero in disguise sits on a boundary forever (erf of a nonzero number
    # is irrational); anything else stays undecided rather than guessed.
    if proved_zero(expr):
        return rational_decimal(0, digits, significant)
    raise UndecidedError(f"cannot certify {digits} digits of {shown(expr)} at {MAX_PRECISION} bits of precision")


def matrix_decimals(matrix, digits: int, significant: bool = False) -> list[list[str | None]]:
    """Certified decimals of every entry, row by row (``None`` for entries with symbols)."""
    return [[None if e.free_symbols else decimal_text(e, digits, significant) for e in matrix.row(i)]
            for i in range(matrix.rows)]
