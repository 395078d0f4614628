"""Carried forward through the softmax: weights that follow from the student's own scores.

A student's wrong scores (S, S' or S' + M, as the questions name them) are read as
written, each decimal standing for what it rounds from; weights computed from them earn
the carried-forward share whether they were computed from the rounded scores or from
more digits than were written, and an output from those weights follows in turn.

The exercise is the course's 'rises' (examples/course): scaled scores of row 3 are
sqrt(2), 1/sqrt(2), 3/sqrt(2).  The mistake used throughout is ``wrong_scale`` (times
sqrt(2) instead of divided): S'_3 = 2 sqrt(2), sqrt(2), 3 sqrt(2) = 2.8284, 1.4142, 4.2426,
written 2.83, 1.41, 4.24.  Their softmax is 0.1867, 0.0454, 0.7679 unrounded and 0.1873,
0.0453, 0.7674 from the written scores; over the box 2.83 +- 0.005, ... the third weight
ranges over [0.765578, 0.769148].
"""

from fractions import Fraction

import pytest

from symbolic_attn.grading.answer_key import parse_answer_key
from symbolic_attn.grading.batch import grade
from symbolic_attn.grading.submissions import parse_submission

EXERCISE = '''
[inputs]
X = [[1, 0], [0, 1], [1, 1]]
W_K = [[1, 1], [0, 1]]
W_V = [[1, 0], [0, 2]]
[attention]
query = "{query}"
key = "X @ W_K"
value = "X @ W_V"
{mask}
[grading]
carried_forward = 0.5
'''


def question(name, quantity, points, decimals=None):
    lines = ["[[questions]]", f'name = "{name}"', f'quantity = "{quantity}"', "row = 3", f"points = {points}"]
    return "\n".join(lines + ([f"decimals = {decimals}"] if decimals else [])) + "\n"


def key_of(*questions, query="X", mask=""):
    return parse_answer_key(EXERCISE.format(query=query, mask=mask) + "".join(questions), source="key.toml")


SCALED_KEY = key_of(question("P_3", "scaled", 2), question("a_3", "weights", 3, decimals=4), question("z_3", "output", 2))
WRONG_SCALED = "P_3 = [2.83, 1.41, 4.24]\n"


def graded(key, text) -> dict:
    return {q.name: q for q in grade(key, "s", parse_submission(text)).questions}


# -- (a), (b): the same mistake, the same points, whichever way the student rounded -------------


@pytest.mark.parametrize("weights, how", [
    ("[0.1867, 0.0454, 0.7679]", "from the claimed scaled, as rounded"),  # (a) from the unrounded scores
    ("[0.1873, 0.0453, 0.7674]", "from the claimed scaled"),              # (b) from the written scores
    ("[0.1859, 0.0449, 0.7691]", "from the claimed scaled, as rounded"),  # inside every range, near its ends
], ids=["unrounded-scores", "rounded-scores", "edges-of-the-box"])
def test_weights_from_wrong_scaled_scores_are_carried_forward_whichever_way_rounded(weights, how):
    answers = graded(SCALED_KEY, WRONG_SCALED + f"a_3 = {weights}\n")
    assert (answers["P_3"].verdict, answers["P_3"].points) == ("fail", Fraction(0))
    a = answers["a_3"]
    assert (a.verdict, a.points) == ("carried_forward", Fraction(3, 2))
    assert "follows_from_claimed" in a.diagnosis
    from symbolic_attn.grading.diagnose import Diagnoser

    exercise = _exercise_with_claims(SCALED_KEY, WRONG_SCALED + f"a_3 = {weights}\n")
    details = dict(Diagnoser(exercise).details(exercise.claims[-1]))
    assert details["follows_from_claimed"] == how


def _exercise_with_claims(key, text):
    """The key's exercise with the student's answers of row 3 as its claims, in the questions' order."""
    from dataclasses import replace

    from symbolic_attn.grading.claims import Claim, parse_claimed

    answers = dict(line.split(" = ") for line in text.splitlines())
    claims = [Claim(q.number, q.quantity, parse_claimed(answers[q.name]), 3, None, q.name)
              for q in key.questions if q.name in answers]
    return replace(key.exercise, claims=tuple(claims))


def test_without_the_rounding_only_the_digits_as_written_follow():
    """The unrounded reading is what the new step adds: the exact softmax of 2.83, 1.41, 4.24
    to 4 decimals is 0.1873, 0.0453, 0.7674, not 0.1867, 0.0454, 0.7679."""
    from symbolic_attn.grading.diagnose import Diagnoser

    exercise = _exercise_with_claims(SCALED_KEY, WRONG_SCALED + "a_3 = [0.1867, 0.0454, 0.7679]\n")
    diagnoser = Diagnoser(exercise)
    claim = exercise.claims[-1]
    readings = [c for c in diagnoser.candidates(claim) if c.mistake == "follows_from_claimed"]
    assert [c.detail for c in readings] == ["from the claimed scaled", "from the claimed scaled, as rounded"]
    assert [diagnoser.reproduces(c, claim) for c in readings] == [False, True]


# -- (c): weights that do not follow earn nothing -----------------------------------------------


@pytest.mark.parametrize("weights", [
    "[0.2000, 0.0500, 0.7500]",  # nowhere near
    "[0.1873, 0.0453, 0.7692]",  # a_33 just beyond the box: [0.76915, 0.76925] misses 0.769148
    "[0.1850, 0.0453, 0.7674]",  # a_31 below its range [0.185830, 0.188875]
], ids=["far", "just-above-the-range", "below-the-range"])
def test_weights_that_do_not_follow_from_the_students_scores_fail(weights):
    a = graded(SCALED_KEY, WRONG_SCALED + f"a_3 = {weights}\n")["a_3"]
    assert (a.verdict, a.points) == ("fail", Fraction(0))
    assert "follows_from_claimed" not in a.diagnosis


def test_the_scores_must_be_the_students_own_earlier_answer():
    a = graded(SCALED_KEY, "a_3 = [0.1867, 0.0454, 0.7679]\n")["a_3"]
    assert (a.verdict, a.points) == ("fail", Fraction(0)) and a.diagnosis == ["wrong_scale"]


def test_a_right_answer_stays_a_pass_after_wrong_scores():
    a = graded(SCALED_KEY, WRONG_SCALED + "a_3 = [0.2840, 0.1400, 0.5760]\n")["a_3"]
    assert (a.verdict, a.points) == ("pass", Fraction(3))


def test_the_rounding_is_the_written_precision_not_wider():
    """2.83 +- 0.005 allows a_33 up to 0.769148; written 2.8, 1.4, 4.2 (+- 0.05) allows more."""
    weights = "a_3 = [0.1867, 0.0454, 0.7750]\n"
    assert graded(SCALED_KEY, WRONG_SCALED + weights)["a_3"].verdict == "fail"
    assert graded(SCALED_KEY, "P_3 = [2.8, 1.4, 4.2]\n" + weights)["a_3"].verdict == "carried_forward"


# -- the unscaled scores S: the exercise's scale is applied to the student's scores ------------


# query X/3: S_3 = 2/3, 1/3, 1.  The slip S_33 = 2, written 0.67, 0.33, 2: softmax(S / sqrt(2)) is
# 0.2295, 0.1813, 0.5892 from 2/3, 1/3 and 0.2300, 0.1809, 0.5891 from the written 0.67, 0.33.
SCORES_KEY = key_of(question("S_3", "scores", 2), question("a_3", "weights", 3, decimals=4), query="X / 3")


@pytest.mark.parametrize("weights", ["[0.2295, 0.1813, 0.5892]", "[0.2300, 0.1809, 0.5891]"],
                         ids=["unrounded-scores", "rounded-scores"])
def test_weights_from_wrong_raw_scores_are_scaled_as_in_the_real_computation(weights):
    answers = graded(SCORES_KEY, f"S_3 = [0.67, 0.33, 2]\na_3 = {weights}\n")
    assert answers["S_3"].verdict == "fail"
    assert (answers["a_3"].verdict, answers["a_3"].points) == ("carried_forward", Fraction(3, 2))


def test_raw_scores_without_the_scale_do_not_explain_unscaled_weights():
    """softmax(0.67, 0.33, 2) = 0.1907, 0.1357, 0.6736 leaves out the scale: not the student's S."""
    a = graded(SCORES_KEY, "S_3 = [0.67, 0.33, 2]\na_3 = [0.1907, 0.1357, 0.6736]\n")["a_3"]
    assert (a.verdict, a.points) == ("fail", Fraction(0)) and "follows_from_claimed" not in a.diagnosis


# -- (d): masked rows ---------------------------------------------------------------------------


MASK = "mask = {keep = [[1, 1, 1], [1, 1, 1], [1, 0, 1]]}"
MASKED_KEY = key_of(question("M_3", "masked", 2), question("a_3", "weights", 3, decimals=4), mask=MASK)
SCALED_MASKED_KEY = key_of(question("P_3", "scaled", 2), question("a_3", "weights", 3, decimals=4), mask=MASK)


# key 2 blocked: the weights of 2 sqrt(2), 3 sqrt(2) are 0.1956, 0.8044; of 2.83, 4.24: 0.1962, 0.8038
@pytest.mark.parametrize("key, scores", [(MASKED_KEY, "M_3 = [2.83, -inf, 4.24]"),
                                         (SCALED_MASKED_KEY, "P_3 = [2.83, 1.41, 4.24]")],
                         ids=["masked-scores", "scaled-scores-of-a-masked-row"])
@pytest.mark.parametrize("weights", ["[0.1956, 0, 0.8044]", "[0.1962, 0.0000, 0.8038]"],
                         ids=["unrounded", "rounded"])
def test_masked_rows_keep_blocked_keys_at_weight_zero(key, scores, weights):
    a = graded(key, f"{scores}\na_3 = {weights}\n")["a_3"]
    # the blocked weight 0 is right (its full share), the other two carried forward: 3 * (1 + 2 / 2) / 3
    assert (a.verdict, a.points, a.wrong) == ("carried_forward", Fraction(2), [(3, 1), (3, 3)])


@pytest.mark.parametrize("weights", ["[0.1867, 0.0454, 0.7679]", "[0.1956, 0.0100, 0.7944]"],
                         ids=["mask-left-out", "weight-on-a-blocked-key"])
def test_weights_that_ignore_the_mask_do_not_follow(weights):
    a = graded(MASKED_KEY, f"M_3 = [2.83, -inf, 4.24]\na_3 = {weights}\n")["a_3"]
    assert (a.verdict, a.points) == ("fail", Fraction(0)) and "follows_from_claimed" not in a.diagnosis


def test_a_claimed_minus_infinity_blocks_its_key_as_written():
    """-inf written at an allowed key: the weights that follow give that key 0 (softmax of 2.83, 1.41)."""
    key = key_of(question("M_3", "masked", 2), question("a_3", "weights", 3, decimals=4))
    # softmax(2 sqrt(2), sqrt(2)) = 0.8044, 0.1956; of 2.83, 1.41: 0.8053, 0.1947
    for weights in ("[0.8044, 0.1956, 0]", "[0.8053, 0.1947, 0]"):
        a = graded(key, f"M_3 = [2.83, 1.41, -inf]\na_3 = {weights}\n")["a_3"]
        assert (a.verdict, a.points) == ("carried_forward", Fraction(3, 2)), weights


# -- (e): the chain scores -> weights -> output -------------------------------------------------


# z_3 = (a_31 + a_33, 2 a_32 + 2 a_33): (0.95461, 1.62661) from the unrounded weights, (0.95460, 1.62660)
# from the written 0.1867, 0.0454, 0.7679.
@pytest.mark.parametrize("z_3, verdict", [("[0.95461, 1.62661]", "carried_forward"),
                                          ("[0.95460, 1.62660]", "carried_forward"),
                                          ("[0.96000, 1.62660]", "fail")],
                         ids=["from-unrounded-weights", "from-written-weights", "does-not-follow"])
def test_the_output_follows_from_carried_forward_weights(z_3, verdict):
    answers = graded(SCALED_KEY, WRONG_SCALED + f"a_3 = [0.1867, 0.0454, 0.7679]\nz_3 = {z_3}\n")
    assert [answers[name].verdict for name in ("P_3", "a_3", "z_3")] == ["fail", "carried_forward", verdict]
    assert answers["z_3"].points == (Fraction(1) if verdict == "carried_forward" else Fraction(0))
    total = sum((q.points for q in answers.values()), Fraction(0))
    assert total == Fraction(3, 2) + answers["z_3"].points


def test_the_issues_example_the_unscaled_mistake_earns_the_same_either_way():
    """Unscaled scaled scores 2, 1, 3; weights 0.245, 0.090, 0.665; z_3 from the written
    weights (0.910, 1.510) or from the unrounded ones (0.910, 1.511): 1/2 each time."""
    key = key_of(question("P_3", "scaled", 2), question("a_3", "weights", 3, decimals=3), question("z_3", "output", 2))
    for z_3 in ("[0.910, 1.510]", "[0.910, 1.511]"):
        answers = graded(key, f"P_3 = [2, 1, 3]\na_3 = [0.245, 0.090, 0.665]\nz_3 = {z_3}\n")
        assert [(answers[n].verdict, answers[n].points) for n in ("P_3", "a_3", "z_3")] == [
            ("fail", Fraction(0)), ("carried_forward", Fraction(3, 2)), ("carried_forward", Fraction(1))], z_3


@pytest.mark.parametrize("weights, verdict", [("[0.3711, 0.4384, 0.1905]", "carried_forward"),  # unrounded S
                                              ("[0.3704, 0.4391, 0.1905]", "carried_forward"),  # rounded S
                                              ("[0.3690, 0.4391, 0.1905]", "fail")],  # a_31 below 0.369439
                         ids=["unrounded-scores", "rounded-scores", "below-the-range"])
def test_a_negative_scale_turns_the_ends_of_the_box_round(weights, verdict):
    """scale -1/2: the largest scaled score comes from the smallest reading of S."""
    key = parse_answer_key(EXERCISE.format(query="X / 3", mask='scale = "-1/2"') + question("S_3", "scores", 2)
                           + question("a_3", "weights", 3, decimals=4), source="key.toml")
    a = graded(key, f"S_3 = [0.67, 0.33, 2]\na_3 = {weights}\n")["a_3"]
    assert a.verdict == verdict
    assert a.points == (Fraction(3, 2) if verdict == "carried_forward" else Fraction(0))
