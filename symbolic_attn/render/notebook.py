r"""Notebook display: a computed trace, or any document LaTeX, as notebooks render it.

Jupyter renders math it finds between ``$$ … $$``; a bare ``align*`` environment is shown
by some front ends and not others.  So everything a notebook displays is made of
``$$ … $$`` blocks: :func:`trace_markdown` writes one per stage (its path in bold, the
exact matrix in the one canonical form every output prints, and beside it the certified
decimals when an entry is not rational), and
:func:`display_math` turns a document's ``align*`` environments into ``$$\begin{aligned}
… \end{aligned}$$`` blocks.  A closed form too large to read is not printed: its place
says how large it is, and the certified decimals stand alone.

>>> import sympy
>>> from symbolic_attn.model.trace import Trace
>>> t = Trace({"x": sympy.Matrix([[1, sympy.Rational(1, 2)]]), "y": sympy.Matrix([[sympy.sqrt(2)]])})
>>> print(trace_markdown(t))
**x** (1×2)
<BLANKLINE>
$$\mathrm{x} = \begin{bmatrix}1 & \frac{1}{2}\end{bmatrix}$$
<BLANKLINE>
**y** (1×1)
<BLANKLINE>
$$\mathrm{y} = \begin{bmatrix}\sqrt{2}\end{bmatrix} \approx \begin{bmatrix}1.414\end{bmatrix}$$
>>> display_math("\\begin{align*}\na &= 1\n\\end{align*}")
'$$\\begin{aligned}\na &= 1\n\\end{aligned}$$'
"""

import re

import sympy

from symbolic_attn.render.exact_text import PRINT_BUDGET, Canonical, not_printed
from symbolic_attn.render.labels import stage_label
from symbolic_attn.render.latex import matrix_latex

__all__ = ["trace_markdown", "trace_latex", "display_math"]

_ALIGN = re.compile(r"\\begin\{align\*\}(.*?)\\end\{align\*\}", re.DOTALL)


def display_math(latex: str) -> str:
    r"""Each ``align*`` environment of ``latex`` as a ``$$\begin{aligned} … \end{aligned}$$``
    block, which every notebook front end renders."""
    return _ALIGN.sub(lambda m: "$$\\begin{aligned}" + m.group(1) + "\\end{aligned}$$", latex)


def _decimal_matrix(rows: list) -> str:
    body = r" \\ ".join(" & ".join("-" if d is None else d.replace("-inf", r"-\infty") for d in row) for row in rows)
    return r"\begin{bmatrix}" + body + r"\end{bmatrix}"


def _stage_math(trace, path: str, digits: int, canonical: Canonical) -> str:
    """One stage as display math, in the one canonical form every output prints
    (:class:`~symbolic_attn.render.exact_text.Canonical`): exact, then ``≈`` certified
    decimals unless every entry is rational; beyond the print budget, the decimals only."""
    matrix = canonical.matrix(trace[path])
    largest = max((canonical.nodes(entry) for entry in matrix if not entry.is_Rational), default=0)
    if largest > PRINT_BUDGET:
        return rf"\text{{{not_printed(largest)}}} \approx " + _decimal_matrix(trace.decimals(path, digits))
    exact = matrix_latex(matrix, order="none")
    if all(entry.is_Rational or entry is sympy.S.NegativeInfinity for entry in matrix):
        return exact
    return exact + r" \approx " + _decimal_matrix(trace.decimals(path, digits))


def trace_markdown(trace, digits: int = 3) -> str:
    """Every stage of a trace as Markdown: its path in bold, its shape, and ``$$`` math."""
    blocks, canonical = [], Canonical()
    for path in trace:
        rows, cols = trace.shape(path)
        blocks.append(f"**{path}** ({rows}×{cols})\n\n$${stage_label(path)} = {_stage_math(trace, path, digits, canonical)}$$")
    return "\n\n".join(blocks)


def trace_latex(trace, digits: int = 3) -> str:
    r"""Every stage of a trace in one ``$$\begin{aligned} … \end{aligned}$$`` block, each
    line labelled with its path."""
    canonical = Canonical()
    lines = [stage_label(path) + " &= " + _stage_math(trace, path, digits, canonical) for path in trace]
    return "$$\\begin{aligned}" + r" \\ ".join(lines) + "\\end{aligned}$$"
