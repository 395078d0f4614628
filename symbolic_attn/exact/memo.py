"""Remembered answers of pure functions of exact (SymPy) values.

A step passes through the checker several times (its side conditions, its sides unfolded,
each strategy's guard, the sign calculus on every subterm), a printed chain prints an
expression to decide its layout before printing it, and SymPy rebuilds equal expressions
as new objects that have lost their own caches.  A memo keyed by the
expression (SymPy's ``==`` and hash are structural, assumptions of symbols included) gives
the answer again at once.  Each table is bounded: it is emptied when full, so a long
session does not grow without end.  An argument that cannot be hashed (a mutable matrix)
is simply computed every time.

>>> calls = []
>>> @memoized
... def double(x):
...     calls.append(x)
...     return 2 * x
>>> double(3), double(3), calls
(6, 6, [3])
"""

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["memoized", "memoized_in_scope", "scope", "MEMO_SIZE"]

#: Entries a table holds before it is emptied.
MEMO_SIZE = 20000


def memoized(
    function: Callable[..., Any] | None = None, *, key: Callable[..., Any] | None = None, size: int = MEMO_SIZE
) -> Any:
    """Decorate a pure function: its answers remembered by ``key(*args)`` (default: the args)."""
    if function is None:
        return lambda f: memoized(f, key=key, size=size)
    table: dict[Any, Any] = {}

    @functools.wraps(function)
    def remembered(*args: Any, **keywords: Any) -> Any:
        index = key(*args, **keywords) if key is not None else (args, tuple(sorted(keywords.items())))
        try:
            return table[index]
        except KeyError:
            pass
        except TypeError:  # unhashable: nothing to remember it by
            return function(*args, **keywords)
        answer = function(*args, **keywords)
        if len(table) >= size:
            table.clear()
        table[index] = answer
        return answer

    remembered.table = table  # type: ignore[attr-defined]  # the table, for tests and clearing
    return remembered


#: The open scopes' tables, one list per open :func:`scope` (innermost last).
_SCOPES: list[list[dict[Any, Any]]] = []


@contextlib.contextmanager
def scope() -> Iterator[None]:
    """Within this block, functions decorated with :func:`memoized_in_scope` remember their
    answers; when the outermost block ends, everything they remembered is forgotten.

    For work repeated *within* one task (one step decided, its mistake named: the same
    residual reduced by two strategies, the same candidate reached twice), which must not
    carry over to the next task:

    >>> calls = []
    >>> @memoized_in_scope
    ... def square(x):
    ...     calls.append(x)
    ...     return x * x
    >>> with scope():
    ...     square(3), square(3)
    (9, 9)
    >>> square(3), calls
    (9, [3, 3])
    """
    opened = not _SCOPES
    if opened:
        _SCOPES.append([])
    try:
        yield
    finally:
        if opened:
            for table in _SCOPES.pop():
                table.clear()


def memoized_in_scope(function: Callable[..., Any]) -> Any:
    """Decorate a pure function of hashable arguments: remembered inside a :func:`scope`
    only (outside one, computed every time)."""
    table: dict[Any, Any] = {}

    @functools.wraps(function)
    def remembered(*args: Any) -> Any:
        if not _SCOPES:
            return function(*args)
        try:
            return table[args]
        except KeyError:
            pass
        except TypeError:  # unhashable: nothing to remember it by
            return function(*args)
        if not table:
            _SCOPES[0].append(table)  # forgotten when the scope ends
        answer = function(*args)
        if len(table) < MEMO_SIZE:
            table[args] = answer
        return answer

    return remembered
