r"""Safe parser: text -> exact SymPy values, without ever evaluating the text as code.

Students' files and command-line arguments are data.  SymPy's ``sympify`` and
``parse_expr`` call Python's ``eval`` (a restricted namespace is no sandbox), so nothing
here does: the text is read by the input language's own grammar
(:mod:`symbolic_attn.exact.syntax`, a typed tree with source spans) and the tree is
evaluated by its one evaluator (:mod:`symbolic_attn.exact.evaluate`).  Only number
literals, the operators ``+ - * / ^ ** @``, parentheses, list brackets, ``.T``, the
functions ``sqrt exp ln log sin cos erf tanh`` and the constants ``e pi`` (plus names the
caller binds) are known.  Anything else -- attribute access, calls of unknown names,
indexing, lambdas, comprehensions -- is a :class:`ParseError` naming the offending piece.

Size limits are checked *before* anything is built, so hostile input such as
``9**9**9**9``, ``1e100000000`` or a million-digit number fails at once.

Decimals are exact: ``"0.43"`` is ``43/100`` and ``"1e-3"`` is ``1/1000``.
``^`` means power, as in hand-written maths.

>>> parse_expression("0.43")
43/100
>>> parse_expression("2^3 + 1/3")
25/3
>>> parse_expression("ln(2) + sqrt(8)")
log(2) + 2*sqrt(2)
>>> parse_matrix("[[1, 0], [1/2, 1e-3]]")
Matrix([
[  1,      0],
[1/2, 1/1000]])
>>> parse_expression("__import__('os')")
Traceback (most recent call last):
...
symbolic_attn.errors.ParseError: unknown function '__import__' at column 1 in "__import__('os')"
"""

from collections.abc import Mapping
from typing import Any

import sympy

from symbolic_attn.errors import ParseError, shown
from symbolic_attn.exact.evaluate import Evaluator
from symbolic_attn.exact.limits import DEFAULT_LIMITS, Limits
from symbolic_attn.exact.syntax import number_value, parse, snippet

__all__ = ["Limits", "DEFAULT_LIMITS", "parse_expression", "parse_matrix", "decimal_value"]


def decimal_value(literal: str, *, limits: Limits = DEFAULT_LIMITS) -> sympy.Rational:
    """The exact rational written by a decimal literal such as ``0.43`` or ``1e-3``.

    >>> decimal_value("0.140"), decimal_value("2.5e2")
    (7/50, 250)
    >>> decimal_value("0.\u09e7\u09ec")
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.ParseError: not a number: '0.১৬' (ASCII digits only)
    """
    if not isinstance(literal, str):
        raise ParseError(f"expected the text of a number, got {shown(type(literal).__name__)}")
    return number_value(literal, limits)[0]


def parse_expression(text: str, names: Mapping[str, object] | None = None, *, limits: Limits = DEFAULT_LIMITS) -> Any:
    """Parse one exact expression (a scalar, or a matrix when ``names`` holds matrices).

    ``names`` binds extra identifiers (for exercise files: ``Q = "X @ W_Q"``); with
    matrices bound, ``@`` is the matrix product and ``.T`` the transpose.

    >>> import sympy
    >>> parse_expression("X.T @ X", {"X": sympy.Matrix([[1, 2]])})
    Matrix([
    [1, 2],
    [2, 4]])
    """
    tree = parse(text, limits)
    return Evaluator(text, names, limits).evaluate(tree)


def parse_matrix(text: str, *, limits: Limits = DEFAULT_LIMITS) -> sympy.ImmutableMatrix:
    """Parse a matrix written as nested lists, ``[[1, 0], [0, 1]]``.

    A flat list ``[1, 2, 3]`` is one row (a 1x3 matrix); rows must have equal length.  Any
    expression of the language whose value is a matrix is one (``[[1, 2]] * 2``), as
    everywhere else; a number is refused.
    """
    value = Evaluator(text, {}, limits).evaluate(parse(text, limits))
    if not isinstance(value, sympy.MatrixBase):
        raise ParseError(f"expected a matrix written as nested lists like [[1, 0], [0, 1]], got {snippet(text)}")
    return sympy.ImmutableMatrix(value)
