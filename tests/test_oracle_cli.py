"""`symbolic-attn compare MODULE:FUNCTION`: exit 0/1/2, the JSON schema, bad targets."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from symbolic_attn.cli import main

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
CASE_KEYS = {"name", "n", "m", "d_k", "d_v", "mask", "max_abs_error", "max_ulp", "bound", "verdict"}


def run(*args, cwd=TESTS):
    return subprocess.run([sys.executable, "-m", "symbolic_attn", "compare", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


def test_correct_implementation_exit_0_text():
    done = run("impls:correct", "--cases", "1")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "cases within the float32 bounds: PASS" in done.stdout
    assert done.stdout.splitlines()[0].split()[:4] == ["case", "n", "m", "d_k"]


def test_buggy_implementation_exit_1_json(capsys, monkeypatch):
    monkeypatch.chdir(TESTS)
    status = main(["compare", "impls:missing_scale", "--cases", "2", "--seed", "5", "--format", "json", "--dtype", "float64"])
    data = json.loads(capsys.readouterr().out)
    assert status == 1
    assert data["passed"] is False and data["dtype"] == "float64" and data["diagnosis"] == ["missing_scale"]
    assert all(CASE_KEYS <= set(case) for case in data["cases"])
    assert {case["verdict"] for case in data["cases"]} <= {"pass", "fail", "error"}


@pytest.mark.parametrize("target,convention,policy,status,diagnosis", [
    ("impls:correct", "keep", "zeros", 0, []),
    ("impls:correct", "block", "zeros", 1, ["mask_inverted"]),
    ("impls:correct_uniform", "keep", "zeros", 1, ["empty_row_policy"]),
    ("impls:correct_uniform", "keep", "uniform", 0, []),
    ("impls:no_max_subtraction", "keep", "error", 1, ["no_max_subtraction"]),
], ids=["keep", "wrong-convention", "wrong-policy", "uniform", "overflow"])
def test_options(capsys, monkeypatch, target, convention, policy, status, diagnosis):
    monkeypatch.chdir(TESTS)
    assert main(["compare", target, "--cases", "0", "--mask-convention", convention, "--empty-row", policy,
                 "--format", "json"]) == status
    assert json.loads(capsys.readouterr().out)["diagnosis"] == diagnosis


def test_a_file_path_target(capsys):
    assert main(["compare", f"{TESTS / 'impls' / '__init__.py'}:correct", "--cases", "0"]) == 0


@pytest.mark.parametrize("target,message", [
    ("nocolon", r"expected MODULE:FUNCTION, got 'nocolon'"),
    ("a:b:c", r"expected MODULE:FUNCTION, got 'a:b:c'"),
    ("impls:nothing", r"'impls:nothing': module impls has no attribute nothing"),
    ("impls:BUGGY", r"'impls:BUGGY': BUGGY is a dict, not a function"),
    ("no_such_module_xyz:f", r"'no_such_module_xyz:f': cannot import no_such_module_xyz: ModuleNotFoundError"),
    ("x y:f", r"'x y:f': 'x y' is neither a module name nor a .py file"),
    ("missing.py:f", r"'missing.py:f': no such file missing.py"),
    ("impls:f(1)", r"'impls:f\(1\)': 'f\(1\)' is not a function name"),
], ids=["no-colon", "two-colons", "no-attribute", "not-callable", "no-module", "bad-name", "no-file", "call"])
def test_bad_targets_are_one_line_exit_2(target, message):
    done = run(target, "--cases", "0")
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert lines[0].startswith("symbolic-attn: error: ")
    import re

    assert re.search(message, lines[0]), lines[0]


def test_a_module_that_fails_to_import_is_exit_2(tmp_path):
    (tmp_path / "broken_impl.py").write_text("raise RuntimeError('no GPU')\n")
    done = run("broken_impl:attend", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == "symbolic-attn: error: 'broken_impl:attend': cannot import broken_impl: RuntimeError: no GPU"


@pytest.mark.parametrize("args", [["--dtype", "float8"], ["--cases", "-1"], ["--cases", "many"],
                                  ["--mask-convention", "sideways"], ["--empty-row", "skip"]],
                         ids=["dtype", "negative-cases", "word-cases", "convention", "policy"])
def test_bad_options_exit_2(args):
    done = run("impls:correct", *args)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1


def test_the_implementations_warnings_do_not_reach_stderr():
    done = run("impls:no_max_subtraction", "--cases", "0")
    assert done.returncode == 1 and done.stderr == ""
    assert "no_max_subtraction: exp overflowed" in done.stdout


def test_an_implementation_that_prints_leaves_the_json_valid(tmp_path):
    (tmp_path / "chatty.py").write_text(
        "from impls import correct\n"
        "print('loading')\n"
        "def attend(q, k, v, mask):\n"
        "    print('debug', q.shape)\n"
        "    return correct(q, k, v, mask)\n")
    done = subprocess.run([sys.executable, "-m", "symbolic_attn", "compare", "chatty:attend", "--cases", "0", "--format", "json"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={"PYTHONPATH": f"{ROOT}{os.pathsep}{TESTS}", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["passed"] is True
    assert "loading" in done.stderr and "debug" in done.stderr


def test_a_looping_implementation_meets_the_time_limit_with_one_line(tmp_path):
    (tmp_path / "loops.py").write_text("def attend(q, k, v, mask):\n    while True:\n        pass\n")
    done = subprocess.run([sys.executable, "-m", "symbolic_attn", "--timeout", "1", "compare", "loops:attend"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("symbolic-attn: error: time limit of 1 s reached while running attend on case basic (1 of ")


def test_a_process_with_other_threads_spawns_its_child(capsys, monkeypatch):
    """A fork of a process running other threads (JAX, a notebook) can deadlock the child:
    the implementation then runs in a fresh interpreter, with the same verdicts."""
    import threading

    from symbolic_attn.numerics import isolation

    started, stop = threading.Event(), threading.Event()
    worker = threading.Thread(target=lambda: (started.set(), stop.wait(60)), daemon=True)
    worker.start()
    started.wait(5)
    spawned = []
    original = isolation._spawn
    monkeypatch.setattr(isolation, "_spawn", lambda *a: spawned.append(a) or original(*a))
    monkeypatch.chdir(TESTS)
    try:
        assert main(["compare", "impls:missing_scale", "--cases", "2", "--seed", "5", "--format", "json"]) == 1
        assert json.loads(capsys.readouterr().out)["diagnosis"] == ["missing_scale"]
        assert main(["compare", "impls:correct", "--cases", "0"]) == 0
    finally:
        stop.set()
    assert len(spawned) == 2


def test_a_hugging_face_style_function_runs_and_a_module_is_refused_in_one_line(tmp_path):
    pytest.importorskip("torch")
    target = tmp_path / "hf.py"
    target.write_text("from impls.modules import eager_attention_forward, multihead\n"
                      "def mha():\n    return multihead()\n", encoding="utf-8")
    done = run(f"{target}:eager_attention_forward", "--cases", "1", "--empty-row", "uniform")
    assert done.returncode == 0, done.stdout + done.stderr
    done = run(f"{target}:mha")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and "is a module" in done.stderr
