r"""Diagnosis: which known mistake reproduces a wrong claimed number.

Exact arithmetic makes a diagnosis unambiguous: recompute the exercise under a mistake and
judge the claim again, by the same rule.  Every mistake is a **setting of the one attention
core**, run by the exercise itself (:meth:`Exercise.compute
<symbolic_attn.grading.exercise.Exercise.compute>`): a different ``scale``, ``masking``,
``axis``, mask or value matrix -- never a second implementation.  The rounding mistakes
continue the core's own intermediate results after rounding them; ``transposed`` and
``decimal_point`` are mistakes in writing the right result down.  Entries are found in a
variant's trace with the one helper, :func:`symbolic_attn.model.trace.select` (through
:meth:`StageView.select <symbolic_attn.grading.view.StageView.select>`, which remembers it).

Ids (as in the grading rubric):

================================  ===================================================
``unscaled``                      1/sqrt(d_k) forgotten (``scale="none"``)
``scaled_by_dk``                  divided by d_k instead of sqrt(d_k)
``scaled_twice``                  the scale applied twice (``scale = s**2``)
``wrong_scale``                   1/sqrt(d_k) used where the exercise gives another scale,
                                  or multiplied by sqrt(d_k) instead of dividing
``mask_ignored``                  the mask left out altogether
``zeroed_not_renormalized``       softmax over all keys, blocked weights then zeroed
``mask_score_zero``               blocked *scores* set to 0 (exp(0) = 1 stays)
``mask_inverted``                 keep/block polarity swapped (``mask.inverted()``)
``mask_shifted``                  causal mask off by one, either way (offset +-1)
``softmax_columns``               normalized over queries (``axis="queries"``)
``sum_normalized``                each row's scaled scores divided by their sum, no softmax
                                  (a "simple normalization"; none when a row sums to 0)
``keys_as_values``                K used where V belongs
``transposed``                    the right matrix, written transposed
``decimal_point``                 the right numbers off by a power of ten (10^-3 .. 10^3)
``rounded_intermediates``         scaled scores or weights rounded to 1-4 decimals, then continued
``forced_row_sum``                rounded weights adjusted so that each row sums to 1 (only
                                  when the adjustment changed what was claimed)
``follows_from_claimed``          follows from the solution's own earlier claims as written
                                  (weights: within the rounding of the claimed scores; an
                                  output: of the claimed weights; see :mod:`.follow_through`)
================================  ===================================================

Rows that a variant leaves without any allowed key (an inverted or shifted mask) get zero
weights, as PyTorch's scaled_dot_product_attention does.

>>> from symbolic_attn.grading.exercise import parse_exercise
>>> exercise = parse_exercise('''
... [inputs]
... X = [[1, 0], [0, 1], [1, 1]]
... [attention]
... query = "X"
... key = "X"
... value = "2*X"
... [[claims]]
... quantity = "weights"
... row = 1
... value = "[0.422, 0.155, 0.422]"
... ''')
>>> Diagnoser(exercise).diagnose(exercise.claims[0])
['unscaled']
"""

from dataclasses import dataclass, field

import sympy

from symbolic_attn.errors import SymbolicAttnError
from symbolic_attn.exact.parse import decimal_value
from symbolic_attn.grading.claims import all_pass
from symbolic_attn.grading.follow_through import output_within_rounding, weights_within_rounding
from symbolic_attn.model.mistakes import CATALOGUE
from symbolic_attn.grading.view import StageView
from symbolic_attn.model.compose import product
from symbolic_attn.model.masks import Mask

__all__ = ["MISTAKES", "Diagnoser", "Candidate"]

#: The ids this module reproduces, with their descriptions: the attention core's, the
#: written and the follow-through rows of the one catalogue (:mod:`symbolic_attn.model.mistakes`), in its order.
MISTAKES = {row.id: row.description for row in CATALOGUE.values() if row.kind not in ("model", "step")}
_ROUNDINGS = (1, 2, 3, 4)
_POWERS = (-3, -2, -1, 1, 2, 3)


@dataclass
class Candidate:
    """One variant under a mistake: a core result, with stages overridden or transformed.

    ``overrides`` replace stages of ``result`` by exact matrices; ``transform`` (optional)
    is ``(transpose, factor)`` applied to every stage as written down.  A candidate with a
    ``baseline`` counts only when the baseline does not reproduce the claim too (the
    forced row sum must have changed something).
    """

    mistake: str
    detail: str
    result: object = None
    overrides: dict = field(default_factory=dict)
    transform: tuple = (False, 1)
    baseline: "Candidate | None" = None

    def view(self) -> StageView:
        if "_view" not in self.__dict__:
            self.__dict__["_view"] = StageView(self.result, self.overrides, *self.transform)
        return self.__dict__["_view"]

    def matrix(self, quantity: str):
        """The exact stage (built: for tests and follow-through only)."""
        return self.view().exact(quantity)


class Diagnoser:
    """Builds the mistaken variants of one exercise lazily, and judges claims against them."""

    def __init__(self, exercise, result=None):
        self.exercise = exercise
        self.spec = exercise.attention
        self.result = result if result is not None else exercise.compute()
        self._cache = {}
        #: The stage paths in the order the core computes them (the trace's order).
        self.stages = list(self.result.trace)

    def diagnose(self, claim) -> list:
        """Every mistake id under which the claim passes by its own rule (sorted as MISTAKES)."""
        found = {mistake for mistake, _ in self.details(claim)}
        return sorted(found, key=list(MISTAKES).index)

    def details(self, claim) -> list:
        """(id, detail) of every reproducing candidate, e.g. "weights rounded to 3 decimals"."""
        out, seen = [], set()
        for candidate in self.candidates(claim):
            if candidate.mistake in seen:
                continue
            if self.reproduces(candidate, claim):
                out.append((candidate.mistake, candidate.detail))
                seen.add(candidate.mistake)
        return out

    def reproduces(self, candidate, claim) -> bool:
        """Whether the claim passes, by its own rule, against the candidate's stage."""
        if not self._passes(candidate, claim):
            return False
        return candidate.baseline is None or not self._passes(candidate.baseline, claim)

    @staticmethod
    def _passes(candidate, claim) -> bool:
        try:
            view = candidate.view()
            selection = view.select(claim.quantity, claim.row, claim.col)
            balls = view.balls(claim.quantity, selection.positions)
            return all_pass(selection.entries, claim.claimed, claim.rule, balls)
        except (SymbolicAttnError, ZeroDivisionError):
            return False  # a variant that cannot be computed reproduces nothing

    # -- the variants -------------------------------------------------------------------

    def candidates(self, claim):
        """All variants relevant to the claim's quantity, cheapest first."""
        stage = self._order(claim.quantity)
        if stage >= self._order("scaled"):
            yield from self._scale_variants()
        if stage >= self._order("weights"):
            yield from self._mask_variants()
            yield from self._cached("columns", lambda: [Candidate("softmax_columns", "softmax over columns",
                                                                  self._run(axis="queries"))])
            yield from self._cached("sum", self._sum_normalized)
            yield from self._rounding_variants(claim.quantity)
        if claim.quantity == "output" and self.spec.key is not None and self.spec.key.shape == self.spec.value.shape:
            yield from self._cached("kv", lambda: [Candidate("keys_as_values", "K used as V", self._run(value=self.spec.key))])
        yield from self._written_variants(claim)
        yield from self._follow_through(claim)

    def _order(self, path) -> int:
        return self.stages.index(path) if path in self.stages else len(self.stages)

    def _cached(self, name, build):
        if name not in self._cache:
            try:
                self._cache[name] = list(build())
            except SymbolicAttnError:
                self._cache[name] = []
        return self._cache[name]

    def _run(self, **changes):
        return self.exercise.compute(**changes)

    def _scale_variants(self):
        spec = self.spec
        if spec.query is None:
            return []
        d_k = spec.query.cols
        scale = self.result.scale
        textbook = 1 / sympy.sqrt(d_k)

        def build():
            out = []
            if scale != 1:
                out.append(Candidate("unscaled", "no scaling", self._run(scale="none")))
            if spec.scale == "default":
                out.append(Candidate("scaled_by_dk", "divided by d_k", self._run(scale=sympy.Rational(1, d_k))))
            if scale != 1:
                out.append(Candidate("scaled_twice", "scaled twice", self._run(scale=scale**2)))
            if scale != textbook:
                out.append(Candidate("wrong_scale", f"1/sqrt(d_k) = {sympy.sstr(textbook)} used instead of the given "
                                     f"{sympy.sstr(scale)}", self._run(scale=textbook)))
            elif d_k != 1:
                out.append(Candidate("wrong_scale", f"multiplied by sqrt(d_k) = {sympy.sstr(sympy.sqrt(d_k))} instead "
                                     "of dividing", self._run(scale=sympy.sqrt(d_k))))
            return out

        return self._cached("scale", build)

    def _mask_variants(self):
        spec, (n, m) = self.spec, self.result.scores.shape
        if spec.mask is None:
            return []

        def build():
            out = [
                Candidate("mask_ignored", "no mask", self._run(mask=None)),
                Candidate("zeroed_not_renormalized", "zeroed after softmax", self._run(masking="zero_after_softmax")),
                Candidate("mask_score_zero", "blocked scores set to 0", self._run(masking="zero_score")),
                Candidate("mask_inverted", "keep/block swapped", self._run(mask=spec.mask.inverted(), on_empty_row="zeros")),
            ]
            if spec.mask_kind == "causal":
                for shift in (1, -1):
                    offset = spec.mask_offset + shift
                    shifted = Mask.causal(n, m, offset=offset)
                    out.append(Candidate("mask_shifted", f"causal offset {offset:+d} instead of {spec.mask_offset:+d}",
                                         self._run(mask=shifted, on_empty_row="zeros")))
            return out

        return self._cached("mask", build)

    def _sum_normalized(self):
        """Each row's (scaled, allowed) scores divided by their sum instead of the softmax:
        S_ij / sum_j S_ij, blocked keys 0, continued to the output by the one product.  No
        candidate when a row's sum is 0 or cannot be told from 0 (no such weights exist)."""
        scaled, allowed = self.result.scaled, self.result.mask.allowed
        rows = []
        for i in range(scaled.rows):
            entries = [scaled[i, j] if allowed[i][j] else sympy.S.Zero for j in range(scaled.cols)]
            total = sympy.Add(*entries)
            if total.is_zero is not False:
                return []
            rows.append([entry / total for entry in entries])
        return [Candidate("sum_normalized", "scores divided by their row sum", self.result, self._continued(rows))]

    def _rounding_variants(self, quantity):
        """Rounded scaled scores continued through softmax; rounded weights continued to output."""

        def build():
            out = []
            for places in _ROUNDINGS:
                rounded = sympy.ImmutableMatrix(_rounded(self.result, "scaled", places))
                out.append(Candidate("rounded_intermediates", f"scaled scores rounded to {places} decimals",
                                     self._run(scores=rounded, scale="none")))
            for places in _ROUNDINGS:
                weights = _rounded(self.result, "weights", places)
                plain = Candidate("rounded_intermediates", f"weights rounded to {places} decimals",
                                  self.result, self._continued(weights))
                out.append(plain)
                for how, matrix in _forced_row_sum(weights, self.result.mask).items():
                    if matrix is not None:  # None: nothing was forced, so not this mistake
                        out.append(Candidate("forced_row_sum", f"weights rounded to {places} decimals, {how} adjusted",
                                             self.result, self._continued(matrix), baseline=plain))
            return out

        candidates = self._cached("rounding", build)
        if quantity == "weights":  # rounded weights at the claim's own precision are not a mistake
            return [c for c in candidates if not c.detail.startswith("weights rounded") or c.mistake == "forced_row_sum"]
        return candidates

    def _continued(self, weights) -> dict:
        """Stage overrides for given weights: the output is their product with V, when needed."""
        value = self.spec.value
        return {"weights": weights, "output": lambda: _product(weights, value)}

    def _written_variants(self, claim):
        """The right stage written down wrongly: transposed, or off by a power of ten."""
        rows, cols = self.exercise.quantity_shape(claim.quantity)

        def build():
            out = []
            if rows == cols and rows > 1:
                out.append(Candidate("transposed", "the right matrix, transposed", self.result, transform=(True, 1)))
            for power in _POWERS:
                out.append(Candidate("decimal_point", f"the right values times 10^{power}", self.result,
                                     transform=(False, sympy.Rational(10) ** power)))
            return out

        written = self._cached(f"written:{rows}x{cols}", build)
        if claim.row is not None and claim.col is not None:
            return [c for c in written if c.mistake != "transposed" or claim.row != claim.col]
        return written

    def _follow_through(self, claim):
        """Recompute the claim from the solution's own earlier claims (error carried forward):
        from them exactly as written, and within their rounding (:mod:`.follow_through`)."""
        earlier = [c for c in self.exercise.claims if c.index < claim.index]
        if not earlier or claim.quantity not in self.stages:
            return []
        stage = self._order(claim.quantity)
        trace = StageView(self.result)
        out = []
        for upstream in ("weights", "masked", "scaled", "scores"):
            if self._order(upstream) >= stage or not any(c.quantity == upstream for c in earlier):
                continue
            claimed = [c for c in earlier if c.quantity == upstream]
            overlay = _overlay(trace, upstream, claimed)
            if overlay is None:
                continue
            try:
                if upstream == "weights":
                    out.append(Candidate("follows_from_claimed", "from the claimed weights", self.result,
                                         self._continued(overlay)))
                    rounded = self._from_rounded_weights(trace, overlay, claimed, claim)
                else:
                    scale = self.result.scale if upstream == "scores" else 1
                    follow = self._run(scores=sympy.ImmutableMatrix(overlay), scale=scale)
                    out.append(Candidate("follows_from_claimed", f"from the claimed {upstream}", follow))
                    rounded = self._from_rounded_scores(trace, follow, upstream, overlay, claimed, claim)
                if rounded is not None:
                    out.append(rounded)
            except SymbolicAttnError:
                continue
        if claim.quantity in ("scores", "scaled", "weights", "output") and self.spec.query is not None:
            changed = {}
            for name in ("query", "key", "value"):
                mine = [c for c in earlier if c.quantity == name]
                if mine:  # an input no earlier claim wrote stays as given (None: unchanged)
                    overlay = _overlay(trace, name, mine)
                    changed[name] = None if overlay is None else sympy.ImmutableMatrix(overlay)
            if any(matrix is not None for matrix in changed.values()):
                try:
                    out.append(Candidate("follows_from_claimed", "from the claimed projections", self._run(**changed)))
                except SymbolicAttnError:
                    pass
        return out

    def _from_rounded_weights(self, view, overlay, weight_claims, claim):
        """The output within the rounding of the claimed weights
        (:func:`~symbolic_attn.grading.follow_through.output_within_rounding`): a student
        who kept more digits than they wrote is carried forward as one who continued from
        the rounded numbers.  None when nothing was rounded, or the claim is not of the output."""
        nearest = output_within_rounding(view, overlay, weight_claims, claim, self.spec.value)
        if nearest is None:
            return None
        return Candidate("follows_from_claimed", "from the claimed weights, as rounded", self.result,
                         {"weights": overlay, "output": nearest})

    def _from_rounded_scores(self, view, follow, path, overlay, score_claims, claim):
        """The weights within the rounding of the claimed scores of ``path`` (``scores``,
        ``scaled`` or ``masked``;
        :func:`~symbolic_attn.grading.follow_through.weights_within_rounding`): per entry,
        the exact range of the core's softmax over the box of values the written scores
        round from, with the exercise's mask and scale -- carried forward whether the
        weights were computed from the rounded scores or from digits not written.
        ``follow`` is the result from the scores as written.  None when nothing was
        rounded, the claim is not of the weights, or the range cannot be decided."""
        nearest = weights_within_rounding(view, follow, path, overlay, score_claims, claim)
        if nearest is None:
            return None
        return Candidate("follows_from_claimed", f"from the claimed {path}, as rounded", follow, {"weights": nearest})


def _rounded(result, stage: str, places: int) -> list:
    """A stage rounded to ``places`` decimals (certified, half away from zero), exactly,
    as rows of rationals (a SymPy matrix of 4096 entries takes long to build)."""
    return [[_decimal(text) for text in row] for row in result.trace.decimals(stage, places)]


def _decimal(text: str) -> sympy.Rational:
    if text is None:
        raise SymbolicAttnError("a symbolic entry cannot be rounded")
    whole, dot, fraction = text.partition(".")
    if dot and "e" not in fraction and "E" not in fraction:  # "-0.125": digits over a power of ten, directly
        return sympy.Rational(int(whole + fraction), 10 ** len(fraction))
    return -decimal_value(text[1:]) if text.startswith("-") else decimal_value(text)


def _product(A, B) -> list:
    """Rows of the exact product (rounded or claimed weights times V), by the model's one product."""
    return product(sympy.ImmutableMatrix(A), sympy.ImmutableMatrix(B)).tolist()


def _forced_row_sum(weights, mask) -> dict:
    """Rounded weights with each row's shortfall from 1 put on its largest or last allowed
    entry; None where no row fell short (nothing was forced)."""
    grid = weights.tolist() if isinstance(weights, sympy.MatrixBase) else weights
    if all(sum(row) == 1 for row in grid):
        return {"largest weight": None, "last weight": None}
    largest, last = [], []
    for i, row in enumerate(grid):
        allowed = [j for j in range(len(row)) if mask.allowed[i][j]] or list(range(len(row)))
        shortfall = 1 - sum(row)
        big = max(allowed, key=lambda j: row[j])
        largest.append([w + shortfall if j == big else w for j, w in enumerate(row)])
        last.append([w + shortfall if j == allowed[-1] else w for j, w in enumerate(row)])
    return {"largest weight": largest, "last weight": last}


#: Entries x softmax terms of a stage whose closed form an overlay may build (a 16x16 stage).
_OVERLAY_SIZE = 4_096


def _overlay(view, path, claims):
    """The exact stage (rows) with every entry an earlier claim wrote replaced by its claimed value.

    The entries no claim wrote keep their exact values -- built only when the stage is
    small; for a large stage with unwritten entries there is no overlay (None).
    """
    rows, cols = view[path].shape
    written = {}
    for claim in claims:
        selection = view.select(path, claim.row, claim.col)
        if len(selection.positions) == len(claim.claimed.elements):
            written.update(zip(selection.positions, (element.value for element in claim.claimed.elements)))
    if not written:
        return None
    exact = None
    if len(written) < rows * cols:
        terms = view["scores"].shape[1] if path in ("weights", "output") else 1
        if rows * cols * terms > _OVERLAY_SIZE:
            return None
        exact = view.exact(path)
    return [[written[(i, j)] if (i, j) in written else exact[i - 1, j - 1] for j in range(1, cols + 1)]
            for i in range(1, rows + 1)]
