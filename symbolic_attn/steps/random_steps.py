r"""Deciding a step that speaks of expectations and variances.

Both sides are first reduced by the rules of expectation (:mod:`.expectation`): the reduced
side equals the side for every distribution the declarations allow.  The reduced sides are
then decided by the one sound checker, as any step is (:mod:`.decide`), with each moment the
rules leave unknown (``E[q_i^4]``) standing as an unknown function of its indices -- the same
unknown wherever it is the same moment.  So:

* *proved* means proved for every allowed distribution;
* *false* needs a certified counterexample: values of the letters when nothing unknown is
  left (the reduced sides are then the exact values), else a small distribution the
  declarations allow (:mod:`.random_models`);
* otherwise *undecided*, with the reason.

>>> import sympy
>>> from symbolic_attn.steps.randomness import Expectation, RandomFamily, Randomness, Var
>>> n = sympy.Symbol("n", integer=True, positive=True)
>>> i = sympy.Symbol("i", integer=True, positive=True)
>>> q, k = sympy.IndexedBase("q", real=True), sympy.IndexedBase("k", real=True)
>>> independent = Randomness((RandomFamily(("q", "k"), "vector", True, sympy.Integer(0), sympy.Integer(1)),))
>>> from symbolic_attn.steps.decide import decide_step
>>> plain = lambda one, other: decide_step(one, other, "=")
>>> step = decide_random(Var(sympy.Sum(q[i] * k[i], (i, 1, n))), n, "=", independent, {}, plain)
>>> step.verdict, step.reason.startswith("proved by the rules of expectation")
('proved', True)
>>> decide_random(Var(sympy.Sum(q[i] * k[i], (i, 1, n)) / n), 1, "=", independent, {}, plain).as_dict()["counterexample"]
{'n': '3'}
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import sympy

from symbolic_attn.errors import SymbolicAttnError, TimeLimitError, one_line
from symbolic_attn.steps.expectation import RULES, reduce_random
from symbolic_attn.steps.randomness import Randomness, Unknowns
from symbolic_attn.steps.verdict import StepVerdict

__all__ = ["decide_random"]


def decide_random(left: Any, right: Any, relation: str, randomness: Randomness,
                  ranges: dict[Any, tuple[Any, Any]], decide_reduced: Callable[[Any, Any], StepVerdict]) -> StepVerdict:
    """Decide ``left relation right`` whose sides hold ``E[...]`` or ``Var(...)``;
    ``decide_reduced`` decides the reduced sides (the one sound checker, as any step)."""
    from symbolic_attn.steps import echo

    try:
        reduced = [reduce_random(side, randomness, ranges) for side in (left, right)]
    except TimeLimitError:
        raise
    except (SymbolicAttnError, TypeError, ValueError) as error:
        return StepVerdict("undecided", f"the rules of expectation do not settle it: {one_line(error)}")
    unknowns = Unknowns()
    opened = [unknowns.abstract(side) for side in reduced]
    exact = not unknowns.used and not any(randomness.is_random(side) for side in opened)
    if not exact and relation in _REFUTABLE:  # a model refutes in a tenth of a second; the prover may take seconds
        refuted = _in_a_model(left, right, relation, randomness, ranges)
        if refuted is not None:
            return refuted
    step = decide_reduced(opened[0], opened[1])
    if step.verdict == "proved":
        how = step.reason[len("proved by "):] if step.reason.startswith("proved by ") else step.reason
        return replace(step, reason=f"proved by {RULES}, then {how}")
    if step.verdict == "false" and exact:
        if not step.counterexample:  # the sides differ in every allowed distribution: show the simplest
            shown = _in_a_model(left, right, relation, randomness, ranges)
            if shown is not None:
                step = replace(step, counterexample=shown.counterexample)
        return replace(step, reason=_in_letters(f"{step.reason} (by {RULES}, the sides are "
                                                f"{echo.notation(reduced[0])} and {echo.notation(reduced[1])})",
                                                unknowns))
    if exact and relation in _REFUTABLE:
        refuted = _in_a_model(left, right, relation, randomness, ranges)
        if refuted is not None:
            return refuted
    left_open = "; ".join(sorted(map(echo.notation, unknowns.used)))
    unknown = f" (unknown moments: {left_open})" if left_open else ""
    return StepVerdict("undecided", _in_letters(f"not proved by {RULES}{unknown}, and no small distribution "
                                                       f"the declarations allow refutes it: {step.reason}", unknowns))


def _in_letters(reason: str, unknowns: Unknowns) -> str:
    """A reason as the student can read it: each unknown moment written as the moment
    (``E[X**3]``, not the checker's ``E1(0)``), ``delta(i, l)`` for a Kronecker delta, and a
    fresh index without the underscore SymPy prints for it."""
    from symbolic_attn.steps import echo

    for moment in unknowns.used:
        reason = reason.replace(sympy.sstr(unknowns.abstract(moment)), echo.notation(moment))
    reason = reason.replace("KroneckerDelta(", "delta(")
    return re.sub(r"(?<![A-Za-z0-9_])_([A-Za-z][A-Za-z0-9]*)", r"\1'", reason)


_REFUTABLE = ("=", "<", "<=", ">", ">=")


def _in_a_model(left: Any, right: Any, relation: str, randomness: Randomness,
                ranges: dict[Any, tuple[Any, Any]]) -> StepVerdict | None:
    from symbolic_attn.steps.random_models import counterexample

    found = counterexample(left, right, relation, randomness, ranges)
    if found is None:
        return None
    return StepVerdict("false", "false: the sides differ in a distribution the declarations allow (given)",
                              found)
