"""One set of bounds on untrusted input, shared by every front end of the input language:
the command line, exercise files, claims, answer keys, ``[define]`` computation files and
the values of students' solutions.

Every bound on *text* is checked before the value it limits is built, so hostile input
fails at once with an :class:`~symbolic_attn.errors.InputLimitError` instead of hanging.
Bounds on *values* are checked by :func:`check_value` on what was actually built, because
SymPy merges as it builds: ``((x)**1000)**1000`` is one power ``x**1000000`` and
``((1+sqrt(2))**1000)**7`` is ``(1+sqrt(2))**7000``, each piece within the text limits.

>>> DEFAULT_LIMITS.max_digits
400
>>> Limits(max_rows=32).max_rows
32
>>> import sympy
>>> x = sympy.Symbol("x")
>>> check_value((x**1000)**1000)
Traceback (most recent call last):
...
symbolic_attn.errors.InputLimitError: exponent 1000000 in x**1000000 exceeds the limit of 1000
"""

from dataclasses import dataclass
from typing import Any

from symbolic_attn.errors import InputLimitError, shown

__all__ = ["Limits", "DEFAULT_LIMITS", "check_value", "degree"]


@dataclass(frozen=True)
class Limits:
    """Bounds on what the parser accepts; all checked before building anything."""

    max_text_length: int = 200_000
    max_depth: int = 32  # brackets and parentheses nested
    max_tree_depth: int = 200  # operations nested, brackets or not
    max_digits: int = 400  # digits in one number literal
    max_decimal_exponent: int = 400  # |e| in 1e-3 style literals
    max_power_exponent: int = 1_000  # |p| and q in x**(p/q)
    max_result_bits: int = 4_000  # size of any exact rational built (about 1,200 digits)
    max_matrix_products: int = 6  # '@' in one expression
    max_product_work: int = 100_000  # multiply-adds of all '@' in one expression together
    max_function_argument: int = 6_900  # |x| in exp(x), sin(x), cos(x): e^6900 is about 10^2997
    max_rows: int = 1_024
    max_cols: int = 1_024
    max_entries: int = 65_536
    max_expression_nodes: int = 10_000  # nodes of one built entry's expression tree
    max_degree: int = 256  # polynomial degree of a built entry (see degree()): bounds expansions
    # Computation files ([define]) and the operations they call.
    max_definitions: int = 64  # definitions in one file
    max_definition_length: int = 4_000  # characters of one definition
    max_call_depth: int = 6  # calls nested inside calls
    max_calls: int = 32  # function calls in one definition
    max_dimension: int = 64  # rows or columns of any matrix a computation or a claim holds
    max_heads: int = 16  # attention heads: multihead, its [define] lists and ALiBi alike
    # Exercise files.
    max_inputs: int = 64  # names in [inputs]
    max_symbols: int = 64  # names in [symbols]
    max_claims: int = 8_192  # [[claims]] in one file
    max_string_length: int = 100_000  # characters of one TOML string
    # Claimed values (claims, answer keys, solutions).
    max_claim_length: int = 100_000  # characters of one claimed value (a 64x64 matrix of decimals fits)
    max_claim_entries: int = 4_096  # numbers in one claimed value


DEFAULT_LIMITS = Limits()


def check_value(value: Any, limits: Limits = DEFAULT_LIMITS, where: str = "") -> Any:
    """Refuse a built value (a SymPy scalar or matrix) beyond the limits; return it unchanged.

    Per entry: at most ``max_expression_nodes`` nodes, no rational of more than
    ``max_result_bits`` bits, no power ``b**(p/q)`` with ``|p|`` or ``q`` over
    ``max_power_exponent``, and :func:`degree` at most ``max_degree``.  ``where`` (such as
    ``"at column 3 "``) is put into the message.  The walk stops as soon as a bound is
    passed, so its cost is bounded too.

    >>> import sympy
    >>> check_value(sympy.sqrt(2) + 1)
    1 + sqrt(2)
    >>> check_value(sympy.Integer(2) ** 5000)
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.InputLimitError: a number of about 1500 digits exceeds the limit of 1200 digits
    """
    import sympy

    entries = value if isinstance(value, sympy.MatrixBase) else (value,)
    for entry in entries:
        if not isinstance(entry, sympy.Basic):
            continue
        if entry.is_Rational:
            _check_rational(entry, limits, where)
            continue
        nodes, stack = 0, [entry]
        while stack:
            node = stack.pop()
            nodes += 1
            if nodes > limits.max_expression_nodes:
                raise InputLimitError(
                    f"an expression {where}of more than {limits.max_expression_nodes} nodes exceeds the limit"
                )
            if node.is_Rational:
                _check_rational(node, limits, where)
            elif node.is_Pow and node.exp.is_Rational:
                p, q = abs(node.exp.p), node.exp.q
                if p > limits.max_power_exponent or q > limits.max_power_exponent:
                    raise InputLimitError(
                        f"exponent {shown(node.exp)} in {shown(node)} {where}exceeds the limit of "
                        f"{limits.max_power_exponent}"
                    )
            stack.extend(node.args)
        found = degree(entry)
        if found > limits.max_degree:
            raise InputLimitError(
                f"a power of degree {found} {where}exceeds the limit of {limits.max_degree} ({shown(entry)})"
            )
    return value


def _check_rational(number: Any, limits: Limits, where: str) -> None:
    bits = max(abs(number.p).bit_length(), number.q.bit_length())
    if bits > limits.max_result_bits:
        raise InputLimitError(
            f"a number of about {bits * 3 // 10} digits {where}exceeds the limit of "
            f"{limits.max_result_bits * 3 // 10} digits"
        )


def degree(expr: Any, _memo: dict[Any, int] | None = None) -> int:
    """A polynomial degree of an exact expression, counting every non-rational atom as a variable.

    Symbols, ``pi``, ``e``, a surd such as ``sqrt(2)`` and a function value such as
    ``exp(1/2)`` each count as degree 1; products add degrees, sums take the largest,
    ``b**n`` multiplies by ``|n|``.  It bounds what expanding the expression could cost:
    ``(1 + sqrt(2))**7000`` has degree 7000.

    >>> import sympy
    >>> degree(sympy.Integer(5)), degree(sympy.sqrt(2) * sympy.pi), degree((1 + sympy.sqrt(2)) ** 20)
    (0, 2, 20)
    """
    import math

    memo = {} if _memo is None else _memo
    if expr.is_Rational:
        return 0
    if expr.is_Atom:
        return 1
    if expr in memo:
        return memo[expr]
    if expr.is_Add:
        found = max(degree(term, memo) for term in expr.args)
    elif expr.is_Mul:
        found = sum(degree(factor, memo) for factor in expr.args)
    elif expr.is_Pow:
        base, exponent = expr.args
        if exponent.is_Rational:
            found = 1 if base.is_Rational else degree(base, memo) * max(1, math.ceil(abs(exponent)))
        else:
            found = 1 + degree(base, memo) + degree(exponent, memo)
    else:  # exp, log, sin, cos, ...: a new variable, as large as its argument
        found = max([1] + [degree(arg, memo) for arg in expr.args])
    memo[expr] = found
    return found
