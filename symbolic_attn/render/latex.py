r"""LaTeX building blocks shared by every printer: matrices, free text, align* blocks.

Everything here is deterministic (no dates, paths or hash order), so that generated
files are byte-identical across runs.

>>> import sympy
>>> matrix_latex(sympy.Matrix([[1, sympy.Rational(1, 2)]]))
'\\begin{bmatrix}1 & \\frac{1}{2}\\end{bmatrix}'
>>> escape_text("50% of a_b & more")
'50\\% of a\\_b \\& more'
>>> prose_latex("rows of $A$ sum to 100%")
'rows of $A$ sum to 100\\%'
"""

import sympy

__all__ = ["expr_latex", "matrix_latex", "escape_text", "plain_text", "prose_latex"]

_TEXT_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    # In the default OT1 font encoding "<" and ">" print as inverted ! and ?.
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def expr_latex(expr, order: str | None = None) -> str:
    """LaTeX of one exact SymPy expression (or matrix), with fixed printer settings.

    ``order="none"`` prints sums in SymPy's internal (canonical, deterministic) order
    instead of sorting their terms, which for big closed forms means evaluating every term
    numerically: many times faster, the same value.
    """
    if isinstance(expr, sympy.MatrixBase):
        return matrix_latex(expr, order)
    return sympy.latex(expr, ln_notation=True, order=order)


def matrix_latex(matrix, order: str | None = None) -> str:
    """A matrix as a ``bmatrix`` environment (amsmath), one row per ``\\``."""
    rows = [" & ".join(expr_latex(entry, order) for entry in matrix.row(i)) for i in range(matrix.rows)]
    return r"\begin{bmatrix}" + r" \\ ".join(rows) + r"\end{bmatrix}"


def escape_text(text: str) -> str:
    """Escape free text for LaTeX text mode, so that user strings cannot inject commands."""
    return "".join(_TEXT_ESCAPES.get(char, char) for char in text)


def prose_latex(text: str) -> str:
    r"""Prose with inline ``$...$`` math and ```code```: math kept, code in ``\texttt``,
    all other text escaped.

    Meant for text written by derivation authors (scripts are code they run anyway);
    an unbalanced ``$`` is escaped rather than opening math mode.

    >>> prose_latex("`zero_score` sets $s_b = 0$")
    '\\texttt{zero\\_score} sets $s_b = 0$'
    """
    pieces = text.split("$")
    if len(pieces) % 2 == 0:  # odd number of "$": treat the whole text as plain
        return _text_with_code(text)
    return "".join(f"${piece}$" if index % 2 else _text_with_code(piece) for index, piece in enumerate(pieces))


def _text_with_code(text: str) -> str:
    pieces = text.split("`")
    if len(pieces) % 2 == 0:
        return escape_text(text)
    return "".join(
        f"\\texttt{{{escape_text(piece)}}}" if index % 2 else escape_text(piece) for index, piece in enumerate(pieces)
    )


_PLAIN = [
    (r"\sqrt{", "sqrt("), (r"\max", "max"), (r"\ln", "ln"), (r"\cdot", "·"), (r"\mathbf{1}", "1"),
    (r"\dots", "..."), (r"\le", "<="), (r"\ge", ">="), (r"\neq", "!="), (r"\operatorname", ""),
]


def plain_text(prose: str) -> str:
    r"""Prose with ``$math$`` as terminal text: dollars dropped, common commands spelled out.

    >>> plain_text(r"The $\sqrt{d_k}$ scaling, $m = \max_k s_k$")
    'The sqrt(d_k) scaling, m = max_k s_k'
    """
    text = prose.replace("$", "")
    for command, spelled in _PLAIN:
        if command.endswith("{"):
            # \sqrt{x} -> sqrt(x): close the parenthesis where the group closes.
            while command in text:
                start = text.index(command) + len(command)
                depth, end = 1, start
                while end < len(text) and depth:
                    depth += {"{": 1, "}": -1}.get(text[end], 0)
                    end += 1
                text = text[: text.index(command)] + spelled + text[start : end - 1] + ")" + text[end:]
        else:
            text = text.replace(command, spelled)
    return text.replace("\\", "").replace("{", "").replace("}", "")
