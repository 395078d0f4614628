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
>>> step = decide_random(Var(sympy.Sum(q[i] * k[i], (i, 1, n))), n, "=", (), independent, {})
>>> step.verdict, step.reason.startswith("proved by the rules of expectation")
('proved', True)
>>> decide_random(Var(sympy.Sum(q[i] * k[i], (i, 1, n)) / n), 1, "=", (), independent, {}).as_dict()["counterexample"]
{'n': '3'}
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import sympy

from symbolic_attn.errors import SymbolicAttnError, TimeLimitError, one_line
from symbolic_attn.steps.expectation import RULES, reduce_random
from symbolic_attn.steps.randomness import Randomness, Unknowns

__all__ = ["decide_random"]


def decide_random(left: Any, right: Any, relation: str, assumptions: Any, randomness: Randomness,
                  ranges: dict[Any, tuple[Any, Any]], *, written: str | None = None) -> Any:
    """Decide ``left relation right`` whose sides hold ``E[...]`` or ``Var(...)``."""
    from symbolic_attn.steps import decide

    try:
        reduced = [reduce_random(side, randomness, ranges) for side in (left, right)]
    except TimeLimitError:
        raise
    except (SymbolicAttnError, TypeError, ValueError) as error:
        return decide.StepVerdict("undecided", f"the rules of expectation do not settle it: {one_line(error)}")
    unknowns = Unknowns()
    opened = [unknowns.abstract(side) for side in reduced]
    exact = not unknowns.used and not any(randomness.is_random(side) for side in opened)
    if not exact and relation in _REFUTABLE:  # a model refutes in a tenth of a second; the prover may take seconds
        refuted = _in_a_model(left, right, relation, randomness, ranges)
        if refuted is not None:
            return refuted
    step = decide.decide_step(opened[0], opened[1], relation, assumptions, written=written, diagnose=False)
    if step.verdict == "proved":
        how = step.reason[len("proved by "):] if step.reason.startswith("proved by ") else step.reason
        return replace(step, reason=f"proved by {RULES}, then {how}")
    if step.verdict == "false" and exact:
        if not step.counterexample:  # the sides differ in every allowed distribution: show the simplest
            shown = _in_a_model(left, right, relation, randomness, ranges)
            if shown is not None:
                step = replace(step, counterexample=shown.counterexample)
        return replace(step, reason=f"{step.reason} (by {RULES}, the sides are "
                                    f"{sympy.sstr(opened[0])} and {sympy.sstr(opened[1])})")
    if exact and relation in _REFUTABLE:
        refuted = _in_a_model(left, right, relation, randomness, ranges)
        if refuted is not None:
            return refuted
    left_open = "; ".join(sorted(map(sympy.sstr, unknowns.used)))
    unknown = f" (unknown moments: {left_open})" if left_open else ""
    return decide.StepVerdict("undecided", f"not proved by {RULES}{unknown}, and no small distribution the "
                                           f"declarations allow refutes it: {step.reason}")


_REFUTABLE = ("=", "<", "<=", ">", ">=")


def _in_a_model(left: Any, right: Any, relation: str, randomness: Randomness,
                ranges: dict[Any, tuple[Any, Any]]) -> Any:
    from symbolic_attn.steps import decide
    from symbolic_attn.steps.random_models import counterexample

    found = counterexample(left, right, relation, randomness, ranges)
    if found is None:
        return None
    return decide.StepVerdict("false", "false: the sides differ in a distribution the declarations allow (given)",
                              found)
