r"""How an explicit matrix of a side was written: the products and transposes it was computed by.

The reader computes a product or a transpose of explicit matrices when it reads it (a side's
value is one explicit matrix), so ``(P K)^\top`` and ``P^\top K^\top`` reach the checker as
two grids of entries.  That is right for deciding the step, but a wrong rule such as
``transpose_order`` -- ``(AB)^T`` taken as ``A^T B^T`` -- is recognised on the written
structure, not on the entries.  So the reader builds these two operations here
(:func:`product`, :func:`transpose`), which compute exactly what it computed before and,
while a :func:`recording` is open, also note the unevaluated form (``MatMul``,
``Transpose`` of the operands' own forms) of the result.

Every noted form *equals* the matrix it is noted for (it is the computation that produced
it, kept unevaluated), so a diagnosis proved from a form is proved for the side.  Outside a
recording nothing is noted and nothing else changes.

>>> import sympy
>>> p = sympy.ImmutableMatrix([[0, 1], [1, 0]])
>>> k = sympy.ImmutableMatrix([[1, 2], [3, 4]])
>>> with recording() as forms:
...     value = transpose(product(p, k))
>>> value
Matrix([
[3, 1],
[4, 2]])
>>> form = forms[value]
>>> type(form).__name__, type(form.args[0]).__name__, form.doit() == value
('Transpose', 'MatMul', True)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import sympy
from sympy.matrices.expressions import MatMul, Transpose

__all__ = ["product", "transpose", "recording", "form_of"]

#: The open recordings, innermost last: each maps a computed matrix to its written form.
_RECORDINGS: list[dict[Any, Any]] = []
#: Largest written form kept (operations): a form is for recognising a mistake, not a store.
_MAX_FACTORS = 16


@contextlib.contextmanager
def recording() -> Iterator[dict[Any, Any]]:
    """Within this block, every :func:`product` and :func:`transpose` notes the written form
    of its result in the dictionary yielded (matrix -> unevaluated form)."""
    forms: dict[Any, Any] = {}
    _RECORDINGS.append(forms)
    try:
        yield forms
    finally:
        _RECORDINGS.pop()


def form_of(matrix: Any, forms: dict[Any, Any] | None = None) -> Any:
    """The written form noted for ``matrix`` (in ``forms``, else the open recording), or the
    matrix itself."""
    table = forms if forms is not None else (_RECORDINGS[-1] if _RECORDINGS else {})
    try:
        return table.get(matrix, matrix)
    except TypeError:  # a mutable matrix cannot be looked up: it has no noted form
        return matrix


def product(left: Any, right: Any) -> Any:
    """``left * right`` for two explicit matrices, as an immutable matrix (raises SymPy's
    ShapeError as the product does); its form is ``MatMul`` of theirs."""
    value = sympy.ImmutableMatrix(left * right)
    _note(value, lambda: MatMul(form_of(left), form_of(right)))
    return value


def transpose(matrix: Any) -> Any:
    """The transpose of an explicit matrix, as an immutable matrix; its form is ``Transpose``
    of the matrix's."""
    value = sympy.ImmutableMatrix(matrix.T)
    _note(value, lambda: Transpose(form_of(matrix)))
    return value


def _note(value: Any, form: Any) -> None:
    if not _RECORDINGS:
        return
    built = form()
    if _size(built) <= _MAX_FACTORS:
        _RECORDINGS[-1][value] = built


def _size(form: Any) -> int:
    if isinstance(form, (MatMul, Transpose)):
        return 1 + sum(_size(arg) for arg in form.args)
    return 1
