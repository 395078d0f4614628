r"""The rules of expectation: a step's sides with every ``E[...]`` and ``Var(...)`` replaced by
what the declarations make them, before the sound checker compares them.

Each rule is an identity for every joint distribution the declarations allow
(:mod:`.randomness`), so the reduced side *equals* the side, never approximates it:

1. ``Var(X) = E[X^2] - E[X]^2`` and ``Cov(X, Y) = E[XY] - E[X] E[Y]`` (the definitions;
   moments are finite);
2. linearity: a product of sums is the sum over fresh indices of the products
   (``(\sum_i a_i)^2 = \sum_i \sum_{i'} a_i a_{i'}``), ``E`` of a finite sum is the sum of
   the ``E``, and a factor with nothing random comes out;
3. a product of random entries is split by the *equality pattern* of their indices: for
   ``q_i q_l`` the cases ``i = l`` (weight ``\delta_{il}``) and ``i \ne l`` (weight
   ``1 - \delta_{il}``), which add up to 1 for every ``i, l``;
4. within one case, factors that depend on disjoint entries declared independent are
   independent: the expectation of their product is the product of their expectations;
   a factor with an entry not declared independent is never split from another;
5. ``E[X] =`` the declared mean, ``E[X^2] =`` variance + mean²; any other moment stays an
   unknown (``E[q_i^4]``), the same unknown wherever it is the same moment;
6. a sum over ``l`` of ``\delta_{xl} f(l)`` is ``f(x)`` when ``x`` is known to lie in the
   range of ``l`` (from an enclosing sum or a declaration); otherwise the step is undecided.

>>> import sympy
>>> from symbolic_attn.steps.randomness import Expectation, RandomFamily, Randomness, Var
>>> n = sympy.Symbol("n", integer=True, positive=True)
>>> i = sympy.Symbol("i", integer=True, positive=True)
>>> q, k = sympy.IndexedBase("q", real=True), sympy.IndexedBase("k", real=True)
>>> family = RandomFamily(("q", "k"), "vector", True, sympy.Integer(0), sympy.Integer(1))
>>> reduce_random(Var(sympy.Sum(q[i] * k[i], (i, 1, n))), Randomness((family,)), {})
n
>>> reduce_random(Expectation(q[i] ** 2 * k[i] ** 2), Randomness((family,)), {})
1
>>> dependent = RandomFamily(("q", "k"), "vector", False, sympy.Integer(0), sympy.Integer(1))
>>> reduce_random(Expectation(q[i] ** 2 * k[i] ** 2), Randomness((dependent,)), {})
E[k[i]**2*q[i]**2]
"""

from __future__ import annotations

import math
from typing import Any

import sympy
from sympy.utilities.iterables import multiset_partitions

from symbolic_attn.errors import UndecidedError
from symbolic_attn.proofs.binders import substitute
from symbolic_attn.proofs.notation import Frac
from symbolic_attn.steps.randomness import Cov, Expectation, Randomness, Var

__all__ = ["reduce_random", "MAX_TERMS", "MAX_INDICES", "MAX_POWER", "RULES"]

#: Most terms a side may expand into.
MAX_TERMS = 2_000
#: Most distinct indices of random entries in one product (the cases are their set partitions).
MAX_INDICES = 5
#: Highest power of a random sum expanded.
MAX_POWER = 6
#: The rules, as a proof's reason names them.
RULES = "the rules of expectation (linearity, independence as declared, the declared means and variances)"

_Term = tuple[tuple[tuple[Any, Any, Any], ...], Any]  # (limits outermost first, product)


def reduce_random(expr: Any, randomness: Randomness, ranges: dict[Any, tuple[Any, Any]]) -> Any:
    """``expr`` with every expectation and variance replaced by rules 1-6; ``ranges`` maps
    each declared index symbol to its ``(low, high)``.  An expectation the rules cannot
    settle stays an unevaluated :class:`~symbolic_attn.steps.randomness.Expectation` (an
    unknown); raises :class:`~symbolic_attn.errors.UndecidedError` for a side too large to
    expand or a Kronecker delta whose range is not known."""
    reducer = _Reducer(randomness)
    # A variance declared 0 makes every component its mean, almost surely.
    families = {a: randomness.family_of(a) for a in randomness.atoms(expr, in_moments=True)}
    constants = {a: f.mean for a, f in families.items() if f is not None and f.variance == 0 and f.mean is not None}
    if constants:
        expr = expr.xreplace(constants)
    # A fraction stays a Frac, so that the checker still needs its denominator nonzero: an
    # unfolded E[X]/E[X] would cancel to 1, and 0 * (1/E[X]) to 0, before anything is checked.
    written = expr if isinstance(expr, sympy.Basic) else sympy.Integer(expr)
    reduced = _eliminate_deltas(reducer.walk(written), dict(ranges))
    # a sum whose terms do not depend on its index is that many terms (SymPy's own rule)
    return reduced.replace(lambda e: isinstance(e, sympy.Sum) and not (
        e.function.free_symbols & {limit[0] for limit in e.limits}), lambda e: e.doit())


class _Reducer:
    def __init__(self, randomness: Randomness):
        self.randomness = randomness

    def random(self, expr: Any) -> bool:
        return self.randomness.is_random(expr)

    def walk(self, node: Any) -> Any:
        """Rules 1-5 bottom-up: the innermost expectations first."""
        if not isinstance(node, sympy.Basic) or not node.args:
            return node
        if isinstance(node, Var):
            inside = self.walk(node.args[0])
            return self.expect(inside ** 2) - self.expect(inside) ** 2
        if isinstance(node, Cov):
            one, other = (self.walk(argument) for argument in node.args)
            return self.expect(one * other) - self.expect(one) * self.expect(other)
        if isinstance(node, Expectation):
            return self.expect(self.walk(node.args[0]))
        if not node.atoms(Expectation, Var, Cov):
            return node
        return node.func(*[self.walk(argument) for argument in node.args])

    def expect(self, inside: Any) -> Any:
        if not self.random(inside):
            return inside  # E[c] = c
        total = []
        for limits, product in self.terms(inside):
            if _expanded_size(product) > MAX_TERMS:
                raise UndecidedError(f"the expectation expands into more than {MAX_TERMS} terms: split the step")
            for monomial in sympy.Add.make_args(sympy.expand(product)):
                value = self.moment(monomial)
                for low_high in reversed(limits):
                    value = sympy.Sum(value, low_high)
                total.append(value)
        return sympy.Add(*total)

    # -- rule 2: sums and products of sums as nested sums over fresh indices

    def terms(self, expr: Any) -> list[_Term]:
        if not self.random(expr):
            return [((), expr)]
        if isinstance(expr, sympy.Add):
            return self.bounded([term for argument in expr.args for term in self.terms(argument)])
        if isinstance(expr, sympy.Mul):
            found: list[_Term] = [((), sympy.Integer(1))]
            for factor in expr.args:
                found = self.bounded([(limits + more, product * other) for limits, product in found
                                      for more, other in self.terms(factor)])
            return found
        if isinstance(expr, Frac) and not self.random(expr.args[1]):  # num / den: den's obligation kept
            return [(limits, product * Frac(1, expr.args[1])) for limits, product in self.terms(expr.args[0])]
        if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and 2 <= expr.exp <= MAX_POWER \
                and expr.base.has(sympy.Sum):
            return self.terms(sympy.Mul(*([expr.base] * int(expr.exp)), evaluate=False))
        if isinstance(expr, sympy.Sum):
            body, limits, renamed = expr.function, [], {}  # type: tuple[Any, list[Any], dict[Any, Any]]
            for variable, low, high in reversed(expr.limits):  # outermost first, each index fresh
                fresh = sympy.Dummy(variable.name, **_flags(variable))
                limits.append((fresh, substitute(low, renamed), substitute(high, renamed)))
                renamed[variable] = fresh
            body = substitute(body, renamed)
            return self.bounded([(tuple(limits) + more, product) for more, product in self.terms(body)])
        return [((), expr)]

    @staticmethod
    def bounded(terms: list[_Term]) -> list[_Term]:
        if len(terms) > MAX_TERMS:
            raise UndecidedError(f"the expectation expands into more than {MAX_TERMS} terms: split the step")
        return terms

    # -- rules 3-5: one product of random factors

    def moment(self, monomial: Any) -> Any:
        fixed = [f for f in sympy.Mul.make_args(monomial) if not self.random(f)]
        factors = [f for f in sympy.Mul.make_args(monomial) if self.random(f)]
        if not factors:
            return monomial
        indices = list(dict.fromkeys(a.indices[0] for f in factors for a in sorted(
            self.randomness.atoms(f), key=sympy.default_sort_key) if isinstance(a, sympy.Indexed)))
        if len(indices) > MAX_INDICES:
            raise UndecidedError(f"a product of random entries with more than {MAX_INDICES} different indices: "
                                 "split the step")
        cases = []
        for blocks in (multiset_partitions(indices) if len(indices) > 1 else [[indices]]):
            weight = sympy.Integer(1)
            for block in blocks:
                for other in block[1:]:
                    weight *= sympy.KroneckerDelta(block[0], other)
            for first, block in enumerate(blocks):
                for later in blocks[first + 1:]:
                    weight *= 1 - sympy.KroneckerDelta(block[0], later[0])
            if weight == 0:
                continue
            same = {other: block[0] for block in blocks for other in block[1:]}
            cases.append(weight * self.independent_product(factors, same))
        return sympy.Mul(*fixed) * sympy.Add(*cases)

    def independent_product(self, factors: list[Any], same: dict[Any, Any]) -> Any:
        """The expectation of the product of ``factors`` when the indices of ``same`` equal
        their representatives: a product over the groups known independent (rule 4)."""
        if same:
            renamed = {a: a.base[tuple(same.get(index, index) for index in a.indices)]
                       for f in factors for a in self.randomness.atoms(f) if isinstance(a, sympy.Indexed)}
            factors = [f.xreplace(renamed) for f in factors]
        groups: list[list[Any]] = []
        for factor in factors:
            joined = [g for g in groups if any(not self.independent(factor, other) for other in g)]
            merged = [factor] + [f for g in joined for f in g]
            groups = [g for g in groups if g not in joined] + [merged]
        value = sympy.Integer(1)
        for group in groups:
            value *= self.group_moment(sympy.Mul(*group))
        return value

    def independent(self, one: Any, other: Any) -> bool:
        atoms_one, atoms_other = self.randomness.atoms(one), self.randomness.atoms(other)
        if atoms_one & atoms_other:
            return False
        # one collection: every component of every name declared independent, in any statement
        return all(family is not None and family.independent
                   for family in (self.randomness.family_of(a) for a in atoms_one | atoms_other))

    def group_moment(self, product: Any) -> Any:
        atoms = self.randomness.atoms(product)
        base, power = product.as_base_exp()
        if len(atoms) == 1 and base in atoms and power.is_Integer and power >= 1:
            family = self.randomness.family_of(base)
            assert family is not None
            mean = family.mean if family.mean is not None else Expectation(base)
            if power == 1:
                return mean
            if power == 2 and family.variance is not None:
                return family.variance + mean ** 2
        return Expectation(product)


def _flags(variable: Any) -> dict[str, bool]:
    flags = {"integer": True}
    if variable.is_positive:
        flags["positive"] = True
    elif variable.is_nonnegative:
        flags["nonnegative"] = True
    return flags


# -- rule 6: Kronecker deltas summed away


def _eliminate_deltas(node: Any, ranges: dict[Any, tuple[Any, Any]]) -> Any:
    if not isinstance(node, sympy.Basic) or not node.has(sympy.KroneckerDelta):
        return node
    if isinstance(node, sympy.Sum):
        inner = node.function
        for limit in node.limits[:-1]:  # a multiple sum as nested sums, the first limit innermost
            inner = sympy.Sum(inner, limit)
        return _sum_of(inner, tuple(node.limits[-1]), ranges)
    if isinstance(node, (sympy.Add, sympy.Mul, sympy.Pow, Frac)) or isinstance(node, sympy.Function):
        return node.func(*[_eliminate_deltas(argument, ranges) for argument in node.args])
    return node


def _sum_of(body: Any, limit: tuple[Any, Any, Any], ranges: dict[Any, tuple[Any, Any]]) -> Any:
    variable, low, high = limit
    body = _eliminate_deltas(body, {**ranges, variable: (low, high)})
    total = []
    for term in sympy.Add.make_args(sympy.expand(body)):
        delta = next((f for f in sympy.Mul.make_args(term)
                      if isinstance(f.as_base_exp()[0], sympy.KroneckerDelta) and _partner(f.as_base_exp()[0], variable)
                      is not None), None)
        if delta is None:
            total.append(sympy.Sum(term, limit))
            continue
        partner = _partner(delta.as_base_exp()[0], variable)
        inside = _within(partner, low, high, ranges)
        if inside is None:
            raise UndecidedError(f"a sum over {variable} of a Kronecker delta: {partner} is not known to lie in "
                                 f"{sympy.sstr(low)}..{sympy.sstr(high)}")
        if inside:
            rest = sympy.Mul(*[f for f in sympy.Mul.make_args(term) if f is not delta])
            total.append(substitute(rest, {variable: partner}))
    return sympy.Add(*total)


def _partner(delta: Any, variable: Any) -> Any:
    """``x`` for ``delta`` = δ(variable, x) or δ(x, variable) with ``x`` free of the variable."""
    one, other = delta.args
    if one == variable and variable not in other.free_symbols:
        return other
    if other == variable and variable not in one.free_symbols:
        return one
    return None


def _expanded_size(expr: Any) -> int:
    """An upper bound on the number of terms ``expand(expr)`` makes, without expanding."""
    if isinstance(expr, sympy.Add):
        return sum(_expanded_size(argument) for argument in expr.args)
    if isinstance(expr, sympy.Mul):
        size = 1
        for factor in expr.args:
            size *= _expanded_size(factor)
        return size
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and expr.exp > 1 and isinstance(expr.base, sympy.Add):
        terms, power = _expanded_size(expr.base), int(expr.exp)
        return math.comb(terms + power - 1, power) if power < 10_000 else MAX_TERMS + 1
    return 1


def _within(value: Any, low: Any, high: Any, ranges: dict[Any, tuple[Any, Any]]) -> bool | None:
    if value.is_Integer and low.is_Integer and high.is_Integer:
        if high < low - 1:  # SymPy's reversed sum is not the empty sum a student means: not decided here
            return None
        return bool(low <= value <= high)
    if value not in ranges:
        return None
    known_low, known_high = ranges[value]
    if (known_low, known_high) == (low, high):
        return True
    above = sympy.expand(known_low - low).is_nonnegative
    below = sympy.expand(high - known_high).is_nonnegative
    return True if above and below else None
