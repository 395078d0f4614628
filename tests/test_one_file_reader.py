"""Every input file goes through the one file reader (:mod:`symbolic_attn.exact.source`).

Every kind of file through every front end -- an exercise (``check``), an answer key and a
solution (``grade``), a computation file (``run``), a derivation script (``derive``,
``list``), an implementation (``compare``) -- in every encoding read (UTF-8, UTF-8 with a
byte-order mark, UTF-16 LE and BE with one) and every line ending (LF, CRLF, CR alone),
and what is refused: other encodings (with the byte offset), a FIFO, a directory, an
oversized file, a TOML bomb of dotted keys (as an exercise and as a solution: run in a
subprocess with a timeout, since before the pre-scan covered solutions it took minutes).
"""

import ast
import codecs
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from symbolic_attn.cli import main
from symbolic_attn.errors import InputFileError
from symbolic_attn.exact import source as reader
from symbolic_attn.exact.source import (EXERCISE, SOLUTION, FileKind, check_file, decode_text, parse_toml, read_bytes,
                                        read_text)

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "symbolic_attn"

EXERCISE_TEXT = """title = "one row"
[inputs]
V = [[1, 0], [0, 2], [3, 1]]
[attention]
scores = [["0", "ln(2)", "ln(3)"]]
value = "V"
[[claims]]
quantity = "weights"
value = "[1/6, 2/6, 3/6]"
[[questions]]
name = "w"
quantity = "weights"
row = 1
col = 3
points = 2
"""
SOLUTION_MD = "My work.\n\n$w = \\frac{1}{2}$\n"
SOLUTION_TOML = 'w = "0.5"\n'
COMPUTATION_TEXT = """[inputs]
X = [[1, 0], [0, 1]]
[define]
N = "X + X"
"""

ENCODINGS = {
    "utf-8": lambda text: text.encode("utf-8"),
    "utf-8-bom": lambda text: codecs.BOM_UTF8 + text.encode("utf-8"),
    "utf-16-le": lambda text: codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
    "utf-16-be": lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be"),
}
ENDINGS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}


def encoded(text: str, encoding: str, ending: str) -> bytes:
    return ENCODINGS[encoding](text.replace("\n", ENDINGS[ending]))


def run_main(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_process(*argv, timeout=60):
    """The command in a fresh process; a hang is a failure (TimeoutExpired), never a stuck suite."""
    env = {**os.environ, "SYMPY_GROUND_TYPES": "python", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "symbolic_attn", *map(str, argv)], capture_output=True,
                          text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, done.stderr


def one_line_error(err: str) -> None:
    assert err.count("\n") == 1 and err.startswith("symbolic-attn: error: "), err
    assert "Traceback" not in err, err


def graded(out_dir: Path, student: str) -> dict:
    return json.loads((out_dir / f"{student}.json").read_text(encoding="utf-8"))


# --------------------------------------------------------------- the reader itself


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("ending", ENDINGS)
def test_decode_every_encoding_and_line_ending(encoding, ending):
    text = "a = 1\nb = 'é'\n\nc = 3\n"
    assert decode_text(encoded(text, encoding, ending), "t") == text


@pytest.mark.parametrize("data,expected", [
    (b'a = "\xe9"', r"^t: not UTF-8 text \(invalid byte 0xe9 at offset 5\); save it as UTF-8$"),
    (b"ab\xe2\x82", r"^t: not UTF-8 text \(a character cut short at offset 2\)"),
    (b"a\x00b", r"^t: binary data \(a NUL byte at offset 1\), not a text file$"),
    (codecs.BOM_UTF16_LE + "ab".encode("utf-16-le") + b"x", r"^t: not UTF-16 LE text \(a character cut short at offset 6\)"),
    (codecs.BOM_UTF16_BE + "a\x00".encode("utf-16-be"), r"^t: binary data \(a NUL character at offset 4\)"),
    (codecs.BOM_UTF16_LE + b"\x00\xdc" + b"a\x00", r"^t: not UTF-16 LE text \(invalid byte 0x00 at offset 2\)"),
    (codecs.BOM_UTF32_LE + "a".encode("utf-32-le"), r"^t: UTF-32 text \(byte-order mark at offset 0\) is not read"),
], ids=["latin-1", "cut-utf-8", "nul", "odd-utf-16", "nul-utf-16", "lone-surrogate", "utf-32"])
def test_other_encodings_are_refused_with_the_byte_offset(data, expected):
    with pytest.raises(InputFileError, match=expected) as caught:
        decode_text(data, "t")
    assert caught.value.offset is not None and str(caught.value).count("\n") == 0


def test_the_error_keeps_its_parts_through_pickling():
    import pickle

    error = InputFileError("f.toml", "a key of more than 16 dotted parts", line=3, offset=None)
    again = pickle.loads(pickle.dumps(error))
    assert (str(again), again.source, again.reason, again.line) == (str(error), "f.toml", error.reason, 3)
    assert str(again) == "f.toml: line 3: a key of more than 16 dotted parts"


def test_size_is_checked_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "big.toml"
    with path.open("wb") as handle:
        handle.truncate(EXERCISE.limit + 1)
    opened = []
    monkeypatch.setattr(reader.os, "open", lambda *a, **k: opened.append(a) or (_ for _ in ()).throw(AssertionError))
    with pytest.raises(InputFileError, match=r"exercise file of 1000001 bytes is larger than the limit of 1000000"):
        read_bytes(path, EXERCISE)
    assert opened == []  # refused from stat: never opened


def test_a_link_is_followed_or_refused_as_the_kind_says(tmp_path):
    target = tmp_path / "real.md"
    target.write_text("w = 1\n")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    assert read_text(link, EXERCISE) == "w = 1\n"
    with pytest.raises(InputFileError, match=r"link\.md: is a symbolic link, not a regular solution file"):
        read_text(link, SOLUTION)
    loop = tmp_path / "loop.md"
    loop.symlink_to(loop)
    with pytest.raises(InputFileError, match=r"loop\.md: is a symbolic link"):
        read_text(loop, SOLUTION)
    with pytest.raises(InputFileError, match=r"loop\.md: cannot read the file"):
        read_text(loop, EXERCISE)


def test_a_fifo_swapped_in_after_the_check_does_not_block(tmp_path, monkeypatch):
    path = tmp_path / "pipe.toml"
    os.mkfifo(path)
    monkeypatch.setattr(reader, "check_file", lambda *args: None)  # as if it was a file when checked
    with pytest.raises(InputFileError, match=r"is a FIFO \(named pipe\), not a regular exercise file"):
        read_bytes(path, EXERCISE)  # O_NONBLOCK: the open returns, fstat refuses it


def test_check_file_bounds_what_another_reader_opens(tmp_path):
    small = FileKind("script", 10)
    path = tmp_path / "a.py"
    path.write_text("x = 1234567890\n")
    with pytest.raises(InputFileError, match=r"script of 15 bytes is larger than the limit of 10 bytes"):
        check_file(path, small)
    with pytest.raises(InputFileError, match=r"is a directory, not a regular script"):
        check_file(tmp_path, small)


def test_toml_line_numbers_are_the_file_lines_with_cr_alone_and_multi_line_strings():
    text = 'a = """x\ny\nz"""\r\rb = 1\rc' + ".c" * 20 + " = 1\r"
    with pytest.raises(InputFileError, match=r"^t\.toml: line 6: a key of more than 16 dotted parts$"):
        parse_toml(decode_text(text.encode(), "t.toml"), "t.toml")


# --------------------------------------------------------------- every front end reads every encoding

FRONT_ENDS = ["check", "grade-key", "grade-md", "grade-toml", "run"]


def front_end(capsys, tmp_path, which, data: bytes):
    """Run the front end on ``data`` as its file; (exit status, what it printed or graded)."""
    if which == "check":
        path = tmp_path / "exercise.toml"
        path.write_bytes(data)
        code, out, err = run_main(capsys, "check", path)
        return code, out.replace(str(path), "FILE") + err
    if which == "run":
        path = tmp_path / "computation.toml"
        path.write_bytes(data)
        code, out, err = run_main(capsys, "run", path)
        return code, out + err
    key, submissions = tmp_path / "key.toml", tmp_path / "subs"
    submissions.mkdir()
    key.write_bytes(data if which == "grade-key" else EXERCISE_TEXT.encode())
    solution = submissions / ("ann.toml" if which == "grade-toml" else "ann.md")
    solution.write_bytes(data if which != "grade-key" else SOLUTION_MD.encode())
    code, out, err = run_main(capsys, "grade", key, submissions, "--out", tmp_path / "out", "--jobs", "1")
    result = graded(tmp_path / "out", "ann") if code in (0, 1) else {}  # 1: ann not gradable, files written
    return code, (out + err, result.get("score"), result.get("reason"))


def original(which):
    return {"check": EXERCISE_TEXT, "grade-key": EXERCISE_TEXT, "grade-md": SOLUTION_MD, "grade-toml": SOLUTION_TOML,
            "run": COMPUTATION_TEXT}[which]


@pytest.mark.parametrize("which", FRONT_ENDS)
@pytest.mark.parametrize("encoding,ending", [(e, n) for e in ENCODINGS for n in ENDINGS if (e, n) != ("utf-8", "lf")])
def test_every_front_end_reads_every_encoding_and_line_ending(capsys, tmp_path, which, encoding, ending):
    reference_folder = tmp_path / "reference"
    reference_folder.mkdir()
    expected = front_end(capsys, reference_folder, which, original(which).encode())
    assert expected[0] == 0, expected
    if which.startswith("grade"):
        assert expected[1][1] == 2, expected  # the reference itself is graded: full marks
    got = front_end(capsys, tmp_path, which, encoded(original(which), encoding, ending))
    assert got == expected


@pytest.mark.parametrize("which", ["check", "grade-key", "run"])
def test_an_error_names_the_line_of_a_cr_only_file(capsys, tmp_path, which):
    text = "title = 't'\r[inputs]\rV = [[1, 0]] x\r"  # junk after the value on line 3
    if which == "check":
        path = tmp_path / "e.toml"
        path.write_bytes(text.encode())
        code, _, err = run_main(capsys, "check", path)
    elif which == "run":
        path = tmp_path / "c.toml"
        path.write_bytes(text.encode())
        code, _, err = run_main(capsys, "run", path)
    else:
        path = tmp_path / "k.toml"
        path.write_bytes(text.encode())
        (tmp_path / "ann.md").write_text(SOLUTION_MD)
        code, _, err = run_main(capsys, "grade", path, tmp_path / "ann.md", "--jobs", "1")
    assert code == 2
    one_line_error(err)
    assert "not valid TOML" in err and "line 3" in err, err


def test_a_cr_only_solution_reports_problems_on_their_lines(tmp_path):
    from symbolic_attn.grading.submissions import read_submission

    path = tmp_path / "ann.md"
    path.write_bytes(encoded("first\nsecond\nw = 0.2.3\n", "utf-16-le", "cr"))
    submission = read_submission(path)
    assert [problem.line for problem in submission.problems] == [3]


@pytest.mark.parametrize("which", FRONT_ENDS)
@pytest.mark.parametrize("bad,expected", [
    (b"\xe9", r"not UTF-8 text \(invalid byte 0xe9 at offset {offset}\)"),
    (codecs.BOM_UTF32_LE + b"x\x00\x00\x00", r"UTF-32 text \(byte-order mark at offset 0\) is not read"),
], ids=["latin-1", "utf-32"])
def test_every_front_end_refuses_other_encodings_naming_the_offset(capsys, tmp_path, which, bad, expected):
    text = original(which).encode()
    data = text + b"# " + bad + b"\n" if bad == b"\xe9" else bad
    code, shown = front_end(capsys, tmp_path, which, data)
    message = expected.format(offset=len(text) + 2)
    if which in ("grade-md", "grade-toml"):  # the student is not gradable (exit 1); the rest is graded
        assert code == 1 and shown[1] == 0, shown
        assert __import__("re").search(message, shown[2]), shown
    else:
        assert code == 2
        printed = shown if isinstance(shown, str) else shown[0]
        one_line_error(printed)
        assert __import__("re").search(message, printed), printed


# --------------------------------------------------------------- what is not a regular file


def fifo_or_directory(tmp_path: Path, kind: str, name: str) -> Path:
    path = tmp_path / name
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    return path


MESSAGES = {"fifo": "is a FIFO (named pipe), not a regular", "directory": "is a directory, not a regular"}


@pytest.mark.parametrize("kind", ["fifo", "directory"])
@pytest.mark.parametrize("which", ["check", "run", "grade-key", "grade-solution", "derive", "list", "compare"])
def test_every_front_end_refuses_a_fifo_or_directory_at_once(tmp_path, kind, which):
    folder = tmp_path / "in"
    folder.mkdir()
    if which in ("check", "run", "grade-key"):
        path = fifo_or_directory(folder, kind, "file.toml")
        argv = {"check": ["check", path], "run": ["run", path]}.get(which)
        if argv is None:
            (folder / "ann.md").write_text(SOLUTION_MD)
            argv = ["grade", path, folder / "ann.md"]
        what = {"check": "exercise file", "run": "computation file", "grade-key": "exercise file"}[which]
    elif which == "grade-solution":
        key = folder / "key.toml"
        key.write_text(EXERCISE_TEXT)
        subs = folder / "subs"
        subs.mkdir()
        (subs / "ben.md").write_text(SOLUTION_MD)
        if kind == "directory":  # a folder given is a folder of submissions: the reader refuses it itself
            from symbolic_attn.grading.submissions import read_submission

            refused = read_submission(fifo_or_directory(tmp_path, kind, "ann.md")).refused
            assert refused == "is a directory, not a regular solution file"
            return
        path = fifo_or_directory(tmp_path, kind, "ann.md")  # given on the command line: refused for that student
        argv, what = ["grade", key, subs, path, "--out", tmp_path / "out", "--jobs", "1"], "solution file"
    elif which in ("derive", "list"):
        fifo_or_directory(folder, kind, "a_script.py")  # found in the folder given
        argv = ["list", folder] if which == "list" else ["derive", folder, "--out", tmp_path / "out"]
        what = "derivation script"
    else:
        path = fifo_or_directory(folder, kind, "impl.py")
        argv, what = ["compare", f"{path}:attention"], "Python file"
    code, out, err = run_process(*argv, timeout=60)
    expected = MESSAGES[kind] + " " + what
    if which == "grade-solution":
        assert code == 1 and graded(tmp_path / "out", "ben")["score"] == 2, (out, err)  # 1: ann not gradable
        assert expected in graded(tmp_path / "out", "ann")["reason"]
    else:
        assert code == 2 and out == "", (out, err)
        one_line_error(err)
        assert expected in err, err


@pytest.mark.parametrize("which", ["check", "run", "grade-key", "grade-solution", "derive"])
def test_every_front_end_refuses_an_oversized_file_before_reading(capsys, tmp_path, which):
    name = {"derive": "big.py", "grade-solution": "ann.md"}.get(which, "big.toml")
    path = tmp_path / name
    with path.open("wb") as handle:
        handle.truncate(500 * 1024 * 1024)  # sparse: 500 MB that cost nothing, and would cost to read
    if which == "check":
        code, out, err = run_main(capsys, "check", path)
    elif which == "run":
        code, out, err = run_main(capsys, "run", path)
    elif which == "grade-key":
        (tmp_path / "ann.md").write_text(SOLUTION_MD)
        code, out, err = run_main(capsys, "grade", path, tmp_path / "ann.md", "--jobs", "1")
    elif which == "grade-solution":
        key = tmp_path / "key.toml"
        key.write_text(EXERCISE_TEXT)
        code, out, err = run_main(capsys, "grade", key, path, "--out", tmp_path / "out", "--jobs", "1")
        assert code == 1  # ann is not gradable
        assert "solution file of 524288000 bytes is larger than the limit" in graded(tmp_path / "out", "ann")["reason"]
        return
    else:
        code, out, err = run_main(capsys, "list", path)
    assert code == 2
    one_line_error(err)
    assert "of 524288000 bytes is larger than the limit" in err, err


# --------------------------------------------------------------- TOML bombs, as exercise and as solution


def dotted_bomb(size: int) -> str:
    return "a" + ".a" * (size // 2) + " = 1\n"


# 160 KB of dotted keys: tomllib alone takes minutes (7.5 s at 40 KB, 26 s at 80 KB, quadratic).
BOMB = 160_000


@pytest.mark.parametrize("which", ["check", "run", "grade-key"])
def test_a_dotted_key_bomb_is_refused_as_an_exercise(tmp_path, which):
    path = tmp_path / "bomb.toml"
    path.write_text(EXERCISE_TEXT + dotted_bomb(BOMB))
    if which == "grade-key":
        (tmp_path / "ann.md").write_text(SOLUTION_MD)
        argv = ["grade", path, tmp_path / "ann.md", "--jobs", "1"]
    else:
        argv = [which, path]
    code, out, err = run_process(*argv, timeout=60)
    assert code == 2
    one_line_error(err)
    assert "bomb.toml: line 16: a key of more than 16 dotted parts" in err, err


def test_a_dotted_key_bomb_is_refused_as_a_solution(tmp_path):
    key, subs = tmp_path / "key.toml", tmp_path / "subs"
    key.write_text(EXERCISE_TEXT)
    subs.mkdir()
    (subs / "ann.toml").write_text(dotted_bomb(BOMB))
    (subs / "ben.toml").write_text(SOLUTION_TOML)
    code, out, err = run_process("grade", key, subs, "--out", tmp_path / "out", "--jobs", "1", timeout=60)
    assert code == 1, err  # ann is not gradable
    assert graded(tmp_path / "out", "ann")["reason"] == "ann.toml: line 1: a key of more than 16 dotted parts"
    assert graded(tmp_path / "out", "ben")["score"] == 2


# --------------------------------------------------------------- read once, by one reader


@pytest.mark.parametrize("which", ["check", "grade", "run"])
def test_each_file_is_opened_and_parsed_once(capsys, tmp_path, monkeypatch, which):
    import tomllib

    path = tmp_path / "file.toml"
    path.write_text(COMPUTATION_TEXT if which == "run" else EXERCISE_TEXT)
    (tmp_path / "ann.md").write_text(SOLUTION_MD)
    opened, parsed = [], []
    real_open, real_loads = os.open, tomllib.loads
    monkeypatch.setattr(os, "open", lambda file, *a, **k: opened.append(os.fspath(file)) or real_open(file, *a, **k))
    monkeypatch.setattr(tomllib, "loads", lambda text, **k: parsed.append(text) or real_loads(text, **k))
    argv = ["grade", path, tmp_path / "ann.md", "--jobs", "1"] if which == "grade" else [which, path]
    code, out, err = run_main(capsys, *argv)
    assert code == 0, err
    assert opened.count(str(path)) == 1 and opened.count(str(tmp_path / "ann.md")) == (which == "grade")
    assert len(parsed) == 1


# Where the package may still touch files itself: writing its own output, reading its own
# output, the null device.  Every input file is read by exact/source.py.
ALLOWED = {
    "exact/source.py",
    "cli/output.py",  # writes the output files
    "notes/document.py",  # reads back the PDF pdflatex wrote
    "numerics/isolation.py",  # opens os.devnull for the child
    # Reads the project's own files (pyproject.toml, the installed package, the bundle it
    # writes); the answer key, a user's file, is read by the one reader (_copy_key).
    "grading/bundles.py",
    # Writes the page's text into the worker's in-memory files (the command then reads them
    # through the one reader).
    "cli/browser.py",
    # Reads the project's own sources and examples and the pinned, hash-checked downloads;
    # writes the site.
    "web/build.py",
}


def _file_reading_calls(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            # open(...), os.open, os.fdopen, io.open, path.open, path.read_text, path.read_bytes, tomllib.*
            if isinstance(func, ast.Name) and func.id == "open" or isinstance(func, ast.Attribute) and (
                    func.attr in ("open", "fdopen", "read_text", "read_bytes")
                    or isinstance(func.value, ast.Name) and func.value.id == "tomllib"):
                yield node.lineno, ast.unparse(func)


def test_no_module_reads_an_input_file_but_the_one_reader():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative in ALLOWED:
            continue
        found += [f"{relative}:{line}: {call}" for line, call in _file_reading_calls(path)]
    assert found == []


def test_the_scan_for_other_readers_can_fail(tmp_path):
    fake = tmp_path / "m.py"
    fake.write_text("import tomllib\ndef f(p):\n    return tomllib.loads(open(p).read()), p.read_text(), read_text(p)\n")
    assert sorted(call for _, call in _file_reading_calls(fake)) == ["open", "p.read_text", "tomllib.loads"]
