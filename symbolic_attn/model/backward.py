r"""Backpropagation through attention and softmax, exactly, stage by stage.

Given the gradient G = dL/dO of a loss with respect to the output O = A V of
:func:`~symbolic_attn.model.attention.attention` (A = softmax of the masked scaled scores
S' = scale · Q Kᵀ), :func:`attention_backward` returns a
:class:`~symbolic_attn.model.trace.Trace` with the stages, named after the forward stages
they are the gradients of:

=========  ===========================================  =============================
stage      value                                        gradient with respect to
=========  ===========================================  =============================
``dO``     G                                            ``output``
``dV``     Aᵀ G                                         ``value``
``dA``     G Vᵀ                                         ``weights``
``D``      rowsum(dO ⊙ O) (n x 1, FlashAttention's D)   -- (equals rowsum(dA ⊙ A))
``dScaled``  A ⊙ (dA − rowsum(dA ⊙ A))                  ``scaled`` (S' = scale · Q Kᵀ)
``dS``     scale · dScaled                              ``scores`` (Q Kᵀ)
``dQ``     dS K = scale · dScaled K                     ``query``
``dK``     dSᵀ Q = scale · dScaledᵀ Q                   ``key``
=========  ===========================================  =============================

``dScaled`` is the textbook "dS = A ⊙ (dA − rowsum(dA ⊙ A))" (the gradient with respect
to the scores the softmax sees); ``dS`` follows the forward trace, whose ``scores`` are
the unscaled Q Kᵀ.  Masks are structure: a blocked score does not reach the output, so
its gradient is exactly 0 (not a small number), in ``dScaled`` and ``dS`` alike.

The settings ``grad_scale="missing"``, ``key_side="transposed"`` and
``softmax_jacobian="diagonal"`` / ``"no_rowsum"`` are the classic mistakes, kept as
settings of this one implementation so that diagnosis reproduces them
(:mod:`symbolic_attn.model.variants`).

Uniform weights (Q = 0) under a causal mask, worked by hand:

>>> t = attention_backward([[0], [0], [0]], [[1], [2], [3]], [[1], [2], [3]], [[1], [1], [1]],
...                        mask="causal", scale=1)
>>> t["dV"].T, t["D"].T
(Matrix([[11/6, 5/6, 1/3]]), Matrix([[1, 3/2, 2]]))
>>> t["dScaled"]
Matrix([
[   0,   0,   0],
[-1/4, 1/4,   0],
[-1/3,   0, 1/3]])
>>> t["dQ"].T, t["dK"].T
(Matrix([[0, 1/4, 2/3]]), Matrix([[0, 0, 0]]))
>>> softmax_backward([[0, sympy.log(2)]], [[1, 0]])["dS"]
Matrix([[2/9, -2/9]])
"""

from __future__ import annotations

import sympy

from symbolic_attn.errors import ShapeError
from symbolic_attn.exact.convert import to_matrix
from symbolic_attn.model.attention import attention, softmax
from symbolic_attn.model.compose import build_trace, check_choice, product, resolve_mask
from symbolic_attn.model.masks import Mask
from symbolic_attn.model.trace import Trace

__all__ = ["attention_backward", "softmax_backward", "softmax_input_gradient", "STAGES", "JACOBIANS",
           "GRAD_SCALES", "KEY_SIDES"]

STAGES = ("dO", "dV", "dA", "D", "dScaled", "dS", "dQ", "dK")

#: How the gradient passes back through the softmax: the full Jacobian (correct) or two
#: classic shortcuts, kept as settings so that diagnosis reuses this one implementation.
JACOBIANS = {
    "full": "dS = A ⊙ (dA − rowsum(dA ⊙ A)) (correct)",
    "diagonal": "dS = A ⊙ dA, the Jacobian taken as diag(A) (a mistake)",
    "no_rowsum": "dS = A ⊙ (dA − A ⊙ dA), the row sum left out (a mistake)",
}
GRAD_SCALES = {"applied": "dQ = scale · dScaled K, dK = scale · dScaledᵀ Q (correct)",
               "missing": "the scale left out of dQ, dK and dS (a mistake)"}
KEY_SIDES = {"correct": "dQ = dS K, dK = dSᵀ Q (correct)",
             "transposed": "dQ = dSᵀ K, dK = dS Q, the transposes swapped (a mistake; needs n = m)"}


def _gradient(G, shape, name: str) -> sympy.ImmutableMatrix:
    G = to_matrix(G, name=name)
    if G.shape != tuple(shape):
        raise ShapeError(f"{name} is {G.rows}x{G.cols} but the output it is the gradient of is "
                         f"{shape[0]}x{shape[1]}")
    return G


def softmax_input_gradient(A, dA, mask: Mask, jacobian: str = "full") -> sympy.ImmutableMatrix:
    """The gradient with respect to the (masked) scores of a row-wise softmax with weights
    ``A``, given the gradient ``dA`` with respect to the weights; exactly 0 where blocked.

    >>> softmax_input_gradient(sympy.Matrix([[sympy.Rational(1, 2)] * 2]), sympy.Matrix([[1, 0]]),
    ...                        Mask.full(1, 2))
    Matrix([[1/4, -1/4]])
    """
    check_choice(jacobian, JACOBIANS, "softmax_jacobian")
    n, m = A.shape
    rows = []
    for i in range(n):
        allowed = mask.allowed[i]
        if jacobian == "full":
            total = sympy.Add(*[dA[i, j] * A[i, j] for j in range(m) if allowed[j] and A[i, j] != 0])
            row = [A[i, j] * (dA[i, j] - total) if allowed[j] else sympy.S.Zero for j in range(m)]
        elif jacobian == "diagonal":
            row = [A[i, j] * dA[i, j] if allowed[j] else sympy.S.Zero for j in range(m)]
        else:
            row = [A[i, j] * (dA[i, j] - A[i, j] * dA[i, j]) if allowed[j] else sympy.S.Zero for j in range(m)]
        rows.append([sympy.S.Zero if entry == 0 else entry for entry in row])
    return sympy.ImmutableMatrix(rows)


def softmax_backward(S, G, mask=None, *, softmax_jacobian: str = "full") -> Trace:
    """The backward pass of a row-wise softmax A = softmax(S) with gradient ``G`` = dL/dA:
    stages ``dA`` (= G), ``weights`` (A) and ``dS`` = A ⊙ (dA − rowsum(dA ⊙ A)), exactly 0
    at every blocked position.

    >>> softmax_backward([[0, 0, 0]], [[1, 0, 0]], mask=Mask.keep([[1, 1, 0]]))["dS"]
    Matrix([[1/4, -1/4, 0]])
    """
    scores = to_matrix(S, name="S")
    resolved = resolve_mask(mask, *scores.shape)
    A = softmax(scores, resolved)
    dA = _gradient(G, A.shape, "G")
    dS = softmax_input_gradient(A, dA, resolved, softmax_jacobian)
    return build_trace([("dA", dA), ("weights", A), ("dS", dS)],
                       settings={"mask": resolved, "softmax_jacobian": softmax_jacobian})


def attention_backward(query, key, value, G, mask=None, scale="default", *, softmax_jacobian: str = "full",
                       grad_scale: str = "applied", key_side: str = "correct") -> Trace:
    """Exact gradients of attention(Q, K, V, mask, scale) for the output gradient ``G``
    (n x d_v), stage by stage (see the module's table); the forward is the one core,
    :func:`~symbolic_attn.model.attention.attention`, with the same ``scale`` ('default' is
    1/sqrt(d_k)) and mask."""
    check_choice(softmax_jacobian, JACOBIANS, "attention_backward: softmax_jacobian")
    check_choice(grad_scale, GRAD_SCALES, "attention_backward: grad_scale")
    check_choice(key_side, KEY_SIDES, "attention_backward: key_side")
    Q, K = to_matrix(query, name="Q"), to_matrix(key, name="K")
    forward = attention(Q, K, value, mask=resolve_mask(mask, Q.rows, K.rows), scale=scale)
    A, V, out = forward.weights, forward.value, forward.output
    dO = _gradient(G, out.shape, "G")
    dV = product(A.T, dO)
    dA = product(dO, V.T)
    D = sympy.ImmutableMatrix(out.rows, 1, [sympy.Add(*[dO[i, c] * out[i, c] for c in range(out.cols)])
                                            for i in range(out.rows)])
    dScaled = softmax_input_gradient(A, dA, forward.mask, softmax_jacobian)
    factor = forward.scale if grad_scale == "applied" else sympy.S.One
    dS = dScaled if factor == 1 else dScaled.applyfunc(lambda x: factor * x)
    if key_side == "correct":
        dQ, dK = product(dS, K), product(dS.T, Q)
    else:
        if Q.rows != K.rows:
            raise ShapeError(f"attention_backward: key_side 'transposed' needs as many queries as keys "
                             f"(n = {Q.rows}, m = {K.rows})")
        dQ, dK = product(dS.T, K), product(dS, Q)
    return build_trace(
        [("dO", dO), ("dV", dV), ("dA", dA), ("D", D), ("dScaled", dScaled), ("dS", dS), ("dQ", dQ), ("dK", dK)],
        settings={"scale": forward.scale, "mask": forward.mask, "softmax_jacobian": softmax_jacobian,
                  "grad_scale": grad_scale, "key_side": key_side},
    )
