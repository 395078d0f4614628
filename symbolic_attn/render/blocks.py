r"""Blocks of a document (headings, prose, aligned math, figures, code) and math spelling helpers.

The worked examples (:mod:`symbolic_attn.notes.worked`) are lists of these blocks, which
:mod:`symbolic_attn.notes.document` prints as LaTeX and :mod:`symbolic_attn.render.markdown` as Markdown,
so the two notes cannot drift apart.  The blocks are plain data; the helpers that fill
them from a computed trace (and check every claim) are in :mod:`symbolic_attn.notes.steps`.

>>> vec([sympy.Rational(1, 3), 0])
'\\begin{bmatrix}\\frac{1}{3} & 0\\end{bmatrix}'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

import sympy  # noqa: F401 -- for the doctests

from symbolic_attn.render.latex import expr_latex

__all__ = ["Heading", "Text", "Math", "Panel", "Figure", "Code", "tex", "vec", "matrix", "dec_matrix", "beside"]


@dataclass(frozen=True)
class Heading:
    """A section (level 1) or subsection (level 2) title; prose with ``$math$``."""

    text: str
    level: int = 1


@dataclass(frozen=True)
class Text:
    """A paragraph of prose with inline ``$math$``."""

    prose: str


@dataclass(frozen=True)
class Math:
    """Display math: rows of an ``align*`` / ``aligned`` (``&`` marks the alignment)."""

    rows: tuple


@dataclass(frozen=True)
class Panel:
    """One picture: ``kind`` "heat" (weights) or "mask"; ``values`` are decimal strings."""

    kind: str
    title: str
    allowed: tuple
    rows: tuple
    cols: tuple
    values: tuple = ()


@dataclass(frozen=True)
class Figure:
    """Panels side by side, with a caption (prose)."""

    panels: tuple
    caption: str


@dataclass(frozen=True)
class Code:
    """A verbatim block of Python."""

    text: str


# ----------------------------------------------------------------------------- spelling helpers


# e^{\frac{a}{b}} -> e^{a/b}: a stacked fraction in an exponent is too small to read.
_EXPONENT_FRACTION = re.compile(r"e\^\{\\frac\{((?:[^{}]|\{[^{}]*\})*)\}\{(\d+)\}\}")


def tex(expr) -> str:
    r"""LaTeX of an exact value, with fractions in exponents written inline.

    >>> tex(sympy.exp(3 * sympy.sqrt(2) / 2))
    'e^{3 \\sqrt{2}/2}'
    """
    return _EXPONENT_FRACTION.sub(r"e^{\1/\2}", expr_latex(expr))


def vec(entries) -> str:
    """A row vector (1 x m ``bmatrix``) of exact entries or decimal strings."""
    return r"\begin{bmatrix}" + " & ".join(e if isinstance(e, str) else tex(e) for e in entries) + r"\end{bmatrix}"


def matrix(m) -> str:
    """A matrix as a ``bmatrix``, entries as in :func:`tex`."""
    return r"\begin{bmatrix}" + r" \\ ".join(" & ".join(tex(e) for e in m.row(i)) for i in range(m.rows)) + r"\end{bmatrix}"


def dec_matrix(grid) -> str:
    return r"\begin{bmatrix}" + r" \\ ".join(" & ".join(row) for row in grid) + r"\end{bmatrix}"


def _is_exact_decimal(entries, shown) -> bool:
    """True when every shown decimal *is* the exact value (then '=' rather than approx)."""
    return all(e.is_Rational and Fraction(int(e.p), int(e.q)) == Fraction(s) for e, s in zip(entries, shown))


def beside(entries, shown) -> str:
    r"""``= decimals`` or ``\approx decimals``, whichever is true."""
    return ("= " if _is_exact_decimal(entries, shown) else r"\approx ") + vec(shown)
