"""Backpropagation through attention.

For $O = A V$, $A = \\operatorname{softmax}(S')$ row by row, $S' = \\tau\\, Q K^{T}$ and the
output gradient $G = \\partial L / \\partial O$: $dV = A^{T} G$; the softmax backward
$dS'_{j} = p_j (g_j - \\sum_i g_i p_i)$ for one row ($g = dA$ the gradient of the weights);
its entries sum to zero along each row; $\\sum_j dA_{ij} A_{ij} = \\sum_c G_{ic} O_{ic}$
(FlashAttention's $D$); $dQ = \\tau\\, dS' K$, $dK = \\tau\\, dS'^{T} Q$; and a blocked score
gets gradient exactly $0$, for every $n$, $m$, $d_k$, $d_v$.
"""

import sympy
from sympy import Derivative, KroneckerDelta as delta, Sum

from symbolic_attn.proofs.chain import Assumption, Derivation, Scope, Step
from symbolic_attn.proofs.operators import MaskedSoftmaxAt, NamedOperator, SoftmaxAt
from symbolic_attn.proofs.result import Case, Check, Result

NAME = "attention_gradients"

n, m, d_k, d_v = sympy.symbols("n m d_k d_v", integer=True, positive=True)
i, j, k, ell, c, a, b = sympy.symbols("i j k l c a b", integer=True, positive=True)
A, V, G, Q, K = (sympy.IndexedBase(name, real=True) for name in ("A", "V", "G", "Q", "K"))
dS = sympy.IndexedBase("dS'", real=True)
tau = sympy.Symbol("tau", positive=True)
s = sympy.IndexedBase("s", real=True)
g = sympy.IndexedBase("g", real=True)
allowed = sympy.IndexedBase("a", nonnegative=True)

ENTRY = "every $n, m, d_k, d_v \\ge 1$ and all real entries"


class Weight(NamedOperator, sympy.Function):
    r"""``p_i = softmax(s)_i`` of one row of scores, printed short."""

    nargs = 1

    def unfold(self):
        return SoftmaxAt(s[k], k, self.args[0], n)

    def _latex(self, printer, exp=None):
        text = "p_{%s}" % printer._print(self.args[0])
        return text if exp is None else "p_{%s}^{%s}" % (printer._print(self.args[0]), exp)


class MaskedWeight(NamedOperator, sympy.Function):
    r"""``q_i``: the masked softmax of one row (``a_k`` = 1 allowed, 0 blocked)."""

    nargs = 1

    def unfold(self):
        return MaskedSoftmaxAt(s[k], allowed[k], k, self.args[0], n)

    def _latex(self, printer, exp=None):
        text = "q_{%s}" % printer._print(self.args[0])
        return text if exp is None else "q_{%s}^{%s}" % (printer._print(self.args[0]), exp)


def p(index):
    return Weight(index)


def q(index):
    return MaskedWeight(index)


#: The row's own softmax backward: sum_i g_i p_i, the term every entry subtracts.
ROW_TERM = Sum(g[i] * p(i), (i, 1, n))
SOFTMAX_NOTE = ("Here $p_i = e^{s_i} / \\sum_{k=1}^{n} e^{s_k}$ is one row of the weights, $s$ its scaled scores "
                "and $g_i = dA_i$ the gradient of the loss with respect to weight $i$ (so $dA = G V^{T}$).")


def value_chain() -> Derivation:
    ranges = Assumption("A1", "the entry lies in range", r"1 \le j \le m,\ 1 \le b \le d_v", condition=[j <= m, b <= d_v])
    return Derivation(
        "$dV = A^{T} G$",
        Sum(Sum(G[i, c] * Sum(A[i, ell] * Derivative(V[ell, c], V[j, b]), (ell, 1, m)), (c, 1, d_v)), (i, 1, n)),
        [
            Step(Sum(Sum(G[i, c] * Sum(A[i, ell] * delta(ell, j) * delta(c, b), (ell, 1, m)), (c, 1, d_v)), (i, 1, n)),
                 "$\\partial V_{lc} / \\partial V_{jb} = \\delta_{lj} \\delta_{cb}$"),
            Step(Sum(Sum(G[i, c] * A[i, j] * delta(c, b), (c, 1, d_v)), (i, 1, n)), "only $l = j$ is left",
                 using=("A1",), rules=("sum.delta",)),
            Step(Sum(A[i, j] * G[i, b], (i, 1, n)), "only $c = b$ is left: $(A^{T} G)_{jb}$", using=("A1",),
                 rules=("sum.delta",)),
        ],
        assumptions=[ranges],
        scope=Scope.proved(ENTRY),
        note="The loss reaches $V_{jb}$ only through $O_{ic} = \\sum_l A_{il} V_{lc}$: the start is "
             "$\\sum_{i,c} G_{ic}\\, \\partial O_{ic} / \\partial V_{jb}$, the chain rule through $O$.",
    )


def query_chain() -> Derivation:
    ranges = Assumption("A2", "the entry lies in range", r"1 \le a \le n,\ 1 \le b \le d_k", condition=[a <= n, b <= d_k])
    return Derivation(
        "$dQ = \\tau\\, dS' K$",
        Sum(Sum(dS[i, ell] * tau * Sum(Derivative(Q[i, c], Q[a, b]) * K[ell, c], (c, 1, d_k)), (ell, 1, m)), (i, 1, n)),
        [
            Step(Sum(Sum(dS[i, ell] * tau * Sum(delta(i, a) * delta(c, b) * K[ell, c], (c, 1, d_k)), (ell, 1, m)), (i, 1, n)),
                 "$\\partial Q_{ic} / \\partial Q_{ab} = \\delta_{ia} \\delta_{cb}$"),
            Step(Sum(Sum(dS[i, ell] * tau * delta(i, a) * K[ell, b], (ell, 1, m)), (i, 1, n)), "only $c = b$ is left",
                 using=("A2",), rules=("sum.delta",)),
            Step(Sum(Sum(dS[i, ell] * tau * delta(i, a) * K[ell, b], (i, 1, n)), (ell, 1, m)), "exchange the finite sums",
                 using=("A2",), rules=("sum.swap",)),
            Step(Sum(tau * dS[a, ell] * K[ell, b], (ell, 1, m)), "only $i = a$ is left: $\\tau (dS' K)_{ab}$",
                 using=("A2",), rules=("sum.delta",)),
        ],
        assumptions=[ranges],
        scope=Scope.proved(ENTRY),
        note="The loss reaches $Q_{ab}$ only through $S'_{il} = \\tau \\sum_c Q_{ic} K_{lc}$, whose gradient is "
             "$dS'$: the start is $\\sum_{i,l} dS'_{il}\\, \\partial S'_{il} / \\partial Q_{ab}$.",
    )


def key_chain() -> Derivation:
    ranges = Assumption("A3", "the entry lies in range", r"1 \le a \le m,\ 1 \le b \le d_k", condition=[a <= m, b <= d_k])
    return Derivation(
        "$dK = \\tau\\, dS'^{T} Q$",
        Sum(Sum(dS[i, ell] * tau * Sum(Q[i, c] * Derivative(K[ell, c], K[a, b]), (c, 1, d_k)), (ell, 1, m)), (i, 1, n)),
        [
            Step(Sum(Sum(dS[i, ell] * tau * Sum(Q[i, c] * delta(ell, a) * delta(c, b), (c, 1, d_k)), (ell, 1, m)), (i, 1, n)),
                 "$\\partial K_{lc} / \\partial K_{ab} = \\delta_{la} \\delta_{cb}$"),
            Step(Sum(Sum(dS[i, ell] * tau * delta(ell, a) * Q[i, b], (ell, 1, m)), (i, 1, n)), "only $c = b$ is left",
                 using=("A3",), rules=("sum.delta",)),
            Step(Sum(tau * dS[i, a] * Q[i, b], (i, 1, n)), "only $l = a$ is left: $\\tau (dS'^{T} Q)_{ab}$",
                 using=("A3",), rules=("sum.delta",)),
        ],
        assumptions=[ranges],
        scope=Scope.proved(ENTRY),
        note="As for $dQ$, through $S'_{il} = \\tau \\sum_c Q_{ic} K_{lc}$.",
    )


ROW_RANGE = Assumption("A4", "the indices lie in $1, \\dots, n$", r"1 \le i, j \le n", condition=[i <= n, j <= n])


def softmax_chain() -> Derivation:
    return Derivation(
        "The softmax backward, every $n$",
        Sum(g[i] * Derivative(p(i), s[j]), (i, 1, n)),
        [
            Step(Sum(g[i] * p(i) * (delta(i, j) - p(j)), (i, 1, n)), "differentiate the softmax", using=("A4",)),
            Step(Sum(delta(i, j) * g[i] * p(i), (i, 1, n)) - p(j) * ROW_TERM, "linearity",
                 rules=("sum.linearity", "sum.factor_out")),
            Step(g[j] * p(j) - p(j) * ROW_TERM, "only $i = j$ is left", using=("A4",), rules=("sum.delta",)),
            Step(p(j) * (g[j] - ROW_TERM), "factor $p_j$: $A \\odot (dA - \\operatorname{rowsum}(dA \\odot A))$"),
        ],
        assumptions=[ROW_RANGE],
        scope=Scope.proved("every $n \\ge 1$, all real scores and every real $g$"),
        note=SOFTMAX_NOTE,
    )


def rows_chain() -> Derivation:
    return Derivation(
        "Each row of $dS'$ sums to zero",
        Sum(p(j) * (g[j] - ROW_TERM), (j, 1, n)),
        [
            Step(Sum(p(j) * g[j], (j, 1, n)) - ROW_TERM * Sum(p(j), (j, 1, n)), "linearity",
                 rules=("sum.linearity", "sum.factor_out")),
            Step(Sum(p(j) * g[j], (j, 1, n)) - ROW_TERM, "the weights sum to $1$"),
            Step(sympy.Integer(0), "the same sum, its index renamed"),
        ],
        scope=Scope.proved("every $n \\ge 1$, all real scores and every real $g$"),
        note=SOFTMAX_NOTE,
    )


def flash_chain() -> Derivation:
    return Derivation(
        "$\\operatorname{rowsum}(dA \\odot A) = \\operatorname{rowsum}(G \\odot O)$",
        Sum(Sum(G[i, c] * V[j, c], (c, 1, d_v)) * A[i, j], (j, 1, m)),
        [
            Step(Sum(Sum(G[i, c] * A[i, j] * V[j, c], (c, 1, d_v)), (j, 1, m)), "$A_{ij}$ into the inner sum",
                 rules=("sum.factor_out",)),
            Step(Sum(Sum(G[i, c] * A[i, j] * V[j, c], (j, 1, m)), (c, 1, d_v)), "exchange the finite sums",
                 rules=("sum.swap",)),
            Step(Sum(G[i, c] * Sum(A[i, j] * V[j, c], (j, 1, m)), (c, 1, d_v)),
                 "$G_{ic}$ out of the inner sum: $\\sum_c G_{ic} O_{ic}$", rules=("sum.factor_out",)),
        ],
        scope=Scope.proved(ENTRY),
        note="With $dA_{ij} = \\sum_c G_{ic} V_{jc}$ ($dA = G V^{T}$) and $O_{ic} = \\sum_j A_{ij} V_{jc}$.",
    )


def masked_chain() -> Derivation:
    blocked = Assumption("M1", "key $j$ is blocked in this row", r"a_j = 0", rewrite=lambda e: e.xreplace({allowed[j]: 0}))
    some = Assumption("M2", "the row allows some key", r"\sum_k a_k e^{s_k} > 0",
                      condition=[Sum(allowed[k] * sympy.exp(s[k]), (k, 1, n)) > 0])
    term = Sum(g[i] * q(i), (i, 1, n))
    return Derivation(
        "A blocked score gets gradient $0$",
        Sum(g[i] * Derivative(q(i), s[j]), (i, 1, n)),
        [
            Step(Sum(g[i] * q(i) * (delta(i, j) - q(j)), (i, 1, n)), "differentiate the masked softmax",
                 using=("A4", "M2")),
            Step(Sum(delta(i, j) * g[i] * q(i), (i, 1, n)) - q(j) * term, "linearity", using=("M2",),
                 rules=("sum.linearity", "sum.factor_out")),
            Step(g[j] * q(j) - q(j) * term, "only $i = j$ is left", using=("A4", "M2"), rules=("sum.delta",)),
            Step(sympy.Integer(0), "$q_j = a_j e^{s_j} / \\sum_k a_k e^{s_k} = 0$", using=("M1", "M2")),
        ],
        assumptions=[ROW_RANGE, blocked, some],
        scope=Scope.proved("every $n \\ge 1$, every mask that allows some key of the row, all real scores"),
        note="Here $q_i = a_i e^{s_i} / \\sum_k a_k e^{s_k}$ with $a_k = 1$ for an allowed key and $0$ for a "
             "blocked one: the blocked key leaves the denominator, and its score reaches nothing.",
    )


def library_check() -> Check:
    """The library's attention_backward against exact differentiation of its own forward."""
    from symbolic_attn.model.attention import attention
    from symbolic_attn.model.backward import attention_backward
    from symbolic_attn.model.gradient import vector_jacobian

    cases = []
    for size, mask in ((2, "none"), (2, "causal")):
        def sym(name, rows, cols):
            return sympy.ImmutableMatrix(rows, cols, lambda r, t: sympy.Symbol(f"{name}_{r + 1}{t + 1}", real=True))
        Qm, Km, Vm, Gm = sym("q", size, 1), sym("k", size, 1), sym("v", size, 1), sym("g", size, 1)
        inputs = {"Q": Qm, "K": Km, "V": Vm}
        backward = attention_backward(Qm, Km, Vm, Gm, mask=mask)
        for wrt, stage in (("Q", "dQ"), ("K", "dK"), ("V", "dV")):
            def forward(values, mask=mask):
                return attention(values["Q"], values["K"], values["V"], mask=mask).output
            cases.append(Case(f"$n = m = {size}$, mask {mask}: {stage}", backward[stage],
                              vector_jacobian(forward, inputs, Gm, wrt)))
    return Check(
        "The library's backward pass, small sizes (extra evidence)",
        r"\texttt{attention\_backward} = \text{exact differentiation of } \texttt{attention}",
        cases,
        scope=Scope.checked("$n = m = 2$, $d_k = d_v = 1$, symbolic entries, no mask and the causal mask"),
        note="The library's stage-by-stage gradients against sympy.diff of the library's exact forward pass.",
    )


def build() -> Result:
    return Result(
        NAME,
        "Backpropagation through attention",
        __doc__.split("\n", 2)[2].strip(),
        [value_chain(), softmax_chain(), rows_chain(), flash_chain(), query_chain(), key_chain(), masked_chain(),
         library_check()],
    )
