"""Typed access to a parsed TOML table, with one-line errors naming file and key.

The base of the exercise reader (:mod:`symbolic_attn.grading.exercise`): every value's
TOML type is checked, floats are refused (they lose their written precision), integers,
strings and arrays are bounded, and the masks of the exercise format are read here.
Every message escapes control characters (:func:`symbolic_attn.errors.shown`).
"""

from symbolic_attn.errors import ExerciseError, SymbolicAttnError, shown
from symbolic_attn.model.masks import Mask

__all__ = ["LIMITS", "TomlFloat", "TableReader", "type_name", "show"]

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
                    "{keep = [[...]]} or {block = [[...]]}")
        if not isinstance(value, dict) or not value:
            raise self.fail(key, f"{expected}, got {show(value)}")
        kinds = [kind for kind in ("causal", "padding", "keep", "block") if kind in value]
        allowed = {"causal": {"causal", "offset"}, "padding": {"padding"}, "keep": {"keep"}, "block": {"block"}}
        if len(kinds) != 1 or set(value) - allowed[kinds[0]]:
            raise self.fail(key, f"{expected}, got {show(value)}")
        kind = kinds[0]
        if kind == "causal":
            mask, offset = self.causal(key, value, shape)
            return mask, "causal", offset
        if kind == "padding":
            return self.padding(key, value["padding"], shape), "padding", 0
        grid = value[kind]
        where = f"{key}.{kind}"
        if not isinstance(grid, list) or not grid or not all(isinstance(row, list) for row in grid):
            raise self.fail(where, f"expected an array of rows of 0/1 or true/false, got {show(grid)}")
        if (len(grid), len(grid[0])) != tuple(shape):
            raise self.fail(where, f"a {len(grid)}x{len(grid[0])} mask for {shape[0]}x{shape[1]} scores")
        for i, row in enumerate(grid):
            if len(row) != shape[1]:
                raise self.fail(f"{where}[{i}]", f"{len(row)} entries, expected {shape[1]}")
            for j, entry in enumerate(row):
                if entry not in (0, 1) or not isinstance(entry, (bool, int)):
                    raise self.fail(f"{where}[{i}][{j}]", f"expected 0, 1, true or false, got {show(entry)}")
        try:
            mask = Mask.keep(grid) if kind == "keep" else Mask.block(grid)
        except SymbolicAttnError as error:
            raise self.wrap(where, error) from None
        self.no_empty_row(where, mask)
        return mask, kind, 0

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
