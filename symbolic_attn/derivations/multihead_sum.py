"""Multi-head attention is a sum over the heads.

Concatenating the head outputs $H_1, \\dots, H_h$ (each $n \\times d_v$) and multiplying by
$W_O$ ($h d_v \\times d$) is the same as multiplying each head by its own block of rows
$W_O^{(g)}$ (rows $(g-1) d_v + 1, \\dots, g\\, d_v$) and adding:
$\\operatorname{Concat}(H_1, \\dots, H_h)\\, W_O = \\sum_{g=1}^{h} H_g W_O^{(g)}$, for every $h$ and all widths.
"""

import sympy
from sympy import Sum

from symbolic_attn.proofs.chain import Assumption, Computed, Derivation, Scope, Step
from symbolic_attn.proofs.operators import NamedOperator
from symbolic_attn.proofs.result import Case, Check, Result
from symbolic_attn.proofs.rules import split_blocks

NAME = "multihead_sum"

h, d_v = sympy.symbols("h d_v", integer=True, positive=True)
t, j, c, g, r = sympy.symbols("t j c g r", integer=True, positive=True)
C = sympy.IndexedBase("C", real=True)      # the concatenation, n x h d_v
W = sympy.IndexedBase("W_O", real=True)    # the output projection, h d_v x d
H = sympy.IndexedBase("H", real=True)      # H[g, t, r]: entry (t, r) of head g
B = sympy.IndexedBase("B", real=True)      # B[g, r, j]: entry (r, j) of the block W_O^{(g)}


def _column_of(index):
    return sympy.expand((g - 1) * d_v + r - index) == 0


def _concat(expr):
    return expr.replace(lambda e: isinstance(e, sympy.Indexed) and e.base == C and _column_of(e.indices[1]),
                        lambda e: H[g, e.indices[0], r])


def _blocks(expr):
    return expr.replace(lambda e: isinstance(e, sympy.Indexed) and e.base == W and _column_of(e.indices[0]),
                        lambda e: B[g, r, e.indices[1]])


CONCAT = Assumption("D1", "$C = \\operatorname{Concat}(H_1, \\dots, H_h)$: column $(g-1) d_v + r$ of $C$ is "
                    "column $r$ of $H_g$", r"C_{t,\,(g-1) d_v + r} = (H_g)_{t r}", rewrite=_concat)
BLOCKS = Assumption("D2", "$W_O^{(g)}$ is the $g$-th block of $d_v$ rows of $W_O$",
                    r"\left(W_O^{(g)}\right)_{r j} = (W_O)_{(g-1) d_v + r,\, j}", rewrite=_blocks)


class HeadTerm(NamedOperator, sympy.Function):
    r"""``(H_g W_O^{(g)})_{t j}``."""

    nargs = 3

    def unfold(self):
        head, row, col = self.args
        return Sum(H[head, row, r] * B[head, r, col], (r, 1, d_v))

    def _latex(self, printer, exp=None):
        head, row, col = (printer._print(a) for a in self.args)
        text = r"\left(H_{%s} W_O^{(%s)}\right)_{%s %s}" % (head, head, row, col)
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)


def sum_chain() -> Derivation:
    column = (g - 1) * d_v + r
    return Derivation(
        "Entry $(t, j)$, every $h$ and all widths",
        Sum(C[t, c] * W[c, j], (c, 1, h * d_v)),
        [
            Step(Sum(C[t, column] * W[column, j], (r, 1, d_v), (g, 1, h)),
                 "the $h d_v$ columns in $h$ blocks of $d_v$", rules=(split_blocks(d_v, g, r),)),
            Step(Sum(H[g, t, r] * B[g, r, j], (r, 1, d_v), (g, 1, h)), "the blocks are the heads",
                 using=("D1", "D2")),
            Step(Sum(HeadTerm(g, t, j), (g, 1, h)), "definition of the product $H_g W_O^{(g)}$"),
        ],
        assumptions=[CONCAT, BLOCKS],
        scope=Scope.proved("every number of heads $h$, every head width $d_v$ and every row $t$ and column $j$"),
        note="Entry $(t, j)$ of $C W_O$ is $\\sum_{c=1}^{h d_v} C_{t c} (W_O)_{c j}$.",
    )


def small_check() -> Check:
    cases = []
    for heads, width in ((1, 2), (2, 1), (2, 2), (3, 1)):
        rows, out = 2, 2
        Hs = [sympy.ImmutableMatrix(rows, width, lambda a, b, q=q: sympy.Symbol(f"h{q}_{a + 1}{b + 1}", real=True))
              for q in range(1, heads + 1)]
        W_O = sympy.ImmutableMatrix(heads * width, out, lambda a, b: sympy.Symbol(f"w_{a + 1}{b + 1}", real=True))
        concat = sympy.ImmutableMatrix(sympy.Matrix.hstack(*Hs))
        total = sum((Hs[q] * W_O[q * width:(q + 1) * width, :] for q in range(heads)), sympy.zeros(rows, out))
        cases.append(Case(f"$h = {heads}$, $d_v = {width}$",
                          Computed(r"\operatorname{Concat}(H_1, \dots, H_h) W_O", concat * W_O, "the explicit product"),
                          Computed(r"\sum_g H_g W_O^{(g)}", sympy.ImmutableMatrix(total), "the explicit sum")))
    return Check(
        "Explicit matrices (extra evidence)",
        r"\operatorname{Concat}(H_1, \dots, H_h)\, W_O = \sum_{g=1}^{h} H_g W_O^{(g)}",
        cases,
        scope=Scope.checked("$h \\le 3$, $d_v \\le 2$, two rows and two output columns, all entries symbolic"),
    )


def build() -> Result:
    return Result(
        NAME,
        "Multi-head attention as a sum over heads",
        __doc__.split("\n", 2)[2].strip(),
        [sum_chain(), small_check()],
    )
