"""``build_site``: the static site, byte for byte the same on every build.

What it writes (every path relative to the output folder)::

    index.html app.css app.js worker.js  the page (package data, symbolic_attn/web/static/)
    site.json                           what the worker loads: versions, wheels, examples, time limit
    pyodide/                            the Pyodide core, from the npm package (pins.PYODIDE_FILES)
    katex/                              katex.min.js, katex.min.css, fonts/*.woff2 (npm)
    wheels/                             mpmath, sympy (its tests left out), python-flint (wasm) from PyPI;
                                        this project's own
    SHA256SUMS                          the sha256 of every other file, sorted by path

Downloads go through the registries' own clients (``npm pack``, ``pip download``) into a
cache folder (``cache``, else ``$SYMBOLIC_ATTN_WEB_CACHE``, else
``$XDG_CACHE_HOME/symbolic-attn/web``, else ``~/.cache/symbolic-attn/web``), and each file
is accepted only if its sha256 is the pinned one (:mod:`symbolic_attn.web.pins`).  With
``offline=True`` nothing is downloaded: every pinned file must already be in the cache
(copy a cache folder from a machine that has one).  This project's wheel is written here
from the source tree beside this module, with fixed timestamps and sorted entries, so two
builds from the same tree give the same bytes.  The folder is written whole into a
temporary sibling and then put in place, so a failed build leaves the old site as it was.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from symbolic_attn.errors import OutputError, SiteBuildError, shown
from symbolic_attn.web import pins

__all__ = ["build_site", "default_cache", "fetch", "project_wheel", "EXAMPLES", "SITE_VERSION"]

#: The project's version, as in pyproject.toml (the wheel's name carries it).
SITE_VERSION = "0.1.0"
#: The command line's default --timeout, which the page applies to every computation.
DEFAULT_TIMEOUT = 60
_STATIC = Path(__file__).resolve().parent / "static"
_PACKAGE = Path(__file__).resolve().parent.parent  # symbolic_attn/
_ROOT = _PACKAGE.parent
#: The example exercises and derivations offered on the page (files of examples/).
EXAMPLES = {
    "define": ("define/layer_norm.toml", "define/heads.toml", "define/positional.toml", "define/encoder.toml"),
    "check": ("readme.toml", "004_by_hand.toml", "002_causal.toml", "000_permutation.toml"),
    "steps": ("steps/shift_correct.md", "steps/shift_exp_of_sum.md", "steps/mask_renormalize.md",
              "steps/variance_correct.tex"),
}
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
#: Wheels whose test suites stay out of the site (SymPy's is a third of its unpacked size).
_WITHOUT_TESTS = ("sympy",)


def default_cache() -> Path:
    """Where downloads are kept between builds when no ``cache`` is given."""
    if os.environ.get("SYMBOLIC_ATTN_WEB_CACHE"):
        return Path(os.environ["SYMBOLIC_ATTN_WEB_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "symbolic-attn" / "web"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _download(pin: pins.Pin, folder: Path) -> None:
    if pin.registry == "npm":
        command = ["npm", "pack", f"{pin.name}@{pin.version}", "--pack-destination", str(folder),
                   "--silent", "--no-audit", "--no-fund"]
    else:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                   "--dest", str(folder), f"{pin.name}=={pin.version}"]
        if pin.platform:
            command[6:6] = ["--platform", pin.platform, "--python-version", "3.14", "--implementation", "cp",
                            "--abi", "cp314"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise SiteBuildError(f"downloading {pin.filename}: {command[0]} could not run: {error}") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise SiteBuildError(f"downloading {pin.filename}: {' '.join(command[:3])} failed (exit {done.returncode}): "
                             f"{shown(last, 160)}")


def fetch(pin: pins.Pin, cache: Path, offline: bool = False) -> Path:
    """The pinned file from the cache, downloaded first unless it is there or ``offline``;
    raises :class:`SiteBuildError` when it is missing or its sha256 is not the pinned one."""
    path = cache / pin.filename
    if not path.is_file():
        if offline:
            raise SiteBuildError(f"{pin.filename} is not in the cache {shown(str(cache), 120)} and the build is "
                                 "offline: build once online, or copy a cache folder there")
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache, prefix=".download.") as scratch:
            _download(pin, Path(scratch))
            got = Path(scratch) / pin.filename
            if not got.is_file():
                raise SiteBuildError(f"downloading {pin.filename}: the registry client wrote no such file")
            _verify(pin, got)
            os.replace(got, path)
    _verify(pin, path)
    return path


def _verify(pin: pins.Pin, path: Path) -> None:
    actual = _sha256(path)
    if actual != pin.sha256:
        raise SiteBuildError(f"{shown(str(path), 120)}: sha256 {actual} is not the pinned {pin.sha256} "
                             f"({pin.name} {pin.version}); delete the file to download it again")


def _source_files() -> list[tuple[str, Path]]:
    """(name in the wheel, file) for every module of the package; the page's files stay out."""
    files = []
    for path in sorted(_PACKAGE.rglob("*.py")):
        relative = path.relative_to(_PACKAGE.parent).as_posix()
        if "__pycache__" in relative or relative.startswith("symbolic_attn/web/static/"):
            continue
        files.append((relative, path))
    return files


def project_wheel() -> tuple[str, bytes]:
    """This project's wheel (pure Python), built from the source tree: fixed timestamps and
    modes, entries in sorted order, so the same tree always gives the same bytes."""
    name = f"symbolic_attn-{SITE_VERSION}-py3-none-any.whl"
    info = f"symbolic_attn-{SITE_VERSION}.dist-info"
    entries = [(relative, path.read_bytes()) for relative, path in _source_files()]
    entries.append((f"{info}/METADATA", (
        f"Metadata-Version: 2.1\nName: symbolic-attn\nVersion: {SITE_VERSION}\n"
        "Summary: Transformer attention in exact arithmetic (the build for the web page)\n"
        "Requires-Dist: sympy==1.14.*\nRequires-Dist: python-flint<0.10,>=0.7\n").encode()))
    entries.append((f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: symbolic-attn web build\n"
                                     b"Root-Is-Purelib: true\nTag: py3-none-any\n"))
    entries.append((f"{info}/top_level.txt", b"symbolic_attn\n"))
    record = []
    for relative, data in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{relative},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    entries.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for relative, data in entries:
            item = zipfile.ZipInfo(relative, date_time=_ZIP_TIME)
            item.compress_type = zipfile.ZIP_DEFLATED
            item.external_attr = 0o644 << 16
            item.create_system = 3
            archive.writestr(item, data, compresslevel=9)
    return name, buffer.getvalue()


def without_tests(wheel: bytes) -> bytes:
    """The wheel without its test suite (every ``.../tests/...`` file, and their RECORD
    lines), as Pyodide's own build of SymPy ships it: a third less to unpack in the
    browser.  Entries keep their order, timestamps are fixed: the same input, the same bytes."""
    kept = []
    with zipfile.ZipFile(io.BytesIO(wheel)) as archive:
        for info in archive.infolist():
            if "/tests/" in f"/{info.filename}":
                continue
            data = archive.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                lines = data.decode("utf-8").splitlines()
                data = "".join(line + "\n" for line in lines if "/tests/" not in "/" + line.split(",", 1)[0]).encode()
            kept.append((info.filename, data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in kept:
            item = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            item.compress_type = zipfile.ZIP_DEFLATED
            item.external_attr = 0o644 << 16
            item.create_system = 3
            archive.writestr(item, data, compresslevel=6)
    return buffer.getvalue()


def _from_tarball(tarball: Path, members: dict[str, str], target: Path) -> None:
    """Copy ``members`` (path in the npm tarball -> path under ``target``) out of it."""
    with tarfile.open(tarball, "r:gz") as archive:
        for member, destination in members.items():
            try:
                stream = archive.extractfile(f"package/{member}")
            except KeyError:
                stream = None
            if stream is None:
                raise SiteBuildError(f"{tarball.name}: has no file package/{member}")
            out = target / destination
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(stream.read())


def _katex_members(tarball: Path) -> dict[str, str]:
    with tarfile.open(tarball, "r:gz") as archive:
        fonts = sorted(name[len("package/dist/"):] for name in archive.getnames()
                       if name.startswith("package/dist/fonts/") and name.endswith(".woff2"))
    members = {"dist/katex.min.js": "katex.min.js", "dist/katex.min.css": "katex.min.css"}
    members.update({f"dist/{font}": font for font in fonts})
    return members


def _examples() -> dict[str, list[dict[str, str]]]:
    examples: dict[str, list[dict[str, str]]] = {}
    for kind, names in EXAMPLES.items():
        examples[kind] = []
        for name in names:
            path = _ROOT / "examples" / name
            if path.is_file():
                text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
                examples[kind].append({"name": Path(name).name, "text": text})
    return examples


def _write_files(target: Path, cache: Path, offline: bool) -> None:
    for path in sorted(_STATIC.iterdir()):
        if path.is_file():
            shutil.copyfile(path, target / path.name)
    _from_tarball(fetch(pins.PYODIDE, cache, offline), {name: f"pyodide/{name}" for name in pins.PYODIDE_FILES},
                  target)
    katex = fetch(pins.KATEX, cache, offline)
    _from_tarball(katex, {member: f"katex/{name}" for member, name in _katex_members(katex).items()}, target)
    wheels = target / "wheels"
    wheels.mkdir()
    for pin in pins.WHEELS:
        source = fetch(pin, cache, offline)
        if pin.name in _WITHOUT_TESTS:
            (wheels / pin.filename).write_bytes(without_tests(source.read_bytes()))
        else:
            shutil.copyfile(source, wheels / pin.filename)
    name, data = project_wheel()
    (wheels / name).write_bytes(data)
    site = {
        "pyodide": pins.PYODIDE.version,
        "katex": pins.KATEX.version,
        "wheels": [pin.filename for pin in pins.WHEELS] + [name],
        "timeout_seconds": DEFAULT_TIMEOUT,
        "examples": _examples(),
    }
    (target / "site.json").write_text(json.dumps(site, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                      encoding="utf-8")
    sums = sorted(path.relative_to(target).as_posix() for path in target.rglob("*") if path.is_file())
    (target / "SHA256SUMS").write_text("".join(f"{_sha256(target / p)}  {p}\n" for p in sums), encoding="utf-8")


def _is_site(folder: Path) -> bool:
    return (folder / "site.json").is_file() and (folder / "SHA256SUMS").is_file()


def build_site(out: str | os.PathLike[str], cache: str | os.PathLike[str] | None = None,
               offline: bool = False) -> dict[str, int]:
    """Write the site into ``out`` (replacing a site built there before, never anything
    else); returns the bytes of each part: ``pyodide``, ``katex``, ``wheels``, ``page``."""
    out = Path(out)
    cache = Path(cache) if cache is not None else default_cache()
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise OutputError(f"--out {shown(str(out), 120)}: not a folder")
    if out.is_dir() and any(out.iterdir()) and not _is_site(out):
        raise OutputError(f"--out {shown(str(out), 120)}: the folder is not empty and holds no site built "
                          "before (no site.json and SHA256SUMS): nothing was written")
    parent = out.resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(dir=parent, prefix=f".{out.name}.", suffix=".tmp"))
    except OSError as error:
        raise OutputError(f"--out {shown(str(out), 120)}: cannot write there: {error.strerror}") from None
    try:
        _write_files(scratch, cache, offline)
        scratch.chmod(0o755)
        if out.is_dir():
            old = parent / f"{scratch.name}.old"
            os.replace(out, old)
            os.replace(scratch, out)
            shutil.rmtree(old)
        else:
            os.replace(scratch, out)
    finally:
        if scratch.exists():
            shutil.rmtree(scratch)
    return site_sizes(out)


def site_sizes(out: Path) -> dict[str, int]:
    """Bytes of each part of a built site: pyodide, katex, wheels, page (the rest)."""
    sizes = {"pyodide": 0, "katex": 0, "wheels": 0, "page": 0}
    for path in out.rglob("*"):
        if path.is_file():
            top = path.relative_to(out).parts[0]
            sizes[top if top in sizes else "page"] += path.stat().st_size
    return sizes
