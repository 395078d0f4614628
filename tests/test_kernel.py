"""The latexified kernel is the function the tests run: it equals the core's softmax exactly."""

import inspect

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import Rational, log, sqrt

from symbolic_attn.notes import kernel
from symbolic_attn.model.attention import softmax
from symbolic_attn.errors import EmptyRowError, MaskError, ShapeError, UndecidedError
from symbolic_attn.model.masks import Mask

CASES = [
    ([[0, log(2), log(3)]], [[1, 1, 1]], [[Rational(1, 6), Rational(1, 3), Rational(1, 2)]]),
    ([[0, log(2), log(3)]], [[1, 1, 0]], [[Rational(1, 3), Rational(2, 3), 0]]),
    ([[0, log(2), log(3)]], [[0, 0, 1]], [[0, 0, 1]]),
]


@pytest.mark.parametrize("scores, allowed, expected", CASES, ids=["unmasked", "third-blocked", "one-key"])
def test_kernel_reproduces_the_reference_row(scores, allowed, expected):
    assert kernel.kernel_softmax(scores, allowed) == sympy.ImmutableMatrix(expected)


def test_kernel_equals_core_on_the_by_hand_scores():
    # 004's scaled scores QK^T / sqrt(2), with and without the causal mask.
    scores = sympy.Matrix([[1, 0, 1], [0, 1, 1], [1, 1, 2]]) / sqrt(2)
    for mask in (Mask.full(3, 3), Mask.causal(3)):
        got = kernel.kernel_softmax(scores, mask.keep_grid())
        want = softmax(scores, mask)
        assert all(sympy.simplify(g - w) == 0 for g, w in zip(got, want))


small = st.fractions(min_value=-5, max_value=5, max_denominator=7).map(lambda f: Rational(f.numerator, f.denominator))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4).flatmap(lambda m: st.tuples(
    st.lists(small, min_size=m, max_size=m),
    st.lists(st.booleans(), min_size=m, max_size=m).filter(any))))
def test_kernel_equals_core_softmax_exactly(row):
    scores, flags = row
    got = kernel.kernel_softmax([scores], [flags])
    want = softmax([scores], Mask.keep([flags]))
    for g, w in zip(got, want):
        # Both exact: the kernel shifts by the max, the core does not; equal after simplify.
        assert sympy.simplify(g - w) == 0
    assert sum(got) == 1 or sympy.simplify(sum(got) - 1) == 0
    assert all(g == 0 for g, flag in zip(got, flags) if not flag)


@pytest.mark.parametrize(
    "scores, allowed, error, message",
    [
        ([[1, 2]], [[0, 0]], EmptyRowError, r"^row 1 allows no key"),
        ([[1, 2]], [[1]], ShapeError, r"^allowed grid is not 1x2"),
        ([[1, 2]], [[1, 2]], MaskError, r"^allowed flag 2 in row 1"),
        ([[sympy.Symbol("x"), 2]], [[1, 1]], UndecidedError, r"^row 1: the kernel needs real numbers"),
    ],
    ids=["empty-row", "shape", "bad-flag", "symbolic"],
)
def test_validation_lives_outside_the_kernel(scores, allowed, error, message):
    with pytest.raises(error, match=message):
        kernel.kernel_softmax(scores, allowed)


def test_kernel_has_no_branch_to_raise():
    source = inspect.getsource(kernel.masked_softmax_weight)
    assert "raise" not in source.split('"""')[-1] and "\n    if " not in source


def test_latex_is_generated_from_the_kernel_source():
    text = kernel.kernel_latex()
    assert text.startswith(r"\begin{array}{l} \displaystyle m = \max")
    assert r"w(s, a, i, n) = \frac{a_{i} \cdot \exp" in text
    assert r"\sum_{k = 0}^{n - 1}" in text
    assert "def masked_softmax_weight(s, a, i, n):" in kernel.kernel_source()
    assert '"""' not in kernel.kernel_source()
