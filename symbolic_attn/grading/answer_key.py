r"""The answer key of an exercise file: ``[grading]`` and ``[[questions]]``.

::

    [grading]
    carried_forward = 0.5      # share of the points for a value that follows exactly from
                               # the student's own earlier wrong answers (0 disables)
    [[questions]]
    name = "a_{32}"            # how students write it; aliases = ["alpha_{32}"] optional
    quantity = "weights"       # a stage path of the exercise (query ... output)
    row = 3
    col = 2
    points = 2
    decimals = 3               # or sig_figs, strict_sig_figs, tolerance, relative

A question names a stage (``quantity``) and optionally a 1-based ``row``/``col``; without
them its points are shared by the entries.  Names are matched after
:func:`~symbolic_attn.grading.submissions.normalize_name`, the one normal form a solution's
statements are read with (spacing, braces, math delimiters and separators between indices
do not count; case does): ``s'_{32}``, ``z^{(2)}``, ``\sigma^2``/``σ²``, ``\hat{y}``,
``\text{attn\_weights}``/``attn_weights`` are names on both sides.  Points are exact
(an integer, a decimal such as ``1.5``, or a fraction written as a string ``"2/3"``).
Without ``[grading]``, ``carried_forward`` is 0.5, the share in the issue's example.

>>> key = parse_answer_key('''
... [inputs]
... X = [[1, 0], [0, 1], [1, 1]]
... [attention]
... query = "X"
... key = "X"
... value = "X"
... [[questions]]
... name = "a_{32}"
... quantity = "weights"
... row = 3
... col = 2
... points = 2
... decimals = 3
... ''', source="key.toml")
>>> q = key.questions[0]
>>> q.label, q.points, q.decimals, key.carried_forward
('a_{32}', Fraction(2, 1), 3, Fraction(1, 2))
>>> key.find("a_{3,2}") is q, key.find("A_{32}")
(True, None)
>>> parse_answer_key('[attention]\nvalue = [[1]]\nscores = [[0]]\n[[questions]]\nname = "w"\nquantity = "weights"\npoints = 0\n')
Traceback (most recent call last):
...
symbolic_attn.errors.ExerciseError: <exercise>: question 1: points: expected a positive number of points (at most 1000), got 0
"""

from dataclasses import dataclass
from fractions import Fraction

from symbolic_attn.errors import ExerciseError, SymbolicAttnError, shown
from symbolic_attn.exact.parse import parse_expression
from symbolic_attn.grading.claims import parse_rule
from symbolic_attn.exact.source import EXERCISE, read_toml
from symbolic_attn.grading import derivation_questions
from symbolic_attn.grading.exercise import exercise_from_table, exercise_table
from symbolic_attn.grading.computation import TomlFloat
from symbolic_attn.grading.submissions import name_problem, normalize_name, position_key
from symbolic_attn.model.trace import known_path

__all__ = ["Question", "AnswerKey", "load_answer_key", "parse_answer_key", "MAX_QUESTIONS"]

MAX_QUESTIONS = 500
MAX_POINTS = 1000
_QUESTION_KEYS = {"name", "aliases", "quantity", "row", "col", "points", "decimals", "sig_figs",
                  "strict_sig_figs", "tolerance", "relative", "label", "kind"}
#: ``value``: a number or matrix of the exercise's computation; ``derivation``: a chain of
#: steps from ``start`` to ``goal`` (:mod:`symbolic_attn.grading.derivation_questions`).
QUESTION_KINDS = ("value", "derivation")
#: The top-level tables of a key with derivation questions only (nothing to compute).
_DERIVATION_KEY_TOP = {"title", "description", "questions", "grading"}
_RULES = ("decimals", "sig_figs", "strict_sig_figs", "tolerance", "relative")
_GRADING_KEYS = {"carried_forward"}


@dataclass(frozen=True)
class Question:
    """One question of the key; ``rule`` is the claims rule used to judge its values."""

    number: int  # 1-based, in the order of the file
    name: str
    aliases: tuple
    keys: frozenset  # normalized names
    quantity: str
    row: int | None
    col: int | None
    points: Fraction
    rule: object = None  # a claims.Tolerance, or None: judged by how it is written
    decimals: int | None = None  # at least this many decimals written
    strict_sig_figs: int | None = None  # exactly this many significant figures written
    kind: str = "value"

    @property
    def label(self) -> str:
        return self.name

    def requirement(self) -> str:
        """The precision rule in words, for feedback and exports."""
        if self.decimals is not None:
            return f"{self.decimals} decimals"
        if self.strict_sig_figs is not None:
            return f"exactly {self.strict_sig_figs} significant figures"
        return self.rule.describe() if self.rule is not None else "by how it is written"


@dataclass(frozen=True)
class AnswerKey:
    """An exercise and its questions."""

    exercise: object
    questions: tuple
    carried_forward: Fraction

    @property
    def max_score(self) -> Fraction:
        return sum((q.points for q in self.questions), Fraction(0))

    def find(self, name: str):
        """The question a written name refers to, or None."""
        key = normalize_name(name)
        return next((q for q in self.questions if key in q.keys), None)


def load_answer_key(path) -> AnswerKey:
    """Read an exercise file with its answer key; any problem is an :class:`ExerciseError`."""
    # The one file reader: only a regular file, size checked first (a FIFO or a device must
    # not block or stream), TOML pre-scanned; read and parsed once for exercise and key.
    source = shown(str(path), 200)
    return _answer_key(read_toml(path, EXERCISE, TomlFloat, source), source)


def parse_answer_key(data, source: str = "<exercise>") -> AnswerKey:
    """Validate an exercise (as :func:`parse_exercise` does) and then its answer key."""
    return _answer_key(exercise_table(data, source), source)


def _answer_key(table: dict, source: str) -> AnswerKey:
    entries = table.get("questions")
    for number, entry in enumerate(entries if isinstance(entries, list) else [], start=1):
        kind = entry.get("kind", "value") if isinstance(entry, dict) else "value"
        if kind not in QUESTION_KINDS:
            raise ExerciseError(f"{shown(source, 200)}: question {number}: kind: expected one of "
                                f"{', '.join(QUESTION_KINDS)}, got {_show(kind)}")
    if "attention" not in table and "define" not in table and _only_derivations(table):
        # Nothing to compute: every question is a derivation, decided by the steps checker.
        for name in table:
            if name not in _DERIVATION_KEY_TOP:
                raise ExerciseError(f"{shown(source, 200)}: {name}: unknown key in a key of derivation questions "
                                    f"(expected one of: {', '.join(sorted(_DERIVATION_KEY_TOP))})")
        return _KeyReader(shown(source, 200), None).key(table)
    exercise = exercise_from_table(table, source)  # the same parsed table: read once
    # Any exercise: [attention], [define] (LayerNorm, heads, positions, blocks) or both; a
    # question's quantity is any stage path of its trace (N, M.head[2].weights, A.weights).
    return _KeyReader(source, exercise).key(table)


def _only_derivations(table: dict) -> bool:
    entries = table.get("questions")
    return isinstance(entries, list) and bool(entries) and all(
        isinstance(e, dict) and e.get("kind") == "derivation" for e in entries)


#: A TOML float kept as its written text (0.5 stays exactly 1/2): the exercise reader's.
_Float = TomlFloat


class _KeyReader:
    def __init__(self, source, exercise):
        self.source, self.exercise = source, exercise

    def fail(self, key, problem) -> ExerciseError:
        return ExerciseError(f"{self.source}: {key}: {problem}")

    def key(self, table) -> AnswerKey:
        grading = table.get("grading", {})
        if not isinstance(grading, dict):
            raise self.fail("grading", "expected a table ([grading])")
        for name in grading:
            if name not in _GRADING_KEYS:
                raise self.fail(f"grading.{name}", f"unknown key (expected one of: {', '.join(sorted(_GRADING_KEYS))})")
        share = self.number("grading.carried_forward", grading.get("carried_forward", _Float("0.5")))
        if not 0 <= share <= 1:
            raise self.fail("grading.carried_forward", f"expected a share from 0 to 1, got {_show(share)}")
        entries = table.get("questions", [])
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise self.fail("questions", "expected an array of tables ([[questions]])")
        if len(entries) > MAX_QUESTIONS:
            raise self.fail("questions", f"{len(entries)} questions exceed the limit of {MAX_QUESTIONS}")
        questions, seen = [], {}
        for index, entry in enumerate(entries):
            question = self.question(index, entry)
            for name in question.keys:
                if name in seen:
                    raise self.fail(f"question {index + 1}: name", f"{name!r} is also a name of question {seen[name] + 1}")
                seen[name] = index
            questions.append(question)
        return AnswerKey(self.exercise, tuple(questions), share)

    def number(self, where, value) -> Fraction:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise self.fail(where, f"expected a number, got {_show(value)}")
        text = str(value).strip()
        if len(text) > 40:
            raise self.fail(where, f"number too long: {_show(text)}")
        # The input language's reader (ASCII digits only: Fraction("٢") would read an
        # Arabic-Indic two), then an exact rational.
        try:
            number = parse_expression(text)
        except SymbolicAttnError:
            number = None
        if number is None or not getattr(number, "is_Rational", False):
            raise self.fail(where, f"expected a number such as 2, 1.5 or \"2/3\", got {_show(value)}")
        return Fraction(int(number.p), int(number.q))

    def question(self, index, entry):
        prefix = f"question {index + 1}: "  # counted from 1, as claims are
        kind = entry.get("kind", "value")
        if kind not in QUESTION_KINDS:
            raise self.fail(prefix + "kind", f"expected one of {', '.join(QUESTION_KINDS)}, got {_show(kind)}")
        for name in entry:
            if name not in _QUESTION_KEYS | derivation_questions.KEYS:
                raise self.fail(prefix + name, f"unknown key (expected one of: {', '.join(sorted(_QUESTION_KEYS))})")
        name = entry.get("name")
        if not isinstance(name, str) or not normalize_name(name):
            why = f" ({name_problem(name)})" if isinstance(name, str) else ""
            raise self.fail(prefix + "name", f"expected a name such as \"a_{{32}}\", \"s'_{{32}}\" or \"Z\", "
                            f"got {_show(name)}{why}")
        aliases = entry.get("aliases", [])
        if not isinstance(aliases, list) or len(aliases) > 16:
            raise self.fail(prefix + "aliases", f"expected a list of at most 16 names, got {_show(aliases)}")
        for number, alias in enumerate(aliases):
            if not isinstance(alias, str) or not normalize_name(alias):
                why = name_problem(alias) if isinstance(alias, str) else "not a string"
                raise self.fail(f"{prefix}aliases[{number + 1}]", f"{_show(alias)} is not a name ({why})")
        if kind == "derivation":
            points = self.number(prefix + "points", entry.get("points", 1))
            if not 0 < points <= MAX_POINTS:
                raise self.fail(prefix + "points", f"expected a positive number of points (at most {MAX_POINTS}), got {_show(points)}")
            keys = frozenset(normalize_name(n) for n in (name, *aliases))
            return derivation_questions.read_derivation_question(index + 1, entry, name, tuple(aliases), keys, points,
                                                                 self.fail)
        if self.exercise is None:
            raise self.fail(prefix + "kind", "a question on a value needs an [attention] or [define] section")
        quantity = known_path(entry.get("quantity"), self.paths())  # masked_scores: the stage masked
        rows, cols = self.stage_shape(prefix + "quantity", quantity)
        row = self.index(entry, "row", prefix, rows, quantity)
        col = self.index(entry, "col", prefix, cols, quantity)
        points = self.number(prefix + "points", entry.get("points", 1))
        if not 0 < points <= MAX_POINTS:
            raise self.fail(prefix + "points", f"expected a positive number of points (at most {MAX_POINTS}), got {_show(points)}")
        rules = [rule for rule in _RULES if rule in entry]
        if len(rules) > 1:
            raise self.fail(prefix + rules[1], f"give at most one of {', '.join(_RULES)} (got {', '.join(rules)})")
        rule, decimals, strict = None, None, None
        if rules:
            kind, amount = rules[0], entry[rules[0]]
            if kind in ("decimals", "sig_figs", "strict_sig_figs"):
                if isinstance(amount, bool) or not isinstance(amount, int) or not 0 <= amount <= 50:
                    raise self.fail(prefix + kind, f"expected an integer from 0 to 50, got {_show(amount)}")
            try:
                if kind == "decimals":
                    decimals = amount
                    rule = parse_rule("tolerance", f"1/(2*10**{amount})")
                elif kind in ("sig_figs", "strict_sig_figs"):
                    rule = parse_rule("sig_figs", amount)
                    strict = amount if kind == "strict_sig_figs" else None
                else:
                    rule = parse_rule(kind, str(amount) if isinstance(amount, _Float) else amount)
            except SymbolicAttnError as error:
                raise self.fail(prefix + kind, " ".join(str(error).split())) from None
        names = (name, *aliases)
        # A [[claims]] entry of a TOML solution answers by position: @weights[3,2].
        keys = frozenset([normalize_name(n) for n in names] + [position_key(quantity, row, col)])
        return Question(index + 1, name, tuple(aliases), keys, quantity, row, col, points, rule, decimals, strict)

    def stage_shape(self, where, quantity):
        """(rows, cols) of a stage: a claims quantity, or any stage path of the exercise's trace."""
        if quantity in ("query", "key") and self.exercise.attention is not None and self.exercise.attention.query is None:
            raise self.fail(where, f"no {quantity} in this exercise (scores were given directly)")
        paths = self.paths()
        if not isinstance(quantity, str) or quantity not in paths:
            raise self.fail(where, f"expected one of {', '.join(paths)}, got {_show(quantity)}")
        return self.exercise.quantity_shape(quantity)

    def paths(self) -> list:
        """The stage paths of this exercise, in the order the trace computes them."""
        if not hasattr(self, "_paths"):
            try:
                self._paths = list(self.exercise.quantities())
            except SymbolicAttnError:
                self._paths = ["query", "key", "value", "scores", "scaled", "masked", "weights", "output"]
        return self._paths

    def index(self, entry, name, prefix, size, quantity):
        value = entry.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= size:
            raise self.fail(prefix + name, f"{_show(value)} is outside 1..{size} ({quantity} has {size} {name}s; indices are 1-based)")
        return value


def _show(value) -> str:
    text = str(value) if isinstance(value, Fraction) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
