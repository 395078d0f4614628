"""bench/grading_200x20.py (issue 20) runs at a tiny size: the tool's way and the naive
baseline agree on every student's exact score, and the mix of verdicts is not trivial."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_grading_bench_agrees_with_its_baseline_at_a_tiny_size():
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "grading_200x20.py"), "--students", "4", "--questions", "5"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "agreement: identical exact scores and verdicts for all 4 students graded both ways" in done.stdout
    assert "grades.csv of both commands holds the same exact scores for all 4" in done.stdout
    assert re.search(r"ratio baseline / tool, CPU: +\d+\.\dx against in-process grade_all", done.stdout)
    answers = re.search(r"answers: (\d+) pass, (\d+) fail, \d+ carried_forward, (\d+) missing", done.stdout)
    assert answers and all(int(n) > 0 for n in answers.groups()), done.stdout
