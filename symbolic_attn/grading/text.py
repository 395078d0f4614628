r"""Showing text that came from input: control characters escaped, length cut.

Labels, titles, file names, claimed values and unknown keys all come from files a student
wrote.  Printed as they are, a label ``"x\nfake.toml: 99 passed"`` would forge a second
report line and an ESC would reach the terminal.  :func:`clean` makes such text harmless
for one line of a report or an error message: every control, format or line/paragraph
separator character is shown as a visible escape, and the text is cut to ``width``.

>>> clean("x\nfake.toml: 99 passed, 0 failed")
'x\\nfake.toml: 99 passed, 0 failed'
>>> clean("\x1b[31mred\x07")
'\\x1b[31mred\\x07'
>>> clean("a" * 100, 10)
'aaaaaaa...'
>>> clean("e\u2028\u202e")
'e\\u2028\\u202e'
"""

from symbolic_attn.errors import safe_text

__all__ = ["clean", "quoted"]

def clean(value, width: int = 80) -> str:
    """``value`` as one safe line: escapes for unsafe characters, at most ``width`` characters."""
    text = value if isinstance(value, str) else _plain(value)
    # Cut before escaping (the input may be megabytes); the escaping is the one formatter's.
    return safe_text(text[: width * 2], width)


def quoted(value, width: int = 60) -> str:
    """``clean`` in single quotes, for error messages: ``'weights'``."""
    return "'" + clean(value, width).replace("'", "\\'") + "'"


def _plain(value) -> str:
    try:
        return str(value)
    except ValueError:  # Python refuses str() of integers over 4300 digits
        return f"<{type(value).__name__} too large to show>"
