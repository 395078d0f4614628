r"""Backpropagation through multi-head attention, exactly: per head and through W_O.

The forward is :func:`~symbolic_attn.model.multihead.multihead`: head h attends with
Q_h = X W_Q^h, K_h = S W_K^h, V_h = S W_V^h (S = X for self-attention, the ``key``
sequence for cross-attention); ``concat`` = [head_1 | ... | head_H]; output = concat W_O.
For the output gradient G::

    dWO = concatᵀ G        dconcat = G W_Oᵀ   (no W_O: dconcat = G)
    head[h]: attention_backward(Q_h, K_h, V_h, dconcat's columns of head h)
    dW_Q[h] = Xᵀ dQ_h      dW_K[h] = Sᵀ dK_h      dW_V[h] = Sᵀ dV_h
    dX = Σ_h dQ_h W_Q^hᵀ (+ dK_h W_K^hᵀ + dV_h W_V^hᵀ for self-attention)
    dkey = Σ_h dK_h W_K^hᵀ + dV_h W_V^hᵀ (cross-attention only)

Every stage of each head's backward is kept as ``head[h].dQ``, ``head[h].dS``...; the
settings of :func:`~symbolic_attn.model.backward.attention_backward` (its classic
mistakes) apply to every head.

>>> t = multihead_backward([[1, 0], [0, 1]], [([[0], [0]], [[1], [0]], [[1, 0], [0, 1]])], [[1], [1]], [[1], [0]])
>>> t["dconcat"], t["dWO"].T
(Matrix([
[1, 1],
[0, 0]]), Matrix([[1/2, 1/2]]))
>>> t["head[1].dV"], t["dX"]
(Matrix([
[1/2, 1/2],
[1/2, 1/2]]), Matrix([
[1/2, 1/2],
[1/2, 1/2]]))
"""

from __future__ import annotations

import sympy

from symbolic_attn.errors import ShapeError
from symbolic_attn.exact.convert import to_matrix
from symbolic_attn.model.backward import attention_backward
from symbolic_attn.model.compose import as_operand, build_trace, product, resolve_mask
from symbolic_attn.model.multihead import head_weights, multihead
from symbolic_attn.model.trace import Trace

__all__ = ["multihead_backward"]


def multihead_backward(query, heads, WO=None, G=None, *, key=None, mask=None, scale="default", **settings) -> Trace:
    """Exact gradients of ``multihead(query, heads, WO, key=key, mask=mask, scale=scale)``
    for the output gradient ``G``: stages ``dO``, ``dWO`` (with W_O), ``dconcat``, each
    ``head[h]``'s backward, ``dW_Q[h]``, ``dW_K[h]``, ``dW_V[h]``, ``dX`` and (cross-attention)
    ``dkey``.  ``settings`` are attention_backward's (``softmax_jacobian``, ``grad_scale``,
    ``key_side``)."""
    forward = multihead(query, heads, WO, key=key, mask=mask, scale=scale)
    X = as_operand(query, "multihead query")
    source = X if key is None else as_operand(key, "multihead key")
    weights = head_weights(heads)
    if G is None:
        raise ShapeError("multihead_backward: the output gradient G is missing")
    dO = to_matrix(G, name="G")
    out = forward["output"]
    if dO.shape != out.shape:
        raise ShapeError(f"G is {dO.rows}x{dO.cols} but the multi-head output is {out.rows}x{out.cols}")
    entries: list = [("dO", dO)]
    if WO is not None:
        W = as_operand(WO, "W_O")
        entries.append(("dWO", product(forward["concat"].T, dO)))
        dconcat = product(dO, W.T)
    else:
        dconcat = dO
    entries.append(("dconcat", dconcat))
    resolved = resolve_mask(mask, X.rows, source.rows)
    dX = sympy.zeros(X.rows, X.cols)
    dkey = sympy.zeros(source.rows, source.cols)
    start = 0
    for h, (WQ, WK, WV) in enumerate(weights, start=1):
        width = WV.cols
        G_h = dconcat[:, start:start + width]
        start += width
        head = attention_backward(product(X, WQ), product(source, WK), product(source, WV), G_h, mask=resolved,
                                  scale=scale, **settings)
        entries.append((f"head[{h}]", head))
        dQ, dK, dV = head["dQ"], head["dK"], head["dV"]
        entries += [(f"dW_Q[{h}]", product(X.T, dQ)), (f"dW_K[{h}]", product(source.T, dK)),
                    (f"dW_V[{h}]", product(source.T, dV))]
        dX += product(dQ, WQ.T)
        dkey += product(dK, WK.T) + product(dV, WV.T)
    if key is None:
        entries.append(("dX", sympy.ImmutableMatrix(dX + dkey)))
    else:
        entries += [("dX", sympy.ImmutableMatrix(dX)), ("dkey", sympy.ImmutableMatrix(dkey))]
    return build_trace(entries, settings={"heads": len(weights), "mask": resolved, "scale": scale, **settings})
