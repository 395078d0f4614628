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
    """softmax(Q K^T / sqrt(d_k), masked with -inf) V; fully masked rows give zeros.
    The scale is applied to Q first, so that float16 products stay in range."""
    w = _softmax(_masked((q * _scale(q)) @ k.T, mask))
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


def scale_ignored(q, k, v, mask, scale=None):
    """Takes scale= and never uses it."""
    return correct(q, k, v, mask)


def scale_applied_twice(q, k, v, mask, scale=None):
    """Right by default; a given scale multiplies Q and then the scores."""
    if scale is None:
        return correct(q, k, v, mask)
    c = np.asarray(scale, dtype=q.dtype)
    w = _softmax(_masked((q * c) @ k.T * c, mask))
    return w @ v, w


def mask_after_softmax(q, k, v, mask):
    """Softmax over every key, then the blocked weights zeroed (no renormalization)."""
    w = _softmax((q * _scale(q)) @ k.T)
    if mask is not None:
        w = w * mask
    return w @ v, w


def filled(value):
    """masked_fill(mask == 0, value): the tutorial's -1e9, or -1e4, or finfo.min."""
    def attend(q, k, v, mask):
        s = (q * _scale(q)) @ k.T
        if mask is not None:
            fill = np.finfo(q.dtype).min if value == "min" else value
            s = np.where(mask, s, np.asarray(fill, dtype=q.dtype))
        w = _softmax(s)
        return w @ v, w
    attend.__qualname__ = f"filled_{value}"
    return attend


mask_fill_finite = filled(-1e9)


def padding_on_queries(q, k, v, mask):
    """A key padding mask (every row alike) read as padding of the queries."""
    if mask is not None and (mask == mask[0]).all() and q.shape[0] <= k.shape[0]:
        rows = mask[0][: q.shape[0]]
        mask = np.repeat(rows[:, None], k.shape[0], axis=1)
    return correct(q, k, v, mask)


def unexpected_causal(q, k, v, mask):
    """Always causal (top-left), whatever mask it is given."""
    causal = np.tril(np.ones((q.shape[0], k.shape[0]), bool))
    return correct(q, k, v, causal if mask is None else mask & causal)


def _causal_offset(mask):
    n, m = mask.shape
    for offset in range(-n, m):
        if np.array_equal(mask, np.tril(np.ones((n, m), bool), offset)):
            return offset
    return None


def kv_cache_offset(q, k, v, mask):
    """Rebuilds a causal mask one position too far (an off-by-one cache length)."""
    offset = None if mask is None else _causal_offset(mask)
    if offset is not None:
        mask = np.tril(np.ones(mask.shape, bool), offset + 1)
    return correct(q, k, v, mask)


def half_precision_overflow(q, k, v, mask):
    """Scales after the product: in float16, q . k above 65504 is inf."""
    with np.errstate(over="ignore", invalid="ignore"):
        w = _softmax(_masked(q @ k.T * _scale(q), mask))
        return w @ v, w


def float32_accurate(q, k, v, mask):
    """Computes in float32 whatever it is given (as JAX's float64 softmax does)."""
    out, w = correct(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32), mask)
    return out.astype(q.dtype), w.astype(q.dtype)


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
    "scale_ignored": scale_ignored,
    "scale_applied_twice": scale_applied_twice,
    "mask_inverted": mask_inverted,
    "mask_after_softmax": mask_after_softmax,
    "mask_fill_finite": mask_fill_finite,
    "padding_on_queries": padding_on_queries,
    "unexpected_causal": unexpected_causal,
    "causal_misaligned": causal_misaligned,
    "kv_cache_offset": kv_cache_offset,
    "softmax_axis": softmax_axis,
    "no_max_subtraction": no_max_subtraction,
    "half_precision_overflow": half_precision_overflow,
    "empty_row_policy": empty_row_policy,
    "keys_as_values": keys_as_values,
    "transposed_weights": transposed_weights,
    "float32_accurate": float32_accurate,
}
#: The dtypes a bug shows in (the others: float32 and float64).
BUG_DTYPES = {"half_precision_overflow": ["float16"], "float32_accurate": ["float64"]}


def mask_fill_finite_added(q, k, v, mask):
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
    "mask_fill_finite": mask_fill_finite_added,
    "causal_misaligned": causal_misaligned_bottom_right,
}
