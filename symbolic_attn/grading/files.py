r"""Reading input files safely: regular files only, size first, TOML pre-scanned.

A path given to ``check`` may name a FIFO (reading it blocks forever), a directory, a
device (``/dev/zero`` never ends) or a huge file.  :func:`read_regular_file` refuses all
but regular files at once, checks the size before reading, and opens without blocking.

Python's ``tomllib`` is quadratic on some inputs (a 40 KB file of 20,000 dotted key parts
hangs it), so :func:`load_toml` first scans the text cheaply -- strings and comments
removed with one regular expression -- and bounds dotted key parts, bracket nesting and the
number of table headers before ``tomllib`` sees it.

>>> load_toml('a = 1\n[b]\nc = "x.y.z"\n', "t.toml")
{'a': 1, 'b': {'c': 'x.y.z'}}
>>> load_toml("a" + ".a" * 40 + " = 1\n", "t.toml")
Traceback (most recent call last):
...
symbolic_attn.errors.ExerciseError: t.toml: line 1: a key of more than 16 dotted parts
"""

import os
import re
import stat
import tomllib

from symbolic_attn.errors import ExerciseError
from symbolic_attn.grading.text import clean

__all__ = ["read_regular_file", "load_toml", "TomlLimits", "decode_text"]


class TomlLimits:
    """Bounds checked on the raw TOML text before ``tomllib`` parses it."""

    key_parts = 16  # parts of one dotted key (an exercise needs 2)
    depth = 8  # arrays and inline tables nested (a matrix needs 2, a mask 3)
    headers = 20_000  # [table] and [[array]] headers ([[claims]] and [[questions]])
    lines = 200_000


_STRINGS_AND_COMMENTS = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""'  # multi-line basic string
    r"|'''(?:[^']|'(?!''))*'''"  # multi-line literal string
    r'|"(?:[^"\\\n]|\\.)*"'  # basic string
    r"|'[^'\n]*'"  # literal string
    r"|#[^\n]*",  # comment
    re.DOTALL,
)
_DOTTED = re.compile(r"(?:[A-Za-z0-9_\-S]+[ \t]*\.[ \t]*){%d}" % TomlLimits.key_parts)
_HEADER = re.compile(r"^[ \t]*\[", re.MULTILINE)
_BRACKETS = re.compile(r"[\[\]{}]")


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular_file(path, limit: int, what: str = "file", hint: str = "") -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; anything else an ExerciseError.

    The file is opened non-blocking (a FIFO swapped in after the check cannot block the
    read) and checked again through the open descriptor.
    """
    source = clean(os.fspath(path))
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise ExerciseError(f"{source}: is {_kind(info.st_mode)}, not a regular {what}"
                                f"{hint if stat.S_ISDIR(info.st_mode) else ''}")
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except ExerciseError:
        raise
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or type(error).__name__
        raise ExerciseError(f"{source}: cannot read the file ({clean(reason)})") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise ExerciseError(f"{source}: is {_kind(info.st_mode)}, not a regular {what}{hint}")
        if info.st_size > limit:
            raise ExerciseError(f"{source}: {what} of {info.st_size} bytes is larger than the limit of {limit} bytes")
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    except OSError as error:
        raise ExerciseError(f"{source}: cannot read the file ({clean(error.strerror or type(error).__name__)})") from None
    finally:
        os.close(descriptor)
    if len(data) > limit:  # it grew while we read
        raise ExerciseError(f"{source}: {what} larger than the limit of {limit} bytes")
    return data


def decode_text(data: bytes, source: str, what: str = "TOML") -> str:
    """UTF-8 text without NUL bytes (a leading byte-order mark is dropped)."""
    if b"\x00" in data:
        offset = data.index(b"\x00")
        raise ExerciseError(f"{source}: binary data (a NUL byte at offset {offset}), not a {what} text file")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        raise ExerciseError(f"{source}: not UTF-8 text (invalid byte at offset {error.start})") from None


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def prescan_toml(text: str, source: str) -> None:
    """Refuse TOML text whose shape could make ``tomllib`` slow, before parsing it."""
    if text.count("\n") > TomlLimits.lines:
        raise ExerciseError(f"{source}: more than {TomlLimits.lines} lines")
    # Strings become one placeholder letter, comments vanish: what is left is structure.
    residue = _STRINGS_AND_COMMENTS.sub(lambda m: "" if m.group().startswith("#") else "S", text)
    match = _DOTTED.search(residue)
    if match:
        line = _line(residue, match.start())
        raise ExerciseError(f"{source}: line {line}: a key of more than {TomlLimits.key_parts} dotted parts")
    headers = len(_HEADER.findall(residue))
    if headers > TomlLimits.headers:
        raise ExerciseError(f"{source}: {headers} table headers exceed the limit of {TomlLimits.headers}")
    depth = 0
    for bracket in _BRACKETS.finditer(residue):
        char = bracket.group()
        if char in "[{":
            depth += 1
            if depth > TomlLimits.depth:
                line = _line(residue, bracket.start())
                raise ExerciseError(f"{source}: line {line}: arrays or tables nested more than {TomlLimits.depth} deep")
        else:
            depth = max(depth - 1, 0)


def load_toml(text: str, source: str, parse_float=float) -> dict:
    """``tomllib.loads`` after :func:`prescan_toml`; every failure an ExerciseError."""
    prescan_toml(text, source)
    try:
        return tomllib.loads(text, parse_float=parse_float)
    except tomllib.TOMLDecodeError as error:
        raise ExerciseError(f"{source}: not valid TOML: {clean(error, 120)}") from None
    except (ValueError, RecursionError, MemoryError) as error:  # huge integers, deep nesting
        raise ExerciseError(f"{source}: not a usable TOML file ({type(error).__name__}: {clean(error)})") from None
