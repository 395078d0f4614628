"""Exact values as text that the tool's own parser reads back to the same value.

SymPy's ``sstr`` writes Euler's number as ``E`` while input writes ``e``; everything the
tool prints as an exact string goes through :func:`exact_string` instead, so a printed
value can be pasted back into ``--scores``, an exercise file or a claim:

>>> import sympy
>>> exact_string(sympy.E / (1 + sympy.exp(sympy.sqrt(2) / 2)))
'e/(1 + exp(sqrt(2)/2))'
>>> from symbolic_attn.exact.parse import parse_expression
>>> value = sympy.E**2 / (sympy.E + sympy.log(3))
>>> parse_expression(exact_string(value)) == value
True
>>> exact_rows(sympy.Matrix([[sympy.Rational(1, 2), sympy.E]]))
[['1/2', 'e']]

Minus infinity (a blocked score of the ``masked`` stage) is written ``-inf``, as it is read.
Only ``nan`` (the weights of the ``nan`` empty-row policy, copying a library's output)
has no exact spelling: it is printed as ``nan``, which the parser refuses.
"""

import sympy
from sympy.printing.str import StrPrinter

__all__ = ["exact_string", "exact_rows"]


class _ExactPrinter(StrPrinter):
    """SymPy's string printer with the parser's spelling of constants."""

    printmethod = "_symbolic_attn_exact"

    def _print_Exp1(self, expr):
        return "e"

    def _print_NegativeInfinity(self, expr):  # a blocked score, read back as -inf
        return "-inf"

    def _print_ImaginaryUnit(self, expr):  # never in a real result; refused on reading back
        return "I"


# order="none": SymPy's internal (canonical) term order, deterministic and much faster
# than sorting big closed forms; the same value.
_PRINTER = _ExactPrinter({"order": "none"})


def exact_string(expr) -> str:
    """One exact value as text in the parser's grammar (``e``, ``pi``, ``sqrt``, ``exp``, ``log``, ``**``)."""
    return _PRINTER.doprint(sympy.sympify(expr, strict=True) if not isinstance(expr, sympy.Basic) else expr)


def exact_rows(matrix) -> list[list[str]]:
    """Every entry of a matrix as :func:`exact_string`, row by row (lists, for JSON)."""
    return [[exact_string(entry) for entry in matrix.row(i)] for i in range(matrix.rows)]
