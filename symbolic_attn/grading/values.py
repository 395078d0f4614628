r"""The one value grammar of grading: a number, or a matrix written as nested lists.

Everywhere a value may be a matrix -- ``[inputs]`` strings and arrays, ``[attention]``
fields (``scores``, ``query``, ``key``, ``value``) and claimed values -- the same text
gives the same value or the same error:

* a text that starts with ``[`` is a matrix: ``[[0, ln(2)], [1, 2]]``; a flat list
  ``[1, 2, 3]`` is one row; rows must have equal length; a trailing comma is allowed
  (``[1, 2,]``) as in :func:`symbolic_attn.exact.parse.parse_matrix`;
* every entry is one expression of the safe parser
  (:func:`symbolic_attn.exact.parse.parse_expression`: numbers, ``+ - * / ^``,
  ``sqrt exp ln log sin cos erf tanh``, ``e pi`` and the names an exercise binds);
* anything else is a scalar expression (or a matrix expression over bound names,
  ``X @ W_Q``).

**A bare comma list is refused** (``"0.3, 0.7"``): the command line's ``--scores``
refuses it too, so the brackets are required everywhere.  Only ASCII is accepted: a digit
in another script (``0.১৬৭``, bold ``𝟎``) is refused, never read as a number.

Each entry keeps its written text (:attr:`Entry.text`) so that claims can judge a decimal
by its written precision.

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
symbolic_attn.errors.ParseError: row 2 has 1 entries, row 1 has 2, in "[[1, 2], [3]]"
"""

import re
from dataclasses import dataclass

import sympy

from symbolic_attn.errors import InputLimitError, ParseError
from symbolic_attn.exact.limits import DEFAULT_LIMITS, Limits
from symbolic_attn.exact.parse import exact_decimal, parse_expression
from symbolic_attn.grading.text import clean

__all__ = ["Entry", "Layout", "split_value", "read_entry", "read_value", "check_ascii"]

_SPECIAL = re.compile(r"[\[\](),]")
_PLAIN_NUMBER = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?$")


@dataclass(frozen=True)
class Entry:
    """One written entry: its text (stripped) and its 1-based column in the whole text."""

    text: str
    column: int


@dataclass(frozen=True)
class Layout:
    """The structure of a value: ``shape`` None (a scalar), ``(k,)`` (a flat list) or
    ``(rows, cols)``; ``entries`` in reading order."""

    shape: tuple | None
    entries: tuple


def _snippet(text: str) -> str:
    return '"' + clean(text, 60).replace('"', '\\"') + '"'


def check_ascii(text: str, what: str = "value") -> None:
    """Refuse any non-ASCII character, naming it (digits of other scripts are not digits)."""
    for column, char in enumerate(text, start=1):
        if ord(char) > 127:
            raise ParseError(
                f"non-ASCII character {clean(char)!r} (U+{ord(char):04X}) at column {column} in {_snippet(text)}: "
                f"write the {what} with ASCII digits and letters"
            )


def split_value(text: str, limits: Limits = DEFAULT_LIMITS) -> Layout:
    """The structure of a value: brackets and commas at parenthesis depth 0 (``log(8, 2)``
    keeps its comma), entries as written.  Nothing is evaluated here.
    """
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {type(text).__name__}")
    if len(text) > limits.max_text_length:
        raise InputLimitError(f"text of {len(text)} characters exceeds the limit of {limits.max_text_length}")
    check_ascii(text)
    if not text.strip():
        raise ParseError("empty value")
    tokens, start, parens = [], 0, 0

    def atom(end):
        piece = text[start:end]
        if piece.strip():
            tokens.append(("atom", Entry(piece.strip(), start + len(piece) - len(piece.lstrip()) + 1)))

    for special in _SPECIAL.finditer(text):  # only the structural characters, found by C code
        position, char = special.start(), special.group()
        if char == "(":
            parens += 1
        elif char == ")":
            parens -= 1
        elif parens == 0 and char in "[],":
            atom(position)
            tokens.append((char, position + 1))
            start = position + 1
            if len(tokens) > 3 * limits.max_entries:
                raise InputLimitError(f"more than {limits.max_entries} entries in {_snippet(text)}")
    atom(len(text))
    if tokens[0][0] != "[":
        if tokens[0][0] == "atom" and len(tokens) == 1:
            return Layout(None, (tokens[0][1],))
        comma = next((at for kind, at in tokens if kind == ","), None)
        if comma is not None and all(kind in ("atom", ",") for kind, _ in tokens):
            return _bare_list(text, comma)
        # "2 * [[1]]": brackets inside an expression are the parser's to refuse, with its message.
        return Layout(None, (Entry(text.strip(), 1),))
    tree, end = _descend(tokens, 0, text, 1)
    if end != len(tokens):
        kind, at = tokens[end]
        where = at.column if kind == "atom" else at
        raise ParseError(f"a matrix must be the whole value: unexpected text at column {where} in {_snippet(text)}")
    if not tree:
        raise ParseError(f"empty matrix in {_snippet(text)}")
    if all(isinstance(item, Entry) for item in tree):
        _bound(1, len(tree), text, limits)
        return Layout((len(tree),), tuple(tree))
    if isinstance(tree[0], Entry):
        raise ParseError(f"a matrix entry must be a number, not a matrix in {_snippet(text)}")
    width = len(tree[0])
    if width == 0:
        raise ParseError(f"empty matrix in {_snippet(text)}")
    for number, row in enumerate(tree, start=1):
        if not isinstance(row, list):
            raise ParseError(f"row {number} is not a list in {_snippet(text)}")
        if any(isinstance(item, list) for item in row):
            raise ParseError(f"a matrix entry must be a number, not a matrix in {_snippet(text)}")
        if len(row) != width:
            raise ParseError(f"row {number} has {len(row)} entries, row 1 has {width}, in {_snippet(text)}")
    _bound(len(tree), width, text, limits)
    return Layout((len(tree), width), tuple(entry for row in tree for entry in row))


_DECIMAL_COMMA = re.compile(r"^\s*([+-]?[0-9]+),([0-9]+)\s*$")


def _bare_list(text, comma):
    match = _DECIMAL_COMMA.match(text)
    if match:  # "0,245": a decimal comma, as many countries write it
        whole, fraction = match.groups()
        raise ParseError(f"a decimal comma is not read: write {whole}.{fraction} (or [{whole}, {fraction}] for a list)")
    pieces = ", ".join(clean(piece.strip(), 20) for piece in text.split(",")[:4])
    more = ", ..." if text.count(",") > 3 else ""
    raise ParseError(f"a list needs brackets: write [{pieces}{more}] (a bare comma at column {comma})")


def _bound(rows, cols, text, limits):
    if rows > limits.max_rows or cols > limits.max_cols or rows * cols > limits.max_entries:
        raise InputLimitError(
            f"matrix of {rows}x{cols} entries exceeds the limit ({limits.max_rows}x{limits.max_cols}, "
            f"{limits.max_entries} entries)"
        )


def _descend(tokens, at, text, depth):
    """One item from token ``at``: an Entry, or '[' items ']' (trailing comma allowed)."""
    if depth > 3:  # a matrix is two levels; a third is refused without going deeper
        raise ParseError(f"a matrix entry must be a number, not a matrix in {_snippet(text)}")
    if at >= len(tokens):
        raise ParseError(f"missing ']' in {_snippet(text)}")
    kind, payload = tokens[at]
    if kind == "atom":
        return payload, at + 1
    if kind != "[":
        raise ParseError(f"missing entry before '{kind}' at column {payload} in {_snippet(text)}")
    opened, items, at = payload, [], at + 1
    while True:
        if at >= len(tokens):
            raise ParseError(f"unclosed '[' at column {opened} in {_snippet(text)}")
        if tokens[at][0] == "]":
            return items, at + 1
        item, at = _descend(tokens, at, text, depth + 1)
        items.append(item)
        if at >= len(tokens):
            raise ParseError(f"unclosed '[' at column {opened} in {_snippet(text)}")
        kind, payload = tokens[at]
        if kind == "]":
            return items, at + 1
        if kind != ",":
            raise ParseError(f"expected ',' or ']' at column {payload if kind != 'atom' else payload.column} in {_snippet(text)}")
        at += 1


def read_entry(entry: Entry, names=None, limits: Limits = DEFAULT_LIMITS):
    """One entry's exact value: plain decimals directly, anything else by the safe parser."""
    text = entry.text
    if _PLAIN_NUMBER.match(text) and sum(c.isdigit() for c in text) <= limits.max_digits:
        body = text.lstrip("+-")
        mantissa = body.split("e")[0].split("E")[0]
        exponent = body[len(mantissa) + 1:]
        if not exponent or abs(int(exponent)) <= limits.max_decimal_exponent:
            value = exact_decimal(body)
            return -value if text.startswith("-") else value
    return parse_expression(text, names, limits=limits)


def read_value(text: str, names=None, *, limits: Limits = DEFAULT_LIMITS):
    """The exact value of a text: a SymPy scalar, or an ImmutableMatrix for a list.

    A flat list is a one-row matrix, as on the command line.
    """
    layout = split_value(text, limits)
    if layout.shape is None:
        value = read_entry(layout.entries[0], names, limits)
        return sympy.ImmutableMatrix(value) if isinstance(value, sympy.MatrixBase) else value
    values = []
    for entry in layout.entries:
        try:
            value = read_entry(entry, names, limits)
        except ParseError as error:  # same class, with the place in the whole text
            raise type(error)(f"{error} (the entry at column {entry.column} of {_snippet(text)})") from None
        if isinstance(value, sympy.MatrixBase):
            raise ParseError(f"a matrix entry must be a number, not a matrix at column {entry.column} in {_snippet(text)}")
        values.append(value)
    rows, cols = (1, layout.shape[0]) if len(layout.shape) == 1 else layout.shape
    return sympy.ImmutableMatrix(rows, cols, values)
