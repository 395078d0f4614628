"""Hostile inputs to ``check``: answered at once with one line, no hang, no forged lines.

Files that are not regular files, files too large, TOML shaped to make Python's reader
quadratic, control characters in every piece of text that reaches a report or an error,
digits of other scripts, and claims that cannot be decided within their budget.
"""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from symbolic_attn.cli import main

ROOT = Path(__file__).resolve().parent.parent
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202e]")
BASE = """title = "t"
[attention]
scores = [["0", "1", "2"], ["1", "0", "0"], ["2", "1", "0"]]
value = [[1, 0], [0, 1], [1, 1]]
"""


def claim(value, label=None, row=1, col=2):
    text = f'[[claims]]\nquantity = "weights"\nrow = {row}\ncol = {col}\nvalue = "{value}"\n'
    return text + (f"label = {json.dumps(label)}\n" if label is not None else "")


def run_cli(args, timeout=20):
    """The command in a fresh interpreter, as a grader runs it: (status, out, err, seconds)."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "symbolic_attn", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return done.returncode, done.stdout, done.stderr, time.perf_counter() - started


def one_line_error(err):
    assert err.count("\n") == 1 and err.startswith("symbolic-attn: error: "), err
    assert "Traceback" not in err and not CONTROL.search(err), err


@pytest.mark.parametrize("kind", ["directory", "fifo", "device"])
def test_not_a_regular_file_is_refused_at_once(tmp_path, kind):
    if kind == "directory":
        path, expected = tmp_path, "is a directory, not a regular exercise file (give one exercise .toml file"
    elif kind == "fifo":
        path, expected = tmp_path / "pipe.toml", "is a FIFO (named pipe)"
        os.mkfifo(path)
    else:
        path, expected = Path("/dev/zero"), "is a character device"
        if not path.exists():
            pytest.skip("no /dev/zero")
    status, out, err, seconds = run_cli(["check", str(path)])
    assert status == 2 and out == ""
    one_line_error(err)
    assert expected in err


def test_a_huge_file_is_refused_by_its_size_before_reading(tmp_path, capsys):
    path = tmp_path / "huge.toml"
    with path.open("wb") as handle:
        handle.truncate(500 * 1024 * 1024)  # sparse: 500 MB that cost nothing to make
    started = time.perf_counter()
    assert main(["check", str(path)]) == 2
    assert time.perf_counter() - started < 1
    err = capsys.readouterr().err
    one_line_error(err)
    assert "file of 524288000 bytes is larger than the limit of 1000000 bytes" in err


@pytest.mark.parametrize(
    "text, message",
    [
        ("a" + ".a" * 20_000 + " = 1\n", r"line 1: a key of more than 16 dotted parts"),
        ("[" + "a." * 5_000 + "a]\n", r"line 1: a key of more than 16 dotted parts"),
        ('"a"' + '."a"' * 5_000 + " = 1\n", r"line 1: a key of more than 16 dotted parts"),
        ("x = " + "[" * 5_000 + "]" * 5_000 + "\n", r"line 1: arrays or tables nested more than 8 deep"),
        ("x = " + "{a = " * 100 + "1" + "}" * 100 + "\n", r"nested more than 8 deep"),
    ],
    ids=["dotted-keys", "dotted-header", "quoted-dotted-keys", "deep-arrays", "deep-inline-tables"],
)
def test_toml_shaped_to_be_slow_is_refused_before_parsing(tmp_path, capsys, text, message):
    path = tmp_path / "slow.toml"
    path.write_text(text)
    started = time.perf_counter()
    assert main(["check", str(path)]) == 2
    assert time.perf_counter() - started < 1
    err = capsys.readouterr().err
    one_line_error(err)
    assert re.search(message, err), err


def test_dots_inside_strings_and_comments_are_not_keys(tmp_path, capsys):
    text = BASE.replace('title = "t"', 'title = "' + "a." * 100 + '" # ' + "b." * 100) + claim("0.245")
    path = tmp_path / "ok.toml"
    path.write_text(text)
    assert main(["check", str(path)]) == 0, capsys.readouterr().err


FORGED = "x\nfake.toml: 99 passed, 0 failed"


@pytest.mark.parametrize("where", ["label", "title", "file name"])
def test_no_forged_report_lines_and_no_control_characters(tmp_path, capsys, where):
    hostile = FORGED + "\x1b[2J\x07\r\u202e"
    text = BASE + claim("0.245", label=hostile if where == "label" else "ok") + claim("0.3", label="second")
    if where == "title":
        text = text.replace('title = "t"', f"title = {json.dumps(hostile)}")
    name = ("bad\nfake.toml: 99 passed\x1b.toml" if where == "file name" else "ex.toml")
    path = tmp_path / name
    path.write_text(text)
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    # the summary, the header, the rule, two claims; indented below a claim: its values and diagnosis
    assert len([line for line in lines if not line.startswith(" ")]) == 5
    assert not CONTROL.search(out)
    assert not any(line.startswith("fake.toml") for line in lines)
    assert main(["check", str(path), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)  # valid JSON
    assert [c["verdict"] for c in report["claims"]] == ["pass", "fail"]
    assert not any(CONTROL.search(c["label"]) for c in report["claims"])


@pytest.mark.parametrize(
    "text, message",
    [
        (BASE + '[[claims]]\nquantity = "weights"\n"bad\\u001b[31m\\nkey" = 1\nvalue = "1"\n', r"unknown key"),
        (BASE + claim("0.245", label="l\x1b\n") + 'bogus = 1\n', r"claim 1 \('l\\x1b\\n'\): bogus: unknown key"),
        (BASE.replace('"0", "1", "2"', '"0", "1\\u0007", "2"'), r"attention\.scores"),
        (BASE + claim("0.\u09e7\u09ec\u09ed"), r"claim 1: value: non-ASCII character '\u09e7' \(U\+09E7\)"),
        (BASE + claim("\U0001d7ce.\U0001d7d0\U0001d7d2"), r"claim 1: value: non-ASCII character"),
        (BASE + claim("[0.3, 0.7]", row=1, col=2), r"claim 1: value: claimed a list of 2 for one number"),
    ],
    ids=["control-key", "label-in-error", "control-in-value", "bengali-digits", "math-bold-digits", "shape"],
)
def test_errors_are_one_clean_line(tmp_path, capsys, text, message):
    path = tmp_path / "ex.toml"
    path.write_text(text)
    assert main(["check", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    one_line_error(captured.err)
    assert re.search(message, captured.err), captured.err


# Exactly the weight ((1+sqrt k)^2 = (k+1) + 2 sqrt k), within every parser limit (degree
# <= 256), but too big for the exact proof's size budget: honestly undecided.
UNDECIDABLE = ("(1+sqrt(2))**250 - (3+2*sqrt(2))**125 + (1+sqrt(3))**250 - (4+2*sqrt(3))**125"
               " + (1+sqrt(5))**250 - (6+2*sqrt(5))**125 + exp(1)/(exp(1)+1+exp(2))")


def test_an_undecidable_claim_is_undecided_fast_and_exit_1(tmp_path, capsys):
    """Exactly equal to the weight ((1+sqrt 2)^2 = 3+2 sqrt 2), but too big to prove in budget."""
    path = tmp_path / "ex.toml"
    path.write_text(BASE + claim(UNDECIDABLE, label="huge") + claim("0.245", label="fine"))
    started = time.perf_counter()
    assert main(["check", str(path), "--format", "json"]) == 1
    assert time.perf_counter() - started < 2
    report = json.loads(capsys.readouterr().out)
    assert (report["passed"], report["failed"], report["undecided"]) == (1, 0, 1)
    assert report["claims"][0]["verdict"] == "undecided"
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith(": 1 passed, 0 failed, 1 undecided (t)")
    assert "UNDECIDED" in out


def test_a_small_equal_expression_is_still_proved(tmp_path, capsys):
    path = tmp_path / "ex.toml"
    path.write_text(BASE + claim(UNDECIDABLE.replace("**250", "**10").replace("**125", "**5")))
    assert main(["check", str(path)]) == 0, capsys.readouterr()


def test_timeout_names_what_was_being_computed(tmp_path):
    path = tmp_path / "ex.toml"
    path.write_text(BASE + claim("0.245", label="a_12"))
    status, out, err, _ = run_cli(["check", str(path), "--timeout", "0.001"])
    assert status == 2
    one_line_error(err)
    assert re.search(r"time limit of 0\.001 s reached while (reading|computing|judging|diagnosing|printing)", err)
    status, _, err, _ = run_cli(["check", str(path), "--timeout", "-1"])
    assert status == 2 and err.count("\n") == 1


# An attacker's battery, in-process: every input answered with exit 2 (or 1 with an honest
# "undecided"), one clean line on stderr, within a second.
BATTERY = {
    "empty": "",
    "bom-only": "\ufeff",
    "comments-only": "# nothing\n",
    "attention-array": "[[attention]]\nvalue = [[1]]\n",
    "claims-table": BASE + "[claims]\nquantity = 'weights'\n",
    "claims-8193": BASE + "[[claims]]\n" * 8193,
    "row-huge": BASE + claim("0.245").replace("row = 1", "row = " + "9" * 30),
    "row-negative": BASE + claim("0.245").replace("row = 1", "row = -1"),
    "row-bool": BASE + claim("0.245").replace("row = 1", "row = true"),
    "value-empty": BASE + claim(""),
    "value-parens": BASE + claim("(" * 3000 + "1" + ")" * 3000),
    "value-nul": BASE + claim("0.2\\u0000"),
    "value-esc": BASE + claim("\\u001b[2J0.245"),
    "value-lambda": BASE + claim("(lambda: 1)()"),
    "value-dunder": BASE + claim("().__class__"),
    "value-tower": BASE + claim("2^2^2^2^2^2"),
    "value-bigexp": BASE + claim("1e999999999"),
    "value-complex": BASE + claim("sqrt(-1)"),
    "value-nan": BASE + claim("0/0"),
    "quantity-empty": BASE + claim("0.245").replace('"weights"', '""'),
    "quantity-control": BASE + claim("0.245").replace('"weights"', '"w\\u0007\\u001b"'),
    "label-huge": BASE + claim("0.245", label="L" * 200_000),
    "symbols-many": "symbols = [" + ", ".join(f'"s{i}"' for i in range(100)) + "]\n" + BASE,
    "scores-nan": BASE.replace('"0", "1", "2"', '"0/0", "1", "2"'),
    "scores-float": BASE.replace('"0", "1", "2"', '0.5, "1", "2"'),
    "mask-huge": BASE + "mask = {keep = [" + ", ".join(["[1, 1, 1]"] * 500) + "]}\n",
    "mask-causal-offset-huge": BASE + "mask = {causal = true, offset = 99999999999999999999}\n",
    "inline-deep": BASE + "x = " + "{a = " * 50 + "1" + "}" * 50 + "\n",
    "dotted": BASE + "a" + ".b" * 5000 + " = 1\n",
    "bad-utf8": b"title = \"\xc3\x28\"\n",
    "nul-byte": b"title = \"a\"\x00\n",
}


@pytest.mark.parametrize("name", sorted(BATTERY), ids=sorted(BATTERY))
def test_battery_answers_in_one_clean_line(tmp_path, capsys, name):
    text = BATTERY[name]
    path = tmp_path / "hostile.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    started = time.perf_counter()
    status = main(["check", str(path), "--format", "json"])
    elapsed = time.perf_counter() - started
    captured = capsys.readouterr()
    assert elapsed < 1.5, elapsed
    if status == 1:  # only an honest "undecided" may come back with a report
        report = json.loads(captured.out)
        assert report["undecided"] >= 1, captured.out
        return
    assert status == 2, (captured.out, captured.err)
    assert captured.out == ""
    one_line_error(captured.err)
    assert len(captured.err) < 700


@pytest.mark.parametrize("kind", ["directory", "fifo", "device"])
def test_grade_refuses_an_answer_key_that_is_not_a_regular_file(tmp_path, kind):
    # grade read its exercise with a plain open(): a FIFO blocked it for ever
    if kind == "directory":
        path, expected = tmp_path / "keydir", "is a directory, not a regular exercise file"
        path.mkdir()
    elif kind == "fifo":
        path, expected = tmp_path / "key.toml", "is a FIFO (named pipe), not a regular exercise file"
        os.mkfifo(path)
    else:
        path, expected = Path("/dev/zero"), "is a character device, not a regular exercise file"
        if not path.exists():
            pytest.skip("no /dev/zero")
    submission = tmp_path / "alice.md"
    submission.write_text("weights: [[1, 0], [0, 1]]\n")
    status, out, err, seconds = run_cli(["grade", str(path), str(submission)])
    assert status == 2 and out == ""
    one_line_error(err)
    assert expected in err
