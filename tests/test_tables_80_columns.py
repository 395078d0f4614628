"""Issue 21, "terminal output that fits 80 columns": the text tables of ``grade`` and
``compare`` fit ``COLUMNS`` (80 when unset and not a terminal), measured in display
columns, and lose nothing: every student, case, point and verdict is still there.  A wider
``COLUMNS`` gives wider lines only where the 80-column layout had to fold something.
"""

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace as NS

import pytest

from symbolic_attn.cli.grade import summary_table
from symbolic_attn.grading.feedback import points_text
from symbolic_attn.render.columns import display_width, table

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
COURSE = ROOT / "examples" / "course"
REALISTIC = TESTS / "data" / "realistic_course"
GRADE_RUNS = {
    "course": (COURSE / "exercise.toml", COURSE / "submissions"),
    "causal": (REALISTIC / "causal.toml", REALISTIC / "causal"),
    "layer_norm": (REALISTIC / "layer_norm.toml", REALISTIC / "layer_norm"),
}
KERNELS = ("correct", "missing_scale", "no_max_subtraction")


def command(*args, columns=None, cwd=ROOT):
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SYMPY_GROUND_TYPES": "python"}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    done = subprocess.run([sys.executable, "-m", "symbolic_attn", *args], capture_output=True, text=True,
                          encoding="utf-8", cwd=cwd, env=env, timeout=600)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def widest(text: str) -> int:
    return max(display_width(line) for line in text.splitlines())


@pytest.fixture(scope="module")
def grade_outputs():
    """{run: {columns: text, "json": document}} (columns None: COLUMNS unset)."""
    outputs = {}
    for name, (exercise, folder) in GRADE_RUNS.items():
        args = ("grade", str(exercise), str(folder), "--jobs", "2")
        outputs[name] = {columns: command(*args, columns=columns) for columns in (80, None, 200, 1000)}
        outputs[name]["json"] = json.loads(command(*args, "--format", "json"))
    return outputs


@pytest.fixture(scope="module")
def compare_outputs():
    outputs = {}
    for kernel in KERNELS:
        args = ("compare", f"impls:{kernel}", "--cases", "4")
        outputs[kernel] = {columns: command(*args, columns=columns, cwd=TESTS) for columns in (80, None, 200, 1000)}
        outputs[kernel]["json"] = json.loads(command(*args, "--format", "json", cwd=TESTS))
    return outputs


# ------------------------------------------------------------------------------ grade


@pytest.mark.parametrize("name", GRADE_RUNS)
def test_grade_fits_80_columns(grade_outputs, name):
    assert widest(grade_outputs[name][80]) <= 80
    assert grade_outputs[name][None] == grade_outputs[name][80]  # COLUMNS unset: 80


@pytest.mark.parametrize("name", GRADE_RUNS)
def test_grade_at_80_columns_keeps_every_student_and_point(grade_outputs, name):
    text, document = grade_outputs[name][80], grade_outputs[name]["json"]
    lines = text.splitlines()
    for student in document["students"]:
        row = next(line for line in lines if line.split()[:1] == [student["student"]])
        expected = [points_text(Fraction(student["score_exact"])), points_text(Fraction(student["max_score_exact"]))]
        expected += [points_text(Fraction(q["points_exact"])) for q in student["questions"]]
        assert row.split()[1:1 + len(expected)] == expected, row
        if not student["gradable"]:
            after = " ".join(lines[lines.index(row):lines.index(row) + 3])
            assert "(not gradable: " + " ".join(student["reason"].split()[:3]) in " ".join(after.split())
    questions = " ".join(line for line in lines[:lines.index(next(line for line in lines if line.startswith("---")))])
    header = [q["name"] for q in document["students"][0]["questions"]]
    for question in header:  # a name wrapped in its column is still there, in pieces under each other
        assert question in questions or all(piece in questions for piece in _pieces(question))
    assert lines[-1].endswith("not gradable")


def _pieces(name):
    return [piece for piece in name.replace("{", " {").split() if piece]


@pytest.mark.parametrize("name", GRADE_RUNS)
def test_grade_is_wider_only_when_it_had_to_fold(grade_outputs, name):
    narrow, wide, natural = (grade_outputs[name][c] for c in (80, 200, 1000))
    assert widest(wide) <= 200
    if widest(natural) <= 80:
        assert narrow == wide == natural
    else:
        assert widest(narrow) <= widest(wide) and narrow != natural
    if widest(natural) <= 200:
        assert wide == natural


def test_grade_too_many_questions_continue_in_a_second_block():
    key = NS(questions=[NS(name=f"question_{k}") for k in range(1, 26)])
    results = [NS(student=f"student_{s}", score=Fraction(25), max_score=Fraction(25), gradable=True, reason="",
                  questions=[NS(points=Fraction(1)) for _ in range(25)]) for s in range(3)]
    text = summary_table(results, key, width=80)
    lines = text.splitlines()
    assert widest(text) <= 80
    assert sum(line.startswith("student ") for line in lines) >= 2  # the ids repeated in each block
    assert all(f"question_{k}" in text.split() for k in range(1, 26))  # whole: each block as wide as it needs
    assert all(line.split()[0] in ("student_0", "student_1", "student_2") for line in lines
               if line.startswith("student_"))
    assert summary_table(results, key, width=400).count("\n") == len(results) + 3  # one block when it fits


def test_grade_a_long_id_wraps_and_is_not_cut():
    key = NS(questions=[NS(name="S")])
    student = "a_student_id_far_longer_than_forty_characters_written_out_in_full"
    results = [NS(student=student, score=Fraction(1), max_score=Fraction(3), gradable=True, reason="",
                  questions=[NS(points=Fraction(1))])]
    lines = summary_table(results, key, width=40).splitlines()
    assert widest("\n".join(lines)) <= 40
    assert "".join(line.split()[0] for line in lines[2:-1] if line.strip()) == student


# ----------------------------------------------------------------------------- compare


def _cells(text):
    """The rows of the (first) table read back, each cell's text without its spaces: a
    cell wrapped in its column goes on under itself, the row's other cells blank."""
    lines = text.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("---"))
    spans, start = [], 0
    for dashes in lines[rule].split():
        start = lines[rule].index(dashes, start)
        spans.append([start, start + len(dashes)])
        start += len(dashes)
    spans[-1][1] = None
    rows = []
    for line in lines[rule + 1:]:
        if not line.strip():
            break
        cells = [line[left:right].replace(" ", "") for left, right in spans]
        if cells[1]:  # n is never wrapped: a new row
            rows.append(cells)
        else:
            rows[-1] = [old + new for old, new in zip(rows[-1], cells)]
    return rows


def _bare(text):
    return text.replace(" ", "")


@pytest.mark.parametrize("kernel", KERNELS)
def test_compare_fits_80_columns(compare_outputs, kernel):
    assert widest(compare_outputs[kernel][80]) <= 80
    assert compare_outputs[kernel][None] == compare_outputs[kernel][80]


@pytest.mark.parametrize("kernel", KERNELS)
def test_compare_at_80_columns_keeps_every_case_and_verdict(compare_outputs, kernel):
    text, document = compare_outputs[kernel][80], compare_outputs[kernel]["json"]
    rows = _cells(text)
    assert [row[0] for row in rows] == [_bare(case["name"]) for case in document["cases"]]
    assert [row[5] for row in rows] == [_bare(case["mask"]) for case in document["cases"]]
    assert [row[-1].split("(")[0] for row in rows] == [case["verdict"] for case in document["cases"]]
    for case in document["cases"]:
        if case["explained_by"]:  # beside the verdict, or in the case's detail below the table
            detail = text.split("\n" + case["name"] + " (", 1)[1].split("\n\n", 1)[0]
            assert all(bug in detail for bug in case["explained_by"])
    for bug in document["diagnosis"]:
        assert f"  {bug}: " in text
    assert ("PASS" in text) == document["passed"]


@pytest.mark.parametrize("kernel", KERNELS)
def test_compare_is_wider_only_when_it_had_to_fold(compare_outputs, kernel):
    narrow, wide, natural = (compare_outputs[kernel][c] for c in (80, 200, 1000))
    assert widest(wide) <= 200 and widest(narrow) < widest(wide)
    if widest(natural) <= 200:
        assert wide == natural
    document = compare_outputs[kernel]["json"]
    assert [row[-1] for row in _cells(wide)] == [  # the bugs beside the verdicts when there is room
        _bare(case["verdict"] + (f" ({', '.join(case['explained_by'])})" if case["explained_by"] else ""))
        for case in document["cases"]]


def test_compare_output_printed_by_the_implementation_wraps(tmp_path):
    (tmp_path / "noisy.py").write_text("import numpy as np\nprint('x' * 300)\n"
                                       "def attend(q, k, v, mask):\n    print('y' * 150)\n"
                                       "    s = q @ k.T / np.sqrt(q.shape[-1])\n"
                                       "    s = np.where(mask, s, -np.inf) if mask is not None else s\n"
                                       "    w = np.exp(s - s.max(axis=-1, keepdims=True))\n"
                                       "    return (w / w.sum(axis=-1, keepdims=True)) @ v\n", encoding="utf-8")
    text = command("compare", f"{tmp_path / 'noisy.py'}:attend", "--cases", "0", columns=80)
    assert widest(text) <= 80
    printed = text.split("the implementation printed", 1)[1]
    body = "".join(line[4:] for line in printed.splitlines()[1:])
    assert "x" * 300 in body and "y" * 150 in body


# ------------------------------------------------------------------------- the layout


@pytest.mark.parametrize("width", [30, 40, 57, 80, 123])
def test_a_table_of_unicode_names_fits_by_display_width(width):
    names = ["学生一号的名字", "e\u0301le\u0300ve_au_nom_tre\u0300s_long", "ann", "ĳsbrand_van_der_waals"]
    rows = [[name, str(k), "fail (a reason in words)"] for k, name in enumerate(names)]
    lines = table(["student", "score", "verdict"], rows, width, align="<><", floors=[7, None, 7])
    assert max(display_width(line) for line in lines) <= width
    assert lines[0].split() == ["student", "score", "verdict"]
    # The id column read back (a wrapped id goes on under itself): nothing lost.
    pieces = ["" if line.startswith(" ") else line.split("  ")[0] for line in lines[2:]]
    assert "".join(pieces) == "".join(names)
