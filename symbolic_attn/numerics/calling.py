r"""Calling the implementation under test: its arguments in, what it returned out.

The same rules hold wherever the implementation runs, in this process
(:mod:`symbolic_attn.numerics.compare`) or in the child process of the command line
(:mod:`symbolic_attn.numerics.isolation`):

* it is called as ``fn(q, k, v, mask)`` on copies of the arrays, so it cannot change the
  case; a given scale is passed as the keyword ``scale=`` (a float) only when ``fn``
  accepts one (:func:`takes_scale`): a ``fn(q, k, v, mask)`` applies the scale itself;
* it returns the output, or ``(output, weights)`` (:func:`split_result`): a pair is read as
  the output itself when it is the output's rows (one query's two numbers, or two rows).

>>> def attend(q, k, v, mask, scale=1.0):
...     return v
>>> takes_scale(attend), takes_scale(max), takes_scale(max, unknown=True)  # max: no signature to read
(True, False, True)
>>> output, weights = split_result(([[1.0, 2.0]], [[1.0]]))
>>> output.tolist(), weights.tolist()
([[1.0, 2.0]], [[1.0]])
>>> split_result([1.0, 2.0])[1] is None
True
"""

from __future__ import annotations

import inspect
import numbers

from symbolic_attn.numerics.backends import to_numpy

__all__ = ["takes_scale", "call_converted", "split_result"]


def takes_scale(fn, unknown: bool = False) -> bool:
    """Whether ``fn`` accepts a ``scale`` keyword (by name or ``**kwargs``).

    ``unknown`` is the answer when the signature cannot be read (a builtin, some C
    extensions): the battery runs its explicit-scale cases only for a known ``scale=``
    (``False``), while a call with a scale passes it, as documented (``True``).
    """
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return unknown
    return "scale" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


def call_converted(fn, arrays, mask_arg, scale=None):
    """``fn`` on copies of ``arrays`` (q, k, v), the mask already in its convention.

    ``scale=`` is added when a scale is given and ``fn`` may take it.
    """
    q, k, v = (a.copy() for a in arrays)
    if scale is None or not takes_scale(fn, unknown=True):  # a fn(q, k, v, mask) applies the scale itself
        return fn(q, k, v, mask_arg)
    return fn(q, k, v, mask_arg, scale=float(scale))


def split_result(returned, shape=None):
    """(output, weights or None) from what an implementation returned.

    A tuple or list of exactly two items is ``(output, weights)``, unless it is the
    output itself given as rows: two numbers (one query), or, when ``shape`` (n, d_v)
    is given with n = 2, two rows of d_v numbers each (lists, tuples or 1-D arrays).
    """
    if isinstance(returned, (tuple, list)) and len(returned) == 2 and not _is_number_row(returned) \
            and not (shape is not None and shape[0] == 2 and all(_is_row(item, shape[1]) for item in returned)):
        return to_numpy(returned[0], "output"), to_numpy(returned[1], "weights")
    return to_numpy(returned, "output"), None


def _is_number_row(values) -> bool:
    return all(isinstance(x, numbers.Real) for x in values)


def _is_row(item, length) -> bool:
    """A row of ``length`` numbers: a list or tuple of them, or a 1-D array."""
    if isinstance(item, (list, tuple)):
        return len(item) == length and _is_number_row(item)
    return getattr(item, "ndim", None) == 1 and len(item) == length
