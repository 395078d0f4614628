r"""Printed-rounded inputs: judging claims when the exercise's numbers were rounded for print.

A textbook prints ``Q = [[0.4305, 0.7812]]``, rounded to 4 places from values it does not
show, and prints weights computed from those unrounded values; their last digit may differ
from exact computation with the printed inputs.  An input declared
``Q = {value = [[0.4305, 0.7812]], rounded = 4}`` (read by
:meth:`~symbolic_attn.grading.computation.ComputationReader.rounded_input`) stands for
every input whose correct rounding is what was printed: each entry x lies in the box
``[printed - h, printed + h]``, h = 5 * 10^-(places + 1).

Each claimed entry f (a function of the rounded entries, built once by running the same
computation on symbols) is judged by the claim's own rule, which makes the written number
an interval [lo, hi] (``0.6012`` stands for [0.60115, 0.60125]; an exact claim ``1/3`` is
the point lo = hi = 1/3):

* **pass** when the printed inputs pass as usual, or when two points a, b of the box
  (exact rationals: the printed point and printed -/+ h in the direction of the gradient)
  give f(a) <= hi and f(b) >= lo, both certified by arb at those exact points.  The box is
  connected and f continuous, so some input in it gives a value inside [lo, hi];
* **fail** only when a certified enclosure of f over the whole box (arb balls of radius h
  for the inputs, narrowed by the mean value form with enclosed derivatives) is disjoint
  from [lo, hi]: no input that rounds to the printed one gives the claim;
* **undecided** otherwise, with a note saying so -- never a pass.

Each entry is judged on its own: different entries of one claim may be explained by
different inputs within the box (a claim is not checked for one common choice).  The
computation is run once with the rounded entries as unknowns when the file is read; one
that cannot follow them (a rounded ``scale``, closed forms over the program's size bounds)
is refused then, naming the input, rather than judged as if nothing were rounded.

>>> from symbolic_attn.grading.exercise import parse_exercise
>>> exercise = parse_exercise('''
... [inputs]
... s = {value = [["0.12", "0.47"]], rounded = 2}
... [attention]
... scores = "s"
... value = [[1], [0]]
... [[claims]]
... quantity = "weights"
... value = "[0.4112, 0.5888]"
... [[claims]]
... quantity = "weights"
... value = "[0.43, 0.57]"
... ''', source="printed.toml")
>>> from symbolic_attn.grading.report import check_exercise
>>> [str(o.verdict) for o in check_exercise(exercise).outcomes]
['pass', 'fail']
>>> exercise.rounded.half_units
{'s': 1/200}
"""

from __future__ import annotations

import flint
import sympy

from symbolic_attn.errors import ExerciseError, ParseError, SymbolicAttnError, UndecidedError, shown
from symbolic_attn.exact.certified import decimal_string
from symbolic_attn.exact.intervals import certified_sign, to_arb, to_arb_over, working_precision
from symbolic_attn.grading.claims import ElementVerdict, judge_element, rule_bound, rule_text
from symbolic_attn.grading.computation import read_definitions
from symbolic_attn.model.attention import attention, attention_from_scores
from symbolic_attn.model.trace import select

__all__ = ["RoundedInputs", "MAX_ROUNDED_ENTRIES"]

#: The most entries an exercise may declare rounded: each is a symbol the claims' entries
#: are differentiated by, so the cost grows with their number.
MAX_ROUNDED_ENTRIES = 128
_BITS = (128, 512, 2048)  # working precisions tried for a witness or an enclosure
_MAX_GRADIENT = 64  # free inputs of one entry above which only the plain enclosure is used
_PIECES = 256  # pieces of the box the enclosure may be split into before it gives up


class RoundedInputs:
    """The rounded inputs of an exercise, and the judge of claims over their boxes.

    ``places`` and ``half_units`` map each rounded input's name to its declared decimal
    places and half unit; ``symbols`` to the symbols (one per entry) standing for it.
    Built by :meth:`read` while the exercise is read; :meth:`judge_values` and
    :meth:`judge_element` return the verdicts :func:`~symbolic_attn.grading.claims.judge_values`
    would, with the rounding taken into account.
    """

    def __init__(self, places: dict, printed: dict, symbols: dict, trace):
        self.places = dict(places)
        self.half_units = {name: sympy.Rational(1, 2 * 10**p) for name, p in places.items()}
        self.symbols = symbols
        self._trace = trace  # the symbolic trace: every stage as a function of the symbols
        self._point, self._radius = {}, {}
        for name, grid in symbols.items():
            value = printed[name]
            cells = list(grid) if isinstance(grid, sympy.MatrixBase) else [grid]
            numbers = list(value) if isinstance(value, sympy.MatrixBase) else [value]
            for symbol, number in zip(cells, numbers):
                self._point[symbol], self._radius[symbol] = number, self.half_units[name]
        self._cache = {}

    # -- reading --------------------------------------------------------------------

    @classmethod
    def read(cls, reader, table: dict, symbols: dict, inputs: dict) -> RoundedInputs | None:
        """From an exercise table read by ``reader`` (whose ``rounded`` names the declared
        inputs): the same computation run on one symbol per rounded entry.  None when no
        input is rounded."""
        places = getattr(reader, "rounded", None)
        if not places:
            return None
        count = sum(_size(inputs[name]) for name in places)
        if count > MAX_ROUNDED_ENTRIES:
            raise reader.fail("inputs", f"{count} rounded entries exceed the limit of {MAX_ROUNDED_ENTRIES}")
        boxed = {name: _symbols(name, inputs[name]) for name in places}
        names = {**symbols, **inputs, **boxed}
        try:
            if "define" in table:
                hidden, definitions = read_definitions(reader, table, names)
                from symbolic_attn.model.program import run_program

                trace = run_program({**names, **hidden}, definitions)
            else:
                spec = reader.attention(table["attention"], names)
                if spec.scores is not None:
                    result = attention_from_scores(spec.scores, spec.value, spec.mask, scale="none")
                else:
                    result = attention(spec.query, spec.key, spec.value, spec.mask, spec.scale)
                trace = result.trace
        except ExerciseError as error:  # its message names the file already
            text = str(error).removeprefix(f"{reader.source}: ")
            raise reader.fail(f"inputs.{next(iter(places))}.rounded",
                              f"the computation cannot follow rounded inputs: {text}") from None
        except SymbolicAttnError as error:
            raise reader.fail(f"inputs.{next(iter(places))}.rounded", "the computation cannot follow rounded "
                              f"inputs (entries as unknowns in their rounding): {' '.join(str(error).split())}") from None
        return cls(places, inputs, boxed, trace)

    # -- judging --------------------------------------------------------------------

    def entries(self, quantity: str, row=None, col=None) -> list:
        """The selected entries of a stage as functions of the rounded inputs' symbols."""
        key = (quantity, row, col)
        if key not in self._cache:
            self._cache[key] = select(self._trace, quantity, row, col).entries
        return self._cache[key]

    def judge_values(self, quantity: str, row, col, values, claimed, rule=None, balls=None) -> list:
        """The verdicts of :func:`~symbolic_attn.grading.claims.judge_values` for a claim of
        ``quantity`` at ``row``/``col`` (``values``: the exact entries at the printed inputs)."""
        functions = self.entries(quantity, row, col)
        if not len(functions) == len(values) == len(claimed.elements):
            raise ParseError(f"{len(claimed.elements)} claimed numbers for {len(values)} values")
        balls = balls if balls is not None else [None] * len(values)
        return [self.judge_element(f, v, e, rule, b) for f, v, e, b in zip(functions, values, claimed.elements, balls)]

    def judge_element(self, function, exact, element, rule=None, ball=None) -> ElementVerdict:
        """One claimed number: as usual at the printed inputs, else over the box."""
        verdict = judge_element(exact, element, rule, ball)
        free = function.free_symbols if isinstance(function, sympy.Basic) else set()
        if verdict.state == "pass" or not free or not free <= set(self._point):
            return verdict  # passes at the printed inputs, or does not depend on a rounded one
        try:
            lo, hi = _interval(element, rule)
        except UndecidedError:
            return verdict
        label = rule_text(element, rule)
        spread = self._spread(free)
        try:
            witness = self._witness(function, free, lo, hi)
        except (UndecidedError, SymbolicAttnError, ArithmeticError, ValueError):
            witness = None
        if witness is not None:
            return ElementVerdict(True, label, f"a correct value for inputs within their printed rounding ({spread}): "
                                  f"{witness}")
        try:
            enclosure = self._excluded(function, free, lo, hi)
        except (UndecidedError, SymbolicAttnError, ArithmeticError, ValueError):
            enclosure = None
        if enclosure is not None:
            return ElementVerdict(False, label, f"no inputs within their printed rounding ({spread}) give it: "
                                  f"the value lies in {enclosure.str(6)} there")
        why = verdict.note[len("undecided: "):] if verdict.note.startswith("undecided: ") else \
            "the printed inputs do not give it"
        return ElementVerdict(False, label, f"undecided: {shown(why, 120)}; no inputs within their printed rounding "
                              f"({spread}) were found that give it, nor was it shown that none do", undecided=True)

    # -- the box ----------------------------------------------------------------------

    def _spread(self, free) -> str:
        names = [name for name, grid in self.symbols.items()
                 if free & (set(grid) if isinstance(grid, sympy.MatrixBase) else {grid})]
        return ", ".join(f"{name} +/- {decimal_string(self.half_units[name], self.places[name] + 1)}" for name in names)

    def _at(self, free, point=None) -> dict:
        """Each symbol's exact value at ``point`` (the printed inputs by default), as a ball."""
        point = point or self._point
        return {symbol: _ball(point[symbol]) for symbol in free}

    def _gradient_signs(self, function, free) -> dict:
        """Signs of the partial derivatives at the printed point (only to CHOOSE points)."""
        signs = {}
        with working_precision(_BITS[0]):
            balls = self._at(free)
            for symbol in free:
                try:
                    slope = to_arb_over(sympy.diff(function, symbol), balls).mid()
                except (UndecidedError, ArithmeticError, ValueError, TypeError):
                    slope = 0
                signs[symbol] = 1 if slope > 0 else -1 if slope < 0 else 0
        return signs

    def _witness(self, function, free, lo, hi) -> str | None:
        """Points of the box giving f <= hi and f >= lo, certified; their description, or None."""
        signs = self._gradient_signs(function, free)
        down = {s: self._point[s] - sign * self._radius[s] for s, sign in signs.items()}
        up = {s: self._point[s] + sign * self._radius[s] for s, sign in signs.items()}
        low = next((p for p in (self._point, down) if hi is None or _compare(function, free, self, p, hi) in (-1, 0)),
                   None)
        high = next((p for p in (self._point, up) if lo is None or _compare(function, free, self, p, lo) in (0, 1)),
                    None)
        if low is None or high is None:
            return None
        other = low if low is not self._point else high
        where = "the printed inputs" if other is self._point else "the printed inputs moved by their half unit " \
            "along the gradient"
        try:
            shown_value = decimal_string(function.xreplace({s: other[s] for s in free}), 6)
        except SymbolicAttnError:
            shown_value = "a value"
        return f"{shown_value} at {where}"

    def _excluded(self, function, free, lo, hi):
        """A certified ball containing f over the whole box and disjoint from [lo, hi], or None.

        Branch and bound: the box is enclosed by arb (the plain enclosure, narrowed by the
        mean value form f(c) + sum_i f_i(box) [-r_i, r_i]); a piece whose enclosure meets
        [lo, hi] is halved along its widest side, up to :data:`_PIECES` pieces.  The pieces
        always cover the box, so a ``None`` is only "not shown", never a pass.
        """
        order = sorted(free, key=str)
        derivatives = [sympy.diff(function, s) for s in order] if len(free) <= _MAX_GRADIENT else None
        pending = [({s: self._point[s] for s in order}, {s: self._radius[s] for s in order})]
        hull, pieces = None, 0
        with working_precision(_BITS[1]):
            low, high = (None if lo is None else to_arb(lo)), (None if hi is None else to_arb(hi))
            while pending:
                center, radius = pending.pop()
                pieces += 1
                if pieces > _PIECES:
                    return None
                ball = self._piece(function, derivatives, order, center, radius)
                if ball is None:
                    return None
                if (high is not None and ball > high) or (low is not None and ball < low):
                    hull = ball if hull is None else hull.union(ball)
                    continue
                widest = max(order, key=lambda s: radius[s])
                half = radius[widest] / 2
                for step in (-half, half):
                    pending.append(({**center, widest: center[widest] + step}, {**radius, widest: half}))
        return hull

    def _piece(self, function, derivatives, order, center, radius):
        """An enclosure of f over one piece of the box (None when none is finite)."""
        box, point = {}, {}
        for s in order:
            c, r = _ball(center[s]), _ball(radius[s])
            point[s], box[s] = c, c + r.union(-r)
        try:
            ball = to_arb_over(function, box)
        except (UndecidedError, ArithmeticError, ValueError, TypeError):
            ball = None
        if derivatives is not None:
            try:
                form = to_arb_over(function, point)
                for s, derivative in zip(order, derivatives):
                    r = _ball(radius[s])
                    form += to_arb_over(derivative, box) * r.union(-r)
                ball = form if ball is None else ball.intersection(form)
            except (UndecidedError, ArithmeticError, ValueError, TypeError):
                pass
        return ball


def _ball(value) -> flint.arb:
    """The exact rational ``value`` as an arb ball."""
    return flint.arb(flint.fmpq(int(value.p), int(value.q)))


def _size(value) -> int:
    return len(value) if isinstance(value, sympy.MatrixBase) else 1


def _symbols(name: str, value):
    """One real symbol per entry (Dummy: no clash with the file's own names)."""
    if not isinstance(value, sympy.MatrixBase):
        return sympy.Dummy(name, real=True)
    return sympy.ImmutableMatrix(value.rows, value.cols,
                                 [sympy.Dummy(f"{name}_{i + 1}{j + 1}", real=True)
                                  for i in range(value.rows) for j in range(value.cols)])


def _interval(element, rule) -> tuple:
    """(lo, hi) the claimed number stands for by its rule; None for an unbounded side."""
    claimed = element.value
    if claimed is sympy.S.NegativeInfinity:
        raise UndecidedError("-inf is judged exactly")
    bound = rule_bound(element, rule)
    if bound is not None:
        return claimed - bound, claimed + bound
    ratio = rule.amount  # |x - c| <= r |x|
    sign = certified_sign(claimed)
    if sign is None:
        raise UndecidedError("the sign of the claim is not certified")
    if sign == 0:
        return (sympy.Integer(0), sympy.Integer(0)) if ratio < 1 else (None, None)
    near, far = claimed / (1 + ratio), (claimed / (1 - ratio) if ratio < 1 else None)
    return (near, far) if sign > 0 else (far, near)


def _compare(function, free, rounded, point, bound) -> int | None:
    """The certified sign of f(point) - bound (arb at the exact point, then exact
    rational arithmetic when the value is rational), or None when not certified."""
    for bits in _BITS:
        with working_precision(bits):
            value = to_arb_over(function, rounded._at(free, point))
            limit = to_arb(bound)
            if value < limit:
                return -1
            if value > limit:
                return 1
    exact = function.xreplace({s: point[s] for s in free}) - bound
    if exact.is_Rational:
        return 0 if exact == 0 else (1 if exact > 0 else -1)
    return None
