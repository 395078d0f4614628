"""Multi-head attention as a sum over heads.

The $h$ head outputs $H_1, \\dots, H_h$ ($n \\times d_v$ each) are concatenated and multiplied
by $W_O$ ($h d_v \\times d_{\\text{model}}$).  Cutting $W_O$ into $h$ blocks of $d_v$ rows,
$W_O^{(g)}$, gives $\\operatorname{Concat}(H_1, \\dots, H_h) W_O = \\sum_{g=1}^{h} H_g W_O^{(g)}$: each head
writes into the output through its own block, independently of the others.
"""

import sympy
from sympy import Sum

from symbolic_attn.proofs.chain import Assumption, Computed, Derivation, Scope, Step
from symbolic_attn.proofs.result import Case, Check, Result

NAME = "multihead_sum"

h, d_v = sympy.symbols("h d_v", integer=True, positive=True)
r, c, t, g, u = sympy.symbols("r c t g u", integer=True, positive=True)
C = sympy.IndexedBase("C", real=True)      # the concatenation, n x h d_v
H = sympy.IndexedBase("H", real=True)      # H[g, r, u]: entry (r, u) of head g
W = sympy.IndexedBase("W", real=True)      # W_O, h d_v x d_model
B = sympy.IndexedBase("B", real=True)      # B[g, u, c]: entry (u, c) of the block W_O^(g)


class ConcatProduct(sympy.Function):
    r"""Notation ``(\operatorname{Concat}(H_1, \dots, H_h) W_O)_{rc}`` (definition D1 unfolds it)."""

    nargs = 2

    def _latex(self, printer, exp=None):
        return r"\left(\operatorname{Concat}(H_1, \dots, H_h)\, W_O\right)_{%s %s}" % tuple(
            printer._print(a) for a in self.args)


class HeadProduct(sympy.Function):
    r"""Notation ``(H_g W_O^{(g)})_{rc}`` (definition D1 unfolds it)."""

    nargs = 3

    def _latex(self, printer, exp=None):
        head, row, col = (printer._print(a) for a in self.args)
        return r"\left(H_{%s} W_O^{(%s)}\right)_{%s %s}" % (head, head, row, col)


def _products(expr):
    expr = expr.replace(lambda e: isinstance(e, ConcatProduct),
                        lambda e: Sum(C[e.args[0], t] * W[t, e.args[1]], (t, 1, h * d_v)))
    return expr.replace(lambda e: isinstance(e, HeadProduct),
                        lambda e: Sum(H[e.args[0], e.args[1], u] * B[e.args[0], u, e.args[2]], (u, 1, d_v)))


def _column(head, within):
    return (head - 1) * d_v + within


def _regroup(expr):
    """``sum_{t=1}^{h d_v} f(t) -> sum_{g=1}^{h} sum_{u=1}^{d_v} f((g-1) d_v + u)`` (assumption B1)."""
    def apply(total):
        (variable, low, high), function = total.limits[0], total.function
        if len(total.limits) != 1 or low != 1 or high != h * d_v:
            return total
        return Sum(function.xreplace({variable: _column(g, u)}), (u, 1, d_v), (g, 1, h))

    return expr.replace(lambda e: isinstance(e, Sum), apply)


def _concatenation(expr):
    return expr.replace(lambda e: isinstance(e, sympy.Indexed) and e.base == C and e.indices[1] == _column(g, u),
                        lambda e: H[g, e.indices[0], u])


def _blocks(expr):
    return expr.replace(lambda e: isinstance(e, sympy.Indexed) and e.base == B,
                        lambda e: W[_column(e.indices[0], e.indices[1]), e.indices[2]])


PRODUCTS = Assumption("D1", "matrix products entry by entry; $\\operatorname{Concat}(H_1, \\dots, H_h)$ has "
                      "$h d_v$ columns", r"(X Y)_{rc} = \sum_{t} X_{rt} Y_{tc}", rewrite=_products)
CONCAT = Assumption("D2", "column $(g - 1) d_v + u$ of the concatenation is column $u$ of head $g$",
                    r"C_{r,(g-1)d_v+u} = (H_g)_{ru}", rewrite=_concatenation)
BLOCKS = Assumption("D3", "$W_O^{(g)}$ is the $g$-th block of $d_v$ rows of $W_O$",
                    r"\left(W_O^{(g)}\right)_{uc} = (W_O)_{(g-1)d_v+u,\,c}", rewrite=_blocks)
REGROUP = Assumption(
    "B1", "regrouping a finite sum into consecutive blocks: the map $(g, u) \\mapsto (g - 1) d_v + u$ is a "
    "bijection from $\\{1..h\\} \\times \\{1..d_v\\}$ onto $\\{1..h d_v\\}$. The rule library has no rule for it, so it "
    "is stated here (checked below for $h, d_v \\le 4$)",
    r"\sum_{t=1}^{h d_v} f(t) = \sum_{g=1}^{h} \sum_{u=1}^{d_v} f\left((g-1) d_v + u\right)", rewrite=_regroup)


def entry_chain() -> Derivation:
    column = _column(g, u)
    return Derivation(
        "Entry by entry, every $h$ and every width",
        ConcatProduct(r, c),
        [
            Step(Sum(C[r, t] * W[t, c], (t, 1, h * d_v)), "definition of the matrix product", using=("D1",)),
            Step(Sum(C[r, column] * W[column, c], (u, 1, d_v), (g, 1, h)),
                 "columns grouped by head", using=("B1",)),
            Step(Sum(H[g, r, u] * W[column, c], (u, 1, d_v), (g, 1, h)), "the concatenation",
                 using=("D2",)),
            Step(Sum(H[g, r, u] * B[g, u, c], (u, 1, d_v), (g, 1, h)), "the blocks $W_O^{(g)}$",
                 using=("D3",)),
            Step(Sum(HeadProduct(g, r, c), (g, 1, h)), "definition of the matrix product", using=("D1",)),
        ],
        assumptions=[PRODUCTS, CONCAT, BLOCKS, REGROUP],
        scope=Scope.proved("every number of heads $h \\ge 1$, every $d_v \\ge 1$, every entry $(r, c)$ and all real "
                           "matrices, given the regrouping B1 (stated, not in the rule library; checked for "
                           "$h, d_v \\le 4$)"),
        note="$H_g$ is written $H_{g,r,u}$ entry by entry, $W_O^{(g)}$ is $B_{g,u,c}$ and the concatenation is $C$.",
    )


def regroup_check() -> Check:
    f = sympy.IndexedBase("f", real=True)
    cases = []
    for heads in range(1, 5):
        for width in range(1, 5):
            flat = Sum(f[t], (t, 1, heads * width)).doit()
            grouped = sum((f[(head - 1) * width + within] for head in range(1, heads + 1)
                           for within in range(1, width + 1)), sympy.Integer(0))
            cases.append(Case(f"$h = {heads}$, $d_v = {width}$", flat, grouped))
    return Check(
        "The regrouping B1, small sizes",
        r"\sum_{t=1}^{h d_v} f_t = \sum_{g=1}^{h} \sum_{u=1}^{d_v} f_{(g-1) d_v + u}",
        cases,
        scope=Scope.checked("every $h \\le 4$ and $d_v \\le 4$ with symbolic terms $f_t$"),
        note="Both sides written out term by term; the general case is the assumption B1 above.",
        summary=["$h, d_v \\in \\{1, 2, 3, 4\\}$: all 16 pairs, terms $f_1, f_2, \\dots$ symbolic"],
    )


def _symbolic(name, rows, cols):
    return sympy.ImmutableMatrix(rows, cols, lambda i, j: sympy.Symbol(f"{name}_{i + 1}{j + 1}", real=True))


def matrix_check() -> Check:
    cases, summary = [], []
    n, d_model = 2, 2
    for heads in (1, 2, 3):
        for width in (1, 2):
            outputs = [_symbolic(f"h{head}", n, width) for head in range(1, heads + 1)]
            W_O = _symbolic("w", heads * width, d_model)
            concat = sympy.ImmutableMatrix(sympy.Matrix.hstack(*outputs))
            total = sum((outputs[head] * W_O[head * width:(head + 1) * width, :] for head in range(heads)),
                        sympy.zeros(n, d_model))
            cases.append(Case(f"$h = {heads}$, $d_v = {width}$",
                              Computed(r"\operatorname{Concat}(H_1, \dots, H_h) W_O", concat * W_O),
                              Computed(r"\textstyle\sum_g H_g W_O^{(g)}", sympy.ImmutableMatrix(total))))
            summary.append(f"$h = {heads}$, $d_v = {width}$: $n = d_{{\\text{{model}}}} = 2$, every entry a symbol")
    return Check(
        "Explicit matrices (extra evidence)",
        r"\operatorname{Concat}(H_1, \dots, H_h)\, W_O = \sum_{g=1}^{h} H_g W_O^{(g)}",
        cases,
        scope=Scope.checked("$h \\le 3$, $d_v \\le 2$, $n = d_{\\text{model}} = 2$ with fully symbolic matrices"),
        note="The head outputs placed side by side, the blocks by slicing rows of $W_O$.",
        summary=summary,
    )


def build() -> Result:
    return Result(
        NAME,
        "Multi-head attention as a sum over heads",
        __doc__.split("\n", 2)[2].strip(),
        [entry_chain(), regroup_check(), matrix_check()],
    )
