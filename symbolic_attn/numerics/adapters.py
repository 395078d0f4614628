r"""Mask conventions of the libraries, both ways: :class:`Mask` <-> a library's array.

A :class:`~symbolic_attn.model.masks.Mask` is structure (which keys a query may attend
to).  Libraries spell it in incompatible ways, and a fully masked row comes out
differently in each:

=======================  ========================================  ==============  ===========  ==========  =================
convention               used by                                   array           allowed      blocked     fully masked row
=======================  ========================================  ==============  ===========  ==========  =================
``keep``                 torch SDPA bool ``attn_mask``, JAX        bool n x m      True         False       zeros (SDPA),
                         ``mask``, Keras ``attention_mask``                                                 uniform (JAX)
``block``                ``nn.MultiheadAttention`` ``attn_mask``   bool n x m      False        True        NaN
``additive``             torch SDPA float ``attn_mask``, JAX       float n x m     0            -inf        NaN (naive),
                         ``bias``                                                                           zeros (SDPA)
``additive_min``         Hugging Face (the 4-D mask it builds)     float n x m     0            finfo.min   uniform
``key_padding``          ``nn.MultiheadAttention``                 bool, m keys    False        True        NaN
                         ``key_padding_mask``
``hf_attention_mask``    Hugging Face ``attention_mask``           int 1/0, m      1            0           uniform
``causal_top_left``      torch ``is_causal=True``, JAX             (a flag)        j <= i       j > i       --
                         ``is_causal=True``
``causal_bottom_right``  torch ``causal_lower_right``, a KV cache  (a flag)        j <= i+m-n   j > i+m-n   rows i < n-m
=======================  ========================================  ==============  ===========  ==========  =================

A float mask is *added* to the scores: a {0, 1} float mask masks nothing, which is why
the additive conventions are read strictly (0, -inf or finfo.min, nothing else).

>>> m = Mask.causal(2, 3, offset=1)
>>> to_convention(m, "block").tolist()
[[False, False, True], [False, False, False]]
>>> from_convention(to_convention(m, "additive"), "additive") == m
True
>>> causal(2, 3, "bottom_right") == m, causal_alignment(m)
(True, 'bottom_right')
>>> from_convention([1, 1, 0], "hf_attention_mask", n=2)
Mask.keep([[1, 1, 0], [1, 1, 0]])
"""

from __future__ import annotations

from symbolic_attn.errors import MaskError, shown
from symbolic_attn.exact.limits import DEFAULT_LIMITS
from symbolic_attn.model.masks import Mask
from symbolic_attn.numerics.backends import FORMATS, float_format, numpy, numpy_dtype, to_numpy

__all__ = ["CONVENTIONS", "KEY_CONVENTIONS", "to_convention", "from_convention", "causal", "causal_alignment"]

#: Conventions given as a full n x m grid, and what a blocked entry is.
CONVENTIONS = {
    "keep": "bool n x m, True = may attend (torch SDPA, JAX mask, Keras)",
    "block": "bool n x m, True = blocked (nn.MultiheadAttention attn_mask)",
    "additive": "float n x m added to the scores: 0 allowed, -inf blocked (SDPA float mask, JAX bias)",
    "additive_min": "float n x m added to the scores: 0 allowed, finfo(dtype).min blocked (Hugging Face)",
}
#: Conventions given per key (padding), the same for every query.
KEY_CONVENTIONS = {
    "key_padding": "bool of m keys, True = padding (nn.MultiheadAttention key_padding_mask)",
    "hf_attention_mask": "int of m keys, 1 = real token, 0 = padding (Hugging Face attention_mask)",
}
ALIGNMENTS = ("top_left", "bottom_right")


def _mask(mask, what: str) -> Mask:
    """``mask`` itself, if it is a :class:`Mask`; a grid (list, array) is refused with the
    spelling to use, since which convention it is written in (keep or block?) is not known."""
    if isinstance(mask, Mask):
        return mask
    raise MaskError(f"{what}: expected a Mask, got {shown(mask)} ({type(mask).__name__}): "
                    "read a grid first with Mask.keep(grid) (True = may attend) or from_convention(grid, convention)")


def _convention(convention, allowed) -> str:
    if not isinstance(convention, str) or convention not in allowed:
        raise MaskError(f"unknown mask convention {shown(repr(convention) if isinstance(convention, str) else convention)}: "
                        f"expected one of {', '.join([*CONVENTIONS, *KEY_CONVENTIONS])}")
    return convention


def to_convention(mask: Mask, convention: str, dtype="float32"):
    """The numpy array a library expects for ``mask`` (``dtype`` for the additive ones).

    ``mask`` is a :class:`Mask`; a bare grid is refused (keep or block convention?):

    >>> to_convention(Mask.keep([[1, 0]]), "block").tolist()
    [[False, True]]
    >>> to_convention([[1, 0]], "block")
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.MaskError: to_convention: expected a Mask, got [[1, 0]] (list): read a grid first with Mask.keep(grid) (True = may attend) or from_convention(grid, convention)
    """
    mask = _mask(mask, "to_convention")
    _convention(convention, [*CONVENTIONS, *KEY_CONVENTIONS])
    np = numpy()
    keep = np.array(mask.allowed, dtype=bool)
    if convention == "keep":
        return keep
    if convention == "block":
        return ~keep
    if convention in ("additive", "additive_min"):
        fmt = float_format(dtype)
        blocked = -np.inf if convention == "additive" else -fmt.largest  # finfo(dtype).min
        return np.where(keep, 0.0, blocked).astype(numpy_dtype(fmt))
    if convention in KEY_CONVENTIONS:
        if any(row != mask.allowed[0] for row in mask.allowed):
            raise MaskError(f"a {convention} mask is one row for every query, but this mask's rows differ: {shown(mask)}")
        return ~keep[0] if convention == "key_padding" else keep[0].astype(np.int64)
    raise MaskError(f"unknown mask convention {shown(convention)!r}: expected one of {', '.join([*CONVENTIONS, *KEY_CONVENTIONS])}")


def from_convention(array, convention: str, *, n: int | None = None) -> Mask:
    """The :class:`Mask` a library's mask array means (``n`` queries for per-key ones)."""
    _convention(convention, [*CONVENTIONS, *KEY_CONVENTIONS])
    if convention in KEY_CONVENTIONS:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise MaskError(f"a {convention} mask gives keys only: pass n, the number of queries (got {shown(n)})")
        if n > DEFAULT_LIMITS.max_rows:
            raise MaskError(f"n = {shown(n)} queries exceed the limit of {DEFAULT_LIMITS.max_rows}")
        grid = to_numpy(array, name=f"{convention} mask")
        if grid.shape[0] != 1:
            raise MaskError(f"a {convention} mask has one entry per key, got shape {tuple(grid.shape)}")
        row = grid[0].tolist()
        reader = Mask.block if convention == "key_padding" else Mask.keep
        return reader([row] * n)
    if convention not in CONVENTIONS:
        raise MaskError(f"unknown mask convention {shown(convention)!r}: expected one of {', '.join([*CONVENTIONS, *KEY_CONVENTIONS])}")
    grid = to_numpy(array, name=f"{convention} mask")
    if convention == "keep":
        return Mask.keep(grid.tolist())
    if convention == "block":
        return Mask.block(grid.tolist())
    return Mask(tuple(tuple(_additive_entry(x, i, j) for j, x in enumerate(row)) for i, row in enumerate(grid.tolist())))


def _additive_entry(x, i, j) -> bool:
    np = numpy()
    if x == 0:
        return True
    # The library's sentinel for "blocked": -inf, or the most negative finite float of a
    # float format (Hugging Face's finfo(dtype).min; lists lose the dtype, so that of any
    # format is read as blocked).  Any other value only shifts a score.
    if x == -np.inf or x in {-fmt.largest for fmt in FORMATS.values()}:
        return False
    raise MaskError(
        f"additive mask entry ({i + 1},{j + 1}) is {x!r}: only 0 (allowed), -inf or finfo.min (blocked) "
        "are masks; other values shift the score"
    )


def causal(n: int, m: int, align: str = "top_left") -> Mask:
    """The causal mask of n queries and m keys, aligned top-left (first query sees the
    first key: torch ``is_causal``) or bottom-right (last query sees every key: a KV cache)."""
    if align not in ALIGNMENTS:
        raise MaskError(f"unknown causal alignment {shown(align)!r}: expected top_left or bottom_right")
    return Mask.causal(n, m, offset=0 if align == "top_left" else m - n)


def causal_alignment(mask: Mask) -> str | None:
    """"top_left", "bottom_right", "both" (n = m, where they agree) or None (not causal)."""
    mask = _mask(mask, "causal_alignment")
    n, m = mask.shape
    left, right = causal(n, m, "top_left") == mask, causal(n, m, "bottom_right") == mask
    return "both" if left and right else "top_left" if left else "bottom_right" if right else None
