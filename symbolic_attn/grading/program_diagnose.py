r"""Diagnosing claims on the stages of named definitions (exercises with ``[define]``).

A wrong claim is diagnosed by the known mistakes of :mod:`symbolic_attn.model.variants`:
the same definitions are run again with the mistake made everywhere it applies, and the
mistake is named when the claim passes, by its own rule, against the variant's stage.
When the definitions attend (``attention``, ``multihead``, blocks), the attention core's
own mistakes (:data:`CORE_VARIANTS`: ``unscaled``, ``zeroed_not_renormalized``,
``mask_score_zero``, ``softmax_columns``) are tried the same way, in every call and head.
The ids and what they mean are rows of the one catalogue (:mod:`symbolic_attn.model.mistakes`);
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
from symbolic_attn.model.mistakes import describe, order
from symbolic_attn.model.trace import Trace, select
from symbolic_attn.model.program import run_program
from symbolic_attn.model.variants import VARIANTS, applicable

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

    A variant is run only when a claim needs it, and only as far as the claim's definition:
    a claim on ``M.head[1].weights`` runs the definitions up to ``M`` under the multi-head
    and attention mistakes, never the LayerNorm after it (those definitions cannot change
    ``M``).  Each (variant, definitions run) trace is kept for the next claim and student;
    a variant that cannot be computed (a LayerNorm row of width 1 has no unbiased variance)
    reproduces nothing.
    """

    def __init__(self, exercise):
        self.exercise = exercise
        self._traces: dict = {}  # (variant, number of definitions run) -> Trace or the error

    def _prefix(self, quantity: str) -> int:
        """How many definitions the claim's stage depends on at most: up to its own."""
        names = [name for name, _ in self.exercise.definitions]
        top = quantity.split(".")[0].split("[")[0]
        return names.index(top) + 1 if top in names else len(names)

    def _variants(self, definitions) -> list:
        """(id, settings) of every mistake that can change these definitions."""
        found = [(name, VARIANTS[name]) for name in applicable(definitions)]
        called = " ".join(text for _, text in definitions).replace(" (", "(")
        if any(f"{name}(" in called for name in _ATTENDING):
            found += list(CORE_VARIANTS.items())
        return found

    def _trace(self, name: str, settings: dict, count: int):
        key = (name, count)
        if key not in self._traces:
            inputs = {**self.exercise.symbols, **self.exercise.inputs}
            try:
                self._traces[key] = run_program(inputs, self.exercise.definitions[:count], variant=settings)
            except SymbolicAttnError as error:  # e.g. a column with no allowed query
                self._traces[key] = error
        return self._traces[key]

    def diagnose(self, claim) -> list:
        """The ids of every mistake under which the claim passes by its own rule."""
        return [mistake for mistake, _ in self.details(claim)]

    def details(self, claim) -> list:
        """(id, description) of every reproducing variant, in the catalogue's order."""
        right = self.exercise.trace()
        count = self._prefix(claim.quantity)
        found = []
        for name, settings in self._variants(self.exercise.definitions[:count]):
            trace = self._trace(name, settings, count)
            if not isinstance(trace, Trace) or claim.quantity not in trace:
                continue
            try:
                # A stage of another shape (dbeta = G, not summed) is compared only where the
                # claim picks a row or an entry that both have.
                if trace.shape(claim.quantity) != right.shape(claim.quantity) and claim.row is None \
                        and claim.col is None:
                    continue
                entries = select(trace, claim.quantity, claim.row, claim.col).entries
                if all_pass(entries, claim.claimed, claim.rule):
                    found.append((name, describe(name)))
            except SymbolicAttnError:  # a variant's comparison that cannot be settled proves nothing
                continue
        return sorted(found, key=lambda item: order(item[0]))
