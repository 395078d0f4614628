"""The reports of a comparison: one per stage, one per case (text and JSON).

>>> stage = StageReport("output", 1e-7, 1.5, 3e-6, 40.0, "pass")
>>> report = CaseReport("mine", "float32", (2, 3, 4, 5), "causal", (stage,))
>>> report.to_dict()["verdict"], report.stages["output"].max_ulp, report.stages[0] is report["output"]
('pass', 1.5, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["StageReport", "Stages", "CaseReport"]


@dataclass(frozen=True)
class StageReport:
    """One stage of one case: the worst entry's error, in absolute terms and in ulps."""

    stage: str
    max_abs_error: float
    max_ulp: float
    bound: float  # the largest per-entry bound of the stage
    bound_ulp: float  # the bound, in ulps, at the entry of the largest error in ulps
    verdict: str  # "pass" or "fail"
    worst: tuple[int, int] | None = None  # 1-based (row, col) of the largest error/bound
    note: str = ""

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    def to_dict(self) -> dict:
        return {"stage": self.stage, "max_abs_error": _json_float(self.max_abs_error), "max_ulp": _json_float(self.max_ulp),
                "bound": _json_float(self.bound), "bound_ulp": _json_float(self.bound_ulp), "verdict": self.verdict,
                "worst": list(self.worst) if self.worst else None, "note": self.note}


def _json_float(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else "inf"
    return x


class Stages(tuple):
    """The stage reports in order; also indexed by stage name (``stages["output"]``)."""

    def __getitem__(self, key):
        if isinstance(key, str):
            for stage in self:
                if stage.stage == key:
                    return stage
            raise KeyError(key)
        return super().__getitem__(key)


@dataclass(frozen=True)
class CaseReport:
    """The comparison of one case: shapes, mask, per-stage errors, the verdict."""

    name: str
    dtype: str
    shape: tuple[int, int, int, int]
    mask: str
    stages: tuple[StageReport, ...] = ()
    error: str | None = None  # the implementation raised (its message, cut short)
    inputs_rounded: bool = False
    meets: str | None = None  # the finest dtype whose bounds every stage meets
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self):
        object.__setattr__(self, "stages", Stages(self.stages))

    @property
    def verdict(self) -> str:
        if self.error is not None:
            return "error"
        return "pass" if all(s.passed for s in self.stages) else "fail"

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    def stage(self, name: str) -> StageReport:
        """The report of one stage ("weights" or "output"); KeyError if not measured."""
        for stage in self.stages:
            if stage.stage == name:
                return stage
        raise KeyError(name)

    __getitem__ = stage

    @property
    def max_abs_error(self) -> float | None:
        """The headline (first failing, else output) stage's largest error."""
        head = self._headline()
        return head.max_abs_error if head else None

    @property
    def max_ulp(self) -> float | None:
        head = self._headline()
        return head.max_ulp if head else None

    @property
    def bound(self) -> float | None:
        head = self._headline()
        return head.bound if head else None

    def _headline(self) -> StageReport | None:
        stages = {s.stage: s for s in self.stages}
        failing = [s for s in self.stages if not s.passed]
        return failing[0] if failing else stages.get("output")

    def to_dict(self) -> dict:
        n, m, d_k, d_v = self.shape
        head = self._headline()
        return {
            "name": self.name, "n": n, "m": m, "d_k": d_k, "d_v": d_v, "mask": self.mask,
            "max_abs_error": _json_float(head.max_abs_error) if head else None,
            "max_ulp": _json_float(head.max_ulp) if head else None,
            "bound": _json_float(head.bound) if head else None,
            "verdict": self.verdict,
            "stages": [s.to_dict() for s in self.stages],
            "error": self.error, "inputs_rounded": self.inputs_rounded, "meets": self.meets,
        }

    def __str__(self) -> str:
        n, m, d_k, d_v = self.shape
        lines = [f"{self.name} ({self.dtype}, n={n} m={m} d_k={d_k} d_v={d_v}, mask {self.mask}): {self.verdict}"]
        if self.error:
            lines.append(f"  the implementation raised: {self.error}")
        for s in self.stages:
            where = f" at {s.worst}" if s.worst and not s.passed else ""
            lines.append(f"  {s.stage:8} max error {s.max_abs_error:.3g} ({s.max_ulp:.3g} ulp), "
                         f"bound {s.bound:.3g} ({s.bound_ulp:.3g} ulp): {s.verdict}{where}{' - ' + s.note if s.note else ''}")
        if self.meets and self.meets != self.dtype:
            lines.append(f"  within the {self.meets} bounds: {self.meets}-accurate")
        lines.extend(f"  {note}" for note in self.notes)
        return "\n".join(lines)
