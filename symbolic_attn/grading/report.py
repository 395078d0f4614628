r"""Checking an exercise: one verdict per claim, as a text table or as JSON.

:func:`check_exercise` runs the attention core once, judges every claim by how it is
written (:mod:`symbolic_attn.grading.claims`), and asks :mod:`symbolic_attn.grading.diagnose` which known
mistake produced each wrong one.  Decimals shown beside the exact values are certified.

Claims are judged lazily: certified intervals of the stages, computed from the rational
scores, settle most of them; a closed form is built only to be printed, or when a claim
sits so close to a rounding boundary that only the exact value can decide.

>>> from symbolic_attn.grading.exercise import parse_exercise
>>> exercise = parse_exercise('''
... [inputs]
... V = [[1, 0], [0, 2], [3, 1]]
... [attention]
... scores = [["0", "ln(2)", "ln(3)"]]
... value = "V"
... mask = {keep = [[1, 1, 0]]}
... [[claims]]
... quantity = "weights"
... value = "[1/6, 1/3, 0]"
... [[claims]]
... quantity = "output"
... value = "[0.33, 1.33]"
... ''', source="row.toml")
>>> report = check_exercise(exercise)
>>> [(o.verdict, o.diagnosis) for o in report.outcomes]
[('fail', ['zeroed_not_renormalized']), ('pass', [])]
>>> print(render_text(report), end="")
row.toml: 1 passed, 1 failed
label    verdict  exact          decimal                      rule        diagnosis
-----    -------  -----          -------                      ----        ---------
weights  FAIL     [1/3, 2/3, 0]  [0.33333, 0.66667, 0.00000]  exact       zeroed_not_renormalized
output   pass     [1/3, 4/3]     [0.3333, 1.3333]             2 decimals  -
"""

import json
from dataclasses import dataclass, field

import sympy
from sympy.printing.str import sstr

from symbolic_attn.exact import certified as numeric
from symbolic_attn.model.attention import STAGES
from symbolic_attn.grading.claims import judge_values
from symbolic_attn.grading.diagnose import MISTAKES, Diagnoser, compute
from symbolic_attn.errors import ExerciseError, SymbolicAttnError

__all__ = ["ClaimOutcome", "CheckReport", "check_exercise", "render_text", "render_json"]

_INTERVAL_BITS = 128
_TEXT_WIDTH = 48  # longest closed form shown in the text table (the JSON has it in full)
_TEXT_SIZE = 64  # entries x softmax terms above which the text table does not build the closed form


@dataclass
class ClaimOutcome:
    """The verdict on one claim, with the exact values it was judged against.

    ``values`` is built on first use: a claim settled by intervals needs no closed form
    until one is printed.
    """

    claim: object
    verdict: str
    shape: tuple | None
    rule: str
    decimals: list
    exact_values: object  # a callable giving the list of exact values
    size: int = 0  # a cheap bound on the size of the closed forms (entries x terms)
    diagnosis: list = field(default_factory=list)
    details: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def values(self) -> list:
        if callable(self.exact_values):
            self.exact_values = self.exact_values()
        return self.exact_values

    def exact_text(self) -> str:
        return _nested(self.values, self.shape, lambda v: sstr(v, order="none"))

    def exact_latex(self) -> str:
        if self.shape is None:
            return sympy.latex(self.values[0], order="none")
        width = self.shape[-1]
        rows = [self.values[i:i + width] for i in range(0, len(self.values), width)]
        return sympy.latex(sympy.Matrix(rows), order="none")

    def decimal_text(self) -> str:
        return _nested(self.decimals, self.shape, lambda d: d)


@dataclass
class CheckReport:
    """All outcomes of one exercise file."""

    source: str
    title: str
    outcomes: list

    @property
    def passed(self) -> int:
        return sum(o.verdict == "pass" for o in self.outcomes)

    @property
    def failed(self) -> int:
        return sum(o.verdict == "fail" for o in self.outcomes)


def check_exercise(exercise) -> CheckReport:
    """Judge every claim of a loaded exercise; diagnose the failing ones."""
    try:
        result = compute(exercise.attention)
        return _check(exercise, result)
    except ExerciseError:
        raise
    except SymbolicAttnError as error:
        raise ExerciseError(f"{exercise.source}: attention: {' '.join(str(error).split())}") from None


def _check(exercise, result) -> CheckReport:
    stages = _Stages(result)
    diagnoser = Diagnoser(exercise, result)
    m = result.scores.cols
    outcomes = []
    for claim in exercise.claims:
        rows, cols = exercise.quantity_shape(claim.quantity)
        positions = _positions(rows, cols, claim.row, claim.col)
        exact = _lazy_values(stages, claim.quantity, positions)
        balls = stages.balls(claim.quantity, claim.row, claim.col)
        lazy = [(lambda k=k: exact()[k]) for k in range(len(positions))]
        verdicts = judge_values(lazy, claim.claimed, claim.rule, balls)
        ok = all(v.ok for v in verdicts)
        shape = None if claim.row is not None and claim.col is not None else (
            (len(positions),) if claim.row is not None or claim.col is not None else (rows, cols))
        if shape is not None and (claim.claimed.shape is None or len(claim.claimed.shape) < len(shape)):
            shape = claim.claimed.shape  # show as claimed: [a, b, c] for a one-row matrix, 2 for [[2]]
        places = max([e.decimals for e in claim.claimed.elements if e.decimals is not None], default=3) + 2
        terms = m if claim.quantity in ("weights", "output") else 1
        outcome = ClaimOutcome(
            claim, "pass" if ok else "fail", shape, "; ".join(dict.fromkeys(v.rule for v in verdicts)),
            stages.decimals(claim.quantity, claim.row, claim.col, places), exact,
            size=len(positions) * terms, notes=[v.note for v in verdicts if v.note],
        )
        if not ok:
            outcome.details = diagnoser.details(claim)
            outcome.diagnosis = sorted({mistake for mistake, _ in outcome.details}, key=list(MISTAKES).index)
        outcomes.append(outcome)
    return CheckReport(exercise.source, exercise.title, outcomes)


def _lazy_values(stages, quantity, positions):
    """A callable giving the exact values at ``positions``, computed once, when first needed."""
    cache = []

    def values():
        if not cache:
            matrix = stages.exact(quantity)
            cache.append([matrix[i, j] for i, j in positions])
        return cache[0]

    return values


class _Stages:
    """Exact stages (built on demand), their intervals and certified decimals, cached."""

    def __init__(self, result):
        self.result = result
        self._balls, self._decimals = {}, {}

    def exact(self, quantity):
        return getattr(self.result, quantity)

    def balls(self, quantity, row, col):
        if quantity not in STAGES:
            return None
        if quantity not in self._balls:
            try:
                self._balls[quantity] = self.result.intervals(quantity, _INTERVAL_BITS)
            except SymbolicAttnError:
                self._balls[quantity] = None
        grid = self._balls[quantity]
        if grid is None:
            return None
        return [grid[i][j] for i, j in _positions(len(grid), len(grid[0]), row, col)]

    def decimals(self, quantity, row, col, places):
        key = (quantity, places)
        if key not in self._decimals:
            if quantity in STAGES:
                grid = self.result.decimals(quantity, places)
            else:
                matrix = self.exact(quantity)
                grid = [[_decimal_or_none(matrix[i, j], places) for j in range(matrix.cols)] for i in range(matrix.rows)]
            self._decimals[key] = grid
        grid = self._decimals[key]
        return [grid[i][j] or "-" for i, j in _positions(len(grid), len(grid[0]), row, col)]


def _positions(rows, cols, row, col):
    if row is not None and col is not None:
        return [(row - 1, col - 1)]
    if row is not None:
        return [(row - 1, j) for j in range(cols)]
    if col is not None:
        return [(i, col - 1) for i in range(rows)]
    return [(i, j) for i in range(rows) for j in range(cols)]


def _decimal_or_none(value, places):
    try:
        return numeric.decimal_string(value, places)
    except SymbolicAttnError:
        return None


def _nested(items, shape, show) -> str:
    if shape is None:
        return show(items[0])
    if len(shape) == 1:
        return "[" + ", ".join(show(x) for x in items) + "]"
    rows = [items[i * shape[1]:(i + 1) * shape[1]] for i in range(shape[0])]
    return "[" + ", ".join("[" + ", ".join(show(x) for x in row) + "]" for row in rows) + "]"


# ----------------------------------------------------------------- rendering


def render_json(report: CheckReport) -> str:
    """The issue's schema: claims (label, quantity, row, col, claimed, exact, exact_latex,
    decimal, rule, verdict, diagnosis), passed, failed.  Keys sorted: byte-stable output."""
    claims = []
    for o in report.outcomes:
        c = o.claim
        claims.append({
            "label": c.name, "quantity": c.quantity, "row": c.row, "col": c.col,
            "claimed": c.claimed.text, "exact": o.exact_text(), "exact_latex": o.exact_latex(),
            "decimal": o.decimal_text(), "rule": o.rule, "verdict": o.verdict, "diagnosis": o.diagnosis,
        })
    return json.dumps({"claims": claims, "passed": report.passed, "failed": report.failed}, indent=2, sort_keys=True) + "\n"


def render_text(report: CheckReport) -> str:
    """One row per claim: label, verdict, exact value, certified decimals, rule, diagnosis."""
    header = ("label", "verdict", "exact", "decimal", "rule", "diagnosis")
    rows = []
    for o in report.outcomes:
        diagnosis = ", ".join(o.diagnosis) if o.diagnosis else "-"
        if o.notes:
            diagnosis += " (" + o.notes[0][:60] + ")"
        exact = _clip(o.exact_text()) if o.size <= _TEXT_SIZE else "(large: see --format json)"
        rows.append((o.claim.name, "pass" if o.verdict == "pass" else "FAIL", exact,
                     _clip(o.decimal_text()), o.rule, diagnosis))
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header) - 1)]
    lines = [f"{report.source}: {report.passed} passed, {report.failed} failed"]
    if report.title:
        lines[0] += f" ({report.title})"
    for row in [header, tuple("-" * len(h) for h in header)] + rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths)] + [row[-1]]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _clip(text: str) -> str:
    return text if len(text) <= _TEXT_WIDTH else text[: _TEXT_WIDTH - 3] + "..."
