"""Diagnosis: each known mistake is recognised, and only when it reproduces the numbers.

The wrong numbers below are produced by the core with a mistaken setting, rounded to three
decimals as a student would write them; the checker must fail them and name the mistake.
"""

import pytest

from symbolic_attn.model.attention import attention, attention_from_scores
from symbolic_attn.grading.diagnose import MISTAKES, Diagnoser
from symbolic_attn.grading.exercise import parse_exercise
from symbolic_attn.model.masks import Mask
from symbolic_attn.grading.report import check_exercise

X = [[1, 0], [0, 1], [1, 1]]
V = [[2, 0], [0, 2], [2, 2]]
MASK_TOML = {
    "none": '"none"',
    "causal": '"causal"',
    "keep": "{keep = [[1, 1, 0], [1, 0, 1], [0, 1, 1]]}",
}
MASKS = {"none": None, "causal": Mask.causal(3), "keep": Mask.keep([[1, 1, 0], [1, 0, 1], [0, 1, 1]])}


def exercise(claims, mask="none", scale='"default"'):
    text = f"""
[inputs]
X = {X}
[attention]
query = "X"
key = "X"
value = "2*X"
mask = {MASK_TOML[mask]}
scale = {scale}
"""
    for quantity, row, value in claims:
        text += f'[[claims]]\nquantity = "{quantity}"\nrow = {row}\nvalue = "{value}"\n'
    return parse_exercise(text, source="t.toml")


def written(result, stage, row, places=3):
    return "[" + ", ".join(result.decimals(stage, places)[row - 1]) + "]"


def outcome(ex, index=-1):
    return check_exercise(ex).outcomes[index]


CASES = [
    # id, mask, quantity, row, how the wrong numbers are made (a variant of the core)
    ("unscaled", "none", "weights", 3, lambda: attention(X, X, V, scale="none")),
    ("scaled_by_dk", "none", "weights", 3, lambda: attention(X, X, V, scale="1/2")),
    ("zeroed_not_renormalized", "causal", "weights", 2, lambda: attention(X, X, V, "causal", masking="zero_after_softmax")),
    ("mask_score_zero", "causal", "output", 2, lambda: attention(X, X, V, "causal", masking="zero_score")),
    ("mask_inverted", "keep", "weights", 1, lambda: attention(X, X, V, MASKS["keep"].inverted())),
    ("mask_shifted", "causal", "weights", 1, lambda: attention(X, X, V, Mask.causal(3, offset=1))),
    ("softmax_columns", "none", "weights", 1, lambda: attention(X, X, V, axis="queries")),
    ("keys_as_values", "none", "output", 3, lambda: attention(X, X, X)),
    ("rounded_intermediates", "none", "weights", 3,
     lambda: attention_from_scores([[sympy_decimal("0.7"), sympy_decimal("0.7"), sympy_decimal("1.4")]], [[0]] * 3)),
]


def sympy_decimal(text):
    import sympy

    return sympy.Rational(text)


@pytest.mark.parametrize("mistake, mask, quantity, row, make", CASES, ids=[c[0] for c in CASES])
def test_each_mistake_is_diagnosed(mistake, mask, quantity, row, make):
    result = make()
    use_row = 1 if result.scores.rows == 1 else row
    claim = written(result, quantity, use_row)
    found = outcome(exercise([(quantity, row, claim)], mask))
    assert found.verdict == "fail"
    assert mistake in found.diagnosis
    # Mask mistakes are never reported where there is no mask.
    if mask == "none":
        assert not {"zeroed_not_renormalized", "mask_score_zero", "mask_inverted", "mask_shifted"} & set(found.diagnosis)


def test_scaled_twice_differs_from_scaled_by_dk_with_an_explicit_scale():
    wrong = attention(X, X, V, scale="1/9")  # the exercise's scale 1/3, applied twice
    found = outcome(exercise([("weights", 3, written(wrong, "weights", 3))], scale='"1/3"'))
    assert found.verdict == "fail" and found.diagnosis == ["scaled_twice"]


def test_default_scale_twice_is_dividing_by_dk():
    wrong = attention(X, X, V, scale="1/2")
    assert outcome(exercise([("weights", 3, written(wrong, "weights", 3))])).diagnosis == ["scaled_by_dk", "scaled_twice"]


def test_forced_row_sum_is_document_004s_row_3():
    found = outcome(exercise([("weights", 3, "[0.248, 0.248, 0.504]")]))
    assert (found.verdict, found.diagnosis) == ("fail", ["forced_row_sum"])


def test_follows_from_claimed_needs_the_earlier_claim():
    claims = [("weights", 3, "[0.25, 0.25, 0.50]"), ("output", 3, "[1.500, 1.500]")]
    with_earlier = check_exercise(exercise(claims)).outcomes
    assert with_earlier[0].verdict == "pass"  # 2-decimal roundings of 0.24826, 0.50349
    assert with_earlier[1].verdict == "fail" and "follows_from_claimed" in with_earlier[1].diagnosis
    alone = outcome(exercise(claims[1:]))
    assert alone.verdict == "fail" and "follows_from_claimed" not in alone.diagnosis


def test_a_wrong_number_from_no_known_mistake_gets_no_diagnosis():
    found = outcome(exercise([("weights", 3, "[0.9, 0.05, 0.05]")], "causal"))
    assert (found.verdict, found.diagnosis) == ("fail", [])


def test_passing_claims_are_not_diagnosed():
    right = attention(X, X, V, "causal")
    found = outcome(exercise([("weights", 2, written(right, "weights", 2))], "causal"))
    assert (found.verdict, found.diagnosis) == ("pass", [])


def test_variants_are_settings_of_the_one_core():
    """Every candidate is an AttentionResult of the core (or its rounded stages), never a copy."""
    from symbolic_attn.model.attention import AttentionResult

    ex = exercise([("output", 3, "[0, 0]")], "causal")
    for candidate in Diagnoser(ex).candidates(ex.claims[0]):
        assert candidate.mistake in MISTAKES
        assert isinstance(candidate.result, AttentionResult)


def test_sum_normalized_weights_are_diagnosed_and_right_ones_are_not():
    # scores X X^T = [[1, 0, 1], [0, 1, 1], [1, 1, 2]]: each row over its sum, no softmax
    wrong = outcome(exercise([("weights", 1, "[0.500, 0.000, 0.500]")]))
    assert wrong.verdict == "fail" and wrong.diagnosis == ["sum_normalized"]
    output = outcome(exercise([("output", 1, "[2.000, 1.000]")]))  # those weights times V = 2X
    assert output.verdict == "fail" and "sum_normalized" in output.diagnosis
    right = attention(X, X, V)
    found = outcome(exercise([("weights", 1, written(right, "weights", 1))]))
    assert (found.verdict, found.diagnosis) == ("pass", [])
    other = outcome(exercise([("weights", 3, written(attention(X, X, V, scale="none"), "weights", 3))]))
    assert "unscaled" in other.diagnosis and "sum_normalized" not in other.diagnosis


def test_sum_normalized_is_exact_and_refused_when_a_row_sums_to_zero():
    import sympy

    ex = parse_exercise('[attention]\nscores = [["1", "ln(3)"], ["2", "2"]]\nvalue = [[1, 0], [0, 1]]\n', source="t.toml")
    [candidate] = Diagnoser(ex)._sum_normalized()
    assert candidate.matrix("weights") == sympy.Matrix([[1 / (1 + sympy.log(3)), sympy.log(3) / (1 + sympy.log(3))],
                                                       [sympy.Rational(1, 2), sympy.Rational(1, 2)]])
    zero = parse_exercise('[attention]\nscores = [["1", "-1"], ["2", "2"]]\nvalue = [[1, 0], [0, 1]]\n', source="t.toml")
    assert Diagnoser(zero)._sum_normalized() == []


def test_a_graded_submission_with_sum_normalized_weights_is_told_so():
    from symbolic_attn.grading.answer_key import parse_answer_key
    from symbolic_attn.grading.batch import grade
    from symbolic_attn.grading.submissions import parse_submission

    key = parse_answer_key('[attention]\nscores = [["0", "1"], ["1", "3"]]\nvalue = [[1, 0], [0, 1]]\n'
                           '[[questions]]\nname = "A"\nquantity = "weights"\npoints = 2\n', source="key.toml")
    wrong = grade(key, "s", parse_submission("A = [[0, 1], [0.25, 0.75]]")).questions[0]
    assert wrong.verdict == "fail" and wrong.diagnosis == ["sum_normalized"] and "row sum" in wrong.feedback
    right = grade(key, "s", parse_submission("A = [[0.269, 0.731], [0.119, 0.881]]")).questions[0]
    assert right.verdict == "pass" and right.diagnosis == []
