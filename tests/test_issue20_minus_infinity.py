"""Issue 20, item 3: minus infinity and additive masks wherever a matrix is read.

``-inf`` (``-\\infty``, ``−∞`` in a solution) is a literal: a whole matrix entry or a whole
claimed value, exactly -oo.  In given scores it is the keep-mask it denotes; the masked
scores S' + M are a stage (``masked``) of every attention trace, printed and claimable; a
claimed -inf is judged exactly.  Inside arithmetic it is refused with one clear message.
"""

import json

import pytest
import sympy
from sympy import Rational, oo

from symbolic_attn.cli import main
from symbolic_attn.errors import EmptyRowError, ParseError, ShapeError, SymbolicAttnError
from symbolic_attn.exact.convert import to_exact, to_matrix
from symbolic_attn.exact.parse import parse_expression
from symbolic_attn.grading.claims import judge_element, parse_claimed
from symbolic_attn.grading.submissions import parse_submission
from symbolic_attn.model.attention import STAGES, attention, attention_from_scores
from symbolic_attn.model.masks import Mask
from symbolic_attn.render.display import latex_report

HALF = Rational(1, 2)


# -- the input language --------------------------------------------------------------


def test_minus_inf_is_a_matrix_entry_and_a_whole_value():
    assert parse_expression("[[0, -inf], [0, 0]]") == sympy.Matrix([[0, -oo], [0, 0]])
    assert parse_expression("-inf") is sympy.S.NegativeInfinity
    assert to_matrix("[0, -inf]", name="scores")[1] is sympy.S.NegativeInfinity


@pytest.mark.parametrize(
    "text, message",
    [
        ("--inf", "'inf' alone is not read"),
        ("-inf^2", "'inf' alone is not read"),
        ("[-inf]*2", "-inf is read only as a whole matrix entry or a whole value"),
        ("[[0, -inf + 1]]", "never inside arithmetic"),
        ("1 + -inf", "never inside arithmetic"),
        ("exp(-inf)", "never inside arithmetic or a function"),
        ("2^-inf", "never inside arithmetic"),
        ("-infinity", "'infinity' is not read: minus infinity is written -inf"),
        ("-inff", "unknown name 'inff' (minus infinity is written -inf)"),
        ("nan", "nan is not a number"),
        ("[0, nan]", "nan is not a number"),
        ("inf", "'inf' alone is not read"),
        ("+inf", "'inf' alone is not read"),
        ("[0, +inf]", "+inf would block nothing"),
        ("-oo", "'oo' is not read: minus infinity is written -inf"),
    ],
)
def test_hostile_infinities_are_refused_with_one_clear_message(text, message):
    with pytest.raises(ParseError) as error:
        parse_expression(text)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_minus_inf_is_not_a_scalar_number_for_a_scale():
    with pytest.raises(ParseError, match="-inf is not a number here"):
        to_exact("-inf")


# -- the attention core --------------------------------------------------------------


def test_minus_inf_scores_are_the_keep_mask_they_denote():
    result = attention_from_scores("[[0, -inf], [0, 0]]", [[1], [3]])
    assert result.mask == Mask.causal(2)
    assert result.weights == sympy.Matrix([[1, 0], [HALF, HALF]])
    assert result.output == sympy.Matrix([[1], [2]])
    # the same as the finite scores with the explicit causal mask
    explicit = attention_from_scores([[0, 0], [0, 0]], [[1], [3]], mask="causal")
    assert explicit.weights == result.weights and explicit.output == result.output
    # the scores are shown as written
    assert result.stage("scores") == sympy.Matrix([[0, -oo], [0, 0]])
    assert result.decimals("scores", 2)[0] == ["0.00", "-inf"]


def test_float_and_sympy_minus_infinity_are_read_alike():
    for scores in ([[0, float("-inf")], [0, 0]], sympy.Matrix([[0, -oo], [0, 0]])):
        assert attention_from_scores(scores, [[1], [3]]).mask == Mask.causal(2)


def test_minus_inf_intersects_an_explicit_mask():
    # -inf blocks key 2 of row 1; the explicit keep-mask blocks key 3: only key 1 is left
    result = attention_from_scores("[[0, -inf, 5]]", [[1], [2], [3]], mask=Mask.keep([[1, 1, 0]]))
    assert result.mask.allowed == ((True, False, False),)
    assert result.output == sympy.Matrix([[1]])


def test_a_row_of_only_minus_inf_follows_the_empty_row_policy():
    with pytest.raises(EmptyRowError, match="row 1 allows no key"):
        _ = attention_from_scores("[[-inf, -inf], [0, 0]]", [[1], [3]]).weights
    zeros = attention_from_scores("[[-inf, -inf], [0, 0]]", [[1], [3]], on_empty_row="zeros")
    assert zeros.weights == sympy.Matrix([[0, 0], [HALF, HALF]])
    uniform = attention_from_scores("[[-inf, -inf], [0, 0]]", [[1], [3]], on_empty_row="uniform")
    assert uniform.weights.row(0) == sympy.Matrix([[HALF, HALF]])


def test_minus_inf_is_refused_in_queries_keys_and_values():
    with pytest.raises(ShapeError, match="Q holds -inf"):
        attention("[[0, -inf]]", [[1, 0]], [[1]])
    with pytest.raises(ShapeError, match="V holds -inf"):
        attention_from_scores([[0, 0]], "[[1], [-inf]]")


def test_masked_stage_is_in_every_trace():
    assert STAGES == ("scores", "scaled", "masked", "weights", "output")
    result = attention([[1, 0], [0, 1]], [[1, 0], [0, 1]], [[1], [2]], mask="causal", scale=2)
    assert result.stage("masked") == sympy.Matrix([[2, -oo], [0, 2]])
    assert result.decimals("masked", 1) == [["2.0", "-inf"], ["0.0", "2.0"]]
    assert list(result.trace)[-3:] == ["masked", "weights", "output"]
    assert result.trace["masked"] == result.masked
    balls = result.intervals("masked", 64)
    assert not balls[0][1].is_finite() and balls[0][0].contains(2)
    assert result.stage_shape("masked") == (2, 2)
    # without a mask the masked scores are the scaled scores
    plain = attention([[1, 0]], [[1, 0], [0, 1]], [[1], [2]], scale=1)
    assert plain.stage("masked") == plain.scaled


def test_masked_stage_prints_minus_inf_in_text_latex_and_json(capsys):
    # issue 21: --exact all for a line per entry (rational ones included); -inf shown as −∞ in the grids
    code = main(["attention", "--scores", "[[0, -inf], [0, 0]]", "--v", "[[1], [3]]", "--exact", "all"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert "mask none and -inf in the scores (= causal)" in out
    assert "masked scores S + M" in out and "S+M[1,2] = -inf  (blocked)\n" in out
    assert "  [ 0.000     −∞ ]" in out
    assert "A[2,1] = 1/2  = 0.500" in out
    latex = latex_report(attention_from_scores("[[0, -inf], [0, 0]]", [[1], [3]]))
    assert r"-\infty" in latex and "M_{-\\infty}" in latex
    assert main(["attention", "--scores", "[[0, -inf], [0, 0]]", "--v", "[[1], [3]]", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["masked"]["exact"] == [["0", "-inf"], ["0", "0"]]
    assert document["masked"]["decimal"][0][1] == "-inf"


def test_cli_additive_mask(capsys):
    code = main(["attention", "--scores", "[[0, 1], [0, 0]]", "--v", "[[1], [3]]", "--mask", "additive:[[0, -inf], [0, 0]]",
                 "--exact", "all"])  # issue 21: integer entries get a line only with --exact all
    out, _ = capsys.readouterr()
    assert code == 0 and "Z[1,1] = 1\n" in out
    assert main(["attention", "--scores", "[[0, 1]]", "--v", "[[1], [3]]", "--mask", "additive:[[0, -1]]"]) == 2
    assert "only 0 (allowed) and -oo (blocked)" in capsys.readouterr().err


@pytest.mark.parametrize("scores", ["[[0, --inf]]", "[[0, -inf^2]]", "[[0, -inff]]", "[[0, nan]]", "[[0, inf]]"])
def test_cli_refuses_hostile_scores_with_one_line(capsys, scores):
    assert main(["attention", "--scores", scores, "--v", "[[1], [3]]"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--scores" in err


# -- claims and exercises ------------------------------------------------------------


def _element(text):
    (element,) = parse_claimed(text).elements
    return element


def test_a_claimed_minus_inf_is_judged_exactly():
    assert judge_element(-oo, _element("-inf")).state == "pass"
    wrong = judge_element(sympy.Integer(0), _element("-inf"))
    assert wrong.state == "fail" and "-inf was claimed, but the value is 0, finite" in wrong.note
    finite = judge_element(-oo, _element("-1000000"))
    assert finite.state == "fail" and "the value is -inf (a blocked position), but -1000000 was claimed" in finite.note
    assert judge_element(-oo, _element("0.000")).state == "fail"
    assert judge_element(lambda: -oo, _element("-inf")).state == "pass"  # lazily given values too


EXERCISE = """
[attention]
scores = "[[0, -inf], [0, 0]]"
value = [[1], [3]]
[[claims]]
label = "right"
quantity = "masked"
value = "[[0, -inf], [0, 0]]"
[[claims]]
label = "finite where blocked"
quantity = "masked"
value = "[[0, 0], [0, 0]]"
[[claims]]
label = "blocked where finite"
quantity = "masked"
row = 2
col = 1
value = "-inf"
[[claims]]
label = "scores as written"
quantity = "scores"
row = 1
value = "[0, -inf]"
[[claims]]
label = "weights"
quantity = "weights"
value = "[[1, 0], [0.5, 0.5]]"
"""


def test_check_judges_the_masked_stage_of_an_exercise(tmp_path, capsys):
    path = tmp_path / "ex.toml"
    path.write_text(EXERCISE)
    assert main(["check", str(path), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    verdicts = {claim["label"]: claim["verdict"] for claim in report["claims"]}
    assert verdicts == {"right": "pass", "finite where blocked": "fail", "blocked where finite": "fail",
                        "scores as written": "pass", "weights": "pass"}
    right = report["claims"][0]
    assert right["exact"] == "[[0, -inf], [0, 0]]"


def test_exercise_refuses_minus_inf_outside_given_scores(tmp_path, capsys):
    path = tmp_path / "ex.toml"
    path.write_text('[attention]\nscores = "[[0, 0]]"\nvalue = "[[1], [-inf]]"\n')
    assert main(["check", str(path)]) == 2
    assert "-inf is read only in given scores" in capsys.readouterr().err


@pytest.mark.parametrize(
    "statement",
    [r"$M = \begin{bmatrix} 0 & -\infty \\ 0 & 0 \end{bmatrix}$", "m = [[0, -inf], [0, 0]]",
     "m = [[0, −∞], [0, 0]]", "m = [[0, -∞], [0, 0]]", "m = tensor([[0., -inf], [0., 0.]])",
     "m = [[0 -inf], [0 0]]"],
)
def test_solutions_read_minus_infinity(statement):
    (found,) = parse_submission(statement).statements
    assert found.problem == ""
    values = [element.value for element in found.claimed.elements]
    assert values == [0, -oo, 0, 0]


@pytest.mark.parametrize(
    "statement, message",
    [("m = [0, inf]", "without a minus sign"), ("m = [0, ∞]", "without a minus sign"),
     ("m = [0, -Infinity]", "minus infinity is written -inf"), ("m = -inf + 1", "never inside arithmetic"),
     ("m = [nan, 0]", "nan (not a number)")],
)
def test_solutions_refuse_other_infinities(statement, message):
    (found,) = parse_submission(statement).statements
    assert found.claimed is None and message in found.problem


def test_a_solution_claiming_minus_inf_where_finite_fails():
    (found,) = parse_submission("m = [[0, -inf], [-inf, 0]]").statements
    exact = [0, -oo, 0, 0]
    states = [judge_element(v, e).state for v, e in zip(exact, found.claimed.elements)]
    assert states == ["pass", "pass", "fail", "pass"]


def test_every_refusal_is_a_symbolic_attn_error():
    for text in ("--inf", "-inf^2", "[-inf]*2", "-infinity", "-inff", "nan"):
        with pytest.raises(SymbolicAttnError):
            to_matrix(f"[[0, {text}]]", name="scores")


KEY = """
title = "masked"
[attention]
query = "[[1, 0], [0, 1]]"
key = "[[1, 0], [0, 1]]"
value = "[[1], [2]]"
mask = "causal"
scale = "none"

[[questions]]
name = "M"
quantity = "masked"
points = 2

[[questions]]
name = "A"
quantity = "weights"
points = 1
"""


def test_an_answer_key_grades_the_masked_stage(tmp_path):
    from symbolic_attn.grading.answer_key import load_answer_key
    from symbolic_attn.grading.batch import discover, grade_all

    (tmp_path / "key.toml").write_text(KEY)
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    (submissions / "right.md").write_text("M = [[1, -inf], [0, 1]]\n\nA = [[1, 0], [0.269, 0.731]]\n")
    (submissions / "finite.md").write_text("M = [[1, 0], [0, 1]]\n\nA = [[1, 0], [0.269, 0.731]]\n")
    (submissions / "torch.md").write_text("M = tensor([[1., -inf], [-inf, 1.]])\n")
    key = load_answer_key(tmp_path / "key.toml")
    results = {r.student: r for r in grade_all(key, discover([submissions]), jobs=1)}
    assert results["right"].verdicts() == {"M": "pass", "A": "pass"}
    assert results["finite"].verdicts()["M"] == "fail"
    assert results["torch"].verdicts()["M"] == "fail"
    wrong = {r: next(q for q in results[r].questions if q.name == "M").wrong for r in ("finite", "torch")}
    assert wrong == {"finite": [(1, 2)], "torch": [(2, 1)]}


def test_variants_of_an_exercise_keep_the_minus_inf_mask():
    from symbolic_attn.grading.exercise import parse_exercise

    exercise = parse_exercise('[attention]\nscores = "[[0, -inf], [0, 0]]"\nvalue = [[1], [3]]\n', source="ex.toml")
    assert exercise.compute().mask == Mask.causal(2)
    variant = exercise.compute(masking="zero_after_softmax")
    assert variant.mask == Mask.causal(2) and variant.stage("masked")[0, 1] is sympy.S.NegativeInfinity
    assert variant.weights.row(0) == sympy.Matrix([[HALF, 0]])  # the mistake: softmax over both keys, then zeroed


def test_masked_scores_is_another_name_of_the_masked_stage():
    """The issue's own spelling, ``A.masked_scores``, names the stage ``masked`` (S' + M)."""
    from symbolic_attn.grading.answer_key import parse_answer_key
    from symbolic_attn.grading.batch import grade
    from symbolic_attn.grading.exercise import parse_exercise
    from symbolic_attn.grading.report import check_exercise
    from symbolic_attn.grading.submissions import parse_submission

    define = ('[inputs]\nX = [[1, 0], [0, 1]]\n[define]\nA = "attention(Q = X, K = X, V = X, mask = \'causal\')"\n')
    for quantity in ("A.masked_scores", "A.masked"):
        for claimed, verdict in (("[[0.707, -inf], [0, 0.707]]", "pass"), ("[[0.707, 0], [0, 0.707]]", "fail")):
            exercise = parse_exercise(define + f'[[claims]]\nquantity = "{quantity}"\nvalue = "{claimed}"\n')
            assert exercise.claims[0].quantity == "A.masked"
            assert check_exercise(exercise).outcomes[0].verdict == verdict
    key = parse_answer_key(define + '[[questions]]\nname = "M"\nquantity = "A.masked_scores"\npoints = 4\n')
    result = grade(key, "ann", parse_submission("M = [[0.7071, -inf], [0, 0.7071]]"))
    assert result.questions[0].verdict == "pass" and result.score == 4
    # A definition that is itself called masked_scores keeps its own name.
    own = parse_exercise('[inputs]\nX = [[1]]\n[define]\nmasked_scores = "2*X"\n'
                         '[[claims]]\nquantity = "masked_scores"\nvalue = "2"\n')
    assert own.claims[0].quantity == "masked_scores"
