"""``symbolic-attn web build`` and ``web serve`` without a browser: downloads pinned by
sha256 (a mismatch is one line, exit 2), offline builds from the cache, the same bytes on
every build, the project's own wheel, the server bound to 127.0.0.1.

The downloads (28 MB, through ``npm pack`` and ``pip download``) are kept in the cache
folder of :func:`site_cache` between runs; where they cannot be had (no registry) the
build tests skip, unless ``SYMBOLIC_ATTN_REQUIRE`` lists ``web`` (CI), where they fail.
"""

import hashlib
import http.client
import os
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from symbolic_attn import cli
from symbolic_attn.errors import OutputError, SiteBuildError
from symbolic_attn.web import build, pins
from symbolic_attn.web.serve import HOST, make_server

ROOT = Path(__file__).resolve().parent.parent
REQUIRED = {name.strip() for name in os.environ.get("SYMBOLIC_ATTN_REQUIRE", "").split(",") if name.strip()}


def site_cache() -> Path:
    """The download cache the web tests share: $SYMBOLIC_ATTN_WEB_CACHE, else the default."""
    return build.default_cache()


def filled_cache() -> Path:
    """The cache with every pinned file in it (downloaded once), or a skip (a failure in CI)."""
    cache = site_cache()
    try:
        for pin in pins.PINS:
            build.fetch(pin, cache)
    except SiteBuildError as error:
        if "web" in REQUIRED:
            pytest.fail(f"the site's downloads are required by SYMBOLIC_ATTN_REQUIRE: {error}")
        pytest.skip(f"the site's downloads cannot be had here: {error}")
    return cache


def tree(folder: Path) -> dict[str, str]:
    return {path.relative_to(folder).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def command(*argv, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SYMPY_GROUND_TYPES": "python"}
    return subprocess.run([sys.executable, "-m", "symbolic_attn", *argv], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


def test_the_page_s_constants_are_the_command_line_s():
    assert build.DEFAULT_TIMEOUT == cli.DEFAULT_TIMEOUT
    assert build.SITE_VERSION == cli.__version__


def test_every_pin_has_a_sha256_and_the_katex_of_the_js_tests():
    import json

    for pin in pins.PINS:
        assert len(pin.sha256) == 64 and int(pin.sha256, 16) >= 0, pin
        assert pin.version in pin.filename, pin
    tests_js = json.loads((ROOT / "tests" / "js" / "package.json").read_text())
    assert tests_js["dependencies"]["katex"] == pins.KATEX.version


def test_a_file_whose_sha256_is_not_pinned_is_refused(tmp_path):
    pin = pins.WHEELS[0]
    (tmp_path / pin.filename).write_bytes(b"not the wheel")
    with pytest.raises(SiteBuildError, match=rf"^.*{pin.filename}: sha256 [0-9a-f]{{64}} is not the pinned {pin.sha256}"):
        build.fetch(pin, tmp_path, offline=True)


def test_the_command_line_says_it_in_one_line_exit_2(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / pins.PYODIDE.filename).write_bytes(b"tampered")
    done = command("web", "build", "--out", str(tmp_path / "site"), "--cache", str(cache), "--offline")
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("symbolic-attn: error: ")
    assert "is not the pinned " + pins.PYODIDE.sha256 in done.stderr
    assert not (tmp_path / "site").exists()


def test_an_offline_build_without_the_file_names_it(tmp_path):
    with pytest.raises(SiteBuildError, match=r"^pyodide-314\.0\.8\.tgz is not in the cache .* and the build is offline"):
        build.build_site(tmp_path / "site", cache=tmp_path / "empty", offline=True)
    assert not (tmp_path / "site").exists()
    assert list(tmp_path.iterdir()) == []  # no temporary folder left behind


def test_a_folder_of_the_user_s_is_never_replaced(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(OutputError, match=r"^--out .*: the folder is not empty and holds no site built before"):
        build.build_site(tmp_path, cache=tmp_path / "empty", offline=True)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_the_project_wheel_is_the_same_bytes_twice_and_complete():
    name, first = build.project_wheel()
    again = build.project_wheel()[1]
    assert name == f"symbolic_attn-{cli.__version__}-py3-none-any.whl"
    assert first == again
    import io

    with zipfile.ZipFile(io.BytesIO(first)) as archive:
        names = archive.namelist()
        assert names == sorted(names[:-4]) + names[-4:]  # sources in order, then the dist-info
        assert "symbolic_attn/cli/browser.py" in names and "symbolic_attn/web/build.py" in names
        assert not any(n.startswith("symbolic_attn/web/static/") or "__pycache__" in n for n in names)
        assert {info.date_time for info in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        record = archive.read(f"symbolic_attn-{cli.__version__}.dist-info/RECORD").decode()
        assert len(record.splitlines()) == len(names)


def test_building_twice_gives_the_same_bytes(tmp_path):
    cache = filled_cache()
    first, second = tmp_path / "one", tmp_path / "two"
    sizes = build.build_site(first, cache=cache, offline=True)
    build.build_site(second, cache=cache, offline=True)
    assert tree(first) == tree(second)
    assert sizes["pyodide"] > 10e6 and sizes["wheels"] > 10e6
    # Rebuilding over a site replaces it, and the sums file lists every other file.
    build.build_site(first, cache=cache, offline=True)
    assert tree(first) == tree(second)
    listed = {line.split("  ", 1)[1] for line in (first / "SHA256SUMS").read_text().splitlines()}
    assert listed == set(tree(first)) - {"SHA256SUMS"}
    for name in ("index.html", "app.js", "app.css", "worker.js", "site.json", "pyodide/pyodide.asm.wasm",
                 "katex/katex.min.js", "wheels/" + pins.WHEELS[2].filename):
        assert (first / name).is_file(), name
    with zipfile.ZipFile(first / "wheels" / pins.WHEELS[1].filename) as sympy:  # its tests left out
        names = sympy.namelist()
        assert "sympy/__init__.py" in names and not [n for n in names if "/tests/" in n]
        record = sympy.read("sympy-1.14.0.dist-info/RECORD").decode().splitlines()
        assert {line.split(",", 1)[0] for line in record} == set(names)
    print(f"\nsite size: {sum(sizes.values()) / 1e6:.1f} MB "
          + ", ".join(f"{part} {size / 1e6:.2f} MB" for part, size in sizes.items()))


def test_the_page_calls_no_eval_and_sets_no_inner_html():
    static = ROOT / "symbolic_attn" / "web" / "static"
    for name in ("app.js", "worker.js"):
        text = (static / name).read_text()
        for banned in ("eval(", "innerHTML", "outerHTML", "new Function", "document.write", "localStorage",
                       "sessionStorage", "document.cookie", "indexedDB", "http://", "https://"):
            assert banned not in text, f"{name}: {banned}"


def test_serve_binds_127_0_0_1_only(tmp_path):
    (tmp_path / "index.html").write_text("<!DOCTYPE html><title>t</title>\n")
    (tmp_path / "a.wasm").write_bytes(b"\0asm")
    (tmp_path / "sub").mkdir()
    server = make_server(tmp_path, 0)
    try:
        assert server.server_address[0] == HOST == "127.0.0.1"
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.server_address[1]
        answers = {}
        for path in ("/", "/a.wasm", "/sub/", "/../../etc/passwd"):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("GET", path)
            response = connection.getresponse()
            answers[path] = (response.status, response.getheader("Content-Type"))
            response.read()
            connection.close()
        assert answers["/"] == (200, "text/html; charset=utf-8")
        assert answers["/a.wasm"] == (200, "application/wasm")
        assert answers["/sub/"][0] == 404  # no folder listings
        assert answers["/../../etc/passwd"][0] == 404
    finally:
        server.shutdown()
        server.server_close()


def test_serve_without_a_site_is_one_line_exit_2(tmp_path):
    done = command("web", "serve", str(tmp_path), "--port", "0")
    assert done.returncode == 2
    assert done.stderr.startswith("symbolic-attn: error: ") and "no index.html there" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    bad = command("web", "serve", str(tmp_path), "--port", "70000")
    assert bad.returncode == 2 and "expected a port number from 0 to 65535" in bad.stderr
