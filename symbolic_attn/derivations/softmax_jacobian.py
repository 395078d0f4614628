"""The softmax Jacobian.

For $p = \\operatorname{softmax}(s)$ over $n$ scores, $\\partial p_i / \\partial s_j = p_i (\\delta_{ij} - p_j)$:
the Jacobian is $J = \\operatorname{diag}(p) - p\\,p^{T}$.  It is symmetric, its rows sum to
zero ($J \\mathbf{1} = 0$: adding a constant to every score changes nothing), and
$v^{T} J v = \\operatorname{Var}_p(v) \\ge 0$, for every $n$.
"""

import sympy
from sympy import Derivative, KroneckerDelta, Sum, exp

from symbolic_attn.proofs.chain import Assumption, Derivation, Scope, Step
from symbolic_attn.proofs.operators import NamedOperator, SoftmaxAt
from symbolic_attn.proofs.result import Case, Check, Result

NAME = "softmax_jacobian"

n = sympy.Symbol("n", integer=True, positive=True)
i, j, k = sympy.symbols("i j k", integer=True, positive=True)
s = sympy.IndexedBase("s", real=True)
Z = Sum(exp(s[k]), (k, 1, n))
RANGE = Assumption("A1", "the indices lie in $1, \\dots, n$", r"1 \le i, j \le n", condition=[i <= n, j <= n])


class Weight(NamedOperator, sympy.Function):
    r"""``p_i = softmax(s)_i``, printed short."""

    nargs = 1

    def unfold(self):
        return SoftmaxAt(s[k], k, self.args[0], n)

    def _latex(self, printer, exp=None):
        text = "p_{%s}" % printer._print(self.args[0])
        return text if exp is None else "p_{%s}^{%s}" % (printer._print(self.args[0]), exp)


def p(index):
    return Weight(index)


NOTE = "Here $p_i = \\operatorname{softmax}(s)_i = e^{s_i} / \\sum_{k=1}^{n} e^{s_k}$."


def entry_chain() -> Derivation:
    return Derivation(
        "The entries, every $n$",
        Derivative(p(i), s[j]),
        [
            Step(KroneckerDelta(i, j) * exp(s[i]) / Z - exp(s[i]) * Sum(KroneckerDelta(j, k) * exp(s[k]), (k, 1, n)) / Z**2,
                 "quotient rule"),
            Step(KroneckerDelta(i, j) * exp(s[i]) / Z - exp(s[i]) * exp(s[j]) / Z**2,
                 "only $k = j$ is left", using=("A1",), rules=("sum.delta",)),
            Step(p(i) * (KroneckerDelta(i, j) - p(j)), "factor $p_i$", using=("A1",)),
        ],
        assumptions=[RANGE],
        scope=Scope.proved("every $n \\ge 1$ and all real scores"),
        note=NOTE,
    )


def symmetry_chain() -> Derivation:
    return Derivation(
        "$J$ is symmetric",
        p(i) * (KroneckerDelta(i, j) - p(j)),
        [
            Step(KroneckerDelta(i, j) * p(i) - p(i) * p(j), "multiply out"),
            Step(KroneckerDelta(i, j) * p(j) - p(j) * p(i), "$\\delta_{ij} p_i = \\delta_{ij} p_j$",
                 rules=("delta.substitute",)),
            Step(p(j) * (KroneckerDelta(j, i) - p(i)), "factor $p_j$"),
        ],
        scope=Scope.proved("every $n \\ge 1$ and all real scores"),
        note=NOTE,
    )


def rows_chain() -> Derivation:
    return Derivation(
        "The rows sum to zero: $J \\mathbf{1} = 0$",
        Sum(p(i) * (KroneckerDelta(i, j) - p(j)), (j, 1, n)),
        [
            Step(p(i) * Sum(KroneckerDelta(i, j), (j, 1, n)) - p(i) * Sum(p(j), (j, 1, n)), "linearity",
                 rules=("sum.linearity", "sum.factor_out")),
            Step(p(i) - p(i) * Sum(p(j), (j, 1, n)), "only $j = i$ is left", using=("A1",), rules=("sum.delta",)),
            Step(sympy.Integer(0), "the weights sum to $1$"),
        ],
        assumptions=[RANGE],
        scope=Scope.proved("every $n \\ge 1$ and all real scores"),
        note=NOTE,
    )


v = sympy.IndexedBase("v", real=True)


def variance_chain() -> Derivation:
    mean = Sum(p(j) * v[j], (j, 1, n))
    return Derivation(
        "$v^{T} J v$ is the variance of $v$ under $p$",
        Sum(v[i] * p(i) * (KroneckerDelta(i, j) - p(j)) * v[j], (j, 1, n), (i, 1, n)),
        [
            Step(Sum(p(i) * v[i] ** 2, (i, 1, n)) - Sum(p(i) * v[i], (i, 1, n)) ** 2,
                 "only $j = i$ is left", using=("A1",), rules=("sum.delta",)),
            Step(Sum(p(i) * (v[i] - mean) ** 2, (i, 1, n)), "$\\operatorname{Var}_p(v)$: the weights sum to $1$"),
            Step(sympy.Integer(0), "positive weights times squares", relation=">="),
        ],
        assumptions=[RANGE],
        scope=Scope.proved("every $n \\ge 1$, all real scores and every real vector $v$"),
        note=NOTE,
    )


def small_check() -> Check:
    from symbolic_attn.model.attention import softmax

    cases = []
    for size in (2, 3, 4):
        scores = [sympy.Symbol(f"s_{q}", real=True) for q in range(1, size + 1)]
        weights = list(softmax(sympy.ImmutableMatrix([scores])))
        jacobian = sympy.ImmutableMatrix(size, size, lambda a, b: sympy.diff(weights[a], scores[b]))  # noqa: B023 -- called at once
        formula = sympy.ImmutableMatrix(sympy.diag(*weights)) - sympy.ImmutableMatrix(weights) * sympy.ImmutableMatrix([weights])
        cases.append(Case(f"$n = {size}$", jacobian, formula))
    return Check(
        "The whole matrix, small $n$ (extra evidence)",
        r"J = \operatorname{diag}(p) - p\,p^{T}",
        cases,
        scope=Scope.checked("$n = 2, 3, 4$, differentiating the library's exact softmax of symbolic scores"),
    )


def build() -> Result:
    return Result(
        NAME,
        "The softmax Jacobian",
        __doc__.split("\n", 2)[2].strip(),
        [entry_chain(), symmetry_chain(), rows_chain(), variance_chain(), small_check()],
    )
