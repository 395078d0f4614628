r"""Derivation scripts: load them from folders and verify every result they build.

A derivation script is a Python file with a module-level ``NAME`` (the output file stem,
``[a-z0-9_]+``) and a ``build()`` returning a :class:`~symbolic_attn.proofs.result.Result` (or
one part, or a list of parts, which become a Result titled by the module docstring).
Importing a script must have no side effects; the work happens in ``build()``.

Loading and verifying is all this module does; the documents are rendered by
:mod:`symbolic_attn.notes.build` and written (atomically, all or nothing) by
:mod:`symbolic_attn.cli.derive`.

1. :func:`load_scripts` -- import every ``*.py`` (not ``_*.py``) of the folders, sorted;
2. :func:`verify_all`   -- build and verify every result; the first failure raises
   :class:`~symbolic_attn.errors.DerivationFailure` naming the file and the step.
"""

import importlib.util
import re
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from symbolic_attn.errors import (DerivationFailure, InputFileError, ProofError, ScriptError, SymbolicAttnError,
                                  UndecidedError, describe_exception)
from symbolic_attn.exact.source import SCRIPT, read_bytes
from symbolic_attn.proofs.result import Result

__all__ = ["DEFAULT_FOLDER", "InterruptWatch", "Script", "load_scripts", "verify_all"]

#: The built-in derivations, shipped inside the package (``symbolic_attn/derivations/``).
DEFAULT_FOLDER = Path(__file__).resolve().parents[1] / "derivations"

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class InterruptWatch:
    """Tells a ``KeyboardInterrupt`` a script raised itself from the user's Ctrl-C.

    While active, SIGINT goes through a handler that notes it was received and then calls
    the handler it replaced (Python's own raises KeyboardInterrupt, as usual).  A
    KeyboardInterrupt caught inside the ``with`` block is the user's when a SIGINT was
    received (or when no handler could be installed: another thread, SIGINT ignored),
    else the code's own -- ``raise KeyboardInterrupt`` in a script is bad input.

    >>> with InterruptWatch() as watch:
    ...     try:
    ...         raise KeyboardInterrupt
    ...     except KeyboardInterrupt:
    ...         watch.raised_by_code()
    True
    """

    def __init__(self) -> None:
        self.received = False
        self._previous: Any = None

    def __enter__(self) -> "InterruptWatch":
        try:
            previous = signal.getsignal(signal.SIGINT)
            if callable(previous):
                def noted(signum: int, frame: Any) -> None:
                    self.received = True
                    previous(signum, frame)

                signal.signal(signal.SIGINT, noted)
                self._previous = previous
        except (ValueError, OSError, AttributeError):  # not the main thread: nothing can be told apart
            self._previous = None
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self._previous is not None:
            try:
                signal.signal(signal.SIGINT, self._previous)
            except (ValueError, OSError):
                pass
            self._previous = None

    def raised_by_code(self) -> bool:
        """True when no SIGINT was received while watched (so a KeyboardInterrupt is the code's own)."""
        return self._previous is not None and not self.received


@dataclass(frozen=True)
class Script:
    """One loaded derivation script: where it is (for messages), its NAME and build."""

    path: str
    name: str
    build: Callable[..., Any]
    doc: str
    module: object = field(default=None, compare=False, repr=False)

    def result(self) -> Result:
        """Call ``build()`` and normalise its return value to a :class:`Result`."""
        with InterruptWatch() as watch:
            try:
                built = self.build()
            except SymbolicAttnError as error:
                raise DerivationFailure(self.path, error) from None
            except KeyboardInterrupt:
                if not watch.raised_by_code():
                    raise  # the user's Ctrl-C
                raise ScriptError(f"{self.path}: build() raised KeyboardInterrupt") from None
            except Exception as error:  # a user's script may raise anything: one line, no traceback
                raise ScriptError(f"{self.path}: build() raised {describe_exception(error)}") from None
        if isinstance(built, Result):
            if built.name != self.name:
                raise ScriptError(f"{self.path}: build() returned result {built.name!r} but NAME is {self.name!r}")
            return built
        parts = list(built) if isinstance(built, (list, tuple)) else [built]
        if not parts or not all(hasattr(part, "verify") and hasattr(part, "latex") for part in parts):
            raise ScriptError(f"{self.path}: build() must return a Result, a part, or a list of parts")
        title, _, intro = self.doc.strip().partition("\n")
        return Result(self.name, title.strip() or self.name, intro.strip(), parts)


def load_scripts(paths: Iterable[Any] = ()) -> list[Any]:
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
    scripts: list[Script] = []
    names: dict[str, Path] = {}
    for file in files:
        script = _load(file)
        if script.name in names:
            raise ScriptError(f"{file}: NAME {script.name!r} is already used by {names[script.name]}")
        names[script.name] = file
        scripts.append(script)
    return scripts


def _load(file: Path) -> Script:
    """Import one script: its bytes read once by the one file reader, compiled and run as
    Python's importer would (same file name in the code, same module attributes), but
    without the importer opening the path again (a FIFO swapped in after the check would
    block it) or writing ``__pycache__`` into the user's folder."""
    shown = str(file)
    module_name = "_symbolic_attn_derivation_" + re.sub(r"\W", "_", str(file.resolve()))
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise ScriptError(f"{shown}: importing failed: not a Python source file")
    try:
        source = read_bytes(file, SCRIPT)
    except InputFileError as error:
        raise ScriptError(str(error)) from None
    module = importlib.util.module_from_spec(spec)
    # Registered before running, as dataclasses and pickling look the module up.
    sys.modules[module_name] = module
    with InterruptWatch() as watch:
        try:
            # What SourceLoader.source_to_code and exec_module do, from the bytes read.
            code = compile(source, spec.origin or shown, "exec", dont_inherit=True)
            exec(code, module.__dict__)
        except SymbolicAttnError as error:
            raise ScriptError(f"{shown}: importing failed: {error}") from None
        except KeyboardInterrupt:
            if not watch.raised_by_code():
                raise  # the user's Ctrl-C
            raise ScriptError(f"{shown}: importing failed: KeyboardInterrupt") from None
        except BaseException as error:  # anything, SystemExit too: bad input, naming the file
            raise ScriptError(f"{shown}: importing failed: {describe_exception(error)}") from None
    name, build = getattr(module, "NAME", None), getattr(module, "build", None)
    if not isinstance(name, str) or not callable(build):
        raise ScriptError(f"{shown}: a derivation script needs a module-level NAME (str) and build()")
    if not _NAME.match(name):
        raise ScriptError(f"{shown}: NAME {name!r} must match [a-z][a-z0-9_]* (it names the .tex file)")
    return Script(shown, name, build, module.__doc__ or "", module)



def verify_all(scripts: Sequence[Script]) -> list[Any]:
    """Build and verify every script's result; raise DerivationFailure at the first failure."""
    results = []
    for script in scripts:
        result = script.result()
        try:
            result.verify()
        except (ProofError, UndecidedError) as error:
            raise DerivationFailure(script.path, error) from None
        except SymbolicAttnError as error:
            raise DerivationFailure(script.path, error) from None
        except RecursionError:
            raise DerivationFailure(script.path, ProofError("verification failed: expression too deep")) from None
        except Exception as error:  # a SymPy failure inside a user's expression: a failed check, one line
            raise DerivationFailure(
                script.path, ProofError(f"verification failed: {describe_exception(error)}")) from None
        results.append(result)
    return results
