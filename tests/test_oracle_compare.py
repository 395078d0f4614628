"""compare_attention: calling conventions, reports, policies, inputs, hostile results."""

import json
import math
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from symbolic_attn.errors import EmptyRowError, ShapeError
from symbolic_attn.model.masks import Mask
from symbolic_attn.testing import compare_attention

from impls import correct, correct_output_only, correct_uniform, empty_row_policy, with_scale

ROOT = Path(__file__).resolve().parent.parent
Q = [[1, 2], [-1, 1], [2, 0]]
K = [[1, 0], [0, 1], [1, 1]]
V = [[2, 0], [0, 2], [1, 3]]
EMPTY = Mask.keep([[1, 0, 1], [0, 0, 0], [1, 1, 0]])


def test_importable_without_numpy():
    code = ("import sys; sys.modules['numpy'] = None\n"
            "import symbolic_attn.testing\n"
            "try:\n    symbolic_attn.testing.compare_attention(None, [[1]], [[1]], [[1]])\n"
            "except symbolic_attn.BackendError as e:\n    print('refused:', e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused: numpy is needed")


def test_numpy_is_not_imported_by_importing_testing():
    code = "import sys, symbolic_attn.testing, symbolic_attn.numerics.diagnose; print('numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.stdout.strip() == "False", done.stderr


def test_output_only_and_output_with_weights():
    with_weights = compare_attention(correct, Q, K, V)
    only = compare_attention(correct_output_only, Q, K, V)
    assert [s.stage for s in with_weights.stages] == ["weights", "output"]
    assert [s.stage for s in only.stages] == ["output"]
    assert with_weights.passed and only.passed


def test_the_function_receives_arrays_of_the_dtype_and_the_mask_in_the_convention():
    seen = {}

    def spy(q, k, v, mask):
        seen.update(dtypes={a.dtype.name for a in (q, k, v)}, mask=mask)
        return correct(q, k, v, None if mask is None else ~mask if mask.dtype == bool else mask == 0)

    compare_attention(spy, Q, K, V, Mask.causal(3), dtype="float64", mask_convention="block")
    assert seen["dtypes"] == {"float64"}
    assert seen["mask"].tolist() == [[False, True, True], [False, False, True], [False, False, False]]
    compare_attention(spy, Q, K, V, Mask.causal(3), dtype="float32", mask_convention="additive")
    assert seen["dtypes"] == {"float32"} and seen["mask"].dtype == np.float32
    assert seen["mask"][0, 1] == -np.inf and seen["mask"][1, 0] == 0
    compare_attention(spy, Q, K, V, Mask.causal(3), mask_convention="additive_min")
    assert seen["mask"][0, 1] == np.finfo(np.float32).min


def test_mask_polarity_matters():
    # The keep-convention implementation given a block mask is wrong: the check fails.
    assert compare_attention(correct, Q, K, V, Mask.causal(3)).passed
    assert not compare_attention(correct, Q, K, V, Mask.causal(3), mask_convention="block").passed


@pytest.mark.parametrize("policy,fn,passes", [
    ("zeros", correct, True),
    ("uniform", correct_uniform, True),
    ("nan", empty_row_policy, True),
    ("uniform", correct, False),
    ("zeros", empty_row_policy, False),
    ("nan", correct_uniform, False),
], ids=["zeros", "uniform", "nan", "zeros-declared-uniform", "nan-declared-zeros", "uniform-declared-nan"])
def test_fully_masked_row_under_each_policy(policy, fn, passes):
    with np.errstate(invalid="ignore"):
        report = compare_attention(fn, Q, K, V, EMPTY, empty_row=policy)
    assert report.passed is passes


def test_fully_masked_row_with_the_default_policy_is_refused():
    with pytest.raises(EmptyRowError, match=r"^row 2 allows no key.*empty_row=\.\.\.$"):
        compare_attention(correct, Q, K, V, EMPTY)


def test_explicit_scale_is_passed_as_a_keyword():
    report = compare_attention(with_scale, Q, K, V, scale=Fraction(1, 2 ** 20))
    assert report.passed
    # An inexact scale reaches the function rounded; the bound allows for that rounding.
    assert compare_attention(with_scale, Q, K, V, scale=Fraction(1, 3), dtype="float64").passed
    # A function given one scale but using another fails.
    assert not compare_attention(lambda q, k, v, m, scale: with_scale(q, k, v, m, 2 * scale), Q, K, V, scale=1).passed


def test_inputs_not_representable_are_rounded_and_said_so():
    report = compare_attention(correct, [["1/3", 1]], K, V)
    assert report.inputs_rounded and report.passed
    assert not compare_attention(correct, Q, K, V).inputs_rounded
    assert compare_attention(correct, np.array(Q, dtype=np.float64) / 3, K, V, dtype="float32").inputs_rounded


def test_arrays_as_inputs():
    assert compare_attention(correct, np.array(Q, np.float32), np.array(K, np.float32), np.array(V, np.float32)).passed


def test_an_implementation_that_raises_is_an_error_verdict():
    def broken(q, k, v, mask):
        raise RuntimeError("boom")

    report = compare_attention(broken, Q, K, V)
    assert report.verdict == "error" and report.error == "RuntimeError: boom" and not report.passed


@pytest.mark.parametrize("returned,note", [
    (lambda q, k, v: np.zeros((2, 2)), "shape 2x2, expected 3x2"),
    (lambda q, k, v: correct(q, k, v, None)[0].T, "shape 2x3, expected 3x2"),
], ids=["too-few-rows", "transposed"])
def test_wrong_shapes_fail(returned, note):
    report = compare_attention(lambda q, k, v, mask: returned(q, k, v), Q, K, V)
    assert report.verdict == "fail" and report.stages[-1].note == note


def test_nan_and_inf_outputs_fail():
    for bad in (np.nan, np.inf):
        def fn(q, k, v, mask, bad=bad):
            out = correct(q, k, v, mask)[0]
            out[1, 1] = bad
            return out
        report = compare_attention(fn, Q, K, V)
        assert report.verdict == "fail" and report.stages[-1].max_abs_error == math.inf


def test_report_json_and_text():
    report = compare_attention(correct, Q, K, V, Mask.causal(3), name="mine")
    data = json.loads(json.dumps(report.to_dict()))
    assert {"name", "n", "m", "d_k", "d_v", "mask", "max_abs_error", "max_ulp", "bound", "verdict"} <= set(data)
    assert data["mask"] == "causal" and data["verdict"] == "pass" and data["n"] == 3
    assert str(report).startswith("mine (float32, n=3 m=3 d_k=2 d_v=2, mask causal): pass\n  weights  max error")


@pytest.mark.parametrize("kwargs,error,message", [
    ({"dtype": "float8"}, "BackendError", r"^unknown dtype 'float8'"),
    ({"mask_convention": "sideways"}, "MaskError", r"^unknown mask convention 'sideways'"),
    ({"empty_row": "ignore"}, "MaskError", r"^unknown empty-row policy 'ignore'"),
    ({"mask": Mask.causal(2)}, "ShapeError", r"^mask is 2x2 but there are 3 queries and 3 keys$"),
    ({"mask": 3}, "MaskError", r"^mask: expected a Mask"),
    ({"mask": "diagonal"}, "MaskError", r"^mask: unknown mask 'diagonal'"),
    ({"mask": [[0.0, 1.0, 1.0]] * 3, "mask_convention": "additive"}, "MaskError", r"^additive mask entry \(1,2\) is 1.0"),
], ids=["dtype", "convention", "policy", "mask-shape", "mask-type", "mask-name", "mask-zero-one-float"])
def test_bad_arguments_are_typed_errors(kwargs, error, message):
    import symbolic_attn

    with pytest.raises(getattr(symbolic_attn, error), match=message):
        compare_attention(correct, Q, K, V, **kwargs)


def test_mismatched_shapes_are_refused():
    with pytest.raises(ShapeError, match=r"^Q is 3x2, K 3x3"):
        compare_attention(correct, Q, [[1, 0, 0]] * 3, V)


@pytest.mark.parametrize("convention", ["keep", "block", "additive", "additive_min"])
def test_the_mask_may_be_given_as_an_array_in_the_convention(convention):
    from symbolic_attn.testing import to_convention

    def reads(q, k, v, mask):
        keep = mask if convention == "keep" else ~mask if convention == "block" else mask == 0
        return correct(q, k, v, keep)

    array = to_convention(Mask.causal(3), convention)
    report = compare_attention(reads, Q, K, V, array, mask_convention=convention)
    assert report.passed and report.mask == "causal"
    assert compare_attention(reads, Q, K, V, array.tolist(), mask_convention=convention).passed


def test_stages_by_name_and_headline_numbers():
    report = compare_attention(correct, Q, K, V)
    assert report["weights"].stage == "weights" and report.stage("output") is report.stages[-1]
    assert report.max_abs_error == report["output"].max_abs_error and report.bound == report["output"].bound
    with pytest.raises(KeyError):
        compare_attention(correct_output_only, Q, K, V)["weights"]


def test_cases_as_tuples_and_dicts():
    from symbolic_attn.errors import ImplementationError
    from symbolic_attn.testing import assert_attention_close

    report = assert_attention_close(correct, cases=[(Q, K, V), (Q, K, V, Mask.causal(3)),
                                                    {"name": "mine", "q": Q, "k": K, "v": V, "mask": "causal"}])
    assert [case.name for case in report.cases] == ["case_1", "case_2", "mine"]
    with pytest.raises(ImplementationError, match=r"^cases\[1\]: expected a KernelCase"):
        assert_attention_close(correct, cases=["Q K V"])
    with pytest.raises(ImplementationError, match=r"^cases\[1\]: a dict needs q, k, v"):
        assert_attention_close(correct, cases=[{"q": Q}])


def test_an_explicit_scale_with_a_four_argument_function():
    # fn(q, k, v, mask) as the issue states: the caller's scale is the one fn applies itself
    def halved(q, k, v, mask):
        s = (q @ k.T) * q.dtype.type(0.5)
        w = np.exp(s - s.max(axis=-1, keepdims=True))
        return (w / w.sum(axis=-1, keepdims=True)) @ v

    assert compare_attention(halved, Q, K, V, scale=Fraction(1, 2)).verdict == "pass"
    assert compare_attention(halved, Q, K, V, scale=Fraction(1, 3)).verdict == "fail"


def test_an_implementation_calling_exit_is_an_error_not_a_pass():
    def quits(q, k, v, mask):
        raise SystemExit(0)

    report = compare_attention(quits, Q, K, V)
    assert report.verdict == "error" and report.error.startswith("SystemExit")


@pytest.mark.parametrize("q", [[[10**40]], [[-10**39]], [["1e39"]], np.array([[1e40]])], ids=["int", "negative", "text", "array"])
def test_inputs_beyond_float32_are_a_typed_error(q):
    # 10**40 has no float32: it became inf and Fraction(inf) raised OverflowError
    with pytest.raises(ShapeError, match=r"^Q: non-finite entries \(inf or NaN\) in the float32 inputs"):
        compare_attention(correct, q, [[1]], [[1]])


def test_stages_are_found_by_name_or_position():
    report = compare_attention(correct, Q, K, V)
    assert [s.stage for s in report.stages] == ["weights", "output"]
    assert report.stages["output"] is report.stages[1] is report["output"]
    for stage in report.stages:
        assert stage.verdict == "pass" and 0 <= stage.max_abs_error <= stage.bound and stage.max_ulp >= 0
    with pytest.raises(KeyError):
        report.stages["scores"]
