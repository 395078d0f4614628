r"""The battery: cases that catch the classic bugs of attention implementations.

Every input is a small dyadic rational, exactly representable in float32, so the float
arrays an implementation receives *are* the exact inputs.  Fixed cases (one idea each)
come first, then ``random`` cases drawn from ``seed``:

==========================  ====================================================
case                        catches
==========================  ====================================================
``basic``                   scale (d_k = 2: 1/sqrt 2), axis, transposition
``cross_attention``         n != m and d_v != d_k (shapes; keys used as values)
``causal``                  causal masks, mask polarity
``causal_top_left``         n != m, first query sees the first key (torch is_causal)
``causal_bottom_right``     n != m, last query sees every key (a KV cache)
``padding``                 a key padding mask (Hugging Face attention_mask)
``causal_padding``          both at once
``ties``                    equal scores: weights split evenly
``large_scores``            scaled scores near 1000: exp overflows without max subtraction
``large_negative_scores``   real scores below -1e9: a -1e9 "mask" lets blocked keys win
``moderate_negative_scores`` real scores near -1e6: a -1e4 fill lets blocked keys win
``large_positive_scores``   blocked scores 2e9 above the rest: adding -1e9 does not mask
``tiny_scale``              scaled scores near 2^-40 (weights nearly uniform)
``huge_scale``              scaled scores near 2^20 (one-hot weights)
``fully_masked_row``        a row with no allowed key (only with a declared policy)
``explicit_scale_*``        a given scale: 2^-20 and 2^10 (extreme), 1/8, 3/7 and 1/sqrt(7)
                            (mid range, where s and s^2 give different weights); only
                            when fn takes ``scale=``
``half_overflow``           float16 only: q . k above 65504, the scaled logits within range
                            (overflows when the scale is applied after an fp16 product)
==========================  ====================================================

A case a format cannot hold (an input it cannot represent exactly, or a scaled
logit beyond its largest number: float16 stops at 65504) is left out for that dtype
(:func:`fits`), and the report says which were skipped and why.

>>> names = [case.name for case in battery(random=2, seed=0)]
>>> names[:3], names[-2:]
(['basic', 'cross_attention', 'causal'], ['random_1', 'random_2'])
>>> "fully_masked_row" in [case.name for case in battery(random=0, empty_row="zeros")]
True
"""

from __future__ import annotations

import random as _random
from dataclasses import dataclass
from fractions import Fraction

import sympy

from symbolic_attn.errors import ShapeError, shown
from symbolic_attn.model.masks import EMPTY_ROW_POLICIES, Mask
from symbolic_attn.numerics.backends import float_format
from symbolic_attn.numerics.bounds import representable

__all__ = ["KernelCase", "battery", "skipped", "random_case", "fits", "MAX_RANDOM", "EXPLICIT_SCALES"]

#: The given scales of the explicit-scale cases (label, exact scale).
EXPLICIT_SCALES = (("tiny", Fraction(1, 2 ** 20)), ("huge", Fraction(2 ** 10)), ("eighth", Fraction(1, 8)),
                   ("three_sevenths", Fraction(3, 7)), ("inv_sqrt7", 1 / sympy.sqrt(7)))

#: The most random cases one battery may hold (each costs exact arithmetic).
MAX_RANDOM = 200


@dataclass(frozen=True)
class KernelCase:
    """One attention case: exact inputs, the mask (None = no mask) and the scale
    (None = 1/sqrt(d_k), the implementation's own default)."""

    name: str
    q: tuple
    k: tuple
    v: tuple
    mask: Mask | None = None
    scale: Fraction | sympy.Expr | None = None

    @property
    def shape(self) -> tuple[int, int, int, int]:
        return len(self.q), len(self.k), len(self.q[0]), len(self.v[0])

    def blocked(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(rows, cols) of the blocked positions, 0-based (numpy's ``nonzero`` layout)."""
        if self.mask is None:
            return (), ()
        pairs = [(i, j) for i, row in enumerate(self.mask.allowed) for j, ok in enumerate(row) if not ok]
        return tuple(i for i, _ in pairs), tuple(j for _, j in pairs)


def _m(rows, factor=Fraction(1)) -> tuple:
    return tuple(tuple(Fraction(x) * factor for x in row) for row in rows)


def _w(rows, width=16) -> tuple:
    """Rows padded with zeros to ``width`` columns (d_k = 16)."""
    return _m([list(row) + [0] * (width - len(row)) for row in rows])


def _fixed(empty_row: str, takes_scale: bool) -> list[KernelCase]:
    X = [[1, 0], [0, 1], [1, 1]]
    big = Fraction(2) ** 15
    cases = [
        KernelCase("basic", _m([[1, 2], [-1, 1], [2, 0]]), _m(X), _m([[2, 0], [0, 2], [1, 3]])),
        KernelCase("cross_attention", _m([[1, 0, 2], [0, -1, 1]]), _m([[1, 1, 0], [0, 2, 1], [-1, 0, 1], [2, 1, 1]]),
             _m([[1, 0, 2, -1, 3], [0, 1, 1, 2, -2], [3, -1, 0, 1, 1], [-2, 2, 1, 0, 1]], Fraction(1, 2))),
        KernelCase("causal", _m([[1, 0, 1, 2], [0, 1, -1, 1], [2, 1, 0, 0], [1, 1, 1, -1]]),
             _m([[0, 1, 1, 1], [1, 0, 2, 0], [1, -1, 0, 1], [2, 1, 1, 0]]),
             _m([[1, 2], [3, -1], [0, 4], [-2, 1]]), Mask.causal(4)),
        KernelCase("causal_top_left", _m([[1, 2, 0], [0, 1, 1], [2, -1, 1]]),
             _m([[1, 0, 1], [0, 1, 0], [1, 1, -1], [2, 0, 1], [-1, 1, 1]]),
             _m([[1, 0], [0, 1], [2, 2], [-1, 3], [1, -2]]), Mask.causal(3, 5)),
        KernelCase("causal_bottom_right", _m([[1, 2, 0], [0, 1, 1], [2, -1, 1]]),
             _m([[1, 0, 1], [0, 1, 0], [1, 1, -1], [2, 0, 1], [-1, 1, 1]]),
             _m([[1, 0], [0, 1], [2, 2], [-1, 3], [1, -2]]), Mask.causal(3, 5, offset=2)),
        KernelCase("padding", _m([[1, 1], [2, -1], [0, 1]]), _m([[1, 0], [0, 1], [1, 1], [3, 1]]),
             _m([[1, 2, 0], [0, 1, 1], [4, 0, 2], [2, 2, 2]]), Mask.padding(3, 4, valid=2)),
        KernelCase("causal_padding", _m([[1, 2], [-1, 1], [2, 0], [1, 1]]), _m([[1, 0], [0, 1], [1, 1], [2, -1]]),
             _m([[2, 0], [0, 2], [1, 3], [5, 1]]), Mask.causal(4) & Mask.padding(4, 4, valid=3)),
        KernelCase("ties", _m([[1, 1], [0, 0], [2, 2]]), _m([[1, 0], [0, 1], [1, 0]]), _m([[1, 2], [3, 4], [5, 8]])),
        # d_k = 16: the scale 1/4 and its square root 1/2 are exact, so the scaled scores
        # are exact in float32 on every path (scores, Q, or Q and K by sqrt(1/4)).
        KernelCase("large_scores", _w([[80], [0, 72]]), _w([[50], [49, 1], [0, 50]]), _m([[1, 0], [0, 1], [1, 1]])),
        KernelCase("large_negative_scores", _w([[-big], [big]]), _w([[big * 2 ** 2], [big * 2 ** 2 + 2 ** 8], []]),
             _m([[1, 0], [0, 1], [1, 1]]), Mask.keep([[1, 1, 0], [1, 1, 0]])),
        # real scores near -1e6: a -1e4 fill lets the blocked key win, a -1e9 fill does not
        KernelCase("moderate_negative_scores", _w([[-2 ** 10], [2 ** 10]]), _w([[2 ** 12], [2 ** 12 + 2 ** 4], []]),
             _m([[1, 0], [0, 1], [1, 1]]), Mask.keep([[1, 1, 0], [1, 1, 0]])),
        KernelCase("large_positive_scores", _w([[big], [big, 1]]), _w([[big * 6], [big * 2], [big * 2 - 2 ** 8]]),
             _m([[1, 0], [0, 1], [1, 1]]), Mask.keep([[0, 1, 1], [0, 1, 1]])),
        KernelCase("tiny_scale", _m([[1, 2], [3, -1]], Fraction(1, 2 ** 20)), _m([[1, 0], [0, 1], [1, 1]], Fraction(1, 2 ** 20)),
             _m([[1, 2], [3, 4], [5, 6]])),
        KernelCase("huge_scale", _m([[1, 2], [3, -1]], Fraction(2 ** 10)), _m([[1, 0], [0, 1], [1, 1]], Fraction(2 ** 10)),
             _m([[1, 2], [3, 4], [5, 6]])),
    ]
    if empty_row != "error":
        cases.append(KernelCase("fully_masked_row", _m([[1, 2], [-1, 1], [2, 0]]), _m(X), _m([[2, 0], [0, 2], [1, 3]]),
                          Mask.keep([[1, 0, 1], [0, 0, 0], [1, 1, 0]])))
    if takes_scale:
        for label, scale in EXPLICIT_SCALES[:2]:
            cases.append(KernelCase(f"explicit_scale_{label}", _m([[1, 2], [-1, 1]]), _m(X), _m([[2, 0], [0, 2], [1, 3]]),
                              Mask.causal(2, 3, offset=1), scale))
        # scores up to ~12: s, s^2 and 1/sqrt(d_k) give clearly different weights
        for (label, scale), mask in zip(EXPLICIT_SCALES[2:], (None, Mask.causal(3), Mask.padding(3, 3, valid=2))):
            cases.append(KernelCase(f"explicit_scale_{label}", _m([[2, 1, 0], [-1, 3, 1], [1, -2, 2]]),
                                    _m([[1, 0, 2], [0, 2, -1], [3, 1, 1]]), _m([[2, 0], [0, 2], [1, 3]]), mask, scale))
    return cases


def _half_overflow() -> KernelCase:
    """d_k = 16 (scale 1/4): q . k = 69632 and 69628 overflow float16, their logits 17408
    and 17407 do not."""
    q = _m([[64] * 16, [1] * 16])
    k = _m([[68] * 16, [68] * 15 + [Fraction(1087, 16)], [0] * 16])
    return KernelCase("half_overflow", q, k, _m([[1, 0], [0, 1], [1, 1]]))


def fits(case: KernelCase, dtype) -> str | None:
    """Why ``dtype`` cannot hold ``case`` (None when it can): an input it cannot represent,
    or a scaled logit beyond its largest number."""
    fmt = float_format(dtype)
    for name, matrix in (("Q", case.q), ("K", case.k), ("V", case.v)):
        if not all(representable(Fraction(x), fmt) for row in matrix for x in row):
            return f"{name} is not exact in {fmt.name}"
    scale = case.scale if case.scale is not None else 1 / sympy.sqrt(len(case.q[0]))
    largest = max(abs(sum(Fraction(a) * Fraction(b) for a, b in zip(q, k))) for q in case.q for k in case.k)
    if float(largest * abs(scale)) > fmt.largest:
        return f"a logit exceeds the largest {fmt.name} ({fmt.largest:g})"
    return None


def random_case(rng: _random.Random, name: str) -> KernelCase:
    """Small shapes, entries k/4 with |k| <= 8, and a mask (none, causal, padding or
    random) that leaves every query at least one key."""
    n, m, d_k, d_v = (rng.randint(1, 5) for _ in range(4))

    def matrix(rows, cols):
        return tuple(tuple(Fraction(rng.randint(-8, 8), 4) for _ in range(cols)) for _ in range(rows))

    kind = rng.choice(["none", "causal", "padding", "random"])
    if kind == "none":
        mask = None
    elif kind == "causal":
        mask = Mask.causal(n, m, offset=rng.choice([0, max(m - n, 0)]))
        if mask.empty_rows():
            mask = Mask.causal(n, m, offset=m - 1)
    elif kind == "padding":
        mask = Mask.padding(n, m, valid=rng.randint(1, m))
    else:
        grid = [[rng.random() < 0.6 for _ in range(m)] for _ in range(n)]
        for row in grid:
            row[rng.randrange(m)] = True
        mask = Mask.keep(grid)
    return KernelCase(name, matrix(n, d_k), matrix(m, d_k), matrix(m, d_v), mask)


def battery(random: int = 8, seed: int = 0, *, empty_row: str = "error", takes_scale: bool = False,
            dtype="float32") -> list[KernelCase]:
    """The fixed cases, then ``random`` random exact cases from ``seed``.

    A fully masked row is included only when ``empty_row`` declares a policy; cases with
    a given scale only when the implementation accepts ``scale=`` (``takes_scale``); cases
    ``dtype`` cannot hold are left out (:func:`skipped` names them).
    """
    return [case for case in _all(random, seed, empty_row, takes_scale, dtype) if fits(case, dtype) is None]


def skipped(random: int = 8, seed: int = 0, *, empty_row: str = "error", takes_scale: bool = False,
            dtype="float32") -> list[tuple[str, str]]:
    """(case, reason) for each case of the battery that ``dtype`` cannot hold."""
    return [(case.name, why) for case in _all(random, seed, empty_row, takes_scale, dtype)
            if (why := fits(case, dtype)) is not None]


def _all(random, seed, empty_row, takes_scale, dtype) -> list[KernelCase]:
    if not isinstance(random, int) or isinstance(random, bool) or not 0 <= random <= MAX_RANDOM:
        raise ShapeError(f"the number of random cases must be a whole number in 0..{MAX_RANDOM}, got {shown(random)}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ShapeError(f"the seed must be a whole number, got {shown(seed)}")
    if not isinstance(empty_row, str) or empty_row not in EMPTY_ROW_POLICIES:
        raise ShapeError(f"unknown empty_row {shown(empty_row)}: expected one of {', '.join(EMPTY_ROW_POLICIES)}")
    if not isinstance(takes_scale, bool):
        raise ShapeError(f"takes_scale must be True or False, got {shown(takes_scale)}")
    fmt = float_format(dtype)
    rng = _random.Random(seed)
    half = [_half_overflow()] if fmt.largest < 2 ** 17 else []
    return _fixed(empty_row, takes_scale) + half + [random_case(rng, f"random_{i}") for i in range(1, random + 1)]
