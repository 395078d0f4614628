"""Benchmark: every ratio of issue 10 in one run (it prints; it asserts nothing).

    python bench/bench_ratios.py            # medians of 5 runs (3 at n = 256)
    python bench/bench_ratios.py --runs 3   # quicker

The decimals workload: random small rationals (Python Fractions), d_k = d_v = 16, exact
attention and 30 significant digits of every weight and every output entry.  Figures:

* causal / unmasked: the same workload with a causal mask and without, n = 128 and 256.
* ours / bare arb: against a bare python-flint computation measured in the same run
  (fmpq Q K^T, arb exp, row sums, division, arb_mat product, 30 digits with arb's str)
  -- the floor: no certification, no exact entries, no rounding decisions.
* ours / mpmath: the same with mpmath at 35 digits (no error bounds at all).
* peak memory of the n = 256 workload, in a fresh interpreter: tracemalloc's peak of
  Python allocations during the computation, and the process's maximum resident size
  (with what the interpreter, SymPy, python-flint and mpmath took before computing).
* whole commands, each in a fresh interpreter: ``check --format json`` / text mode on
  bench_check.py's 16x16 exercise, ``list`` / ``--help``, ``derive --out TMP`` /
  ``python -c "import symbolic_attn"``.

Each figure is the median (and min) of several runs; ratios are of medians.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import flint  # noqa: E402 -- after the sys.path insert
import mpmath  # noqa: E402 -- after the sys.path insert

from symbolic_attn.model.attention import attention  # noqa: E402 -- after the sys.path insert
from symbolic_attn.proofs.parallel import available_cores  # noqa: E402 -- after the sys.path insert

D = 16
DIGITS = 30
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def workload(n, seed=2026):
    rng = random.Random(seed + n)
    return [[[Fraction(rng.randint(-9, 9), rng.randint(1, 9)) for _ in range(D)] for _ in range(n)] for _ in range(3)]


def ours(Q, K, V, mask=None):
    result = attention(Q, K, V, mask=mask)
    return result.decimals("weights", DIGITS, significant=True), result.decimals("output", DIGITS, significant=True)


def bare_arb(Q, K, V):
    """What a careful script with python-flint would do, without certifying anything."""
    n = len(Q)
    fmpq = lambda M: flint.fmpq_mat([[flint.fmpq(x.numerator, x.denominator) for x in row] for row in M])  # noqa: E731 -- a one-line local helper
    saved, flint.ctx.prec = flint.ctx.prec, 128
    try:
        scaled = flint.arb_mat(fmpq(Q) * fmpq(K).transpose()) * flint.arb(D).rsqrt()
        weights = []
        for i in range(n):
            exps = [scaled[i, j].exp() for j in range(n)]
            total = sum(exps, flint.arb(0))
            weights.append([e / total for e in exps])
        output = flint.arb_mat(weights) * flint.arb_mat(fmpq(V))
        return ([[w.str(DIGITS, radius=False) for w in row] for row in weights],
                [[output[i, c].str(DIGITS, radius=False) for c in range(output.ncols())] for i in range(n)])
    finally:
        flint.ctx.prec = saved


def with_mpmath(Q, K, V):
    n = len(Q)
    with mpmath.workdps(DIGITS + 5):
        q = [[mpmath.mpf(x.numerator) / x.denominator for x in row] for row in Q]
        k = [[mpmath.mpf(x.numerator) / x.denominator for x in row] for row in K]
        v = [[mpmath.mpf(x.numerator) / x.denominator for x in row] for row in V]
        scale = 1 / mpmath.sqrt(D)
        weights, output = [], []
        for i in range(n):
            exps = [mpmath.exp(scale * mpmath.fsum(a * b for a, b in zip(q[i], k[j]))) for j in range(n)]
            total = mpmath.fsum(exps)
            row = [e / total for e in exps]
            weights.append([mpmath.nstr(w, DIGITS) for w in row])
            output.append([mpmath.nstr(mpmath.fsum(row[j] * v[j][c] for j in range(n)), DIGITS) for c in range(D)])
        return weights, output


def seconds(function, *args, **kwargs):
    started = time.perf_counter()
    function(*args, **kwargs)
    return time.perf_counter() - started


def command_seconds(arguments, cwd=ROOT):
    started = time.perf_counter()
    done = subprocess.run(arguments, cwd=cwd, env=ENV, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        print(f"  note: {' '.join(map(str, arguments[1:]))} exited {done.returncode}: {done.stderr.strip()[:120]}")
    return elapsed


def summary(times):
    return statistics.median(times), min(times)


def line(label, times):
    median, low = summary(times)
    print(f"  {label:<44} median {median:8.3f} s   min {low:8.3f} s   ({len(times)} runs)")
    return median


def ratio(label, top, bottom, target=None):
    note = f"   (target {target})" if target else ""
    print(f"  {label:<44} {top / bottom:8.2f}x{note}")


def measure_decimals(runs):
    print(f"decimals: exact attention + {DIGITS} significant digits of all weights and outputs, d = {D}")
    for n in (128, 256):
        Q, K, V = workload(n)
        count = runs if n == 128 else max(3, runs - 2)
        times = {"unmasked": [], "causal": [], "bare arb": [], "mpmath": []}
        for _ in range(count):  # interleaved, so that load from elsewhere hits all alike
            times["unmasked"].append(seconds(ours, Q, K, V))
            times["causal"].append(seconds(ours, Q, K, V, mask="causal"))
            times["bare arb"].append(seconds(bare_arb, Q, K, V))
            if len(times["mpmath"]) < 2:  # slow, and steady
                times["mpmath"].append(seconds(with_mpmath, Q, K, V))
        print(f" n = {n}")
        medians = {name: line(name, values) for name, values in times.items()}
        ratio("causal / unmasked", medians["causal"], medians["unmasked"], "<= 1.3")
        ratio("ours (unmasked) / bare arb", medians["unmasked"], medians["bare arb"], "<= 3 at n = 256")
        ratio("ours (causal) / bare arb", medians["causal"], medians["bare arb"])
        ratio("ours (unmasked) / mpmath", medians["unmasked"], medians["mpmath"])


# The process's own peak resident memory: /proc/self/status VmHWM where there is one.
# (getrusage's ru_maxrss is not reset by exec: a probe started from this big process would
# report this process's peak instead of its own.)
MEMORY_PROBE = """
import resource, sys, tracemalloc
sys.path.insert(0, {bench!r})
from bench_ratios import ours, workload

def peak_kib():
    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

Q, K, V = workload(256)
before = peak_kib()
tracemalloc.start()
ours(Q, K, V, mask={mask!r})
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
print(peak, before, peak_kib())
"""


def measure_memory():
    print("peak memory, n = 256 (fresh interpreter each)")
    for mask in (None, "causal"):
        done = subprocess.run([sys.executable, "-c", MEMORY_PROBE.format(bench=str(ROOT / "bench"), mask=mask)],
                              cwd=ROOT, env=ENV, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"  {mask or 'unmasked'}: probe failed: {done.stderr.strip()[-200:]}")
            continue
        traced, before, maxrss = map(int, done.stdout.split())
        print(f"  {mask or 'unmasked':<10} tracemalloc peak {traced / 2**20:6.1f} MiB   process max resident "
              f"{maxrss / 1024:6.1f} MiB, {before / 1024:6.1f} MiB of it before computing   (target < 150 MB)")


def measure_commands(runs):
    import bench_check

    python = sys.executable
    print("whole commands (fresh interpreter each)")
    with tempfile.TemporaryDirectory() as folder:
        exercise = Path(folder) / "bench16.toml"
        bench_check.build(exercise)
        times = {key: [] for key in ("json", "text", "list", "help", "derive", "derive1", "import")}
        for run in range(runs):
            times["text"].append(command_seconds([python, "-m", "symbolic_attn", "check", str(exercise)]))
            times["json"].append(command_seconds([python, "-m", "symbolic_attn", "check", str(exercise), "--format", "json"]))
            times["help"].append(command_seconds([python, "-m", "symbolic_attn", "--help"]))
            times["list"].append(command_seconds([python, "-m", "symbolic_attn", "list"]))
            times["import"].append(command_seconds([python, "-c", "import symbolic_attn"]))
            out = Path(folder) / f"out{run}"
            times["derive"].append(command_seconds([python, "-m", "symbolic_attn", "derive", "--out", str(out)]))
            times["derive1"].append(command_seconds([python, "-m", "symbolic_attn", "derive", "--out", str(out) + "-1",
                                                     "--jobs", "1"]))
    medians = {
        "check --format json": line("check --format json (16x16 exercise)", times["json"]),
        "check (text)": line("check, text mode", times["text"]),
        "list": line("list", times["list"]),
        "--help": line("--help", times["help"]),
        "derive": line(f"derive --out TMP (every core: {available_cores()})", times["derive"]),
        "derive1": line("derive --out TMP --jobs 1", times["derive1"]),
        "import": line('python -c "import symbolic_attn"', times["import"]),
    }
    ratio("json / text", medians["check --format json"], medians["check (text)"], "<= 1.2")
    ratio("list / --help", medians["list"], medians["--help"], "<= 1.5 (2 if verifying)")
    ratio("derive / import", medians["derive"], medians["import"], "<= 5")
    paired = statistics.median(d / i for d, i in zip(times["derive"], times["import"]))
    print(f"  {'derive / import, median of the runs paired':<44} {paired:8.2f}x   (each run: derive, then import)")
    ratio("derive --jobs 1 / import", medians["derive1"], medians["import"], "(one process, for reference)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (default 5)")
    parser.add_argument("--skip-commands", action="store_true", help="only the in-process decimals figures")
    parser.add_argument("--only-commands", action="store_true", help="only the whole-command figures")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, python-flint {flint.__version__}, mpmath {mpmath.__version__}, "
          f"{os.cpu_count()} cpus, load average {os.getloadavg()[0]:.2f}")
    if not args.only_commands:
        measure_decimals(args.runs)
        measure_memory()
    if not args.skip_commands:
        measure_commands(args.runs)


if __name__ == "__main__":
    main()
