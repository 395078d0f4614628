"""The ``symbolic-attn`` command: argparse subcommands, the only place that exits.

Each subcommand lives in its own module of this package exposing
``add_parser(subparsers)``; the parser it adds carries ``handler=function(args) -> int``:
``attention`` (check a hand calculation, stage by stage), ``run`` (every stage of a
computation file), ``check`` (judge an exercise's claims), ``steps`` (a student's own
derivation, step by step), ``grade`` (a course's
submissions against the answer key), ``compare`` (a numeric implementation against the
exact result), ``derive`` (the verified derivations and the documents) and ``autograder``
(Gradescope and PrairieLearn bundles that grade one upload), ``web`` (the static page
that runs the toolkit in a browser, and a local server for it; in the browser the page's
Web Worker runs :func:`main` through ``browser``) and ``completion`` (a bash or
zsh completion script generated from these parsers).  What ``attention`` prints (stages
chosen, closed forms only where they say something, blocked entries marked) is laid out by
``terminal``.  Every command's ``--help`` ends with
an ``examples:`` block; ``--format`` has one vocabulary (``text|latex|markdown|json``, the
old ``tex``/``md`` still read) and positions in messages count from 1.  Generated files
are written all or nothing (``output``), a folder of them as one set (``folder``); the
options several commands share, such as ``--jobs N``, are read in ``options``.

Errors the library raises on purpose (:class:`SymbolicAttnError`) become one line on
stderr and exit status 2, never a traceback.  Every message goes through the one
formatter :func:`symbolic_attn.errors.one_line`, which escapes control characters of the
input (ESC, BEL, CR, LF...) and cuts the line short.

Every command runs under a wall-clock budget, ``--timeout SECONDS`` (default 60, 0 for
none), given before or after the command name: when it runs out, the command stops with
one line naming what was being computed, exit status 2.
"""

import argparse
import gc
import os
import re
import signal
import sys

from symbolic_attn.cli.options import add_jobs_option
from symbolic_attn.errors import SymbolicAttnError, TimeLimitError, current_activity, one_line

__all__ = ["main", "console_main", "build_parser", "add_jobs_option", "__version__", "DEFAULT_TIMEOUT"]

PROG = "symbolic-attn"
__version__ = "0.1.0"  # the version in pyproject.toml (a test keeps them equal)
#: Seconds of wall-clock time a command may take unless ``--timeout`` says otherwise.
DEFAULT_TIMEOUT = 60
_MAX_TIMEOUT = 86_400


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (what, and the offending value), exit 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see --help)\n")


def _timeout(text: str) -> float:
    """``--timeout`` seconds: a plain decimal number, 0 meaning no limit."""
    if not re.fullmatch(r"[0-9]{1,6}(\.[0-9]{1,3})?", text.strip()):
        raise argparse.ArgumentTypeError(f"expected seconds such as 60 or 2.5 (0 for no limit), got {text[:20]!r}")
    seconds = float(text)
    if seconds > _MAX_TIMEOUT:
        raise argparse.ArgumentTypeError(f"at most {_MAX_TIMEOUT} seconds, got {text.strip()}")
    return seconds


_TIMEOUT_HELP = f"stop after SECONDS of wall-clock time, exit 2 (default {DEFAULT_TIMEOUT}; 0 = no limit)"


def build_parser() -> argparse.ArgumentParser:
    """The full command-line parser, with every available subcommand registered."""
    parser = _OneLineParser(
        prog=PROG,
        description="Transformer attention in exact arithmetic.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
               '  symbolic-attn attention --q "[[1,0],[0,1]]" --k "[[1,0],[0,1]]" --v "[[1],[2]]"\n'
               "  symbolic-attn check examples/readme.toml\n"
               "  symbolic-attn run examples/define/layer_norm.toml\n"
               "  symbolic-attn grade course/exercise.toml course/submissions/\n"
               "  symbolic-attn derive --out out/\n"
               '  eval "$(symbolic-attn completion bash)"\n'
               "\nEvery command has --help with its own examples.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--timeout", type=_timeout, default=DEFAULT_TIMEOUT, metavar="SECONDS", help=_TIMEOUT_HELP)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_OneLineParser)
    subparsers.required = True
    from symbolic_attn.cli import attention, autograder, check, compare, completion, derive, grade, run, steps, web

    for module in (attention, derive, check, steps, run, grade, compare, autograder, web, completion):
        module.add_parser(subparsers)
    subparsers.choices["completion"].set_defaults(root=parser)  # the script is built from this parser
    # Every command also takes --timeout after its name; SUPPRESS keeps the value given
    # before the name when none is given after it.
    for command in subparsers.choices.values():
        command.add_argument("--timeout", type=_timeout, default=argparse.SUPPRESS, metavar="SECONDS", help=_TIMEOUT_HELP)
    return parser


class _Budget:
    """A wall-clock alarm (SIGALRM) that raises :class:`TimeLimitError` in the main thread.

    The exception is not an ``Exception``, so no broad ``except`` catches it; where it
    cannot unwind (inside a ``__del__``) it is dropped silently and rings again a quarter
    of a second later; after three more rings the process prints the one line and exits 2.
    """

    def __init__(self, seconds: float, command: str):
        self.seconds, self.command, self.fired = seconds, command, 0
        self.active = seconds > 0 and hasattr(signal, "setitimer")

    def message(self) -> str:
        what = current_activity() or f"running the {self.command} command"
        limit = f"{self.seconds:g}"
        return (
            f"time limit of {limit} s reached while {what} "
            f"(allow more with --timeout SECONDS, 0 for no limit)"
        )

    def _ring(self, signum, frame):
        self.fired += 1
        if self.fired > 4:
            _print_error(self.message())
            os._exit(2)
        raise TimeLimitError(self.message())

    def _unraisable(self, unraisable):
        # Raised inside a __del__ or a callback, the exception cannot unwind: Python would
        # print "Exception ignored in ..." with a traceback.  Stay silent; the alarm rings
        # again shortly and unwinds from ordinary code.
        if not isinstance(unraisable.exc_value, TimeLimitError):
            self.previous_hook(unraisable)

    def __enter__(self):
        if self.active:
            self.previous = signal.signal(signal.SIGALRM, self._ring)
            self.previous_hook, sys.unraisablehook = sys.unraisablehook, self._unraisable
            signal.setitimer(signal.ITIMER_REAL, self.seconds, 0.25)
        return self

    def __exit__(self, *exc_info):
        if self.active:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
            sys.unraisablehook = self.previous_hook
        return False


def _print_error(text) -> None:
    try:
        print(f"{PROG}: error: {one_line(text)}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def console_main() -> int:
    """The console command: :func:`main` on ``sys.argv``, for a process that exits next.

    Whatever is still alive when the command is done is frozen out of the garbage
    collector, so that the interpreter's shutdown does not search it for cycles again (a
    tenth of a second after ``derive``).  Called in-process, use :func:`main`.
    """
    status = main()
    gc.freeze()
    return status


def main(argv=None) -> int:
    """Run the command; returns the exit status (0 ok, 1 a check failed, 2 bad input)."""
    for stream in (sys.stdout, sys.stderr):
        # A terminal or pipe that cannot encode a character gets an escape, not a traceback.
        if hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with _Budget(args.timeout, args.command):
            return args.handler(args)
    except (SymbolicAttnError, TimeLimitError) as error:
        _print_error(error)
        return 2
    except RecursionError:
        _print_error("input nested too deeply")
        return 2
    except (OverflowError, MemoryError) as error:
        # A last line of defence: input that passed every bound yet is too big to compute.
        _print_error(f"input too large to process ({type(error).__name__})")
        return 2
    except BrokenPipeError:
        # The reader (e.g. `| head`) stopped early: not an error of ours.
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        _print_error("interrupted")
        return 130
