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

The same pictures as SVG, for the Markdown notes (:func:`figure_svg`): one file per figure,
its panels side by side, drawn from the same certified strings; deterministic text.

>>> svg = panels_svg([("heat", "weights", [["0.250", "0.750"]], [[1, 1]], ["q"], ["a", "b"])])
>>> svg.startswith("<svg ") and "0.750" in svg and svg.endswith("</svg>\n")
True
"""

import re
from fractions import Fraction
from collections.abc import Sequence

from symbolic_attn.errors import ShapeError
from symbolic_attn.render.latex import plain_text, prose_latex

__all__ = ["heatmap", "mask_grid", "shade", "panels_svg", "figure_svg"]

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


# ----------------------------------------------------------------------------- SVG

#: SVG cell sizes (px): heatmap cells, mask cells; room for labels.
_SVG_HEAT, _SVG_MASK, _SVG_LEFT, _SVG_TOP, _SVG_GAP = (64, 34), (34, 34), 60, 62, 36


def _xml(text: str) -> str:
    """A label as SVG text: its math as plain text, a subscript (``k_1``) lowered and smaller."""
    escaped = (plain_text(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
               .replace('"', "&quot;"))
    return re.sub(r"_([A-Za-z0-9]+)", r'<tspan baseline-shift="sub" font-size="75%">\1</tspan>', escaped)


def _mix(percent: int, colour: tuple) -> str:
    """``colour!percent!white`` as TikZ mixes it, in hex."""
    return "#" + "".join(f"{round(c * percent / 100 + 255 * (100 - percent) / 100):02x}" for c in colour)


def _svg_panel(kind, title, values, allowed, rows, cols, x0: int) -> tuple:
    """The SVG elements of one panel whose left edge is ``x0``, and its width."""
    w, h = _SVG_HEAT if kind == "heat" else _SVG_MASK
    left, top = x0 + _SVG_LEFT, _SVG_TOP
    out = [f'<text x="{left + w * len(cols) / 2:g}" y="14" text-anchor="middle" font-size="13">{_xml(title)}</text>',
           f'<text x="{left + w * len(cols) / 2:g}" y="32" text-anchor="middle" font-size="11" '
           'font-style="italic">keys</text>']
    for j, label in enumerate(cols):
        out.append(f'<text x="{left + w * (j + 0.5):g}" y="{top - 8}" text-anchor="middle" font-size="11">'
                   f"{_xml(label)}</text>")
    for i, label in enumerate(rows):
        out.append(f'<text x="{left - 6}" y="{top + h * (i + 0.5) + 4:g}" text-anchor="end" font-size="11">'
                   f"{_xml(label)}</text>")
        for j in range(len(cols)):
            x, y = left + w * j, top + h * i
            if not allowed[i][j]:
                out.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="#e0e0e0"/>')
                out.append(f'<path d="M{x + w * 0.3:g},{y + h * 0.2:g}L{x + w * 0.7:g},{y + h * 0.8:g}'
                           f'M{x + w * 0.3:g},{y + h * 0.8:g}L{x + w * 0.7:g},{y + h * 0.2:g}" '
                           'stroke="#8c8c8c" stroke-width="1.5"/>')
            elif kind == "heat":
                percent = shade(values[i][j])
                ink = "#ffffff" if percent >= 50 else "#000000"
                out.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{_mix(percent, (0, 0, 255))}"/>')
                out.append(f'<text x="{x + w / 2:g}" y="{y + h / 2 + 4:g}" text-anchor="middle" font-size="12" '
                           f'fill="{ink}">{_xml(values[i][j])}</text>')
            else:
                out.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{_mix(55, (0, 128, 128))}"/>')
                out.append(f'<circle cx="{x + w / 2:g}" cy="{y + h / 2:g}" r="4" fill="#ffffff"/>')
    lines = [f"M{left},{top + h * i}H{left + w * len(cols)}" for i in range(len(rows) + 1)]
    lines += [f"M{left + w * j},{top}V{top + h * len(rows)}" for j in range(len(cols) + 1)]
    out.append(f'<path d="{"".join(lines)}" stroke="#666666" fill="none"/>')
    return out, _SVG_LEFT + w * len(cols)


def panels_svg(panels: Sequence[tuple]) -> str:
    """One SVG of panels side by side; each panel ``(kind, title, values, allowed, rows, cols)``
    (``kind`` "heat" or "mask"; ``values`` None for a mask)."""
    body, x, height = [], 0, 0
    for kind, title, values, allowed, rows, cols in panels:
        _check(values if values is not None else allowed, allowed, rows, cols)
        elements, width = _svg_panel(kind, title, values, allowed, rows, cols, x)
        body += elements
        x += width + _SVG_GAP
        height = max(height, _SVG_TOP + (_SVG_HEAT if kind == "heat" else _SVG_MASK)[1] * len(rows) + 8)
    width = max(x - _SVG_GAP + 8, 1)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif">\n'
            f'<rect width="{width}" height="{height}" fill="#ffffff"/>\n' + "\n".join(body) + "\n</svg>\n")


def figure_svg(figure) -> str:
    """A :class:`~symbolic_attn.render.blocks.Figure` of the notes as one SVG document."""
    return panels_svg([(panel.kind, panel.title, panel.values if panel.kind == "heat" else None, panel.allowed,
                        panel.rows, panel.cols) for panel in figure.panels])
