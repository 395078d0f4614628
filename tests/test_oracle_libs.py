"""Real libraries through the whole battery: JAX and PyTorch against the exact result.

JAX's float64 attention is float32-accurate (it computes the softmax in float32): the
oracle fails it against the float64 bound, and says it meets the float32 one.
"""

import pytest

from symbolic_attn.testing import run_battery

from impls.libs import jax_attention, library, torch_sdpa


@pytest.fixture(scope="module")
def jax_x64():
    jax = library("jax")
    jax.config.update("jax_enable_x64", True)  # float64 arrays stay float64
    return jax


def test_jax_float32_is_within_the_bounds(jax_x64):
    report = run_battery(jax_attention(), dtype="float32", cases=2, empty_row="uniform")
    assert report.passed, report.table()


def test_jax_float64_is_only_float32_accurate(jax_x64):
    report = run_battery(jax_attention(), dtype="float64", cases=2, empty_row="uniform")
    assert not report.passed
    failing = [case for case in report.cases if not case.passed]
    assert len(failing) > len(report.cases) // 2
    assert all(case.meets == "float32" for case in failing)
    assert "float32-accurate" in report.table()
    assert report.diagnosis == ["float32_accurate"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("convention", ["keep", "additive"])
def test_torch_sdpa_is_within_the_bounds(dtype, convention):
    report = run_battery(torch_sdpa, dtype=dtype, cases=8, empty_row="zeros", mask_convention=convention)
    assert report.passed, report.table()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_torch_multihead_adapter_takes_d_v_other_than_d_k(dtype):
    from impls.libs import torch_mha

    report = run_battery(torch_mha, dtype=dtype, cases=8, mask_convention="block")
    assert report.passed, report.table(200)
    assert any(case.shape[2] != case.shape[3] for case in report.cases)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_torch_sdpa_in_half_precision_is_within_the_bounds(dtype):
    from impls.kernels import torch_sdpa as sdpa

    library("ml_dtypes")
    report = run_battery(sdpa, dtype=dtype, cases=8, empty_row="zeros")
    assert report.passed, report.table(200)
    assert report.skipped  # the cases the half formats cannot hold, listed


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_jax_in_half_precision_is_within_the_bounds(jax_x64, dtype):
    library("ml_dtypes")
    report = run_battery(jax_attention(), dtype=dtype, cases=4, empty_row="uniform")
    assert report.passed, report.table(200)
