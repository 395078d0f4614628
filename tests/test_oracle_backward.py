"""The backward oracle: correct backwards (torch autograd, jax.vjp, numpy by hand) never
fail their certified bounds, and each classic backward mistake fails and gets exactly its
diagnosis.  torch and jax skip locally when missing, and fail in CI when
``SYMBOLIC_ATTN_REQUIRE`` lists them (tests/impls/libs.py)."""

import json
import random
from fractions import Fraction

import numpy as np
import pytest
import sympy

from symbolic_attn.errors import MaskError, ShapeError
from symbolic_attn.model.masks import Mask
from symbolic_attn.numerics.backends import FORMATS
from symbolic_attn.numerics.backward import (assert_attention_backward_close, compare_attention_backward, jax_vjp,
                                             torch_autograd)
from symbolic_attn.numerics.backward_bounds import backward_bounds, gradient_logit_bounds
from symbolic_attn.numerics.backward_cases import GradientCase, gradient_battery, random_gradient_case

from impls.libs import library

# -- numpy backwards: the correct one and the four classic mistakes --------------------------


def _forward(q, k, mask, scale):
    c = q.dtype.type(1 / np.sqrt(q.shape[1]) if scale is None else scale)
    s = (q @ k.T) * c
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    a = np.exp(s - s.max(axis=1, keepdims=True))
    return c, a / a.sum(axis=1, keepdims=True)


def numpy_backward(q, k, v, g, mask, scale, *, jacobian="full", scaled=True, transposed=False, flash=False):
    c, a = _forward(q, k, mask, scale)
    da = g @ v.T
    if jacobian == "full":
        row = (g * (a @ v)).sum(axis=1, keepdims=True) if flash else (da * a).sum(axis=1, keepdims=True)
        ds = a * (da - row)
    elif jacobian == "diagonal":
        ds = a * da
    else:  # the row sum left out
        ds = a * (da - a * da)
    if scaled:
        ds = c * ds
    dq, dk = (ds.T @ k, ds @ q) if transposed else (ds @ k, ds.T @ q)
    return dq, dk, a.T @ g


def correct(q, k, v, g, mask, scale):
    return numpy_backward(q, k, v, g, mask, scale)


def flash_rowsum(q, k, v, g, mask, scale):
    """FlashAttention's D = rowsum(dO ⊙ O) in place of rowsum(dA ⊙ A)."""
    return numpy_backward(q, k, v, g, mask, scale, flash=True)


def logsumexp_recompute(q, k, v, g, mask, scale):
    """FlashAttention's backward: the weights recomputed as exp(t - L) from the log-sum-exp L,
    and D = rowsum(dO ⊙ O)."""
    c = q.dtype.type(1 / np.sqrt(q.shape[1]) if scale is None else scale)
    s = (q @ k.T) * c
    if mask is not None:
        s = np.where(mask, s, -np.inf)
    top = s.max(axis=1, keepdims=True)
    p = np.exp(s - (top + np.log(np.exp(s - top).sum(axis=1, keepdims=True))))
    ds = c * (p * (g @ v.T - (g * (p @ v)).sum(axis=1, keepdims=True)))
    return ds @ k, ds.T @ q, p.T @ g


def missing_scale(q, k, v, g, mask, scale):
    return numpy_backward(q, k, v, g, mask, scale, scaled=False)


def transposed_k(q, k, v, g, mask, scale):
    return numpy_backward(q, k, v, g, mask, scale, transposed=True)


def diagonal_jacobian(q, k, v, g, mask, scale):
    return numpy_backward(q, k, v, g, mask, scale, jacobian="diagonal")


def missing_rowsum(q, k, v, g, mask, scale):
    return numpy_backward(q, k, v, g, mask, scale, jacobian="no_rowsum")


BUGS = {"grad_missing_scale": missing_scale, "grad_transposed_k": transposed_k,
        "grad_diagonal_jacobian": diagonal_jacobian, "grad_missing_rowsum": missing_rowsum}

# -- forwards for the libraries' autodiff ------------------------------------------------------


def sdpa_math(q, k, v, mask, scale):
    """torch SDPA, math path (it multiplies q and k each by sqrt(scale))."""
    torch = library("torch")
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.MATH):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)


def sdpa_default(q, k, v, mask, scale):
    """torch SDPA, whichever CPU backend torch picks."""
    torch = library("torch")
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)


def torch_naive(q, k, v, mask, scale):
    torch = library("torch")
    c = 1 / q.shape[-1] ** 0.5 if scale is None else scale
    s = (q @ k.T) * c
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def jax_naive(q, k, v, mask, scale):
    jax = library("jax")
    jnp = jax.numpy
    c = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = (q @ k.T) * jnp.asarray(c, dtype=q.dtype)
    if mask is not None:
        s = jnp.where(mask, s, -jnp.inf)
    return jax.nn.softmax(s, axis=-1) @ v


@pytest.fixture(scope="module")
def jax_x64():
    jax = library("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


# -- the bound itself --------------------------------------------------------------------------


def test_sqrt_scale_is_not_exact_for_an_odd_power_of_two():
    f64 = FORMATS["float64"]
    # d_k = 4: c = 1/2 is exact, sqrt(1/2) is not (PyTorch's math path multiplies q and k by it)
    assert gradient_logit_bounds([[1, 0, 0, 0]], [[1, 0, 0, 0]], sympy.Rational(1, 2), f64)[0][0] > 0
    assert gradient_logit_bounds([[1, 0, 0, 0]], [[1, 0, 0, 0]], sympy.Rational(1, 4), f64)[0][0] == 0


def test_blocked_keys_get_no_gradient_and_no_bound():
    case = GradientCase("c", ((1,), (2,)), ((1,), (-1,)), ((1,), (2,)), ((1,), (1,)), Mask.causal(2))
    report = compare_attention_backward(correct, cases=[case])
    assert report.passed, report.table()
    one, zero = [[1.0, 0.0]], [[0.0, 0.0]]
    bounds = backward_bounds(weights=one, weight_error=[[1e-16, 0.0]], output=[[1.0]], output_error=[[1e-16]],
                             query=[[1.0]], key=[[1.0], [1.0]], value=[[1.0], [1.0]], grad=[[1.0]], dA=[[1.0, 1.0]],
                             rho=[[1.0, 1.0]], diff=zero, dscaled=zero, scale=1.0, fmt=FORMATS["float64"])
    assert bounds["dS"][0][1] == 0.0 and bounds["dS"][0][0] > 0  # the blocked key: exactly 0, no bound


# -- correct backwards never fail ----------------------------------------------------------------

NUMPY_KERNELS = {"numpy": correct, "numpy_flash_rowsum": flash_rowsum, "numpy_logsumexp": logsumexp_recompute}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kernel", sorted(NUMPY_KERNELS))
def test_numpy_backward_passes_the_battery(kernel, dtype):
    report = compare_attention_backward(NUMPY_KERNELS[kernel], dtype=dtype, cases=8)
    assert report.passed, report.table()


def _property_cases(count, seed):
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        scale = rng.choice([None, None, Fraction(1, 8), Fraction(3, 7)])
        cases.append(random_gradient_case(rng, f"p{i}", scale))
    return cases


PROPERTY = _property_cases(24, 2025)


def _torch_kernels():
    return {"sdpa_math": torch_autograd(sdpa_math), "torch_naive": torch_autograd(torch_naive)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("forward", ["sdpa_math", "torch_naive"])
def test_torch_autograd_never_fails(forward, dtype):
    library("torch")
    report = compare_attention_backward(_torch_kernels()[forward], dtype=dtype, cases=gradient_battery(0) + PROPERTY)
    assert report.passed, report.table()
    assert not any(case.notes for case in report.cases), report.table()  # float32 stayed float32


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_jax_vjp_never_fails(jax_x64, dtype):
    report = compare_attention_backward(jax_vjp(jax_naive), dtype=dtype, cases=gradient_battery(0) + PROPERTY)
    assert report.passed, report.table()
    assert not any(case.notes for case in report.cases), report.table()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_numpy_property_never_fails(dtype):
    report = compare_attention_backward(correct, dtype=dtype, cases=PROPERTY)
    assert report.passed, report.table()
    assert not any(case.notes for case in report.cases), report.table()


def _scaled_up(cases, factor):
    up = lambda rows: tuple(tuple(x * factor for x in row) for row in rows)  # noqa: E731
    return [GradientCase(c.name, up(c.q), up(c.k), c.v, c.g, c.mask, c.scale) for c in cases]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kernel", sorted(NUMPY_KERNELS))
def test_large_logits_never_fail(kernel, dtype):
    # Q and K times 16: logits up to ~500, weights near one-hot, u |L| dominates the recomputation
    report = compare_attention_backward(NUMPY_KERNELS[kernel], dtype=dtype, cases=_scaled_up(PROPERTY, 16))
    assert report.passed, report.table()


def test_a_float32_kernel_computing_in_float64_is_noted():
    def upcast(q, k, v, g, mask, scale):
        return correct(*(x.astype(np.float64) for x in (q, k, v, g)), mask, scale)

    report = compare_attention_backward(upcast, dtype="float32", cases=0)
    assert report.passed and "returned float64 gradients for float32 inputs" in report.table()


# -- the classic mistakes: each fails and gets exactly its diagnosis ------------------------------


def _square(cases):
    return [case for case in cases if case.shape[0] == case.shape[1]]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mistake", sorted(BUGS))
def test_each_mistake_gets_exactly_its_diagnosis(mistake, dtype):
    cases = gradient_battery(4)
    if mistake == "grad_transposed_k":  # dSᵀ K cannot be formed when n != m
        cases = _square(cases)
    report = compare_attention_backward(BUGS[mistake], dtype=dtype, cases=cases)
    assert not report.passed
    assert report.diagnosis == (mistake,), report.table()
    assert f"diagnosis: {mistake}" in report.table()


def test_a_missing_scale_is_invisible_when_the_scale_is_one():
    report = compare_attention_backward(missing_scale, cases=gradient_battery(0))
    assert report["one_dim"].passed and report["scale_1_8"].verdict == "fail"


def test_transposed_k_raises_on_cross_attention_and_is_not_named():
    report = compare_attention_backward(transposed_k, cases=gradient_battery(0))
    assert report["cross_attention"].verdict == "error"
    assert report.diagnosis == ()
    assert "cross_attention" in report.unexplained
    assert report.explained["grad_transposed_k"]
    assert "unexplained: cross_attention" in report.table() and "the kernel raised" in report.table()


def test_two_mistakes_at_once_get_no_single_name():
    def both(q, k, v, g, mask, scale):
        return numpy_backward(q, k, v, g, mask, scale, jacobian="diagonal", scaled=False)

    report = compare_attention_backward(both, cases=gradient_battery(0))
    assert not report.passed and report.diagnosis == ()


def test_a_kernel_returning_nan_is_not_explained():
    def nan(q, k, v, g, mask, scale):
        return tuple(np.full_like(x, np.nan) for x in (q, k, v))

    report = compare_attention_backward(nan, cases=gradient_battery(0))
    assert report.diagnosis == () and set(report.unexplained) == {c.name for c in report.cases}
    assert "no known backward mistake explains them" in report.table()


# -- the report and the errors ------------------------------------------------------------------------


def test_report_text_and_json():
    report = compare_attention_backward(diagonal_jacobian, dtype="float32", cases=0)
    lines = report.table().splitlines()
    assert lines[0].startswith("diagonal_jacobian (float32): ")
    assert len(lines) == 1 + len(report.cases) + 1 and " dQ " in lines[1] and lines[1].endswith("fail")
    data = json.loads(report.to_json())
    assert data["diagnosis"] == ["grad_diagonal_jacobian"]
    assert [s["stage"] for s in data["cases"][0]["stages"]] == ["dQ", "dK", "dV"]


def test_assert_close_raises_with_the_table():
    assert assert_attention_backward_close(correct, cases=0).passed
    with pytest.raises(AssertionError, match="diagnosis: grad_missing_rowsum"):
        assert_attention_backward_close(missing_rowsum, cases=0)


def test_mask_and_scale_overrides():
    report = compare_attention_backward(correct, cases=0, mask="causal", scale=Fraction(3, 7))
    assert report.passed and all(case.mask.startswith("causal") for case in report.cases)
    assert compare_attention_backward(correct, cases=0, mask=None, scale="default").passed


def test_typed_one_line_errors():
    with pytest.raises(ShapeError, match="cases:"):
        compare_attention_backward(correct, cases="all")
    with pytest.raises(MaskError, match="mask:"):
        compare_attention_backward(correct, cases=0, mask="block")
    with pytest.raises(ShapeError, match="scale:"):
        compare_attention_backward(correct, cases=0, scale=-1)
    bad = GradientCase("b", ((1,),), ((1,),), ((1,),), ((1, 2),))
    with pytest.raises(ShapeError, match="G 1x2"):
        compare_attention_backward(correct, cases=[bad])
    empty = GradientCase("e", ((1,), (1,)), ((1,), (2,)), ((1,), (1,)), ((1,), (1,)), Mask.keep([[1, 1], [0, 0]]))
    with pytest.raises(MaskError, match="fully masked row"):
        compare_attention_backward(correct, cases=[empty])


def test_a_kernel_returning_the_wrong_thing_is_an_error_case():
    report = compare_attention_backward(lambda q, k, v, g, mask, scale: q, cases=0)
    assert all(case.verdict == "error" for case in report.cases)
    assert "expected the tuple (dq, dk, dv)" in report.table()
