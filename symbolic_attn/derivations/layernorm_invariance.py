"""LayerNorm invariances.

LayerNorm centres a vector $x$ of width $d$ and divides by its spread:
$\\operatorname{LN}_\\epsilon(x)_i = (x_i - \\mu)/\\sqrt{\\sigma^2 + \\epsilon}$ with
$\\mu = \\frac{1}{d}\\sum_k x_k$ and $\\sigma^2 = \\frac{1}{d}\\sum_k (x_k - \\mu)^2$ (gain $1$, bias $0$).
With $\\epsilon = 0$ it ignores a positive scale and a common shift,
$\\operatorname{LN}(a x + b \\mathbf{1}) = \\operatorname{LN}(x)$; with $\\epsilon > 0$ a scale moves into
$\\epsilon$, $\\operatorname{LN}_\\epsilon(a x) = \\operatorname{LN}_{\\epsilon/a^2}(x)$; and
$\\lVert \\operatorname{LN}_\\epsilon(x) \\rVert^2 = d\\,\\sigma^2/(\\sigma^2 + \\epsilon)$, for every width $d$.
"""

import sympy
from sympy import Sum, sqrt

from symbolic_attn.proofs.chain import Assumption, Derivation, Scope, Step
from symbolic_attn.proofs.operators import NamedOperator
from symbolic_attn.proofs.prove import Frac
from symbolic_attn.proofs.result import Case, Check, Result

NAME = "layernorm_invariance"

d = sympy.Symbol("d", integer=True, positive=True)
i, k = sympy.symbols("i k", integer=True, positive=True)
x = sympy.IndexedBase("x", real=True)
a = sympy.Symbol("a", positive=True)
b = sympy.Symbol("b", real=True)
eps = sympy.Symbol("epsilon", positive=True)


def mean(term):
    return Sum(term, (k, 1, d)) / d


def spread(term):
    """sigma^2 of the vector (term)_k: the mean squared deviation."""
    return Sum((term - mean(term)) ** 2, (k, 1, d)) / d


class LN(NamedOperator, sympy.Function):
    r"""``LN_eps((term)_k)_i`` (``eps`` may be 0); gain 1, bias 0."""

    nargs = 3

    def unfold(self):
        term, entry, epsilon = self.args
        return (term.xreplace({k: entry}) - mean(term)) / sqrt(spread(term) + epsilon)

    def _latex(self, printer, exp=None):
        term, entry, epsilon = self.args
        name = r"\operatorname{LN}" if epsilon == 0 else r"\operatorname{LN}_{%s}" % printer._print(epsilon)
        text = r"%s\left(\left(%s\right)_{k=1}^{d}\right)_{%s}" % (name, printer._print(term), printer._print(entry))
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)


NOT_CONSTANT = Assumption("A1", "$x$ is not constant (else $\\sigma = 0$ and LN with $\\epsilon = 0$ is undefined)",
                          r"\sigma^2(x) > 0", condition=spread(x[k]) > 0)


def affine_chain() -> Derivation:
    return Derivation(
        "$\\epsilon = 0$: scale and shift are ignored",
        LN(a * x[k] + b, i, 0),
        [
            Step(Frac(a * x[i] + b - mean(a * x[k] + b), sqrt(spread(a * x[k] + b))), "definition", using=("A1",)),
            Step(Frac(a * (x[i] - mean(x[k])), sqrt(a ** 2 * spread(x[k]))),
                 "the mean moves to $a\\mu + b$, the spread scales by $a^2$", using=("A1",)),
            Step(LN(x[k], i, 0), "cancel $a > 0$", using=("A1",)),
        ],
        assumptions=[NOT_CONSTANT],
        scope=Scope.proved("every width $d$, every $a > 0$, real $b$ and non-constant real $x$"),
    )


def epsilon_chain() -> Derivation:
    return Derivation(
        "$\\epsilon > 0$: a scale moves into $\\epsilon$",
        LN(a * x[k], i, eps),
        [
            Step(Frac(a * (x[i] - mean(x[k])), sqrt(a ** 2 * spread(x[k]) + eps)), "definition; centring is linear"),
            Step(Frac(a * (x[i] - mean(x[k])), sqrt(a ** 2 * (spread(x[k]) + eps / a ** 2))), "factor $a^2$"),
            Step(LN(x[k], i, eps / a ** 2), "cancel $a > 0$"),
        ],
        scope=Scope.proved("every width $d$, every $a > 0$, $\\epsilon > 0$ and real $x$"),
    )


def norm_chain() -> Derivation:
    sigma2 = spread(x[k])
    return Derivation(
        "The squared norm",
        Sum(LN(x[k], i, eps) ** 2, (i, 1, d)),
        [
            Step(Sum((x[i] - mean(x[k])) ** 2, (i, 1, d)) / (sigma2 + eps), "definition; the root leaves the sum",
                 rules=("sum.factor_out",)),
            Step(d * sigma2 / (sigma2 + eps), "the sum is $d\\,\\sigma^2$"),
        ],
        scope=Scope.proved("every width $d$, $\\epsilon > 0$ and real $x$ (gain $1$, bias $0$)"),
    )


def small_check() -> Check:
    cases = []
    for width in (2, 3):
        xs = [sympy.Symbol(f"x_{q}", real=True) for q in range(1, width + 1)]

        def ln(values, epsilon=0):
            mu = sum(values) / width  # noqa: B023 -- ln is called in this iteration only
            var = sum((v - mu) ** 2 for v in values) / width  # noqa: B023 -- likewise
            return sympy.ImmutableMatrix([[(v - mu) / sqrt(var + epsilon) for v in values]])

        cases.append(Case(f"$d = {width}$: $\\operatorname{{LN}}_\\epsilon(a x) = \\operatorname{{LN}}_{{\\epsilon/a^2}}(x)$",
                          ln([a * v for v in xs], eps), ln(xs, eps / a ** 2)))
    return Check(
        "Written out for small widths (extra evidence)",
        r"\operatorname{LN}_\epsilon(a x) = \operatorname{LN}_{\epsilon/a^2}(x)",
        cases,
        scope=Scope.checked("$d = 2, 3$ with symbolic entries, $a > 0$ and $\\epsilon > 0$"),
    )


def build() -> Result:
    return Result(
        NAME,
        "LayerNorm invariances",
        __doc__.split("\n", 2)[2].strip(),
        [affine_chain(), epsilon_chain(), norm_chain(), small_check()],
    )
