r"""A student's derivation checked line by line: every chain of a file, every step of it.

:func:`check_text` reads a ``.md``, ``.tex`` or ``.txt`` file's chains
(:mod:`symbolic_attn.steps.document`), reads every side of every chain with the safe
reader (:mod:`symbolic_attn.steps.grammar`) under the declarations, and decides each
adjacent pair of sides -- a *step* -- with :func:`~symbolic_attn.steps.decide.decide_step`,
each under its own wall-clock bound (:data:`STEP_SECONDS`), so that one hard step is
``undecided`` ("too large to check: split it") and the others are still decided.

A side the reader refuses makes both steps that touch it ``unreadable``, with the reason
and the column; nothing is ever read by guessing.  The report prints itself as text (one
line per step, the diagnosis sentence under a false one) and as the JSON the issue gives::

    {"chains": [{"start_line": N, "name": ..., "steps": [{"line": N, "from": TEXT, "to": TEXT,
      "read": TEXT, "relation": "=", "verdict": "...", "reason": "...",
      "counterexample": {...} | null, "diagnosis": ID | null}]}]}
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field, replace
from typing import Any

import sympy

from symbolic_attn.exact.deadline import Deadline
from symbolic_attn.exact.memo import MEMO_SIZE, scope
from symbolic_attn.errors import ParseError, StepReadError, SymbolicAttnError, one_line
from symbolic_attn.steps.decide import StepVerdict, decide_step
from symbolic_attn.steps.written import form_of, recording
from symbolic_attn.steps.wrong_rules import explain

__all__ = ["Step", "ChainReport", "StepsReport", "check_text", "check_chain", "read_sides", "STEP_SECONDS", "RELATION_SIGNS", "student_name"]

#: Seconds one step may take before it is ``undecided`` ("too large to check: split it").
STEP_SECONDS = 10.0
#: How each relation is written back to the student.
RELATION_SIGNS = {"=": "=", "<": "<", "<=": "≤", ">": ">", ">=": "≥", "approx": "≈", "!=": "≠"}
#: ... and in the LaTeX echo of a step.
LATEX_SIGNS = {"=": "=", "<": "<", "<=": r"\le", ">": ">", ">=": r"\ge", "approx": r"\approx", "!=": r"\ne"}


@dataclass(frozen=True)
class Step:
    """One step: the side it starts from, the side it reaches, and the verdict."""

    line: int
    source: str  # the previous side, as written
    target: str  # this side, as written
    read: str  # how both sides were read, in the tool's notation
    read_latex: str
    relation: str
    verdict: StepVerdict
    reason_given: str | None = None  # the student's own justification (\tag, \text{(by ...)})

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "from": self.source, "to": self.target, "read": self.read,
                "read_latex": self.read_latex, "relation": self.relation, **self.verdict.as_dict(),
                "counterexample": _letters(self.verdict.counterexample), "justification": self.reason_given}


@dataclass(frozen=True)
class ChainReport:
    """The steps of one chain, in order."""

    start_line: int
    name: str | None
    steps: tuple[Step, ...]

    def counts(self) -> dict[str, int]:
        found = {"proved": 0, "false": 0, "undecided": 0, "unreadable": 0}
        for step in self.steps:
            found[step.verdict.verdict] += 1
        return found

    def as_dict(self) -> dict[str, Any]:
        return {"start_line": self.start_line, "name": self.name, "steps": [s.as_dict() for s in self.steps]}

    def first_wrong(self) -> Step | None:
        """The first step that is not proved (None when every step is)."""
        return next((s for s in self.steps if s.verdict.verdict != "proved"), None)


@dataclass(frozen=True)
class StepsReport:
    """Every chain of one file."""

    source: str
    chains: tuple[ChainReport, ...]
    declarations: str = ""
    problems: tuple[str, ...] = field(default=())

    @property
    def exit_code(self) -> int:
        """0 when every step of every chain is proved (and there is a step), else 1."""
        steps = [s for c in self.chains for s in c.steps]
        return 0 if steps and all(s.verdict.verdict == "proved" for s in steps) else 1

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "symbols": self.declarations, "chains": [c.as_dict() for c in self.chains]}

    def text(self, width: int = 80) -> str:
        lines = []
        if not self.chains:
            lines.append(f"{self.source}: no chain found (a display with a relation such as = between two sides)")
        for number, chain in enumerate(self.chains, 1):
            counts = chain.counts()
            summary = ", ".join(f"{count} {verdict}" for verdict, count in counts.items() if count)
            name = f" {chain.name!r}" if chain.name else ""
            lines.append(f"{self.source}: chain {number}{name} (line {chain.start_line}): "
                         f"{len(chain.steps)} step{'s' * (len(chain.steps) != 1)}, {summary or 'none'}")
            for step in chain.steps:
                lines += _step_lines(step, width)
        return "\n".join(lines)


def _step_lines(step: Step, width: int) -> list[str]:
    verdict = step.verdict
    mark = verdict.verdict.upper() if verdict.verdict != "proved" else "proved"
    head = f"  line {step.line:<4} {RELATION_SIGNS.get(step.relation, step.relation)}  {mark}"
    indent = " " * 6
    out = [head]
    out += textwrap.wrap(f"read: {step.read}", width, initial_indent=indent, subsequent_indent=indent + "  ")
    out += textwrap.wrap(verdict.reason, width, initial_indent=indent, subsequent_indent=indent + "  ")
    point = _letters(verdict.counterexample)
    if point:
        where = ", ".join(f"{name} = {value}" for name, value in point.items())
        out += textwrap.wrap(f"false at {where}", width, initial_indent=indent, subsequent_indent=indent + "  ")
    sentence = verdict.sentence()
    if sentence:
        out += textwrap.wrap(f"mistake: {sentence}", width, initial_indent=indent, subsequent_indent=indent + "  ")
    return out


def student_name(name: str) -> str:
    """A point's name in the student's letters: ``x[2]`` is ``x_2``, ``s[1, 3]`` is ``s_{1,3}``.

    >>> student_name("x[2]"), student_name("s[1, 3]"), student_name("c")
    ('x_2', 's_{1,3}', 'c')
    """
    found = re.fullmatch(r"(\w+)\[(.*)\]", name)
    if not found:
        return name
    indices = [part.strip() for part in found.group(2).split(",")]
    inner = indices[0] if len(indices) == 1 and len(indices[0]) == 1 else "{" + ",".join(indices) + "}"
    return f"{found.group(1)}_{inner}"


def _letters(point: dict[str, Any] | None) -> dict[str, str] | None:
    if not point:
        return None
    return {student_name(name): str(value) for name, value in sorted(point.items(), key=lambda item: _order(item[0]))}


def _order(name: str) -> tuple[int, str, tuple[int, ...]]:
    found = re.fullmatch(r"(\w+)\[(.*)\]", name)
    if not found:
        return (0, name, ())
    return (1, found.group(1), tuple(int(p) if p.strip().isdigit() else 0 for p in found.group(2).split(",")))


# -- checking -------------------------------------------------------------------------------


def check_text(text: str, kind: str, source: str, symbols: str | None = None,
               step_seconds: float = STEP_SECONDS) -> StepsReport:
    """Check every chain of ``text`` (a file of ``kind`` md, tex or txt).  ``symbols`` (the
    ``--symbols`` text) is used when given, else the file's own ``% symbols:`` line."""
    from symbolic_attn.steps.declarations import parse_declarations
    from symbolic_attn.steps.document import read_document

    try:
        document = read_document(text, kind, source)
    except StepReadError as error:  # a file that cannot be read as a whole: say which file
        raise ParseError(f"{source}: {one_line(error)}") from None
    declared = symbols if symbols is not None else document.symbols_text
    # No declarations at all is a derivation of numbers: a letter in it is refused where it
    # stands, with how to declare it (never guessed).
    declarations = parse_declarations(declared or "", source="--symbols" if symbols is not None else source)
    chains = tuple(check_chain(chain, declarations, step_seconds) for chain in document.chains)
    return StepsReport(source, chains, declared or "")


class _TooLarge(SymbolicAttnError):
    pass


def _too_large(name: str, seconds: float) -> _TooLarge:
    return _TooLarge(f"this step is too large to check in {seconds:g} s: split it into smaller steps")


def read_sides(chain: Any, declarations: Any) -> tuple[list[Any], list[Any]]:
    """Every side of ``chain`` read once: its :class:`~symbolic_attn.steps.grammar.Reading`
    (or the :class:`~symbolic_attn.errors.StepReadError` that refused it), and its written
    form (how an explicit matrix was computed, :mod:`.written`; None for anything else)."""
    from symbolic_attn.steps.grammar import read_math

    readings: list[Any] = []
    written: list[Any] = []
    for side in chain.sides:
        with recording() as forms:
            try:
                readings.append(read_math(side.text, declarations, line=side.line, column=side.column))
            except StepReadError as error:
                readings.append(error)
        value = getattr(readings[-1], "expr", None)
        written.append(form_of(value, forms) if forms and isinstance(value, sympy.MatrixBase) else None)
    return readings, written


def check_chain(chain: Any, declarations: Any, step_seconds: float = STEP_SECONDS,
                read: tuple[list[Any], list[Any]] | None = None) -> ChainReport:
    """Every step of one chain (:class:`~symbolic_attn.steps.document.Chain`), each under
    its own bound of ``step_seconds``; ``read`` is :func:`read_sides`' answer when the caller
    has it already."""
    deadline = Deadline(step_seconds, _too_large)
    readings, written = read if read is not None else read_sides(chain, declarations)
    assumptions = tuple(declarations.assumptions())
    random = _Random(declarations.randomness(), declarations.index_ranges())
    steps = []
    random = _Random(declarations.randomness(), declarations.index_ranges())
    for previous, side, left, right, forms_of_step in zip(chain.sides, chain.sides[1:], readings, readings[1:],
                                                          zip(written, written[1:])):
        steps.append(_step(previous, side, left, right, assumptions, deadline, random, forms_of_step))
    return ChainReport(chain.start_line, chain.name, tuple(steps))


@dataclass(frozen=True)
class _Random:
    """What a step with expectations is decided under: the random families and the ranges."""

    randomness: Any
    ranges: dict[Any, Any]

    def key(self) -> Any:
        return self.randomness.key()


def _step(previous: Any, side: Any, left: Any, right: Any, assumptions: Any, deadline: Deadline,
          random: _Random, written: tuple[Any, Any] = (None, None)) -> Step:
    sign = RELATION_SIGNS.get(side.relation, side.relation)
    unreadable = [r for r in (left, right) if isinstance(r, StepReadError)]
    if unreadable:
        return Step(side.line, previous.text, side.text, f"{_notation(left)} {sign} {_notation(right)}", "",
                    side.relation, StepVerdict("unreadable", one_line(unreadable[0])), side.reason)
    conditions = tuple(dict.fromkeys(left.conditions + right.conditions))
    key = _decision_key(left.expr, right.expr, side.relation, assumptions, side.text, written)
    key = None if key is None else (key, random.key(), conditions)
    remembered = _DECIDED.get(key) if key is not None else None
    if remembered is not None:
        verdict = remembered
    else:
        verdict = _decide(left.expr, right.expr, side, assumptions, deadline, random, conditions, written)
        if key is not None and "too large to check" not in verdict.reason:  # a timing is not a fact
            if len(_DECIDED) >= MEMO_SIZE:
                _DECIDED.clear()
            _DECIDED[key] = verdict
    return Step(side.line, previous.text, side.text, f"{left.notation} {sign} {right.notation}",
                f"{left.latex} {LATEX_SIGNS.get(side.relation, '=')} {right.latex}", side.relation, verdict,
                side.reason)


#: Steps decided in this process, by what decides them: a course's students write many of
#: the same steps (the definition of softmax, the exponent rule), and a decision is a pure
#: function of the two readings, the relation and the facts.  Bounded: emptied when full.
_DECIDED: dict[Any, StepVerdict] = {}


def _decision_key(left: Any, right: Any, relation: str, assumptions: Any, text: str,
                  written: tuple[Any, Any] = (None, None)) -> Any:
    """What a step's decision depends on, hashable -- or None when an assumption carries a
    rewrite rule (a function: it cannot be compared, so the step is decided afresh).  The
    sides' written forms are part of it: they may name the mistake (never the verdict)."""
    if any(a.rewrite is not None for a in assumptions):
        return None
    facts = tuple((a.label, a.condition) for a in assumptions)
    key = (left, right, relation, facts, text.strip() if relation == "approx" else None, written)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _decide(left: Any, right: Any, side: Any, assumptions: Any, deadline: Deadline, random: _Random,
            conditions: tuple[tuple[str, Any], ...] = (), written: tuple[Any, Any] = (None, None)) -> StepVerdict:
    # One step's verdict and diagnosis share what they reduce (the same residual reached by
    # two strategies, a candidate the step itself tried): forgotten when the step is decided.
    with scope():
        return _decide_in_scope(left, right, side, assumptions, deadline, random, conditions, written)


def _decide_in_scope(left: Any, right: Any, side: Any, assumptions: Any, deadline: Deadline, random: _Random,
                     conditions: tuple[tuple[str, Any], ...], written: tuple[Any, Any]) -> StepVerdict:
    from symbolic_attn.steps.domains import domain_verdict
    from symbolic_attn.steps.randomness import has_operators

    try:
        with deadline(f"line {side.line}"):
            undefined: StepVerdict | None = domain_verdict(conditions, assumptions, random.randomness, random.ranges)
            if undefined is not None:  # a side that is not a real number, or not known to be one
                return undefined
            verdict = decide_step(left, right, side.relation, assumptions, written=side.text, diagnose=False,
                                  randomness=random.randomness, ranges=random.ranges)
    except _TooLarge as error:
        return StepVerdict("undecided", str(error))
    if verdict.verdict == "false" and side.relation == "=":
        # Which wrong rule makes it: under a bound of its own, so that a slow search costs
        # the diagnosis only, never the verdict.
        try:
            with deadline(f"line {side.line}: diagnosis"):
                # A distribution is no point to evaluate a candidate at: the rules judge those.
                point = None if has_operators(left) or has_operators(right) else verdict.counterexample
                verdict = replace(verdict, diagnosis=explain(left, right, assumptions, written, point=point,
                                                             randomness=random.randomness, ranges=random.ranges))
        except _TooLarge:
            pass
    return verdict


def _notation(reading: Any) -> str:
    return "(not read)" if isinstance(reading, StepReadError) else reading.notation
