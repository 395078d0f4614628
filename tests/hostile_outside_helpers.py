"""Helpers for the outside hostile batteries (tests/test_hostile_outside_*.py).

Written from the README, docs/ and --help only.  Every case runs in a subprocess with a
small timeout; the assertions state the contract, not the current behaviour.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, SYMPY_GROUND_TYPES="python", PYTHONPATH=str(ROOT))
ENV.pop("PYTHONSTARTUP", None)
FAST = 15.0  # seconds: "fast, well under the timeout"


@dataclass
class Res:
    rc: int | None
    out: str
    err: str
    elapsed: float
    timed_out: bool = False

    def show(self) -> str:
        return (f"rc={self.rc} elapsed={self.elapsed:.1f}s timed_out={self.timed_out}\n"
                f"stdout: {self.out[:1500]!r}\nstderr: {self.err[:1500]!r}")


def _run(argv, timeout, cwd=None, stdin_data=None) -> Res:
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, timeout=timeout, cwd=cwd, env=ENV,
                           input=stdin_data, stdin=None if stdin_data is not None else subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode("utf-8", "replace")
        err = (exc.stderr or b"").decode("utf-8", "replace")
        return Res(None, out, err, time.monotonic() - t0, True)
    return Res(p.returncode, p.stdout.decode("utf-8", "replace"),
               p.stderr.decode("utf-8", "replace"), time.monotonic() - t0)


def cli(*args, timeout: float = 20, cwd=None) -> Res:
    """python -m symbolic_attn ARGS (args may be str, bytes or Path)."""
    argv = [sys.executable, "-m", "symbolic_attn"]
    for a in args:
        argv.append(a if isinstance(a, bytes) else str(a))
    return _run(argv, timeout, cwd=cwd)


def py(code: str, timeout: float = 20, cwd=None) -> Res:
    return _run([sys.executable, "-c", code], timeout, cwd=cwd)


def assert_no_traceback(r: Res) -> None:
    assert not r.timed_out, "timed out (contract: fast)\n" + r.show()
    assert "Traceback" not in r.err and "Traceback" not in r.out, "a traceback\n" + r.show()


def assert_bad_input(r: Res, *needles: str, ci: bool = True) -> None:
    """Exit 2, exactly one non-empty stderr line, no traceback, fast, naming the needles."""
    assert_no_traceback(r)
    assert r.rc == 2, "expected exit 2 for bad input\n" + r.show()
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1, f"expected ONE stderr line, got {len(lines)}\n" + r.show()
    assert r.elapsed < FAST, "not fast\n" + r.show()
    line = lines[0]
    for n in needles:
        hay, nd = (line.lower(), n.lower()) if ci else (line, n)
        assert nd in hay, f"stderr line does not name {n!r}\n" + r.show()


def assert_ok(r: Res) -> None:
    assert_no_traceback(r)
    assert r.rc == 0, "expected success\n" + r.show()
    assert r.elapsed < FAST, "not fast\n" + r.show()


def assert_bad_or_ok(r: Res, ok_check=None, needles=()) -> None:
    """Either a proper bad-input refusal or success whose output passes ok_check."""
    assert_no_traceback(r)
    if r.rc == 2:
        assert_bad_input(r, *needles)
    else:
        assert r.rc == 0, "neither success nor exit 2\n" + r.show()
        assert r.elapsed < FAST, "not fast\n" + r.show()
        if ok_check is not None:
            ok_check(r)


def no_float_in_exact(obj) -> None:
    """No binary-float looking exact string (e.g. '0.333333333333333' or '1.0e-5')."""
    import re
    pat = re.compile(r"\d\.\d{6,}|\d\.\d*e[-+]?\d|\binf\b|\bnan\b", re.I)
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in ("decimal", "latex", "exact_latex", "note", "rule", "diagnosis", "feedback"):
                continue
            no_float_in_exact(v)
    elif isinstance(obj, list):
        for v in obj:
            no_float_in_exact(v)
    elif isinstance(obj, str):
        assert not pat.search(obj), f"float-looking exact value {obj!r}"


# ---------------------------------------------------------------------------- Python API
API_WRAPPER = r'''
import sys, json
sys.setrecursionlimit(3000)
import symbolic_attn as sa
from symbolic_attn import *
from symbolic_attn.errors import SymbolicAttnError
from fractions import Fraction
from decimal import Decimal
import sympy
def _force(r):
    # make lazy results compute: every stage, as text
    if isinstance(r, sa.AttentionResult):
        return "AR:" + str([str(r.weights), str(r.output)])
    if isinstance(r, sa.Trace):
        return "TR:" + str({k: str(r[k]) for k in r})
    return repr(r)
try:
    __r = eval(compile(sys.argv[1], "<case>", "eval")) if sys.argv[2] == "eval" else exec(sys.argv[1])
    __s = _force(__r)
    print("RESULT OK")
    print(__s[:4000])
except SymbolicAttnError as __e:
    print("RESULT TYPED", type(__e).__name__)
    print(str(__e)[:2000])
except BaseException as __e:
    print("RESULT UNTYPED", type(__e).__name__)
    print(str(__e)[:2000])
'''


def api(code: str, mode: str = "eval", timeout: float = 20) -> Res:
    return _run([sys.executable, "-c", API_WRAPPER, code, mode], timeout)


def api_status(r: Res) -> str:
    assert not r.timed_out, "timed out (contract: fast)\n" + r.show()
    for ln in r.out.splitlines():
        if ln.startswith("RESULT "):
            return ln.split()[1]
    raise AssertionError("no RESULT line (process died?)\n" + r.show())


def assert_api_typed(code: str, mode: str = "eval", timeout: float = 20) -> Res:
    r = api(code, mode, timeout)
    st = api_status(r)
    assert st == "TYPED", f"expected a SymbolicAttnError subclass, got {st}\n{r.show()}"
    assert r.elapsed < FAST, "not fast\n" + r.show()
    return r


def assert_api_typed_or_ok(code: str, ok_check=None, mode: str = "eval", timeout: float = 20) -> Res:
    r = api(code, mode, timeout)
    st = api_status(r)
    assert st in ("TYPED", "OK"), f"bare {st}: contract wants a typed error or the right answer\n{r.show()}"
    assert r.elapsed < FAST, "not fast\n" + r.show()
    if st == "OK" and ok_check is not None:
        ok_check(r.out.split("\n", 1)[1])
    return r


def assert_api_ok(code: str, ok_check=None, mode: str = "eval", timeout: float = 20) -> Res:
    r = api(code, mode, timeout)
    st = api_status(r)
    assert st == "OK", f"expected success, got {st}\n{r.show()}"
    if ok_check is not None:
        ok_check(r.out.split("\n", 1)[1])
    return r


def load_json(r: Res):
    try:
        return json.loads(r.out)
    except ValueError:
        pytest.fail("stdout is not JSON\n" + r.show())


def snapshot(root: Path) -> dict:
    """Every path under root (not following links) -> (type, size, bytes or link target)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            if p.is_symlink():
                out[str(p)] = ("link", os.readlink(p))
            elif p.is_file():
                out[str(p)] = ("file", p.read_bytes())
            elif p.is_dir():
                out[str(p)] = ("dir", None)
            else:
                out[str(p)] = ("other", None)
    return out
