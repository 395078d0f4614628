"""LayerNorm invariances: it forgets the offset and the positive scale of its input.

LayerNorm of a real vector $x = (x_1, \\dots, x_d)$ (gain $1$, bias $0$) is
$\\operatorname{LN}_\\varepsilon(x)_j = (x_j - \\mu(x)) / \\sqrt{\\operatorname{Var}(x) + \\varepsilon}$, with the
mean $\\mu$ and the population variance $\\operatorname{Var}$ over the $d$ coordinates.  With
$\\varepsilon = 0$, $\\operatorname{LN}(a x + b\\mathbf{1}) = \\operatorname{LN}(x)$ for every $a > 0$ and real $b$;
with $\\varepsilon > 0$ the scale moves into the epsilon,
$\\operatorname{LN}_\\varepsilon(a x) = \\operatorname{LN}_{\\varepsilon/a^2}(x)$; and the output's squared norm is
$d \\operatorname{Var}(x) / (\\operatorname{Var}(x) + \\varepsilon)$ -- all for every width $d$.
"""

import sympy
from sympy import Mul, Pow, Rational, Sum, sqrt

from symbolic_attn.proofs.chain import Assumption, Computed, Derivation, Scope, Step
from symbolic_attn.proofs.prove import Frac
from symbolic_attn.proofs.result import Case, Check, Counterexample, Result

NAME = "layernorm_invariance"

d = sympy.Symbol("d", integer=True, positive=True)
j, k = sympy.symbols("j k", integer=True, positive=True)
x = sympy.IndexedBase("x", real=True)
a = sympy.Symbol("a", positive=True)
b = sympy.Symbol("b", real=True)
eps = sympy.Symbol("varepsilon", positive=True)


class Mean(sympy.Function):
    r"""Notation ``\mu(f)``: the mean of ``f(k)`` over ``k = 1..d`` (definition D1 unfolds it)."""

    nargs = 1

    def _latex(self, printer, exp=None):
        text = r"\mu\left(%s\right)" % _vector(printer, self.args[0])
        return text if exp is None else r"%s^{%s}" % (text, exp)


class Var(sympy.Function):
    r"""Notation ``\operatorname{Var}(f)``: the population variance of ``f(k)`` (definition D1)."""

    nargs = 1

    def _latex(self, printer, exp=None):
        text = r"\operatorname{Var}\left(%s\right)" % _vector(printer, self.args[0])
        return text if exp is None else r"%s^{%s}" % (text, exp)


class LN(sympy.Function):
    r"""Notation ``\operatorname{LN}_\varepsilon(f)_j`` (gain 1, bias 0; definition D1)."""

    nargs = 3

    def _latex(self, printer, exp=None):
        term, entry, epsilon = self.args
        sub = "" if epsilon == 0 else "_{%s}" % printer._print(epsilon)
        text = r"\operatorname{LN}%s\left(%s\right)_{%s}" % (sub, _vector(printer, term), printer._print(entry))
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)


class SquaredNorm(sympy.Function):
    r"""Notation ``\lVert \operatorname{LN}_\varepsilon(x) \rVert^2`` (definition D1)."""

    nargs = 1

    def _latex(self, printer, exp=None):
        epsilon = self.args[0]
        sub = "" if epsilon == 0 else "_{%s}" % printer._print(epsilon)
        return r"\left\lVert \operatorname{LN}%s(x) \right\rVert^{2}" % sub


def _vector(printer, term):
    """``x_k`` prints as the vector ``x``; ``a x_k + b`` as ``a x + b 1``."""
    alpha = sympy.diff(term, x[k])
    beta = sympy.expand(term - alpha * x[k])
    text = "x" if alpha == 1 else r"%s x" % printer._print(alpha)
    return text if beta == 0 else r"%s + %s\mathbf{1}" % (text, printer._print(beta))


def _mean(term):
    return Sum(term, (k, 1, d)) / d


def _definitions(expr):
    expr = expr.replace(lambda e: isinstance(e, SquaredNorm), lambda e: Sum(LN(x[k], j, e.args[0]) ** 2, (j, 1, d)))
    expr = expr.replace(lambda e: isinstance(e, LN), lambda e: (e.args[0].xreplace({k: e.args[1]}) - Mean(e.args[0]))
                        / sqrt(Var(e.args[0]) + e.args[2]))
    expr = expr.replace(lambda e: isinstance(e, Var), lambda e: Sum((e.args[0] - Mean(e.args[0])) ** 2, (k, 1, d)) / d)
    return expr.replace(lambda e: isinstance(e, Mean), lambda e: _mean(e.args[0]))


def _affine(term):
    """``term = alpha x_k + beta`` with ``alpha``, ``beta`` free of ``k`` and ``x``, else None."""
    alpha = sympy.diff(term, x[k])
    beta = sympy.expand(term - alpha * x[k])
    if alpha.has(k) or alpha.has(x) or beta.has(k) or beta.has(x):
        return None
    return alpha, beta


def _mean_lemma(expr):
    def apply(e):
        found = _affine(e.args[0])
        return e if found is None or e.args[0] == x[k] else found[0] * Mean(x[k]) + found[1]

    return expr.replace(lambda e: isinstance(e, Mean), apply)


def _var_lemma(expr):
    def apply(e):
        found = _affine(e.args[0])
        return e if found is None or e.args[0] == x[k] else found[0] ** 2 * Var(x[k])

    return expr.replace(lambda e: isinstance(e, Var), apply)


DEFINITION = Assumption(
    "D1", "LayerNorm with gain $1$ and bias $0$; mean and population variance over the $d$ coordinates",
    r"\operatorname{LN}_\varepsilon(x)_j = \frac{x_j - \mu(x)}{\sqrt{\operatorname{Var}(x) + \varepsilon}},\ "
    r"\mu(x) = \frac{1}{d}\sum_{k=1}^{d} x_k,\ \operatorname{Var}(x) = \frac{1}{d}\sum_{k=1}^{d} (x_k - \mu(x))^2,\ "
    r"\lVert y \rVert^2 = \sum_{j=1}^{d} y_j^2",
    rewrite=_definitions)
MEAN = Assumption("P1", "proved in the first part (for every affine map $a x_k + b$)",
                  r"\mu(a x + b\mathbf{1}) = a \mu(x) + b", rewrite=_mean_lemma)
VARIANCE = Assumption("P2", "proved in the second part (for every affine map $a x_k + b$)",
                      r"\operatorname{Var}(a x + b\mathbf{1}) = a^2 \operatorname{Var}(x)", rewrite=_var_lemma)
NOT_CONSTANT = Assumption("A1", "$x$ is not constant (with $\\varepsilon = 0$ LayerNorm is undefined otherwise)",
                          r"\operatorname{Var}(x) > 0", condition=Var(x[k]) > 0)
SHIFTED_POSITIVE = Assumption("P3", "proved in the third part", r"\operatorname{Var}(a x + b\mathbf{1}) > 0",
                              condition=Var(a * x[k] + b) > 0)
NONNEGATIVE = Assumption("P4", "proved in the fourth part for every real vector, so for $x$ and for $a x$",
                         r"\operatorname{Var}(x) \ge 0,\ \operatorname{Var}(a x) \ge 0",
                         condition=[Var(x[k]) >= 0, Var(a * x[k]) >= 0])


def mean_chain() -> Derivation:
    return Derivation(
        "The mean is affine",
        Mean(a * x[k] + b),
        [
            Step(Frac(Sum(a * x[k] + b, (k, 1, d)), d), "definition of the mean", using=("D1",)),
            Step(a * Frac(Sum(x[k], (k, 1, d)), d) + b, "linearity; the constant $b$ summed $d$ times"),
            Step(a * Mean(x[k]) + b, "definition of the mean", using=("D1",)),
        ],
        assumptions=[DEFINITION],
        scope=Scope.proved("every width $d \\ge 1$, every real $x$, $a > 0$ and real $b$"),
    )


def variance_chain() -> Derivation:
    return Derivation(
        "The variance scales by $a^2$",
        Var(a * x[k] + b),
        [
            Step(Frac(Sum((a * x[k] + b - Mean(a * x[k] + b)) ** 2, (k, 1, d)), d), "definition of the variance",
                 using=("D1",)),
            Step(Frac(Sum((a * x[k] + b - (a * Mean(x[k]) + b)) ** 2, (k, 1, d)), d), "the first part",
                 using=("P1",)),
            Step(Frac(Sum(a ** 2 * (x[k] - Mean(x[k])) ** 2, (k, 1, d)), d), "$(a u)^2 = a^2 u^2$"),
            Step(Frac(a ** 2 * Sum((x[k] - Mean(x[k])) ** 2, (k, 1, d)), d), "$a^2$ leaves the sum",
                 rules=("sum.factor_out",)),
            Step(a ** 2 * Var(x[k]), "definition of the variance", using=("D1",)),
        ],
        assumptions=[DEFINITION, MEAN],
        scope=Scope.proved("every width $d \\ge 1$, every real $x$, $a > 0$ and real $b$"),
    )


def positive_chain() -> Derivation:
    return Derivation(
        "A non-constant input stays non-constant",
        Var(a * x[k] + b),
        [
            Step(a ** 2 * Var(x[k]), "the second part", using=("P2",)),
            Step(sympy.Integer(0), "$a > 0$ and $x$ is not constant", relation=">", using=("A1",)),
        ],
        assumptions=[VARIANCE, NOT_CONSTANT],
        scope=Scope.proved("every width $d \\ge 1$, every non-constant real $x$, $a > 0$ and real $b$"),
    )


def nonnegative_chain() -> Derivation:
    return Derivation(
        "The variance is nonnegative",
        Var(x[k]),
        [
            Step(Frac(Sum((x[k] - Mean(x[k])) ** 2, (k, 1, d)), d), "definition of the variance", using=("D1",)),
            Step(sympy.Integer(0), "a sum of squares divided by $d > 0$", relation=">=", using=("D1",)),
        ],
        assumptions=[DEFINITION],
        scope=Scope.proved("every width $d \\ge 1$ and every real $x$"),
    )


def _root(*factors):
    """``sqrt(product)`` kept as written (SymPy would take a positive factor out at once)."""
    return Pow(Mul(*factors, evaluate=False), Rational(1, 2), evaluate=False)


def affine_chain() -> Derivation:
    return Derivation(
        "With $\\varepsilon = 0$: offset and positive scale are forgotten",
        LN(a * x[k] + b, j, 0),
        [
            Step(Frac(a * x[j] + b - Mean(a * x[k] + b), sqrt(Var(a * x[k] + b))), "definition of LayerNorm",
                 using=("D1", "P3")),
            Step(Frac(a * (x[j] - Mean(x[k])), _root(a ** 2, Var(x[k]))), "the first and second parts",
                 using=("P1", "P2", "P3", "A1")),
            Step(Frac(a * (x[j] - Mean(x[k])), a * sqrt(Var(x[k]))), "$\\sqrt{a^2} = a$ for $a > 0$",
                 using=("A1",)),
            Step(Frac(x[j] - Mean(x[k]), sqrt(Var(x[k]))), "cancel $a > 0$", using=("A1",)),
            Step(LN(x[k], j, 0), "definition of LayerNorm", using=("D1", "A1")),
        ],
        assumptions=[DEFINITION, MEAN, VARIANCE, NOT_CONSTANT, SHIFTED_POSITIVE],
        scope=Scope.proved("every width $d \\ge 1$, every non-constant real $x$, every $a > 0$ and every real $b$"),
    )


def epsilon_chain() -> Derivation:
    return Derivation(
        "With $\\varepsilon > 0$: the scale moves into the epsilon",
        LN(a * x[k], j, eps),
        [
            Step(Frac(a * x[j] - Mean(a * x[k]), sqrt(Var(a * x[k]) + eps)), "definition of LayerNorm",
                 using=("D1", "P4")),
            Step(Frac(a * (x[j] - Mean(x[k])), sqrt(a ** 2 * Var(x[k]) + eps)), "the first and second parts ($b = 0$)",
                 using=("P1", "P2", "P4")),
            Step(Frac(a * (x[j] - Mean(x[k])), a * sqrt(Var(x[k]) + eps / a ** 2)),
                 "take $a^2$ out of the root, $a > 0$", using=("P4",)),
            Step(Frac(x[j] - Mean(x[k]), sqrt(Var(x[k]) + eps / a ** 2)), "cancel $a > 0$", using=("P4",)),
            Step(LN(x[k], j, eps / a ** 2), "definition of LayerNorm", using=("D1", "P4")),
        ],
        assumptions=[DEFINITION, MEAN, VARIANCE, NONNEGATIVE],
        scope=Scope.proved("every width $d \\ge 1$, every real $x$, every $a > 0$ and every $\\varepsilon > 0$"),
    )


def norm_chain() -> Derivation:
    return Derivation(
        "The squared norm of the output",
        SquaredNorm(eps),
        [
            Step(Sum(Frac((x[j] - Mean(x[k])) ** 2, Var(x[k]) + eps), (j, 1, d)),
                 "definition of the norm and of LayerNorm", using=("D1", "P4")),
            Step(Frac(Sum((x[j] - Mean(x[k])) ** 2, (j, 1, d)), Var(x[k]) + eps),
                 "the denominator does not depend on $j$", using=("P4",), rules=("sum.factor_out",)),
            Step(Frac(d * Var(x[k]), Var(x[k]) + eps), "definition of the variance", using=("D1", "P4")),
        ],
        assumptions=[DEFINITION, NONNEGATIVE],
        scope=Scope.proved("every width $d \\ge 1$, every real $x$ and every $\\varepsilon > 0$ (gain $1$, bias $0$)"),
    )


def norm_zero_chain() -> Derivation:
    return Derivation(
        "With $\\varepsilon = 0$ the squared norm is $d$",
        SquaredNorm(0),
        [
            Step(Frac(Sum((x[j] - Mean(x[k])) ** 2, (j, 1, d)), Var(x[k])),
                 "definition of the norm and of LayerNorm; $\\operatorname{Var}(x)$ leaves the sum",
                 using=("D1", "A1")),
            Step(Frac(d * Var(x[k]), Var(x[k])), "definition of the variance", using=("D1", "A1")),
            Step(d, "cancel $\\operatorname{Var}(x) > 0$", using=("A1",)),
        ],
        assumptions=[DEFINITION, NOT_CONSTANT],
        scope=Scope.proved("every width $d \\ge 1$ and every non-constant real $x$ (gain $1$, bias $0$)"),
    )


R = sympy.Rational


def layer_norm(vector, epsilon=0):
    """LayerNorm of an explicit vector (gain 1, bias 0), exactly."""
    size = len(vector)
    mean = sum(vector, sympy.Integer(0)) / size
    variance = sum(((v - mean) ** 2 for v in vector), sympy.Integer(0)) / size
    return sympy.ImmutableMatrix([[(v - mean) / sqrt(variance + epsilon) for v in vector]])


EXAMPLE = [sympy.Integer(1), sympy.Integer(2), sympy.Integer(4), sympy.Integer(9)]


def example_check() -> Check:
    scaled = [3 * v - 5 for v in EXAMPLE]
    ln = layer_norm(EXAMPLE)
    cases = [
        Case("offset and scale forgotten", Computed(r"\operatorname{LN}(3x - 5\cdot\mathbf{1})", layer_norm(scaled)),
             Computed(r"\operatorname{LN}(x)", ln)),
        Case("epsilon absorbs the scale", Computed(r"\operatorname{LN}_{1}(3x)", layer_norm([3 * v for v in EXAMPLE], 1)),
             Computed(r"\operatorname{LN}_{1/9}(x)", layer_norm(EXAMPLE, R(1, 9)))),
        Case("squared norm with $\\varepsilon = 0$ is $d$", Computed(r"\lVert \operatorname{LN}(x) \rVert^2",
                                                                   sum(v ** 2 for v in ln)), sympy.Integer(4)),
        Case("squared norm with $\\varepsilon = 1$", Computed(r"\lVert \operatorname{LN}_1(x) \rVert^2",
                                                             sum(v ** 2 for v in layer_norm(EXAMPLE, 1))),
             R(4 * 19 // 2, 1) / (R(19, 2) + 1)),
    ]
    return Check(
        "A worked vector, exactly",
        r"x = (1, 2, 4, 9):\ \mu = 4,\ \operatorname{Var}(x) = \tfrac{19}{2}",
        cases,
        scope=Scope.checked("the vector $x = (1, 2, 4, 9)$ with $a = 3$, $b = -5$, $\\varepsilon \\in \\{0, 1\\}$"),
        note="Each side computed exactly from the definition (square roots of rationals, no decimals).",
        shown=[0],
    )


def negative_scale_counterexample() -> Counterexample:
    return Counterexample(
        "A negative scale flips the sign",
        [("x", sympy.ImmutableMatrix([EXAMPLE])), ("a", sympy.Integer(-1)), ("b", sympy.Integer(0))],
        Computed(r"\operatorname{LN}(-x)", layer_norm([-v for v in EXAMPLE])),
        Computed(r"\operatorname{LN}(x)", layer_norm(EXAMPLE)),
        scope=Scope.counterexample("$a = -1$, $x = (1, 2, 4, 9)$: the condition $a > 0$ is needed"),
    )


def epsilon_counterexample() -> Counterexample:
    return Counterexample(
        "With $\\varepsilon > 0$ the scale is not forgotten",
        [("x", sympy.ImmutableMatrix([EXAMPLE])), ("a", sympy.Integer(3)), (r"\varepsilon", sympy.Integer(1))],
        Computed(r"\operatorname{LN}_1(3x)", layer_norm([3 * v for v in EXAMPLE], 1)),
        Computed(r"\operatorname{LN}_1(x)", layer_norm(EXAMPLE, 1)),
        scope=Scope.counterexample("$a = 3$, $\\varepsilon = 1$, $x = (1, 2, 4, 9)$"),
    )


def build() -> Result:
    return Result(
        NAME,
        "LayerNorm invariances",
        __doc__.split("\n", 2)[2].strip(),
        [mean_chain(), variance_chain(), positive_chain(), nonnegative_chain(), affine_chain(), epsilon_chain(),
         norm_chain(), norm_zero_chain(), example_check(), negative_scale_counterexample(), epsilon_counterexample()],
    )
