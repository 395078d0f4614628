"""How the checker shows a value in a message: printed plainly, on one line, cut short.

A message names the offending expression, which may be enormous (a residual of thousands of
terms, an integer Python refuses to print) or a matrix printed over several lines: every
message of the checker goes through these two functions.

>>> import sympy
>>> plain_text(sympy.Symbol("x") + 1)
'x + 1'
>>> short_line("one\\n  two   three four", 14)
'one two th...'
"""

from typing import Any

import sympy

__all__ = ["plain_text", "short_line"]


def plain_text(value: Any, limit: int = 10**5) -> str:
    """``sstr(value)`` for messages, or a description when printing it is refused (Python will
    not print an integer of more than 4300 digits) or recurses too deeply; cut at ``limit``."""
    try:
        text: str = sympy.sstr(value) if isinstance(value, sympy.Basic) else str(value)
    except (ValueError, RecursionError):
        return "<an expression too large to print>"
    return text if len(text) <= limit else text[:limit] + "..."


def short_line(text: str, limit: int = 300) -> str:
    """``text`` on one line (runs of whitespace become one space), at most ``limit`` characters."""
    text = " ".join(text.split())  # one line, whatever the printer did with matrices
    return text if len(text) <= limit else text[: limit - 3] + "..."
