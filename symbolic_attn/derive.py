r"""Collect derivation scripts, verify them all, then write their LaTeX.

A derivation script is a Python file with a module-level ``NAME`` (the output file stem,
``[a-z0-9_]+``) and a ``build()`` returning a :class:`~symbolic_attn.result.Result` (or
one part, or a list of parts, which become a Result titled by the module docstring).
Importing a script must have no side effects; the work happens in ``build()``.

The pipeline reads top to bottom:

1. :func:`load_scripts` -- import every ``*.py`` (not ``_*.py``) of the folders, sorted;
2. :func:`verify_all`   -- build and verify every result; the first failure raises
   :class:`DerivationFailure` naming the file and the step;
3. :func:`render_documents` -- ``{file name: text}`` from each builder in ``BUILDERS``
   (one ``<NAME>.tex`` per result, ``index.tex``, ``notes.tex``; add a builder to add a document);
4. :func:`write_documents` -- only after everything verified and rendered: each file
   via a temporary file and ``os.replace``, so no file is ever half-written.

Output is byte-stable: no dates, versions, paths or hash order; ``\n`` and a final newline.
"""

import importlib.util
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from symbolic_attn.errors import ProofError, SymbolicAttnError, UndecidedError
from symbolic_attn.latex import escape_text, prose_latex
from symbolic_attn.notes import notes_document
from symbolic_attn.result import Result

__all__ = [
    "BUILDERS",
    "DEFAULT_FOLDER",
    "DerivationFailure",
    "OutputError",
    "Script",
    "ScriptError",
    "derive",
    "index_document",
    "load_scripts",
    "render_documents",
    "result_documents",
    "verify_all",
    "write_documents",
]

#: The built-in derivations shipped with the repository.
DEFAULT_FOLDER = Path(__file__).resolve().parent.parent / "derivations"

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class ScriptError(SymbolicAttnError, ValueError):
    """A folder or script that cannot be used (missing, no NAME/build, import fails)."""


class OutputError(SymbolicAttnError, OSError):
    """The output folder cannot be created or written to."""


class DerivationFailure(ProofError):
    """A step of a derivation script that did not verify; the message names the file."""

    def __init__(self, path: str, error: Exception):
        super().__init__(f"{path}: {error}")
        self.path = path


@dataclass(frozen=True)
class Script:
    """One loaded derivation script: where it is (for messages), its NAME and build."""

    path: str
    name: str
    build: Callable
    doc: str
    module: object = field(default=None, compare=False, repr=False)

    def result(self) -> Result:
        """Call ``build()`` and normalise its return value to a :class:`Result`."""
        try:
            built = self.build()
        except SymbolicAttnError as error:
            raise DerivationFailure(self.path, error) from None
        if isinstance(built, Result):
            if built.name != self.name:
                raise ScriptError(f"{self.path}: build() returned result {built.name!r} but NAME is {self.name!r}")
            return built
        parts = list(built) if isinstance(built, (list, tuple)) else [built]
        if not parts or not all(hasattr(part, "verify") and hasattr(part, "latex") for part in parts):
            raise ScriptError(f"{self.path}: build() must return a Result, a part, or a list of parts")
        title, _, intro = self.doc.strip().partition("\n")
        return Result(self.name, title.strip() or self.name, intro.strip(), parts)


def load_scripts(paths: Iterable = ()) -> list:
    """Import the derivation scripts in ``paths`` (folders or ``.py`` files), sorted by file.

    Raises ScriptError for a missing path, a folder without scripts, a script without
    ``NAME``/``build``, an invalid or duplicate NAME, or a script that fails to import.
    """
    files = []
    for path in [Path(p) for p in paths] or [DEFAULT_FOLDER]:
        if path.is_dir():
            found = sorted(f for f in path.glob("*.py") if not f.name.startswith("_"))
            if not found:
                raise ScriptError(f"{path}: no derivation scripts (*.py) in this folder")
            files.extend(found)
        elif path.is_file() and path.suffix == ".py":
            files.append(path)
        else:
            raise ScriptError(f"{path}: no such folder or .py file")
    scripts, names = [], {}
    for file in files:
        script = _load(file)
        if script.name in names:
            raise ScriptError(f"{file}: NAME {script.name!r} is already used by {names[script.name]}")
        names[script.name] = file
        scripts.append(script)
    return scripts


def _load(file: Path) -> Script:
    shown = str(file)
    module_name = "_symbolic_attn_derivation_" + re.sub(r"\W", "_", str(file.resolve()))
    spec = importlib.util.spec_from_file_location(module_name, file)
    module = importlib.util.module_from_spec(spec)
    # Registered before running, as dataclasses and pickling look the module up.
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SymbolicAttnError as error:
        raise ScriptError(f"{shown}: importing failed: {error}") from None
    except Exception as error:  # a user's script may raise anything; report it as bad input
        raise ScriptError(f"{shown}: importing failed: {type(error).__name__}: {error}") from None
    name, build = getattr(module, "NAME", None), getattr(module, "build", None)
    if not isinstance(name, str) or not callable(build):
        raise ScriptError(f"{shown}: a derivation script needs a module-level NAME (str) and build()")
    if not _NAME.match(name):
        raise ScriptError(f"{shown}: NAME {name!r} must match [a-z][a-z0-9_]* (it names the .tex file)")
    return Script(shown, name, build, module.__doc__ or "", module)


def verify_all(scripts: Sequence[Script]) -> list:
    """Build and verify every script's result; raise DerivationFailure at the first failure."""
    results = []
    for script in scripts:
        result = script.result()
        try:
            result.verify()
        except (ProofError, UndecidedError) as error:
            raise DerivationFailure(script.path, error) from None
        results.append(result)
    return results


# ----------------------------------------------------------------------------- documents
# A builder maps the verified results to {file name: LaTeX text}.  To add a document
# (e.g. a complete lecture-notes file), write such a function and add it to BUILDERS.


def result_documents(results: Sequence[Result]) -> dict:
    """One ``<NAME>.tex`` fragment per result."""
    header = "% Generated by `symbolic-attn derive`; every equality was checked. Do not edit.\n"
    return {f"{result.name}.tex": header + result.latex() for result in results}


def index_document(results: Sequence[Result]) -> dict:
    r"""``index.tex``: each result's title, file and the scope of each of its parts.

    >>> index_document([])["index.tex"].splitlines()[1]
    '\\section*{Verified derivations}'
    """
    lines = [
        "% Generated by `symbolic-attn derive`. Do not edit.",
        "\\section*{Verified derivations}",
        "\\begin{itemize}",
    ]
    for result in results:
        lines.append(f"\\item \\textbf{{{prose_latex(result.title)}}} (\\texttt{{{escape_text(result.name)}.tex}})")
        lines.append("\\begin{itemize}")
        for part in result.parts:
            lines.append(f"\\item {prose_latex(part.title)}: {escape_text(part.scope.sentence())}")
        lines.append("\\end{itemize}")
    lines.append("\\end{itemize}")
    return {"index.tex": "\n".join(lines) + "\n"}


#: The documents ``derive`` writes, in order.  Add a builder here to add a document.
#: ``notes_document`` (symbolic_attn.notes) writes notes.tex, which \input s the others.
BUILDERS = (result_documents, index_document, notes_document)


def render_documents(results: Sequence[Result], builders: Sequence[Callable] = BUILDERS) -> dict:
    """All documents as ``{file name: text}``; a name produced twice is an error."""
    documents = {}
    for builder in builders:
        for name, text in builder(results).items():
            if name in documents:
                raise ScriptError(f"two documents would be written to {name}")
            if not text.endswith("\n"):
                text += "\n"
            documents[name] = text
    return documents


def write_documents(documents: dict, out_dir) -> list:
    """Write each document atomically (temporary file + ``os.replace``); return the paths."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe_handle, probe = tempfile.mkstemp(prefix=".probe.", dir=out)
        os.close(probe_handle)
        os.unlink(probe)
    except OSError as error:
        raise OutputError(f"cannot write into the output folder {str(out)!r}: {error.strerror or error}") from None
    written = []
    for name in sorted(documents):
        target = out / name
        handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=out)
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
                stream.write(documents[name])
            os.replace(temporary, target)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
        written.append(target)
    return written


def derive(paths: Iterable = (), out_dir="out", builders: Sequence[Callable] = BUILDERS) -> list:
    """Load, verify, render and (only then) write; return the written paths."""
    results = verify_all(load_scripts(paths))
    return write_documents(render_documents(results, builders), out_dir)
