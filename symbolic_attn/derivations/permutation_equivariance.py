"""Permutation equivariance of self-attention without positions.

Self-attention with every position visible and no positional information treats its
input as a set: permuting the rows of $X$ permutes the rows of the output the same way,
$\\operatorname{Attn}(PX) = P \\operatorname{Attn}(X)$ for every permutation matrix $P$.
A fixed causal mask breaks this; permuting the mask with the input ($P M P^{T}$)
restores it.
"""

import itertools

import sympy
from sympy import MatMul, MatrixExpr, MatrixSymbol

from symbolic_attn.model.attention import attention, softmax
from symbolic_attn.proofs.prove import Frac
from symbolic_attn.proofs.chain import Assumption, Computed, Derivation, Scope, Step
from symbolic_attn.proofs.operators import SoftmaxAt
from symbolic_attn.proofs.rules import Bijection, reindex_by
from symbolic_attn.model.masks import Mask
from symbolic_attn.proofs.result import Case, Check, Counterexample, Result

NAME = "permutation_equivariance"

n, d, d_k, d_v = sympy.symbols("n d d_k d_v", integer=True, positive=True)
X = MatrixSymbol("X", n, d)
P = MatrixSymbol("P", n, n)
S = MatrixSymbol("S", n, n)
W_Q, W_K, W_V = MatrixSymbol("W_Q", d, d_k), MatrixSymbol("W_K", d, d_k), MatrixSymbol("W_V", d, d_v)


class Softmax(MatrixExpr):
    """Row-wise softmax of a matrix expression: notation only (no general-n evaluation)."""

    def domain_conditions(self):
        # Notation defined for every argument (a row softmax of a real matrix): its entry in the checker's closed domain table.
        return []

    def __new__(cls, argument):
        return super().__new__(cls, argument)

    @property
    def shape(self):
        return self.args[0].shape

    def doit(self, **hints):
        return Softmax(self.args[0].doit(**hints)) if hints.get("deep", True) else self

    def _latex(self, printer):
        return r"\operatorname{softmax}\left(%s\right)" % printer._print(self.args[0])

    def _sympystr(self, printer):
        return "softmax(%s)" % printer._print(self.args[0])


class Attn(MatrixExpr):
    """Attn(Y) = softmax(Y W_Q (Y W_K)^T / sqrt(d_k)) Y W_V; ``doit`` unfolds the definition."""

    def domain_conditions(self):
        # Notation defined for every argument (d_k is declared positive, a row softmax is defined everywhere): its entry in the checker's closed domain table.
        return []

    def __new__(cls, argument):
        return super().__new__(cls, argument)

    @property
    def shape(self):
        return (self.args[0].shape[0], d_v)

    def doit(self, **hints):
        Y = self.args[0]
        return (Softmax(Y * W_Q * (Y * W_K).T / sympy.sqrt(d_k)) * Y * W_V).doit(**hints)

    def _latex(self, printer):
        return r"\operatorname{Attn}\left(%s\right)" % printer._print(self.args[0])

    def _sympystr(self, printer):
        return "Attn(%s)" % printer._print(self.args[0])


def _cancel_transpose_pairs(expr):
    """P^T P -> I and P P^T -> I inside every matrix product (the rule of assumption A1)."""

    def shorten(product):
        factors = []
        for factor in product.args:
            if factors and {factors[-1], factor} == {P.T, P}:
                factors.pop()
                continue
            factors.append(factor)
        if len(factors) == len(product.args):
            return product
        return MatMul(*factors) if factors else sympy.Identity(n)

    return expr.replace(lambda e: isinstance(e, MatMul), shorten)


PERMUTATION = Assumption("A1", "$P$ is a permutation matrix, so it is orthogonal", r"P^{T} P = P P^{T} = I",
                         rewrite=_cancel_transpose_pairs)
SCORES = Assumption("D1", "$S$ names the scaled scores of $X$", r"S = X W_Q W_K^{T} X^{T} / \sqrt{d_k}",
                    rewrite=lambda e: e.xreplace({S: X * W_Q * W_K.T * X.T / sympy.sqrt(d_k)}))


# ------------------------------------------------------------------ index form, every n

i, j, k = sympy.symbols("i j k", integer=True, positive=True)
u, v = sympy.symbols("u v", integer=True, positive=True)
sigma = sympy.Function("sigma")
M = sympy.IndexedBase("M", real=True)
S_ = sympy.IndexedBase("S", real=True)
W_ = sympy.IndexedBase("W", real=True)


class PermutedEntry(sympy.Function):
    r"""``(P M P^T)_{uv}`` for the permutation matrix ``P`` of ``sigma`` (``P_{ua} = [a = sigma(u)]``),
    as notation: only the entry lemma (proved below) rewrites it."""

    def domain_conditions(self):
        # Notation defined for every argument (an entry of a permuted matrix): its entry in the checker's closed domain table.
        return []

    nargs = 3

    def _eval_is_extended_real(self):
        return self.args[0].label.is_real or None

    def _latex(self, printer, exp=None):
        base, row, col = self.args
        text = r"\left(P %s P^{T}\right)_{%s %s}" % (printer._print(base.label), printer._print(row), printer._print(col))
        return text if exp is None else r"%s^{%s}" % (text, exp)


def _delta_form(base, row, col):
    a, c = sympy.symbols("a c", integer=True, positive=True)
    return sympy.Sum(sympy.Sum(sympy.KroneckerDelta(a, sigma(row)) * base[a, c] * sympy.KroneckerDelta(c, sigma(col)),
                               (c, 1, n)), (a, 1, n))


BIJECTION = Assumption("A2", "$\\sigma$ is a permutation of $1, \\dots, n$ and $P_{ua} = 1$ exactly when "
                       "$a = \\sigma(u)$ (else $0$); the row and column indices lie in $1, \\dots, n$",
                       r"1 \le i, j, u, v \le n", condition=[Bijection(sigma, 1, n), i <= n, j <= n, u <= n, v <= n])


def _entry_lemma(expr):
    return expr.replace(lambda e: isinstance(e, PermutedEntry),
                        lambda e: e.args[0][sigma(e.args[1]), sigma(e.args[2])])


ENTRY = Assumption("P1", "proved in the first part, for every real matrix $M$ and $1 \\le u, v \\le n$",
                   r"\left(P M P^{T}\right)_{uv} = M_{\sigma(u) \sigma(v)}", rewrite=_entry_lemma)
ROW_SOFTMAX = Assumption("D2", "$W = \\operatorname{softmax}(S)$ row by row",
                         r"W_{uv} = e^{S_{uv}} / \textstyle\sum_{k} e^{S_{uk}}",
                         rewrite=lambda e: e.replace(lambda x: isinstance(x, sympy.Indexed) and x.base == W_,
                                                     lambda x: SoftmaxAt(S_[x.indices[0], k], k, x.indices[1], n)))


def entry_chain() -> Derivation:
    a, c = sympy.symbols("a c", integer=True, positive=True)
    return Derivation(
        "Entries of a permuted matrix, every $n$",
        _delta_form(M, u, v),
        [
            Step(sympy.Sum(sympy.KroneckerDelta(a, sigma(u)) * M[a, sigma(v)], (a, 1, n)),
                 "only $c = \\sigma(v)$ contributes", using=("A2",), rules=("sum.delta",)),
            Step(M[sigma(u), sigma(v)], "only $a = \\sigma(u)$ contributes", using=("A2",), rules=("sum.delta",)),
        ],
        assumptions=[BIJECTION],
        scope=Scope.proved("every $n \\ge 1$, every permutation $\\sigma$ and every real $n \\times n$ matrix $M$"),
        note="$(P M P^{T})_{uv} = \\sum_{a} \\sum_{c} P_{ua} M_{ac} P_{vc}$ with $P_{ua} = \\delta_{a \\sigma(u)}$.",
    )


def lemma_chain() -> Derivation:
    return Derivation(
        "The row-softmax lemma, every $n$",
        SoftmaxAt(PermutedEntry(S_, i, k), k, j, n),
        [
            Step(Frac(sympy.exp(PermutedEntry(S_, i, j)), sympy.Sum(sympy.exp(PermutedEntry(S_, i, k)), (k, 1, n))),
                 "definition of softmax", using=("A2",)),
            Step(Frac(sympy.exp(S_[sigma(i), sigma(j)]), sympy.Sum(sympy.exp(S_[sigma(i), sigma(k)]), (k, 1, n))),
                 "entries of $P S P^{T}$", using=("A2", "P1")),
            Step(Frac(sympy.exp(S_[sigma(i), sigma(j)]), sympy.Sum(sympy.exp(S_[sigma(i), k]), (k, 1, n))),
                 "reindex the denominator's sum by the permutation $\\sigma$", using=("A2",),
                 rules=(reindex_by(sigma),)),
            Step(SoftmaxAt(S_[sigma(i), k], k, sigma(j), n), "row $\\sigma(i)$ of $\\operatorname{softmax}(S)$",
                 using=("A2",)),
            Step(PermutedEntry(W_, i, j), "entries of $P W P^{T}$, $W = \\operatorname{softmax}(S)$",
                 using=("A2", "P1", "D2")),
        ],
        assumptions=[BIJECTION, ENTRY, ROW_SOFTMAX],
        scope=Scope.proved("every $n \\ge 1$, every permutation and every real $n \\times n$ matrix $S$"),
        note="Entry $(i, j)$ of both sides; $k$ runs over $1, \\dots, n$.",
    )


def _lemma_rule(expr):
    """softmax(P S P^T) -> P softmax(S) P^T inside products (the lemma proved above)."""
    return expr.replace(lambda e: isinstance(e, Softmax) and e.args[0] == P * S * P.T,
                        lambda e: P * Softmax(S) * P.T)


LEMMA = Assumption("P2", "the row-softmax lemma, proved above for every $n$",
                   r"\operatorname{softmax}(P S P^{T}) = P \operatorname{softmax}(S) P^{T}", rewrite=_lemma_rule)


def matrix_chain() -> Derivation:
    return Derivation(
        "The matrix-level chain, general $n$",
        Attn(P * X),
        [
            Step(Softmax(P * X * W_Q * (P * X * W_K).T / sympy.sqrt(d_k)) * P * X * W_V, "definition of Attn"),
            Step(Softmax(P * S * P.T) * P * X * W_V, "$(AB)^{T} = B^{T} A^{T}$, the name $S$", using=("D1",)),
            Step(P * Softmax(S) * P.T * P * X * W_V, "the row-softmax lemma", using=("P2",)),
            Step(P * Softmax(S) * X * W_V, "$P^{T} P = I$", using=("A1",)),
            Step(P * Attn(X), "definition of Attn", using=("D1",)),
        ],
        assumptions=[PERMUTATION, SCORES, LEMMA],
        scope=Scope.proved("every $n$, $d$, $d_k$, $d_v$"),
        note="All positions visible, no positional encoding; $W_Q, W_K, W_V$ are shared by every position.",
    )


def _symbolic_scores(size):
    return sympy.ImmutableMatrix(size, size, lambda i, j: sympy.Symbol(f"s_{i + 1}{j + 1}", real=True))


def _permutation_matrix(permutation):
    """The P with (P X)[i] = X[permutation[i]]."""
    size = len(permutation)
    return sympy.ImmutableMatrix(size, size, lambda i, j: 1 if permutation[i] == j else 0)


def _permute(permutation, matrix, columns=False):
    """``P M`` (rows reordered), or ``P M P^T`` with ``columns``: the products with the
    permutation matrix, computed by reindexing (the same entries, no arithmetic)."""
    rows, cols = matrix.shape
    order = list(permutation)
    return sympy.ImmutableMatrix(rows, cols, lambda i, j: matrix[order[i], order[j] if columns else j])


def _lemma_permutations(size):
    if size <= 4:
        return list(itertools.permutations(range(size)))
    # Adjacent transpositions generate the symmetric group, and the lemma for P and Q
    # (for every S) gives it for PQ: apply it to Q S Q^T.
    return [tuple(j + 1 if j == t else j - 1 if j == t + 1 else j for j in range(size)) for t in range(size - 1)]


def lemma_check() -> Check:
    cases, summary = [], []
    for size in range(1, 7):
        S_n = _symbolic_scores(size)
        weights = softmax(S_n)  # the same for every permutation: computed once
        permutations = _lemma_permutations(size)
        for permutation in permutations:
            cases.append(Case(f"$n = {size}$, permutation {list(permutation)}",
                              Computed(r"\operatorname{softmax}(P S P^{T})",
                                       softmax(_permute(permutation, S_n, columns=True))),
                              Computed(r"P \operatorname{softmax}(S) P^{T}", _permute(permutation, weights, columns=True))))
        kind = "all" if size <= 4 else "the adjacent transpositions,"
        summary.append(f"$n = {size}$: {kind} {len(permutations)} permutation(s), $S$ with $n^2$ independent symbols")
    return Check(
        "The row-softmax lemma, small $n$ (extra evidence)",
        r"\operatorname{softmax}(P S P^{T}) = P \operatorname{softmax}(S) P^{T}",
        cases,
        scope=Scope.checked("every $n \\le 6$ with a fully symbolic $n \\times n$ matrix $S$ (all $n!$ permutations "
                            "for $n \\le 4$; adjacent transpositions, which generate all permutations, for $n = 5, 6$)"),
        note="Computed by the library's exact softmax on a score matrix whose entries are all distinct "
             "symbols. If the lemma holds for $P$ and for $Q$ (for every $S$), it holds for $PQ$ "
             "(apply it to $Q S Q^{T}$), so adjacent transpositions suffice.",
        summary=summary,
        shown=[2],
    )


# A small exact example: two tokens, W_Q = W_K = W_V = I, swapped by P.
X_2 = sympy.ImmutableMatrix([[1, 0], [0, 1]])
SWAP = _permutation_matrix((1, 0))
CAUSAL_2 = Mask.causal(2)


def _grid(mask):
    return sympy.ImmutableMatrix(mask.keep_grid())


def causal_counterexample() -> Counterexample:
    PX = SWAP * X_2
    return Counterexample(
        "A fixed causal mask breaks equivariance",
        [("X", X_2), ("P", SWAP), ("M", _grid(CAUSAL_2)), (r"W_Q = W_K = W_V", sympy.eye(2))],
        Computed(r"\operatorname{Attn}_M(PX)", attention(PX, PX, PX, CAUSAL_2).output),
        Computed(r"P \operatorname{Attn}_M(X)", SWAP * attention(X_2, X_2, X_2, CAUSAL_2).output),
        scope=Scope.counterexample("$n = 2$, $d = 2$, causal mask $M$, $P$ the swap"),
        note="The first token of $PX$ may see only itself, while the first row of $P\\operatorname{Attn}_M(X)$ "
             "is the second token's output, which mixes both tokens.",
    )


def restored_check() -> Check:
    cases, summary = [], []
    for size in range(2, 5):
        X_n = sympy.ImmutableMatrix(size, 2, lambda i, j: sympy.Symbol(f"x_{i + 1}{j + 1}", real=True))
        causal = Mask.causal(size)
        output = attention(X_n, X_n, X_n, causal).output  # the same for every permutation: computed once
        permutations = list(itertools.permutations(range(size)))
        for permutation in permutations:
            permuted = Mask.keep(_permute(permutation, _grid(causal), columns=True))
            PX = _permute(permutation, X_n)
            cases.append(Case(f"$n = {size}$, permutation {list(permutation)}",
                              Computed(r"\operatorname{Attn}_{P M P^{T}}(PX)", attention(PX, PX, PX, permuted).output),
                              Computed(r"P \operatorname{Attn}_M(X)", _permute(permutation, output))))
        summary.append(f"$n = {size}$: all {len(permutations)} permutations, $X$ an $n \\times 2$ matrix of symbols")
    return Check(
        "Permuting the mask with the input restores it",
        r"\operatorname{Attn}_{P M P^{T}}(PX) = P \operatorname{Attn}_M(X) \quad (M \text{ causal})",
        cases,
        scope=Scope.checked("every $n \\le 4$, every permutation, with a fully symbolic $X$ ($d = 2$, $W = I$)"),
        note="Each case is computed by the library's exact attention with the mask $P M P^{T}$.",
        summary=summary,
    )


def build() -> Result:
    return Result(
        NAME,
        "Permutation equivariance of self-attention",
        __doc__.split("\n", 2)[2].strip(),
        [entry_chain(), lemma_chain(), matrix_chain(), lemma_check(), causal_counterexample(), restored_check()],
    )
