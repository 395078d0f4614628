"""Mask conventions both ways, and their meaning checked against the real libraries.

The library tests skip only when the library is missing *and* not listed in
SYMBOLIC_ATTN_REQUIRE; CI installs JAX and PyTorch and requires them.
"""

import numpy as np
import pytest

from symbolic_attn.errors import MaskError
from symbolic_attn.model.masks import Mask
from symbolic_attn.testing import CONVENTIONS, causal, causal_alignment, compare_attention, from_convention, to_convention

from impls.libs import jax_attention, library, torch_mha, torch_sdpa

MASKS = {
    "causal": Mask.causal(3),
    "top_left": Mask.causal(2, 4),
    "bottom_right": Mask.causal(2, 4, offset=2),
    "padding": Mask.padding(3, 4, valid=2),
    "empty_row": Mask.keep([[1, 0, 1], [0, 0, 0]]),
}


@pytest.mark.parametrize("convention", list(CONVENTIONS))
@pytest.mark.parametrize("name", list(MASKS))
def test_round_trip(convention, name):
    mask = MASKS[name]
    for dtype in ("float32", "float64"):
        assert from_convention(to_convention(mask, convention, dtype), convention) == mask


@pytest.mark.parametrize("convention,allowed,blocked", [
    ("keep", True, False), ("block", False, True), ("additive", 0.0, -np.inf),
    ("additive_min", 0.0, float(np.finfo(np.float32).min)),
], ids=lambda v: str(v))
def test_the_table(convention, allowed, blocked):
    array = to_convention(Mask.keep([[1, 0]]), convention)
    assert array.tolist() == [[allowed, blocked]]


def test_per_key_conventions():
    padding = Mask.padding(2, 3, valid=2)
    assert to_convention(padding, "key_padding").tolist() == [False, False, True]
    assert to_convention(padding, "hf_attention_mask").tolist() == [1, 1, 0]
    assert from_convention([False, False, True], "key_padding", n=2) == padding
    assert from_convention(np.array([1, 1, 0]), "hf_attention_mask", n=2) == padding
    with pytest.raises(MaskError, match=r"^a key_padding mask is one row for every query"):
        to_convention(Mask.causal(2), "key_padding")
    with pytest.raises(MaskError, match=r"^a hf_attention_mask mask gives keys only: pass n"):
        from_convention([1, 0], "hf_attention_mask")


def test_hugging_face_additive_mask_is_additive_min():
    # transformers turns attention_mask into (1 - mask) * finfo(dtype).min, broadcast over queries.
    attention_mask = np.array([1, 1, 0])
    hf = (1.0 - attention_mask[None, :].repeat(2, 0)).astype(np.float32) * np.finfo(np.float32).min
    assert np.array_equal(to_convention(from_convention(attention_mask, "hf_attention_mask", n=2), "additive_min"), hf)
    assert from_convention(hf, "additive") == Mask.padding(2, 3, valid=2)


@pytest.mark.parametrize("grid,message", [
    ([[0.0, 1.0]], r"^additive mask entry \(1,2\) is 1.0: only 0"),
    ([[0.0, -1e9]], r"^additive mask entry \(1,2\) is -1000000000.0"),
], ids=["zero-one-float", "minus-1e9"])
def test_additive_reading_is_strict(grid, message):
    with pytest.raises(MaskError, match=message):
        from_convention(np.array(grid), "additive")


def test_causal_alignments():
    assert causal(2, 4, "top_left").allowed[0] == (True, False, False, False)
    assert causal(2, 4, "bottom_right").allowed[1] == (True, True, True, True)
    assert causal_alignment(causal(3, 3)) == "both"
    assert causal_alignment(causal(2, 4, "bottom_right")) == "bottom_right"
    assert causal_alignment(MASKS["padding"]) is None
    with pytest.raises(MaskError, match=r"^unknown causal alignment 'diagonal'"):
        causal(2, 2, "diagonal")


def test_unknown_convention():
    with pytest.raises(MaskError, match=r"^unknown mask convention 'sideways'"):
        to_convention(Mask.causal(2), "sideways")


# -- the libraries' own semantics ---------------------------------------------------------

Q = [[1, 2], [-1, 1], [2, 0]]
K = [[1, 0], [0, 1], [1, 1]]
V = [[2, 0], [0, 2], [1, 3]]
PARTIAL = Mask.keep([[1, 0, 1], [1, 1, 0], [0, 1, 1]])
EMPTY = Mask.keep([[1, 0, 1], [0, 0, 0], [1, 1, 0]])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_torch_sdpa_bool_mask_means_keep_and_float_mask_is_added(dtype):
    assert compare_attention(torch_sdpa, Q, K, V, PARTIAL, dtype=dtype, mask_convention="keep").passed
    assert not compare_attention(torch_sdpa, Q, K, V, PARTIAL, dtype=dtype, mask_convention="block").passed
    assert compare_attention(torch_sdpa, Q, K, V, PARTIAL, dtype=dtype, mask_convention="additive").passed
    assert compare_attention(torch_sdpa, Q, K, V, PARTIAL, dtype=dtype, mask_convention="additive_min").passed


def test_torch_sdpa_fully_masked_row_gives_zeros():
    assert compare_attention(torch_sdpa, Q, K, V, EMPTY, empty_row="zeros").passed
    assert not compare_attention(torch_sdpa, Q, K, V, EMPTY, empty_row="uniform").passed


def test_torch_multihead_attention_masks_mean_block_and_empty_rows_give_nan():
    assert compare_attention(torch_mha, Q, K, V, PARTIAL, dtype="float64", mask_convention="block").passed
    assert not compare_attention(torch_mha, Q, K, V, PARTIAL, dtype="float64", mask_convention="keep").passed
    assert compare_attention(torch_mha, Q, K, V, EMPTY, dtype="float64", mask_convention="block", empty_row="nan").passed
    assert not compare_attention(torch_mha, Q, K, V, EMPTY, dtype="float64", mask_convention="block",
                                 empty_row="zeros").passed


def test_torch_key_padding_mask_is_the_key_padding_convention():
    padding = Mask.padding(3, 3, valid=2)

    def with_key_padding(q, k, v, mask):
        return torch_mha(q, k, v, None, key_padding_mask=to_convention(from_convention(mask, "keep"), "key_padding"))

    assert compare_attention(with_key_padding, Q, K, V, padding, dtype="float64").passed


def test_torch_is_causal_is_top_left():
    torch = library("torch")

    def is_causal(q, k, v, mask):
        t = torch.from_numpy
        return torch.nn.functional.scaled_dot_product_attention(t(q), t(k), t(v), is_causal=True)

    q, k, v = Q[:2], K, V
    assert compare_attention(is_causal, q, k, v, causal(2, 3, "top_left")).passed
    assert not compare_attention(is_causal, q, k, v, causal(2, 3, "bottom_right")).passed


def test_jax_mask_means_keep_and_bias_is_added():
    attend, biased = jax_attention(), jax_attention(bias=True)
    assert compare_attention(attend, Q, K, V, PARTIAL, mask_convention="keep").passed
    assert not compare_attention(attend, Q, K, V, PARTIAL, mask_convention="block").passed
    assert compare_attention(biased, Q, K, V, PARTIAL, mask_convention="additive").passed
    assert compare_attention(biased, Q, K, V, PARTIAL, mask_convention="additive_min").passed


def test_jax_fully_masked_row_is_uniform_with_mask_and_nan_with_minus_inf_bias():
    attend, biased = jax_attention(), jax_attention(bias=True)
    assert compare_attention(attend, Q, K, V, EMPTY, empty_row="uniform").passed
    assert not compare_attention(attend, Q, K, V, EMPTY, empty_row="zeros").passed
    assert compare_attention(biased, Q, K, V, EMPTY, mask_convention="additive", empty_row="nan").passed
    # finfo.min (Hugging Face's choice) keeps the row finite: uniform.
    assert compare_attention(biased, Q, K, V, EMPTY, mask_convention="additive_min", empty_row="uniform").passed


def test_a_required_library_that_is_missing_fails_instead_of_skipping(monkeypatch):
    import impls.libs

    monkeypatch.setattr(impls.libs, "REQUIRED", {"no_such_library_xyz"})
    with pytest.raises(pytest.fail.Exception, match=r"^no_such_library_xyz is required"):
        impls.libs.library("no_such_library_xyz")
    monkeypatch.setattr(impls.libs, "REQUIRED", set())
    with pytest.raises(pytest.skip.Exception, match=r"^no_such_library_xyz is not installed"):
        impls.libs.library("no_such_library_xyz")
