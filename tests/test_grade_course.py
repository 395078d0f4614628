"""Grading the example course: expected points per question, the command, the exports."""

import csv
import io
import json
import re
import tomllib
from fractions import Fraction
from pathlib import Path

import pytest

from symbolic_attn.cli import main
from symbolic_attn.grading.answer_key import load_answer_key
from symbolic_attn.grading.batch import discover, grade_all

COURSE = Path(__file__).resolve().parent.parent / "examples" / "course"
EXPECTED = tomllib.loads((COURSE / "expected.toml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def graded():
    key = load_answer_key(COURSE / "exercise.toml")
    results = grade_all(key, discover([COURSE / "submissions"]), jobs=1)
    return key, {r.student: r for r in results}


def test_every_submission_has_an_expectation(graded):
    _, results = graded
    assert set(results) == set(EXPECTED)


@pytest.mark.parametrize("student", sorted(EXPECTED), ids=sorted(EXPECTED))
def test_expected_points(graded, student):
    key, results = graded
    result, expected = results[student], EXPECTED[student]
    assert result.score == Fraction(expected["score"])
    assert result.max_score == 12
    assert result.gradable == expected.get("gradable", True), result.reason
    if not result.gradable:
        assert result.reason
        return
    points = {q.name: q.points for q in result.questions}
    assert points == {name: Fraction(value) for name, value in expected["points"].items()}
    verdicts = result.verdicts()
    for name, verdict in expected.get("verdicts", {}).items():
        assert verdicts[name] == verdict, (name, result.questions)
    for name, value in expected["points"].items():
        if Fraction(value) == key.find(name).points:
            assert verdicts[name] == "pass"
    diagnoses = {q.name: q.diagnosis for q in result.questions}
    for name, ids in expected.get("diagnosis", {}).items():
        assert diagnoses[name] == ids


def test_feedback_says_which_entries_are_wrong_and_what_to_do(graded):
    _, results = graded
    z = next(q for q in results["dan"].questions if q.name == "Z")
    assert z.wrong == [(2, 1)] and "Entries (2,1) of Z are wrong; the other 5 are right." in z.feedback
    a = next(q for q in results["cho"].questions if q.name == "a_{32}")
    assert a.feedback == "These values come from the unscaled scores: divide the scores by √d_k = √2 before the softmax."
    z3 = next(q for q in results["cho"].questions if q.name == "z_3")
    assert "carried forward" in z3.feedback and "1 of 2 points" in z3.feedback
    nik = next(q for q in results["nik"].questions if q.name == "a_{31}")
    assert nik.feedback.startswith("Give 3 decimals")


def test_carried_forward_needs_the_students_own_earlier_answers(tmp_path):
    """The same z_3 without the wrong weights before it is simply wrong; share 0 disables."""
    key = load_answer_key(COURSE / "exercise.toml")
    (tmp_path / "alone.txt").write_text("z_3 = [0.910, 1.510]\n", encoding="utf-8")
    (tmp_path / "wrongz.txt").write_text("a31 = 0.245\na32 = 0.090\na33 = 0.665\nz_3 = [0.910, 1.520]\n", encoding="utf-8")
    results = {r.student: r for r in grade_all(key, discover([tmp_path]), jobs=1)}
    assert results["alone"].verdicts()["z_3"] == "fail" and results["alone"].score == 0
    assert results["wrongz"].verdicts()["z_3"] == "fail"
    text = (COURSE / "exercise.toml").read_text(encoding="utf-8").replace("carried_forward = 0.5", "carried_forward = 0")
    (tmp_path / "exercise.toml").write_text(text, encoding="utf-8")
    (tmp_path / "cho").mkdir()
    (tmp_path / "cho" / "cho.txt").write_text((COURSE / "submissions" / "cho.txt").read_text(encoding="utf-8"))
    [cho] = grade_all(load_answer_key(tmp_path / "exercise.toml"), discover([tmp_path / "cho"]), jobs=1)
    assert cho.verdicts()["z_3"] == "fail" and cho.score == 3


@pytest.mark.parametrize("text, diagnosis", [("a_{31} = 2.84", ["decimal_point"]), ("a_{32} = 1.40", ["decimal_point"]),
                                             ("a_{32} = 0.14", [])], ids=["shifted-2.84", "shifted-1.40", "too-few-digits"])
def test_a_shifted_decimal_point_is_named_even_with_too_few_decimals(tmp_path, text, diagnosis):
    """2.84 for 0.284 keeps its figures: the misplaced point is the mistake, not the digits."""
    key = load_answer_key(COURSE / "exercise.toml")
    (tmp_path / "s.md").write_text(text + "\n", encoding="utf-8")
    [result] = grade_all(key, discover([tmp_path / "s.md"]), jobs=1)
    [answer] = [q for q in result.questions if q.verdict != "missing"]
    assert answer.verdict == "fail" and answer.points == 0 and answer.diagnosis == diagnosis
    assert answer.feedback.startswith("The decimal point" if diagnosis else "Give 3 decimals")


def test_a_value_too_large_to_compare_costs_only_that_answer(tmp_path):
    """e^{e^{e^{e^{10}}}} is beyond the input language's bound on exponents (e^x as exp(x),
    |x| <= 6900): that answer is unreadable, with the reason, and the others are graded."""
    key = load_answer_key(COURSE / "exercise.toml")
    (tmp_path / "tower.md").write_text("a_{31} = 0.284\na_{32} = e^{e^{e^{e^{10}}}}\n", encoding="utf-8")
    [result] = grade_all(key, discover([tmp_path / "tower.md"]), jobs=1)
    assert result.gradable and result.score == 1
    verdicts = result.verdicts()
    assert verdicts["a_{31}"] == "pass" and verdicts["a_{32}"] == "unreadable"
    assert "exponents beyond +-6900 are refused" in " ".join(message for _, message in result.problems)


def test_jobs_give_the_same_grades(graded):
    key, results = graded
    parallel = grade_all(key, discover([COURSE / "submissions"]), jobs=2)
    assert {r.student: (r.score, r.verdicts()) for r in parallel} == {s: (r.score, r.verdicts()) for s, r in results.items()}


# ------------------------------------------------------------------ the command


def run_grade(tmp_path, capsys, *extra):
    out = tmp_path / "out"
    status = main(["grade", str(COURSE / "exercise.toml"), str(COURSE / "submissions"), "--out", str(out), *extra])
    captured = capsys.readouterr()
    return status, captured.out, captured.err, out


def test_command_table_and_files(tmp_path, capsys):
    status, stdout, stderr, out = run_grade(tmp_path, capsys, "--jobs", "2")
    assert status == 1 and stderr == ""  # gus and hal are not gradable; not a terminal: no progress bar
    lines = stdout.splitlines()
    assert lines[0].split() == ["student", "score", "max", "S", "a_{31}", "a_{32}", "a_{33}", "z_3", "Z"]
    assert lines[2].split()[:3] == ["ann", "12", "12"]
    hal = next(number for number, line in enumerate(lines) if line.startswith("hal"))
    assert "(not gradable:" in " ".join(lines[hal:hal + 2])  # beside the row, or below it in 80 columns
    rows = list(csv.reader(io.StringIO((out / "grades.csv").read_text(encoding="utf-8"))))
    assert rows[0] == ["student", "score", "max_score", "gradable", "reason", "S", "a_{31}", "a_{32}", "a_{33}",
                       "z_3", "Z"]
    assert {row[0]: row[1] for row in rows[1:]} == {s: e["score"] for s, e in EXPECTED.items()}
    gradable = {row[0]: (row[3], row[4]) for row in rows[1:]}
    assert {s for s, (flag, _) in gradable.items() if flag == "false"} == {"gus", "hal"}
    assert all(flag == "true" and reason == "" for s, (flag, reason) in gradable.items() if s not in ("gus", "hal"))
    assert "binary data" in gradable["hal"][1] and gradable["gus"][1]
    dan = json.loads((out / "dan.json").read_text(encoding="utf-8"))
    assert {"student", "score", "max_score", "gradable", "questions"} <= set(dan)
    assert dan["score"] == 8.5 and dan["max_score"] == 12
    question_keys = {"name", "quantity", "row", "col", "points", "max_points", "verdict", "claimed", "exact",
                     "decimal", "diagnosis", "feedback"}
    for question in dan["questions"]:
        assert question_keys <= set(question)
        assert question["verdict"] in ("pass", "fail", "carried_forward", "missing", "unreadable", "undecided")
    gus = json.loads((out / "gus.json").read_text(encoding="utf-8"))
    assert gus["gradable"] is False and gus["reason"]


def test_gradescope_results_follow_the_documented_keys(tmp_path, capsys):
    status, _, _, out = run_grade(tmp_path, capsys, "--gradescope")
    assert status == 1
    for student in EXPECTED:
        data = json.loads((out / student / "results.json").read_text(encoding="utf-8"))
        assert set(data) <= {"score", "execution_time", "output", "visibility", "stdout_visibility", "tests",
                             "extra_data", "leaderboard", "output_format"}
        assert isinstance(data["score"], (int, float)) and data["score"] == float(Fraction(EXPECTED[student]["score"]))
        for test in data["tests"]:
            assert set(test) <= {"score", "max_score", "status", "name", "name_format", "number", "output",
                                 "output_format", "tags", "visibility", "extra_data"}
            assert {"name", "score", "max_score", "output", "visibility"} <= set(test)
            assert test["visibility"] in ("hidden", "after_due_date", "after_published", "visible")
            assert 0 <= test["score"] <= test["max_score"]
        if EXPECTED[student].get("gradable", True):
            assert sum(t["score"] for t in data["tests"]) == pytest.approx(data["score"])
        else:  # the student sees why: one visible test, 0 of the points
            [test] = data["tests"]
            assert test["name"] == "Not gradable" and test["score"] == 0 and test["max_score"] == 12
            assert test["visibility"] == "visible" and test["output"].startswith("Your submission could not be graded: ")
            reason = json.loads((out / f"{student}.json").read_text(encoding="utf-8"))["reason"]
            assert reason and reason in test["output"]


def test_prairielearn_results_follow_the_documented_keys(tmp_path, capsys):
    status, _, _, out = run_grade(tmp_path, capsys, "--prairielearn")
    assert status == 1
    for student, expected in EXPECTED.items():
        data = json.loads((out / student / "results.json").read_text(encoding="utf-8"))
        assert set(data) <= {"gradable", "score", "message", "output", "format_errors", "tests", "images", "partial_scores"}
        assert isinstance(data["gradable"], bool) and 0 <= data["score"] <= 1
        if expected.get("gradable", True):
            assert data["gradable"] and data["score"] == pytest.approx(float(Fraction(expected["score"]) / 12))
            for test in data["tests"]:
                assert set(test) <= {"name", "description", "points", "max_points", "message", "output", "images"}
                assert {"name", "points", "max_points", "message"} <= set(test)
                assert 0 <= test["points"] <= test["max_points"]
        else:
            assert data["gradable"] is False and data["format_errors"] and data["score"] == 0
            reason = json.loads((out / f"{student}.json").read_text(encoding="utf-8"))["reason"]
            assert data["format_errors"] == [reason] and reason in data["message"]


def test_both_platforms_at_once_go_to_separate_folders(tmp_path, capsys):
    status, _, _, out = run_grade(tmp_path, capsys, "--gradescope", "--prairielearn")
    assert status == 1
    assert "tests" in json.loads((out / "ann" / "gradescope" / "results.json").read_text())
    assert "gradable" in json.loads((out / "ann" / "prairielearn" / "results.json").read_text())


BAD = [
    ("missing-exercise", ["grade", "nope.toml", "x.md"], r"^symbolic-attn: error: nope.toml: cannot read"),
    ("platform-without-out", ["grade", "E", "x.md", "--gradescope"], r"give --out DIR"),
    ("jobs-zero", ["grade", "E", "x.md", "--jobs", "0"], r"--jobs must be from 1"),
]


@pytest.mark.parametrize("argv, message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_invocations_exit_2(argv, message, capsys):
    argv = [str(COURSE / "exercise.toml") if a == "E" else a for a in argv]
    with pytest.raises(SystemExit) if "--out" in message or "--jobs" in message else _no_raise():
        status = main(argv)
        assert status == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert "Traceback" not in err


class _no_raise:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_bad_exercise_and_missing_submission_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[attention]\nvalue = [[1]]\nscores = [[0]]\n[[questions]]\nname = "w"\nquantity = "weightz"\n')
    assert main(["grade", str(bad), str(COURSE / "submissions")]) == 2
    assert capsys.readouterr().err.startswith(f"symbolic-attn: error: {bad}: question 1: quantity: expected one of")
    assert main(["grade", str(COURSE / "exercise.toml"), str(tmp_path / "nobody.md")]) == 2
    assert "no such submission" in capsys.readouterr().err


def test_student_text_is_escaped_in_table_csv_and_json(tmp_path, capsys):
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "=HYPERLINK(1).md").write_text("$S = [[1,0,1],[1,1,2],[2,1,3]]$\x1b[2J\x07", encoding="utf-8")
    (folder / "\x1b[31mred.md").write_text("a_{31} = 0.284\x1b]0;title\x07", encoding="utf-8")
    out = tmp_path / "out"
    # red's answer ends in an escape sequence: not gradable, so the status is 1
    assert main(["grade", str(COURSE / "exercise.toml"), str(folder), "--out", str(out), "--jobs", "1"]) == 1
    stdout = capsys.readouterr().out
    assert "\x1b" not in stdout and "\x07" not in stdout
    table = (out / "grades.csv").read_text(encoding="utf-8")
    assert "\x1b" not in table
    cells = [row[0] for row in csv.reader(io.StringIO(table))][1:]
    assert "'=HYPERLINK(1)" in cells and all(not c.startswith(("=", "+", "-", "@")) for c in cells)
    for path in out.glob("*.json"):
        assert "\x1b" not in path.read_text(encoding="utf-8")
        assert not path.name.startswith(".")


def test_huge_file_in_a_folder_is_refused_not_fatal(tmp_path):
    (tmp_path / "big.md").write_bytes(b"")
    with open(tmp_path / "big.md", "wb") as handle:
        handle.truncate(500 * 1024 * 1024)  # sparse
    (tmp_path / "ok.md").write_text("$S = [[1,0,1],[1,1,2],[2,1,3]]$", encoding="utf-8")
    key = load_answer_key(COURSE / "exercise.toml")
    results = {r.student: r for r in grade_all(key, discover([tmp_path]), jobs=1)}
    assert results["big"].gradable is False and "larger than the limit of 1000000 bytes" in results["big"].reason
    assert results["ok"].score == 3


def test_one_students_answers_never_reach_anothers_grading(tmp_path):
    """Bob's z_3 follows from Cho's wrong weights, not from his own: no carried-forward credit."""
    (tmp_path / "a_cho.txt").write_text("a31 = 0.245\na32 = 0.090\na33 = 0.665\n", encoding="utf-8")
    (tmp_path / "b_bob.txt").write_text("z_3 = [0.910, 1.510]\n", encoding="utf-8")
    key = load_answer_key(COURSE / "exercise.toml")
    for jobs in (1, 2):
        results = {r.student: r for r in grade_all(key, discover([tmp_path]), jobs=jobs)}
        assert results["b_bob"].verdicts()["z_3"] == "fail" and results["b_bob"].score == 0


def test_readme_shows_the_course_table(capsys, monkeypatch):
    # The README's table is the one of a terminal wide enough for the not-gradable reasons
    # beside their rows (in 80 columns they go below them: tests/test_tables_80_columns.py).
    monkeypatch.setenv("COLUMNS", "200")
    readme = (COURSE.parent.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("```text\nstudent  score")[1].split("```")[0]
    assert main(["grade", str(COURSE / "exercise.toml"), str(COURSE / "submissions"), "--jobs", "1"]) == 1
    assert "student  score" + block == capsys.readouterr().out


def test_exit_status_is_1_only_when_a_submission_is_not_gradable(tmp_path, capsys):
    exercise = str(COURSE / "exercise.toml")
    assert main(["grade", exercise, str(COURSE / "submissions" / "ann.md"), str(COURSE / "submissions" / "ben.tex")]) == 0
    assert main(["grade", exercise, str(COURSE / "submissions" / "ann.md"), str(COURSE / "submissions" / "gus.md"),
                 "--out", str(tmp_path / "out")]) == 1
    assert (tmp_path / "out" / "grades.csv").is_file() and (tmp_path / "out" / "gus.json").is_file()
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["grade", "--help"])
    assert "1 when any submission was not gradable" in " ".join(capsys.readouterr().out.split())


def test_progress_bar_only_on_a_terminal(monkeypatch, capsys):
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main(["grade", str(COURSE / "exercise.toml"), str(COURSE / "submissions" / "ann.md")]) == 0
    err = capsys.readouterr().err
    assert "1/1" in err and err.endswith("\n")


def test_exercise_file_inside_the_folder_is_not_a_student(tmp_path):
    (tmp_path / "exercise.toml").write_text((COURSE / "exercise.toml").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "ann.md").write_text("$S = [[1,0,1],[1,1,2],[2,1,3]]$", encoding="utf-8")
    assert [s for s, _ in discover([tmp_path], exclude=[tmp_path / "exercise.toml"])] == ["ann"]


def test_undecided_is_neither_pass_nor_fail(monkeypatch):
    from symbolic_attn.grading import claims

    def undecided(exact, element, rule=None, ball=None):
        return claims.ElementVerdict(False, "3 decimals", "undecided: too close to the boundary", undecided=True)

    monkeypatch.setattr(claims, "judge_element", undecided)
    key = load_answer_key(COURSE / "exercise.toml")
    [result] = grade_all(key, discover([COURSE / "submissions" / "ann.md"]), jobs=1)
    assert set(result.verdicts().values()) == {"undecided"} and result.score == 0
    assert "could not decide" in result.questions[1].feedback


def test_a_failure_while_grading_one_student_does_not_stop_the_batch(monkeypatch):
    from symbolic_attn.grading import batch

    real = batch.grade

    def fragile(key, student, submission, core=None, **options):
        if student == "ben":
            raise KeyError("boom")
        return real(key, student, submission, core, **options)

    monkeypatch.setattr(batch, "grade", fragile)
    key = load_answer_key(COURSE / "exercise.toml")
    results = {r.student: r for r in grade_all(key, discover([COURSE / "submissions"]), jobs=1)}
    assert results["ben"].gradable is False and "KeyError" in results["ben"].reason
    assert [q.name for q in results["ben"].questions] == [q.name for q in key.questions]  # columns stay aligned
    assert results["ann"].score == 12


@pytest.mark.parametrize("text, cell", [("=SUM(A1)", "'=SUM(A1)"), ("+1", "'+1"), ("-1", "'-1"), ("@cmd", "'@cmd"),
                                        ("\tx", " x"), (" =1", "' =1"), ("a\x00b\x1b[0m", "ab[0m"), ("ann", "ann"), ("1.5", "1.5")],
                         ids=["equals", "plus", "minus", "at", "tab", "space-equals", "controls", "plain", "number"])
def test_csv_cells_never_run_as_formulas(text, cell):
    from symbolic_attn.grading.exports import csv_cell

    assert csv_cell(text) == cell


def test_what_a_worker_keeps_between_students_comes_from_the_exercise_alone():
    from symbolic_attn.grading import batch

    grade_all(load_answer_key(COURSE / "exercise.toml"), discover([COURSE / "submissions"]), jobs=1)
    core = batch._WORKER["core"]  # the in-process worker that graded the course
    kept = [c for variants in core.checker.variants.values() for c in variants]
    assert kept and all(c.mistake != "follows_from_claimed" for c in kept)


# The unscaled mistake: weights of 'rises' softmax(2, 1, 3) = 0.24473, 0.09003, 0.66524, written
# to 3 decimals; z_3 = their product with V = (0.90997, 1.51054), or (0.91, 1.51) from the
# written ones.  Either way z_3 follows from the student's own weights as they wrote them.
UNSCALED_WEIGHTS = "a_{31} = 0.245\na_{32} = 0.090\na_{33} = 0.665\n"


@pytest.mark.parametrize("z_3, carried", [
    ("(0.9100, 1.5100)", True),   # continued from the rounded weights
    ("(0.9100, 1.5105)", True),   # continued from the unrounded ones: within their rounding
    ("(0.9100, 1.5112)", True),   # the edge: 1.51 + 0.0005 * (0 + 2 + 2) = 1.512, 1.5112 rounds within
    ("(0.9100, 1.5130)", False),  # beyond what the written weights allow
])
def test_carried_forward_whichever_way_the_earlier_answers_were_rounded(z_3, carried):
    from symbolic_attn.grading.batch import grade
    from symbolic_attn.grading.submissions import parse_submission

    key = load_answer_key(COURSE / "exercise.toml")
    answer = next(q for q in grade(key, "s", parse_submission(UNSCALED_WEIGHTS + f"z_3 = {z_3}\n")).questions
                  if q.name == "z_3")
    if carried:
        assert (answer.verdict, answer.points) == ("carried_forward", 1) and "follows_from_claimed" in answer.diagnosis
    else:
        assert (answer.verdict, answer.points) == ("fail", 0) and "follows_from_claimed" not in answer.diagnosis


def test_carried_forward_intervals_are_the_written_precision_not_wider():
    """Weights written to 2 decimals allow more than the same weights to 3."""
    from symbolic_attn.grading.batch import grade
    from symbolic_attn.grading.submissions import parse_submission

    key = load_answer_key(COURSE / "exercise.toml")
    z_3 = "z_3 = (0.9100, 1.5300)\n"  # 1.51 + 0.005 * 4 = 1.53 with 2 decimals; 1.512 with 3
    for weights, verdict in (("a_{31} = 0.245\na_{32} = 0.090\na_{33} = 0.665\n", "fail"),
                             ("a_{31} = 0.24\na_{32} = 0.09\na_{33} = 0.67\n", "carried_forward")):
        answer = next(q for q in grade(key, "s", parse_submission(weights + z_3)).questions if q.name == "z_3")
        assert answer.verdict == verdict, (weights, answer.feedback)
