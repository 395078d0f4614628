"""``derive`` and ``list`` against hostile scripts and options (found by the outside battery).

A script that raises KeyboardInterrupt or SystemExit is bad input naming the file (the
user's own Ctrl-C still ends the command with 130); a title may not hold invisible format
characters; a worker that dies without a result is a failure of that script, never a
silently shorter listing; ``--out`` is never a link; a script is read once, by the one
file reader, and nothing is written beside it.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from symbolic_attn.cli import main
from symbolic_attn.proofs import scripts as derivation_scripts

ROOT = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, SYMPY_GROUND_TYPES="python", PYTHONPATH=str(ROOT))

GOOD = '''
"""A simple result."""
import sympy
from symbolic_attn.proofs import Derivation, Scope, Step
NAME = "{name}"
x = sympy.Symbol("x", real=True)
def build():
    return [Derivation("Square", (x + 1)**2, [Step(x**2 + 2*x + 1, "expand")], scope=Scope.proved("all real x"))]
'''

forking = pytest.mark.skipif(not hasattr(os, "fork"), reason="workers are forked")


def folder(tmp_path, files):
    where = tmp_path / "ders"
    where.mkdir(exist_ok=True)
    for name, text in files.items():
        (where / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return where


def cli(*args, timeout=60):
    """The command in a fresh process (the worker tests need a single-threaded one)."""
    done = subprocess.run([sys.executable, "-m", "symbolic_attn", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=ENV, cwd=ROOT)
    return done.returncode, done.stdout, done.stderr


def one_line(err):
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ----------------------------------------------------------------------------- KeyboardInterrupt, SystemExit


@pytest.mark.parametrize("text, shown", [
    ("raise KeyboardInterrupt\n", "importing failed: KeyboardInterrupt"),
    ("import sys\nsys.exit(0)\n", "importing failed: SystemExit: 0"),
    ("raise SystemExit(3)\n", "importing failed: SystemExit: 3"),
    ('NAME = "b"\ndef build():\n    raise KeyboardInterrupt\n', "build() raised KeyboardInterrupt"),
], ids=["import-keyboard-interrupt", "import-sys-exit-0", "import-system-exit-3", "build-keyboard-interrupt"])
@pytest.mark.parametrize("command", ["derive", "list"])
def test_a_script_raising_an_interrupt_or_exit_is_bad_input_naming_the_file(tmp_path, capsys, text, shown, command):
    where = folder(tmp_path, {"h.py": text})
    argv = ["derive", str(where), "--out", str(tmp_path / "out"), "--jobs", "1"] if command == "derive" else \
        ["list", "--verify", "--jobs", "1", str(where)]
    if command == "list" and "build" not in shown:
        argv = ["list", str(where)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    line = one_line(captured.err) if captured.err.strip() else captured.out.strip().splitlines()[-1]
    assert "h.py" in (captured.err + captured.out) and shown in line, captured
    assert not (tmp_path / "out").exists()


def _interrupted(tmp_path, files, *args):
    """Run the command, send SIGINT (as Ctrl-C does) once the script is running, return (rc, err)."""
    marker = tmp_path / "running"
    where = folder(tmp_path, {name: text.format(marker=str(marker)) for name, text in files.items()})
    process = subprocess.Popen([sys.executable, "-m", "symbolic_attn", *args, str(where)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=tmp_path,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not marker.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    return process.returncode, err


SLEEPS_WHILE_IMPORTED = "import time\nopen({marker!r}, 'w').close()\ntime.sleep(60)\n"
SLEEPS_IN_BUILD = 'NAME = "s"\ndef build():\n    import time\n    open({marker!r}, "w").close()\n    time.sleep(60)\n'


@pytest.mark.parametrize("files, args", [
    ({"s.py": SLEEPS_WHILE_IMPORTED}, ("list",)),
    ({"s.py": SLEEPS_IN_BUILD}, ("derive", "--out", "out", "--jobs", "1")),
    ({"a.py": GOOD.format(name="a"), "s.py": SLEEPS_IN_BUILD}, ("derive", "--out", "out", "--jobs", "2")),
], ids=["while-imported", "in-build", "in-build-in-a-worker"])
def test_the_users_ctrl_c_still_ends_the_command_with_130(tmp_path, files, args):
    rc, err = _interrupted(tmp_path, files, *args)
    assert rc == 130, err
    assert one_line(err) == "symbolic-attn: error: interrupted"
    assert not (tmp_path / "out").exists()


def test_interrupt_watch_tells_a_raised_interrupt_from_a_signal():
    before = signal.getsignal(signal.SIGINT)
    with derivation_scripts.InterruptWatch() as watch:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            assert watch.raised_by_code()
    with derivation_scripts.InterruptWatch() as watch:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        except KeyboardInterrupt:
            assert not watch.raised_by_code()
        else:
            pytest.fail("no KeyboardInterrupt")
    assert signal.getsignal(signal.SIGINT) is before  # put back


# ----------------------------------------------------------------------------- --title


@pytest.mark.parametrize("title, shown", [
    ("\u202eevil", "U+202E"), ("a\u200bb", "U+200B"), ("\u2066x", "U+2066"), ("a\u2028b", "U+2028"),
    ("\ufeffx", "U+FEFF"),
], ids=["bidi-override", "zero-width-space", "bidi-isolate", "line-separator", "byte-order-mark"])
def test_a_title_with_an_invisible_character_is_refused(tmp_path, capsys, title, shown):
    where = folder(tmp_path, {"a.py": GOOD.format(name="a")})
    assert main(["derive", str(where), "--out", str(tmp_path / "out"), "--title", title]) == 2
    line = one_line(capsys.readouterr().err)
    assert line.startswith("symbolic-attn: error: --title: ") and shown in line
    assert title not in line  # named as an escape, never printed raw
    assert not (tmp_path / "out").exists()


def test_a_title_in_another_script_is_kept(tmp_path):
    where = folder(tmp_path, {"a.py": GOOD.format(name="a")})
    assert main(["derive", str(where), "--out", str(tmp_path / "out"), "--title", "Séance 3: αβγ, مرحبا"]) == 0
    assert "Séance 3: αβγ, مرحبا" in (tmp_path / "out" / "notes.tex").read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- a worker that dies


ENDS_ITS_PROCESS = 'NAME = "z"\ndef build():\n    import os\n    os._exit(0)\n'
KILLS_ITSELF = 'NAME = "z"\ndef build():\n    import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)\n'


@forking
@pytest.mark.parametrize("text, how", [(ENDS_ITS_PROCESS, "ended (exit status 0)"),
                                       (KILLS_ITSELF, "was killed by SIGKILL")], ids=["os-exit", "sigkill"])
def test_list_verify_reports_a_script_whose_worker_died(tmp_path, text, how):
    where = folder(tmp_path, {"a.py": GOOD.format(name="simple"), "z.py": text})
    rc, out, err = cli("list", "--verify", "--jobs", "2", where)
    assert rc == 2, (out, err)
    assert "simple" in out and "proved for all real x" in out
    assert f"z  {where / 'z.py'}\n    error: the process building and verifying it {how} without a result" in out


@forking
@pytest.mark.parametrize("text, how", [(ENDS_ITS_PROCESS, "ended (exit status 0)"),
                                       (KILLS_ITSELF, "was killed by SIGKILL")], ids=["os-exit", "sigkill"])
def test_derive_fails_naming_a_script_whose_worker_died(tmp_path, text, how):
    where = folder(tmp_path, {"a.py": GOOD.format(name="simple"), "z.py": text})
    rc, out, err = cli("derive", where, "--out", tmp_path / "out", "--jobs", "2")
    assert rc == 2, (out, err)
    assert one_line(err) == (f"symbolic-attn: error: {where / 'z.py'}: the process building and verifying it {how} "
                             "without a result")
    assert not (tmp_path / "out").exists()


@forking
def test_map_forked_on_lost_is_called_for_the_task_a_dead_worker_was_running():
    code = textwrap.dedent("""
        import os, time
        from symbolic_attn.proofs.parallel import map_forked
        parent = os.getpid()
        def task(i):
            time.sleep(0.03)
            if i == 5:
                os._exit(7)  # in the parent too: it must never be run here
            return i
        print(map_forked([lambda i=i: task(i) for i in range(10)], jobs=2, on_lost=lambda i, code: ("lost", i, code)))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=ENV, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str([0, 1, 2, 3, 4, ("lost", 5, 7), 6, 7, 8, 9])


@forking
def test_a_task_raising_system_exit_in_a_worker_is_redone_here_with_its_own_error():
    code = textwrap.dedent("""
        from symbolic_attn.proofs.parallel import map_forked
        def leave():
            raise SystemExit(4)
        try:
            map_forked([lambda: 1, leave, lambda: 3], jobs=2, on_lost=lambda i, code: "lost")
        except SystemExit as error:
            print("SystemExit", error.code)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=ENV, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "SystemExit 4"


# ----------------------------------------------------------------------------- --out a link


@pytest.mark.parametrize("dangling", [False, True], ids=["to-a-folder", "dangling"])
def test_derive_out_that_is_a_link_is_refused(tmp_path, capsys, dangling):
    where = folder(tmp_path, {"a.py": GOOD.format(name="a")})
    target = tmp_path / "elsewhere"
    if not dangling:
        target.mkdir()
        (target / "mine.txt").write_text("keep")
    link = tmp_path / "o"
    link.symlink_to(target)
    assert main(["derive", str(where), "--out", str(link)]) == 2
    line = one_line(capsys.readouterr().err)
    assert line == f"symbolic-attn: error: --out {link}: a link; give the folder itself (nothing was written)"
    assert link.is_symlink()
    if dangling:
        assert not os.path.lexists(target)
    else:
        assert sorted(p.name for p in target.iterdir()) == ["mine.txt"]


# ----------------------------------------------------------------------------- reading a script once


def test_a_script_is_run_from_the_bytes_read_naming_its_file(tmp_path, monkeypatch):
    where = folder(tmp_path, {"a.py": GOOD.format(name="a")})
    opened = []
    from symbolic_attn.exact import source

    real = source.read_bytes
    monkeypatch.setattr(derivation_scripts, "read_bytes",
                        lambda path, kind, *rest: opened.append(Path(path)) or real(path, kind, *rest))
    [script] = derivation_scripts.load_scripts([where])
    assert opened == [where / "a.py"]
    code = script.build.__code__
    assert code.co_filename == str(where / "a.py") and code.co_firstlineno == 7  # as the importer compiles it
    assert script.module.__file__ == str(where / "a.py")
    assert not (where / "__pycache__").exists()  # nothing written beside the user's scripts


def test_a_traceback_of_a_script_names_its_file_and_line(tmp_path):
    where = folder(tmp_path, {"a.py": 'NAME = "a"\n\ndef build():\n    return 1 // 0\n'})
    [script] = derivation_scripts.load_scripts([where])
    try:
        script.build()
    except ZeroDivisionError as error:
        frame = error.__traceback__.tb_next
        assert (frame.tb_frame.f_code.co_filename, frame.tb_lineno) == (str(where / "a.py"), 4)
    else:
        pytest.fail("no ZeroDivisionError")


def test_a_script_swapped_for_a_fifo_after_the_check_does_not_block(tmp_path, capsys, monkeypatch):
    where = folder(tmp_path, {"a.py": GOOD.format(name="a")})
    from symbolic_attn.cli import derive as derive_command

    def swap(paths):
        os.remove(where / "a.py")
        os.mkfifo(where / "a.py")

    monkeypatch.setattr(derive_command, "check_script_files", swap)
    started = time.monotonic()
    assert main(["derive", str(where), "--out", str(tmp_path / "out"), "--timeout", "10"]) == 2
    line = one_line(capsys.readouterr().err)
    assert "a.py" in line and "FIFO" in line and time.monotonic() - started < 20
