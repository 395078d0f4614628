"""Typed exceptions: every error the library raises on purpose is one of these.

Each error is also a ``ValueError`` (or ``TypeError`` where the *kind* of value was
wrong), so callers that only know the built-in hierarchy still catch it.  Messages say
what went wrong, where, and the offending value, on one line, so that the command line
can print ``str(error)`` as it is.
"""

__all__ = [
    "shown",
    "quoted",
    "safe_text",
    "one_line",
    "doing",
    "current_activity",
    "now_doing",
    "describe_exception",
    "SymbolicAttnError",
    "SiteBuildError",
    "RefutedError",
    "ParseError",
    "InputLimitError",
    "FloatInputError",
    "ShapeError",
    "MaskError",
    "EmptyRowError",
    "UndecidedError",
    "ProofError",
    "ExerciseError",
    "InputFileError",
    "ScriptError",
    "OutputError",
    "DerivationFailure",
    "PdfError",
    "StageError",
    "DigitsError",
    "BackendError",
    "ImplementationError",
    "SubmissionError",
    "TimeLimitError",
    "DefinitionError",
    "StepReadError",
    "ZeroVarianceError",
    "InexactStepError",
    "SideConditionError",
    "AssumptionConflictError",
    "CrossExaminationError",
    "ScopeError",
    "NameClashError",
]


class SymbolicAttnError(Exception):
    """Base class of every error symbolic_attn raises deliberately."""


class ParseError(SymbolicAttnError, ValueError):
    """Text that is not a valid exact expression or matrix."""


class InputLimitError(ParseError):
    """Input that is well formed but too large to accept (length, digits, depth...)."""


class FloatInputError(SymbolicAttnError, TypeError):
    """A binary float where an exact value is required."""


class ShapeError(SymbolicAttnError, ValueError):
    """Operands whose shapes break the attention shape contract."""


class MaskError(SymbolicAttnError, ValueError):
    """A mask that is malformed, of the wrong shape, or of an unknown kind."""


class EmptyRowError(MaskError):
    """A query row in which the mask allows no key, under the default policy."""


class UndecidedError(SymbolicAttnError, ValueError):
    """A comparison that could be neither proved nor refuted (never treated as a pass)."""


class ProofError(SymbolicAttnError, ValueError):
    """A derivation step that failed verification."""


class ExerciseError(SymbolicAttnError, ValueError):
    """An exercise file that cannot be read or is invalid."""


class InputFileError(ExerciseError):
    """An input file that cannot be read as text: not a regular file, too large, not
    UTF-8/UTF-16 text, or TOML that is invalid or shaped to make parsing slow.

    Raised by the one file reader (:mod:`symbolic_attn.exact.source`) for every kind of
    file (exercises, answer keys, solutions, computation files, scripts).  ``source`` is the
    file as shown, ``reason`` the message without it, ``offset`` the byte offset and
    ``line`` the line (1-based) when known.  A subclass of :class:`ExerciseError`, which
    is what reading an exercise raised before.
    """

    def __init__(self, source: str, reason: str, *, offset: int | None = None, line: int | None = None):
        self.source, self.reason, self.offset, self.line = source, reason, offset, line
        where = f"line {line}: " if line is not None else ""
        super().__init__(f"{source}: {where}{reason}")

    def __reduce__(self):  # pickled between processes: the keywords survive
        return (_input_file_error, (self.source, self.reason, self.offset, self.line))


def _input_file_error(source, reason, offset, line):
    return InputFileError(source, reason, offset=offset, line=line)


class ScriptError(SymbolicAttnError, ValueError):
    """A folder or derivation script that cannot be used (missing, no NAME/build, import fails)."""


class OutputError(SymbolicAttnError, OSError):
    """The output folder or a file in it cannot be written; nothing was changed."""


class DerivationFailure(ProofError):
    """A step of a derivation script that did not verify; the message names the file."""

    def __init__(self, path: str, error: Exception):
        super().__init__(f"{path}: {error}")
        self.path = path


class StageError(SymbolicAttnError, ValueError):
    """An unknown or malformed stage path, or a row/column outside the stage."""


class PdfError(SymbolicAttnError, RuntimeError):
    """pdflatex is missing or failed on the generated notes."""


class DigitsError(SymbolicAttnError, ValueError):
    """A digit count (decimal places, significant digits, bits of precision) that is not a
    whole number in the allowed range."""


class BackendError(SymbolicAttnError, RuntimeError):
    """A numeric library the oracle needs (numpy) is missing, or a dtype it cannot use."""


class ImplementationError(SymbolicAttnError, ValueError):
    """An implementation under test that cannot be loaded or called (bad MODULE:FUNCTION)."""


class TimeLimitError(BaseException):
    """The command's wall-clock budget (``--timeout``) ran out; the message names the work.

    Raised only by the command line's alarm, never by the library.  Like
    ``KeyboardInterrupt`` it is deliberately *not* an ``Exception`` (nor a
    :class:`SymbolicAttnError`): no ``except`` in the library or in SymPy may turn it into
    a verdict, a wrapped message or a retry; it unwinds to the command, which prints it.
    """


#: Characters never written raw: controls (ESC, BEL, CR, LF, TAB, NUL...), format characters
#: (bidi overrides, zero-width), lone surrogates (undecodable bytes in argv or files),
#: private-use and unassigned code points, and the Unicode line and paragraph separators.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: Longest one-line message a command prints (the offending values inside are cut shorter).
MESSAGE_WIDTH = 400


def _escape(text: str) -> str:
    import unicodedata

    out = []
    for char in text:
        if char.isprintable() and unicodedata.category(char) not in _UNSAFE_CATEGORIES:
            out.append(char)
        elif char in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[char])
        elif ord(char) < 0x100:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return "".join(out)


def safe_text(text, width: int = 80) -> str:
    r"""Input-derived text made safe to print: control characters escaped, one line, cut short.

    Use it for every text that came from a user or a file before it reaches a terminal, a
    report line or an error message: labels, titles, file names, values, unknown keys.
    ESC, BEL, CR, LF, TAB, NUL (and bidi overrides, lone surrogates, line separators)
    become visible escapes such as ```` and ``
``, so that input can neither colour
    the terminal nor forge a second report line; text longer than ``width`` characters
    (after escaping) ends in ``...``.  It is idempotent, so text may pass through it twice.
    JSON output needs no escaping (``json.dumps`` escapes controls), but may use it to cut.

    >>> safe_text("x\nfake.toml: 99 passed")
    'x\\nfake.toml: 99 passed'
    >>> print(safe_text("\x1b[31mred\x07"))
    \x1b[31mred\x07
    >>> safe_text("a" * 100, width=10)
    'aaaaaaa...'
    """
    escaped = _escape(text if isinstance(text, str) else str(text))
    if width is not None and len(escaped) > width:
        return escaped[: max(width - 3, 0)] + "..."
    return escaped


def one_line(error_or_text, width: int = MESSAGE_WIDTH) -> str:
    r"""The one line every command prints for an error (or any message): the formatter.

    Runs of spaces collapse to one; every control character is escaped as by
    :func:`safe_text`; the line is cut to ``width`` characters.  An exception is shown by
    its message (its type name when the message is empty).

    >>> one_line(ValueError("bad\x1b[2J value\r\nsecond line"))
    'bad\\x1b[2J value\\r\\nsecond line'
    >>> one_line("  many   spaces ")
    'many spaces'
    """
    if isinstance(error_or_text, BaseException):
        text = str(error_or_text) or type(error_or_text).__name__
    else:
        text = str(error_or_text)
    import re

    return safe_text(re.sub(" {2,}", " ", text).strip(" "), width)


class InexactStepError(ProofError):
    """A step containing a float or a non-finite value (nan, zoo, oo): nothing exact to check."""


class RefutedError(ProofError):
    """A step certified false at a concrete point: ``point`` gives every letter its value
    (name -> exact value; entries of a sequence as ``x[2]``), ``value`` the certified
    non-zero difference there (six digits)."""

    def __init__(self, message: str, point: dict | None = None, value: str | None = None):
        super().__init__(message)
        self.point = dict(point or {})
        self.value = value


class SideConditionError(ProofError):
    """A step needs a condition (a denominator nonzero, a log argument positive, a matrix
    invertible, a sum range not reversed) that the stated assumptions do not prove."""


class AssumptionConflictError(ProofError):
    """A stated assumption contradicts a declaration (a flag on a symbol)."""


class CrossExaminationError(ProofError):
    """A step the checker accepted that is certified false at an admissible concrete point.

    Raised by :func:`symbolic_attn.proofs.crossexam.cross_examine`, which evaluates both
    sides independently of the checker: the message gives both values and the point.
    """


class ScopeError(ProofError):
    """A part whose scope claims more than its kind can check: a :class:`Check` (finitely
    many cases) that says "proved", a counterexample that does not say "counterexample",
    a chain of cited steps only that says "proved"."""


class NameClashError(ProofError):
    """Two different things of one result that would print alike: two symbols with one name
    but different flags (or shapes), two assumptions with one label."""


def quoted(value, width: int = 60) -> str:
    """:func:`shown` in single quotes, for error messages.

    >>> quoted("weights")
    "'weights'"
    """
    return "'" + shown(value, width).replace("'", "\\'") + "'"


def shown(value, width: int = 40) -> str:
    """An offending value for an error message, cut short and escaped: it may be enormous.

    Never fails: an integer too long for Python's int-to-text limit is described by its
    size instead of being written out.

    >>> shown(10**100)
    '1000000000000000000000000000000000000...'
    >>> shown(2**20000)
    '<an integer of 6021 digits>'
    """
    try:
        if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 10_000:
            return _huge_integer(value)
        import sympy  # only here: the exceptions themselves need nothing

        if isinstance(value, sympy.Basic):
            if isinstance(value, sympy.Integer) and int(value).bit_length() > 10_000:
                return _huge_integer(int(value))
            # order="none": the printer's default sorts the terms of a sum by their numeric
            # values, which evaluates them (exp(exp(exp(100))) never finishes).
            text = sympy.sstr(value, order="none")
        else:
            text = str(value)
    except (ValueError, TypeError, RecursionError, MemoryError, AttributeError):
        text = f"<a {type(value).__name__} too large to show>"
    # Cut before escaping (the input may be megabytes); an escape is at most 10 characters.
    return safe_text(text[: width * 10 + 10], width)


def _huge_integer(value: int) -> str:
    import math

    digits = int(abs(value).bit_length() * math.log10(2)) + 1
    if 10 ** (digits - 1) > abs(value):  # the estimate may be one too high
        digits -= 1
    return f"<an integer of {digits} digits>"


_ACTIVITY: list = []


def doing(what: str):
    """A context manager naming the work under way, for the message when time runs out.

    >>> with doing("computing the weights"):
    ...     current_activity()
    'computing the weights'
    >>> current_activity() is None
    True
    """
    import contextlib

    @contextlib.contextmanager
    def activity():
        _ACTIVITY.append(what)
        try:
            yield
        finally:
            _ACTIVITY.pop()

    return activity()


def describe_exception(error: BaseException, width: int = 200) -> str:
    r"""``Type: message`` of any exception, on one line, escaped and cut short.

    For exceptions the library did not raise on purpose (a user's script, a bug): the type
    says what, the message what it said.

    >>> describe_exception(ValueError("bad\nvalue"))
    'ValueError: bad\\nvalue'
    >>> describe_exception(ZeroDivisionError())
    'ZeroDivisionError'
    """
    try:
        text = one_line(error, width) if str(error) else ""
    except Exception:  # str() itself may fail (a huge int): the type still says what
        text = ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def now_doing(what: str) -> None:
    """Rename the innermost :func:`doing` activity (progress within one piece of work).

    >>> with doing("checking"):
    ...     now_doing("checking claim 3")
    ...     current_activity()
    'checking claim 3'
    """
    if _ACTIVITY:
        _ACTIVITY[-1] = what


def current_activity():
    """The innermost :class:`doing` description under way, or None."""
    return _ACTIVITY[-1] if _ACTIVITY else None


class SubmissionError(SymbolicAttnError, ValueError):
    """A submission path given to the grader that does not exist or holds no solution file."""


class DefinitionError(ParseError):
    """A computation file's definition that cannot be read or evaluated; the message names it.

    A :class:`ParseError`: a definition is text of the one input language, so anything
    that catches the language's errors catches a definition's too."""


class ZeroVarianceError(SymbolicAttnError, ValueError):
    """A LayerNorm row with variance exactly 0 and eps = 0: there is no unit-variance row."""


class StepReadError(ParseError):
    r"""A line of a student's derivation (LaTeX or Markdown maths) that the steps reader refuses.

    ``line`` and ``column`` (1-based) point into the original file, ``reason`` is the message
    without them; the message is one line: ``line 3, column 12: unknown command \\foo: ...``.

    >>> str(StepReadError(3, 12, "unknown command \\foo"))
    'line 3, column 12: unknown command \\foo'
    """

    def __init__(self, line: int, column: int, reason: str):
        self.line, self.column, self.reason = line, column, reason
        super().__init__(f"line {line}, column {column}: {one_line(reason)}")

    def __reduce__(self):  # pickled between processes: the keywords survive
        return (StepReadError, (self.line, self.column, self.reason))


class SiteBuildError(SymbolicAttnError, RuntimeError):
    """A file the web site is built from that could not be had (a registry client failed,
    an offline build found it missing from the cache) or whose sha256 is not the pinned one."""
