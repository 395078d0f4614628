"""Outside hostile battery: `symbolic-attn grade` (README/--help only)."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from hostile_outside_helpers import ROOT, assert_bad_input, assert_bad_or_ok, assert_no_traceback, cli, snapshot

COURSE = ROOT / "examples" / "course"
ANN = (COURSE / "submissions" / "ann.md").read_text(encoding="utf-8")
BEN = (COURSE / "submissions" / "ben.tex").read_text(encoding="utf-8")


@pytest.fixture
def course(tmp_path):
    ex = tmp_path / "exercise.toml"
    shutil.copy(COURSE / "exercise.toml", ex)
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "ann.md").write_text(ANN, encoding="utf-8")
    return tmp_path, ex, subs


def grade(ex, *subs, out=None, extra=(), timeout=20, cwd=None):
    args = ["grade", ex, *subs]
    if out is not None:
        args += ["--out", out]
    return cli(*args, *extra, timeout=timeout, cwd=cwd)


def student(out: Path, sid: str) -> dict:
    return json.loads((out / f"{sid}.json").read_text(encoding="utf-8"))


def all_output_text(out: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in out.rglob("*") if p.is_file())


def rows(out: Path):
    return list(csv.reader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8"))))


def graded_ok(r):
    """The batch ran to the end: exit 0 when every submission was gradable, 1 when the
    summary counts any not gradable (the files are written all the same)."""
    assert_no_traceback(r)
    counted = re.search(r"graded, (\d+) not gradable", r.out)
    assert counted, r.show()
    assert r.rc == (1 if int(counted.group(1)) else 0), r.show()
    assert r.elapsed < 15, r.show()


# ------------------------------------------------------------------- links and odd entries
def test_link_to_etc_passwd_refused_not_followed(course):
    tmp, ex, subs = course
    (subs / "eve.md").symlink_to("/etc/passwd")
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    assert student(out, "eve")["gradable"] is False
    assert "root:" not in all_output_text(out)
    assert student(out, "ann")["score"] in (12, "12")


def test_link_to_answer_key_not_followed(course):
    tmp, ex, subs = course
    (subs / "key.md").symlink_to(ex)
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    assert not (out / "key.json").exists() or student(out, "key")["gradable"] is False


def test_symlink_loop(course):
    tmp, ex, subs = course
    (subs / "a.md").symlink_to(subs / "b.md")
    (subs / "b.md").symlink_to(subs / "a.md")
    graded_ok(grade(ex, subs, out=tmp / "g"))


def test_directory_link_loop_in_student_folder(course):
    tmp, ex, subs = course
    (subs / "lee").mkdir()
    (subs / "lee" / "part1.md").write_text(ANN)
    (subs / "lee" / "up").symlink_to(subs)
    (subs / "lee" / "self").symlink_to(subs / "lee")
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    assert student(out, "lee")["score"] in (12, "12")


def test_fifo_does_not_block(course):
    tmp, ex, subs = course
    os.mkfifo(subs / "pipe.md")
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out, timeout=15))
    assert student(out, "pipe")["gradable"] is False


def test_fifo_inside_student_folder(course):
    tmp, ex, subs = course
    (subs / "kim").mkdir()
    os.mkfifo(subs / "kim" / "a.md")
    (subs / "kim" / "b.md").write_text(ANN)
    graded_ok(grade(ex, subs, out=tmp / "g", timeout=15))


def test_submission_path_is_link_to_dev_zero(course):
    tmp, ex, subs = course
    (tmp / "z.md").symlink_to("/dev/zero")
    r = grade(ex, tmp / "z.md", out=tmp / "g", timeout=15)
    assert_no_traceback(r)
    assert r.rc in (0, 2), r.show()


def test_non_utf8_file_name(course):
    tmp, ex, subs = course
    fd = os.open(os.fsencode(subs) + b"/\xff\xfe.md", os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, ANN.encode())
    os.close(fd)
    out = tmp / "g"
    r = grade(ex, subs, out=out)
    graded_ok(r)
    text = (out / "grades.csv").read_text(encoding="utf-8")
    assert "\\xff" in text, text


def test_newline_in_file_name_cannot_forge_csv_row(course):
    tmp, ex, subs = course
    (subs / "x\nzed,12,12.md").write_text(ANN)
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    text = (out / "grades.csv").read_text(encoding="utf-8")
    assert not any(line.startswith("zed,") for line in text.splitlines()), text
    assert len(rows(out)) == 3


def test_escape_in_file_name_escaped_in_stdout(course):
    tmp, ex, subs = course
    (subs / "\x1b[2Jmal\x07.md").write_text(ANN)
    r = grade(ex, subs)
    graded_ok(r)
    assert "\x1b" not in r.out and "\x07" not in r.out and "\x1b" not in r.err


def test_bidi_in_file_name(course):
    tmp, ex, subs = course
    (subs / "\u202eevil\u200b.md").write_text(ANN)
    out = tmp / "g"
    r = grade(ex, subs, out=out)
    graded_ok(r)
    assert "\u202e" not in r.out and "\u202e" not in (out / "grades.csv").read_text(encoding="utf-8")


def test_csv_injection_file_name(course):
    tmp, ex, subs = course
    (subs / "=HYPERLINK(1).md").write_text(ANN)
    (subs / "+1.md").write_text(ANN)
    (subs / "@SUM.md").write_text(ANN)
    (subs / "-2.md").write_text(ANN)
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    for row in rows(out)[1:]:
        assert row[0][:1] not in "=+-@", row


def test_file_named_grades_csv_does_not_clobber(course):
    tmp, ex, subs = course
    (subs / "grades.csv.md").write_text(ANN)
    (subs / "grades.md").write_text(ANN)
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    assert rows(out)[0][0] == "student"
    assert len(rows(out)) == 4


def test_dot_files_and_junk_are_not_students(course):
    tmp, ex, subs = course
    (subs / ".DS_Store").write_bytes(b"\x00\x01")
    (subs / "Thumbs.db").write_bytes(b"\x00")
    (subs / "desktop.ini").write_text("[x]")
    (subs / "__MACOSX").mkdir()
    (subs / "__MACOSX" / "ann.md").write_text("junk")
    (subs / ".md").write_text(ANN)
    shutil.copy(ex, subs / "exercise.toml")
    out = tmp / "g"
    graded_ok(grade(subs / "exercise.toml", subs, out=out))
    assert [r[0] for r in rows(out)[1:]] == ["ann"]


# ----------------------------------------------------------------------------- hidden text
HIDDEN = {
    "html_comment.md": "<!-- $a_{31} = 0.284$ $a_{32} = 0.140$ $a_{33} = 0.576$ $S = [[1,0,1],[1,1,2],[2,1,3]]$ -->\n",
    "unclosed_comment.md": "text <!-- $a_{31} = 0.284$ $a_{32} = 0.140$ $a_{33} = 0.576$\n",
    "iffalse.tex": "\\iffalse\n$a_{31} = 0.284$ $a_{32} = 0.140$ $a_{33} = 0.576$\n\\fi\n",
    "comment_env.tex": "\\begin{comment}\n$a_{31} = 0.284$ $a_{32} = 0.140$ $a_{33} = 0.576$\n\\end{comment}\n",
    "percent.tex": "% $a_{31} = 0.284$ $a_{32} = 0.140$ $a_{33} = 0.576$\n",
    "percent_inline.tex": "We get the weights. % $a_{31} = 0.284$ $a_{32} = 0.140$ $a_{33} = 0.576$\n",
}


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_hidden_text_not_read(course, name):
    tmp, ex, subs = course
    (subs / name).write_text(HIDDEN[name])
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    s = student(out, name.rsplit(".", 1)[0])
    assert float(s["score"]) == 0, s


def test_nested_comment_trick(course):
    # the answers after a closed comment are read; inside it they are not
    tmp, ex, subs = course
    (subs / "n.md").write_text("<!-- $a_{32} = 0.999$ --> $a_{32} = 0.140$\n")
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    q = {x["name"]: x for x in student(out, "n")["questions"]}
    assert q["a_{32}"]["verdict"] == "pass", q["a_{32}"]


def test_zero_width_in_value_not_silently_read(course):
    tmp, ex, subs = course
    (subs / "z.md").write_text("$a_{32} = 0.1\u200b40$\n")
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    assert "\u200b" not in all_output_text(out)


def test_invisible_chars_in_name(course):
    tmp, ex, subs = course
    (subs / "z.md").write_text("$a_{3\u200b2} = 0.140$ $a_{31}\u2063 = 0.284$\n")
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    assert "\u200b" not in all_output_text(out) and "\u2063" not in all_output_text(out)


def test_cr_only_file_same_score(course):
    tmp, ex, subs = course
    (subs / "cr.md").write_bytes(ANN.replace("\n", "\r").encode())
    (subs / "crlf.md").write_bytes(ANN.replace("\n", "\r\n").encode())
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    assert student(out, "cr")["score"] == student(out, "ann")["score"] == student(out, "crlf")["score"]


def test_bom_file(course):
    tmp, ex, subs = course
    (subs / "bom.md").write_bytes(b"\xef\xbb\xbf" + ANN.encode())
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))


def test_control_chars_in_text_removed(course):
    tmp, ex, subs = course
    (subs / "c.md").write_text("$a_{32} = 0.140$ \x1b[31m \x07 \x0b\x0c\n$S = [[1, 0, 1\x1b]]$\n")
    out = tmp / "g"
    r = grade(ex, subs, out=out)
    graded_ok(r)
    t = all_output_text(out)
    assert "\x1b" not in t and "\x07" not in t and "\x1b" not in r.out


# ------------------------------------------------------------------------ size and number
def test_huge_sparse_file_refused_by_size_fast(course):
    tmp, ex, subs = course
    p = subs / "big.md"
    p.write_text(ANN)
    os.truncate(p, 4 * 1024 ** 3)
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    assert student(out, "big")["gradable"] is False


def test_just_over_1mb(course):
    tmp, ex, subs = course
    (subs / "big.md").write_text(ANN + " " * (1024 * 1024))
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    assert student(out, "big")["gradable"] is False


def test_many_files_in_student_folder(course):
    tmp, ex, subs = course
    st = subs / "mo"
    st.mkdir()
    (st / "0000.md").write_text(ANN)
    for i in range(1, 300):
        (st / f"{i:04d}.md").write_text("nothing\n")
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    s = student(out, "mo")
    # README: a sub-folder's files are read in name order (at most 64; the rest are named in problems)
    assert s["score"] in (12, "12") and s["problems"], s


def test_many_students(course):
    tmp, ex, subs = course
    for i in range(150):
        (subs / f"s{i:03d}.md").write_text(ANN if i % 2 else "$a_{32} = 0.5$\n")
    out = tmp / "g"
    r = grade(ex, subs, out=out, extra=["--jobs", "2"], timeout=60)
    assert_no_traceback(r)
    assert r.rc == 0, r.show()
    assert len(rows(out)) == 152


def test_ten_thousand_statements(course):
    tmp, ex, subs = course
    (subs / "st.md").write_text("$a_{32} = 0.5$\n" * 12000 + "$a_{31} = 0.284$\n")
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    assert student(out, "st")["problems"]


def test_deep_nested_matrix_statement(course):
    tmp, ex, subs = course
    (subs / "d.md").write_text("$Z = " + "[" * 20000 + "1" + "]" * 20000 + "$\n$a_{32} = 0.140$\n")
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))


@pytest.mark.parametrize("value", ["9" * 200000, "10^{10^{10^{10}}}", "e^{e^{e^{100}}}", "e^{e^{100}}",
                                   "\\frac{1}{e^{e^{e^{10}}}}", "\\sqrt{e^{e^{e^{100}}}}"])
def test_huge_number_statement(course, value):
    tmp, ex, subs = course
    (subs / "h.md").write_text("$a_{32} = " + value + "$\n$a_{31} = 0.284$\n")
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))


def test_fullwidth_and_arabic_digits_statement(course):
    tmp, ex, subs = course
    (subs / "f.md").write_text("$a_{32} = \uff10.\uff11\uff14\uff10$ $a_{31} = \u0660.\u0662\u0668\u0664$\n")
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    q = {x["name"]: x for x in student(out, "f")["questions"]}
    assert q["a_{32}"]["verdict"] != "pass"


def test_binary_file(course):
    tmp, ex, subs = course
    (subs / "b.md").write_bytes(b"$a_{32} = 0.140$\x00\x00")
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    assert student(out, "b")["gradable"] is False


def test_non_utf8_content(course):
    tmp, ex, subs = course
    (subs / "l.md").write_bytes("$a_{32} = 0.140$ caf\xe9\n".encode("latin-1"))
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    assert student(out, "l")["gradable"] is False


def test_toml_solution_hostile(course):
    tmp, ex, subs = course
    (subs / "t.toml").write_text('"a_{32}" = 0.14\nS = "__import__(\'os\').system(\'touch PWNED\')"\n[answers]\nZ = "' + "[" * 5000 + '"\n')
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out, cwd=tmp))
    assert not (tmp / "PWNED").exists()


def test_deep_toml_solution(course):
    tmp, ex, subs = course
    (subs / "t.toml").write_text("[answers]\nZ = " + "[" * 5000 + "1" + "]" * 5000 + "\n")
    out = tmp / "g"
    graded_ok(grade(ex, subs, out=out))
    assert student(out, "t")["gradable"] is False


def test_deeply_nested_folders(course):
    tmp, ex, subs = course
    p = subs / "deep"
    for _i in range(60):
        p = p / "d"
    p.mkdir(parents=True)
    (p / "x.md").write_text(ANN)
    graded_ok(grade(ex, subs, out=tmp / "g"))


# ------------------------------------------------------------------------------ --out tricks
def test_out_is_a_file(course):
    tmp, ex, subs = course
    f = tmp / "precious.txt"
    f.write_text("keep me")
    assert_bad_input(grade(ex, subs, out=f), "precious.txt")
    assert f.read_text() == "keep me"


def test_out_is_link(course):
    tmp, ex, subs = course
    real = tmp / "real"
    real.mkdir()
    (tmp / "lnk").symlink_to(real)
    assert_bad_input(grade(ex, subs, out=tmp / "lnk"), "lnk")
    assert (tmp / "lnk").is_symlink()


def test_out_holding_link(course):
    tmp, ex, subs = course
    o = tmp / "o"
    o.mkdir()
    (o / "grades.csv").symlink_to("/etc/passwd")
    before = Path("/etc/passwd").read_bytes()
    assert_bad_input(grade(ex, subs, out=o), "o")
    assert Path("/etc/passwd").read_bytes() == before


def test_out_inside_submissions(course):
    tmp, ex, subs = course
    assert_bad_input(grade(ex, subs, out=subs / "g"), "g")
    assert not (subs / "g").exists() or not any((subs / "g").iterdir())


def test_out_is_submissions_folder(course):
    tmp, ex, subs = course
    before = snapshot(subs)
    assert_bad_input(grade(ex, subs, out=subs), "subs")
    assert snapshot(subs) == before


def test_out_non_empty_foreign_files(course):
    tmp, ex, subs = course
    o = tmp / "o"
    o.mkdir()
    (o / "thesis.docx").write_text("years of work")
    assert_bad_input(grade(ex, subs, out=o), "o")
    assert (o / "thesis.docx").read_text() == "years of work"


def test_out_is_parent_of_submissions(course):
    tmp, ex, subs = course
    before = snapshot(tmp)
    r = grade(ex, subs, out=tmp)
    assert_bad_input(r)
    assert snapshot(tmp) == before


def test_out_is_exercise_file(course):
    tmp, ex, subs = course
    before = ex.read_bytes()
    assert_bad_input(grade(ex, subs, out=ex), "exercise.toml")
    assert ex.read_bytes() == before


def test_out_empty_string(course):
    tmp, ex, subs = course
    before = snapshot(tmp)
    r = grade(ex, subs, out="", cwd=tmp)
    assert_bad_or_ok(r)
    assert snapshot(tmp) == before


def test_out_rerun_replaces_old_set(course):
    tmp, ex, subs = course
    (subs / "old.md").write_text(ANN)
    o = tmp / "o"
    graded_ok(grade(ex, subs, out=o))
    assert (o / "old.json").exists()
    (subs / "old.md").unlink()
    graded_ok(grade(ex, subs, out=o))
    assert not (o / "old.json").exists() and (o / "ann.json").exists()


def test_out_with_gradescope_and_prairielearn(course):
    tmp, ex, subs = course
    o = tmp / "o"
    graded_ok(grade(ex, subs, out=o, extra=["--gradescope", "--prairielearn"]))
    pl = json.loads((o / "ann" / "prairielearn" / "results.json").read_text())
    assert 0 <= pl["score"] <= 1


def test_out_dot_dot_traversal_name(course):
    tmp, ex, subs = course
    r = grade(ex, subs, out=tmp / "a" / ".." / "b")
    assert_bad_or_ok(r)
    assert not (tmp.parent / "b").exists() or (tmp / "b").exists()


def test_timeout_leaves_no_partial_output(course):
    tmp, ex, subs = course
    for i in range(100):
        (subs / f"s{i:03d}.md").write_text(ANN)
    o = tmp / "o"
    r = grade(ex, subs, out=o, extra=["--timeout", "0.5"], timeout=20)
    assert_no_traceback(r)
    if r.rc == 2:
        assert_bad_input(r)
        assert not o.exists() or not any(o.iterdir())
        assert not [p for p in tmp.iterdir() if p.name not in ("exercise.toml", "subs", "o")], list(tmp.iterdir())


# ------------------------------------------------------------------------------ options
@pytest.mark.parametrize("jobs", ["0", "-1", "abc", "1.5", ""])
def test_bad_jobs(course, jobs):
    tmp, ex, subs = course
    assert_bad_input(grade(ex, subs, extra=["--jobs", jobs]), "--jobs")


def test_jobs_huge(course):
    tmp, ex, subs = course
    r = grade(ex, subs, extra=["--jobs", "100000"], timeout=20)
    assert_bad_or_ok(r)


@pytest.mark.parametrize("t", ["-5", "nan", "abc"])
def test_bad_timeout(course, t):
    tmp, ex, subs = course
    assert_bad_input(grade(ex, subs, extra=["--timeout", t]), "--timeout")


def test_path_given_twice(course):
    tmp, ex, subs = course
    assert_bad_input(grade(ex, subs, subs), "subs")


def test_path_inside_another(course):
    tmp, ex, subs = course
    assert_bad_input(grade(ex, subs, subs / "ann.md"), "ann.md")


def test_missing_path(course):
    tmp, ex, subs = course
    assert_bad_input(grade(ex, tmp / "nope"), "nope")


def test_empty_submissions_folder(course):
    tmp, ex, subs = course
    (subs / "ann.md").unlink()
    assert_bad_or_ok(grade(ex, subs))


# ---------------------------------------------------------------------- hostile answer keys
def _key(tmp, text):
    p = tmp / "key.toml"
    p.write_text((COURSE / "exercise.toml").read_text().split("[grading]")[0] + text)
    return p


KEYS = [
    ("no_questions", "", ["question"]),
    ("points_negative", '[[questions]]\nname = "S"\nquantity = "scores"\npoints = -1\n', ["points"]),
    ("points_nan", '[[questions]]\nname = "S"\nquantity = "scores"\npoints = nan\n', ["points"]),
    ("points_inf", '[[questions]]\nname = "S"\nquantity = "scores"\npoints = inf\n', ["points"]),
    ("points_huge_string", '[[questions]]\nname = "S"\nquantity = "scores"\npoints = "1e999"\n', ["points"]),
    ("carried_forward_two", '[grading]\ncarried_forward = 2\n[[questions]]\nname = "S"\nquantity = "scores"\npoints = 1\n', ["carried_forward"]),
    ("carried_forward_negative", '[grading]\ncarried_forward = -1\n[[questions]]\nname = "S"\nquantity = "scores"\npoints = 1\n', ["carried_forward"]),
    ("quantity_unknown", '[[questions]]\nname = "S"\nquantity = "passwords"\npoints = 1\n', ["quantity"]),
    ("row_zero", '[[questions]]\nname = "S"\nquantity = "scores"\nrow = 0\npoints = 1\n', ["row"]),
    ("decimals_negative", '[[questions]]\nname = "S"\nquantity = "scores"\ndecimals = -1\npoints = 1\n', ["decimals"]),
    ("name_empty", '[[questions]]\nname = ""\nquantity = "scores"\npoints = 1\n', ["name"]),
    ("duplicate_names", '[[questions]]\nname = "S"\nquantity = "scores"\npoints = 1\n[[questions]]\nname = "S"\nquantity = "weights"\npoints = 1\n', ["S"]),
]


@pytest.mark.parametrize("text,needles", [c[1:] for c in KEYS], ids=[c[0] for c in KEYS])
def test_bad_answer_key(course, text, needles):
    tmp, ex, subs = course
    assert_bad_input(grade(_key(tmp, text), subs), *needles)


def test_points_binary_float_not_in_scores(course):
    tmp, ex, subs = course
    key = _key(tmp, "".join(f'[[questions]]\nname = "a_{{3{j}}}"\nquantity = "weights"\nrow = 3\ncol = {j}\npoints = 0.1\ndecimals = 3\n' for j in (1, 2, 3)))
    out = tmp / "g"
    r = grade(key, subs, out=out)
    assert_no_traceback(r)
    if r.rc == 2:
        assert_bad_input(r, "points")
        return
    assert r.rc == 0
    t = (out / "grades.csv").read_text() + (out / "ann.json").read_text()
    assert "0.30000000000000004" not in t and "0.1000000000000000055" not in t, t


def test_question_name_with_newline_escaped(course):
    tmp, ex, subs = course
    key = _key(tmp, '[[questions]]\nname = "S\\nann,999"\nquantity = "scores"\npoints = 1\n')
    out = tmp / "g"
    r = grade(key, subs, out=out)
    assert_bad_or_ok(r)
    if r.rc == 0:
        assert not any(ln.startswith("ann,999") for ln in (out / "grades.csv").read_text().splitlines())
