r"""The cases a backward pass is run on: exact Q, K, V, the upstream gradient G, a mask, a scale.

Every input is a small dyadic rational (k/4, |k| <= 8), exactly representable in float32,
so the arrays a kernel receives *are* the exact inputs.  The fixed cases come first; they
separate the four classic backward mistakes (each one changes dQ or dK on every fixed case
where it is defined) and use mid-range explicit scales (1/8, 3/7) besides 1/sqrt(d_k):

====================  =========================================================
case                  what it is for
====================  =========================================================
``basic``             d_k = 2 (scale 1/sqrt 2), no mask
``causal``            d_k = 4: the default scale 1/2 has an irrational square root
``cross_attention``   n != m, d_v != d_k (a transposed K cannot even be formed)
``scale_1_8``         an explicit scale 1/8 with a causal mask
``scale_3_7``         an explicit scale 3/7 (not a binary fraction)
``one_dim``           d_k = 1: the default scale is 1, a missing scale is invisible
====================  =========================================================

>>> [case.name for case in gradient_battery(random=2)][-3:]
['one_dim', 'random_1', 'random_2']
>>> gradient_battery(random=0)[3].scale
Fraction(1, 8)
"""

from __future__ import annotations

import random as _random
from dataclasses import dataclass
from fractions import Fraction

from symbolic_attn.errors import ShapeError, shown
from symbolic_attn.model.masks import Mask

__all__ = ["GradientCase", "gradient_battery", "random_gradient_case", "MAX_RANDOM"]

#: The most random cases one run may hold (each costs exact arithmetic).
MAX_RANDOM = 400


@dataclass(frozen=True)
class GradientCase:
    """One backward case: exact inputs, the upstream gradient ``g`` (n x d_v), the mask
    (None = no mask) and the scale (None = 1/sqrt(d_k), the kernel's own default)."""

    name: str
    q: tuple
    k: tuple
    v: tuple
    g: tuple
    mask: Mask | None = None
    scale: Fraction | None = None

    @property
    def shape(self) -> tuple[int, int, int, int]:
        return len(self.q), len(self.k), len(self.q[0]), len(self.v[0])


def _m(rows) -> tuple:
    return tuple(tuple(Fraction(x) for x in row) for row in rows)


def _fixed() -> list[GradientCase]:
    return [
        GradientCase("basic", _m([[1, 2], [-1, 1], [2, 0]]), _m([[1, 0], [0, 1], [1, 1]]), _m([[2, 0], [0, 2], [1, 3]]),
                     _m([[1, -1], ["1/2", 2], [0, 1]])),
        GradientCase("causal", _m([[1, 0, 1, 2], [0, 1, -1, 1], [2, 1, 0, 0], [1, 1, 1, -1]]),
                     _m([[0, 1, 1, 1], [1, 0, 2, 0], [1, -1, 0, 1], [2, 1, 1, 0]]),
                     _m([[1, 2], [3, -1], [0, 4], [-2, 1]]), _m([[1, 0], [0, 1], [-1, 2], ["1/2", "1/2"]]), Mask.causal(4)),
        GradientCase("cross_attention", _m([[1, 0, 2], [0, -1, 1]]), _m([[1, 1, 0], [0, 2, 1], [-1, 0, 1]]),
                     _m([[1, 0], [0, 1], [3, -1]]), _m([[1, 2], [-1, 1]])),
        GradientCase("scale_1_8", _m([[2, 4], [-4, 2], [4, 0]]), _m([[2, 0], [0, 4], [4, 2]]), _m([[1, 0], [0, 2], [1, 3]]),
                     _m([[1, 1], [2, -1], [0, 1]]), Mask.causal(3), Fraction(1, 8)),
        GradientCase("scale_3_7", _m([[1, 2, 0], [-1, 1, 1], [2, 0, -1]]), _m([[1, 0, 1], [0, 1, 2], [1, 1, 0]]),
                     _m([[2, 0], [0, 2], [1, 3]]), _m([[1, 0], [-1, 1], [2, "1/2"]]), None, Fraction(3, 7)),
        GradientCase("one_dim", _m([[1], [2], [-1]]), _m([[1], [-1], [2]]), _m([[1, 2], [0, 1], [3, -1]]),
                     _m([[1, 0], [0, 1], [1, 1]]), Mask.causal(3)),
    ]


def random_gradient_case(rng: _random.Random, name: str, scale: Fraction | None = None) -> GradientCase:
    """n, m <= 4, d_k in 1..4, d_v <= 3, entries k/4 with |k| <= 8, no mask or a causal one
    (top-left, so every query sees at least the first key)."""
    n, m, d_k, d_v = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 3)

    def matrix(rows, cols):
        return tuple(tuple(Fraction(rng.randint(-8, 8), 4) for _ in range(cols)) for _ in range(rows))

    mask = Mask.causal(n, m) if rng.random() < 0.5 else None  # top-left: query 1 sees key 1
    return GradientCase(name, matrix(n, d_k), matrix(m, d_k), matrix(m, d_v), matrix(n, d_v), mask, scale)


def gradient_battery(random: int = 8, seed: int = 0) -> list[GradientCase]:
    """The fixed cases, then ``random`` random cases from ``seed``."""
    if not isinstance(random, int) or isinstance(random, bool) or not 0 <= random <= MAX_RANDOM:
        raise ShapeError(f"the number of random cases must be a whole number in 0..{MAX_RANDOM}, got {shown(random)}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ShapeError(f"the seed must be a whole number, got {shown(seed)}")
    rng = _random.Random(seed)
    return _fixed() + [random_gradient_case(rng, f"random_{i}") for i in range(1, random + 1)]
