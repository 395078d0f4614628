"""Issue 22, item 4, on the outside author's course: examples/steps/submissions graded
against examples/steps/answer_key.toml give the points per question that the author
worked out by hand (expected_grades.toml), and every step the verdict expected."""

import tomllib
from fractions import Fraction
from pathlib import Path

import pytest

from symbolic_attn.grading.answer_key import parse_answer_key
from symbolic_attn.grading.batch import grade
from symbolic_attn.grading.submissions import read_submission

FOLDER = Path(__file__).resolve().parent.parent / "examples" / "steps"
KEY_TEXT = (FOLDER / "answer_key.toml").read_text(encoding="utf-8")
EXPECTED = tomllib.loads((FOLDER / "expected_grades.toml").read_text(encoding="utf-8"))
#: (student, question) -> why the checker does not (yet) give the expected points.
KNOWN: dict = {}


KEY = parse_answer_key(KEY_TEXT, source="answer_key.toml")


CASES = [(student, q.name) for student in EXPECTED for q in KEY.questions]


@pytest.mark.parametrize("student, question", [pytest.param(s, q, id=f"{s}-{q}", marks=[pytest.mark.xfail(
    reason=KNOWN[(s, q)], strict=True)] if (s, q) in KNOWN else []) for s, q in CASES])
def test_points_per_question_as_worked_out_by_hand(student, question):
    entry = EXPECTED[student]
    result = grade(KEY, student, read_submission(FOLDER / "submissions" / entry["file"]))
    got = {q.name: q for q in result.questions}[question]
    assert got.points == Fraction(entry["points"][question]), got.feedback
    wanted_steps = entry.get("steps", {}).get(question)
    if wanted_steps is not None:
        assert [s["verdict"] for s in got.steps or []] == wanted_steps, got.feedback
