"""What grading one student gives: a result per question, and the student's result, which
prints its own grade files (formats: :mod:`.exports`).

:class:`QuestionResult` is one question of one student -- a value question's points,
verdict, diagnosis and feedback, or a derivation question's, with its steps --, and
:class:`StudentResult` everything graded for one student.  Both are plain data: grading
(:mod:`.batch`, :mod:`.derivation_questions`) fills them in.
"""

from dataclasses import dataclass, field
from fractions import Fraction

from symbolic_attn.grading.outcomes import Verdict

__all__ = ["QuestionResult", "StudentResult"]


@dataclass
class QuestionResult:
    """One question of one student (the STUDENT.json entry)."""

    name: str
    quantity: str
    row: int | None
    col: int | None
    points: Fraction
    max_points: Fraction
    verdict: Verdict  # pass fail carried_forward missing unreadable undecided
    claimed: str | None = None
    exact: str = ""
    decimal: str = ""
    diagnosis: list = field(default_factory=list)
    feedback: str = ""
    wrong: list = field(default_factory=list)  # 1-based (row, col) of the wrong entries
    line: int | None = None
    steps: list | None = None  # a derivation question's steps (steps.report's shape), else None

    def as_dict(self) -> dict:
        """This answer's entry in the student's JSON (text from the submission escaped)."""
        from symbolic_attn.grading.exports import export_text, number

        return {"name": self.name, "quantity": self.quantity, "row": self.row, "col": self.col,
                "points": number(self.points), "max_points": number(self.max_points),
                "points_exact": str(self.points), "max_points_exact": str(self.max_points),
                "verdict": Verdict(self.verdict).value,
                "claimed": None if self.claimed is None else export_text(self.claimed), "exact": self.exact,
                "decimal": self.decimal, "diagnosis": list(self.diagnosis), "feedback": export_text(self.feedback),
                **({} if self.steps is None else {"steps": [_exported_step(step) for step in self.steps]})}


def _exported_step(step: dict) -> dict:
    """A derivation step for the grade files: the student's text escaped as every text is."""
    from symbolic_attn.grading.exports import export_text

    return {key: export_text(value) if key in ("from", "to", "read", "justification") and value is not None else value
            for key, value in step.items()}


@dataclass
class StudentResult:
    """Everything graded for one student."""

    student: str
    score: Fraction
    max_score: Fraction
    gradable: bool
    reason: str = ""  # why not gradable
    questions: list = field(default_factory=list)
    problems: list = field(default_factory=list)  # (line, message) of unreadable text
    read: list = field(default_factory=list)  # (name as written, value as written, line) of every statement

    def verdicts(self) -> dict:
        return {q.name: q.verdict for q in self.questions}

    # The grade files, printed by the result itself (formats: :mod:`.exports`).

    def json(self) -> str:
        """``STUDENT.json``."""
        from symbolic_attn.grading.exports import student_json

        return student_json(self)

    def csv_row(self, questions) -> list:
        """This student's row of ``grades.csv`` (one points column per question of the key)."""
        from symbolic_attn.grading.exports import student_row

        return student_row(self, questions)

    def gradescope_json(self) -> str:
        from symbolic_attn.grading.exports import gradescope_json

        return gradescope_json(self)

    def prairielearn_json(self) -> str:
        from symbolic_attn.grading.exports import prairielearn_json

        return prairielearn_json(self)


# ------------------------------------------------------------------ the adapter
