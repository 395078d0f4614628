"""An output folder written as one set: either the old files or the new ones, never a mix.

``grade --out DIR`` writes a file per student; each file alone being atomic is not enough
(a run killed half-way would leave some students' new grades beside others' old ones).
So :func:`write_folder` writes the whole new set into a fresh temporary folder next to
``DIR`` (``.DIR.XXXXXXXX.tmp``) and only then puts it in ``DIR``'s place: on Linux in one
atomic exchange (``renameat2(RENAME_EXCHANGE)``), elsewhere by two renames a moment apart.
The old folder is removed only after that.  A killed run leaves ``DIR`` as it was (and a
temporary folder, removed by the next run).

Because the folder is replaced as a whole, :func:`check_output_folder` first makes sure it
holds only what ``grade`` writes (``grades.csv``, ``*.json``, ``STUDENT/results.json``,
``STUDENT/gradescope|prairielearn/results.json``) -- nothing of the user's is ever
removed -- and that it is neither a link, nor holds one (a link would write elsewhere), nor
lies inside a submissions folder (its files would be graded on the next run).
"""

import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

from symbolic_attn.cli.output import write_documents
from symbolic_attn.errors import OutputError

__all__ = ["check_output_folder", "refuse_link", "write_folder"]

_PLATFORMS = ("gradescope", "prairielearn")


def _shown(path) -> str:
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _ours(folder: Path) -> str:
    """"" when ``folder`` holds only what grade writes, else the first entry that is not."""
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if entry.is_symlink():
            return f"{entry.name} (a link)"
        if entry.is_file() and (entry.name == "grades.csv" or entry.name.endswith(".json")):
            continue
        if entry.is_dir() and _results_only(Path(entry.path), _PLATFORMS):
            continue
        return entry.name
    return ""


def _results_only(folder: Path, subfolders=()) -> bool:
    for entry in os.scandir(folder):
        if entry.is_symlink():
            return False
        if entry.name == "results.json" and entry.is_file():
            continue
        if entry.name in subfolders and entry.is_dir() and _results_only(Path(entry.path)):
            continue
        return False
    return True


def refuse_link(out) -> None:
    """The rule of every ``--out`` folder: never a link (it would write elsewhere; even one
    that points to a folder is refused, a dangling one too)."""
    if Path(out).is_symlink():
        raise OutputError(f"--out {_shown(out)}: a link; give the folder itself (nothing was written)")


def check_output_folder(out, inputs=()) -> None:
    """Refuse an ``--out`` folder that cannot be replaced safely, before any work is done.
    ``inputs``: the submission paths (the folder may not be inside one)."""
    out = Path(out)
    where = _shown(out)
    refuse_link(out)
    if os.path.lexists(out) and not out.is_dir():
        raise OutputError(f"--out {where}: exists and is not a folder (nothing was written)")
    real = os.path.realpath(out)
    for given in inputs:
        inside = os.path.realpath(given)
        if os.path.isdir(inside) and os.path.commonpath([real, inside]) == inside:
            raise OutputError(f"--out {where}: inside the submissions folder {_shown(given)} "
                              "(its files would be graded next time); write it elsewhere")
    if out.is_dir():
        try:
            foreign = _ours(out)
        except OSError as error:
            raise OutputError(f"--out {where}: cannot read the folder ({error.strerror})") from None
        if foreign:
            raise OutputError(f"--out {where}: holds {_shown(foreign)!r}, which grade does not write; the folder "
                              "is replaced as a whole: give a new or empty folder (nothing was written)")


def write_folder(documents: dict, out) -> None:
    """Make ``out`` hold exactly ``documents`` (``{relative path: text}``), all at once."""
    out = Path(out).absolute()
    check_output_folder(out)
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        _remove_stale(parent, out.name)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))
    except OSError as error:
        raise OutputError(f"cannot write the output folder {_shown(out)!r}: {error.strerror or error}") from None
    try:
        mask = os.umask(0)
        os.umask(mask)
        mode = stat.S_IMODE(os.stat(out).st_mode) if out.is_dir() else 0o777 & ~mask
        os.chmod(staging, mode)  # mkdtemp makes 0700; the folder gets the mode it had (or a plain mkdir's)
        groups = {}
        for name, text in documents.items():
            folder, _, base = name.rpartition("/")
            groups.setdefault(folder, {})[base] = text
        for folder, group in sorted(groups.items()):
            write_documents(group, staging / folder if folder else staging)
        if out.is_dir():
            if not _exchange(staging, out):
                _swap_by_renames(staging, out)
        else:
            os.rename(staging, out)
    except OSError as error:
        raise OutputError(f"cannot write the output folder {_shown(out)!r}: {error.strerror or error}; "
                          "no file was changed") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # the old set after an exchange, or the unfinished new one


def _exchange(new: Path, old: Path) -> bool:
    """Swap two folders' names in one step (Linux ``renameat2``); False where not available."""
    try:
        import ctypes

        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError, ImportError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(new), at_fdcwd, os.fsencode(old), rename_exchange) == 0


def _swap_by_renames(new: Path, old: Path) -> None:
    """The old folder aside, the new one in its place (a moment with neither), the old one
    back where the new one was, to be removed."""
    aside = Path(tempfile.mkdtemp(prefix=f".{old.name}.", suffix=".tmp", dir=old.parent))
    os.rmdir(aside)
    os.rename(old, aside)
    try:
        os.rename(new, old)
    except OSError:
        os.rename(aside, old)
        raise
    os.rename(aside, new)


def _remove_stale(parent: Path, name: str) -> None:
    """Temporary folders a killed run left (named as ours, holding only what grade writes)."""
    pattern = re.compile(rf"\.{re.escape(name)}\.[a-z0-9_]{{8}}\.tmp")
    for entry in os.scandir(parent):
        if pattern.fullmatch(entry.name) and entry.is_dir() and not entry.is_symlink():
            try:
                if not _ours(Path(entry.path)):
                    shutil.rmtree(entry.path)
            except OSError:
                pass  # best effort: a leftover costs nothing but space
