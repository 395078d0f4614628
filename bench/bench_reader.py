"""Time the one file reader on hostile TOML: dotted-key bombs as an exercise and as a solution.

    SYMPY_GROUND_TYPES=python PYTHONPATH=. python bench/bench_reader.py

Each case runs the real command in a fresh process (``check`` an exercise, ``grade`` a
solution) with a time limit, and prints the exit status and the seconds it took.  Before
the TOML pre-scan covered solutions, a 40 KB solution of dotted keys took 7.5 s in
``tomllib``; refused by the pre-scan it takes what starting the command takes.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KEY = """title = "t"
[inputs]
V = [[1, 0], [0, 1]]
[attention]
scores = [["0", "0"], ["0", "0"]]
value = "V"
[[questions]]
name = "w"
quantity = "weights"
row = 1
col = 1
points = 1
"""


def bomb(size: int) -> str:
    """A TOML line ``a.a.a....a = 1`` of about ``size`` bytes."""
    return "a" + ".a" * (size // 2) + " = 1\n"


def timed(argv, limit=120.0):
    env = {**os.environ, "SYMPY_GROUND_TYPES": "python"}
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "symbolic_attn", *argv], capture_output=True, text=True,
                              timeout=limit, env=env)
        status = str(done.returncode)
        message = done.stderr.strip().splitlines()[-1][:100] if done.stderr.strip() else ""
    except subprocess.TimeoutExpired:
        status, message = "timeout", ""
    return status, time.perf_counter() - started, message


def main():
    folder = Path(tempfile.mkdtemp())
    (folder / "key.toml").write_text(KEY)
    for size in (40_000, 80_000):
        exercise = folder / f"exercise-{size}.toml"
        exercise.write_text(KEY + bomb(size))
        status, seconds, message = timed(["check", str(exercise)])
        print(f"check, exercise of dotted keys, {size // 1000} KB: exit {status}, {seconds:.2f} s  {message}")
        solution = folder / f"solution-{size}.toml"
        solution.write_text(bomb(size))
        status, seconds, message = timed(["grade", str(folder / "key.toml"), str(solution),
                                          "--out", str(folder / f"out-{size}")])
        result = folder / f"out-{size}" / f"solution-{size}.json"
        reason = json.loads(result.read_text()).get("reason", "") if result.exists() else ""
        print(f"grade, solution of dotted keys, {size // 1000} KB: exit {status}, {seconds:.2f} s  {reason[:90]}")


if __name__ == "__main__":
    main()
