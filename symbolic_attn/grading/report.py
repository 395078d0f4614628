r"""Checking an exercise: one verdict per claim, as a text table or as JSON.

:func:`check_exercise` has the exercise run its computation once
(:meth:`~symbolic_attn.grading.exercise.Exercise.compute`), finds each claim's entries in
its trace with the one helper :func:`symbolic_attn.model.trace.select`, judges them by how
they are written (:mod:`symbolic_attn.grading.claims`), and asks
:mod:`symbolic_attn.grading.diagnose` which known mistake produced each wrong one.
Decimals shown beside the exact values are certified.  An exercise with ``[define]`` is
checked by :func:`symbolic_attn.grading.program_check.check_program` instead; both fill the
same outcomes (:mod:`symbolic_attn.grading.outcomes`), rendered here.

Verdicts are ``pass``, ``fail`` and ``undecided`` (a comparison that could not be settled
within its budget; never a pass).  A claim of several entries says which are wrong.

Claims are judged lazily: certified intervals of the stages, computed from the rational
scores, settle most of them; a closed form is built only when printed -- and printed only
when it is small (text and JSON alike; a larger one is left out with a note) -- or when a
claim sits so close to a rounding boundary that only the exact value can decide.

Everything that came from the file (source name, title, labels, notes) is shown with
control characters escaped (:func:`symbolic_attn.errors.shown`).

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
weights  FAIL     [1/3, 2/3, 0]  [0.33333, 0.66667, 0.00000]  exact       zeroed_not_renormalized (wrong at [1,1] [1,2])
output   pass     [1/3, 4/3]     [0.3333, 1.3333]             2 decimals  -
"""

import json

from symbolic_attn.errors import ExerciseError, SymbolicAttnError, shown
from symbolic_attn.grading.claims import judge_values, verdict_of
from symbolic_attn.grading.diagnose import MISTAKES, Diagnoser
from symbolic_attn.grading.outcomes import CheckReport, ClaimOutcome
from symbolic_attn.grading.view import StageView

__all__ = ["ClaimOutcome", "CheckReport", "check_exercise", "render_text", "render_json", "summary_line"]

_TEXT_WIDTH = 48  # longest closed form shown in the text table
_TEXT_SIZE = 64  # entries x softmax terms above which the text table does not build the closed form
_JSON_SIZE = 256  # the same bound for JSON: a bigger closed form is left out, with a note


def check_exercise(exercise, progress=None) -> CheckReport:
    """Judge every claim of a loaded exercise; diagnose the failing ones.

    ``progress`` (optional) is called with what is being computed, such as
    ``"judging claim 3 ('a_32')"`` (the command line names it when its time runs out).
    """
    progress = progress or (lambda text: None)
    if exercise.definitions:  # claims on any stage of named definitions
        from symbolic_attn.grading.program_check import check_program

        try:
            return check_program(exercise, progress)
        except ExerciseError:
            raise
        except SymbolicAttnError as error:
            raise ExerciseError(f"{exercise.source}: define: {shown(' '.join(str(error).split()), 300)}") from None
    try:
        progress("computing the attention stages")
        return _check(exercise, exercise.compute(), progress)
    except ExerciseError:
        raise
    except SymbolicAttnError as error:
        raise ExerciseError(f"{exercise.source}: attention: {shown(' '.join(str(error).split()), 300)}") from None


def _check(exercise, result, progress) -> CheckReport:
    view = StageView(result)
    diagnoser = Diagnoser(exercise, result)
    decimals = {}
    m = result.scores.cols
    outcomes = []
    for claim in exercise.claims:
        named = f"claim {claim.index}" + (f" ({shown(claim.label, 40)!r})" if claim.label else "")
        progress(f"judging {named}")
        selection = view.select(claim.quantity, claim.row, claim.col)
        balls = view.balls(claim.quantity, selection.positions)
        verdicts = judge_values(selection.entries, claim.claimed, claim.rule, balls) if exercise.rounded is None else \
            exercise.rounded.judge_values(claim.quantity, claim.row, claim.col, selection.entries, claim.claimed,
                                          claim.rule, balls)  # inputs printed rounded: grading.rounded_inputs
        shape = selection.shape
        if shape is not None and (claim.claimed.shape is None or len(claim.claimed.shape) < len(shape)):
            shape = claim.claimed.shape  # show as claimed: [a, b, c] for a one-row matrix, 2 for [[2]]
        places = max([e.decimals for e in claim.claimed.elements if e.decimals is not None], default=3) + 2
        key = (claim.quantity, places)
        if key not in decimals:
            decimals[key] = result.trace.decimals(claim.quantity, places)
        grid = decimals[key]
        terms = m if claim.quantity in ("weights", "output") else 1
        outcome = ClaimOutcome(
            claim, verdict_of(verdicts), shape, "; ".join(dict.fromkeys(v.rule for v in verdicts)),
            [grid[i - 1][j - 1] or "-" for i, j in selection.positions], selection,
            size=len(selection.positions) * terms, notes=[v.note for v in verdicts if v.note],
            wrong=[p for p, v in zip(selection.positions, verdicts) if v.state == "fail"],
            undecided=[p for p, v in zip(selection.positions, verdicts) if v.state == "undecided"],
        )
        if outcome.verdict == "fail":
            progress(f"diagnosing {named}")
            outcome.details = diagnoser.details(claim)
            outcome.diagnosis = sorted({mistake for mistake, _ in outcome.details}, key=list(MISTAKES).index)
        outcomes.append(outcome)
    return CheckReport(exercise.source, exercise.title, outcomes)


# ----------------------------------------------------------------- rendering


def render_json(report: CheckReport) -> str:
    """The schema: claims (label, quantity, row, col, claimed, exact, exact_latex, decimal,
    rule, verdict, diagnosis, wrong_entries, undecided_entries, note), passed, failed,
    undecided.  ``exact`` and ``exact_latex`` are null for a closed form over the size
    bound (``note`` says so).  Keys sorted: byte-stable output."""
    claims = []
    for o in report.outcomes:
        c = o.claim
        small = o.size <= _JSON_SIZE
        note = "; ".join(shown(n, 200) for n in o.notes)
        if not small:
            note = (note + "; " if note else "") + (
                f"closed form not printed: about {o.size} terms, over the bound of {_JSON_SIZE}")
        claims.append({
            "label": c.name, "quantity": c.quantity, "row": c.row, "col": c.col,
            "claimed": c.claimed.text, "exact": o.exact_text() if small else None,
            "exact_latex": o.exact_latex() if small else None,
            "decimal": o.decimal_text(), "rule": o.rule, "verdict": o.verdict, "diagnosis": o.diagnosis,
            "wrong_entries": [list(p) for p in o.wrong], "undecided_entries": [list(p) for p in o.undecided],
            "note": note,
        })
    summary = {"claims": claims, "passed": report.passed, "failed": report.failed, "undecided": report.undecided}
    return json.dumps(summary, indent=2, sort_keys=True) + "\n"


def summary_line(report: CheckReport) -> str:
    """``"file.toml: 3 passed, 1 failed"`` (``, 2 undecided`` when any), then the title."""
    line = f"{shown(report.source, 200)}: {report.passed} passed, {report.failed} failed"
    if report.undecided:
        line += f", {report.undecided} undecided"
    if report.title:
        line += f" ({shown(report.title, 80)})"
    return line


def render_text(report: CheckReport) -> str:
    """One row per claim: label, verdict, exact value, certified decimals, rule, diagnosis."""
    header = ("label", "verdict", "exact", "decimal", "rule", "diagnosis")
    rows = []
    for o in report.outcomes:
        diagnosis = ", ".join(o.diagnosis) if o.diagnosis else "-"
        where = o.wrong_text()
        if where:
            diagnosis += f" ({where})"
        if o.notes:
            diagnosis += " (" + shown(o.notes[0], 60) + ")"
        exact = _clip(o.exact_text()) if o.size <= _TEXT_SIZE else "(large: not printed)"
        verdict = {"pass": "pass", "fail": "FAIL", "undecided": "UNDECIDED"}[o.verdict]
        rows.append((o.claim.name, verdict, exact, _clip(o.decimal_text()), o.rule, diagnosis))
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header) - 1)]
    lines = [summary_line(report)]
    for row in [header, tuple("-" * len(h) for h in header)] + rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths)] + [row[-1]]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _clip(text: str) -> str:
    return text if len(text) <= _TEXT_WIDTH else text[: _TEXT_WIDTH - 3] + "..."
