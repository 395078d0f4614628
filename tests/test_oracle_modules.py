"""Modules and multi-head callables through the oracle's own entry points.

nn.MultiheadAttention (as a module, a factory, and through
F.multi_head_attention_forward), a nanoGPT CausalSelfAttention and a Hugging Face-style
eager_attention_forward: projections read exactly from the modules' float weights, every
head's weights and the output after W_O held to their bounds."""

from fractions import Fraction

import pytest

from symbolic_attn.errors import ShapeError
from symbolic_attn.model.masks import Mask
from symbolic_attn.numerics.modules import exact_rows, torch_functional
from symbolic_attn.testing import assert_attention_close, compare_attention, run_battery

from impls.libs import library
from impls.modules import causal_self_attention, eager_attention_forward, multihead

DTYPES = ["float32", "float64"]


@pytest.fixture(autouse=True)
def _torch():
    library("torch")


def test_weights_are_read_exactly():
    module = multihead()
    rows = exact_rows(module.in_proj_weight)
    assert all(isinstance(x, Fraction) for row in rows for x in row)
    assert float(rows[0][0]) == module.in_proj_weight[0, 0].item() and rows[0][0] == Fraction(module.in_proj_weight[0, 0].item())


@pytest.mark.parametrize("dtype", DTYPES)
def test_multihead_attention_module_passes_per_head_and_after_w_o(dtype):
    report = run_battery(multihead(dtype=dtype), cases=4, empty_row="nan")
    assert report.passed, report.table(200)
    stages = [stage.stage for stage in report.cases[0].stages]
    assert stages == ["head 1 weights", "head 2 weights", "output"]
    assert report.dtype == dtype


@pytest.mark.parametrize("dtype", DTYPES)
def test_multihead_with_other_key_and_value_widths(dtype):
    # d_v != d_k inputs: kdim and vdim differ from the embedding (the old adapter's error)
    module = multihead(embed_dim=4, heads=2, dtype=dtype, kdim=3, vdim=5)
    assert run_battery(module, cases=3).passed


def test_a_factory_and_the_functional_form():
    assert run_battery(lambda: multihead(seed=3), cases=2).passed
    assert run_battery(torch_functional(multihead(seed=4)), cases=2).passed


def test_compare_attention_takes_a_module_and_its_inputs():
    module = multihead()
    x = [[1, 0, 2, -1], [0, 1, 1, 1], ["1/2", 0, -1, 3]]
    report = compare_attention(module, x, x, x, Mask.causal(3))
    assert report.passed and report.dtype == "float32"
    with pytest.raises(ShapeError, match="the query input has width 2, the module expects 4"):
        compare_attention(module, [[1, 2]], [[1, 2]], [[1, 2]])


def test_a_module_with_a_wrong_weight_fails():
    torch = library("torch")
    module = multihead()

    class Broken(torch.nn.MultiheadAttention):
        pass

    broken = multihead()
    with torch.no_grad():
        broken.out_proj.bias += 1e-3  # the module computes with other weights than it shows
    from symbolic_attn.numerics.modules import ModuleKernel, torch_multihead

    good, bad = torch_multihead(module), torch_multihead(broken)
    lying = ModuleKernel("lying", good.projections, good.dtype, bad.call)
    report = run_battery(lying, cases=0)
    assert not report.passed
    assert assert_attention_close(module, cases=0).passed
    _ = Broken


@pytest.mark.parametrize("dtype", DTYPES)
def test_nanogpt_is_asked_only_causal_self_attention(dtype):
    report = run_battery(causal_self_attention(dtype=dtype), cases=4)
    assert report.passed, report.table(200)
    assert {case.mask for case in report.cases} <= {"causal", "all"}  # a 1 x 1 causal mask is all
    assert any(name == "cross" for name, _ in report.skipped)
    assert "skipped" in report.table()


def test_nanogpt_without_the_scale_fails():
    report = run_battery(causal_self_attention(bug="manual_unscaled"), cases=2)
    assert not report.passed


def test_hugging_face_eager_attention_forward():
    report = run_battery(eager_attention_forward, dtype="float32", cases=4, empty_row="uniform")
    assert report.passed, report.table(200)


def test_hugging_face_eager_float64_is_float32_accurate_and_nan_on_a_fully_masked_row():
    # its softmax runs in float32 (dtype=torch.float32); finfo(float64).min is -inf there
    report = run_battery(eager_attention_forward, dtype="float64", cases=4, empty_row="nan")
    assert report.diagnosis == ["float32_accurate"], report.table(200)
    # every failing case meets the float32 bound, the fully masked row's NaN included
    assert all(c.meets == "float32" for c in report.cases if not c.passed)
    assert "fully_masked_row" in [c.name for c in report.cases]


@pytest.mark.parametrize("convention", ["key_padding", "hf_attention_mask"])
def test_per_key_mask_conventions_in_compare(convention):
    import numpy as np

    from impls import correct

    def attend(q, k, v, mask):
        keep = None
        if mask is not None:
            row = ~mask if convention == "key_padding" else mask.astype(bool)
            keep = np.repeat(row[None, :], q.shape[0], axis=0)
        return correct(q, k, v, keep)

    report = run_battery(attend, cases=4, mask_convention=convention)
    assert report.passed, report.table(200)
    assert any("cannot hold this mask" in why for _, why in report.skipped)
    single = compare_attention(attend, [[1, 0], [0, 1]], [[1, 0], [0, 1], [1, 1]], [[1], [2], [3]],
                               np.array([False, False, True]) if convention == "key_padding" else np.array([1, 1, 0]),
                               mask_convention=convention)
    assert single.passed
