r"""Notation written in a step, and what it stands for.

A step is written for a reader: ``Frac(a/Z, 2/Z)`` prints as the fraction it is written as,
a named operator (:mod:`.operators`) prints as its name.  The checker never decides such a
display form: :func:`unfold` replaces each by the plain SymPy expression it stands for (and
evaluates derivatives, whose rules are exact) before any strategy sees the step.
:func:`step_value` is what a side of a step may be: a SymPy value or a Python integer.

>>> import sympy
>>> a, Z = sympy.symbols("a Z", positive=True)
>>> unfold(Frac(a / Z, 2 / Z))
a/2
>>> step_value(3)
3
"""

from typing import Any

import sympy

from symbolic_attn.errors import InexactStepError, ProofError
from symbolic_attn.exact.memo import memoized
from symbolic_attn.proofs.messages import short_line

__all__ = ["Frac", "step_value", "unfold"]

#: Rounds of unfolding (a named operator may stand for another one).
_UNFOLD_ROUNDS = 8


class Frac(sympy.Expr):  # type: ignore[misc]  # sympy is untyped: its classes are Any to mypy
    r"""``num / den`` kept exactly as written, for display (``\frac{num}{den}``).

    SymPy would reorder or cancel ``(a/Z) / (b/Z)`` as soon as it is built; a printed step
    should show it as written.  Proofs see plain ``num / den`` (and require ``den != 0``).

    >>> import sympy
    >>> from symbolic_attn.proofs.prove import prove_equal
    >>> a, Z = sympy.symbols("a Z", positive=True)
    >>> sympy.latex(Frac(a / Z, 2 / Z))
    '\\frac{\\frac{a}{Z}}{\\frac{2}{Z}}'
    >>> prove_equal(Frac(a / Z, 2 / Z), a / 2).strategy
    'structural'
    """

    def __new__(cls, numerator: Any, denominator: Any) -> "Frac":
        frac: Frac = sympy.Expr.__new__(cls, step_value(numerator), step_value(denominator))
        return frac

    def doit(self, **hints: Any) -> Any:
        numerator, denominator = self.args
        if hints.get("deep", True):
            numerator, denominator = numerator.doit(**hints), denominator.doit(**hints)
        return numerator / denominator

    def _latex(self, printer: Any, exp: Any = None) -> str:
        text = r"\frac{%s}{%s}" % (printer._print(self.args[0]), printer._print(self.args[1]))
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)

    def _sympystr(self, printer: Any) -> str:
        return "(%s)/(%s)" % (printer._print(self.args[0]), printer._print(self.args[1]))


def step_value(value: Any) -> Any:
    """``value`` as a side of a step: a SymPy value as it is, a Python int as an Integer.

    Raises:
        InexactStepError: a Python float (binary, not the exact number written).
        ProofError: anything else (a bool, a string, an object that is no expression).
    """
    if isinstance(value, (sympy.Basic, sympy.MatrixBase)):
        return value
    if isinstance(value, float):
        raise InexactStepError(f"Python float {value!r} in a step: use exact numbers (Rational)")
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProofError(f"not a SymPy expression: {short_line(repr(value), 80)}")
    return sympy.Integer(value)


def unfold(expr: Any) -> Any:
    """Replace display-only :class:`Frac` and named operators by what they stand for."""
    if isinstance(expr, sympy.MatrixBase):
        return expr.applyfunc(unfold)
    if not isinstance(expr, sympy.Basic):
        return expr
    return _unfold_basic(expr)


def _is_named_operator(node: Any) -> bool:
    return getattr(node, "unfold", None) is not None and bool(getattr(node, "is_named_operator", False))


@memoized
def _unfold_basic(expr: Any) -> Any:
    if expr.has(Frac):
        expr = expr.replace(lambda e: isinstance(e, Frac), lambda e: e.args[0] / e.args[1])
    for _ in range(_UNFOLD_ROUNDS):
        if not any(_is_named_operator(node) for node in sympy.preorder_traversal(expr)):
            break
        expr = expr.replace(_is_named_operator, lambda e: e.unfold())
    if expr.has(sympy.Derivative):
        # A derivative written in a step is its value: differentiation rules are exact.
        expr = expr.replace(lambda e: isinstance(e, sympy.Derivative), lambda e: e.doit())
    return expr
