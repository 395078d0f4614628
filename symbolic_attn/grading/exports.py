r"""Grade files: ``grades.csv``, ``STUDENT.json``, Gradescope's and PrairieLearn's ``results.json``.

Scores are exact fractions until here; the files carry them as numbers rounded to 4
decimals (an integer when whole), and ``STUDENT.json`` also as exact fractions
(``score_exact``, ``points_exact``: ``"26/3"``).  Text from a student's file (their id, claimed values,
problems) is escaped: control characters are removed, invisible ones (U+200B...) shown as
``\u200b``, and a CSV cell that a spreadsheet
would run as a formula (starting with ``= + - @``, a tab or a carriage return) gets a
leading ``'``.  JSON is written with sorted keys, 2-space indent and a final newline.

Gradescope (autograder ``results.json``): ``score``, ``output``, ``visibility``,
``tests[]`` with ``name``, ``number``, ``score``, ``max_score``, ``output``, ``visibility``;
a submission that is not gradable has one visible test ``Not gradable``, score 0 of all the
points, whose ``output`` says why.
PrairieLearn (external grader ``results.json``): ``gradable``, ``score`` in [0, 1] (the exact
ratio of points as the nearest float: 11/12 is 0.9166666666666666),
``message``, ``format_errors`` (a list of messages; non-empty when not gradable), ``tests[]``
with ``name``, ``points``, ``max_points``, ``message``.

>>> csv_cell("=1+2"), csv_cell("-x"), csv_cell("ann\x1b[2J"), csv_cell("0.5")
("'=1+2", "'-x", 'ann[2J', '0.5')
>>> print(export_text("a\u200b\u200f"))
a\u200b\u200f
"""

import csv
import io
import json
import re
from fractions import Fraction

from symbolic_attn.grading.feedback import points_text

__all__ = ["export_text", "csv_cell", "number", "grades_csv", "student_row", "student_json", "gradescope_json", "prairielearn_json",
           "file_name"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Invisible characters (zero-width spaces and joiners, direction marks and overrides) are
# shown as escapes: removed, "a\u200b" would read as a name that is plainly "a".
_INVISIBLE = re.compile(r"[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_MAX_TEXT = 4_000
_PROBLEMS = 100  # problems listed in STUDENT.json; a last entry says how many more


def export_text(text, keep_newlines: bool = False) -> str:
    """Text for a grade file (CSV, JSON, Gradescope/PrairieLearn): control characters removed,
    invisible ones (bidi overrides, zero-width) escaped, cut short."""
    text = "" if text is None else str(text)
    if not keep_newlines:
        text = text.replace("\n", " ").replace("\t", " ")
    text = _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", _CONTROL.sub("", text))
    return text if len(text) <= _MAX_TEXT else text[:_MAX_TEXT - 3] + "..."


def csv_cell(text) -> str:
    """A CSV cell a spreadsheet shows as text, never runs as a formula."""
    text = export_text(text)
    return "'" + text if text.lstrip().startswith(_FORMULA_START) else text  # " =1" runs too


def number(value: Fraction):
    """Points as a JSON number: an int when whole, else rounded to 4 decimals."""
    if value.denominator == 1:
        return value.numerator
    return round(float(value), 4)


def file_name(student: str) -> str:
    """A safe file name for a student id (no separators, no leading dot)."""
    name = re.sub(r"[^A-Za-z0-9._@+-]", "_", export_text(student))[:120] or "_"
    return "_" + name[1:] if name.startswith(".") else name


def grades_csv(results, key) -> str:
    """``student, score, max_score, gradable, reason``, then one column of points per
    question name; ``gradable`` is ``true`` or ``false``, ``reason`` empty when gradable."""
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(["student", "score", "max_score", "gradable", "reason"] + [csv_cell(q.name) for q in key.questions])
    for result in results:
        writer.writerow(student_row(result, key.questions))
    return stream.getvalue()


def student_row(result, questions) -> list:
    """One student's cells of ``grades.csv``."""
    points = {q.name: points_text(q.points) for q in result.questions}
    return ([csv_cell(result.student), points_text(result.score), points_text(result.max_score),
             "true" if result.gradable else "false", "" if result.gradable else csv_cell(result.reason)]
            + [points.get(q.name, "0") for q in questions])


def _dump(data) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def student_json(result) -> str:
    """One student's grade: the issue's keys, plus ``reason`` and the unread ``problems``."""
    return _dump({
        "student": export_text(result.student),
        "score": number(result.score),
        "max_score": number(result.max_score),
        # The exact points as fractions ("26/3"): the numbers above are rounded to 4 decimals.
        "score_exact": str(result.score),
        "max_score_exact": str(result.max_score),
        "gradable": result.gradable,
        "reason": export_text(result.reason),
        "problems": [{"line": line, "message": export_text(message)} for line, message in result.problems[:_PROBLEMS]]
        + ([{"line": 0, "message": f"{len(result.problems) - _PROBLEMS} more problems are not listed"}]
           if len(result.problems) > _PROBLEMS else []),
        # Everything read from the submission (every statement, up to the reader's own
        # limit), so that a grader sees what was taken.
        "read": [{"name": export_text(name), "text": export_text(text), "line": line}
                 for name, text, line in getattr(result, "read", [])],
        "questions": [q.as_dict() for q in result.questions],
    })


def _summary(result) -> str:
    if not result.gradable:
        return f"Not graded: {export_text(result.reason)}"
    return f"{points_text(result.score)} of {points_text(result.max_score)} points."


def gradescope_json(result) -> str:
    """Gradescope's autograder ``results.json`` for one student."""
    tests = []
    for q in result.questions:
        if q.steps is None:
            tests.append({"name": q.name, "number": str(len(tests) + 1), "score": number(q.points),
                          "max_score": number(q.max_points), "output": export_text(f"{q.verdict}: {q.feedback}"),
                          "visibility": "visible"})
        else:
            tests += _step_tests(q, len(tests))
    if not result.gradable:
        # The student sees why nothing was graded: one visible test, scored 0 of all the points,
        # in place of the questions' (all 0, and saying only "missing").
        tests = [{"name": "Not gradable", "number": "1", "score": 0, "max_score": number(result.max_score),
                  "output": export_text(f"Your submission could not be graded: {result.reason}"),
                  "visibility": "visible", "status": "failed"}]
    return _dump({"score": number(result.score), "output": _summary(result), "visibility": "visible",
                  "stdout_visibility": "hidden", "tests": tests})


def _step_tests(question, before: int) -> list:
    """One Gradescope test per step of a derivation question: each step its share of the
    points, earned by the steps the question's points count (the proved ones before the
    first that is not), so that the tests add up to the question's points."""
    steps = question.steps or [{}]
    share = question.max_points / len(steps)
    earned = question.points / share if share else 0
    tests = []
    for k, step in enumerate(steps):
        line = step.get("line")
        name = f"{question.name}: step {k + 1}" + (f" (line {line})" if line else "")
        output = f"{step.get('verdict', question.verdict)}: {step.get('reason', question.feedback)}"
        if k == 0 and question.feedback:
            output = f"{question.verdict}: {question.feedback}\n{output}"
        tests.append({"name": export_text(name), "number": str(before + k + 1),
                      "score": number(share if k < earned else Fraction(0)), "max_score": number(share),
                      "output": export_text(output, keep_newlines=True), "visibility": "visible"})
    return tests


def _format_errors(result) -> list:
    """What PrairieLearn shows as format errors: why nothing was graded, or every line of a
    derivation the reader could not read (the student rewrites it; no penalty)."""
    if not result.gradable:
        return [export_text(result.reason)]
    return [export_text(f"{q.name}: {step['reason']}") for q in result.questions for step in (q.steps or [])
            if step.get("verdict") == "unreadable"]


def prairielearn_json(result) -> str:
    """PrairieLearn's external-grader ``results.json``: score in [0, 1]; an unreadable
    submission is ``gradable: false`` with its ``format_errors`` (invalid, no penalty)."""
    score = result.score / result.max_score if result.max_score else Fraction(0)
    tests = [{"name": q.name, "points": number(q.points), "max_points": number(q.max_points),
              "message": export_text(f"{q.verdict}: {q.feedback}")} for q in result.questions]
    errors = _format_errors(result)
    gradable = result.gradable and not errors
    return _dump({"gradable": gradable, "score": float(score) if gradable else 0.0,
                  "message": _summary(result), "format_errors": errors, "tests": tests if gradable else []})
