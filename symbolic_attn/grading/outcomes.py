"""The verdicts of a check: one :class:`ClaimOutcome` per claim, gathered in a :class:`CheckReport`.

Plain data, shared by the two ways of checking an exercise: the attention claims of
:func:`symbolic_attn.grading.report.check_exercise` and the claims on named definitions of
:func:`symbolic_attn.grading.program_check.check_program`.  Both fill the same outcomes, so
the one renderer (:mod:`symbolic_attn.grading.report`: a text table or JSON) prints either.

An outcome keeps its claim's entries as functions (:attr:`ClaimOutcome.selection`): the
closed forms are built only when first printed.

>>> from types import SimpleNamespace
>>> entries = SimpleNamespace(entries=[lambda: 1, lambda: 2], positions=[(1, 1), (1, 2)])
>>> outcome = ClaimOutcome(None, "pass", (2,), "exact", ["1.0", "2.0"], entries)
>>> outcome.exact_text(), outcome.decimal_text()
('[1, 2]', '[1.0, 2.0]')
>>> CheckReport("row.toml", "", [outcome]).passed
1
"""

from dataclasses import dataclass, field

import sympy
from sympy.printing.str import sstr

__all__ = ["ClaimOutcome", "CheckReport"]


@dataclass
class ClaimOutcome:
    """The verdict on one claim, with the exact values it was judged against.

    ``selection`` holds the claim's entries as functions (built on first use: a claim
    settled by intervals needs no closed form until one is printed) and their 1-based
    positions; ``wrong`` and ``undecided`` are the positions of failing/undecided entries.
    """

    claim: object
    verdict: str
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


def _nested(items, shape, show) -> str:
    if shape is None:
        return show(items[0])
    if len(shape) == 1:
        return "[" + ", ".join(show(x) for x in items) + "]"
    rows = [items[i * shape[1]:(i + 1) * shape[1]] for i in range(shape[0])]
    return "[" + ", ".join("[" + ", ".join(show(x) for x in row) + "]" for row in rows) + "]"
