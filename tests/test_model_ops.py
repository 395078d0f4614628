"""Heads, positions, LayerNorm, feed-forward and blocks: exact values derived by hand,
properties over small rationals, and each wrong setting shown to give another answer."""

import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st
from sympy import Rational as R
from sympy import cos, erf, sin, sqrt, tanh

from symbolic_attn.errors import InputLimitError, ShapeError, StageError, ZeroVarianceError
from symbolic_attn.model.attention import attention
from symbolic_attn.model.block import decoder_block, encoder_block
from symbolic_attn.model.certify import decimal_text
from symbolic_attn.model.feedforward import feed_forward, gelu, relu
from symbolic_attn.model.layernorm import layer_norm
from symbolic_attn.model.masks import Mask
from symbolic_attn.model.multihead import multihead
from symbolic_attn.model.positional import alibi, alibi_slopes, rope, sinusoidal

M = sympy.ImmutableMatrix
I2 = M.eye(2)
Z2 = M.zeros(2, 2)

rationals = st.fractions(min_value=-5, max_value=5, max_denominator=6).map(lambda f: R(f.numerator, f.denominator))


# -- LayerNorm ---------------------------------------------------------------------------


def test_layer_norm_by_hand():
    # [1, 3]: mean 2, biased variance ((1-2)^2 + (3-2)^2)/2 = 1 -> [-1, 1]
    t = layer_norm([[1, 3]])
    assert t["mean"] == M([[2]]) and t["variance"] == M([[1]]) and t["output"] == M([[-1, 1]])
    # [0, 1, 5]: mean 2, variance (4 + 1 + 9)/3 = 14/3, eps 1/3 inside: sqrt(5) -> (x - 2)/sqrt(5)
    t = layer_norm([[0, 1, 5]], eps=R(1, 3))
    assert t["std"] == M([[sqrt(5)]])
    assert t["output"] == M([[-2 / sqrt(5), -1 / sqrt(5), 3 / sqrt(5)]])
    # gamma/beta rows repeat over the rows
    t = layer_norm([[1, 3], [5, 3]], gamma=[[2, 3]], beta=[[1, 0]])
    assert t["output"] == M([[-1, 3], [3, -3]])


@pytest.mark.parametrize("settings,expected", [
    ({}, M([[-1, 1]])),
    ({"variance": "unbiased"}, M([[-1 / sqrt(2), 1 / sqrt(2)]])),  # divides by d-1: variance 2
    ({"eps_placement": "outside"}, M([[-R(1, 2), R(1, 2)]])),  # sqrt(1) + 1 = 2
    ({"affine": False}, M([[-1, 1]])),
], ids=["correct", "unbiased", "eps_outside", "no_affine"])
def test_layer_norm_settings_differ(settings, expected):
    eps = 1 if settings.get("eps_placement") else 0
    assert layer_norm([[1, 3]], eps=eps, **settings)["output"] == expected


def test_layer_norm_no_affine_ignores_gamma():
    assert layer_norm([[1, 3]], gamma=2, affine=False)["output"] == M([[-1, 1]])
    assert layer_norm([[1, 3]], gamma=2)["output"] == M([[-2, 2]])


def test_zero_variance_row_is_an_error_naming_the_row():
    with pytest.raises(ZeroVarianceError, match=r"^layer_norm row 2: variance is exactly 0 and eps = 0"):
        layer_norm([[1, 2], [7, 7]])
    assert layer_norm([[7, 7]], eps=R(1, 100))["output"] == M([[0, 0]])


def test_zero_variance_in_disguise_is_found():
    # sqrt(8) and 2*sqrt(2) are the same number: the row is constant
    with pytest.raises(ZeroVarianceError, match=r"^layer_norm row 1:"):
        layer_norm(M([[sqrt(8), 2 * sqrt(2)]]))


def test_layer_norm_refuses_negative_eps_and_bad_gamma():
    with pytest.raises(ShapeError, match=r"^layer_norm: eps must be >= 0"):
        layer_norm([[1, 3]], eps=-1)
    with pytest.raises(ShapeError, match=r"^gamma is 1x3"):
        layer_norm([[1, 3]], gamma=[[1, 2, 3]])


@given(st.lists(rationals, min_size=2, max_size=5))
def test_layer_norm_rows_have_mean_0_and_variance_1(row):
    if len(set(row)) == 1:
        row[0] += 1
    out = layer_norm(M([row]))["output"]
    d = len(row)
    assert sympy.expand(sum(out)) == 0
    assert sympy.expand(sum(v**2 for v in out) / d) == 1


# -- positions ----------------------------------------------------------------------------


def test_sinusoidal_by_hand():
    assert sinusoidal(2, 2)["output"] == M([[0, 1], [sin(1), cos(1)]])
    # d = 4: pair i = 1 has frequency 10000^(-2/4) = 1/100
    assert sinusoidal(3, 4)["output"].row(2) == M([[sin(2), cos(2), sin(R(1, 50)), cos(R(1, 50))]])
    # odd width: the last column is a sin
    assert sinusoidal(2, 3)["output"].row(1)[2] == sin(1 / sympy.Pow(10000, R(2, 3)))
    assert sinusoidal(2, 2, base=4)["output"] == M([[0, 1], [sin(1), cos(1)]])


@pytest.mark.parametrize("settings,row2", [
    ({"first_position": 1}, [sin(2), cos(2)]),
    ({"swap": True}, [cos(1), sin(1)]),
], ids=["positions_from_one", "sin_cos_swapped"])
def test_sinusoidal_mistakes_differ(settings, row2):
    wrong = sinusoidal(2, 2, **settings)["output"]
    assert list(wrong.row(1)) == row2 and wrong != sinusoidal(2, 2)["output"]


@given(st.integers(1, 6), st.integers(1, 4))
def test_every_sinusoidal_pair_has_sin2_plus_cos2_one(n, half):
    pe = sinusoidal(n, 2 * half)["output"]
    for p in range(n):
        for i in range(half):
            assert sympy.simplify(pe[p, 2 * i] ** 2 + pe[p, 2 * i + 1] ** 2) == 1


def test_sinusoidal_decimals_are_certified():
    assert sinusoidal(2, 2).decimals("output", 5) == [["0.00000", "1.00000"], ["0.84147", "0.54030"]]


def test_rope_by_hand():
    # row at position 1, pair (1, 2) rotated by angle 1: [cos1 - 2 sin1, sin1 + 2 cos1]
    t = rope([[1, 2], [1, 2]])
    assert t["output"].row(0) == M([[1, 2]])
    assert t["output"].row(1) == M([[cos(1) - 2 * sin(1), sin(1) + 2 * cos(1)]])
    # d = 4, pair 1: theta = 10000^(-2/4) = 1/100, at position 3 the angle is 3/100
    t = rope([[0, 0, 1, 0]], positions=[3])
    assert t["angles"] == M([[3, R(3, 100)]])
    assert t["output"] == M([[0, 0, cos(R(3, 100)), sin(R(3, 100))]])
    with pytest.raises(ShapeError, match=r"^rope: the width must be even"):
        rope([[1, 2, 3]])


def test_rope_preserves_norms_and_depends_only_on_offsets():
    q, k = rope([[1, 2]], positions=[3])["output"], rope([[3, -1]], positions=[1])["output"]
    q2, k2 = rope([[1, 2]], positions=[5])["output"], rope([[3, -1]], positions=[3])["output"]
    assert sympy.simplify((q * k.T)[0] - (q2 * k2.T)[0]) == 0
    assert sympy.simplify(sum(v**2 for v in q) - 5) == 0


@pytest.mark.parametrize("heads,slopes", [
    (1, [R(1, 256)]),
    (2, [R(1, 16), R(1, 256)]),
    (4, [R(1, 4), R(1, 16), R(1, 64), R(1, 256)]),
    (8, [R(1, 2**k) for k in range(1, 9)]),
    (3, [R(1, 16), R(1, 256), R(1, 4)]),  # 2 of 2, then 1 of 4's every other: 2^-2
    (6, [R(1, 4), R(1, 16), R(1, 64), R(1, 256), R(1, 2), R(1, 8)]),
    (16, [sympy.Pow(2, R(-k, 2)) for k in range(1, 17)]),
], ids=lambda v: str(v) if isinstance(v, int) else None)
def test_alibi_slopes_as_in_the_paper(heads, slopes):
    assert alibi_slopes(heads) == slopes


def test_alibi_bias_by_hand():
    t = alibi(3, 2, heads=2)
    assert t["slopes"] == M([[R(1, 16), R(1, 256)]])
    assert t["head[1]"] == M([[0, R(1, 16)], [-R(1, 16), 0], [-R(2, 16), -R(1, 16)]])
    assert "output" not in list(t)
    with pytest.raises(InputLimitError):
        alibi(2, heads=65)


# -- feed-forward -------------------------------------------------------------------------


def test_relu_and_gelu_by_hand():
    assert relu([[-2, 0, R(1, 2), "1 - sqrt(2)", "sqrt(3) - 1"]])["output"] == M([[0, 0, R(1, 2), 0, sqrt(3) - 1]])
    g = gelu([[-1, 0, 2]])["output"]
    assert g == M([[-(1 - erf(1 / sqrt(2))) / 2, 0, 1 + erf(sqrt(2))]])
    t = gelu([[1]], approximate="tanh")["output"][0]
    assert sympy.expand(t - (1 + tanh(sqrt(2 / sympy.pi) * R(1044715, 1000000))) / 2) == 0


def test_gelu_decimals_are_certified():
    # GELU(1) = Phi(1) = 0.841344746068542948585232545632...
    assert decimal_text(gelu([[1]])["output"][0], 30, significant=True) == "0.841344746068542948585232545632"
    assert gelu([[1]]).decimals("output", 6) == [["0.841345"]]
    # tanh approximation of GELU(1): 0.841191990607...
    assert gelu([[1]], "tanh").decimals("output", 6) == [["0.841192"]]


def test_feed_forward_by_hand():
    # hidden = [1, -1] W1 + b1 = [1-0, -1+1] + [0, 1] = ...
    X = [[1, -1]]
    W1 = [[1, 1], [0, 1]]
    t = feed_forward(X, W1, [[0, -1]], [[2], [3]], [[R(1, 2)]])
    assert t["hidden"] == M([[1, -1]])
    assert t["activated"] == M([[1, 0]])
    assert t["output"] == M([[R(5, 2)]])
    linear = feed_forward(X, W1, [[0, -1]], [[2], [3]], [[R(1, 2)]], activation="none")
    assert linear["output"] == M([[R(-1, 2)]])  # the ReLU matters here
    with pytest.raises(ShapeError, match=r"^feed_forward: X is 1x2 and W1 is 3x1"):
        feed_forward(X, [[1], [1], [1]], 0, [[1]], 0)


# -- multi-head ---------------------------------------------------------------------------


def test_multihead_by_hand():
    X = M([[1, 0], [0, 1]])
    # head 1: W_K = 0 -> uniform weights, output = mean of V rows = [1/2, 1/2]
    # head 2: W_V picks column 2 scaled by 2; same uniform weights -> [1, 1]
    heads = [(I2, Z2, I2), (I2, Z2, M([[0], [2]]))]
    t = multihead(X, heads, WO=M([[1, 0], [0, 1], [1, 1]]))
    assert t["head[1].weights"] == M([[R(1, 2), R(1, 2)]] * 2)
    assert t["concat"] == M([[R(1, 2), R(1, 2), 1]] * 2)
    assert t["output"] == M([[R(3, 2), R(3, 2)]] * 2)
    assert t["head[2].scale" if False else "head[2].scaled"] == M.zeros(2, 2)


def test_multihead_per_head_scale_is_its_own_dk():
    X = M([[1, 0, 0]])
    heads = [(M([[1], [0], [0]]), M([[1], [0], [0]]), M([[1], [0], [0]])),
             (M([[1, 0], [0, 0], [0, 0]]), M([[1, 0], [0, 0], [0, 0]]), M([[1], [0], [0]]))]
    t = multihead(X, heads)
    assert t["head[1].scaled"] == M([[1]])  # d_k = 1
    assert t["head[2].scaled"] == M([[1 / sqrt(2)]])  # d_k = 2


@given(st.lists(st.lists(rationals, min_size=2, max_size=2), min_size=1, max_size=3),
       st.lists(rationals, min_size=4, max_size=4))
def test_one_head_with_identity_output_equals_attention(rows, w):
    X = M(rows)
    W = M(2, 2, w)
    mh = multihead(X, [(W, I2, W.T)], WO=I2, mask="causal")
    single = attention(X * W, X, X * W.T, mask="causal")
    assert mh["output"] == single.output
    assert mh["head[1].weights"] == single.weights


def test_cross_attention_takes_keys_and_values_from_memory():
    D, E = M([[1, 0]]), M([[0, 0], [0, 0], [3, 3]])
    t = multihead(D, [(I2, I2, I2)], key=E)
    assert t["head[1].scores"] == M([[0, 0, 3]])
    assert t["head[1].value"] == E


@pytest.mark.parametrize("settings,concat", [
    ({"head_order": "reversed"}, M([[1, R(1, 2), R(1, 2)]] * 2)),
    ({"project": False}, None),
], ids=["heads_order", "output_projection_missing"])
def test_multihead_mistakes_differ(settings, concat):
    X = M([[1, 0], [0, 1]])
    heads = [(I2, Z2, I2), (I2, Z2, M([[0], [2]]))]
    WO = M([[1, 0], [0, 1], [1, 1]])
    right, wrong = multihead(X, heads, WO), multihead(X, heads, WO, **settings)
    assert wrong["output"] != right["output"]
    if concat is not None:
        assert wrong["concat"] == concat
    else:
        assert wrong["output"] == right["concat"]


def test_multihead_shape_errors():
    with pytest.raises(ShapeError, match=r"^multihead: W_O is 3x2 but the concatenated heads are 2x2"):
        multihead(I2, [(I2, I2, I2)], WO=M.zeros(3, 2))
    with pytest.raises(ShapeError, match=r"^multihead: head 1 W_Q is 3x2"):
        multihead(I2, [(M.zeros(3, 2), I2, I2)])
    with pytest.raises(InputLimitError):
        multihead(I2, [(I2, I2, I2)] * 17)


def test_multihead_padding_and_keep_masks():
    t = multihead(I2, [(I2, I2, I2)], mask=Mask.keep([[1, 0], [1, 0]]))
    assert t["head[1].weights"] == M([[1, 0], [1, 0]])


# -- blocks -------------------------------------------------------------------------------


def _zero_block(X, norm, **extra):
    d = X.cols
    z = M.zeros(d, d)
    return encoder_block(X, heads=[(z, z, z)], WO=z, W1=z, W2=z, norm=norm, **extra)


@given(st.lists(st.lists(rationals, min_size=2, max_size=3), min_size=1, max_size=3).filter(
    lambda rows: len({len(r) for r in rows}) == 1 and all(len(set(r)) > 1 for r in rows)))
def test_pre_and_post_ln_agree_when_the_sublayer_is_zero(rows):
    # Sublayer = 0: Post-LN gives LN(LN(x)) = LN(x); Pre-LN gives x + 0 + 0 = x... so compare
    # each with its own closed form: Post = LN(x), Pre = x.
    X = M(rows)
    post, pre = _zero_block(X, "post"), _zero_block(X, "pre")
    assert post["output"] == layer_norm(layer_norm(X)["output"])["output"]
    assert pre["output"] == X
    # and with LN the identity on already-normalized rows, both agree on LN(x)
    N = layer_norm(X)["output"]
    assert _zero_block(N, "post")["output"].applyfunc(sympy.expand) == _zero_block(N, "pre")["output"].applyfunc(sympy.expand)


def test_encoder_block_by_hand_post_and_pre():
    # one head with W_K = 0: uniform weights; V = X: attention output = column means
    X = M([[1, 0], [0, 2]])
    heads = [(I2, Z2, I2)]
    post = encoder_block(X, heads, I2, W1=Z2, W2=Z2)
    assert post["attention"] == M([[R(1, 2), 1], [R(1, 2), 1]])
    assert post["add1"] == M([[R(3, 2), 1], [R(1, 2), 3]])
    assert post["norm1"] == M([[1, -1], [-1, 1]])
    assert post["ffn"] == Z2 and post["add2"] == post["norm1"] and post["output"] == M([[1, -1], [-1, 1]])
    assert [p for p in post if "." not in p] == ["attention", "add1", "norm1", "ffn", "add2", "norm2", "output"]
    pre = encoder_block(X, heads, I2, W1=Z2, W2=Z2, norm="pre")
    assert pre["norm1"] == M([[1, -1], [-1, 1]])
    assert pre["attention"] == Z2  # the column means of LN(x) are 0
    assert pre["output"] == X
    assert [p for p in pre if "." not in p] == ["norm1", "attention", "add1", "norm2", "ffn", "add2", "output"]
    assert post["attention.head[1].weights"] == M([[R(1, 2), R(1, 2)]] * 2)


def test_residual_missing_differs():
    X = M([[1, 0], [0, 2]])
    right = encoder_block(X, [(I2, Z2, I2)], I2, W1=Z2, W2=Z2)
    with pytest.raises(ZeroVarianceError):  # without x, add1 is the constant-column means
        encoder_block(X, [(I2, Z2, I2)], I2, W1=Z2, W2=Z2, residual=False)
    wrong = encoder_block(X, [(I2, Z2, I2)], I2, W1=Z2, W2=Z2, residual=False, eps=1)
    assert wrong["add1"] == right["attention"] and wrong["output"] != right["output"]


def test_decoder_block_stages_and_causal_self_attention():
    D = M([[1, 0], [0, 2]])
    E = M([[5, 1], [1, 5], [3, 3]])
    t = decoder_block(D, E, [(I2, Z2, I2)], I2, [(I2, Z2, I2)], I2, W1=Z2, W2=Z2)
    names = [p for p in t if "." not in p]
    assert names == ["self_attention", "add1", "norm1", "cross_attention", "add2", "norm2", "ffn", "add3", "norm3", "output"]
    assert t["self_attention.head[1].weights"] == M([[1, 0], [R(1, 2), R(1, 2)]])
    assert t["cross_attention.head[1].weights"] == M([[R(1, 3)] * 3] * 2)
    assert t["cross_attention"] == M([[3, 3], [3, 3]])
    with pytest.raises(StageError):
        t["attention"]


def test_block_residual_shape_error():
    with pytest.raises(ShapeError, match=r"^attention: the sublayer output is 2x1"):
        encoder_block(I2, [(I2, I2, I2)], M([[1], [1]]), W1=Z2, W2=Z2)
