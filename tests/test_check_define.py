"""check on any stage path of named definitions ([define] exercises), and the diagnoses
of the known mistakes on heads, positions, LayerNorm and blocks (model.variants)."""

import json

import pytest

from symbolic_attn.cli import main
from symbolic_attn.errors import ExerciseError
from symbolic_attn.grading.exercise import parse_exercise
from symbolic_attn.grading.report import check_exercise
from symbolic_attn.model.variants import VARIANTS, variant_trace

HEADER = """
title = "stages"
[inputs]
X = [[1, 0, 2], [0, 1, 1]]
Z = [[0, 0, 0], [0, 0, 0], [0, 0, 0]]
WK = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
WV = [[1, 0, 0], [0, 2, 0], [0, 0, 1]]
WV2 = [[0, 1, 0], [1, 0, 0], [0, 0, 3]]
WO = [[1, 0, 0, 0, 0, 1], [0, 1, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0], [1, 0, 0, 1, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1]]
WO3 = [[1, 0, 1], [0, 1, 0], [0, 0, 1]]
W1 = [[1, -1], [0, 1], [1, 0]]
W2 = [[1, 0, 1], [0, 1, 0]]
z = [[1, 3, 4]]
Q3 = [[1, 0], [0, 1], [1, 1]]
K3 = [[1, 0], [0, 2], [1, 1]]
V3 = [[1, 0], [0, 2], [1, 1]]
G3 = [[1, 0], [0, 1], [1, -1]]
gamma = [[2, 1, 1]]
beta = [[0, "1/2", 0]]
[define]
L = "layer_norm(z, eps = 1/100, gamma = gamma, beta = beta)"
P = "sinusoidal(3, 2)"
M = "multihead(X, heads = [[Z, WK, WV], [Z, WK, WV2]], WO = WO)"
B = "encoder_block(X, heads = [[Z, WK, WV]], WO = WO3, W1 = W1, W2 = W2, norm = 'post')"
GB = "attention_backward(Q3, K3, V3, G3, mask = 'causal')"
LB = "layer_norm_backward(X, [[1, 0, 0], [0, 2, -1]], eps = 1, beta = beta)"
FB = "feed_forward_backward([[1, -1]], [[1], [1]], 0, [[1]], 0, [[5]])"
"""

# (variant, the stage whose claim the variant's value is seeded into)
SEEDED = [
    ("layer_norm_unbiased", "L"),
    ("layer_norm_eps_outside", "L"),
    ("layer_norm_no_affine", "L"),
    ("positions_from_one", "P"),
    ("sin_cos_swapped", "P"),
    ("heads_order", "M.concat"),
    ("output_projection_missing", "M"),
    ("norm_order", "B"),
    ("residual_missing", "B"),
    ("grad_missing_scale", "GB.dQ"),
    ("grad_transposed_k", "GB.dK"),
    ("grad_diagonal_jacobian", "GB.dScaled"),
    ("grad_missing_rowsum", "GB.dScaled"),
    ("grad_unbiased_variance", "LB.dX"),
    ("grad_no_mean_path", "LB.dX"),
    ("grad_beta_not_summed", "LB.dbeta"),
    ("grad_relu_at_zero", "FB.dX"),
]
#: A mistake whose stage has another shape (dbeta = G, not summed) is claimed on one row.
ROWS = {"grad_beta_not_summed": 1}


def _definitions():
    exercise = parse_exercise(HEADER, source="s.toml")
    return {**exercise.symbols, **exercise.inputs}, exercise.definitions


def _claim(label, quantity, trace, places=4, row=None):
    rows = trace.decimals(quantity, places)
    if row is not None:
        return f'[[claims]]\nlabel = "{label}"\nquantity = "{quantity}"\nrow = {row}\nvalue = "[{", ".join(rows[row - 1])}]"\n'
    value = "[" + ", ".join("[" + ", ".join(row) + "]" for row in rows) + "]"
    return f'[[claims]]\nlabel = "{label}"\nquantity = "{quantity}"\nvalue = "{value}"\n'


def test_every_variant_is_seeded():
    assert sorted(v for v, _ in SEEDED) == sorted(VARIANTS)


@pytest.mark.parametrize("variant,quantity", SEEDED, ids=[s[0] for s in SEEDED])
def test_a_seeded_mistake_fails_and_is_diagnosed(variant, quantity):
    inputs, definitions = _definitions()
    wrong = variant_trace(inputs, definitions, variant)
    exercise = parse_exercise(HEADER + _claim("wrong", quantity, wrong, row=ROWS.get(variant)), source="s.toml")
    right = exercise.trace()
    assert right.decimals(quantity, 4) != wrong.decimals(quantity, 4)  # the seed really is wrong
    outcome, = check_exercise(exercise).outcomes
    assert outcome.verdict == "fail"
    assert variant in outcome.diagnosis


@pytest.mark.parametrize("quantity", ["L", "P", "M", "M.concat", "M.head[2].weights", "M.head[1].output", "B",
                                      "B.norm1", "B.attention.head[1].weights"])
def test_right_claims_pass_without_diagnosis(quantity):
    exercise = parse_exercise(HEADER, source="s.toml")
    exercise = parse_exercise(HEADER + _claim("right", quantity, exercise.trace()), source="s.toml")
    outcome, = check_exercise(exercise).outcomes
    assert (outcome.verdict, outcome.diagnosis) == ("pass", [])


def test_exact_claims_and_rules_on_stages():
    text = HEADER + """
[[claims]]
label = "pe exact"
quantity = "P"
row = 2
value = "[sin(1), cos(1)]"
[[claims]]
label = "pe swapped"
quantity = "P"
row = 2
value = "[cos(1), sin(1)]"
[[claims]]
label = "tolerance"
quantity = "P"
row = 2
col = 1
value = "0.8"
tolerance = "1/20"
[[claims]]
label = "too far"
quantity = "P"
row = 2
col = 1
value = "0.8"
tolerance = "1/100"
"""
    outcomes = check_exercise(parse_exercise(text, source="s.toml")).outcomes
    assert [(o.claim.label, o.verdict) for o in outcomes] == [
        ("pe exact", "pass"), ("pe swapped", "fail"), ("tolerance", "pass"), ("too far", "fail")]
    assert "sin_cos_swapped" in outcomes[1].diagnosis


def test_attention_table_is_the_definition_named_attention():
    text = """
[inputs]
V = [[1, 0], [0, 2]]
[attention]
scores = [[0, 0], [0, 0]]
value = "V"
mask = {causal = true, offset = 0}
[define]
N = "layer_norm(attention, eps = 1)"
[[claims]]
label = "w"
quantity = "attention.weights"
value = "[[1, 0], [1/2, 1/2]]"
[[claims]]
label = "n"
quantity = "N"
row = 1
value = "[0.5, -0.5]"
"""
    outcomes = check_exercise(parse_exercise(text, source="a.toml")).outcomes
    assert [o.verdict for o in outcomes] == ["pass", "fail"]


BAD = [
    ("unknown_stage", '[[claims]]\nquantity = "M.head[3].weights"\nvalue = "1"\n',
     r"^s\.toml: claim 1: quantity: unknown stage 'M\.head\[3\]\.weights': expected a definition or one of its "
     r"stages, such as M, M\.head\[1\], "),
    ("plain_weights", '[[claims]]\nquantity = "weights"\nvalue = "1"\n', r"^s\.toml: claim 1: quantity: unknown stage 'weights': expected a definition or one of its stages, such as L, P, M, B, GB, LB, FB$"),
    ("row_outside", '[[claims]]\nquantity = "P"\nrow = 4\nvalue = "[0, 1]"\n', r"^s\.toml: claim 1: row: 4 is outside 1\.\.3"),
    ("wrong_shape", '[[claims]]\nquantity = "P"\nvalue = "[0, 1]"\n', r"^s\.toml: claim 1: value: claimed a list of 2 for a 3x2"),
]


@pytest.mark.parametrize("name,claim,message", BAD, ids=[b[0] for b in BAD])
def test_bad_claims_are_refused(name, claim, message):
    with pytest.raises(ExerciseError, match=message):
        parse_exercise(HEADER + claim, source="s.toml")


def test_a_bad_definition_names_it():
    with pytest.raises(ExerciseError, match=r"^s\.toml: define: definition 'Y': unknown function 'system'"):
        parse_exercise("[define]\nY = \"system('ls')\"\n", source="s.toml")


def test_cli_check_json(tmp_path, capsys):
    inputs, definitions = _definitions()
    wrong = variant_trace(inputs, definitions, "positions_from_one")
    path = tmp_path / "e.toml"
    path.write_text(HEADER + _claim("pe", "P", wrong) + _claim("ln", "L", parse_exercise(HEADER).trace()))
    assert main(["check", str(path), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(c["label"], c["verdict"], c["diagnosis"]) for c in report["claims"]] == [
        ("pe", "fail", ["positions_from_one"]), ("ln", "pass", [])]
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith(": 1 passed, 1 failed (stages)")


CORE = """
[inputs]
X = [[1, 0], [0, 1], [1, 1]]
WK = [[1, 1], [0, 1]]
[define]
A = "attention(X, X @ WK, X, mask = 'causal')"
M = "multihead(X, heads = [[I2, WK, I2]], WO = I2, mask = 'causal')"
"""


@pytest.mark.parametrize("mistake,settings", [
    ("unscaled", {"scale": "none"}),
    ("zeroed_not_renormalized", {"masking": "zero_after_softmax"}),
    ("mask_score_zero", {"masking": "zero_score"}),
], ids=["unscaled", "zeroed_not_renormalized", "mask_score_zero"])
@pytest.mark.parametrize("quantity", ["A.weights", "M.head[1].weights"])
def test_attention_core_mistakes_in_definitions(mistake, settings, quantity):
    from symbolic_attn.model.program import run_program

    exercise = parse_exercise(CORE, source="c.toml")
    wrong = run_program({**exercise.inputs}, exercise.definitions, variant={"attention": settings})
    outcome, = check_exercise(parse_exercise(CORE + _claim("w", quantity, wrong), source="c.toml")).outcomes
    assert outcome.verdict == "fail" and mistake in outcome.diagnosis
    right, = check_exercise(parse_exercise(CORE + _claim("r", quantity, exercise.trace()), source="c.toml")).outcomes
    assert (right.verdict, right.diagnosis) == ("pass", [])


def test_a_define_exercise_has_no_single_attention():
    from symbolic_attn.errors import StageError

    exercise = parse_exercise(HEADER, source="s.toml")
    assert exercise.attention is None and exercise.quantities()[:2] == ("L", "L.mean")
    with pytest.raises(StageError, match=r"^an exercise with \[define\] has no single attention"):
        exercise.compute()


def test_check_cli_bad_definition_is_one_line(tmp_path, capsys):
    path = tmp_path / "b.toml"
    path.write_text("[define]\nA = 'B'\nB = 'I2'\n[[claims]]\nquantity = 'A'\nvalue = '1'\n")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "define: definition 'A': 'B' is used before it is defined" in err
