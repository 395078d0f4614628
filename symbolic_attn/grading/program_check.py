r"""Checking claims on any stage of named definitions (exercises with ``[define]``).

A claim's ``quantity`` is a stage path of the program's trace (``"A.weights"``,
``"M.head[2].output"``, ``"N"``, ``"P"``, ``"attention.weights"``); its entries are found
with the one helper :func:`symbolic_attn.model.trace.select`, judged by the same rules as
attention claims (:mod:`symbolic_attn.grading.claims`: certified, never a float), and the
decimals shown come from :meth:`symbolic_attn.model.trace.Trace.decimals` (certified).

A wrong claim is diagnosed by the known mistakes of :mod:`symbolic_attn.model.variants`:
the same definitions are run again with the mistake made everywhere it applies, and the
mistake is named when the claim passes, by its own rule, against the variant's stage.
When the definitions attend (``attention``, ``multihead``, blocks), the attention core's
own mistakes (:data:`CORE_VARIANTS`: ``unscaled``, ``zeroed_not_renormalized``,
``mask_score_zero``, ``softmax_columns``) are tried the same way, in every call and head.

>>> from symbolic_attn.grading.exercise import parse_exercise
>>> exercise = parse_exercise('''
... [inputs]
... z = [[1, 3]]
... [define]
... L = "layer_norm(z)"
... P = "sinusoidal(2, 2)"
... [[claims]]
... quantity = "L"
... value = "[-1, 1]"
... [[claims]]
... quantity = "L"
... value = "[-0.707, 0.707]"
... [[claims]]
... quantity = "P"
... row = 1
... value = "[0.841, 0.540]"
... ''', source="ln.toml")
>>> report = check_program(exercise)
>>> [(o.verdict, o.diagnosis) for o in report.outcomes]
[('pass', []), ('fail', ['layer_norm_unbiased']), ('fail', ['positions_from_one'])]
"""

from __future__ import annotations

import sympy

from symbolic_attn.errors import SymbolicAttnError, shown
from symbolic_attn.grading.claims import all_pass, judge_values, verdict_of
from symbolic_attn.grading.outcomes import CheckReport, ClaimOutcome
from symbolic_attn.model.trace import Selection, Trace, select
from symbolic_attn.model.program import run_program
from symbolic_attn.model.variants import DESCRIPTIONS, VARIANTS, variant_traces

__all__ = ["check_program", "ProgramDiagnoser", "CORE_VARIANTS"]

#: The attention core's own mistakes (ids as in grading.diagnose.MISTAKES), as settings of
#: the program's ``attention`` key: every attention call and every head makes them.
CORE_VARIANTS = {
    "unscaled": {"attention": {"scale": "none"}},
    "zeroed_not_renormalized": {"attention": {"masking": "zero_after_softmax"}},
    "mask_score_zero": {"attention": {"masking": "zero_score"}},
    "softmax_columns": {"attention": {"axis": "queries"}},
}
_CORE_DESCRIPTIONS = {
    "unscaled": "1/sqrt(d_k) forgotten",
    "zeroed_not_renormalized": "blocked weights zeroed after softmax, not renormalized",
    "mask_score_zero": "blocked scores set to 0 instead of removed",
    "softmax_columns": "softmax over the wrong axis (columns)",
}
_ATTENDING = ("attention", "multihead", "encoder_block", "decoder_block")

_NODES_PER_TERM = 8  # expression nodes counted as one "term" of the report's size bounds
_NODE_CAP = 100_000  # counting stops here: such a closed form is never printed anyway


def check_program(exercise, progress=None) -> CheckReport:
    """Judge every claim of a ``[define]`` exercise against its trace; diagnose wrong ones."""
    progress = progress or (lambda text: None)
    progress("computing the definitions")
    trace = exercise.trace()
    diagnoser = ProgramDiagnoser(exercise)
    decimals, outcomes = {}, []
    for claim in exercise.claims:
        named = f"claim {claim.index}" + (f" ({shown(claim.label, 40)!r})" if claim.label else "")
        progress(f"judging {named}")
        selection = select(trace, claim.quantity, claim.row, claim.col)
        verdicts = judge_values(selection.entries, claim.claimed, claim.rule) if exercise.rounded is None else \
            exercise.rounded.judge_values(claim.quantity, claim.row, claim.col, selection.entries, claim.claimed,
                                          claim.rule)  # inputs printed rounded: grading.rounded_inputs
        shape = selection.shape
        if shape is not None and (claim.claimed.shape is None or len(claim.claimed.shape) < len(shape)):
            shape = claim.claimed.shape  # show as claimed: [a, b, c] for a one-row matrix, 2 for [[2]]
        places = max([e.decimals for e in claim.claimed.elements if e.decimals is not None], default=3) + 2
        key = (claim.quantity, places)
        if key not in decimals:
            decimals[key] = trace.decimals(claim.quantity, places)
        grid = decimals[key]
        # The report builds closed forms lazily from functions (see ClaimOutcome).
        lazy = Selection(selection.path, selection.row, selection.col,
                         [(lambda value=value: value) for value in selection.entries], selection.positions,
                         selection.shape)
        outcome = ClaimOutcome(
            claim, verdict_of(verdicts), shape, "; ".join(dict.fromkeys(v.rule for v in verdicts)),
            [grid[i - 1][j - 1] or "-" for i, j in selection.positions], lazy,
            size=_size(selection.entries), notes=[v.note for v in verdicts if v.note],
            wrong=[p for p, v in zip(selection.positions, verdicts) if v.state == "fail"],
            undecided=[p for p, v in zip(selection.positions, verdicts) if v.state == "undecided"],
        )
        if outcome.verdict == "fail":
            progress(f"diagnosing {named}")
            outcome.details = diagnoser.details(claim)
            outcome.diagnosis = [mistake for mistake, _ in outcome.details]
        outcomes.append(outcome)
    return CheckReport(exercise.source, exercise.title, outcomes)


class ProgramDiagnoser:
    """Which known mistakes (:data:`symbolic_attn.model.variants.VARIANTS`) reproduce a claim.

    The variants' traces are computed once, on the first wrong claim; a variant that cannot
    be computed (a LayerNorm row of width 1 has no unbiased variance) reproduces nothing.
    """

    def __init__(self, exercise):
        self.exercise = exercise
        self._traces = None

    def traces(self) -> dict:
        if self._traces is None:
            inputs = {**self.exercise.symbols, **self.exercise.inputs}
            definitions = self.exercise.definitions
            self._traces = variant_traces(inputs, definitions)
            called = " ".join(text for _, text in definitions)
            if any(f"{name}(" in called.replace(" (", "(") for name in _ATTENDING):
                for name, settings in CORE_VARIANTS.items():
                    try:
                        self._traces[name] = run_program(inputs, definitions, variant=settings)
                    except SymbolicAttnError as error:  # e.g. a column with no allowed query
                        self._traces[name] = error
        return self._traces

    def diagnose(self, claim) -> list:
        """The ids of every mistake under which the claim passes by its own rule."""
        return [mistake for mistake, _ in self.details(claim)]

    def details(self, claim) -> list:
        """(id, description) of every reproducing variant, in the order of VARIANTS."""
        right = self.exercise.trace()
        found = []
        for name, trace in self.traces().items():
            if not isinstance(trace, Trace) or claim.quantity not in trace:
                continue
            try:
                if trace.shape(claim.quantity) != right.shape(claim.quantity):
                    continue
                entries = select(trace, claim.quantity, claim.row, claim.col).entries
                if all_pass(entries, claim.claimed, claim.rule):
                    found.append((name, DESCRIPTIONS.get(name) or _CORE_DESCRIPTIONS[name]))
            except SymbolicAttnError:  # a variant's comparison that cannot be settled proves nothing
                continue
        order = list(VARIANTS) + list(CORE_VARIANTS)
        return sorted(found, key=lambda item: order.index(item[0]))


def _size(entries) -> int:
    """A cheap bound on the closed forms' size, in the report's units (about 8 nodes each)."""
    nodes = 0
    for entry in entries:
        for _ in sympy.preorder_traversal(entry):
            nodes += 1
            if nodes >= _NODE_CAP:
                return nodes // _NODES_PER_TERM
    return max(len(entries), -(-nodes // _NODES_PER_TERM))
