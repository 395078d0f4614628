r"""Deciding one step of a student's chain: ``left REL right`` under the declarations.

A step is decided by the project's one sound checker (:mod:`symbolic_attn.proofs`), never
by a numeric spot check: ``=`` by :func:`~symbolic_attn.proofs.prove.prove_equal`,
``<``/``<=``/``>``/``>=`` by a proved sign of the difference, ``\approx`` by the rounding
rule of the claims (the decimal written must be the exact value rounded to as many places
as it has, a value exactly halfway passing).  Every outcome is one of four verdicts:

* ``proved`` -- with the strategy (or rule) that proved it;
* ``false`` -- certified false at a concrete point, given in the student's letters;
* ``undecided`` -- neither proved nor refuted, with the reason (a side condition the
  declarations do not give, or "too large to check: split it");
* ``unreadable`` -- set by the reader, never here.

>>> import sympy
>>> x = sympy.Symbol("x", real=True)
>>> decide_step(sympy.exp(2 * x), sympy.exp(x) ** 2, "=").verdict
'proved'
>>> step = decide_step(sympy.exp(x + 1), sympy.exp(x) + sympy.E, "=")
>>> step.verdict, sorted(step.counterexample), step.diagnosis
('false', ['x'], 'exp_of_sum')
>>> step.sentence()
'The exponential of a sum was split into a sum of exponentials: e^(a+b) = e^a · e^b, not e^a + e^b.'
>>> decide_step(sympy.E / (1 + sympy.E), sympy.Rational(731, 1000), "approx", written="0.731").verdict
'proved'
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import sympy

from symbolic_attn.steps.verdict import VERDICTS, StepVerdict
from symbolic_attn.errors import (
    ProofError,
    RefutedError,
    SideConditionError,
    SymbolicAttnError,
    TimeLimitError,
    UndecidedError,
    one_line,
)

__all__ = ["StepVerdict", "decide_step", "VERDICTS", "RELATIONS"]

#: Relations a step may state (the reader's names).
RELATIONS = ("=", "<", "<=", ">", ">=", "approx", "!=")


def decide_step(left: Any, right: Any, relation: str, assumptions: Any = (), *, written: str | None = None,
                diagnose: bool = True, randomness: Any = None, ranges: Any = None) -> StepVerdict:
    """Decide ``left relation right`` (SymPy values) under ``assumptions`` (the checker's
    :class:`~symbolic_attn.proofs.prove.Assumption` objects).  ``written`` is the text of
    the right side when the relation is ``approx`` (its decimal places set the rounding).
    A false equality is explained by a wrong rule when one is proved to make it
    (:func:`~symbolic_attn.steps.wrong_rules.explain`; ``diagnose=False`` skips it).
    A step with expectations or variances is decided by
    :func:`~symbolic_attn.steps.random_steps.decide_random` under ``randomness`` (the
    declared :class:`~symbolic_attn.steps.randomness.Randomness`) and ``ranges`` (each
    index symbol's declared ``(low, high)``)."""
    from symbolic_attn.steps.randomness import NO_RANDOMNESS, has_operators

    if relation not in RELATIONS:
        raise ValueError(f"decide_step: unknown relation {relation!r}: expected one of {', '.join(RELATIONS)}")
    try:
        if has_operators(left) or has_operators(right):
            from symbolic_attn.steps.random_steps import decide_random

            def reduced(one: Any, other: Any) -> StepVerdict:  # the sides once the rules of expectation are applied
                return decide_step(one, other, relation, assumptions, written=written, diagnose=False)

            step: StepVerdict = decide_random(left, right, relation, randomness or NO_RANDOMNESS, ranges or {},
                                              reduced)
            if step.verdict == "false" and diagnose and relation == "=":
                from symbolic_attn.steps.wrong_rules import explain

                step = replace(step, diagnosis=explain(left, right, assumptions, randomness=randomness,
                                                       ranges=ranges))
            return step
        if relation == "=":
            step = _equal(left, right, assumptions)
            if step.verdict == "false" and diagnose:
                from symbolic_attn.steps.wrong_rules import explain

                step = replace(step, diagnosis=explain(left, right, assumptions))
            return step
        if relation == "approx":
            return _approximately(left, written if written is not None else str(right))
        if relation == "!=":
            return _unequal(left, right)
        return _ordered(left, right, relation, assumptions)
    except TimeLimitError:
        raise
    except RecursionError:
        return StepVerdict("undecided", "this step is too large to check: split it into smaller steps")


def _equal(left: Any, right: Any, assumptions: Any) -> StepVerdict:
    from symbolic_attn.proofs.prove import prove_equal

    try:
        proof = prove_equal(left, right, assumptions)
    except RefutedError as error:
        return _refuted(error, left, right)
    except SideConditionError as error:
        return StepVerdict("undecided", f"needs a condition the declarations do not give: {one_line(error)}")
    except ProofError as error:  # cross-examined false, or a float in a side
        return StepVerdict("false", one_line(error), _any_point(left, right, assumptions))
    except UndecidedError as error:
        return StepVerdict("undecided", f"not proved and not refuted: {one_line(error)}")
    except SymbolicAttnError as error:
        return StepVerdict("undecided", one_line(error))
    rules = f" (rules: {', '.join(map(str, proof.rules))})" if proof.rules else ""
    return StepVerdict("proved", f"proved by {proof.strategy}{rules}")


def _any_point(left: Any, right: Any, assumptions: Any) -> dict[str, Any] | None:
    """A valid point of the step's letters where the sides differ, for a step refuted
    without one (its difference a nonzero number: any valid point will do)."""
    from symbolic_attn.proofs.binders import bind_fresh, unbind
    from symbolic_attn.proofs.notation import unfold
    from symbolic_attn.proofs.prove import facts_of
    from symbolic_attn.proofs.refute import refute_sign

    try:
        difference = unbind(bind_fresh(unfold(left - right)))
    except (SymbolicAttnError, TypeError, ValueError):
        return None
    for signed in (difference, -difference):  # one of them is negative everywhere
        try:
            refute_sign(signed, facts_of(tuple(assumptions)), ">=0")
        except RefutedError as error:
            return _refuted(error, left, right).counterexample
        except (ProofError, UndecidedError, SymbolicAttnError, TypeError, ValueError):
            continue
    return None


def _ordered(left: Any, right: Any, relation: str, assumptions: Any) -> StepVerdict:
    from symbolic_attn.proofs.prove import prove_nonnegative, prove_positive

    difference = (right - left) if relation in ("<", "<=") else (left - right)
    kind = ">0" if relation in ("<", ">") else ">=0"
    prove = prove_positive if kind == ">0" else prove_nonnegative
    try:
        proof = prove(difference, assumptions)
    except RefutedError as error:
        return _refuted(error, left, right)
    except (ProofError, UndecidedError, SymbolicAttnError) as error:
        return _refute_order(difference, kind, assumptions, left, right, error)
    return StepVerdict("proved", f"proved by {proof.strategy}")


def _refute_order(difference: Any, kind: str, assumptions: Any, left: Any, right: Any,
                  why: BaseException) -> StepVerdict:
    """A step ``<``, ``<=``, ``>`` or ``>=`` whose sign is not proved: false when a valid point
    certifies the wrong sign (numbers refute, never prove), else undecided with the reason."""
    from symbolic_attn.proofs.binders import bind_fresh, unbind
    from symbolic_attn.proofs.notation import unfold
    from symbolic_attn.proofs.prove import facts_of
    from symbolic_attn.proofs.refute import refute_sign

    try:
        refute_sign(unbind(bind_fresh(unfold(difference))), facts_of(tuple(assumptions)), kind)
    except RefutedError as error:
        verdict = _refuted(error, left, right)
        return replace(verdict, reason=f"false: the relation fails at the point given (the difference that must "
                                       f"be {kind[0]} {kind[1:]} is {error.value} there)")
    except (ProofError, UndecidedError, SymbolicAttnError, TypeError, ValueError):
        pass
    return StepVerdict("undecided", f"the sign of the difference is not proved: {one_line(why)}")


_DECIMAL = re.compile(r"[+-]?[0-9]{1,40}(?:\.([0-9]{1,40}))?")


def _approximately(left: Any, written: str) -> StepVerdict:
    """``left \\approx d``: ``d`` is the exact value rounded to the places written, a
    value exactly halfway passing (the rule of the claims, README "Checking a solution")."""
    from symbolic_attn.exact.intervals import certified_sign

    if getattr(left, "free_symbols", None):
        return StepVerdict("undecided", "an approximation needs a number on its left: it has letters "
                                        f"({', '.join(sorted(map(str, left.free_symbols)))})")
    text = "".join(written.split())
    found = _DECIMAL.fullmatch(text)
    if not found:
        return StepVerdict("undecided", f"an approximation needs one decimal number on its right, got {written.strip()!r}")
    places = len(found.group(1) or "")
    whole, _, fraction = text.lstrip("+-").partition(".")
    claimed = sympy.Rational(int(whole + fraction), 10**places) * (-1 if text.startswith("-") else 1)
    half = sympy.Rational(1, 2 * 10**places)
    exact = sympy.Integer(left) if isinstance(left, int) else left
    above, below = exact - claimed - half, exact - claimed + half  # within: above <= 0 <= below
    signs = [(1 if d.p > 0 else -1 if d.p < 0 else 0) if d.is_Rational else certified_sign(d) for d in (above, below)]
    low, high = signs
    if low is None or high is None:
        return StepVerdict("undecided", f"the rounding to {places} places is not decided (the value is too close "
                                        "to the halfway point to settle)")
    rule = f"{places} decimal{'s' * (places != 1)}"
    if low <= 0 <= high:
        return StepVerdict("proved", f"the exact value is {text} to the places written ({rule})")
    return StepVerdict("false", f"the exact value is {_decimal(exact, places + 1)}, not {text} ({rule})")


def _decimal(value: Any, places: int) -> str:
    from symbolic_attn.exact.certified import decimal_string

    try:  # one place more than the student wrote, so that the difference shows
        return decimal_string(value, max(places, 2))
    except SymbolicAttnError:
        return "different"


def _unequal(left: Any, right: Any) -> StepVerdict:
    from symbolic_attn.proofs.prove import prove_unequal

    try:
        disproof = prove_unequal(left, right)
    except (ProofError, UndecidedError, SymbolicAttnError) as error:
        return StepVerdict("undecided", f"not shown to differ: {one_line(error)}")
    return StepVerdict("proved", f"the two sides differ ({disproof.approx})")


def _refuted(error: RefutedError, left: Any, right: Any) -> StepVerdict:
    """A false step: the difference and the point, keeping only the letters of the step
    (a range's own index, bound in a sum, is not one of them)."""
    letters = {str(s) for side in (left, right) for s in getattr(side, "free_symbols", ())}
    point = {name: value for name, value in error.point.items() if name.split("[")[0] in letters}
    if error.value:
        reason = f"false: the two sides differ (left - right = {error.value}) at the point given"
    else:
        reason = one_line(error)
    return StepVerdict("false", reason, point or None)

