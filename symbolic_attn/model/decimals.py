r"""Certified decimals and interval enclosures of the attention stages, straight from numbers.

The exact result of attention is decided by the scores, the mask and the values; the big
closed forms (sums of exponentials over a shared denominator) are needed only to print or
prove them.  Here the decimals come from the numbers themselves:

* **Rationals stay rationals.**  When Q and K are rational, Q K^T is one python-flint
  ``fmpq_mat`` product and the scores enter arb as exact fractions: no SymPy tree is built.
* **Exact entries are found first, and rounded exactly.**  The core's one row rule
  (``_row_parts`` in :mod:`symbolic_attn.model.attention`) is run on *formal* numbers: a
  numerator is "e to the power of this score", a denominator a multiset of such powers.
  A blocked weight is exactly 0; a weight whose denominator holds one distinct power (a
  row with one allowed key, or equal scores) is exactly 1/k; an output entry
  sum_j v_j e^(s_j) / sum_k e^(s_k) is exactly q when, for every distinct power, its values
  add up to q times its count.  Such entries are rounded with integer arithmetic, so an
  exact 0, 1, 1/2 or 0.125 never waits for a precision that cannot come.
* **Everything else is irrational**, when the scores are rational and the scale is rational
  or the square root of one (the default 1/sqrt(d_k)): exponentials of distinct algebraic
  numbers are linearly independent over the algebraic numbers (Lindemann-Weierstrass), so
  the test above is exact both ways.  An irrational value is never on a rounding boundary,
  so rising arb precision always decides it; only the rows still undecided are recomputed,
  and no closed form is ever needed.  For other inputs (symbolic scores such as log 2, an
  unusual scale) an entry left undecided falls back to its exact closed form.

>>> import sympy
>>> from symbolic_attn.model.attention import attention
>>> r = attention([[1, 0], [0, 1]], [[1, 0], [0, 1]], [[1, 2], [3, 4]], mask="causal")
>>> r.decimals("weights", 30, significant=True)[0]   # exactly 1 and 0: no precision needed
['1.00000000000000000000000000000', '0']
>>> r.decimals("output", 0)[0]
['1', '2']
"""

from __future__ import annotations

from collections import Counter

import flint
import sympy

from symbolic_attn.errors import UndecidedError
from symbolic_attn.exact.certified import (
    MAX_PRECISION,
    START_PRECISION,
    certified_decimal,
    check_digits,
    decimal_string,
    quotient_decimal,
    to_arb,
    working_precision,
)

__all__ = ["StageNumbers", "rational_matrix", "sympy_matrix"]


class _Marker:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


#: A formal numerator that is exactly 0 (a blocked key), and the NaN of the "nan" policy.
ZERO, NAN = _Marker("ZERO"), _Marker("NAN")


def rational_matrix(matrix) -> flint.fmpq_mat | None:
    """The SymPy matrix as a python-flint ``fmpq_mat`` if every entry is rational, else None.

    >>> rational_matrix(sympy.Matrix([[1, sympy.Rational(1, 2)]]))
    [1, 1/2]
    >>> print(rational_matrix(sympy.Matrix([[sympy.sqrt(2)]])))
    None
    """
    rows = matrix.tolist()
    if not all(entry.is_Rational for row in rows for entry in row):
        return None
    return flint.fmpq_mat([[flint.fmpq(int(entry.p), int(entry.q)) for entry in row] for row in rows])


def sympy_matrix(matrix: flint.fmpq_mat) -> sympy.ImmutableMatrix:
    """The exact SymPy matrix of an ``fmpq_mat`` (built only when someone reads it)."""
    return sympy.ImmutableMatrix([[sympy.Rational(int(e.p), int(e.q)) for e in row] for row in matrix.tolist()])


def _formal_sum(terms) -> Counter:
    return Counter(term for term in terms if term is not ZERO)


def _arb_sum(terms):
    total = flint.arb(0)
    for term in terms:
        total += term
    return total


def _exact_arb(value) -> flint.arb:
    if isinstance(value, flint.fmpq):
        return flint.arb(value)
    return to_arb(value)


def _is_simple_algebraic(scale) -> bool:
    """True when ``scale`` is rational or the square root of a rational that is not a square
    (so that a nonzero multiple of it by a rational is rational only if it is rational)."""
    if scale.is_Rational:
        return True
    square = scale**2
    return bool(square.is_Rational and square > 0 and scale.is_real and not sympy.sqrt(square).is_Rational)


class StageNumbers:
    """Exact entries, arb enclosures and certified decimals of one attention result.

    ``result`` is an :class:`~symbolic_attn.model.attention.AttentionResult` (only its
    ``scale``, ``mask``, ``options``, ``value`` and, for non-rational inputs, ``scaled`` and
    ``scores`` are read); ``scores_q`` its rational scores as an ``fmpq_mat`` or None;
    ``row_parts`` the core's row rule.
    """

    def __init__(self, result, scores_q, row_parts):
        self.result, self.scores_q, self.row_parts = result, scores_q, row_parts
        self.options, self.mask = result.options, result.mask
        self.n, self.m = self.mask.shape
        self.d_v = result.value.cols
        scale = result.scale
        self.scale_q = flint.fmpq(int(scale.p), int(scale.q)) if scale.is_Rational else None
        # Rational keys (the scores themselves) name the exponentials exactly when the scale
        # is known to be nonzero: scale * r1 == scale * r2 iff r1 == r2.
        self.rational = scores_q is not None and (scale.is_zero is not None)
        # stable=True subtracts each line's largest allowed scaled score.  Softmax does not
        # notice, but the zero_score mistake does (its blocked e^0 is not shifted), so
        # there the lines are shifted exactly as the core shifts them.
        self.shifted = self.options.stable and self.options.masking == "zero_score"
        if self.shifted and self.rational:
            self.rational = bool(scale.is_zero or scale.is_positive or scale.is_negative)
        self.value_q = rational_matrix(result.value)
        self.complete = (
            self.rational and self.value_q is not None and self.options.axis == "keys" and _is_simple_algebraic(scale)
        )
        self._plans: dict = {}
        self._known: dict = {}
        self._rows: dict = {}  # bits -> row -> (weights row, output row)
        self._grids: dict = {}  # bits -> stage -> full grid

    # -- the formal row rule: which entries are exactly rational -------------------------

    def _keys(self):
        """Per row, a hashable name of each scaled score's exponential (equal names, equal
        values): the rational score (the scale is common), or the SymPy scaled score."""
        if "keys" not in self._known:
            if self.rational:
                # Integers over the common denominator: hashing fmpq goes through Fraction.
                if self.result.scale.is_zero:
                    keys = [[0] * self.m for _ in range(self.n)]
                else:
                    keys = [[int(x) for x in row] for row in self.scores_q.numer_denom()[0].tolist()]
                self._known["zero key"] = 0
            else:
                keys = self.result.scaled.tolist()
                self._known["zero key"] = sympy.S.Zero
            self._known["keys"] = keys
        return self._known["keys"]

    def _lines(self):
        """(keys, allowed) of every line softmax normalizes: rows, or columns for axis='queries'."""
        if "lines" not in self._known:
            keys, allowed = self._keys(), self.mask.allowed
            if self.options.axis == "queries":
                keys, allowed = [list(col) for col in zip(*keys)], self.mask.transposed().allowed
            if self.shifted:
                keys = [self._shift(line, ok) for line, ok in zip(keys, allowed)]
            self._known["lines"] = (keys, allowed)
        return self._known["lines"]

    def _shift(self, line, allowed):
        """The line minus its largest allowed scaled score (of all, if none is allowed)."""
        if not self.rational:
            shift = sympy.Max(*([s for s, ok in zip(line, allowed) if ok] or line))
            return [s - shift for s in line]
        if self.result.scale.is_zero:
            return list(line)
        pick = max if self.result.scale.is_positive else min
        shift = pick([r for r, ok in zip(line, allowed) if ok] or line)
        return [r - shift for r in line]

    def plan(self, line: int):
        """Formal (numerators, denominator) of one normalized line: each numerator is a key,
        ZERO or NAN; the denominator a Counter of keys."""
        if line not in self._plans:
            keys, allowed = self._lines()
            zero_key = self._known["zero key"]
            nums, den = self.row_parts(keys[line], allowed[line], line, self.options,
                                       _identity, _formal_sum, ZERO, zero_key, NAN)
            if not isinstance(den, Counter):  # the empty-row policies return a bare `one`
                den = Counter([den])
            self._plans[line] = (nums, den)
        return self._plans[line]

    def known(self, stage: str):
        """The grid of exactly known entries of ``stage``: fmpq, a SymPy value, NAN, or None."""
        if stage not in self._known:
            self._known[stage] = getattr(self, f"_known_{stage}")()
        return self._known[stage]

    def _known_scores(self):
        if self.scores_q is not None:
            return self.scores_q.tolist()
        return [[_fmpq_or_none(e) for e in row] for row in self.result.scores.tolist()]

    def _known_scaled(self):
        if self.scores_q is None:
            return [[_fmpq_or_none(e) for e in row] for row in self.result.scaled.tolist()]
        scale = self.scale_q
        if scale is not None:
            return [[scale * r for r in row] for row in self.scores_q.tolist()]
        return [[r if r == 0 else None for r in row] for row in self.scores_q.tolist()]

    def _known_weights(self):
        lines, zero = [], flint.fmpq(0)
        for line in range(len(self._lines()[0])):
            nums, den = self.plan(line)
            if len(den) == 1:  # one distinct exponential: each allowed weight is 1/count
                (key, count), = den.items()
                one = flint.fmpq(1, count)
                lines.append([zero if t is ZERO else NAN if t is NAN else one if t == key else None for t in nums])
            else:
                lines.append([zero if t is ZERO else NAN if t is NAN else None for t in nums])
        return [list(col) for col in zip(*lines)] if self.options.axis == "queries" else lines

    def _value_rows(self):
        return self.value_q.tolist() if self.value_q is not None else self.result.value.tolist()

    def _known_output(self):
        V = self._value_rows()
        if self.options.axis == "queries":  # known when the whole row of weights is
            grid = []
            for weights in self.known("weights"):
                if any(w is NAN for w in weights):
                    grid.append([NAN] * self.d_v)
                elif any(w is None for w in weights):
                    grid.append([None] * self.d_v)
                else:
                    zero = flint.fmpq(0) if self.value_q is not None else sympy.S.Zero
                    grid.append([_normal(_sum((w * V[j][c] for j, w in enumerate(weights) if w != 0), zero))
                                 for c in range(self.d_v)])
            return grid
        return [self._known_output_row(i, V) for i in range(self.n)]

    def _known_output_row(self, i, V):
        zero = flint.fmpq(0) if self.value_q is not None else sympy.S.Zero
        nums, den = self.plan(i)
        if any(t is NAN for t in nums):
            return [NAN] * self.d_v
        groups: dict = {}
        for j, t in enumerate(nums):
            if t is not ZERO:
                groups.setdefault(t, []).append(j)
        if not set(groups) <= set(den):
            return [None] * self.d_v
        row = []
        for c in range(self.d_v):
            # sum_j v_j e^(t_j) = q * sum_k e^(k) needs, for every distinct exponential,
            # (its values' sum) / (its count) == q; the first mismatch ends the search.
            q = None
            for key, count in den.items():
                ratio = _sum((V[j][c] for j in groups.get(key, ())), zero) / count
                if q is None:
                    q = ratio
                elif ratio != q:
                    q = None
                    break
            row.append(_normal(q))
        return row

    # -- intervals ------------------------------------------------------------------------

    def intervals(self, stage: str, bits: int) -> list[list[flint.arb]]:
        """Enclosures of every entry of ``stage`` at ``bits`` (exact entries as exact balls)."""
        grids = self._grids.setdefault(bits, {})
        if stage not in grids:
            rows, cols = self.shape(stage)
            balls = self._ball_rows(stage, bits, {i: range(cols) for i in range(rows)})
            grids[stage] = [[None if balls[i] is None else balls[i][j] for j in range(cols)] for i in range(rows)]
        return grids[stage]

    def shape(self, stage: str) -> tuple[int, int]:
        return (self.n, self.d_v) if stage == "output" else (self.n, self.m)

    def _ball_rows(self, stage, bits, positions: dict) -> dict:
        """{i: the row of balls (or None, for a row with no numeric value)}, holding at
        least the balls of ``positions`` (row -> columns; whole rows for the weights and
        the output)."""
        with working_precision(bits):
            if stage in ("scores", "scaled"):
                known = self.known(stage)
                return {i: {j: self._score_ball(stage, i, j, known[i][j]) for j in columns}
                        for i, columns in positions.items()}
            rows = self._stage_rows(bits, sorted(positions))
            column = 0 if stage == "weights" else 1
            return {i: (None if row is None else row[column]) for i, row in rows.items()}

    def _score_ball(self, stage, i, j, exact):
        if exact is not None:
            return _exact_arb(exact)
        try:
            if self.scores_q is not None:  # an irrational scale times a rational score
                return self._scale_ball() * flint.arb(self.scores_q[i, j])
            return to_arb(getattr(self.result, stage)[i, j])
        except UndecidedError:
            return None

    def _stage_rows(self, bits, rows):
        """(weights row, output row) of each row in ``rows`` at ``bits`` (all rows at once for
        axis='queries', whose output row needs every column's denominator); None for a row
        whose scores have no numeric value."""
        cache = self._rows.setdefault(bits, {})
        if self.options.axis == "queries":
            rows = range(self.n) if any(i not in cache for i in rows) else []
            if rows:
                cache.update(self._queries_rows(bits))
            return cache
        for i in rows:
            if i in cache:
                continue
            weights = self._weights_line(i)
            values = self._value_balls(bits)
            if weights is None or values is None:  # no numbers: weights, or only the output
                cache[i] = None if weights is None else (weights, None)
                continue
            product = flint.arb_mat([weights]) * values
            output = [product[0, c] for c in range(self.d_v)]
            for c, exact in enumerate(self.known("output")[i]):
                if exact is not None and exact is not NAN:
                    output[c] = _exact_arb(exact)
            cache[i] = (weights, output)
        return cache

    def _value_balls(self, bits):
        """V as an arb_mat at ``bits`` (called inside working_precision), or None if symbolic."""
        key = ("values", bits)
        if key not in self._known:
            if self.value_q is not None:
                self._known[key] = flint.arb_mat(self.value_q)
            else:
                try:
                    self._known[key] = flint.arb_mat([[to_arb(v) for v in row] for row in self.result.value.tolist()])
                except UndecidedError:
                    self._known[key] = None
        return self._known[key]

    def _score_rows(self):
        if "score rows" not in self._known:
            self._known["score rows"] = self.scores_q.tolist()
        return self._known["score rows"]

    def _scale_ball(self):
        """The scale at the current working precision (computed once per precision)."""
        key = ("scale", flint.ctx.prec)
        if key not in self._known:
            self._known[key] = flint.arb(self.scale_q) if self.scale_q is not None else to_arb(self.result.scale)
        return self._known[key]

    def _scaled_line(self, line, keys):
        """The arb scaled scores of one normalized line, or None if one has no value."""
        if self.rational:
            if self.scale_q == 1:
                return [flint.arb(r) for r in keys]
            scale = self._scale_ball()
            return [scale * flint.arb(r) for r in keys]
        try:
            return [to_arb(s) for s in keys]
        except UndecidedError:
            return None

    def _normalized_line(self, line):
        keys, allowed = self._lines()
        if self.rational:
            scores = self._score_rows()
            keys = scores[line] if self.options.axis == "keys" else [row[line] for row in scores]
            if self.shifted:
                keys = self._shift(keys, allowed[line])
        else:
            keys = keys[line]
        scaled = self._scaled_line(line, keys)
        if scaled is None:
            return None
        nums, den = self.row_parts(scaled, allowed[line], line, self.options, flint.arb.exp, _arb_sum,
                                   flint.arb(0), flint.arb(1), flint.arb("nan"))
        return [num / den for num in nums]

    def _weights_line(self, i):
        weights = self._normalized_line(i)
        if weights is not None:
            for j, exact in enumerate(self.known("weights")[i]):
                if exact is not None and exact is not NAN:
                    weights[j] = _exact_arb(exact)
        return weights

    def _queries_rows(self, bits):
        columns = [self._normalized_line(j) for j in range(self.m)]
        if any(col is None for col in columns):
            return {i: None for i in range(self.n)}
        weights = [list(row) for row in zip(*columns)]
        for i, row in enumerate(self.known("weights")):
            for j, exact in enumerate(row):
                if exact is not None and exact is not NAN:
                    weights[i][j] = _exact_arb(exact)
        values = self._value_balls(bits)
        if values is None:
            return {i: (weights[i], None) for i in range(self.n)}
        product = flint.arb_mat(weights) * values
        out = {}
        for i in range(self.n):
            output = [product[i, c] for c in range(self.d_v)]
            for c, exact in enumerate(self.known("output")[i]):
                if exact is not None and exact is not NAN:
                    output[c] = _exact_arb(exact)
            out[i] = (weights[i], output)
        return out

    # -- decimals -------------------------------------------------------------------------

    def decimals(self, stage: str, digits: int, significant: bool = False) -> list[list[str | None]]:
        """Certified decimals of every entry (None for an entry with free symbols)."""
        digits = check_digits(digits, significant)
        result: list[list[str | None]] = []
        pending: dict[int, list[int]] = {}  # row -> columns still undecided
        for i, known in enumerate(self.known(stage)):
            result.append([None if e is None else _exact_text(e, digits, significant) for e in known])
            missing = [j for j, e in enumerate(known) if e is None]
            if missing:
                pending[i] = missing
        symbolic = []
        bits = START_PRECISION
        while pending and bits <= MAX_PRECISION:
            rows = self._ball_rows(stage, bits, pending)
            still = {}
            for i, columns in pending.items():
                row, texts, left = rows[i], result[i], []
                for j in columns:
                    ball = None if row is None else row[j]
                    if ball is None:
                        symbolic.append((i, j))
                        continue
                    text = certified_decimal(ball, digits, significant)
                    if text is None:
                        left.append(j)
                    else:
                        texts[j] = text
                if left:
                    still[i] = left
            pending, bits = still, bits * 2
        undecided = [(i, j) for i, columns in pending.items() for j in columns]
        if undecided and self.complete:
            i, j = undecided[0]
            raise UndecidedError(
                f"cannot certify {digits} digits of {stage} ({i + 1},{j + 1}): not decided at {MAX_PRECISION} bits "
                "of precision (an irrational value extremely close to a rounding boundary)"
            )
        for i, j in undecided + symbolic:  # only for symbolic or unusual inputs
            entry = getattr(self.result, stage)[i, j]
            if entry is sympy.nan:
                result[i][j] = "nan"
            elif not entry.free_symbols:
                result[i][j] = decimal_string(entry, digits, significant)
        return result


def _identity(x):
    return x


def _sum(terms, total):
    for term in terms:
        total = total + term
    return total


def _fmpq_or_none(entry):
    return flint.fmpq(int(entry.p), int(entry.q)) if entry.is_Rational else None


def _normal(value):
    """fmpq for a rational (SymPy or int), else the SymPy value, NAN or None."""
    if value is None or value is NAN or isinstance(value, flint.fmpq):
        return value
    if isinstance(value, int):
        return flint.fmpq(value)
    if isinstance(value, sympy.Basic) and value.is_Rational:
        return flint.fmpq(int(value.p), int(value.q))
    if isinstance(value, sympy.Basic) and value.free_symbols:
        return None  # symbolic: no decimal (the closed form says so)
    return value


def _exact_text(value, digits, significant):
    if value is NAN:
        return "nan"
    if isinstance(value, flint.fmpq):
        return quotient_decimal(int(value.p), int(value.q), digits, significant)
    return decimal_string(value, digits, significant)
