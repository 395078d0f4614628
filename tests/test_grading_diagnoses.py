"""The new diagnoses, the masks of the exercise format, and wrong entries named.

Each wrong number is made by the core with a mistaken setting (or written down wrongly),
rounded to three decimals as a student would write it; the checker must fail it and name
the mistake -- and must not name it where it does not apply.
"""

import json
from decimal import Decimal

import pytest
import sympy

from symbolic_attn.cli import main
from symbolic_attn.errors import ExerciseError
from symbolic_attn.grading.exercise import parse_exercise
from symbolic_attn.grading.report import check_exercise, render_json
from symbolic_attn.model.attention import attention
from symbolic_attn.model.masks import Mask

X = [[1, 0], [0, 1], [1, 1]]
V = [[2, 0], [0, 2], [2, 2]]


def exercise(claims, mask='"none"', scale='"default"'):
    text = f'[inputs]\nX = {X}\n[attention]\nquery = "X"\nkey = "X"\nvalue = "2*X"\nmask = {mask}\nscale = {scale}\n'
    for quantity, row, value in claims:
        text += f'[[claims]]\nquantity = "{quantity}"\n' + (f"row = {row}\n" if row else "") + f'value = "{value}"\n'
    return parse_exercise(text, source="t.toml")


def written(result, stage, row=None, places=3, power=0, transpose=False):
    """Certified decimals as a student writes them; ``power`` moves the decimal point."""
    grid = result.decimals(stage, places)
    if transpose:
        grid = [list(col) for col in zip(*grid)]
    if power:
        grid = [[format(Decimal(x).scaleb(power), "f") for x in r] for r in grid]
    if row is not None:
        return "[" + ", ".join(grid[row - 1]) + "]"
    return "[" + ", ".join("[" + ", ".join(r) + "]" for r in grid) + "]"


def outcome(ex, index=-1):
    return check_exercise(ex).outcomes[index]


CASES = [
    # id, mask, scale, quantity, row, the wrong numbers
    ("mask_ignored", '"causal"', '"default"', "weights", 2, lambda: written(attention(X, X, V), "weights", 2)),
    ("mask_ignored", "{padding = 2}", '"default"', "output", 1, lambda: written(attention(X, X, V), "output", 1)),
    ("wrong_scale", '"causal"', '"1/3"', "weights", 3,
     lambda: written(attention(X, X, V, "causal", scale=1 / sympy.sqrt(2)), "weights", 3)),
    ("wrong_scale", '"none"', '"none"', "output", 3, lambda: written(attention(X, X, V, scale="default"), "output", 3)),
    ("wrong_scale", '"none"', '"default"', "weights", 3, lambda: written(attention(X, X, V, scale=sympy.sqrt(2)), "weights", 3)),
    ("decimal_point", '"none"', '"default"', "output", 3, lambda: written(attention(X, X, V), "output", 3, power=1)),
    ("decimal_point", '"none"', '"default"', "weights", 1,
     lambda: written(attention(X, X, V), "weights", 1, places=5, power=-2)),
    ("transposed", '"causal"', '"default"', "weights", None,
     lambda: written(attention(X, X, V, "causal"), "weights", transpose=True)),
    ("mask_shifted", "{causal = true, offset = 1}", '"default"', "weights", 1,
     lambda: written(attention(X, X, V, Mask.causal(3, offset=2)), "weights", 1)),
    ("mask_shifted", "{causal = true, offset = 1}", '"default"', "weights", 2,
     lambda: written(attention(X, X, V, "causal"), "weights", 2)),
]


@pytest.mark.parametrize("mistake, mask, scale, quantity, row, make", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_new_mistakes_are_diagnosed(mistake, mask, scale, quantity, row, make):
    found = outcome(exercise([(quantity, row, make())], mask, scale))
    assert found.verdict == "fail"
    assert mistake in found.diagnosis, found.details


@pytest.mark.parametrize(
    "mistake, mask, scale, quantity, row, make",
    [
        ("mask_ignored", '"none"', '"default"', "weights", 2, lambda: written(attention(X, X, V, scale="none"), "weights", 2)),
        ("wrong_scale", '"none"', '"default"', "weights", 2, lambda: written(attention(X, X, V, scale="none"), "weights", 2)),
        ("transposed", '"none"', '"default"', "weights", 2, lambda: "[0.9, 0.05, 0.05]"),
        ("decimal_point", '"causal"', '"default"', "weights", 3, lambda: "[0.9, 0.05, 0.05]"),
    ],
    ids=["no-mask-no-mask_ignored", "unscaled-is-not-wrong_scale", "no-transpose", "no-decimal-point"],
)
def test_new_mistakes_only_where_they_apply(mistake, mask, scale, quantity, row, make):
    found = outcome(exercise([(quantity, row, make())], mask, scale))
    assert found.verdict == "fail" and mistake not in found.diagnosis


def test_forced_row_sum_only_when_the_adjustment_changed_something():
    """Weights [0.26, 0.30, 0.44]: rounded to one decimal [0.3, 0.3, 0.4] already sum to 1."""
    text = """[attention]
scores = [["0", "ln(30/26)", "ln(44/26)"]]
value = [[1], [2], [3]]
[[claims]]
quantity = "weights"
row = 1
col = 1
value = "0.30"
"""
    found = outcome(parse_exercise(text))
    assert found.verdict == "fail" and "forced_row_sum" not in found.diagnosis
    # ... and document 004's row, where the rounding left 0.999, is still forced_row_sum
    assert outcome(exercise([("weights", 3, "[0.248, 0.248, 0.504]")])).diagnosis == ["forced_row_sum"]


def test_whole_matrix_claims_say_which_entries_are_wrong(capsys, tmp_path):
    right = attention(X, X, V).decimals("weights", 3)
    grid = [row[:] for row in right]
    grid[0][1], grid[2][2] = "0.111", "0.999"
    claimed = "[" + ", ".join("[" + ", ".join(row) + "]" for row in grid) + "]"
    found = outcome(exercise([("weights", None, claimed)]))
    assert found.verdict == "fail" and found.wrong == [(1, 2), (3, 3)]
    report = json.loads(render_json(check_exercise(exercise([("weights", None, claimed)]))))
    assert report["claims"][0]["wrong_entries"] == [[1, 2], [3, 3]]
    path = tmp_path / "w.toml"
    path.write_text(f'[inputs]\nX = {X}\n[attention]\nquery = "X"\nkey = "X"\nvalue = "2*X"\n'
                    f'[[claims]]\nquantity = "weights"\nvalue = "{claimed}"\n')
    assert main(["check", str(path)]) == 1
    assert "wrong at [1,2] [3,3]" in capsys.readouterr().out


def test_row_claim_names_its_wrong_entry():
    found = outcome(exercise([("output", 3, "[1.503, 1.2]")]))
    assert found.wrong == [(3, 2)]


@pytest.mark.parametrize(
    "mask, expected",
    [
        ("{padding = 2}", Mask.padding(3, 3, 2)),
        ("{causal = true}", Mask.causal(3)),
        ("{causal = true, offset = 1}", Mask.causal(3, offset=1)),
        ("{causal = true, offset = -1}", None),  # row 1 sees no key: refused below
        ('"causal"', Mask.causal(3)),
    ],
    ids=["padding", "causal-table", "causal-offset", "causal-negative", "causal-string"],
)
def test_exercise_masks_like_the_command_line(mask, expected):
    if expected is None:
        with pytest.raises(ExerciseError, match=r"^t\.toml: attention\.mask\.offset: row 1 allows no key"):
            exercise([], mask)
        return
    spec = exercise([], mask).attention
    assert spec.mask == expected
    assert spec.mask_kind == ("padding" if "padding" in mask else "causal")


@pytest.mark.parametrize(
    "mask, message",
    [
        ('{padding = 0}', r"attention\.mask\.padding: expected the number of real keys, a whole number from 1 to 3, got 0"),
        ('{padding = 4}', r"attention\.mask\.padding: .* got 4"),
        ('{padding = "2"}', r"attention\.mask\.padding: .* got '2'"),
        ('{causal = true, offset = "1"}', r"attention\.mask\.offset: expected a whole number"),
        ("{causal = true, offset = 0.5}", r"attention\.mask\.offset: TOML float 0\.5"),
        ("{causal = false}", r"attention\.mask\.causal: expected true"),
        ("{causal = true, padding = 2}", r'attention\.mask: expected "none", "causal", \{causal = true, offset = K\}'),
        ("{offset = 1}", r'attention\.mask: expected "none"'),
    ],
    ids=["padding-0", "padding-too-many", "padding-string", "offset-string", "offset-float", "causal-false",
         "two-kinds", "offset-alone"],
)
def test_bad_masks_are_refused(mask, message):
    with pytest.raises(ExerciseError, match=r"^t\.toml: " + message):
        exercise([], mask)


def test_exercise_computes_its_own_variants():
    ex = exercise([], '"causal"')
    assert ex.compute() is ex.compute()  # computed once
    assert ex.compute(mask=None).trace["weights"] == attention(X, X, V).weights
    assert ex.compute(scale="none").trace["scaled"] == attention(X, X, V, "causal", scale="none").scaled


def test_every_mistake_has_one_feedback_sentence():
    from symbolic_attn.grading.diagnose import MISTAKES
    from symbolic_attn.model.mistakes import CATALOGUE

    assert set(MISTAKES) <= set(CATALOGUE)
    for mistake in MISTAKES:
        sentence = CATALOGUE[mistake].sentence(detail="detail")
        assert sentence.endswith(".") and "\n" not in sentence
