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
from symbolic_attn.render.columns import clip, display_width, fit, pad, total, wrap

__all__ = ["Verdict", "ClaimOutcome", "CheckReport"]

_MIN_WIDTH = 40  # the narrowest table laid out (a narrower terminal wraps it)
_HEADER = ("label", "verdict", "claimed", "exact", "decimal", "rule")
_LABEL_FLOOR, _RULE_FLOOR = 12, 10  # the narrowest a label or rule is cut to (shown in full below)
_INDENT = "    "  # the lines below a claim's row
_FULL_TEXT = 600  # a cell cut short is shown in full below its row, up to this length
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

    def as_dict(self, exercise=None) -> dict:
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
            "diagnosis": self.diagnosis, "diagnosis_sentences": self.sentences(exercise),
            "wrong_entries": [list(p) for p in self.wrong], "undecided_entries": [list(p) for p in self.undecided],
            "note": note,
        }

    def row(self) -> tuple:
        """The text table's cells, unclipped: label, verdict, claimed, exact, decimal, rule."""
        exact = self.exact_text() if self.size <= _TEXT_SIZE else "(large: not printed)"
        return (shown(self.claim.name, 200), Verdict(self.verdict).shouted, shown(self.claim.claimed.text, _FULL_TEXT),
                exact, self.decimal_text(), self.rule)

    def sentences(self, exercise=None) -> list:
        """The catalogue's remedy sentence of each diagnosis (the exercise's own numbers
        filled in, :func:`symbolic_attn.grading.feedback.sentence`), in the catalogue's order."""
        from symbolic_attn.grading.feedback import sentence

        details = dict(reversed(self.details)) if self.details else {}
        return [sentence(mistake, exercise, details.get(mistake, "")) for mistake in self.diagnosis]

    def detail_lines(self, exercise=None) -> list:
        """What the text table says below a claim's row: which entries are wrong, the
        notes, the diagnosis as sentences (or that no known mistake reproduces it)."""
        lines = []
        where = self.wrong_text()
        if where:
            lines.append(where)
        lines += [shown(note, 200) for note in self.notes]
        lines += self.sentences(exercise)
        if self.verdict == Verdict.FAIL and not self.diagnosis:
            lines.append("No known mistake reproduces this value: recompute it.")
        return lines


@dataclass
class CheckReport:
    """All outcomes of one exercise file."""

    source: str
    title: str
    outcomes: list
    #: The exercise judged (its scale and d_k fill in the diagnosis sentences); optional.
    exercise: object = field(default=None, repr=False, compare=False)

    @property
    def passed(self) -> int:
        return sum(o.verdict == "pass" for o in self.outcomes)

    @property
    def failed(self) -> int:
        return sum(o.verdict == "fail" for o in self.outcomes)

    @property
    def undecided(self) -> int:
        return sum(o.verdict == "undecided" for o in self.outcomes)

    def summary(self, width: int | None = None) -> str:
        """``"file.toml: 3 passed, 1 failed"`` (``, 2 undecided`` when any), then the title
        (cut short so that the line fits ``width`` columns, when given)."""
        line = f"{shown(self.source, 200)}: {self.passed} passed, {self.failed} failed"
        if self.undecided:
            line += f", {self.undecided} undecided"
        if self.title:
            title = shown(self.title, 80)
            room = display_width(title) if width is None else width - display_width(line) - 3  # " (" and ")"
            if display_width(title) > room:  # never cut below 12 characters: a long file name overflows instead
                title = shown(self.title, max(room - 3, 12))
            line += f" ({title})"
        return line

    def text(self, width: int = 80) -> str:
        """The summary line, then one row per claim within ``width`` columns.

        When the values fit, a table: label, verdict, claimed, exact, decimal, rule.
        Otherwise each row is label, verdict and rule, with the claimed value, the exact one
        and its decimals on aligned lines below it.  Then, indented: which entries are
        wrong, the notes, and the diagnosis as the catalogue's sentences.  A label or rule
        cut short is shown in full below its row.

        >>> from types import SimpleNamespace as NS
        >>> claim = NS(name="a_12", claimed=NS(text="0.5"))
        >>> picked = NS(entries=[lambda: sympy.Rational(1, 3)], positions=[(1, 2)])
        >>> wrong = ClaimOutcome(claim, Verdict.FAIL, None, "1 decimal", ["0.33"], picked, diagnosis=["unscaled"])
        >>> print(CheckReport("ex.toml", "", [wrong]).text(width=60), end="")
        ex.toml: 0 passed, 1 failed
        label  verdict  claimed  exact  decimal  rule
        -----  -------  -------  -----  -------  ---------
        a_12   FAIL     0.5      1/3    0.33     1 decimal
            These values come from the unscaled scores: divide the
            scores by √d_k before the softmax.
        >>> print(CheckReport("ex.toml", "", [wrong]).text(width=40), end="")
        ex.toml: 0 passed, 1 failed
        label  verdict  rule
        -----  -------  ---------
        a_12   FAIL     1 decimal
            claimed  0.5
            exact    1/3
            decimal  0.33
            These values come from the unscaled
            scores: divide the scores by √d_k
            before the softmax.
        """
        width = max(int(width), _MIN_WIDTH)
        rows = [outcome.row() for outcome in self.outcomes]
        natural = [max(display_width(r[i]) for r in rows + [_HEADER]) for i in range(len(_HEADER))]
        table = fit(natural, width, floors=[_LABEL_FLOOR, *natural[1:5], _RULE_FLOOR])
        if total(table) <= width:
            shown_columns, widths = range(len(_HEADER)), table
        else:  # the values go below the rows
            shown_columns = (0, 1, 5)
            widths = fit([natural[i] for i in shown_columns], width, floors=[_LABEL_FLOOR, natural[1], _RULE_FLOOR])
        header = [_HEADER[i] for i in shown_columns]
        lines = [self.summary(width)]
        for cells in [header, ["-" * w for w in widths]]:
            lines.append("  ".join(pad(cell, w) for cell, w in zip(cells, widths)).rstrip())
        for outcome, row in zip(self.outcomes, rows):
            cells = [row[i] for i in shown_columns]
            lines.append("  ".join(pad(clip(cell, w), w) for cell, w in zip(cells, widths)).rstrip())
            below = [(name, cell) for name, cell, w in zip(header, cells, widths) if display_width(cell) > w]
            if len(shown_columns) < len(_HEADER):
                below[1:1] = [(_HEADER[i], row[i]) for i in (2, 3, 4)]
            for name, cell in below:
                first = f"{_INDENT}{name:<8} "
                lines += wrap(cell[:_FULL_TEXT], width, first, " " * len(first))
            for text in outcome.detail_lines(self.exercise):
                lines += wrap(text, width, _INDENT, _INDENT)
        return "\n".join(lines) + "\n"

    def markdown(self) -> str:
        """The summary, then a Markdown table: label, verdict, claimed, exact, decimal, rule,
        diagnosis (the catalogue's sentences).  Cells are escaped (``|``, backticks, HTML).

        >>> from types import SimpleNamespace as NS
        >>> picked = NS(entries=[lambda: sympy.Rational(1, 3)], positions=[(1, 2)])
        >>> right = ClaimOutcome(NS(name="a|b", claimed=NS(text="1/3")), Verdict.PASS, None, "exact", ["0.333"], picked)
        >>> print(CheckReport("ex.toml", "", [right]).markdown(), end="")
        **ex.toml: 1 passed, 0 failed**
        <BLANKLINE>
        | label | verdict | claimed | exact | decimal | rule | diagnosis |
        |---|---|---|---|---|---|---|
        | a\\|b | pass | `1/3` | `1/3` | 0.333 | exact |  |
        """
        lines = [f"**{_md(self.summary())}**", "",
                 "| label | verdict | claimed | exact | decimal | rule | diagnosis |", "|---|---|---|---|---|---|---|"]
        for outcome in self.outcomes:
            label, verdict, claimed, exact, decimal, rule = outcome.row()
            said = " ".join(outcome.detail_lines(self.exercise))
            cells = [_md(label), verdict, _code(claimed), _code(exact), _md(decimal), _md(rule), _md(said)]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    def json(self) -> str:
        """The schema: claims (label, quantity, row, col, claimed, exact, exact_latex, decimal,
        rule, verdict, diagnosis, diagnosis_sentences, wrong_entries, undecided_entries,
        note), passed, failed, undecided.  ``diagnosis_sentences`` holds the catalogue's
        remedy of each ``diagnosis`` id, in the same order.  ``exact`` and ``exact_latex`` are null for a closed form over the size
        bound (``note`` says so).  Keys sorted: byte-stable output."""
        summary = {"claims": [outcome.as_dict(self.exercise) for outcome in self.outcomes],
                   "passed": self.passed, "failed": self.failed, "undecided": self.undecided}
        return json.dumps(summary, indent=2, sort_keys=True) + "\n"


def _nested(items, shape, show) -> str:
    if shape is None:
        return show(items[0])
    if len(shape) == 1:
        return "[" + ", ".join(show(x) for x in items) + "]"
    rows = [items[i * shape[1]:(i + 1) * shape[1]] for i in range(shape[0])]
    return "[" + ", ".join("[" + ", ".join(show(x) for x in row) + "]" for row in rows) + "]"


def _md(text: str) -> str:
    """Text for a Markdown table cell: no pipe, backtick, HTML or emphasis survives."""
    for char in "\\|`*_[]<>":
        text = text.replace(char, "\\" + char)
    return text


def _code(text: str) -> str:
    """A value as inline code in a table cell (a pipe escaped, backticks doubled around)."""
    text = text.replace("|", "\\|")
    return f"``{text}``" if "`" in text else f"`{text}`"
