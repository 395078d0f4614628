r"""The worked example of the notes' chapter "Backpropagation through attention, exactly".

Three tokens under the causal mask, with the scores of "Read a tiny attention matrix" (002):
one query dimension (d_k = 1, so the scale 1/sqrt(d_k) is 1), Q = [1, 1, 1]^T and
K = [0, ln 2, ln 3]^T, so that the scores are 0, ln 2, ln 3 and the weights rational: the
second row is 002's masked row (1/3, 2/3, 0) and the third its full row (1/6, 2/6, 3/6).
The values are 002's (1, 0), (0, 2), (3, 1); the upstream gradient G = dL/dO is chosen
by hand.  Every number comes from the exact backward pass
(:func:`~symbolic_attn.model.backward.attention_backward`, a Trace) and every claim of the
prose is decided by :func:`~symbolic_attn.notes.steps.check` while the blocks are built,
so a wrong claim stops the notes.

>>> blocks = backward_example()
>>> blocks[0].text
'Backpropagation through attention, exactly'
"""

from __future__ import annotations

import sympy
from sympy import Rational, log

from symbolic_attn.model.attention import attention
from symbolic_attn.model.backward import attention_backward
from symbolic_attn.notes.steps import check, stage_line
from symbolic_attn.render.blocks import Heading, Math, Text, matrix

__all__ = ["backward_example", "Q", "K", "V", "G"]

M = sympy.ImmutableMatrix
Q = M([[1], [1], [1]])
K = M([[0], [log(2)], [log(3)]])
V = M([[1, 0], [0, 2], [3, 1]])
#: dL/dO: the first token's loss looks at the first coordinate, the second's at the second,
#: the third's at both.
G = M([[1, 0], [0, 1], [1, 1]])


def backward_example() -> list:
    """The chapter's blocks: the forward pass, then every gradient stage, the checks."""
    forward = attention(Q, K, V, mask="causal")
    t = attention_backward(Q, K, V, G, mask="causal")
    diagonal = attention_backward(Q, K, V, G, mask="causal", softmax_jacobian="diagonal")
    A, output = forward.weights, forward.output
    check(A.row(1), M([[Rational(1, 3), Rational(2, 3), 0]]), "the second row is 002's masked row")
    check(A.row(2), M([[Rational(1, 6), Rational(2, 6), Rational(3, 6)]]), "the third row is 002's row")
    check(output.row(2), M([[Rational(5, 3), Rational(7, 6)]]), "002's output (5/3, 7/6)")
    check(t["dV"], A.T * G, "dV = A^T G")
    check(t["dA"], G * V.T, "dA = G V^T")
    rowsum = M([[sum(t["dA"][i, j] * A[i, j] for j in range(3))] for i in range(3)])
    check(t["D"], rowsum, "rowsum(dO . O) = rowsum(dA . A)")
    check(t["dScaled"], M(3, 3, lambda i, j: A[i, j] * (t["dA"][i, j] - rowsum[i, 0])), "dS = A . (dA - r)")
    for i in range(3):
        check(sum(t["dScaled"].row(i)), 0, f"row {i + 1} of dS sums to 0")
        for j in range(i + 1, 3):
            check(t["dScaled"][i, j], 0, f"the blocked score ({i + 1}, {j + 1}) has gradient exactly 0")
    check(t["dS"], t["dScaled"], "d_k = 1: the scale 1/sqrt(1) changes nothing")
    check(t["dQ"], t["dS"] * K, "dQ = dS K")
    check(t["dK"], t["dS"].T * Q, "dK = dS^T Q")
    check(diagonal["dScaled"].row(1), M([[0, Rational(4, 3), 0]]), "A . dA on the second row")
    return [
        Heading("Backpropagation through attention, exactly"),
        Text("The second half of an attention unit runs the computation backwards. A loss $L$ "
             "depends on the output $O = AV$, where $A = \\operatorname{softmax}(S)$ row by row and "
             "$S = QK^{\\mathsf T}/\\sqrt{d_k}$ with the blocked scores removed. Given "
             "$G = \\partial L / \\partial O$, the chain rule gives every other gradient in turn: "
             "$dV = A^{\\mathsf T} G$, $dA = G V^{\\mathsf T}$, then through the softmax "
             "$dS = A \\odot (dA - r)$ with the row sums $r = \\operatorname{rowsum}(dA \\odot A)$, "
             "and finally $dQ = dS\\,K/\\sqrt{d_k}$ and $dK = dS^{\\mathsf T} Q/\\sqrt{d_k}$. "
             "FlashAttention computes the row sums as $D = \\operatorname{rowsum}(dO \\odot O)$, "
             "the same numbers."),
        Text("The example has three tokens under the causal mask and the scores of “Read a tiny "
             "attention matrix”: one query dimension, so $d_k = 1$ and the scale is $1$, with "
             "$Q = [1, 1, 1]^{\\mathsf T}$ and $K = [0, \\ln 2, \\ln 3]^{\\mathsf T}$. The second "
             "token sees two keys, with the weights $1/3, 2/3$; the third sees all three, with "
             "$1/6, 2/6, 3/6$ and the output $(5/3, 7/6)$, as in that document."),
        Math((f"Q &= {matrix(Q)}, \\qquad K = {matrix(K)}, \\qquad V = {matrix(V)}",
              f"A &= {matrix(A)}, \\qquad O = AV = {matrix(output)}",
              stage_line("G = dO", t, "dO"))),
        Heading("The value and weight gradients", 2),
        Text("The output is linear in $V$ and in $A$, so these two come straight from the product rule. "
             "Row $j$ of $dV$ collects the gradient of every query that puts weight on key $j$."),
        Math((stage_line("dV = A^{\\mathsf T} G", t, "dV"),
              stage_line("dA = G V^{\\mathsf T}", t, "dA"))),
        Heading("Through the softmax", 2),
        Text("The softmax of a row couples all its entries, so its Jacobian is not diagonal: "
             "$\\partial a_j / \\partial s_k = a_j(\\delta_{jk} - a_k)$. Applied to $dA$ it gives "
             "$dS = A \\odot (dA - r)$. The row sums $r$ equal $D = \\operatorname{rowsum}(dO \\odot O)$, "
             "because $\\sum_j a_{ij}\\, (dA)_{ij} = \\sum_j a_{ij} \\sum_c g_{ic} v_{jc} = "
             "\\sum_c g_{ic}\\, o_{ic}$."),
        Math((stage_line("D = \\operatorname{rowsum}(dO \\odot O)", t, "D"),
              stage_line("dS = A \\odot (dA - D)", t, "dScaled"))),
        Text("Two facts can be read off. Each row of $dS$ sums to $0$: adding a constant to every "
             "score of a row changes nothing, so the loss cannot depend on that direction. The "
             "blocked scores above the diagonal get a gradient of exactly $0$, not a small number: "
             "they never reach the output."),
        Text("The classic mistake treats the Jacobian as diagonal and writes $dS = A \\odot dA$. On the "
             "second row that gives $[0, 4/3, 0]$ instead of $[-4/9, 4/9, 0]$. That row does not sum to "
             "$0$, which is the quickest way to spot the mistake."),
        Heading("The query and key gradients", 2),
        Text("The scores are $QK^{\\mathsf T}$ times the scale $1/\\sqrt{d_k}$, here $1$. So "
             "$dQ = dS\\,K$ and $dK = dS^{\\mathsf T} Q$, each times the scale. Forgetting that "
             "factor, or swapping $dS$ and $dS^{\\mathsf T}$ between the two, are the other "
             "classic mistakes."),
        Math((stage_line("dQ = dS\\,K", t, "dQ"),
              stage_line("dK = dS^{\\mathsf T} Q", t, "dK"))),
    ]
