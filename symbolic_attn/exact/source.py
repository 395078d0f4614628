r"""The one file reader: every input file the tool reads comes through here.

Exercises (``check``), answer keys and solutions (``grade``), computation files
(``run``), derivation scripts (``derive``) and implementation files (``compare``) are all
read with one contract:

* **regular files only.**  A FIFO (reading it blocks for ever), a directory, a device
  (``/dev/zero`` never ends) or a socket is refused at once, from ``stat``, before any
  open; the file is then opened non-blocking and checked again through the descriptor
  (a FIFO swapped in between cannot block the read).  A symbolic link is followed or,
  for a kind that says so (a student's solution), refused and never opened;
* **size before reading**, against the bound of the file's kind (:class:`FileKind`);
* **one decoding**: UTF-8, UTF-8 with a byte-order mark, UTF-16 LE or BE with a
  byte-order mark; anything else (Latin-1 bytes, UTF-32, a NUL byte) is a one-line
  :class:`~symbolic_attn.errors.InputFileError` naming the file and the byte offset;
* **one line ending**: CR, LF and CRLF all become LF (a file saved with CR alone is
  otherwise one long line, its line numbers all 1);
* **TOML pre-scanned**: Python's ``tomllib`` is quadratic on some inputs (a 40 KB file of
  dotted keys took 7.5 s, 80 KB 26 s), so :func:`parse_toml` first scans the text cheaply
  -- strings and comments removed by one regular expression -- and bounds dotted key
  parts, bracket nesting, table headers and lines (:class:`TomlLimits`) before ``tomllib``
  sees it.  Every TOML file the tool reads goes through :func:`parse_toml`.

>>> decode_text(b"\xef\xbb\xbfa = 1\r\nb = 2\rc = 3\n", "t.toml")
'a = 1\nb = 2\nc = 3\n'
>>> decode_text("x = 1\n".encode("utf-16"), "t.toml")
'x = 1\n'
>>> decode_text(b'title = "\xe9t\xe9"', "t.toml")
Traceback (most recent call last):
...
symbolic_attn.errors.InputFileError: t.toml: not UTF-8 text (invalid byte 0xe9 at offset 9); save it as UTF-8
>>> parse_toml('a = 1\n[b]\nc = "x.y.z"\n', "t.toml")
{'a': 1, 'b': {'c': 'x.y.z'}}
>>> parse_toml("a" + ".a" * 40 + " = 1\n", "t.toml")
Traceback (most recent call last):
...
symbolic_attn.errors.InputFileError: t.toml: line 1: a key of more than 16 dotted parts
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from symbolic_attn.exact.limits import DEFAULT_LIMITS
from symbolic_attn.errors import InputFileError, safe_text

__all__ = ["FileKind", "EXERCISE", "COMPUTATION", "SOLUTION", "DERIVATION", "SCRIPT", "MODULE", "TomlLimits", "shown_path",
           "read_bytes", "check_file", "decode_text", "read_text", "prescan_toml", "parse_toml", "read_toml"]

Path = str | os.PathLike[str]


@dataclass(frozen=True)
class FileKind:
    """What a file is read as: its name in messages, its size bound, how links are met.

    ``hint`` is added when a directory is given instead (what to give); a kind with
    ``follow_links=False`` refuses a symbolic link (and never opens what it points to).
    """

    name: str
    limit: int
    hint: str = ""
    follow_links: bool = True


#: ``check``: an exercise; ``grade``: the exercise with its answer key.
EXERCISE = FileKind("exercise file", 1_000_000, " (give one exercise .toml file, e.g. examples/readme.toml)")
#: ``run``: a file of ``[inputs]`` and ``[define]``.
COMPUTATION = FileKind("computation file", 1_000_000)
#: ``grade``: a student's solution (Markdown, LaTeX, text or TOML); a link is refused.
SOLUTION = FileKind("solution file", 1_000_000, follow_links=False)
#: ``steps``: a student's derivation (Markdown, LaTeX or text), read as data.
DERIVATION = FileKind("derivation file", 256_000, " (give one .md, .tex or .txt file)")
#: ``derive``: a derivation script (Python imports it; checked here first).
SCRIPT = FileKind("derivation script", 1_000_000)
#: ``compare``: the ``.py`` file of an implementation (Python imports it; checked here first).
MODULE = FileKind("Python file", 10_000_000)


class TomlLimits:
    """Bounds checked on the raw TOML text before ``tomllib`` parses it."""

    key_parts = 16  # parts of one dotted key (an exercise needs 2)
    depth = 8  # arrays and inline tables nested (a matrix needs 2, a mask 3)
    headers = 20_000  # [table] and [[array]] headers ([[claims]] and [[questions]])
    lines = 200_000


def shown_path(path: Path | bytes) -> str:
    """A path as one safe line of at most 200 characters (control characters escaped)."""
    text = os.fsdecode(path)
    return safe_text(text[:400], 200)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


def _reason(error: BaseException) -> str:
    return safe_text(getattr(error, "strerror", None) or type(error).__name__)


def _refuse_mode(mode: int, kind: FileKind, source: str) -> None:
    if stat.S_ISREG(mode):
        return
    what = _kind(mode)
    if stat.S_ISLNK(mode):
        raise InputFileError(source, f"is {what}, not a regular {kind.name} (links are never followed)")
    hint = kind.hint if stat.S_ISDIR(mode) else ""
    raise InputFileError(source, f"is {what}, not a regular {kind.name}{hint}")


def _refuse_size(size: int, kind: FileKind, source: str) -> None:
    if size > kind.limit:
        raise InputFileError(source, f"{kind.name} of {size} bytes is larger than the limit of {kind.limit} bytes")


def check_file(path: Path, kind: FileKind, source: str | None = None) -> None:
    """Refuse, from ``stat`` alone, what :func:`read_bytes` refuses before reading: not a
    regular file, a link where the kind refuses links, too large.  For files another
    reader opens (Python imports a derivation script itself)."""
    source = shown_path(path) if source is None else source
    try:
        info = os.stat(path) if kind.follow_links else os.lstat(path)
    except (OSError, ValueError) as error:
        raise InputFileError(source, f"cannot read the file ({_reason(error)})") from None
    _refuse_mode(info.st_mode, kind, source)
    _refuse_size(info.st_size, kind, source)


def read_bytes(path: Path, kind: FileKind, source: str | None = None) -> bytes:
    """The bytes of a regular file of at most ``kind.limit`` bytes; anything else an
    :class:`~symbolic_attn.errors.InputFileError` (raised before anything is read)."""
    source = shown_path(path) if source is None else source
    check_file(path, kind, source)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    if not kind.follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags)
    except (OSError, ValueError) as error:
        if getattr(error, "errno", None) == errno.ELOOP:  # O_NOFOLLOW met a link (swapped in)
            _refuse_mode(stat.S_IFLNK, kind, source)
        raise InputFileError(source, f"cannot read the file ({_reason(error)})") from None
    try:
        info = os.fstat(descriptor)
        _refuse_mode(info.st_mode, kind, source)  # swapped for a FIFO or device after the check
        _refuse_size(info.st_size, kind, source)
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            data = handle.read(kind.limit + 1)
    except OSError as error:
        raise InputFileError(source, f"cannot read the file ({_reason(error)})") from None
    finally:
        os.close(descriptor)
    if len(data) > kind.limit:  # it grew while we read
        raise InputFileError(source, f"{kind.name} larger than the limit of {kind.limit} bytes")
    return data


# The byte-order marks read, longest first (a UTF-32 LE mark starts like a UTF-16 LE one).
_MARKS = ((codecs.BOM_UTF32_LE, ""), (codecs.BOM_UTF32_BE, ""), (codecs.BOM_UTF8, "utf-8"),
          (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_NAMES = {"utf-8": "UTF-8", "utf-16-le": "UTF-16 LE", "utf-16-be": "UTF-16 BE"}


def decode_text(data: bytes, source: str, what: str = "text") -> str:
    """Text from UTF-8 (a byte-order mark dropped) or UTF-16 with its byte-order mark,
    every line ending made LF; a NUL byte, UTF-32 or any other encoding an InputFileError
    naming the byte offset.  ``what`` names the kind of text in messages."""
    encoding, start = "utf-8", 0
    for mark, name in _MARKS:
        if data.startswith(mark):
            if not name:
                raise InputFileError(source, "UTF-32 text (byte-order mark at offset 0) is not read; "
                                     "save it as UTF-8", offset=0)
            encoding, start = name, len(mark)
            break
    if encoding == "utf-8" and b"\x00" in data:
        offset = data.index(b"\x00")
        raise InputFileError(source, f"binary data (a NUL byte at offset {offset}), not a {what} file", offset=offset)
    try:
        text = data[start:].decode(encoding)
    except UnicodeDecodeError as error:
        offset = start + error.start
        if error.reason in ("unexpected end of data", "truncated data"):
            problem = f"a character cut short at offset {offset}"
        else:
            problem = f"invalid byte 0x{data[offset]:02x} at offset {offset}"
        raise InputFileError(source, f"not {_NAMES[encoding]} text ({problem}); save it as UTF-8",
                             offset=offset) from None
    if "\x00" in text:  # UTF-16: a NUL character
        offset = start + len(text[: text.index("\x00")].encode(encoding))
        raise InputFileError(source, f"binary data (a NUL character at offset {offset}), not a {what} file",
                             offset=offset)
    # CR, LF and CRLF all end a line.
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_text(path: Path, kind: FileKind, source: str | None = None) -> str:
    """:func:`read_bytes` then :func:`decode_text`: the file's text, line endings LF."""
    source = shown_path(path) if source is None else source
    return decode_text(read_bytes(path, kind, source), source)


_STRINGS_AND_COMMENTS = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""'  # multi-line basic string
    r"|'''(?:[^']|'(?!''))*'''"  # multi-line literal string
    r'|"(?:[^"\\\n]|\\.)*"'  # basic string
    r"|'[^'\n]*'"  # literal string
    r"|#[^\n]*",  # comment
    re.DOTALL,
)
# Tried only where a key can start (the look-behind) and without backtracking into a part
# (possessive ++): a 500,000-digit number is scanned once, not once per digit.
_DOTTED = re.compile(r"(?<![A-Za-z0-9_\-])(?:[A-Za-z0-9_\-S]++[ \t]*+\.[ \t]*+){%d}" % TomlLimits.key_parts)
_LONG_NUMBER = re.compile(r"[0-9_]{%d,}" % (DEFAULT_LIMITS.max_digits + 1))
_HEADER = re.compile(r"^[ \t]*\[", re.MULTILINE)
_BRACKETS = re.compile(r"[\[\]{}]")


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


_KEY_LINE = re.compile(r"^[ \t]*([A-Za-z0-9_.\- \t]+?)[ \t]*=", re.MULTILINE)
_HEADER_NAME = re.compile(r"^[ \t]*\[\[?[ \t]*([A-Za-z0-9_.\-]+)[ \t]*\]", re.MULTILINE)


def _key_at(residue: str, offset: int) -> str:
    """``"claims.value: "``: the table and key a bare value at ``offset`` belongs to, when the
    pre-scan can tell (the message then names it, as tomllib's readers do)."""
    line_start = residue.rfind("\n", 0, offset) + 1
    key = _KEY_LINE.match(residue, line_start)
    if key is None or key.end() > offset:
        return ""
    headers = list(_HEADER_NAME.finditer(residue, 0, line_start))
    table = headers[-1].group(1) + "." if headers else ""
    return f"{table}{key.group(1).strip()}: "


def prescan_toml(text: str, source: str) -> None:
    """Refuse TOML text whose shape could make ``tomllib`` slow, before parsing it."""
    if text.count("\n") > TomlLimits.lines:
        raise InputFileError(source, f"more than {TomlLimits.lines} lines")
    # Strings become one placeholder letter, comments vanish: what is left is structure.
    # Line breaks inside strings are kept, so that line numbers stay those of the file.
    residue = _STRINGS_AND_COMMENTS.sub(
        lambda m: "" if m.group().startswith("#") else "S" + "\n" * m.group().count("\n"), text)
    long_number = _LONG_NUMBER.search(residue)
    if long_number:  # a bare TOML number: tomllib (and int()) would spend seconds on it
        raise InputFileError(source, f"{_key_at(residue, long_number.start())}a number of {len(long_number.group())} "
                             f"digits exceeds the limit of {DEFAULT_LIMITS.max_digits}",
                             line=_line(residue, long_number.start()))
    match = _DOTTED.search(residue)
    if match:
        raise InputFileError(source, f"a key of more than {TomlLimits.key_parts} dotted parts",
                             line=_line(residue, match.start()))
    headers = len(_HEADER.findall(residue))
    if headers > TomlLimits.headers:
        raise InputFileError(source, f"{headers} table headers exceed the limit of {TomlLimits.headers}")
    depth = 0
    for bracket in _BRACKETS.finditer(residue):
        if bracket.group() in "[{":
            depth += 1
            if depth > TomlLimits.depth:
                raise InputFileError(source, f"arrays or tables nested more than {TomlLimits.depth} deep",
                                     line=_line(residue, bracket.start()))
        else:
            depth = max(depth - 1, 0)


def parse_toml(text: str, source: str, parse_float: Callable[[str], Any] = float) -> dict[str, Any]:
    """``tomllib.loads`` after :func:`prescan_toml`; every failure an InputFileError."""
    prescan_toml(text, source)
    try:
        return tomllib.loads(text, parse_float=parse_float)
    except tomllib.TOMLDecodeError as error:
        raise InputFileError(source, f"not valid TOML: {safe_text(str(error)[:240], 120)}") from None
    except (ValueError, RecursionError, MemoryError) as error:  # huge integers, deep nesting
        raise InputFileError(source, f"not a usable TOML file ({type(error).__name__}: "
                             f"{safe_text(str(error)[:160], 80)})") from None


def read_toml(path: Path, kind: FileKind, parse_float: Callable[[str], Any] = float,
              source: str | None = None) -> dict[str, Any]:
    """A TOML file read once: :func:`read_text` then :func:`parse_toml`."""
    source = shown_path(path) if source is None else source
    return parse_toml(read_text(path, kind, source), source, parse_float)
