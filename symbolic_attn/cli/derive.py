"""``symbolic-attn derive`` and ``symbolic-attn list``: the verified-derivations commands.

``derive [PATH ...] [--out DIR] [--title TEXT]`` verifies every derivation script in the
folders (the built-in ``symbolic_attn/derivations/`` by default) and only then writes one ``.tex`` per
result, ``index.tex`` and ``notes.tex``.  Without PATH the notes are the built-in lecture
notes (results, worked examples, the kernel); a user's own folder gets a document of its
own results only, titled ``--title`` (plain text, escaped; default "Verified derivations").

``--format markdown`` (or ``md``) writes ``notes.md`` (Markdown with ``$$`` math) instead
of the LaTeX files (``--format latex``, or ``tex``, the default); ``--pdf`` also compiles ``notes.tex`` with pdflatex (in a temporary folder) into
``DIR/notes.pdf``.  ``--jobs N`` verifies with N processes side by side (default: every
core; the output is the same byte for byte).  Everything is written all or nothing (:mod:`symbolic_attn.cli.output`):
a failure of any kind leaves every old file as it was.

``list [PATH] [--verify]`` shows each script's NAME, file and title.  Without ``--verify``
it runs nothing and says "not verified"; with it, each script is built and verified, and
only then its parts' scopes are shown (and the proof rules used, when the result names
them), or "verification failed: <step>".

Exit status: 0 done; 1 a step failed verification (one line naming file, step, both sides
and the residual; nothing written); 2 bad input: a script that cannot be loaded or whose
``build()`` raises (KeyboardInterrupt and SystemExit too: only a SIGINT actually received
is the user's Ctrl-C, exit 130), a script whose worker process ended without a result
(``os._exit``, killed: never run again in this process, and never left out of a listing),
a title holding control or invisible format characters (bidi overrides, zero-width), an
``--out`` that is a link (never followed, as for ``grade``), a target that is a
directory, an unwritable folder, pdflatex missing or failing.  Never a traceback.
"""

import argparse
import dataclasses
import functools
import os
import signal
import sys
import unicodedata
from pathlib import Path
from collections.abc import Callable, Iterable, Sequence

from symbolic_attn.errors import describe_exception, one_line
from symbolic_attn.cli.options import add_format_option, add_jobs_option, examples_epilog
from symbolic_attn.cli.folder import refuse_link
from symbolic_attn.cli.output import write_documents
from symbolic_attn.errors import (DerivationFailure, InputFileError, ProofError, ScriptError, SymbolicAttnError,
                                  UndecidedError)
from symbolic_attn.exact.source import SCRIPT, check_file
from symbolic_attn.notes.build import heading, render_documents, tex_builders
from symbolic_attn.notes.document import compile_pdf, find_pdflatex
from symbolic_attn.notes.markdown import markdown_document
from symbolic_attn.notes.worked import example_parts
from symbolic_attn.proofs.parallel import map_forked
from symbolic_attn.proofs.result import Result
from symbolic_attn.proofs.scripts import DEFAULT_FOLDER, InterruptWatch, load_scripts
from symbolic_attn.render.latex import plain_text

__all__ = ["add_parser", "derive", "verify_scripts", "printed_results", "run_derive", "run_list", "MAX_TITLE"]

PROG = "symbolic-attn"

#: The longest ``--title`` accepted (characters).
MAX_TITLE = 200

FORMATS = ("md", "tex")  # derive()'s own names; --format latex|markdown (tex, md kept) maps to them
_FORMAT_NAMES = {"latex": "tex", "markdown": "md"}


def is_builtin(paths: Iterable) -> bool:
    """True when ``paths`` name only the built-in derivations (or nothing)."""
    paths = [Path(p) for p in paths]
    return all(p.resolve() == DEFAULT_FOLDER for p in paths)


def builders_for(fmt: str, paths: Iterable = (), title: str | None = None, examples=None) -> tuple:
    """The builders of ``--format fmt``: the full notes for the built-in folder, the user's
    results only (under ``title``) for a user's folder.  ``examples``: the worked examples'
    blocks when already computed."""
    if not is_builtin(paths):
        examples = False
    elif examples is None:
        examples = True
    if fmt == "md":
        return (lambda results: markdown_document(results, title=title, examples=examples),)
    return tex_builders(title=title, examples=examples)


def check_script_files(paths: Iterable) -> None:
    """Every script Python would import from ``paths`` checked by the one file reader
    (:func:`symbolic_attn.exact.source.check_file`) first: a FIFO named ``a.py`` would block
    the import for ever, a device stream without end; both, and a script over the size
    bound, are a ScriptError naming the file.  Missing paths are left to :func:`load_scripts`."""
    for path in map(Path, paths):
        candidates = (sorted(f for f in path.glob("*.py") if not f.name.startswith("_")) if path.is_dir()
                      else [path] if os.path.lexists(path) and path.suffix == ".py" else [])
        for candidate in candidates:
            try:
                check_file(candidate, SCRIPT)
            except InputFileError as error:
                raise ScriptError(str(error)) from None


def load(paths: Iterable) -> list:
    """:func:`load_scripts`, with a script that exits or raises oddly while imported as bad input."""
    paths = list(paths)
    check_script_files(paths)
    try:
        return load_scripts(paths)
    except SymbolicAttnError:
        raise
    except (Exception, SystemExit) as error:
        raise ScriptError(f"importing a derivation script raised {describe_exception(error)}") from None


def verify_scripts(scripts: Sequence) -> list:
    """Build and verify every script's result in this process, whatever a script's ``build()`` does.

    Raises DerivationFailure (a step failed, or build() raised a library error) or
    ScriptError (build() or verification raised anything else, e.g. a bug in the script).
    """
    return [_verified(script) for script in scripts]


def printed_results(scripts: Sequence, jobs: int | None = None, also: Sequence[Callable] = ()) -> tuple:
    """Build, verify and print every script's result: ``(printed, values)``, a
    :class:`~symbolic_attn.proofs.result.Printed` per script in order, and the values of the
    tasks ``also`` computed beside them (the last one is handed out first) -- ``jobs``
    processes side by side (default: every core).

    Raises what a one-process run raises: the first build or verification failure in file
    order, then a failure of ``also``; only when all of these passed, the first failure to
    print.
    """
    tasks = [functools.partial(_verified_and_printed, script) for script in scripts] + list(also)

    def lost(index, exitcode):
        where = scripts[index].path if index < len(scripts) else "the worked examples"
        raise ScriptError(_lost_message(where, exitcode))

    outputs = map_forked(tasks, jobs, start_with=[len(tasks) - 1] if also else (), on_lost=lost)
    printed = [_print(script, _titled_and_verified(script)) if output == _PRINTING_FAILED else output
               for script, output in zip(scripts, outputs)]
    return printed, outputs[len(scripts):]


def _lost_message(where: str, exitcode: int) -> str:
    """The failure of a script whose worker process ended without a result (``os._exit``
    in its ``build()``, a crash, killed): it is not run again in this process."""
    if exitcode < 0:
        try:
            how = f"was killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            how = f"was killed by signal {-exitcode}"
    else:
        how = f"ended (exit status {exitcode})"
    return f"{where}: the process building and verifying it {how} without a result"


#: What a worker returns when a verified result fails to print: printing errors are raised
#: only once every script has verified (as when the documents were rendered after it).
_PRINTING_FAILED = "printing failed"


def _verified_and_printed(script):
    """One script's task: build, verify (failures raise), print (a failure is a marker)."""
    result = _titled_and_verified(script)
    try:
        return result.printed()
    except Exception:  # noqa: BLE001 - printed again, and raised, after every verification
        return _PRINTING_FAILED


def _titled_and_verified(script):
    """Build (the title printed as a heading: a docstring's final period dropped) and verify."""
    built = _built(script)
    if isinstance(built, Result):
        built = dataclasses.replace(built, title=heading(built.title))
    return _checked(script, built)


def _print(script, result):
    """``result.printed()``; a step that fails now is a verification failure, anything else a
    one-line error naming the script."""
    try:
        return result.printed()
    except (ProofError, UndecidedError):
        raise
    except SymbolicAttnError as error:
        raise ScriptError(f"{script.path}: printing failed: {error}") from None
    except Exception as error:  # a user's part may print badly: one line, no traceback
        raise ScriptError(f"{script.path}: printing raised {describe_exception(error)}") from None


def _verified(script):
    """Build and verify one script's result, in this process."""
    return _checked(script, _built(script))


def _built(script):
    try:
        return script.result()
    except SymbolicAttnError:
        raise
    except (Exception, SystemExit) as error:  # a user's build() may raise anything
        raise ScriptError(f"{script.path}: build() raised {describe_exception(error)}") from None


def _checked(script, result):
    with InterruptWatch() as watch:
        try:
            result.verify()
        except DerivationFailure:
            raise
        except (ProofError, UndecidedError) as error:
            raise DerivationFailure(script.path, error) from None
        except SymbolicAttnError as error:
            raise ScriptError(f"{script.path}: verifying failed: {error}") from None
        except KeyboardInterrupt:
            if not watch.raised_by_code():
                raise  # the user's Ctrl-C
            raise ScriptError(f"{script.path}: verifying raised KeyboardInterrupt") from None
        except (Exception, SystemExit) as error:
            raise ScriptError(f"{script.path}: verifying raised {describe_exception(error)}") from None
    return result


def derive(paths: Iterable = (), out_dir="out", builders: Sequence[Callable] | None = None, *,
           fmt: str = "tex", title: str | None = None, pdf: bool = False, jobs: int | None = None) -> list:
    """Load, verify, render, compile (``pdf``) and only then write; return the written paths.

    ``jobs`` processes build, verify and print the results side by side (default: every
    core; 1: all in this process); the documents are then assembled here from the printed
    results (:class:`~symbolic_attn.proofs.result.Printed`, which is what ``builders``
    receive).  The output is the same byte for byte whatever ``jobs`` is.
    """
    paths = list(paths)
    refuse_link(out_dir)  # before any work: a link would write elsewhere
    if pdf:
        find_pdflatex()  # before any work: missing pdflatex is one line, nothing written
    # The worked examples of the built-in notes are computed beside the results (the
    # longest, the encoder block, is handed out first).
    examples = example_parts() if builders is None and is_builtin(paths) else ()
    results, parts = printed_results(load(paths), jobs, also=examples)
    if builders is None:
        blocks = [block for part in parts for block in part] if examples else None
        builders = builders_for(fmt, paths, title, blocks)
    documents = render_documents(results, builders)
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
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=examples_epilog(
            "symbolic-attn derive --out out/                      # the built-in results and lecture notes",
            "symbolic-attn derive --out out/ --pdf                # also out/notes.pdf (needs pdflatex)",
            "symbolic-attn derive --out out/ --format markdown    # out/notes.md",
            "symbolic-attn derive my_derivations/ --out my_notes/ --title \"My results\"",
            notes="Exit status: 0 written, 1 a step failed verification (nothing written), 2 bad input.",
        ),
    )
    derive_parser.add_argument("paths", nargs="*", metavar="PATH",
                               help="folders (or .py files) of derivation scripts; default: the built-in symbolic_attn/derivations/")
    derive_parser.add_argument("--out", default="out", metavar="DIR", help="output folder (default: out)")
    add_format_option(derive_parser, ("latex", "markdown"), default="latex",
                      what="latex: one .tex per result, index.tex and notes.tex; markdown: notes.md")
    derive_parser.add_argument("--title", metavar="TEXT",
                               help="title of the notes (plain text); default for your own folder: "
                                    "'Verified derivations'")
    derive_parser.add_argument("--pdf", action="store_true",
                               help="also compile notes.tex to DIR/notes.pdf with pdflatex")
    add_jobs_option(derive_parser, "processes that verify side by side (1: one process)")
    derive_parser.set_defaults(handler=run_derive)

    listing = subparsers.add_parser(
        "list",
        help="show the derivations a folder holds",
        description="Show each derivation script's NAME, file and title; with --verify, verify each one and "
                    "show the scope of its parts (a scope is only shown once verified).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=examples_epilog(
            "symbolic-attn list                           # the built-in derivations, not run",
            "symbolic-attn list --verify --jobs 2         # verify each, then show its scope",
            "symbolic-attn list my_derivations/ --verify",
            notes="Exit status: 0 listed, 1 a script failed verification, 2 a script could not be built.",
        ),
    )
    listing.add_argument("path", nargs="?", metavar="PATH",
                         help="folder of derivation scripts; default: the built-in symbolic_attn/derivations/")
    listing.add_argument("--verify", action="store_true",
                         help="build and verify each script, then show its scopes (slower)")
    add_jobs_option(listing, "with --verify: processes that verify side by side")
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
    for char in title:
        what = _UNSEEN.get(unicodedata.category(char))
        if what is not None:
            raise ScriptError(f"--title: {what} U+{ord(char):04X} not allowed")
    return title.strip()


#: Characters a title may not hold beyond control characters, by Unicode category: they
#: are invisible yet change what is shown (a bidi override reverses the text after it).
_UNSEEN = {"Cf": "invisible format character", "Zl": "line separator", "Zp": "paragraph separator",
           "Cs": "character that is not valid UTF-8 (a lone surrogate)"}


def run_derive(args) -> int:
    """Handler of ``derive``: 0 written, 1 verification failed, 2 bad input (one line on stderr)."""
    fmt = _FORMAT_NAMES.get(args.format, args.format)
    if args.pdf and fmt != "tex":
        print(f"{PROG}: error: --pdf compiles notes.tex, so it needs --format tex (= latex, the default)", file=sys.stderr)
        return 2
    try:
        written = derive(args.paths, args.out, fmt=fmt, title=_check_title(args.title), pdf=args.pdf,
                         jobs=args.jobs)
    except (ProofError, UndecidedError) as error:
        print(f"{PROG}: verification failed: {_one_line(str(error))}", file=sys.stderr)
        return 1
    for path in sorted(written, key=lambda p: (p.suffix == ".pdf", p.name)):  # the PDF last: it is built last
        print(_one_line(str(path)))
    return 0


def run_list(args) -> int:
    """Handler of ``list``: one block per script; scopes only once verified.

    Exit 1 when some script failed verification; 2 when some build() raised (still one
    block per script; every failure is one line of the listing).  With ``--verify`` the
    scripts are verified side by side (``--jobs``); each block is printed, in file order,
    as soon as it and the blocks before it are known.
    """
    scripts = load([args.path] if args.path else [])
    if not args.verify:
        for script in scripts:
            print(f"{script.name}  {_one_line(script.path)}  {_one_line(plain_text(heading(_doc_title(script))))}")
            print("    not verified (run `symbolic-attn list --verify` to verify it and show its scope)")
        return 0
    statuses = []

    def show(index, outcome):
        statuses.append(_show_listing(scripts[index], outcome))

    def lost(index, exitcode):
        return ("error", _lost_message(scripts[index].path, exitcode))

    map_forked([functools.partial(_listing, script) for script in scripts], args.jobs,
               on_value=show, on_lost=lost)
    return max(statuses, default=0)


def _doc_title(script) -> str:
    return script.doc.strip().partition("\n")[0].strip() or script.name


def _listing(script) -> tuple:
    """One script's block of ``list --verify``, as plain data (nothing is printed as LaTeX):
    ``("ok", title, [(part title, scope)], rules)``, ``("failed", message)`` or ``("error", message)``."""
    try:
        result = _titled_and_verified(script)
    except (ProofError, UndecidedError) as error:
        return ("failed", str(error))
    except SymbolicAttnError as error:
        return ("error", str(error))
    return ("ok", result.title, [(part.title, str(part.scope)) for part in result.parts], _rules(result))


def _show_listing(script, outcome) -> int:
    """Print one block; return its exit status (0, 1 failed, 2 error)."""
    kind = outcome[0]
    if kind == "failed":
        print(f"{script.name}  {_one_line(script.path)}  {_one_line(plain_text(heading(_doc_title(script))))}")
        print(f"    verification failed: {_one_line(_without_path(outcome[1], script.path))}")
        return 1
    if kind == "error":
        print(f"{script.name}  {_one_line(script.path)}")
        print(f"    error: {_one_line(_without_path(outcome[1], script.path))}")
        return 2
    _, title, parts, rules = outcome
    print(f"{script.name}  {_one_line(script.path)}  {_one_line(plain_text(title))}")
    for part_title, scope in parts:
        print(f"    {_one_line(plain_text(part_title))}: {_one_line(scope)}")
    if rules:
        print(f"    rules used: {rules}")
    return 0


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
