r"""The normal form of sums: linearity, factors out, bound indices renamed, sums written out.

Two rewritings of sums, each exact for ordinary (non-reversed) integer ranges, which the side
conditions guarantee for every sum written in a step:

* :func:`sum_rules` -- linearity, factors free of the index taken out, constant summands
  evaluated (``sum_{k=a}^{b} c = c (b - a + 1)``), Kronecker deltas resolved, double sums in
  one order of summation, and each bound index renamed to a canonical name by its nesting
  depth (capture-avoiding), so that two sums equal up to these rules print the same;
* :func:`expand_sums` -- sums and products over concrete ranges written out term by term.

A delta ``[k = t]`` is resolved only when ``t`` is shown to be an integer inside the range,
which is the sign calculus's question, not this module's: the caller passes the decision
in as a :data:`Membership` (:func:`~.conditions.range_membership` gives the sign calculus's),
so that this module sits below the sign calculus, which uses the normal form in turn.

>>> import sympy
>>> k, n = sympy.symbols("k n", integer=True, positive=True)
>>> s = sympy.IndexedBase("s")
>>> sum_rules(sympy.Sum(2 * s[k] + 1, (k, 1, n)) - 2 * sympy.Sum(s[k], (k, 1, n)))
n
>>> expand_sums(sympy.Sum(s[k], (k, 1, 3)))
s[1] + s[2] + s[3]
"""

from collections.abc import Callable
from typing import Any

import sympy

from symbolic_attn.exact.memo import memoized
from symbolic_attn.proofs.binders import substitute

__all__ = ["Membership", "MAX_TERMS", "count_operations", "expand_sums", "sum_rules"]

#: ``member(t, a, b, ranges)``: whether ``t`` is shown to be an integer with ``a <= t <= b``,
#: under the enclosing sums' ``ranges`` ((k, low, high) triples).
Membership = Callable[[Any, Any, Any, tuple[Any, ...]], bool]

#: Longest explicit sum (or product) written out term by term.
MAX_TERMS = 1000
#: Rounds of renormalising (a factor taken out of a sum is one level shallower afterwards).
_ROUNDS = 8


@memoized
def count_operations(expr: Any) -> int:
    """``count_ops(expr)``, remembered: every strategy asks it of the same residual."""
    count: int = sympy.count_ops(expr)
    return count


def _canonical_index(depth: int) -> Any:
    """The bound index of a sum at nesting ``depth`` in the normal form (an integer, nothing else)."""
    while depth >= len(_CANONICAL):
        _CANONICAL.append(sympy.Dummy(f"j{len(_CANONICAL)}", integer=True))
    return _CANONICAL[depth]


_CANONICAL: list[Any] = []


def _normal_sum(expr: Any, member: Membership, depth: int = 0, ranges: tuple[Any, ...] = ()) -> Any:
    """Linearity, constant factors out, constant summands evaluated, deltas resolved, bound
    index renamed.

    The index of a sum nested ``depth`` sums deep is renamed to the ``depth``-th canonical
    name (de Bruijn levels), by capture-avoiding substitution: an inner sum is one level
    deeper, so it can never bind the outer sum's name.  ``ranges`` are the enclosing sums'
    ranges (where their indices lie).  Valid for ordinary (non-reversed) ranges over the
    integers, which the side conditions guarantee for every sum written in the step; SymPy's
    sum convention agrees with the ordinary sum there.
    """
    if not isinstance(expr, sympy.Basic) or not expr.has(sympy.Sum):
        return expr
    if isinstance(expr, sympy.Sum):
        # A multiple sum is the sum over its outermost index of the sum over the others.
        limits = expr.limits
        function = sympy.Sum(expr.function, *limits[:-1]) if len(limits) > 1 else expr.function
        return _normal_single(function, limits[-1], member, depth, ranges)
    return expr.func(*[_normal_sum(arg, member, depth, ranges) for arg in expr.args])


def _normal_single(function: Any, limit: tuple[Any, Any, Any], member: Membership, depth: int,
                   ranges: tuple[Any, ...] = ()) -> Any:
    variable, low, high = limit
    index = _canonical_index(depth)
    if index != variable:
        if index in function.free_symbols:
            # The canonical name occurs free here (an index that escaped its sum): renaming
            # would capture it; keep the author's variable.
            index = variable
        else:
            function = substitute(function, {variable: index})
    inside = ranges + ((index, low, high),)
    function = sympy.expand(_normal_sum(sympy.expand(function), member, depth + 1, inside))
    total: Any = sympy.Integer(0)
    for term in sympy.Add.make_args(function):
        constant: list[Any] = []
        dependent: list[Any] = []
        for factor in sympy.Mul.make_args(term):
            (dependent if index in factor.free_symbols else constant).append(factor)
        if not dependent:
            total += sympy.Mul(*constant) * (high - low + 1)
            continue
        resolved = _delta_value(sympy.Mul(*dependent), index, low, high, ranges, member)
        if resolved is not None:
            total += sympy.Mul(*constant) * resolved
        else:
            total += sympy.Mul(*constant) * sympy.Sum(sympy.Mul(*dependent), (index, low, high))
    return total


def _delta_value(term: Any, index: Any, low: Any, high: Any, ranges: tuple[Any, ...], member: Membership) -> Any:
    """``sum_{k=a}^{b} [k = t] f(k) = f(t)`` for an integer ``t`` shown (by ``member``) to lie in
    ``a..b`` under the enclosing ranges, else None."""
    for factor in sympy.Mul.make_args(term):
        if not isinstance(factor, sympy.KroneckerDelta) or index not in factor.args:
            continue
        target = factor.args[1] if factor.args[0] == index else factor.args[0]
        if index in target.free_symbols or not member(target, low, high, ranges):
            continue
        rest = sympy.Mul(*[f for f in sympy.Mul.make_args(term) if f is not factor])
        return substitute(rest, {index: target})
    return None


def _nowhere(target: Any, low: Any, high: Any, ranges: tuple[Any, ...]) -> bool:
    """The :data:`Membership` that shows nothing (no delta is resolved)."""
    return False


def _ordered_sums(expr: Any) -> Any:
    """Each double sum over independent ranges in one order of summation (the least by SymPy's
    sort key): ``sum_i sum_j f = sum_j sum_i f`` when neither range mentions the other index."""
    if not isinstance(expr, sympy.Basic) or not expr.has(sympy.Sum):
        return expr

    def order(total: Any) -> Any:
        if len(total.limits) != 2:
            return total
        (inner, a1, b1), (outer, a0, b0) = total.limits
        swap = {inner: outer, outer: inner}
        if outer not in a1.free_symbols | b1.free_symbols:
            # a0 <= i <= b0, a1 <= j <= b1: the new outer index (the old inner one, renamed)
            # keeps the inner range, the new inner index the outer range
            ranges = ((a1, b1), (a0, b0))
        elif b1 == outer and outer not in a1.free_symbols and _at_least(a1 - a0):
            # a0 <= i <= b0, a1 <= j <= i  (a1 >= a0)  <=>  a1 <= j <= b0, j <= i <= b0
            ranges = ((a1, b0), (inner, b0))
        elif a1 == outer and outer not in b1.free_symbols and _at_least(b0 - b1):
            # a0 <= i <= b0, i <= j <= b1  (b1 <= b0)  <=>  a0 <= j <= b1, a0 <= i <= j
            ranges = ((a0, b1), (a0, inner))
        else:
            return total
        (first_low, first_high), (second_low, second_high) = ranges
        # The new inner sum runs over the old outer index (named `inner` after the swap).
        swapped = sympy.Sum(substitute(total.function, swap), (inner, _named(second_low, swap), _named(second_high, swap)),
                            (outer, first_low, first_high))
        if outer not in total.function.free_symbols and inner in total.function.free_symbols:
            # The terms do not depend on the outer index: swapped, the inner sum only counts
            # (sum_i sum_{j <= i} s_j = sum_j (n - j + 1) s_j).
            return swapped
        if inner not in total.function.free_symbols and outer in total.function.free_symbols:
            return total
        return min((total, swapped), key=sympy.default_sort_key)

    return expr.replace(lambda e: isinstance(e, sympy.Sum), order)


def _at_least(difference: Any) -> bool:
    """``difference`` is a non-negative integer as written (no facts needed)."""
    return bool(difference.is_Integer and difference >= 0)


def _named(bound: Any, swap: dict[Any, Any]) -> Any:
    """A range end of the swapped sum: the index it mentions is the new outer index."""
    return substitute(bound, {name: swap[name] for name in swap if name in getattr(bound, "free_symbols", ())})


def sum_rules(expr: Any, member: Membership | None = None) -> Any:
    """``expr`` with every sum in the normal form (the module docstring), as one reduced fraction.

    ``member`` decides where a Kronecker delta may be resolved; without one, none is.  The
    result equals ``expr`` wherever every range in it is ordinary (not reversed).
    """
    if not expr.has(sympy.Sum):
        return expr
    normal = _normal_sum(sympy.expand(expr), member or _nowhere)
    for _ in range(_ROUNDS):
        # A factor taken out of a sum is one level shallower now: named again for its depth;
        # double sums in one order of summation, whose inner sums may then count.
        again = _normal_sum(sympy.expand(_ordered_sums(normal)), member or _nowhere)
        if again == normal:
            break
        normal = again
    normal = _ordered_sums(normal)
    return sympy.cancel(sympy.together(sympy.expand(normal)))


def expand_sums(expr: Any) -> Any:
    """Sums and products with integer limits written out (an empty sum is 0, an empty product 1;
    a reversed range is left alone: the side conditions refuse it)."""
    if not isinstance(expr, sympy.Basic) or not expr.has(sympy.Sum, sympy.Product):
        return expr

    def explicit(total: Any) -> Any:
        # The outermost index first (an inner range may mention it); the inner sums are
        # written out in the next round.
        if len(total.limits[-1]) != 3:
            return total
        variable, low, high = total.limits[-1]
        if not (low.is_Integer and high.is_Integer) or high < low - 1:
            return total
        count = int(high - low + 1)
        function = type(total)(total.function, *total.limits[:-1]) if len(total.limits) > 1 else total.function
        if count > MAX_TERMS or count * (count_operations(function) + 1) > 50 * MAX_TERMS:
            return total
        combine = sympy.Add if isinstance(total, sympy.Sum) else sympy.Mul
        return combine(*[substitute(function, {variable: sympy.Integer(value)})
                         for value in range(int(low), int(high) + 1)])

    for _ in range(_ROUNDS):
        new = expr.replace(lambda e: isinstance(e, (sympy.Sum, sympy.Product)), explicit)
        if new == expr:
            break
        expr = new
    return expr
