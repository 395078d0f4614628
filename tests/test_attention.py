"""The attention core: the reference documents' calculations exactly, and its invariants."""

import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st
from sympy import Rational as R, exp, log, sqrt

from symbolic_attn.model.attention import attention, attention_from_scores, softmax
from symbolic_attn.errors import EmptyRowError, MaskError, ShapeError
from symbolic_attn.model.masks import Mask

X = sympy.Matrix([[1, 0], [0, 1], [1, 1]])


def is_zero(expr) -> bool:
    """Exact zero test for the closed forms here (sums of exponentials over one denominator)."""
    return sympy.simplify(sympy.together(expr)) == 0


# -- "Attention, by hand" (004): Q = K = X, V = 2X --------------------------------------


def test_by_hand_scores_and_scaling():
    result = attention(X, X, 2 * X)
    assert result.scores == sympy.Matrix([[1, 0, 1], [0, 1, 1], [1, 1, 2]])
    assert result.scale == 1 / sqrt(2)
    assert result.scaled == result.scores / sqrt(2)
    assert result.shape == (3, 3, 2, 2)


def test_by_hand_weights_closed_form():
    a = exp(sqrt(2) / 2)
    weights = attention(X, X, 2 * X).weights
    expected_row_1 = [a / (2 * a + 1), 1 / (2 * a + 1), a / (2 * a + 1)]
    for got, want in zip(weights.row(0), expected_row_1):
        assert is_zero(got - want)
    assert not is_zero(weights[0, 0] - R(401, 1000))  # the rounded value is not the exact one


def test_by_hand_decimals():
    result = attention(X, X, 2 * X)
    assert result.decimals("scaled", 3) == [["0.707", "0.000", "0.707"], ["0.000", "0.707", "0.707"], ["0.707", "0.707", "1.414"]]
    assert result.decimals("weights", 3) == [["0.401", "0.198", "0.401"], ["0.198", "0.401", "0.401"], ["0.248", "0.248", "0.503"]]
    # The document prints 0.504 and 1.504 in row 3: the exact values round to 0.503, 1.503.
    assert result.decimals("output", 3) == [["1.604", "1.198"], ["1.198", "1.604"], ["1.503", "1.503"]]


def test_by_hand_causal():
    result = attention(X, X, 2 * X, mask="causal")
    a = exp(sqrt(2) / 2)
    assert result.weights.row(0) == sympy.Matrix([[1, 0, 0]])
    assert is_zero(result.weights[1, 0] - 1 / (1 + a))
    assert result.weights[1, 2] == 0 and result.weights[0, 1] == 0
    assert result.output.row(0) == sympy.Matrix([[2, 0]])  # "why is the new it [2, 0]?"
    assert result.decimals("weights", 3)[1] == ["0.330", "0.670", "0.000"]


# -- "Start with a row of numbers" (000): the grid/load/rises lab ------------------------

W_Q = sympy.eye(2)
W_K = sympy.Matrix([[1, 1], [0, 1]])
W_V = sympy.Matrix([[1, 0], [0, 2]])


def lab(**kwargs):
    return attention(X * W_Q, X * W_K, X * W_V, **kwargs)


def test_lab_projections_and_scores():
    result = lab()
    assert result.key.row(2) == sympy.Matrix([[1, 2]])
    assert result.query.row(2) == sympy.Matrix([[1, 1]])
    assert result.value.row(2) == sympy.Matrix([[1, 2]])
    assert result.scores.row(2) == sympy.Matrix([[2, 1, 3]])  # keys [1,1], [0,1], [1,2]
    assert result.scaled.row(2) == sympy.Matrix([[sqrt(2), sqrt(2) / 2, 3 * sqrt(2) / 2]])
    assert result.decimals("scaled", 3)[2] == ["1.414", "0.707", "2.121"]


def test_lab_weights_and_output_for_rises():
    result = lab()
    assert result.decimals("weights", 3)[2] == ["0.284", "0.140", "0.576"]
    assert result.decimals("output", 3)[2] == ["0.860", "1.432"]


def test_lab_zero_query_gives_uniform_weights():
    result = attention(sympy.zeros(1, 2), X * W_K, X * W_V)
    assert result.weights == sympy.Matrix([[R(1, 3)] * 3])
    assert result.output == sympy.Matrix([[R(2, 3), R(4, 3)]])


def test_lab_causal_grid_sees_only_itself():
    assert lab(mask="causal").output.row(0) == sympy.Matrix([[1, 0]])


def test_lab_value_override_shifts_second_coordinate_by_2_a3():
    before = lab()
    values = (X * W_V).as_mutable()
    values[2, 1] = 4
    after = attention(X * W_Q, X * W_K, values)
    assert after.weights == before.weights
    assert after.output[2, 0] == before.output[2, 0]
    assert is_zero(after.output[2, 1] - before.output[2, 1] - 2 * before.weights[2, 2])
    assert after.decimals("output", 3)[2][1] == "2.584"  # 1.432 + 1.152


# -- "Read a tiny attention matrix" (002): scores 0, ln 2, ln 3 --------------------------

SCORES = [[0, log(2), log(3)]]
VALUES = [[1, 0], [0, 2], [3, 1]]


def test_given_scores_row():
    result = attention_from_scores(SCORES, VALUES)
    assert result.weights == sympy.Matrix([[R(1, 6), R(1, 3), R(1, 2)]])
    assert result.output == sympy.Matrix([[R(5, 3), R(7, 6)]])


def test_given_scores_masked_versus_zeroed():
    mask = Mask.keep([[1, 1, 0]])
    masked = attention_from_scores(SCORES, VALUES, mask=mask)
    assert masked.weights == sympy.Matrix([[R(1, 3), R(2, 3), 0]])
    assert masked.output == sympy.Matrix([[R(1, 3), R(4, 3)]])
    zeroed = attention_from_scores(SCORES, VALUES, mask=mask, masking="zero_after_softmax")
    assert zeroed.weights == sympy.Matrix([[R(1, 6), R(1, 3), 0]])
    assert sum(zeroed.weights) == R(1, 2)
    assert zeroed.output != masked.output
    score_zero = attention_from_scores(SCORES, VALUES, mask=mask, masking="zero_score")
    assert score_zero.weights == sympy.Matrix([[R(1, 4), R(1, 2), R(1, 4)]])  # exp(0) = 1 stays


def test_value_replacement_exercise():
    result = attention_from_scores(SCORES, [[1, 0], [0, 20], [3, 1]], mask=Mask.keep([[1, 1, 0]]))
    assert result.output[0, 1] == R(40, 3)


def test_stable_softmax_gives_the_same_exact_weights():
    assert softmax(SCORES, stable=True) == softmax(SCORES)


# -- options, errors ---------------------------------------------------------------------


def test_scale_options():
    assert attention(X, X, X, scale="none").scaled == attention(X, X, X).scores
    assert attention(X, X, X, scale="1/2").scaled == attention(X, X, X).scores / 2
    c = sympy.Symbol("c", positive=True)
    assert attention(X, X, X, scale=c).scaled == c * attention(X, X, X).scores


def test_symbolic_scores():
    s = sympy.symbols("s1:4", real=True)
    weights = softmax([list(s)])
    assert weights[0, 0] == exp(s[0]) / (exp(s[0]) + exp(s[1]) + exp(s[2]))


def test_softmax_over_the_wrong_axis_is_available_as_a_setting():
    scores = [[0, log(2)], [log(3), 0]]
    columns = softmax(scores, axis="queries")
    assert [sum(columns.col(j)) for j in range(2)] == [1, 1]
    assert columns != softmax(scores)


def test_cross_attention_shapes():
    result = attention([[1, 0]], X, [[1], [2], [3]])
    assert result.shape == (1, 3, 2, 1)
    assert result.output.shape == (1, 1)


@pytest.mark.parametrize(
    "q, k, v, message",
    [
        ([[1, 0]], [[1, 0, 1]], [[1]], r"^Q is 1x2 and K is 1x3: queries and keys must have the same width d_k$"),
        ([[1, 0]], [[1, 0], [0, 1]], [[1]], r"^K is 2x2 and V is 1x1: keys and values must have the same number of rows m$"),
    ],
    ids=["d_k", "m"],
)
def test_shape_errors(q, k, v, message):
    with pytest.raises(ShapeError, match=message):
        attention(q, k, v)


def test_mask_shape_error():
    with pytest.raises(ShapeError, match=r"^mask is 2x2 but the scores are 3x3"):
        attention(X, X, X, mask=Mask.causal(2))
    with pytest.raises(MaskError, match=r"^unknown mask 'upper'"):
        attention(X, X, X, mask="upper")


def test_fully_masked_row_policies():
    blocked = Mask.keep([[1, 1, 1], [0, 0, 0], [1, 1, 1]])
    with pytest.raises(EmptyRowError, match=r"^row 2 allows no key"):
        attention(X, X, X, mask=blocked).weights  # noqa: B018 -- the property raises
    assert attention(X, X, X, mask=blocked, on_empty_row="zeros").weights.row(1) == sympy.zeros(1, 3)
    assert attention(X, X, X, mask=blocked, on_empty_row="uniform").weights.row(1) == sympy.Matrix([[R(1, 3)] * 3])
    assert all(w is sympy.nan for w in attention(X, X, X, mask=blocked, on_empty_row="nan").weights.row(1))
    assert attention(X, X, X, mask=blocked, on_empty_row="nan").decimals("weights", 3)[1] == ["nan"] * 3
    with pytest.raises(MaskError, match=r"^unknown on_empty_row 'skip'"):
        attention(X, X, X, on_empty_row="skip")


# -- properties --------------------------------------------------------------------------

small = st.fractions(min_value=-3, max_value=3, max_denominator=4).map(lambda f: R(f.numerator, f.denominator))


@st.composite
def problems(draw, allow_cross=True):
    n = draw(st.integers(1, 3))
    m = draw(st.integers(1, 3)) if allow_cross else n
    d_k, d_v = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    def matrix(r, c):
        return sympy.Matrix(draw(st.lists(st.lists(small, min_size=c, max_size=c), min_size=r, max_size=r)))

    grid = draw(st.lists(st.lists(st.booleans(), min_size=m, max_size=m), min_size=n, max_size=n))
    for row in grid:  # at least one allowed key per row
        row[draw(st.integers(0, m - 1))] = True
    return matrix(n, d_k), matrix(m, d_k), matrix(m, d_v), Mask.keep(grid)


@given(problems())
def test_rows_sum_to_one_and_blocked_weights_are_zero(problem):
    Q, K, V, mask = problem
    weights = attention(Q, K, V, mask=mask).weights
    for i in range(weights.rows):
        assert sympy.simplify(sympy.together(sum(weights.row(i)))) == 1
        for j in range(weights.cols):
            if not mask.is_allowed(i, j):
                assert weights[i, j] == 0
            else:
                assert weights[i, j] != 0


@given(problems(), small)
def test_shift_invariance_and_stable_form(problem, shift):
    Q, K, V, mask = problem
    scores = attention(Q, K, V, mask=mask).scaled
    plain = softmax(scores, mask)
    shifted = softmax(scores.applyfunc(lambda s: s + shift), mask)
    stable = softmax(scores, mask, stable=True)
    for a, b, c in zip(plain, shifted, stable):
        assert is_zero(a - b) and is_zero(a - c)


@given(problems())
def test_outputs_lie_between_allowed_values(problem):
    Q, K, V, mask = problem
    result = attention(Q, K, V, mask=mask, scale="none")
    bounds = result.intervals("output", 128)
    for i in range(V.rows and result.output.rows):
        for c in range(V.cols):
            allowed = [V[j, c] for j in mask.allowed_keys(i)]
            assert min(allowed) <= bounds[i][c].upper() and bounds[i][c].lower() <= max(allowed)
            assert is_zero(result.output[i, c] - sum(result.weights[i, j] * V[j, c] for j in range(V.rows)))


@given(st.lists(st.tuples(small, st.sampled_from([0, 1, R(1, 2), -R(3, 4), log(2), 2 + log(3)])), min_size=1, max_size=6))
def test_fast_combination_is_identical_to_sympys_own_sum(terms):
    from symbolic_attn.model.attention import _combination

    coefficients = [c for c, _ in terms]
    exponentials = [exp(s) for _, s in terms]
    fast = _combination(coefficients, exponentials)
    assert fast == sympy.Add(*[c * e for c, e in terms and zip(coefficients, exponentials)])
    assert fast.args == sympy.Add(*[c * e for c, e in zip(coefficients, exponentials)]).args


# -- lazy scores: rational Q K^T is one python-flint product, read only when asked -----------


def test_lazy_scores_equal_the_sympy_product():
    Q = sympy.Matrix([[R(1, 2), -3], [0, R(2, 7)], [5, 1]])
    K = sympy.Matrix([[R(-1, 3), 2], [4, R(1, 5)]])
    result = attention(Q, K, sympy.eye(2))
    assert result.scores == Q * K.T
    assert all(entry.is_Rational for entry in result.scores)
    irrational = attention(sympy.Matrix([[sqrt(2), 1]]), K, sympy.eye(2))
    assert irrational.scores == sympy.Matrix([[sqrt(2), 1]]) * K.T
    assert irrational.shape == (1, 2, 2, 2)


def test_results_still_build_from_given_scores():
    from symbolic_attn.model.attention import AttentionResult, Options

    direct = AttentionResult(sympy.Matrix([[0, log(2)]]), value=sympy.Matrix([[1], [4]]), mask=Mask.full(1, 2),
                             options=Options())
    assert direct.weights == sympy.Matrix([[R(1, 3), R(2, 3)]]) and direct.output == sympy.Matrix([[3]])
    assert direct == attention_from_scores([[0, log(2)]], [[1], [4]])
    import dataclasses

    causal = dataclasses.replace(attention(X, X, 2 * X), mask=Mask.causal(3))
    assert causal.weights == attention(X, X, 2 * X, mask="causal").weights
    given = dataclasses.replace(direct, options=Options(masking="zero_score"))
    assert given.scores == direct.scores and given.options.masking == "zero_score"
    with pytest.raises(ShapeError, match=r"^an attention result needs the scores, or the queries and keys$"):
        AttentionResult(value=sympy.Matrix([[1]]))


def test_nan_weights_give_nan_outputs_even_against_a_zero_value():
    blocked = Mask.keep([[1, 1], [0, 0]])
    result = attention_from_scores([[0, 1], [0, 1]], [[0], [0]], mask=blocked, on_empty_row="nan")
    assert result.output[1, 0] is sympy.nan  # NaN * 0 is NaN (IEEE, SymPy and PyTorch agree)
    assert result.decimals("output", 3) == [["0.000"], ["nan"]]


@pytest.mark.parametrize("options, message", [
    ({"masking": [1]}, r"^unknown masking '\[1\]'"),
    ({"axis": "diagonal"}, r"^unknown axis 'diagonal'"),
    ({"on_empty_row": None}, r"^unknown on_empty_row 'None'"),
    ({"stable": "yes"}, r"^stable must be True or False, got 'yes'"),
    ({"bogus": 1}, r"^unknown option 'bogus'"),
], ids=["masking-list", "axis", "empty-row-none", "stable-text", "unknown-keyword"])
def test_bad_options_are_typed_errors(options, message):
    from symbolic_attn.errors import MaskError

    with pytest.raises(MaskError, match=message):
        attention([[1]], [[1]], [[1]], **options)
