r"""Checking an exercise: one verdict per claim, as a text table or as JSON.

:func:`check_exercise` runs the one check pipeline
(:class:`symbolic_attn.grading.pipeline.Checker`: compute the exercise's trace once, select
each claim's entries with :func:`symbolic_attn.model.trace.select`, judge them by how they
are written (:mod:`symbolic_attn.grading.claims`), diagnose each wrong one), for an
``[attention]`` exercise and one with ``[define]`` alike.  Decimals shown beside the exact
values are certified.  The outcomes print themselves (:mod:`symbolic_attn.grading.outcomes`);
the functions here are the command line's names for that.

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
>>> [(str(o.verdict), o.diagnosis) for o in report.outcomes]
[('fail', ['zeroed_not_renormalized']), ('pass', [])]
>>> print(render_text(report), end="")  # 80 columns: the values below each row
row.toml: 1 passed, 1 failed
label    verdict  rule
-------  -------  ----------
weights  FAIL     exact
    claimed  [1/6, 1/3, 0]
    exact    [1/3, 2/3, 0]
    decimal  [0.33333, 0.66667, 0.00000]
    wrong at [1,1] [1,2]
    The softmax was taken over all keys and the blocked weights zeroed
    afterwards: leave blocked keys out of the softmax, so that the allowed
    weights of each row sum to 1.
output   pass     2 decimals
    claimed  [0.33, 1.33]
    exact    [1/3, 4/3]
    decimal  [0.3333, 1.3333]
>>> print(render_text(report, width=100), end="")  # wide enough for a table
row.toml: 1 passed, 1 failed
label    verdict  claimed        exact          decimal                      rule
-------  -------  -------------  -------------  ---------------------------  ----------
weights  FAIL     [1/6, 1/3, 0]  [1/3, 2/3, 0]  [0.33333, 0.66667, 0.00000]  exact
    wrong at [1,1] [1,2]
    The softmax was taken over all keys and the blocked weights zeroed afterwards: leave blocked
    keys out of the softmax, so that the allowed weights of each row sum to 1.
output   pass     [0.33, 1.33]   [1/3, 4/3]     [0.3333, 1.3333]             2 decimals
"""

from symbolic_attn.grading.outcomes import CheckReport, ClaimOutcome
from symbolic_attn.grading.pipeline import Checker

__all__ = ["ClaimOutcome", "CheckReport", "check_exercise", "render_text", "render_json", "summary_line"]


def check_exercise(exercise, progress=None) -> CheckReport:
    """Judge every claim of a loaded exercise; diagnose the failing ones (the one pipeline,
    :class:`~symbolic_attn.grading.pipeline.Checker`, for every kind of exercise).

    ``progress`` (optional) is called with what is being computed, such as
    ``"judging claim 3 ('a_32')"`` (the command line names it when its time runs out).
    """
    checker = Checker(exercise, progress)
    report = checker.check()
    report.exercise = exercise  # its numbers fill in the diagnosis sentences
    return report


def render_json(report: CheckReport) -> str:
    """The report as JSON (:meth:`CheckReport.json <symbolic_attn.grading.outcomes.CheckReport.json>`)."""
    return report.json()


def summary_line(report: CheckReport) -> str:
    """``"file.toml: 3 passed, 1 failed"`` (``, 2 undecided`` when any), then the title."""
    return report.summary()


def render_text(report: CheckReport, width: int = 80) -> str:
    """One row per claim within ``width`` columns (label, verdict, claimed, exact value,
    certified decimals, rule), the diagnosis as sentences below it."""
    return report.text(width)
