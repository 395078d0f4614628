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
from collections.abc import Sequence

from symbolic_attn.render.blocks import Code, Figure, Heading, Math, Text

__all__ = ["render_markdown", "latex_to_markdown", "result_markdown", "text_markdown", "split_math",
           "escape_markdown", "math_text"]

# Text-mode escapes of symbolic_attn.render.latex.escape_text, undone for Markdown text.
_TEXT = [
    (r"\textless{}", "&lt;"), (r"\textgreater{}", "&gt;"), (r"\textbackslash{}", "\\\\"),
    (r"\textasciitilde{}", "~"), (r"\textasciicircum{}", "\\^"),
    (r"\%", "%"), (r"\&", "&amp;"), (r"\#", "#"), (r"\$", "\\$"), (r"\{", "{"), (r"\}", "}"), (r"\_", "\\_"),
]
# Inside math, \text{...} may hold the same escapes; KaTeX and MathJax read these forms.
_IN_MATH = [(r"\textless{}", "<"), (r"\textgreater{}", ">"), (r"\textbackslash{}", r"\backslash "),
            ("\\allowbreak", "")]
# Characters that would start Markdown markup in a title given on the command line.
_MARKUP = re.compile(r"([\\`*_{}\[\]#|~$])")


def split_math(prose: str) -> list:
    r"""``[(is_math, piece)]`` of LaTeX prose: inline ``$...$`` spans and the text between.

    A backslash escapes the next character (``\$`` is a dollar sign, in text and in math),
    so a span ends at the first *unescaped* ``$``; a ``$`` that nothing closes is text.
    Spans may run across line breaks (a paragraph is split as a whole, not line by line).

    >>> split_math(r"costs \$5, $a = \$1$ and $x")
    [(False, 'costs \\$5, '), (True, 'a = \\$1'), (False, ' and $x')]
    """
    pieces, text, i = [], [], 0
    while i < len(prose):
        char = prose[i]
        if char == "\\":
            text.append(prose[i:i + 2])
            i += 2
            continue
        if char == "$":
            end = _closing_dollar(prose, i + 1)
            if end is not None and end > i + 1:
                if text:
                    pieces.append((False, "".join(text)))
                    text = []
                pieces.append((True, prose[i + 1:end]))
                i = end + 1
                continue
        text.append(char)
        i += 1
    if text:
        pieces.append((False, "".join(text)))
    return pieces


def _closing_dollar(prose: str, start: int):
    i = start
    while i < len(prose):
        if prose[i] == "\\":
            i += 2
        elif prose[i] == "$":
            return i
        else:
            i += 1
    return None


def _text_piece(piece: str) -> str:
    piece = re.sub(r"\\eqref\{[^{}:]*:([0-9.]+)\}", r"(\1)", piece)  # a step label NAME:PART.STEP
    piece = re.sub(r"\\textbf\{([^{}]*)\}", r"**\1**", piece)
    piece = re.sub(r"\\texttt\{([^{}]*)\}", lambda m: "`" + m.group(1).replace("\\_", "_") + "`", piece)
    for old, new in _TEXT:
        piece = piece.replace(old, new)
    # A lone "$" that opens nothing must not open math in the Markdown renderer either.
    return re.sub(r"(?<!\\)\$", r"\\$", piece)


def text_markdown(prose: str) -> str:
    r"""LaTeX-escaped prose (with ``$math$``) as Markdown text: each math span kept on one
    line with no space inside its dollars (as pandoc and markdown-it require), escapes undone.

    >>> text_markdown("The form $\\operatorname{softmax}(s) =\n\\operatorname{softmax}(t)$ and 50\\%.")
    'The form $\\operatorname{softmax}(s) = \\operatorname{softmax}(t)$ and 50%.'
    """
    out = []
    for is_math, piece in split_math(prose):
        if is_math:
            out.append("$" + _math(" ".join(piece.split())) + "$")
        else:
            out.append(_text_piece(piece))
    return "".join(out)


_text = text_markdown


def escape_markdown(text: str) -> str:
    r"""Plain text (a title from the command line) shown literally in Markdown.

    >>> escape_markdown("a_b <c> & $d$")
    'a\\_b &lt;c&gt; &amp; \\$d\\$'
    """
    text = " ".join(text.split())
    text = _MARKUP.sub(r"\\\1", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def math_text(text: str) -> str:
    r"""Plain text made safe inside ``\text{...}`` of a math display (LaTeX and KaTeX):
    the text-mode escapes, with ``<`` and ``>`` kept as they are (KaTeX reads them).

    >>> math_text("step 1 of 'a_b': x < $y$ & {z}")
    "step 1 of 'a\\_b': x < \\$y\\$ \\& \\{z\\}"
    """
    from symbolic_attn.render.latex import escape_text

    return escape_text(" ".join(text.split())).replace(r"\textless{}", "<").replace(r"\textgreater{}", ">")


def _math(body: str) -> str:
    for old, new in _IN_MATH:
        body = body.replace(old, new)
    return body


def _display(rows: Sequence[str]) -> str:
    if len(rows) == 1 and "&" not in rows[0]:
        return f"$$\n{_math(rows[0])}\n$$\n"
    return "$$\n\\begin{aligned}\n" + " \\\\\n".join(_math(row) for row in rows) + "\n\\end{aligned}\n$$\n"


#: A bold heading line of a fragment (:mod:`symbolic_attn.notes.fragment`), and its tail.
_BOLD_HEADING = re.compile(r"\\par\\medskip\\noindent\\textbf\{(.*)\}\\par\\nopagebreak"
                           r"(?:\\csname @nobreaktrue\\endcsname)?(.*)")
#: A run-in heading of a fragment: the bold words, then the paragraph on the same line.
_RUN_IN = re.compile(r"\\par\\medskip\\noindent\\textbf\{((?:Assumptions|Scope|Trusted base)\.)\} (.*)")
_STEP_LABEL = re.compile(r"\s*\\label\{[^{}:]*:([0-9]+)\.([0-9]+)\}")


def _align_row(row: str) -> str:
    r"""A row of a numbered ``align`` as a row of ``aligned`` (KaTeX has no ``\label``, no
    ``\parbox``): the step's number ``(STEP)`` leads its justification.

    >>> _align_row(r"a &= b && \text{why} \label{n:1.2}")
    'a &= b && \\text{(2) why}'
    >>> _align_row(r"&\qquad \parbox[t]{0.7\linewidth}{\raggedright\small a long $x$} \notag")
    '&\\qquad \\text{a long $x$}'
    """
    row = row.replace(" \\notag", "").replace("\\notag", "").replace("\\small ", "")
    row = re.sub(r"\\parbox\[t\]\{[^{}]*\}\{\\raggedright(.*)\}$", r"\\text{\1}", row)
    label = _STEP_LABEL.search(row)
    if not label:
        return row
    row, number = _STEP_LABEL.sub("", row), label.group(2)
    if "&& \\text{" in row:
        return row.replace("&& \\text{", f"&& \\text{{({number}) ", 1)
    return row + f" && \\text{{({number})}}"


def latex_to_markdown(latex: str) -> str:
    r"""Translate a result's LaTeX fragment (sections, paragraphs, bold headings, itemize,
    align, align*, equation*, verbatim) to Markdown; anything else is kept as text.

    Every block (heading, paragraph, list, display, code) is separated from the next by a
    blank line, and a paragraph is converted as a whole, so inline math may span lines.

    >>> print(latex_to_markdown("None.\n\\paragraph{Scope.}\nText $a =\nb$."))
    None.
    <BLANKLINE>
    **Scope.**
    <BLANKLINE>
    Text $a = b$.
    <BLANKLINE>
    """
    blocks, paragraph, items, block, kind, depth = [], [], [], [], None, 0

    def flush():
        if paragraph:
            blocks.append(text_markdown("\n".join(paragraph)))
            paragraph.clear()

    for line in latex.splitlines():
        if kind:  # inside a display or verbatim block
            if line.strip() == f"\\end{{{kind}}}":
                if kind == "verbatim":
                    blocks.append("```python\n" + "\n".join(block) + "\n```")
                else:
                    rows = [row.strip() for row in "\n".join(block).split("\\\\\n")]
                    if kind == "align":
                        rows = [_align_row(row) for row in rows]
                    if kind == "gather*":
                        shown = "$$\n\\begin{gathered}\n" + " \\\\\n".join(map(_math, rows)) + "\n\\end{gathered}\n$$\n"
                    elif kind.startswith("align"):
                        shown = _display(rows)
                    else:
                        shown = f"$$\n{_math(' '.join(block))}\n$$\n"
                    blocks.append(shown.rstrip("\n"))
                block, kind = [], None
            else:
                block.append(line)
            continue
        stripped = line.strip()
        begin = re.fullmatch(r"\\begin\{(align\*|align|equation\*|gather\*|verbatim)\}", stripped)
        heading = re.fullmatch(r"\\(section|subsection)\*\{(.*)\}", stripped)
        bold = _BOLD_HEADING.fullmatch(stripped) or _RUN_IN.fullmatch(stripped)
        if stripped in ("\\begingroup\\allowdisplaybreaks[1]", "\\begingroup\\allowdisplaybreaks", "\\begingroup\\emergencystretch=3em \\tolerance=1000",
                        "\\begingroup\\raggedright", "\\endgroup",
                        "\\par\\endgroup", "}"):
            continue
        if stripped.startswith("{\\small "):
            line = stripped = stripped[len("{\\small "):]
        if bold:
            flush()
            blocks.append("**" + text_markdown(bold.group(1)) + "**")
            if bold.group(2).strip():
                paragraph.append(bold.group(2).strip())
        elif begin:
            flush()
            kind = begin.group(1)
        elif heading:
            flush()
            blocks.append(("## " if heading.group(1) == "section" else "### ") + text_markdown(heading.group(2)))
        elif line.startswith("\\paragraph{"):
            # \paragraph{Title.} may carry its paragraph's first text on the same line.
            flush()
            title, _, rest = line[len("\\paragraph{"):].partition("}")
            blocks.append("**" + text_markdown(title) + "**")
            if rest.strip():
                paragraph.append(rest.strip())
        elif stripped == "\\begin{itemize}":
            flush()
            depth += 1
        elif stripped == "\\end{itemize}":
            depth -= 1
            if depth <= 0 and items:
                blocks.append("\n".join(items))
                items, depth = [], 0
        elif line.startswith("\\item "):
            items.append("  " * max(depth - 1, 0) + "- " + text_markdown(line[len("\\item "):]))
        elif line.startswith("%"):
            continue
        elif not stripped:
            flush()
        else:
            paragraph.append(line)
    flush()
    if items:
        blocks.append("\n".join(items))
    return "\n\n".join(b for b in blocks if b.strip()) + "\n"


def result_markdown(result) -> str:
    """One verified result as Markdown (also usable as a notebook's ``_repr_markdown_``).

    ``result.latex()`` verifies first, so a result that does not verify raises its
    ProofError here: no unverified math is written to Markdown either.
    """
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


def render_markdown(blocks: Sequence, figure_files: Sequence[str] = ()) -> str:
    """Markdown of a list of blocks; figures become one table per panel, preceded by a link
    to the figure's SVG file when ``figure_files`` names one (in the order of the figures)."""
    out, files = [], list(figure_files)
    for block in blocks:
        if isinstance(block, Heading):
            out.append(("## " if block.level == 1 else "### ") + _text(block.text) + "\n")
        elif isinstance(block, Text):
            out.append(_text(block.prose) + "\n")
        elif isinstance(block, Math):
            out.append(_display(block.rows))
        elif isinstance(block, Figure):
            if files:
                from symbolic_attn.render.latex import plain_text

                out.append(f"![{escape_markdown(plain_text(block.caption))}]({files.pop(0)})\n")
            for panel in block.panels:
                out.append(f"*{_text(panel.title)}*\n\n{_table(panel)}\n")
            out.append(f"*{_text(block.caption)}*\n")
        elif isinstance(block, Code):
            out.append("```python\n" + block.text.rstrip("\n") + "\n```\n")
        else:
            raise TypeError(f"unknown block {type(block).__name__}")
    return "\n".join(out)
