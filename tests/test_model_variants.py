"""Each known mistake, as a setting of the one implementation, reproduces a seeded wrong
answer derived by hand, and the correct computation does not."""

import pytest
import sympy
from sympy import Rational as R
from sympy import cos, sin, sqrt

from symbolic_attn.errors import StageError
from symbolic_attn.model.mistakes import ids
from symbolic_attn.model.variants import VARIANTS, applicable, variant_trace, variant_traces

M = sympy.ImmutableMatrix
INPUTS = {
    "z": M([[1, 3]]),
    "g": M([[2, 1]]),
    "X": M([[1, 0], [0, 2]]),
    "Z": M.zeros(2, 2),
    "V2": M([[0], [2]]),
    "WO": M([[1, 0], [0, 1], [1, 1]]),
    # the backward passes: Q = 0 gives uniform (rational) weights under the causal mask
    "Q0": M.zeros(3, 2), "K3": M([[1, 0], [0, 1], [1, 1]]), "V3": M([[1, 0], [0, 2], [1, 1]]),
    "G3": M([[1, 0], [0, 1], [1, -1]]),
    "x3": M([[0, 0, 3]]), "e1": M([[1, 0, 0]]), "X2": M([[1, 3], [0, 4]]), "G2": M([[1, 2], [3, 0]]),
    "b": M([[0, 1]]), "h": M([[1, -1]]), "W11": M([[1], [1]]), "one": M([[1]]), "five": M([[5]]),
}
ATTENTION_BACKWARD = [("B", "attention_backward(Q0, K3, V3, G3, mask = 'causal')")]
BLOCK = "encoder_block(X, heads = [[I2, Z, I2]], WO = I2, W1 = Z, W2 = Z, eps = 1)"

# (variant, definitions, stage path, the seeded wrong answer worked out by hand)
CASES = [
    # [1, 3]: unbiased variance 2 -> (x - 2)/sqrt(2)
    ("layer_norm_unbiased", [("L", "layer_norm(z)")], "L", M([[-1 / sqrt(2), 1 / sqrt(2)]])),
    # eps = 1 after the root: (x - 2)/(1 + 1)
    ("layer_norm_eps_outside", [("L", "layer_norm(z, eps = 1)")], "L", M([[-R(1, 2), R(1, 2)]])),
    # gamma [2, 1] forgotten
    ("layer_norm_no_affine", [("L", "layer_norm(z, gamma = g, beta = 1)")], "L", M([[-1, 1]])),
    # positions 1, 2 instead of 0, 1
    ("positions_from_one", [("P", "sinusoidal(2, 2)")], "P", M([[sin(1), cos(1)], [sin(2), cos(2)]])),
    ("sin_cos_swapped", [("P", "sinusoidal(2, 2)")], "P", M([[1, 0], [cos(1), sin(1)]])),
    # heads with uniform weights: head 1 = [1/2, 1], head 2 = [2]; reversed concat [2, 1/2, 1]
    ("heads_order", [("H", "multihead(X, heads = [[I2, Z, I2], [I2, Z, V2]], WO = WO)")], "H.concat",
     M([[2, R(1, 2), 1]] * 2)),
    ("output_projection_missing", [("H", "multihead(X, heads = [[I2, Z, I2], [I2, Z, V2]], WO = WO)")], "H",
     M([[R(1, 2), 1, 2]] * 2)),
    # Post-LN asked; Pre-LN computed: LN(x) = [[1, -1], [-1, 1]] has column means 0, so add1 = x
    ("norm_order", [("B", BLOCK.replace("eps = 1", "eps = 0"))], "B.add1", M([[1, 0], [0, 2]])),
    # without the residual, add1 is just the attention output (the column means)
    ("residual_missing", [("B", BLOCK)], "B.add1", M([[R(1, 2), 1], [R(1, 2), 1]])),
    # A = [[1, 0, 0], [1/2, 1/2, 0], [1/3, 1/3, 1/3]], dA = G V^T = [[1, 0, 1], [0, 2, 1], [1, -2, 0]],
    # dScaled = [[0, 0, 0], [-1/2, 1/2, 0], [4/9, -5/9, 1/9]]; without the scale dQ = dScaled K
    ("grad_missing_scale", ATTENTION_BACKWARD, "B.dQ", M([[0, 0], [-R(1, 2), R(1, 2)], [R(5, 9), -R(4, 9)]])),
    # dQ = scale * dScaled^T K: row 1 is -1/2 [0, 1] + 4/9 [1, 1]
    ("grad_transposed_k", ATTENTION_BACKWARD, "B.dQ",
     M([[R(4, 9), -R(1, 18)], [-R(5, 9), -R(1, 18)], [R(1, 9), R(1, 9)]]) / sqrt(2)),
    # A * dA
    ("grad_diagonal_jacobian", ATTENTION_BACKWARD, "B.dScaled", M([[1, 0, 0], [0, 1, 0], [R(1, 3), -R(2, 3), 0]])),
    # A * (dA - A * dA) = A (1 - A) dA
    ("grad_missing_rowsum", ATTENTION_BACKWARD, "B.dScaled", M([[0, 0, 0], [0, R(1, 2), 0], [R(2, 9), -R(4, 9), 0]])),
    # [0, 0, 3], eps 1, divided by d - 1: variance 3, std 2, dvar = 1/16, dmean = -1/2,
    # dX = dxhat/2 + dvar * 2c/2 + dmean/3
    ("grad_unbiased_variance", [("L", "layer_norm_backward(x3, e1, eps = 1)")], "L.dX",
     M([[R(13, 48), -R(11, 48), -R(1, 24)]])),
    # eps 2: std 2, dX = dxhat / 2 alone
    ("grad_no_mean_path", [("L", "layer_norm_backward(x3, e1, eps = 2)")], "L.dX", M([[R(1, 2), 0, 0]])),
    ("grad_beta_not_summed", [("L", "layer_norm_backward(X2, G2, beta = b)")], "L.dbeta", M([[1, 2], [3, 0]])),
    # the hidden unit is exactly 0: relu'(0) = 1 passes G through
    ("grad_relu_at_zero", [("F", "feed_forward_backward(h, W11, 0, one, 0, five)")], "F.dX", M([[5, 5]])),
]


@pytest.mark.parametrize("variant,definitions,path,wrong", CASES, ids=[c[0] for c in CASES])
def test_each_variant_reproduces_its_seeded_mistake(variant, definitions, path, wrong):
    from symbolic_attn.model.program import run_program

    right = run_program(INPUTS, definitions)
    produced = variant_trace(INPUTS, definitions, variant)
    assert produced[path] == wrong
    assert right[path] != wrong  # the check can fail: the correct computation is different
    assert variant in applicable(definitions)


def test_every_variant_is_described_and_tested():
    assert set(VARIANTS) == set(ids("model")) == {c[0] for c in CASES}


def test_variants_apply_only_where_their_operation_is_used():
    assert applicable([("A", "attention(X, X, X)")]) == []
    assert set(applicable([("B", BLOCK)])) == {
        "layer_norm_unbiased", "layer_norm_eps_outside", "layer_norm_no_affine", "heads_order",
        "output_projection_missing", "norm_order", "residual_missing"}


def test_variant_traces_keeps_errors_as_values():
    traces = variant_traces({"w": M([[5]])}, [("L", "layer_norm(w, eps = 1)")])
    assert isinstance(traces["layer_norm_unbiased"], Exception)  # width 1: d - 1 = 0
    assert traces["layer_norm_eps_outside"]["L"] == M([[0]])


def test_unknown_variant():
    with pytest.raises(StageError, match=r"^unknown variant 'x'"):
        variant_trace(INPUTS, [("L", "layer_norm(z)")], "x")


@pytest.mark.parametrize("settings,path,wrong", [
    ({"scale": "none"}, "A.scaled", M([[1, 0], [0, 4]])),
    ({"masking": "zero_after_softmax"}, "A.weights", None),
], ids=["scale_forgotten", "zero_after_softmax"])
def test_attention_core_mistakes_reach_every_attention_and_head(settings, path, wrong):
    from symbolic_attn.model.program import run_program

    definitions = [("A", "attention(X, X, X, mask = 'causal')"), ("H", "multihead(X, heads = [[I2, I2, I2]])")]
    right = run_program(INPUTS, definitions)
    produced = run_program(INPUTS, definitions, variant={"attention": settings})
    assert produced[path] != right[path]
    assert produced["H.head[1].weights"] != right["H.head[1].weights"] or "masking" in settings
    if wrong is not None:
        assert produced[path] == wrong
    else:  # blocked weight 0 but the row no longer sums to 1
        assert produced[path][0, 1] == 0 and sum(produced[path].row(0)) != 1
