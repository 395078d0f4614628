"""Verifying side by side (symbolic_attn.proofs.parallel, ``derive --jobs``, ``list --verify --jobs``).

A worker is trusted only with a success: every failure, a worker's death and a value that
cannot come back are redone in the parent, and the error raised is the first in order.
The tests that fork run in a subprocess, so that no thread of the test process (JAX,
PyTorch) stands in the way of forking.
"""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from symbolic_attn.proofs import parallel
from symbolic_attn.proofs.parallel import available_cores, can_fork, map_forked

ROOT = Path(__file__).resolve().parent.parent


def run_python(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh single-threaded interpreter; its stdout is the answer."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_values_come_back_in_order_and_some_from_a_worker():
    done = run_python("""
        import os, time
        from symbolic_attn.proofs.parallel import map_forked
        parent = os.getpid()
        def task(i):
            time.sleep(0.05)
            return (i * i, os.getpid() != parent)
        out = map_forked([lambda i=i: task(i) for i in range(12)], jobs=2)
        print([v for v, _ in out] == [i * i for i in range(12)], any(w for _, w in out), all(not w for _, w in out))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "False"]


def test_the_first_failure_in_order_is_raised_with_its_own_type_and_message():
    done = run_python("""
        import time
        from symbolic_attn.proofs.parallel import map_forked
        def slow_fail():
            time.sleep(0.3)
            raise ValueError("task one is wrong")
        def quick_fail():
            raise KeyError("task three")
        tasks = [lambda: 0, slow_fail, lambda: 2, quick_fail] + [lambda: time.sleep(0.02)] * 6
        try:
            map_forked(tasks, jobs=2)
        except Exception as error:
            print(type(error).__name__, str(error))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ValueError task one is wrong"


def test_a_task_that_fails_only_in_a_worker_is_redone_in_the_parent():
    done = run_python("""
        import os, time
        from symbolic_attn.proofs.parallel import map_forked
        parent = os.getpid()
        def picky(i):
            time.sleep(0.03)
            if os.getpid() != parent:
                raise RuntimeError("only the parent may compute this")
            return i
        print(map_forked([lambda i=i: picky(i) for i in range(10)], jobs=2))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(list(range(10)))


def test_a_worker_that_dies_costs_no_value_and_no_hang():
    done = run_python("""
        import os, time
        from symbolic_attn.proofs.parallel import map_forked
        parent = os.getpid()
        def fragile(i):
            time.sleep(0.03)
            if os.getpid() != parent and i == 5:
                os._exit(3)  # as if killed in the middle of a task
            return i + 100
        print(map_forked([lambda i=i: fragile(i) for i in range(10)], jobs=2))
    """, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str([i + 100 for i in range(10)])


def test_a_value_that_cannot_be_pickled_is_computed_in_the_parent():
    done = run_python("""
        import time
        from symbolic_attn.proofs.parallel import map_forked
        def make(i):
            time.sleep(0.03)
            return lambda: i  # a lambda cannot be pickled
        out = map_forked([lambda i=i: make(i) for i in range(8)], jobs=2)
        print([f() for f in out])
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(list(range(8))) and "Traceback" not in done.stderr


def test_a_worker_killed_while_sending_a_large_value_costs_no_hang():
    done = run_python("""
        import os, signal, threading, time
        from symbolic_attn.proofs.parallel import map_forked
        parent = os.getpid()
        def big():
            if os.getpid() == parent:
                return "computed in the parent"
            # Killed a moment later, while the 50 MB value is being pickled or sent.
            threading.Timer(0.05, lambda: os.kill(os.getpid(), signal.SIGKILL)).start()
            return b"x" * (50 * 1024 * 1024)
        started = time.monotonic()
        out = map_forked([big, lambda: 2, lambda: 3], jobs=2)
        print(out[0] if isinstance(out[0], str) else "bytes", out[1:], time.monotonic() - started < 20)
    """, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(" ", 3)[-1].strip().endswith("True")
    assert "[2, 3]" in done.stdout


def test_a_failure_is_raised_without_waiting_for_slower_later_tasks():
    done = run_python("""
        import time
        from symbolic_attn.proofs.parallel import map_forked
        def wrong():
            raise ValueError("the first task is wrong")
        started = time.monotonic()
        try:
            map_forked([wrong, lambda: time.sleep(30), lambda: time.sleep(30)], jobs=3)
        except ValueError as error:
            print(error, time.monotonic() - started < 10)
    """, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "the first task is wrong True"


def test_what_tasks_print_in_a_worker_is_not_lost():
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import time
        from symbolic_attn.proofs.parallel import map_forked
        print("before", flush=False)
        def note(i):
            time.sleep(0.02)
            print(f"note {i}")
            return i
        map_forked([lambda i=i: note(i) for i in range(6)], jobs=2)
    """)], capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
    assert sorted(line for line in done.stdout.splitlines() if line.startswith("note")) == [f"note {i}" for i in range(6)]
    assert done.stdout.count("before") == 1  # pending output of the parent is not printed again by a worker


def test_on_value_sees_values_in_order():
    done = run_python("""
        import time
        from symbolic_attn.proofs.parallel import map_forked
        seen = []
        out = map_forked([lambda i=i: time.sleep(0.05 * (5 - i)) or i for i in range(5)], jobs=2,
                         on_value=lambda index, value: seen.append((index, value)))
        print(seen == [(i, i) for i in range(5)], out == list(range(5)))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]


def test_start_with_takes_those_tasks_first():
    done = run_python("""
        from symbolic_attn.proofs.parallel import map_forked
        order = []
        out = map_forked([lambda i=i: order.append(i) or i for i in range(5)], jobs=1, start_with=[4])
        print(out)
    """)
    assert done.stdout.strip() == "[0, 1, 2, 3, 4]"  # values in task order whatever the schedule


def test_a_process_with_other_threads_does_not_fork():
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    thread.start()
    try:
        assert not can_fork()
        pids = map_forked([os.getpid] * 4, jobs=2)
        assert pids == [os.getpid()] * 4  # everything ran here
    finally:
        stop.set()
        thread.join()


def test_one_job_runs_everything_here_and_errors_propagate():
    assert map_forked([os.getpid, os.getpid], jobs=1) == [os.getpid()] * 2
    with pytest.raises(ZeroDivisionError):
        map_forked([lambda: 1, lambda: 1 // 0, lambda: 3], jobs=1)
    assert map_forked([], jobs=4) == []
    assert 1 <= available_cores() <= os.cpu_count()
    assert parallel.MAX_JOBS >= 2


SLOW = '''
"""Slow: a build that takes long."""
import os, time
from pathlib import Path
import sympy
from symbolic_attn.proofs.chain import Derivation, Step

NAME = "{name}"
x = sympy.Symbol("x")


def build():
    Path("{pids}").joinpath(str(os.getpid()) + "-{name}").write_text("")
    time.sleep(30)
    return Derivation("Square", (x + 1) ** 2, [Step(x**2 + 2*x + 1, "expand")])
'''


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its dead parent's successor) counts as gone.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def slow_folder(tmp_path):
    """Two scripts whose builds record their process id in ``pids`` and then sleep 30 s."""
    folder, pids = tmp_path / "slow", tmp_path / "pids"
    folder.mkdir()
    pids.mkdir()
    for name in ("one", "two"):
        (folder / f"{name}.py").write_text(SLOW.format(name=name, pids=pids), encoding="utf-8")
    return folder, pids


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork and /proc: Linux")
def test_a_time_limit_ends_the_workers_too(tmp_path):
    folder, pids = slow_folder(tmp_path)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "symbolic_attn", "derive", str(folder), "--out", str(tmp_path / "out"),
                           "--jobs", "2", "--timeout", "2"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "time limit of 2 s" in done.stderr and done.stderr.count("\n") == 1
    assert time.monotonic() - started < 20
    workers = [int(p.name.split("-")[0]) for p in pids.iterdir()]
    assert len(workers) == 2 and len(set(workers)) == 2  # both builds ran, in two processes
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers)
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork and /proc: Linux")
def test_a_worker_ends_when_its_parent_is_killed(tmp_path):
    folder, pids = slow_folder(tmp_path)
    process = subprocess.Popen([sys.executable, "-m", "symbolic_attn", "derive", str(folder), "--out",
                                str(tmp_path / "out"), "--jobs", "2", "--timeout", "0"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while len(list(pids.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = [int(p.name.split("-")[0]) for p in pids.iterdir()]
    assert len(workers) == 2
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in workers if pid != process.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers if pid != process.pid)


# ------------------------------------------------------------------ derive and list --verify

GOOD = '''
"""Good {name}: squares.

Expanding a square.
"""
import sympy
from symbolic_attn.proofs.chain import Derivation, Scope, Step

NAME = "{name}"
x = sympy.Symbol("x")


def build():
    return Derivation("Square", (x + {k}) ** 2, [Step(x**2 + {two_k}*x + {k_squared}, "expand")],
                      scope=Scope.proved("every x"))
'''


def good(name, k=1, wrong=False):
    return GOOD.format(name=name, k=k, two_k=2 * k + (1 if wrong else 0), k_squared=k * k)


def derive_command(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "symbolic_attn", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_derive_output_is_the_same_byte_for_byte_with_one_or_two_jobs(tmp_path):
    for jobs in ("1", "2"):
        done = derive_command("derive", "--out", tmp_path / jobs, "--jobs", jobs)
        assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in (tmp_path / "1").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "2").iterdir()) and "notes.tex" in names
    for name in names:
        assert (tmp_path / "1" / name).read_bytes() == (tmp_path / "2" / name).read_bytes(), name
        assert (tmp_path / "2" / name).read_bytes() == (ROOT / "out" / name).read_bytes(), name


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_first_failing_script_in_file_order_is_reported(tmp_path, jobs):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "a_fine.py").write_text(good("a_fine"), encoding="utf-8")
    (folder / "b_wrong.py").write_text(good("b_wrong", k=2, wrong=True), encoding="utf-8")
    (folder / "c_wrong.py").write_text(good("c_wrong", k=3, wrong=True), encoding="utf-8")
    (folder / "d_fine.py").write_text(good("d_fine", k=4), encoding="utf-8")
    done = derive_command("derive", folder, "--out", tmp_path / "out", "--jobs", jobs)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "b_wrong.py" in done.stderr and "c_wrong.py" not in done.stderr
    assert not (tmp_path / "out").exists()  # nothing written


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_build_error_before_a_failing_step_is_the_one_reported(tmp_path, jobs):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "a_fine.py").write_text(good("a_fine"), encoding="utf-8")
    (folder / "b_raises.py").write_text(good("b_raises").replace("    return Derivation", "    1 / 0\n    return Derivation"),
                                        encoding="utf-8")
    (folder / "c_wrong.py").write_text(good("c_wrong", k=3, wrong=True), encoding="utf-8")
    done = derive_command("derive", folder, "--out", tmp_path / "out", "--jobs", jobs)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "b_raises.py: build() raised ZeroDivisionError" in done.stderr


def test_list_verify_is_the_same_with_one_or_two_jobs(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    for index in range(4):
        (folder / f"s{index}.py").write_text(good(f"s{index}", k=index + 1, wrong=index == 2), encoding="utf-8")
    outputs = [derive_command("list", folder, "--verify", "--jobs", jobs) for jobs in ("1", "2")]
    assert [o.returncode for o in outputs] == [1, 1]
    assert outputs[0].stdout == outputs[1].stdout
    assert outputs[0].stdout.count("verification failed") == 1 and "s2.py" in outputs[0].stdout


@pytest.mark.parametrize("value", ["0", "-1", "x", "2.5", "65", "٣"])
def test_bad_jobs_is_one_line_exit_2(value):
    done = derive_command("derive", "--out", "/nonexistent/never-written", "--jobs", value)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--jobs" in done.stderr
    assert "Traceback" not in done.stderr


def test_printed_results_are_plain_data_and_verified_first():
    import pickle

    import sympy

    from symbolic_attn.errors import ProofError
    from symbolic_attn.proofs.chain import Derivation, Step
    from symbolic_attn.proofs.result import Printed, Result

    x = sympy.Symbol("x")
    right = Result("r", "Right", "", [Derivation("Square", (x + 1) ** 2, [Step(x**2 + 2 * x + 1, "expand")])])
    printed = right.printed()
    assert isinstance(printed, Printed) and pickle.loads(pickle.dumps(printed)) == printed
    assert printed.latex() == right.latex() and printed.rules() == right.rules()
    wrong = Result("w", "Wrong", "", [Derivation("Square", (x + 1) ** 2, [Step(x**2 + x + 1, "expand")])])
    with pytest.raises(ProofError):
        wrong.printed()  # never printed unverified


BROKEN_PRINTING = '''
"""A user part whose printing is broken."""
from symbolic_attn.proofs.chain import Scope

NAME = "custom"


class Part:
    title = "Custom part"
    scope = Scope.proved("everything")
    note = ""

    def verify(self):
        return self

    def latex(self):
        raise RuntimeError("latex not written yet")


def build():
    return Part()
'''


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_verification_failure_comes_before_an_earlier_script_that_fails_to_print(tmp_path, jobs):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "a_custom.py").write_text(BROKEN_PRINTING, encoding="utf-8")
    (folder / "z_wrong.py").write_text(good("z_wrong", k=3, wrong=True), encoding="utf-8")
    done = derive_command("derive", folder, "--out", tmp_path / "out", "--jobs", jobs)
    assert done.returncode == 1 and "verification failed" in done.stderr and "z_wrong.py" in done.stderr
    (folder / "z_wrong.py").unlink()
    done = derive_command("derive", folder, "--out", tmp_path / "out", "--jobs", jobs)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "a_custom.py: printing raised RuntimeError: latex not written yet" in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_list_verify_does_not_print_latex_and_shortens_a_title_once(tmp_path, jobs):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "a_custom.py").write_text(BROKEN_PRINTING, encoding="utf-8")
    (folder / "b_squares.py").write_text(good("b_squares").replace('"""Good b_squares: squares.', '"""Squares. .'),
                                          encoding="utf-8")
    done = derive_command("list", folder, "--verify", "--jobs", jobs)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Custom part: proved for everything" in done.stdout
    assert "b_squares.py  Squares.\n" in done.stdout  # "Squares. ." loses its final period once


def test_list_verify_prints_each_block_as_soon_as_it_is_known(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "a_first.py").write_text(good("a_first"), encoding="utf-8")
    (folder / "b_slow.py").write_text(good("b_slow").replace("def build():", "def build():\n    import time; time.sleep(30)"),
                                      encoding="utf-8")
    done = derive_command("list", folder, "--verify", "--jobs", "2", "--timeout", "3")
    assert done.returncode == 2 and "time limit of 3 s" in done.stderr
    assert done.stdout.startswith("a_first  ") and "Square: proved for every x" in done.stdout
