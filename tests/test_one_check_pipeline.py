"""Issue 20, part 1: one check pipeline for every exercise kind, one mistake catalogue,
verdicts as enums, outcomes that print themselves."""

import ast
import json
from fractions import Fraction
from pathlib import Path

import pytest

from symbolic_attn.grading import diagnose, feedback
from symbolic_attn.grading.answer_key import parse_answer_key
from symbolic_attn.grading.batch import grade
from symbolic_attn.grading.exercise import parse_exercise
from symbolic_attn.grading.exports import grades_csv, student_json
from symbolic_attn.model.mistakes import CATALOGUE, KINDS, Mistake, describe, ids, order
from symbolic_attn.grading.outcomes import Verdict
from symbolic_attn.grading.pipeline import Checker
from symbolic_attn.grading.program_diagnose import CORE_VARIANTS
from symbolic_attn.grading.report import check_exercise, render_json, render_text
from symbolic_attn.grading.submissions import parse_submission
from symbolic_attn.model.variants import VARIANTS
from symbolic_attn.steps.wrong_rules import WRONG_RULES

GRADING = Path(__file__).resolve().parent.parent / "symbolic_attn" / "grading"

DEFINE = '''
[inputs]
z = [[1, 3], [2, 4], [0, 4]]
X = [[1, 0], [0, 1], [1, 1]]
[define]
L = "layer_norm(z)"
A = "attention(Q = X, K = X, V = z, mask = 'causal')"
'''
# (quantity, row, col, the student's number, expected verdict, expected diagnosis)
ANSWERS = [
    ("L", 1, None, "[-1, 1]", "pass", []),
    ("L", 1, None, "[-0.707, 0.707]", "fail", ["layer_norm_unbiased"]),
    ("A.weights", 2, None, "[0.330, 0.670, 0]", "pass", []),
    ("A.weights", 2, None, "[0.269, 0.731, 0]", "fail", ["unscaled"]),
]


def _exercise_with_claims():
    claims = "".join(f'[[claims]]\nquantity = "{q}"\nrow = {r}\nvalue = "{v}"\n' for q, r, _, v, _, _ in ANSWERS)
    return parse_exercise(DEFINE + claims, source="define.toml")


def _key(index):
    quantity, row, _, _, _, _ = ANSWERS[index]
    return parse_answer_key(DEFINE + f'[[questions]]\nname = "x"\nquantity = "{quantity}"\nrow = {row}\npoints = 2\n',
                            source="key.toml")


def test_check_judges_and_diagnoses_a_define_exercise():
    report = check_exercise(_exercise_with_claims())
    assert [(o.verdict, o.diagnosis) for o in report.outcomes] == [(v, d) for *_, v, d in ANSWERS]


@pytest.mark.parametrize("index", range(len(ANSWERS)))
def test_grade_gives_the_verdict_and_diagnosis_check_gives(index):
    """The same number, as a claim in `check` and as an answer in `grade`: one pipeline, one verdict."""
    *_, number, verdict, diagnosis = ANSWERS[index]
    result = grade(_key(index), "ann", parse_submission(f"x = {number}"))
    [question] = result.questions
    assert question.verdict == verdict and question.diagnosis == diagnosis
    # a whole row earns its points in proportion to its right entries (the blocked 0 is right)
    assert question.points == [Fraction(2), Fraction(0), Fraction(2), Fraction(2, 3)][index]
    if diagnosis:  # the catalogue's remedy, not a placeholder
        assert CATALOGUE[diagnosis[0]].remedy.split(":")[0][:20] in question.feedback
        assert "Known mistake" not in question.feedback


def test_a_wrong_answer_to_a_define_key_without_a_known_mistake_is_still_wrong():
    result = grade(_key(0), "ann", parse_submission("x = [-1, 2]"))
    [question] = result.questions
    assert question.verdict == "fail" and question.diagnosis == [] and question.points == Fraction(1)
    assert "No known mistake reproduces" in question.feedback


def test_the_checker_is_computed_once_and_serves_select_judge_and_diagnose():
    exercise = _exercise_with_claims()
    checker = Checker(exercise)
    assert checker.kind == "define" and checker.result is None
    assert checker.selection("A.weights", 2).positions == [(2, 1), (2, 2), (2, 3)]
    assert [v.state for v in checker.judge(exercise.claims[1])] == [Verdict.FAIL, Verdict.FAIL]
    assert [m for m, _ in checker.diagnose(exercise.claims[1])] == ["layer_norm_unbiased"]
    attention = Checker(parse_exercise('[attention]\nscores = [["0", "ln(3)"]]\nvalue = [[1], [0]]\n'))
    assert attention.kind == "attention" and attention.result is not None
    assert attention.balls("weights", [(1, 1)]) is not None


def test_only_the_pipeline_runs_a_check_loop():
    """The duplicated check loop is gone: no other grading module judges a claim's selected
    entries (judge_values) or walks an exercise's claims."""
    for path in GRADING.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = {node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                 for node in ast.walk(tree) if isinstance(node, ast.Call)}
        if path.name not in ("pipeline.py", "claims.py"):
            assert "judge_values" not in calls, path.name
        loops = [node for node in ast.walk(tree) if isinstance(node, (ast.For, ast.comprehension))
                 and ast.unparse(node.iter).endswith("exercise.claims")]
        # (the diagnoser walks the solution's other claims too: to follow through from them)
        assert not loops or path.name in ("pipeline.py", "diagnose.py"), path.name
    assert not (GRADING / "program_check.py").exists()


# ----------------------------------------------------------------- the catalogue


def _candidate_ids() -> set:
    """Every id diagnose.py reproduces: the first argument of each Candidate(...) call."""
    tree = ast.parse((GRADING / "diagnose.py").read_text(encoding="utf-8"))
    return {node.args[0].value for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "id", "") == "Candidate" and isinstance(node.args[0], ast.Constant)}


def test_every_id_any_diagnoser_uses_is_one_row_of_the_catalogue():
    used = _candidate_ids() | set(VARIANTS) | set(CORE_VARIANTS) | set(WRONG_RULES)
    assert len(_candidate_ids()) >= 15
    assert used <= set(CATALOGUE), used - set(CATALOGUE)
    assert set(CATALOGUE) <= used, set(CATALOGUE) - used  # no row nothing reproduces
    assert set(diagnose.MISTAKES) == set(ids()) - set(ids("model")) - set(ids("step"))
    assert set(VARIANTS) == set(ids("model"))
    assert set(WRONG_RULES) == set(ids("step"))


@pytest.mark.parametrize("mistake", list(CATALOGUE))
def test_every_row_has_a_description_and_a_one_sentence_remedy(mistake):
    row = CATALOGUE[mistake]
    assert row.id == mistake and row.kind in KINDS and row.description and describe(mistake) == row.description
    for context in ({}, {"d_k": 2, "scale": "1/√d_k = 1/√2", "unscaled_remedy": "divide by √2"}):
        text = row.sentence(context, detail="weights rounded to 2 decimals")
        assert text.endswith(".") and "\n" not in text and "{" not in text, text
    assert order(mistake) == list(CATALOGUE).index(mistake)


def test_a_remedy_with_a_placeholder_the_exercise_cannot_fill_is_caught():
    """The check above can fail: a row naming an unknown number raises, it is never printed half-filled."""
    bad = Mistake("bad", "attention", "a bad row", "Divide by {d_q}.")
    with pytest.raises(KeyError):
        bad.sentence({})


def test_feedback_names_the_exercises_own_numbers_from_the_catalogue():
    exercise = parse_exercise('[attention]\nquery = [[1, 0, 0]]\nkey = [[1, 0, 0]]\nvalue = [[1]]\n')
    assert feedback.sentence("scaled_by_dk", exercise) == CATALOGUE["scaled_by_dk"].sentence({"d_k": 3})
    assert "√3" in feedback.sentence("unscaled", exercise)
    assert feedback.sentence("no_such_mistake", exercise) == "Known mistake: no such mistake."
    assert describe("no_such_mistake") == "no such mistake" and order("no_such_mistake") == len(CATALOGUE)


# ----------------------------------------------------------------- enums and printing


def test_verdicts_are_a_closed_enum_written_as_plain_words():
    assert [v.value for v in Verdict] == ["pass", "fail", "undecided", "carried_forward", "missing", "unreadable"]
    assert Verdict.PASS == "pass" and f"{Verdict.CARRIED_FORWARD}" == "carried_forward"
    assert json.dumps([Verdict.FAIL]) == '["fail"]'
    with pytest.raises(ValueError):
        Verdict("passed")


def test_outcomes_print_themselves_as_the_command_line_does():
    report = check_exercise(_exercise_with_claims())
    assert report.text() == render_text(report) and report.json() == render_json(report)
    data = json.loads(report.json())
    assert [c["verdict"] for c in data["claims"]] == ["pass", "fail", "pass", "fail"]
    assert report.outcomes[1].as_dict()["diagnosis"] == ["layer_norm_unbiased"]
    assert report.outcomes[1].row()[1] == "FAIL" and report.outcomes[0].row()[1] == "pass"
    assert report.text().splitlines()[0] == report.summary() == "define.toml: 2 passed, 2 failed"


def test_a_student_result_prints_its_own_grade_files():
    key = _key(1)
    result = grade(key, "ann", parse_submission("x = [-0.707, 0.707]"))
    assert result.json() == student_json(result)
    assert json.loads(result.json())["questions"][0]["verdict"] == "fail"
    assert grades_csv([result], key).splitlines()[1].split(",") == result.csv_row(key.questions)
    assert json.loads(result.gradescope_json())["tests"][0]["output"].startswith("fail: ")
    assert json.loads(result.prairielearn_json())["gradable"] is True
