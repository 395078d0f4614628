r"""The one check pipeline: load → compute a trace → select → judge → diagnose → outcome.

``check`` (:func:`symbolic_attn.grading.report.check_exercise`) and ``grade``
(:mod:`symbolic_attn.grading.batch`) go through the same :class:`Checker`, for every kind of
exercise: ``[attention]`` alone, ``[define]`` alone, or both.  (``run`` shares the first two
steps: the one computation reader and the exercise's trace.)

* **compute**: an ``[attention]`` exercise has one attention result, whose certified
  intervals settle most claims before a closed form is built; an exercise with
  ``[define]`` has the trace of its named definitions (``[attention]`` is the definition
  named ``attention`` there).  Either is computed once per checker.
* **select**: a claim's entries by stage path, with the one helper
  :func:`symbolic_attn.model.trace.select` (through the lazy
  :class:`~symbolic_attn.grading.view.StageView` for an attention result).
* **judge**: :func:`symbolic_attn.grading.claims.judge_values`, by the claim's rule (over
  every input that rounds to the printed one when inputs are declared printed-rounded:
  :mod:`symbolic_attn.grading.rounded_inputs`).
* **diagnose**: the attention core's mistakes (:class:`~symbolic_attn.grading.diagnose.Diagnoser`,
  with the follow-through from the solution's own earlier claims), or, with ``[define]``,
  the model's and the core's mistakes in every call
  (:class:`~symbolic_attn.grading.program_diagnose.ProgramDiagnoser`).  The ids are rows of the
  one catalogue (:mod:`symbolic_attn.model.mistakes`).
* **outcome**: a :class:`~symbolic_attn.grading.outcomes.ClaimOutcome`, which prints itself.

>>> from symbolic_attn.grading.exercise import parse_exercise
>>> exercise = parse_exercise('''
... [inputs]
... z = [[1, 3]]
... [define]
... L = "layer_norm(z)"
... [[claims]]
... quantity = "L"
... value = "[-0.707, 0.707]"
... ''', source="ln.toml")
>>> report = Checker(exercise).check()
>>> [(o.verdict, o.diagnosis) for o in report.outcomes]
[(<Verdict.FAIL: 'fail'>, ['layer_norm_unbiased'])]
>>> Checker(exercise).selection("L", 1, 2).positions
[(1, 2)]
"""

from __future__ import annotations

import sympy

from symbolic_attn.errors import ExerciseError, SymbolicAttnError, shown
from symbolic_attn.grading.claims import judge_values, verdict_of
from symbolic_attn.model.mistakes import order
from symbolic_attn.grading.outcomes import CheckReport, ClaimOutcome, Verdict
from symbolic_attn.model.trace import Selection, select

__all__ = ["Checker"]

_NODES_PER_TERM = 8  # expression nodes counted as one "term" of the report's size bounds
_NODE_CAP = 100_000  # counting stops here: such a closed form is never printed anyway


class Checker:
    """Everything one exercise's claims are checked against, computed once (read-only once
    built: a grading worker shares one checker between students)."""

    def __init__(self, exercise, progress=None):
        self.exercise = exercise
        self.progress = progress or (lambda text: None)
        self.kind = "define" if exercise.definitions else "attention"
        self._wrap(self._compute)
        self._view = None
        self._decimals: dict = {}
        self.variants: dict = {}  # the attention diagnoser's variants: exercise data only, shared
        self._program_diagnoser = None

    # -- compute ------------------------------------------------------------------------

    def _compute(self):
        if self.kind == "define":
            self.progress("computing the definitions")
            self.result = None
            self.trace = self.exercise.trace()
        else:
            self.progress("computing the attention stages")
            self.result = self.exercise.compute()
            self.trace = self.result.trace

    def _wrap(self, step, *args):
        """Run a step; a computation's refusal names the file and the section it came from."""
        try:
            return step(*args)
        except ExerciseError:
            raise
        except SymbolicAttnError as error:
            section = "define" if self.kind == "define" else "attention"
            raise ExerciseError(f"{self.exercise.source}: {section}: {shown(' '.join(str(error).split()), 300)}") from None

    # -- select -------------------------------------------------------------------------

    def selection(self, quantity: str, row=None, col=None) -> Selection:
        """The entries (as functions: built on first use) and 1-based positions of a claim."""
        if self.result is None:
            chosen = select(self.trace, quantity, row, col)
            return Selection(chosen.path, chosen.row, chosen.col,
                             [(lambda value=value: value) for value in chosen.entries], chosen.positions,
                             chosen.shape)
        return self._stage_view().select(quantity, row, col)

    def _stage_view(self):
        """The lazy view of the attention result's stages (entries as functions), built once."""
        if self._view is None:
            from symbolic_attn.grading.view import StageView

            self._view = StageView(self.result)
        return self._view

    def shape(self, quantity: str) -> tuple:
        rows, cols = self.trace[quantity].shape
        return rows, cols

    def balls(self, quantity: str, positions):
        """Certified intervals of the entries (an attention stage only), or None."""
        if self.result is None:
            return None
        try:
            return self._stage_view().balls(quantity, positions)
        except SymbolicAttnError:
            return None

    def decimals(self, quantity: str, places: int) -> list:
        """The stage's certified decimals (rows of strings; ``None`` where not shown), cached."""
        key = (quantity, places)
        if key not in self._decimals:
            self._decimals[key] = self.trace.decimals(quantity, places)
        return self._decimals[key]

    # -- judge and diagnose ---------------------------------------------------------------

    def judge(self, claim) -> list:
        """One verdict per claimed entry (:class:`~symbolic_attn.grading.claims.ElementVerdict`)."""
        selection = self.selection(claim.quantity, claim.row, claim.col)
        balls = self.balls(claim.quantity, selection.positions)
        rounded = self.exercise.rounded  # inputs printed rounded: judged over every input they round from
        if rounded is not None:
            return rounded.judge_values(claim.quantity, claim.row, claim.col, selection.entries, claim.claimed,
                                        claim.rule, balls)
        return judge_values(selection.entries, claim.claimed, claim.rule, balls)

    def diagnose(self, claim, others=None) -> list:
        """(id, detail) of every known mistake that reproduces a wrong claim, in the
        catalogue's order.  ``others``: the solution's other claims, from which a value may
        follow (an attention exercise; by default the exercise's own claims)."""
        if self.result is None:
            if self._program_diagnoser is None:
                from symbolic_attn.grading.program_diagnose import ProgramDiagnoser

                self._program_diagnoser = ProgramDiagnoser(self.exercise)
            details = self._program_diagnoser.details(claim)
        else:
            from dataclasses import replace

            from symbolic_attn.grading.diagnose import Diagnoser

            exercise = self.exercise if others is None else replace(self.exercise, claims=tuple(others))
            diagnoser = Diagnoser(exercise, self.result)
            # The variants of the exercise hold no student data: shared by every diagnosis.
            diagnoser.__dict__["_cache"] = self.variants
            details = diagnoser.details(claim)
        return sorted(details, key=lambda item: order(item[0]))

    # -- outcome ------------------------------------------------------------------------

    def outcome(self, claim) -> ClaimOutcome:
        """Judge one claim and, when it is wrong, diagnose it."""
        named = f"claim {claim.index}" + (f" ({shown(claim.label, 40)!r})" if claim.label else "")
        self.progress(f"judging {named}")
        selection = self.selection(claim.quantity, claim.row, claim.col)
        verdicts = self.judge(claim)
        shape = selection.shape
        if shape is not None and (claim.claimed.shape is None or len(claim.claimed.shape) < len(shape)):
            shape = claim.claimed.shape  # show as claimed: [a, b, c] for a one-row matrix, 2 for [[2]]
        places = max([e.decimals for e in claim.claimed.elements if e.decimals is not None], default=3) + 2
        grid = self.decimals(claim.quantity, places)
        outcome = ClaimOutcome(
            claim, verdict_of(verdicts), shape, "; ".join(dict.fromkeys(v.rule for v in verdicts)),
            [grid[i - 1][j - 1] or "-" for i, j in selection.positions], selection,
            size=self._size(claim.quantity, selection), notes=[v.note for v in verdicts if v.note],
            wrong=[p for p, v in zip(selection.positions, verdicts) if v.state == Verdict.FAIL],
            undecided=[p for p, v in zip(selection.positions, verdicts) if v.state == Verdict.UNDECIDED],
        )
        if outcome.verdict == Verdict.FAIL:
            self.progress(f"diagnosing {named}")
            outcome.details = self.diagnose(claim)
            outcome.diagnosis = list(dict.fromkeys(mistake for mistake, _ in outcome.details))
        return outcome

    def check(self) -> CheckReport:
        """Every claim of the exercise, judged and diagnosed."""
        outcomes = [self._wrap(self.outcome, claim) for claim in self.exercise.claims]
        return CheckReport(self.exercise.source, self.exercise.title, outcomes)

    def _size(self, quantity: str, selection) -> int:
        """A cheap bound on the printed closed forms' size (entries x softmax terms; for
        named definitions about 8 expression nodes per term)."""
        if self.result is not None:
            terms = self.result.scores.cols if quantity in ("weights", "output") else 1
            return len(selection.positions) * terms
        nodes = 0
        for entry in selection.entries:
            for _ in sympy.preorder_traversal(entry()):
                nodes += 1
                if nodes >= _NODE_CAP:
                    return nodes // _NODES_PER_TERM
        return max(len(selection.entries), -(-nodes // _NODES_PER_TERM))
