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
import sys
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from symbolic_attn.errors import (DerivationFailure, ProofError, ScriptError, SymbolicAttnError, UndecidedError,
                                  describe_exception)
from symbolic_attn.proofs.result import Result

__all__ = ["DEFAULT_FOLDER", "Script", "load_scripts", "verify_all"]

#: The built-in derivations, shipped inside the package (``symbolic_attn/derivations/``).
DEFAULT_FOLDER = Path(__file__).resolve().parents[1] / "derivations"

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


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
        try:
            built = self.build()
        except SymbolicAttnError as error:
            raise DerivationFailure(self.path, error) from None
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
    shown = str(file)
    module_name = "_symbolic_attn_derivation_" + re.sub(r"\W", "_", str(file.resolve()))
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise ScriptError(f"{shown}: importing failed: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    # Registered before running, as dataclasses and pickling look the module up.
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SymbolicAttnError as error:
        raise ScriptError(f"{shown}: importing failed: {error}") from None
    except Exception as error:  # a user's script may raise anything; report it as bad input
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
