r"""TikZ figures for the notes: an attention-weights heatmap and the mask grid.

Both are plain ``tikzpicture`` code (package ``tikz``, Debian texlive-pictures; no TikZ
library needed), deterministic, and drawn from exact data: the shade of a cell comes from
its certified 3-decimal string (read as an exact fraction), never from a binary float.

Rows are queries, columns are keys, row 1 at the top, as in the matrix ``A``.  A blocked
cell is grey with a cross and carries no number: its weight is exactly 0 because the key
is not in the softmax at all, which a printed "0.000" would hide.

>>> print(mask_grid([[1, 0]], ["q"], ["a", "b"]).splitlines()[0])
\begin{tikzpicture}[x=0.9cm, y=0.9cm, every node/.style={font=\small}]
>>> "0.250" in heatmap([["0.250", "0.750"]], [[1, 1]], ["q"], ["a", "b"])
True
"""

from fractions import Fraction
from collections.abc import Sequence

from symbolic_attn.errors import ShapeError
from symbolic_attn.render.latex import prose_latex

__all__ = ["heatmap", "mask_grid", "shade"]

#: Cell sizes in cm: heatmap cells hold "0.000", mask cells only a mark.
HEAT_W, HEAT_H, MASK_SIDE = "1.25cm", "0.8cm", "0.9cm"


def shade(decimal: str) -> int:
    """Percent of the fill colour for a weight given as a decimal string in [0, 1].

    >>> shade("0.576"), shade("1.000"), shade("0.000")
    (58, 100, 0)
    """
    value = Fraction(decimal)
    if not 0 <= value <= 1:
        raise ShapeError(f"a weight must lie in [0, 1] to be shaded, got {decimal}")
    percent = value * 100
    return int(percent + Fraction(1, 2))  # round half up, exactly


def _check(grid, allowed, rows, cols):
    if len(grid) != len(rows) or len(allowed) != len(rows):
        raise ShapeError(f"{len(grid)} rows of values, {len(allowed)} of mask, {len(rows)} row labels")
    for row, flags in zip(grid, allowed):
        if len(row) != len(cols) or len(flags) != len(cols):
            raise ShapeError(f"a row has {len(row)} values and {len(flags)} mask entries; expected {len(cols)}")


def _frame(rows: Sequence[str], cols: Sequence[str], lines: list) -> None:
    """Cell borders, key labels above the columns, query labels left of the rows.

    The borders are single lines in picture units: TikZ's ``grid`` steps in cm, not in
    units, and would miss the cells when a unit is not 1cm.
    """
    n, m = len(rows), len(cols)
    borders = [f"(0,{-i}) -- ({m},{-i})" for i in range(n + 1)] + [f"({j},0) -- ({j},{-n})" for j in range(m + 1)]
    lines.append("\\draw[black!60] " + " ".join(borders) + ";")
    for j, label in enumerate(cols):
        lines.append(f"\\node[anchor=south, font=\\footnotesize] at ({j + 0.5},0.05) {{{prose_latex(label)}}};")
    for i, label in enumerate(rows):
        lines.append(f"\\node[anchor=east, font=\\footnotesize] at (-0.05,{-i - 0.5}) {{{prose_latex(label)}}};")
    lines.append(f"\\node[anchor=south, font=\\footnotesize\\itshape] at ({len(cols) / 2},0.55) {{keys}};")


def _cross(i: int, j: int) -> str:
    return (f"\\fill[black!12] ({j},{-i}) rectangle ({j + 1},{-i - 1});\n"
            f"\\draw[black!45, thick] ({j + 0.2},{-i - 0.2}) -- ({j + 0.8},{-i - 0.8}) "
            f"({j + 0.2},{-i - 0.8}) -- ({j + 0.8},{-i - 0.2});")


def heatmap(decimals: Sequence[Sequence[str]], allowed: Sequence[Sequence[bool]],
            rows: Sequence[str], cols: Sequence[str]) -> str:
    """A heatmap of weights: each allowed cell shaded and labelled with its decimal.

    ``decimals`` are the certified strings from ``AttentionResult.decimals("weights", 3)``;
    ``allowed[i][j]`` False marks a blocked cell (grey, crossed, no number).
    """
    _check(decimals, allowed, rows, cols)
    lines = [f"\\begin{{tikzpicture}}[x={HEAT_W}, y={HEAT_H}, every node/.style={{font=\\small}}]"]
    for i, (row, flags) in enumerate(zip(decimals, allowed)):
        for j, (text, ok) in enumerate(zip(row, flags)):
            if not ok:
                lines.append(_cross(i, j))
                continue
            percent = shade(text)
            # Dark cells get white text so that the number stays readable.
            ink = "white" if percent >= 50 else "black"
            lines.append(f"\\fill[blue!{percent}!white] ({j},{-i}) rectangle ({j + 1},{-i - 1});")
            lines.append(f"\\node[text={ink}] at ({j + 0.5},{-i - 0.5}) {{{text}}};")
    _frame(rows, cols, lines)
    lines.append("\\end{tikzpicture}")
    return "\n".join(lines)


def mask_grid(allowed: Sequence[Sequence[bool]], rows: Sequence[str], cols: Sequence[str]) -> str:
    """The mask as a grid: an allowed cell is dark with a dot, a blocked one grey with a cross."""
    _check(allowed, allowed, rows, cols)
    lines = [f"\\begin{{tikzpicture}}[x={MASK_SIDE}, y={MASK_SIDE}, every node/.style={{font=\\small}}]"]
    for i, flags in enumerate(allowed):
        for j, ok in enumerate(flags):
            if ok:
                lines.append(f"\\fill[teal!55] ({j},{-i}) rectangle ({j + 1},{-i - 1});")
                lines.append(f"\\fill[white] ({j + 0.5},{-i - 0.5}) circle (0.12);")
            else:
                lines.append(_cross(i, j))
    _frame(rows, cols, lines)
    lines.append("\\end{tikzpicture}")
    return "\n".join(lines)
