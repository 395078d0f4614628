r"""Computation files: named definitions evaluated in order, safely, into one Trace.

An exercise may say what to compute as definitions, each a short text such as
``"attention(H, H @ WK, H @ WV, mask = 'causal')"``.  The text is read by the input
language's one grammar (:mod:`symbolic_attn.exact.syntax`) and evaluated by its one
evaluator (:class:`~symbolic_attn.exact.evaluate.Evaluator`), which this module extends;
nothing is evaluated as code.  Allowed beyond the numbers and arithmetic of every other
front end: calls of the functions in :data:`FUNCTIONS` with keyword arguments and quoted
options, names bound to inputs and *earlier* definitions (``I2``, ``I3``... are
identities), stage access ``NAME.STAGE`` and ``M.head[2].weights``, lists (matrices,
heads, positions).

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
symbolic_attn.errors.DefinitionError: definition 'B': unknown function 'open' at column 1 in "open('f')"
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence

import sympy

from symbolic_attn.errors import DefinitionError, InputLimitError, ParseError, SymbolicAttnError, shown
from symbolic_attn.exact.convert import to_exact, to_matrix
from symbolic_attn.exact.evaluate import Evaluator
from symbolic_attn.exact.limits import DEFAULT_LIMITS, Limits, check_value
from symbolic_attn.exact.syntax import Attribute, Call, Index, Matrix, Name, Node, Number, String, Transpose, parse
from symbolic_attn.model.compose import ClosedFormTooLarge, MaskSpec, default_node_limit, build_trace, check_size, has_stage, product
from symbolic_attn.model.functions import FUNCTIONS, REQUIRED as _REQUIRED, Option as _Option
from symbolic_attn.model.trace import Trace

__all__ = ["run_program", "run_each", "FUNCTIONS", "ProgramLimits", "NAME"]

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


#: The bounds of a computation file are the input language's one set (exact.limits): a
#: definition's length, the count of definitions and calls, nesting and dimensions.
ProgramLimits = Limits


DEFAULT_PROGRAM_LIMITS = DEFAULT_LIMITS




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
    trace, _ = _evaluate(inputs, definitions, variant, limits, keep_going=False)
    return trace


def run_each(inputs: Mapping[str, object], definitions: Sequence[tuple[str, str]], *, variant=None,
             limits: ProgramLimits = DEFAULT_PROGRAM_LIMITS, guard=None) -> tuple[Trace, dict]:
    """As :func:`run_program`, but a definition whose exact value is too large to compute
    (:class:`~symbolic_attn.model.compose.ClosedFormTooLarge`), or that uses one, is left
    out instead of stopping the others: returns (the trace of the computed definitions,
    {name: why it was not computed, one line}).  Every other error still stops at once.
    ``guard(name)``, when given, is a context manager around each definition's evaluation
    (``run`` bounds each one's time with it; it may raise ClosedFormTooLarge).

    >>> from symbolic_attn.model.compose import node_limit
    >>> definitions = [("A", "sinusoidal(3, 4) @ ones(4, 1)"), ("B", "A @ X"), ("C", "X + X"), ("D", "B + 1")]
    >>> with node_limit(8):
    ...     t, missing = run_each({"X": [[1, 2]]}, definitions)
    >>> list(t), list(missing)
    (['A', 'C'], ['B', 'D'])
    >>> print(missing["B"][:74]); print(missing["D"])
    definition 'B': operand: an entry's exact closed form has more than 8 expr
    definition 'D': uses 'B', which was not computed (see B)
    """
    return _evaluate(inputs, definitions, variant, limits, keep_going=True, guard=guard)


class _NotComputed(DefinitionError):
    """A definition uses one that was not computed (:func:`run_each`)."""


def _evaluate(inputs, definitions, variant, limits, *, keep_going: bool, guard=None) -> tuple[Trace, dict]:
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
    with default_node_limit(limits.max_expression_nodes):  # one bound, whichever command reads the file
        return _evaluate_in_order(definitions, names, order, variant, limits, keep_going, guard)


def _evaluate_in_order(definitions, names, order, variant, limits, keep_going, guard) -> tuple[Trace, dict]:
    values: dict = {}
    missing: dict = {}
    entries = []
    for name, text in definitions:
        try:
            with guard(name) if guard is not None else contextlib.nullcontext():
                value = _Evaluator(name, text, names, values, order, variant or {}, limits, missing,
                                   definitions).run()
        except _NotComputed as error:
            missing[name] = f"definition {name!r}: {error}"
            continue
        except ClosedFormTooLarge as error:
            if not keep_going:
                raise _renamed(error, name) from None
            missing[name] = str(_renamed(error, name))
            continue
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
    trace = build_trace(entries, settings={"definitions": dict(values), "inputs": dict(names), "variant": variant})
    return trace, missing


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


class _Evaluator(Evaluator):
    """The input language's evaluator, extended with this module's functions, quoted
    options, stage paths and lists.  Errors raised here carry no name yet."""

    error = DefinitionError

    def __init__(self, name, text, inputs, values, order, variant, limits: ProgramLimits, missing=None,
                 definitions=()):
        super().__init__(text, {}, limits)
        self.definitions = list(definitions)
        self.definition, self.inputs, self.values, self.order = name, inputs, values, order
        self.missing = missing or {}
        self.variant, self.program_limits = variant, limits
        self.calls = 0
        self.call_depth = 0

    # -- entry ------------------------------------------------------------------

    def run(self):
        tree = self.tree()
        value = self.evaluate(tree)
        if isinstance(value, (list, _Option, MaskSpec)):
            raise DefinitionError(f"the result is {self.kind(value)}, not a matrix, number or computation")
        if isinstance(value, Trace):
            self.check_nodes(value["output"] if has_stage(value, "output") else None)
        elif isinstance(value, sympy.MatrixBase):
            self.check_nodes(value)
        return value

    def tree(self) -> Node:
        text, limits = self.text, self.program_limits
        if len(text) > limits.max_definition_length:
            raise InputLimitError(f"text of {len(text)} characters exceeds the limit of {limits.max_definition_length}")
        if not text.strip():
            raise DefinitionError("empty definition")
        # The one grammar of the input language (exact.syntax): ASCII only -- a fullwidth
        # 'Ｘ' is not the input X --, no control characters, brackets, bounded numbers.
        try:
            return parse(text, limits)
        except InputLimitError:
            raise
        except ParseError as error:
            raise DefinitionError(str(error)) from None

    def check_nodes(self, matrix):
        """Bound the shape of the exact result."""
        if matrix is None:
            return
        # Only the shape: the size of closed forms is bounded where a value is passed on to
        # another operation (check_size on arguments), which is where growth costs time.
        _check_dimension(matrix, "the result", self.program_limits)

    # -- the language's parts, extended ----------------------------------------------

    def checked(self, node, value):
        if isinstance(node, Call) and node.name in FUNCTIONS:
            return value  # an operation's result: bounded where it is used (operand, matrix)
        if isinstance(value, sympy.MatrixBase) and not isinstance(node, Matrix):
            with _computed_size():
                if _enclosed(value):
                    # Arithmetic on computed values (Post - Pre): every entry has a finite
                    # certified enclosure, so it is a finite real number; SymPy's own
                    # is_extended_real would evaluate a large closed form numerically, for
                    # seconds.  The bounds still apply.
                    check_value(value, self.program_limits, f"built at column {node.column} ")
                    return value
                return super().checked(node, value)
        return super().checked(node, value)

    def name(self, node: Name):
        name = node.name
        if name == self.definition:
            raise self.fail(node, f"'{name}' refers to itself")
        if name in self.inputs:
            return self.inputs[name]
        if name in self.values:
            return self.values[name]
        if name in self.missing:
            raise _NotComputed(f"uses '{name}', which was not computed (see {name})")
        if name in self.order:
            raise DefinitionError(f"'{name}' is used before it is defined (definitions are evaluated in order)")
        match = _IDENTITY.match(name)
        if match:
            n = int(match.group(1))
            self.check_count(node, n, "identity size")
            return sympy.ImmutableMatrix(sympy.eye(n))
        if name in _CONSTANTS:
            return super().name(node)
        if name in FUNCTIONS or name in _SCALAR_FUNCTIONS:
            raise self.fail(node, f"function '{name}' needs arguments in parentheses")
        raise self.fail(node, f"unknown name '{name}' (not an input, an earlier definition, or I2, I3...)")

    def string(self, node: String):
        if len(node.text) > 40:
            raise self.fail(node, f"option {shown(node.text)!r} is too long")
        return _Option(node.text)

    def attribute(self, node: Attribute):
        parts = []
        current: Node = node
        while True:
            if isinstance(current, Attribute):
                parts.append(current.name)
                current = current.operand
            elif isinstance(current, Index) and isinstance(current.operand, Attribute):
                index = current.index
                if not (isinstance(index, Number) and index.decimals is None and "e" not in index.text.lower()
                        and 1 <= index.value <= 9999):
                    raise self.fail(current, "a stage index must be a whole number from 1, as in head[2]")
                parts.append(f"{current.operand.name}[{index.value}]")
                current = current.operand.operand
            elif isinstance(current, Name):
                break
            elif isinstance(current, Transpose):
                raise self.fail(current, "'.T' may only end a stage path")
            else:
                raise self.fail(current, "a stage is written NAME.STAGE, as in A.weights or M.head[2].weights")
        root = self.name(current)
        path = ".".join(reversed(parts))
        if not isinstance(root, Trace):
            raise self.fail(node, f"'{current.name}' has no stages (only computed definitions do), so "
                                  f"'{current.name}.{path}' does not exist")
        return root[path]

    def index(self, node: Index):
        raise self.fail(node, "indexing is only allowed in a stage path such as M.head[2].weights")

    def matrix(self, node: Matrix):
        """A bracketed list of numbers is a matrix, as in every front end (with the same
        messages); one that holds matrices or computations (heads) stays a list, converted
        where it is used."""
        values = [self.raw(item) for item in node.items]
        if values and all(_numbers_only(value) for value in values):  # [] stays a list (no heads)
            return super().matrix(node)
        return values

    def raw(self, node: Node):
        """A list's item: a nested list stays a Python list until the whole is judged."""
        if isinstance(node, Matrix):
            return [self.raw(item) for item in node.items]
        return self.evaluate(node)

    def product(self, left, right):
        return product(left, right)

    def call(self, node: Call):
        name = node.name
        if name in _SCALAR_FUNCTIONS:
            return self.scalar_function(node)
        if name not in FUNCTIONS:
            raise self.fail(node, f"unknown function '{name}'")
        if self.call_depth + 1 > self.program_limits.max_call_depth:
            raise InputLimitError(f"calls nested more than {self.program_limits.max_call_depth} deep")
        self.calls += 1
        if self.calls > self.program_limits.max_calls:
            raise InputLimitError(f"more than {self.program_limits.max_calls} function calls in one definition")
        self.call_depth += 1
        try:
            return self.model_call(node, name)
        finally:
            self.call_depth -= 1

    def model_call(self, node: Call, name: str):
        parameters, handler = FUNCTIONS[name]
        arguments = {}
        if parameters[0][1] == "matrices":  # concat(A, B, ...)
            if node.keywords:
                raise self.fail(node, f"'{name}' takes no keyword arguments")
            arguments["matrices"] = [self.matrix_value(arg, self.evaluate(arg), f"{name} argument") for arg in node.args]
            return handler(self, **arguments)
        if len(node.args) > len(parameters):
            raise self.fail(node, f"'{name}' takes at most {len(parameters)} arguments ({_signature(name)})")
        for arg, (pname, kind, _default) in zip(node.args, parameters):
            arguments[pname] = self.argument(arg, kind, f"{name}: {pname}")
        known = {p[0]: p for p in parameters}
        for keyword in node.keywords:
            # The Python API's name of an argument is accepted too (sinusoidal(n, d_model)).
            keyword_name = _ALIASES.get((name, keyword.name), keyword.name)
            if keyword_name not in known:
                raise self.fail(keyword.value, f"'{name}' has no argument '{keyword_name}' ({_signature(name)})")
            if keyword_name in arguments:
                raise self.fail(keyword.value, f"'{name}': argument '{keyword_name}' given twice")
            kind = known[keyword_name][1]
            arguments[keyword_name] = self.argument(keyword.value, kind, f"{name}: {keyword_name}")
        for pname, kind, default in parameters:
            if pname not in arguments:
                if default is _REQUIRED:
                    raise self.fail(node, f"'{name}' needs the argument '{pname}' ({_signature(name)})")
                arguments[pname] = self.convert(node, default, kind, f"{name}: {pname}") if default is not None else None
        return handler(self, **arguments)

    def argument(self, node, kind, what: str):
        """An argument converted to its kind; a ``definition`` or ``input`` is a name, read
        without evaluating it (``grad(L, G, wrt = 'X')`` needs which definition and input)."""
        if kind == "definition":
            if not isinstance(node, Name) or node.name not in self.values:
                raise self.fail(node, f"{what}: expected the name of an earlier definition")
            return node.name
        if kind == "input":
            value = self.evaluate(node)
            if not isinstance(value, _Option) or str(value) not in self.inputs \
                    or not isinstance(self.inputs[str(value)], sympy.MatrixBase):
                matrices = [n for n, v in self.inputs.items() if isinstance(v, sympy.MatrixBase)]
                raise self.fail(node, f"{what}: expected the quoted name of a matrix input "
                                      f"({', '.join(repr(n) for n in matrices) or 'none'})")
            return str(value)
        return self.convert(node, self.evaluate(node), kind, what)

    def gradient(self, E: str, G, wrt: str):
        """The exact vector-Jacobian product of definition ``E`` with respect to input
        ``wrt`` (:func:`~symbolic_attn.model.gradient.vector_jacobian`): the definitions up
        to ``E`` are run again with ``wrt`` a matrix of symbols, under the same variant."""
        from symbolic_attn.model.gradient import vector_jacobian

        names = [n for n, _ in self.definitions]
        prefix = self.definitions[:names.index(E) + 1]
        if isinstance(self.values[E], Trace) and not has_stage(self.values[E], "output"):
            raise DefinitionError(f"grad: '{E}' has no single output to differentiate")

        def compute(inputs):
            return run_program(inputs, prefix, variant=self.variant, limits=self.program_limits)[E]

        return vector_jacobian(compute, self.inputs, G, wrt)

    # -- conversions ------------------------------------------------------------------

    def operand(self, node):
        """An operand of an operator: a number or a matrix (a computation means its output)."""
        value = self.evaluate(node)
        if isinstance(value, Trace):
            value = self.output(node, value)
        if isinstance(value, list):
            return self.matrix_value(node, value, "operand")
        if isinstance(value, (_Option, MaskSpec)):
            raise self.fail(node, f"{self.kind(value)} cannot be used in arithmetic")
        if isinstance(value, sympy.MatrixBase):
            # Arithmetic grows closed forms as calls do (D = C @ C, repeated): same bound.
            check_size(value, "operand")
            with _computed_size():
                check_value(value, where="in an operand ")
        return value

    def output(self, node, trace: Trace):
        if not has_stage(trace, "output"):
            heads = [p for p in trace if "." not in p]
            raise self.fail(node, f"this computation has no single output; use one of its stages: {', '.join(heads)}")
        return trace["output"]

    def matrix_value(self, node, value, what: str):
        if isinstance(value, Trace):
            value = self.output(node, value)
        if isinstance(value, list):
            if not value or any(not isinstance(v, (sympy.Expr, list)) for v in value):
                raise self.fail(node, f"{what}: a list must be a matrix of numbers such as [[1, 0], [0, 1]]")
            value = to_matrix(value, name=what)
        if not isinstance(value, sympy.MatrixBase):
            raise self.fail(node, f"{what}: expected a matrix, got {self.kind(value)}")
        _check_dimension(value, what, self.program_limits)
        check_size(value, what)
        with _computed_size():
            check_value(value, where=f"in {what} ")
        return sympy.ImmutableMatrix(value)

    def check_count(self, node, value, what, low=1):
        if isinstance(value, sympy.Integer):
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise self.fail(node, f"{what} must be a whole number >= {low}, got {shown(value)}")
        if value > self.program_limits.max_dimension:
            raise InputLimitError(f"{what} {value} exceeds the limit of {self.program_limits.max_dimension}")
        return value

    def convert(self, node, value, kind, what: str):
        if isinstance(kind, tuple):  # one of some quoted options
            if not isinstance(value, _Option) or value not in kind:
                raise self.fail(node, f"{what}: expected one of {', '.join(repr(k) for k in kind)}, got {shown(value)}")
            return str(value)
        if kind == "matrix":
            return self.matrix_value(node, value, what)
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
            return value if _is_number(value) else self.matrix_value(node, value, what)
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
                heads.append(tuple(self.matrix_value(node, w, f"{what} {h}") for w in head))
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


@contextlib.contextmanager
def _computed_size():
    """A bound exceeded by a *computed* matrix (the digits of D @ D @ ..., a closed form's
    nodes) is :class:`ClosedFormTooLarge`: the value is too large, the text was fine (so
    ``run`` shows the other definitions).  The same message; still an InputLimitError."""
    try:
        yield
    except ClosedFormTooLarge:
        raise
    except InputLimitError as error:
        raise ClosedFormTooLarge(str(error)) from None


def _enclosed(matrix) -> bool:
    """Every entry is a rational or has a finite arb enclosure (so it is a finite real)."""
    from symbolic_attn.exact.intervals import to_arb, working_precision

    try:
        with working_precision(64):
            for entry in matrix:
                if not entry.is_Rational and not to_arb(entry).is_finite():
                    return False
    except (SymbolicAttnError, ValueError, TypeError, ZeroDivisionError, OverflowError):
        return False
    return True


def _numbers_only(value) -> bool:
    """A number, or a (nested) list whose leaves are all numbers."""
    if isinstance(value, list):
        return all(_numbers_only(item) for item in value)
    return _is_number(value)


def _is_number(value) -> bool:
    """A SymPy number or expression, not a matrix (an ImmutableMatrix is also an Expr)."""
    return isinstance(value, sympy.Expr) and not isinstance(value, sympy.MatrixBase)


def _signature(name: str) -> str:
    parameters, _ = FUNCTIONS[name]
    shown_parameters = [p if d is _REQUIRED else f"{p}=" for p, _k, d in parameters]
    return f"{name}({', '.join(shown_parameters)})"
