r"""Positions, exactly: sinusoidal encodings, rotary embeddings (RoPE) and ALiBi biases.

Sinusoidal (Vaswani et al. 2017), positions p = 0..n−1, i = 0, 1, ...::

    PE(p, 2i) = sin(p / base^(2i/d_model))      PE(p, 2i+1) = cos(p / base^(2i/d_model))

Width 2 gives position 0 = [0, 1] and position 1 = [sin 1, cos 1]:

>>> sinusoidal(2, 2)["output"]
Matrix([
[     0,      1],
[sin(1), cos(1)]])
>>> sinusoidal(2, 4)["output"].row(1)
Matrix([[sin(1), cos(1), sin(1/100), cos(1/100)]])

RoPE (Su et al. 2021) rotates each pair (x_{2i}, x_{2i+1}) of a row at position p by the
angle p·θ_i, θ_i = base^(−2i/d):

>>> rope([[1, 0], [1, 0]])["output"]
Matrix([
[     1,      0],
[cos(1), sin(1)]])

ALiBi (Press et al. 2022) adds −slope·(i − j) to the scores of query i and key j; head h
of H has slope 2^(−8h/H) when H is a power of two, and otherwise the slopes of the nearest
smaller power of two followed by every other slope of the next power of two:

>>> alibi(3, heads=1)["output"]
Matrix([
[     0,  1/256, 1/128],
[-1/256,      0, 1/256],
[-1/128, -1/256,     0]])
>>> alibi(2, heads=6)["slopes"]
Matrix([[1/4, 1/16, 1/64, 1/256, 1/2, 1/8]])

The settings ``first_position=1`` (positions counted from 1) and ``swap=True`` (cos on
the even columns, sin on the odd ones) are the classic mistakes, kept as settings.
"""

from __future__ import annotations

import sympy

from symbolic_attn.errors import InputLimitError, ShapeError, UndecidedError, shown
from symbolic_attn.exact.certified import certified_sign
from symbolic_attn.exact.convert import to_exact
from symbolic_attn.exact.limits import DEFAULT_LIMITS
from symbolic_attn.model.compose import as_operand, build_trace, check_flag
from symbolic_attn.model.trace import Trace

__all__ = ["sinusoidal", "rope", "alibi", "alibi_slopes", "MAX_HEADS"]

#: Heads of an ALiBi bias (the paper uses up to 16 per layer; 64 leaves room).
MAX_HEADS = DEFAULT_LIMITS.max_heads  # the one bound (exact.limits), as multihead's


def _count(value, name: str, low: int = 1, high: int | None = None) -> int:
    if isinstance(value, sympy.Integer):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ShapeError(f"{name} must be a whole number >= {low}, got {shown(value)}")
    if high is not None and value > high:
        raise InputLimitError(f"{name} = {shown(value)} exceeds the limit of {high}")
    return value


def _base(base) -> sympy.Expr:
    """A base of the frequencies base^(-2i/d): certainly > 0 and certainly not 1, decided
    by certified intervals (``1 + log(8) - 3 log(2)`` is 1 in disguise, and is refused)."""
    base = to_exact(base)
    if base.free_symbols:
        raise ShapeError(f"base must be a positive number other than 1, got {shown(base)}")
    try:
        positive, not_one = certified_sign(base) == 1, certified_sign(base - 1) not in (0, None)
    except UndecidedError:
        positive = not_one = False
    if not (positive and not_one):
        raise ShapeError(f"base must be certainly a positive number other than 1, got {shown(base)}")
    return base


def _frequency(base, i: int, d: int) -> sympy.Expr:
    """base^(-2i/d), exactly."""
    return sympy.Pow(base, sympy.Rational(-2 * i, d))


def sinusoidal(n, d_model, base=10000, *, first_position: int = 0, swap: bool = False) -> Trace:
    """The n x d_model sinusoidal encoding; stages ``angles`` (p / base^(2i/d)) and ``output``."""
    n = _count(n, "sinusoidal: n (positions)", high=DEFAULT_LIMITS.max_rows)
    d = _count(d_model, "sinusoidal: d_model", high=DEFAULT_LIMITS.max_cols)
    if n * d > DEFAULT_LIMITS.max_entries:
        raise InputLimitError(f"sinusoidal: {n}x{d} exceeds the limit of {DEFAULT_LIMITS.max_entries} entries")
    base = _base(base)
    first_position = _position(first_position, "sinusoidal")
    check_flag(swap, "sinusoidal: swap")
    pairs = (d + 1) // 2
    angles = sympy.ImmutableMatrix(
        n, pairs, lambda p, i: (p + first_position) * _frequency(base, i, d)
    )
    first, second = (sympy.cos, sympy.sin) if swap else (sympy.sin, sympy.cos)
    output = sympy.ImmutableMatrix(n, d, lambda p, c: (first if c % 2 == 0 else second)(angles[p, c // 2]))
    return build_trace([("angles", angles), ("output", output)],
                       settings={"base": base, "first_position": first_position, "swap": swap})


def _position(value, where: str) -> sympy.Integer:
    """An integer position offset: a Python or SymPy integer (a float or a string would put
    a binary float, or nonsense, into an exact encoding)."""
    if isinstance(value, bool) or not isinstance(value, (int, sympy.Integer)):
        raise ShapeError(f"{where}: first_position must be an integer, got {shown(repr(value) if isinstance(value, str) else value)}")
    return sympy.Integer(value)


def rope(X, positions=None, base=10000, *, first_position: int = 0) -> Trace:
    """Rotary embedding of the rows of ``X`` (even width d); stages ``angles`` (p·θ_i) and
    ``output``.  ``positions`` defaults to 0..n−1 (``first_position`` shifts the default)."""
    X = as_operand(X, "rope input")
    n, d = X.shape
    if d % 2:
        raise ShapeError(f"rope: the width must be even (pairs are rotated), got {n}x{d}")
    base = _base(base)
    if positions is None:
        first_position = _position(first_position, "rope")
        positions = [p + first_position for p in range(n)]
    if isinstance(positions, sympy.MatrixBase):
        positions = list(positions)
    if not isinstance(positions, (list, tuple)) or len(positions) != n:
        raise ShapeError(f"rope: expected {n} positions (one per row), got {shown(positions)}")
    positions = [to_exact(p) for p in positions]
    angles = sympy.ImmutableMatrix(n, d // 2, lambda r, i: positions[r] * _frequency(base, i, d))
    out = [[None] * d for _ in range(n)]
    for r in range(n):
        for i in range(d // 2):
            a, b, angle = X[r, 2 * i], X[r, 2 * i + 1], angles[r, i]
            c, s = sympy.cos(angle), sympy.sin(angle)
            out[r][2 * i] = a * c - b * s
            out[r][2 * i + 1] = a * s + b * c
    return build_trace([("angles", angles), ("output", sympy.ImmutableMatrix(out))],
                       settings={"base": base, "positions": positions})


def alibi_slopes(heads) -> list:
    """The ALiBi paper's head slopes, exactly (powers of 2 with rational exponents).

    >>> alibi_slopes(8)
    [1/2, 1/4, 1/8, 1/16, 1/32, 1/64, 1/128, 1/256]
    >>> alibi_slopes(3)
    [1/16, 1/256, 1/4]
    """
    heads = _count(heads, "alibi: heads", high=MAX_HEADS)

    def power_of_two(count):  # 2^(-8/count), its square, cube, ... (the reference code)
        return [sympy.Pow(2, sympy.Rational(-8 * h, count)) for h in range(1, count + 1)]

    closest = 1 << (heads.bit_length() - 1)
    if closest == heads:
        return power_of_two(heads)
    return power_of_two(closest) + power_of_two(2 * closest)[0::2][: heads - closest]


def alibi(n, m=None, heads=1) -> Trace:
    """ALiBi biases: stages ``slopes`` (1 x H) and ``head[h]`` (n x m, entry −slope·(i − j),
    i the query and j the key position, both counted from the first); with one head the
    bias is also the ``output``."""
    n = _count(n, "alibi: n (queries)", high=DEFAULT_LIMITS.max_rows)
    m = n if m is None else _count(m, "alibi: m (keys)", high=DEFAULT_LIMITS.max_cols)
    slopes = alibi_slopes(heads)
    if n * m * len(slopes) > DEFAULT_LIMITS.max_entries:
        raise InputLimitError(f"alibi: {len(slopes)} heads of {n}x{m} exceed the limit of {DEFAULT_LIMITS.max_entries} entries")
    entries = [("slopes", sympy.ImmutableMatrix([slopes]))]
    for h, slope in enumerate(slopes, start=1):
        entries.append((f"head[{h}]", (lambda s=slope: sympy.ImmutableMatrix(n, m, lambda i, j: -s * (i - j)))))
    if len(slopes) == 1:
        entries.append(("output", entries[1][1]))
    return build_trace(entries, settings={"heads": len(slopes)})
