r"""The tokenizer of the steps reader: LaTeX maths cut into tokens, each with its line and column.

Nothing is interpreted here beyond the shape of a token: a command (``\frac``, ``\,``), a
brace, a sub- or superscript mark, a number, one letter, an operator, ``&`` and the row
break ``\\``.  Every character is accounted for: a character that is no part of any token
(a Cyrillic 'х' that looks like an x, a control character, a fullwidth digit) is refused
with its code point and column, so that no lookalike is ever read as something else.

>>> [(t.kind, t.text, t.column) for t in tokenize(r"\frac{x_i}{2}")]
[('command', '\\frac', 1), ('{', '{', 6), ('letter', 'x', 7), ('_', '_', 8), ('letter', 'i', 9), ('}', '}', 10), ('{', '{', 11), ('number', '2', 12), ('}', '}', 13)]
>>> [t.space_before for t in tokenize("x y")]
[False, True]
>>> tokenize(chr(0x445) + " + 1")
Traceback (most recent call last):
...
symbolic_attn.errors.StepReadError: line 1, column 1: non-ASCII character 'х' (U+0445 CYRILLIC SMALL LETTER HA): write maths in ASCII LaTeX (a letter a-z, or a command such as \alpha)
"""

import unicodedata
from dataclasses import dataclass

from symbolic_attn.errors import StepReadError

__all__ = ["Token", "tokenize", "MAX_TEXT_LENGTH", "MAX_TOKENS", "MAX_NUMBER_DIGITS"]

#: Longest text of one side (or one row) read, in characters.
MAX_TEXT_LENGTH = 4000
#: Most tokens in one side.
MAX_TOKENS = 1500
#: Most digits in one number literal.
MAX_NUMBER_DIGITS = 400

#: Single characters that are tokens of their own kind (the kind is the character).
_SINGLE = set("{}_^&()[]+-*/=<>,|!'.:;")
#: Characters that separate tokens; ``~`` is LaTeX's unbreakable space.
_SPACE = set(" \t\n\r~")


@dataclass(frozen=True)
class Token:
    """One token: ``kind`` is ``command``, ``letter``, ``number``, ``rowbreak`` or the character
    itself for the single-character tokens; ``text`` as written; ``line``/``column`` 1-based
    positions in the original file; ``space_before`` whether white space precedes it (``xy``
    and ``x y`` are read differently: see :mod:`symbolic_attn.steps.grammar`)."""

    kind: str
    text: str
    line: int
    column: int
    space_before: bool = False


def _refuse_character(char: str, line: int, column: int) -> StepReadError:
    code = ord(char)
    if code < 32 or code == 127:
        return StepReadError(line, column, f"control character U+{code:04X} in maths")
    name = unicodedata.name(char, "unnamed")
    return StepReadError(line, column, f"non-ASCII character '{char}' (U+{code:04X} {name}): write maths in ASCII "
                         "LaTeX (a letter a-z, or a command such as \\alpha)")


def tokenize(text: str, *, line: int = 1, column: int = 1) -> list[Token]:
    r"""The tokens of ``text``, whose first character is at ``line``, ``column`` of the file.

    A ``%`` comment is refused (a side of a step is maths only; the document reader removes
    comments before).  Raises :class:`~symbolic_attn.errors.StepReadError` for any
    character that is no part of a token, a text longer than :data:`MAX_TEXT_LENGTH`, more
    than :data:`MAX_TOKENS` tokens or a number of more than :data:`MAX_NUMBER_DIGITS` digits.

    >>> [t.text for t in tokenize(r"a\\b \, 0.401")]
    ['a', '\\\\', 'b', '\\,', '0.401']
    """
    if len(text) > MAX_TEXT_LENGTH:
        raise StepReadError(line, column, f"a side of {len(text)} characters is longer than the "
                            f"{MAX_TEXT_LENGTH} the reader accepts")
    tokens: list[Token] = []
    position, space = 0, False
    current_line, line_start = line, 1 - column  # column of position p is p - line_start + 1

    def here(p: int) -> int:
        return p - line_start

    while position < len(text):
        char = text[position]
        where = (current_line, here(position) + 1)
        if char in _SPACE:
            if char == "\n":
                current_line, line_start = current_line + 1, position + 1
            position, space = position + 1, True
            continue
        if char == "%":
            raise StepReadError(*where, "a % comment inside maths: the rest of the line would be ignored")
        if char == "\\":
            end = position + 1
            while end < len(text) and text[end].isascii() and text[end].isalpha():
                end += 1
            if end == position + 1:  # a control symbol: \, \; \! \\ \{ ...
                if end >= len(text):
                    raise StepReadError(*where, "a lone backslash at the end")
                if not (text[end].isascii() and text[end].isprintable()):
                    raise _refuse_character(text[end], current_line, here(end) + 1)
                end += 1
            word = text[position:end]
            tokens.append(Token("rowbreak" if word == "\\\\" else "command", word, *where, space))
        elif char.isascii() and char.isdigit():
            end = position
            while end < len(text) and text[end].isascii() and text[end].isdigit():
                end += 1
            if end + 1 < len(text) and text[end] == "." and text[end + 1].isascii() and text[end + 1].isdigit():
                end += 1
                while end < len(text) and text[end].isascii() and text[end].isdigit():
                    end += 1
            if end - position > MAX_NUMBER_DIGITS:
                raise StepReadError(*where, f"a number of {end - position} digits is longer than the "
                                    f"{MAX_NUMBER_DIGITS} the reader accepts")
            tokens.append(Token("number", text[position:end], *where, space))
        elif char.isascii() and char.isalpha():
            end = position + 1
            tokens.append(Token("letter", char, *where, space))
        elif char in _SINGLE:
            end = position + 1
            tokens.append(Token(char, char, *where, space))
        else:
            raise _refuse_character(char, *where)
        if len(tokens) > MAX_TOKENS:
            raise StepReadError(*where, f"more than {MAX_TOKENS} tokens in one side")
        position, space = end, False
    return tokens
