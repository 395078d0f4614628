"""Diagnosis: every buggy implementation gets its own id; correct ones get none."""

import numpy as np
import pytest

from symbolic_attn.numerics.battery import battery
from symbolic_attn.testing import DIAGNOSES, assert_attention_close, run_battery

from impls import BUG_DTYPES, BUGGY, correct, correct_output_only, correct_uniform

DTYPES = ["float32", "float64"]
BUG_CASES = [(name, dtype) for name in BUGGY for dtype in BUG_DTYPES.get(name, DTYPES)]


def test_every_diagnosis_id_has_a_buggy_implementation():
    assert list(BUGGY) == list(DIAGNOSES)


@pytest.mark.parametrize("name,dtype", BUG_CASES, ids=[f"{n}-{d}" for n, d in BUG_CASES])
def test_each_bug_is_diagnosed(name, dtype):
    with np.errstate(all="ignore"):
        report = run_battery(BUGGY[name], dtype=dtype, cases=4, empty_row="zeros")
    assert not report.passed
    assert report.diagnosis == [name]


@pytest.mark.parametrize("name", [n for n in BUGGY if n not in ("transposed_weights", "mask_after_softmax")], ids=lambda n: n)
def test_bugs_are_diagnosed_from_the_output_alone(name):
    def output_only(q, k, v, mask, **scale):
        return BUGGY[name](q, k, v, mask, **scale)[0]

    if "scale" not in BUGGY[name].__code__.co_varnames:
        output_only = (lambda f: lambda q, k, v, mask: f(q, k, v, mask))(output_only)
    with np.errstate(all="ignore"):
        assert run_battery(output_only, cases=2, empty_row="zeros", dtype=BUG_DTYPES.get(name, DTYPES)[0]).diagnosis == [name]


def test_transposed_weights_from_the_output_alone():
    def output_only(q, k, v, mask):
        return BUGGY["transposed_weights"](q, k, v, mask)[0]

    assert "transposed_weights" in run_battery(output_only, cases=2, empty_row="zeros").diagnosis


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("fn,policy", [(correct, "zeros"), (correct_output_only, "error"), (correct_uniform, "uniform")],
                         ids=["zeros", "output-only", "uniform"])
def test_correct_implementations_pass_with_no_diagnosis(fn, policy, dtype):
    report = run_battery(fn, dtype=dtype, cases=6, seed=3, empty_row=policy)
    assert report.passed, report.table()
    assert report.diagnosis == []


def test_the_battery_holds_the_classic_cases():
    names = {case.name for case in battery(0, empty_row="nan", takes_scale=True)}
    assert {"causal", "causal_top_left", "causal_bottom_right", "padding", "cross_attention", "ties", "large_scores",
            "large_negative_scores", "large_positive_scores", "fully_masked_row", "tiny_scale", "huge_scale",
            "explicit_scale_tiny", "explicit_scale_huge"} <= names
    shapes = {case.name: case.shape for case in battery(0)}
    n, m, d_k, d_v = shapes["cross_attention"]
    assert n != m and d_k != d_v


def test_random_cases_depend_on_the_seed_only():
    assert battery(5, seed=1) == battery(5, seed=1)
    assert battery(5, seed=1) != battery(5, seed=2)
    for case in battery(30, seed=7):
        assert case.mask is None or not case.mask.empty_rows()


def test_assert_attention_close_raises_with_the_table_and_diagnosis():
    assert assert_attention_close(correct, dtype="float64", cases=2).passed
    with pytest.raises(AssertionError, match=r"(?s)^attention implementation outside.*diagnosis:\n  missing_scale"):
        assert_attention_close(BUGGY["missing_scale"], cases=1)


def test_an_unexplained_failure_says_so():
    def noisy(q, k, v, mask):
        out, w = correct(q, k, v, mask)
        return out + 1e-3, w

    report = run_battery(noisy, cases=0)
    assert not report.passed and report.diagnosis == []
    assert "no known bug explains the failures" in report.table()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["mask_fill_finite", "causal_misaligned"])
def test_other_spellings_of_a_bug_get_the_same_id(name, dtype):
    from impls import VARIANTS

    with np.errstate(all="ignore"):
        report = run_battery(VARIANTS[name], dtype=dtype, cases=4, empty_row="zeros")
    assert report.diagnosis == [name]


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_over_queries_with_minus_inf_masks_is_one_bug(dtype):
    # A fully blocked *column* gives NaN (-inf - -inf) when softmax runs over the queries:
    # that is the softmax_axis variant with a NaN column, not an overflow.
    def over_queries(q, k, v, mask):
        s = q @ k.T / np.sqrt(np.asarray(q.shape[-1], dtype=q.dtype))
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        with np.errstate(all="ignore"):
            w = np.exp(s - s.max(axis=0, keepdims=True))
            w = w / w.sum(axis=0, keepdims=True)
        return w @ v

    assert run_battery(over_queries, dtype=dtype, cases=2).diagnosis == ["softmax_axis"]


def test_capabilities_skip_what_a_kernel_cannot_take_and_say_so():
    from symbolic_attn.testing import Capabilities

    def causal_only(q, k, v, mask):
        assert mask is None
        return correct(q, k, v, np.tril(np.ones((q.shape[0], k.shape[0]), bool)))

    report = run_battery(causal_only, cases=4, capabilities=Capabilities(causal_only=True))
    assert report.passed, report.table()
    assert {case.mask for case in report.cases} == {"causal"}
    assert ("cross_attention", "the kernel is causal-only: n != m") in report.skipped
    assert "skipped" in report.table() and report.to_dict()["skipped"]

    def same_dims(q, k, v, mask):
        assert q.shape[1] == v.shape[1]
        return correct(q, k, v, mask)

    same_dims.attention_capabilities = Capabilities(same_dims=True)
    report = run_battery(same_dims, cases=4)
    assert report.passed and any(name == "cross_attention" for name, _ in report.skipped)


def test_an_unexplained_mix_lists_the_candidates_and_the_rest():
    from impls import BUGGY

    def two_bugs(q, k, v, mask):  # forgets the scale on square cases, inverts the mask otherwise
        bug = "missing_scale" if q.shape[0] == k.shape[0] else "mask_inverted"
        return BUGGY[bug](q, k, v, mask)

    with np.errstate(all="ignore"):
        report = run_battery(two_bugs, cases=4)
    assert report.diagnosis == []
    table = report.table(200)
    assert "no known bug explains every failing case" in table
    assert any(name == "missing_scale" for name, _ in report.partial)


def test_the_fill_found_and_the_offset_found_are_named():
    from impls import BUGGY, filled

    with np.errstate(all="ignore"):
        for value, label in ((-1e4, "fill -10000"), (-1e9, "fill -1e+09")):
            report = run_battery(filled(value), cases=2, empty_row="zeros")
            assert report.diagnosis == ["mask_fill_finite"] and dict(report.found)["mask_fill_finite"] == (label,)
        # finfo.min only ever shows on a fully masked row, as a uniform row: that policy
        report = run_battery(filled("min"), cases=2, empty_row="zeros")
        assert report.diagnosis == ["empty_row_policy"]
        report = run_battery(BUGGY["kv_cache_offset"], cases=4, empty_row="zeros")
        assert report.diagnosis == ["kv_cache_offset"] and dict(report.found)["kv_cache_offset"] == ("off by +1",)


def test_nan_everywhere_gets_no_bug_name():
    def nan(q, k, v, mask):
        return np.full((q.shape[0], v.shape[1]), np.nan, dtype=q.dtype)

    report = run_battery(nan, cases=2, empty_row="nan")
    assert not report.passed and report.diagnosis == []
