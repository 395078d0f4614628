"""`compare` runs the implementation in a child process (issue 19): hostile implementations.

Each one is a small module written to tmp_path and run as `python -m symbolic_attn
compare` in a subprocess: the exit status, one line on stderr (no traceback) when there
is no report, never a false pass, valid JSON whatever the implementation writes to fd 1.
"""

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent

# A correct implementation the hostile ones start from (numpy, float arithmetic).
CORRECT = '''
import numpy as np

def correct(q, k, v, mask):
    s = q @ k.T / np.sqrt(np.asarray(q.shape[-1], dtype=q.dtype))
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return w @ v, w
'''


def compare(tmp_path, body, *args, timeout=120):
    (tmp_path / "hostile.py").write_text(CORRECT + textwrap.dedent(body))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "symbolic_attn", "compare", "hostile:attend", *args],
                          capture_output=True, text=True, cwd=tmp_path, timeout=timeout,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "SYMPY_GROUND_TYPES": "python"})
    done.seconds = time.monotonic() - started
    return done


def one_line_error(done, *pieces):
    """Exit 2, nothing on stdout, one line on stderr holding every piece."""
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-500:])
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("symbolic-attn: error: "), done.stderr
    for piece in pieces:
        assert piece in done.stderr, (piece, done.stderr)
    return done.stderr


def failed_json(done):
    """Exit 1 with a valid JSON report that does not pass."""
    assert done.returncode == 1, (done.returncode, done.stdout[-500:], done.stderr[-500:])
    data = json.loads(done.stdout)
    assert data["passed"] is False
    return data


# -- the outside battery's findings ------------------------------------------------------


@pytest.mark.parametrize("where", ["module", "function"])
@pytest.mark.parametrize("exit_call", ["os._exit(0)", "os._exit(3)"])
def test_os_exit_is_never_a_pass(tmp_path, where, exit_call):
    if where == "module":
        body = f"import os\n{exit_call}\nattend = correct\n"
        during = "while loading hostile:attend"
    else:
        body = f"import os\ndef attend(q, k, v, mask):\n    {exit_call}\n"
        during = "while running attend on case basic (1 of "
    done = compare(tmp_path, body, "--cases", "0", "--format", "json")
    one_line_error(done, f"the implementation's process exited with status {exit_call[-2]}", during, "no verdict")


def test_sys_exit_at_import_is_a_failure_to_load(tmp_path):
    done = compare(tmp_path, "import sys\nsys.exit(0)\n", "--cases", "0")
    one_line_error(done, "'hostile:attend': cannot import hostile: SystemExit: 0")


def test_sys_exit_in_the_function_is_an_error_verdict(tmp_path):
    done = compare(tmp_path, "import sys\ndef attend(q, k, v, mask):\n    sys.exit(0)\n", "--cases", "0", "--format", "json")
    data = failed_json(done)
    assert {case["verdict"] for case in data["cases"]} == {"error"}
    assert data["cases"][0]["error"] == "SystemExit: 0"


def test_a_non_daemon_thread_does_not_outlive_the_run(tmp_path):
    body = """
    import threading, time
    def attend(q, k, v, mask):
        threading.Thread(target=time.sleep, args=(600,)).start()
        return correct(q, k, v, mask)
    """
    done = compare(tmp_path, body, "--cases", "0", timeout=60)
    assert done.returncode == 0 and "PASS" in done.stdout
    assert done.seconds < 30


def test_a_thread_that_loops_cannot_keep_the_process_past_the_timeout(tmp_path):
    body = """
    import threading, time
    def attend(q, k, v, mask):
        threading.Thread(target=time.sleep, args=(600,)).start()
        time.sleep(600)
    """
    done = compare(tmp_path, body, "--cases", "0", "--timeout", "2", timeout=60)
    one_line_error(done, "time limit of 2 s reached while running attend on case basic (1 of ")
    assert done.seconds < 20


@pytest.mark.parametrize("as_rows", ["list", "tuple", "arrays"])
def test_a_correct_result_as_two_rows_is_the_output(tmp_path, as_rows):
    # n = 2 cases only (the output is 2 x d_v): a list of its two rows is not (output, weights)
    convert = {"list": "out.tolist()", "tuple": "tuple(tuple(r) for r in out.tolist())", "arrays": "[out[0], out[1]]"}[as_rows]
    body = f"""
    def attend(q, k, v, mask):
        out = correct(q, k, v, mask)[0]
        return {convert} if out.shape[0] == 2 else out
    """
    done = compare(tmp_path, body, "--cases", "3", "--format", "json")
    assert done.returncode == 0, done.stdout[-2000:]
    data = json.loads(done.stdout)
    two_rows = [case for case in data["cases"] if case["n"] == 2]
    assert two_rows and all([s["stage"] for s in case["stages"]] == ["output"] for case in two_rows)


def test_output_and_weights_as_a_pair_still_are_both_stages(tmp_path):
    done = compare(tmp_path, "attend = lambda q, k, v, mask: list(correct(q, k, v, mask))\n", "--cases", "0", "--format", "json")
    assert done.returncode == 0
    assert all([s["stage"] for s in case["stages"]] == ["weights", "output"] for case in json.loads(done.stdout)["cases"])


def test_fd_1_writes_leave_the_json_valid_and_are_shown(tmp_path):
    body = """
    import ctypes, os
    os.write(1, b"junk at import\\n")
    def attend(q, k, v, mask):
        os.write(1, b"{not json")
        ctypes.CDLL(None).printf(b"from C\\n")
        return correct(q, k, v, mask)
    """
    done = compare(tmp_path, body, "--cases", "0", "--format", "json")
    assert done.returncode == 0, done.stderr[-500:]
    assert json.loads(done.stdout)["passed"] is True
    assert "the implementation printed:" in done.stderr and "junk at import" in done.stderr
    assert "{not json" in done.stderr and "from C" in done.stderr
    text = compare(tmp_path, body, "--cases", "0")
    assert text.returncode == 0 and text.stderr == ""
    assert "the implementation printed:\n  | junk at import" in text.stdout


def test_a_huge_wrong_shape_is_failed_quickly(tmp_path):
    body = "def attend(q, k, v, mask):\n    return np.zeros((2000, 2000))\n"
    done = compare(tmp_path, body, "--cases", "0", "--format", "json")
    data = failed_json(done)
    assert data["cases"][0]["stages"][-1]["note"] == "shape 2000x2000, expected 3x2"
    assert done.seconds < 30


@pytest.mark.parametrize("body,what", [
    ("import os\ndef attend(q, k, v, mask):\n    os.kill(os.getpid(), 9)\n", "was killed by signal 9 (SIGKILL)"),
    ("import ctypes\ndef attend(q, k, v, mask):\n    ctypes.string_at(0)\n", "was killed by signal 11 (SIGSEGV)"),
    ("import os, signal\ndef attend(q, k, v, mask):\n    os.kill(os.getpid(), signal.SIGTERM)\n", "was killed by signal 15 (SIGTERM)"),
    ("import os\ndef attend(q, k, v, mask):\n    os.abort()\n", "was killed by signal 6 (SIGABRT)"),
], ids=["sigkill", "segfault", "sigterm", "abort"])
def test_a_crash_is_one_line_naming_it_and_the_case(tmp_path, body, what):
    done = compare(tmp_path, body, "--cases", "0", "--format", "json")
    one_line_error(done, what, "while running attend on case basic (1 of ", "no verdict")


@pytest.mark.parametrize("raised,error", [
    ("MemoryError()", "MemoryError"),
    ("RecursionError('maximum recursion depth exceeded')", "RecursionError: maximum recursion depth exceeded"),
    ("KeyboardInterrupt()", "KeyboardInterrupt"),
])
def test_exceptions_of_the_function_are_error_verdicts(tmp_path, raised, error):
    done = compare(tmp_path, f"def attend(q, k, v, mask):\n    raise {raised}\n", "--cases", "0", "--format", "json")
    data = failed_json(done)
    assert {case["verdict"] for case in data["cases"]} == {"error"}
    assert data["cases"][0]["error"].startswith(error)


def test_real_recursion_is_an_error_verdict(tmp_path):
    body = "def attend(q, k, v, mask):\n    return attend(q, k, v, mask)\n"
    data = failed_json(compare(tmp_path, body, "--cases", "0", "--format", "json"))
    assert data["cases"][0]["error"].startswith("RecursionError")


# -- more of what an attacker would try --------------------------------------------------


@pytest.mark.parametrize("result,error", [
    ("None", "output: expected real numbers, got an array of dtype object"),
    ("'the output'", "output: expected real numbers, got an array of dtype <U10"),
    ("(row for row in correct(q, k, v, mask)[0])", "output: expected real numbers, got an array of dtype object"),
    ("{'output': 1}", "output: expected real numbers, got an array of dtype object"),
    ("correct(q, k, v, mask)[0].astype(complex)", "output: expected real numbers, got an array of dtype complex128"),
], ids=["none", "string", "generator", "dict", "complex"])
def test_results_that_are_no_matrix_are_error_verdicts(tmp_path, result, error):
    data = failed_json(compare(tmp_path, f"def attend(q, k, v, mask):\n    return {result}\n", "--cases", "0", "--format", "json"))
    assert data["cases"][0]["verdict"] == "error" and data["cases"][0]["error"].startswith(error)


def test_nan_everywhere_fails(tmp_path):
    body = "def attend(q, k, v, mask):\n    return np.full((q.shape[0], v.shape[1]), np.nan)\n"
    data = failed_json(compare(tmp_path, body, "--cases", "0", "--format", "json"))
    assert {case["verdict"] for case in data["cases"]} == {"fail"}


def test_mutating_the_inputs_changes_nothing_the_parent_holds(tmp_path):
    body = """
    def attend(q, k, v, mask):
        result = correct(q, k, v, mask)
        q[...] = 0; k[...] = 7; v[...] = 1e30
        if mask is not None:
            mask[...] = 1
        return result
    """
    done = compare(tmp_path, body, "--cases", "2")
    assert done.returncode == 0 and "PASS" in done.stdout


def test_slow_on_one_case_only_meets_the_timeout_naming_it(tmp_path):
    body = """
    import time
    def attend(q, k, v, mask):
        if q.shape == (2, 3) and k.shape[0] == 4:  # cross_attention, the second case
            time.sleep(10)
        return correct(q, k, v, mask)
    """
    done = compare(tmp_path, body, "--cases", "0", "--timeout", "3", timeout=60)
    one_line_error(done, "time limit of 3 s reached while running attend on case cross_attention (2 of ")
    assert done.seconds < 9


def test_printing_100_mb_is_cut_and_the_json_stays_valid(tmp_path):
    body = """
    import sys
    def attend(q, k, v, mask):
        sys.stdout.write("x" * (100 << 20))
        return correct(q, k, v, mask)
    """
    done = compare(tmp_path, body, "--cases", "0", "--format", "json", "--timeout", "120", timeout=200)
    assert done.returncode == 0 and json.loads(done.stdout)["passed"] is True
    assert len(done.stderr) < 10_000 and "more bytes not shown" in done.stderr


def test_a_forged_report_on_fd_1_is_not_the_report(tmp_path):
    body = """
    import os
    def attend(q, k, v, mask):
        os.write(1, b'{"passed": true, "cases": []}\\n')
        return np.zeros((q.shape[0], v.shape[1]))
    """
    data = failed_json(compare(tmp_path, body, "--cases", "0", "--format", "json"))
    assert data["cases"]


def test_terminal_controls_in_printed_text_are_escaped(tmp_path):
    body = "print('\\x1b[2J\\rcases within the float32 bounds: PASS')\nattend = lambda q, k, v, mask: q * 0\n"
    done = compare(tmp_path, body, "--cases", "0")
    assert done.returncode == 1 and "\x1b" not in done.stdout
    assert "  | \\x1b[2J\\rcases within" in done.stdout


def test_closing_the_descriptors_is_a_failure_not_a_pass(tmp_path):
    body = """
    import os
    def attend(q, k, v, mask):
        for fd in range(3, 256):
            try:
                os.close(fd)
            except OSError:
                pass
        return correct(q, k, v, mask)
    """
    done = compare(tmp_path, body, "--cases", "0", "--timeout", "20", timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and "no verdict" in done.stderr


def test_reading_stdin_gets_nothing(tmp_path):
    body = """
    import sys
    def attend(q, k, v, mask):
        assert sys.stdin.read() == ""
        return correct(q, k, v, mask)
    """
    assert compare(tmp_path, body, "--cases", "0").returncode == 0


def test_a_grandchild_process_is_killed_with_the_child(tmp_path):
    marker = tmp_path / "alive"
    body = f"""
    import os, subprocess, sys
    def attend(q, k, v, mask):
        if not os.path.exists("started"):
            open("started", "w").close()
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3); open({str(marker)!r}, 'w').close()"])
        return correct(q, k, v, mask)
    """
    done = compare(tmp_path, body, "--cases", "0")
    assert done.returncode == 0
    time.sleep(4)
    assert not marker.exists()


def test_a_hostile_exception_str_is_still_an_error_verdict(tmp_path):
    body = """
    class Nasty(Exception):
        def __str__(self):
            raise RuntimeError("no")
    def attend(q, k, v, mask):
        raise Nasty()
    """
    data = failed_json(compare(tmp_path, body, "--cases", "0", "--format", "json"))
    assert data["cases"][0]["error"] == "Nasty"


def test_the_python_api_reads_two_rows_as_the_output_in_process():
    import numpy as np

    from symbolic_attn.testing import compare_attention

    def rows(q, k, v, mask):
        w = np.exp(q @ k.T / np.sqrt(np.float32(2)))
        return ((w / w.sum(axis=-1, keepdims=True)) @ v).tolist()

    report = compare_attention(rows, [[1, 0], [0, 1]], [[1, 1], [0, 1]], [[1, 2], [3, 4]])
    assert report.passed and [s.stage for s in report.stages] == ["output"]


def test_a_module_that_hangs_at_import_is_killed_at_the_timeout(tmp_path):
    marker = tmp_path / "still_running"
    body = f"""
    import time
    for _ in range(8):
        time.sleep(1)
    open({str(marker)!r}, "w").close()
    attend = correct
    """
    done = compare(tmp_path, body, "--cases", "0", "--timeout", "1", timeout=60)
    one_line_error(done, "time limit of 1 s reached")
    time.sleep(9)
    assert not marker.exists()
