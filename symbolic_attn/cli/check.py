"""``symbolic-attn check EXERCISE.toml [--format text|json] [--timeout SECONDS]``.

Judges a solution's claims.  Exit status: 0 when every claim passes, 1 when any fails or
is undecided (a comparison that could not be settled within its budget).  An unreadable or
invalid file -- a directory, a FIFO, a device, a file too large, bad TOML -- raises
:class:`~symbolic_attn.errors.ExerciseError`, which :mod:`symbolic_attn.cli` prints as one
line (file, key, problem) with exit status 2.

``--timeout`` (every command's wall-clock backstop, :mod:`symbolic_attn.cli`) stops the
command with one line naming what it was computing, exit status 2.  The
work of each judgement is bounded separately (see :mod:`symbolic_attn.grading.claims`).
"""

import gc
import sys

from symbolic_attn.errors import doing, now_doing, shown

__all__ = ["add_parser", "run"]


def add_parser(subparsers):
    """Register the ``check`` subcommand; its handler returns the exit status."""
    parser = subparsers.add_parser(
        "check",
        help="judge the claimed numbers of an exercise file (TOML)",
        description="Judge every claim of an exercise file exactly; diagnose the wrong ones.",
    )
    parser.add_argument("exercise", metavar="EXERCISE.toml", help="the exercise file")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.set_defaults(handler=run)
    return parser


def run(args) -> int:
    """Load, check, print; 0 if all claims pass, 1 otherwise."""
    # A short-lived command whose allocations are bounded by the input limits: the cyclic
    # garbage collector, scanning SymPy's many small objects again and again, took half
    # the time of a 64x64 check (measured: 4.0 s with it, 2.0 s without, same peak memory).
    collecting = gc.isenabled()
    gc.disable()
    try:
        with doing(f"reading {shown(args.exercise, 100)}"):
            # Imported here: every command builds the whole parser, and only this one needs
            # the grader (loading it is part of reading the exercise, for a time limit).
            from symbolic_attn.grading.exercise import load_exercise
            from symbolic_attn.grading.report import check_exercise, render_json, render_text

            exercise = load_exercise(args.exercise)
            report = check_exercise(exercise, progress=now_doing)
            now_doing("printing the report")
            text = render_json(report) if args.format == "json" else render_text(report)
    finally:
        if collecting:
            # Everything alive now is kept as it is (freeze): re-enabling alone would make
            # the next allocation pay for one full collection of all of it (0.4 s at 64x64).
            gc.freeze()
            gc.enable()
    sys.stdout.write(text)
    return 0 if report.failed == 0 and report.undecided == 0 else 1
