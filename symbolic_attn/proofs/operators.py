r"""Named operators: SymPy objects that print themselves and unfold to the value checked.

A step or a :class:`~symbolic_attn.proofs.chain.Computed` label written with these prints
exactly what the checker sees: ``unfold()`` gives the definition (for explicit matrices,
the library's own exact softmax), and :func:`~symbolic_attn.proofs.prove.prove_equal`
unfolds every named operator before deciding.  So a label "softmax over rows" cannot
stand for the column softmax.

>>> import sympy
>>> x = sympy.Symbol("x", real=True)
>>> sympy.latex(Sigmoid(x))
'\\sigma\\left(x\\right)'
>>> Sigmoid(x).unfold()
1/(1 + exp(-x))
>>> M = sympy.ImmutableMatrix([[0, sympy.log(2)]])
>>> RowSoftmax(M).unfold()
Matrix([[1/3, 2/3]])
>>> ColumnSoftmax(sympy.ImmutableMatrix([[0], [sympy.log(3)]])).unfold()
Matrix([
[1/4],
[3/4]])
"""

from typing import Any

import sympy
from sympy import MatrixExpr

from symbolic_attn.model.attention import softmax as _softmax
from symbolic_attn.proofs.binders import substitute

__all__ = ["NamedOperator", "Sigmoid", "SoftmaxAt", "MaskedSoftmaxAt", "RowSoftmax", "ColumnSoftmax", "MaskedSoftmax", "Trace"]


class NamedOperator:
    """Base of the named operators: ``unfold()`` gives the definition the checker uses."""

    is_named_operator = True


class Sigmoid(NamedOperator, sympy.Function):  # type: ignore[misc]  # sympy is untyped: its classes are Any
    r"""The logistic function ``\sigma(x) = 1 / (1 + e^{-x})``."""

    nargs = 1

    def unfold(self) -> Any:
        return 1 / (1 + sympy.exp(-self.args[0]))

    def _latex(self, printer: Any, exp: Any = None) -> str:
        text = r"\sigma\left(%s\right)" % printer._print(self.args[0])
        return text if exp is None else r"%s^{%s}" % (text, exp)


class SoftmaxAt(NamedOperator, sympy.Expr):  # type: ignore[misc]  # sympy is untyped: its classes are Any
    r"""Entry ``i`` of the softmax of the sequence ``(term(k))_{k=1}^{n}``:
    ``e^{term(i)} / \sum_{k=1}^{n} e^{term(k)}``."""

    def __new__(cls, term: Any, index: Any, entry: Any, length: Any) -> Any:
        return sympy.Expr.__new__(cls, *map(sympy.sympify, (term, index, entry, length)))

    def unfold(self) -> Any:
        term, index, entry, length = self.args
        return sympy.exp(substitute(term, {index: entry})) / sympy.Sum(sympy.exp(term), (index, 1, length))

    def _latex(self, printer: Any, exp: Any = None) -> str:
        term, index, entry, length = self.args
        text = r"\operatorname{softmax}\left(\left(%s\right)_{%s=1}^{%s}\right)_{%s}" % (
            printer._print(term), printer._print(index), printer._print(length), printer._print(entry))
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)

    def _sympystr(self, printer: Any) -> str:
        return "softmax(%s for %s in 1..%s)[%s]" % tuple(printer._print(a) for a in
                                                       (self.args[0], self.args[1], self.args[3], self.args[2]))


class MaskedSoftmaxAt(NamedOperator, sympy.Expr):  # type: ignore[misc]  # sympy is untyped: its classes are Any
    r"""Entry ``j`` of the masked softmax (``a_k`` = 1 allowed, 0 blocked):
    ``a_j e^{term(j)} / \sum_k a_k e^{term(k)}`` -- blocked keys leave the denominator."""

    def __new__(cls, term: Any, allowed: Any, index: Any, entry: Any, length: Any) -> Any:
        return sympy.Expr.__new__(cls, *map(sympy.sympify, (term, allowed, index, entry, length)))

    def unfold(self) -> Any:
        term, allowed, index, entry, length = self.args
        numerator = substitute(allowed, {index: entry}) * sympy.exp(substitute(term, {index: entry}))
        return numerator / sympy.Sum(allowed * sympy.exp(term), (index, 1, length))

    def _latex(self, printer: Any, exp: Any = None) -> str:
        term, allowed, index, entry, length = self.args
        text = r"\operatorname{softmax}_{%s}\left(\left(%s\right)_{%s=1}^{%s}\right)_{%s}" % (
            printer._print(allowed), printer._print(term), printer._print(index), printer._print(length),
            printer._print(entry))
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)


class _MatrixOperator(NamedOperator, MatrixExpr):  # type: ignore[misc]  # sympy is untyped: its classes are Any
    _name = ""
    #: How many arguments the operator takes: each one is printed (none changes the value unseen).
    _arity = 1

    def __new__(cls, argument: Any, *rest: Any) -> Any:
        if 1 + len(rest) != cls._arity:
            from symbolic_attn.errors import ProofError

            raise ProofError(f"{cls.__name__} takes {cls._arity} argument(s), got {1 + len(rest)}")
        return MatrixExpr.__new__(cls, argument, *rest)

    @property
    def shape(self) -> Any:
        return self.args[0].shape

    def doit(self, **hints: Any) -> Any:
        return self

    def _explicit_argument(self) -> Any:
        argument = self.args[0]
        if isinstance(argument, sympy.MatrixBase):
            return argument
        if isinstance(argument, MatrixExpr) and not argument.atoms(sympy.MatrixSymbol):
            return sympy.ImmutableMatrix(argument.doit().as_explicit())
        return None

    def _latex(self, printer: Any, exp: Any = None) -> str:
        text = r"%s\left(%s\right)" % (self._name, printer._print(self.args[0]))
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)

    def _sympystr(self, printer: Any) -> str:
        return "%s(%s)" % (type(self).__name__, printer._print(self.args[0]))


class RowSoftmax(_MatrixOperator):
    r"""Softmax over each row (over the keys): the library's exact ``softmax``."""

    _name = r"\operatorname{softmax}"

    def unfold(self) -> Any:
        explicit = self._explicit_argument()
        return self if explicit is None else _softmax(explicit)  # type: ignore[no-untyped-call]  # model/ is not annotated yet


class ColumnSoftmax(_MatrixOperator):
    r"""Softmax over each column (over the queries)."""

    _name = r"\operatorname{softmax}_{\mathrm{col}}"

    def unfold(self) -> Any:
        explicit = self._explicit_argument()
        return self if explicit is None else _softmax(explicit, axis="queries")  # type: ignore[no-untyped-call]  # model/ is not annotated yet


class MaskedSoftmax(_MatrixOperator):
    r"""Row softmax with a mask (keep grid as the second argument, an explicit 0/1 matrix).

    Both arguments are printed, the mask after a semicolon (it changes the value):

    >>> S = sympy.ImmutableMatrix([[0, 0], [0, 0]])
    >>> print(sympy.latex(MaskedSoftmax(S, sympy.ImmutableMatrix([[1, 0], [1, 1]]))))
    \operatorname{softmax}\left(\left[\begin{matrix}0 & 0\\0 & 0\end{matrix}\right];\ \left[\begin{matrix}1 & 0\\1 & 1\end{matrix}\right]\right)
    >>> MaskedSoftmax(S, sympy.ImmutableMatrix([[1, 0], [1, 1]]))
    MaskedSoftmax(Matrix([
    [0, 0],
    [0, 0]]), Matrix([
    [1, 0],
    [1, 1]]))
    """

    _name = r"\operatorname{softmax}"
    _arity = 2

    def _latex(self, printer: Any, exp: Any = None) -> str:
        text = r"%s\left(%s;\ %s\right)" % (self._name, printer._print(self.args[0]), printer._print(self.args[1]))
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)

    def _sympystr(self, printer: Any) -> str:
        return "%s(%s, %s)" % (type(self).__name__, printer._print(self.args[0]), printer._print(self.args[1]))

    def unfold(self) -> Any:
        from symbolic_attn.model.masks import Mask

        explicit = self._explicit_argument()
        if explicit is None:
            return self
        return _softmax(explicit, Mask.keep(self.args[1].tolist()))  # type: ignore[no-untyped-call]  # model/ is not annotated yet


class Trace(NamedOperator, sympy.Expr):  # type: ignore[misc]  # sympy is untyped: its classes are Any
    r"""``\operatorname{tr}(M)`` of an explicit square matrix (sum of the diagonal)."""

    def __new__(cls, matrix: Any) -> Any:
        return sympy.Expr.__new__(cls, matrix)

    def unfold(self) -> Any:
        matrix = self.args[0]
        if isinstance(matrix, sympy.MatrixBase):
            return sum((matrix[i, i] for i in range(matrix.rows)), sympy.Integer(0))
        return sympy.Trace(matrix)

    def _latex(self, printer: Any, exp: Any = None) -> str:
        text = r"\operatorname{tr}\left(%s\right)" % printer._print(self.args[0])
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)
