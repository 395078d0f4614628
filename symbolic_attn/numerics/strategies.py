r"""Hypothesis strategies for property tests of attention, exact by construction.

Entries are :class:`fractions.Fraction` values.  ``dyadic=True`` (the default) keeps them
of the form k / 2^e with few bits, so that they are exactly representable in float32 and
an implementation receives the very numbers the exact core uses.

>>> from hypothesis import given, settings
>>> @settings(max_examples=5, database=None)
... @given(attention_cases(max_n=3, max_m=3))
... def check(case):
...     n, m, d_k, d_v = case.shape
...     assert case.mask is None or all(any(row) for row in case.mask.allowed)
>>> check()
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import strategies as st

from symbolic_attn.model.masks import Mask
from symbolic_attn.numerics.battery import KernelCase

__all__ = ["rationals", "rational_matrices", "masks", "attention_cases"]


def rationals(*, max_numerator: int = 16, max_denominator: int = 8, dyadic: bool = True):
    """Exact rationals p/q with |p| <= max_numerator; q a power of two <= max_denominator
    when ``dyadic`` (float-representable), else any 1 <= q <= max_denominator."""
    if dyadic:
        powers = [2 ** e for e in range(max_denominator.bit_length()) if 2 ** e <= max_denominator]
        denominators = st.sampled_from(powers)
    else:
        denominators = st.integers(1, max_denominator)
    return st.builds(Fraction, st.integers(-max_numerator, max_numerator), denominators)


def rational_matrices(rows: int, cols: int, **options):
    """Matrices (tuples of rows) of exact rationals of the given shape."""
    return st.tuples(*[st.tuples(*[rationals(**options)] * cols)] * rows)


@st.composite
def masks(draw, n: int, m: int):
    """Masks of n queries x m keys in which every query may attend to at least one key."""
    grid = [draw(st.lists(st.booleans(), min_size=m, max_size=m)) for _ in range(n)]
    for row in grid:
        if not any(row):
            row[draw(st.integers(0, m - 1))] = True
    return Mask.keep(grid)


@st.composite
def attention_cases(draw, *, max_n: int = 4, max_m: int = 4, max_d: int = 4, masked: bool = True, **options):
    """Whole cases (:class:`~symbolic_attn.numerics.battery.KernelCase`): Q, K, V of matching
    shapes (n != m and d_v != d_k included) and, when ``masked``, a mask or None."""
    n, m = draw(st.integers(1, max_n)), draw(st.integers(1, max_m))
    d_k, d_v = draw(st.integers(1, max_d)), draw(st.integers(1, max_d))
    q = draw(rational_matrices(n, d_k, **options))
    k = draw(rational_matrices(m, d_k, **options))
    v = draw(rational_matrices(m, d_v, **options))
    mask = draw(st.one_of(st.none(), masks(n, m))) if masked else None
    return KernelCase("hypothesis", q, k, v, mask)
