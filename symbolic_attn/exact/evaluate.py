r"""The one evaluator of the input language: a tree from :mod:`.syntax` -> exact SymPy values.

It takes an environment: the names the caller binds (numbers or matrices), the scalar
functions ``sqrt exp ln log sin cos erf tanh`` and the constants ``e pi``.  Everything the
tree may say that this environment gives no meaning -- a call of another function, a
quoted option, a stage ``A.weights``, an index -- is a :class:`ParseError` naming the
column.  ``[define]`` (:mod:`symbolic_attn.model.program`) extends this class with the model
functions, options and stages; the arithmetic is this one, for every front end.

Every intermediate value is bounded (:func:`~symbolic_attn.exact.limits.check_value`) and
must be a finite real number, so no hostile text builds a huge or complex value.  Flat
chains (``1+1+...+1``) are evaluated with a loop, never by recursion.

>>> import sympy
>>> from symbolic_attn.exact.syntax import parse
>>> Evaluator("x", {}).evaluate(parse("2^3 + 1/3"))
25/3
>>> X = sympy.Matrix([[1, 2]])
>>> Evaluator("X.T @ X", {"X": X}).evaluate(parse("X.T @ X"))
Matrix([
[1, 2],
[2, 4]])
>>> Evaluator("[[1, 2]] + [[1], [2]]", {}).evaluate(parse("[[1, 2]] + [[1], [2]]"))
Traceback (most recent call last):
...
symbolic_attn.errors.ParseError: cannot add 1x2 and 2x1 at column 1 in "[[1, 2]] + [[1], [2]]"
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast

import flint
import sympy

from symbolic_attn.errors import InputLimitError, ParseError, SymbolicAttnError, UndecidedError, shown
from symbolic_attn.exact.intervals import certified_sign, proved_zero, to_arb, working_precision
from symbolic_attn.exact.limits import DEFAULT_LIMITS, Limits, check_value
from symbolic_attn.exact.syntax import (
    Attribute, BinOp, Call, Index, Matrix, Name, Node, Number, String, Transpose, UnaryOp, left_chain, matrix_entries, snippet,
)

__all__ = ["Evaluator", "SCALAR_FUNCTIONS", "CONSTANTS", "bound_value", "MINUS_INFINITY", "is_minus_infinity"]

#: name -> (fewest arguments, most arguments, the SymPy function).
SCALAR_FUNCTIONS: dict[str, tuple[int, int, Callable[..., Any]]] = {
    "sqrt": (1, 1, sympy.sqrt),
    "exp": (1, 1, sympy.exp),
    "ln": (1, 1, sympy.log),
    "log": (1, 2, sympy.log),  # natural log; log(x, b) is the base-b logarithm
    "sin": (1, 1, sympy.sin),  # for sinusoidal positional encodings
    "cos": (1, 1, sympy.cos),
    "erf": (1, 1, sympy.erf),  # GELU's exact form x * (1 + erf(x / sqrt(2))) / 2
    "tanh": (1, 1, sympy.tanh),  # GELU's tanh approximation
}
CONSTANTS = {"e": sympy.E, "E": sympy.E, "pi": sympy.pi}

#: -oo, written ``-inf``: a literal only -- a whole matrix entry (a blocked position of a
#: score matrix, an additive mask) or a whole value -- never an operand of arithmetic.
MINUS_INFINITY = sympy.S.NegativeInfinity
_INFINITY_ONLY_LITERAL = ("-inf is read only as a whole matrix entry or a whole value (a blocked score, -oo), "
                          "never inside arithmetic or a function")
#: Names Python or NumPy would read as a non-finite number, each refused with its reason.
_NOT_FINITE_NAMES = {
    "inf": "'inf' alone is not read: -inf (minus infinity, a blocked score) is the only infinity, written as a "
           "whole entry; +inf would block nothing",
    "Inf": "'Inf' is not read: minus infinity is written -inf",
    "infinity": "'infinity' is not read: minus infinity is written -inf",
    "Infinity": "'Infinity' is not read: minus infinity is written -inf",
    "oo": "'oo' is not read: minus infinity is written -inf",
    "nan": "nan is not a number: it is refused",
    "NaN": "NaN is not a number: it is refused",
}


def is_minus_infinity(node: Node) -> bool:
    """Whether ``node`` is exactly the literal ``-inf`` (one minus sign and the name inf)."""
    return isinstance(node, UnaryOp) and node.op == "-" and isinstance(node.operand, Name) \
        and node.operand.name == "inf"


class Evaluator:
    """Evaluates trees of one text over bound ``names``, within ``limits``.

    Subclasses (``[define]``) override :meth:`call`, :meth:`name`, :meth:`operand`,
    :meth:`string`, :meth:`attribute`, :meth:`index` and :meth:`matrix`; ``error`` is the
    exception type raised and ``quote_source`` whether a message ends with the text.
    """

    error: type[SymbolicAttnError] = ParseError
    quote_source = True

    def __init__(self, text: str, names: Mapping[str, object] | None = None, limits: Limits = DEFAULT_LIMITS):
        self.text = text
        self.names = {name: bound_value(name, value) for name, value in dict(names or {}).items()}
        self.limits = limits
        self.work = 0  # multiply-adds spent on matrix products so far

    # -- entry and errors -------------------------------------------------------------

    def fail(self, node: Node, what: str) -> SymbolicAttnError:
        where = f" in {snippet(self.text)}" if self.quote_source else ""
        return self.error(f"{what} at column {node.column}{where}")

    def evaluate(self, node: Node) -> Any:
        """The value of ``node``: a SymPy scalar or an ImmutableMatrix (subclasses: more)."""
        if isinstance(node, Number):
            return node.value
        if is_minus_infinity(node):
            return MINUS_INFINITY
        if isinstance(node, Name):
            return self.name(node)
        if isinstance(node, BinOp):
            return self.checked(node, self.binary(node))
        if isinstance(node, UnaryOp):
            return self.checked(node, self.unary(node))
        if isinstance(node, Call):
            return self.checked(node, self.call(node))
        if isinstance(node, Transpose):
            value = self.operand(node.operand)
            if not isinstance(value, sympy.MatrixBase):
                raise self.fail(node, "'.T' needs a matrix")
            return sympy.ImmutableMatrix(value.T)
        if isinstance(node, Matrix):
            return self.checked(node, self.matrix(node))
        if isinstance(node, String):
            return self.string(node)
        if isinstance(node, Attribute):
            return self.attribute(node)
        if isinstance(node, Index):
            return self.index(node)
        raise self.fail(node, f"{type(node).__name__} is not allowed")

    def checked(self, node: Node, value: Any) -> Any:
        """Every built value is bounded (size, numbers, powers, degree) and must be real and
        finite -- but for the entries ``-inf`` of a matrix literal, exactly -oo."""
        if not isinstance(value, (sympy.Basic, sympy.MatrixBase)):
            return value  # a subclass's own kind of value (a computation, an option)
        literal = isinstance(node, Matrix) and isinstance(value, sympy.MatrixBase)
        entries = value if isinstance(value, sympy.MatrixBase) else (value,)
        if literal and any(entry is MINUS_INFINITY for entry in entries):
            check_value(value.applyfunc(lambda x: sympy.S.Zero if x is MINUS_INFINITY else x), self.limits,
                        f"built at column {node.column} ")
        else:
            check_value(value, self.limits, f"built at column {node.column} ")
        for entry in entries:
            if entry.is_Rational or (literal and entry is MINUS_INFINITY):
                continue
            if entry is MINUS_INFINITY or (isinstance(entry, sympy.Basic) and entry.has(MINUS_INFINITY)):
                raise self.fail(node, _INFINITY_ONLY_LITERAL)
            if entry.is_number and entry.is_extended_real is False:
                raise self.fail(node, f"{shown(entry)} is not a real number")
            if entry.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
                raise self.fail(node, f"{shown(entry)} is not a finite number")
        return value

    def scalar(self, node: Node, refusal: str = "a matrix entry must be a number, not a matrix") -> Any:
        value = self.operand(node)
        if isinstance(value, sympy.MatrixBase):
            raise self.fail(node, refusal)
        return value

    # -- the parts a subclass may extend ----------------------------------------------

    def operand(self, node: Node) -> Any:
        """An operand of an operator or a function: here, simply its value."""
        return self.evaluate(node)

    def finite(self, node: Node, value: Any) -> Any:
        """``value`` itself, refused if it is or holds -oo (a literal, never an operand)."""
        if isinstance(value, sympy.MatrixBase):
            if any(entry is MINUS_INFINITY for entry in value):
                raise self.fail(node, _INFINITY_ONLY_LITERAL)
        elif value is MINUS_INFINITY:
            raise self.fail(node, _INFINITY_ONLY_LITERAL)
        return value

    def name(self, node: Name) -> Any:
        if node.name in self.names:
            return self.names[node.name]
        if node.name in CONSTANTS:
            return CONSTANTS[node.name]
        if node.name in SCALAR_FUNCTIONS:
            raise self.fail(node, f"function '{node.name}' needs an argument in parentheses")
        if node.name in _NOT_FINITE_NAMES:
            raise self.fail(node, _NOT_FINITE_NAMES[node.name])
        if node.name.lower().startswith("inf"):
            raise self.fail(node, f"unknown name '{node.name}' (minus infinity is written -inf)")
        raise self.fail(node, f"unknown name '{node.name}'")

    def call(self, node: Call) -> Any:
        if node.name not in SCALAR_FUNCTIONS:
            raise self.fail(node, f"unknown function '{node.name}'")
        return self.scalar_function(node)

    def string(self, node: String) -> Any:
        raise self.fail(node, f"literal '{shown(node.text, 20)}' is not allowed here (quoted options belong to the "
                             "functions of [define])")

    def attribute(self, node: Attribute) -> Any:
        raise self.fail(node, f"attribute '.{node.name}' is not allowed (only '.T', the transpose)")

    def index(self, node: Index) -> Any:
        raise self.fail(node, "indexing is not allowed")

    def matrix(self, node: Matrix) -> Any:
        """A bracketed list as a matrix: ``[1, 2]`` one row, ``[[1, 2], [3, 4]]`` rows."""
        shape, entries = matrix_entries(node, self.text)
        rows, width = shape if len(shape) == 2 else (1, shape[0])
        if rows > self.limits.max_rows or width > self.limits.max_cols or rows * width > self.limits.max_entries:
            raise InputLimitError(
                f"matrix of {rows}x{width} entries exceeds the limit "
                f"({self.limits.max_rows}x{self.limits.max_cols}, {self.limits.max_entries} entries)"
            )
        values = [MINUS_INFINITY if is_minus_infinity(entry) else self.scalar(entry) for entry in entries]
        return sympy.ImmutableMatrix(rows, width, values)

    # -- arithmetic ------------------------------------------------------------------

    def unary(self, node: UnaryOp) -> Any:
        signs = []
        current: Node = node
        while isinstance(current, UnaryOp):  # "- - - 1": a loop
            signs.append(current.op)
            current = current.operand
        value = self.finite(current, self.operand(current))
        if signs.count("-") % 2:
            value = -value
            return sympy.ImmutableMatrix(value) if isinstance(value, sympy.MatrixBase) else value
        return value

    def binary(self, node: BinOp) -> Any:
        if node.op == "^":
            return self.power(node, self.finite(node.left, self.operand(node.left)),
                              self.finite(node.right, self.operand(node.right)))
        first, rest = left_chain(node, "+-" if node.op in "+-" else "*/@")
        values = [self.finite(first, self.operand(first))] + [self.finite(right, self.operand(right))
                                                              for _, right in rest]
        if not any(isinstance(v, sympy.MatrixBase) or not isinstance(v, sympy.Basic) for v in values) \
                and all(op_node.op != "@" for op_node, _ in rest):
            return self.scalar_chain(rest, values)
        value = values[0]
        for (op_node, _), right_value in zip(rest, values[1:]):  # a flat chain, evaluated with a loop
            value = self.checked(op_node, self.apply(op_node, value, right_value))
        return value

    def scalar_chain(self, rest: list[tuple[BinOp, Node]], values: list[Any]) -> Any:
        """A chain of numbers built at once (one Add or Mul): building it term by term
        would re-walk the growing sum at every step, quadratic in its length."""
        terms = [values[0]]
        for (op_node, _), value in zip(rest, values[1:]):
            if op_node.op == "/":
                self.check_divisor(op_node, value)
                value = 1 / value
            terms.append(-value if op_node.op == "-" else value)
        return sympy.Add(*terms) if rest[0][0].op in "+-" else sympy.Mul(*terms)

    def apply(self, node: BinOp, left: Any, right: Any) -> Any:
        left_m, right_m = isinstance(left, sympy.MatrixBase), isinstance(right, sympy.MatrixBase)
        if node.op in "+-":
            if left_m != right_m:
                raise self.fail(node, "cannot add a number and a matrix")
            if left_m and left.shape != right.shape:
                left, right = self.broadcast(node, left, right)
            result = left + right if node.op == "+" else left - right
            return sympy.ImmutableMatrix(result) if left_m else result
        if node.op == "*":
            if left_m and right_m:
                raise self.fail(node, "use '@' for a matrix product ('*' is for multiples by a number)")
            return sympy.ImmutableMatrix(left * right) if (left_m or right_m) else left * right
        if node.op == "/":
            if right_m:
                raise self.fail(node, "cannot divide by a matrix")
            self.check_divisor(node, right)
            return sympy.ImmutableMatrix(left / right) if left_m else left / right
        if node.op == "@":
            if not (left_m and right_m):
                raise self.fail(node, "'@' needs a matrix on both sides")
            if left.cols != right.rows:
                raise self.fail(node, f"cannot multiply {left.rows}x{left.cols} by {right.rows}x{right.cols}")
            self.work += left.rows * left.cols * right.cols
            if self.work > self.limits.max_product_work:
                raise InputLimitError(
                    f"matrix products at column {node.column} need {self.work} multiplications, over the "
                    f"limit of {self.limits.max_product_work}"
                )
            return self.product(left, right)
        raise self.fail(node, f"operator '{node.op}' is not allowed")

    def product(self, left: Any, right: Any) -> Any:
        return sympy.ImmutableMatrix(left @ right)

    def broadcast(self, node: BinOp, left: Any, right: Any) -> tuple[Any, Any]:
        """A 1 x d row added to an n x d matrix repeats over the rows (as in NumPy and PyTorch)."""
        if left.rows == 1 and left.cols == right.cols:
            return sympy.ImmutableMatrix.vstack(*([left] * right.rows)), right
        if right.rows == 1 and left.cols == right.cols:
            return left, sympy.ImmutableMatrix.vstack(*([right] * left.rows))
        raise self.fail(node, f"cannot add {left.rows}x{left.cols} and {right.rows}x{right.cols}")

    def power(self, node: BinOp, base: Any, exponent: Any) -> Any:
        if isinstance(base, sympy.MatrixBase) or isinstance(exponent, sympy.MatrixBase):
            raise self.fail(node, "powers of matrices are not supported (powers only of numbers)")
        if exponent.is_negative and _sign(base) in (0, None):
            if _sign(base) is None:
                raise self.fail(node, f"cannot decide whether {shown(base)}, to a negative power, is zero")
            raise self.fail(node, f"division by zero ({shown(base)} is exactly 0, to a negative power)")
        if exponent.is_Rational:
            p, q = abs(exponent.p), exponent.q
            if p > self.limits.max_power_exponent or q > self.limits.max_power_exponent:
                raise InputLimitError(
                    f"exponent {shown(exponent)} at column {node.column} exceeds the limit of "
                    f"{self.limits.max_power_exponent}"
                )
            if base.is_Rational:
                bits = max(abs(base.p).bit_length(), base.q.bit_length()) * p
                if bits > self.limits.max_result_bits:
                    raise InputLimitError(
                        f"power at column {node.column} would have about {bits} bits, over the limit of "
                        f"{self.limits.max_result_bits}"
                    )
        elif exponent.is_number and _magnitude_exceeds(exponent, self.limits.max_function_argument):
            # e^x is exp(x): the same bound as exp's argument (SymPy would evaluate e^(e^100)
            # numerically, digit by digit, whenever it sorts a sum holding it).
            raise InputLimitError(
                f"power {shown(base)}^({shown(exponent)}) at column {node.column}: exponents beyond "
                f"+-{self.limits.max_function_argument} are refused (the value is beyond 10^3000)"
            )
        return sympy.Pow(base, exponent)

    def check_divisor(self, node: BinOp, divisor: Any) -> None:
        """A divisor must be certainly nonzero: a literal 0 and a disguised one
        (``sin(1)^2 + cos(1)^2 - 1``) are both a division by zero, found by exact algebra."""
        sign = _sign(divisor)
        if sign == 0:
            what = "" if divisor == 0 else f": the divisor {shown(divisor)} is exactly 0"
            raise self.fail(node, f"division by zero{what}")
        if sign is None:
            raise self.fail(node, f"cannot decide whether the divisor {shown(divisor)} is zero")

    def scalar_function(self, node: Call) -> Any:
        name = node.name
        if node.keywords:
            raise self.fail(node, f"'{name}' takes no keyword arguments")
        low, high, function = SCALAR_FUNCTIONS[name]
        if not low <= len(node.args) <= high:
            raise self.fail(node, f"'{name}' takes {low if low == high else f'{low} or {high}'} argument(s)")
        args = [self.finite(arg, self.scalar(arg, f"'{name}' takes a number, not a matrix")) for arg in node.args]
        if name in ("ln", "log") and args[0].is_number and _sign(args[0]) != 1:
            undecided = _sign(args[0]) is None
            raise self.fail(node, f"{name} of a {'number not shown positive' if undecided else 'non-positive number'} "
                                  f"({shown(args[0])})")
        if name == "log" and len(args) == 2 and args[1].is_number and (_sign(args[1]) != 1 or _sign(args[1] - 1) == 0):
            raise self.fail(node, f"log base must be positive and not 1, got {shown(args[1])}")
        if name == "sqrt" and args[0].is_number and _sign(args[0]) in (-1, None):
            undecided = _sign(args[0]) is None
            raise self.fail(node, f"sqrt of a {'number not shown non-negative' if undecided else 'negative number'} "
                                  f"({shown(args[0])})")
        if name in ("exp", "sin", "cos", "erf", "tanh") and _magnitude_exceeds(args[0], self.limits.max_function_argument):
            raise InputLimitError(
                f"{name} of {shown(args[0])} at column {node.column}: arguments beyond "
                f"+-{self.limits.max_function_argument} are refused (exp of them is beyond 10^3000)"
            )
        return function(*args)


def bound_value(name: str, value: Any) -> Any:
    """A value bound to a name: exact SymPy (ints become Integers); a float is refused."""
    if isinstance(value, bool) or isinstance(value, float) or (isinstance(value, sympy.Basic) and value.has(sympy.Float)):
        raise ParseError(f"name {shown(name)!r} is bound to {shown(value)}: only exact values can be bound")
    if isinstance(value, int):
        return sympy.Integer(value)
    if isinstance(value, (sympy.Basic, sympy.MatrixBase)):
        return value
    raise ParseError(f"name {shown(name)!r} is bound to a {shown(type(value).__name__)}: expected a SymPy value")


def _sign(value: Any) -> int | None:
    """-1, 0 or 1 for a number, decided exactly: intervals for a nonzero sign, exact algebra
    for zero (:mod:`.certified`); None when neither decides.  A value with symbols: 1 when
    SymPy knows it is positive, -1 negative, else None only if it is known to be zero --
    a symbolic divisor of an exercise (``1/x``) is read generically, as SymPy does."""
    if value.is_Rational:
        return int(sympy.sign(value))
    if value.free_symbols:
        return 0 if value.is_zero else -1 if value.is_negative else 1
    try:
        sign = certified_sign(value)
    except UndecidedError:
        sign = None
    if sign is not None:
        return sign
    return 0 if proved_zero(value) else None


def _magnitude_exceeds(value: Any, bound: int) -> bool:
    """Whether a numeric value certainly or possibly exceeds ``bound`` in absolute value.

    Checked with a coarse interval (64 bits), never a float: a value whose enclosure is not
    finite, or reaches past the bound, is treated as too large.
    """
    if not value.is_number:
        return False
    if value.is_Rational:
        return cast(bool, abs(value) > bound)
    try:
        with working_precision(64):
            ball = abs(to_arb(value))
            return not ball.is_finite() or not ball < flint.arb(bound)
    except UndecidedError:
        return True
