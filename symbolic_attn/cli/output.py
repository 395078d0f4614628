"""Writing generated files: all or nothing, with the user's usual file mode.

1. *Verify*: every target must be absent or a regular file (a directory is refused before
   anything is written);
2. *stage*: every document is written to a temporary ``.NAME.*.tmp`` beside its target;
   (leftovers of a killed run, named like ours, are removed first);
3. *commit*: only when all are written, each is renamed into place (``os.replace``).  An
   old file is kept as a hard link (or copy) until every rename succeeded, so a failure
   half-way through the renames puts every old file back and removes the new ones.

Any failure (a target that is a directory, a full disk, a read-only folder) removes every
temporary and leaves every old file as it was, then raises one
:class:`~symbolic_attn.errors.OutputError`.  Files get the mode a plain ``open`` would give
(0644 under umask 022): ``mkstemp`` creates 0600 files, and that mode would survive the
rename.  A document's text is written as UTF-8 with ``\\n`` line endings; ``bytes`` (a PDF)
as they are.

>>> import tempfile, pathlib
>>> folder = tempfile.mkdtemp()
>>> [p.name for p in write_documents({"a.txt": "one\\n"}, folder)]
['a.txt']
>>> sorted(p.name for p in pathlib.Path(folder).iterdir())
['a.txt']
"""

import os
import re
import shutil
import tempfile
from pathlib import Path

from symbolic_attn.errors import OutputError

__all__ = ["write_documents"]


def _umask() -> int:
    # os.umask is the only portable way to read it: set it and put it straight back.
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _check_targets(out: Path, names) -> None:
    """Refuse, before writing anything, a target that exists and is not a regular file."""
    for name in names:
        if "/" in name or "\\" in name or name in ("", ".", ".."):
            raise OutputError(f"cannot write {name!r}: a document name must be a plain file name")
        target = out / name
        if target.exists() and not target.is_file():
            kind = "a directory" if target.is_dir() else "not a regular file"
            raise OutputError(f"cannot write {str(target)!r}: it is {kind}; no file was changed")


def _remove_stale(out: Path, names) -> None:
    """Remove temporaries a killed run (SIGKILL, power loss) left: ``.NAME.XXXXXXXX.tmp``
    exactly as :func:`tempfile.mkstemp` names ours, for this run's documents only."""
    patterns = [re.compile(rf"\.{re.escape(name)}\.[a-z0-9_]{{8}}\.tmp") for name in names]
    for entry in out.iterdir():
        if any(p.fullmatch(entry.name) for p in patterns) and entry.is_file() and not entry.is_symlink():
            _remove(entry)


def _stage(out: Path, name: str, content, mode: int) -> str:
    handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=out)
    try:
        if isinstance(content, bytes):
            with os.fdopen(handle, "wb") as stream:
                stream.write(content)
        else:
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
                stream.write(content)
        os.chmod(temporary, mode)
    except BaseException:
        _remove(temporary)
        raise
    return temporary


def _keep_old(target: Path) -> str | None:
    """A second name for the old file (a hard link, or a copy), to restore it on failure."""
    if not target.exists():
        return None
    handle, backup = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(handle)
    try:
        os.unlink(backup)
        os.link(target, backup)  # no data copied: the old file simply keeps a second name
    except OSError:
        try:
            shutil.copy2(target, backup)  # a file system without hard links
        except BaseException:
            _remove(backup)
            raise
    return backup


def _remove(path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def write_documents(documents: dict, out_dir) -> list:
    """Write ``{file name: text or bytes}`` into ``out_dir``, all or nothing; return the paths."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputError(f"cannot write into the output folder {str(out)!r}: {error.strerror or error}") from None
    names = sorted(documents)
    _check_targets(out, names)
    mode = 0o666 & ~_umask()
    staged, backups, replaced = [], {}, []
    try:
        _remove_stale(out, names)
        for name in names:
            staged.append((_stage(out, name, documents[name], mode), out / name))
        for _, target in staged:
            backups[target] = _keep_old(target)
        for temporary, target in staged:
            os.replace(temporary, target)
            replaced.append(target)
    except OSError as error:
        _roll_back(replaced, backups)
        raise OutputError(f"cannot write into the output folder {str(out)!r}: {error.strerror or error}; "
                          "no file was changed") from None
    finally:
        for temporary, _ in staged:
            _remove(temporary)
        for backup in backups.values():
            if backup is not None:
                _remove(backup)
    return [target for _, target in staged]


def _roll_back(replaced: list, backups: dict) -> None:
    """Put back every old file already replaced; remove every new one that had none."""
    for target in reversed(replaced):
        backup = backups.get(target)
        try:
            if backup is None:
                _remove(target)
            else:
                os.replace(backup, target)
        except OSError:
            pass  # best effort: the error that stopped the write is the one reported
