"""Outside hostile battery: `symbolic-attn compare` with hostile user kernels (README/--help only)."""

from __future__ import annotations

import json
import os
import signal
import textwrap
import time

import pytest

from hostile_outside_helpers import assert_bad_input, assert_no_traceback, cli

GOOD = """
import numpy as np
def attention(q, k, v, mask):
    s = (q @ k.T) / np.sqrt(np.array(q.shape[1], dtype=q.dtype))
    if mask is not None:
        s = np.where(np.asarray(mask, dtype=bool), s, -np.inf)
    s = s - s.max(axis=1, keepdims=True)
    e = np.exp(s)
    w = e / e.sum(axis=1, keepdims=True)
    return (w @ v).astype(q.dtype), w.astype(q.dtype)
"""


def module(tmp_path, body, name="kern.py"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(GOOD) + "\n" + textwrap.dedent(body), encoding="utf-8")
    return p


def compare(target, *extra, timeout=25, cwd=None):
    return cli("compare", target, "--cases", "1", *extra, timeout=timeout, cwd=cwd)


def verdict_run(r, expect_rc):
    assert_no_traceback(r)
    assert r.rc == expect_rc, r.show()
    assert r.elapsed < 20, r.show()


def test_good_kernel_passes(tmp_path):
    verdict_run(compare(f"{module(tmp_path, '')}:attention"), 0)


# A function that misbehaves while being called: each case is that case's error/fail verdict
# (exit 1), never a traceback, never a hang.
CALL_FAILS = {
    "raises_value_error": "def f(q, k, v, mask):\n    raise ValueError('boom')\n",
    "raises_system_exit": "import sys\ndef f(q, k, v, mask):\n    sys.exit(0)\n",
    "raises_keyboard_interrupt": "def f(q, k, v, mask):\n    raise KeyboardInterrupt\n",
    "raises_memory_error": "def f(q, k, v, mask):\n    raise MemoryError\n",
    "recursion": "def f(q, k, v, mask):\n    return f(q, k, v, mask)\n",
    "exception_str_raises": "class E(Exception):\n    def __str__(self):\n        raise RuntimeError('no str')\ndef f(q, k, v, mask):\n    raise E()\n",
    "exception_message_escapes": "def f(q, k, v, mask):\n    raise ValueError('\\x1b[2J\\nFAKE: all cases pass\\r')\n",
    "returns_none": "def f(q, k, v, mask):\n    return None\n",
    "returns_string": "def f(q, k, v, mask):\n    return 'hello'\n",
    "returns_dict": "def f(q, k, v, mask):\n    return {'out': 1}\n",
    "returns_generator": "def f(q, k, v, mask):\n    return (x for x in range(3))\n",
    "returns_three_tuple": "def f(q, k, v, mask):\n    o, w = attention(q, k, v, mask)\n    return o, w, w\n",
    "returns_nan": "import numpy as np\ndef f(q, k, v, mask):\n    o, w = attention(q, k, v, mask)\n    return np.full_like(o, np.nan)\n",
    "returns_inf": "import numpy as np\ndef f(q, k, v, mask):\n    o, w = attention(q, k, v, mask)\n    return np.full_like(o, np.inf)\n",
    "returns_complex": "def f(q, k, v, mask):\n    o, w = attention(q, k, v, mask)\n    return o + 1j\n",
    "returns_strings_array": "import numpy as np\ndef f(q, k, v, mask):\n    o, w = attention(q, k, v, mask)\n    return np.full(o.shape, 'x')\n",
    "returns_object_array": "import numpy as np\ndef f(q, k, v, mask):\n    o, w = attention(q, k, v, mask)\n    return np.full(o.shape, object())\n",
    "returns_wrong_shape": "def f(q, k, v, mask):\n    o, w = attention(q, k, v, mask)\n    return o.T[:, :1]\n",
    "returns_huge_broadcast": "import numpy as np\ndef f(q, k, v, mask):\n    return np.broadcast_to(np.zeros(1), (10**6, 10**6))\n",
    "returns_scalar": "def f(q, k, v, mask):\n    return 0.5\n",
    "returns_hostile_array_like": "class A:\n    def __array__(self, *a, **k):\n        raise RuntimeError('no array')\n    def __len__(self):\n        return 10**18\ndef f(q, k, v, mask):\n    return A()\n",
    "returns_bool_array": "def f(q, k, v, mask):\n    o, w = attention(q, k, v, mask)\n    return o > 0\n",
    "weights_wrong": "import numpy as np\ndef f(q, k, v, mask):\n    o, w = attention(q, k, v, mask)\n    return o, np.zeros_like(w)\n",
    "unscaled_bug": "import numpy as np\ndef f(q, k, v, mask):\n    s = q @ k.T\n    s = np.where(mask, s, -np.inf)\n    e = np.exp(s - s.max(1, keepdims=True))\n    return (e / e.sum(1, keepdims=True)) @ v\n",
    "mutates_inputs": "def f(q, k, v, mask):\n    o, w = attention(q, k, v, mask)\n    q[...] = 0; v[...] = 0\n    return o * 0 + 1\n",
}


def test_a_leading_axis_of_one_is_documented_and_dropped(tmp_path):
    """An output 1 x n x d_v (a batch of one) is the n x d_v output, as the README says; a
    leading axis of two is a wrong shape (judged after the outside battery's returns_3d case)."""
    one = "def f(q, k, v, mask):\n    o, w = attention(q, k, v, mask)\n    return o[None]\n"
    verdict_run(compare(f"{module(tmp_path, one)}:f"), 0)
    two = "import numpy as np\ndef f(q, k, v, mask):\n    o, w = attention(q, k, v, mask)\n    return np.stack([o, o])\n"
    (tmp_path / "two").mkdir()
    verdict_run(compare(f"{module(tmp_path / 'two', two)}:f"), 1)


@pytest.mark.parametrize("name", sorted(CALL_FAILS))
def test_misbehaving_call_is_a_verdict(tmp_path, name):
    r = compare(f"{module(tmp_path, CALL_FAILS[name])}:f")
    verdict_run(r, 1)
    assert "\x1b" not in r.out and "\x1b" not in r.err
    assert not any(ln.startswith("FAKE:") for ln in (r.out + r.err).splitlines())


def test_json_stdout_stays_json_when_kernel_writes_fd1(tmp_path):
    body = "import os\ndef f(q, k, v, mask):\n    os.write(1, b'{\"garbage\": \\x1b[31m')\n    print('more')\n    return attention(q, k, v, mask)\n"
    r = compare(f"{module(tmp_path, body)}:f", "--format", "json")
    verdict_run(r, 0)
    json.loads(r.out)
    assert "\x1b" not in r.out and "\x1b" not in r.err


def test_kernel_floods_fd1_and_fd2(tmp_path):
    body = "import os\ndef f(q, k, v, mask):\n    os.write(1, b'x' * 5_000_000)\n    os.write(2, b'y' * 5_000_000)\n    return attention(q, k, v, mask)\n"
    r = compare(f"{module(tmp_path, body)}:f")
    verdict_run(r, 0)
    assert len(r.out) + len(r.err) < 200_000


def test_prints_at_import(tmp_path):
    body = "print('\\x1b[2Jimported'); import sys; sys.stderr.write('err\\n')\nf = attention\n"
    r = compare(f"{module(tmp_path, body)}:f", "--format", "json")
    verdict_run(r, 0)
    json.loads(r.out)


# The process ends some other way, or runs out of time: exit 2, one line, fast.
def _ends(tmp_path, body, *extra, timeout=25):
    r = compare(f"{module(tmp_path, body)}:f", *extra, timeout=timeout)
    assert_bad_input(r)
    return r


def test_os_exit(tmp_path):
    _ends(tmp_path, "import os\ndef f(q, k, v, mask):\n    os._exit(3)\n")


def test_sigkill_self(tmp_path):
    _ends(tmp_path, "import os, signal\ndef f(q, k, v, mask):\n    os.kill(os.getpid(), signal.SIGKILL)\n")


def test_segfault(tmp_path):
    _ends(tmp_path, "import ctypes\ndef f(q, k, v, mask):\n    ctypes.string_at(0)\n")


def test_closes_reply_channel(tmp_path):
    body = "import os\ndef f(q, k, v, mask):\n    for fd in range(3, 256):\n        try:\n            os.close(fd)\n        except OSError:\n            pass\n    return attention(q, k, v, mask)\n"
    r = compare(f"{module(tmp_path, body)}:f")
    assert_no_traceback(r)
    assert r.rc in (1, 2), r.show()
    if r.rc == 2:
        assert_bad_input(r)


def test_writes_garbage_to_every_fd(tmp_path):
    body = "import os\ndef f(q, k, v, mask):\n    for fd in range(3, 64):\n        try:\n            os.write(fd, b'\\x00garbage' * 100)\n        except OSError:\n            pass\n    return attention(q, k, v, mask)\n"
    r = compare(f"{module(tmp_path, body)}:f")
    assert_no_traceback(r)
    assert r.rc in (0, 1, 2), r.show()
    if r.rc == 2:
        assert_bad_input(r)


def test_sleep_past_timeout(tmp_path):
    r = _ends(tmp_path, "import time\ndef f(q, k, v, mask):\n    time.sleep(1000)\n", "--timeout", "2", timeout=15)
    assert r.elapsed < 10


def test_ignores_sigterm_and_sleeps(tmp_path):
    body = "import signal, time\ndef f(q, k, v, mask):\n    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n    signal.signal(signal.SIGINT, signal.SIG_IGN)\n    while True:\n        time.sleep(0.1)\n"
    r = _ends(tmp_path, body, "--timeout", "2", timeout=15)
    assert r.elapsed < 10


def test_busy_loop_past_timeout(tmp_path):
    r = _ends(tmp_path, "def f(q, k, v, mask):\n    while True:\n        pass\n", "--timeout", "2", timeout=15)
    assert r.elapsed < 10


def test_grandchild_killed(tmp_path):
    pidfile = tmp_path / "gc.pid"
    body = f"""import subprocess, time, sys
def f(q, k, v, mask):
    p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])
    open({str(pidfile)!r}, 'w').write(str(p.pid))
    time.sleep(300)
"""
    _ends(tmp_path, body, "--timeout", "3", timeout=15)
    time.sleep(1)
    pid = int(pidfile.read_text())
    try:
        os.kill(pid, 0)
        alive = open(f"/proc/{pid}/stat").read().split()[2] != "Z"
    except (ProcessLookupError, FileNotFoundError):
        alive = False
    if alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, "grandchild survived the timeout"


def test_daemonised_grandchild_setsid_killed(tmp_path):
    pidfile = tmp_path / "gc.pid"
    body = f"""import subprocess, time, sys, os
def f(q, k, v, mask):
    p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'], start_new_session=False)
    open({str(pidfile)!r}, 'w').write(str(p.pid))
    os._exit(0)
"""
    _ends(tmp_path, body, timeout=15)
    time.sleep(1)
    pid = int(pidfile.read_text())
    try:
        alive = open(f"/proc/{pid}/stat").read().split()[2] != "Z"
    except FileNotFoundError:
        alive = False
    if alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, "grandchild survived its parent's death"


def test_non_daemon_thread_left_running(tmp_path):
    body = "import threading, time\ndef f(q, k, v, mask):\n    threading.Thread(target=time.sleep, args=(300,)).start()\n    return attention(q, k, v, mask)\n"
    r = compare(f"{module(tmp_path, body)}:f", timeout=20)
    assert_no_traceback(r)
    assert r.rc in (0, 1, 2) and r.elapsed < 15, r.show()


def test_import_time_sys_exit(tmp_path):
    r = compare(f"{module(tmp_path, 'import sys; sys.exit(0)')}:attention")
    assert_bad_input(r)


def test_import_time_os_exit(tmp_path):
    r = compare(f"{module(tmp_path, 'import os; os._exit(0)')}:attention")
    assert_bad_input(r)


def test_import_time_infinite_loop(tmp_path):
    r = compare(f"{module(tmp_path, 'while True: pass')}:attention", "--timeout", "2", timeout=15)
    assert_bad_input(r)


def test_import_time_exception(tmp_path):
    body = 'raise RuntimeError(chr(27) + "boom")'
    r = compare(f"{module(tmp_path, body)}:attention")
    assert_bad_input(r)
    assert "\x1b" not in r.err


def test_syntax_error_module(tmp_path):
    p = tmp_path / "bad.py"
    p.write_text("def f(:\n")
    assert_bad_input(compare(f"{p}:f"), "bad.py")


def test_non_utf8_module(tmp_path):
    p = tmp_path / "bad.py"
    p.write_bytes(b"x = '\xff'\ndef f(q,k,v,m):\n    return 0\n")
    assert_bad_input(compare(f"{p}:f"))


def test_attribute_not_callable(tmp_path):
    assert_bad_input(compare(f"{module(tmp_path, 'f = 42')}:f"), "f")


def test_missing_function(tmp_path):
    assert_bad_input(compare(f"{module(tmp_path, '')}:nope"), "nope")


@pytest.mark.parametrize("spec", ["nonexistent_module_xyz:f", "kern.py", ":f", "kern.py:", "a:b:c", "kern.py:__class__.__bases__",
                                  "/dev/null:f", "\x1b[2J:f", "../../../../etc/passwd:f"])
def test_bad_specs(tmp_path, spec):
    module(tmp_path, "")
    r = compare(spec, cwd=tmp_path)
    assert_bad_input(r)
    assert "\x1b" not in r.err


def test_directory_as_module(tmp_path):
    (tmp_path / "pkgdir.py").mkdir()
    assert_bad_input(compare(f"{tmp_path / 'pkgdir.py'}:f"))


def test_fifo_as_module(tmp_path):
    os.mkfifo(tmp_path / "fifo.py")
    assert_bad_input(compare(f"{tmp_path / 'fifo.py'}:f", timeout=15))


@pytest.mark.parametrize("opt,val", [("--cases", "201"), ("--cases", "-1"), ("--cases", "x"), ("--seed", "abc"),
                                      ("--dtype", "float8"), ("--mask-convention", "evil"), ("--empty-row", "boom"),
                                      ("--timeout", "-2"), ("--format", "xml")])
def test_bad_options(tmp_path, opt, val):
    assert_bad_input(compare(f"{module(tmp_path, '')}:attention", opt, val), opt)


def test_seed_huge(tmp_path):
    r = compare(f"{module(tmp_path, '')}:attention", "--seed", "9" * 5000)
    assert_no_traceback(r)
    assert r.rc in (0, 2), r.show()
    if r.rc == 2:
        assert_bad_input(r, "--seed")


def test_seed_negative(tmp_path):
    r = compare(f"{module(tmp_path, '')}:attention", "--seed", "-1")
    assert_no_traceback(r)
    assert r.rc in (0, 2), r.show()
