r"""Multi-head attention, exactly: every head its own (W_Q, W_K, W_V), outputs concatenated,
then W_O.

For head h: Q_h = X_q W_Q^h, K_h = X_kv W_K^h, V_h = X_kv W_V^h and
head_h = softmax(Q_h K_h^T / sqrt(d_k^h)) V_h through the one attention core
(:func:`~symbolic_attn.model.attention.attention`), so each head keeps its stages:
``head[h].scores``, ``head[h].scaled``, ``head[h].weights``, ``head[h].output`` (h from 1).
Then ``concat`` = [head_1 | ... | head_H] (width Σ d_v^h) and ``output`` = concat W_O.

Self-attention takes keys and values from the queries' rows; cross-attention
(``key=E``) from another sequence E, as a decoder attends to its encoder's output.

>>> t = multihead([[1, 0], [0, 1]], heads=[([[1, 0], [0, 1]], [[0, 0], [0, 0]], [[1, 0], [0, 1]])],
...               WO=[[1, 0], [0, 1]])
>>> t["head[1].weights"]
Matrix([
[1/2, 1/2],
[1/2, 1/2]])
>>> t["output"]
Matrix([
[1/2, 1/2],
[1/2, 1/2]])
>>> [p for p in t if not p.startswith("head[1].")]
['head[1]', 'concat', 'output']

``head_order="reversed"`` (heads concatenated last first) and ``project=False`` (W_O
forgotten) are classic mistakes, kept as settings of this one implementation.
"""

from __future__ import annotations

import sympy

from symbolic_attn.errors import InputLimitError, ShapeError, shown
from symbolic_attn.model.attention import attention
from symbolic_attn.model.compose import as_operand, build_trace, check_choice, check_flag, product, resolve_mask
from symbolic_attn.model.trace import Trace
from symbolic_attn.exact.limits import DEFAULT_LIMITS

__all__ = ["multihead", "head_weights", "MAX_HEADS", "HEAD_ORDERS"]

MAX_HEADS = DEFAULT_LIMITS.max_heads  # the one bound (exact.limits), as ALiBi's
HEAD_ORDERS = {"given": "head 1 first (correct)", "reversed": "the last head first (a mistake)"}


def head_weights(heads) -> list:
    """The (W_Q, W_K, W_V) triples of ``heads`` as exact matrices (one bare triple is one head)."""
    if isinstance(heads, (list, tuple)) and len(heads) == 3 and not isinstance(heads[0], (list, tuple, Trace)) \
            and isinstance(heads[0], sympy.MatrixBase):
        heads = [heads]  # one head given as a bare triple of matrices
    if not isinstance(heads, (list, tuple)) or not heads:
        raise ShapeError(f"multihead: heads must be a non-empty list of [W_Q, W_K, W_V] triples, got {shown(heads)}")
    if len(heads) > MAX_HEADS:
        raise InputLimitError(f"multihead: {len(heads)} heads exceed the limit of {MAX_HEADS}")
    result = []
    for h, head in enumerate(heads, start=1):
        if not isinstance(head, (list, tuple)) or len(head) != 3:
            raise ShapeError(f"multihead: head {h} must be [W_Q, W_K, W_V], got {shown(head)}")
        result.append(tuple(as_operand(w, f"head {h} {name}") for w, name in zip(head, ("W_Q", "W_K", "W_V"))))
    return result


def multihead(query, heads, WO=None, *, key=None, mask=None, scale="default", head_order: str = "given",
              project: bool = True, **options) -> Trace:
    """Multi-head attention of ``query`` (n x d) over ``key`` (m x d; default: the queries).

    Args:
        heads: a list of (W_Q, W_K, W_V) triples, one per head (d x d_k, d x d_k, d x d_v).
        WO: the output projection (Σ d_v x d_out); ``None`` means no projection.
        mask: 'none', 'causal', a Mask or a sized-later mask (see :mod:`.compose`), shared by all heads.
        scale: 'default' (1/sqrt(d_k) of each head), 'none' or an exact value.
        options: attention's own options (``masking``, ``on_empty_row``...).
    """
    check_choice(head_order, HEAD_ORDERS, "multihead: head_order")
    check_flag(project, "multihead: project")
    X = as_operand(query, "multihead query")
    source = X if key is None else as_operand(key, "multihead key")
    weights = head_weights(heads)
    resolved = resolve_mask(mask, X.rows, source.rows)
    entries = []
    for h, (WQ, WK, WV) in enumerate(weights, start=1):
        for name, W, rows in (("W_Q", WQ, X.cols), ("W_K", WK, source.cols), ("W_V", WV, source.cols)):
            if W.rows != rows:
                raise ShapeError(f"multihead: head {h} {name} is {W.rows}x{W.cols} but its input has width {rows}")
        if WQ.cols != WK.cols:
            raise ShapeError(f"multihead: head {h} W_Q is {WQ.rows}x{WQ.cols} and W_K {WK.rows}x{WK.cols}: d_k differs")
        result = attention(product(X, WQ), product(source, WK), product(source, WV), mask=resolved, scale=scale, **options)
        entries.append((f"head[{h}]", result.trace))
    order = [trace for _, trace in entries]
    if head_order == "reversed":
        order = order[::-1]
    concat = sympy.ImmutableMatrix.hstack(*[trace["output"] for trace in order])
    output = concat
    if WO is not None and project:
        WO = as_operand(WO, "W_O")
        if WO.rows != concat.cols:
            raise ShapeError(f"multihead: W_O is {WO.rows}x{WO.cols} but the concatenated heads are {concat.rows}x{concat.cols}")
        output = product(concat, WO)
    entries += [("concat", concat), ("output", output)]
    return build_trace(entries, settings={"heads": len(weights), "mask": resolved, "scale": scale,
                                          "head_order": head_order, "project": project and WO is not None,
                                          "cross": key is not None})
