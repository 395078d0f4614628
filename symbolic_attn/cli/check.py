"""``symbolic-attn check EXERCISE.toml [--format text|json]``: judge a solution's claims.

Exit status: 0 when every claim passes, 1 when any fails.  An unreadable or invalid file
raises :class:`~symbolic_attn.errors.ExerciseError`, which :mod:`symbolic_attn.cli` prints
as one line (file, key, problem) with exit status 2.
"""

import sys

from symbolic_attn.grading.exercise import load_exercise
from symbolic_attn.grading.report import check_exercise, render_json, render_text

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
    report = check_exercise(load_exercise(args.exercise))
    sys.stdout.write(render_json(report) if args.format == "json" else render_text(report))
    return 0 if report.failed == 0 else 1
