r"""Markdown with ``$$`` math (for Jupyter Book, Quarto, MkDocs) of results and document blocks.

The math uses only what both KaTeX and MathJax accept: ``aligned`` inside ``$$`` instead
of ``align*``, no ``\label``, ``\DeclareMathOperator`` or ``\intertext``.  The results
are converted from their LaTeX (a small line-based translation of the few constructs
:meth:`Result.latex` emits); the worked examples are printed from the same blocks as
``notes.tex``; figures become tables (a blocked cell is ``×``).

>>> from symbolic_attn.render.blocks import Math
>>> print(render_markdown([Math(("a &= 1", "b &= 2"))]))
$$
\begin{aligned}
a &= 1 \\
b &= 2
\end{aligned}
$$
<BLANKLINE>
>>> latex_to_markdown("\\section*{Title}\n\\begin{itemize}\n\\item $n \\le 4$ 50\\% \\textless{}= 4\n\\end{itemize}")
'## Title\n\n- $n \\le 4$ 50% &lt;= 4\n'
"""

from __future__ import annotations

import re
from typing import Sequence

from symbolic_attn.render.blocks import Code, Figure, Heading, Math, Text

__all__ = ["render_markdown", "latex_to_markdown", "result_markdown"]

# Text-mode escapes of symbolic_attn.render.latex.escape_text, undone for Markdown text.
_TEXT = [
    (r"\textless{}", "&lt;"), (r"\textgreater{}", "&gt;"), (r"\textbackslash{}", "\\\\"),
    (r"\textasciitilde{}", "~"), (r"\textasciicircum{}", "^"),
    (r"\%", "%"), (r"\&", "&amp;"), (r"\#", "#"), (r"\$", "\\$"), (r"\{", "{"), (r"\}", "}"), (r"\_", "\\_"),
]
# Inside math, \text{...} may hold the same escapes; KaTeX and MathJax read these forms.
_IN_MATH = [(r"\textless{}", "<"), (r"\textgreater{}", ">"), (r"\textbackslash{}", r"\backslash ")]


def _text(prose: str) -> str:
    """LaTeX-escaped prose (with $math$) as Markdown text: math kept, escapes undone."""
    pieces = prose.split("$")
    out = []
    for index, piece in enumerate(pieces):
        if index % 2:
            out.append(f"${piece}$")
            continue
        piece = re.sub(r"\\textbf\{([^{}]*)\}", r"**\1**", piece)
        piece = re.sub(r"\\texttt\{([^{}]*)\}", lambda m: "`" + m.group(1).replace("\\_", "_") + "`", piece)
        for old, new in _TEXT:
            piece = piece.replace(old, new)
        out.append(piece)
    return "".join(out)


def _math(body: str) -> str:
    for old, new in _IN_MATH:
        body = body.replace(old, new)
    return body


def _display(rows: Sequence[str]) -> str:
    if len(rows) == 1 and "&" not in rows[0]:
        return f"$$\n{_math(rows[0])}\n$$\n"
    return "$$\n\\begin{aligned}\n" + " \\\\\n".join(_math(row) for row in rows) + "\n\\end{aligned}\n$$\n"


def latex_to_markdown(latex: str) -> str:
    r"""Translate a result's LaTeX fragment (sections, paragraphs, itemize, align*,
    equation*, verbatim) to Markdown; anything else is kept as text."""
    out, block, kind, depth = [], [], None, 0
    for line in latex.splitlines():
        if kind:  # inside a display or verbatim block
            if line.strip() == f"\\end{{{kind}}}":
                if kind == "verbatim":
                    out.append("\n```python\n" + "\n".join(block) + "\n```\n")
                else:
                    rows = [row.strip() for row in "\n".join(block).split("\\\\\n")]
                    # A blank line before $$: some renderers only see display math as a block.
                    out.append("\n" + (_display(rows) if kind == "align*" else f"$$\n{_math(' '.join(block))}\n$$\n"))
                block, kind = [], None
            else:
                block.append(line)
            continue
        begin = re.fullmatch(r"\\begin\{(align\*|equation\*|verbatim)\}", line.strip())
        heading = re.fullmatch(r"\\(section|subsection)\*\{(.*)\}", line.strip())
        if begin:
            kind = begin.group(1)
        elif heading:
            out.append(("## " if heading.group(1) == "section" else "### ") + _text(heading.group(2)) + "\n")
        elif line.startswith("\\paragraph{"):
            out.append("**" + _text(line[len("\\paragraph{"):].rstrip("}")) + "**\n")
        elif line.strip() == "\\begin{itemize}":
            depth += 1
        elif line.strip() == "\\end{itemize}":
            depth -= 1
            if depth == 0:
                out.append("")
        elif line.startswith("\\item "):
            out.append("  " * (depth - 1) + "- " + _text(line[len("\\item "):]))
        elif line.startswith("%"):
            continue
        else:
            out.append(_text(line))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out).strip("\n")) + "\n"


def result_markdown(result) -> str:
    """One verified result as Markdown (also usable as a notebook's ``_repr_markdown_``)."""
    return latex_to_markdown(result.latex())


def _table(panel) -> str:
    header = "| query \\ key | " + " | ".join(_text(c) for c in panel.cols) + " |"
    lines = [header, "|---" * (len(panel.cols) + 1) + "|"]
    for i, label in enumerate(panel.rows):
        if panel.kind == "heat":
            cells = [v if ok else "×" for v, ok in zip(panel.values[i], panel.allowed[i])]
        else:
            cells = ["✓" if ok else "×" for ok in panel.allowed[i]]
        lines.append(f"| {_text(label)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render_markdown(blocks: Sequence) -> str:
    """Markdown of a list of blocks; figures become one table per panel."""
    out = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append(("## " if block.level == 1 else "### ") + _text(block.text) + "\n")
        elif isinstance(block, Text):
            out.append(_text(block.prose) + "\n")
        elif isinstance(block, Math):
            out.append(_display(block.rows))
        elif isinstance(block, Figure):
            for panel in block.panels:
                out.append(f"*{_text(panel.title)}*\n\n{_table(panel)}\n")
            out.append(f"*{_text(block.caption)}*\n")
        elif isinstance(block, Code):
            out.append("```python\n" + block.text.rstrip("\n") + "\n```\n")
        else:
            raise TypeError(f"unknown block {type(block).__name__}")
    return "\n".join(out)
