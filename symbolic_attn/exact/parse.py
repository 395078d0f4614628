r"""Safe parser: text -> exact SymPy values, without ever evaluating the text as code.

Students' files and command-line arguments are data.  SymPy's ``sympify`` and
``parse_expr`` call Python's ``eval`` (a restricted namespace is no sandbox), so this
module parses with :mod:`ast` and walks the tree through an allow-list: only number
literals, the operators ``+ - * / ^ ** @``, parentheses, list brackets, the functions
``sqrt exp ln log sin cos erf tanh`` and the constants ``e pi`` (plus names the caller binds) are known.
Anything else -- attribute access, calls of unknown names, subscripts, lambdas,
comprehensions -- is a :class:`ParseError` naming the offending piece.

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

import ast
import re
from fractions import Fraction
from collections.abc import Mapping
from typing import Any, cast

import flint
import sympy

from symbolic_attn.exact.limits import DEFAULT_LIMITS, Limits, check_value
from symbolic_attn.errors import InputLimitError, ParseError, UndecidedError, shown
from symbolic_attn.exact.certified import to_arb, working_precision
from symbolic_attn.exact.scan import parse_tree as _parse_tree, snippet as _snippet

__all__ = ["Limits", "DEFAULT_LIMITS", "parse_expression", "parse_matrix", "exact_decimal"]



_FUNCTIONS = {
    "sqrt": (1, 1, sympy.sqrt),
    "exp": (1, 1, sympy.exp),
    "ln": (1, 1, sympy.log),
    "log": (1, 2, sympy.log),  # natural log; log(x, b) is the base-b logarithm
    "sin": (1, 1, sympy.sin),  # for sinusoidal positional encodings
    "cos": (1, 1, sympy.cos),
    "erf": (1, 1, sympy.erf),  # GELU's exact form x * (1 + erf(x / sqrt(2))) / 2
    "tanh": (1, 1, sympy.tanh),  # GELU's tanh approximation
}
_CONSTANTS = {"e": sympy.E, "E": sympy.E, "pi": sympy.pi}
# ASCII digits only ([0-9], not \d): "0.১৬৭" in Bengali digits is not 0.167.
_NUMBER_TEXT = re.compile(r"^([0-9]+)?(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$")


def exact_decimal(literal: str, *, limits: Limits = DEFAULT_LIMITS) -> sympy.Rational:
    """The exact rational written by a decimal literal such as ``0.43`` or ``1e-3``.

    >>> exact_decimal("0.140"), exact_decimal("2.5e2")
    (7/50, 250)
    >>> exact_decimal("0.\u09e7\u09ec")
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.ParseError: not a number: '0.১৬' (ASCII digits only)
    """
    if not isinstance(literal, str):
        raise ParseError(f"expected the text of a number, got {shown(type(literal).__name__)}")
    match = _NUMBER_TEXT.match(literal) if len(literal) <= limits.max_text_length else None
    if not match or not (match.group(1) or match.group(2)):
        raise ParseError(f"not a number: '{shown(literal)}' (ASCII digits only)")
    whole, fraction, exponent = match.group(1) or "", match.group(2) or "", match.group(3)
    if len(whole) + len(fraction) > limits.max_digits:
        raise InputLimitError(f"a number with {len(whole) + len(fraction)} digits exceeds the limit of {limits.max_digits}")
    if exponent is not None and (len(exponent) > 12 or abs(int(exponent)) > limits.max_decimal_exponent):
        raise InputLimitError(f"decimal exponent {shown(exponent, 20)} exceeds the limit of {limits.max_decimal_exponent}")
    value = Fraction(int(whole + fraction or "0"), 10 ** len(fraction))
    if exponent is not None:
        value *= Fraction(10) ** int(exponent)
    return sympy.Rational(value.numerator, value.denominator)


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
    tree = _parse_tree(text, limits)
    return _Evaluator(text, names or {}, limits).visit(tree.body)


def parse_matrix(text: str, *, limits: Limits = DEFAULT_LIMITS) -> sympy.ImmutableMatrix:
    """Parse a matrix written as nested lists, ``[[1, 0], [0, 1]]``.

    A flat list ``[1, 2, 3]`` is one row (a 1x3 matrix); rows must have equal length.
    """
    tree = _parse_tree(text, limits)
    body = tree.body
    if not isinstance(body, ast.List):
        raise ParseError(f"expected a matrix written as nested lists like [[1, 0], [0, 1]], got {_snippet(text)}")
    evaluator = _Evaluator(text, {}, limits)
    row_nodes: list[Any] = body.elts if body.elts and isinstance(body.elts[0], ast.List) else [body]  # ast.List rows
    if not row_nodes or not row_nodes[0].elts:
        raise ParseError(f"empty matrix in {_snippet(text)}")
    width = len(row_nodes[0].elts)
    if len(row_nodes) > limits.max_rows or width > limits.max_cols or len(row_nodes) * width > limits.max_entries:
        raise InputLimitError(
            f"matrix of {len(row_nodes)}x{width} entries exceeds the limit "
            f"({limits.max_rows}x{limits.max_cols}, {limits.max_entries} entries)"
        )
    rows = []
    for number, row in enumerate(row_nodes, start=1):
        if not isinstance(row, ast.List):
            raise ParseError(f"row {number} is not a list in {_snippet(text)}")
        if len(row.elts) != width:
            raise ParseError(f"row {number} has {len(row.elts)} entries, row 1 has {width}, in {_snippet(text)}")
        rows.append([evaluator.scalar(entry) for entry in row.elts])
    return sympy.ImmutableMatrix(rows)


class _Evaluator:
    """Walks an allow-listed AST and builds exact SymPy values.  Everything else is refused."""

    def __init__(self, text: str, names: Mapping[str, object], limits: Limits):
        # ``^`` was replaced by ``**``, which shifts columns; report positions in that text.
        self.text = text.replace("^", "**").strip()
        self.original = text
        self.names = {name: _bound_value(name, value) for name, value in dict(names).items()}
        self.limits = limits
        self.work = 0  # multiply-adds spent on matrix products so far

    def fail(self, node: ast.AST, what: str) -> ParseError:
        column = getattr(node, "col_offset", None)
        where = f" at column {column + 1}" if column is not None else ""
        return ParseError(f"{what}{where} in {_snippet(self.original)}")

    def visit(self, node: ast.AST) -> Any:
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is None:
            raise self.fail(node, f"{_describe(node)} is not allowed")
        value = method(node)
        if isinstance(node, ast.Name) and node.id in self.names:
            return value  # bound by the caller, checked when it was built
        return self.checked(node, value)

    def checked(self, node: ast.AST, value: Any) -> Any:
        """Every intermediate value is bounded (size, numbers, powers, degree) and must be real."""
        column = getattr(node, "col_offset", None)
        check_value(value, self.limits, f"built at column {column + 1} " if column is not None else "")
        entries = value if isinstance(value, sympy.MatrixBase) else (value,)
        for entry in entries:
            if entry.is_Rational:
                continue
            if entry.is_number and entry.is_extended_real is False:
                raise self.fail(node, f"{shown(entry)} is not a real number")
            if entry.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
                raise self.fail(node, f"{shown(entry)} is not a finite number")
        return value

    def scalar(self, node: ast.AST) -> Any:
        value = self.visit(node)
        if isinstance(value, sympy.MatrixBase):
            raise self.fail(node, "a matrix entry must be a number, not a matrix")
        return value

    def visit_Constant(self, node: ast.Constant) -> Any:
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise self.fail(node, f"{_describe(node)} is not allowed")
        literal = (ast.get_source_segment(self.text, node) or "").replace("_", "")
        if not _NUMBER_TEXT.match(literal):
            raise self.fail(node, f"only decimal numbers are allowed, not {literal[:20]!r}")
        # The literal's own text, never Python's float: "0.1" must stay exactly 1/10.
        return exact_decimal(literal)

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id in self.names:
            return self.names[node.id]
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        if node.id in _FUNCTIONS:
            raise self.fail(node, f"function '{node.id}' needs an argument in parentheses")
        raise self.fail(node, f"unknown name '{node.id}'")

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        operand = self.visit(node.operand)
        if isinstance(node.op, ast.USub):
            return -operand
        if isinstance(node.op, ast.UAdd):
            return operand
        raise self.fail(node, f"operator {type(node.op).__name__} is not allowed")

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        left, right = self.visit(node.left), self.visit(node.right)
        op = node.op
        try:
            if isinstance(op, ast.Add):
                return left + right
            if isinstance(op, ast.Sub):
                return left - right
            if isinstance(op, ast.Mult):
                return self._multiply(node, left, right)
            if isinstance(op, ast.Div):
                return self._divide(node, left, right)
            if isinstance(op, ast.Pow):
                return self._power(node, left, right)
            if isinstance(op, ast.MatMult):
                if not (isinstance(left, sympy.MatrixBase) and isinstance(right, sympy.MatrixBase)):
                    raise self.fail(node, "'@' needs a matrix on both sides")
                self.work += left.rows * left.cols * right.cols
                if self.work > self.limits.max_product_work:
                    raise InputLimitError(
                        f"matrix products at column {node.col_offset + 1} need {self.work} multiplications, over the "
                        f"limit of {self.limits.max_product_work}"
                    )
                return left @ right
        except (sympy.ShapeError, TypeError) as error:
            raise self.fail(node, f"incompatible operands ({_one_line(error)})") from None
        raise self.fail(node, f"operator {type(op).__name__} is not allowed")

    def _multiply(self, node: ast.BinOp, left: Any, right: Any) -> Any:
        if isinstance(left, sympy.MatrixBase) and isinstance(right, sympy.MatrixBase):
            raise self.fail(node, "use '@' for a matrix product ('*' is for scalar multiples)")
        return left * right

    def _divide(self, node: ast.BinOp, left: Any, right: Any) -> Any:
        if isinstance(right, sympy.MatrixBase):
            raise self.fail(node, "cannot divide by a matrix")
        if right == 0:
            raise self.fail(node, "division by zero")
        return left / right

    def _power(self, node: ast.BinOp, base: Any, exponent: Any) -> Any:
        if isinstance(base, sympy.MatrixBase) or isinstance(exponent, sympy.MatrixBase):
            raise self.fail(node, "powers of matrices are not supported")
        if base == 0 and exponent.is_negative:
            raise self.fail(node, "division by zero (0 to a negative power)")
        if exponent.is_Rational:
            p, q = abs(exponent.p), exponent.q
            if p > self.limits.max_power_exponent or q > self.limits.max_power_exponent:
                raise InputLimitError(
                    f"exponent {shown(exponent)} at column {node.col_offset + 1} exceeds the limit of "
                    f"{self.limits.max_power_exponent}"
                )
            if base.is_Rational:
                bits = max(abs(base.p).bit_length(), base.q.bit_length()) * p
                if bits > self.limits.max_result_bits:
                    raise InputLimitError(
                        f"power at column {node.col_offset + 1} would have about {bits} bits, over the limit of "
                        f"{self.limits.max_result_bits}"
                    )
        elif exponent.is_number and exponent.is_Float:
            raise self.fail(node, "inexact exponent")
        return sympy.Pow(base, exponent)

    def visit_Call(self, node: ast.Call) -> Any:
        if not isinstance(node.func, ast.Name):
            raise self.fail(node, "only the functions sqrt, exp, ln, log, sin, cos, erf, tanh may be called")
        name = node.func.id
        if name not in _FUNCTIONS:
            raise self.fail(node, f"unknown function '{name}'")
        if node.keywords:
            raise self.fail(node, f"'{name}' takes no keyword arguments")
        low, high, function = _FUNCTIONS[name]
        if not low <= len(node.args) <= high:
            raise self.fail(node, f"'{name}' takes {low if low == high else f'{low} or {high}'} argument(s)")
        args = [self.scalar(arg) for arg in node.args]
        if name in ("ln", "log") and args[0].is_number and not args[0].is_positive:
            raise self.fail(node, f"{name} of a non-positive number ({shown(args[0])})")
        if name == "log" and len(args) == 2 and args[1].is_number and (not args[1].is_positive or args[1] == 1):
            raise self.fail(node, f"log base must be positive and not 1, got {shown(args[1])}")
        if name == "sqrt" and args[0].is_number and args[0].is_negative:
            raise self.fail(node, f"sqrt of a negative number ({shown(args[0])})")
        if name in ("exp", "sin", "cos", "erf", "tanh") and _magnitude_exceeds(args[0], self.limits.max_function_argument):
            raise InputLimitError(
                f"{name} of {shown(args[0])} at column {node.col_offset + 1}: arguments beyond "
                f"+-{self.limits.max_function_argument} are refused (exp of them is beyond 10^3000)"
            )
        return function(*args)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        # The one attribute in the language: the transpose of a bound matrix, ``X.T``.
        if node.attr != "T":
            raise self.fail(node, f"attribute '.{node.attr}' is not allowed (only '.T', the transpose)")
        value = self.visit(node.value)
        if not isinstance(value, sympy.MatrixBase):
            raise self.fail(node, "'.T' needs a matrix")
        return value.T

    def visit_List(self, node: ast.List) -> Any:
        raise self.fail(node, "a list is only allowed as a whole matrix")


def _bound_value(name: str, value: Any) -> Any:
    """A value bound to a name: exact SymPy (ints become Integers); a float is refused."""
    if isinstance(value, bool) or isinstance(value, float) or (isinstance(value, sympy.Basic) and value.has(sympy.Float)):
        raise ParseError(f"name {shown(name)!r} is bound to {shown(value)}: only exact values can be bound")
    if isinstance(value, int):
        return sympy.Integer(value)
    if isinstance(value, (sympy.Basic, sympy.MatrixBase)):
        return value
    raise ParseError(f"name {shown(name)!r} is bound to a {shown(type(value).__name__)}: expected a SymPy value")


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


def _describe(node: ast.AST) -> str:
    if isinstance(node, ast.Constant):
        return f"literal {node.value!r}"[:60]
    return {
        "Subscript": "indexing",
        "Lambda": "lambda",
        "Compare": "comparison",
        "BoolOp": "boolean operator",
        "IfExp": "conditional expression",
        "Tuple": "tuple",
        "Dict": "dict",
        "Set": "set",
        "ListComp": "comprehension",
        "GeneratorExp": "generator",
        "JoinedStr": "f-string",
        "Starred": "star expression",
        "NamedExpr": "assignment",
        "Await": "await",
        "Yield": "yield",
    }.get(type(node).__name__, type(node).__name__)


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())
