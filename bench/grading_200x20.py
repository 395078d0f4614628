"""Benchmark (issue 20): grading 200 submissions x 20 questions against a [define] key.

The answer key (fixed inputs): three tokens of width 4 with sinusoidal positions,
``H = X + P``, a causal multi-head attention with two heads and W_O, the residual and a
LayerNorm, ``N = layer_norm(H + M, eps = 1/100)``.  Its 20 questions name stage paths
all along the computation (``P``, ``M.head[1].scores``, ``M.head[1].weights``,
``M.head[2].output``, ``M.concat``, ``M``, ``R``, ``N.mean``, ``N.variance``, ``N``), as
entries, rows and whole matrices; each entry is worth a multiple of 1/2 point, so every
score is written exactly in ``grades.csv``.

The 200 solutions (fixed seed) are Markdown, LaTeX, plain text or text with decimal
commas.  Most are right, rounded to 3 or 4 places (certified roundings); some follow a
known mistake through every stage it changes (LayerNorm with the unbiased variance, the
unscaled scores, the heads concatenated in reverse order: the traces of the tool's own
variants of the key's definitions); some have a slip (one entry off by 0.1), missing
answers, unreadable answers (``0.2.3``, ``28.4\\%``); a few submissions are empty, binary
or prose only.

Timed, in one run:

* the tool's way: ``python -m symbolic_attn grade KEY FOLDER --out DIR`` as a fresh
  process (cold), with ``--jobs 1`` and with the default jobs; the in-process
  ``load_answer_key`` + ``grade_all(key, students, jobs=1)`` (the exercise's trace is
  computed once and shared by every student);
* the exercise's trace alone (what the tool computes once and the baseline once a student);
* the naive baseline: every student graded on their own from scratch, as an autograder
  grading each upload alone does: the key read again (so the exercise's trace is
  computed again) and ``grade(key, student, submission)`` with no shared core, SymPy's
  cache cleared before each student.  ``--baseline-students K`` times only the first K
  and extrapolates to all (said so in the output; the agreement is then checked on those K).

Each figure is printed as wall seconds and CPU seconds (the commands' with their workers):
on a shared machine the wall time also measures the other processes.

Checked: the in-process results and the baseline agree exactly (``Fraction`` scores and
every verdict) for every student graded both ways, and the command's ``grades.csv`` (both
job counts) holds the same exact scores; the counts of verdicts show the mix is not
trivial.  Exit status 1 when anything disagrees or the mix is trivial.

    python bench/grading_200x20.py [--students 200] [--questions 20] [--baseline-students K]
"""

import argparse
import csv
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import sympy  # noqa: E402 -- after the sys.path insert

from symbolic_attn.grading.answer_key import load_answer_key  # noqa: E402 -- after the sys.path insert
from symbolic_attn.grading.batch import grade, grade_all  # noqa: E402 -- after the sys.path insert
from symbolic_attn.grading.program_diagnose import CORE_VARIANTS  # noqa: E402 -- after the sys.path insert
from symbolic_attn.grading.roster import discover, read_student  # noqa: E402 -- after the sys.path insert
from symbolic_attn.model.variants import VARIANTS  # noqa: E402 -- after the sys.path insert

INPUTS = """[inputs]
X = [[1, 0, 1, 0], [0, 2, 0, 1], [1, 1, 0, 2]]
WQ1 = [[1, 0], [0, 1], [1, 0], [0, 0]]
WK1 = [[1, 0], [0, 0], [0, 1], [1, 0]]
WV1 = [[1, 0], [0, 1], [1, 1], [0, 2]]
WQ2 = [[0, 1], [1, 0], [0, 0], [1, 1]]
WK2 = [[0, 0], [1, 1], [0, 1], [1, 0]]
WV2 = [[2, 0], [0, 1], [1, 0], [0, 1]]
WO = [[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 1]]

[define]
P = "sinusoidal(3, 4)"
H = "X + P"
M = "multihead(H, heads = [[WQ1, WK1, WV1], [WQ2, WK2, WV2]], WO = WO, mask = 'causal')"
R = "H + M"
N = "layer_norm(R, eps = 1/100)"

[grading]
carried_forward = 0.5
"""

#: (name in LaTeX, stage path, row, col); the first five touch heads, LayerNorm and positions.
QUESTIONS = [
    ("a^{(1)}_{32}", "M.head[1].weights", 3, 2),
    ("h^{(2)}_{3}", "M.head[2].output", 3, None),
    ("N_{2}", "N", 2, None),
    ("p_{32}", "P", 3, 2),
    ("\\sigma^2_{3}", "N.variance", 3, 1),
    ("A^{(1)}", "M.head[1].weights", None, None),
    ("A^{(2)}", "M.head[2].weights", None, None),
    ("S^{(1)}", "M.head[1].scores", None, None),
    ("t^{(2)}_{32}", "M.head[2].scaled", 3, 2),
    ("a^{(2)}_{22}", "M.head[2].weights", 2, 2),
    ("H^{(1)}", "M.head[1].output", None, None),
    ("C_{3}", "M.concat", 3, None),
    ("M_{2}", "M", 2, None),
    ("R_{3}", "R", 3, None),
    ("\\mu_{3}", "N.mean", 3, 1),
    ("N", "N", None, None),
    ("n_{11}", "N", 1, 1),
    ("n_{34}", "N", 3, 4),
    ("q^{(2)}_{3}", "M.head[2].query", 3, None),
    ("P_{2}", "P", 2, None),
]

#: Mistaken solutions: (share of the students, the variant's settings); the rest are right.
PROFILES = [
    ("layer_norm_unbiased", 0.12, VARIANTS["layer_norm_unbiased"]),
    ("unscaled", 0.08, CORE_VARIANTS["unscaled"]),
    ("heads_order", 0.05, VARIANTS["heads_order"]),
]
STYLES = {"md": ".md", "tex": ".tex", "txt": ".txt", "comma": ".txt"}


def key_text(questions, points) -> str:
    lines = ['title = "bench: positions, two heads, residual, LayerNorm"', INPUTS]
    for (name, path, row, col), share in zip(questions, points):
        lines += ["[[questions]]", f'name = "{name.replace(chr(92), chr(92) * 2)}"', f'quantity = "{path}"']
        lines += [f"row = {row}"] if row else []
        lines += [f"col = {col}"] if col else []
        lines += [f"points = {share.numerator}" if share.denominator == 1 else f'points = "{share}"']
    return "\n".join(lines) + "\n"


def entries(trace, path, row, col, places) -> list:
    """The question's part of a stage as certified decimals: rows of strings."""
    grid = trace.decimals(path, places)
    if row and col:
        return [[grid[row - 1][col - 1]]]
    if row:
        return [grid[row - 1]]
    return grid


def plain(name: str) -> str:
    """A LaTeX name as a plain-text solution writes it: a^{(1)}_{32} -> a^(1)_32."""
    return name.replace("\\", "").replace("{", "").replace("}", "")


def written(rows, style, whole) -> str:
    if style == "comma":
        rows = [[x.replace(".", ",") for x in r] for r in rows]
    if len(rows) == 1 and len(rows[0]) == 1:
        return rows[0][0]
    if whole and style in ("md", "tex", "comma"):
        return "\\begin{bmatrix} " + " \\\\ ".join(" & ".join(r) for r in rows) + " \\end{bmatrix}"
    separator = "; " if style == "comma" else ", "
    if not whole:
        return "[" + separator.join(rows[0]) + "]"
    return "[" + ", ".join("[" + separator.join(r) + "]" for r in rows) + "]"


def solution(rng, questions, traces, seeded=None) -> tuple:
    """One student's text and file extension; ``seeded`` forces a mistaken profile or
    (``"missing"``) a right solution without its first answer."""
    kind = 1.0 if seeded else rng.random()
    if kind < 0.015:
        return "", ".md"  # an empty file
    if kind < 0.025:
        return "\x00\x01PK binary upload\x00", ".md"
    if kind < 0.035:
        return "I could not finish the exercise, sorry: I ran out of time on the LayerNorm.\n", ".txt"
    style = rng.choice(list(STYLES))
    places = rng.choice([3, 4])
    draw, profile = (1.0 if seeded else rng.random()), "right"
    for name, share, _settings in PROFILES:
        if draw < share:
            profile = name
            break
        draw -= share
    if seeded in traces:
        profile = seeded
    skip = 0.5 if rng.random() < 0.05 else 0.02  # a few hand in half the questions
    slip = rng.randrange(len(questions)) if rng.random() < 0.12 else None
    lines = []
    for number, (name, path, row, col) in enumerate(questions):
        if rng.random() < skip or (number == 0 and seeded == "missing"):
            continue
        values = entries(traces[profile], path, row, col, places)
        if number == slip:
            i, j = rng.randrange(len(values)), rng.randrange(len(values[0]))
            values[i][j] = str(Decimal(values[i][j]) + Decimal("0.1"))  # keeps its places
        text = written(values, style, row is None)
        if rng.random() < 0.01:
            text = rng.choice(["0.2.3", "28.4\\%", "[0.1, 0.2"])
        who = plain(name) if style in ("txt", "comma") else name
        statement = f"{who} = {text}"
        lines.append({"md": f"${statement}$", "tex": f"\\( {statement} \\)"}.get(style, statement))
    if rng.random() < 0.1:
        rng.shuffle(lines)  # answers in another order than the questions'
    return "\n\n".join(lines) + "\n", STYLES[style]


def build(folder: Path, students: int, count: int):
    rng = random.Random(20)
    questions = QUESTIONS[:count]
    path_key = folder / "key.toml"
    # Half a point an entry (at least 1 a question), so that every score, with half the
    # points for a carried-forward entry, is a multiple of 1/4 and grades.csv writes it exactly.
    path_key.write_text(key_text(questions, [Fraction(1)] * len(questions)), encoding="utf-8")
    exercise = load_answer_key(path_key).exercise  # the questions do not change the trace
    traces = {"right": exercise.trace()}
    traces.update({name: exercise.trace(variant=settings) for name, _share, settings in PROFILES})
    points = []
    for _name, path, row, col in questions:
        rows, cols = traces["right"][path].shape
        size = 1 if row and col else cols if row else rows * cols
        points.append(Fraction(max(size, 2), 2))
    path_key.write_text(key_text(questions, points), encoding="utf-8")
    submissions = folder / "submissions"
    submissions.mkdir()
    for number in range(students):
        # The first students seed a mistake and a missing answer, so that even a quick
        # run's mix is not trivial; the rest are drawn.
        body, extension = solution(rng, questions, traces, {1: "layer_norm_unbiased", 2: "missing"}.get(number))
        (submissions / f"student{number:03d}{extension}").write_text(body, encoding="utf-8")
    return path_key, submissions



def outcome(result) -> tuple:
    """What must agree: the exact score, gradable, and every question's verdict and points."""
    return result.score, result.gradable, tuple((q.name, q.verdict, q.points) for q in result.questions)


def baseline(key_path: Path, jobs_list) -> tuple:
    """Every student graded alone from scratch: the key read again (its trace computed
    again), SymPy's cache cleared, ``grade`` with no shared core."""
    results = []
    start, cpu = time.perf_counter(), time.process_time()
    for student, files in jobs_list:
        sympy.core.cache.clear_cache()
        key = load_answer_key(key_path)
        try:
            results.append(grade(key, student, read_student(files)))
        except Exception as error:  # noqa: BLE001 -- as grade_all's batch boundary: one student never stops the run
            results.append(error)
    return results, time.perf_counter() - start, time.process_time() - cpu


def command(key_path: Path, submissions: Path, out: Path, jobs) -> tuple:
    """``grade`` as a fresh process: (wall seconds, CPU seconds of it and its workers,
    {student: exact score} from grades.csv, its summary line)."""
    arguments = [sys.executable, "-m", "symbolic_attn", "grade", str(key_path), str(submissions), "--out", str(out)]
    arguments += ["--jobs", str(jobs)] if jobs else []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(arguments, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if done.returncode not in (0, 1):  # 1: some submission not gradable, as the bench seeds
        sys.exit(f"grade failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    with open(out / "grades.csv", encoding="utf-8", newline="") as stream:
        scores = {row["student"]: Fraction(row["score"]) for row in csv.DictReader(stream)}
    return elapsed, cpu, scores, done.stdout.strip().splitlines()[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    parser.add_argument("--questions", type=int, default=20, choices=range(1, len(QUESTIONS) + 1), metavar="Q")
    parser.add_argument("--baseline-students", type=int, default=None, metavar="K",
                        help="time the naive baseline on the first K students only and extrapolate (default: all)")
    args = parser.parse_args()
    students = args.students
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        key_path, submissions = build(folder, students, args.questions)
        print(f"{students} submissions x {args.questions} questions; [define] key: sinusoidal positions, "
              f"2-head causal multihead with W_O, residual, LayerNorm (eps 1/100)")
        sympy.core.cache.clear_cache()
        start = time.perf_counter()
        load_answer_key(key_path).exercise.trace()
        once = time.perf_counter() - start
        print(f"the exercise's trace alone (key read, every stage computed): {once:.2f} s: once for the tool, "
              f"once per student for the baseline")
        cold = {}
        for jobs in (1, None):
            elapsed, cpu, scores, summary = command(key_path, submissions, folder / f"out{jobs or 'default'}", jobs)
            cold[jobs] = (elapsed, cpu, scores)
            print(f"tool, cold command --jobs {jobs or 'default'}: {elapsed:7.2f} s wall, "
                  f"{1000 * elapsed / students:7.1f} ms per student; CPU {cpu:7.2f} s  ({summary})")
        sympy.core.cache.clear_cache()
        start, cpu = time.perf_counter(), time.process_time()
        key = load_answer_key(key_path)
        jobs_list = discover([submissions])
        tool = grade_all(key, jobs_list, jobs=1)
        in_process, in_process_cpu = time.perf_counter() - start, time.process_time() - cpu
        print(f"tool, in-process load_answer_key + grade_all(jobs=1): {in_process:7.2f} s wall, "
              f"{1000 * in_process / students:7.1f} ms per student; CPU {in_process_cpu:7.2f} s")
        subset = jobs_list if args.baseline_students is None else jobs_list[:args.baseline_students]
        naive, naive_time, naive_cpu = baseline(key_path, subset)
        scale = students / len(subset)
        estimated, estimated_cpu = naive_time * scale, naive_cpu * scale
        how = "measured" if len(subset) == students else f"measured on the first {len(subset)}, extrapolated to {students}"
        print(f"naive baseline, each student from scratch (key re-read, trace recomputed, no shared core): "
              f"{estimated:7.2f} s wall ({how}), {1000 * estimated / students:7.1f} ms per student; "
              f"CPU {estimated_cpu:7.2f} s")
        print(f"ratio baseline / tool, wall: {estimated / in_process:5.1f}x against in-process grade_all, "
              f"{estimated / cold[1][0]:5.1f}x against the cold command --jobs 1, "
              f"{estimated / cold[None][0]:5.1f}x against the cold command with the default jobs")
        print(f"ratio baseline / tool, CPU:  {estimated_cpu / in_process_cpu:5.1f}x against in-process grade_all, "
              f"{estimated_cpu / cold[1][1]:5.1f}x against the cold command --jobs 1, "
              f"{estimated_cpu / cold[None][1]:5.1f}x against the cold command with the default jobs")

        disagree = []
        for (student, _files), ours, theirs in zip(subset, tool, naive):
            if isinstance(theirs, Exception) or outcome(ours) != outcome(theirs):
                disagree.append(student)
        for jobs, (_elapsed, _cpu, scores) in cold.items():
            disagree += [f"{r.student} (command --jobs {jobs or 'default'})" for r in tool if scores.get(r.student) != r.score]
        verdicts = Counter(q.verdict for r in tool for q in r.questions)
        failed = [q for r in tool for q in r.questions if q.verdict == "fail"]
        scores = [r.score for r in tool]
        print(f"results: {sum(r.gradable for r in tool)} gradable, {sum(not r.gradable for r in tool)} not gradable; "
              f"full marks {sum(r.score == r.max_score for r in tool)}, zero {sum(s == 0 for s in scores)}, "
              f"mean score {float(sum(scores, Fraction(0)) / len(scores)):.2f} of {float(key.max_score):g}")
        print("answers: " + ", ".join(f"{verdicts[v]} {v}" for v in
                                      ("pass", "fail", "carried_forward", "missing", "unreadable", "undecided")))
        print(f"failed answers with a named mistake: {sum(bool(q.diagnosis) for q in failed)} of {len(failed)}")
        if disagree:
            print(f"DISAGREE on {len(disagree)}: {', '.join(disagree[:10])}")
            return 1
        print(f"agreement: identical exact scores and verdicts for all {len(subset)} students graded both ways; "
              f"grades.csv of both commands holds the same exact scores for all {students}")
        if not (verdicts["pass"] and verdicts["fail"] and verdicts["missing"] + verdicts["carried_forward"]):
            print("TRIVIAL: the mix needs passes, failures and missing or carried-forward answers")
            return 1
        return 0


if __name__ == "__main__":
    sys.exit(main())
