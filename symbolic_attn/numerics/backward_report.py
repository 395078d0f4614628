r"""The report of a backward comparison: one line per case (text) and JSON.

Each case is a :class:`~symbolic_attn.numerics.report.CaseReport` whose stages are
``dQ``, ``dK`` and ``dV``; the run adds the diagnosis, the cases each candidate mistake
explains, and the failing cases nothing explains.

>>> from symbolic_attn.numerics.report import CaseReport, StageReport
>>> stages = tuple(StageReport(s, 1e-16, 1.0, 1e-14, 90.0, "pass") for s in ("dQ", "dK", "dV"))
>>> report = BackwardReport("mine", "float64", (CaseReport("basic", "float64", (3, 3, 2, 2), "none", stages),))
>>> print(report.table())
mine (float64): 1/1 cases pass
  basic           n=3 m=3 d_k=2 d_v=2 mask none   dQ 1e-16/1e-14  dK 1e-16/1e-14  dV 1e-16/1e-14  pass
>>> report.to_dict()["passed"], report.to_dict()["cases"][0]["stages"][0]["stage"]
(True, 'dQ')
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from symbolic_attn.model.mistakes import CATALOGUE
from symbolic_attn.numerics.report import CaseReport

__all__ = ["BackwardReport", "GRADIENTS"]

GRADIENTS = ("dQ", "dK", "dV")


@dataclass(frozen=True)
class BackwardReport:
    """A kernel's backward pass on a list of cases, against the exact gradients."""

    kernel: str
    dtype: str
    cases: tuple[CaseReport, ...]
    diagnosis: tuple[str, ...] = ()  # mistake ids whose variant explains every failing case
    explained: dict = field(default_factory=dict)  # id -> names of the failing cases it explains
    unexplained: tuple[str, ...] = ()  # failing cases no candidate explains (when nothing is named)

    @property
    def passed(self) -> bool:
        return all(case.passed for case in self.cases)

    @property
    def verdict(self) -> str:
        return "pass" if self.passed else "fail"

    @property
    def failing(self) -> list[CaseReport]:
        return [case for case in self.cases if not case.passed]

    def __getitem__(self, name: str) -> CaseReport:
        for case in self.cases:
            if case.name == name:
                return case
        raise KeyError(name)

    def table(self) -> str:
        """One line per case (case, shape, mask, worst error/bound of dQ, dK, dV, verdict),
        then the diagnosis."""
        passing = sum(case.passed for case in self.cases)
        lines = [f"{self.kernel} ({self.dtype}): {passing}/{len(self.cases)} cases pass"]
        for case in self.cases:
            lines.append("  " + _line(case))
        lines.extend(self._diagnosis_lines())
        return "\n".join(lines)

    __str__ = table

    def _diagnosis_lines(self) -> list[str]:
        if self.passed:
            return []
        if self.diagnosis:
            return [f"diagnosis: {name} - {CATALOGUE[name].description}" for name in self.diagnosis]
        lines = []
        for name, cases in self.explained.items():
            lines.append(f"{name} explains {len(cases)} of {len(self.failing)} failing cases: {', '.join(cases)}")
        raised = [name for name in self.unexplained if self[name].error is not None]
        wrong = [name for name in self.unexplained if name not in raised]
        if wrong:
            lines.append(f"unexplained: {', '.join(wrong)} - no known backward mistake explains "
                         f"{'it' if len(wrong) == 1 else 'them'}")
        if raised:
            lines.append(f"unexplained: {', '.join(raised)} - the kernel raised, no gradients to explain")
        if not lines:
            lines.append("no single known backward mistake explains every failing case")
        return lines

    def to_dict(self) -> dict:
        return {"kernel": self.kernel, "dtype": self.dtype, "passed": self.passed, "verdict": self.verdict,
                "cases": [case.to_dict() for case in self.cases], "diagnosis": list(self.diagnosis),
                "explained": {name: list(cases) for name, cases in self.explained.items()},
                "unexplained": list(self.unexplained)}

    def to_json(self, **options) -> str:
        return json.dumps(self.to_dict(), **options)


def _line(case: CaseReport) -> str:
    n, m, d_k, d_v = case.shape
    head = f"{case.name:15} n={n} m={m} d_k={d_k} d_v={d_v} mask {case.mask:6}"
    if case.error is not None:
        return f"{head} error: {case.error}"
    parts = []
    for stage in case.stages:
        parts.append(f"{stage.stage} {stage.max_abs_error:.3g}/{stage.bound:.3g}")
    tail = case.verdict
    if case.meets and case.meets != case.dtype:
        tail += f" ({case.meets}-accurate)"
    notes = "".join(f"; {note}" for note in case.notes)
    return f"{head} {'  '.join(parts)}  {tail}{notes}"
