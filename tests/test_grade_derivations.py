"""Issue 22, item 4: answer-key questions of kind = "derivation" -- the student's chain
found by its heading, every step decided, points up to the first step not proved, the
steps in STUDENT.json, one Gradescope test per step, unreadable lines as PrairieLearn's
format errors."""

import json
from fractions import Fraction

import pytest

from symbolic_attn.errors import ExerciseError
from symbolic_attn.grading.answer_key import parse_answer_key
from symbolic_attn.grading.batch import grade
from symbolic_attn.grading.exports import grades_csv, gradescope_json, prairielearn_json, student_json
from symbolic_attn.grading.outcomes import Verdict
from symbolic_attn.grading.submissions import parse_submission

SHIFT = r"""
[[questions]]
name = "shift"
kind = "derivation"
start = '\operatorname{softmax}(x + c)_i'
goal = '\operatorname{softmax}(x)_i'
points = 4
[questions.symbols]
n = "positive integer"
i = "integer 1..n"
j = "integer 1..n"
x = "real vector n"
c = "real"
"""
RIGHT = r"""## shift
$$
\begin{aligned}
\operatorname{softmax}(x + c)_i &= \frac{e^{x_i + c}}{\sum_{j=1}^{n} e^{x_j + c}} \\
&= \frac{e^{c} e^{x_i}}{e^{c} \sum_{j=1}^{n} e^{x_j}} \\
&= \frac{e^{x_i}}{\sum_j e^{x_j}} \\
&= \operatorname{softmax}(x)_i
\end{aligned}
$$
"""
# The second step adds e^c instead of multiplying: false, and named.
WRONG = RIGHT.replace(r"\frac{e^{c} e^{x_i}}{e^{c} \sum_{j=1}^{n} e^{x_j}}",
                      r"\frac{e^{c} e^{x_i}}{e^{c} + \sum_{j=1}^{n} e^{x_j}}")


def key(text=SHIFT):
    return parse_answer_key(text, source="key.toml")


def graded(text, student="ann", name="ann.md", the_key=None):
    return grade(the_key or key(), student, parse_submission(text, name))


def test_a_right_chain_earns_every_point():
    result = graded(RIGHT)
    [question] = result.questions
    assert result.score == 4 and question.verdict == Verdict.PASS
    assert [s["verdict"] for s in question.steps] == ["proved"] * 4
    assert result.gradable and result.problems == []  # the derivation's lines are not "unreadable statements"


def test_a_false_step_gets_the_points_before_it_and_feedback_naming_it():
    result = graded(WRONG)
    [question] = result.questions
    assert [s["verdict"] for s in question.steps][:2] == ["proved", "false"]
    assert question.verdict == Verdict.FAIL and result.score == Fraction(4 * 1, 4)
    assert "1 of 4 steps proved before line 5" in question.feedback and "Counterexample:" in question.feedback


def test_a_chain_that_starts_elsewhere_earns_nothing_and_says_so():
    # softmax(x + 2c)_i would count: it is equal to the start (the identity itself)
    text = RIGHT.replace(r"\operatorname{softmax}(x + c)_i &=", r"\operatorname{softmax}(2x)_i &=")
    result = graded(text)
    assert result.score == 0 and result.questions[0].verdict == Verdict.FAIL
    assert "starts at" in result.questions[0].feedback


def test_no_chain_is_missing_and_the_only_chain_answers_the_only_question():
    result = graded("## other\nno maths here\n\nx = 1\n")
    assert result.questions[0].verdict == Verdict.MISSING and result.score == 0
    result = graded(RIGHT.replace("## shift", "## my proof"))  # the one chain of the file, the key's one derivation
    assert result.score == 4


def test_an_unreadable_line_is_a_format_error_never_a_crash():
    text = RIGHT.replace(r"&= \frac{e^{x_i}}{\sum_j e^{x_j}}", r"&= \foo{e^{x_i}}")
    result = graded(text)
    question = result.questions[0]
    assert "unreadable" in [s["verdict"] for s in question.steps]
    pl = json.loads(prairielearn_json(result))
    assert pl["gradable"] is False and any("unknown command \\foo" in e for e in pl["format_errors"])


def test_the_grade_files_carry_the_steps():
    result = graded(WRONG)
    [entry] = json.loads(student_json(result))["questions"]
    assert {"line", "from", "to", "read", "relation", "verdict", "reason", "counterexample", "diagnosis"} <= set(entry["steps"][0])
    tests = json.loads(gradescope_json(result))["tests"]
    assert [t["name"] for t in tests] == [f"shift: step {k} (line {k + 3})" for k in range(1, 5)]
    assert sum(t["score"] for t in tests) == 1 and sum(t["max_score"] for t in tests) == 4
    csv = grades_csv([result], key())
    assert csv.splitlines()[0].endswith("shift") and csv.splitlines()[1].endswith(",1")


def test_a_key_mixing_values_and_derivations():
    mixed = parse_answer_key('[attention]\nscores = [["0", "ln(3)"]]\nvalue = [[1, 0], [0, 1]]\n'
                             '[[questions]]\nname = "w"\nquantity = "weights"\npoints = 2\n' + SHIFT, source="k.toml")
    result = grade(mixed, "ann", parse_submission("w = [0.25, 0.75]\n\n" + RIGHT, "ann.md"))
    assert result.score == 6 and [q.verdict for q in result.questions] == [Verdict.PASS, Verdict.PASS]


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace('c = "real"\n', 'c = "complex thing"\n'), "question 1: symbols"),
    (lambda t: t.replace(r"start = '\operatorname{softmax}(x + c)_i'", r"start = '\foo'"), "question 1: start/goal"),
    (lambda t: t.replace("points = 4", "points = 4\nrow = 2"), "question 1: row: unknown key for a derivation"),
    (lambda t: t.replace('kind = "derivation"', 'kind = "proof"'), "question 1: kind: expected one of value, derivation"),
    (lambda t: t.split("[questions.symbols]")[0], "question 1: symbols: expected a table"),
])
def test_a_bad_derivation_question_is_one_line_naming_the_key(change, message):
    with pytest.raises(ExerciseError, match=message.replace("(", r"\(")):
        key(change(SHIFT))


def test_a_value_question_needs_a_computation():
    with pytest.raises(ExerciseError, match="key.toml: attention: missing"):
        key(SHIFT + '[[questions]]\nname = "w"\nquantity = "weights"\nkind = "value"\n')


def test_a_file_the_reader_cannot_take_is_unreadable_not_missing():
    result = graded("## shift\n$$ \\operatorname{softmax}(x + c)_i = \\operatorname{softmax}(x)_i\n")
    question = result.questions[0]
    assert question.verdict == Verdict.UNREADABLE and "the display $$ is never closed" in question.feedback
