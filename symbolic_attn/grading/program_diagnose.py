r"""Diagnosing claims on the stages of named definitions (exercises with ``[define]``).

A wrong claim is diagnosed by the known mistakes of :mod:`symbolic_attn.model.variants`:
the same definitions are run again with the mistake made everywhere it applies, and the
mistake is named when the claim passes, by its own rule, against the variant's stage.
When the definitions attend (``attention``, ``multihead``, blocks), the attention core's
own mistakes (:data:`CORE_VARIANTS`: ``unscaled``, ``zeroed_not_renormalized``,
``mask_score_zero``, ``softmax_columns``) are tried the same way, in every call and head.
The ids and what they mean are rows of the one catalogue (:mod:`symbolic_attn.grading.mistakes`);
the claims themselves are judged by the one pipeline (:mod:`symbolic_attn.grading.pipeline`).

>>> from symbolic_attn.grading.exercise import parse_exercise
>>> exercise = parse_exercise('''
... [inputs]
... z = [[1, 3]]
... [define]
... L = "layer_norm(z)"
... P = "sinusoidal(2, 2)"
... [[claims]]
... quantity = "L"
... value = "[-0.707, 0.707]"
... [[claims]]
... quantity = "P"
... row = 1
... value = "[0.841, 0.540]"
... ''', source="ln.toml")
>>> diagnoser = ProgramDiagnoser(exercise)
>>> [diagnoser.diagnose(claim) for claim in exercise.claims]
[['layer_norm_unbiased'], ['positions_from_one']]
"""

from __future__ import annotations

from symbolic_attn.errors import SymbolicAttnError
from symbolic_attn.grading.claims import all_pass
from symbolic_attn.grading.mistakes import describe
from symbolic_attn.model.trace import Trace, select
from symbolic_attn.model.program import run_program
from symbolic_attn.model.variants import VARIANTS, variant_traces

__all__ = ["ProgramDiagnoser", "CORE_VARIANTS"]

#: The attention core's own mistakes (ids as in grading.diagnose.MISTAKES), as settings of
#: the program's ``attention`` key: every attention call and every head makes them.
CORE_VARIANTS = {
    "unscaled": {"attention": {"scale": "none"}},
    "zeroed_not_renormalized": {"attention": {"masking": "zero_after_softmax"}},
    "mask_score_zero": {"attention": {"masking": "zero_score"}},
    "softmax_columns": {"attention": {"axis": "queries"}},
}
_ATTENDING = ("attention", "multihead", "encoder_block", "decoder_block")


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
                    found.append((name, describe(name)))
            except SymbolicAttnError:  # a variant's comparison that cannot be settled proves nothing
                continue
        order = list(VARIANTS) + list(CORE_VARIANTS)
        return sorted(found, key=lambda item: order.index(item[0]))
