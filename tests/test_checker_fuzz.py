"""The differential fuzzer (issue 18): Hypothesis draws true identities and their mutants.

For every family of ``checker_fuzz``: the prover alone accepts the true identity, and no
mutant that the independent cross-examination refutes is accepted by the prover.  The
counts per family and mutation are printed (``pytest -s``) for the closing note.
"""

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from sympy import Rational

sys.path.insert(0, str(Path(__file__).resolve().parent))
import checker_fuzz as fuzz

COEFFICIENTS = st.sampled_from([Rational(v) for v in (1, 2, 3, -1, 5)] + [Rational(1, 2), Rational(-3, 2)])
SUMMAND = st.integers(0, len(fuzz.SUMMANDS) - 1)
#: Derandomized: the same draws every run, so the counts in the closing note can be reproduced.
FEW = settings(max_examples=12, derandomize=True)


def _check(true, mutants):
    problems = fuzz.judge(true, mutants)
    assert not problems, problems


@FEW
@given(COEFFICIENTS, COEFFICIENTS, st.integers(0, 2), SUMMAND, SUMMAND)
def test_linearity(c, d, low, which, other):
    _check(*fuzz.linearity(c, d, low, which, other))


@FEW
@given(COEFFICIENTS, st.integers(0, 1), st.integers(0, 2))
def test_constant_sums(c, low, extra):
    _check(*fuzz.constant_sum(c, low, extra))


@FEW
@given(COEFFICIENTS)
def test_gauss(c):
    _check(*fuzz.gauss(c))


@FEW
@given(COEFFICIENTS, st.booleans())
def test_double_sums_over_queries_and_keys(c, triangular):
    _check(*fuzz.double_sum(c, triangular))


@FEW
@given(COEFFICIENTS, st.integers(1, 2))
def test_sums_over_a_rectangle(c, width):
    _check(*fuzz.rectangle(c, width))


@FEW
@given(COEFFICIENTS)
def test_deltas(c):
    _check(*fuzz.deltas(c))


@FEW
@given(st.sampled_from([1, 2, -1, 3]), SUMMAND)
def test_shifted_sums(m, which):
    _check(*fuzz.shift(m, which))


@FEW
@given(st.sampled_from([2, 3, Rational(1, 2), Rational(-2, 3)]), st.integers(0, 1))
def test_products(c, low):
    _check(*fuzz.products(c, low))


@FEW
@given(st.integers(1, 3), st.sampled_from([1, 2, -1]))
def test_exp_and_log(a, b):
    _check(*fuzz.exp_log(a, b))


@FEW
@given(st.lists(st.fractions(min_value=-3, max_value=3, max_denominator=3).map(Rational), min_size=8, max_size=8))
def test_matrices(entries):
    _check(*fuzz.matrices(entries))


@FEW
@given(st.lists(st.integers(1, 5), min_size=6, max_size=6), st.lists(st.integers(0, 1), min_size=3, max_size=3))
def test_masks(logs, keep):
    _check(*fuzz.masks(logs, keep))


@FEW
@given(st.sampled_from([1, 2, -1, Rational(1, 2)]))
def test_inequalities(c):
    _check(*fuzz.inequalities(c))


@pytest.fixture(scope="module", autouse=True)
def _print_counts():
    yield
    print("\n" + fuzz.report())
