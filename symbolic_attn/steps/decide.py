r"""Deciding one step of a student's chain: ``left REL right`` under the declarations.

A step is decided by the project's one sound checker (:mod:`symbolic_attn.proofs`), never
by a numeric spot check: ``=`` by :func:`~symbolic_attn.proofs.prove.prove_equal`,
``<``/``<=``/``>``/``>=`` by a proved sign of the difference, ``\approx`` by the rounding
rule of the claims (the decimal written must be the exact value rounded to as many places
as it has).  Every outcome is one of four verdicts:

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

from dataclasses import dataclass, field, replace

import sympy

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

#: The verdicts a step may get, in the order a report lists them.
VERDICTS = ("proved", "false", "undecided", "unreadable")
#: Relations a step may state (the reader's names).
RELATIONS = ("=", "<", "<=", ">", ">=", "approx", "!=")


@dataclass(frozen=True)
class StepVerdict:
    """What the checker decided about one step."""

    verdict: str
    reason: str
    counterexample: dict | None = field(default=None)
    #: For a false step: the catalogue id of the wrong rule that explains it, proved.
    diagnosis: str | None = None

    def as_dict(self) -> dict:
        counterexample = None if self.counterexample is None else {
            name: str(value) for name, value in self.counterexample.items()}
        return {"verdict": self.verdict, "reason": self.reason, "counterexample": counterexample,
                "diagnosis": self.diagnosis}

    def sentence(self) -> str | None:
        """The diagnosis as the sentence a student reads (None without one)."""
        from symbolic_attn.grading.mistakes import CATALOGUE

        return CATALOGUE[self.diagnosis].sentence() if self.diagnosis else None


def decide_step(left, right, relation: str, assumptions=(), *, written: str | None = None,
                diagnose: bool = True) -> StepVerdict:
    """Decide ``left relation right`` (SymPy values) under ``assumptions`` (the checker's
    :class:`~symbolic_attn.proofs.prove.Assumption` objects).  ``written`` is the text of
    the right side when the relation is ``approx`` (its decimal places set the rounding).
    A false equality is explained by a wrong rule when one is proved to make it
    (:func:`~symbolic_attn.steps.wrong_rules.explain`; ``diagnose=False`` skips it)."""
    if relation not in RELATIONS:
        raise ValueError(f"decide_step: unknown relation {relation!r}: expected one of {', '.join(RELATIONS)}")
    try:
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


def _equal(left, right, assumptions) -> StepVerdict:
    from symbolic_attn.proofs.prove import prove_equal

    try:
        proof = prove_equal(left, right, assumptions)
    except RefutedError as error:
        return StepVerdict("false", _sentence(error), error.point or None)
    except SideConditionError as error:
        return StepVerdict("undecided", f"needs a condition the declarations do not give: {_sentence(error)}")
    except ProofError as error:  # cross-examined false, or a float in a side
        return StepVerdict("false", _sentence(error))
    except UndecidedError as error:
        return StepVerdict("undecided", f"not proved and not refuted: {_sentence(error)}")
    except SymbolicAttnError as error:
        return StepVerdict("undecided", _sentence(error))
    rules = f" (rules: {', '.join(map(str, proof.rules))})" if proof.rules else ""
    return StepVerdict("proved", f"proved by {proof.strategy}{rules}")


def _ordered(left, right, relation: str, assumptions) -> StepVerdict:
    from symbolic_attn.proofs.prove import prove_nonnegative, prove_positive

    difference = (right - left) if relation in ("<", "<=") else (left - right)
    prove = prove_positive if relation in ("<", ">") else prove_nonnegative
    try:
        proof = prove(difference, assumptions)
    except RefutedError as error:
        return StepVerdict("false", _sentence(error), error.point or None)
    except (ProofError, UndecidedError, SymbolicAttnError) as error:
        return StepVerdict("undecided", f"the sign of the difference is not proved: {_sentence(error)}")
    return StepVerdict("proved", f"proved by {proof.strategy}")


def _approximately(left, written: str) -> StepVerdict:
    from symbolic_attn.grading.claims import judge_element, parse_claimed

    if getattr(left, "free_symbols", None):
        return StepVerdict("undecided", "an approximation needs a number on its left: it has letters "
                                        f"({', '.join(sorted(map(str, left.free_symbols)))})")
    claimed = parse_claimed(written.strip())
    if len(claimed.elements) != 1:
        return StepVerdict("undecided", f"an approximation needs one decimal on its right, got {written!r}")
    element = claimed.elements[0]
    verdict = judge_element(sympy.Integer(left) if isinstance(left, int) else left, element)
    if verdict.undecided:
        return StepVerdict("undecided", f"the rounding is not decided: {verdict.note}")
    if verdict.ok:
        return StepVerdict("proved", f"the exact value is {written.strip()} to the places written ({verdict.rule})")
    return StepVerdict("false", f"the exact value is {_decimal(left, element)}, not {written.strip()} ({verdict.rule})")


def _decimal(value, element) -> str:
    from symbolic_attn.exact.certified import decimal_string

    try:  # one place more than the student wrote, so that the difference shows
        return decimal_string(value, (element.decimals or 3) + 1)
    except SymbolicAttnError:
        return "different"


def _unequal(left, right) -> StepVerdict:
    from symbolic_attn.proofs.prove import prove_unequal

    try:
        disproof = prove_unequal(left, right)
    except (ProofError, UndecidedError, SymbolicAttnError) as error:
        return StepVerdict("undecided", f"not shown to differ: {_sentence(error)}")
    return StepVerdict("proved", f"the two sides differ ({disproof.approx})")


def _sentence(error: BaseException) -> str:
    return one_line(error)
