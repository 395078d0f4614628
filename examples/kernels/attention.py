"""Two numpy attention kernels for `symbolic-attn compare` (see the README).

`attention` is correct; `unscaled` forgets the 1/sqrt(d_k) scale, and `compare` names
that bug.  Both take q (n x d_k), k (m x d_k), v (m x d_v) and a boolean keep-mask (n x m,
True = may attend; None when the case has no mask) and return (output, weights).
"""

import numpy as np


def _attention(q, k, v, mask, scale):
    scores = (q @ k.T) * scale
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return weights @ v, weights


def attention(q, k, v, mask):
    return _attention(q, k, v, mask, 1 / np.sqrt(q.shape[-1]).astype(q.dtype))


def unscaled(q, k, v, mask):
    return _attention(q, k, v, mask, q.dtype.type(1))
