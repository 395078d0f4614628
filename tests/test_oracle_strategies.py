"""The exported Hypothesis strategies, and property tests of the oracle built on them."""

from fractions import Fraction

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symbolic_attn.numerics.bounds import representable
from symbolic_attn.numerics.backends import FORMATS
from symbolic_attn.strategies import attention_cases, masks, rational_matrices, rationals
from symbolic_attn.testing import compare_attention

from impls import BUGGY, correct

SETTINGS = settings(max_examples=25, deadline=None, database=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 4), st.data())
def test_matrices_have_the_shape_and_are_exact(rows, cols, data):
    matrix = data.draw(rational_matrices(rows, cols))
    assert len(matrix) == rows and all(len(row) == cols for row in matrix)
    assert all(isinstance(x, Fraction) and representable(x, FORMATS["float32"]) for row in matrix for x in row)


@SETTINGS
@given(rationals(dyadic=False, max_denominator=9))
def test_general_rationals(value):
    assert isinstance(value, Fraction) and 1 <= value.denominator <= 9


@SETTINGS
@given(st.integers(1, 5), st.integers(1, 5), st.data())
def test_masks_leave_every_query_a_key(n, m, data):
    mask = data.draw(masks(n, m))
    assert mask.shape == (n, m) and mask.empty_rows() == []


@SETTINGS
@given(attention_cases())
def test_correct_float64_is_always_within_the_bound(case):
    assert compare_attention(correct, case.q, case.k, case.v, case.mask, dtype="float64").passed


@SETTINGS
@given(attention_cases(masked=False, max_n=3, max_m=3))
def test_a_wrong_scale_is_caught_whenever_it_changes_the_result(case):
    report = compare_attention(BUGGY["missing_scale"], case.q, case.k, case.v, dtype="float32")
    scores = np.array(case.q, dtype=float) @ np.array(case.k, dtype=float).T
    # With d_k = 1 the scale is 1; with equal scores in every row the scale cannot matter.
    if len(case.q[0]) > 1 and any(len(set(row)) > 1 for row in scores.tolist()) and report.passed:
        # The only other way to pass: the output does not depend on the weights (equal value rows).
        assert all(row == case.v[0] for row in case.v)
