r"""Answer-key questions of ``kind = "derivation"``: a student's chain, graded step by step.

A question gives where the chain starts and where it must end, in the LaTeX the students
write, and what the letters are::

    [[questions]]
    name = "shift"
    kind = "derivation"
    start = '\operatorname{softmax}(x + c)_i'
    goal = '\operatorname{softmax}(x)_i'
    points = 4
    [questions.symbols]
    n = "positive integer"
    i = "integer 1..n"
    x = "real vector n"
    c = "real"

The student's chain is the first chain under a heading (or ``\label``) that names the
question -- a word of it equal to the question's name or an alias, ignoring case -- or,
when the key has one derivation question and the submission one chain, that chain.  Every
step is decided by the sound checker (:mod:`symbolic_attn.steps`).  Points:

* the chain must start at ``start`` (or at an expression proved equal to it) and end at
  ``goal`` -- its last side read as the goal is read (the bound letters' names aside),
  since the goal is what is to be shown; otherwise 0, and the feedback says which end;
* then ``points × k / N``: ``N`` steps, ``k`` of them proved before the first step that is
  not -- full points when every step is proved;
* feedback names the first step that is not proved: its line, the counterexample in the
  student's letters and, for a known wrong rule, its sentence.

A line the reader refuses is never a crash: the step is ``unreadable``, the question's
verdict ``unreadable`` and the reason a format error (PrairieLearn's ``format_errors``).

>>> from symbolic_attn.grading.answer_key import parse_answer_key
>>> from symbolic_attn.grading.batch import grade
>>> from symbolic_attn.grading.submissions import parse_submission
>>> key = parse_answer_key('''
... [[questions]]
... name = "split"
... kind = "derivation"
... start = 'e^{a + b}'
... goal = 'e^a e^b'
... points = 2
... [questions.symbols]
... a = "real"
... b = "real"
... ''')
>>> right = grade(key, "ann", parse_submission("## split\n$$e^{a + b} = e^a e^b$$\n", "ann.md"))
>>> right.score, [s["verdict"] for s in right.questions[0].steps]
(Fraction(2, 1), ['proved'])
>>> wrong = grade(key, "bob", parse_submission("## split\n$$e^{a + b} = e^a + e^b$$\n", "bob.md"))
>>> wrong.score, wrong.questions[0].steps[0]["diagnosis"]
(Fraction(0, 1), 'exp_of_sum')
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from symbolic_attn.errors import StepReadError, SymbolicAttnError, one_line

__all__ = ["DerivationQuestion", "read_derivation_question", "read_chains", "grade_derivation", "grade_derivations", "KEYS"]

#: The keys a derivation question may have.
KEYS = frozenset({"name", "aliases", "kind", "start", "goal", "points", "symbols", "label"})
#: Characters of ``start`` or ``goal``.
MAX_SIDE = 2_000


@dataclass(frozen=True)
class DerivationQuestion:
    """One derivation question of the key (the fields a numeric question has, where they apply)."""

    number: int
    name: str
    aliases: tuple
    keys: frozenset
    start: str
    goal: str
    points: Fraction
    symbols: str  # the declarations, as ``--symbols`` text
    quantity: str = "derivation"
    row: None = None
    col: None = None
    rule: None = None
    decimals: None = None
    strict_sig_figs: None = None
    kind: str = "derivation"

    @property
    def label(self) -> str:
        return self.name

    def requirement(self) -> str:
        return "every step proved, from start to goal"

    @functools.cached_property
    def declarations(self) -> Any:
        """The question's symbols read once (every student's chain is checked under them)."""
        from symbolic_attn.steps.declarations import parse_declarations

        return parse_declarations(self.symbols, source=f"question {self.number}: symbols")

    @functools.cached_property
    def ends(self) -> tuple[Any, Any]:
        """``start`` and ``goal`` read once under the declarations, each with its binders'
        stand-ins (:func:`~symbolic_attn.proofs.binders.bind_fresh`): every student's chain is
        compared with them."""
        from symbolic_attn.proofs.binders import bind_fresh
        from symbolic_attn.steps.grammar import read_math

        start, goal = (read_math(text, self.declarations).expr for text in (self.start, self.goal))
        return bind_fresh(start), bind_fresh(goal)


def read_derivation_question(number: int, entry: dict, name: str, aliases: tuple, keys: frozenset,
                             points: Fraction, fail: Any) -> DerivationQuestion:
    """Validate one ``kind = "derivation"`` entry: its symbols declare the letters, and its
    ``start`` and ``goal`` are read under them (a key the reader refuses is an
    :class:`ExerciseError` now, not at grading time)."""
    from symbolic_attn.steps.grammar import read_math

    prefix = f"question {number}: "
    for key in entry:
        if key not in KEYS:
            raise fail(prefix + key, f"unknown key for a derivation question (expected one of: {', '.join(sorted(KEYS))})")
    table = entry.get("symbols")
    if not isinstance(table, dict) or not table:
        raise fail(prefix + "symbols", "expected a table of what the letters are ([questions.symbols], e.g. "
                   "n = \"positive integer\")")
    parts = []
    for letter, kind in table.items():
        if not isinstance(kind, str):
            raise fail(f"{prefix}symbols.{letter}", f"expected a kind such as \"real\", got {kind!r}"[:160])
        parts.append(f"{letter}: {kind}")
    symbols = "; ".join(parts)
    sides = {}
    for side in ("start", "goal"):
        text = entry.get(side)
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_SIDE:
            raise fail(prefix + side, f"expected the LaTeX of the chain's {'first' if side == 'start' else 'last'} "
                       f"side (at most {MAX_SIDE} characters), got {text!r}"[:200])
        sides[side] = text
    question = DerivationQuestion(number, name, aliases, keys, sides["start"], sides["goal"], points, symbols)
    try:
        declarations = question.declarations
        for side in ("start", "goal"):
            read_math(sides[side], declarations)
    except SymbolicAttnError as error:
        raise fail(prefix + ("symbols" if "symbols" in str(error) else "start/goal"), one_line(error)) from None
    return question


# -- finding the student's chain ------------------------------------------------------------


def _names(question: DerivationQuestion) -> set:
    return {n.lower() for n in (question.name, *question.aliases)}


def _words(heading: str) -> set:
    return {w.lower() for w in re.split(r"[^0-9A-Za-z_']+", heading) if w}


def read_chains(documents) -> tuple[list, list]:
    """(document source, chain) for every chain of every file, in reading order, and
    (source, error) for a file the reader cannot take at all (an unclosed $$): the
    submission is read once, for every derivation question of the key."""
    from symbolic_attn.steps.document import read_document

    found, problems = [], []
    for source, kind, text in documents:
        try:
            document = read_document(text, kind, source)
        except StepReadError as error:
            problems.append((source, error))
            continue
        found += [(source, chain) for chain in document.chains]
    return found, problems


def find_chain(question: DerivationQuestion, chains: list, only: bool):
    """The chain answering ``question``: under a heading or label that names it, else the
    only chain of the submission when ``only`` (the key's one derivation question)."""
    for source, chain in chains:
        if chain.name and _words(chain.name) & _names(question):
            return source, chain
    if only and len(chains) == 1:
        return chains[0]
    return None


def grade_derivations(questions, documents) -> tuple[dict, set]:
    """Every derivation question of a key against one submission's documents, read once:
    ({question number: result}, the lines inside a chain -- the statement reader's
    complaints about those lines are not the student's concern)."""
    if not questions:  # a key of values only: its submissions are not read as derivations
        return {}, set()
    chains, unread = read_chains(documents)
    results = {q.number: grade_derivation(q, (chains, unread), only=len(questions) == 1) for q in questions}
    return results, {side.line for _, chain in chains for side in chain.sides}


# -- grading --------------------------------------------------------------------------------


def grade_derivation(question: DerivationQuestion, read, only: bool = False):
    """The :class:`~symbolic_attn.grading.results.QuestionResult` of one derivation question;
    ``read`` is :func:`read_chains`' answer for the submission's documents."""
    from symbolic_attn.grading.results import QuestionResult
    from symbolic_attn.grading.outcomes import Verdict

    result = QuestionResult(question.name, "derivation", None, None, Fraction(0), question.points, Verdict.MISSING,
                            exact=question.goal)
    chains, unread = read
    found = find_chain(question, chains, only)
    if found is None:
        if unread:  # a file the reader could not take (an unclosed $$): say why, never "missing"
            source, error = unread[0]
            result.verdict = Verdict.UNREADABLE
            result.feedback = f"{source}: the derivation could not be read: {one_line(error)}."
            return result
        result.feedback = (f"No derivation for {question.name} was found: write the chain under a heading that names "
                           f"it (## {question.name}), starting at ${question.start}$ and ending at ${question.goal}$.")
        return result
    source, chain = found
    result.line = chain.start_line
    from symbolic_attn.steps.report import read_sides

    read = read_sides(chain, question.declarations)  # each side read once: for the steps and the ends
    report = _report(question, chain, read)
    steps = [step.as_dict() for step in report.steps]
    result.steps = steps
    result.claimed = " ".join(side.text for side in chain.sides)[:2000]
    if not report.steps:
        result.verdict = Verdict.UNREADABLE
        result.feedback = f"Line {chain.start_line}: the chain has one side and no step."
        return result
    ends, unreadable = _ends(question, chain, read[0])
    first = report.first_wrong()
    proved = len(report.steps) if first is None else report.steps.index(first)
    if ends:
        result.verdict = Verdict.UNREADABLE if unreadable else Verdict.FAIL
        result.feedback = ends
        return result
    result.points = question.points * proved / len(report.steps)
    if first is None:
        result.verdict = Verdict.PASS
        result.feedback = f"Every step is proved, from ${question.start}$ to ${question.goal}$."
        return result
    verdict = first.verdict.verdict
    result.verdict = {"false": Verdict.FAIL, "undecided": Verdict.UNDECIDED, "unreadable": Verdict.UNREADABLE}[verdict]
    if first.verdict.diagnosis:
        result.diagnosis = [first.verdict.diagnosis]
    result.feedback = _first_wrong_sentence(first, proved, len(report.steps))
    return result


def _report(question: DerivationQuestion, chain, read=None):
    from symbolic_attn.steps.report import check_chain

    return check_chain(chain, question.declarations, read=read)


def _ends(question: DerivationQuestion, chain, readings) -> tuple[str, bool]:
    """Why the chain does not go from start to goal ('' when it does), and whether it is
    because an end could not be read; ``readings`` are the chain's sides as read."""
    from symbolic_attn.proofs.binders import bind_fresh
    from symbolic_attn.steps.decide import decide_step

    declarations = question.declarations
    for where, side, reading, wanted, target in (
            ("starts", chain.sides[0], readings[0], question.start, question.ends[0]),
            ("ends", chain.sides[-1], readings[-1], question.goal, question.ends[1])):
        if isinstance(reading, StepReadError):
            return f"Line {side.line}: the side the chain {where} at could not be read: {reading.reason}.", True
        written = reading.expr
        # The goal is what must be shown: the last side must read as it, as written.  Any
        # expression proved equal to the start will do (the start as written is one).
        same = bind_fresh(written) == target
        if where == "starts" and not same:
            same = decide_step(written, target, "=", tuple(declarations.assumptions()), diagnose=False,
                               randomness=declarations.randomness(), ranges=declarations.index_ranges()
                               ).verdict == "proved"
        if not same:
            wanted_as = "not shown equal to" if where == "starts" else "not"
            return (f"Line {side.line}: the chain {where} at ${side.text.strip()}$, which is {wanted_as} "
                    f"${wanted}$: a derivation of {question.name} {where} there."), False
    return "", False


def _first_wrong_sentence(step, proved: int, total: int) -> str:
    verdict = step.verdict
    what = {"false": "is false", "undecided": "is not proved", "unreadable": "could not be read"}[verdict.verdict]
    text = f"{proved} of {total} steps proved before line {step.line}, whose step {what}: {verdict.reason}."
    point = step.as_dict()["counterexample"]
    if point:
        text += " Counterexample: " + ", ".join(f"{name} = {value}" for name, value in point.items()) + "."
    if verdict.sentence():
        text += " " + verdict.sentence()
    return text.replace("..", ".")

