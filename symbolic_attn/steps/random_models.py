r"""Counterexamples for steps about random variables: small distributions the declarations allow.

When the rules of expectation leave an unknown (``E[q_i^2 k_i^2]`` without independence), a
false step cannot be refuted by choosing numbers for the letters: a counterexample is a
*distribution*.  This module tries a few, each one allowed by the declarations
(:mod:`.randomness`), and computes both sides exactly in it:

* the sizes and indices take small values (``d_k = 2``, then 1, then 3);
* every component is ``mean + sqrt(variance) * r`` for a base variable ``r`` that is ``-1`` or
  ``1`` with probability 1/2 each, or ``-2``, ``0``, ``2`` with probabilities 1/8, 3/4, 1/8,
  or ``2``, ``-1/2`` with probabilities 1/5, 4/5 (all three have mean 0 and variance 1; the
  fourth moments of the first two differ, the third is skewed); a mean not declared is 0,
  1 or -1, a variance not declared 1 or 4;
* components declared independent have base variables of their own; a family that is not
  declared independent may also share them: all its components one variable, each vector
  (or scalar) one variable, the components of one index one variable, or each component
  the same variable as another family's component of the same index (``k_j = q_j``) or as
  another family's first one.

An expectation is then a finite sum over the outcomes, exact; a step is false in a model when
its sides differ (certified) there.  Numbers refute, never prove: a step no model refutes
stays undecided.

>>> import sympy
>>> from symbolic_attn.steps.randomness import RandomFamily, Randomness, Var
>>> n = sympy.Symbol("n", integer=True, positive=True)
>>> i = sympy.Symbol("i", integer=True, positive=True)
>>> q, k = sympy.IndexedBase("q", real=True), sympy.IndexedBase("k", real=True)
>>> unknown = Randomness((RandomFamily(("q", "k"), "vector", False, sympy.Integer(0), sympy.Integer(1)),))
>>> left, right = Var(sympy.Sum(q[i] * k[i], (i, 1, n))), sympy.Sum(Var(q[i] * k[i]), (i, 1, n))
>>> sorted(counterexample(left, right, "=", unknown, {}).items())[:3]
[('k_1', 'r'), ('k_2', 'r'), ('n', '2')]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import sympy

from symbolic_attn.errors import SymbolicAttnError
from symbolic_attn.proofs.binders import substitute
from symbolic_attn.proofs.notation import unfold
from symbolic_attn.steps.randomness import Cov, Expectation, RandomFamily, Randomness, Var

__all__ = ["counterexample", "DISTRIBUTIONS", "MAX_OUTCOMES"]

#: The base distributions: (name, [(value, probability)]), mean 0 and variance 1 each.
DISTRIBUTIONS = (
    ("each -1 or 1 with probability 1/2", ((sympy.Integer(-1), sympy.Rational(1, 2)),
                                           (sympy.Integer(1), sympy.Rational(1, 2)))),
    ("each -2, 0 or 2 with probabilities 1/8, 3/4, 1/8", ((sympy.Integer(-2), sympy.Rational(1, 8)),
                                                          (sympy.Integer(0), sympy.Rational(3, 4)),
                                                          (sympy.Integer(2), sympy.Rational(1, 8)))),
    # skewed: E[r^3] = 3/2, so a third moment is not taken to be 0
    ("each 2 or -1/2 with probabilities 1/5, 4/5", ((sympy.Integer(2), sympy.Rational(1, 5)),
                                                     (sympy.Rational(-1, 2), sympy.Rational(4, 5)))),
)
#: Most joint outcomes of the base variables a model may have.
MAX_OUTCOMES = 729
#: Most choices of the letters' values tried.
MAX_POINTS = 12
_SIZES = (2, 1, 3)
_NAMES = ("r", "s", "t", "u", "v", "w", "y", "z", "g", "h")


def counterexample(left: Any, right: Any, relation: str, randomness: Randomness,
                   ranges: dict[Any, tuple[Any, Any]]) -> dict[str, str] | None:
    """A distribution (and values of the letters) in which ``left relation right`` is
    certified false, in the student's letters -- or None when no model tried refutes it."""
    left, right = unfold(left), unfold(right)
    letters = _letters((left, right), randomness)
    for index in [s for s in letters if s in ranges]:  # an index's range is in the sizes' letters
        letters += [s for s in sympy.Tuple(*ranges[index]).free_symbols if s not in letters]
    letters.sort(key=sympy.default_sort_key)
    for point in itertools.islice(_points(letters, ranges, randomness), MAX_POINTS):
        try:
            concrete = [_concrete(side, point) for side in (left, right)]
        except (SymbolicAttnError, TypeError, ValueError):
            continue
        atoms = sorted(set().union(*(randomness.atoms(side, in_moments=True) for side in concrete)),
                       key=sympy.default_sort_key)
        taken = {str(s) for s in letters} | {_name(a) for a in atoms}
        for model in _models(atoms, randomness, point, [n for n in _NAMES if n not in taken]):
            try:
                if _fails(concrete, relation, model):
                    return _described(point, model)
            except (SymbolicAttnError, TypeError, ValueError, ZeroDivisionError):
                continue
    return None


def _letters(sides: tuple[Any, Any], randomness: Randomness) -> list[Any]:
    found = set()
    for side in sides:
        labels = {a.base.label for a in side.atoms(sympy.Indexed)}  # the names of vectors, not letters
        found |= {s for s in side.free_symbols if isinstance(s, sympy.Symbol) and randomness.family_of(s) is None
                  and s not in labels}
    for family in randomness.families:
        for value in (family.mean, family.variance):
            if value is not None:
                found |= value.free_symbols
    return sorted(found, key=sympy.default_sort_key)


def _choices(symbol: Any) -> tuple[Any, ...]:
    if symbol.is_integer:
        if symbol.is_positive:
            return _SIZES
        return (0, 1, 2) if symbol.is_nonnegative else (0, 1, -1, 2)
    if symbol.is_positive:
        return (1, 2, sympy.Rational(1, 2))
    return (0, 1, 2) if symbol.is_nonnegative else (0, 1, -1, 2)


def _points(letters: list[Any], ranges: dict[Any, tuple[Any, Any]], randomness: Randomness) -> Iterator[dict[Any, Any]]:
    """Values for the letters: sizes first, then the indices within their ranges."""
    free = [s for s in letters if s not in ranges]
    indices = [s for s in letters if s in ranges]
    for values in itertools.product(*(_choices(s) for s in free)):
        point = {s: _number(v) for s, v in zip(free, values)}
        spans = []
        for index in indices:
            low, high = (_number(b).xreplace(point) for b in ranges[index])
            if not (low.is_Integer and high.is_Integer) or high < low:
                break
            spans.append(range(int(low), min(int(high), int(low) + 2) + 1))
        else:
            for chosen in itertools.product(*spans):
                yield {**point, **{index: sympy.Integer(v) for index, v in zip(indices, chosen)}}


def _number(value: Any) -> Any:
    return sympy.Integer(value) if isinstance(value, int) else value


def _concrete(side: Any, point: dict[Any, Any]) -> Any:
    value = substitute(side, point)
    return value.replace(lambda e: isinstance(e, (sympy.Sum, sympy.Product)), lambda e: e.doit())


# -- models


def _models(atoms: list[Any], randomness: Randomness, point: dict[Any, Any],
            names: list[str]) -> Iterator[dict[str, Any]]:
    families = [f for f in randomness.families if any(randomness.family_of(a) is f for a in atoms)]
    # The simplest distribution first, in every pattern; a mean not declared is 0, then 1,
    # then -1, a variance not declared 1, then 4.
    means = (0, 1, -1) if any(f.mean is None for f in families) else (0,)
    variances = (1, 4) if any(f.variance is None for f in families) else (1,)
    for mean_default, variance_default, (name, distribution), sharing in itertools.product(
            means, variances, DISTRIBUTIONS, list(_sharings(atoms, randomness, families))):
        bases: dict[Any, Any] = {}
        mapping: dict[Any, Any] = {}
        for atom in atoms:
            family = randomness.family_of(atom)
            assert family is not None
            mean = _number(family.mean if family.mean is not None else mean_default).xreplace(point)
            variance = _number(family.variance if family.variance is not None else variance_default).xreplace(point)
            key = sharing[atom]
            if key not in bases:
                if len(bases) >= len(names):
                    return
                bases[key] = sympy.Dummy(names[len(bases)])
            mapping[atom] = mean + sympy.sqrt(variance) * bases[key]
        if len(distribution) ** len(bases) > MAX_OUTCOMES:
            continue
        yield {"mapping": mapping, "bases": list(bases.values()), "distribution": distribution, "name": name}


def _sharings(atoms: list[Any], randomness: Randomness, families: list[RandomFamily]) -> Iterator[dict[Any, Any]]:
    """Which atoms share a base variable (each atom to the key of its base): every pattern
    of each family (:func:`_patterns`), and then the atoms of every family not declared
    independent equal to those of another family at the same index (``k_j = q_j``), or to
    another's first atom (``q_j = X``)."""
    groups = [list(_patterns(f, [a for a in atoms if randomness.family_of(a) is f])) for f in families]
    for chosen in itertools.product(*groups):
        yield {atom: (index, group) for index, grouping in enumerate(chosen) for atom, group in grouping.items()}
    dependent = [f for f in families if not f.independent]
    if dependent and len(families) > 1:
        shared: dict[Any, Any] = {}
        for atom in atoms:
            family = randomness.family_of(atom)
            others = [b for b in atoms if randomness.family_of(b) is not family and randomness.family_of(b)
                      not in dependent]
            partner = next((b for b in others if _position(b) == _position(atom)), others[0] if others else None)
            shared[atom] = ("own", partner if family in dependent and partner is not None else atom)
        yield shared


def _patterns(family: RandomFamily, atoms: list[Any]) -> Iterator[dict[Any, Any]]:
    """Which atoms of one family share a base variable: each its own, and, without
    independence, all one, one per name, one per index."""
    yield {atom: atom for atom in atoms}
    if family.independent:
        return
    yield {atom: 0 for atom in atoms}
    yield {atom: _name(atom) for atom in atoms}
    yield {atom: atom.indices if isinstance(atom, sympy.Indexed) else 0 for atom in atoms}


def _position(atom: Any) -> Any:
    return atom.indices if isinstance(atom, sympy.Indexed) else ()


def _name(atom: Any) -> str:
    return str(atom.base.label) if isinstance(atom, sympy.Indexed) else str(atom)


# -- evaluation in a model


def _fails(sides: list[Any], relation: str, model: dict[str, Any]) -> bool:
    from symbolic_attn.exact.intervals import certified_sign

    left, right = (_evaluate(side, model) for side in sides)
    difference = left - right
    for outcome, _probability in _outcomes(model, difference.free_symbols & set(model["bases"])):
        value = difference.xreplace(outcome)
        sign = (1 if value > 0 else -1 if value < 0 else 0) if value.is_Rational else certified_sign(value)
        if sign is None:
            continue
        if relation == "=" and sign != 0:
            return True
        if (relation == "<" and sign >= 0) or (relation == "<=" and sign > 0) or (relation == ">" and sign <= 0) \
                or (relation == ">=" and sign < 0):
            return True
    return False


def _evaluate(expr: Any, model: dict[str, Any]) -> Any:
    """``expr`` with every expectation computed over the model's outcomes, innermost first,
    and the remaining random atoms written with the base variables."""
    if not isinstance(expr, sympy.Basic):
        return expr
    if isinstance(expr, Var):
        inside = _evaluate(expr.args[0], model)
        return _expect(inside ** 2, model) - _expect(inside, model) ** 2
    if isinstance(expr, Cov):
        one, other = (_evaluate(argument, model) for argument in expr.args)
        return _expect(one * other, model) - _expect(one, model) * _expect(other, model)
    if isinstance(expr, Expectation):
        return _expect(_evaluate(expr.args[0], model), model)
    if expr in model["mapping"]:
        return model["mapping"][expr]
    if not expr.args:
        return expr
    return expr.func(*[_evaluate(argument, model) for argument in expr.args])


def _expect(value: Any, model: dict[str, Any]) -> Any:
    used = value.free_symbols & set(model["bases"])
    return sympy.expand(sum((probability * value.xreplace(outcome) for outcome, probability in _outcomes(model, used)),
                            sympy.Integer(0)))


def _outcomes(model: dict[str, Any], used: set[Any]) -> Iterator[tuple[dict[Any, Any], Any]]:
    bases = [b for b in model["bases"] if b in used]
    for values in itertools.product(model["distribution"], repeat=len(bases)):
        probability = sympy.Integer(1)
        for _, p in values:
            probability *= p
        yield {base: value for base, (value, _) in zip(bases, values)}, probability


def _described(point: dict[Any, Any], model: dict[str, Any]) -> dict[str, str]:
    """The counterexample in the student's letters: the values, each component, the bases."""
    shown = {str(symbol): str(value) for symbol, value in point.items()}
    names = {base: base.name for base in model["bases"]}
    for atom, value in model["mapping"].items():
        letter = f"{atom.base.label}_{','.join(map(str, atom.indices))}" if isinstance(atom, sympy.Indexed) else str(atom)
        shown[letter] = sympy.sstr(value.xreplace({b: sympy.Symbol(n) for b, n in names.items()}))
    used = sorted(set(names.values()))
    if used:
        shown[", ".join(used)] = ("independent, " if len(used) > 1 else "") + model["name"]
    return shown
