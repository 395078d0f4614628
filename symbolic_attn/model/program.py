r"""Computation files: named definitions evaluated in order, safely, into one Trace.

An exercise may say what to compute as definitions, each a short text such as
``"attention(H, H @ WK, H @ WV, mask = 'causal')"``.  The text is parsed with Python's
:mod:`ast` (it only builds a tree) and walked through an allow-list; nothing is evaluated
as code.  Allowed: calls of the functions in :data:`FUNCTIONS` with keyword arguments and
quoted options, names bound to inputs and *earlier* definitions (``I2``, ``I3``... are
identities), ``@``, ``+``, ``-``, ``*`` and ``/`` by a number, ``.T``, stage access
``NAME.STAGE`` and ``M.head[2].weights``, lists (matrices, heads, positions).  Number
leaves such as ``1/100`` or ``sqrt(2)`` go through the one safe parser
(:func:`~symbolic_attn.exact.parse.parse_expression`) with its bounds.

Every problem is a typed error whose message starts with the definition's name.

>>> import sympy
>>> inputs = {"X": sympy.Matrix([[1, 0], [0, 1], [1, 1]]), "WK": sympy.Matrix([[1, 1], [0, 1]])}
>>> t = run_program(inputs, [("P", "sinusoidal(3, 2)"), ("H", "X + P"),
...                          ("A", "attention(H, H @ WK, H, mask = 'causal')")])
>>> t["P"]
Matrix([
[     0,      1],
[sin(1), cos(1)],
[sin(2), cos(2)]])
>>> t["A.weights"][0, :]
Matrix([[1, 0, 0]])
>>> run_program(inputs, [("B", "C @ X"), ("C", "X.T")])
Traceback (most recent call last):
...
symbolic_attn.errors.DefinitionError: definition 'B': 'C' is used before it is defined (definitions are evaluated in order)
>>> run_program(inputs, [("B", "open('f')")])
Traceback (most recent call last):
...
symbolic_attn.errors.DefinitionError: definition 'B': unknown function 'open' at column 1
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from collections.abc import Mapping, Sequence

import sympy

from symbolic_attn.errors import DefinitionError, InputLimitError, SymbolicAttnError, shown
from symbolic_attn.exact.scan import check_text, check_tree_depth
from symbolic_attn.exact.convert import to_exact, to_matrix
from symbolic_attn.exact.limits import DEFAULT_LIMITS, Limits, check_value
from symbolic_attn.exact.parse import parse_expression
from symbolic_attn.model.compose import MaskSpec, build_trace, check_size, has_stage, product
from symbolic_attn.model.functions import FUNCTIONS, REQUIRED as _REQUIRED, Option as _Option
from symbolic_attn.model.trace import Trace

__all__ = ["run_program", "FUNCTIONS", "ProgramLimits", "NAME"]

#: A definition or input name.
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")
_IDENTITY = re.compile(r"^I([1-9][0-9]{0,2})$")
_CONSTANTS = {"e", "E", "pi"}
#: Names a definition or input may not take.  ``E`` may (the issue's ``key = E``, an encoder
#: output): bound, it is that value; Euler's number stays ``e``, as the tool prints it.
_RESERVED_NAMES = {"e", "pi"}
#: (function, the Python API's argument name) -> the definition grammar's name.
_ALIASES = {("sinusoidal", "d_model"): "d"}
_SCALAR_FUNCTIONS = {"sqrt", "exp", "ln", "log", "sin", "cos", "erf", "tanh"}


@dataclass(frozen=True)
class ProgramLimits:
    """Bounds of a computation file, checked before the work they limit."""

    max_definitions: int = 64
    max_text_length: int = 4_000  # characters of one definition
    max_call_depth: int = 6  # calls nested inside calls
    max_calls: int = 32  # function calls in one definition
    max_dimension: int = 64  # rows or columns of any matrix (as exercise files)
    max_product_work: int = 100_000  # multiply-adds of the '@' of one definition
    parser: Limits = DEFAULT_LIMITS


DEFAULT_PROGRAM_LIMITS = ProgramLimits()




def run_program(inputs: Mapping[str, object], definitions: Sequence[tuple[str, str]], *, variant=None,
                limits: ProgramLimits = DEFAULT_PROGRAM_LIMITS) -> Trace:
    """Evaluate ``definitions`` [(name, text)] in order over ``inputs`` {name: matrix or number}.

    Returns one :class:`Trace`: each definition ``N`` under its name (its final output), and
    every stage of it as ``N.STAGE`` (``A.weights``, ``M.head[1].weights``).  ``variant`` maps
    an operation (``layer_norm``, ``multihead``, ``sinusoidal``, ``rope``, ``block``) to
    settings that override it everywhere (see :mod:`symbolic_attn.model.variants`); the key
    ``attention`` takes the attention core's own settings (``scale``, ``masking``, ``axis``)
    and applies them to every attention call and every head.
    ``settings["definitions"]`` holds each definition's own value.
    """
    definitions = list(definitions) if not isinstance(definitions, list) else definitions
    if len(definitions) > limits.max_definitions:
        name = definitions[limits.max_definitions][0] if isinstance(definitions[limits.max_definitions], tuple) else "?"
        raise InputLimitError(
            f"definition {shown(name)!r}: {len(definitions)} definitions exceed the limit of {limits.max_definitions}"
        )
    names = _check_inputs(inputs, limits)
    order = []
    for index, item in enumerate(definitions, start=1):
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise DefinitionError(f"definition {index}: expected a (name, text) pair, got {shown(item)}")
        name, text = item
        if not isinstance(name, str) or not NAME.match(name) or name in _RESERVED_NAMES or _IDENTITY.match(name):
            raise DefinitionError(f"definition {shown(name)!r}: not a usable name (a letter, then letters, digits, _; "
                                  "not e, pi or I2, I3...)")
        if name in names:
            raise DefinitionError(f"definition {name!r}: the name is already an input")
        if name in order:
            raise DefinitionError(f"definition {name!r}: defined twice")
        if not isinstance(text, str):
            raise DefinitionError(f"definition {name!r}: expected text, got {type(text).__name__}")
        order.append(name)
    values: dict = {}
    entries = []
    for name, text in definitions:
        try:
            value = _Evaluator(name, text, names, values, order, variant or {}, limits).run()
        except DefinitionError as error:
            raise DefinitionError(f"definition {name!r}: {error}") from None
        except SymbolicAttnError as error:
            raise _renamed(error, name) from None
        except RecursionError:
            raise DefinitionError(f"definition {name!r}: nested too deeply") from None
        values[name] = value
        if isinstance(value, Trace):
            entries.append((name, value))
        else:
            entries.append((name, value if isinstance(value, sympy.MatrixBase) else sympy.ImmutableMatrix([[value]])))
    return build_trace(entries, settings={"definitions": dict(values), "inputs": dict(names), "variant": variant})


def _renamed(error: SymbolicAttnError, name: str) -> SymbolicAttnError:
    """The same error type, its message prefixed with the definition's name."""
    message = f"definition {name!r}: {error}"
    try:
        return type(error)(message)
    except TypeError:  # an error type with a different constructor
        return DefinitionError(message)


def _check_inputs(inputs, limits: ProgramLimits) -> dict:
    names = {}
    for name, value in dict(inputs).items():
        # Functions are only ever called, so an input may share a function's name (``ones``);
        # sqrt, exp... stay reserved because number expressions are read by the safe parser.
        if not isinstance(name, str) or not NAME.match(name) or name in _RESERVED_NAMES or _IDENTITY.match(name) \
                or name in _SCALAR_FUNCTIONS:
            raise DefinitionError(f"input {shown(name)!r}: not a usable name (a letter, then letters, digits, _; "
                                  "not sqrt, exp, ln, log, sin, cos, erf, tanh, e, pi or I2, I3...)")
        if isinstance(value, (sympy.MatrixBase, list, tuple)) or hasattr(value, "tolist"):
            matrix = to_matrix(value, name=f"input {name}")
            _check_dimension(matrix, f"input {name}", limits)
            names[name] = matrix
        else:
            names[name] = to_exact(value)
    return names


def _check_dimension(matrix, what: str, limits: ProgramLimits):
    if matrix.rows > limits.max_dimension or matrix.cols > limits.max_dimension:
        raise InputLimitError(f"{what} is {matrix.rows}x{matrix.cols}, over the limit of {limits.max_dimension} "
                              "rows or columns")


class _Evaluator:
    """Walks one definition's allow-listed tree.  Errors raised here carry no name yet."""

    def __init__(self, name, text, inputs, values, order, variant, limits: ProgramLimits):
        self.name, self.inputs, self.values, self.order = name, inputs, values, order
        self.variant, self.limits = variant, limits
        self.original = text
        self.text = text.replace("^", "**").strip()
        self.calls = 0
        self.work = 0

    # -- entry ------------------------------------------------------------------

    def run(self):
        tree = self.tree()
        value = self.visit(tree.body, 0)
        if isinstance(value, (list, _Option, MaskSpec)):
            raise DefinitionError(f"the result is {self.kind(value)}, not a matrix, number or computation")
        if isinstance(value, Trace):
            self.check_nodes(value["output"] if has_stage(value, "output") else None)
        elif isinstance(value, sympy.MatrixBase):
            self.check_nodes(value)
        return value

    def tree(self) -> ast.Expression:
        text, limits = self.text, self.limits
        if len(self.original) > limits.max_text_length:
            raise InputLimitError(f"text of {len(self.original)} characters exceeds the limit of {limits.max_text_length}")
        if not text:
            raise DefinitionError("empty definition")
        # The one textual pass of the input language (exact.scan): ASCII only -- Python's
        # parser NFKC-folds a fullwidth 'Ｘ' into the input X --, control characters,
        # brackets, runs of digits and names, decimal exponents.
        check_text(text, limits.parser)
        try:
            with warnings.catch_warnings():  # "invalid decimal literal" warnings would reach stderr
                warnings.simplefilter("ignore")
                tree = ast.parse(text, mode="eval")
        except SyntaxError as error:
            where = f" at column {error.offset}" if error.offset else ""
            raise DefinitionError(f"malformed definition{where}: {shown(self.original, 60)!r}") from None
        except (MemoryError, RecursionError, ValueError):
            raise InputLimitError(f"definition too complex to parse: {shown(self.original, 60)!r}") from None
        check_tree_depth(tree.body, limits.parser.max_tree_depth,
                         f"nested more than {limits.parser.max_tree_depth} operations deep")
        return tree

    def check_nodes(self, matrix):
        """Bound the shape of the exact result."""
        if matrix is None:
            return
        # Only the shape: the size of closed forms is bounded where a value is passed on to
        # another operation (check_size on arguments), which is where growth costs time.
        _check_dimension(matrix, "the result", self.limits)

    # -- nodes --------------------------------------------------------------------

    def fail(self, node, what: str) -> DefinitionError:
        column = getattr(node, "col_offset", None)
        return DefinitionError(f"{what}" + (f" at column {column + 1}" if column is not None else ""))

    def visit(self, node, depth: int):
        if self.plain_scalar(node):
            segment = ast.get_source_segment(self.text, node)
            scalars = {k: v for k, v in {**self.inputs, **self.values}.items() if _is_number(v)}
            return parse_expression(segment, scalars, limits=self.limits.parser)
        method = getattr(self, "visit_" + type(node).__name__, None)
        if method is None:
            raise self.fail(node, f"{_describe(node)} is not allowed")
        return method(node, depth)

    def plain_scalar(self, node) -> bool:
        """Whether ``node`` is a number expression for the safe parser (no matrices, no calls
        of this module's functions)."""
        for child in ast.walk(node):
            if isinstance(child, ast.Constant):
                if isinstance(child.value, bool) or not isinstance(child.value, (int, float)):
                    return False
            elif isinstance(child, ast.Name):
                bound = child.id in self.inputs or child.id in self.values or child.id in self.order
                if (child.id in _CONSTANTS and not bound) or child.id in _SCALAR_FUNCTIONS:
                    continue
                value = self.inputs.get(child.id, self.values.get(child.id) if child.id in self.values else None)
                if not _is_number(value) or child.id == self.name:
                    return False
            elif isinstance(child, ast.Call):
                if not isinstance(child.func, ast.Name) or child.func.id not in _SCALAR_FUNCTIONS or child.keywords:
                    return False
            elif not isinstance(child, (ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.Load)):
                return False
        return True

    def visit_Constant(self, node, depth):
        if isinstance(node.value, str):
            if len(node.value) > 40:
                raise self.fail(node, f"option {shown(node.value)!r} is too long")
            return _Option(node.value)
        raise self.fail(node, f"{_describe(node)} is not allowed")

    def visit_Name(self, node, depth):
        name = node.id
        if name == self.name:
            raise self.fail(node, f"'{name}' refers to itself")
        if name in self.inputs:
            return self.inputs[name]
        if name in self.values:
            return self.values[name]
        if name in self.order:
            raise DefinitionError(f"'{name}' is used before it is defined (definitions are evaluated in order)")
        match = _IDENTITY.match(name)
        if match:
            n = int(match.group(1))
            self.check_count(node, n, "identity size")
            return sympy.ImmutableMatrix(sympy.eye(n))
        if name in FUNCTIONS or name in _SCALAR_FUNCTIONS:
            raise self.fail(node, f"function '{name}' needs arguments in parentheses")
        raise self.fail(node, f"unknown name '{name}' (not an input, an earlier definition, or I2, I3...)")

    def visit_Attribute(self, node, depth):
        if node.attr == "T":
            return self.matrix(node, self.visit(node.value, depth), "'.T'").T
        parts = []
        current = node
        while True:
            if isinstance(current, ast.Attribute):
                if current.attr == "T":
                    raise self.fail(current, "'.T' may only end a stage path")
                parts.append(current.attr)
                current = current.value
            elif isinstance(current, ast.Subscript) and isinstance(current.value, ast.Attribute):
                index = current.slice
                if not (isinstance(index, ast.Constant) and type(index.value) is int and 1 <= index.value <= 9999):
                    raise self.fail(current, "a stage index must be a whole number from 1, as in head[2]")
                parts.append(f"{current.value.attr}[{index.value}]")
                current = current.value.value
            elif isinstance(current, ast.Name):
                break
            else:
                raise self.fail(current, "a stage is written NAME.STAGE, as in A.weights or M.head[2].weights")
        root = self.visit_Name(current, depth)
        path = ".".join(reversed(parts))
        if not isinstance(root, Trace):
            raise self.fail(node, f"'{current.id}' has no stages (only computed definitions do), so '{current.id}.{path}' "
                                  "does not exist")
        return root[path]

    def visit_Subscript(self, node, depth):
        raise self.fail(node, "indexing is only allowed in a stage path such as M.head[2].weights")

    def visit_UnaryOp(self, node, depth):
        value = self.value(node.operand, depth)
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return value
        raise self.fail(node, f"operator {type(node.op).__name__} is not allowed")

    def visit_BinOp(self, node, depth):
        left, right = self.value(node.left, depth), self.value(node.right, depth)
        op = node.op
        left_m, right_m = isinstance(left, sympy.MatrixBase), isinstance(right, sympy.MatrixBase)
        if isinstance(op, (ast.Add, ast.Sub)):
            if left_m != right_m:
                raise self.fail(node, "cannot add a number and a matrix")
            if left_m and left.shape != right.shape:
                left, right = self.broadcast(node, left, right)
            return sympy.ImmutableMatrix(left + right) if isinstance(op, ast.Add) and left_m else \
                (left + right if isinstance(op, ast.Add) else (sympy.ImmutableMatrix(left - right) if left_m else left - right))
        if isinstance(op, ast.Mult):
            if left_m and right_m:
                raise self.fail(node, "use '@' for a matrix product ('*' is for multiples by a number)")
            return sympy.ImmutableMatrix(left * right) if (left_m or right_m) else left * right
        if isinstance(op, ast.Div):
            if right_m:
                raise self.fail(node, "cannot divide by a matrix")
            if right == 0:
                raise self.fail(node, "division by zero")
            return sympy.ImmutableMatrix(left / right) if left_m else left / right
        if isinstance(op, ast.MatMult):
            if not (left_m and right_m):
                raise self.fail(node, "'@' needs a matrix on both sides")
            if left.cols != right.rows:
                raise self.fail(node, f"cannot multiply {left.rows}x{left.cols} by {right.rows}x{right.cols}")
            self.work += left.rows * left.cols * right.cols
            if self.work > self.limits.max_product_work:
                raise InputLimitError(f"matrix products need {self.work} multiplications, over the limit of "
                                      f"{self.limits.max_product_work}")
            return product(left, right)
        raise self.fail(node, f"operator {type(op).__name__} is not allowed here (powers only of numbers)")

    def broadcast(self, node, left, right):
        """A 1 x d row added to an n x d matrix repeats over the rows."""
        if left.rows == 1 and left.cols == right.cols:
            return sympy.ImmutableMatrix.vstack(*([left] * right.rows)), right
        if right.rows == 1 and left.cols == right.cols:
            return left, sympy.ImmutableMatrix.vstack(*([right] * left.rows))
        raise self.fail(node, f"cannot add {left.rows}x{left.cols} and {right.rows}x{right.cols}")

    def visit_List(self, node, depth):
        return [self.visit(element, depth) for element in node.elts]

    visit_Tuple = visit_List

    def visit_Call(self, node, depth):
        if not isinstance(node.func, ast.Name):
            raise self.fail(node, "only named functions may be called")
        name = node.func.id
        if name in _SCALAR_FUNCTIONS:
            raise self.fail(node, f"'{name}' takes a number, not a matrix or a computation")
        if name not in FUNCTIONS:
            raise self.fail(node, f"unknown function '{name}'")
        if depth + 1 > self.limits.max_call_depth:
            raise InputLimitError(f"calls nested more than {self.limits.max_call_depth} deep")
        self.calls += 1
        if self.calls > self.limits.max_calls:
            raise InputLimitError(f"more than {self.limits.max_calls} function calls in one definition")
        parameters, handler = FUNCTIONS[name]
        arguments = {}
        positional = [p for p in parameters]
        if parameters[0][1] == "matrices":  # concat(A, B, ...)
            if node.keywords:
                raise self.fail(node, f"'{name}' takes no keyword arguments")
            arguments["matrices"] = [self.matrix(arg, self.visit(arg, depth + 1), f"{name} argument") for arg in node.args]
            return handler(self, **arguments)
        if len(node.args) > len(positional):
            raise self.fail(node, f"'{name}' takes at most {len(positional)} arguments ({_signature(name)})")
        for arg, (pname, kind, _default) in zip(node.args, positional):
            if isinstance(arg, ast.Starred):
                raise self.fail(arg, "star arguments are not allowed")
            arguments[pname] = self.convert(arg, self.visit(arg, depth + 1), kind, f"{name}: {pname}")
        known = {p[0]: p for p in parameters}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise self.fail(node, "'**' arguments are not allowed")
            # The Python API's name of an argument is accepted too (sinusoidal(n, d_model)).
            keyword = ast.keyword(arg=_ALIASES.get((name, keyword.arg), keyword.arg), value=keyword.value)
            if keyword.arg not in known:
                raise self.fail(keyword.value, f"'{name}' has no argument '{keyword.arg}' ({_signature(name)})")
            if keyword.arg in arguments:
                raise self.fail(keyword.value, f"'{name}': argument '{keyword.arg}' given twice")
            kind = known[keyword.arg][1]
            arguments[keyword.arg] = self.convert(keyword.value, self.visit(keyword.value, depth + 1), kind,
                                                  f"{name}: {keyword.arg}")
        for pname, kind, default in parameters:
            if pname not in arguments:
                if default is _REQUIRED:
                    raise self.fail(node, f"'{name}' needs the argument '{pname}' ({_signature(name)})")
                arguments[pname] = self.convert(node, default, kind, f"{name}: {pname}") if default is not None else None
        return handler(self, **arguments)

    # -- conversions ------------------------------------------------------------------

    def value(self, node, depth):
        """An operand of an operator: a number or a matrix (a computation means its output)."""
        value = self.visit(node, depth)
        if isinstance(value, Trace):
            value = self.output(node, value)
        if isinstance(value, list):
            return self.matrix(node, value, "operand")
        if isinstance(value, (_Option, MaskSpec)):
            raise self.fail(node, f"{self.kind(value)} cannot be used in arithmetic")
        if isinstance(value, sympy.MatrixBase):
            # Arithmetic grows closed forms as calls do (D = C @ C, repeated): same bound.
            check_size(value, "operand")
            check_value(value, where="in an operand ")
        return value

    def output(self, node, trace: Trace):
        if not has_stage(trace, "output"):
            heads = [p for p in trace if "." not in p]
            raise self.fail(node, f"this computation has no single output; use one of its stages: {', '.join(heads)}")
        return trace["output"]

    def matrix(self, node, value, what: str):
        if isinstance(value, Trace):
            value = self.output(node, value)
        if isinstance(value, list):
            if not value or any(not isinstance(v, (sympy.Expr, list)) for v in value):
                raise self.fail(node, f"{what}: a list must be a matrix of numbers such as [[1, 0], [0, 1]]")
            value = to_matrix(value, name=what)
        if not isinstance(value, sympy.MatrixBase):
            raise self.fail(node, f"{what}: expected a matrix, got {self.kind(value)}")
        _check_dimension(value, what, self.limits)
        check_size(value, what)
        check_value(value, where=f"in {what} ")
        return sympy.ImmutableMatrix(value)

    def check_count(self, node, value, what, low=1):
        if isinstance(value, sympy.Integer):
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise self.fail(node, f"{what} must be a whole number >= {low}, got {shown(value)}")
        if value > self.limits.max_dimension:
            raise InputLimitError(f"{what} {value} exceeds the limit of {self.limits.max_dimension}")
        return value

    def convert(self, node, value, kind, what: str):
        if isinstance(kind, tuple):  # one of some quoted options
            if not isinstance(value, _Option) or value not in kind:
                raise self.fail(node, f"{what}: expected one of {', '.join(repr(k) for k in kind)}, got {shown(value)}")
            return str(value)
        if kind == "matrix":
            return self.matrix(node, value, what)
        if kind == "matrices":
            return value
        if kind == "scalar":
            if isinstance(value, int):
                value = sympy.Integer(value)
            if not _is_number(value):
                raise self.fail(node, f"{what}: expected a number, got {self.kind(value)}")
            return value
        if kind in ("count", "count0"):
            return self.check_count(node, value, what, low=0 if kind == "count0" else 1)
        if kind == "scale":
            if isinstance(value, _Option):
                if value not in ("default", "none"):
                    raise self.fail(node, f"{what}: expected 'default', 'none' or a number, got {value!r}")
                return str(value)
            return self.convert(node, value, "scalar", what)
        if kind == "number_or_matrix":
            if isinstance(value, int):
                return sympy.Integer(value)
            return value if _is_number(value) else self.matrix(node, value, what)
        if kind == "mask":
            if isinstance(value, MaskSpec):
                return value
            if isinstance(value, _Option) and value in ("none", "causal"):
                return MaskSpec(str(value))
            raise self.fail(node, f"{what}: expected 'none', 'causal', keep(M), block(M) or padding(k), "
                                  f"got {self.kind(value)}")
        if kind == "positions":
            if isinstance(value, list) and all(_is_number(v) for v in value):
                return value
            if isinstance(value, sympy.MatrixBase) and 1 in value.shape:
                return list(value)
            raise self.fail(node, f"{what}: expected a list of positions such as [0, 1, 2]")
        if kind == "heads":
            if not isinstance(value, list) or not value:
                raise self.fail(node, f"{what}: expected a list of [W_Q, W_K, W_V] triples")
            heads = []
            for h, head in enumerate(value, start=1):
                if not isinstance(head, list) or len(head) != 3:
                    raise self.fail(node, f"{what}: head {h} must be [W_Q, W_K, W_V]")
                heads.append(tuple(self.matrix(node, w, f"{what} {h}") for w in head))
            return heads
        raise AssertionError(kind)

    @staticmethod
    def kind(value) -> str:
        if isinstance(value, _Option):
            return f"the option {value!r}"
        if isinstance(value, MaskSpec):
            return "a mask"
        if isinstance(value, list):
            return "a list"
        if isinstance(value, Trace):
            return "a computation"
        if isinstance(value, sympy.MatrixBase):
            return f"a {value.rows}x{value.cols} matrix"
        return f"the number {shown(value)}"


def _is_number(value) -> bool:
    """A SymPy number or expression, not a matrix (an ImmutableMatrix is also an Expr)."""
    return isinstance(value, sympy.Expr) and not isinstance(value, sympy.MatrixBase)


def _signature(name: str) -> str:
    parameters, _ = FUNCTIONS[name]
    shown_parameters = [p if d is _REQUIRED else f"{p}=" for p, _k, d in parameters]
    return f"{name}({', '.join(shown_parameters)})"


def _describe(node) -> str:
    names = {"Lambda": "lambda", "Compare": "a comparison", "BoolOp": "a boolean operator", "IfExp": "a conditional",
             "Dict": "a dict", "Set": "a set", "ListComp": "a comprehension", "GeneratorExp": "a generator",
             "JoinedStr": "an f-string", "Starred": "a star expression", "NamedExpr": "an assignment",
             "Await": "await", "Yield": "yield", "Constant": "this literal", "Slice": "a slice"}
    return names.get(type(node).__name__, type(node).__name__)
