r"""Carried forward within the rounding: what follows from a solution's earlier claims.

A claimed decimal stands for every value it rounds from: ``0.245`` for [0.2445, 0.2455]
(half a unit of its last written digit either way); an exact claim (``2``, ``1/3``,
``-inf``) is a point.  A later claim *follows* from the earlier ones when it passes, by
its own rule, against some value the computation gives over that box of readings -- so
a student who kept more digits than they wrote is carried forward like one who continued
from the rounded numbers.  Two steps, each through the one attention core, exact, with
certified comparisons only (never a float):

* **weights -> output** (:func:`output_within_rounding`): output entry (i, k) ranges
  over [c - r, c + r], c = sum_j w_ij V_jk, r = sum_j h_ij |V_jk|.
* **scores -> weights** (:func:`weights_within_rounding`): from claimed scores S,
  scaled scores S' or masked scores S' + M, with the exercise's mask and scale as in the
  real computation (the claimed stage ``scores`` is scaled first: softmax(scale * S)).
  w_ij increases with s_ij and decreases with every other allowed s_ik, so over the box
  it ranges exactly over [w_ij(s_ij low, the others high), w_ij(s_ij high, the others
  low)], each end the core's own softmax of one score row.

Each step returns the claimed stage as rows of exact numbers, every claimed entry
replaced by the point of its range nearest to what was claimed; diagnosis judges the
claim against them by the claim's own rule.  The ranges are **per entry**: each entry's
ends are reached at its own corner of the box, so the entries of a row are not claimed
to follow from one common reading of the scores.  Whatever cannot be decided (a sign
arb cannot settle, a row with no allowed key, a claim too large) gives no range here:
no credit beyond the reading of the earlier claims exactly as written.

>>> from symbolic_attn.grading.exercise import parse_exercise
>>> from symbolic_attn.grading.view import StageView
>>> exercise = parse_exercise('''
... [attention]
... scores = [["0", "0"]]
... value = [[1], [0]]
... [[claims]]
... quantity = "scores"
... value = "[[0.5, 0]]"
... [[claims]]
... quantity = "weights"
... value = "[[0.615, 0.385]]"
... ''')
>>> scores, weights = exercise.claims
>>> follow = exercise.compute(scores=sympy.ImmutableMatrix([[sympy.Rational(1, 2), 0]]))
>>> view = StageView(exercise.compute())
>>> grid = weights_within_rounding(view, follow, "scores", [[sympy.Rational(1, 2), 0]], [scores], weights)
>>> grid  # 0.615 and 0.385 lie within the ranges of softmax(0.45..0.55, 0): themselves
[[123/200, 77/200]]
"""

import dataclasses

import sympy

from symbolic_attn.errors import SymbolicAttnError, UndecidedError
from symbolic_attn.exact.intervals import MAX_PRECISION, START_PRECISION, certified_sign, to_arb, working_precision
from symbolic_attn.model.compose import product
from symbolic_attn.model.masks import Mask

__all__ = ["half_units", "output_within_rounding", "weights_within_rounding", "BOX_SIZE"]

#: Claimed weight entries x keys of their rows for which the ends of the ranges are
#: computed (two score rows of the core per entry): a 64x64 claim stays as written only.
BOX_SIZE = 4_096


def half_units(view, path, claims) -> dict:
    """{position: half a unit of the last digit written} of every claimed decimal entry of a
    stage (an exact entry, 1/3, has none)."""
    halves = {}
    for claim in claims:
        selection = view.select(path, claim.row, claim.col)
        if len(selection.positions) == len(claim.claimed.elements):
            for position, element in zip(selection.positions, claim.claimed.elements):
                if element.kind == "decimal" and element.half_unit:
                    halves[position] = sympy.Rational(element.half_unit)
                else:
                    halves.pop(position, None)
    return halves


def output_within_rounding(view, overlay, weight_claims, claim, value):
    """The output as it follows from the claimed weights *as written*: each claimed
    weight stands for any value it rounds from (its half unit either way), so the
    output entry (i, k) may be anything in [c - r, c + r], c = sum_j w_ij V_jk and
    r = sum_j h_ij |V_jk| -- exact rationals, never floats.  Returns the output rows
    with each claimed entry at the point of that interval nearest to what it says
    (``overlay``: the weights with the claimed entries written in); None when nothing
    was rounded, or the claim is not of the output."""
    if claim.quantity != "output":
        return None
    halves = half_units(view, "weights", weight_claims)
    if not halves or not all(sympy.sympify(v).is_Rational for v in value):
        return None
    center = product(sympy.ImmutableMatrix(overlay), sympy.ImmutableMatrix(value)).tolist()
    rows, cols = len(center), value.cols
    radius = [[sum((halves.get((i + 1, j + 1), 0) * abs(value[j, k]) for j in range(value.rows)), sympy.S.Zero)
               for k in range(cols)] for i in range(rows)]
    selection = view.select("output", claim.row, claim.col)
    if len(selection.positions) != len(claim.claimed.elements):
        return None
    nearest = [row[:] for row in center]
    for (i, k), element in zip(selection.positions, claim.claimed.elements):
        c, r, said = center[i - 1][k - 1], radius[i - 1][k - 1], element.value
        if r and c.is_Rational and said.is_Rational:
            nearest[i - 1][k - 1] = min(max(said, c - r), c + r)
    return None if nearest == center else nearest


def weights_within_rounding(view, follow, path, overlay, score_claims, claim):
    """The weights as they follow from the claimed scores of ``path`` (``scores``,
    ``scaled`` or ``masked``) *as written*: each claimed score entry d stands for
    [d - u, d + u] (u its half unit; an exact entry is a point), and over that box each
    weight ranges exactly over [w_ij(s_ij low, the other allowed scores high),
    w_ij(s_ij high, the others low)] -- per entry: the ends of different entries are
    reached at different corners of the box.  Both ends are the core's softmax of one
    score row, with the exercise's mask (blocked keys weight 0, and a claimed -inf
    blocks its key) and scale as ``follow`` has them: ``follow`` is the core's result
    from the scores as written, ``overlay`` those scores as rows.

    Returns the weights as rows: each claimed entry at the point of its range nearest
    to what was claimed -- the claimed value itself when it lies in the range, decided
    by arb at rising precision (the other positions are NaN: the claim never reads
    them).  None when nothing was rounded, the claim is not of the weights, a row of
    the claim has no allowed key, the scale's sign cannot be told, or the claim has more
    than :data:`BOX_SIZE` entries x keys; the reading as written then decides alone."""
    options = follow.options
    if claim.quantity != "weights" or options.axis != "keys" or options.masking != "renormalize":
        return None
    halves = half_units(view, path, score_claims)
    selection = view.select("weights", claim.row, claim.col)
    positions, elements = selection.positions, claim.claimed.elements
    keys = len(overlay[0]) if overlay else 0
    if not halves or len(positions) != len(elements) or not positions or len(positions) * keys > BOX_SIZE:
        return None
    sign = certified_sign(follow.scale)
    allowed = follow.mask.allowed
    if sign is None or any(not any(allowed[i - 1]) for i, _ in positions):
        return None
    rows, grid = [], []  # per claimed entry: the score rows of its low and its high end
    for i, j in positions:
        down, up = [], []
        for k in range(keys):
            if allowed[i - 1][k]:
                s, h = overlay[i - 1][k], halves.get((i, k + 1), sympy.S.Zero)
                low, high = (s - h, s + h) if sign >= 0 else (s + h, s - h)  # the ends of scale * s
            else:
                low = high = sympy.S.Zero  # blocked: the mask removes the key, whatever was written
            down.append(low)
            up.append(high)
        rows.append([down[k] if k == j - 1 else up[k] for k in range(keys)])
        rows.append([up[k] if k == j - 1 else down[k] for k in range(keys)])
        grid += [allowed[i - 1], allowed[i - 1]]
    try:
        ends = _core_rows(follow, rows, grid)
        places = _where(ends, positions, elements)
    except (SymbolicAttnError, ArithmeticError):
        return None
    n = len(overlay)
    nearest = [[sympy.nan] * keys for _ in range(n)]
    for t, ((i, j), element, place) in enumerate(zip(positions, elements, places)):
        if place == "inside":
            nearest[i - 1][j - 1] = element.value
        else:  # the end nearest to the claim: exact, the core's closed form of that one row
            r = 2 * t + (place == "high")
            row = _core_rows(follow, [rows[r]], [grid[r]])
            nearest[i - 1][j - 1] = row.weights[0, j - 1]
    return nearest


def _core_rows(follow, rows, grid):
    """The core's result (as ``follow``: its scale, options, values) for given score rows."""
    return dataclasses.replace(follow, given_scores=sympy.ImmutableMatrix(rows), mask=Mask(tuple(grid)),
                               written_blocked=frozenset(), query=None, key=None, d_k=None)


def _where(ends, positions, elements) -> list:
    """Per claimed entry, "inside" its range, "low" (below it, or too close to its low end
    to tell) or "high": certified by arb balls of both ends, at rising precision."""
    places = [None] * len(positions)
    bits, final = START_PRECISION, {}
    while None in places and bits <= MAX_PRECISION:
        balls = ends.intervals("weights", bits)
        with working_precision(bits):
            for t, ((_, j), element) in enumerate(zip(positions, elements)):
                if places[t] is not None:
                    continue
                low, high = balls[2 * t][j - 1], balls[2 * t + 1][j - 1]
                try:
                    said = to_arb(element.value)
                except UndecidedError:
                    places[t] = "low"  # -inf, or no enclosure: judged against the low end (it fails)
                    continue
                if said < low:
                    places[t] = "low"
                elif said > high:
                    places[t] = "high"
                elif low <= said <= high:
                    places[t] = "inside"
                else:
                    final[t] = "high" if said > low else "low"
        bits *= 2
    return [place if place is not None else final.get(t, "low") for t, place in enumerate(places)]
