"""Library implementations under test (JAX, PyTorch), imported only when a test asks.

CI installs the libraries and lists them in ``SYMBOLIC_ATTN_REQUIRE`` (comma separated):
a required library that is missing *fails* the test instead of skipping it, so the
semantics checks can never be skipped silently there.
"""

import importlib
import os

import numpy as np
import pytest

REQUIRED = {name.strip() for name in os.environ.get("SYMBOLIC_ATTN_REQUIRE", "").split(",") if name.strip()}


def library(name):
    """The module, or a skip (a failure when CI requires it)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if name.split(".")[0] in REQUIRED:
            pytest.fail(f"{name} is required by SYMBOLIC_ATTN_REQUIRE but is not installed")
        pytest.skip(f"{name} is not installed (CI installs it and sets SYMBOLIC_ATTN_REQUIRE)")


def jax_attention(bias=False):
    """jax.nn.dot_product_attention as fn(q, k, v, mask): mask= (keep) or bias= (additive).

    JAX wants (batch, length, heads, head_dim) and d_v = d_k: the narrower of Q/K and V is
    padded with zero columns (which changes no score and no output column) and the scale
    1/sqrt(d_k) of the unpadded width is passed explicitly.
    """
    jax = library("jax")
    jnp = jax.numpy

    def attend(q, k, v, mask):
        d_k, d_v = q.shape[1], v.shape[1]
        width = max(d_k, d_v)

        def heads(a):
            return jnp.asarray(np.pad(a, ((0, 0), (0, width - a.shape[1])))[None, :, None, :])

        extra = {} if mask is None else {("bias" if bias else "mask"): jnp.asarray(mask)[None, None]}
        out = jax.nn.dot_product_attention(heads(q), heads(k), heads(v), scale=float(1 / np.sqrt(d_k)), **extra)
        return np.asarray(out)[0, :, 0, :d_v]

    return attend


def torch_sdpa(q, k, v, mask):
    """torch.nn.functional.scaled_dot_product_attention (bool mask: keep; float: additive)."""
    torch = library("torch")
    t = torch.from_numpy
    return torch.nn.functional.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=None if mask is None else t(mask))


def torch_mha(q, k, v, mask, key_padding_mask=None):
    """nn.MultiheadAttention with identity projections: plain attention, block convention,
    returning (output, weights) with need_weights=True.

    One head of width E = max(d_k, d_v): Q and K padded with zero columns (no score
    changes), V padded too (the extra output columns are dropped), and Q multiplied by
    sqrt(E / d_k) so that the module's scale 1/sqrt(E) makes 1/sqrt(d_k) (a rounding the
    bound's scale roundings cover).  Earlier this used E = d_k and failed whenever d_v != d_k.
    """
    torch = library("torch")
    d_k, d_v = q.shape[1], v.shape[1]
    E = max(d_k, d_v)
    dtype = torch.float64 if q.dtype == np.float64 else torch.float32
    module = torch.nn.MultiheadAttention(E, 1, bias=False, dtype=dtype)
    with torch.no_grad():
        module.in_proj_weight.copy_(torch.cat([torch.eye(E, dtype=dtype)] * 3))
        module.out_proj.weight.copy_(torch.eye(E, dtype=dtype))

    def pad(a):
        return torch.from_numpy(np.pad(a, ((0, 0), (0, E - a.shape[1]))))

    t = torch.from_numpy
    query = pad(q) * (np.sqrt(E / d_k) if E != d_k else 1.0)
    out, weights = module(query, pad(k), pad(v), attn_mask=None if mask is None else t(mask),
                          key_padding_mask=None if key_padding_mask is None else t(key_padding_mask), need_weights=True)
    return out.detach()[:, :d_v], weights.detach()
