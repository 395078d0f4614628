"""The softmax Jacobian as a variance: $v^{T} J v = \\operatorname{Var}_p(v) \\ge 0$.

With $p = \\operatorname{softmax}(s)$ and $J = \\operatorname{diag}(p) - p p^{T}$ (the entries
$J_{ij} = p_i(\\delta_{ij} - p_j)$ are proved in the result on the softmax Jacobian), the
vector $J v$ has entries $p_i (v_i - \\bar v)$ with $\\bar v = \\sum_t p_t v_t$, and the quadratic
form $v^{T} J v$ is the variance of $v$ under the weights $p$: $J$ is positive
semidefinite, for every $n$.  Forgetting the derivative of the normalizer gives
$\\operatorname{diag}(p)$ instead, whose rows do not sum to $0$.
"""

import sympy
from sympy import KroneckerDelta, Sum

from symbolic_attn.model.attention import softmax
from symbolic_attn.proofs.chain import Assumption, Computed, Derivation, Scope, Step
from symbolic_attn.proofs.operators import NamedOperator, SoftmaxAt
from symbolic_attn.proofs.result import Case, Check, Counterexample, Result

NAME = "softmax_jacobian_variance"

n = sympy.Symbol("n", integer=True, positive=True)
i, j, k, t = sympy.symbols("i j k t", integer=True, positive=True)
s = sympy.IndexedBase("s", real=True)
v = sympy.IndexedBase("v", real=True)


class P(NamedOperator, sympy.Function):
    r"""``p_i = \operatorname{softmax}(s)_i``: prints as ``p_i``, unfolds to the softmax entry."""

    nargs = 1

    def unfold(self):
        return SoftmaxAt(s[k], k, self.args[0], n)

    def _latex(self, printer, exp=None):
        text = "p_{%s}" % printer._print(self.args[0])
        return text if exp is None else "p_{%s}^{%s}" % (printer._print(self.args[0]), exp)


def weighted_mean():
    """``v-bar = sum_t p_t v_t``."""
    return Sum(P(t) * v[t], (t, 1, n))


class VarP(NamedOperator, sympy.Expr):
    r"""``\operatorname{Var}_p(v) = \sum_i p_i (v_i - \bar v)^2``: the variance of ``v`` under ``p``."""

    def __new__(cls):
        return sympy.Expr.__new__(cls)

    def unfold(self):
        return Sum(P(i) * (v[i] - weighted_mean()) ** 2, (i, 1, n))

    def _latex(self, printer, exp=None):
        return r"\operatorname{Var}_{p}(v)" if exp is None else r"\operatorname{Var}_{p}(v)^{%s}" % exp

    def _sympystr(self, printer):
        return "Var_p(v)"


class JvEntry(sympy.Function):
    r"""Notation ``(J v)_i``; only the lemma P1 rewrites it."""

    nargs = 1

    def _latex(self, printer, exp=None):
        text = r"(J v)_{%s}" % printer._print(self.args[0])
        return text if exp is None else r"(J v)_{%s}^{%s}" % (printer._print(self.args[0]), exp)


NAMES = Assumption("D1", "the short name $p_i$ (printed short; the checker unfolds it)",
                   r"p_i = \operatorname{softmax}(s)_i = e^{s_i} / \textstyle\sum_{k=1}^{n} e^{s_k}")
RANGE = Assumption("A1", "the row index lies in $1, \\dots, n$", r"1 \le i \le n", condition=i <= n)
ENTRIES = Assumption("J1", "the entries of the Jacobian, proved for every $n$ in the result on the softmax "
                     "Jacobian", r"J_{ij} = \partial p_i / \partial s_j = p_i (\delta_{ij} - p_j)")
JV = Assumption("P1", "proved in the first part, for every row $i$",
                r"(J v)_i = \sum_{j=1}^{n} J_{ij} v_j = p_i (v_i - \bar v)",
                rewrite=lambda e: e.replace(lambda x: isinstance(x, JvEntry),
                                            lambda x: P(x.args[0]) * (v[x.args[0]] - weighted_mean())))


def jv_chain() -> Derivation:
    bar = weighted_mean()
    return Derivation(
        "$J v$ is $p$ times the deviation from the mean",
        Sum(P(i) * (KroneckerDelta(i, j) - P(j)) * v[j], (j, 1, n)),
        [
            Step(P(i) * Sum(KroneckerDelta(i, j) * v[j], (j, 1, n)) - P(i) * Sum(P(j) * v[j], (j, 1, n)),
                 "linearity; $p_i$ does not depend on $j$", using=("A1",)),
            Step(P(i) * v[i] - P(i) * bar, "only $j = i$ is left", using=("A1",), rules=("sum.delta",)),
            Step(P(i) * (v[i] - bar), "factor $p_i$", using=("A1",)),
        ],
        assumptions=[NAMES, ENTRIES, RANGE],
        scope=Scope.proved("every $n \\ge 1$, all real scores, every real $v$ and every row $1 \\le i \\le n$"),
        note="$(J v)_i = \\sum_j J_{ij} v_j$ with the entries J1; $\\bar v = \\sum_t p_t v_t$ is the $p$-weighted "
             "mean of $v$.",
    )


def quadratic_chain() -> Derivation:
    bar = weighted_mean()
    return Derivation(
        "The quadratic form is a variance",
        Sum(v[i] * JvEntry(i), (i, 1, n)),
        [
            Step(Sum(P(i) * v[i] * (v[i] - bar), (i, 1, n)), "the first part", using=("P1",)),
            Step(Sum(P(i) * (v[i] - bar) ** 2, (i, 1, n)),
                 "subtract $\\bar v \\sum_i p_i (v_i - \\bar v) = 0$ (the weights sum to $1$)"),
            Step(VarP(), "definition of $\\operatorname{Var}_p$"),
            Step(sympy.Integer(0), "$p_i > 0$ and squares are $\\ge 0$", relation=">="),
        ],
        assumptions=[NAMES, JV],
        scope=Scope.proved("every $n \\ge 1$, all real scores and every real $v$"),
        note="$v^{T} J v = \\sum_i v_i (J v)_i$.",
    )


def _symbolic_scores(size):
    return [sympy.Symbol(f"s_{c}", real=True) for c in range(1, size + 1)]


def jacobian(scores):
    """The Jacobian of the library's exact softmax, by SymPy's ``diff``."""
    weights = list(softmax(sympy.ImmutableMatrix([scores])))
    return sympy.ImmutableMatrix(len(scores), len(scores), lambda a, b: sympy.diff(weights[a], scores[b])), weights


def explicit_check() -> Check:
    cases, summary = [], []
    for size in (2, 3):
        scores = _symbolic_scores(size)
        J, weights = jacobian(scores)
        values = sympy.ImmutableMatrix([sympy.Symbol(f"v_{c}", real=True) for c in range(1, size + 1)])
        mean = sum((weights[c] * values[c] for c in range(size)), sympy.Integer(0))
        variance = sum((weights[c] * (values[c] - mean) ** 2 for c in range(size)), sympy.Integer(0))
        cases.append(Case(f"$n = {size}$", Computed(r"v^{T} J v", (values.T * J * values)[0, 0]),
                          Computed(r"\operatorname{Var}_p(v)", variance)))
        summary.append(f"$n = {size}$: scores and $v$ symbolic, $J$ by differentiating the library's softmax")
    return Check(
        "Differentiating the softmax of the library, small $n$ (extra evidence)",
        r"v^{T} J v = \operatorname{Var}_p(v)",
        cases,
        scope=Scope.checked("$n = 2, 3$ with fully symbolic scores and $v$ (derivatives by SymPy's diff)"),
        note="Also a check of the entries J1 for these $n$: the Jacobian here is differentiated directly.",
        summary=summary,
    )


def diagonal_counterexample() -> Counterexample:
    scores = _symbolic_scores(2)
    J, weights = jacobian(scores)
    at_zero = {scores[0]: 0, scores[1]: 0}
    return Counterexample(
        "The Jacobian is not $\\operatorname{diag}(p)$",
        [("s", sympy.ImmutableMatrix([[0, 0]]))],
        Computed(r"J", J.xreplace(at_zero)),
        Computed(r"\operatorname{diag}(p)", sympy.ImmutableMatrix(sympy.diag(*[w.xreplace(at_zero) for w in weights]))),
        scope=Scope.counterexample("$n = 2$, $s = (0, 0)$: forgetting the normalizer's derivative"),
        note="Differentiating only the numerator $e^{s_i}$ gives $\\operatorname{diag}(p)$, whose rows do not "
             "sum to $0$.",
    )


def build() -> Result:
    return Result(
        NAME,
        "The softmax Jacobian as a variance",
        __doc__.split("\n", 2)[2].strip(),
        [jv_chain(), quadratic_chain(), explicit_check(), diagonal_counterexample()],
    )
