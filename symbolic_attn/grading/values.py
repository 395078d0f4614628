r"""The one value grammar of grading: a number, or a matrix written as nested lists.

Everywhere a value may be a matrix -- ``[inputs]`` strings and arrays, ``[attention]``
fields (``scores``, ``query``, ``key``, ``value``) and claimed values -- the same text
gives the same value or the same error:

* a bracketed list is a matrix: ``[[0, ln(2)], [1, 2]]``; a flat list ``[1, 2, 3]`` is
  one row; rows must have equal length; a trailing comma is allowed (``[1, 2,]``);
* every entry is one expression of the input language (:mod:`symbolic_attn.exact.syntax`:
  numbers, ``+ - * / ^``, ``sqrt exp ln log sin cos erf tanh``, ``e pi`` and the names an
  exercise binds), read into one tree and evaluated once -- never printed back to text;
* anything else is a scalar expression (or a matrix expression over bound names,
  ``X @ W_Q``).

**A bare comma list is refused** (``"0.3, 0.7"``): the command line's ``--scores``
refuses it too, so the brackets are required everywhere.  Only ASCII is accepted: a digit
in another script (``0.১৬৭``, bold ``𝟎``) is refused, never read as a number.

The tree keeps each number's written text (:class:`~symbolic_attn.exact.syntax.Number`),
so that claims (:mod:`.claims`) judge a decimal by its written precision.

>>> read_value("[[0, ln(2), ln(3)]]")
Matrix([[0, log(2), log(3)]])
>>> read_value("[1/2, 0.25,]")
Matrix([[1/2, 1/4]])
>>> read_value("0.3, 0.7")
Traceback (most recent call last):
...
symbolic_attn.errors.ParseError: a list needs brackets: write [0.3, 0.7] (a bare comma at column 4)
>>> read_value("[[1, 2], [3]]")
Traceback (most recent call last):
...
symbolic_attn.errors.ParseError: row 2 has 1 entries, row 1 has 2 at column 10 in "[[1, 2], [3]]"
"""

from collections.abc import Mapping
from typing import Any

import sympy

from symbolic_attn.exact.evaluate import Evaluator
from symbolic_attn.exact.limits import DEFAULT_LIMITS, Limits
from symbolic_attn.exact.syntax import parse

__all__ = ["read_value"]


def read_value(text: str, names: Mapping[str, object] | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Any:
    """The exact value of a text: a SymPy scalar, or an ImmutableMatrix for a list.

    A flat list is a one-row matrix, as on the command line.
    """
    value = Evaluator(text, names, limits).evaluate(parse(text, limits))
    return sympy.ImmutableMatrix(value) if isinstance(value, sympy.MatrixBase) else value
