"""Benchmark: ``symbolic-attn steps`` on a 10-line derivation, and grading 200 derivation
submissions on 2 cores (issue 22, item 6: targets under 2 s and under 60 s).

1. A 10-line derivation (shift invariance, written out step by step: 10 sides, 9 steps), checked by the command as a student runs it (a fresh interpreter: min
   and median of several runs), and in-process per step, against a naive baseline in the
   same run: each step's two sides read by the same reader, then ``sympy.simplify(left -
   right) == 0`` -- what an unsound checker does (it proves nothing when it says no, and it
   ignores domains and bound variables when it says yes).
2. ``symbolic-attn grade`` on 200 submissions for examples/steps/answer_key.toml (without its
   variance question, which needs random variables, not read yet; copies of
   the example submissions, each student under their own name), ``--jobs 2`` against
   ``--jobs 1`` (the ratio is the speed-up from the second core).

    python bench/bench_steps.py [--runs N]

Every figure is given as wall-clock time and as the CPU time of the processes that did the
work (this process's, or its children's): on a machine shared with other work the wall clock
of one run can be several times another's, while the CPU time of the same work moves much
less.  The worst case is also given against the naive baseline's CPU time of item 1, measured
in the same run.
"""

import argparse
import os
import resource
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import sympy  # noqa: E402 -- after the sys.path insert

from symbolic_attn.steps.declarations import parse_declarations  # noqa: E402
from symbolic_attn.steps.document import read_document  # noqa: E402
from symbolic_attn.steps.grammar import read_math  # noqa: E402
from symbolic_attn.steps.report import check_text  # noqa: E402

SYMBOLS = "n: positive integer; i, j: integer 1..n; x: real vector n; c: real"
DERIVATION = rf"""<!-- symbols: {SYMBOLS} -->
## shift, step by step

$$
\begin{{aligned}}
\operatorname{{softmax}}(x + c)_i &= \frac{{e^{{x_i + c}}}}{{\sum_{{j=1}}^{{n}} e^{{x_j + c}}}} \\
&= \frac{{e^{{x_i}} e^{{c}}}}{{\sum_{{j=1}}^{{n}} e^{{x_j + c}}}} \\
&= \frac{{e^{{x_i}} e^{{c}}}}{{\sum_{{j=1}}^{{n}} e^{{x_j}} e^{{c}}}} \\
&= \frac{{e^{{x_i}} e^{{c}}}}{{e^{{c}} \sum_{{j=1}}^{{n}} e^{{x_j}}}} \\
&= \frac{{e^{{c}}}}{{e^{{c}}}} \cdot \frac{{e^{{x_i}}}}{{\sum_{{j=1}}^{{n}} e^{{x_j}}}} \\
&= 1 \cdot \frac{{e^{{x_i}}}}{{\sum_{{j=1}}^{{n}} e^{{x_j}}}} \\
&= \frac{{e^{{x_i}}}}{{\sum_{{j=1}}^{{n}} e^{{x_j}}}} \\
&= e^{{x_i}} \cdot \frac{{1}}{{\sum_{{j=1}}^{{n}} e^{{x_j}}}} \\
&= \frac{{\exp(x_i)}}{{\sum_j \exp(x_j)}} \\
&= \operatorname{{softmax}}(x)_i
\end{{aligned}}
$$
"""
STUDENTS = 200


def children_cpu():
    """CPU seconds (user + system) of every child process ended and waited for so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cold(argv, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        times.append(time.perf_counter() - start)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()}")
    return min(times), statistics.median(times), done


def naive(text):
    """The same readings, each step decided by simplify(left - right) == 0."""
    declarations = parse_declarations(SYMBOLS)
    verdicts = []
    for chain in read_document(text, "md", "bench.md").chains:
        sides = [read_math(s.text, declarations).expr for s in chain.sides]
        for left, right in zip(sides, sides[1:]):
            left, right = (sympy.sympify(v).doit() if hasattr(v, "doit") else v for v in (left, right))
            verdicts.append(sympy.simplify(left - right) == 0)
    return verdicts


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="runs of the cold command (min and median; default 5)")
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "derivation.md"
        path.write_text(DERIVATION, encoding="utf-8")
        lines = len([line for line in DERIVATION.splitlines() if line.startswith(("&=", r"\operatorname"))])
        fastest, median, done = cold([sys.executable, "-m", "symbolic_attn", "steps", str(path)], runs)
        print(f"steps on a {lines}-line derivation, cold command: min {fastest:.2f} s, median {median:.2f} s "
              f"over {runs} runs (target < 2 s); exit {done.returncode}")
        start, cpu = time.perf_counter(), time.process_time()
        report = check_text(DERIVATION, "md", "bench.md")
        ours, ours_cpu = time.perf_counter() - start, time.process_time() - cpu
        steps = [s for c in report.chains for s in c.steps]
        start, cpu = time.perf_counter(), time.process_time()
        baseline = naive(DERIVATION)
        theirs, theirs_cpu = time.perf_counter() - start, time.process_time() - cpu
        print(f"in process: {ours:.2f} s (cpu {ours_cpu:.2f} s) for {len(steps)} steps "
              f"({ours / len(steps) * 1000:.0f} ms a step), "
              f"{sum(s.verdict.verdict == 'proved' for s in steps)} proved; naive simplify baseline {theirs:.2f} s "
              f"(cpu {theirs_cpu:.2f} s; {sum(baseline)} 'equal'); ratio ours/naive {ours / theirs:.2f} "
              f"(cpu {ours_cpu / theirs_cpu:.2f})")

        # The key without its variance question: random variables are not read yet.
        blocks = re.split(r"(?m)^(?=\[\[questions\]\])", (ROOT / "examples" / "steps" / "answer_key.toml").read_text())
        key = Path(folder) / "answer_key.toml"
        key.write_text("".join(b for b in blocks if 'name = "variance"' not in b), encoding="utf-8")
        sources = sorted((ROOT / "examples" / "steps" / "submissions").iterdir())
        course = Path(folder) / "course"
        course.mkdir()
        for k in range(STUDENTS):
            source = sources[k % len(sources)]
            shutil.copy(source, course / f"student{k:03d}{source.suffix}")
        figures, cpus = {}, {}
        for jobs in (1, 2):
            out = Path(folder) / f"grades{jobs}"
            start, cpu = time.perf_counter(), children_cpu()
            done = subprocess.run([sys.executable, "-m", "symbolic_attn", "--timeout", "0", "grade", str(key),
                                   str(course), "--out", str(out), "--jobs", str(jobs)],
                                  capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
            figures[jobs], cpus[jobs] = time.perf_counter() - start, children_cpu() - cpu
            if done.returncode not in (0, 1):
                raise SystemExit(f"grade --jobs {jobs}: exit {done.returncode}: {done.stderr.strip()[-300:]}")
        print(f"grade {STUDENTS} derivation submissions ({len(sources)} distinct texts): --jobs 2 {figures[2]:.1f} s "
              f"(target < 60 s; cpu {cpus[2]:.1f} s), --jobs 1 {figures[1]:.1f} s (cpu {cpus[1]:.1f} s); "
              f"ratio jobs 2 / jobs 1 {figures[2] / figures[1]:.2f}")
        worst_case(key, course, theirs_cpu)


class _Forgets(dict):
    """A memo that never remembers: every step of every student decided afresh."""

    def __setitem__(self, key, value):
        pass


def worst_case(key_path, course, naive_cpu):
    """The same 200 students as if no two wrote a step alike: the steps memo switched off in
    this process before the workers are forked (in-process grade_all, 2 workers).  Its CPU
    time (the workers') is also given in units of the naive baseline's CPU time of item 1."""
    from symbolic_attn.grading.answer_key import load_answer_key
    from symbolic_attn.grading.batch import grade_all
    from symbolic_attn.steps import report

    report._DECIDED = _Forgets()
    key = load_answer_key(key_path)
    jobs = [(path.stem, [path]) for path in sorted(course.iterdir())]
    start, cpu = time.perf_counter(), children_cpu()
    results = grade_all(key, jobs, jobs=2)
    elapsed, used = time.perf_counter() - start, children_cpu() - cpu
    print(f"worst case, no step remembered: {len(results)} students in {elapsed:.1f} s on 2 workers "
          f"({elapsed / len(results) * 1000:.0f} ms a student; cpu {used:.1f} s, "
          f"{used / naive_cpu:.0f} times the naive baseline's cpu)")


if __name__ == "__main__":
    main()
