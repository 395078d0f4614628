"""Benchmark: `symbolic-attn grade` on 200 submissions x 20 questions, cold.

The exercise: a 4x4 causal attention (Q, K: 4 x 3, V: 4 x 2, small integers, fixed
seed) with 20 questions: the raw scores S, the twelve weights a_{ij} of rows 2-4 that
the mask allows or blocks, the four output rows z_i, the whole output Z, the whole weights
W and one value of the scaled scores.  The 200 solutions (fixed seed) mix styles
(Markdown inline math, LaTeX align, plain text, bmatrix, decimal commas) and errors
(forgotten scale, a wrong entry, values carried forward from wrong weights, missing
answers), so that the diagnoser runs as it would on a real course.

Prints: the cold command wall time (a fresh interpreter, as a grader runs it) for
--jobs 1 and --jobs 2, and the time per submission; also the CPU time of the command and
its workers (on a loaded machine the wall time mostly measures the other processes).

    python bench/bench_grade.py [--students 200]
"""

import argparse
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from symbolic_attn.grading.answer_key import load_answer_key  # noqa: E402 -- after the sys.path insert


N, D_K, D_V = 4, 3, 2


def matrix(rows):
    return "[" + ", ".join("[" + ", ".join(str(x) for x in row) + "]" for row in rows) + "]"


def exercise_text(rng) -> str:
    q = [[rng.randint(-2, 2) for _ in range(D_K)] for _ in range(N)]
    k = [[rng.randint(-2, 2) for _ in range(D_K)] for _ in range(N)]
    v = [[rng.randint(0, 3) for _ in range(D_V)] for _ in range(N)]
    lines = ["title = \"bench: 4x4 causal attention\"", "[attention]", f"query = {matrix(q)}", f"key = {matrix(k)}",
             f"value = {matrix(v)}", 'mask = "causal"', "[grading]", "carried_forward = 0.5"]

    def question(name, quantity, row=None, col=None, points=1, extra=""):
        lines.extend(["[[questions]]", f'name = "{name}"', f'quantity = "{quantity}"']
                     + ([f"row = {row}"] if row else []) + ([f"col = {col}"] if col else [])
                     + [f"points = {points}"] + ([extra] if extra else []))

    question("S", "scores", points=2)
    question("s_{43}", "scaled", 4, 3, extra="decimals = 3")
    for i in range(2, 5):
        for j in range(1, 5):
            question(f"a_{{{i}{j}}}", "weights", i, j, extra="decimals = 3")
    for i in range(1, 5):
        question(f"z_{i}", "output", i, points=2)
    question("Z", "output", points=4)
    question("W", "weights", points=4)
    return "\n".join(lines) + "\n"


def decimals(result, stage, places):
    return result.decimals(stage, places)


def solution(rng, key, result, unscaled) -> str:
    """One student's text: right, unscaled, or with slips, in a random style."""
    style = rng.choice(["md", "tex", "txt", "comma"])
    source = unscaled if rng.random() < 0.25 else result
    weights = decimals(source, "weights", 3)
    output = decimals(source, "output", 3)
    scores = [[str(x) for x in row] for row in result.scores.tolist()]
    slip = rng.random() < 0.3
    if slip:  # one wrong weight, and the outputs of that row carried forward from it
        i, j = rng.randint(1, 3), rng.randint(0, 3)
        weights[i][j] = f"{float(weights[i][j]) + 0.1:.3f}"
    out = []

    def number(text):
        return text.replace(".", ",") if style == "comma" else text

    def row(values):
        return ("[" + "; ".join(number(x) for x in values) + "]") if style == "comma" else "[" + ", ".join(values) + "]"

    def wrap(statement):
        return {"md": f"${statement}$", "tex": f"\\( {statement} \\)", "txt": statement, "comma": statement}[style]

    out.append(wrap("S = " + ("\\begin{bmatrix} " + " \\\\ ".join(" & ".join(r) for r in scores) + " \\end{bmatrix}"
                              if style in ("md", "tex") else matrix(scores))))
    s = decimals(source, "scaled", 3)[3][2]
    out.append(wrap(f"s_{{43}} \\approx {number(s)}"))
    for i in range(2, 5):
        cells = [f"a_{{{i}{j}}} = {number(weights[i - 1][j - 1])}" for j in range(1, 5)]
        if style == "tex":
            out.append("\\begin{align*} " + " & ".join(c.replace(" = ", " &= ") for c in cells) + " \\end{align*}")
        else:
            out.append(", ".join(wrap(c) for c in cells))
    for i in range(1, 5):
        if rng.random() < 0.05:
            continue  # a missing answer
        out.append(wrap(f"z_{i} = " + row(output[i - 1])))
    out.append(wrap("Z = " + ("\\begin{pmatrix} " + " \\\\ ".join(" & ".join(number(x) for x in r) for r in output)
                              + " \\end{pmatrix}")))
    out.append(wrap("W = " + ("[" + ", ".join(row(r) for r in weights) + "]" if style != "comma" else
                              "\\begin{bmatrix} " + " \\\\ ".join(" & ".join(number(x) for x in r) for r in weights)
                              + " \\end{bmatrix}")))
    extension = {"md": ".md", "tex": ".tex", "txt": ".txt", "comma": ".txt"}[style]
    return "\n\n".join(out) + "\n", extension


def build(folder: Path, students: int):
    rng = random.Random(2024)
    exercise = folder / "exercise.toml"
    exercise.write_text(exercise_text(rng), encoding="utf-8")
    key = load_answer_key(exercise)
    result = key.exercise.compute()
    unscaled = key.exercise.compute(scale=1)
    submissions = folder / "submissions"
    submissions.mkdir()
    for number in range(students):
        text, extension = solution(rng, key, result, unscaled)
        (submissions / f"student{number:03d}{extension}").write_text(text, encoding="utf-8")
    return exercise, submissions, len(key.questions)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exercise, submissions, questions = build(Path(tmp), args.students)
        print(f"{args.students} submissions x {questions} questions")
        for jobs in (1, 2):
            start = time.perf_counter()
            cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run([sys.executable, "-m", "symbolic_attn", "grade", str(exercise), str(submissions),
                                   "--jobs", str(jobs), "--out", str(Path(tmp) / f"out{jobs}")],
                                  cwd=ROOT, capture_output=True, text=True)
            elapsed = time.perf_counter() - start
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = usage.ru_utime + usage.ru_stime - cpu_before.ru_utime - cpu_before.ru_stime
            if done.returncode != 0:
                sys.exit(f"grade failed ({done.returncode}): {done.stderr.strip()}")
            summary = done.stdout.strip().splitlines()[-1]
            print(f"--jobs {jobs}: {elapsed:6.2f} s cold, {1000 * elapsed / args.students:6.1f} ms per submission; "
                  f"CPU {cpu:6.2f} s, {1000 * cpu / args.students:5.1f} ms per submission  ({summary})")


if __name__ == "__main__":
    main()
