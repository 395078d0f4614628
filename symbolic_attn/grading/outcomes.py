r"""The verdicts of a check, as enums and plain data that print themselves.

:class:`Verdict` is the closed set of verdicts: a claimed entry or claim is ``pass``,
``fail`` or ``undecided`` (a comparison that could not be settled within its budget; never a
pass); a graded answer may also be ``carried_forward``, ``missing`` or ``unreadable``.  It is
a string enum: ``Verdict.PASS == "pass"``, and it is written as ``pass`` in JSON and CSV.

A :class:`ClaimOutcome` is the verdict on one claim, a :class:`CheckReport` those of one
exercise file; both are filled by the one check pipeline
(:class:`symbolic_attn.grading.pipeline.Checker`) and print themselves: a table row and a
JSON object per outcome, the whole table (:meth:`CheckReport.text`) or JSON document
(:meth:`CheckReport.json`) per report.  A graded student prints itself too
(:class:`symbolic_attn.grading.batch.StudentResult`: ``json()``, ``csv_row()``).

An outcome keeps its claim's entries as functions (:attr:`ClaimOutcome.selection`): the
closed forms are built only when first printed.

>>> from types import SimpleNamespace
>>> entries = SimpleNamespace(entries=[lambda: 1, lambda: 2], positions=[(1, 1), (1, 2)])
>>> outcome = ClaimOutcome(None, Verdict.PASS, (2,), "exact", ["1.0", "2.0"], entries)
>>> outcome.exact_text(), outcome.decimal_text()
('[1, 2]', '[1.0, 2.0]')
>>> CheckReport("row.toml", "", [outcome]).passed
1
>>> Verdict("carried_forward") is Verdict.CARRIED_FORWARD, f"{Verdict.FAIL}"
(True, 'fail')
"""

import json
from dataclasses import dataclass, field

from enum import StrEnum

import sympy
from sympy.printing.str import sstr

from symbolic_attn.errors import shown

__all__ = ["Verdict", "ClaimOutcome", "CheckReport"]

_TEXT_WIDTH = 48  # longest closed form shown in the text table
_TEXT_SIZE = 64  # entries x softmax terms above which the text table does not build the closed form
_JSON_SIZE = 256  # the same bound for JSON: a bigger closed form is left out, with a note


class Verdict(StrEnum):
    """Every verdict there is (a claim's or a graded answer's)."""

    PASS = "pass"
    FAIL = "fail"
    UNDECIDED = "undecided"
    CARRIED_FORWARD = "carried_forward"  # wrong, but follows from the student's own earlier answers
    MISSING = "missing"  # no answer to the question
    UNREADABLE = "unreadable"  # an answer that could not be read

    @property
    def shouted(self) -> str:
        """As the text table writes it: a failure stands out (``FAIL``, ``UNDECIDED``)."""
        return self.value if self is Verdict.PASS else self.value.upper()


@dataclass
class ClaimOutcome:
    """The verdict on one claim, with the exact values it was judged against.

    ``selection`` holds the claim's entries as functions (built on first use: a claim
    settled by intervals needs no closed form until one is printed) and their 1-based
    positions; ``wrong`` and ``undecided`` are the positions of failing/undecided entries.
    """

    claim: object
    verdict: Verdict
    shape: tuple | None
    rule: str
    decimals: list
    selection: object
    size: int = 0  # a cheap bound on the size of the closed forms (entries x terms)
    diagnosis: list = field(default_factory=list)
    details: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    wrong: list = field(default_factory=list)
    undecided: list = field(default_factory=list)

    @property
    def values(self) -> list:
        if "_values" not in self.__dict__:
            self.__dict__["_values"] = [entry() for entry in self.selection.entries]
        return self.__dict__["_values"]

    def exact_text(self) -> str:
        # -oo (a blocked masked score) is written -inf, as the claim grammar reads it.
        return _nested(self.values, self.shape,
                       lambda v: "-inf" if v is sympy.S.NegativeInfinity else sstr(v, order="none"))

    def exact_latex(self) -> str:
        if self.shape is None:
            return sympy.latex(self.values[0], order="none")
        width = self.shape[-1]
        rows = [self.values[i:i + width] for i in range(0, len(self.values), width)]
        return sympy.latex(sympy.Matrix(rows), order="none")

    def decimal_text(self) -> str:
        return _nested(self.decimals, self.shape, lambda d: d)

    def wrong_text(self) -> str:
        """``"wrong at [1,2] [3,3]"`` for a claim of several entries of which some (not all)
        are wrong or undecided, else ``""`` (JSON lists the positions always)."""
        total = len(self.selection.positions)
        if total <= 1 or not (self.wrong or self.undecided) or len(self.wrong) == total:
            return ""
        parts = []
        for word, positions in (("wrong", self.wrong), ("undecided", self.undecided)):
            if positions:
                shown = " ".join(f"[{i},{j}]" for i, j in positions[:8]) + (" ..." if len(positions) > 8 else "")
                parts.append(f"{word} at {shown}")
        return "; ".join(parts)

    def as_dict(self) -> dict:
        """The JSON object of this claim (see :meth:`CheckReport.json` for the schema)."""
        c = self.claim
        small = self.size <= _JSON_SIZE
        note = "; ".join(shown(n, 200) for n in self.notes)
        if not small:
            note = (note + "; " if note else "") + (
                f"closed form not printed: about {self.size} terms, over the bound of {_JSON_SIZE}")
        return {
            "label": c.name, "quantity": c.quantity, "row": c.row, "col": c.col,
            "claimed": c.claimed.text, "exact": self.exact_text() if small else None,
            "exact_latex": self.exact_latex() if small else None,
            "decimal": self.decimal_text(), "rule": self.rule, "verdict": self.verdict.value,
            "diagnosis": self.diagnosis,
            "wrong_entries": [list(p) for p in self.wrong], "undecided_entries": [list(p) for p in self.undecided],
            "note": note,
        }

    def row(self) -> tuple:
        """The text table's cells: label, verdict, exact value, certified decimals, rule, diagnosis."""
        diagnosis = ", ".join(self.diagnosis) if self.diagnosis else "-"
        where = self.wrong_text()
        if where:
            diagnosis += f" ({where})"
        if self.notes:
            diagnosis += " (" + shown(self.notes[0], 60) + ")"
        exact = _clip(self.exact_text()) if self.size <= _TEXT_SIZE else "(large: not printed)"
        return (self.claim.name, Verdict(self.verdict).shouted, exact, _clip(self.decimal_text()), self.rule, diagnosis)


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

    @property
    def undecided(self) -> int:
        return sum(o.verdict == "undecided" for o in self.outcomes)

    def summary(self) -> str:
        """``"file.toml: 3 passed, 1 failed"`` (``, 2 undecided`` when any), then the title."""
        line = f"{shown(self.source, 200)}: {self.passed} passed, {self.failed} failed"
        if self.undecided:
            line += f", {self.undecided} undecided"
        if self.title:
            line += f" ({shown(self.title, 80)})"
        return line

    def text(self) -> str:
        """The summary line, then one table row per claim."""
        header = ("label", "verdict", "exact", "decimal", "rule", "diagnosis")
        rows = [outcome.row() for outcome in self.outcomes]
        widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header) - 1)]
        lines = [self.summary()]
        for row in [header, tuple("-" * len(h) for h in header)] + rows:
            cells = [cell.ljust(width) for cell, width in zip(row, widths)] + [row[-1]]
            lines.append("  ".join(cells).rstrip())
        return "\n".join(lines) + "\n"

    def json(self) -> str:
        """The schema: claims (label, quantity, row, col, claimed, exact, exact_latex, decimal,
        rule, verdict, diagnosis, wrong_entries, undecided_entries, note), passed, failed,
        undecided.  ``exact`` and ``exact_latex`` are null for a closed form over the size
        bound (``note`` says so).  Keys sorted: byte-stable output."""
        summary = {"claims": [outcome.as_dict() for outcome in self.outcomes],
                   "passed": self.passed, "failed": self.failed, "undecided": self.undecided}
        return json.dumps(summary, indent=2, sort_keys=True) + "\n"


def _nested(items, shape, show) -> str:
    if shape is None:
        return show(items[0])
    if len(shape) == 1:
        return "[" + ", ".join(show(x) for x in items) + "]"
    rows = [items[i * shape[1]:(i + 1) * shape[1]] for i in range(shape[0])]
    return "[" + ", ".join("[" + ", ".join(show(x) for x in row) + "]" for row in rows) + "]"


def _clip(text: str) -> str:
    return text if len(text) <= _TEXT_WIDTH else text[: _TEXT_WIDTH - 3] + "..."
