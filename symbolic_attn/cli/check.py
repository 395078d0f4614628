"""``symbolic-attn check EXERCISE.toml [--format text|markdown|json] [--digits N] [--timeout SECONDS]``.

Judges a solution's claims.  The text table fits the terminal (``COLUMNS``, else the
terminal's width, else 80 columns): label, verdict, claimed, exact, decimal, rule, with a
cell cut short shown in full below its row, then which entries are wrong and the diagnosis
as the mistake catalogue's sentences.  ``--digits N`` sets the decimal places of the
``decimal`` column (default: two more than the claim was written with).  Exit status: 0 when every claim passes, 1 when any fails or
is undecided (a comparison that could not be settled within its budget).  An unreadable or
invalid file -- a directory, a FIFO, a device, a file too large, bad TOML -- raises
:class:`~symbolic_attn.errors.ExerciseError`, which :mod:`symbolic_attn.cli` prints as one
line (file, key, problem) with exit status 2.

``--timeout`` (every command's wall-clock backstop, :mod:`symbolic_attn.cli`) stops the
command with one line naming what it was computing, exit status 2.  The
work of each judgement is bounded separately (see :mod:`symbolic_attn.grading.claims`).
"""

import argparse
import gc
import sys

from symbolic_attn.cli.options import add_digits_option, add_format_option, examples_epilog, parse_digits
from symbolic_attn.errors import doing, now_doing, shown
from symbolic_attn.render.columns import terminal_columns

__all__ = ["add_parser", "run"]


def add_parser(subparsers):
    """Register the ``check`` subcommand; its handler returns the exit status."""
    parser = subparsers.add_parser(
        "check",
        help="judge the claimed numbers of an exercise file (TOML)",
        description="Judge every claim of an exercise file exactly; diagnose the wrong ones.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=examples_epilog(
            "symbolic-attn check examples/readme.toml",
            "symbolic-attn check examples/readme.toml --digits 6      # more places in the decimal column",
            "symbolic-attn check examples/readme.toml --format json   # adds diagnosis_sentences",
            "COLUMNS=120 symbolic-attn check examples/readme.toml     # a wider table",
            notes="The text table fits the terminal width (COLUMNS, default 80). Exit status: 0 every claim "
                  "passes,\n1 a claim failed or is undecided, 2 an unreadable or invalid file.",
        ),
    )
    parser.add_argument("exercise", metavar="EXERCISE.toml", help="the exercise file")
    add_format_option(parser, ("text", "markdown", "json"))
    add_digits_option(parser, None, "decimal places of the decimal column (default: two more than the claim's)")
    parser.set_defaults(handler=run)
    return parser


def run(args) -> int:
    """Load, check, print; 0 if all claims pass, 1 otherwise."""
    digits = None if args.digits is None else parse_digits(args.digits)
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
            from symbolic_attn.grading.pipeline import Checker

            exercise = load_exercise(args.exercise)
            checker = Checker(exercise, now_doing)
            report = checker.check()
            report.exercise = exercise  # its numbers fill in the diagnosis sentences
            if digits is not None:
                now_doing(f"computing the decimals to {digits} places")
                for outcome in report.outcomes:
                    grid = checker.decimals(outcome.claim.quantity, digits)
                    outcome.decimals = [grid[i - 1][j - 1] or "-" for i, j in outcome.selection.positions]
            now_doing("printing the report")
            if args.format == "json":
                text = report.json()
            elif args.format == "markdown":
                text = report.markdown()
            else:
                text = report.text(terminal_columns())
    finally:
        if collecting:
            # Everything alive now is kept as it is (freeze): re-enabling alone would make
            # the next allocation pay for one full collection of all of it (0.4 s at 64x64).
            gc.freeze()
            gc.enable()
    sys.stdout.write(text)
    return 0 if report.failed == 0 and report.undecided == 0 else 1
