"""Correct attention kernels written the standard ways, for the no-false-alarm search.

Each is ``fn(q, k, v, mask)`` (mask: bool, True = may attend, or None) and computes in
the dtype of its inputs; bfloat16 (numpy has no bfloat16 arithmetic of its own) and, in
the mixed-precision kernels, float16 too, are computed in float32 and cast back, as
PyTorch and JAX do on CPU.
"""

import math

import numpy as np

from impls.libs import library


def _work(q):
    """The dtype a numpy kernel computes in: float32 for bfloat16."""
    return np.float32 if q.dtype.name == "bfloat16" else q.dtype


def _masked(s, mask):
    return s if mask is None else np.where(mask, s, -np.inf)


def numpy_naive(q, k, v, mask):
    """softmax(Q K^T / sqrt(d_k)) V, the scale applied to the scores."""
    dt = _work(q)
    q, k, v = (a.astype(dt) for a in (q, k, v))
    s = _masked(q @ k.T / np.sqrt(np.asarray(q.shape[-1], dtype=dt)), mask)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    w = e / e.sum(axis=-1, keepdims=True)
    return w @ v, w


def numpy_online(q, k, v, mask, block=2):
    """FlashAttention's online softmax: keys in blocks, running max and sum, rescaling."""
    dt = _work(q)
    q, k, v = (a.astype(dt) for a in (q, k, v))
    scale = np.asarray(1 / math.sqrt(q.shape[-1]), dtype=dt)
    n, m = q.shape[0], k.shape[0]
    top = np.full((n, 1), -np.inf, dtype=dt)
    total = np.zeros((n, 1), dtype=dt)
    acc = np.zeros((n, v.shape[1]), dtype=dt)
    for start in range(0, m, block):
        s = _masked((q * scale) @ k[start:start + block].T, None if mask is None else mask[:, start:start + block])
        new = np.maximum(top, s.max(axis=-1, keepdims=True))
        with np.errstate(invalid="ignore"):
            alpha = np.where(np.isfinite(new), np.exp(top - new), 0).astype(dt)
            p = np.where(np.isfinite(new), np.exp(s - new), 0).astype(dt)
        total = total * alpha + p.sum(axis=-1, keepdims=True)
        acc = acc * alpha + p @ v[start:start + block]
        top = new
    return acc / total


def numpy_logsumexp(q, k, v, mask):
    """exp(t - logsumexp(t)): the log-sum-exp form, the row maximum shifted out of the sum."""
    dt = _work(q)
    q, k, v = (a.astype(dt) for a in (q, k, v))
    s = _masked(q @ k.T * np.asarray(1 / math.sqrt(q.shape[-1]), dtype=dt), mask)
    top = s.max(axis=-1, keepdims=True)
    lse = top + np.log(np.exp(s - top).sum(axis=-1, keepdims=True))
    w = np.exp(s - lse)
    return w @ v, w


def _torch(a, torch):
    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(a)


def torch_sdpa_math(q, k, v, mask):
    """scaled_dot_product_attention on its math path (q and k each times sqrt(scale))."""
    torch = library("torch")
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.MATH):
        return torch.nn.functional.scaled_dot_product_attention(
            *(_torch(a, torch) for a in (q, k, v)), attn_mask=None if mask is None else torch.from_numpy(mask))


def torch_sdpa(q, k, v, mask):
    """scaled_dot_product_attention, the backend PyTorch picks (a fused CPU kernel)."""
    torch = library("torch")
    return torch.nn.functional.scaled_dot_product_attention(
        *(_torch(a, torch) for a in (q, k, v)), attn_mask=None if mask is None else torch.from_numpy(mask))


def torch_sqrt_scale(q, k, v, mask):
    """The scale split as sqrt(c) on q and on k, by hand, then softmax in the dtype."""
    torch = library("torch")
    q, k, v = (_torch(a, torch) for a in (q, k, v))
    r = math.sqrt(1 / math.sqrt(q.shape[-1]))
    s = (q * r) @ (k * r).T
    if mask is not None:
        s = s.masked_fill(~torch.from_numpy(mask), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


NUMPY = {"numpy_naive": numpy_naive, "numpy_online": numpy_online, "numpy_logsumexp": numpy_logsumexp}
TORCH = {"torch_sdpa_math": torch_sdpa_math, "torch_sdpa": torch_sdpa, "torch_sqrt_scale": torch_sqrt_scale}


def flax_attention(q, k, v, mask):
    """flax.linen.dot_product_attention: (batch, length, heads, depth), a bool keep mask."""
    library("jax").config.update("jax_enable_x64", True)  # float64 stays float64
    nn = library("flax.linen")
    jnp = library("jax.numpy")
    out = nn.dot_product_attention(jnp.asarray(q)[None, :, None], jnp.asarray(k)[None, :, None], jnp.asarray(v)[None, :, None],
                                   mask=None if mask is None else jnp.asarray(mask)[None, None])
    return np.asarray(out)[0, :, 0]
