"""Masks as structure: the n x m grid of positions a query may attend to.

A mask is *not* a big negative number added to the scores.  Here a blocked position gets
weight exactly 0 and leaves the softmax denominator; nothing approximates -infinity.

Libraries disagree on what ``True`` means, so there is one constructor per convention:

==============================  =======================  ==========================
constructor                     convention               used by
==============================  =======================  ==========================
``Mask.keep(grid)``             True/1 = may attend      PyTorch SDPA, JAX, Keras, HF
``Mask.block(grid)``            True/1 = blocked         nn.MultiheadAttention masks
``Mask.additive(grid)``         0 = allowed, -oo = not   the formula softmax(S + M)
``Mask.causal(n, m, offset)``   key j <= query i+offset  decoders
``Mask.padding(n, m, valid)``   keys j < valid           padded batches
``a & b``                       allowed in both          causal and padding together
==============================  =======================  ==========================

>>> Mask.causal(3)
Mask.keep([[1, 0, 0], [1, 1, 0], [1, 1, 1]])
>>> Mask.block([[0, 1], [0, 0]]) == Mask.keep([[1, 0], [1, 1]])
True
>>> (Mask.causal(3) & Mask.padding(3, 3, valid=2)).allowed[2]
(True, True, False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy

from symbolic_attn.errors import MaskError
from symbolic_attn.exact.limits import DEFAULT_LIMITS

__all__ = ["Mask", "EMPTY_ROW_POLICIES"]

#: What to do with a query row whose mask allows no key (see :func:`attention.softmax`).
#: ``"error"`` (default) refuses; the others reproduce real libraries' behaviour.
EMPTY_ROW_POLICIES = {
    "error": "raise EmptyRowError naming the row (there is no distribution to normalize)",
    "zeros": "all weights 0 (PyTorch scaled_dot_product_attention, Keras 3)",
    "uniform": "1/m on every key, blocked or not (JAX/Flax, Hugging Face eager)",
    "nan": "every weight NaN (nn.MultiheadAttention with need_weights=True)",
}


@dataclass(frozen=True)
class Mask:
    """The immutable grid of allowed positions: ``allowed[i][j]`` is True when query i may
    attend to key j.  Build one with a constructor below rather than directly."""

    allowed: tuple[tuple[bool, ...], ...]

    def __post_init__(self):
        if not self.allowed or not self.allowed[0]:
            raise MaskError("a mask needs at least one row and one column")
        width = len(self.allowed[0])
        for number, row in enumerate(self.allowed, start=1):
            if len(row) != width:
                raise MaskError(f"mask row {number} has {len(row)} entries, row 1 has {width}")

    # -- constructors -------------------------------------------------------------

    @classmethod
    def keep(cls, grid) -> Mask:
        """True/1 = the query may attend to the key (PyTorch SDPA, JAX, Keras, HF)."""
        return cls(_boolean_grid(grid, "keep"))

    @classmethod
    def block(cls, grid) -> Mask:
        """True/1 = the key is blocked (nn.MultiheadAttention attn_mask / key_padding_mask)."""
        return cls(tuple(tuple(not b for b in row) for row in _boolean_grid(grid, "block")))

    @classmethod
    def additive(cls, grid) -> Mask:
        """0 = allowed, -oo = blocked, as in softmax(S + M).  Any other value is refused:
        a large finite negative such as -1e9 only approximates a mask."""
        rows = []
        for i, row in enumerate(_rows(grid, "additive"), start=1):
            out = []
            for j, entry in enumerate(row, start=1):
                if _is_minus_infinity(entry):
                    out.append(False)
                elif _is_zero(entry):
                    out.append(True)
                else:
                    raise MaskError(
                        f"additive mask entry ({i},{j}) is {entry!r}: only 0 (allowed) and -oo (blocked) are "
                        "exact; a large finite negative only approximates a mask"
                    )
            rows.append(tuple(out))
        return cls(tuple(rows))

    @classmethod
    def causal(cls, n: int, m: int | None = None, offset: int = 0) -> Mask:
        """Key j is allowed for query i iff ``j <= i + offset`` (0-based; diagonal included).

        ``offset=0`` aligns the first query with the first key (PyTorch's ``is_causal``).
        When decoding with a cache of ``m - n`` earlier keys, use ``offset=m - n`` so the
        last query sees every key.

        >>> Mask.causal(2, 4, offset=2)
        Mask.keep([[1, 1, 1, 0], [1, 1, 1, 1]])
        """
        m = n if m is None else m
        _check_size(n, m)
        return cls(tuple(tuple(j <= i + offset for j in range(m)) for i in range(n)))

    @classmethod
    def padding(cls, n: int, m: int, valid: int) -> Mask:
        """Only the first ``valid`` keys are real tokens; the rest are padding."""
        _check_size(n, m)
        if not isinstance(valid, int) or isinstance(valid, bool):
            raise MaskError(f"padding: the valid key count must be a whole number, got {valid!r}")
        if not 0 <= valid <= m:
            raise MaskError(f"padding: valid key count {valid} is outside 0..{m}")
        return cls(tuple(tuple(j < valid for j in range(m)) for _ in range(n)))

    @classmethod
    def full(cls, n: int, m: int) -> Mask:
        """Every query may attend to every key (no mask)."""
        _check_size(n, m)
        return cls(tuple(tuple(True for _ in range(m)) for _ in range(n)))

    # -- structure ----------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.allowed), len(self.allowed[0])

    def is_allowed(self, i: int, j: int) -> bool:
        """Whether query ``i`` may attend to key ``j`` (0-based)."""
        return self.allowed[i][j]

    def allowed_keys(self, i: int) -> list[int]:
        """The 0-based key indices query ``i`` may attend to."""
        return [j for j, ok in enumerate(self.allowed[i]) if ok]

    def empty_rows(self) -> list[int]:
        """0-based indices of the query rows that allow no key at all."""
        return [i for i, row in enumerate(self.allowed) if not any(row)]

    def __and__(self, other: Mask) -> Mask:
        if not isinstance(other, Mask):
            return NotImplemented
        if self.shape != other.shape:
            raise MaskError(f"cannot combine masks of shapes {self.shape} and {other.shape}")
        return Mask(tuple(tuple(a and b for a, b in zip(r, s)) for r, s in zip(self.allowed, other.allowed)))

    def inverted(self) -> Mask:
        """Allowed and blocked swapped (what reading a keep-grid as a block-grid does)."""
        return Mask(tuple(tuple(not b for b in row) for row in self.allowed))

    def transposed(self) -> Mask:
        return Mask(tuple(zip(*self.allowed)))

    def permuted(self, permutation) -> Mask:
        """The mask P M P^T for the permutation matrix P with (P X)[i] = X[permutation[i]].

        >>> Mask.causal(2).permuted([1, 0])
        Mask.keep([[1, 1], [0, 1]])
        """
        n, m = self.shape
        if n != m or sorted(permutation) != list(range(n)):
            raise MaskError(f"permuted: {list(permutation)} is not a permutation of 0..{n - 1} for a {n}x{m} mask")
        return Mask(tuple(tuple(self.allowed[permutation[i]][permutation[j]] for j in range(n)) for i in range(n)))

    def keep_grid(self) -> list[list[int]]:
        """The keep convention as 0/1 integers (1 = may attend)."""
        return [[int(b) for b in row] for row in self.allowed]

    def block_grid(self) -> list[list[int]]:
        """The block convention as 0/1 integers (1 = blocked)."""
        return [[int(not b) for b in row] for row in self.allowed]

    def as_matrix(self) -> sympy.ImmutableMatrix:
        """The additive form: 0 where allowed, -oo where blocked."""
        return sympy.ImmutableMatrix([[0 if b else -sympy.oo for b in row] for row in self.allowed])

    def __repr__(self) -> str:
        return f"Mask.keep({self.keep_grid()})"


def _check_size(n, m):
    for name, value in (("n", n), ("m", m)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise MaskError(f"mask size {name} must be a positive integer, got {value!r}")
    if n > DEFAULT_LIMITS.max_rows or m > DEFAULT_LIMITS.max_cols:
        raise MaskError(f"mask of {n}x{m} exceeds the size limit")


def _rows(grid, kind):
    if isinstance(grid, sympy.MatrixBase):
        grid = grid.tolist()
    elif hasattr(grid, "tolist"):
        grid = grid.tolist()
    if not isinstance(grid, (list, tuple)) or not grid or not all(isinstance(r, (list, tuple)) for r in grid):
        raise MaskError(f"{kind} mask: expected a grid given as a list of rows, got {type(grid).__name__}")
    _check_size(len(grid), len(grid[0]) if grid[0] else 0)
    return grid


def _boolean_grid(grid, kind):
    rows = []
    for i, row in enumerate(_rows(grid, kind), start=1):
        out = []
        for j, entry in enumerate(row, start=1):
            if entry is True or entry is sympy.true or (not isinstance(entry, float) and entry == 1):
                out.append(True)
            elif entry is False or entry is sympy.false or (not isinstance(entry, float) and entry == 0):
                out.append(False)
            else:
                raise MaskError(f"{kind} mask entry ({i},{j}) is {entry!r}: expected True/False or 1/0")
        rows.append(tuple(out))
    return tuple(rows)


def _is_minus_infinity(entry) -> bool:
    if isinstance(entry, float):
        return entry == -math.inf
    return entry is sympy.S.NegativeInfinity or (isinstance(entry, str) and entry.strip() in ("-oo", "-inf"))


def _is_zero(entry) -> bool:
    if isinstance(entry, bool):
        return False
    if isinstance(entry, str):
        return entry.strip() in ("0", "-0")
    return entry == 0
