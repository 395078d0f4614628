r"""Notebook display: a computed trace, or any document LaTeX, as notebooks render it.

Jupyter renders math it finds between ``$$ … $$``; a bare ``align*`` environment is shown
by some front ends and not others.  So everything a notebook displays is made of
``$$ … $$`` blocks: :func:`trace_markdown` writes one per stage (its path in bold, the
exact matrix, and beside it the certified decimals when an entry is not rational), and
:func:`display_math` turns a document's ``align*`` environments into ``$$\begin{aligned}
… \end{aligned}$$`` blocks.  A closed form too large to read is not printed: its place
says how large it is, and the certified decimals stand alone.

>>> import sympy
>>> from symbolic_attn.model.trace import Trace
>>> t = Trace({"x": sympy.Matrix([[1, sympy.Rational(1, 2)]]), "y": sympy.Matrix([[sympy.sqrt(2)]])})
>>> print(trace_markdown(t))
**x** (1×2)
<BLANKLINE>
$$\begin{bmatrix}1 & \frac{1}{2}\end{bmatrix}$$
<BLANKLINE>
**y** (1×1)
<BLANKLINE>
$$\begin{bmatrix}\sqrt{2}\end{bmatrix} \approx \begin{bmatrix}1.414\end{bmatrix}$$
>>> display_math("\\begin{align*}\na &= 1\n\\end{align*}")
'$$\\begin{aligned}\na &= 1\n\\end{aligned}$$'
"""

import re

import sympy

from symbolic_attn.render.latex import matrix_latex

__all__ = ["trace_markdown", "trace_latex", "display_math", "MAX_SHOWN_NODES"]

#: Expression nodes of one stage's closed forms above which they are not printed in a
#: notebook (a 16x16 weight matrix of small scores is far below; a block's FFN above).
MAX_SHOWN_NODES = 3_000

_ALIGN = re.compile(r"\\begin\{align\*\}(.*?)\\end\{align\*\}", re.DOTALL)


def display_math(latex: str) -> str:
    r"""Each ``align*`` environment of ``latex`` as a ``$$\begin{aligned} … \end{aligned}$$``
    block, which every notebook front end renders."""
    return _ALIGN.sub(lambda m: "$$\\begin{aligned}" + m.group(1) + "\\end{aligned}$$", latex)


def _nodes(matrix, limit: int) -> int:
    """Expression nodes of a matrix's entries, counted up to ``limit`` (then stopped)."""
    count = 0
    for entry in matrix:
        for _ in sympy.preorder_traversal(entry):
            count += 1
            if count > limit:
                return count
    return count


def _decimal_matrix(rows: list) -> str:
    body = r" \\ ".join(" & ".join("-" if d is None else d.replace("-inf", r"-\infty") for d in row) for row in rows)
    return r"\begin{bmatrix}" + body + r"\end{bmatrix}"


def _stage_math(trace, path: str, digits: int) -> str:
    """One stage as display math: exact, then ``≈`` certified decimals unless all rational."""
    matrix = trace[path]
    exact_rational = all(entry.is_Rational or entry is sympy.S.NegativeInfinity for entry in matrix)
    nodes = _nodes(matrix, MAX_SHOWN_NODES)
    if nodes > MAX_SHOWN_NODES:
        return (rf"\text{{(exact form: over {MAX_SHOWN_NODES} nodes, not printed)}} \approx "
                + _decimal_matrix(trace.decimals(path, digits)))
    exact = matrix_latex(matrix, order="none")
    if exact_rational:
        return exact
    return exact + r" \approx " + _decimal_matrix(trace.decimals(path, digits))


def trace_markdown(trace, digits: int = 3) -> str:
    """Every stage of a trace as Markdown: its path in bold, its shape, and ``$$`` math."""
    blocks = []
    for path in trace:
        rows, cols = trace.shape(path)
        blocks.append(f"**{path}** ({rows}×{cols})\n\n$${_stage_math(trace, path, digits)}$$")
    return "\n\n".join(blocks)


def trace_latex(trace, digits: int = 3) -> str:
    r"""Every stage of a trace in one ``$$\begin{aligned} … \end{aligned}$$`` block, each
    line labelled with its path."""
    lines = [r"\text{" + path.replace("_", r"\_") + "} &= " + _stage_math(trace, path, digits) for path in trace]
    return "$$\\begin{aligned}" + r" \\ ".join(lines) + "\\end{aligned}$$"
