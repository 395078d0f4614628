r"""What the checker decided about one step: the verdict a report prints and JSON carries.

>>> StepVerdict("false", "false: the sides differ", {"x": 1}).as_dict()["counterexample"]
{'x': '1'}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["StepVerdict", "VERDICTS"]

#: The verdicts a step may get, in the order a report lists them.
VERDICTS = ("proved", "false", "undecided", "unreadable")


@dataclass(frozen=True)
class StepVerdict:
    """What the checker decided about one step."""

    verdict: str
    reason: str
    counterexample: dict[str, Any] | None = field(default=None)
    #: For a false step: the catalogue id of the wrong rule that explains it, proved.
    diagnosis: str | None = None

    def as_dict(self) -> dict[str, Any]:
        counterexample = None if self.counterexample is None else {
            name: str(value) for name, value in self.counterexample.items()}
        return {"verdict": self.verdict, "reason": self.reason, "counterexample": counterexample,
                "diagnosis": self.diagnosis}

    def sentence(self) -> str | None:
        """The diagnosis as the sentence a student reads (None without one)."""
        from symbolic_attn.model.mistakes import CATALOGUE

        return CATALOGUE[self.diagnosis].sentence() if self.diagnosis else None
