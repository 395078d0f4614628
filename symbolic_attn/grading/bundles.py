r"""Autograder bundles: grading one uploaded submission on Gradescope or PrairieLearn.

A course platform hands the grader *one* student's upload: a folder of whatever files they
submitted.  :func:`submission_items` takes every solution file in it (by extension, at any
depth, in path order) as one student's work, so ``solution.md`` beside ``scratch.txt`` is
one submission read as one (the last statement of a name wins), never two students as
``grade FOLDER`` would make of them.  :func:`grade_and_write` grades it and writes the
platform's ``results.json``; it always writes one, even when the key cannot be read or the
time runs out, so that the student sees why.

The bundles themselves (:func:`build_gradescope`, :func:`build_prairielearn`) carry this
project's wheel and its dependencies' wheels (downloaded at bundle time, so that nothing
is fetched at grading time), the answer key, and the scripts the platform runs.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> for name in ["solution.md", "scratch.txt", "photo.png", ".DS_Store", "work/extra.tex"]:
...     (root / name).parent.mkdir(exist_ok=True)
...     _ = (root / name).write_text("x = 1")
>>> [item.name for item in submission_items(root)]
['scratch.txt', 'solution.md', 'extra.tex']
"""

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from base64 import urlsafe_b64encode
from fractions import Fraction
from pathlib import Path

from symbolic_attn.errors import OutputError, SymbolicAttnError, TimeLimitError, one_line
from symbolic_attn.grading.roster import MAX_FILES_PER_STUDENT, Refused, shown
from symbolic_attn.grading.submissions import EXTENSIONS

__all__ = ["PLATFORMS", "submission_items", "grade_folder", "results_text", "grade_and_write", "project_wheel",
           "dependency_wheels", "build_gradescope", "build_prairielearn", "example_course", "describe"]

PLATFORMS = ("gradescope", "prairielearn")
DISTRIBUTION = "symbolic-attn"
#: How deep into an upload's folders solution files are looked for.
MAX_DEPTH = 8
#: The interpreter the dependency wheels are downloaded for (python-flint's wheels are
#: ``abi3``: the same one serves every later Python); PrairieLearn's image is built on it.
PYTHON_VERSION = "3.11"
PLATFORM_TAG = "manylinux2014_x86_64"
_LITTER = {"thumbs.db", "ehthumbs.db", "desktop.ini", "__macosx", "$recycle.bin", "icon\r"}


# ------------------------------------------------------------------ grading one upload


def _litter(name: str) -> bool:
    return name.startswith(".") or name.startswith("~$") or name.lower() in _LITTER


def submission_items(folder) -> list:
    """One student's items (files, then :class:`Refused` ones) from an upload folder.

    Solution files (``.md .markdown .tex .txt .toml``) at any depth up to
    :data:`MAX_DEPTH`, sorted by their path in the folder; other files (a PDF, a picture)
    are not read; links, FIFOs and devices are refused unopened; litter (dot-files,
    ``__MACOSX/``...) is skipped.  With nothing to read, one :class:`Refused` item says why.
    """
    folder = Path(folder)
    files, refused, others = [], [], []

    def visit(directory: Path, depth: int):
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as error:
            refused.append(Refused(shown(directory.name or str(directory)), f"cannot be listed ({error.strerror})"))
            return
        for entry in entries:
            if _litter(entry.name):
                continue
            path = Path(entry.path)
            if entry.is_symlink():
                refused.append(Refused(shown(entry.name), "a link, not read (links are never followed)"))
            elif entry.is_dir(follow_symlinks=False):
                if depth < MAX_DEPTH:
                    visit(path, depth + 1)
                else:
                    refused.append(Refused(shown(entry.name), f"a folder nested more than {MAX_DEPTH} deep, not read"))
            elif not entry.is_file(follow_symlinks=False):
                refused.append(Refused(shown(entry.name), "not a regular file, not read"))
            elif path.suffix.lower() in EXTENSIONS:
                files.append(path)
            else:
                others.append(shown(entry.name))

    if not os.path.isdir(folder) or os.path.islink(folder):
        return [Refused(shown(folder.name or str(folder)), "no submission folder was found")]
    visit(folder, 1)
    if len(files) > MAX_FILES_PER_STUDENT:
        extra = files[MAX_FILES_PER_STUDENT:]
        names = ", ".join(shown(f.name) for f in extra[:5]) + (", ..." if len(extra) > 5 else "")
        refused.append(Refused(f"{len(extra)} more files", f"past the limit of {MAX_FILES_PER_STUDENT} files, "
                               f"not read ({names})"))
        files = files[:MAX_FILES_PER_STUDENT]
    if not files and not refused:
        what = (f"only {', '.join(others[:5])}{', ...' if len(others) > 5 else ''} was submitted"
                if others else "nothing was submitted")
        refused.append(Refused("submission", f"no solution file ({', '.join(EXTENSIONS)}): {what}"))
    return files + refused


def grade_folder(key, folder, student: str = "submission"):
    """The :class:`~symbolic_attn.grading.batch.StudentResult` of one upload folder."""
    from symbolic_attn.grading.batch import grade_all

    return grade_all(key, [(student, submission_items(folder))], 1)[0]


def _not_graded(reason: str, student: str = "submission"):
    from symbolic_attn.grading.results import StudentResult

    return StudentResult(student, Fraction(0), Fraction(0), False, reason, [])


def results_text(platform: str, result) -> str:
    """The platform's ``results.json`` for one result.

    Gradescope: a submission that could not be graded gets a first, visible test of score 0
    saying why (beside the questions' own zeros), so the student sees it among the tests.
    PrairieLearn: ``gradable: false`` with the reason (invalid, no penalty).
    """
    from symbolic_attn.grading.exports import export_text, gradescope_json, prairielearn_json

    if platform == "prairielearn":
        return prairielearn_json(result)
    data = json.loads(gradescope_json(result))
    if not result.gradable:
        data["tests"].insert(0, {
            "name": "Submission", "number": "0", "score": 0, "max_score": 0, "status": "failed",
            "output": export_text(f"Not graded: {result.reason}. Submit your solution as Markdown, LaTeX or "
                                  f"plain text ({', '.join(EXTENSIONS)}) with statements such as a_{{32}} = 0.284."),
            "visibility": "visible"})
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def grade_and_write(platform: str, key_path, folder, results_path) -> int:
    """Grade the upload ``folder`` against the key; write ``results_path`` whatever happens.

    Returns 0 when the submission was graded (an unreadable one is a grade too), 2 when the
    answer key could not be read (the results then say so).  A time limit that runs out
    writes a not-graded result and is raised again.
    """
    from symbolic_attn.grading.answer_key import load_answer_key

    stopped = None
    status = 0
    try:
        try:
            key = load_answer_key(key_path)
            if not key.questions:
                raise SymbolicAttnError(f"{shown(str(key_path))}: no [[questions]]: an answer key is needed to grade")
        except SymbolicAttnError as error:
            result, status = _not_graded(f"the autograder's answer key could not be read ({error}); "
                                         "tell your instructor"), 2
        else:
            result = grade_folder(key, folder)
    except TimeLimitError as error:
        stopped = error
        result = _not_graded(f"grading stopped: {error}")
    _write_text(Path(results_path), results_text(platform, result))
    if stopped is not None:
        raise stopped
    return status


def _write_text(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except OSError as error:
        raise OutputError(f"{shown(str(path))}: cannot write the results ({error.strerror})") from None


# ------------------------------------------------------------------ wheels


def _source_tree() -> Path | None:
    """The repository this package runs from, when it does (not when installed from a wheel)."""
    root = Path(__file__).resolve().parents[2]
    try:
        project = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    if not re.search(r'^name\s*=\s*"symbolic-attn"', project, re.M) or not (root / "examples" / "course").is_dir():
        return None
    return root


def _run(command, what: str) -> subprocess.CompletedProcess:
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        lines = [line for line in (run.stderr or run.stdout).splitlines() if line.strip()
                 and "is neither a file nor a directory" not in line]
        raise OutputError(f"{what} failed: {' / '.join(lines[-3:])[:400]}")
    return run


def _setuptools_ok() -> bool:
    try:
        import setuptools
    except ImportError:
        return False
    return int(setuptools.__version__.split(".")[0]) >= 77


def project_wheel(dest: Path, wheel=None) -> Path:
    """This project's wheel in ``dest``: the one given, else built from the source tree
    (``pip wheel --no-deps`` on a copy of it, so the repository gets no build files), else
    repacked from the installed distribution."""
    dest.mkdir(parents=True, exist_ok=True)
    if wheel is not None:
        wheel = Path(wheel)
        if not wheel.is_file() or not wheel.name.startswith("symbolic_attn-") or wheel.suffix != ".whl":
            raise OutputError(f"--wheel {shown(str(wheel))}: not a symbolic_attn-*.whl file")
        return Path(shutil.copy2(wheel, dest / wheel.name))
    root = _source_tree()
    if root is None:
        return _repack_installed(dest)
    with tempfile.TemporaryDirectory(prefix="symbolic-attn-wheel-") as scratch:
        source = Path(scratch) / "src"
        source.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(root / name, source / name)
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
        shutil.copytree(root / "symbolic_attn", source / "symbolic_attn", ignore=ignore)
        shutil.copytree(root / "examples" / "course", source / "examples" / "course", ignore=ignore)
        built = Path(scratch) / "wheel"
        command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(built), str(source)]
        if _setuptools_ok():
            command.insert(5, "--no-build-isolation")  # no network needed for the build backend
        _run(command, "building the symbolic-attn wheel (pip wheel)")
        found = sorted(built.glob("symbolic_attn-*.whl"))
        if not found:
            raise OutputError("building the symbolic-attn wheel (pip wheel) made no wheel")
        return Path(shutil.copy2(found[0], dest / found[0].name))


def _repack_installed(dest: Path) -> Path:
    """The installed distribution as a wheel again: its files as RECORD lists them."""
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise OutputError("symbolic-attn is neither run from its source tree nor installed: give --wheel FILE") from None
    version = dist.version
    info = f"symbolic_attn-{version}.dist-info"
    target = dest / f"symbolic_attn-{version}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in dist.files or []:
            name = str(file).replace(os.sep, "/")
            top = name.split("/")[0]
            if name.startswith("..") or "__pycache__" in name or name.endswith(".pyc"):
                continue
            if top == info and name.split("/")[-1] in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json"):
                continue
            if top not in ("symbolic_attn", info):
                continue
            data = Path(file.locate()).read_bytes()
            archive.writestr(name, data)
            digest = urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{name},sha256={digest},{len(data)}")
        record.append(f"{info}/RECORD,,")
        archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return target


def dependency_wheels(wheel: Path, dest: Path) -> str:
    """Download the wheels ``wheel`` depends on into ``dest`` (``pip download``, binary wheels
    for CPython :data:`PYTHON_VERSION` on x86-64 Linux).  Returns "" when done, else why not
    (offline, say): the bundle then installs its dependencies from PyPI when it is set up."""
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--dest", str(dest), "--only-binary=:all:",
               "--platform", PLATFORM_TAG, "--python-version", PYTHON_VERSION, "--implementation", "cp", str(wheel)]
    try:
        _run(command, "pip download")
    except OutputError as error:
        return str(error)
    return ""


# ------------------------------------------------------------------ the bundles


_GRADESCOPE_SETUP = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, in /autograder/source, when it builds the image.
# It installs symbolic-attn from the wheels carried in wheels/ (%(offline)s)
# into a virtual environment of its own, $SYMBOLIC_ATTN_VENV (default /opt/symbolic-attn).
# SYMBOLIC_ATTN_BASE_PYTHON: the Python (>= 3.11) to build it with (default: the first
# python3, python3.13, python3.12, python3.11 found; else python3.11 from Ubuntu's archive).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="${SYMBOLIC_ATTN_VENV:-/opt/symbolic-attn}"
PYTHON="${SYMBOLIC_ATTN_BASE_PYTHON:-}"
WHEEL="$HERE/wheels/%(wheel)s"
usable() { "$1" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; }
if [ -z "$PYTHON" ]; then
    for candidate in python3 python3.13 python3.12 python3.11; do
        if command -v "$candidate" >/dev/null 2>&1 && usable "$candidate"; then PYTHON="$candidate"; break; fi
    done
fi
if [ -z "$PYTHON" ]; then
    # Gradescope's Ubuntu 22.04 images have Python 3.10: Python 3.11 is in Ubuntu's own archive.
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3.11 python3.11-venv
    PYTHON=python3.11
fi
"$PYTHON" -m venv "$VENV"
if ! "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-index --find-links "$HERE/wheels" "$WHEEL"; then
    echo "setup.sh: the carried wheels do not cover this machine: installing the dependencies from PyPI" >&2
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --find-links "$HERE/wheels" "$WHEEL"
fi
"$VENV/bin/python" -m symbolic_attn --version
"""

_GRADESCOPE_RUN = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission (it copies it to /autograder/run_autograder).
# Every solution file the student uploaded ($ROOT/submission, any depth) is graded as ONE
# submission against the key in $SOURCE/key/; the results go to $ROOT/results/results.json.
# SYMBOLIC_ATTN_AUTOGRADER_ROOT (default /autograder), SYMBOLIC_ATTN_AUTOGRADER_SOURCE
# (default $ROOT/source), SYMBOLIC_ATTN_PYTHON (default the interpreter setup.sh installed)
# and SYMBOLIC_ATTN_TIMEOUT (seconds, default %(timeout)s) point it elsewhere.
set -uo pipefail
ROOT="${SYMBOLIC_ATTN_AUTOGRADER_ROOT:-/autograder}"
SOURCE="${SYMBOLIC_ATTN_AUTOGRADER_SOURCE:-$ROOT/source}"
PYTHON="${SYMBOLIC_ATTN_PYTHON:-${SYMBOLIC_ATTN_VENV:-/opt/symbolic-attn}/bin/python}"
mkdir -p "$ROOT/results"
exec "$PYTHON" -m symbolic_attn --timeout "${SYMBOLIC_ATTN_TIMEOUT:-%(timeout)s}" autograder run gradescope \
    "$SOURCE/key/%(key)s" "$ROOT/submission" --results "$ROOT/results/results.json"
"""

_PRAIRIELEARN_DOCKERFILE = r"""# The external-grading image for PrairieLearn: symbolic-attn installed from the carried
# wheels (%(offline)s), and the grading script.
# Build and push it: docker build -t YOU/symbolic-attn-grader . && docker push YOU/symbolic-attn-grader
FROM python:%(python)s-slim
COPY wheels/ /opt/symbolic-attn/wheels/
RUN python -m pip install --no-cache-dir --disable-pip-version-check %(index)s--find-links /opt/symbolic-attn/wheels \
        /opt/symbolic-attn/wheels/%(wheel)s \
    && python -m symbolic_attn --version
COPY grade.sh /usr/local/bin/symbolic-attn-grade
RUN chmod 0755 /usr/local/bin/symbolic-attn-grade
CMD ["/usr/local/bin/symbolic-attn-grade"]
"""

_PRAIRIELEARN_GRADE = r"""#!/usr/bin/env bash
# PrairieLearn's external-grader entrypoint: the student's files are in $ROOT/student (all
# of them graded as ONE submission), the key in $ROOT/tests/%(key)s (the question's tests/
# folder); the results go to $ROOT/results/results.json.  SYMBOLIC_ATTN_GRADE_ROOT
# (default /grade), SYMBOLIC_ATTN_PYTHON (default python3) and SYMBOLIC_ATTN_TIMEOUT
# (seconds, default %(timeout)s: under PrairieLearn's 30 s, so the results are written in time).
set -uo pipefail
ROOT="${SYMBOLIC_ATTN_GRADE_ROOT:-/grade}"
PYTHON="${SYMBOLIC_ATTN_PYTHON:-python3}"
mkdir -p "$ROOT/results"
exec "$PYTHON" -m symbolic_attn --timeout "${SYMBOLIC_ATTN_TIMEOUT:-%(timeout)s}" autograder run prairielearn \
    "$ROOT/tests/%(key)s" "$ROOT/student" --results "$ROOT/results/results.json"
"""

_PRAIRIELEARN_INFO = {
    "gradingMethod": "External",
    "singleVariant": True,
    "externalGradingOptions": {
        "enabled": True,
        "image": "YOU/symbolic-attn-grader",
        "entrypoint": "/usr/local/bin/symbolic-attn-grade",
        "timeout": 30,
    },
}


def _key_name(key_path: Path) -> str:
    name = key_path.name
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,100}", name) or name.startswith("."):
        name = "exercise.toml"  # the scripts quote it, but keep it a plain name
    return name


def _check_key(key_path):
    from symbolic_attn.grading.answer_key import load_answer_key

    key = load_answer_key(key_path)
    if not key.questions:
        raise SymbolicAttnError(f"{shown(str(key_path))}: no [[questions]]: an answer key is needed to grade")
    return key


def _wheels(tree: Path, wheel, download: bool) -> tuple:
    """(project wheel, why the dependencies are not carried or "")."""
    folder = tree / "wheels"
    project = project_wheel(folder, wheel)
    why = dependency_wheels(project, folder) if download else "not downloaded (--no-download)"
    return project, why


def _offline(why: str) -> str:
    return ("no network needed" if not why
            else "its dependencies from PyPI: the dependency wheels were " + ("not downloaded" if "--no-download" in why
                                                                              else "not downloadable"))


def _write(path: Path, text: str, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")
    path.chmod(0o755 if executable else 0o644)


def _zip(tree: Path, target: Path) -> None:
    """``tree``'s files at the zip's root, executable bits kept (Gradescope runs them)."""
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in tree.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(path.relative_to(tree).as_posix(), date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | (path.stat().st_mode & 0o777)) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())


def _readme_gradescope(key: str, wheels, why: str) -> str:
    listed = "\n".join(f"    {name}" for name in wheels)
    network = ("All of symbolic-attn's dependencies are carried: setup.sh needs no network."
               if not why else f"The dependency wheels are not carried ({why}): setup.sh installs them from PyPI.")
    return f"""symbolic-attn autograder for Gradescope
=======================================

Upload autograder.zip as the assignment's autograder ("Zip file upload"; base image:
Ubuntu 22.04 or later).  It holds:

  setup.sh         installs symbolic-attn into /opt/symbolic-attn (once, at image build)
  run_autograder   grades /autograder/submission as ONE student, writes
                   /autograder/results/results.json
  key/{key}    the answer key
  wheels/
{listed}

{network}
Every solution file the student uploads (.md .markdown .tex .txt .toml, at any depth) is
read, in path order, as one submission; a submission with nothing to grade gets a visible
test "Submission" of score 0 saying why.
"""


def _readme_prairielearn(key: str, wheels, why: str) -> str:
    listed = "\n".join(f"    {name}" for name in wheels)
    network = ("All of symbolic-attn's dependencies are carried: building the image needs no PyPI."
               if not why else f"The dependency wheels are not carried ({why}): the image build installs them "
                               "from PyPI.")
    return f"""symbolic-attn external grader for PrairieLearn
==============================================

  Dockerfile       the grading image (python:{PYTHON_VERSION}-slim + symbolic-attn from wheels/)
  grade.sh         its entrypoint, /usr/local/bin/symbolic-attn-grade: grades /grade/student
                   as ONE submission against /grade/tests/{key}, writes
                   /grade/results/results.json
  tests/{key}  copy into the question's tests/ folder
  info.json        the externalGradingOptions to merge into the question's info.json
  wheels/
{listed}

1. docker build -t YOU/symbolic-attn-grader . && docker push YOU/symbolic-attn-grader
   (and put that name in info.json's "image");
2. copy tests/ into the question folder and merge info.json into the question's info.json.

{network}
The score is the exact ratio of points as a float (11/12 -> 0.9166666666666666); a
submission with nothing to grade is "gradable": false with the reason (invalid, no penalty).
Grading one submission takes a few seconds, well under the 30 s default timeout.
"""


def _replace_folder(tree: Path, out: Path, marker: str) -> None:
    """Put the finished ``tree`` at ``out``: new, empty, or an earlier bundle (``marker`` in it)."""
    if os.path.islink(out):
        raise OutputError(f"--out {shown(str(out))}: a link, not a folder")
    if out.exists():
        if not out.is_dir():
            raise OutputError(f"--out {shown(str(out))}: not a folder")
        entries = os.listdir(out)
        if entries and marker not in entries:
            raise OutputError(f"--out {shown(str(out))}: holds other files (it must be new, empty, or an earlier "
                              "bundle, which is replaced)")
        old = out.with_name(f".{out.name}.old.tmp")
        shutil.rmtree(old, ignore_errors=True)
        os.rename(out, old)
        os.rename(tree, out)
        shutil.rmtree(old, ignore_errors=True)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        os.rename(tree, out)


def _build(out, assemble) -> dict:
    out = Path(out)
    parent = out.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=parent))
    try:
        made = assemble(scratch)
        _replace_folder(scratch, out, made.pop("marker"))
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return made


def _copy_key(key_path: Path, target: Path) -> None:
    """The key's bytes as the one file reader reads them (a regular file, size first)."""
    from symbolic_attn.exact.source import EXERCISE, read_bytes

    target.write_bytes(read_bytes(key_path, EXERCISE))


def build_gradescope(key_path, out, wheel=None, download: bool = True, timeout: int = 300) -> dict:
    """``out/autograder.zip`` and its unpacked tree ``out/autograder/``; returns what was made."""
    key_path = Path(key_path)
    _check_key(key_path)
    key = _key_name(key_path)

    def assemble(scratch: Path) -> dict:
        tree = scratch / "autograder"
        project, why = _wheels(tree, wheel, download)
        (tree / "key").mkdir()
        _copy_key(key_path, tree / "key" / key)
        values = {"wheel": project.name, "key": key, "timeout": timeout, "offline": _offline(why)}
        _write(tree / "setup.sh", _GRADESCOPE_SETUP % values, executable=True)
        _write(tree / "run_autograder", _GRADESCOPE_RUN % values, executable=True)
        wheels = sorted(p.name for p in (tree / "wheels").iterdir())
        _write(tree / "README.txt", _readme_gradescope(key, wheels, why))
        _zip(tree, scratch / "autograder.zip")
        return {"marker": "autograder.zip", "wheels": wheels, "download": why}

    return _build(out, assemble)


def build_prairielearn(key_path, out, wheel=None, download: bool = True, timeout: int = 25) -> dict:
    """An external-grader folder: ``Dockerfile``, ``grade.sh``, ``tests/KEY``, ``wheels/``."""
    key_path = Path(key_path)
    _check_key(key_path)
    key = _key_name(key_path)

    def assemble(scratch: Path) -> dict:
        project, why = _wheels(scratch, wheel, download)
        (scratch / "tests").mkdir()
        _copy_key(key_path, scratch / "tests" / key)
        values = {"wheel": project.name, "key": key, "timeout": timeout, "python": PYTHON_VERSION,
                  "offline": _offline(why), "index": "" if why else "--no-index "}
        _write(scratch / "Dockerfile", _PRAIRIELEARN_DOCKERFILE % values)
        _write(scratch / "grade.sh", _PRAIRIELEARN_GRADE % values, executable=True)
        _write(scratch / "info.json", json.dumps(_PRAIRIELEARN_INFO, indent=2) + "\n")
        wheels = sorted(p.name for p in (scratch / "wheels").iterdir())
        _write(scratch / "README.txt", _readme_prairielearn(key, wheels, why))
        return {"marker": "Dockerfile", "wheels": wheels, "download": why}

    return _build(out, assemble)


def example_course() -> Path:
    """The example course folder: the installed package data, else the repository's."""
    installed = Path(__file__).resolve().parents[1] / "course"
    if (installed / "exercise.toml").is_file():
        return installed
    root = _source_tree()
    if root is None:
        raise OutputError("the example course is not installed with this copy of symbolic-attn")
    return root / "examples" / "course"


def describe(made: dict) -> str:
    """One line about the wheels a bundle carries."""
    why = made["download"]
    text = f"{len(made['wheels'])} wheels carried ({', '.join(made['wheels'])})"
    return text if not why else text + f"; dependencies installed from PyPI at setup: {one_line(why)}"
