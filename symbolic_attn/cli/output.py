"""Writing generated files: all or nothing, with the user's usual file mode.

Every document is first written to a temporary file beside its target; only when all of
them are written are they renamed into place, one ``os.replace`` each.  A failure (a
target that is a directory, a full disk) removes every temporary and leaves every old
file as it was.  Files get the mode a plain ``open`` would give (0644 under umask 022):
``mkstemp`` creates 0600 files, and that mode would survive the rename.
"""

import os
import tempfile
from pathlib import Path

from symbolic_attn.errors import OutputError

__all__ = ["write_documents"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_documents(documents: dict, out_dir) -> list:
    """Write ``{file name: text}`` into ``out_dir``, all or nothing; return the paths."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputError(f"cannot write into the output folder {str(out)!r}: {error.strerror or error}") from None
    for name in sorted(documents):
        if (out / name).is_dir():
            raise OutputError(f"cannot write {str(out / name)!r}: it is a directory")
    mode = 0o666 & ~_umask()
    staged = []
    try:
        for name in sorted(documents):
            handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=out)
            staged.append((temporary, out / name))
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
                stream.write(documents[name])
            os.chmod(temporary, mode)
        for temporary, target in staged:
            os.replace(temporary, target)
    except OSError as error:
        raise OutputError(f"cannot write into the output folder {str(out)!r}: {error.strerror or error}; "
                          "no file was changed") from None
    finally:
        for temporary, _ in staged:
            if os.path.exists(temporary):
                os.unlink(temporary)
    return [target for _, target in staged]
