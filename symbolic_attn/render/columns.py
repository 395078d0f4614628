r"""Text that fits a terminal: display width, cutting, wrapping, and tables of columns.

The one place the text reports (``check``, ``grade``, ``compare``) measure and lay out
their lines.  Widths are *display* widths (:func:`display_width`): a combining accent
takes no column, a wide East Asian character two, so a table of Unicode names still lines
up.  The terminal's width is ``COLUMNS``, else the terminal's own, else 80
(:func:`terminal_columns`).

:func:`table` lays out a table within a width: every column as wide as its widest cell
if that fits; otherwise the widest columns give up room (:func:`fit`) and their cells
wrap inside the column -- between words, else inside a word at a ``_``, a brace or a
parenthesis when there is one -- so nothing is cut; a note of a row (``notes``) stands
beside the row when it fits there, else below it, wrapped; and when even the narrowest
columns do not fit, the columns after the first ``repeat`` ones continue in further
blocks (each as many as fit at their full width), each repeating those first columns.

>>> print("\n".join(table(["name", "points"], [["ann", "12"], ["ben", "9.5"]], 80, align="<>")))
name  points
----  ------
ann       12
ben      9.5
>>> lines = table(["student", "score", "note"], [["a_very_long_student_name", "1", "x y"]], 21, floors=[8, None, None])
>>> print("\n".join(lines))
student   score  note
--------  -----  ----
a_very_   1      x y
long_
student_
name
>>> display_width("e\u0301t\u00e9"), display_width("\u5b66\u751f")
(3, 4)
"""

from __future__ import annotations

import re
import shutil
import unicodedata

__all__ = ["display_width", "terminal_columns", "pieces", "clip", "pad", "wrap", "fit", "total", "table"]

#: The mark of a text cut short.
CUT = "..."


def display_width(text: str) -> int:
    """The columns ``text`` takes on a terminal: a combining or other zero-width character
    none, a wide or full-width (East Asian) character two, any other one."""
    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def terminal_columns(default: int = 80) -> int:
    """The width text output is laid out for: ``COLUMNS``, else the terminal's, else ``default``."""
    return shutil.get_terminal_size((default, 24)).columns


def _head(text: str, width: int) -> str:
    """The longest start of ``text`` that takes at most ``width`` columns."""
    taken = 0
    for index, char in enumerate(text):
        taken += display_width(char)
        if taken > width:
            return text[:index]
    return text


def pieces(text: str, width: int) -> list:
    """``text`` in consecutive pieces of at most ``width`` columns (every character kept).

    >>> pieces("abcdefg", 3)
    ['abc', 'def', 'g']
    """
    out = []
    while text:
        head = _head(text, width) or text[:1]
        out.append(head)
        text = text[len(head):]
    return out or [""]


def clip(text: str, width: int) -> str:
    """``text`` if it fits ``width`` columns, else its start and ``...``.

    >>> clip("attention", 7), clip("attention", 9)
    ('atte...', 'attention')
    """
    if display_width(text) <= width:
        return text
    return _head(text, max(width - len(CUT), 0)) + CUT


def pad(text: str, width: int, align: str = "<") -> str:
    """``text`` padded with spaces to ``width`` columns, on the right (``<``) or the left (``>``)."""
    room = " " * max(width - display_width(text), 0)
    return room + text if align == ">" else text + room


_AFTER = "_-,;/)]}"  # a word may break after one of these...
_BEFORE = "([{^\\"  # ...or before one of these


def _split_word(word: str, room: int) -> tuple:
    """``word`` cut in two, the first part at most ``room`` columns: at the last natural
    break (after ``_``, a comma, a closing bracket; before an opening one) in the second
    half of the room, else just at the room."""
    head = _head(word, max(room, 1)) or word[:1]
    if len(head) >= len(word):
        return word, ""
    for cut in range(len(head), max(len(head) // 2, 1) - 1, -1):
        if cut < len(word) and (word[cut - 1] in _AFTER or word[cut] in _BEFORE):
            return word[:cut], word[cut:]
    return head, word[len(head):]


def wrap(text: str, width: int, initial_indent: str = "", subsequent_indent: str = "") -> list:
    """``text`` as lines of at most ``width`` columns (indents included), broken between
    words; a word longer than a line is broken inside (:func:`_split_word`), starting
    on the line under way.  The spaces between words on a line are kept (any white space
    becomes a space), those at a break dropped; no text gives no line.

    >>> wrap("the weights  sum to one", 12, "  ", "    ")
    ['  the', '    weights', '    sum to', '    one']
    >>> wrap("softmax_over_columns", 10)
    ['softmax_', 'over_', 'columns']
    """
    lines: list = []
    line, indent = "", initial_indent
    for space, word in re.findall(r"(\s*)(\S+)", text):
        while word:
            room = width - display_width(indent)
            gap = " " * len(space) if line else ""
            used = display_width(line) + len(gap)
            if used + display_width(word) <= room:
                line, word = line + gap + word, ""
            elif line and display_width(word) <= room:
                lines.append(indent + line)
                line, indent = "", subsequent_indent
            else:  # longer than a whole line: its start fills this one
                if line and room - used < 1:
                    lines.append(indent + line)
                    line, indent = "", subsequent_indent
                    continue
                first, word = _split_word(word, room - used)
                lines.append(indent + line + gap + first)
                line, indent = "", subsequent_indent
    if line:
        lines.append(indent + line)
    return lines


def total(widths, gaps=None) -> int:
    """The width of a row of columns this wide, ``gaps[i]`` spaces before column ``i``
    (default two between columns)."""
    gaps = _gaps(len(widths), gaps)
    return sum(widths) + sum(gaps[1:])


def _gaps(count: int, gaps) -> list:
    return [0] + [2] * (count - 1) if gaps is None else [0, *list(gaps)[1:count]]


def fit(widths: list, width: int, floors, gaps=None) -> list:
    """Column widths that fit ``width`` if they can: the widest column still above its
    floor gives up a column at a time.

    >>> fit([20, 7, 30, 12], 60, floors=[12, 7, 30, 10])
    [12, 7, 30, 10]
    >>> fit([20, 7, 30, 12], 40, floors=[12, 7, 30, 10])  # cannot fit: as narrow as allowed
    [12, 7, 30, 10]
    """
    widths = list(widths)
    floors = [min(w, f) for w, f in zip(widths, floors)]
    while total(widths, gaps) > width:
        room = [w - f for w, f in zip(widths, floors)]
        if max(room) <= 0:
            break
        widths[max(range(len(widths)), key=lambda i: (room[i] > 0, widths[i]))] -= 1
    return widths


def _longest_word(text: str) -> int:
    return max((display_width(word) for word in text.split()), default=0)


def table(header, rows, width: int, *, align=None, floors=None, gaps=None, notes=None, repeat: int = 1,
          indent: str = "    ") -> list:
    """The lines of a table within ``width`` columns (see the module's docstring).

    ``align``: ``<`` or ``>`` per column (default all left).  ``floors``: per column the
    narrowest it may become (``None``: its longest word, the header's included, so that
    no word breaks).  A header wraps like any cell, its lines at the bottom.  ``gaps``: the spaces before each
    column (default two).  ``notes``: per row a text or ``""``.  A table too wide even at
    its floors is laid out in blocks of columns, each starting with the first ``repeat``
    columns and taking as many more at their full width as fit; the notes go with the
    first block.
    """
    count = len(header)
    align = list(align or "<" * count)
    gaps = _gaps(count, gaps)
    notes = list(notes) if notes is not None else [""] * len(rows)
    natural = [max(display_width(cell) for cell in [header[i]] + [row[i] for row in rows]) for i in range(count)]
    words = [max(_longest_word(cell) for cell in [header[i]] + [row[i] for row in rows]) or 1 for i in range(count)]
    floors = [words[i] if floors is None or floors[i] is None else max(floors[i], 1) for i in range(count)]
    blocks = [list(range(count))]
    if total(fit(natural, width, floors, gaps), gaps) > width and count > repeat + 1:
        blocks, block = [], list(range(repeat))
        for column in range(repeat, count):
            if len(block) > repeat and total([natural[i] for i in block + [column]], [gaps[i] for i in block + [column]]) > width:
                blocks.append(block)
                block = list(range(repeat))
            block.append(column)
        blocks.append(block)
    lines: list = []
    for number, block in enumerate(blocks):
        block_gaps = [gaps[i] for i in block]
        widths = fit([natural[i] for i in block], width, [floors[i] for i in block], block_gaps)
        if number:
            lines.append("")
        lines += _block([[row[i] for i in block] for row in rows], [header[i] for i in block], widths,
                        [align[i] for i in block], block_gaps, notes if number == 0 else None, width, indent)
    return lines


def _cell_lines(text: str, width: int) -> list:
    return wrap(text, width) or [""]


def _joined(cells, widths, align, gaps) -> str:
    return "".join(" " * gap + pad(cell, w, a) for cell, w, a, gap in zip(cells, widths, align, gaps))


def _block(rows, header, widths, align, gaps, notes, width, indent) -> list:
    lines = []
    head = [_cell_lines(cell, w) for cell, w in zip(header, widths)]
    height = max(len(cell) for cell in head)
    head = [[""] * (height - len(cell)) + cell for cell in head]
    for cells in zip(*head):
        lines.append(_joined(cells, widths, align, gaps).rstrip())
    lines.append(_joined(["-" * w for w in widths], widths, align, gaps))
    for number, row in enumerate(rows):
        cells = [_cell_lines(cell, w) for cell, w in zip(row, widths)]
        height = max(len(cell) for cell in cells)
        cells = [cell + [""] * (height - len(cell)) for cell in cells]
        row_lines = [_joined(line, widths, align, gaps) for line in zip(*cells)]
        note = notes[number] if notes else ""
        if note and height == 1 and display_width(row_lines[0]) + 2 + display_width(note) <= width:
            row_lines[0] += "  " + note
        elif note:
            row_lines += wrap(note, width, indent, indent)
        lines += [line.rstrip() for line in row_lines]
    return lines
