r"""Which classic backward mistake a kernel has: its gradients against the exact variants.

Every mistake is a **setting of the one exact backward**,
:func:`~symbolic_attn.model.backward.attention_backward` (:data:`.backward_exact.VARIANTS`),
computed exactly at the case's inputs and held to the bound of :mod:`.backward_bounds`
around the variant's own exact value:

==========================  ==========================================================
id                          setting
==========================  ==========================================================
``grad_missing_scale``      ``grad_scale="missing"``: no scale in dS, dQ, dK
``grad_transposed_k``       ``key_side="transposed"``: dQ = dSᵀ K, dK = dS Q (n = m)
``grad_diagonal_jacobian``  ``softmax_jacobian="diagonal"``: dS = A ⊙ dA
``grad_missing_rowsum``     ``softmax_jacobian="no_rowsum"``: dS = A ⊙ (dA − A ⊙ dA)
==========================  ==========================================================

A failing case is *explained* by a mistake when the kernel's dQ, dK and dV are all within
the variant's bounds and the variant is distinguishable from the correct gradients there
(some entry differs by more than both bounds together: a vacuous match explains nothing;
with d_k = 1 the default scale is 1 and a missing scale is invisible).  **A diagnosis is
named only when its variant explains every failing case** (a case where the kernel
raised is explained by none) and no passing case refutes it (a passing case on which the
variant is distinguishable from the correct gradients).  Otherwise nothing is named: the
report lists the cases each candidate explains and the failing cases none explains.
"""

from __future__ import annotations

import flint

from symbolic_attn.exact.intervals import working_precision
from symbolic_attn.numerics.backward_exact import VARIANTS, GradientExpected, expected_gradients
from symbolic_attn.numerics.compare import BITS, measure

__all__ = ["MISTAKES", "distinguishable", "explains", "backward_diagnosis"]

#: The mistake ids, in the catalogue's order (symbolic_attn.model.mistakes).
MISTAKES = tuple(name for name in VARIANTS if name is not None)
_STAGES = ("dQ", "dK", "dV")


def distinguishable(variant: GradientExpected, correct: GradientExpected) -> bool:
    """Some entry where the two exact gradients differ by more than both bounds together."""
    for stage in _STAGES:
        balls, bounds = variant.stage(stage)
        other, other_bounds = correct.stage(stage)
        for row, brow, orow, obrow in zip(balls, bounds, other, other_bounds):
            for a, ba, b, bb in zip(row, brow, orow, obrow):
                with working_precision(BITS):
                    if abs(a - b) > flint.arb(ba) + flint.arb(bb):
                        return True
    return False


def _variant(run, name):
    if not run.exact.applies(name):
        return None
    return expected_gradients(run.exact, run.fmt, name)


def explains(run, name: str) -> bool:
    """Whether mistake ``name`` explains this (failing) case."""
    if run.computed is None or run.report.passed:
        return False
    variant = _variant(run, name)
    if variant is None or not distinguishable(variant, run.reference):
        return False
    return all(measure(stage, run.computed[stage], variant, run.fmt).passed for stage in _STAGES)  # type: ignore[arg-type]


def refuted(run, name: str) -> bool:
    """A passing case on which the mistake would have shown: the kernel got it right."""
    if not run.report.passed:
        return False
    variant = _variant(run, name)
    return variant is not None and distinguishable(variant, run.reference)


def backward_diagnosis(runs) -> tuple[tuple[str, ...], dict[str, list[str]], tuple[str, ...]]:
    """(named mistakes, {mistake: failing cases it explains}, failing cases none explains).

    A mistake is named only when it explains every failing case and no passing case
    refutes it; when one is named the other two parts are empty.
    """
    failing = [run for run in runs if not run.report.passed]
    if not failing:
        return (), {}, ()
    explained = {name: [run.report.name for run in failing if explains(run, name)] for name in MISTAKES}
    explained = {name: cases for name, cases in explained.items() if cases}
    named = tuple(name for name, cases in explained.items()
                  if len(cases) == len(failing) and not any(refuted(run, name) for run in runs))
    if named:
        return named, {}, ()
    covered = {case for cases in explained.values() for case in cases}
    return (), explained, tuple(run.report.name for run in failing if run.report.name not in covered)
