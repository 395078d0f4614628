r"""How a reading is echoed back: the tool's own plain notation, and LaTeX.

The student sees both, so a misreading shows at once.  The notation is the checker's
(:func:`~symbolic_attn.proofs.messages.plain_text`, the named operators' own printing), with
sums and products written as the reader would say them (``sum(x[j] for j in 1..n)``) and a
fraction as written kept visibly a fraction.  Terms are printed in SymPy's stored order
(``order="none"``): sorting them would evaluate them numerically, which never finishes for
``e^{e^{e^{100}}}``.

>>> import sympy
>>> j, n = sympy.symbols("j n", integer=True, positive=True)
>>> x = sympy.IndexedBase("x", real=True)
>>> notation(sympy.Sum(sympy.exp(x[j]), (j, 1, n)))
'sum(exp(x[j]) for j in 1..n)'
>>> latex(sympy.Sum(sympy.exp(x[j]), (j, 1, n)))
'\\sum_{j=1}^{n} e^{{x}_{j}}'
"""

from typing import Any

import sympy
from sympy.printing.latex import LatexPrinter
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.str import StrPrinter

from symbolic_attn.proofs.notation import Frac

__all__ = ["notation", "latex", "MAX_ECHO_LENGTH"]

#: Longest echo printed (a reading is bounded, but a power of a sum may still print long).
MAX_ECHO_LENGTH = 20_000


class _NotationPrinter(StrPrinter):  # type: ignore[misc]  # sympy is untyped
    def _print(self, expr: Any, **kwargs: Any) -> str:
        if isinstance(expr, Frac):
            numerator, denominator = expr.args
            return "%s / %s" % (self.parenthesize(numerator, PRECEDENCE["Mul"]),
                                self.parenthesize(denominator, PRECEDENCE["Mul"], strict=False)
                                if not _is_atom(denominator) else self._print(denominator))
        text: str = super()._print(expr, **kwargs)
        return text

    def parenthesize(self, item: Any, level: int, strict: bool = False) -> str:
        if isinstance(item, Frac):
            inner = self._print(item)
            return "(%s)" % inner if PRECEDENCE["Mul"] <= level else inner
        text: str = super().parenthesize(item, level, strict)
        return text

    def _print_limits(self, expr: Any, word: str) -> str:
        function = self._print(expr.function)
        limits = " ".join("for %s in %s..%s" % tuple(self._print(part) for part in limit)
                          for limit in reversed(expr.limits))
        return "%s(%s %s)" % (word, function, limits)

    def _print_MatrixBase(self, expr: Any) -> str:
        return "[%s]" % ", ".join("[%s]" % ", ".join(self._print(entry) for entry in row) for row in expr.tolist())

    _print_ImmutableDenseMatrix = _print_MatrixBase
    _print_MutableDenseMatrix = _print_MatrixBase

    def _print_Sum(self, expr: Any) -> str:
        return self._print_limits(expr, "sum")

    def _print_Product(self, expr: Any) -> str:
        return self._print_limits(expr, "prod")


class _LatexPrinter(LatexPrinter):  # type: ignore[misc]  # sympy is untyped
    """SymPy's LaTeX, except that a multiple sum is written as the nested sums the reader reads
    (SymPy merges ``Sum(Sum(f, j), i)`` into one ``Sum`` printed with ``\\substack``)."""

    def _print_nested(self, expr: Any, command: str, parent: Any) -> str:
        if len(expr.limits) == 1:
            text: str = parent(self, expr)
            return text
        text = parent(self, type(expr)(expr.function, expr.limits[0]))
        for limit in expr.limits[1:]:
            text = r"%s_{%s=%s}^{%s} %s" % ((command,) + tuple(self._print(part) for part in limit) + (text,))
        return text

    def _print_Sum(self, expr: Any) -> str:
        return self._print_nested(expr, r"\sum", LatexPrinter._print_Sum)

    def _print_Product(self, expr: Any) -> str:
        return self._print_nested(expr, r"\prod", LatexPrinter._print_Product)


def _is_atom(expr: Any) -> bool:
    return isinstance(expr, (sympy.Symbol, sympy.Indexed, sympy.Integer, sympy.NumberSymbol)) or (
        isinstance(expr, sympy.Function) or isinstance(expr, (sympy.Sum, sympy.Product)))


def _cut(text: str) -> str:
    return text if len(text) <= MAX_ECHO_LENGTH else text[:MAX_ECHO_LENGTH] + "..."


def notation(expr: Any) -> str:
    """``expr`` in the tool's plain notation (one line).

    >>> import sympy
    >>> a, b = sympy.symbols("a b", real=True)
    >>> notation(2 * Frac(a, b + 1))
    '2*(a / (1 + b))'
    """
    return _cut(_NotationPrinter({"order": "none"}).doprint(expr))


def latex(expr: Any) -> str:
    """``expr`` as LaTeX, as SymPy and the named operators print it (terms in stored order)."""
    if isinstance(expr, sympy.MatrixBase):  # the environment the reader reads back
        return _cut(_LatexPrinter({"order": "none", "mat_str": "bmatrix", "mat_delim": ""}).doprint(expr))
    return _cut(_LatexPrinter({"order": "none"}).doprint(expr))
