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

import re

import sympy

from symbolic_attn.exact.memo import memoized

__all__ = ["expr_latex", "matrix_latex", "escape_text", "plain_text", "prose_latex", "title_latex", "latex_width", "fitted_lines", "DISPLAY_WIDTH", "bracketed_rows", "split_top"]

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


@memoized
def expr_latex(expr, order: str | None = None) -> str:
    """LaTeX of one exact SymPy expression (or matrix), with fixed printer settings.

    ``order="none"`` prints sums in SymPy's internal (canonical, deterministic) order
    instead of sorting their terms, which for big closed forms means evaluating every term
    numerically: many times faster, the same value.  Remembered: a layout decision prints an
    expression before it is printed for good.
    """
    if isinstance(expr, sympy.MatrixBase):
        return matrix_latex(expr, order)
    return sympy.latex(expr, ln_notation=True, order=order)


#: amsmath's ``bmatrix`` takes at most 10 columns (its MaxMatrixCols counter).
BMATRIX_MAX_COLUMNS = 10


def matrix_latex(matrix, order: str | None = None) -> str:
    """A matrix as a ``bmatrix`` environment (amsmath), one row per ``\\``.

    Wider than amsmath's ten columns, the same brackets around an ``array``.
    """
    rows = [" & ".join(expr_latex(entry, order) for entry in matrix.row(i)) for i in range(matrix.rows)]
    return bracketed_rows(rows, matrix.cols)


def bracketed_rows(rows: list[str], columns: int) -> str:
    """Rows of ``&``-separated cells in matrix brackets (``bmatrix``, or ``array`` past ten columns)."""
    if columns > BMATRIX_MAX_COLUMNS:
        return r"\left[\begin{array}{" + "c" * columns + "}" + r" \\ ".join(rows) + r"\end{array}\right]"
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
    >>> prose_latex(r"costs \$5 for $n$ rows")
    'costs \\$5 for $n$ rows'
    """
    pieces = re.split(r"(?<!\\)\$", text)  # an escaped \$ is a literal dollar, not math
    if len(pieces) % 2 == 0:  # odd number of "$": treat the whole text as plain
        return _text_with_code(text.replace("\\$", "$"))
    return "".join(f"${piece}$" if index % 2 else _text_with_code(piece.replace("\\$", "$"))
                   for index, piece in enumerate(pieces))


#: The commands a title's ``$math$`` may use (anything else and the title is printed as text).
TITLE_COMMANDS = frozenset("""
alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi pi rho sigma
tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Phi Psi Omega
frac tfrac sqrt cdot times le ge leq geq neq approx sim equiv sum prod int infty partial nabla to mapsto
in notin subset mid ldots cdots dots operatorname mathrm mathbf mathsf mathit mathcal mathbb text top
ln log exp max min sin cos tan left right big Big bigl bigr quad qquad hat bar tilde vec
""".split())


def title_latex(text: str) -> str:
    r"""A title or author given on the command line: ``$math$`` kept when it uses only
    letters, digits, operators and the common math commands of :data:`TITLE_COMMANDS`
    (no ``\input``, ``\def``, ``\end`` ...); otherwise, and outside math, escaped text.

    >>> title_latex("Week 3: $c\\,\\mathbf{v}_j$ and 100%")
    'Week 3: $c\\,\\mathbf{v}_j$ and 100\\%'
    >>> title_latex("$\\input{/etc/passwd}$")
    '\\$\\textbackslash{}input\\{/etc/passwd\\}\\$'
    """
    pieces = re.split(r"(?<!\\)\$", text)
    if len(pieces) % 2 == 0 or not all(_safe_math(piece) for piece in pieces[1::2]):
        return escape_text(text)
    return "".join(f"${piece}$" if index % 2 else escape_text(piece.replace("\\$", "$"))
                   for index, piece in enumerate(pieces))


def _safe_math(math: str) -> bool:
    if not math.strip() or "%" in math or "#" in math or "~" in math:
        return False
    for match in re.finditer(r"\\([A-Za-z]+|.)", math):
        name = match.group(1)
        if name.isalpha() and name not in TITLE_COMMANDS:
            return False
        if not name.isalpha() and name not in ",;:! {}|":
            return False
    depth = 0
    for char in re.sub(r"\\[{}]", "", math):
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


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


# -- fitting displays into \textwidth ---------------------------------------------------

#: The usable width of a display line, in points: an article's \textwidth (10pt) is 345pt;
#: a margin is kept for the estimate being an estimate.
DISPLAY_WIDTH = 300.0
_COMMAND_WIDTHS = {
    "cdot": 8.0, "approx": 14.0, "le": 14.0, "ge": 14.0, "leq": 14.0, "geq": 14.0, "neq": 14.0,
    "quad": 10.0, "qquad": 20.0, ",": 1.7, ";": 2.8, ":": 2.2, " ": 3.4, "!": -1.7, "pi": 6.0,
    "infty": 10.0, "ldots": 14.0, "dots": 14.0, "cdots": 14.0, "mathsf": 0.0, "mathbf": 0.0,
    "Big/": 8.0, "big/": 7.0, "bigl": 5.0, "bigr": 5.0, "Bigl": 6.0, "Bigr": 6.0,
}
_NAMED_FUNCTIONS = ("log", "ln", "exp", "sin", "cos", "max", "min")


def latex_width(tex: str) -> float:
    r"""An estimate (in points, an article's 10pt fonts) of how wide ``tex`` sets in a display.

    It errs on the wide side: digits, letters and spaced operators are counted at their
    widest, fractions at the wider of their two parts, sub- and superscripts at 70%.

    >>> latex_width("1") < latex_width(r"\frac{1}{2} + \sqrt{2}") < 60
    True
    """
    width, _ = _width(tex, 0, 1.0, "")
    return width


def _group(tex: str, i: int):
    """The text of the brace group (or single token) at ``i`` and the index after it."""
    while i < len(tex) and tex[i] == " ":
        i += 1
    if i >= len(tex):
        return "", i
    if tex[i] == "{":
        depth, j = 0, i
        while j < len(tex):
            depth += {"{": 1, "}": -1}.get(tex[j], 0)
            if depth == 0:
                return tex[i + 1 : j], j + 1
            j += 1
        return tex[i + 1 :], len(tex)
    if tex[i] == "\\":
        j = i + 1
        while j < len(tex) and tex[j].isalpha():
            j += 1
        return tex[i : max(j, i + 2)], max(j, i + 2)
    return tex[i], i + 1


def _width(tex: str, i: int, scale: float, stop: str):
    total = 0.0
    while i < len(tex):
        char = tex[i]
        if char in stop:
            return total, i
        if char == "\\":
            name_end = i + 1
            while name_end < len(tex) and tex[name_end].isalpha():
                name_end += 1
            name = tex[i + 1 : name_end] or tex[i + 1 : i + 2]
            i = name_end if name_end > i + 1 else i + 2
            if name == "frac":
                top, i = _group(tex, i)
                bottom, i = _group(tex, i)
                total += max(latex_width(top), latex_width(bottom)) * scale + 3 * scale
            elif name == "sqrt":
                if i < len(tex) and tex[i] == "[":
                    close = tex.find("]", i)
                    i = close + 1 if close > 0 else len(tex)
                inner, i = _group(tex, i)
                total += latex_width(inner) * scale + 10 * scale
            elif name in ("underbrace", "overbrace"):
                # The label is set under (over) the brace: as wide as the wider of the two.
                inner, i = _group(tex, i)
                width = latex_width(inner)
                while i < len(tex) and tex[i] == " ":
                    i += 1
                if i < len(tex) and tex[i] in "_^":
                    label, i = _group(tex, i + 1)
                    width = max(width, 0.7 * latex_width(label))
                total += width * scale
            elif name in ("left", "right"):
                _, i = _group(tex, i)
                total += 5 * scale
            elif name in ("operatorname", "text", "mathrm", "textrm", "mathit"):
                inner, i = _group(tex, i)
                total += 6.5 * len(inner) * scale
            elif name == "begin":
                environment, i = _group(tex, i)
                end = tex.find("\\end{" + environment + "}", i)
                body = tex[i:end] if end >= 0 else tex[i:]
                i = end + len("\\end{" + environment + "}") if end >= 0 else len(tex)
                total += _matrix_width(body) * scale
            elif name in _NAMED_FUNCTIONS:
                total += (5.5 * len(name) + 3) * scale
            elif name in _COMMAND_WIDTHS:
                total += _COMMAND_WIDTHS[name] * scale
            else:  # a symbol such as \alpha
                total += 7 * scale
        elif char in "^_":
            inner, i = _group(tex, i + 1)
            total += latex_width(inner) * scale * 0.7
        elif char == "{":
            inner, i = _group(tex, i)
            total += latex_width(inner) * scale
        else:
            i += 1
            if char in "+-=<>":
                total += (13.0 if scale == 1.0 else 8.0) * scale
            elif char in "()[]|,.;/":
                total += 4.5 * scale
            elif char.isdigit():
                total += 5.0 * scale
            elif char == " " or char == "&" or char == "}":
                continue
            else:
                total += 6.0 * scale
    return total, i


def _matrix_width(body: str) -> float:
    rows = [row for row in split_top(body, "\\\\")]
    columns: list[float] = []
    for row in rows:
        for index, cell in enumerate(split_top(row, "&")):
            width = latex_width(cell)
            if index < len(columns):
                columns[index] = max(columns[index], width)
            else:
                columns.append(width)
    return sum(columns) + 10.0 * max(len(columns) - 1, 0) + 16.0


def split_top(text: str, separator: str) -> list[str]:
    """Split at ``separator`` outside braces (and outside nested environments)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        if text.startswith("\\begin", i):
            depth += 1
        elif text.startswith("\\end", i):
            depth -= 1
        char = text[i]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i])
            i += len(separator)
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return parts


def fitted_lines(expr, width: float = DISPLAY_WIDTH, order: str | None = "none") -> list[str]:
    r"""LaTeX of one exact scalar as display lines each at most ``width`` points wide.

    Sums break between terms, products between factors, a quotient into its numerator
    and denominator, long integers between digits; a piece that cannot be broken further
    and is still too wide is replaced by a note (the text and JSON outputs carry every
    closed form in full).

    >>> import sympy
    >>> fitted_lines(sympy.Rational(1, 3))
    ['\\frac{1}{3}']
    >>> lines = fitted_lines(sum(sympy.exp(sympy.sqrt(k)) for k in range(2, 30)))
    >>> len(lines) > 1 and all(latex_width(line) <= 300 for line in lines)
    True
    """
    tex = expr_latex(expr, order)
    if latex_width(tex) <= width:
        return [tex]
    return _merged(_broken(expr, width, order), width)


def _merged(lines: list[str], width: float) -> list[str]:
    """Adjacent lines joined wherever they fit: the lines only ever read as one sequence."""
    out: list[str] = []
    for line in lines:
        if out and latex_width(out[-1] + " " + line) <= width:
            out[-1] = out[-1] + " " + line
        else:
            out.append(line)
    return out


def _broken(expr, width, order) -> list[str]:
    if expr.is_Add:
        return _pack([_signed_term(term) for term in expr.args], width, order, "")
    if expr.is_Integer:
        digits = str(expr)
        per_line = max(int(width // 5.0) - 2, 1)
        return [digits[k : k + per_line] for k in range(0, len(digits), per_line)]
    numerator, denominator = sympy.fraction(expr)
    if denominator != 1:
        top = fitted_lines(numerator, width - 12, order)
        bottom = fitted_lines(denominator, width - 24, order)
        return [r"\bigl("] + top + [r"\bigr) \big/ \bigl("] + bottom + [r"\bigr)"]
    if expr.is_Mul:
        return _pack([(r"\cdot " if index else "", factor) for index, factor in enumerate(expr.args)], width, order, r"\cdot ")
    if isinstance(expr, sympy.exp):
        inner = fitted_lines(expr.args[0], width - 30, order)
        return [r"\exp\bigl("] + inner + [r"\bigr)"]
    if isinstance(expr, sympy.Sum) and len(expr.limits) == 1 and len(expr.limits[0]) == 3:
        # A long summand: the sum sign, then the summand broken, in big parentheses.
        variable, low, high = expr.limits[0]
        head = (f"\\sum_{{{expr_latex(variable)} = {expr_latex(low, order)}}}^{{{expr_latex(high, order)}}} "
                r"\Bigl(")
        return [head] + fitted_lines(expr.function, width - 30, order) + [r"\Bigr)"]
    return [r"\text{(too wide to typeset: see the text or JSON output)}"]


def _signed_term(term):
    if term.could_extract_minus_sign():
        return ("- ", -term)
    return ("+ ", term)


def _pack(pieces, width, order, joiner):
    """Greedy lines of (prefix, expr) pieces; the first prefix '+ ' is dropped."""
    lines: list[str] = []
    current = ""
    for index, (prefix, piece) in enumerate(pieces):
        if index == 0 and prefix == "+ ":
            prefix = ""
        tex = expr_latex(piece, order)
        needs_parens = joiner and piece.is_Add
        if needs_parens:
            tex = r"\left(" + tex + r"\right)"
        candidate = f"{current} {prefix}{tex}".strip()
        if latex_width(candidate) <= width:
            current = candidate
            continue
        if current:
            lines.append(current)
        if latex_width(prefix + tex) <= width:
            current = prefix + tex
            continue
        parts = fitted_lines(piece, width - 20, order)
        if needs_parens:
            parts = [r"\bigl("] + parts + [r"\bigr)"]
        lines.extend([prefix + parts[0]] + parts[1:-1])
        current = parts[-1] if len(parts) > 1 else ""
    if current:
        lines.append(current)
    return lines
