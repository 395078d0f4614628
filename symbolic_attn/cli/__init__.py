"""The ``symbolic-attn`` command: argparse subcommands, the only place that exits.

Each subcommand lives in its own module of this package (``attention``, ``check``,
``derive``) exposing
``add_parser(subparsers)``; the parser it adds carries ``handler=function(args) -> int``.
Errors the library raises on purpose (:class:`SymbolicAttnError`) become one line on
stderr and exit status 2, never a traceback.
"""

import argparse
import sys

from symbolic_attn.errors import SymbolicAttnError

__all__ = ["main", "build_parser"]

PROG = "symbolic-attn"


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (what, and the offending value), exit 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The full command-line parser, with every available subcommand registered."""
    parser = _OneLineParser(
        prog=PROG,
        description="Transformer attention in exact arithmetic.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_OneLineParser)
    subparsers.required = True
    from symbolic_attn.cli import attention, check, derive, run

    for module in (attention, derive, check, run):
        module.add_parser(subparsers)
    return parser


def main(argv=None) -> int:
    """Run the command; returns the exit status (0 ok, 1 a check failed, 2 bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except SymbolicAttnError as error:
        print(f"{PROG}: error: {_one_line(str(error))}", file=sys.stderr)
        return 2
    except RecursionError:
        print(f"{PROG}: error: input nested too deeply", file=sys.stderr)
        return 2
    except (OverflowError, MemoryError) as error:
        # A last line of defence: input that passed every bound yet is too big to compute.
        print(f"{PROG}: error: input too large to process ({type(error).__name__})", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader (e.g. `| head`) stopped early: not an error of ours.
        sys.stderr.close()
        return 0


def _one_line(text: str) -> str:
    return " ".join(text.split())
