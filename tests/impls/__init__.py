"""Numpy attention implementations for testing the oracle: correct ones and one per bug.

Every function has the oracle's signature ``fn(q, k, v, mask)`` with ``mask`` boolean,
True = may attend (the "keep" convention), and computes in the dtype of its inputs.
``BUGGY`` maps each diagnosis id to an implementation that has exactly that bug.
"""

import numpy as np


def _scale(q):
    return np.asarray(1 / np.sqrt(q.shape[-1]), dtype=q.dtype)


def _softmax(s, axis=-1):
    top = np.max(s, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)  # a fully masked row: keep exp(-inf) = 0
    e = np.exp(s - top)
    total = e.sum(axis=axis, keepdims=True)
    # Fully masked rows give zeros (PyTorch SDPA's choice), not 0/0.
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0)


def _masked(s, mask):
    return s if mask is None else np.where(mask, s, -np.inf)


def correct(q, k, v, mask):
    """softmax(Q K^T / sqrt(d_k), masked with -inf) V; fully masked rows give zeros."""
    w = _softmax(_masked(q @ k.T * _scale(q), mask))
    return w @ v, w


def correct_output_only(q, k, v, mask):
    return correct(q, k, v, mask)[0]


def correct_uniform(q, k, v, mask):
    """Fully masked rows attend uniformly (JAX, Hugging Face)."""
    s = q @ k.T * _scale(q)
    if mask is not None:
        empty = ~mask.any(axis=-1, keepdims=True)
        s = np.where(mask | empty, np.where(empty, 0, s), -np.inf)
    w = _softmax(s)
    return w @ v, w


def with_scale(q, k, v, mask, scale):
    w = _softmax(_masked(q @ k.T * np.asarray(scale, dtype=q.dtype), mask))
    return w @ v, w


def missing_scale(q, k, v, mask):
    w = _softmax(_masked(q @ k.T, mask))
    return w @ v, w


def scaled_by_dk(q, k, v, mask):
    w = _softmax(_masked(q @ k.T / np.asarray(q.shape[-1], dtype=q.dtype), mask))
    return w @ v, w


def mask_inverted(q, k, v, mask):
    w = _softmax(_masked(q @ k.T * _scale(q), None if mask is None else ~mask))
    return w @ v, w


def mask_large_negative(q, k, v, mask):
    """The tutorial masked_fill(mask == 0, -1e9)."""
    s = q @ k.T * _scale(q)
    if mask is not None:
        s = np.where(mask, s, np.asarray(-1e9, dtype=q.dtype))
    w = _softmax(s)
    return w @ v, w


def causal_misaligned(q, k, v, mask):
    """Spots a causal mask and takes an is_causal fast path, which is top-left aligned."""
    n, m = q.shape[0], k.shape[0]
    if mask is not None and n != m and np.array_equal(mask, np.tril(np.ones((n, m), bool), m - n)):
        mask = np.tril(np.ones((n, m), bool))
    return correct(q, k, v, mask)


def softmax_axis(q, k, v, mask):
    w = _softmax(_masked(q @ k.T * _scale(q), mask), axis=0)
    return w @ v, w


def no_max_subtraction(q, k, v, mask):
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(_masked(q @ k.T * _scale(q), mask))
        total = e.sum(axis=-1, keepdims=True)
        w = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return w @ v, w


def empty_row_policy(q, k, v, mask):
    """Naive -inf masking: a fully masked row is 0/0 = NaN, whatever was declared."""
    s = _masked(q @ k.T * _scale(q), mask)
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        w = e / e.sum(axis=-1, keepdims=True)
    return w @ v, w


def keys_as_values(q, k, v, mask):
    w = _softmax(_masked(q @ k.T * _scale(q), mask))
    return w @ k, w


def transposed_weights(q, k, v, mask):
    w = _softmax(_masked(q @ k.T * _scale(q), mask))
    return w.T @ v, w.T


BUGGY = {
    "missing_scale": missing_scale,
    "scaled_by_dk": scaled_by_dk,
    "mask_inverted": mask_inverted,
    "mask_large_negative": mask_large_negative,
    "causal_misaligned": causal_misaligned,
    "softmax_axis": softmax_axis,
    "no_max_subtraction": no_max_subtraction,
    "empty_row_policy": empty_row_policy,
    "keys_as_values": keys_as_values,
    "transposed_weights": transposed_weights,
}


def mask_large_negative_added(q, k, v, mask):
    """The additive form: a bias of -1e9 on blocked keys (fine until scores are that large)."""
    s = q @ k.T * _scale(q)
    if mask is not None:
        s = s + np.where(mask, 0, -1e9).astype(q.dtype)
    w = _softmax(s)
    return w @ v, w


def causal_misaligned_bottom_right(q, k, v, mask):
    """Spots a top-left causal mask and rebuilds it bottom-right aligned (a KV-cache path)."""
    n, m = q.shape[0], k.shape[0]
    if mask is not None and n != m and np.array_equal(mask, np.tril(np.ones((n, m), bool))):
        mask = np.tril(np.ones((n, m), bool), m - n)
    return correct(q, k, v, mask)


#: Second spellings of some bugs, each diagnosed the same way.
VARIANTS = {
    "mask_large_negative": mask_large_negative_added,
    "causal_misaligned": causal_misaligned_bottom_right,
}
