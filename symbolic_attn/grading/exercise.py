r"""Exercise files (TOML): the inputs of an attention exercise and a solution's claims.

Exercise files come from students, so everything here treats the file as data: sizes are
bounded before parsing, every value's TOML type is checked, expressions go through the
safe parser (:mod:`symbolic_attn.exact.parse`, never ``eval``), and every problem is an
:class:`ExerciseError` naming the file, the key (``claims[3].value``) and the value.

>>> text = '''
... title = "one row"
... [inputs]
... V = [[1, 0], [0, 2], [3, 1]]
... [attention]
... scores = [["0", "ln(2)", "ln(3)"]]
... value = "V"
... [[claims]]
... quantity = "weights"
... value = "[1/6, 2/6, 3/6]"
... '''
>>> exercise = parse_exercise(text, source="row.toml")
>>> exercise.attention.scores
Matrix([[0, log(2), log(3)]])
>>> exercise.claims[0].claimed.shape
(3,)
>>> parse_exercise('title = "t"\n[inputs]\nx = 0.140\n', source="bad.toml")
Traceback (most recent call last):
...
symbolic_attn.errors.ExerciseError: bad.toml: inputs.x: TOML float 0.140 loses its written precision; write it as a string: "0.140"
"""

import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import sympy

from symbolic_attn.grading.claims import QUANTITIES, Claim, parse_claimed, parse_rule
from symbolic_attn.errors import ExerciseError, SymbolicAttnError
from symbolic_attn.model.masks import Mask
from symbolic_attn.exact.parse import parse_expression

__all__ = ["Exercise", "AttentionSpec", "load_exercise", "parse_exercise", "LIMITS"]

#: Bounds checked before anything is built (a 64x64 attention with every entry claimed fits).
LIMITS = {
    "file_bytes": 1_000_000,
    "inputs": 64,
    "symbols": 64,
    "claims": 8_192,
    "dimension": 64,  # rows or columns of any matrix
    "string": 100_000,  # characters in one string
    "integer_digits": 400,  # digits in a TOML integer
}
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,31}$")
_RESERVED = {"sqrt", "exp", "ln", "log", "e", "E", "pi"}
_TOP_KEYS = {"title", "symbols", "inputs", "attention", "claims", "description",
             "grading", "questions"}  # the answer key: read by grading.answer_key
_ATTENTION_KEYS = {"query", "key", "value", "scores", "mask", "scale"}
_CLAIM_KEYS = {"quantity", "row", "col", "value", "label", "tolerance", "relative", "sig_figs"}


@dataclass(frozen=True)
class AttentionSpec:
    """The ``[attention]`` table, resolved to exact matrices.

    Either ``query``/``key`` (and ``scale``) or ``scores`` (already scaled) is set;
    ``mask_kind`` is ``"none"``, ``"causal"``, ``"keep"`` or ``"block"``.
    """

    value: sympy.ImmutableMatrix
    query: sympy.ImmutableMatrix | None = None
    key: sympy.ImmutableMatrix | None = None
    scores: sympy.ImmutableMatrix | None = None
    mask: Mask | None = None
    mask_kind: str = "none"
    scale: object = "default"

    @property
    def shape(self):
        """(n, m, d_k, d_v) -- d_k is None when the scores were given."""
        if self.scores is not None:
            return self.scores.rows, self.scores.cols, None, self.value.cols
        return self.query.rows, self.key.rows, self.query.cols, self.value.cols


@dataclass(frozen=True)
class Exercise:
    """A loaded exercise: where it came from, its inputs, attention and claims."""

    source: str
    title: str
    attention: AttentionSpec
    claims: tuple = ()
    inputs: dict = field(default_factory=dict)
    symbols: dict = field(default_factory=dict)

    def quantity_shape(self, quantity: str):
        """(rows, cols) of a claimable quantity."""
        n, m, d_k, d_v = self.attention.shape
        return {"query": (n, d_k), "key": (m, d_k), "value": (m, d_v), "scores": (n, m),
                "scaled": (n, m), "weights": (n, m), "output": (n, d_v)}[quantity]


def load_exercise(path) -> Exercise:
    """Read and validate an exercise file; any problem is an :class:`ExerciseError`."""
    path = Path(path)
    source = str(path)
    try:
        with path.open("rb") as handle:
            data = handle.read(LIMITS["file_bytes"] + 1)
    except OSError as error:
        raise ExerciseError(f"{source}: cannot read the file ({error.strerror or error})") from None
    return parse_exercise(data, source=source)


def parse_exercise(data, source: str = "<exercise>") -> Exercise:
    """Validate TOML text (str or bytes) into an :class:`Exercise`."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if len(data) > LIMITS["file_bytes"]:
        raise ExerciseError(f"{source}: file larger than the limit of {LIMITS['file_bytes']} bytes")
    if b"\x00" in data:
        offset = data.index(b"\0")
        raise ExerciseError(f"{source}: binary data (a NUL byte at offset {offset}), not a TOML text file")
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")  # a byte-order mark some editors write
    except UnicodeDecodeError as error:
        raise ExerciseError(f"{source}: not UTF-8 text (invalid byte at offset {error.start})") from None
    try:
        table = tomllib.loads(text, parse_float=_TomlFloat)
    except tomllib.TOMLDecodeError as error:
        raise ExerciseError(f"{source}: not valid TOML: {error}") from None
    except (ValueError, RecursionError, MemoryError) as error:  # huge integers, deep nesting
        raise ExerciseError(f"{source}: not a usable TOML file ({type(error).__name__}: {str(error)[:80]})") from None
    return _Reader(source).exercise(table)


class _TomlFloat(str):
    """A TOML float kept as its text, only to refuse it with a helpful hint."""


class _Reader:
    """Validates the parsed TOML table; ``fail`` builds the one-line error message."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, key: str, problem: str) -> ExerciseError:
        return ExerciseError(f"{self.source}: {key}: {problem}")

    def wrap(self, key: str, error: Exception) -> ExerciseError:
        return self.fail(key, " ".join(str(error).split()))

    # -- typed access -----------------------------------------------------------

    def check_value(self, key: str, value, depth: int = 0, tables: int = 0):
        """Refuse floats, huge integers, long strings and deep arrays anywhere in a value."""
        if depth > 2 or tables > 4:
            raise self.fail(key, "nested deeper than a matrix" if depth > 2 else "tables nested too deeply")
        if isinstance(value, _TomlFloat):
            raise self.fail(key, f'TOML float {value} loses its written precision; write it as a string: "{value}"')
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
            for index, item in enumerate(value):
                self.check_value(f"{key}[{index}]", item, depth + 1, tables)
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
            expected = " or ".join(_type_name(kind) for kind in kinds)
            raise self.fail(where, f"expected {expected}, got {_type_name(type(value))} {_show(value)}")
        return value

    def only_keys(self, table: dict, allowed: set, prefix: str):
        for key in table:
            if key not in allowed:
                raise self.fail(f"{prefix}{key}", f"unknown key (expected one of: {', '.join(sorted(allowed))})")

    # -- the file -----------------------------------------------------------------

    def exercise(self, table: dict) -> Exercise:
        self.only_keys(table, _TOP_KEYS, "")
        title = self.typed(table, "title", "", (str,)) or ""
        self.typed(table, "description", "", (str,))
        symbols = self.symbols(self.typed(table, "symbols", "", (list,)) or [])
        inputs = self.inputs(self.typed(table, "inputs", "", (dict,)) or {}, symbols)
        attention = self.attention(self.typed(table, "attention", "", (dict,), required=True), {**symbols, **inputs})
        claims_table = table.get("claims", [])
        if not isinstance(claims_table, list):  # the array of tables is bounded by its own limit
            raise self.fail("claims", f"expected an array, got {_type_name(type(claims_table))} {_show(claims_table)}")
        if len(claims_table) > LIMITS["claims"]:
            raise self.fail("claims", f"{len(claims_table)} claims exceed the limit of {LIMITS['claims']}")
        exercise = Exercise(self.source, title, attention, (), inputs, symbols)
        claims = tuple(self.claim(index, entry, exercise) for index, entry in enumerate(claims_table))
        return Exercise(self.source, title, attention, claims, inputs, symbols)

    def symbols(self, names: list) -> dict:
        if len(names) > LIMITS["symbols"]:
            raise self.fail("symbols", f"{len(names)} symbols exceed the limit of {LIMITS['symbols']}")
        result = {}
        for index, name in enumerate(names):
            if not isinstance(name, str) or not _NAME.match(name) or name in _RESERVED:
                raise self.fail(f"symbols[{index}]", f"not a usable symbol name: {_show(name)}")
            result[name] = sympy.Symbol(name, real=True)
        return result

    def inputs(self, table: dict, symbols: dict) -> dict:
        if len(table) > LIMITS["inputs"]:
            raise self.fail("inputs", f"{len(table)} inputs exceed the limit of {LIMITS['inputs']}")
        result = {}
        for name, value in table.items():
            key = f"inputs.{name}"
            if not _NAME.match(name) or name in _RESERVED or name in symbols:
                raise self.fail(key, "not a usable input name (letters, digits, _; not a function, constant or symbol)")
            self.check_value(key, value)
            result[name] = self.exact(key, value, symbols)
        return result

    def exact(self, key: str, value, names: dict):
        """An integer, an expression string, or a (nested) array of those -> exact value."""
        if isinstance(value, bool) or not isinstance(value, (int, str, list)):
            raise self.fail(key, f"expected an integer, a string or an array, got {_type_name(type(value))} {_show(value)}")
        if isinstance(value, int):
            return sympy.Integer(value)
        if isinstance(value, str):
            return self.expression(key, value, names)
        if not value:
            raise self.fail(key, "empty array")
        rows = value if isinstance(value[0], list) else [value]
        width = len(rows[0])
        entries = []
        for i, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != width or not row:
                raise self.fail(f"{key}[{i}]", f"every row must be an array of {width} entries, got {_show(row)}")
            for j, entry in enumerate(row):
                where = f"{key}[{i}][{j}]" if isinstance(value[0], list) else f"{key}[{j}]"
                number = self.exact(where, entry, names)
                if isinstance(number, sympy.MatrixBase):
                    raise self.fail(where, "a matrix entry must be a number")
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

    def matrix(self, key: str, value, names: dict) -> sympy.ImmutableMatrix:
        result = self.exact(key, value, names)
        if not isinstance(result, sympy.MatrixBase):
            result = sympy.ImmutableMatrix([[result]])  # a scalar is a 1x1 matrix
        if result.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
            raise self.fail(key, "entries must be finite numbers")
        return result

    def attention(self, table: dict, names: dict) -> AttentionSpec:
        prefix = "attention."
        self.only_keys(table, _ATTENTION_KEYS, prefix)
        for key in _ATTENTION_KEYS - {"mask"}:
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
            scores = self.matrix(prefix + "scores", table["scores"], names)
            if scores.cols != value.rows:
                raise self.fail(prefix + "value", f"{value.rows} value rows for {scores.cols} keys (score columns)")
            mask, kind = self.mask(table, scores.shape)
            return AttentionSpec(value, scores=scores, mask=mask, mask_kind=kind, scale="none")
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
        mask, kind = self.mask(table, (query.rows, key_matrix.rows))
        return AttentionSpec(value, query=query, key=key_matrix, mask=mask, mask_kind=kind, scale=scale)

    def scale(self, value, names: dict):
        key = "attention.scale"
        if value in ("default", "none"):
            return value
        result = self.exact(key, value, names)
        # Any exact real number, as in the attention command (0 gives uniform weights).
        if isinstance(result, sympy.MatrixBase) or result.free_symbols:
            raise self.fail(key, f'expected "default", "none" or a number, got {_show(value)}')
        return result

    def mask(self, table: dict, shape) -> tuple:
        key = "attention.mask"
        value = table.get("mask", "none")
        self.check_value(key, value)
        if value == "none":
            return None, "none"
        if value == "causal":
            return Mask.causal(*shape), "causal"
        if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in ("keep", "block"):
            raise self.fail(key, f'expected "none", "causal", {{keep = [[...]]}} or {{block = [[...]]}}, got {_show(value)}')
        (kind, grid), = value.items()
        where = f"{key}.{kind}"
        if not isinstance(grid, list) or not grid or not all(isinstance(row, list) for row in grid):
            raise self.fail(where, f"expected an array of rows of 0/1 or true/false, got {_show(grid)}")
        if (len(grid), len(grid[0])) != tuple(shape):
            raise self.fail(where, f"a {len(grid)}x{len(grid[0])} mask for {shape[0]}x{shape[1]} scores")
        for i, row in enumerate(grid):
            if len(row) != shape[1]:
                raise self.fail(f"{where}[{i}]", f"{len(row)} entries, expected {shape[1]}")
            for j, entry in enumerate(row):
                if entry not in (0, 1) or not isinstance(entry, (bool, int)):
                    raise self.fail(f"{where}[{i}][{j}]", f"expected 0, 1, true or false, got {_show(entry)}")
        try:
            mask = Mask.keep(grid) if kind == "keep" else Mask.block(grid)
        except SymbolicAttnError as error:
            raise self.wrap(where, error) from None
        empty = mask.empty_rows()
        if empty:  # no key to normalize over: refuse here, with the key, not deep in softmax
            raise self.fail(where, f"row {empty[0] + 1} allows no key: there is no distribution to normalize")
        return mask, kind

    def claim(self, index: int, entry, exercise: Exercise) -> Claim:
        prefix = f"claims[{index}]."
        if not isinstance(entry, dict):
            raise self.fail(f"claims[{index}]", f"expected a table ([[claims]]), got {_type_name(type(entry))}")
        self.only_keys(entry, _CLAIM_KEYS, prefix)
        quantity = self.typed(entry, "quantity", prefix, (str,), required=True)
        if quantity not in QUANTITIES:
            raise self.fail(prefix + "quantity", f"expected one of {', '.join(QUANTITIES)}, got {_show(quantity)}")
        if quantity in ("query", "key") and exercise.attention.query is None:
            raise self.fail(prefix + "quantity", f"no {quantity} in this exercise (scores were given directly)")
        rows, cols = exercise.quantity_shape(quantity)
        row = self.index(entry, "row", prefix, rows, quantity)
        col = self.index(entry, "col", prefix, cols, quantity)
        text = self.typed(entry, "value", prefix, (str,), required=True)
        if isinstance(entry["value"], bool) or not isinstance(entry["value"], str):
            raise self.fail(prefix + "value", "expected a string")
        try:
            claimed = parse_claimed(text, exercise.symbols)
        except SymbolicAttnError as error:
            raise self.wrap(prefix + "value", error) from None
        except RecursionError:
            raise self.fail(prefix + "value", "nested too deeply") from None
        expected = _expected_shape(rows, cols, row, col)
        if not _shape_fits(claimed.shape, expected):
            raise self.fail(prefix + "value", f"claimed {_describe_shape(claimed.shape)} for {_describe_shape(expected)} "
                            f"({quantity}{'' if row is None else f' row {row}'}{'' if col is None else f' col {col}'})")
        label = self.typed(entry, "label", prefix, (str,))
        rules = [name for name in ("tolerance", "relative", "sig_figs") if name in entry]
        if len(rules) > 1:
            raise self.fail(prefix + rules[1], f"give at most one of tolerance, relative, sig_figs (got {', '.join(rules)})")
        rule = None
        if rules:
            amount = self.typed(entry, rules[0], prefix, (int, str))
            try:
                rule = parse_rule(rules[0], amount)
            except SymbolicAttnError as error:
                raise self.wrap(prefix + rules[0], error) from None
        return Claim(index + 1, quantity, claimed, row, col, label, rule)

    def index(self, entry: dict, name: str, prefix: str, size: int, quantity: str):
        value = self.typed(entry, name, prefix, (int,))
        if value is None:
            return None
        if isinstance(value, bool) or not 1 <= value <= size:
            raise self.fail(prefix + name, f"{value} is outside 1..{size} ({quantity} has {size} {name}s; indices are 1-based)")
        return value


def _expected_shape(rows, cols, row, col):
    if row is not None and col is not None:
        return None
    if row is not None:
        return (cols,)
    if col is not None:
        return (rows,)
    return (rows, cols)


def _shape_fits(claimed, expected) -> bool:
    """A claimed shape matches, allowing a flat list for a single row or column."""
    if claimed == expected:
        return True
    if expected is None:
        return claimed in ((1,), (1, 1))
    if claimed is None:
        return math.prod(expected) == 1
    if len(expected) == 1:
        return claimed in ((1, expected[0]), (expected[0], 1))
    if len(claimed) == 1:
        return 1 in expected and claimed[0] == math.prod(expected)
    return False


def _describe_shape(shape) -> str:
    if shape is None:
        return "one number"
    if len(shape) == 1:
        return f"a list of {shape[0]}"
    return f"a {shape[0]}x{shape[1]} matrix"


def _type_name(kind) -> str:
    return {str: "a string", int: "an integer", list: "an array", dict: "a table", bool: "a boolean",
            _TomlFloat: "a float"}.get(kind, kind.__name__)


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
