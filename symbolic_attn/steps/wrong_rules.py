r"""The wrong rules students use in a derivation step, and how to recognise one.

A step the checker found false is *explained* by a wrong rule when applying that rule to
one side gives, provably, the other side: the diagnosis is a proof, never a guess.  Each
rule of :data:`WRONG_RULES` maps an expression to the expressions it would become if the
rule were applied at one place (one candidate per place, bounded by :data:`MAX_PLACES`);
:func:`explain` tries every candidate of both sides against the other side with the sound
checker and returns the catalogue id of the first rule (in the catalogue's order) that
explains the step.  Its sentence is in :data:`symbolic_attn.model.mistakes.CATALOGUE`.

>>> import sympy
>>> a, b = sympy.symbols("a b", real=True)
>>> explain(sympy.exp(a + b), sympy.exp(a) + sympy.exp(b))
'exp_of_sum'
>>> explain(sympy.log(a**2 + 1), sympy.log(a**2) + 1) is None   # no rule of the table makes it
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import sympy
from sympy.matrices.expressions import MatMul, Transpose

from symbolic_attn.errors import SymbolicAttnError, TimeLimitError

__all__ = ["WRONG_RULES", "explain", "candidates", "MAX_PLACES"]

#: Places of one expression a rule is tried at (each is one candidate to prove).
MAX_PLACES = 12


def _places(expr: Any, matches: Callable[[Any], bool]) -> Iterator[Any]:
    """The sub-expressions of ``expr`` (pre-order, each once) that ``matches`` accepts."""
    seen = 0
    for node in sympy.preorder_traversal(expr):
        if matches(node):
            yield node
            seen += 1
            if seen >= MAX_PLACES:
                return


def _at_each(expr: Any, matches: Callable[[Any], bool], rewrite: Callable[[Any], Iterator[Any]]) -> list[Any]:
    """``expr`` with one matching node rewritten (every way ``rewrite`` offers), per place,
    and then with the rule's first way applied at every place at once (a student who
    splits e^(x_i + c) in the numerator splits every e^(x_j + c) of the sum too)."""
    found: list[Any] = []
    everywhere: dict[Any, Any] = {}
    for node in _places(expr, matches):
        for new in rewrite(node):
            if new is not None and new != node:
                found.append(expr.xreplace({node: new}))
                everywhere.setdefault(node, new)
    if len(everywhere) > 1:
        found.append(expr.xreplace(everywhere))
    return found


def _bound(sum_node: Any) -> list[Any]:
    return [limit[0] for limit in sum_node.limits]


def _depends(term: Any, symbols: Any) -> bool:
    return bool(set(symbols) & term.free_symbols)


# -- the rules, one function each: node -> the wrong results at that node ---------------------


def _exp_of_sum(node: Any) -> Iterator[Any]:
    terms = node.args[0].args
    yield sympy.Add(*(sympy.exp(t) for t in terms))
    for term in terms if len(terms) > 2 else ():  # e^(a + (b + c)) as e^a + e^(b + c)
        yield sympy.exp(term) + sympy.exp(node.args[0] - term)


def _sum_term_left_out(node: Any) -> Iterator[Any]:
    term, limits = node.args[0], node.limits
    for left_out in term.args:
        rest = sympy.Add(*[t for t in term.args if t is not left_out])
        yield sympy.Sum(rest, *limits) + left_out


def _dependent_factor_out(node: Any) -> Iterator[Any]:
    term, limits = node.args[0], node.limits
    for factor in term.args:
        if _depends(factor, _bound(node)):
            rest = sympy.Mul(*[f for f in term.args if f is not factor])
            yield factor * sympy.Sum(rest, *limits)


def _shift_added(node: Any) -> Iterator[Any]:
    term, limits = node.args[0], node.limits
    inside = term.args[0].args
    free = [t for t in inside if not _depends(t, _bound(node))]
    if free and len(free) < len(inside):
        dependent = sympy.Add(*[t for t in inside if _depends(t, _bound(node))])
        yield sympy.exp(sympy.Add(*free)) + sympy.Sum(sympy.exp(dependent), *limits)


def _log_of_sum(node: Any) -> Iterator[Any]:
    inside = node.args[0]
    if isinstance(inside, sympy.Add):
        yield sympy.Add(*(sympy.log(t) for t in inside.args))
        for term in inside.args if len(inside.args) > 2 else ():  # log(a + (b + c)) as log a + log(b + c)
            yield sympy.log(term) + sympy.log(inside - term)
    elif isinstance(inside, sympy.Sum):
        yield sympy.Sum(sympy.log(inside.args[0]), *inside.limits)


def _cancelled_a_term(node: Any) -> Iterator[Any]:
    numerator, denominator = node.as_numer_denom()
    if isinstance(denominator, sympy.Add):
        for term in denominator.args:
            if term == numerator:  # a/(a + b) as 1/b
                yield 1 / (denominator - term)
    if isinstance(numerator, sympy.Add):
        for term in numerator.args:
            if term == denominator:  # (a + b)/a as b
                yield numerator - term
    if isinstance(numerator, sympy.Mul) and isinstance(denominator, sympy.Add):
        for factor in numerator.args:  # (f a)/(f + b) as a/b: a factor against a term
            if factor in denominator.args:
                yield (numerator / factor) / (denominator - factor)
    if isinstance(denominator, sympy.Sum) and len(denominator.limits) == 1:
        (index, low, high) = denominator.limits[0]
        summand = denominator.args[0]
        for value in numerator.free_symbols | {low, high}:  # t(e) / Σ_j t(j) as 1 / Σ_j 1
            if summand.xreplace({index: value}) == numerator:
                yield 1 / sympy.Sum(1, (index, low, high))
                return


def _index_captured(node: Any, outside: Any) -> Iterator[Any]:
    term, limits = node.args[0], node.limits
    if len(limits) != 1:
        return
    index, low, high = limits[0]
    for letter in sorted(term.free_symbols & outside - {index}, key=str):
        if letter.is_integer:  # j renamed to the free i: every i of the summand is now bound
            yield sympy.Sum(term.xreplace({index: letter}), (letter, low, high))


def _sqrt_dk_vs_dk(node: Any) -> Iterator[Any]:
    base, exponent = node.args
    swap = {sympy.Rational(1, 2): 1, sympy.Rational(-1, 2): -1, 1: sympy.Rational(1, 2), -1: sympy.Rational(-1, 2)}
    if exponent in swap:
        yield base ** swap[exponent]


def _is_function(node: Any, name: str) -> bool:
    return isinstance(node, sympy.Function) and type(node).__name__ == name and len(node.args) == 1


def _variance_of_sum(node: Any) -> Iterator[Any]:
    inside = node.args[0]
    if isinstance(inside, sympy.Sum):  # Var(sum_i X_i) as sum_i Var(X_i)
        yield sympy.Sum(type(node)(inside.function), *inside.limits)
    else:
        yield sympy.Add(*(type(node)(t) for t in inside.args))


def _variance_scale(node: Any) -> Iterator[Any]:
    inside = node.args[0]
    # The factors that cannot be random (no entry of a vector, no letter): 1/sqrt(d_k), 2.
    constant = sympy.Mul(*[f for f in inside.args if not f.atoms(sympy.Indexed) and not f.is_Symbol])
    if constant != 1 and constant != inside:
        yield constant * type(node)(inside / constant)
    for factor in inside.args:  # a letter standing for the constant: Var(a X) as a Var(X)
        if factor.is_Symbol and len(inside.args) > 1:
            yield factor * type(node)(inside / factor)


def _softmax_scale(expr: Any) -> list[Any]:
    """Every exponential's argument with one common factor dropped (softmax(c x) as softmax(x))."""
    arguments = [e.args[0] for e in expr.atoms(sympy.exp) if isinstance(e.args[0], sympy.Mul)]
    factors = set()
    for argument in arguments:
        factors |= {f for f in argument.args if f.is_Symbol or (f.is_number and f not in (1, -1))}
    found: list[Any] = []
    for factor in sorted(factors, key=str)[:MAX_PLACES]:
        drop = {e: sympy.exp(e.args[0] / factor) for e in expr.atoms(sympy.exp)
                if isinstance(e.args[0], sympy.Mul) and factor in e.args[0].args}
        found.append(expr.xreplace(drop))
    return found


def _transpose_order(node: Any) -> Iterator[Any]:
    product = node.args[0]
    yield MatMul(*(Transpose(f) for f in product.args))


#: catalogue id -> expression -> the candidates (the rule applied at one place each).
WRONG_RULES: dict[str, Callable[[Any], list[Any]]] = {
    "exp_of_sum": lambda e: _at_each(e, lambda n: isinstance(n, sympy.exp) and isinstance(n.args[0], sympy.Add),
                                     _exp_of_sum),
    "sum_term_left_out": lambda e: _at_each(e, lambda n: isinstance(n, sympy.Sum) and isinstance(n.args[0], sympy.Add),
                                            _sum_term_left_out),
    "dependent_factor_out": lambda e: _at_each(
        e, lambda n: isinstance(n, sympy.Sum) and isinstance(n.args[0], sympy.Mul), _dependent_factor_out),
    "shift_added": lambda e: _at_each(
        e, lambda n: isinstance(n, sympy.Sum) and isinstance(n.args[0], sympy.exp)
        and isinstance(n.args[0].args[0], sympy.Add), _shift_added),
    "log_of_sum": lambda e: _at_each(
        e, lambda n: isinstance(n, sympy.log) and isinstance(n.args[0], (sympy.Add, sympy.Sum)), _log_of_sum),
    "cancelled_a_term": lambda e: _at_each(e, lambda n: isinstance(n, sympy.Mul), _cancelled_a_term),
    "index_captured": lambda e: _at_each(e, lambda n: isinstance(n, sympy.Sum),
                                         lambda n: _index_captured(n, e.free_symbols)),
    "sqrt_dk_vs_dk": lambda e: _at_each(e, lambda n: isinstance(n, sympy.Pow) and n.args[0].is_Symbol, _sqrt_dk_vs_dk),
    "variance_of_sum": lambda e: _at_each(
        e, lambda n: _is_function(n, "Var") and isinstance(n.args[0], (sympy.Add, sympy.Sum)), _variance_of_sum),
    "variance_scale": lambda e: _at_each(
        e, lambda n: _is_function(n, "Var") and isinstance(n.args[0], sympy.Mul), _variance_scale),
    "softmax_scale": _softmax_scale,
    "transpose_order": lambda e: _at_each(
        e, lambda n: isinstance(n, Transpose) and isinstance(n.args[0], MatMul), _transpose_order),
}


def candidates(rule: str, expr: Any) -> list[Any]:
    """The expressions ``expr`` becomes under the wrong rule ``rule`` (one place each)."""
    if not isinstance(expr, sympy.Basic):
        return []
    try:
        return WRONG_RULES[rule](expr)
    except (TypeError, ValueError, AttributeError, SymbolicAttnError):  # a rule that does not fit this shape
        return []


def explain(left: Any, right: Any, assumptions: Any = (), written: tuple[Any, Any] = (None, None),
            point: dict[str, Any] | None = None, randomness: Any = None, ranges: Any = None) -> str | None:
    """The catalogue id of the first wrong rule that turns one side into the other, proved
    (by the quick strategies: an explanation is a plain match, and trying every candidate
    with the last resorts would cost seconds); None when no rule of the table explains it.

    ``written`` are the sides' written forms where the reader computed them (explicit matrix
    products and transposes, :mod:`symbolic_attn.steps.written`), or None: a form equals its
    side, so a rule applied to it and proved to give the other side explains the step.
    ``point`` is the step's counterexample (letters and entries by name, as the step's
    verdict gives it), or None: a candidate certified to differ from the other side there is
    not equal to it, and is set aside without a proof attempt
    (:func:`~symbolic_attn.proofs.refute.differs_at`).  ``randomness`` and ``ranges`` are
    the declared random families and index ranges: a side with expectations is judged by
    what the rules of expectation make it (:mod:`symbolic_attn.steps.expectation`).

    >>> import sympy
    >>> from symbolic_attn.steps.written import product, recording, transpose
    >>> p, k = sympy.ImmutableMatrix([[0, 1], [1, 0]]), sympy.ImmutableMatrix([[1, 2], [3, 4]])
    >>> with recording() as forms:
    ...     left, right = transpose(product(p, k)), product(transpose(p), transpose(k))
    >>> explain(left, right), explain(left, right, written=(forms[left], forms[right]))
    (None, 'transpose_order')
    """
    from symbolic_attn.model.mistakes import ids
    from symbolic_attn.proofs.prove import prove_equal_quickly
    from symbolic_attn.proofs.refute import differs_at

    from symbolic_attn.proofs.notation import unfold
    from symbolic_attn.steps.randomness import Unknowns

    order = [rule for rule in ids("step") if rule in WRONG_RULES]
    # A side as read keeps the student's display forms (a \frac as written, softmax as a
    # named operator); a rule applies to what they stand for as well.
    forms = {}
    for side, form in zip((left, right), written):
        noted = [] if form is None else [form]
        try:
            forms[side] = list(dict.fromkeys([side, unfold(side)] + noted))
        except (SymbolicAttnError, TypeError, ValueError):
            forms[side] = [side] + noted
    for rule in order:
        for source, target in ((left, right), (right, left)):
            # Each distinct candidate once (a form and its unfolding often give the same one).
            for candidate in dict.fromkeys(c for form in forms[source] for c in candidates(rule, form)):
                if point and differs_at(candidate, target, point):
                    continue
                unknowns = Unknowns()  # what E[..] and Var(..) leave unknown: the same unknowns on both sides
                try:
                    made, wanted = (unknowns.abstract(_expected(side, randomness, ranges))
                                    for side in (candidate, target))
                    prove_equal_quickly(made, wanted, assumptions)
                except TimeLimitError:
                    raise
                except Exception:  # not this candidate: any failure explains nothing
                    continue
                return rule
    return None


def _expected(side: Any, randomness: Any, ranges: Any) -> Any:
    """A side with its expectations and variances reduced by the rules of expectation under
    the declarations (:mod:`.expectation`), so that a wrong rule is judged by what it
    makes, not by how it is written."""
    from symbolic_attn.steps.randomness import NO_RANDOMNESS, has_operators

    if not has_operators(side):
        return side
    from symbolic_attn.steps.expectation import reduce_random

    return reduce_random(side, randomness or NO_RANDOMNESS, ranges or {})
