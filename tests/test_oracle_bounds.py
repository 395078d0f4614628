"""The float error bounds: the standard analysis, exactness, and that they can fail."""

import math
from fractions import Fraction

import numpy as np
import pytest

from symbolic_attn.numerics.backends import FORMATS, exact_value, ulp
from symbolic_attn.numerics.bounds import logit_bounds, output_bounds, representable, weight_bounds
from symbolic_attn.testing import compare_attention

from impls import correct

F32, F64 = FORMATS["float32"], FORMATS["float64"]
Q = [[1, 2], [-1, 1], [2, 0]]
K = [[1, 0], [0, 1], [1, 1]]
V = [[2, 0], [0, 2], [1, 3]]


@pytest.mark.parametrize("fmt,u", [(F32, 2.0 ** -24), (F64, 2.0 ** -53)], ids=["float32", "float64"])
def test_gamma_is_n_u_over_1_minus_n_u(fmt, u):
    assert fmt.unit_roundoff == u
    assert fmt.gamma(10) == 10 * u / (1 - 10 * u)
    assert fmt.gamma(int(2 / u)) == math.inf


@pytest.mark.parametrize("value,fmt,expected", [
    (Fraction(1, 3), F64, False),
    (Fraction(1, 4), F32, True),
    (Fraction(2 ** 24 + 1), F32, False),
    (Fraction(2 ** 24 + 1), F64, True),
    (Fraction(2 ** 31 * 3), F32, True),
    (Fraction(1, 2 ** 149), F32, True),
    (Fraction(1, 2 ** 150), F32, False),
], ids=["third", "quarter", "2^24+1 f32", "2^24+1 f64", "3*2^31", "min subnormal", "below subnormal"])
def test_representable(value, fmt, expected):
    assert representable(value, fmt) is expected


def test_exact_dot_products_have_zero_logit_error_only_when_exact():
    assert logit_bounds([[1, 2]], [[3, 4]], 1, F32) == [[0.0]]
    # 2^24 + 1 is not a float32: the sum 2^24 + 1 is rounded, so the bound is positive.
    assert logit_bounds([[2 ** 24, 1]], [[1, 1]], 1, F32)[0][0] > 0
    assert logit_bounds([[2 ** 24, 1]], [[1, 1]], 1, F64) == [[0.0]]
    # An irrational scale is never exact.
    import sympy

    assert logit_bounds([[1, 2]], [[3, 4]], 1 / sympy.sqrt(2), F32)[0][0] > 0


def test_logit_bound_is_gamma_dk_plus_8_times_scale_times_abs_products():
    import sympy

    bound = logit_bounds([["1/3", "-1/5"]], [[1, 1]], 1 / sympy.sqrt(2), F32)[0][0]
    expected = F32.gamma(2 + 8) * (1 / math.sqrt(2)) * (1 / 3 + 1 / 5)
    assert bound == pytest.approx(expected, rel=1e-12)


def test_weight_bound_of_a_uniform_row_is_a_few_ulps():
    bound = weight_bounds([[0.0] * 4], [[0.25] * 4], [[True] * 4], [[0.0] * 4], F32)[0]
    # the worst standard kernel: online softmax (a rescaling per key) or exp(t - lse)
    assert all(0 < b < 0.25 * 80 * F32.unit_roundoff for b in bound)


def test_blocked_weights_and_zero_rows_must_be_exactly_zero_and_nan_rows_nan():
    rows = weight_bounds([[0.0, 1.0], [0.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 0.0], [math.nan] * 2],
                         [[True, False], [False, False], [False, False]], [[0.0] * 2] * 3, F32, "zeros")
    assert rows[0][1] == 0.0 and rows[1] == [0.0, 0.0]
    nan_rows = weight_bounds([[0.0, 0.0]], [[math.nan] * 2], [[False, False]], [[0.0] * 2], F32, "nan")
    assert all(math.isnan(b) for b in nan_rows[0])
    assert all(math.isnan(b) for b in output_bounds([[math.nan] * 2], nan_rows[0:1], [[1], [2]], F32)[0])


def test_a_dominant_weight_stays_tight_when_negligible_keys_have_large_logit_errors():
    # Logit errors of 1 on keys whose weight is e^-1000: the dominant weight is still a few
    # dozen ulps (the log-sum-exp form's roundings of its sum and log).
    w = weight_bounds([[0.0, -1000.0]], [[1.0, 0.0]], [[True, True]], [[1.0, 1.0]], F32)[0]
    assert w[0] < 40 * F32.unit_roundoff


def test_ulp():
    assert ulp(1.0, "float64") == 2.0 ** -52
    assert ulp(0.75, "float32") == 2.0 ** -24
    assert ulp(0.0, "float32") == 2.0 ** -149
    assert exact_value(float("nan")) is None


def _perturbed(ulps, stage="output"):
    """The correct implementation, with one entry moved by ``ulps`` ulps."""
    def fn(q, k, v, mask):
        out, w = correct(q, k, v, mask)
        target = out if stage == "output" else w
        target[0, 0] = target[0, 0] + ulps * np.spacing(target[0, 0])
        return out, w
    return fn


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_bound_can_fail_and_can_pass(dtype):
    assert compare_attention(_perturbed(0), Q, K, V, dtype=dtype).passed
    assert compare_attention(_perturbed(2), Q, K, V, dtype=dtype).passed
    report = compare_attention(_perturbed(5000), Q, K, V, dtype=dtype)
    assert report.verdict == "fail"
    output = {s.stage: s for s in report.stages}["output"]
    assert output.worst == (1, 1) and output.max_ulp > output.bound_ulp
    weights = compare_attention(_perturbed(5000, "weights"), Q, K, V, dtype=dtype)
    assert [s.verdict for s in weights.stages] == ["fail", "pass"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_correct_implementation_is_within_a_few_ulps_and_under_its_bound(dtype):
    report = compare_attention(correct, Q, K, V, dtype=dtype)
    for stage in report.stages:
        assert stage.passed
        assert stage.max_ulp < stage.bound_ulp
        assert stage.max_abs_error <= stage.bound
        assert stage.max_ulp < 20


def test_a_power_of_two_scale_is_exact_only_when_its_square_root_is():
    # c = 1/2 (d_k = 4): sqrt(1/2) is rounded on PyTorch's sqrt(c) q . sqrt(c) k path.
    assert logit_bounds([[1, 2]], [[3, 4]], Fraction(1, 2), F64)[0][0] > 0
    assert logit_bounds([[1, 2]], [[3, 4]], Fraction(1, 4), F64) == [[0.0]]


def test_log_sum_exp_softmax_is_within_the_bound_even_for_large_logits():
    from impls import _masked, _scale
    from symbolic_attn.testing import battery, run_battery

    def via_logsumexp(q, k, v, mask):
        s = _masked(q @ k.T * _scale(q), mask)
        top = s.max(axis=-1, keepdims=True)
        w = np.exp(s - (top + np.log(np.exp(s - top).sum(axis=-1, keepdims=True))))
        return w @ v, w

    large = [case for case in battery(0) if case.name == "large_scores"]
    report = run_battery(via_logsumexp, dtype="float64", cases=large)
    assert report.passed, report.table()
    assert run_battery(via_logsumexp, dtype="float64", cases=[c for c in battery(0) if c.name == "basic"]).passed
