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

Every operation also takes the short forms ``None``/``"none"`` and ``"causal"``;
:func:`as_mask` reads them (and checks a given mask's shape), for attention and the rest
of the model alike.

>>> Mask.causal(3)
Mask.keep([[1, 0, 0], [1, 1, 0], [1, 1, 1]])
>>> Mask.block([[0, 1], [0, 0]]) == Mask.keep([[1, 0], [1, 1]])
True
>>> (Mask.causal(3) & Mask.padding(3, 3, valid=2)).allowed[2]
(True, True, False)
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import sympy

from symbolic_attn.errors import MaskError, ShapeError, shown
from symbolic_attn.exact.limits import DEFAULT_LIMITS

__all__ = ["Mask", "EMPTY_ROW_POLICIES", "as_mask"]

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
        # Built directly, ``allowed`` may be anything: normalize to a tuple of bool tuples.
        if not isinstance(self.allowed, (list, tuple)) or not all(isinstance(r, (list, tuple)) for r in self.allowed):
            raise MaskError(f"a mask's grid must be rows of True/False, got {shown(type(self.allowed).__name__)}")
        if not self.allowed or not self.allowed[0]:
            raise MaskError("a mask needs at least one row and one column")
        width = len(self.allowed[0])
        for number, row in enumerate(self.allowed, start=1):
            if len(row) != width:
                raise MaskError(f"mask row {number} has {len(row)} entries, row 1 has {width}")
        if not all(type(b) is bool for row in self.allowed for b in row) or not isinstance(self.allowed, tuple):
            grid = tuple(
                tuple(_as_bool(b, "mask", i, j) for j, b in enumerate(row, start=1))
                for i, row in enumerate(self.allowed, start=1)
            )
            object.__setattr__(self, "allowed", grid)

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
                        f"additive mask entry ({i},{j}) is {_quoted(entry)}: only 0 (allowed) and -oo (blocked) are "
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
        n, m = _check_size(n, m)
        offset = _whole(offset, "causal: the offset")
        return cls(tuple(tuple(j <= i + offset for j in range(m)) for i in range(n)))

    @classmethod
    def padding(cls, n: int, m: int, valid: int) -> Mask:
        """Only the first ``valid`` keys are real tokens; the rest are padding."""
        n, m = _check_size(n, m)
        valid = _whole(valid, "padding: the valid key count")
        if not 0 <= valid <= m:
            raise MaskError(f"padding: valid key count {shown(valid)} is outside 0..{m}")
        return cls(tuple(tuple(j < valid for j in range(m)) for _ in range(n)))

    @classmethod
    def full(cls, n: int, m: int) -> Mask:
        """Every query may attend to every key (no mask)."""
        n, m = _check_size(n, m)
        return cls(tuple(tuple(True for _ in range(m)) for _ in range(n)))

    # -- structure ----------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.allowed), len(self.allowed[0])

    def is_allowed(self, i: int, j: int) -> bool:
        """Whether query ``i`` may attend to key ``j`` (0-based)."""
        return self.allowed[self._index(i, 0, "query")][self._index(j, 1, "key")]

    def allowed_keys(self, i: int) -> list[int]:
        """The 0-based key indices query ``i`` may attend to."""
        return [j for j, ok in enumerate(self.allowed[self._index(i, 0, "query")]) if ok]

    def _index(self, index, axis: int, what: str) -> int:
        index = _whole(index, f"the {what} index")
        if not 0 <= index < self.shape[axis]:
            raise MaskError(f"{what} index {index} is outside 0..{self.shape[axis] - 1} (0-based)")
        return index

    def empty_rows(self) -> list[int]:
        """0-based indices of the query rows that allow no key at all."""
        return [i for i, row in enumerate(self.allowed) if not any(row)]

    def __and__(self, other: Mask) -> Mask:
        if not isinstance(other, Mask):
            raise MaskError(f"a Mask combines only with a Mask, not a {shown(type(other).__name__)}")
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
        try:
            permutation = [operator.index(p) for p in permutation]
        except TypeError:
            permutation = None
        if n != m or permutation is None or sorted(permutation) != list(range(n)):
            raise MaskError(f"permuted: {shown(permutation)} is not a permutation of 0..{n - 1} for a {n}x{m} mask")
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


def as_mask(mask, n: int, m: int) -> Mask:
    """``None``/"none" (all visible), "causal", or a :class:`Mask` checked to be n x m."""
    if mask is None or (isinstance(mask, str) and mask == "none"):
        return Mask.full(n, m)
    if isinstance(mask, str):
        if mask == "causal":
            return Mask.causal(n, m)
        raise MaskError(f"unknown mask {shown(mask)!r}: expected none, causal or a Mask")
    if not isinstance(mask, Mask):
        raise MaskError(f"expected a Mask, 'none' or 'causal', got {type(mask).__name__}")
    if mask.shape != (n, m):
        raise ShapeError(f"mask is {mask.shape[0]}x{mask.shape[1]} but the scores are {n}x{m} (n queries x m keys)")
    return mask


def _quoted(value) -> str:
    """A value for a message: text quoted (as written), anything else shown, both cut short."""
    return shown(repr(value) if isinstance(value, str) else value)


def _whole(value, what: str) -> int:
    """A whole number given as int, NumPy integer or SymPy Integer; anything else refused."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        raise MaskError(f"{what} must be a whole number, not the boolean {value}")
    if isinstance(value, float):
        raise MaskError(f"{what} must be a whole number, got the float {shown(float.__repr__(float(value)))}")
    try:
        return operator.index(value)
    except TypeError:
        raise MaskError(f"{what} must be a whole number, got {shown(type(value).__name__)} {_quoted(value)}") from None


def _check_size(n, m):
    sizes = []
    for name, value in (("n", n), ("m", m)):
        value = _whole(value, f"mask size {name}")
        if value < 1:
            raise MaskError(f"mask size {name} must be a positive integer, got {shown(value)}")
        sizes.append(value)
    if sizes[0] > DEFAULT_LIMITS.max_rows or sizes[1] > DEFAULT_LIMITS.max_cols:
        raise MaskError(
            f"mask of {shown(sizes[0], 12)}x{shown(sizes[1], 12)} exceeds the size limit of "
            f"{DEFAULT_LIMITS.max_rows}x{DEFAULT_LIMITS.max_cols}"
        )
    return sizes


def _rows(grid, kind):
    if isinstance(grid, sympy.MatrixBase):
        grid = grid.tolist()
    elif hasattr(grid, "tolist") and callable(grid.tolist):
        grid = grid.tolist()
    if not isinstance(grid, (list, tuple)) or not grid or not all(isinstance(r, (list, tuple)) for r in grid):
        raise MaskError(f"{kind} mask: expected a grid given as a list of rows, got {shown(type(grid).__name__)}")
    _check_size(len(grid), len(grid[0]) if grid[0] else 0)
    return grid


def _as_bool(entry, kind, i, j) -> bool:
    """True/False, 1/0 (int, NumPy or SymPy integers), NumPy or SymPy booleans; nothing else."""
    if entry is True or entry is sympy.true:
        return True
    if entry is False or entry is sympy.false:
        return False
    if type(entry).__name__ == "bool_":
        return bool(entry)
    if not isinstance(entry, float) and hasattr(entry, "__index__"):
        try:
            number = operator.index(entry)
        except TypeError:
            number = None
        if number in (0, 1):
            return number == 1
    hint = " (a float: write 1 or 0)" if isinstance(entry, float) else ""
    raise MaskError(f"{kind} mask entry ({i},{j}) is {_quoted(entry)}{hint}: expected True/False or 1/0")


def _boolean_grid(grid, kind):
    return tuple(
        tuple(_as_bool(entry, kind, i, j) for j, entry in enumerate(row, start=1))
        for i, row in enumerate(_rows(grid, kind), start=1)
    )


def _is_minus_infinity(entry) -> bool:
    if isinstance(entry, float):
        return entry == -math.inf
    return entry is sympy.S.NegativeInfinity or (isinstance(entry, str) and entry.strip() in ("-oo", "-inf"))


def _is_zero(entry) -> bool:
    if isinstance(entry, bool) or type(entry).__name__ == "bool_":
        return False
    if isinstance(entry, str):
        return entry.strip() in ("0", "-0")
    if isinstance(entry, float):
        return entry == 0.0  # 0.0 is exactly zero
    if isinstance(entry, sympy.Basic):
        return entry.is_zero is True and entry.is_number
    if hasattr(entry, "__index__"):
        try:
            return operator.index(entry) == 0
        except TypeError:
            return False
    return False
