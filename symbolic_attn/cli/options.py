r"""Options shared by several subcommands, read as strictly as the rest of the command line.

``--jobs N`` (``derive``, ``list --verify``, ``grade``): how many processes work side by
side, a whole number from 1 to :data:`symbolic_attn.proofs.parallel.MAX_JOBS`; by default
every core.  A bad value is one line of usage error, exit 2.

``--format`` has one vocabulary on every command that prints, :data:`FORMATS`
(``text``, ``latex``, ``markdown``, ``json``; each command offers those it can write), and
the old spellings ``tex`` and ``md`` still work (:data:`FORMAT_ALIASES`).  ``--digits N``
(decimal places shown, 0 to :data:`MAX_DIGITS`) is read by :func:`parse_digits`.

>>> import argparse
>>> parser = argparse.ArgumentParser(prog="demo")
>>> add_jobs_option(parser, "worker processes")
>>> parser.parse_args(["--jobs", "3"]).jobs
3
>>> add_format_option(parser, ("text", "markdown", "json"))
>>> parser.parse_args(["--format", "md"]).format
'markdown'
>>> parse_digits("4")
4
"""

import argparse

from symbolic_attn.errors import ParseError, safe_text

__all__ = ["add_jobs_option", "add_format_option", "add_digits_option", "parse_digits", "FORMATS", "FORMAT_ALIASES",
           "MAX_DIGITS", "examples_epilog"]

#: Every output format a command may offer, in this order.
FORMATS = ("text", "latex", "markdown", "json")
#: Old spellings, kept working.
FORMAT_ALIASES = {"tex": "latex", "md": "markdown"}
#: The most decimal places ``--digits`` gives.
MAX_DIGITS = 100


def _format(text: str) -> str:
    text = text.strip()
    return FORMAT_ALIASES.get(text, text)


def add_format_option(parser, choices, default: str = "text", what: str = "output format") -> None:
    """``--format`` with ``choices`` (names of :data:`FORMATS`), the aliases ``tex``/``md``
    read as ``latex``/``markdown``."""
    choices = tuple(choices)
    aliases = [f"{old} = {new}" for old, new in FORMAT_ALIASES.items() if new in choices]
    extra = f"; {', '.join(aliases)}" if aliases else ""
    parser.add_argument("--format", type=_format, choices=choices, default=default, metavar="|".join(choices),
                        help=f"{what} (default: {default}{extra})")


def parse_digits(text: str, option: str = "--digits") -> int:
    """``--digits N``: a whole number (ASCII digits) from 0 to :data:`MAX_DIGITS`; else a
    :class:`~symbolic_attn.errors.ParseError` (one line, exit 2)."""
    stripped = text.strip()
    if not (stripped.isascii() and stripped.isdigit() and len(stripped) <= 3 and int(stripped) <= MAX_DIGITS):
        raise ParseError(f"{option} must be a whole number between 0 and {MAX_DIGITS}, got {safe_text(repr(text), 30)}")
    return int(stripped)


def add_digits_option(parser, default, what: str = "decimal places shown") -> None:
    """``--digits N`` as a string, read by :func:`parse_digits` in the handler (``default``
    None: the command's own choice)."""
    told = "" if default is None else f" (default {default})"
    parser.add_argument("--digits", default=None if default is None else str(default), metavar="N",
                        help=f"{what}, 0 to {MAX_DIGITS}{told}")


def examples_epilog(*lines: str, notes: str = "") -> str:
    """An ``examples:`` block for a command's ``--help`` (with RawDescriptionHelpFormatter):
    one command per line, ``# comment`` lines kept as they are; ``notes`` first."""
    block = "\n".join(f"  {line}" for line in lines)
    return (notes.strip() + "\n\n" if notes else "") + "examples:\n" + block


def add_jobs_option(parser, what: str) -> None:
    """``--jobs N`` on a subcommand: ``what`` N processes do (default: every core)."""
    from symbolic_attn.proofs.parallel import available_cores

    parser.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                        help=f"{what} (default: the number of cores, {available_cores()})")


def _jobs(text: str) -> int:
    """``--jobs N``: a whole number (ASCII digits) from 1 to MAX_JOBS."""
    from symbolic_attn.proofs.parallel import MAX_JOBS

    text = text.strip()
    if not (text.isascii() and text.isdigit() and 1 <= int(text) <= MAX_JOBS):
        raise argparse.ArgumentTypeError(f"--jobs must be from 1 to {MAX_JOBS} (a whole number), got {text[:20]!r}")
    return int(text)
