"""Benchmark: the cost of cross-examining every proved step of the built-in derivations.

In one process, the twelve built-in results are built and verified twice per round: once
with the cross-examination of every accepted step (what ``derive`` does) and once with the
prover alone (:func:`symbolic_attn.proofs.prove.without_cross_examination`, the baseline).
Each round builds the results afresh; the order of the two alternates between rounds, and
the checker's memo tables are emptied before every verification, so neither side profits
from the other's cached answers.  Prints the minimum and median of each, their ratio, and
how many steps were examined and at how many points.

    python bench/bench_crossexam.py [--rounds N]
"""

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from symbolic_attn.proofs import prove  # noqa: E402 -- after the sys.path insert
from symbolic_attn.proofs.scripts import load_scripts  # noqa: E402 -- after the sys.path insert


def _clear_memos():
    """Empty every memo table of the checker (``exact.memo.memoized`` keeps them as ``.table``)."""
    for module in list(sys.modules.values()):
        if not getattr(module, "__name__", "").startswith("symbolic_attn"):
            continue
        for value in vars(module).values():
            table = getattr(value, "table", None)
            if isinstance(table, dict):
                table.clear()


def _verify_everything(scripts):
    for script in scripts:
        script.result().verify()


def _timed(scripts, examined: bool) -> float:
    _clear_memos()
    gc.collect()
    start = time.perf_counter()
    if examined:
        _verify_everything(scripts)
    else:
        with prove.without_cross_examination():
            _verify_everything(scripts)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    scripts = load_scripts()

    # Count what the cross-examination does (one untimed pass).
    records = []
    original = prove.examine

    def counting(*arguments, **keywords):
        record = original(*arguments, **keywords)
        records.append(record)
        return record

    prove.examine = counting
    try:
        _clear_memos()
        _verify_everything(scripts)
    finally:
        prove.examine = original
    used = [r for r in records if r is not None and r.points_used > 0]
    skipped = {}
    for r in records:
        if r is not None and r.points_used == 0:
            reason = (r.skipped_reason or "no point certified").split(":")[0][:70]
            skipped[reason] = skipped.get(reason, 0) + 1

    with_times, without_times = [], []
    for round_number in range(args.rounds):
        order = (True, False) if round_number % 2 == 0 else (False, True)
        for examined in order:
            (with_times if examined else without_times).append(_timed(scripts, examined))

    identical = sum(1 for r in records if r is None)
    print(f"built-in results: {len(scripts)}; proved steps: {len(records)}, of which {identical} have the same "
          f"tree on both sides as written (nothing to examine); {len(used)} certified at >= 1 point "
          f"({sum(r.points_used for r in used)} points in all)")
    for reason, count in sorted(skipped.items(), key=lambda item: -item[1]):
        print(f"  not examined at any point ({count}): {reason}")
    print(f"verify all, prover alone (baseline): min {min(without_times):.2f} s, "
          f"median {statistics.median(without_times):.2f} s")
    print(f"verify all, with cross-examination:  min {min(with_times):.2f} s, "
          f"median {statistics.median(with_times):.2f} s")
    print(f"ratio with / without (medians): {statistics.median(with_times) / statistics.median(without_times):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
