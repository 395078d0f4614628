"""Outside hostile battery: `symbolic-attn list` and `derive` (README, docs/derive.md, --help only)."""

from __future__ import annotations

import os
import textwrap

import pytest

from hostile_outside_helpers import assert_bad_input, assert_no_traceback, assert_ok, cli, snapshot

GOOD = '''"""Softmax weights sum to one."""

import sympy
from sympy import Sum, exp

from symbolic_attn.proofs import Assumption, Derivation, Frac, Scope, SoftmaxAt, Step

NAME = "weights_sum_to_one"

n = sympy.Symbol("n", integer=True, positive=True)
i, k = sympy.symbols("i k", integer=True, positive=True)
s = sympy.IndexedBase("s", real=True)
Z = sympy.Symbol("Z", positive=True)

DENOMINATOR = Assumption(
    "D1", "$Z$ names the softmax denominator", r"Z = \\sum_{k=1}^{n} e^{s_k}",
    rewrite=lambda e: e.xreplace({Z: Sum(exp(s[k]), (k, 1, n))}),
)


def build():
    return [Derivation(
        "The weights sum to one",
        Sum(SoftmaxAt(s[k], k, i, n), (i, 1, n)),
        [
            Step(Sum(Frac(exp(s[i]), Z), (i, 1, n)), "definition of softmax", using=("D1",)),
            Step(Frac(Sum(exp(s[i]), (i, 1, n)), Z), "$1/Z$ leaves the sum", rules=("sum.factor_out",)),
            Step(sympy.Integer(1), "the sum is $Z$", using=("D1",)),
        ],
        assumptions=[DENOMINATOR],
        scope=Scope.proved("every $n \\\\ge 1$ and all real scores"),
    )]
'''

SIMPLE = '''"""A simple result."""
import sympy
from symbolic_attn.proofs import Derivation, Scope, Step
NAME = {name}
x = sympy.Symbol("x", real=True)
def build():
    return [Derivation("Square", (x + 1)**2, [Step({rhs}, "expand")], scope=Scope.proved("all real x"))]
'''


def simple(name='"simple"', rhs="x**2 + 2*x + 1"):
    return SIMPLE.format(name=name, rhs=rhs)


def folder(tmp_path, files: dict):
    d = tmp_path / "ders"
    d.mkdir(exist_ok=True)
    for name, text in files.items():
        p = d / name
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text, encoding="utf-8")
    return d


def derive(tmp_path, d, *extra, timeout=40):
    out = tmp_path / "notes"
    return cli("derive", d, "--out", out, "--jobs", "1", *extra, timeout=timeout, cwd=tmp_path), out


def nothing_written(tmp_path, out):
    assert not out.exists() or not any(out.iterdir()), list(out.iterdir())
    assert not (tmp_path / "out").exists()


def test_good_folder_writes(tmp_path):
    r, out = derive(tmp_path, folder(tmp_path, {"w.py": GOOD}))
    assert_ok(r)
    assert (out / "weights_sum_to_one.tex").exists()


def test_false_step_exit_1_nothing_written(tmp_path):
    r, out = derive(tmp_path, folder(tmp_path, {"s.py": simple(rhs="x**2 + 2*x + 2")}))
    assert_no_traceback(r)
    assert r.rc == 1, r.show()
    assert len([ln for ln in r.err.splitlines() if ln.strip()]) == 1, r.show()
    nothing_written(tmp_path, out)


def test_float_in_step_fails_not_crashes(tmp_path):
    r, out = derive(tmp_path, folder(tmp_path, {"s.py": simple(rhs="x**2 + 2.0*x + 1")}))
    assert_no_traceback(r)
    assert r.rc == 1, r.show()
    assert "float" in r.err.lower()
    nothing_written(tmp_path, out)


SCRIPT_RAISES = {
    "import_system_exit": "import sys\nsys.exit(0)\n",
    "import_system_exit_code": "raise SystemExit(3)\n",
    "import_keyboard_interrupt": "raise KeyboardInterrupt\n",
    "import_recursion": "def f():\n    return f()\nf()\n",
    "import_memory_error": "raise MemoryError\n",
    "syntax_error": "def (:\n",
    "build_raises": 'NAME = "b"\ndef build():\n    raise RuntimeError("\\x1b[2Jboom\\nsecond line")\n',
    "build_system_exit": 'NAME = "b"\ndef build():\n    raise SystemExit(0)\n',
    "build_returns_none": 'NAME = "b"\ndef build():\n    return None\n',
    "build_returns_int": 'NAME = "b"\ndef build():\n    return 42\n',
    "build_returns_str": 'NAME = "b"\ndef build():\n    return "QED"\n',
    "build_returns_float": 'NAME = "b"\ndef build():\n    return [0.5]\n',
    "build_recursion": 'NAME = "b"\ndef build():\n    return build()\n',
    "build_not_callable": 'NAME = "b"\nbuild = 5\n',
    "no_build": 'NAME = "b"\n',
    "no_name": 'def build():\n    return []\n',
    "name_not_str": 'NAME = 5\ndef build():\n    return []\n',
    "name_traversal": simple(name='"../../escaped"'),
    "name_absolute": simple(name='"/tmp/hostile_outside_abs"'),
    "name_newline": simple(name='"a\\nb"'),
    "name_empty": simple(name='""'),
    "name_dotfile": simple(name='".hidden"'),
    "name_control": simple(name='"a\\x1b[2J"'),
}


@pytest.mark.parametrize("name", sorted(SCRIPT_RAISES))
def test_hostile_script_derive(tmp_path, name):
    d = folder(tmp_path, {"h.py": SCRIPT_RAISES[name]})
    r, out = derive(tmp_path, d)
    assert_bad_input(r, "h.py")
    assert "\x1b" not in r.err
    nothing_written(tmp_path, out)
    assert not (tmp_path.parent / "escaped.tex").exists() and not (tmp_path / "escaped.tex").exists()
    assert not os.path.exists("/tmp/hostile_outside_abs.tex")


@pytest.mark.parametrize("stem", ["notes", "index"])
def test_name_collides_with_document(tmp_path, stem):
    r, out = derive(tmp_path, folder(tmp_path, {"h.py": simple(name=f'"{stem}"')}))
    assert_bad_input(r, stem)
    nothing_written(tmp_path, out)


def test_duplicate_names_across_scripts(tmp_path):
    d = folder(tmp_path, {"a.py": simple(), "b.py": simple()})
    r, out = derive(tmp_path, d)
    assert_bad_input(r, "simple")
    nothing_written(tmp_path, out)


def test_script_not_utf8(tmp_path):
    d = folder(tmp_path, {"a.py": b"# \xff\xfe\nNAME = 'a'\n"})
    r, out = derive(tmp_path, d)
    assert_bad_input(r, "a.py")


def test_build_infinite_loop_timeout(tmp_path):
    d = folder(tmp_path, {"a.py": 'NAME = "a"\ndef build():\n    while True:\n        pass\n'})
    r, out = derive(tmp_path, d, "--timeout", "3", timeout=20)
    assert_bad_input(r)
    assert r.elapsed < 12
    nothing_written(tmp_path, out)


def test_empty_folder(tmp_path):
    d = folder(tmp_path, {})
    r, out = derive(tmp_path, d)
    assert_no_traceback(r)
    assert r.rc in (0, 2), r.show()
    if r.rc == 2:
        assert_bad_input(r)


def test_missing_path(tmp_path):
    r, out = derive(tmp_path, tmp_path / "nope")
    assert_bad_input(r, "nope")


def test_fifo_path(tmp_path):
    os.mkfifo(tmp_path / "f.py")
    r, out = derive(tmp_path, tmp_path / "f.py", timeout=15)
    assert_bad_input(r, "f.py")


def test_link_loop_in_folder(tmp_path):
    d = folder(tmp_path, {"a.py": simple()})
    (d / "loop").symlink_to(d)
    (d / "x.py").symlink_to(d / "y.py")
    (d / "y.py").symlink_to(d / "x.py")
    r, out = derive(tmp_path, d)
    assert_no_traceback(r)
    assert r.rc in (0, 2), r.show()


def test_title_bidi_override(tmp_path):
    r, out = derive(tmp_path, folder(tmp_path, {"a.py": simple()}), "--title", "\u202eevil")
    assert_no_traceback(r)
    if r.rc == 2:
        assert_bad_input(r, "--title")
    else:
        assert r.rc == 0
        assert "\u202e" not in (out / "notes.tex").read_text()


@pytest.mark.parametrize("title", ["a\nb", "", "x" * 201, "\x1b[2J"])
def test_bad_title(tmp_path, title):
    r, out = derive(tmp_path, folder(tmp_path, {"a.py": simple()}), "--title", title)
    assert_bad_input(r, "--title")
    nothing_written(tmp_path, out)


def test_title_latex_injection_escaped(tmp_path):
    r, out = derive(tmp_path, folder(tmp_path, {"a.py": simple()}), "--title", r"\input{/etc/passwd} $x$ # % & _ ^ ~ {")
    assert_ok(r)
    notes = (out / "notes.tex").read_text()
    assert r"\input{/etc/passwd}" not in notes


def test_title_markdown_injection_escaped(tmp_path):
    r, out = derive(tmp_path, folder(tmp_path, {"a.py": simple()}), "--format", "md", "--title", "<script>alert(1)</script> [x](javascript:alert(1))")
    assert_ok(r)
    md = (out / "notes.md").read_text()
    assert "<script>" not in md


def test_out_is_file(tmp_path):
    f = tmp_path / "precious"
    f.write_text("keep")
    r = cli("derive", folder(tmp_path, {"a.py": simple()}), "--out", f, "--jobs", "1", timeout=30)
    assert_bad_input(r, "precious")
    assert f.read_text() == "keep"


def test_out_existing_foreign_files_kept(tmp_path):
    o = tmp_path / "o"
    o.mkdir()
    (o / "thesis.tex").write_text("years")
    (o / "simple.tex").mkdir()  # a target that is a directory: all or nothing
    before = snapshot(o)
    r = cli("derive", folder(tmp_path, {"a.py": simple()}), "--out", o, "--jobs", "1", timeout=30)
    assert_bad_input(r)
    assert snapshot(o) == before


def test_out_link_writes_only_in_target(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "mine.txt").write_text("keep")
    (tmp_path / "o").symlink_to(target)
    r = cli("derive", folder(tmp_path, {"a.py": simple()}), "--out", tmp_path / "o", "--jobs", "1", timeout=30)
    assert_no_traceback(r)
    assert r.rc in (0, 2), r.show()
    assert (target / "mine.txt").read_text() == "keep"
    assert (tmp_path / "o").is_symlink()


@pytest.mark.parametrize("jobs", ["0", "-1", "x", "1.5"])
def test_bad_jobs(tmp_path, jobs):
    r = cli("derive", folder(tmp_path, {"a.py": simple()}), "--out", tmp_path / "n", "--jobs", jobs, timeout=30)
    assert_bad_input(r, "--jobs")


def test_bad_format(tmp_path):
    r = cli("derive", folder(tmp_path, {"a.py": simple()}), "--out", tmp_path / "n", "--format", "pdf", timeout=30)
    assert_bad_input(r, "--format")


# ---------------------------------------------------------------------------------- list
def test_list_runs_no_build(tmp_path):
    marker = tmp_path / "built"
    d = folder(tmp_path, {"a.py": f'NAME = "a"\ndef build():\n    open({str(marker)!r}, "w").write("x")\n    return []\n'})
    r = cli("list", d, timeout=20)
    assert_no_traceback(r)
    assert not marker.exists(), "list without --verify ran build()"
    assert "not verified" in r.out


def test_list_verify_false_step_exit_1(tmp_path):
    r = cli("list", "--verify", "--jobs", "1", folder(tmp_path, {"s.py": simple(rhs="x**2")}), timeout=30)
    assert_no_traceback(r)
    assert r.rc == 1, r.show()
    assert "verification failed" in r.out + r.err


def test_list_verify_build_raises_exit_2(tmp_path):
    r = cli("list", "--verify", "--jobs", "1", folder(tmp_path, {"s.py": SCRIPT_RAISES["build_raises"]}), timeout=30)
    assert_no_traceback(r)
    assert r.rc == 2, r.show()
    assert "\x1b" not in r.out + r.err


def test_list_verify_build_os_exit_in_worker(tmp_path):
    d = folder(tmp_path, {"a.py": simple(), "z.py": 'NAME = "z"\ndef build():\n    import os\n    os._exit(0)\n'})
    r = cli("list", "--verify", "--jobs", "2", d, timeout=30)
    assert_no_traceback(r)
    assert r.rc != 0, "a script whose build() ends the process must not be listed as fine\n" + r.show()


@pytest.mark.parametrize("name", ["import_system_exit", "import_recursion", "syntax_error", "name_not_str", "no_build"])
def test_list_hostile_script(tmp_path, name):
    r = cli("list", folder(tmp_path, {"h.py": SCRIPT_RAISES[name]}), timeout=20)
    assert_no_traceback(r)
    assert r.rc == 2, r.show()
    assert len([ln for ln in r.err.splitlines() if ln.strip()]) <= 1, r.show()


def test_list_missing(tmp_path):
    assert_bad_input(cli("list", tmp_path / "nope"), "nope")


def test_list_dev_null(tmp_path):
    assert_bad_input(cli("list", "/dev/null"), "/dev/null")


def test_list_name_control_escaped(tmp_path):
    r = cli("list", folder(tmp_path, {"h.py": textwrap.dedent(simple(name='"a\\x1b[2Jb\\nc"'))}), timeout=20)
    assert_no_traceback(r)
    assert "\x1b" not in r.out + r.err
