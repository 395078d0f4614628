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

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["memoized", "MEMO_SIZE"]

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
