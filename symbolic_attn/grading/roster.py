r"""Who the students are: the submission paths given -> ``(student id, [files])``.

Every name here comes from students (they chose their file and folder names), so:

* each entry is handled on its own: a link (a loop included), a FIFO or a device is
  refused *for that entry* (it becomes a :class:`Refused` item, reported in that student's
  results) and never followed, opened or resolved; the rest are graded;
* file-system litter is never a student: dot-files, ``Thumbs.db``, ``desktop.ini``,
  ``__MACOSX/``, Office lock files ``~$…``;  nor is the answer key, at any depth;
* a name that is not UTF-8 is shown with escapes (``\xff``), so that it can be printed
  and written to JSON;
* ids are unique and stable: a file's id is its name without the extension, a folder's its
  name; when two collide (``ann.md`` and ``ann.tex``; ``a/ann.md`` and ``b/ann.md``) the
  full name is used, then the path as given;
* a path given twice, or one inside another given too, would grade students twice: that
  is a :class:`SubmissionError`, as is a path that does not exist or is a link.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> for name in ["ann.md", "ann.tex", "ben.md", "Thumbs.db", ".DS_Store"]:
...     _ = (root / name).write_text("x = 1")
>>> [student for student, _ in discover([root])]
['ann.md', 'ann.tex', 'ben']
"""

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from symbolic_attn.errors import SubmissionError
from symbolic_attn.grading.submissions import EXTENSIONS, Problem, Submission, read_submission

__all__ = ["MAX_STUDENTS", "MAX_FILES_PER_STUDENT", "Refused", "discover", "read_student", "shown"]

MAX_STUDENTS = 100_000
MAX_FILES_PER_STUDENT = 64

# What operating systems and archivers leave in a folder: never a student's work.
_LITTER = {"thumbs.db", "ehthumbs.db", "desktop.ini", "__macosx", "$recycle.bin", "icon\r"}


@dataclass(frozen=True)
class Refused:
    """An entry of a student's that is not read, and why (reported in their results)."""

    name: str
    reason: str


def shown(name) -> str:
    """A file name as text that can be printed and written: undecodable bytes as ``\\xff``."""
    text = os.fsdecode(name) if not isinstance(name, str) else name
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _link(entry: Path) -> Refused:
    return Refused(shown(entry.name), "a link, not read (links are never followed)")


def _litter(name: str) -> bool:
    return name.startswith(".") or name.startswith("~$") or name.lower() in _LITTER


def _kind(path: Path) -> str:
    """"file", "folder", "link" or "other", from ``lstat``: nothing is followed."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return "other"
    if stat.S_ISLNK(mode):
        return "link"
    return "folder" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else "other"


def _real(path) -> str:
    # realpath never raises on a loop (it stops there); it only compares paths.
    return os.path.realpath(path)


def _entries(folder: Path, excluded) -> list:
    try:
        names = sorted(os.listdir(folder))
    except OSError as error:
        raise SubmissionError(f"{shown(str(folder))}: cannot list the folder ({error.strerror})") from None
    return [folder / name for name in names if not _litter(name) and _real(folder / name) not in excluded]


def _student_folder(folder: Path, excluded) -> list:
    """A student's folder: its solution files in name order, each refused item on its own."""
    files, refused = [], []
    for entry in _entries(folder, excluded):
        kind = _kind(entry)
        if kind == "file" and entry.suffix.lower() in EXTENSIONS:
            files.append(entry)
        elif kind == "link":
            refused.append(_link(entry))
        elif kind == "folder":
            refused.append(Refused(shown(entry.name), "a folder inside a student's folder, not read"))
        elif kind == "other":
            refused.append(Refused(shown(entry.name), "not a regular file, not read"))
        # other regular files (a PDF, a picture) are not solutions: silently not read
    if len(files) > MAX_FILES_PER_STUDENT:
        extra = files[MAX_FILES_PER_STUDENT:]
        names = ", ".join(shown(f.name) for f in extra[:5]) + (", ..." if len(extra) > 5 else "")
        refused.append(Refused(f"{len(extra)} more files", f"past the limit of {MAX_FILES_PER_STUDENT} files "
                               f"per student, not read ({names})"))
        files = files[:MAX_FILES_PER_STUDENT]
    if not files and not refused:
        refused.append(Refused(shown(folder.name), f"a folder without any {', '.join(EXTENSIONS)} file"))
    return files + refused


def _check_given(paths, excluded) -> list:
    """The paths given, each existing, not a link, not the key, none twice or inside another."""
    seen = {}
    for path in map(Path, paths):
        where = shown(str(path))
        if not os.path.lexists(path):
            raise SubmissionError(f"{where}: no such submission file or folder")
        if path.is_symlink():
            raise SubmissionError(f"{where}: a link, not a submission file or folder")
        real = _real(path)
        if real in excluded:
            raise SubmissionError(f"{where}: is the answer key, not a submission")
        for other_real, other in seen.items():
            if real == other_real:
                raise SubmissionError(f"{where}: given twice (also as {other}): its students would be graded twice")
            if os.path.commonpath([real, other_real]) in (real, other_real):
                raise SubmissionError(f"{where}: overlaps {other}, also given (one is inside the other): "
                                      "its students would be graded twice")
        seen[real] = where
    return list(map(Path, paths))


def discover(paths, exclude=()) -> list:
    """``(student id, [files and Refused items])`` for each submission, in a stable order.
    ``exclude``: files never taken for a solution (the exercise file itself)."""
    excluded = {_real(p) for p in exclude}
    found = []  # (base id, full name, path as given, items)
    for path in _check_given(paths, excluded):
        if not path.is_dir():
            found.append((shown(path.stem), shown(path.name), shown(str(path)), [path]))
            continue
        for entry in _entries(path, excluded):
            kind = _kind(entry)
            items = (_student_folder(entry, excluded) if kind == "folder" else [_link(entry)] if kind == "link"
                     else [entry])
            base = shown(entry.name if kind == "folder" else entry.stem)
            found.append((base, shown(entry.name), shown(str(entry)), items))
            if len(found) > MAX_STUDENTS:
                raise SubmissionError(f"more than {MAX_STUDENTS} submissions")
    return list(zip(_unique_ids(found), (items for *_, items in found)))


def _unique_ids(found) -> list:
    """The base id where it is unique, else the full name, else the path as given."""
    def counts(ids):
        tally = {}
        for student in ids:
            tally[student] = tally.get(student, 0) + 1
        return tally

    bases = counts(base for base, *_ in found)
    ids = [base if bases[base] == 1 else name for base, name, _, _ in found]
    again = counts(ids)
    return [student if again[student] == 1 else given for student, (_, _, given, _) in zip(ids, found)]


def read_student(items) -> Submission:
    """One student's files read in order into one submission; a refused item is reported
    in ``problems`` (line 0: about a whole file) and costs nothing else, unless nothing
    at all could be read (then the submission is refused, with every reason)."""
    statements, problems, refused, blank, documents = [], [], [], True, []
    for item in items:
        if isinstance(item, Refused):
            refused.append(f"{item.name}: {item.reason}")
            continue
        name = shown(item.name)
        if item.suffix.lower() not in EXTENSIONS:
            refused.append(f"{name}: not a {', '.join(EXTENSIONS)} file")
            continue
        submission = read_submission(item, source=name)
        if submission.refused:
            refused.append(f"{name}: {submission.refused}")
            continue
        statements.extend(submission.statements)
        problems.extend(submission.problems)
        documents.extend(submission.documents)
        blank = blank and submission.blank
    source = items[0].name if isinstance(items[0], Refused) else shown(items[0].name)
    if refused and not statements:
        return Submission(source, refused="; ".join(refused))
    return Submission(source, tuple(statements), tuple(problems) + tuple(Problem(0, text) for text in refused),
                      blank=blank and not refused, documents=tuple(documents))
