"""Exact backward passes: values derived by hand, agreement with exact differentiation
(``vector_jacobian``, sympy.diff) and with finite differences of the exact forward, the
structure of masked and softmax gradients, and every mistake setting shown to differ."""

import flint
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import Rational as R
from sympy import log, sqrt

from symbolic_attn.errors import ShapeError, UndecidedError
from symbolic_attn.exact.intervals import to_arb, working_precision
from symbolic_attn.model.attention import attention
from symbolic_attn.model.backward import attention_backward, softmax_backward
from symbolic_attn.model.backward_ffn import activation_derivative, feed_forward_backward
from symbolic_attn.model.backward_heads import multihead_backward
from symbolic_attn.model.backward_norm import layer_norm_backward
from symbolic_attn.model.feedforward import feed_forward
from symbolic_attn.model.gradient import vector_jacobian
from symbolic_attn.model.layernorm import layer_norm
from symbolic_attn.model.masks import Mask
from symbolic_attn.model.multihead import multihead
from symbolic_attn.proofs.prove import prove_equal

M = sympy.ImmutableMatrix
rationals = st.fractions(min_value=-3, max_value=3, max_denominator=4).map(lambda f: R(f.numerator, f.denominator))
positive = st.fractions(min_value=R(1, 4), max_value=4, max_denominator=4).map(lambda f: R(f.numerator, f.denominator))


def matrices(rows, cols, entries=rationals):
    return st.lists(entries, min_size=rows * cols, max_size=rows * cols).map(lambda xs: M(rows, cols, xs))


def equal(a, b):
    """Entry by entry, proved equal (exact rationals compare with ==; others by prove_equal)."""
    assert a.shape == b.shape
    for x, y in zip(a, b):
        if not (x.is_Rational and y.is_Rational):
            prove_equal(x, y)
        else:
            assert x == y
    return True


# -- attention_backward by hand ------------------------------------------------------------

Q0 = M([[0, 0], [0, 0], [0, 0]])  # every score 0: uniform weights over the allowed keys
K3 = M([[1, 0], [0, 1], [1, 1]])
V3 = M([[1, 0], [0, 2], [1, 1]])
G3 = M([[1, 0], [0, 1], [1, -1]])


def test_attention_backward_by_hand_three_tokens_causal():
    # A = [[1, 0, 0], [1/2, 1/2, 0], [1/3, 1/3, 1/3]], O = A V = [[1, 0], [1/2, 1], [2/3, 1]]
    t = attention_backward(Q0, K3, V3, G3, mask="causal")
    assert list(t) == ["dO", "dV", "dA", "D", "dScaled", "dS", "dQ", "dK"]
    assert t["dO"] == G3
    # dV = A^T G: column j of A weighted by the rows of G
    assert t["dV"] == M([[R(4, 3), R(1, 6)], [R(1, 3), R(1, 6)], [R(1, 3), -R(1, 3)]])
    # dA = G V^T
    assert t["dA"] == M([[1, 0, 1], [0, 2, 1], [1, -2, 0]])
    # D = rowsum(G * O) = [1, 1, 2/3 - 1]
    assert t["D"] == M([[1], [1], [-R(1, 3)]])
    # row 2: rowsum(dA * A) = (0 + 2)/2 = 1 -> A * (dA - 1) = [-1/2, 1/2, 0]
    # row 3: rowsum = (1 - 2 + 0)/3 = -1/3 -> (1/3) * ([1, -2, 0] + 1/3) = [4/9, -5/9, 1/9]
    assert t["dScaled"] == M([[0, 0, 0], [-R(1, 2), R(1, 2), 0], [R(4, 9), -R(5, 9), R(1, 9)]])
    s = 1 / sqrt(2)
    assert t["dS"] == t["dScaled"] * s
    # dQ = dS K; dK = dS^T Q = 0 since Q = 0
    assert t["dQ"] == M([[0, 0], [-s / 2, s / 2], [(R(4, 9) + R(1, 9)) * s, (-R(5, 9) + R(1, 9)) * s]])
    assert t["dK"] == M.zeros(3, 2)
    # blocked positions: exactly 0, structurally
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        assert t["dScaled"][i, j] is sympy.S.Zero and t["dS"][i, j] is sympy.S.Zero


def test_attention_backward_scale_and_key_gradient_by_hand():
    # one query, two keys, scale 1: scores [1, 0]... use Q = [[0]] to keep weights 1/2
    t = attention_backward([[0]], [[1], [3]], [[2], [0]], [[1]], scale=1)
    # A = [1/2, 1/2], dA = [2, 0], rowsum = 1, dScaled = [1/2, -1/2], dQ = 1/2 * 1 - 1/2 * 3 = -1
    assert t["dScaled"] == M([[R(1, 2), -R(1, 2)]]) and t["dQ"] == M([[-1]])
    assert t["dK"] == M([[0], [0]])  # Q = 0
    t = attention_backward([[0]], [[1], [3]], [[2], [0]], [[1]], scale=R(1, 2))
    assert t["dQ"] == M([[-R(1, 2)]]) and t["dS"] == M([[R(1, 4), -R(1, 4)]])


def test_softmax_backward_by_hand():
    # A = softmax([0, log 2, log 3]) = [1/6, 1/3, 1/2]; G = [1, 0, 0]: rowsum = 1/6
    t = softmax_backward([[0, log(2), log(3)]], [[1, 0, 0]])
    assert t["weights"] == M([[R(1, 6), R(1, 3), R(1, 2)]])
    assert t["dS"] == M([[R(1, 6) * R(5, 6), -R(1, 3) * R(1, 6), -R(1, 2) * R(1, 6)]])


def test_shapes_are_checked():
    with pytest.raises(ShapeError, match=r"^G is 1x2 but the output"):
        attention_backward(Q0, K3, V3, [[1, 0]])
    with pytest.raises(ShapeError, match=r"^G is 1x1 but the LayerNorm output is 1x2"):
        layer_norm_backward([[1, 3]], [[1]])
    with pytest.raises(ShapeError, match=r"^unknown attention_backward: softmax_jacobian"):
        attention_backward(Q0, K3, V3, G3, softmax_jacobian="half")


# -- agreement with exact differentiation -----------------------------------------------------


def test_attention_backward_agrees_with_exact_differentiation():
    Q = M([[1, 0], [0, 1], [1, 1]])
    t = attention_backward(Q, K3, V3, G3, mask="causal")
    for name, stage in (("Q", "dQ"), ("K", "dK"), ("V", "dV")):
        def compute(v):
            return attention(v["Q"], v["K"], v["V"], mask="causal").output
        assert equal(vector_jacobian(compute, {"Q": Q, "K": K3, "V": V3}, G3, name), t[stage])
    # FlashAttention's D is the same row sum as rowsum(dA * A)
    A = attention(Q, K3, V3, mask="causal").weights
    for i in range(3):
        prove_equal(t["D"][i, 0], sum(t["dA"][i, j] * A[i, j] for j in range(3)))


def test_layer_norm_backward_by_hand():
    # x = [0, 0, 3], eps = 2: mean 1, c = [-1, -1, 2], variance 2, s = 2, G = [1, 0, 0]
    t = layer_norm_backward([[0, 0, 3]], [[1, 0, 0]], eps=2)
    assert t["dxhat"] == M([[1, 0, 0]])
    assert t["dvar"] == M([[R(1, 16)]])  # -1/2 * (1 * -1) / 2^3
    assert t["dmean"] == M([[-R(1, 2)]])
    # dX_j = dxhat_j / 2 + (1/16) * 2 c_j / 3 + (-1/2) / 3
    assert t["dX"] == M([[R(7, 24), -R(5, 24), -R(1, 12)]])
    assert t["dgamma"] == M([[-R(1, 2)]]) and t["dbeta"] == M([[1]])
    g = layer_norm_backward([[1, 3], [0, 4]], [[1, 2], [3, 0]], gamma=[[2, 1]], beta=[[0, 1]])
    assert g["dbeta"] == M([[4, 2]]) and g["dgamma"] == M([[-1 - 3, 2]])
    assert g["dX"] == M.zeros(2, 2)  # a LayerNorm of width 2 is constant (±1) away from ties


@pytest.mark.parametrize("case", [
    ([[0, 1, 5]], [[1, 0, 0]], 0, 1),
    ([[0, 1, 5], [2, -1, 1]], [[1, 2, -1], [0, 1, 1]], R(1, 3), [[2, 1, -1]]),
], ids=["plain", "eps-gamma-two-rows"])
def test_layer_norm_backward_agrees_with_exact_differentiation(case):
    X, G, eps, gamma = (M(c) if isinstance(c, list) else c for c in case)
    t = layer_norm_backward(X, G, eps=eps, gamma=gamma, beta=[[1, 0, 0]] if X.cols == 3 else 0)
    assert equal(vector_jacobian(lambda v: layer_norm(v["X"], eps, gamma), {"X": X}, G, "X"), t["dX"])
    sums = [sympy.simplify(sum(t["dX"].row(i))) for i in range(X.rows)]
    assert sums == [0] * X.rows  # LayerNorm is shift invariant: each row of dX sums to 0


@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh", "none"])
def test_feed_forward_backward_agrees_with_exact_differentiation(activation):
    X, W1, b1 = M([[1, -1], [R(1, 2), 2]]), M([[1, 0, 2], [0, 1, -1]]), M([[0, R(1, 3), 2]])
    W2, b2, G = M([[1, 0], [0, 1], [1, 1]]), M([[1, 2]]), M([[1, 0], [-1, 2]])
    t = feed_forward_backward(X, W1, b1, W2, b2, G, activation)
    for name, stage in (("X", "dX"), ("W1", "dW1"), ("W2", "dW2"), ("b1", "db1"), ("b2", "db2")):
        def compute(v):
            return feed_forward(v["X"], v["W1"], v["b1"], v["W2"], v["b2"], activation)
        inputs = {"X": X, "W1": W1, "b1": b1, "W2": W2, "b2": b2}
        assert equal(vector_jacobian(compute, inputs, G, name), t[stage]), stage


def test_relu_at_zero_is_a_convention():
    X, W1, W2, G = M([[1, -1]]), M([[1], [1]]), M([[1]]), M([[5]])  # hidden = 0
    assert feed_forward_backward(X, W1, 0, W2, 0, G)["dX"] == M([[0, 0]])
    assert feed_forward_backward(X, W1, 0, W2, 0, G, relu_at_zero=1)["dX"] == M([[5, 5]])
    with pytest.raises(UndecidedError, match=r"^grad: the derivative needs relu'\(0\)"):
        vector_jacobian(lambda v: feed_forward(v["X"], W1, 0, W2, 0), {"X": X}, G, "X")
    assert activation_derivative(M([[sqrt(2) - 1, 1 - sqrt(2)]]), "relu") == M([[1, 0]])


def test_multihead_backward_agrees_with_exact_differentiation():
    X = M([[1, 0], [0, 1], [1, 1]])
    heads = [(M([[1, 0], [0, 1]]), M([[0, 1], [1, 0]]), M([[1], [0]])), (M([[0], [0]]), M([[1], [1]]), M([[0], [1]]))]
    WO, G = M([[1, 1], [0, 1]]), M([[1, 0], [0, 1], [1, 1]])
    t = multihead_backward(X, heads, WO, G, mask="causal")
    assert equal(vector_jacobian(lambda v: multihead(v["X"], heads, WO, mask="causal"), {"X": X}, G, "X"), t["dX"])
    assert equal(vector_jacobian(lambda v: multihead(X, heads, v["WO"], mask="causal"), {"WO": WO}, G, "WO"), t["dWO"])
    WQ1 = heads[0][0]
    assert equal(vector_jacobian(lambda v: multihead(X, [(v["W"], *heads[0][1:]), heads[1]], WO, mask="causal"),
                                 {"W": WQ1}, G, "W"), t["dW_Q[1]"])
    assert t["head[2].dScaled"][0, 1] is sympy.S.Zero


def test_cross_attention_backward_separates_the_key_sequence():
    D, E = M([[1, 0]]), M([[0, 1], [1, 1]])
    heads = [(M([[1], [0]]), M([[1], [1]]), M([[1, 0], [0, 1]]))]
    t = multihead_backward(D, heads, None, M([[1, 2]]), key=E)
    assert equal(vector_jacobian(lambda v: multihead(D, heads, key=v["E"]), {"E": E}, M([[1, 2]]), "E"), t["dkey"])
    assert equal(vector_jacobian(lambda v: multihead(v["D"], heads, key=E), {"D": D}, M([[1, 2]]), "D"), t["dX"])


# -- properties ----------------------------------------------------------------------------

masks = st.lists(st.booleans(), min_size=9, max_size=9).map(
    lambda bits: Mask(tuple(tuple(bits[3 * i + j] or j == i for j in range(3)) for i in range(3))))


@settings(max_examples=25, deadline=None)
@given(p=matrices(3, 3, positive), G=matrices(3, 3), mask=masks)
def test_softmax_gradient_rows_sum_to_zero_and_blocked_entries_are_zero(p, G, mask):
    """Scores log p give rational weights, so every check is an exact == on rationals."""
    t = softmax_backward(p.applyfunc(log), G, mask)
    dS, A = t["dS"], t["weights"]
    assert all(x.is_Rational for x in A)
    for i in range(3):
        assert sum(dS.row(i)) == 0
        for j in range(3):
            if not mask.allowed[i][j]:
                assert dS[i, j] is sympy.S.Zero
    # the same gradient from exact differentiation of the softmax itself
    scores = p.applyfunc(log)
    from symbolic_attn.model.attention import softmax
    assert vector_jacobian(lambda v: softmax(v["S"], mask), {"S": scores}, G, "S").applyfunc(sympy.simplify) == dS


@settings(max_examples=15, deadline=None)
@given(K=matrices(3, 2), V=matrices(3, 2), G=matrices(3, 2), mask=masks)
def test_attention_backward_with_uniform_weights_is_rational_and_masked(K, V, G, mask):
    t = attention_backward(M.zeros(3, 2), K, V, G, mask=mask, scale=1)
    assert all(x.is_Rational for x in t["dQ"])
    for i in range(3):
        assert sum(t["dScaled"].row(i)) == 0
        assert t["D"][i, 0] == sum(t["dA"][i, j] * _weights(mask)[i, j] for j in range(3))
        for j in range(3):
            if not mask.allowed[i][j]:
                assert t["dScaled"][i, j] is sympy.S.Zero and t["dS"][i, j] is sympy.S.Zero


def _weights(mask):
    return M(3, 3, lambda i, j: R(1, sum(mask.allowed[i])) if mask.allowed[i][j] else 0)


def _loss(Q, K, V, G):
    out = attention(Q, K, V, mask="causal").output
    return sum(g * o for g, o in zip(G, out))


def _ball(expr):
    with working_precision(256):
        return to_arb(expr)


@settings(max_examples=6, deadline=None)
@given(Q=matrices(3, 2), G=matrices(3, 2), i=st.integers(0, 2), j=st.integers(0, 1))
def test_finite_differences_of_the_exact_forward_converge_to_the_exact_gradient(Q, G, i, j):
    """(L(Q + h e_ij) - L(Q)) / h at h = 1/10^k, exact, approaches dQ_ij: its certified
    distance is below 10·h·(1 + |dQ_ij|) at k = 3, 4, 5 (first-order convergence)."""
    exact = attention_backward(Q, K3, V3, G, mask="causal")["dQ"][i, j]
    target = _ball(exact)
    base = _loss(Q, K3, V3, G)
    for k in (3, 4, 5):
        h = R(1, 10**k)
        step = M(3, 2, lambda a, b, h=h: h if (a, b) == (i, j) else 0)
        quotient = (_loss(Q + step, K3, V3, G) - base) / h
        distance = abs(_ball(quotient) - target)
        assert distance < flint.arb(10) * _ball(h) * (1 + abs(target))


# -- the mistakes, each a setting that changes the answer ----------------------------------

Q1 = M([[1, 0], [0, 1], [1, 1]])


@pytest.mark.parametrize("setting, stage", [
    ({"grad_scale": "missing"}, "dQ"),
    ({"grad_scale": "missing"}, "dK"),
    ({"key_side": "transposed"}, "dQ"),
    ({"key_side": "transposed"}, "dK"),
    ({"softmax_jacobian": "diagonal"}, "dScaled"),
    ({"softmax_jacobian": "no_rowsum"}, "dScaled"),
], ids=["scale-dQ", "scale-dK", "transposed-dQ", "transposed-dK", "diagonal", "no-rowsum"])
def test_each_attention_mistake_changes_the_gradient(setting, stage):
    right = attention_backward(Q1, K3, V3, G3, mask="causal")[stage]
    wrong = attention_backward(Q1, K3, V3, G3, mask="causal", **setting)[stage]
    assert any(abs(_ball(a - b)) > flint.arb("1e-6") for a, b in zip(right, wrong))


def test_the_mistakes_by_hand():
    t = attention_backward(Q0, K3, V3, G3, mask="causal", softmax_jacobian="diagonal")
    assert t["dScaled"][1, :] == M([[0, 1, 0]])  # A * dA = [1/2 * 0, 1/2 * 2, 0]
    t = attention_backward(Q0, K3, V3, G3, mask="causal", softmax_jacobian="no_rowsum")
    assert t["dScaled"][1, :] == M([[0, R(1, 2), 0]])  # A * (dA - A * dA) = [0, 1/2 * (2 - 1), 0]
    t = attention_backward(Q0, K3, V3, G3, mask="causal", grad_scale="missing")
    assert t["dS"] == t["dScaled"]
    with pytest.raises(ShapeError, match=r"^attention_backward: key_side 'transposed' needs as many"):
        attention_backward([[0, 0]], K3, V3, [[1, 0]], key_side="transposed")
    ln = layer_norm_backward([[0, 0, 3]], [[1, 0, 0]], eps=2, mean_path=False)
    assert ln["dX"] == M([[R(1, 2), 0, 0]])
    ln = layer_norm_backward([[1, 3], [0, 4]], [[1, 2], [3, 0]], beta=[[0, 1]], beta_summed=False)
    assert ln["dbeta"] == M([[1, 2], [3, 0]])
    ln = layer_norm_backward([[0, 0, 3]], [[1, 0, 0]], eps=2, variance="unbiased")
    assert ln["dX"] != layer_norm_backward([[0, 0, 3]], [[1, 0, 0]], eps=2)["dX"]
