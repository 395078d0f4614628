r"""Stated conditions checked together: a proof that they contradict each other, or a point.

Assumptions that cannot hold together prove anything: ``x > y``, ``y > z``, ``z > x``
"prove" every step.  Each pair is compared by the sign calculus (:func:`.prove.check_consistent`);
this module looks at all of them at once:

* :func:`linear_contradiction` -- Fourier-Motzkin elimination over the conditions read as
  linear inequalities in their monomials (``x``, ``x*y``, ``exp(s)``, each an unknown of its
  own; an unknown's declared sign counts as a condition).  Eliminating every unknown leaves
  inequalities between numbers; a false one is a proof of contradiction (a non-negative
  combination of the conditions that says ``0 > 0``), and the conditions it combined are
  named.  Reading a product as an unknown of its own only forgets how it is made, so what
  is found this way is a contradiction indeed; what is missed is left to the next test.
* a **certified point**: exact values satisfying every condition, found by the
  cross-examination's point search (:mod:`.crossexam`).

>>> import sympy
>>> x, y, z = sympy.symbols("x y z", real=True)
>>> linear_contradiction([("A1", x - y, ">0"), ("A2", y - z, ">0"), ("A3", z - x, ">0")])
('A1', 'A2', 'A3')
>>> linear_contradiction([("A1", x - y, ">0"), ("A2", y - z, ">0")]) is None
True
"""

from fractions import Fraction
from typing import Any

import sympy

__all__ = ["linear_contradiction", "linear_real_system", "MAX_INEQUALITIES"]

#: Inequalities kept at most while eliminating (Fourier-Motzkin can square their number).
MAX_INEQUALITIES = 400


def linear_contradiction(stated: Any) -> tuple[Any, ...] | None:
    """The labels of stated conditions that contradict each other, or None.

    ``stated``: ``(label, expression, kind)`` with kind ``>0``, ``>=0`` or ``!=0``.  A ``!=0``
    condition contradicts the others when they force its expression to be 0 (both ``e > 0``
    and ``e < 0`` are impossible with them).
    """
    rows = []
    for label, expr, kind in stated:
        if kind in (">0", ">=0"):
            row = _linear(expr, kind == ">0", frozenset([label]))
            if row is not None:
                rows.append(row)
    rows += _declared_signs(rows)
    found = _infeasible(rows)
    if found is not None:
        return tuple(sorted(found))
    for label, expr, kind in stated:
        if kind != "!=0":
            continue
        above, below = _linear(expr, True, frozenset([label])), _linear(-expr, True, frozenset([label]))
        if above is None or below is None:
            continue
        first = _infeasible(rows + [above] + _declared_signs([above]))
        second = _infeasible(rows + [below] + _declared_signs([below]))
        if first is not None and second is not None:
            return tuple(sorted(first | second))
    return None


def _linear(expr: Any, strict: Any, labels: Any) -> tuple[Any, ...] | None:
    """``expr > 0`` (or ``>= 0``) as ``({unknown: coefficient}, constant, strict, labels)``, or
    None when a coefficient is not rational."""
    coefficients: dict[Any, Fraction] = {}
    constant = Fraction(0)
    for term in sympy.Add.make_args(sympy.expand(expr)):
        coefficient, rest = term.as_coeff_Mul()
        if not coefficient.is_Rational:
            return None
        value = Fraction(int(coefficient.p), int(coefficient.q))
        if rest == 1:
            constant += value
        elif rest.is_number:
            return None  # an irrational constant: not read here
        else:
            coefficients[rest] = coefficients.get(rest, Fraction(0)) + value
    return ({k: v for k, v in coefficients.items() if v != 0}, constant, strict, labels)


def _declared_signs(rows: Any) -> list[Any]:
    """An unknown's declared sign (``x`` positive) as one more inequality, labelled by it."""
    found, seen = [], set()
    for coefficients, _, _, _ in rows:
        for unknown in coefficients:
            if unknown in seen:
                continue
            seen.add(unknown)
            label = f"declared {unknown}"
            if unknown.is_positive:
                found.append(({unknown: Fraction(1)}, Fraction(0), True, frozenset([label])))
            elif unknown.is_nonnegative:
                found.append(({unknown: Fraction(1)}, Fraction(0), False, frozenset([label])))
            if unknown.is_negative:
                found.append(({unknown: Fraction(-1)}, Fraction(0), True, frozenset([label])))
            elif unknown.is_nonpositive:
                found.append(({unknown: Fraction(-1)}, Fraction(0), False, frozenset([label])))
    return found


def _infeasible(rows: Any) -> Any:
    """Fourier-Motzkin: the labels of a contradiction among ``rows``, or None (none found)."""
    rows = list(rows)
    while True:
        for coefficients, constant, strict, labels in rows:
            if not coefficients and (constant < 0 or (constant == 0 and strict)):
                return {label for label in labels if not label.startswith("declared ")}
        unknowns = sorted({u for row in rows for u in row[0]}, key=sympy.default_sort_key)
        if not unknowns:
            return None
        unknown = min(unknowns, key=lambda u: _pairs(rows, u))
        above = [row for row in rows if row[0].get(unknown, 0) > 0]
        below = [row for row in rows if row[0].get(unknown, 0) < 0]
        kept = [row for row in rows if unknown not in row[0]]
        for first in above:
            for second in below:
                kept.append(_combine(first, second, unknown))
        if len(kept) > MAX_INEQUALITIES:
            return None
        rows = kept


def _pairs(rows: Any, unknown: Any) -> int:
    above = sum(1 for row in rows if row[0].get(unknown, 0) > 0)
    below = sum(1 for row in rows if row[0].get(unknown, 0) < 0)
    return above * below


def _combine(first: Any, second: Any, unknown: Any) -> tuple[Any, ...]:
    """The non-negative combination of two inequalities in which ``unknown`` cancels."""
    a, b = first[0][unknown], -second[0][unknown]
    coefficients: dict[Any, Fraction] = {}
    for row, weight in ((first, b), (second, a)):
        for u, c in row[0].items():
            coefficients[u] = coefficients.get(u, Fraction(0)) + weight * c
    coefficients = {u: c for u, c in coefficients.items() if c != 0}
    return (coefficients, b * first[1] + a * second[1], first[2] or second[2], first[3] | second[3])


def linear_real_system(stated: Any) -> bool:
    """Whether every condition is linear in plain real (not integer) symbols.

    For such a system, Fourier-Motzkin is complete: when :func:`linear_contradiction` finds
    no contradiction, the conditions hold together at some real point (each ``!= 0``
    removes a hyperplane that does not contain the whole feasible region, and finitely many
    such hyperplanes cannot cover a convex set).
    """
    for _, expr, _ in stated:
        row = _linear(expr, False, frozenset())
        if row is None:
            return False
        for unknown in row[0]:
            if not isinstance(unknown, sympy.Symbol) or unknown.is_real is not True or unknown.is_integer:
                return False
    return True
