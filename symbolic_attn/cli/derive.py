"""``symbolic-attn derive`` and ``symbolic-attn list``: the verified-derivations commands.

``derive [PATH ...] [--out DIR]`` verifies every derivation script in the folders (the
built-in ``derivations/`` by default) and only then writes one ``.tex`` per result plus
``index.tex``.  Exit status: 0 written; 1 a step failed verification (one line naming the
file, step, both sides and the residual; nothing written); 2 bad input (raised as a
:class:`~symbolic_attn.errors.SymbolicAttnError`, printed by :mod:`symbolic_attn.cli`).

``--format md`` writes the web notes ``notes.md`` (Markdown with ``$$`` math) instead of
the LaTeX files; ``--pdf`` also compiles ``notes.tex`` with pdflatex (in a temporary
folder) into ``DIR/notes.pdf``, or exits 2 with one line when pdflatex is missing.

``list [PATH]`` shows each script's file, NAME, title and the scope of each part,
without verifying anything.
"""

import sys
from typing import Callable, Iterable, Sequence

from symbolic_attn.cli.output import write_documents
from symbolic_attn.notes.build import BUILDERS, render_documents
from symbolic_attn.proofs.scripts import load_scripts, verify_all
from symbolic_attn.errors import ProofError, UndecidedError
from symbolic_attn.render.latex import plain_text
from symbolic_attn.notes.markdown import markdown_document
from symbolic_attn.notes.document import compile_pdf

__all__ = ["add_parser", "derive", "run_derive", "run_list"]

PROG = "symbolic-attn"

#: Which builders each ``--format`` runs (see :data:`symbolic_attn.proofs.scripts.BUILDERS`).
FORMATS = {"tex": BUILDERS, "md": (markdown_document,)}


def derive(paths: Iterable = (), out_dir="out", builders: Sequence[Callable] = BUILDERS) -> list:
    """Load, verify, render and (only then) write; return the written paths."""
    results = verify_all(load_scripts(paths))
    return write_documents(render_documents(results, builders), out_dir)


def add_parser(subparsers) -> None:
    """Register ``derive`` and ``list`` on an argparse subparsers object."""
    derive = subparsers.add_parser(
        "derive",
        help="verify the derivation scripts, then write their LaTeX",
        description="Verify every derivation script, then write one .tex per result and index.tex.",
    )
    derive.add_argument("paths", nargs="*", metavar="PATH",
                        help="folders (or .py files) of derivation scripts; default: the built-in derivations/")
    derive.add_argument("--out", default="out", metavar="DIR", help="output folder (default: out)")
    derive.add_argument("--format", choices=sorted(FORMATS), default="tex",
                        help="tex: one .tex per result, index.tex and notes.tex (default); md: notes.md")
    derive.add_argument("--pdf", action="store_true", help="also compile notes.tex to DIR/notes.pdf with pdflatex")
    derive.set_defaults(handler=run_derive)

    listing = subparsers.add_parser(
        "list",
        help="show the derivations a folder holds",
        description="Show each derivation script's NAME, title and the scope of its parts.",
    )
    listing.add_argument("path", nargs="?", metavar="PATH",
                         help="folder of derivation scripts; default: the built-in derivations/")
    listing.set_defaults(handler=run_list)


def run_derive(args) -> int:
    """Handler of ``derive``: 0 written, 1 verification failed (one line on stderr)."""
    if args.pdf and args.format != "tex":
        print(f"{PROG}: error: --pdf compiles notes.tex, so it needs --format tex", file=sys.stderr)
        return 2
    try:
        written = derive(args.paths, args.out, FORMATS[args.format])
    except (ProofError, UndecidedError) as error:
        print(f"{PROG}: verification failed: {_one_line(str(error))}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    if args.pdf:
        print(compile_pdf(args.out))  # PdfError (pdflatex missing or failing): one line, exit 2
    return 0


def run_list(args) -> int:
    """Handler of ``list``: one block per script, nothing verified or written."""
    for script in load_scripts([args.path] if args.path else []):
        result = script.result()
        print(f"{script.name}  {script.path}  {plain_text(result.title)}")
        for part in result.parts:
            print(f"    {plain_text(part.title)}: {part.scope}")
    return 0


def _one_line(text: str) -> str:
    return " ".join(text.split())
