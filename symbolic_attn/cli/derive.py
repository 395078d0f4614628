"""``symbolic-attn derive`` and ``symbolic-attn list``: the verified-derivations commands.

``derive [PATH ...] [--out DIR] [--title TEXT]`` verifies every derivation script in the
folders (the built-in ``derivations/`` by default) and only then writes one ``.tex`` per
result, ``index.tex`` and ``notes.tex``.  Without PATH the notes are the built-in lecture
notes (results, worked examples, the kernel); a user's own folder gets a document of its
own results only, titled ``--title`` (plain text, escaped; default "Verified derivations").

``--format md`` writes ``notes.md`` (Markdown with ``$$`` math) instead of the LaTeX
files; ``--pdf`` also compiles ``notes.tex`` with pdflatex (in a temporary folder) into
``DIR/notes.pdf``.  Everything is written all or nothing (:mod:`symbolic_attn.cli.output`):
a failure of any kind leaves every old file as it was.

``list [PATH] [--verify]`` shows each script's NAME, file and title.  Without ``--verify``
it runs nothing and says "not verified"; with it, each script is built and verified, and
only then its parts' scopes are shown (and the proof rules used, when the result names
them), or "verification failed: <step>".

Exit status: 0 done; 1 a step failed verification (one line naming file, step, both sides
and the residual; nothing written); 2 bad input: a script that cannot be loaded or whose
``build()`` raises, a target that is a directory, an unwritable folder, pdflatex missing or
failing.  Never a traceback.
"""

import sys
from pathlib import Path
from typing import Callable, Iterable, Sequence

from symbolic_attn.errors import describe_exception, one_line
from symbolic_attn.cli.output import write_documents
from symbolic_attn.errors import DerivationFailure, ProofError, ScriptError, SymbolicAttnError, UndecidedError
from symbolic_attn.notes.build import heading, render_documents, tex_builders
from symbolic_attn.notes.document import compile_pdf, find_pdflatex
from symbolic_attn.notes.markdown import markdown_document
from symbolic_attn.proofs.scripts import DEFAULT_FOLDER, load_scripts
from symbolic_attn.render.latex import plain_text

__all__ = ["add_parser", "derive", "verify_scripts", "run_derive", "run_list", "MAX_TITLE"]

PROG = "symbolic-attn"

#: The longest ``--title`` accepted (characters).
MAX_TITLE = 200

FORMATS = ("md", "tex")


def is_builtin(paths: Iterable) -> bool:
    """True when ``paths`` name only the built-in derivations (or nothing)."""
    paths = [Path(p) for p in paths]
    return all(p.resolve() == DEFAULT_FOLDER for p in paths)


def builders_for(fmt: str, paths: Iterable = (), title: str | None = None) -> tuple:
    """The builders of ``--format fmt``: the full notes for the built-in folder, the user's
    results only (under ``title``) for a user's folder."""
    examples = is_builtin(paths)
    if fmt == "md":
        return (lambda results: markdown_document(results, title=title, examples=examples),)
    return tex_builders(title=title, examples=examples)


def load(paths: Iterable) -> list:
    """:func:`load_scripts`, with a script that exits or raises oddly while imported as bad input."""
    try:
        return load_scripts(paths)
    except SymbolicAttnError:
        raise
    except (Exception, SystemExit) as error:
        raise ScriptError(f"importing a derivation script raised {describe_exception(error)}") from None


def verify_scripts(scripts: Sequence) -> list:
    """Build and verify every script's result, whatever a script's ``build()`` does.

    Raises DerivationFailure (a step failed, or build() raised a library error) or
    ScriptError (build() or verification raised anything else, e.g. a bug in the script).
    """
    results = []
    for script in scripts:
        results.append(_verified(script))
    return results


def _verified(script):
    try:
        result = script.result()
    except SymbolicAttnError:
        raise
    except (Exception, SystemExit) as error:  # a user's build() may raise anything
        raise ScriptError(f"{script.path}: build() raised {describe_exception(error)}") from None
    try:
        result.verify()
    except DerivationFailure:
        raise
    except (ProofError, UndecidedError) as error:
        raise DerivationFailure(script.path, error) from None
    except SymbolicAttnError as error:
        raise ScriptError(f"{script.path}: verifying failed: {error}") from None
    except (Exception, SystemExit) as error:
        raise ScriptError(f"{script.path}: verifying raised {describe_exception(error)}") from None
    return result


def derive(paths: Iterable = (), out_dir="out", builders: Sequence[Callable] | None = None, *,
           fmt: str = "tex", title: str | None = None, pdf: bool = False) -> list:
    """Load, verify, render, compile (``pdf``) and only then write; return the written paths."""
    paths = list(paths)
    if pdf:
        find_pdflatex()  # before any work: missing pdflatex is one line, nothing written
    results = verify_scripts(load(paths))
    documents = render_documents(results, builders if builders is not None else builders_for(fmt, paths, title))
    if pdf:
        documents["notes.pdf"] = compile_pdf(documents)
    return write_documents(documents, out_dir)


def add_parser(subparsers) -> None:
    """Register ``derive`` and ``list`` on an argparse subparsers object."""
    derive_parser = subparsers.add_parser(
        "derive",
        help="verify the derivation scripts, then write their LaTeX",
        description="Verify every derivation script, then write one .tex per result, index.tex and notes.tex. "
                    "A folder of your own gives notes of your results only.",
    )
    derive_parser.add_argument("paths", nargs="*", metavar="PATH",
                               help="folders (or .py files) of derivation scripts; default: the built-in derivations/")
    derive_parser.add_argument("--out", default="out", metavar="DIR", help="output folder (default: out)")
    derive_parser.add_argument("--format", choices=FORMATS, default="tex",
                               help="tex: one .tex per result, index.tex and notes.tex (default); md: notes.md")
    derive_parser.add_argument("--title", metavar="TEXT",
                               help="title of the notes (plain text); default for your own folder: "
                                    "'Verified derivations'")
    derive_parser.add_argument("--pdf", action="store_true",
                               help="also compile notes.tex to DIR/notes.pdf with pdflatex")
    derive_parser.set_defaults(handler=run_derive)

    listing = subparsers.add_parser(
        "list",
        help="show the derivations a folder holds",
        description="Show each derivation script's NAME, file and title; with --verify, verify each one and "
                    "show the scope of its parts (a scope is only shown once verified).",
    )
    listing.add_argument("path", nargs="?", metavar="PATH",
                         help="folder of derivation scripts; default: the built-in derivations/")
    listing.add_argument("--verify", action="store_true",
                         help="build and verify each script, then show its scopes (slower)")
    listing.set_defaults(handler=run_list)


def _check_title(title):
    if title is None:
        return None
    if not title.strip():
        raise ScriptError("--title: the title is empty")
    if len(title) > MAX_TITLE:
        raise ScriptError(f"--title: {len(title)} characters, at most {MAX_TITLE} allowed")
    bad = next((char for char in title if ord(char) < 32 or 0x7F <= ord(char) < 0xA0), None)
    if bad is not None:
        raise ScriptError(f"--title: control character {bad!r} not allowed")
    return title.strip()


def run_derive(args) -> int:
    """Handler of ``derive``: 0 written, 1 verification failed, 2 bad input (one line on stderr)."""
    if args.pdf and args.format != "tex":
        print(f"{PROG}: error: --pdf compiles notes.tex, so it needs --format tex", file=sys.stderr)
        return 2
    try:
        written = derive(args.paths, args.out, fmt=args.format, title=_check_title(args.title), pdf=args.pdf)
    except (ProofError, UndecidedError) as error:
        print(f"{PROG}: verification failed: {_one_line(str(error))}", file=sys.stderr)
        return 1
    for path in sorted(written, key=lambda p: (p.suffix == ".pdf", p.name)):  # the PDF last: it is built last
        print(_one_line(str(path)))
    return 0


def run_list(args) -> int:
    """Handler of ``list``: one block per script; scopes only once verified.

    Exit 1 when some script failed verification; 2 when some build() raised (still one
    block per script; every failure is one line of the listing).
    """
    status = 0
    for script in load([args.path] if args.path else []):
        if not args.verify:
            title = script.doc.strip().partition("\n")[0].strip() or script.name
            print(f"{script.name}  {_one_line(script.path)}  {_one_line(plain_text(heading(title)))}")
            print("    not verified (run `symbolic-attn list --verify` to verify it and show its scope)")
            continue
        try:
            result = _verified(script)
        except (ProofError, UndecidedError) as error:
            title = script.doc.strip().partition("\n")[0].strip() or script.name
            print(f"{script.name}  {_one_line(script.path)}  {_one_line(plain_text(heading(title)))}")
            print(f"    verification failed: {_one_line(_without_path(str(error), script.path))}")
            status = max(status, 1)
            continue
        except SymbolicAttnError as error:
            print(f"{script.name}  {_one_line(script.path)}")
            print(f"    error: {_one_line(_without_path(str(error), script.path))}")
            status = 2
            continue
        print(f"{script.name}  {_one_line(script.path)}  {_one_line(plain_text(heading(result.title)))}")
        for part in result.parts:
            print(f"    {_one_line(plain_text(part.title))}: {_one_line(str(part.scope))}")
        rules = _rules(result)
        if rules:
            print(f"    rules used: {rules}")
    return status


def _rules(result) -> str:
    """The proof rules a verified result used, when it names them (``Result.rules()``,
    which a checker may or may not provide); "" otherwise."""
    rules = getattr(result, "rules", None)
    if rules is None:
        return ""
    try:
        rules = rules() if callable(rules) else rules
        return _one_line(", ".join(str(rule) for rule in rules))
    except Exception:  # an optional display: never let it break the listing
        return ""


def _without_path(message: str, path: str) -> str:
    prefix = f"{path}: "
    return message[len(prefix):] if message.startswith(prefix) else message


def _one_line(text: str) -> str:
    """One line, control characters shown as escapes: the one formatter of :mod:`symbolic_attn.errors`."""
    return one_line(text, width=2000)
