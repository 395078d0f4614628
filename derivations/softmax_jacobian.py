"""The softmax Jacobian: $J = \\operatorname{diag}(p) - p p^{T}$.

For $p = \\operatorname{softmax}(s)$ with real scores $s = (s_1, \\dots, s_n)$, $\\partial p_i / \\partial s_j = p_i(\\delta_{ij} - p_j)$.
So $J$ is symmetric, $J \\mathbf{1} = 0$ (adding the same amount to every score changes
nothing: result b), and $v^{T} J v = \\operatorname{Var}_p(v) \\ge 0$, the variance of $v$ under
the weights $p$ -- for every $n$.
"""

import sympy
from sympy import Derivative, KroneckerDelta, Sum, exp

from symbolic_attn.model.attention import softmax
from symbolic_attn.proofs.chain import Assumption, Computed, Derivation, Scope, Step
from symbolic_attn.proofs.operators import NamedOperator, SoftmaxAt
from symbolic_attn.proofs.prove import Frac
from symbolic_attn.proofs.result import Case, Check, Counterexample, Result

NAME = "softmax_jacobian"

n = sympy.Symbol("n", integer=True, positive=True)
i, j, k = sympy.symbols("i j k", integer=True, positive=True)
s = sympy.IndexedBase("s", real=True)
v = sympy.IndexedBase("v", real=True)


t = sympy.Symbol("t", integer=True, positive=True)


class P(NamedOperator, sympy.Function):
    r"""``p_i = \operatorname{softmax}(s)_i``: prints as ``p_i``, unfolds to the softmax entry."""

    nargs = 1

    def unfold(self):
        return SoftmaxAt(s[k], k, self.args[0], n)

    def _latex(self, printer, exp=None):
        text = "p_{%s}" % printer._print(self.args[0])
        return text if exp is None else "p_{%s}^{%s}" % (printer._print(self.args[0]), exp)


class Z(NamedOperator, sympy.Expr):
    r"""``Z = \sum_k e^{s_k}``: prints as ``Z``, unfolds to the sum."""

    def __new__(cls):
        return sympy.Expr.__new__(cls)

    def unfold(self):
        return Sum(exp(s[k]), (k, 1, n))

    def _latex(self, printer, exp=None):
        return "Z" if exp is None else "Z^{%s}" % exp

    def _sympystr(self, printer):
        return "Z"


def p(entry):
    """``p_entry = softmax(s)_entry`` (the named operator :class:`P`)."""
    return P(entry)


def _z():
    return Z()


def weighted_mean():
    return Sum(p(t) * v[t], (t, 1, n))


class VarP(NamedOperator, sympy.Expr):
    r"""``\operatorname{Var}_p(v) = \sum_i p_i (v_i - \sum_k p_k v_k)^2``: the variance of ``v`` under ``p``."""

    def __new__(cls):
        return sympy.Expr.__new__(cls)

    def unfold(self):
        return Sum(p(i) * (v[i] - weighted_mean()) ** 2, (i, 1, n))

    def _latex(self, printer, exp=None):
        return r"\operatorname{Var}_{p}(v)" if exp is None else r"\operatorname{Var}_{p}(v)^{%s}" % exp

    def _sympystr(self, printer):
        return "Var_p(v)"


def _differentiate(expr):
    return expr.replace(lambda e: isinstance(e, Derivative), lambda e: e.doit())


NAMES = Assumption("D1", "the names $p_i$ and $Z$ (printed short; the checker unfolds them)",
                   r"p_i = \operatorname{softmax}(s)_i = \frac{e^{s_i}}{Z},\ Z = \sum_{k=1}^{n} e^{s_k}")
RANGE = Assumption("A1", "the indices $i$, $j$ lie in $1, \\dots, n$", r"1 \le i, j \le n",
                   condition=[i <= n, j <= n])
CALCULUS = Assumption(
    "C1", "rules of differentiation, applied by SymPy's diff and not decided by the checker: the "
    "derivative of a finite sum is the sum of the derivatives, the quotient rule, and "
    "$\\partial e^{s_k} / \\partial s_j = \\delta_{jk} e^{s_k}$",
    r"\frac{\partial}{\partial s_j} \frac{f}{g} = \frac{f' g - f g'}{g^2}", rewrite=_differentiate)
OFF_DIAGONAL = Assumption("A2", "an off-diagonal entry: $i \\ne j$, so $\\delta_{ij} = \\delta_{ji} = 0$",
                          r"i \ne j", condition=sympy.Ne(i, j),
                          rewrite=lambda e: e.xreplace({KroneckerDelta(i, j): sympy.Integer(0),
                                                        KroneckerDelta(j, i): sympy.Integer(0)}))


def entry_chain() -> Derivation:
    quotient = Frac(KroneckerDelta(i, j) * exp(s[i]) * _z() - exp(s[i]) * Sum(KroneckerDelta(j, k) * exp(s[k]),
                                                                               (k, 1, n)), _z() ** 2)
    return Derivation(
        "The entries: $\\partial p_i / \\partial s_j = p_i(\\delta_{ij} - p_j)$",
        Derivative(p(i), s[j]),
        [
            Step(quotient, "quotient rule, $\\partial e^{s_k}/\\partial s_j = \\delta_{jk} e^{s_k}$",
                 using=("C1", "A1")),
            Step(Frac(KroneckerDelta(i, j) * exp(s[i]) * _z() - exp(s[i]) * exp(s[j]), _z() ** 2),
                 "only $k = j$ contributes", using=("A1",), rules=("sum.delta",)),
            Step(p(i) * (KroneckerDelta(i, j) - p(j)), "definition of $p_i$ and $p_j$", using=("A1",)),
        ],
        assumptions=[NAMES, RANGE, CALCULUS],
        scope=Scope.proved("every $n \\ge 1$, all real scores and $1 \\le i, j \\le n$, given the rules of "
                           "differentiation C1 (step 1); the algebra after step 1 is checked"),
    )


def row_sum_chain() -> Derivation:
    return Derivation(
        "Each row sums to zero: $J \\mathbf{1} = 0$",
        Sum(p(i) * (KroneckerDelta(i, j) - p(j)), (j, 1, n)),
        [
            Step(p(i) * Sum(KroneckerDelta(i, j), (j, 1, n)) - p(i) * Sum(p(j), (j, 1, n)),
                 "linearity; $p_i$ does not depend on $j$", using=("A1",)),
            Step(p(i) - p(i) * Sum(p(j), (j, 1, n)), "only $j = i$ contributes", using=("A1",), rules=("sum.delta",)),
            Step(sympy.Integer(0), "the weights sum to $1$", using=("A1",)),
        ],
        assumptions=[NAMES, RANGE],
        scope=Scope.proved("every $n \\ge 1$, all real scores and every row $1 \\le i \\le n$"),
    )


def symmetry_chain() -> Derivation:
    return Derivation(
        "$J$ is symmetric (off the diagonal; on it there is nothing to prove)",
        p(i) * (KroneckerDelta(i, j) - p(j)),
        [
            Step(-p(i) * p(j), "$\\delta_{ij} = 0$", using=("A2",)),
            Step(p(j) * (KroneckerDelta(j, i) - p(i)), "$\\delta_{ji} = 0$", using=("A2",)),
        ],
        assumptions=[OFF_DIAGONAL],
        scope=Scope.proved("every $n \\ge 1$, all real scores and every $i \\ne j$"),
    )


class JvEntry(sympy.Function):
    r"""Notation ``(J v)_i = \sum_j J_{ij} v_j`` (the lemma P1 rewrites it)."""

    nargs = 1

    def _latex(self, printer, exp=None):
        text = r"(J v)_{%s}" % printer._print(self.args[0])
        return text if exp is None else r"(J v)_{%s}^{%s}" % (printer._print(self.args[0]), exp)


def _jv_lemma(expr):
    return expr.replace(lambda e: isinstance(e, JvEntry), lambda e: p(e.args[0]) * (v[e.args[0]] - weighted_mean()))


JV = Assumption("P1", "proved in the previous part, for every row $i$ (with the entries of the first part)",
                r"(J v)_i = \sum_{j=1}^{n} p_i(\delta_{ij} - p_j) v_j = p_i (v_i - \bar v)", rewrite=_jv_lemma)


def jv_chain() -> Derivation:
    bar = weighted_mean()
    return Derivation(
        "$J v$ is $p$ times the deviation from the mean",
        Sum(p(i) * (KroneckerDelta(i, j) - p(j)) * v[j], (j, 1, n)),
        [
            Step(p(i) * Sum(KroneckerDelta(i, j) * v[j], (j, 1, n)) - p(i) * Sum(p(j) * v[j], (j, 1, n)),
                 "linearity; $p_i$ does not depend on $j$", using=("A1",)),
            Step(p(i) * v[i] - p(i) * bar, "only $j = i$ contributes", using=("A1",),
                 rules=("sum.delta",)),
            Step(p(i) * (v[i] - bar), "factor $p_i$", using=("A1",)),
        ],
        assumptions=[RANGE],
        scope=Scope.proved("every $n \\ge 1$, all real scores, every real $v$ and every row $1 \\le i \\le n$"),
        note="$\\bar v = \\sum_t p_t v_t$ is the $p$-weighted mean of $v$.",
    )


def quadratic_chain() -> Derivation:
    bar = weighted_mean()
    return Derivation(
        "The quadratic form is a variance: $v^{T} J v = \\operatorname{Var}_p(v) \\ge 0$",
        Sum(v[i] * JvEntry(i), (i, 1, n)),
        [
            Step(Sum(p(i) * v[i] * (v[i] - bar), (i, 1, n)), "the previous part", using=("P1",)),
            Step(Sum(p(i) * (v[i] - bar) ** 2, (i, 1, n)),
                 "subtract $\\bar v \\sum_i p_i (v_i - \\bar v) = \\bar v(\\bar v - \\bar v) = 0$ ($\\sum_i p_i = 1$)"),
            Step(VarP(), "definition of $\\operatorname{Var}_p$"),
            Step(sympy.Integer(0), "$p_i > 0$ and squares are $\\ge 0$", relation=">="),
        ],
        assumptions=[JV],
        scope=Scope.proved("every $n \\ge 1$, all real scores and every real $v$"),
        note="$v^{T} J v = \\sum_i v_i (J v)_i$.",
    )


def _symbolic_scores(size):
    return sympy.ImmutableMatrix([[sympy.Symbol(f"s_{c}", real=True) for c in range(1, size + 1)]])


def jacobian(scores):
    """The Jacobian of the library's exact softmax of a 1 x n row, by SymPy's ``diff``."""
    weights = softmax(scores)
    return sympy.ImmutableMatrix(len(scores), len(scores), lambda r, c: sympy.diff(weights[r], scores[c]))


def explicit_check() -> Check:
    cases, summary = [], []
    for size in (2, 3, 4):
        scores = _symbolic_scores(size)
        weights = softmax(scores)
        column = weights.T
        J = jacobian(scores)
        formula = sympy.ImmutableMatrix(sympy.diag(*list(weights))) - column * column.T
        cases.append(Case(f"$n = {size}$: $J = \\operatorname{{diag}}(p) - p p^T$", Computed(r"J", J),
                          Computed(r"\operatorname{diag}(p) - p p^{T}", formula)))
        cases.append(Case(f"$n = {size}$: $J \\mathbf{{1}} = 0$", Computed(r"J \mathbf{1}", J * sympy.ones(size, 1)),
                          sympy.zeros(size, 1)))
        cases.append(Case(f"$n = {size}$: $J = J^T$", Computed(r"J", J), Computed(r"J^{T}", J.T)))
        summary.append(f"$n = {size}$: scores $s_1, \\dots, s_{size}$ symbolic, $J$ by differentiating the "
                       "library's softmax")
    return Check(
        "Differentiating the library's softmax, small $n$ (extra evidence)",
        r"J = \operatorname{diag}(p) - p p^{T}, \qquad J \mathbf{1} = 0, \qquad J = J^{T}",
        cases,
        scope=Scope.checked("$n = 2, 3, 4$ with fully symbolic scores (derivatives by SymPy's diff)"),
        note="The Jacobian of the exact softmax of a symbolic row, entry by entry.",
        summary=summary,
    )


ZEROS = sympy.ImmutableMatrix([[0, 0]])


def diagonal_counterexample() -> Counterexample:
    return Counterexample(
        "The Jacobian is not $\\operatorname{diag}(p)$",
        [("s", ZEROS)],
        Computed(r"J", jacobian_at(ZEROS)),
        Computed(r"\operatorname{diag}(p)", sympy.ImmutableMatrix(sympy.diag(*list(softmax(ZEROS))))),
        scope=Scope.counterexample("$n = 2$, $s = (0, 0)$: forgetting the normalizer's derivative"),
        note="Differentiating only the numerator $e^{s_i}$ gives $\\operatorname{diag}(p)$, whose rows do not "
             "sum to $0$.",
    )


def jacobian_at(point):
    symbolic = _symbolic_scores(point.cols)
    return jacobian(symbolic).xreplace({symbolic[c]: point[c] for c in range(point.cols)})


def build() -> Result:
    return Result(
        NAME,
        "The softmax Jacobian",
        __doc__.split("\n", 2)[2].strip(),
        [entry_chain(), row_sum_chain(), symmetry_chain(), jv_chain(), quadratic_chain(), explicit_check(),
         diagonal_counterexample()],
    )
