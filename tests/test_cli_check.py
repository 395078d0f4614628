"""`symbolic-attn check`: exit 0/1/2, the JSON schema, and hostile files.

Hostile files run through the real command in a subprocess: each must end with exit 2,
exactly one line on stderr naming the file, and no side effect, quickly.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from symbolic_attn.cli import main

ROOT = Path(__file__).resolve().parent.parent
GOOD = """
[inputs]
X = [[1, 0], [0, 1], [1, 1]]
[attention]
query = "X"
key = "X"
value = "2*X"
[[claims]]
label = "a_1"
quantity = "weights"
row = 1
value = "[0.401, 0.198, 0.401]"
"""
KEYS = {"label", "quantity", "row", "col", "claimed", "exact", "exact_latex", "decimal", "rule", "verdict", "diagnosis",
        "diagnosis_sentences", "wrong_entries", "undecided_entries", "note"}  # issue 21 added diagnosis_sentences


def write(tmp_path, text, name="ex.toml"):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def test_all_pass_exit_0_and_json_schema(tmp_path, capsys):
    assert main(["check", str(write(tmp_path, GOOD)), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {"claims", "passed", "failed", "undecided"}
    assert (report["passed"], report["failed"], report["undecided"]) == (1, 0, 0)
    (claim,) = report["claims"]
    assert set(claim) == KEYS
    assert claim["verdict"] == "pass" and claim["diagnosis"] == [] and claim["row"] == 1 and claim["col"] is None
    assert claim["rule"] == "3 decimals" and claim["decimal"] == "[0.40111, 0.19778, 0.40111]"


def test_any_fail_exit_1(tmp_path, capsys):
    assert main(["check", str(write(tmp_path, GOOD.replace("0.198", "0.199")))]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_json_is_byte_stable(tmp_path, capsys):
    path = str(write(tmp_path, GOOD))
    main(["check", path, "--format", "json"])
    first = capsys.readouterr().out
    main(["check", path, "--format", "json"])
    assert capsys.readouterr().out == first


HOSTILE = {
    "code-in-expression": GOOD.replace('"2*X"', "\"__import__('os').system('touch PWNED')\""),
    "code-in-claim": GOOD.replace('"[0.401, 0.198, 0.401]"', "\"[().__class__.__mro__[1].__subclasses__()]\""),
    "lambda": GOOD.replace('query = "X"', 'query = "(lambda: 1)()"'),
    "power-tower": GOOD.replace('"2*X"', '"9**9**9**9 * X"'),
    "power-tower-claim": GOOD.replace('"[0.401, 0.198, 0.401]"', '"[9^9^9^9, 0, 0]"'),
    "million-digit-string": GOOD.replace('"2*X"', '"' + "9" * 10**6 + ' * X"'),
    "million-digit-claim": GOOD.replace("0.401,", "0." + "4" * 900_000 + ","),
    "million-digit-toml-int": GOOD.replace("[inputs]", "[inputs]\nn = " + "9" * 10**6),
    "huge-exponent": GOOD.replace('"2*X"', '"1e100000000 * X"'),
    "10^4x10^4-matrix": "[inputs]\nX = [" + ",".join(["[" + ",".join(["0"] * 10**4) + "]"] * 60) + "]\n",
    "10^4-wide-row": "[inputs]\nX = [[" + ",".join(["0"] * 10**4) + "]]\n[attention]\nscores = \"X\"\nvalue = \"X.T\"\n",
    "deep-toml-arrays": "x = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "deep-inline-tables": "x = " + "{a = " * 2000 + "1" + "}" * 2000 + "\n",
    "deep-parentheses": GOOD.replace('"2*X"', '"' + "(" * 10_000 + "X" + ")" * 10_000 + '"'),
    "wrong-type-claims": GOOD.replace("[[claims]]", "claims = 3\n[[nothing]]"),
    "wrong-type-row": GOOD.replace("row = 1", 'row = "1"'),
    "wrong-type-bool": GOOD.replace("row = 1", "row = true"),
    "toml-float": GOOD.replace('"[0.401, 0.198, 0.401]"', "0.401"),
    "binary-junk": bytes(range(256)) * 40,
    "bad-utf8": b'title = "\xc3\x28"\n',
    "empty-file": "",
}


def test_a_long_flat_sum_is_read_as_a_chain(tmp_path):
    """20,000 terms ``X+X+...+X`` are a chain, not 20,000 levels of nesting (issue 19):
    the value is read and the claim judged against 20000 X, not refused as "nested"."""
    path = write(tmp_path, GOOD.replace('"2*X"', '"' + "+".join(["X"] * 20_000) + '"'))
    done = subprocess.run([sys.executable, "-m", "symbolic_attn", "check", str(path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr and "nested" not in done.stderr, done.stderr
    assert done.returncode == 0 and "1 passed, 0 failed" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("name", sorted(HOSTILE), ids=sorted(HOSTILE))
def test_hostile_files_exit_2_with_one_line(tmp_path, name):
    path = write(tmp_path, HOSTILE[name])
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "symbolic_attn", "check", str(path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )
    elapsed = time.perf_counter() - started
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"symbolic-attn: error: {path}"), done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "PWNED").exists()
    assert elapsed < 20  # generous: interpreter start-up included; measured figures are in the notes
