r"""Diagnosis: which known mistake reproduces a wrong claimed number.

Exact arithmetic makes a diagnosis unambiguous: recompute the exercise under a mistake and
judge the claim again, by the same rule.  Every mistake is a **variant of the one
attention core** (:func:`symbolic_attn.model.attention.attention`): a different ``scale``,
``masking``, ``axis``, mask or value matrix -- never a second implementation.  The rounding
mistakes continue the core's own intermediate results after rounding them.

Ids (as in the grading rubric):

================================  ===================================================
``unscaled``                      1/sqrt(d_k) forgotten (``scale="none"``)
``scaled_by_dk``                  divided by d_k instead of sqrt(d_k)
``scaled_twice``                  the scale applied twice (``scale = s**2``)
``zeroed_not_renormalized``       softmax over all keys, blocked weights then zeroed
``mask_score_zero``               blocked *scores* set to 0 (exp(0) = 1 stays)
``mask_inverted``                 keep/block polarity swapped (``mask.inverted()``)
``mask_shifted``                  causal mask off by one, either way (offset +-1)
``softmax_columns``               normalized over queries (``axis="queries"``)
``keys_as_values``                K used where V belongs
``rounded_intermediates``         scaled scores or weights rounded to 1-4 decimals, then continued
``forced_row_sum``                rounded weights adjusted so that each row sums to 1
``follows_from_claimed``          follows exactly from the solution's own earlier claims
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
from functools import cached_property

import sympy

from symbolic_attn.model.attention import attention, attention_from_scores
from symbolic_attn.grading.claims import judge_values, select
from symbolic_attn.errors import SymbolicAttnError
from symbolic_attn.model.masks import Mask
from symbolic_attn.exact.parse import exact_decimal

__all__ = ["MISTAKES", "Diagnoser", "compute"]

MISTAKES = {
    "unscaled": "1/sqrt(d_k) forgotten",
    "scaled_by_dk": "divided by d_k instead of sqrt(d_k)",
    "scaled_twice": "scaled twice",
    "zeroed_not_renormalized": "blocked weights zeroed after softmax, not renormalized",
    "mask_score_zero": "blocked scores set to 0 instead of removed",
    "mask_inverted": "mask polarity swapped (keep/block)",
    "mask_shifted": "causal mask off by one",
    "softmax_columns": "softmax over the wrong axis (columns)",
    "keys_as_values": "keys used as values",
    "rounded_intermediates": "computed from rounded intermediates",
    "forced_row_sum": "rounded weights forced to sum to 1",
    "follows_from_claimed": "follows from the solution's own earlier claim",
}
_ROUNDINGS = (1, 2, 3, 4)
_PIPELINE = ("query", "key", "value", "scores", "scaled", "weights", "output")
_KEEP = object()


def compute(spec, *, mask=_KEEP, scale=_KEEP, value=None, scores=None, **options):
    """Run the one core on an exercise's ``[attention]``, with some settings changed."""
    mask = spec.mask if mask is _KEEP else mask
    value = spec.value if value is None else value
    if scores is not None or spec.scores is not None:
        use = spec.scores if scores is None else scores
        return attention_from_scores(use, value, mask, scale="none" if scale is _KEEP else scale, **options)
    return attention(spec.query, spec.key, value, mask, spec.scale if scale is _KEEP else scale, **options)


@dataclass
class Candidate:
    """One recomputation under a mistake; ``overrides`` replace stages of ``result``."""

    mistake: str
    detail: str
    result: object = None
    overrides: dict = field(default_factory=dict)

    def matrix(self, quantity: str):
        if quantity in self.overrides:
            return self.overrides[quantity]
        return getattr(self.result, quantity)


class Diagnoser:
    """Builds the mistaken variants of one exercise lazily, and judges claims against them."""

    def __init__(self, exercise, result=None):
        self.exercise = exercise
        self.spec = exercise.attention
        self.result = result if result is not None else compute(self.spec)

    def diagnose(self, claim) -> list:
        """Every mistake id under which the claim passes by its own rule (sorted as MISTAKES)."""
        found = []
        for candidate in self.candidates(claim):
            if candidate.mistake in found:
                continue
            if self._reproduces(candidate, claim):
                found.append(candidate.mistake)
        return sorted(found, key=list(MISTAKES).index)

    def details(self, claim) -> list:
        """(id, detail) of every reproducing candidate, e.g. "weights rounded to 3 decimals"."""
        return [(c.mistake, c.detail) for c in self.candidates(claim) if self._reproduces(c, claim)]

    def _reproduces(self, candidate, claim) -> bool:
        try:
            matrix = candidate.matrix(claim.quantity)
            if matrix is None:
                return False
            values, _ = select(matrix, claim.row, claim.col)
            verdicts = judge_values(values, claim.claimed, claim.rule)
        except (SymbolicAttnError, IndexError, ValueError):
            return False  # a variant that cannot be computed reproduces nothing
        return all(verdict.ok for verdict in verdicts)

    # -- the variants -------------------------------------------------------------------

    def candidates(self, claim):
        """All variants relevant to the claim's quantity, cheapest first."""
        stage = _PIPELINE.index(claim.quantity)
        if stage >= _PIPELINE.index("scaled"):
            yield from self._scale_variants()
        if stage >= _PIPELINE.index("weights"):
            yield from self._mask_variants()
            yield from self._cached("columns", lambda: [Candidate("softmax_columns", "softmax over columns",
                                                                  self._run(axis="queries"))])
            yield from self._rounding_variants(claim.quantity)
        if claim.quantity == "output" and self.spec.key is not None and self.spec.key.shape == self.spec.value.shape:
            yield from self._cached("kv", lambda: [Candidate("keys_as_values", "K used as V", self._run(value=self.spec.key))])
        yield from self._follow_through(claim)

    def _cached(self, name, build):
        cache = self.__dict__.setdefault("_cache", {})
        if name not in cache:
            try:
                cache[name] = list(build())
            except SymbolicAttnError:
                cache[name] = []
        return cache[name]

    def _run(self, **changes):
        return compute(self.spec, **changes)

    def _scale_variants(self):
        spec = self.spec
        if spec.query is None:
            return []
        d_k = spec.query.cols
        scale = self.result.scale

        def build():
            out = []
            if scale != 1:
                out.append(Candidate("unscaled", "no scaling", self._run(scale="none")))
            if spec.scale == "default":
                out.append(Candidate("scaled_by_dk", "divided by d_k", self._run(scale=sympy.Rational(1, d_k))))
            if scale != 1:
                out.append(Candidate("scaled_twice", "scaled twice", self._run(scale=scale**2)))
            return out

        return self._cached("scale", build)

    def _mask_variants(self):
        spec, n_m = self.spec, self.result.scores.shape
        if spec.mask is None:
            return []

        def build():
            out = [
                Candidate("zeroed_not_renormalized", "zeroed after softmax", self._run(masking="zero_after_softmax")),
                Candidate("mask_score_zero", "blocked scores set to 0", self._run(masking="zero_score")),
                Candidate("mask_inverted", "keep/block swapped", self._run(mask=spec.mask.inverted(), on_empty_row="zeros")),
            ]
            if spec.mask_kind == "causal":
                for offset in (1, -1):
                    shifted = Mask.causal(*n_m, offset=offset)
                    out.append(Candidate("mask_shifted", f"causal offset {offset:+d}", self._run(mask=shifted, on_empty_row="zeros")))
            return out

        return self._cached("mask", build)

    def _rounding_variants(self, quantity):
        """Rounded scaled scores continued through softmax; rounded weights continued to output."""

        def build():
            out = []
            for places in _ROUNDINGS:
                rounded = _rounded(self.result, "scaled", places)
                out.append(Candidate("rounded_intermediates", f"scaled scores rounded to {places} decimals",
                                     self._run(scores=rounded, scale="none")))
            for places in _ROUNDINGS:
                weights = _rounded(self.result, "weights", places)
                out.append(Candidate("rounded_intermediates", f"weights rounded to {places} decimals",
                                     self.result, {"weights": weights, "output": weights * self.spec.value}))
                forced = _forced_row_sum(weights, self.result.mask)
                for how, matrix in forced.items():
                    out.append(Candidate("forced_row_sum", f"weights rounded to {places} decimals, {how} adjusted",
                                         self.result, {"weights": matrix, "output": matrix * self.spec.value}))
            return out

        candidates = self._cached("rounding", build)
        if quantity == "weights":  # rounded weights at the claim's own precision are not a mistake
            return [c for c in candidates if not c.detail.startswith("weights rounded") or c.mistake == "forced_row_sum"]
        return candidates

    def _follow_through(self, claim):
        """Recompute the claim from the solution's own earlier claims (error carried forward)."""
        earlier = [c for c in self.exercise.claims if c.index < claim.index]
        if not earlier:
            return []
        stage = _PIPELINE.index(claim.quantity)
        out = []
        for upstream in ("weights", "scaled", "scores"):
            if _PIPELINE.index(upstream) >= stage or not any(c.quantity == upstream for c in earlier):
                continue
            overlay = _overlay(getattr(self.result, upstream), [c for c in earlier if c.quantity == upstream])
            try:
                if upstream == "weights":
                    out.append(Candidate("follows_from_claimed", "from the claimed weights", self.result,
                                         {"weights": overlay, "output": overlay * self.spec.value}))
                else:
                    scale = self.result.scale if upstream == "scores" else 1
                    follow = self._run(scores=overlay, scale=scale)
                    out.append(Candidate("follows_from_claimed", f"from the claimed {upstream}", follow))
            except SymbolicAttnError:
                continue
        if claim.quantity in ("scores", "scaled", "weights", "output") and self.spec.query is not None:
            q = _overlay(self.spec.query, [c for c in earlier if c.quantity == "query"])
            k = _overlay(self.spec.key, [c for c in earlier if c.quantity == "key"])
            v = _overlay(self.spec.value, [c for c in earlier if c.quantity == "value"])
            if any(c.quantity in ("query", "key", "value") for c in earlier):
                try:
                    follow = attention(q, k, v, self.spec.mask, self.spec.scale)
                    out.append(Candidate("follows_from_claimed", "from the claimed projections", follow))
                except SymbolicAttnError:
                    pass
        return out


def _rounded(result, stage: str, places: int) -> sympy.ImmutableMatrix:
    """A stage rounded to ``places`` decimals (certified, half away from zero), exactly."""
    rows = result.decimals(stage, places)
    return sympy.ImmutableMatrix([[_decimal(text) for text in row] for row in rows])


def _decimal(text: str) -> sympy.Rational:
    if text is None:
        raise SymbolicAttnError("a symbolic entry cannot be rounded")
    return -exact_decimal(text[1:]) if text.startswith("-") else exact_decimal(text)


def _forced_row_sum(weights, mask) -> dict:
    """Rounded weights with each row's shortfall from 1 put on its largest or last allowed entry."""
    largest, last = [], []
    for i in range(weights.rows):
        row = list(weights.row(i))
        allowed = [j for j in range(len(row)) if mask.allowed[i][j]] or list(range(len(row)))
        shortfall = 1 - sum(row)
        big = max(allowed, key=lambda j: row[j])
        largest.append([w + shortfall if j == big else w for j, w in enumerate(row)])
        last.append([w + shortfall if j == allowed[-1] else w for j, w in enumerate(row)])
    return {"largest weight": sympy.ImmutableMatrix(largest), "last weight": sympy.ImmutableMatrix(last)}


def _overlay(matrix, claims) -> sympy.ImmutableMatrix:
    """The exact matrix with every entry an earlier claim wrote replaced by its claimed value."""
    entries = sympy.Matrix(matrix)
    for claim in claims:
        positions = _positions(matrix.shape, claim.row, claim.col)
        if len(positions) != len(claim.claimed.elements):
            continue
        for (i, j), element in zip(positions, claim.claimed.elements):
            entries[i, j] = element.value
    return sympy.ImmutableMatrix(entries)


def _positions(shape, row, col):
    rows = range(shape[0]) if row is None else [row - 1]
    cols = range(shape[1]) if col is None else [col - 1]
    return [(i, j) for i in rows for j in cols]
