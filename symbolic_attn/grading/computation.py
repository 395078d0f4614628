r"""Computation files: the ONE reader of ``[inputs]``, ``[define]`` and ``[attention]``.

``symbolic-attn run`` and ``symbolic-attn check`` read a file the same way: the same safe
file reading (the one file reader, :mod:`symbolic_attn.exact.source`: regular files only,
size first, TOML pre-scanned), the same value grammar for inputs (:mod:`symbolic_attn.exact.parse`), the
same ``[attention]`` table with every mask form of the exercise format (``"none"``,
``"causal"``, ``{causal = true, offset = K}``, ``{padding = K}``, ``{keep = ...}``,
``{block = ...}``).  They are read here, by :class:`ComputationReader`; an exercise
(:mod:`symbolic_attn.grading.exercise`) is a computation with claims, and its reader
extends this one with the ``[[claims]]``.  Beneath it, :class:`TableReader` gives typed
access to any TOML table with one-line errors naming file and key: every value's TOML type
is checked, floats are refused (they lose their written precision), integers, strings and
arrays are bounded (:data:`LIMITS`, from the one set of bounds), and the masks of the
exercise format are read there.

``[define]`` holds named definitions, evaluated in order by
:func:`symbolic_attn.model.program.run_program`; ``[attention]`` is the definition named
``attention`` (its matrices become hidden inputs ``attention_query``, ``attention_key``...,
its mask a ``keep`` grid unless it is plain ``"none"`` or ``"causal"``).

>>> c = parse_computation('''
... [inputs]
... X = [[1, 0], [0, 1]]
... [attention]
... query = "X"
... key = "X"
... value = "X"
... mask = {causal = true, offset = 0}
... [define]
... N = "layer_norm(X + attention)"
... ''', source="c.toml")
>>> c.definitions
(('attention', "attention(Q = attention_query, K = attention_key, V = attention_value, mask = 'causal', scale = 'default')"), ('N', 'layer_norm(X + attention)'))
>>> c.trace()["attention.weights"][0, :]
Matrix([[1, 0]])
>>> parse_computation('[define]\nA = 3\n', source="d.toml")
Traceback (most recent call last):
...
symbolic_attn.errors.ExerciseError: d.toml: define.A: expected a string such as "layer_norm(X)", got an integer 3
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import sympy

from symbolic_attn.errors import ExerciseError, SymbolicAttnError, shown
from symbolic_attn.exact.parse import parse_expression, parse_matrix
from symbolic_attn.exact.limits import DEFAULT_LIMITS
from symbolic_attn.exact.source import COMPUTATION, EXERCISE, decode_text, parse_toml, read_bytes
from symbolic_attn.model.masks import Mask

__all__ = ["Computation", "AttentionSpec", "ComputationReader", "load_computation", "parse_computation",
           "read_definitions", "attention_definition", "COMPUTATION_KEYS",
           "LIMITS", "MAX_ROUNDED_PLACES", "TomlFloat", "TableReader", "type_name", "show"]

#: Bounds checked before anything is built (a 64x64 attention with every entry claimed
#: fits), by key: the one set of bounds (exact.limits, exact.source), named for messages.
LIMITS = {
    "file_bytes": EXERCISE.limit,
    "inputs": DEFAULT_LIMITS.max_inputs,
    "symbols": DEFAULT_LIMITS.max_symbols,
    "claims": DEFAULT_LIMITS.max_claims,
    "dimension": DEFAULT_LIMITS.max_dimension,  # rows or columns of any matrix
    "string": DEFAULT_LIMITS.max_string_length,  # characters in one string
    "integer_digits": DEFAULT_LIMITS.max_digits,  # digits in a TOML integer
}


class TomlFloat(str):
    """A TOML float kept as its text, only to refuse it with a helpful hint."""


class TableReader:
    """Typed access to a TOML table; ``fail`` builds the one-line error message."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, key: str, problem: str) -> ExerciseError:
        return ExerciseError(f"{self.source}: {shown(key, 80)}: {shown(problem, 300)}")

    def wrap(self, key: str, error: Exception) -> ExerciseError:
        return self.fail(key, " ".join(str(error).split()))

    # -- typed access -----------------------------------------------------------

    def check_value(self, key: str, value, depth: int = 0, tables: int = 0):
        """Refuse floats, huge integers, long strings and deep arrays anywhere in a value."""
        if depth > 2 or tables > 4:
            raise self.fail(key, "nested deeper than a matrix" if depth > 2 else "tables nested too deeply")
        if isinstance(value, TomlFloat):
            text = shown(value, 40)
            raise self.fail(key, f'TOML float {text} loses its written precision; write it as a string: "{text}"')
        if isinstance(value, bool):
            return
        # bit_length, not str(): str() of a huge integer is itself slow (or refused).
        if isinstance(value, int) and abs(value).bit_length() > LIMITS["integer_digits"] * 10 // 3:
            raise self.fail(key, f"integer with more than {LIMITS['integer_digits']} digits")
        if isinstance(value, str) and len(value) > LIMITS["string"]:
            raise self.fail(key, f"string of {len(value)} characters exceeds the limit of {LIMITS['string']}")
        if isinstance(value, list):
            if len(value) > LIMITS["dimension"]:
                raise self.fail(key, f"{len(value)} entries exceed the limit of {LIMITS['dimension']} per dimension")
            for index, item in enumerate(value, start=1):  # 1-based, as in S[1,2]: X[2,1] is row 2, entry 1
                where = f"{key[:-1]},{index}]" if key.endswith("]") and depth > 0 else f"{key}[{index}]"
                self.check_value(where, item, depth + 1, tables)
        if isinstance(value, dict):
            for name, item in value.items():
                self.check_value(f"{key}.{name}", item, depth, tables + 1)

    def typed(self, table: dict, key: str, prefix: str, kinds, required: bool = False):
        where = f"{prefix}{key}"
        if key not in table:
            if required:
                raise self.fail(where, "missing")
            return None
        value = table[key]
        self.check_value(where, value)
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            expected = " or ".join(type_name(kind) for kind in kinds)
            raise self.fail(where, f"expected {expected}, got {type_name(type(value))} {show(value)}")
        return value

    def only_keys(self, table: dict, allowed: set, prefix: str):
        for key in table:
            if key not in allowed:
                raise self.fail(f"{prefix}{key}", f"unknown key (expected one of: {', '.join(sorted(allowed))})")

    def mask(self, table: dict, shape) -> tuple:
        """(Mask or None, kind, causal offset) from ``attention.mask``."""
        key = "attention.mask"
        value = table.get("mask", "none")
        self.check_value(key, value)
        if value == "none":
            return None, "none", 0
        if value == "causal":
            return Mask.causal(*shape), "causal", 0
        expected = ('expected "none", "causal", {causal = true, offset = K}, {padding = K}, '
                    "{keep = [[...]]}, {block = [[...]]} or {additive = \"[[0, -inf], ...]\"}")
        if not isinstance(value, dict) or not value:
            raise self.fail(key, f"{expected}, got {show(value)}")
        kinds = [kind for kind in ("causal", "padding", "keep", "block", "additive") if kind in value]
        allowed = {"causal": {"causal", "offset"}, "padding": {"padding"}, "keep": {"keep"}, "block": {"block"},
                   "additive": {"additive"}}
        if len(kinds) != 1 or set(value) - allowed[kinds[0]]:
            raise self.fail(key, f"{expected}, got {show(value)}")
        kind = kinds[0]
        if kind == "causal":
            mask, offset = self.causal(key, value, shape)
            return mask, "causal", offset
        if kind == "padding":
            return self.padding(key, value["padding"], shape), "padding", 0
        if kind == "additive":
            return self.additive(f"{key}.additive", value["additive"], shape), "keep", 0
        grid = value[kind]
        where = f"{key}.{kind}"
        if not isinstance(grid, list) or not grid or not all(isinstance(row, list) for row in grid):
            raise self.fail(where, f"expected an array of rows of 0/1 or true/false, got {show(grid)}")
        if (len(grid), len(grid[0])) != tuple(shape):
            raise self.fail(where, f"a {len(grid)}x{len(grid[0])} mask for {shape[0]}x{shape[1]} scores")
        for i, row in enumerate(grid):
            if len(row) != shape[1]:
                raise self.fail(f"{where} row {i + 1}", f"{len(row)} entries, expected {shape[1]}")
            for j, entry in enumerate(row):
                if entry not in (0, 1) or not isinstance(entry, (bool, int)):
                    raise self.fail(f"{where}[{i + 1},{j + 1}]", f"expected 0, 1, true or false, got {show(entry)}")
        try:
            mask = Mask.keep(grid) if kind == "keep" else Mask.block(grid)
        except SymbolicAttnError as error:
            raise self.wrap(where, error) from None
        self.no_empty_row(where, mask)
        return mask, kind, 0

    def additive(self, where: str, value, shape) -> Mask:
        """An additive mask M of softmax(S + M), as PyTorch and the README's formula write
        it: 0 where a key may be attended, -inf where it is blocked (any other number is
        a bias, not a mask, and is refused).  Written as the input language's matrix text,
        or a TOML array of such entries."""
        text = value if isinstance(value, str) else None
        if isinstance(value, list) and all(isinstance(row, list) for row in value):
            text = "[" + ", ".join("[" + ", ".join(str(entry) for entry in row) + "]" for row in value) + "]"
        if text is None:
            raise self.fail(where, f'expected a matrix of 0 and -inf such as "[[0, -inf], [0, 0]]", got {show(value)}')
        try:
            grid = parse_matrix(text)
            mask = Mask.additive(grid.tolist())
        except SymbolicAttnError as error:
            raise self.wrap(where, error) from None
        if mask.shape != tuple(shape):
            raise self.fail(where, f"a {mask.shape[0]}x{mask.shape[1]} mask for {shape[0]}x{shape[1]} scores")
        self.no_empty_row(where, mask)
        return mask

    def causal(self, key: str, value: dict, shape):
        flag, offset = value["causal"], value.get("offset", 0)
        if flag is not True:
            raise self.fail(f"{key}.causal", f"expected true, got {show(flag)} (leave the mask out for none)")
        if isinstance(offset, bool) or not isinstance(offset, int) or abs(offset) > LIMITS["dimension"]:
            raise self.fail(f"{key}.offset", f"expected a whole number from -{LIMITS['dimension']} to "
                            f"{LIMITS['dimension']}, got {show(offset)}")
        mask = Mask.causal(*shape, offset=offset)
        self.no_empty_row(f"{key}.offset", mask)
        return mask, offset

    def padding(self, key: str, valid, shape):
        if isinstance(valid, bool) or not isinstance(valid, int) or not 1 <= valid <= shape[1]:
            raise self.fail(f"{key}.padding", f"expected the number of real keys, a whole number from 1 to "
                            f"{shape[1]}, got {show(valid)}")
        return Mask.padding(*shape, valid)

    def no_empty_row(self, where: str, mask: Mask):
        empty = mask.empty_rows()
        if empty:  # no key to normalize over: refuse here, with the key, not deep in softmax
            raise self.fail(where, f"row {empty[0] + 1} allows no key: there is no distribution to normalize")


def _decimal_text(value) -> str:
    """A rational as the decimal it was written as, when it is one (``43051/100000`` ->
    ``0.43051``); otherwise as a fraction."""
    for places in range(61):
        scaled = value * 10**places
        if scaled.is_Integer:
            digits = str(abs(int(scaled))).rjust(places + 1, "0")
            text = digits[:len(digits) - places] + ("." + digits[len(digits) - places:] if places else "")
            return ("-" if value < 0 else "") + text
    return str(value)


def type_name(kind) -> str:
    return {str: "a string", int: "an integer", list: "an array", dict: "a table", bool: "a boolean",
            TomlFloat: "a float"}.get(kind, kind.__name__)


def show(value) -> str:
    if isinstance(value, (list, dict)):
        text = repr(value)[:200]  # a repr of a nested TOML value is plain data
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value).bit_length() > 1000:
        return "<a huge integer>"
    else:
        text = repr(value)
    return shown(text, 60)


#: Top-level keys of a computation file (``claims``, ``grading``, ``questions`` are check's).
COMPUTATION_KEYS = {"title", "description", "symbols", "inputs", "attention", "define", "claims", "grading",
                    "questions"}
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")
_RESERVED = {"sqrt", "exp", "ln", "log", "e", "E", "pi"}
#: The most decimal places a rounded input may declare (``{value = ..., rounded = 4}``).
MAX_ROUNDED_PLACES = 20
_ATTENTION_KEYS = {"query", "key", "value", "scores", "mask", "scale"}


@dataclass(frozen=True)
class AttentionSpec:
    """The ``[attention]`` table, resolved to exact matrices.

    Either ``query``/``key`` (and ``scale``) or ``scores`` (already scaled) is set;
    ``mask_kind`` is ``"none"``, ``"causal"``, ``"padding"``, ``"keep"`` or ``"block"``;
    ``mask_offset`` is the causal offset.
    """

    value: sympy.ImmutableMatrix
    query: sympy.ImmutableMatrix | None = None
    key: sympy.ImmutableMatrix | None = None
    scores: sympy.ImmutableMatrix | None = None
    mask: Mask | None = None
    mask_kind: str = "none"
    scale: object = "default"
    mask_offset: int = 0

    @property
    def shape(self):
        """(n, m, d_k, d_v) -- d_k is None when the scores were given."""
        if self.scores is not None:
            return self.scores.rows, self.scores.cols, None, self.value.cols
        return self.query.rows, self.key.rows, self.query.cols, self.value.cols


@dataclass(frozen=True)
class Computation:
    """What a file asks to compute: inputs (symbols included) and ordered definitions."""

    source: str
    title: str
    inputs: dict
    definitions: tuple
    symbols: dict = field(default_factory=dict)

    def trace(self, variant=None):
        """The program's trace (every definition and stage); computed once when plain."""
        from symbolic_attn.model.program import run_program

        if variant is None and "_trace" in self.__dict__:
            return self.__dict__["_trace"]
        trace = run_program(self.inputs, self.definitions, variant=variant)
        if variant is None:
            object.__setattr__(self, "_trace", trace)  # frozen dataclass: a cache, not state
        return trace


class ComputationReader(TableReader):
    """Reads ``[symbols]``, ``[inputs]`` and ``[attention]`` into exact values, one-line errors naming the key.

    Every value goes through the one value grammar (:mod:`symbolic_attn.exact.parse`): an
    integer, a value text (``"[[0, ln(2)]]"`` is a matrix) or a TOML array of those.  Names
    must be usable: letters, digits and ``_``, not a function or constant of the grammar.
    """

    def symbols(self, names: list) -> dict:
        if len(names) > LIMITS["symbols"]:
            raise self.fail("symbols", f"{len(names)} symbols exceed the limit of {LIMITS['symbols']}")
        result = {}
        for index, name in enumerate(names):
            if not isinstance(name, str) or not _NAME.match(name) or name in _RESERVED:
                raise self.fail(f"symbols[{index + 1}]", f"not a usable symbol name: {show(name)}")
            result[name] = sympy.Symbol(name, real=True)
        return result

    def inputs(self, table: dict, symbols: dict) -> dict:
        if len(table) > LIMITS["inputs"]:
            raise self.fail("inputs", f"{len(table)} inputs exceed the limit of {LIMITS['inputs']}")
        result = {}
        self.rounded = {}  # name -> decimal places, of inputs declared printed-rounded
        for name, value in table.items():
            key = f"inputs.{name}"
            # ``E`` may name an input (an encoder output, ``key = E``): bound, it shadows Euler's ``e``.
            if not _NAME.match(name) or (name in _RESERVED and name != "E") or name in symbols:
                raise self.fail(key, "not a usable input name (letters, digits, _; not a function, constant or symbol)")
            if isinstance(value, dict):  # {value = ..., rounded = 4}: printed rounded (grading.rounded_inputs)
                result[name], self.rounded[name] = self.rounded_input(key, value, symbols)
                continue
            self.check_value(key, value)
            result[name] = self.exact(key, value, symbols)
        return result

    def rounded_input(self, key: str, table: dict, symbols: dict) -> tuple:
        """(printed value, places) of ``{value = ..., rounded = 4}``: every entry of the
        value is a number printed rounded to that many decimal places.

        The value takes the forms of any input (decimals as strings: a TOML float is
        refused here as everywhere, by :meth:`check_value` of the whole table).
        """
        self.only_keys(table, {"value", "rounded"}, key + ".")
        for part in ("value", "rounded"):
            if part not in table:
                raise self.fail(f"{key}.{part}", "missing (a rounded input is {value = ..., rounded = places})")
        places = table["rounded"]
        if isinstance(places, bool) or not isinstance(places, int) or not 0 <= places <= MAX_ROUNDED_PLACES:
            raise self.fail(f"{key}.rounded", f"expected the decimal places, a whole number from 0 to "
                            f"{MAX_ROUNDED_PLACES}, got {show(places)}")
        printed = self.exact(f"{key}.value", table["value"], symbols)
        flat = not isinstance(printed, sympy.MatrixBase)
        grid = sympy.ImmutableMatrix([[printed]]) if flat else printed
        unit = sympy.Integer(10) ** places
        for i in range(grid.rows):
            for j in range(grid.cols):
                entry, where = grid[i, j], f"{key}.value" + ("" if flat else f"[{i + 1},{j + 1}]")
                if not entry.is_Rational:
                    raise self.fail(where, f"a rounded input's entries must be printed numbers, got {show(str(entry))}")
                if not (entry * unit).is_Integer:
                    raise self.fail(where, f"{_decimal_text(entry)} has more decimals than the {places} declared by "
                                    "rounded")
        return printed, places

    def exact(self, key: str, value, names: dict):
        """An integer, a value text, or an array of those -> exact value.

        A string is read by the one value grammar (``"[[0, ln(2)]]"`` is a matrix); an
        array is the same matrix written in TOML, refused with the same messages.
        """
        if isinstance(value, bool) or not isinstance(value, (int, str, list)):
            raise self.fail(key, f"expected an integer, a string or an array, got {type_name(type(value))} {show(value)}")
        if isinstance(value, int):
            return sympy.Integer(value)
        if isinstance(value, str):
            return self.expression(key, value, names)
        if not value or all(isinstance(row, list) and not row for row in value):
            raise self.fail(key, "empty matrix")
        flat = not isinstance(value[0], list)
        rows = [value] if flat else value
        width = len(rows[0])
        entries = []
        for i, row in enumerate(rows):
            if not isinstance(row, list):
                raise self.fail(key, f"row {i + 1} is not a list")
            if len(row) != width:
                raise self.fail(key, f"row {i + 1} has {len(row)} entries, row 1 has {width}")
            for j, entry in enumerate(row):
                where = f"{key}[{j + 1}]" if flat else f"{key}[{i + 1},{j + 1}]"
                if isinstance(entry, list):
                    raise self.fail(where, "a matrix entry must be a number, not a matrix")
                number = self.exact(where, entry, names)
                if isinstance(number, sympy.MatrixBase):
                    raise self.fail(where, "a matrix entry must be a number, not a matrix")
                entries.append(number)
        return sympy.ImmutableMatrix(len(rows), width, entries)

    def expression(self, key: str, text: str, names: dict):
        try:
            value = parse_expression(text, names)
        except SymbolicAttnError as error:
            raise self.wrap(key, error) from None
        except RecursionError:
            raise self.fail(key, "expression nested too deeply") from None
        if isinstance(value, sympy.MatrixBase):
            if max(value.shape) > LIMITS["dimension"]:
                raise self.fail(key, f"a {value.rows}x{value.cols} matrix exceeds the limit of {LIMITS['dimension']}")
            return sympy.ImmutableMatrix(value)
        return value

    def matrix(self, key: str, value, names: dict, minus_infinity: bool = False) -> sympy.ImmutableMatrix:
        """A matrix; with ``minus_infinity`` (given scores) its entries may be -inf, exactly
        -oo: blocked positions, the keep-mask the scores denote."""
        result = self.exact(key, value, names)
        if not isinstance(result, sympy.MatrixBase):
            result = sympy.ImmutableMatrix([[result]])  # a scalar is a 1x1 matrix
        entries = [e for e in result if not (minus_infinity and e is sympy.S.NegativeInfinity)]
        if any(e.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo) for e in entries):
            where = "" if minus_infinity else " (-inf is read only in given scores)"
            raise self.fail(key, f"entries must be finite numbers{where}")
        return result

    def attention(self, table: dict, names: dict) -> AttentionSpec:
        prefix = "attention."
        self.only_keys(table, _ATTENTION_KEYS, prefix)
        for key in _ATTENTION_KEYS - {"mask"}:
            if isinstance(table.get(key), dict) and "rounded" in table[key]:
                raise self.fail(prefix + key, "declare a rounded value in [inputs] (Q = {value = ..., rounded = 4}) "
                                "and name it here")
            self.typed(table, key, prefix, (int, str, list))
        if "value" not in table:
            raise self.fail(prefix + "value", "missing")
        value = self.matrix(prefix + "value", table["value"], names)
        if "scores" in table:
            for key in ("query", "key"):
                if key in table:
                    raise self.fail(prefix + key, "give either scores or query and key, not both")
            if table.get("scale", "none") != "none":
                raise self.fail(prefix + "scale", 'given scores are already scaled: leave scale out or write "none"')
            scores = self.matrix(prefix + "scores", table["scores"], names, minus_infinity=True)
            if scores.cols != value.rows:
                raise self.fail(prefix + "value", f"{value.rows} value rows for {scores.cols} keys (score columns)")
            mask, kind, offset = self.mask(table, scores.shape)
            return AttentionSpec(value, scores=scores, mask=mask, mask_kind=kind, scale="none", mask_offset=offset)
        for key in ("query", "key"):
            if key not in table:
                raise self.fail(prefix + key, "missing (or give scores directly)")
        query = self.matrix(prefix + "query", table["query"], names)
        key_matrix = self.matrix(prefix + "key", table["key"], names)
        if query.cols != key_matrix.cols:
            raise self.fail(prefix + "key", f"key width {key_matrix.cols} differs from query width {query.cols} (d_k)")
        if key_matrix.rows != value.rows:
            raise self.fail(prefix + "value", f"{value.rows} value rows for {key_matrix.rows} key rows")
        scale = self.scale(table.get("scale", "default"), names)
        mask, kind, offset = self.mask(table, (query.rows, key_matrix.rows))
        return AttentionSpec(value, query=query, key=key_matrix, mask=mask, mask_kind=kind, scale=scale,
                             mask_offset=offset)

    def scale(self, value, names: dict):
        key = "attention.scale"
        if value in ("default", "none"):
            return value
        result = self.exact(key, value, names)
        # Any exact real number, as in the attention command (0 gives uniform weights).
        if isinstance(result, sympy.MatrixBase) or result.free_symbols:
            raise self.fail(key, f'expected "default", "none" or a number, got {show(value)}')
        return result


def load_computation(path) -> Computation:
    """Read a computation file by the one file reader (:mod:`symbolic_attn.exact.source`)."""

    source = shown(str(path), 200)
    return parse_computation(read_bytes(path, COMPUTATION, source), source=source)


def parse_computation(data, source: str = "<file>") -> Computation:
    """Validate TOML text (str or bytes) into a :class:`Computation`."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if len(data) > LIMITS["file_bytes"]:
        raise ExerciseError(f"{source}: file larger than the limit of {LIMITS['file_bytes']} bytes")
    table = parse_toml(decode_text(data, source, "TOML"), source, parse_float=TomlFloat)
    reader = ComputationReader(source)
    reader.only_keys(table, COMPUTATION_KEYS, "")
    title = reader.typed(table, "title", "", (str,)) or ""
    reader.typed(table, "description", "", (str,))
    symbols = reader.symbols(reader.typed(table, "symbols", "", (list,)) or [])
    inputs = reader.inputs(reader.typed(table, "inputs", "", (dict,)) or {}, symbols)
    hidden, definitions = read_definitions(reader, table, {**symbols, **inputs})
    if not definitions:
        raise ExerciseError(f"{source}: nothing to compute: add a [define] table (or [attention])")
    return Computation(source, title, {**symbols, **inputs, **hidden}, tuple(definitions), symbols)


def read_definitions(reader, table: dict, names: dict) -> tuple[dict, list]:
    """(hidden inputs, [(name, text)]) from ``[define]`` and ``[attention]`` of ``table``."""
    define = table.get("define", {})
    if not isinstance(define, dict):
        raise reader.fail("define", f'expected a table of name = "definition", got {type_name(type(define))}')
    definitions = []
    for name, value in define.items():
        if isinstance(value, TomlFloat):  # a str subclass: refused by the one rule for floats
            reader.check_value(f"define.{name}", value)
        if not isinstance(value, str):
            raise reader.fail(f"define.{name}", f'expected a string such as "layer_norm(X)", got '
                              f"{type_name(type(value))} {show(value)}")
        if len(value) > LIMITS["string"]:
            raise reader.fail(f"define.{name}", f"definition of {len(value)} characters exceeds the limit of "
                              f"{LIMITS['string']}")
        definitions.append((name, value))
    hidden = {}
    if "attention" in table:
        if "attention" in define:
            raise reader.fail("attention", "both an [attention] table and a definition named attention")
        spec = reader.attention(reader.typed(table, "attention", "", (dict,)), names)
        hidden, text = attention_definition(spec, names, reader)
        definitions.insert(0, ("attention", text))
    return hidden, definitions


def attention_definition(spec, names: dict, reader) -> tuple[dict, str]:
    """(hidden inputs, definition text) computing the same attention as ``spec``
    (an :class:`AttentionSpec`)."""
    hidden, parts = {}, []

    def bind(key: str, value) -> str:
        name = f"attention_{key}"
        if name in names:
            raise reader.fail(f"attention.{key}", f"the input name {name} is taken (the [attention] table needs it)")
        hidden[name] = value
        return name

    if spec.scores is not None:
        parts.append(f"scores = {bind('scores', spec.scores)}")
    else:
        parts += [f"Q = {bind('query', spec.query)}", f"K = {bind('key', spec.key)}"]
    parts.append(f"V = {bind('value', spec.value)}")
    if spec.mask is None:
        parts.append("mask = 'none'")
    elif spec.mask_kind == "causal" and spec.mask_offset == 0:
        parts.append("mask = 'causal'")
    else:  # offsets, padding, keep, block: the exact grid the reader built
        parts.append(f"mask = keep({bind('mask', sympy.ImmutableMatrix(spec.mask.keep_grid()))})")
    if spec.scale in ("default", "none"):
        parts.append(f"scale = '{spec.scale}'")
    else:
        parts.append(f"scale = {bind('scale', spec.scale)}")
    return hidden, f"attention({', '.join(parts)})"
