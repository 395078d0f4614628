r"""Bound variables by principle: one substitution and one renaming that respect binders.

``Sum``, ``Product``, ``Integral`` (limits ``(k, a, b)`` or ``(k,)``) and ``Lambda`` bind
their variables.  SymPy's ``xreplace`` does not know this: replacing ``j`` by ``i`` inside
``Sum(s[i, j], (i, 1, n))`` captures the new ``i``, and a canonical name chosen for an outer
sum can collide with the name an inner sum already uses.  Every substitution and renaming
of the checker goes through :func:`substitute`, which

* stops at a binder of the replaced variable (the inner variable *shadows* it), and
* renames a binder's variable first when it occurs free in a replacement (no *capture*).

:func:`bind_fresh` is applied to every expression before any strategy or rule of the
checker sees it: the variable of every binder is replaced by a stand-in whose only fact is
``integer`` (for sums and products).  So flags on the author's Symbol (``k`` declared
positive) never reach a bound occurrence, and facts stated about a free ``k`` never reach
a bound one.  The range ``a <= k <= b`` is a fact only inside that binder: the side
conditions and the sign calculus add it when they enter the sum.

The stand-in of a binder depends only on the author's variable and the binder's *level*
(how many binders enclose it), so binding the same expression twice gives the same tree,
and two binders at one level never nest (a binder's body lies one level deeper).

>>> import sympy
>>> i, j, n = sympy.symbols("i j n", integer=True, positive=True)
>>> s = sympy.IndexedBase("s")
>>> inner = sympy.Sum(s[i, j], (i, 1, n))
>>> substitute(inner, {j: i})            # the free j becomes i; the bound i is renamed first
Sum(s[_i, i], (_i, 1, n))
>>> inner.xreplace({j: i})               # what a bare xreplace does: captured
Sum(s[i, i], (i, 1, n))
>>> bound = bind_fresh(sympy.Sum(i, (i, 0, n)))
>>> bound.function.is_positive is None   # the declared flag of i is gone; only integer stays
True
"""

import itertools
from typing import Any

import sympy

from symbolic_attn.errors import UndecidedError
from symbolic_attn.exact.memo import memoized

__all__ = ["substitute", "bind_fresh", "unbind", "is_binder", "bound_stand_in", "original_of", "binder_limits",
           "LIMIT_BINDERS"]

#: Binders written with limits ``(variable, low, high)`` (or ``(variable,)``).
LIMIT_BINDERS = (sympy.Sum, sympy.Product, sympy.Integral)
#: Binders over integers: their stand-ins are integer (an Integral's variable is not).
_INTEGER_BINDERS = (sympy.Sum, sympy.Product)

_fresh_counter = itertools.count(1)
#: (author's variable, level, integer?) -> its stand-in; stand-in -> author's variable.
_STAND_INS: dict[Any, Any] = {}
_ORIGINAL: dict[Any, Any] = {}


def is_binder(expr: Any) -> bool:
    """True for a Sum, Product, Integral or Lambda."""
    return isinstance(expr, LIMIT_BINDERS + (sympy.Lambda,))


def original_of(variable: Any) -> Any:
    """The author's variable a stand-in was made for (``variable`` itself otherwise)."""
    return _ORIGINAL.get(variable, variable)


def bound_stand_in(variable: Any, level: int, integer: bool = True) -> Any:
    """The stand-in of a binder's ``variable`` at ``level``: a Dummy named as the author's,
    with no fact but ``integer`` (always the same object for the same arguments)."""
    original = original_of(variable)
    key = (original, level, integer)
    found = _STAND_INS.get(key)
    if found is None:
        name = getattr(original, "name", str(original))
        found = sympy.Dummy(name, integer=True) if integer else sympy.Dummy(name)
        _STAND_INS[key] = found
        _ORIGINAL[found] = original
    return found


def _fresh_like(variable: Any) -> Any:
    """A new variable for renaming a binder (same name and flags): it occurs nowhere else."""
    fresh = sympy.Dummy(getattr(variable, "name", "x"), **_flags(variable))
    _ORIGINAL[fresh] = original_of(variable)
    return fresh


def _flags(variable: Any) -> dict[Any, Any]:
    return {key: value for key, value in getattr(variable, "assumptions0", {}).items()
            if value is not None and key in ("integer", "real", "positive", "negative", "nonnegative",
                                             "nonpositive", "nonzero", "even", "odd", "rational", "finite")}


def binder_limits(expr: Any) -> list[Any]:
    """The limits of a limit binder, outermost first, each as a tuple (``(k, a, b)`` or ``(k,)``)."""
    return [tuple(limit) for limit in reversed(expr.limits)]


# ------------------------------------------------------------------------ substitution


def substitute(expr: Any, mapping: Any) -> Any:
    """``expr`` with free occurrences of the symbols in ``mapping`` replaced, simultaneously,
    capture-avoiding.  Keys must be symbols (Symbol, Dummy, Idx); values any expressions.

    Raises :class:`~symbolic_attn.errors.UndecidedError` for a derivative with respect to
    a replaced variable that cannot be evaluated first (``Derivative(f(x), x)`` at ``x = 1``
    is not ``Derivative(f(1), 1)``).
    """
    mapping = {key: sympy.sympify(value, strict=True) if not isinstance(value, sympy.Basic) else value
               for key, value in mapping.items() if key != value}
    if not mapping or not isinstance(expr, (sympy.Basic, sympy.MatrixBase)):
        return expr
    if isinstance(expr, sympy.MatrixBase):
        return expr.applyfunc(lambda entry: substitute(entry, mapping))
    return _substitute(expr, mapping)


def _substitute(expr: Any, mapping: Any) -> Any:
    if not mapping:
        return expr
    if expr in mapping:
        return mapping[expr]
    if not expr.args or not (expr.free_symbols & set(mapping)):
        return expr
    if isinstance(expr, LIMIT_BINDERS):
        return _substitute_limits(expr, mapping)
    if isinstance(expr, sympy.Lambda):
        return _substitute_lambda(expr, mapping)
    if isinstance(expr, sympy.Derivative) and set(expr.variables) & set(mapping):
        evaluated = expr.doit()
        if evaluated.has(sympy.Derivative):
            raise UndecidedError(f"cannot substitute into the derivative {sympy.sstr(expr)[:120]}: "
                                 "it does not evaluate")
        return _substitute(evaluated, mapping)
    return expr.func(*[_substitute(arg, mapping) for arg in expr.args])


def _capture_risk(mapping: Any) -> set[Any]:
    return set().union(*[getattr(value, "free_symbols", set()) for value in mapping.values()])


def _substitute_limits(expr: Any, mapping: Any) -> Any:
    """A binder with limits: outermost limit first; each variable shadows, or is renamed when a
    replacement mentions it."""
    scope = dict(mapping)
    limits = []
    for limit in binder_limits(expr):
        variable, bounds = limit[0], limit[1:]
        bounds = tuple(_substitute(bound, scope) for bound in bounds)
        scope.pop(variable, None)
        if variable in _capture_risk(scope):
            renamed = _fresh_like(variable)
            scope[variable] = renamed
            variable = renamed
        limits.append((variable,) + bounds)
    function = _substitute(expr.function, scope)
    return type(expr)(function, *reversed(limits))


def _substitute_lambda(expr: Any, mapping: Any) -> Any:
    scope = {key: value for key, value in mapping.items() if key not in expr.variables}
    variables = list(expr.variables)
    risk = _capture_risk(scope)
    for position, variable in enumerate(variables):
        if variable in risk:
            renamed = _fresh_like(variable)
            scope[variable] = renamed
            variables[position] = renamed
    return sympy.Lambda(tuple(variables), _substitute(expr.expr, scope))


# ----------------------------------------------------------------------------- binding


def bind_fresh(expr: Any, level: int = 0) -> Any:
    """Every binder's variable replaced by its stand-in (:func:`bound_stand_in`), level by level.

    Idempotent, and the same for alpha-equivalent trees that use the same names.  Matrices
    are bound entry by entry.
    """
    if isinstance(expr, sympy.MatrixBase):
        return expr.applyfunc(lambda entry: bind_fresh(entry, level))
    if not isinstance(expr, sympy.Basic) or not expr.args:
        return expr
    return _bind_remembered(expr, level)


@memoized
def _bind_remembered(expr: Any, level: int) -> Any:
    # Binding is a pure function of the tree (stand-ins are fixed per name and level): a
    # step's sides are bound several times over.
    return _bind(expr, level)


def _bind(expr: Any, level: int) -> Any:
    if not _has_binder(expr):
        return expr
    if isinstance(expr, LIMIT_BINDERS):
        integer = isinstance(expr, _INTEGER_BINDERS)
        limits: list[Any] = []
        scope: dict[Any, Any] = {}
        depth = level
        for limit in binder_limits(expr):
            variable, bounds = limit[0], limit[1:]
            bounds = tuple(_bind(_substitute(bound, scope), depth) for bound in bounds)
            stand_in = bound_stand_in(variable, depth, integer)
            scope.pop(variable, None)
            if stand_in != variable:
                if stand_in in _body_free(expr, variable):
                    # The stand-in already occurs free in the body (an escaped variable):
                    # binding it would capture; a fresh name is always safe.
                    stand_in = _fresh_like(stand_in)
                    if integer and not stand_in.is_integer:
                        stand_in = sympy.Dummy(stand_in.name, integer=True)
                scope[variable] = stand_in
            limits.append((stand_in,) + bounds)
            depth += 1
        function = _bind(_substitute(expr.function, scope), depth)
        return type(expr)(function, *reversed(limits))
    if isinstance(expr, sympy.Lambda):
        variables = list(expr.variables)
        scope = {}
        for position, variable in enumerate(variables):
            stand_in = bound_stand_in(variable, level + position, integer=False)
            scope[variable] = stand_in
            variables[position] = stand_in
        return sympy.Lambda(tuple(variables), _bind(_substitute(expr.expr, scope), level + len(variables)))
    return expr.func(*[_bind(arg, level) for arg in expr.args])


def _body_free(expr: Any, variable: Any) -> set[Any]:
    free: set[Any] = (expr.function.free_symbols if hasattr(expr, "function") else expr.free_symbols) - {variable}
    return free


def _has_binder(expr: Any) -> bool:
    return isinstance(expr, sympy.Basic) and expr.has(*(LIMIT_BINDERS + (sympy.Lambda,)))


def unbind(expr: Any) -> Any:
    """The author's variables back in every binder where that captures nothing (the original
    name is not free in the binder's body): the view in which an author's own rewrite rule
    (an :class:`~.prove.Assumption`) recognises the sums it was written for."""
    if isinstance(expr, sympy.MatrixBase):
        return expr.applyfunc(unbind)
    if not isinstance(expr, sympy.Basic) or not _has_binder(expr):
        return expr
    if isinstance(expr, LIMIT_BINDERS):
        limits: list[Any] = []
        scope: dict[Any, Any] = {}
        taken = set(expr.function.free_symbols).union(*[b.free_symbols for limit in expr.limits for b in limit[1:]])
        for limit in binder_limits(expr):
            variable, bounds = limit[0], tuple(_substitute(b, scope) for b in limit[1:])
            original = original_of(variable)
            if original != variable and original not in taken and original not in scope.values():
                scope[variable] = original
                variable = original
            limits.append((variable,) + tuple(unbind(b) for b in bounds))
        return type(expr)(unbind(_substitute(expr.function, scope)), *reversed(limits))
    return expr.func(*[unbind(arg) for arg in expr.args])
