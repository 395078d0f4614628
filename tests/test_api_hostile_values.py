"""Hostile values at the Python API of the model operations (issue 19): a typed, one-line
error naming the argument, never a binary float in an exact result or an untyped exception."""

from fractions import Fraction

import pytest
import sympy

from symbolic_attn import (
    Mask, Trace, alibi, alibi_slopes, attention, attention_from_scores, decoder_block, encoder_block, multihead, select,
)
from symbolic_attn import testing
from symbolic_attn.errors import FloatInputError, StageError, SymbolicAttnError
from symbolic_attn.exact.certified import decimal_string, within
from symbolic_attn.model.layernorm import layer_norm
from symbolic_attn.model.positional import rope, sinusoidal

X = sympy.ImmutableMatrix([[1, 2], [3, 4]])
t = sympy.Symbol("t", positive=True)
Q = sympy.ImmutableMatrix([[1, 0], [0, 1]])
HEADS = [(Q, Q, Q)]
HUGE = 10**10000
DISGUISED_ZERO = sympy.log(8) - 3 * sympy.log(2)

REFUSED = [
    ("sinusoidal-float-position", lambda: sinusoidal(2, 2, first_position=0.5), r"first_position must be an integer"),
    ("sinusoidal-text-position", lambda: sinusoidal(2, 2, first_position="a"), r"first_position must be an integer"),
    ("sinusoidal-bool-position", lambda: sinusoidal(2, 2, first_position=True), r"first_position must be an integer"),
    ("sinusoidal-text-swap", lambda: sinusoidal(2, 2, swap="yes"), r"swap must be True or False"),
    ("rope-float-position", lambda: rope(X, first_position=0.5), r"first_position must be an integer"),
    ("layer-norm-negative-symbolic-eps", lambda: layer_norm(X, eps=-t), r"eps must be >= 0, got -t"),
    ("layer-norm-text-affine", lambda: layer_norm(X, affine="no"), r"affine must be True or False, got 'no'"),
    # 17: a scale (or eps, or base) that divides by a disguised zero, or is one
    ("attention-scale-disguised-division", lambda: attention(Q, Q, Q, scale=1 / DISGUISED_ZERO), r"^scale .*sign is not decided"),
    ("from-scores-scale-disguised-division", lambda: attention_from_scores(Q, Q, scale=1 / DISGUISED_ZERO), r"^scale "),
    ("multihead-scale-disguised-division", lambda: multihead(Q, HEADS, scale=1 / DISGUISED_ZERO), r"^scale "),
    ("encoder-scale-option-undecided", lambda: encoder_block(Q, HEADS, Q, Q, W2=Q, multihead_options={"scale": 1 / DISGUISED_ZERO}), r"^scale "),
    ("layer-norm-eps-disguised-division", lambda: layer_norm(X, eps=1 / DISGUISED_ZERO), r"eps .*sign is not decided"),
    ("layer-norm-eps-disguised-negative", lambda: layer_norm(X, eps=DISGUISED_ZERO - sympy.Rational(1, 10**30)), r"eps must be >= 0"),
    ("layer-norm-disguised-zero-variance", lambda: layer_norm([[sympy.log(8), 3 * sympy.log(2)]]), r"variance is exactly 0"),
    ("sinusoidal-base-disguised-one", lambda: sinusoidal(2, 2, base=1 + DISGUISED_ZERO), r"base must be certainly a positive"),
    ("rope-base-disguised-division", lambda: rope(X, base=1 / DISGUISED_ZERO), r"base must be certainly a positive"),
    # 18-19: boolean options are booleans
    ("multihead-text-project", lambda: multihead(Q, HEADS, Q, project="yes"), r"project must be True or False, got 'yes'"),
    ("multihead-int-project", lambda: multihead(Q, HEADS, Q, project=1), r"project must be True or False, got 1"),
    ("encoder-text-residual", lambda: encoder_block(Q, HEADS, Q, Q, W2=Q, residual="no"), r"residual must be True or False, got 'no'"),
    ("decoder-none-residual", lambda: decoder_block(Q, Q, HEADS, Q, HEADS, Q, Q, W2=Q, residual=None), r"residual must be True or False, got None"),
    ("sinusoidal-huge-swap", lambda: sinusoidal(2, 2, swap=HUGE), r"swap must be True or False, got <an integer of"),
    ("layer-norm-huge-affine", lambda: layer_norm(X, affine=HUGE), r"affine must be True or False, got <an integer of"),
    ("battery-text-takes-scale", lambda: testing.battery(1, takes_scale="no"), r"takes_scale must be True or False"),
    ("encoder-ln-option-unknown", lambda: encoder_block(Q, HEADS, Q, Q, W2=Q, layer_norm_options={"a": 1}), r"layer_norm_options: unknown option 'a'"),
    ("encoder-ln-options-not-mapping", lambda: encoder_block(Q, HEADS, Q, Q, W2=Q, layer_norm_options="x"), r"layer_norm_options must be a mapping"),
    ("encoder-mh-option-key", lambda: encoder_block(Q, HEADS, Q, Q, W2=Q, multihead_options={"mask": "causal"}), r"multihead_options: unknown option 'mask'"),
    ("encoder-mh-options-int", lambda: encoder_block(Q, HEADS, Q, Q, W2=Q, multihead_options=5), r"multihead_options must be a mapping"),
    # choices given as unhashable or huge values
    ("multihead-list-head-order", lambda: multihead(Q, HEADS, head_order=[]), r"unknown multihead: head_order \[\]"),
    ("multihead-huge-head-order", lambda: multihead(Q, HEADS, head_order=HUGE), r"head_order <an integer of"),
    ("layer-norm-dict-variance", lambda: layer_norm(X, variance={}), r"unknown layer_norm: variance"),
    ("layer-norm-list-eps-placement", lambda: layer_norm(X, eps_placement=["inside"]), r"unknown layer_norm: eps_placement"),
    ("encoder-set-norm", lambda: encoder_block(Q, HEADS, Q, Q, W2=Q, norm={"post"}), r"unknown norm"),
    ("battery-list-empty-row", lambda: testing.battery(1, empty_row=[]), r"unknown empty_row"),
    ("battery-list-seed", lambda: testing.battery(1, seed=[1]), r"seed must be a whole number"),
    ("battery-huge-cases", lambda: testing.battery(HUGE), r"random cases .* got <an integer of"),
    # huge sizes are described, never written out (Python's int-to-text limit)
    ("sinusoidal-huge-n", lambda: sinusoidal(HUGE, 2), r"n \(positions\) = <an integer of \d+ digits> exceeds"),
    ("alibi-huge-heads", lambda: alibi(2, heads=HUGE), r"heads = <an integer of"),
    ("alibi-slopes-huge", lambda: alibi_slopes(HUGE), r"heads = <an integer of"),
    ("mask-padding-huge", lambda: Mask.padding(2, 2, HUGE), r"valid key count <an integer of"),
    # 20-21: select and Trace
    ("select-none", lambda: select(None, "x"), r"^select: the source must be a Trace or a mapping.*got None"),
    ("select-stage-int", lambda: select({"a": 5}, "a"), r"^stage 'a' is not a matrix: got 5 \(int\)"),
    ("select-missing-stage", lambda: select({"a": Q}, "b"), r"^unknown stage 'b': expected one of a"),
    ("select-path-list", lambda: select({"a": Q}, ["a"]), r"^malformed stage path"),
    ("select-ragged-stage", lambda: select({"a": [[1, 2], [3]]}, "a"), r"^stage 'a' is not a matrix"),
    ("trace-stages-list", lambda: Trace([("a", Q)]), r"^Trace: stages must be a mapping"),
    ("trace-stages-none", lambda: Trace(None), r"^Trace: stages must be a mapping"),
    ("trace-stage-none", lambda: Trace({"a": None})["a"], r"^stage 'a' is not a matrix: got None"),
    ("trace-stage-float-entries", lambda: Trace({"a": [[0.5]]})["a"], r"^stage 'a' has an entry 0.5"),
    ("trace-stage-empty", lambda: Trace({"a": []})["a"], r"^stage 'a' is not a matrix"),
    ("trace-stage-nested-junk", lambda: Trace({"a": [[[1]]]})["a"], r"^stage 'a'"),
    ("trace-stage-function-returns-junk", lambda: Trace({"a": lambda: "x"})["a"], r"^stage 'a' is not a matrix: got x"),
    ("trace-decimals-not-callable", lambda: Trace({"a": Q}, decimals=3), r"^Trace: decimals must be a function"),
    ("trace-settings-not-mapping", lambda: Trace({"a": Q}, settings=[1, 2]), r"^Trace: settings must be a mapping"),
    ("trace-with-nested-non-trace", lambda: Trace({"a": Q}).with_nested("h", {"b": Q}), r"^with_nested\('h', \.\.\.\): expected a Trace"),
    ("trace-with-nested-none", lambda: Trace({"a": Q}).with_nested("h", None), r"expected a Trace to nest, got None"),
    ("trace-getitem-list", lambda: Trace({"a": Q})[["a"]], r"^malformed stage path"),
    # 22-25: decimal_string / within read exact values only
    ("decimal-string-float", lambda: decimal_string(0.5, 3), r"^binary float 0.5 refused"),
    ("decimal-string-none", lambda: decimal_string(None, 3), r"cannot use a NoneType as an exact number"),
    ("decimal-string-list", lambda: decimal_string([1], 3), r"cannot use a list as an exact number"),
    ("decimal-string-sympy-float", lambda: decimal_string(sympy.Float(0.5), 3), r"SymPy Float"),
    ("decimal-string-code-text", lambda: decimal_string("__import__('os')", 3), r"unknown function '__import__'"),
    ("decimal-string-nan", lambda: decimal_string(sympy.nan, 3), r"NaN"),
    ("decimal-string-float-digits", lambda: decimal_string(1, 2.5), r"digit count must be a whole number"),
    ("decimal-string-negative-digits", lambda: decimal_string(1, -1), r"digit count -1 is outside"),
    ("decimal-string-huge-digits", lambda: decimal_string(1, HUGE), r"digit count about 10\^10000 is outside"),
    ("decimal-string-text-digits", lambda: decimal_string(1, "3"), r"digit count must be a whole number"),
    ("within-float", lambda: within(0.5, 0, 1), r"^binary float 0.5 refused"),
    # 26 and the other testing helpers
    ("to-convention-none", lambda: testing.to_convention(None, "keep"), r"to_convention: expected a Mask, got None"),
    ("to-convention-grid", lambda: testing.to_convention([[1]], "keep"), r"to_convention: expected a Mask, got \[\[1\]\] \(list\): read a grid first with Mask.keep"),
    ("to-convention-list-name", lambda: testing.to_convention(Mask.full(1, 1), ["keep"]), r"unknown mask convention \['keep'\]"),
    ("to-convention-huge-dtype", lambda: testing.to_convention(Mask.full(1, 1), "additive", HUGE), r"unknown dtype"),
    ("from-convention-dict-name", lambda: testing.from_convention([[1]], {}), r"unknown mask convention"),
    ("from-convention-huge-n", lambda: testing.from_convention([1], "key_padding", n=HUGE), r"n = <an integer of .* exceed the limit"),
    ("from-convention-bool-n", lambda: testing.from_convention([1], "key_padding", n=True), r"pass n, the number of queries"),
    ("causal-alignment-none", lambda: testing.causal_alignment(None), r"causal_alignment: expected a Mask, got None"),
]


@pytest.mark.parametrize("call, message", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_refused_with_a_typed_error(call, message):
    with pytest.raises(SymbolicAttnError, match=message):
        call()


@pytest.mark.parametrize("call, kind", [
    (lambda: decimal_string(0.5, 3), FloatInputError),
    (lambda: select({"a": 5}, "a"), StageError),
    (lambda: Trace({"a": Q}).with_nested("h", 5), StageError),
])
def test_the_error_types(call, kind):
    with pytest.raises(kind):
        call()


def test_the_accepted_forms_still_work():
    # text is read with the one input language (exact), never sympified
    assert decimal_string("1/3", 3) == "0.333"
    assert within("1/3", Fraction(1, 3), Fraction(0))
    # a scale proved to be 0 is 0 (uniform weights), a negative one is fine, a symbolic one is kept
    assert attention(Q, Q, Q, scale=DISGUISED_ZERO).weights == sympy.ImmutableMatrix([[sympy.Rational(1, 2)] * 2] * 2)
    assert attention(Q, Q, Q, scale=0).scale == 0
    assert sympy.simplify(attention(Q, Q, Q, scale=-1).weights[0, 0] - 1 / (1 + sympy.E)) == 0
    assert attention(Q, Q, Q, scale=sympy.Symbol("s")).scale == sympy.Symbol("s")
    assert layer_norm(X, eps=DISGUISED_ZERO + 1)["output"].shape == (2, 2)
    assert layer_norm(X, eps=DISGUISED_ZERO)["output"] == layer_norm(X)["output"]  # a proved 0 is 0
    assert multihead(Q, HEADS, Q, project=False)["output"] == multihead(Q, HEADS)["output"]
    assert encoder_block(Q, HEADS, Q, Q, W2=Q, residual=False, multihead_options={"scale": "none"},
                         layer_norm_options={"eps_placement": "outside", "affine": True})["output"].shape == (2, 2)
    assert testing.to_convention(Mask.keep([[True, False]]), "block").tolist() == [[False, True]]
    assert testing.causal_alignment(Mask.keep([[1, 0], [1, 1]])) == "both"
    assert select({"a": [[1, 2]]}, "a", col=2).entries == [2]
    assert Trace({"a": [[sympy.nan]]})["a"][0, 0] is sympy.nan  # the 'nan' empty-row policy's stage
    assert sinusoidal(2, 2, first_position=sympy.Integer(1))["angles"][0, 0] == 1
    assert layer_norm(X, eps=t)["output"].shape == (2, 2)
    assert layer_norm(X, affine=False)["output"].shape == (2, 2)
