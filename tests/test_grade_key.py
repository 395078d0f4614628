"""The answer key ([grading], [[questions]]), precision rules, partial credit and feedback."""

from fractions import Fraction

import pytest

from symbolic_attn.errors import ExerciseError
from symbolic_attn.grading import feedback
from symbolic_attn.grading.answer_key import parse_answer_key
from symbolic_attn.grading.batch import grade
from symbolic_attn.grading.diagnose import MISTAKES
from symbolic_attn.grading.exercise import parse_exercise
from symbolic_attn.grading.submissions import parse_submission

# weights of row 1: 1/4, 3/4 (scores 0, ln 3); output = weights (V = I)
BASE = '''
[attention]
scores = [["0", "ln(3)"], ["0", "0"]]
value = [[1, 0], [0, 1]]
'''


def key_of(questions: str, grading: str = ""):
    return parse_answer_key(BASE + grading + questions, source="key.toml")


def question(name="w", quantity="weights", row=1, col=2, points=1, extra=""):
    lines = ["[[questions]]", f'name = "{name}"', f'quantity = "{quantity}"']
    lines += [f"row = {row}"] if row else []
    lines += [f"col = {col}"] if col else []
    return "\n".join(lines + [f"points = {points}", extra]) + "\n"


def verdict(key, text):
    result = grade(key, "s", parse_submission(text))
    return result.questions[0].verdict, result.questions[0].points


def test_exercise_loader_still_reads_the_file_with_a_key():
    exercise = parse_exercise(BASE + question(), source="key.toml")
    assert exercise.attention.scores.shape == (2, 2)


BAD_KEYS = [
    ("unknown-key", question(extra="weight = 2"), r"^key.toml: question 1: weight: unknown key"),
    ("bad-quantity", question(quantity="weight"), r"^key.toml: question 1: quantity: expected one of"),
    ("row-outside", question(row=3), r"^key.toml: question 1: row: 3 is outside 1\.\.2"),
    ("zero-points", question(points=0), r"^key.toml: question 1: points: expected a positive number"),
    ("text-points", question(points='"many"'), r"^key.toml: question 1: points: expected a number"),
    ("two-rules", question(extra="decimals = 3\nsig_figs = 2"), r"^key.toml: question 1: sig_figs: give at most one"),
    ("bad-decimals", question(extra="decimals = -1"), r"^key.toml: question 1: decimals: expected an integer"),
    ("no-name", question(name=""), r"^key.toml: question 1: name: expected a name"),
    ("duplicate", question() + question(name="w_{}", col=1).replace('"w_{}"', '"w"'),
     r"^key.toml: question 2: name: 'w' is also a name of question 1"),
    ("alias-clash", question(name="a_{12}") + question(name="b", col=1, extra='aliases = ["a_{1,2}"]'),
     r"^key.toml: question 2: name: 'a_12' is also a name"),
    ("share-above-1", "[grading]\ncarried_forward = 1.5\n" + question(), r"^key.toml: grading.carried_forward: expected a share"),
    ("grading-unknown", "[grading]\npartial = true\n" + question(), r"^key.toml: grading.partial: unknown key"),
]


@pytest.mark.parametrize("text, message", [b[1:] for b in BAD_KEYS], ids=[b[0] for b in BAD_KEYS])
def test_bad_answer_keys_are_refused(text, message):
    with pytest.raises(ExerciseError, match=message):
        parse_answer_key(BASE + text, source="key.toml")


def test_points_are_exact():
    key = key_of(question(points="1.5") + question(name="v", col=1, points='"2/3"'))
    assert [q.points for q in key.questions] == [Fraction(3, 2), Fraction(2, 3)]
    assert key.max_score == Fraction(13, 6)


def test_names_and_aliases():
    key = key_of(question(name="a_{12}", extra='aliases = ["alpha_{12}"]'))
    for spelling in ["a_{12}", "a_{1,2}", "a_12", "$a_{1 2}$", "a12", r"\alpha_{12}"]:
        assert key.find(spelling) is key.questions[0], spelling
    for other in ["A_{12}", "a_{21}", "alpha"]:
        assert key.find(other) is None, other
    assert verdict(key, r"$\alpha_{1,2} = 0.75$") == ("pass", 1)


RULES = [
    # extra, written answer, verdict
    ("written-ok", "", "w = 0.8", "pass"),  # 1 decimal: 0.75 is halfway, passes
    ("written-wrong", "", "w = 0.7", "pass"),
    ("written-two", "", "w = 0.76", "fail"),
    ("exact-fraction", "", "w = 3/4", "pass"),
    ("exact-wrong", "", "w = 2/3", "fail"),
    ("decimals-ok", "decimals = 2", "w = 0.75", "pass"),
    ("decimals-more", "decimals = 2", "w = 0.7500", "pass"),
    ("decimals-too-few", "decimals = 2", "w = 0.8", "fail"),
    ("decimals-exact", "decimals = 2", r"w = \frac{3}{4}", "pass"),
    ("tolerance-ok", 'tolerance = "0.1"', "w = 0.7", "pass"),
    ("tolerance-fail", 'tolerance = "0.01"', "w = 0.7", "fail"),
    ("relative-ok", 'relative = "0.1"', "w = 0.7", "pass"),
    ("relative-fail", 'relative = "0.01"', "w = 0.7", "fail"),
    ("sig-figs-ok", "sig_figs = 2", "w = 0.75", "pass"),
    ("sig-figs-fail", "sig_figs = 2", "w = 0.74", "fail"),
    ("strict-ok", "strict_sig_figs = 3", "w = 0.750", "pass"),
    ("strict-too-many", "strict_sig_figs = 2", "w = 0.750", "fail"),
    ("strict-too-few", "strict_sig_figs = 3", "w = 0.75", "fail"),
]


@pytest.mark.parametrize("extra, text, expected", [r[1:] for r in RULES], ids=[r[0] for r in RULES])
def test_precision_rules(extra, text, expected):
    assert verdict(key_of(question(extra=extra)), text)[0] == expected


def test_partial_credit_in_proportion_to_correct_entries():
    key = key_of(question(name="W", row=None, col=None, points=4))
    result = grade(key, "s", parse_submission("W = [[0.25, 0.75], [0.5, 0.4]]"))
    q = result.questions[0]
    assert (q.verdict, q.points, q.wrong) == ("fail", Fraction(3), [(2, 2)])
    assert q.feedback.startswith("Entries (2,2) of W are wrong; the other 3 are right.")


def test_wrong_shape_is_unreadable_and_transposed_is_named():
    key = key_of(question(name="r", row=1, col=None))
    assert verdict(key, "r = [0.25, 0.75, 0]") == ("unreadable", 0)
    commas = grade(key, "s", parse_submission("r = [0,25, 0,75]")).questions[0]
    assert commas.verdict == "unreadable" and "separate the entries with ';'" in commas.feedback
    assert "';'" not in grade(key, "s", parse_submission("r = [0.25, 0.75, 0, 1]")).questions[0].feedback
    wide = parse_answer_key('[attention]\nscores = [["0", "0", "0"], ["0", "0", "0"]]\nvalue = [[1], [1], [1]]\n'
                            + question(name="W", row=None, col=None, points=2))
    result = grade(wide, "s", parse_submission("W = [[1/3, 1/3], [1/3, 1/3], [1/3, 1/3]]"))
    assert result.questions[0].diagnosis == ["transposed"] and result.score == 0


def test_missing_unreadable_and_nothing_readable():
    key = key_of(question() + question(name="v", col=1))
    result = grade(key, "s", parse_submission("w = 0.75\nv = 0.2.5"))
    assert [q.verdict for q in result.questions] == ["pass", "unreadable"]
    assert "line 2" in result.questions[1].feedback
    empty = grade(key, "s", parse_submission("I did not do it."))
    assert empty.gradable is False and "nothing readable" in empty.reason
    unread = grade(key, "s", parse_submission("v = 0.2.5"))
    assert unread.gradable is False and unread.reason.startswith("no answer could be read (line 1: v: unexpected")
    assert [q.verdict for q in unread.questions] == ["missing", "unreadable"]
    other = grade(key, "s", parse_submission("x_{12} = 0.75"))
    assert other.gradable is False and other.reason.startswith("no answer to any question: the names written (x_{12})")


def test_carried_forward_share_and_better_mark():
    questions = (question(name="s", quantity="scores", row=1, col=2)
                 + question(name="w", row=1, col=2, points=2))
    key = key_of(questions)  # default share 0.5
    # claimed score 0 for ln 3: the weights then follow as 1/2
    result = grade(key, "s", parse_submission("s = 0\nw = 0.5"))
    assert [q.verdict for q in result.questions] == ["fail", "carried_forward"]
    assert result.questions[1].points == 1 and "carried forward" in result.questions[1].feedback
    disabled = key_of(questions, "[grading]\ncarried_forward = 0\n")
    assert [q.verdict for q in grade(disabled, "s", parse_submission("s = 0\nw = 0.5")).questions] == ["fail", "fail"]
    # a wrong value that does not follow from the earlier answer earns nothing
    assert grade(key, "s", parse_submission("s = 0\nw = 0.6")).questions[1].verdict == "fail"
    # the order of the questions in the key (or of the answers in the text) does not matter
    reversed_key = key_of(question(name="w", row=1, col=2, points=2) + question(name="s", quantity="scores", row=1, col=2))
    result = grade(reversed_key, "s", parse_submission("w = 0.5\ns = 0"))
    assert [q.verdict for q in result.questions] == ["carried_forward", "fail"]


def test_every_diagnosis_has_one_sentence_with_a_remedy():
    exercise = parse_exercise('[attention]\nquery = [[1, 0]]\nkey = [[1, 0]]\nvalue = [[1]]\n')
    from symbolic_attn.model.mistakes import CATALOGUE

    assert set(MISTAKES) <= set(CATALOGUE)
    for mistake in CATALOGUE:
        text = feedback.sentence(mistake, exercise)
        assert not text.startswith("Known mistake"), mistake
        assert text.endswith(".") and ":" in text and text.count(". ") == 0, text
    assert "√2" in feedback.sentence("unscaled", parse_exercise(
        '[attention]\nquery = [[1, 0]]\nkey = [[1, 0]]\nvalue = [[1]]\n'))
    given = parse_exercise('[attention]\nquery = [[1, 0]]\nkey = [[1, 0]]\nvalue = [[1]]\nscale = "1/3"\n')
    assert "1/3" in feedback.sentence("wrong_scale", given)


def test_carried_forward_in_a_matrix_keeps_the_right_entries():
    """Row 1 of the weights claimed wrong (scores claimed wrong); the output row 2 is right."""
    key = key_of(question(name="s", quantity="scores", row=1, col=None)
                 + question(name="Z", quantity="output", row=None, col=None, points=4))
    result = grade(key, "s", parse_submission("s = [0, 0]\nZ = [[0.5, 0.5], [0.5, 0.5]]"))
    z = result.questions[1]
    # (1,1) and (1,2) follow from s = [0, 0]; (2,1), (2,2) are right: 4 * (2 + 0.5 * 2) / 4 = 3
    assert (z.verdict, z.points, z.wrong) == ("carried_forward", 3, [(1, 1), (1, 2)])


def test_hints_use_the_questions_own_names_and_shapes():
    # 3 queries, 2 keys: the weights are 3x2; nothing of the bundled course's exercise is quoted
    key = parse_answer_key('''
[attention]
scores = [["0", "1"], ["1", "0"], ["0", "0"]]
value = [[1, 0], [0, 1]]
''' + question(name="W", row=None, col=None) + question(name="r_2", row=2, col=None)
        + question(name="c_1", row=None, col=1) + question(name="w_{31}", row=3, col=1), source="key.toml")
    result = grade(key, "s", parse_submission("W = [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]]"))
    hints = {q.name: q.feedback for q in result.questions if q.verdict == "missing"}
    assert hints == {
        "r_2": "No answer for r_2 was found: write it as a statement such as r_2 = [..., ...] (a row of 2 numbers).",
        "c_1": "No answer for c_1 was found: write it as a statement such as c_1 = [..., ..., ...] (a row of 3 numbers).",
        "w_{31}": "No answer for w_{31} was found: write it as a statement such as w_{31} = ... (one number).",
    }
    nothing = grade(key, "s", parse_submission("I did not do it."))
    assert nothing.reason == "nothing readable: no statement such as W = [[..., ...], [..., ...], [..., ...]] was found"
    assert "a 3x2 matrix, one bracket per row" in nothing.questions[0].feedback
    assert not any("0.284" in q.feedback or "0.140" in q.feedback for q in nothing.questions)
