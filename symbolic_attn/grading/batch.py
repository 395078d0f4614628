r"""Grading a course: every student's solution against the answer key, with points.

One student per file (the id is the file name without its extension) or one folder per
student (its solution files read in name order; the last statement of a name wins).
Each question earns its points when its value is right; a whole-matrix answer earns them
in proportion to its correct entries; a wrong answer that follows exactly from the
student's own earlier answers earns ``carried_forward`` of them (per entry: the right
entries keep their full share, the carried-forward ones earn the ``carried_forward`` part);
the earlier answers count as written, within their rounding, whichever way the student
rounded (weights from claimed scores S, S' or S' + M through the softmax, an output from
claimed weights: :mod:`symbolic_attn.grading.follow_through`).

Isolation: a worker process holds only what comes from the exercise (the exact result,
its intervals, the mistaken variants); everything a student wrote lives in the call that
grades that student, and a student's diagnosis sees only that student's claims.

The exercise is checked by the one check pipeline
(:class:`symbolic_attn.grading.pipeline.Checker`, the same as ``check``'s), built once per
worker in :class:`_Core`; a question adds its points and its rules on how precisely a
number must be written.  The verdicts are :class:`~symbolic_attn.grading.outcomes.Verdict`
members, and a student's result prints its own grade files (``json()``, ``csv_row()``,
``gradescope_json()``, ``prairielearn_json()``).

>>> from symbolic_attn.grading.answer_key import parse_answer_key
>>> from symbolic_attn.grading.submissions import parse_submission
>>> key = parse_answer_key('''
... [attention]
... scores = [["0", "ln(3)"]]
... value = [[1, 0], [0, 1]]
... [[questions]]
... name = "w"
... quantity = "weights"
... points = 2
... ''')
>>> result = grade(key, "ann", parse_submission("$w = [0.25, 0.75]$"))
>>> result.score, result.questions[0].verdict
(Fraction(2, 1), <Verdict.PASS: 'pass'>)
>>> result = grade(key, "bob", parse_submission("w = [0.25, 0.6]"))
>>> result.score, str(result.questions[0].verdict), result.questions[0].wrong
(Fraction(1, 1), 'fail', [(1, 2)])
"""

import os
import re
import stat
import unicodedata
from dataclasses import replace
from fractions import Fraction
from functools import partial

import sympy
from sympy.printing.str import sstr

from symbolic_attn.errors import SymbolicAttnError
from symbolic_attn.proofs.parallel import MAX_TASKS, available_cores, map_forked
from symbolic_attn.grading import feedback as feedback_text
# discover and read_student live in .roster; re-exported here, where callers have always found them.
from symbolic_attn.grading.roster import MAX_FILES_PER_STUDENT, MAX_STUDENTS, discover, read_student  # noqa: F401
from symbolic_attn.grading import claims as claim_rules
from symbolic_attn.grading.outcomes import Verdict
from symbolic_attn.grading.derivation_questions import grade_derivations
from symbolic_attn.grading.pipeline import Checker
from symbolic_attn.grading.results import QuestionResult, StudentResult
from symbolic_attn.grading.submissions import Submission

__all__ = ["QuestionResult", "StudentResult", "discover", "grade", "grade_all", "default_jobs"]

_EXACT_TEXT = 2_000  # characters of a closed form kept in the results


class _Core:
    """Everything derived from the exercise alone, built once per process (read-only): the
    one check pipeline's :class:`~symbolic_attn.grading.pipeline.Checker`, plus what a
    question adds to a claim (its points, its written-precision rules)."""

    def __init__(self, key):
        self.key = key
        self.exercise = key.exercise
        # A key of derivation questions only has nothing to compute.
        self.checker = Checker(self.exercise) if self.exercise is not None else None
        self._exact, self._decimals, self._selections = {}, {}, {}

    def shape(self, quantity):
        return self.checker.shape(quantity)

    def selection(self, question):
        """Where the question's entries are (the pipeline's select step, remembered)."""
        if question.number not in self._selections:
            self._selections[question.number] = self.checker.selection(question.quantity, question.row, question.col)
        return self._selections[question.number]

    def balls(self, question):
        return self.checker.balls(question.quantity, self.selection(question).positions)

    def values(self, question):
        """Lazy exact values: callables, so that intervals settle most claims first."""
        return self.selection(question).entries

    def exact_text(self, question) -> str:
        if question.number not in self._exact:
            values = [entry() for entry in self.values(question)]
            self._exact[question.number] = _clip(_nested([sstr(v, order="none") for v in values], question, self))
        return self._exact[question.number]

    def decimal_text(self, question) -> str:
        if question.number not in self._decimals:
            places = max(question.decimals or 0, 3) + 1
            try:
                grid = self.checker.decimals(question.quantity, places)
                texts = [grid[i - 1][j - 1] or "-" for i, j in self.selection(question).positions]
            except SymbolicAttnError:
                texts = ["-"] * len(self.selection(question).positions)
            self._decimals[question.number] = _nested(texts, question, self)
        return self._decimals[question.number]

    def judge(self, question, claimed):
        """(ok, undecided, imprecise, note) per claimed number, by the question's rule."""
        verdicts = []
        balls = self.balls(question) or [None] * len(claimed.elements)
        rounded = self.exercise.rounded  # inputs printed rounded: grading.rounded_inputs judges over their boxes
        functions = rounded.entries(question.quantity, question.row, question.col) if rounded else balls
        for value, element, ball, function in zip(self.values(question), claimed.elements, balls, functions):
            rule = question.rule
            if element.kind != "decimal" and (question.decimals is not None or question.strict_sig_figs is not None):
                rule = None  # an exact answer (1/3, 0) to a decimals question is judged exactly
            elif not _written_precision_ok(element, question):
                verdicts.append((False, False, True, ""))
                continue
            verdict = rounded.judge_element(function, value, element, rule, ball) if rounded else \
                claim_rules.judge_element(value, element, rule, ball)
            verdicts.append((verdict.state == Verdict.PASS, verdict.state == Verdict.UNDECIDED, False, verdict.note))
        return verdicts

    def claim(self, question, claimed):
        return claim_rules.Claim(question.number, question.quantity, claimed, question.row, question.col, question.name, question.rule)

    def diagnose(self, question, claimed, others):
        """Mistake ids reproducing the whole claim, and their details; ``others`` are this
        student's other answers (the pipeline's diagnose step: the attention core's mistakes
        and the follow-through, or the model's mistakes of a ``[define]`` key)."""
        # Numbered after every other answer: the diagnoser follows through from the
        # claims "before" it, and itself keeps only those upstream in the computation.
        last = max([c.index for c in others], default=0) + 1
        try:
            details = self.checker.diagnose(replace(self.claim(question, claimed), index=last), others)
        except (SymbolicAttnError, ValueError, IndexError):
            return [], []
        return list(dict.fromkeys(mistake for mistake, _ in details)), details


def _written_precision_ok(element, question) -> bool:
    if element.kind != "decimal":
        return True
    if question.decimals is not None:
        return element.half_unit <= sympy.Rational(1, 2) * sympy.Rational(10) ** (-question.decimals)
    if question.strict_sig_figs is not None:
        return _significant_figures(element.text) == question.strict_sig_figs
    return True


def _significant_figures(text: str) -> int:
    """Significant figures as written: 0.0280 -> 3, 2.80e-1 -> 3, 120 -> 3 (trailing zeros count)."""
    mantissa = text.lstrip("+-").lower().split("e")[0]
    digits = mantissa.replace(".", "").lstrip("0")
    return len(digits) or 1


def _nested(texts, question, core) -> str:
    if question.row is not None and question.col is not None:
        return texts[0]
    if question.row is not None or question.col is not None:
        return "[" + ", ".join(texts) + "]"
    rows, cols = core.shape(question.quantity)
    return "[" + ", ".join("[" + ", ".join(texts[i * cols:(i + 1) * cols]) + "]" for i in range(rows)) + "]"


def _clip(text: str) -> str:
    return text if len(text) <= _EXACT_TEXT else text[:_EXACT_TEXT - 3] + "..."


# ------------------------------------------------------------------ one student


def grade(key, student: str, submission: Submission, core: _Core | None = None, *, empty: str = "") -> StudentResult:
    """Grade one student's submission against the key (``core`` is shared by a worker);
    ``empty`` is the reason when the files read held nothing at all (``the file is empty``)."""
    core = core or _Core(key)
    max_score = key.max_score
    if submission.refused:
        return StudentResult(student, Fraction(0), max_score, False, submission.refused,
                             [_empty(q, Verdict.UNREADABLE, core, feedback_text.refused(submission.refused)) for q in key.questions])
    problems = [(p.line, p.message) for p in submission.problems]
    derived, chain_lines = grade_derivations([q for q in key.questions if q.kind == "derivation"], submission.documents)
    if derived:  # the statement reader's complaints about a derivation's own lines are noise
        problems = [(line, message) for line, message in problems if line not in chain_lines]
    keys = set().union(*(q.keys for q in key.questions if q.kind != "derivation")) if key.questions else set()
    answers = [s for s in submission.statements if s.name in keys]
    read = [(s.written, s.text, s.line) for s in submission.statements]
    unmatched, unlisted = _unmatched(key, submission.statements, keys)
    problems += [(statement.line, feedback_text.unmatched_name(statement.written, suggestion))
                 for statement, suggestion in unmatched]
    if unlisted:
        problems.append((unmatched[-1][0].line, f"{unlisted} more names read that no question has are not listed"))
    if not any(s.claimed is not None for s in answers) and not any(
            r.verdict != Verdict.MISSING for r in derived.values()):
        # Nothing to grade: an invalid submission (PrairieLearn: no penalty), not a zero.
        if answers:
            reason = f"no answer could be read (line {answers[-1].line}: {answers[-1].problem})"
        elif submission.statements:
            names = ", ".join(dict.fromkeys(s.written for s in submission.statements[:20]))
            reason = (f"no answer to any question: the names written ({names[:120]}) are none of "
                      f"{', '.join(q.name for q in key.questions)[:120]}")
        elif empty and not problems:
            reason = empty
        elif submission.blank and not problems:
            reason = "the file is empty: it holds only spaces, line breaks or a byte-order mark"
        else:
            reason = f"nothing readable: no statement such as {_example(core, key.questions[0])} was found"
            if problems:
                reason += f" (line {problems[0][0]}: {problems[0][1]})"
        results = [derived.get(q.number) or _grade_question(core, q, _last(answers, q), []) for q in key.questions]
        _mention_close_names(results, key, unmatched)
        return StudentResult(student, Fraction(0), max_score, False, reason, results, problems, read)
    # Every readable answer of this student, for carried-forward credit: the diagnoser
    # recomputes a wrong value from the answers upstream of it in the computation
    # (scores -> weights -> output), whatever the order of the questions in the key.
    claims = []
    for question in key.questions:
        if question.kind == "derivation":
            continue
        statement = _last(submission.statements, question)
        if statement is not None and statement.claimed is not None and not _shape_problem(statement.claimed, question, core):
            claims.append(core.claim(question, statement.claimed))
    results = []
    for question in key.questions:
        if question.kind == "derivation":
            results.append(derived[question.number])
            continue
        others = [c for c in claims if c.index != question.number]
        statement = _last(submission.statements, question)
        try:
            results.append(_grade_question(core, question, statement, others))
        except (ArithmeticError, RecursionError, ValueError) as error:
            # A value too large to compare (e^{e^{e^{e^{10}}}}) costs this answer, not the others.
            results.append(_undecidable(core, question, statement, error))
    _mention_close_names(results, key, unmatched)
    score = sum((r.points for r in results), Fraction(0))
    return StudentResult(student, score, max_score, True, "", results, problems, read)


def _unmatched(key, statements, keys) -> tuple:
    """(statement, the question name it is close to or None) for each name read that no
    question has -- reported to the student, never a silent 0; the first statement per
    name, at most 50 -- and how many more such names were not listed."""
    seen, found, unlisted = set(), [], 0
    for statement in statements:
        if statement.name in keys or statement.name in seen or statement.name.startswith("@"):
            continue
        seen.add(statement.name)
        if len(found) >= 50:
            unlisted += 1
            continue
        # Suggestions for the first 20 (each compares with every question's names).
        found.append((statement, _close_name(statement.name, key) if len(found) < 20 else None))
    return found, unlisted


def _close_name(name: str, key):
    """The question a name read is close to (a different case, a look-alike letter, one or
    two edits), or None.  Matching itself stays exact."""
    best = None
    for question in key.questions:
        for candidate in sorted(question.keys):
            if candidate.startswith("@"):
                continue
            if _skeleton(candidate) == _skeleton(name):
                return question
            limit = 1 if len(candidate) <= 4 else 2
            if abs(len(candidate) - len(name)) <= limit and best is None and _edits(candidate, name, limit) <= limit:
                best = question
    return best


def _skeleton(name: str) -> str:
    """A name folded for suggestions only: case, compatibility forms (ａ, 𝑎) and the
    Cyrillic or Greek letters that look Latin."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return folded.translate(_LOOKALIKES).replace("_", "")


_LOOKALIKES = str.maketrans("асеорхуікмнтвѕјԁһլոօ" "αοικνρτυχ", "aceopxyikmhtbsjdhlno" "aoikvptux")


def _edits(a: str, b: str, limit: int) -> int:
    """Edits (insert, delete, replace, swap two neighbours: a_{21} for a_{12}), stopped
    once they exceed ``limit``; only the band |i - j| <= limit is computed (fast for any
    number of questions and names)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    far = limit + 1
    before, previous = None, [j if j <= limit else far for j in range(len(b) + 1)]
    for i in range(1, len(a) + 1):
        current = [i if i <= limit else far] + [far] * len(b)
        for j in range(max(1, i - limit), min(len(b), i + limit) + 1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] != b[j - 1]))
            if before is not None and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cost = min(cost, before[j - 2] + 1)
            current[j] = min(cost, far)
        if min(current) > limit:
            return far
        before, previous = previous, current
    return previous[-1]


def _mention_close_names(results, key, unmatched):
    """A missing answer whose name the student wrote differently says so."""
    for result, question in zip(results, key.questions):
        if result.verdict != Verdict.MISSING:
            continue
        for statement, suggestion in unmatched:
            if suggestion is question:
                result.feedback += " " + feedback_text.close_name(statement.written, statement.line, question.name)
                break


def _answer_shape(core, question) -> tuple:
    """(rows, cols) of a question's answer as the student writes it (1 x k for a row or a
    column), or (None, None) when it cannot be told."""
    try:
        positions = core.selection(question).positions
    except Exception:  # noqa: BLE001 -- a hint only: the name alone then
        return None, None
    return len({i for i, _ in positions}), len({j for _, j in positions})


def _example(core, question) -> str:
    """``z_3 = [..., ...]``: a statement of the question's own name and shape."""
    rows, cols = _answer_shape(core, question)
    if rows is None:
        return f"{question.name} = VALUE"
    return f"{question.name} = {feedback_text.placeholder(question, rows, cols)[0]}"


def _empty_files(files) -> str:
    """``the file is empty`` when every file given has no bytes at all, else ``""`` (a size
    looked up, never a file opened: input files are read by :mod:`symbolic_attn.exact.source`)."""
    if not files:
        return ""
    for item in files:
        try:
            if not isinstance(item, (str, os.PathLike)):
                return ""
            status = os.lstat(item)
        except OSError:
            return ""
        if not stat.S_ISREG(status.st_mode) or status.st_size:
            return ""
    return "the file is empty" if len(files) == 1 else "the files are empty"


def _undecidable(core, question, statement, error):
    reason = " ".join(str(error).split())[:120] or type(error).__name__
    where = f" on line {statement.line}" if statement is not None else ""
    result = _empty(question, Verdict.UNDECIDED, core, f"Your answer{where} could not be compared with the right value "
                    f"({reason}): write it as a decimal or a simpler expression.")
    if statement is not None:
        result.claimed, result.line = statement.text or getattr(statement.claimed, "text", None), statement.line
    return result


def _last(statements, question):
    """The answer to a question: the last statement of any of its names."""
    return next((s for s in reversed(statements) if s.name in question.keys), None)


def _empty(question, verdict, core, message):
    if question.kind == "derivation":
        return QuestionResult(question.name, "derivation", None, None, Fraction(0), question.points, verdict, None,
                              question.goal, "", [], message)
    return QuestionResult(question.name, question.quantity, question.row, question.col, Fraction(0), question.points,
                          verdict, None, core.exact_text(question), core.decimal_text(question), [], message)


def _grade_question(core, question, statement, others) -> QuestionResult:
    result = _empty(question, Verdict.MISSING, core, feedback_text.missing(question, *_answer_shape(core, question)))
    if statement is None:
        return result
    result.line = statement.line
    if statement.claimed is None:
        result.verdict = Verdict.UNREADABLE
        result.feedback = feedback_text.unreadable(statement.line, statement.problem + _comma_hint(statement.text))
        return result
    claimed = statement.claimed
    result.claimed = statement.text or claimed.text  # as the student wrote it
    count = len(core.selection(question).positions)
    problem = _shape_problem(claimed, question, core, statement.text)
    if problem == "transposed":
        result.verdict, result.diagnosis = Verdict.FAIL, ["transposed"]
        result.wrong = core.selection(question).positions
        result.feedback = feedback_text.transposed_shape(question, *core.shape(question.quantity))
        return result
    if problem:
        result.verdict = Verdict.UNREADABLE
        result.feedback = feedback_text.unreadable(statement.line, problem)
        return result
    verdicts = core.judge(question, claimed)
    right = sum(ok for ok, _, _, _ in verdicts)
    undecided = any(u for _, u, _, _ in verdicts)
    imprecise = [claimed.elements[k].text for k, (_, _, p, _) in enumerate(verdicts) if p]
    result.points = question.points * right / count
    if right == count:
        result.verdict = Verdict.PASS
        result.feedback = feedback_text.passed(question)
        return result
    positions = core.selection(question).positions
    result.wrong = [positions[k] for k, (ok, _, _, _) in enumerate(verdicts) if not ok]
    diagnosis, details = core.diagnose(question, claimed, others)
    # Too few digits written is the whole story, unless the digits are right and the
    # decimal point is not (2.84 for 0.284 keeps its 3 figures but shows 2 decimals).
    if len(imprecise) == count - right and "decimal_point" not in diagnosis:
        result.verdict = Verdict.FAIL
        result.feedback = feedback_text.imprecise(question, imprecise, result, count)
        return result
    result.diagnosis = diagnosis
    share = core.key.carried_forward
    if "follows_from_claimed" in diagnosis and share > 0:
        # Every wrong entry follows from the student's own answers: each earns the share.
        result.verdict = Verdict.CARRIED_FORWARD
        result.points = question.points * (right + share * (count - right)) / count
    elif undecided and all(ok or u for ok, u, _, _ in verdicts):
        result.verdict = Verdict.UNDECIDED
    else:
        result.verdict = Verdict.FAIL
    result.feedback = feedback_text.for_result(result, question, core.exercise, details, share, count)
    # What the judge saw, where it explains a wrong entry (a finite number where the value
    # is -inf, -inf where it is finite), as check's note says it.
    notes = [(positions[k], note) for k, (ok, u, _, note) in enumerate(verdicts)
             if not ok and not u and note and not note.startswith("undecided")]
    if notes and result.verdict == Verdict.FAIL:
        (i, j), note = notes[0]
        where = f"Entry ({i},{j}): " if count > 1 else ""
        result.feedback += f" {where}{note[0].upper()}{note[1:]}" + ("" if note.endswith(".") else ".")
    return result


def _comma_hint(written: str) -> str:
    """The decimal-comma hint for a value whose commas may be decimal commas (0,5), else ""."""
    if re.search(r"\d,\d", written or ""):
        return " (if the commas are decimal commas, separate the entries with ';': [0,33; 0,67])"
    return ""


def _shape_problem(claimed, question, core, written: str = "") -> str:
    """Why a claimed value cannot be an answer to this question ("" when it fits)."""
    count = len(core.selection(question).positions)
    size = len(claimed.elements)
    rows, cols = core.shape(question.quantity)
    whole = question.row is None and question.col is None
    if size == count:
        if not whole or rows == 1 or cols == 1 or claimed.shape == (rows, cols):
            return ""
        if claimed.shape == (cols, rows):
            return "transposed"
        return f"a list of {size} numbers given where {question.name} is a {rows}x{cols} matrix: write its rows"
    hint = _comma_hint(written)
    what = "one number" if count == 1 else f"{count} numbers"
    if whole and rows > 1 and cols > 1:
        what += f" (it is a {rows}x{cols} matrix)"
    return f"{size} number{'s' if size != 1 else ''} given where {question.name} needs {what}{hint}"


# ------------------------------------------------------------------ a folder


_WORKER = {}


def _init_worker(key):
    _WORKER["core"] = _Core(key)


def _grade_files(job):
    student, files = job
    core = _WORKER["core"]
    try:
        return grade(core.key, student, read_student(files), core, empty=_empty_files(files))
    except Exception as error:  # noqa: BLE001 -- the batch boundary: one student never stops the course
        # One student's pathological text (or a checker bug it triggers) never stops the batch.
        reason = f"could not be graded ({type(error).__name__}: {' '.join(str(error).split())[:120]})"
        # One entry per question all the same: the table's and the files' columns stay aligned.
        questions = [_empty(q, Verdict.UNDECIDED, core, f"This submission could not be graded: {reason}.") for q in core.key.questions]
        return StudentResult(student, Fraction(0), core.key.max_score, False, reason, questions)


def default_jobs() -> int:
    """The number of cores this process may use."""
    return available_cores()


def grade_all(key, jobs_list, jobs: int = 1, progress=None) -> list:
    """Grade ``[(student, [files])]``; results in the same order.  ``progress(done, total)``.

    With ``jobs > 1`` the students are shared out by :func:`map_forked` (the pool
    ``derive`` uses): the workers are forked after the exercise is computed here, and are
    killed whenever this process stops (a time limit, an interrupt, an error), so no
    worker outlives a run and a stopped run never waits for one.
    """
    total = len(jobs_list)
    _init_worker(key)  # before any fork: every worker starts with the exercise computed
    if jobs <= 1 or total <= 1:
        results = []
        for job in jobs_list:
            results.append(_grade_files(job))
            if progress:
                progress(len(results), total)
        return results
    # SymPy's simplify imports sympy.physics.units the first time it runs (half a second):
    # imported once here, before the workers are forked, instead of once in each of them.
    import sympy.physics.units  # noqa: F401

    # One task per student, or per few students when there are more than the pipe holds.
    size = -(-total // MAX_TASKS)
    chunks = [jobs_list[start:start + size] for start in range(0, total, size)]
    done = [0]

    def on_value(index, value):
        done[0] += len(value)
        progress(done[0], total)

    values = map_forked([partial(_grade_chunk, chunk) for chunk in chunks], jobs,
                        on_value=on_value if progress else None)
    return [result for chunk in values for result in chunk]


def _grade_chunk(chunk) -> list:
    return [_grade_files(job) for job in chunk]
