"""``symbolic-attn steps FILE [--symbols DECLS] [--format text|json]``: a student's own
derivation checked line by line before it is handed in.

FILE is a ``.md``, ``.tex`` or ``.txt`` file; every chain in it (an ``align*``, a
``$$ ... $$`` block, lines continued by ``=``) is read exactly as written and every step --
each adjacent pair of sides -- is decided by the sound checker under the declarations:
``proved``, ``false`` (with a counterexample in the student's letters and, when a known
wrong rule makes the step, its sentence), ``undecided`` (with the reason) or
``unreadable`` (with the column).  The declarations come from ``--symbols`` or from the
file's own ``% symbols: ...`` / ``<!-- symbols: ... -->`` line.

Exit status: 0 when every step of every chain is proved, 1 otherwise, 2 for bad input
(one line: what, where, the offending value).
"""

import argparse
import json
import shutil
import sys

from symbolic_attn.cli.options import add_format_option, examples_epilog
from symbolic_attn.errors import ParseError, doing, shown

__all__ = ["add_parser", "run", "KINDS"]

#: File suffix -> the reader's kind of document.
KINDS = {".md": "md", ".markdown": "md", ".tex": "tex", ".txt": "txt"}


def add_parser(subparsers):
    """Register the ``steps`` subcommand; its handler returns the exit status."""
    parser = subparsers.add_parser(
        "steps",
        help="check a derivation (Markdown, LaTeX or text) step by step",
        description="Read every chain of a derivation exactly as written and decide every step with the sound "
                    "checker: proved, false (with a counterexample), undecided (with the reason) or unreadable.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=examples_epilog(
            "symbolic-attn steps examples/steps/shift_invariance.md",
            "symbolic-attn steps proof.txt --symbols \"n: positive integer; i, j: integer 1..n; "
            "x: real vector n; c: real\"",
            "symbolic-attn steps proof.tex --format json",
            notes="Exit status: 0 every step proved, 1 a step is false, undecided or unreadable, 2 bad input.",
        ),
    )
    parser.add_argument("file", metavar="FILE", help="the derivation: a .md, .tex or .txt file")
    parser.add_argument("--symbols", metavar="DECLS", default=None,
                        help="what the letters are, e.g. \"n: positive integer; i, j: integer 1..n; x: real vector n; "
                             "c: real\" (default: the file's own '%% symbols: ...' line)")
    add_format_option(parser, ("text", "json"))
    parser.set_defaults(handler=run)
    return parser


def run(args) -> int:
    """Read, check, print; 0 when every step is proved, 1 otherwise."""
    from pathlib import PurePath

    from symbolic_attn.exact.source import DERIVATION, read_text
    from symbolic_attn.steps.report import check_text

    suffix = PurePath(str(args.file)).suffix.lower()
    if suffix not in KINDS:
        raise ParseError(f"{shown(str(args.file), 200)}: expected a .md, .tex or .txt file, got the suffix "
                         f"{shown(suffix or '(none)')!r}")
    with doing(f"reading {shown(args.file, 100)}"):
        text = read_text(args.file, DERIVATION, shown(str(args.file), 200))
    with doing(f"checking {shown(args.file, 100)}"):
        report = check_text(text, KINDS[suffix], shown(str(args.file), 200), symbols=args.symbols)
    if args.format == "json":
        sys.stdout.write(json.dumps(report.as_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(report.text(shutil.get_terminal_size((80, 24)).columns) + "\n")
    return report.exit_code
