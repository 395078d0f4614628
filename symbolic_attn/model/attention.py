r"""Scaled dot-product attention, exactly: softmax(Q K^T * scale) V with structural masks.

This is the one attention core of the project.  Derivations, claim checking and the
diagnosis of common mistakes all call it; a "mistake" is a setting of its options
(``scale``, ``masking``, ``axis``, a different mask), never a second implementation.

Every stage is kept exactly: raw scores ``Q K^T``, scaled scores, the masked scores (the
scaled scores with -oo at every blocked position, S' + M), weights and output.

A given score matrix may hold -oo entries (written ``-inf``): they are the keep-mask they
denote (PyTorch's ``masked_fill(..., -inf)``), intersected with any explicit mask:

>>> from sympy import oo
>>> r = attention_from_scores([[0, -oo], [0, 0]], [[1], [3]])
>>> r.weights
Matrix([
[  1,   0],
[1/2, 1/2]])
>>> r.stage("masked"), r.decimals("masked", 1)
(Matrix([
[0, -oo],
[0,   0]]), [['0.0', '-inf'], ['0.0', '0.0']])

>>> result = attention([[1, 0], [0, 1], [1, 1]], [[1, 0], [0, 1], [1, 1]],
...                    [[2, 0], [0, 2], [2, 2]], mask="causal")
>>> result.scores
Matrix([
[1, 0, 1],
[0, 1, 1],
[1, 1, 2]])
>>> result.weights[0, :]
Matrix([[1, 0, 0]])
>>> result.decimals("weights", 3)[1]
['0.330', '0.670', '0.000']

Weights from given scores (the row 0, ln 2, ln 3 of the second reference document):

>>> from sympy import log
>>> attention_from_scores([[0, log(2), log(3)]], [[1, 0], [0, 2], [3, 1]]).output
Matrix([[5/3, 7/6]])
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass, field
from functools import cached_property

import flint
import sympy
from sympy.core.add import _addsort

from symbolic_attn.errors import EmptyRowError, MaskError, ShapeError, StageError, shown
from symbolic_attn.exact.certified import check_digits, check_precision, decimal_string
from symbolic_attn.exact.convert import to_exact, to_matrix
from symbolic_attn.model.decimals import StageNumbers, rational_matrix, sympy_matrix
from symbolic_attn.model.masks import EMPTY_ROW_POLICIES, Mask, as_mask
from symbolic_attn.model.compose import decided_scalar, product as _product  # the model's one exact product
from symbolic_attn.model.trace import Trace

__all__ = ["Options", "Shape", "STAGES", "softmax", "attention", "attention_from_scores", "AttentionResult", "as_mask"]

STAGES = ("scores", "scaled", "masked", "weights", "output")
_MINUS_INFINITY = sympy.S.NegativeInfinity
Shape = namedtuple("Shape", "n m d_k d_v")

#: How blocked positions are treated.  Only ``"renormalize"`` is attention; the others
#: are the two classic mistakes, kept as settings so that diagnosis reuses this core.
MASKINGS = {
    "renormalize": "blocked keys get weight 0 and leave the denominator (correct)",
    "zero_after_softmax": "softmax over all keys, then blocked weights set to 0 (rows no longer sum to 1)",
    "zero_score": "blocked scores set to 0, so exp(0) = 1 stays in the denominator",
}
#: Which axis softmax normalizes: over the keys of each query (correct) or the transpose.
AXES = {"keys": "each row (query) sums to 1 (correct)", "queries": "each column sums to 1"}


@dataclass(frozen=True)
class Options:
    """Settings of the core besides Q, K, V, mask and scale (all have correct defaults)."""

    masking: str = "renormalize"
    axis: str = "keys"
    on_empty_row: str = "error"
    stable: bool = False

    def __post_init__(self):
        for name, allowed in (("masking", MASKINGS), ("axis", AXES), ("on_empty_row", EMPTY_ROW_POLICIES)):
            value = getattr(self, name)
            if not isinstance(value, str) or value not in allowed:
                raise MaskError(f"unknown {name} {shown(value)!r}: expected one of {', '.join(allowed)}")
        if not isinstance(self.stable, bool):
            raise MaskError(f"stable must be True or False, got {shown(self.stable)!r}")

    @classmethod
    def from_keywords(cls, options: dict) -> Options:
        """Options from keyword arguments; an unknown keyword is a typed error naming it.

        >>> Options.from_keywords({"masking": "renormalize"}).masking
        'renormalize'
        >>> Options.from_keywords({"bogus": 1})
        Traceback (most recent call last):
        ...
        symbolic_attn.errors.MaskError: unknown option 'bogus': expected masking, axis, on_empty_row or stable
        """
        unknown = [name for name in options if name not in cls.__dataclass_fields__]
        if unknown:
            raise MaskError(f"unknown option {shown(unknown[0])!r}: expected masking, axis, on_empty_row or stable")
        return cls(**options)


def _row_parts(scores, allowed, row_number, options, exp, add, zero, one, nan):
    """Numerators and the shared denominator of one softmax row.

    Written once for any number type: exact SymPy (``exp=sympy.exp``), certified
    intervals (``exp=arb.exp``), or the formal sums of exponentials with which
    :mod:`symbolic_attn.model.decimals` finds the entries that are exactly rational, so
    the decimals come from the very same rules.
    """
    m = len(scores)
    if options.masking == "zero_score":
        exps = [exp(s) if ok else one for s, ok in zip(scores, allowed)]
        return exps, add(exps)
    if options.masking == "zero_after_softmax":
        exps = [exp(s) for s in scores]
        return [e if ok else zero for e, ok in zip(exps, allowed)], add(exps)
    if not any(allowed):
        if options.on_empty_row == "error":
            raise EmptyRowError(
                f"row {row_number + 1} allows no key: there is no distribution to normalize "
                "(the empty-row policies zeros, uniform and nan copy real libraries' behaviour: "
                "on_empty_row=..., or --empty-row on the command line)"
            )
        if options.on_empty_row == "zeros":
            return [zero] * m, one
        if options.on_empty_row == "uniform":
            return [one] * m, add([one] * m)
        return [nan] * m, one
    exps = [exp(s) if ok else zero for s, ok in zip(scores, allowed)]
    return exps, add([e for e, ok in zip(exps, allowed) if ok])


def _exact_rows(scaled: sympy.MatrixBase, mask: Mask, options: Options):
    """Per row: exact (numerators, denominator); for axis='queries' on the transpose."""
    if options.axis == "queries":
        scaled, mask = scaled.T, mask.transposed()
    parts = []
    for i in range(scaled.rows):
        row = list(scaled.row(i))
        if options.stable:
            # Subtracting any constant leaves softmax unchanged (shift invariance);
            # subtracting the largest allowed score keeps every exponent <= 0.
            allowed = [s for s, ok in zip(row, mask.allowed[i]) if ok] or row
            shift = sympy.Max(*allowed)
            row = [s - shift for s in row]
        parts.append(_row_parts(row, mask.allowed[i], i, options, sympy.exp, _sympy_sum, sympy.S.Zero, sympy.S.One, sympy.nan))
    return parts


def _sympy_sum(terms):
    return sympy.Add(*terms)


def _divide(numerator, denominator):
    return numerator if denominator == 1 else numerator / denominator


def _combination(coefficients, exponentials):
    """The sum of coefficient * exponential, in SymPy's canonical form, built fast.

    Every output entry is such a sum (values times exp(score)).  Letting SymPy multiply and
    add term by term re-simplifies each product twice, which dominates the cost of the
    closed forms; here equal exponentials are collected first and the canonical ``Add`` is
    assembled directly (a test checks it is identical to ``Add(*[c * e])``).
    """
    number = sympy.S.Zero
    collected: dict = {}
    for c, e in zip(coefficients, exponentials):
        if e == 0 or (c == 0 and e is not sympy.nan):  # NaN * 0 stays NaN, as in IEEE
            continue
        if e.is_Rational:
            number += c * e
        elif c.is_Rational and isinstance(e, sympy.exp):
            collected[e] = collected.get(e, sympy.S.Zero) + c
        else:  # anything unusual: let SymPy do it the ordinary way
            return sympy.Add(*[c * e for c, e in zip(coefficients, exponentials)])
    terms = [e if c == 1 else sympy.Mul(c, e, evaluate=False) for e, c in collected.items() if c != 0]
    if not terms:
        return number
    if len(terms) == 1 and number == 0:
        return terms[0]
    _addsort(terms)
    return sympy.Add._from_args(([number] if number != 0 else []) + terms)


def softmax(scores, mask=None, *, stable=False, masking="renormalize", axis="keys", on_empty_row="error"):
    """Exact row-wise softmax of a score matrix, with blocked positions exactly 0.

    >>> from sympy import log
    >>> softmax([[0, log(2), log(3)]])
    Matrix([[1/6, 1/3, 1/2]])
    >>> softmax([[0, log(2), log(3)]], Mask.keep([[1, 1, 0]]))
    Matrix([[1/3, 2/3, 0]])
    >>> softmax([[0, log(2), log(3)]], Mask.keep([[1, 1, 0]]), masking="zero_after_softmax")
    Matrix([[1/6, 1/3, 0]])
    """
    scores = to_matrix(scores, name="scores")
    options = Options(masking=masking, axis=axis, on_empty_row=on_empty_row, stable=stable)
    return _weights_from_parts(_exact_rows(scores, as_mask(mask, *scores.shape), options), options)


def _weights_from_parts(parts, options):
    weights = sympy.ImmutableMatrix([[_divide(num, den) for num in nums] for nums, den in parts])
    return weights.T if options.axis == "queries" else weights


def attention(query, key, value, mask=None, scale="default", **options) -> AttentionResult:
    """Exact attention softmax(Q K^T * scale) V, keeping every stage.

    Args:
        query: Q, n x d_k.  key: K, m x d_k.  value: V, m x d_v (exact values or text).
        mask: ``None``/"none", "causal", or a :class:`~symbolic_attn.model.masks.Mask` (n x m).
        scale: "default" (1/sqrt(d_k)), "none" (1, unscaled), or any exact expression.
        **options: ``masking``, ``axis``, ``on_empty_row``, ``stable`` (see :class:`Options`).
    """
    Q, K, V = to_matrix(query, name="Q"), to_matrix(key, name="K"), to_matrix(value, name="V")
    for name, matrix in (("Q", Q), ("K", K), ("V", V)):
        _finite(matrix, name)
    if Q.cols != K.cols:
        raise ShapeError(
            f"Q is {Q.rows}x{Q.cols} and K is {K.rows}x{K.cols}: queries and keys must have the same width d_k"
        )
    if K.rows != V.rows:
        raise ShapeError(
            f"K is {K.rows}x{K.cols} and V is {V.rows}x{V.cols}: keys and values must have the same number of rows m"
        )
    d_k = Q.cols
    scale_value = _scale(scale, d_k)
    return AttentionResult(
        value=V,
        scale=scale_value,
        mask=as_mask(mask, Q.rows, K.rows),
        options=Options.from_keywords(options),
        query=Q,
        key=K,
        d_k=d_k,
    )


def attention_from_scores(scores, value, mask=None, scale="none", **options) -> AttentionResult:
    """Attention from a given (already scaled) score matrix: softmax(scores * scale) V.

    ``scale`` defaults to "none" here, because given scores are usually scaled already.
    Entries -oo of ``scores`` (``-inf`` in text, ``float('-inf')``) block their positions:
    they are a keep-mask, intersected with ``mask`` (a position is allowed only if both
    allow it); the finite entries are the scores.  A row of only -oo allows no key and
    follows ``on_empty_row``.  The settings that model mistakes (``masking=...``) treat
    those positions as they treat any blocked position.

    >>> attention_from_scores("[[0, -inf, 0]]", [[1], [5], [3]], mask=Mask.keep([[0, 1, 1]])).output
    Matrix([[3]])
    """
    S, V = _scores_matrix(scores), to_matrix(value, name="V")
    _finite(V, "V")
    if S.cols != V.rows:
        raise ShapeError(
            f"scores are {S.rows}x{S.cols} and V is {V.rows}x{V.cols}: there must be one value row per key (column)"
        )
    if isinstance(scale, str) and scale == "default":
        raise ShapeError("scale 'default' needs d_k, which given scores do not have: pass an exact scale or 'none'")
    return AttentionResult(
        S, value=V, scale=_scale(scale, None), mask=as_mask(mask, *S.shape), options=Options.from_keywords(options)
    )


def _finite(matrix, name):
    """Refuse -oo in Q, K or V: minus infinity is a blocked score, nothing else."""
    if any(entry is _MINUS_INFINITY for entry in matrix):
        raise ShapeError(f"{name} holds -inf: minus infinity is read only as an entry of given scores (a mask)")


def _scores_matrix(scores):
    """Given scores as an exact matrix, their -oo entries kept (a float -inf becomes -oo)."""
    if isinstance(scores, str):
        return to_matrix(scores, name="scores")
    if hasattr(scores, "tolist") and not isinstance(scores, sympy.MatrixBase):
        scores = scores.tolist()
    if isinstance(scores, sympy.MatrixBase):
        rows = scores.tolist()
    elif isinstance(scores, (list, tuple)) and scores and not isinstance(scores[0], (list, tuple)):
        rows = [list(scores)]
    elif isinstance(scores, (list, tuple)):
        rows = [list(row) if isinstance(row, (list, tuple)) else row for row in scores]
    else:
        return to_matrix(scores, name="scores")

    def blocked(entry):
        return entry is _MINUS_INFINITY or (isinstance(entry, float) and entry == float("-inf"))

    if not any(isinstance(row, list) and any(blocked(e) for e in row) for row in rows):
        return to_matrix(scores, name="scores")
    finite = to_matrix([[0 if blocked(e) else e for e in row] if isinstance(row, list) else row for row in rows],
                       name="scores")
    return sympy.ImmutableMatrix(finite.rows, finite.cols,
                                 [_MINUS_INFINITY if blocked(rows[i][j]) else finite[i, j]
                                  for i in range(finite.rows) for j in range(finite.cols)])


def _split_minus_infinity(scores, mask):
    """(finite scores, mask, written -oo positions): each -oo entry becomes 0, blocked."""
    written = frozenset((i, j) for i in range(scores.rows) for j in range(scores.cols)
                        if scores[i, j] is _MINUS_INFINITY)
    if not written:
        return scores, mask, written
    finite = scores.applyfunc(lambda x: sympy.S.Zero if x is _MINUS_INFINITY else x)
    keep = _keep_except(scores.shape, written)
    return sympy.ImmutableMatrix(finite), keep if mask is None else mask & keep, written


def _keep_except(shape, blocked) -> Mask:
    n, m = shape
    return Mask(tuple(tuple((i, j) not in blocked for j in range(m)) for i in range(n)))


def _scale(scale, d_k):
    if isinstance(scale, str) and scale == "default" and d_k is not None:
        return 1 / sympy.sqrt(d_k)
    if scale is None or (isinstance(scale, str) and scale == "none"):
        return sympy.S.One
    if isinstance(scale, str) and scale == "default":
        raise ShapeError("scale 'default' needs d_k, which given scores do not have: pass an exact scale or 'none'")
    # Every score is multiplied by the scale: its sign is decided exactly here (a proved 0
    # gives uniform weights), and a division by a disguised 0, 1/(log(8) - 3 log(2)), is
    # refused naming the scale instead of being printed inside the weights.
    return decided_scalar(to_exact(scale), "scale")


def _overlay(matrix, positions, entry=_MINUS_INFINITY):
    """``matrix`` (a SymPy matrix or nested lists) with ``entry`` at ``positions``."""
    if not positions:
        return matrix
    if isinstance(matrix, sympy.MatrixBase):
        return sympy.ImmutableMatrix(matrix.rows, matrix.cols, lambda i, j: entry if (i, j) in positions else matrix[i, j])
    return [[entry if (i, j) in positions else x for j, x in enumerate(row)] for i, row in enumerate(matrix)]


@dataclass(frozen=True, init=False)
class AttentionResult:
    """Every stage of one attention computation, exact, computed when first asked for.

    ``scores`` is Q K^T (or the given scores); ``scaled`` is ``scale * scores``;
    ``masked`` is ``scaled`` with -oo at every blocked position (S' + M); ``weights`` the
    masked softmax of ``scaled``; ``output`` is ``weights @ value``.  Given scores with -oo
    entries are kept as the finite scores (0 there) and the mask blocking those positions
    (``written_blocked``); the stages ``scores`` and ``scaled`` -- by :meth:`stage`,
    :meth:`decimals`, the trace -- show -oo there again, as written.
    Built from Q and K, even the scores wait until they are read: rational Q K^T is one
    python-flint product, and the decimals never need the SymPy matrices.
    """

    value: sympy.ImmutableMatrix
    scale: sympy.Expr
    mask: Mask
    options: Options = field(default_factory=Options)
    query: sympy.ImmutableMatrix | None = None
    key: sympy.ImmutableMatrix | None = None
    d_k: int | None = None
    given_scores: sympy.ImmutableMatrix | None = field(default=None, repr=False)
    written_blocked: frozenset = field(default=frozenset(), repr=False)

    def __init__(self, scores=None, value=None, scale=sympy.S.One, mask=None, options=None,
                 query=None, key=None, d_k=None, given_scores=None, written_blocked=frozenset()):
        """``scores`` (given), or ``query`` and ``key`` from which they are computed lazily.
        (``given_scores`` is the field's name, so that ``dataclasses.replace`` works.)"""
        scores = given_scores if scores is None else scores
        if scores is None and (query is None or key is None):
            raise ShapeError("an attention result needs the scores, or the queries and keys")
        if value is None:
            raise ShapeError("an attention result needs the values")
        given = None if scores is None else sympy.ImmutableMatrix(scores)
        if given is not None:
            given, mask, written = _split_minus_infinity(given, mask)
            written_blocked = frozenset(written_blocked) | written
            if written_blocked and not written:  # dataclasses.replace with another mask: still blocked
                keep = _keep_except(given.shape, written_blocked)
                mask = keep if mask is None else mask & keep
        n, m = given.shape if given is not None else (query.rows, key.rows)
        for name, item in (("value", value), ("scale", scale), ("mask", Mask.full(n, m) if mask is None else mask),
                           ("options", Options() if options is None else options), ("query", query), ("key", key),
                           ("d_k", d_k), ("given_scores", given), ("written_blocked", frozenset(written_blocked))):
            object.__setattr__(self, name, item)

    @cached_property
    def scores(self) -> sympy.ImmutableMatrix:
        if self.given_scores is not None:
            return self.given_scores
        if self._scores_q is not None:
            return sympy_matrix(self._scores_q)
        return _product(self.query, self.key.T)

    @cached_property
    def _scores_q(self) -> flint.fmpq_mat | None:
        """The scores as an exact ``fmpq_mat`` when they are rational (else None)."""
        if self.given_scores is not None:
            return rational_matrix(self.given_scores)
        Q, K = rational_matrix(self.query), rational_matrix(self.key)
        if Q is None or K is None:
            return None
        return Q * K.transpose()

    @property
    def shape(self) -> Shape:
        n, m = self.mask.shape
        return Shape(n, m, self.d_k, self.value.cols)

    @cached_property
    def scaled(self) -> sympy.ImmutableMatrix:
        if self.scale == 1:
            return self.scores
        return self.scores.applyfunc(lambda s: self.scale * s)

    @cached_property
    def masked(self) -> sympy.ImmutableMatrix:
        """The scaled scores with -oo at every blocked position: S' + M, M the additive mask."""
        return _overlay(self.scaled, self._blocked)

    @cached_property
    def _blocked(self) -> frozenset:
        return frozenset((i, j) for i, row in enumerate(self.mask.allowed) for j, ok in enumerate(row) if not ok)

    @cached_property
    def _parts(self):
        return _exact_rows(self.scaled, self.mask, self.options)

    @cached_property
    def weights(self) -> sympy.ImmutableMatrix:
        return _weights_from_parts(self._parts, self.options)

    @cached_property
    def output(self) -> sympy.ImmutableMatrix:
        if self.options.axis == "queries":
            return _product(self.weights, self.value)
        # Each output entry as one fraction over the row's shared denominator, which is
        # both the readable closed form and cheaper than summing separate fractions.
        V = self.value
        return sympy.ImmutableMatrix(
            [[_divide(_combination(V.col(c), nums), den) for c in range(V.cols)] for nums, den in self._parts]
        )

    # -- display: terminals, notebooks, sympy.latex ------------------------------------

    def __repr__(self) -> str:
        n, m, d_k, d_v = self.shape
        return f"<AttentionResult n={n} m={m} d_k={d_k} d_v={d_v} scale={sympy.sstr(self.scale)}>"

    def __str__(self) -> str:
        from symbolic_attn.render.display import text_report

        return text_report(self)

    def _latex(self, printer=None) -> str:
        from symbolic_attn.render.display import latex_report

        return latex_report(self)

    def _repr_latex_(self) -> str:
        # A notebook renders $$ blocks everywhere; bare align* environments only in some front ends.
        from symbolic_attn.render.notebook import display_math

        return display_math(self._latex())

    def stage(self, name: str) -> sympy.ImmutableMatrix:
        """One stage by name: "scores", "scaled", "masked", "weights" or "output" (given
        -oo scores shown as written)."""
        self._check_stage(name)
        if name in ("scores", "scaled"):
            return _overlay(getattr(self, name), self.written_blocked)
        return getattr(self, name)

    @cached_property
    def trace(self) -> Trace:
        """The stages as a :class:`~symbolic_attn.model.trace.Trace`: the inputs given
        (``query``, ``key``, ``value``), then ``scores``, ``scaled``, ``masked``, ``weights``,
        ``output``.

        >>> r = attention([[1, 0]], [[1, 0], [0, 1]], [[1], [0]], scale=1)
        >>> list(r.trace)
        ['query', 'key', 'value', 'scores', 'scaled', 'masked', 'weights', 'output']
        """
        inputs = {"query": self.query, "key": self.key} if self.query is not None else {}
        stages = {**inputs, "value": self.value, **{name: (lambda n=name: self.stage(n)) for name in STAGES}}

        def decimals(path, digits, significant):
            if path in STAGES:
                return self.decimals(path, digits, significant)
            value = stages[path]
            digits = check_digits(digits, significant)
            return [[None if e.free_symbols else decimal_string(e, digits, significant) for e in value.row(i)]
                    for i in range(value.rows)]

        return Trace(stages, decimals=decimals,
                     settings={"scale": self.scale, "mask": self.mask, "options": self.options, "d_k": self.d_k})

    # -- certified decimals ----------------------------------------------------------

    def decimals(self, stage: str, digits: int = 3, significant: bool = False) -> list[list[str | None]]:
        """Certified decimals of a stage: ``digits`` places (0 to 1000), or significant digits
        (1 to 1000); a bad count is a :class:`~symbolic_attn.errors.DigitsError`.

        Entries with free symbols are ``None``.  The decimals come from the exact numbers
        (see :mod:`symbolic_attn.model.decimals`): entries known to be rational, such as
        blocked weights, a lone allowed key's weight 1 or a constant value column's output,
        are rounded exactly; the others from arb intervals of rising precision.

        >>> attention([[1, 0]], [[1, 0], [0, 1]], [[1], [0]]).decimals("weights", -3)
        Traceback (most recent call last):
        ...
        symbolic_attn.errors.DigitsError: digit count -3 is outside 0..1000 (places after the point)
        """
        self._check_stage(stage)
        if stage == "masked":
            return _overlay(self._numbers.decimals("scaled", digits, significant), self._blocked, "-inf")
        decimals = self._numbers.decimals(stage, digits, significant)
        return _overlay(decimals, self.written_blocked, "-inf") if stage in ("scores", "scaled") else decimals

    def _check_stage(self, stage) -> None:
        if stage not in STAGES:
            raise StageError(f"unknown stage {shown(stage)!r}: expected one of {', '.join(STAGES)}")

    def stage_shape(self, stage: str) -> tuple[int, int]:
        self._check_stage(stage)
        return self._numbers.shape("scaled" if stage == "masked" else stage)

    def intervals(self, stage: str, bits: int) -> list[list[flint.arb]]:
        """Interval enclosures (arb balls) of a stage at ``bits`` of working precision; an
        entry known to be rational (a blocked weight, say) is an exact ball.  Remembered
        per precision."""
        self._check_stage(stage)
        if stage == "masked":
            return _overlay(self._numbers.intervals("scaled", check_precision(bits)), self._blocked, flint.arb("-inf"))
        balls = self._numbers.intervals(stage, check_precision(bits))
        return _overlay(balls, self.written_blocked, flint.arb("-inf")) if stage in ("scores", "scaled") else balls

    @cached_property
    def _numbers(self) -> StageNumbers:
        return StageNumbers(self, self._scores_q, _row_parts)
