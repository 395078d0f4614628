r"""Reindexing a sum by a bijection of its range: reflection and shift, sound by construction.

Two identities hold for every value of the free symbols, for integer limits ``a``, ``b``
and an integer ``c`` (also under SymPy's convention for a reversed range, which the side
conditions refuse anyway):

* **reflection** -- ``sum_{j=a}^{b} f(j) = sum_{j=a}^{b} f(a + b - j)``: ``j -> a + b - j``
  maps ``a..b`` onto itself;
* **shift** -- ``sum_{j=a}^{b} f(j) = sum_{j=a+c}^{b+c} f(j - c)``.

:func:`reindex` rewrites every sum of an expression (inner sums first) by at most one of
each, chosen from its summand: reflected when the index stands more often as ``t - j``
than as ``t + j`` in the subscripts, then shifted when every subscript that mentions the
index is ``j + c`` for one and the same non-zero integer ``c``.  Which rewriting is chosen
only affects what the checker can prove, never whether it is right: each rewriting is one
of the two identities above, applied by capture-avoiding substitution
(:func:`~.binders.substitute`) with the index first renamed to a fresh variable.  The
result equals the input, and the prover decides it with the sum rules.

A sum whose limits are not known to be integers is left alone, and so is a shift by an
amount not known to be an integer (``j -> j - 1/2`` is not a bijection of the integers).

>>> import sympy
>>> j, n = sympy.symbols("j n", integer=True)
>>> v = sympy.IndexedBase("v")
>>> reindex(sympy.Sum(v[n + 1 - j], (j, 1, n)))          # j -> n + 1 - j
Sum(v[_j], (_j, 1, n))
>>> reindex(sympy.Sum(v[j + 1], (j, 0, n - 1)))          # j -> j - 1
Sum(v[_j], (_j, 1, n))
>>> reindex(sympy.Sum(v[n - j], (j, 1, n)))              # reflected, then shifted: not v_1..v_n
Sum(v[_j], (_j, 0, n - 1))
"""

from collections import Counter
from typing import Any

import sympy

from symbolic_attn.proofs.binders import substitute

__all__ = ["reindex", "reflect", "shift"]


def reflect(total: Any) -> Any:
    """``sum_{j=a}^{b} f(j)`` as ``sum_{k=a}^{b} f(a + b - k)`` (the outermost index of a Sum
    with integer limits; anything else is returned unchanged).

    >>> import sympy
    >>> j, n = sympy.symbols("j n", integer=True)
    >>> reflect(sympy.Sum(j**2, (j, 1, n)))
    Sum((-_j + n + 1)**2, (_j, 1, n))
    """
    parts = _outermost(total)
    if parts is None:
        return total
    body, (index, low, high) = parts
    fresh = _fresh(index)
    return sympy.Sum(substitute(body, {index: low + high - fresh}), (fresh, low, high))


def shift(total: Any, amount: Any) -> Any:
    """``sum_{j=a}^{b} f(j)`` as ``sum_{k=a+c}^{b+c} f(k - c)`` for ``c = amount``, an integer
    (the outermost index of a Sum with integer limits; anything else is returned unchanged).

    >>> import sympy
    >>> j, n = sympy.symbols("j n", integer=True)
    >>> shift(sympy.Sum(j, (j, 1, n)), 2)
    Sum(_j - 2, (_j, 3, n + 2))
    >>> shift(sympy.Sum(j, (j, 1, n)), sympy.Rational(1, 2))   # not a bijection of the integers
    Sum(j, (j, 1, n))
    """
    parts = _outermost(total)
    amount = sympy.sympify(amount)
    if parts is None or amount.is_integer is not True:
        return total
    body, (index, low, high) = parts
    fresh = _fresh(index)
    return sympy.Sum(substitute(body, {index: fresh - amount}), (fresh, low + amount, high + amount))


def reindex(expr: Any) -> Any:
    """Every sum of ``expr`` (inner sums first) reflected and shifted as its subscripts
    suggest (the module docstring); equal to ``expr`` for every value of its free symbols."""
    if not isinstance(expr, sympy.Basic) or not expr.has(sympy.Sum):
        return expr
    return expr.replace(lambda e: isinstance(e, sympy.Sum), _oriented)


def _oriented(total: Any) -> Any:
    """``total`` with its inner limits oriented first (a multiple sum is the sum over its
    outermost index of the sum over the others), then its outermost one."""
    if len(total.limits) > 1:
        inner = _oriented(sympy.Sum(total.function, *total.limits[:-1]))  # one limit fewer: it ends
        total = sympy.Sum(inner, total.limits[-1])
    parts = _outermost(total)
    if parts is None:
        return total
    body, (index, _, _) = parts
    signs = Counter(coefficient for coefficient, _ in _subscripts(body, index))
    if signs[-1] > signs[1]:
        total = reflect(total)
        body, (index, _, _) = _outermost(total) or (body, (index, None, None))
    found = _subscripts(body, index)
    offsets = {offset for _, offset in found}
    if len(offsets) == 1 and {coefficient for coefficient, _ in found} == {1}:
        (offset,) = offsets
        if offset != 0:
            total = shift(total, offset)
    return total


def _subscripts(function: Any, index: Any) -> list[tuple[int, Any]]:
    """``(coefficient, offset)`` of every subscript of ``function`` that is ``offset +
    coefficient * index`` with coefficient 1 or -1 and an offset free of the index; any other
    subscript mentioning the index counts as ``(0, None)`` (it blocks a shift)."""
    found: list[tuple[int, Any]] = []
    for node in sympy.preorder_traversal(function):
        if not isinstance(node, sympy.Indexed):
            continue
        for subscript in node.indices:
            if index not in subscript.free_symbols:
                continue
            expanded = sympy.expand(subscript)
            offset, dependent = expanded.as_independent(index, as_Add=True)
            if dependent == index:
                found.append((1, offset))
            elif dependent == -index:
                found.append((-1, offset))
            else:
                found.append((0, None))
    return found


def _outermost(total: Any) -> tuple[Any, tuple[Any, Any, Any]] | None:
    """``(body, (index, low, high))`` of a Sum's outermost limit, its body the sum over the
    other limits (or the summand); None when a limit is not known to be an integer."""
    if not isinstance(total, sympy.Sum) or any(len(limit) != 3 for limit in total.limits):
        return None
    index, low, high = total.limits[-1]
    if low.is_integer is not True or high.is_integer is not True:
        return None
    body = sympy.Sum(total.function, *total.limits[:-1]) if len(total.limits) > 1 else total.function
    return body, (index, low, high)


def _fresh(index: Any) -> Any:
    """A new integer variable named as ``index``: it occurs nowhere else, so renaming the
    index to it captures nothing."""
    return sympy.Dummy(getattr(index, "name", "j"), integer=True)
