r"""A verified result as a LaTeX fragment that fits any document: article, beamer, the notes.

A :class:`Sheet` is a :class:`~symbolic_attn.proofs.result.Printed` (what ``derive``
sends back from the process that verified the result) that also keeps the *structure* of
the result: the assumption and scope items, and for each chain its start and steps, each
step's justification, assumptions, rules and the strategy that decided it.  All of it is
printed from the very objects that were verified (:func:`sheet` verifies first), so what
is printed is still what was checked; only the layout is decided here.

:func:`fragment_latex` lays a sheet out:

* no sectioning command: headings are ``\textbf`` lines, so the fragment can be
  ``\input`` under a ``\section`` of the notes, into a beamer frame or a bare article (the
  notes put the result's title and ``\label{NAME}`` in a numbered ``\section`` themselves);
* every step is a numbered line of an ``align`` (the host document's equation counter)
  with ``\label{NAME:PART.STEP}`` -- a stable scheme: the script's NAME, the part's and the
  step's 1-based positions -- so ``\eqref{shift_invariance:1.3}`` works;
* one measure, :data:`TEXT_WIDTH`: the narrowest of the documents a fragment is for, a
  beamer frame at beamer's default size (:data:`HOSTS`; the estimate is
  :func:`~symbolic_attn.render.latex.latex_width`);
* a step's justification stays in a text column only when the whole line fits that
  measure; otherwise it goes on a line of its own below the step, and a right side too
  wide even alone is broken between terms (:func:`~symbolic_attn.render.latex.fitted_lines`);
  page and frame breaks are allowed between the steps of a chain, never inside a step
  (``\allowdisplaybreaks`` in a group, so nothing leaks into the host, and ``\\*``);
* a part of another kind keeps its own display, with these layout changes only: an
  ``equation*`` too wide and made of ``, \quad``-separated pieces (or with a ``\quad``
  before a remark) becomes a ``gather*``; consecutive worked instances of a check share one
  display; an ``align*`` too wide moves its remarks, then its widest left sides, onto
  lines of their own (:func:`_align_fitted`); and those displays may break across pages;
* ``audit``: ``"full"`` prints the trusted base and each step's rule names in place (as
  the checker's own :meth:`Result.latex` does), ``"appendix"`` (the default) leaves them to
  :func:`audit_latex` (``audit.tex``, the notes' appendix), ``"none"`` prints one sentence
  saying where to find them.  A *cited* step is marked in every mode.

Terms are printed in the author's order when the author wrote them so: an expression
built unevaluated (``sympy.Mul(p, c, v, evaluate=False)``, ``with sympy.evaluate(False)``)
is printed as written (SymPy's ``order="none"``) -- it is that very expression that the
checker proved equal to its neighbours.  Other expressions keep SymPy's usual order, except
that a sum starts with a positive term when it has one (``U - L``, not ``- L + U``).

>>> import sympy
>>> from symbolic_attn.proofs.chain import Derivation, Step
>>> from symbolic_attn.proofs.result import Result
>>> x = sympy.Symbol("x")
>>> chain = Derivation("Square", (x + 1) ** 2, [Step(x**2 + 2 * x + 1, "expand")])
>>> text = fragment_latex(sheet(Result("square", "A square", "", [chain])))
>>> "\\section" in text, "\\label{square:1.1}" in text, "Trusted base" in text
(False, True, False)
>>> written = sympy.Mul(sympy.Symbol("p"), sympy.Symbol("c"), evaluate=False)
>>> shown_latex(written), shown_latex(sympy.Symbol("p") * sympy.Symbol("c"))
('p c', 'c p')
>>> shown_latex(sympy.Symbol("U") - sympy.Symbol("L"))
'U - L'
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

import sympy
from sympy.printing.latex import LatexPrinter

from symbolic_attn.proofs.chain import (Computed, Derivation, assumption_lines, latex_of, scope_latex)
from symbolic_attn.proofs.result import Printed, Result
from symbolic_attn.render.latex import bracketed_rows, escape_text, fitted_lines, latex_width, prose_latex, split_top

__all__ = ["AUDITS", "Sheet", "StepView", "PartView", "sheet", "shown_latex", "fragment_latex", "audit_latex",
           "step_label", "TEXT_WIDTH"]

#: The ways the checker's vocabulary (trusted base, rule names) can be shown.
AUDITS = ("full", "appendix", "none")

#: The documents a fragment must fit, as (text width, font size) in points: a bare
#: ``article`` (10pt) and a ``beamer`` frame at beamer's default size (11pt: its 307pt are
#: 280pt of the 10pt fonts :func:`latex_width` measures in).  The notes (11pt, 2cm margins)
#: are wider than both.
HOSTS = {"article": (345.0, 10.0), "beamer": (307.29, 10.95)}
#: Width (points of :func:`latex_width`) a display line may take: the narrowest host, less
#: room for the equation number and for the estimate being an estimate (the share an
#: article always kept: 290 of its 345pt).  One measure for every fragment.
TEXT_WIDTH = min(width * 10.0 / size for width, size in HOSTS.values()) * 290.0 / 345.0
#: Points per character of a ``\text`` justification (10pt roman, a generous average).
_TEXT_POINTS = 5.0

_RELATIONS = {"=": "=", "<": "<", ">": ">", "<=": r"\le", ">=": r"\ge"}


@dataclass(frozen=True)
class StepView:
    """One printed step of a chain (LaTeX strings, from the verified step)."""

    relation: str
    rhs: str
    rhs_lines: tuple[str, ...]
    why: str
    using: tuple[str, ...]
    rules: tuple[str, ...]
    how: str
    cited: bool


@dataclass(frozen=True)
class PartView:
    """One printed part: a chain (``start`` and ``steps``) or another part's own display."""

    title: str
    note: str
    start: str = ""
    steps: tuple[StepView, ...] = ()
    display: str = ""
    start_lines: tuple[str, ...] = ()

    @property
    def is_chain(self) -> bool:
        return bool(self.steps)


@dataclass(frozen=True)
class Sheet(Printed):
    """A :class:`Printed` with the structure :func:`fragment_latex` lays out (plain data, picklable)."""

    assumption_items: tuple[str, ...] = ()
    scope_items: tuple[str, ...] = ()
    views: tuple[PartView, ...] = ()


def _has_written_order(expr: Any) -> bool:
    """True when some sum or product of ``expr`` was built unevaluated (the author's order)."""
    if not isinstance(expr, sympy.Basic):
        return False
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, (sympy.Add, sympy.Mul)) and node.func(*node.args).args != node.args:
            return True
    return False


def _order(expr: Any) -> str | None:
    if isinstance(expr, sympy.MatrixBase):
        return "none" if any(_has_written_order(e) for e in expr) else None
    return "none" if _has_written_order(expr) else None


class _StepPrinter(LatexPrinter):
    """SymPy's LaTeX printer, except that a sum SymPy would start with a negative term
    starts with its first positive one (``b - a``, as people write it, not ``- a + b``);
    the author's own order (``order="none"``) is never changed."""

    def _as_ordered_terms(self, expr, order=None):
        terms = list(super()._as_ordered_terms(expr, order=order))
        if (order or self.order) != "none" and terms and terms[0].could_extract_minus_sign():
            first = next((i for i, term in enumerate(terms) if not term.could_extract_minus_sign()), None)
            if first is not None:
                terms.insert(0, terms.pop(first))
        return terms


def _printed(expr: Any) -> str:
    order = _order(expr)
    printer = _StepPrinter({"ln_notation": True, "order": order})
    if isinstance(expr, sympy.MatrixBase):
        rows = [" & ".join(printer.doprint(entry) for entry in expr.row(i)) for i in range(expr.rows)]
        return bracketed_rows(rows, expr.cols)
    return printer.doprint(expr)


def shown_latex(expr: Any) -> str:
    """LaTeX of a checked expression (or :class:`Computed`), in the author's order when the
    author wrote one (an unevaluated sum or product), else in SymPy's with a positive term
    first (:class:`_StepPrinter`)."""
    if isinstance(expr, Computed):
        if expr.label is None:
            return expr.shown()  # free LaTeX: marked as the author's unchecked label
        return _printed(expr.label)
    if isinstance(expr, (sympy.Basic, sympy.MatrixBase)):
        return _printed(expr)
    return latex_of(expr)


def _rule_names(rules: Any) -> tuple[str, ...]:
    return tuple(name if isinstance(name, str) else name.name for name in rules)


def _broken_lines(expr: Any, width: float) -> tuple[str, ...]:
    """A right side too wide for one line, as lines; () when it fits or cannot be broken
    (then it is printed whole: a checked expression is never replaced by a note)."""
    value = expr.label if isinstance(expr, Computed) else expr
    if value is None or not isinstance(value, sympy.Expr) or isinstance(value, sympy.MatrixBase):
        return ()
    if latex_width(shown_latex(expr)) <= width:
        return ()
    lines = fitted_lines(value, width, _order(value) or "none")
    if len(lines) < 2 or any("too wide to typeset" in line for line in lines):
        return ()
    return tuple(lines)


def breakable(tex: str) -> str:
    r"""Text-mode LaTeX whose inline math may break after a comma or semicolon of a list
    (``\allowbreak``, outside braces): long lists of symbols otherwise run into the margin.

    >>> breakable("Declared: $a, b; c$ and $f(x, y)$.")
    'Declared: $a,\\allowbreak b;\\allowbreak c$ and $f(x,\\allowbreak y)$.'
    """
    pieces = re.split(r"(?<!\\)\$", tex)
    if len(pieces) % 2 == 0:
        return tex
    for index in range(1, len(pieces), 2):
        out, depth = [], 0
        math = pieces[index]
        for position, char in enumerate(math):
            escaped = position > 0 and math[position - 1] == "\\"
            if not escaped:
                depth += {"{": 1, "}": -1}.get(char, 0)
            out.append(char)
            if char in ",;" and not escaped and depth == 0 and math[position + 1:position + 2] == " ":
                out.append("\\allowbreak")
        pieces[index] = "".join(out)
    return "$".join(pieces)


def _display_fitted(display: str) -> str:
    r"""A part's own display with each ``equation*`` too wide for the page and made of
    pieces separated by ``, \quad`` set as a ``gather*``, one piece a line."""
    def fit(match):
        body = match.group(1).strip()
        if latex_width(body) <= TEXT_WIDTH:
            return match.group(0)
        pieces = max((split_top(body, separator) for separator in (r", \quad ", r", \qquad ")), key=len)
        if len(pieces) < 2:
            return match.group(0)
        return "\\begin{gather*}\n" + ", \\\\\n".join(piece.strip() for piece in pieces) + "\n\\end{gather*}"

    display = re.sub(r"\\begin\{equation\*\}\n(.*?)\n\\end\{equation\*\}", fit, display, flags=re.S)
    return _instances_together(display)


def _display_narrowed(display: str) -> str:
    r"""A part's own display for a page of :data:`TEXT_WIDTH` (not the web's, which has no
    width): an ``equation*`` still too wide, with a ``\quad`` before a remark, as a
    ``gather*`` of the two; an ``align*`` too wide laid out by :func:`_align_fitted`."""
    def fit(match):
        body = match.group(1).strip()
        pieces = split_top(body, r"\quad")
        if latex_width(body) <= TEXT_WIDTH or len(pieces) < 2:
            return match.group(0)
        return "\\begin{gather*}\n" + " \\\\\n".join(piece.strip() for piece in pieces) + "\n\\end{gather*}"

    display = re.sub(r"\\begin\{equation\*\}\n(.*?)\n\\end\{equation\*\}", fit, display, flags=re.S)
    return re.sub(r"\\begin\{align\*\}\n(.*?)\n\\end\{align\*\}",
                  lambda match: "\\begin{align*}\n" + _align_fitted(match.group(1)) + "\n\\end{align*}", display, flags=re.S)


def _breakable_displays(display: str) -> str:
    r"""A part's own display whose ``align*`` and ``gather*`` may break across pages and
    beamer frames (between the rows :func:`_align_fitted` does not keep together)."""
    if not re.search(r"\\begin\{(align|gather)\*\}", display):
        return display
    return "\\begingroup\\allowdisplaybreaks\n" + display.rstrip("\n") + "\n\\endgroup" + (
        "\n" if display.endswith("\n") else "")


def _align_fitted(body: str) -> str:
    r"""The rows of an ``align*`` (``L &= R && \text{why}``) within :data:`TEXT_WIDTH`, by
    the chain's rule: unchanged if they fit; else each remark on a line of its own under
    its row (``&\qquad``); then, while the rows are still too wide, the row of the widest
    left side has it on a line of its own, its right sides (its row's and those of the
    rows after it with no left side) indented under it (``&L``, ``&\quad = R``); the other
    rows stay aligned as they were.  A page may break before a left side, not after it
    (``\\*``): each statement stays whole."""
    rows = [split_top(row.strip(), "&") for row in split_top(body, "\\\\")]
    if any(len(cells) not in (2, 4) or (len(cells) == 4 and cells[2].strip()) for cells in rows):
        return body  # not the layout of a worked instance: left as it is
    group, head = [], 0  # the row whose left side each row's right side follows
    for index, cells in enumerate(rows):
        head = index if cells[0].strip() or index == 0 else head
        group.append(head)
    lefts = [latex_width(cells[0]) for cells in rows]
    rights = [latex_width(cells[1]) for cells in rows]
    remarks = [_remark_width(cells[3]) if len(cells) == 4 else 0.0 for cells in rows]
    fits = max(lefts) + max(rights) + (25 + max(remarks) if any(remarks) else 0) <= TEXT_WIDTH
    alone: set = set()

    def width() -> float:
        left = max((lefts[i] for i in range(len(rows)) if group[i] not in alone), default=0.0)
        right = [max(rights[i], 20 + remarks[i]) for i in range(len(rows)) if group[i] not in alone]
        right += [max(lefts[i], 10 + rights[i], 30 + remarks[i]) for i in range(len(rows)) if group[i] in alone]
        return left + max(right)

    heads = sorted(set(group), key=lambda i: -lefts[i])
    while not fits and width() > TEXT_WIDTH and heads:
        alone.add(heads.pop(0))
    out = []  # (row, its group)
    for index, cells in enumerate(rows):
        left, right = cells[0].strip(), cells[1].strip()
        if fits:
            out.append((_row_text(cells), group[index]))
            continue
        if group[index] in alone:
            out += [(f"&{left}", group[index])] if left else []
            out.append((f"&\\quad {right}", group[index]))
        else:
            out.append((f"{left} &{right}" if left else f"&{right}", group[index]))
        if len(cells) == 4:
            indent = "\\quad \\qquad " if group[index] in alone else "\\qquad "
            out.append((f"&{indent}{cells[3].strip()}", group[index]))
    return out[0][0] + "".join((" \\\\*\n" if out[k - 1][1] == mine else " \\\\\n") + row
                               for k, (row, mine) in enumerate(out) if k)


def _row_text(cells) -> str:
    """An ``align*`` row from its cells, as it was written."""
    return "&".join(cells).strip()


def _remark_width(cell: str) -> float:
    r"""A remark ``\text{...}`` measured as a justification is (:func:`_text_width`)."""
    cell = cell.strip()
    if cell.startswith("\\text{") and cell.endswith("}"):
        return _text_width(cell[len("\\text{"):-1])
    return latex_width(cell)


_INSTANCE = "For instance:\n\\begin{align*}\n"


def _instances_together(display: str) -> str:
    r"""Consecutive worked instances of a check ("For instance:" and an ``align*`` each) as
    one display under one "For instance:" (the rows unchanged, aligned with each other)."""
    pattern = re.compile(r"(?:For instance:\n\\begin\{align\*\}\n.*?\n\\end\{align\*\}(?:\n|$))+", re.S)

    def merge(match):
        bodies = re.findall(r"For instance:\n\\begin\{align\*\}\n(.*?)\n\\end\{align\*\}", match.group(0), re.S)
        if len(bodies) < 2:
            return match.group(0)
        end = "\n" if match.group(0).endswith("\n") else ""
        return _INSTANCE + " \\\\\n".join(bodies) + "\n\\end{align*}" + end

    return pattern.sub(merge, display)


def _chain_view(part: Derivation) -> PartView:
    marks = tuple(getattr(part, "_marks", ()))
    steps = []
    for number, step in enumerate(part.steps, 1):
        how = "cited" if step.cited else (marks[number - 1] if number <= len(marks) else "")
        steps.append(StepView(_RELATIONS[step.relation], shown_latex(step.rhs), _broken_lines(step.rhs, TEXT_WIDTH - 30),
                              prose_latex(step.why), tuple(step.using), _rule_names(step.rules), how, step.cited))
    return PartView(part.title, part.note, shown_latex(part.start), tuple(steps),
                    start_lines=_broken_lines(part.start, TEXT_WIDTH - 10))


def sheet(result: Any) -> Sheet:
    """The verified ``result`` (a :class:`Result`; verified first, so a false step raises its
    ProofError) as a :class:`Sheet`.  A part of another kind (a :class:`Check`, a
    counterexample, a user's own part) keeps its own display."""
    if isinstance(result, Sheet):
        return result
    printed = result if isinstance(result, Printed) else result.printed()
    if not isinstance(result, Result):
        return Sheet(**{f.name: getattr(printed, f.name) for f in dataclasses.fields(Printed)})
    items = tuple(map(breakable, assumption_lines(result.assumptions, result.declarations(), result.definitions())))
    scopes = tuple(breakable(f"\\item {prose_latex(part.title)}: {scope_latex(part)}") for part in result.parts)
    views = tuple(_chain_view(part) if isinstance(part, Derivation) and part.steps
                  else PartView(part.title, part.note, display=_display_fitted(part.latex())) for part in result.parts)
    return Sheet(**{f.name: getattr(printed, f.name) for f in dataclasses.fields(Printed)},
                 assumption_items=items, scope_items=scopes, views=views)


def step_label(name: str, part: int, step: int) -> str:
    """The stable label of a step: ``NAME:PART.STEP`` (1-based).

    >>> step_label("shift_invariance", 1, 3)
    'shift_invariance:1.3'
    """
    return f"{name}:{part}.{step}"


# ----------------------------------------------------------------------------- layout


def _heading(text: str, list_follows: bool = False) -> str:
    r"""A heading that is not a sectioning command: a bold line, kept with what follows.

    Before a list, LaTeX's own flag for "just after a heading" is raised (as ``\section``
    does), or the list's start would offer a page break under the heading."""
    nobreak = "\\csname @nobreaktrue\\endcsname" if list_follows else ""
    return f"\\par\\medskip\\noindent\\textbf{{{text}}}\\par\\nopagebreak{nobreak}"


#: How the checker's own layout introduces the declared flags of the symbols.
_DECLARED = "\\item Declared (the flags the checker uses): "


def _run_in(text: str) -> str:
    """A bold heading that its paragraph follows on the same line."""
    return f"\\par\\medskip\\noindent\\textbf{{{text}}}"


def _why(step: StepView, audit: str) -> str:
    why = step.why
    if step.using:
        why += " [" + ", ".join(escape_text(label) for label in step.using) + "]"
    if audit == "full" and step.rules:
        why += " [" + ", ".join(escape_text(name) for name in step.rules) + "]"
    if step.cited:
        why = r"\textbf{cited, not machine-checked:} " + why
    return why


def _text_width(tex: str) -> float:
    """A rough width of text-mode LaTeX (math spans estimated as math)."""
    width, pieces = 0.0, tex.split("$")
    for index, piece in enumerate(pieces):
        if index % 2:
            width += latex_width(piece)
        else:
            plain = piece.replace("\\textbf", "").replace("\\_", "_").replace("\\", "")
            width += _TEXT_POINTS * len(plain.replace("{", "").replace("}", ""))
    return width


def _chain_latex(name: str, number: int, view: PartView, audit: str, wide: bool = False) -> str:
    """The chain's ``align``; ``wide``: for a page without a width (the web), every line whole."""
    whys = [_why(step, audit) for step in view.steps]
    if wide:
        view = dataclasses.replace(view, start_lines=(), steps=tuple(
            dataclasses.replace(step, rhs_lines=()) for step in view.steps))
    start_width = latex_width(view.start)
    start_alone = not wide and (bool(view.start_lines) or any(step.rhs_lines for step in view.steps) or start_width
                                + max(latex_width(f"{step.relation} {step.rhs}") for step in view.steps) > TEXT_WIDTH)

    def fits(column: float) -> bool:
        """Every step and its justification on one line, after a first column this wide."""
        return all(not step.rhs_lines and column + latex_width(f"{step.relation} {step.rhs}") + 25
                   + _text_width(why) <= TEXT_WIDTH for step, why in zip(view.steps, whys))

    # The justifications beside the steps if they fit there, with the start in the first
    # column or else on a line of its own; otherwise under each step, with the room of
    # the whole line when the start is wide.
    if wide or (not start_alone and fits(start_width)):
        rows_fit = True
    elif fits(10.0):
        rows_fit = start_alone = True
    else:
        rows_fit, start_alone = False, start_alone or start_width > 80
    # The first column: the start, or (when it has a line of its own) the indentation.
    column = 10.0 if start_alone else start_width
    rows: list = []
    starts = set()  # the rows a step begins with, after the first step: a page may break before them
    if start_alone:
        # The start on a line of its own (or lines), the steps indented under it (all left-aligned).
        first, *rest = view.start_lines or (view.start,)
        rows.append(f"&{first} \\notag")
        rows.extend(f"&\\qquad {line} \\notag" for line in rest)
    indent = "\\quad " if start_alone else ""
    for index, (step, why) in enumerate(zip(view.steps, whys), 1):
        label = f"\\label{{{step_label(name, number, index)}}}"
        if index > 1:
            starts.add(len(rows))
        left = "" if start_alone or index > 1 else view.start + " "
        if step.rhs_lines:
            first, *rest = step.rhs_lines
            body = [f"{left}&{indent}{step.relation} {first} \\notag"] + [
                f"&{indent}\\qquad {line} \\notag" for line in rest]
            body[-1] = body[-1].replace(" \\notag", " " + label)
        else:
            body = [f"{left}&{indent}{step.relation} {step.rhs} {label}"]
        if rows_fit:
            body[-1] = body[-1].replace(f" {label}", f" && \\text{{{why}}} {label}")
            rows.extend(body)
        else:
            rows.extend(body)
            # Beside the start's column, after a \qquad (and the indentation).
            room = TEXT_WIDTH - column - 30
            if 0.9 * _text_width(why) <= room:  # \small: 90% of the normal size
                rows.append(f"&{indent}\\qquad \\text{{\\small {why}}} \\notag")
            else:
                # A long justification wraps in a box of its own (no \intertext: its row
                # would leave an empty numbered line behind).
                box = f"{max(room, 100.0):.0f}pt"
                rows.append(f"&{indent}\\qquad \\parbox[t]{{{box}}}{{\\raggedright\\small {why}}} \\notag")
    # A page (or a beamer frame) may break between steps, never inside one: not between a
    # step and its justification or its broken lines, nor between the start and the first
    # step (``\\*``).  Beamer's frame breaks take no break that a penalty only discourages
    # (``\allowdisplaybreaks[1]``): a long chain would run off the slide.
    body = rows[0] + "".join((" \\\\\n" if index in starts else " \\\\*\n") + row
                             for index, row in enumerate(rows[1:], 1))
    return "\\begingroup\\allowdisplaybreaks\n\\begin{align}\n" + body + "\n\\end{align}\n\\endgroup"


def _trusted_sentence(printed: Printed) -> str:
    base = printed.trusted_base()
    return ("Side conditions proved by the sign calculus; steps checked by the strategies "
            + escape_text(", ".join(base["strategies"]) or "none")
            + (" and the rules " + escape_text(", ".join(base["rules"])) if base["rules"] else
               " (no rule of the library)") + ".")


def fragment_latex(printed: Printed, audit: str = "appendix", wide: bool = False) -> str:
    """The fragment of one result (see the module docstring); ``audit`` in :data:`AUDITS`;
    ``wide``: every step on one line with its justification beside it (for the web notes,
    whose page has no fixed width)."""
    if audit not in AUDITS:
        raise ValueError(f"audit must be one of {', '.join(AUDITS)}, not {audit!r}")
    if not isinstance(printed, Sheet) or not printed.views:
        return _unsectioned(printed.latex())
    # A group: the looser line breaking of long prose does not leak into the host document.
    out = ["\\begingroup\\emergencystretch=3em \\tolerance=1000"]
    out += [breakable(prose_latex(printed.intro)), ""] if printed.intro.strip() else []
    # A list under a heading; a single sentence run in after the heading, on its line.
    items = printed.assumption_items
    if audit != "full":  # the same declared flags, in the student's words
        items = tuple(item.replace(_DECLARED, "\\item The symbols, as declared: ", 1) for item in items)
    if items:
        out.extend([_heading("Assumptions.", True), "\\begin{itemize}", *items, "\\end{itemize}"])
    else:
        out.append(_run_in("Assumptions.") + " None beyond the definitions.")
    if len(printed.scope_items) == 1:
        out.extend(["", _run_in("Scope.") + " " + printed.scope_items[0][len("\\item "):], ""])
    else:
        out.extend(["", _heading("Scope.", True), "\\begin{itemize}", *printed.scope_items, "\\end{itemize}", ""])
    cited = [(view.title, number, [i for i, s in enumerate(view.steps, 1) if s.cited])
             for number, view in enumerate(printed.views, 1)]
    cited = [(title, number, steps) for title, number, steps in cited if steps]
    if audit == "full":
        out.append(_run_in("Trusted base.") + " " + _trusted_sentence(printed))
    if cited:
        listed = "; ".join(f"{prose_latex(title)}, " + ", ".join(
            f"\\eqref{{{step_label(printed.name, number, i)}}}" for i in steps) for title, number, steps in cited)
        out.append(f"Steps marked \\textbf{{cited}} are not machine-checked: {listed}. "
                   "Every other step was checked before printing.")
    else:
        out.append("Every step below was checked by the computer before printing.")
    if audit == "none":
        out[-1] += " (The checker's strategies and rules: \\texttt{symbolic-attn list --verify}.)"
    for number, view in enumerate(printed.views, 1):
        out.extend(["", _heading(prose_latex(view.title))])
        if view.note:
            out.append(breakable(prose_latex(view.note)))
        if view.is_chain:
            out.append(_chain_latex(printed.name, number, view, audit, wide))
        else:
            out.append(view.display if wide else _breakable_displays(_display_narrowed(view.display)))
    out.append("\\par\\endgroup")
    return "\n".join(out) + "\n"


def _unsectioned(text: str) -> str:
    """A result printed only as text (a user's own part kind): its headings made bold lines."""
    lines = []
    for line in text.splitlines():
        for command in ("\\section*{", "\\subsection*{", "\\paragraph{"):
            if line.startswith(command):
                title, _, rest = line[len(command):].rpartition("}")
                line = _heading(title) + (" " + rest.strip() if rest.strip() else "")
                break
        lines.append(line)
    if lines and lines[0].startswith("\\par\\medskip") and text.startswith("\\section*{"):
        lines = lines[1:]  # the title: the notes print it as a numbered section
    return "\n".join(lines).strip("\n") + "\n"


def audit_latex(printed_results: list) -> str:
    r"""``audit.tex``: for each result, the trusted base and how each step was decided (the
    strategy, the rules), referring to the steps by ``\eqref`` (no sectioning command)."""
    out = ["% Generated by `symbolic-attn derive`. Do not edit.", "\\begingroup\\emergencystretch=3em \\tolerance=1000",
           "For each result: the strategies of the checker and the rules of the library its verification "
           "relied on; then, step by step (by equation number), the strategy that decided the step and the "
           "rules it applied. Side conditions of rules are proved by the sign calculus."]
    for printed in printed_results:
        base = printed.trusted_base()
        used = "Strategies: " + escape_text(", ".join(base["strategies"]) or "none") + "; rules: " + (
            escape_text(", ".join(base["rules"])) if base["rules"] else "none") + "."
        out.extend(["", _heading(prose_latex(printed.title)), "{\\small " + used])
        views = getattr(printed, "views", ())
        chains = [(number, view) for number, view in enumerate(views, 1) if view.is_chain]
        if chains:
            out.append("\\begin{itemize}")
            for number, view in chains:
                steps = "; ".join(
                    f"\\eqref{{{step_label(printed.name, number, i)}}} "
                    + (escape_text(step.how) if step.how else "checked")
                    + (" [" + escape_text(", ".join(step.rules)) + "]" if step.rules else "")
                    for i, step in enumerate(view.steps, 1))
                out.append(f"\\item {prose_latex(view.title)}: {steps}.")
            out.append("\\end{itemize}")
        out.append("}")
    out.append("\\par\\endgroup")
    return "\n".join(out) + "\n"
