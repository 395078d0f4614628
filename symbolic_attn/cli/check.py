"""``symbolic-attn check EXERCISE.toml [--format text|json] [--timeout SECONDS]``.

Judges a solution's claims.  Exit status: 0 when every claim passes, 1 when any fails or
is undecided (a comparison that could not be settled within its budget).  An unreadable or
invalid file -- a directory, a FIFO, a device, a file too large, bad TOML -- raises
:class:`~symbolic_attn.errors.ExerciseError`, which :mod:`symbolic_attn.cli` prints as one
line (file, key, problem) with exit status 2.

``--timeout`` is a wall-clock backstop for the whole command (default 60 s): when it runs
out, the command stops with one line naming what it was computing, exit status 2.  The
work of each judgement is bounded separately (see :mod:`symbolic_attn.grading.claims`).
"""

import gc
import signal
import sys
from contextlib import contextmanager

from symbolic_attn.errors import ExerciseError
from symbolic_attn.grading.exercise import load_exercise
from symbolic_attn.grading.report import check_exercise, render_json, render_text
from symbolic_attn.grading.text import clean

__all__ = ["add_parser", "run", "DEFAULT_TIMEOUT"]

DEFAULT_TIMEOUT = 60.0


def add_parser(subparsers):
    """Register the ``check`` subcommand; its handler returns the exit status."""
    parser = subparsers.add_parser(
        "check",
        help="judge the claimed numbers of an exercise file (TOML)",
        description="Judge every claim of an exercise file exactly; diagnose the wrong ones.",
    )
    parser.add_argument("exercise", metavar="EXERCISE.toml", help="the exercise file")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument("--timeout", type=_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"stop after this many seconds of wall-clock time (default {DEFAULT_TIMEOUT:g})")
    parser.set_defaults(handler=run)
    return parser


def _seconds(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {clean(text, 40)!r}") from None
    if not 0 < value <= 86_400:
        raise argparse.ArgumentTypeError(f"expected seconds in (0, 86400], got {clean(text, 40)!r}")
    return value


class _OutOfTime(BaseException):
    """Raised by the alarm; a BaseException so that no ``except Exception`` swallows it."""


@contextmanager
def _budget(seconds: float, doing: list):
    import threading

    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield  # no interval timers (Windows), or not the main thread: no backstop
        return

    def expire(signum, frame):
        raise _OutOfTime()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _OutOfTime:
        raise ExerciseError(f"check: the time budget of {seconds:g} s ran out while {doing[-1]} "
                            "(raise it with --timeout SECONDS)") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run(args) -> int:
    """Load, check, print; 0 if all claims pass, 1 otherwise."""
    doing = [f"reading {clean(args.exercise, 100)}"]
    # A short-lived command whose allocations are bounded by the input limits: the cyclic
    # garbage collector, scanning SymPy's many small objects again and again, took half
    # the time of a 64x64 check (measured: 4.0 s with it, 2.0 s without, same peak memory).
    collecting = gc.isenabled()
    gc.disable()
    try:
        with _budget(args.timeout, doing):
            exercise = load_exercise(args.exercise)
            report = check_exercise(exercise, progress=doing.append)
            doing.append("printing the report")
            text = render_json(report) if args.format == "json" else render_text(report)
    finally:
        if collecting:
            # Everything alive now is kept as it is (freeze): re-enabling alone would make
            # the next allocation pay for one full collection of all of it (0.4 s at 64x64).
            gc.freeze()
            gc.enable()
    sys.stdout.write(text)
    return 0 if report.failed == 0 and report.undecided == 0 else 1
