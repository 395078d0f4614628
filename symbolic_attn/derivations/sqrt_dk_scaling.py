"""Why scores are divided by $\\sqrt{d_k}$.

If the components of a query $q$ and a key $k$ are independent with mean $0$ and variance
$1$, then $q \\cdot k = \\sum_{i=1}^{d_k} q_i k_i$ has mean $0$ and variance $d_k$, so
$q \\cdot k / \\sqrt{d_k}$ has variance $1$ whatever the width $d_k$.  Expectations are
manipulated by stated rules only (definition of variance, linearity, independence,
moments); each rule is an assumption below, and a step may use only the rules it names.
"""

import sympy
from sympy import Function, Sum, sqrt

from symbolic_attn.proofs.prove import Frac
from symbolic_attn.proofs.chain import Assumption, Computed, Derivation, Scope, Step
from symbolic_attn.proofs.result import Case, Check, Counterexample, Result

NAME = "sqrt_dk_scaling"

d_k = sympy.Symbol("d_k", integer=True, positive=True)
i = sympy.Symbol("i", integer=True, positive=True)
q, k = sympy.IndexedBase("q", real=True), sympy.IndexedBase("k", real=True)
x, y = sympy.symbols("q k", real=True)  # one query and one key component, for the general formula
mu_q, mu_k = sympy.symbols("mu_q mu_k", real=True)
sigma_q, sigma_k = sympy.symbols("sigma_q sigma_k", positive=True)
RANDOM = {q, k, x, y}


class Ex(Function):
    """Expectation, as notation: only the stated rules may transform it."""

    nargs = 1

    def domain_conditions(self):
        # Notation for a moment of bounded random variables: defined for every argument
        # (the checker's closed domain table asks each function for its entry).
        return []

    def _latex(self, printer, exp=None):
        inner = r"\operatorname{E}\left[%s\right]" % printer._print(self.args[0])
        return inner if exp is None else r"%s^{%s}" % (inner, exp)


class Var(Function):
    """Variance, as notation: only the stated rules may transform it."""

    nargs = 1

    def domain_conditions(self):
        # Notation for a moment of bounded random variables: defined for every argument
        # (the checker's closed domain table asks each function for its entry).
        return []

    def _latex(self, printer, exp=None):
        inner = r"\operatorname{Var}\left[%s\right]" % printer._print(self.args[0])
        return inner if exp is None else r"%s^{%s}" % (inner, exp)


def _variable(expr):
    """The random variables an expression depends on: among q_i, k_i (by base), q, k."""
    indexed = {atom for atom in expr.atoms(sympy.Indexed) if atom.base in RANDOM}
    labels = {atom.base.label for atom in indexed}
    plain = {atom for atom in expr.atoms(sympy.Symbol) if atom in RANDOM and atom not in labels}
    return {atom.base for atom in indexed} | plain


def _is_constant(expr):
    return not _variable(expr)


def _random_components(expr) -> list:
    """The components q_i, k_j an expression contains, in a fixed order (never hash order)."""
    return sorted((atom for atom in expr.atoms(sympy.Indexed) if atom.base in (q, k)), key=sympy.default_sort_key)


def _plain_variables(expr) -> list:
    """The one-component variables q, k (the general formula) an expression contains."""
    if expr.atoms(sympy.Indexed):
        return []  # the label q of q_i is the sequence, not the plain variable
    return sorted((atom for atom in expr.atoms(sympy.Symbol) if atom in (x, y)), key=sympy.default_sort_key)


# ---------------------------------------------------------------------------- the rules
# Each rewrite is exactly the statement printed beside it, for the terms it names; any other
# expression is left unchanged.  Nothing depends on set or hash order.


def _variance_definition(expr):
    """Var[X] = E[X^2] - E[X]^2, for every X."""
    return expr.replace(lambda e: isinstance(e, Var), lambda e: Ex(e.args[0] ** 2) - Ex(e.args[0]) ** 2)


def _linearity(expr):
    """E[sum] = sum of E; E[c X] = c E[X] for a constant c; E[c] = c."""
    def split(e):
        argument = sympy.expand(e.args[0])
        if isinstance(argument, Sum):
            return Sum(Ex(argument.function), *argument.limits)
        if isinstance(argument, sympy.Add):
            return sympy.Add(*[Ex(term) for term in argument.args])
        if isinstance(argument, sympy.Mul):
            constant = [f for f in argument.args if _is_constant(f)]
            if constant:
                return sympy.Mul(*constant) * Ex(sympy.Mul(*[f for f in argument.args if not _is_constant(f)]))
        if _is_constant(argument):
            return argument
        return e

    return expr.replace(lambda e: isinstance(e, Ex), split)


def _split_product(argument, first, second):
    """``E[f(first) g(second)]`` as ``E[f(first)] E[g(second)]`` when every factor of the
    product depends on exactly one of the two variables (else None)."""
    if not isinstance(argument, sympy.Mul):
        return None
    left, right = [], []
    for factor in argument.args:
        has_first, has_second = factor.has(first), factor.has(second)
        if has_first == has_second:
            return None  # a constant factor, or one mixing both variables: not this rule
        (left if has_first else right).append(factor)
    if not left or not right:
        return None
    return Ex(sympy.Mul(*left)) * Ex(sympy.Mul(*right))


def _independent_components(expr):
    """(A1) E[f(q_i) g(k_j)] = E[f(q_i)] E[g(k_j)] for one query and one key component;
    Var[sum_i X_i] = sum_i Var[X_i] when X_i depends on q_i and k_i only (i the sum's index)."""

    def factor(e):
        argument = e.args[0]
        found = _random_components(argument)
        if _plain_variables(argument) or len(found) != 2 or {c.base for c in found} != {q, k}:
            return e
        first, second = found
        split = _split_product(argument, first, second)
        return e if split is None else split

    def separate(e):
        summand, limits = e.args[0].function, e.args[0].limits
        if len(limits) != 1:
            return e
        index = limits[0][0]
        found = _random_components(summand)
        if _plain_variables(summand) or not found or any(c.indices != (index,) for c in found):
            return e
        return Sum(Var(summand), *limits)

    expr = expr.replace(lambda e: isinstance(e, Var) and isinstance(e.args[0], Sum), separate)
    return expr.replace(lambda e: isinstance(e, Ex), factor)


def _independent_pair(expr):
    """(A3) E[f(q) g(k)] = E[f(q)] E[g(k)] for the one query component q and key component k."""

    def factor(e):
        argument = e.args[0]
        if _random_components(argument) or _plain_variables(argument) != sorted((x, y), key=sympy.default_sort_key):
            return e
        split = _split_product(argument, x, y)
        return e if split is None else split

    return expr.replace(lambda e: isinstance(e, Ex), factor)


def _standard_moments(expr):
    """(A2) E[q_i] = E[k_i] = 0 and E[q_i^2] = E[k_i^2] = 1, for one component."""

    def moment(e):
        argument = e.args[0]
        found = _random_components(argument)
        if len(found) != 1:
            return e
        component = found[0]
        if argument == component:
            return sympy.Integer(0)
        if argument == component ** 2:
            return sympy.Integer(1)
        return e

    return expr.replace(lambda e: isinstance(e, Ex), moment)


def _general_moments(expr):
    """(A4) E[q] = mu_q, E[q^2] = sigma_q^2 + mu_q^2 (and the same for k)."""
    moments = {x: mu_q, x ** 2: sigma_q ** 2 + mu_q ** 2, y: mu_k, y ** 2: sigma_k ** 2 + mu_k ** 2}
    return expr.replace(lambda e: isinstance(e, Ex) and e.args[0] in moments, lambda e: moments[e.args[0]])


VARIANCE = Assumption("D1", "definition of the variance", r"\operatorname{Var}[X] = \operatorname{E}[X^2] - \operatorname{E}[X]^2",
                      rewrite=_variance_definition)
LINEAR = Assumption("D2", "expectation is linear (constants and finite sums come out)",
                    r"\operatorname{E}[aX + bY] = a\,\operatorname{E}[X] + b\,\operatorname{E}[Y]", rewrite=_linearity)
INDEPENDENT = Assumption("A1", "the components $q_1, \\dots, q_{d_k}, k_1, \\dots, k_{d_k}$ are independent; "
                         "used as two rules, for one query and one key component, and for terms $X_i$ that "
                         "depend on $q_i$ and $k_i$ only",
                         r"\operatorname{E}[f(q_i) g(k_j)] = \operatorname{E}[f(q_i)]\,\operatorname{E}[g(k_j)],\ \allowbreak "
                         r"\operatorname{Var}[\textstyle\sum_i X_i] = \sum_i \operatorname{Var}[X_i]",
                         rewrite=_independent_components)
STANDARD = Assumption("A2", "every component has mean $0$ and variance $1$",
                      r"\operatorname{E}[q_i] = \operatorname{E}[k_i] = 0,\ \operatorname{E}[q_i^2] = \operatorname{E}[k_i^2] = 1",
                      rewrite=_standard_moments)
INDEPENDENT_QK = Assumption("A3", "one query component $q$ and one key component $k$ are independent",
                            r"\operatorname{E}[f(q) g(k)] = \operatorname{E}[f(q)]\,\operatorname{E}[g(k)]", rewrite=_independent_pair)
MOMENTS = Assumption("A4", "$q$ has mean $\\mu_q$ and variance $\\sigma_q^2$; $k$ has mean $\\mu_k$ and variance $\\sigma_k^2$",
                     r"\operatorname{E}[q^2] = \sigma_q^2 + \mu_q^2,\ \operatorname{E}[k^2] = \sigma_k^2 + \mu_k^2",
                     rewrite=_general_moments)

DOT = Sum(q[i] * k[i], (i, 1, d_k))


def mean_chain() -> Derivation:
    return Derivation(
        "The mean of $q \\cdot k$",
        Ex(DOT),
        [
            Step(Sum(Ex(q[i] * k[i]), (i, 1, d_k)), "linearity", using=("D2",)),
            Step(Sum(Ex(q[i]) * Ex(k[i]), (i, 1, d_k)), "independence", using=("A1",)),
            Step(sympy.Integer(0), "zero means", using=("A2",)),
        ],
        assumptions=[LINEAR, INDEPENDENT, STANDARD],
        scope=Scope.proved("every width $d_k \\ge 1$ (symbolic)"),
    )


def variance_chain() -> Derivation:
    return Derivation(
        "The variance of $q \\cdot k$",
        Var(DOT),
        [
            Step(Sum(Var(q[i] * k[i]), (i, 1, d_k)), "independent terms: variances add", using=("A1",)),
            Step(Sum(Ex(q[i] ** 2 * k[i] ** 2) - Ex(q[i] * k[i]) ** 2, (i, 1, d_k)), "definition of the variance",
                 using=("D1",)),
            Step(Sum(Ex(q[i] ** 2) * Ex(k[i] ** 2) - (Ex(q[i]) * Ex(k[i])) ** 2, (i, 1, d_k)), "independence",
                 using=("A1",)),
            Step(Sum(sympy.Integer(1), (i, 1, d_k)), "means $0$, variances $1$", using=("A2",)),
            Step(d_k, "$d_k$ terms equal to $1$"),
        ],
        assumptions=[VARIANCE, INDEPENDENT, STANDARD],
        scope=Scope.proved("every width $d_k \\ge 1$ (symbolic)"),
    )


PROVED_VARIANCE = Assumption("P1", "proved in the previous part", r"\operatorname{Var}[q \cdot k] = d_k",
                             rewrite=lambda e: e.xreplace({Var(DOT): d_k}))


def scaled_chain() -> Derivation:
    return Derivation(
        "Scaling by $1/\\sqrt{d_k}$",
        Var(DOT / sqrt(d_k)),
        [
            Step(Var(DOT) / d_k, "$\\operatorname{Var}[aX] = a^2 \\operatorname{Var}[X]$",
                 using=("D1", "D2")),
            Step(Frac(d_k, d_k), "the variance of $q \\cdot k$", using=("P1",)),
            Step(sympy.Integer(1), "arithmetic"),
        ],
        assumptions=[VARIANCE, LINEAR, PROVED_VARIANCE],
        scope=Scope.proved("every width $d_k \\ge 1$ (symbolic)"),
    )


def general_term_chain() -> Derivation:
    return Derivation(
        "One term, any means and variances",
        Var(x * y),
        [
            Step(Ex(x ** 2 * y ** 2) - Ex(x * y) ** 2, "definition of the variance", using=("D1",)),
            Step(Ex(x ** 2) * Ex(y ** 2) - (Ex(x) * Ex(y)) ** 2, "independence", using=("A3",)),
            Step((sigma_q ** 2 + mu_q ** 2) * (sigma_k ** 2 + mu_k ** 2) - mu_q ** 2 * mu_k ** 2, "the moments",
                 using=("A4",)),
        ],
        assumptions=[VARIANCE, INDEPENDENT_QK, MOMENTS],
        scope=Scope.proved("all means and variances"),
        note="With $\\mu_q = \\mu_k = 0$ and $\\sigma_q = \\sigma_k = 1$ this is the $1$ per term used above.",
    )


# --------------------------------------------------------------- concrete distributions

def rademacher_moment(power: int):
    """E[x^m] for x = +-1 with probability 1/2 each: 1 for even m, 0 for odd m."""
    return sympy.Integer(1 - power % 2)


def normal_moment(power: int):
    """E[x^m] for a standard normal x: (m-1)!! for even m, 0 for odd m."""
    return sympy.Integer(0) if power % 2 else sympy.factorial2(power - 1)


def uniform_moment(power: int):
    """E[x^m] for x uniform on [-a, a], a = sqrt(3): a^m / (m + 1) for even m, 0 for odd m."""
    return sympy.Integer(0) if power % 2 else sqrt(3) ** power / (power + 1)


#: The concrete distributions, each by its closed-form moments (sympy.stats cross-checks them in the tests).
DISTRIBUTIONS = (
    ("Rademacher $\\pm 1$", rademacher_moment, (1, 2, 3)),
    ("standard normal", normal_moment, (1, 2)),
    ("uniform on $[-\\sqrt{3}, \\sqrt{3}]$", uniform_moment, (1,)),
)


def expectation_of(polynomial, variables, moment):
    """E[polynomial] for independent variables with the given moments (expand into monomials)."""
    polynomial = sympy.Poly(sympy.expand(polynomial), *variables)
    total = sympy.Integer(0)
    for powers, coefficient in polynomial.terms():
        term = coefficient
        for power in powers:
            term *= moment(power) if power else 1
        total += term
    return total


def _components(width, same=False):
    qs = list(sympy.symbols(f"q_1:{width + 1}", real=True))
    ks = qs if same else list(sympy.symbols(f"k_1:{width + 1}", real=True))
    variables = qs if same else qs + ks
    return sympy.Add(*[a * b for a, b in zip(qs, ks)]), variables


def moments_of_dot(moment, width, same=False):
    """(E[q.k], Var[q.k]) by closed-form moments, independent components."""
    dot, variables = _components(width, same)
    mean = expectation_of(dot, variables, moment)
    return mean, expectation_of(dot ** 2, variables, moment) - mean ** 2


def distributions_check() -> Check:
    cases, summary = [], []
    for label, moment, widths in DISTRIBUTIONS:
        for width in widths:
            mean, var = moments_of_dot(moment, width)
            where = f"{label}, $d_k = {width}$"
            cases.append(Case(f"{where}: mean", Computed(r"\operatorname{E}[q \cdot k]", mean, _MEANING), sympy.Integer(0)))
            cases.append(Case(f"{where}: variance", Computed(r"\operatorname{Var}[q \cdot k]", var, _MEANING),
                              sympy.Integer(width)))
        summary.append(f"{label}: $d_k \\in \\{{{', '.join(map(str, widths))}\\}}$, mean $0$ and variance $d_k$")
    return Check(
        "Exact confirmations on concrete distributions",
        r"\operatorname{E}[q \cdot k] = 0, \qquad \operatorname{Var}[q \cdot k] = d_k",
        cases,
        scope=Scope.checked("three distributions and small $d_k$ (closed-form moments, exact)"),
        note="Computed from each distribution's closed-form moments with independent components: "
             "confirmations, not the proof.",
        summary=summary,
    )


_MEANING = "the expectation and variance computed exactly from the distribution's closed-form moments"


def dependence_counterexample() -> Counterexample:
    width = 2
    _, var = moments_of_dot(rademacher_moment, width, same=True)
    return Counterexample(
        "Without independence: $k = q$",
        [("d_k", sympy.Integer(width)), ("q_i", sympy.Symbol(r"\pm 1"))],
        Computed(r"\operatorname{Var}[q \cdot q]", var, _MEANING),
        Computed("d_k", sympy.Integer(width), "the width"),
        scope=Scope.counterexample("Rademacher components, $d_k = 2$, $k = q$"),
        note="With $k = q$ and $q_i = \\pm 1$, $q \\cdot k = \\sum_i q_i^2 = d_k$ is constant: its variance is "
             "$0$, not $d_k$ (and its mean is $d_k$, not $0$).",
    )


def build() -> Result:
    return Result(
        NAME,
        "The $\\sqrt{d_k}$ scaling",
        __doc__.split("\n", 2)[2].strip(),
        [mean_chain(), variance_chain(), scaled_chain(), general_term_chain(), distributions_check(),
         dependence_counterexample()],
    )
