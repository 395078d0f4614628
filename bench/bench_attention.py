"""Benchmark: exact attention + certified 30-digit decimals vs a naive SymPy pipeline.

    python bench/bench_attention.py            # n = 16, 32, 64, 128; naive at n = 16, 32
    python bench/bench_attention.py --quick    # n = 16 only (a smoke run)

The workload (issue 2): random small rationals, d_k = d_v = 16; compute exact attention
and 30-significant-digit decimals of all weights and outputs.  The naive baseline builds
the SymPy closed forms (Matrix products, applyfunc(exp), row normalization) and calls
evalf(30) on every weight and output, as a straightforward script would.

Both pipelines' 30-digit weights are compared at the end of each naive run, so the
benchmark also checks that the fast path computes the same numbers.
"""

import argparse
import os
import random
import sys
import time

os.environ.setdefault("SYMPY_GROUND_TYPES", "python")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import sympy

from symbolic_attn.model.attention import attention

D = 16


def random_matrix(rng, rows, cols):
    return sympy.Matrix(rows, cols, lambda i, j: sympy.Rational(rng.randint(-9, 9), rng.randint(1, 9)))


def ours(Q, K, V):
    result = attention(Q, K, V)
    weights = result.decimals("weights", 30, significant=True)
    output = result.decimals("output", 30, significant=True)
    return weights, output


def naive(Q, K, V):
    S = (Q * K.T) / sympy.sqrt(Q.cols)
    E = S.applyfunc(sympy.exp)
    W = sympy.Matrix(S.rows, S.cols, lambda i, j: E[i, j] / sum(E.row(i)))
    Z = W * V
    return [[W[i, j].evalf(30) for j in range(W.cols)] for i in range(W.rows)], [
        [Z[i, j].evalf(30) for j in range(Z.cols)] for i in range(Z.rows)
    ]


def timed(function, *args):
    start = time.perf_counter()
    value = function(*args)
    return time.perf_counter() - start, value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 16 only")
    args = parser.parse_args()
    sizes, naive_sizes = ((16,), (16,)) if args.quick else ((16, 32, 64, 128), (16, 32))
    rng = random.Random(2026)
    print(f"exact attention + 30-digit decimals of all weights and outputs, d_k = d_v = {D}")
    print(f"{'n':>4} {'ours (s)':>10} {'naive (s)':>10} {'ratio':>8}  {'closed forms (s)':>16}")
    for n in sizes:
        Q, K, V = (random_matrix(rng, n, D) for _ in range(3))
        ours_time, (weights, _output) = timed(ours, Q, K, V)
        # Extra, for honesty: materializing every closed-form weight and output as SymPy trees.
        closed_time, _ = timed(lambda: (lambda r: (r.weights, r.output))(attention(Q, K, V)))  # noqa: B023 -- timed at once
        if n in naive_sizes:
            naive_time, (naive_weights, _) = timed(naive, Q, K, V)
            agree = all(
                sympy.Rational(str(ours_entry)) - sympy.Rational(str(naive_entry)) == 0 or abs(
                    sympy.Rational(str(ours_entry)) - sympy.Rational(str(naive_entry))
                ) <= sympy.Rational(1, 10**28) * abs(sympy.Rational(str(ours_entry)))
                for row, naive_row in zip(weights, naive_weights)
                for ours_entry, naive_entry in zip(row, naive_row)
            )
            ratio = naive_time / ours_time
            print(f"{n:>4} {ours_time:>10.3f} {naive_time:>10.2f} {ratio:>7.0f}x  {closed_time:>16.3f}   weights agree: {agree}")
        else:
            print(f"{n:>4} {ours_time:>10.3f} {'-':>10} {'-':>8}  {closed_time:>16.3f}")
    print("targets: >= 100x faster than naive at n = 32; under 0.5 s at n = 64")


if __name__ == "__main__":
    main()
