r"""The document reader: the displays of a LaTeX, Markdown or text file cut into chains of sides.

A student's derivation is a file.  :func:`read_document` finds every display (``align``,
``align*``, ``equation`` with an ``aligned`` inside, ``gather``, ``$$ ... $$``, ``\[ ... \]``
and an inline ``$ ... $`` or ``\( ... \)`` that contains a relation), splits it into rows at ``\\``, removes
the ``&`` alignment marks, and splits each row at its top-level relations (``=``, ``\le``,
``<``, ``\ge``, ``>``, ``\approx``, ``\ne``).  A row that starts with a relation continues the
chain of the row before; any other row starts a new chain.  ``\tag{...}`` and
``\quad\text{(...)}`` at the end of a row are the student's reason for that step (text and
maths mixed too: ``\quad\text{(}q_i\text{ and }k_i\text{ independent)}``);
``\nonumber`` is dropped; ``\label{...}`` names the chain, else the nearest heading above
(``# ...``, ``\section{...}``).  Line and column numbers are those of the original file.
Nothing here reads the maths itself: each :class:`Side`'s text goes to
:func:`~symbolic_attn.steps.grammar.read_math` with its line and column.

>>> doc = read_document("# Shift\n$$\\operatorname{softmax}(x + c)_i \\\\ = \\operatorname{softmax}(x)_i"
...                     " \\quad\\text{(shift)}$$", "md", "answer.md")
>>> chain = doc.chains[0]
>>> chain.name, [(s.line, s.column, s.relation, s.text, s.reason) for s in chain.sides]
('Shift', [(2, 3, None, '\\operatorname{softmax}(x + c)_i', None), (2, 40, '=', '\\operatorname{softmax}(x)_i', 'shift')])
"""

import bisect
import re
from dataclasses import dataclass, field

from symbolic_attn.errors import StepReadError

__all__ = ["Side", "Chain", "Document", "read_document", "RELATIONS", "MAX_DOCUMENT_LENGTH", "MAX_SIDES",
           "MAX_ROW_LENGTH"]

#: Longest document read, in characters.
MAX_DOCUMENT_LENGTH = 2_000_000
#: Most sides in one document.
MAX_SIDES = 5000
#: Longest row (between two ``\\\\``) read, in characters: a side is at most 4000.
MAX_ROW_LENGTH = 8000

#: Relations written -> the relation recorded on a side.
RELATIONS = {"=": "=", "\\le": "<=", "\\leq": "<=", "\\leqslant": "<=", "<": "<", "\\lt": "<", "\\ge": ">=",
             "\\geq": ">=", "\\geqslant": ">=", ">": ">", "\\gt": ">", "\\approx": "approx", "\\ne": "!=",
             "\\neq": "!=", "<=": "<=", ">=": ">=", "!=": "!="}
_DISPLAY_ENVIRONMENTS = ("align", "align*", "equation", "equation*", "gather", "gather*", "multline", "multline*",
                         "flalign", "flalign*", "eqnarray", "eqnarray*", "aligned", "gathered", "split")
_INNER_ENVIRONMENTS = re.compile(r"\\(?:begin|end)\{(?:aligned|gathered|split)\}(?:\[[a-z]\])?")
_OPENER = re.compile(r"\\begin\{([a-z]+\*?)\}|\$\$|(?<!\\)\\\[|(?<!\\)\\\(|(?<!\\)\$")
_TAG = re.compile(r"\\tag\*?\{((?:[^{}]|\{[^{}]*\})*)\}")
_LABEL = re.compile(r"\\label\{([^{}]*)\}")
_NONUMBER = re.compile(r"\\(?:nonumber|notag)(?![A-Za-z])")
#: Longest reason looked for at the end of a row, in characters.
_REASON_LENGTH = 1000
#: A reason at the end of a row: ``\quad\text{...}`` (also ``\qquad (\text{...})``), or ``\text{(...)}``.
_TEXT = r"\\(?:text|textrm|mbox|textit)\{((?:[^{}]|\{[^{}]*\})*)\}"
_TEXT_REASON = re.compile(r"(?:\\q?quad\s*(?:%s|\(\s*%s\s*\))|(?:\\[,;]|\s)*\\(?:text|textrm|mbox|textit)"
                          r"\{(\((?:[^{}]|\{[^{}]*\})*\))\})\s*[.,;]?\s*$" % (_TEXT, _TEXT))
#: A reason of text and maths mixed, ``\quad\text{(}q_i\text{ and }k_i\text{ independent)}``:
#: from ``\quad`` followed by ``\text{`` to the end of the row.
_MIXED_REASON = re.compile(r"\\q?quad\s*(\\(?:text|textrm|mbox|textit)\{[^\n]*?)\s*[.,;]?\s*$")
_TEXT_GROUP = re.compile(_TEXT)
#: A section title: at most 300 characters on one line are looked at (a linear scan of any file).
_TEX_HEADING = re.compile(r"\\(?:sub)*section\*?\{([^\n]{0,300}?)\}")
#: A declarations line: ``% symbols: ...``, or a comment ``<!-- symbols: ... -->``.
_TEX_SYMBOLS = re.compile(r"^[ \t]*%[ \t]*symbols:([^\n]*)", re.MULTILINE)
_HTML_SYMBOLS = re.compile(r"\s*symbols:")


@dataclass(frozen=True)
class Side:
    """One side of a chain: ``relation`` to the side before (``=``, ``<=``, ``<``, ``>=``, ``>``,
    ``approx``, ``!=``; None for the first), ``text`` as written (alignment marks, comments and
    the reason blanked), at ``line``/``column`` of the file; ``reason`` the justification
    written at the end of its row, if any."""

    line: int
    column: int
    relation: str | None
    text: str
    reason: str | None = None


@dataclass
class Chain:
    """Sides joined by relations, from ``start_line``; ``name`` the label or nearest heading."""

    start_line: int
    name: str | None
    sides: list[Side] = field(default_factory=list)


@dataclass
class Document:
    """The chains of a file, and the declarations text it carries (``% symbols: ...``)."""

    source: str
    kind: str
    chains: list[Chain]
    symbols_text: str | None
    symbols_line: int | None = None


class _Text:
    """The file and a working copy of it, of the same length: comments, code, ``&`` and
    reasons are blanked in the copy, so every offset is still the file's."""

    def __init__(self, text: str):
        self.text = text
        self.work = list(text)
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def where(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.line_starts, offset) - 1
        return line + 1, offset - self.line_starts[line] + 1

    def blank(self, start: int, end: int) -> None:
        for position in range(start, end):
            if self.work[position] != "\n":
                self.work[position] = " "

    def working(self, start: int, end: int) -> str:
        return "".join(self.work[start:end])

    def fail(self, offset: int, reason: str) -> StepReadError:
        return StepReadError(*self.where(offset), reason)


def read_document(text: str, kind: str, source: str) -> Document:
    r"""The chains of ``text`` read as a file of ``kind`` ``md``, ``tex`` or ``txt`` (``source``
    names it).  A plain text file holds maths only: one chain per paragraph, a line starting
    with a relation continues it.  Raises :class:`~symbolic_attn.errors.StepReadError` for a
    display never closed, a row starting with a relation with no chain before it, or two
    relations with nothing between them.

    >>> doc = read_document("a = b\n  \\le c\n\nx = 1", "txt", "t.txt")
    >>> [[(s.relation, s.text) for s in chain.sides] for chain in doc.chains]
    [[(None, 'a'), ('=', 'b'), ('<=', 'c')], [(None, 'x'), ('=', '1')]]
    """
    if kind not in ("md", "tex", "txt"):
        raise StepReadError(1, 1, f"{source}: unknown kind {kind!r}: md, tex or txt")
    if len(text) > MAX_DOCUMENT_LENGTH:
        raise StepReadError(1, 1, f"{source}: a document of {len(text)} characters is longer than the "
                            f"{MAX_DOCUMENT_LENGTH} the reader accepts")
    document = _Text(text)
    symbols_text, symbols_line = _symbols(document)
    _mask_comments(document, kind)
    headings = _headings(document, kind)
    displays = _lines_of(document) if kind == "txt" else _displays(document)
    chains: list[Chain] = []
    count = 0
    for start, end, separate, marks in displays:
        for inner in _INNER_ENVIRONMENTS.finditer(document.working(start, end)):  # aligned inside equation: rows
            document.blank(start + inner.start(), start + inner.end())
        for row_start, row_end in _rows(document, start, end):
            sides, name = _row(document, row_start, row_end, marks)
            if not sides:
                continue
            count += len(sides)
            if count > MAX_SIDES:
                raise document.fail(row_start, f"more than {MAX_SIDES} sides in one document")
            first = document.working(row_start, row_end).lstrip()[:1]
            if first in ("+", "-") and chains and not separate:
                raise document.fail(row_start + len(document.working(row_start, row_end)) -
                                    len(document.working(row_start, row_end).lstrip()),
                                    f"a row starting with {first} continues the expression of the row before: not "
                                    "read (write the expression on one row)")
            if sides[0].relation is None:
                heading = _nearest(headings, row_start)
                chains.append(Chain(sides[0].line, name or heading, sides))
                separate = False
                continue
            if not chains or separate:
                raise document.fail(row_start, f"this row starts with a relation ({sides[0].relation}) but no "
                                    "chain comes before it")
            chains[-1].sides.extend(sides)
            separate = False
            if name:
                chains[-1].name = name
    return Document(source, kind, chains, symbols_text, symbols_line)


def _symbols(document: _Text) -> tuple[str | None, int | None]:
    """The declarations lines, in the order written (one linear pass for each form)."""
    text = document.text
    found = [(m.group(1), m.start()) for m in _TEX_SYMBOLS.finditer(text)]
    position = 0
    while (start := text.find("<!--", position)) >= 0:
        end = text.find("-->", start + 4)
        if end < 0:
            break  # an unclosed comment: the rest of the file is hidden, declarations included
        declaration = _HTML_SYMBOLS.match(text, start + 4, end)
        if declaration is not None:
            found.append((text[declaration.end():end], start))
        position = end + 3
    found.sort(key=lambda item: item[1])
    if not found:
        return None, None
    return "; ".join(text.strip() for text, _ in found), document.where(found[0][1])[0]


def _mask_comments(document: _Text, kind: str) -> None:
    """Blank comments (and Markdown code), each in one linear pass: no pattern that backtracks
    over the rest of a hostile file for every unclosed ``<!--`` or fence."""
    if kind == "md":
        _mask_html_comments(document)
        _mask_fences(document)
        _mask_pattern(document, r"`[^`\n]*`")
    _mask_pattern(document, r"(?<!\\)%[^\n]*")


def _mask_pattern(document: _Text, pattern: str) -> None:
    for match in re.finditer(pattern, "".join(document.work)):
        document.blank(match.start(), match.end())


def _mask_html_comments(document: _Text) -> None:
    work = "".join(document.work)
    position = 0
    while (start := work.find("<!--", position)) >= 0:
        end = work.find("-->", start + 4)
        end = len(work) if end < 0 else end + 3  # an unclosed comment hides the rest, as a renderer does
        document.blank(start, end)
        position = end


def _mask_fences(document: _Text) -> None:
    """Fenced code blocks (``` or ~~~, closed by a fence of the same kind at least as long)."""
    fence = None
    block_start = 0
    for number, start in enumerate(document.line_starts):
        end = document.line_starts[number + 1] if number + 1 < len(document.line_starts) else len(document.text)
        line = document.working(start, end).strip()
        opening = re.match(r"(`{3,}|~{3,})", line)
        if fence is None and opening is not None:
            fence, block_start = opening.group(1), start
        elif fence is not None and opening is not None and line == fence[0] * len(line) and len(line) >= len(fence):
            document.blank(block_start, end)
            fence = None
    if fence is not None:
        document.blank(block_start, len(document.text))


def _headings(document: _Text, kind: str) -> list[tuple[int, str]]:
    work = "".join(document.work)
    if kind == "md":
        found = []
        for start in document.line_starts:
            if work.startswith("#", start):
                end = work.find("\n", start)
                line = work[start:(len(work) if end < 0 else end)][:1000]  # a title is short: the rest is ignored
                heading = re.match(r"#{1,6}[ \t]+(.*)", line)
                if heading is not None:
                    found.append((start, " ".join(heading.group(1).rstrip(" \t#").split())))
        return found
    return [(m.start(), " ".join(m.group(1).split())) for m in _TEX_HEADING.finditer(work)]


def _nearest(headings: list[tuple[int, str]], offset: int) -> str | None:
    position = bisect.bisect_left([start for start, _ in headings], offset)
    return headings[position - 1][1] if position else None


def _displays(document: _Text) -> list[tuple[int, int, bool, int]]:
    """``(start, end, separate, marks)`` of every display's content; ``separate`` for an inline
    ``$...$`` (a row starting with a relation there never continues an earlier chain);
    ``marks`` the alignment marks ``&`` a row may have (two in ``eqnarray``'s ``a &=& b``)."""
    work = "".join(document.work)
    found = []
    position = 0
    while (match := _OPENER.search(work, position)) is not None:
        opener = match.group(0)
        marks = 1
        if match.group(1) is not None:
            environment = match.group(1)
            if environment not in _DISPLAY_ENVIRONMENTS:
                position = match.end()
                continue
            closer = "\\end{%s}" % environment
            marks = 2 if environment.startswith("eqnarray") else 1
        else:
            closer = {"$$": "$$", "\\[": "\\]", "\\(": "\\)", "$": "$"}[opener]
        end = _closing(work, closer, match.end())
        inline = opener in ("$", "\\(")
        if end < 0 and opener == "$":  # a lone dollar in prose ("costs $5") is no maths
            position = match.end()
            continue
        if end < 0:
            raise document.fail(match.start(), f"the display {opener} is never closed by {closer}")
        if not inline or _has_relation(work[match.end():end]):
            found.append((match.end(), end, inline, marks))
        position = end + len(closer)
    return found


def _closing(work: str, closer: str, start: int) -> int:
    if closer != "$":
        return work.find(closer, start)
    match = re.compile(r"(?<!\\)\$").search(work, start)
    return -1 if match is None or "\n\n" in work[start:match.start()] else match.start()


def _has_relation(content: str) -> bool:
    return any(kind == "relation" for _, kind, _, _ in _scan(content, 0, len(content)))


def _lines_of(document: _Text) -> list[tuple[int, int, bool, int]]:
    """A text file: each line is a row; a blank line ends a chain (the next row is ``separate``)."""
    found = []
    separate = False
    for number, start in enumerate(document.line_starts):
        end = document.line_starts[number + 1] - 1 if number + 1 < len(document.line_starts) else len(document.text)
        if not document.working(start, end).strip():
            separate = True
            continue
        found.append((start, end, separate, 1))
        separate = False
    return found


def _scan(work: str, start: int, end: int) -> list[tuple[int, str, str, int]]:
    """Top-level events in ``work[start:end]``: ``(offset, kind, text, length)`` for row
    breaks, ``&`` and relations outside every brace, bracket and environment."""
    events = []
    depth = 0
    position = start
    while position < end:
        char = work[position]
        if char == "\\":
            match = re.compile(r"\\(?:[A-Za-z]+|.)", re.DOTALL).match(work, position)
            assert match is not None
            word = match.group(0)
            length = len(word)
            if word == "\\not" and depth == 0:
                following = re.compile(r"\s*(=|<|>|\\[A-Za-z]+)").match(work, position + 4)
                if following is not None and following.group(1) == "=":
                    events.append((position, "relation", "!=", following.end() - position))
                    position = following.end()
                    continue
                # \not< and the like: the side that ends in \not is refused by the reader
            if word in ("\\begin", "\\end"):
                depth += 1 if word == "\\begin" else -1
            elif depth == 0 and word == "\\\\":
                spacing = re.compile(r"\*?(?:\[[^\]\n]*\])?").match(work, position + 2)
                length += len(spacing.group(0)) if spacing else 0
                events.append((position, "rowbreak", word, length))
            elif depth == 0 and word in RELATIONS:
                events.append((position, "relation", word, length))
            position += length
            continue
        if char in "{([":
            depth += 1
        elif char in "})]":
            depth = max(depth - 1, 0)
        elif depth == 0 and char == "&":
            events.append((position, "amp", char, 1))
        elif depth == 0 and char in "<>!=":
            pair = work[position:position + 2]
            if pair in ("<=", ">=", "!="):
                events.append((position, "relation", pair, 2))
                position += 2
                continue
            if char != "!":
                events.append((position, "relation", char, 1))
        position += 1
    return events


def _scan_span(document: _Text, start: int, end: int) -> list[tuple[int, str, str, int]]:
    """:func:`_scan` of ``document``'s working copy from ``start`` to ``end``, offsets in the file."""
    return [(start + offset, kind, text, length)
            for offset, kind, text, length in _scan(document.working(start, end), 0, end - start)]


def _rows(document: _Text, start: int, end: int) -> list[tuple[int, int]]:
    rows = []
    row_start = start
    for offset, kind, _, length in _scan_span(document, start, end):
        if kind == "rowbreak":
            rows.append((row_start, offset))
            document.blank(offset, offset + length)
            row_start = offset + length
    rows.append((row_start, end))
    return rows


def _row(document: _Text, start: int, end: int, marks: int = 1) -> tuple[list[Side], str | None]:
    """The sides of one row, with its reason and label blanked and kept; more than ``marks``
    alignment marks are columns side by side (``a &= b && c &= d``): refused, or ``b c`` would
    read as a product."""
    if not document.working(start, end).strip():
        return [], None
    if end - start > MAX_ROW_LENGTH:
        raise document.fail(start, f"a row of {end - start} characters is longer than the {MAX_ROW_LENGTH} the "
                            "reader accepts: break it at \\\\")
    reason = name = None
    row = document.working(start, end)
    for match in _TAG.finditer(row):
        reason = match.group(1).strip()
        document.blank(start + match.start(), start + match.end())
    for match in _LABEL.finditer(row):
        name = match.group(1).strip()
        document.blank(start + match.start(), start + match.end())
    for match in _NONUMBER.finditer(row):
        document.blank(start + match.start(), start + match.end())
    tail = max(start, end - _REASON_LENGTH)  # a reason is at the end: searching only there keeps it linear
    text_reason = _TEXT_REASON.search(document.working(tail, end))
    mixed = _MIXED_REASON.search(document.working(tail, end)) if text_reason is None else None
    if text_reason is not None:
        written = next(group for group in text_reason.groups() if group is not None)
        reason = _without_brackets(" ".join(written.split()))
        document.blank(tail + text_reason.start(), tail + text_reason.end())
    elif mixed is not None:  # the text groups' words, the maths between them as written
        reason = _without_brackets(" ".join(_TEXT_GROUP.sub(lambda m: m.group(1), mixed.group(1)).split()))
        document.blank(tail + mixed.start(), tail + mixed.end())
    trailing = re.search(r"(?<!\\)[.,;]\s*$", document.working(start, end))
    if trailing is not None:
        document.blank(start + trailing.start(), start + trailing.start() + 1)
    events = _scan_span(document, start, end)
    amps = [offset for offset, kind, _, _ in events if kind == "amp"]
    if len(amps) > marks:
        raise document.fail(amps[marks], f"{len(amps)} alignment marks & in one row: equations side by side in "
                            "columns are not read (write one equation per row)")
    for offset in amps:
        document.blank(offset, offset + 1)
    relations = [(offset, RELATIONS[text], length) for offset, kind, text, length in events if kind == "relation"]
    sides = []
    piece_start, relation, length_before = start, None, 0
    for offset, written, length in relations + [(end, None, 0)]:
        piece = document.working(piece_start, offset)
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            line, column = document.where(piece_start + lead)
            sides.append(Side(line, column, relation, piece.strip()))
        elif relation is not None:
            raise document.fail(piece_start - length_before, "nothing between two relations" if written is not None
                                else "a relation with nothing after it (a right side on the next row is not read: "
                                "write it on the same row)")
        piece_start, relation, length_before = offset + length, written, length
    if reason is not None and sides:
        last = sides[-1]
        sides[-1] = Side(last.line, last.column, last.relation, last.text, reason)
    return sides, name


def _without_brackets(text: str) -> str:
    return text[1:-1].strip() if text.startswith("(") and text.endswith(")") else text
