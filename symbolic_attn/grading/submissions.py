r"""Reading a student's solution: Markdown, LaTeX or plain text -> named claimed values.

A solution is data written by a student.  This module never evaluates it: its tokens
(:mod:`.solution_tokens`), its names (:mod:`.solution_names`) and a hand-written grammar
of values (:mod:`.solution_values`) turn each statement ``NAME = VALUE`` (or ``\approx``,
``≈``, ``\simeq``, ``:=``) into a :class:`~symbolic_attn.grading.claims.Claimed` value, the
same object a ``[[claims]]`` entry gives, so decimals keep their written precision.

What is read (inside or outside ``$…$``, ``\(…\)``, ``\[…\]``, ``$$…$$``, equation and
align environments; ``&`` and ``\\`` separate, several statements per line):

* numbers: ``0.284``, ``-1``, ``2.8e-1``, ``2.8 \times 10^{-1}`` (a decimal of its
  written precision), ``\frac{a}{b}``, ``a/b``, ``\sqrt{..}``, ``e^{..}``, ``\exp``,
  ``\ln``, ``\log`` (natural), ``\pi``, ``\cdot``, ``\times``, parentheses, braces;
* lists ``[0.33, 0.67, 0]`` or ``(0.33, 0.67, 0)``, nested lists ``[[..], [..]]``, and
  ``bmatrix``/``pmatrix``/``matrix``/``array`` environments (``^T`` transposes);
* ``\sin``, ``\cos``, ``\tanh``, ``erf`` and ``1.`` (exactly 1) as claims read them;
* pasted code output: ``tensor([...])``/``array([...])`` and their trailers (``dtype=``,
  ``grad_fn=<..>``, ``device=``, ``requires_grad=``), NumPy's ``[0.25 0.75]`` and
  ``[[1. 0.] [0. 1.]]``;
* names as sources write them (:func:`normalize_name`): ``s'_{32}``, ``z^{(2)}``,
  ``\sigma^2``/``σ²``, ``\hat{y}``/``ŷ``, ``\mathbf{Z}``, ``\text{attn\_weights}``,
  ``attn_scores_2``;
* a chain ``a = \frac{e}{1+e} \approx 0.731`` claims its last value; the last statement
  of a name is its answer; a right-hand side that is a formula (``Z = softmax(..) V``)
  is not an answer and does not replace one.

Not read: what the rendered file does not show -- HTML comments ``<!-- … -->``,
``\iffalse … \fi``, the ``comment`` environment, ``%`` comments in LaTeX.  Lines end with
LF, CRLF or a lone CR.  Not statements (outside ``.tex``): Markdown headings
(``## At $p = 1$``), the arguments of a call (``F.softmax(prod, dim=-1)``), and in a code
fence anything but a line's first name with ``=`` or ``:`` (``context_vec_2: tensor([..])``).

>>> [(s.name, s.claimed.text) for s in parse_submission(
...     "## At $p = 1$\n```\nF.softmax(x, dim=-1)\nattn_weights_2: tensor([0.25, 0.75], grad_fn=<SoftmaxBackward0>)\n```"
...     ).statements]
[('attn_weights_2', '[0.25, 0.75]')]

Decimal commas: ``0,731`` and ``0{,}731`` are read as 0.731 where a comma cannot separate
entries (outside lists, in a matrix cell, in a list whose entries are separated by ``;``,
as in ``[0,33; 0,67]``).  In a list separated by commas, every comma separates.

Minus infinity, ``-inf``, ``-\infty``, ``−∞`` (a blocked score, as PyTorch prints a masked
score matrix ``tensor([[0., -inf]])``), is read as an entry or a whole value: exactly -oo.

Refused (reported with the line, never a crash): ``nan``, ``inf`` without a minus sign,
names refused by :func:`normalize_name` (more than 4 primes, over 64 characters, a control
character), anything that is neither a number nor a formula (``0.2.3``, unbalanced brackets, ``28.4\%``, ``\pm``), vmatrix, matrices ragged or
larger than 64x64, files larger than :data:`MAX_BYTES`, binary files, text neither UTF-8 nor UTF-16
with a byte-order mark (the one file reader, :mod:`symbolic_attn.exact.source`).

>>> s = parse_submission(r"We get $a_{3,2} = \frac{e}{1+e} \approx 0.731$ and $b = 0,5$.")
>>> s.answer("a_{32}").claimed.text, s.answer("b").claimed.text
('0.731', '0.5')
>>> s = parse_submission("Z = \\begin{bmatrix} 1 & 0 \\\\ 0.5 & 0.50 \\end{bmatrix}")
>>> s.answer("Z").claimed.shape
(2, 2)
>>> parse_submission("w = 0.2.3").problems
(Problem(line=1, message='w: unexpected \'.3\' after 0.2 in "0.2 .3"'),)
"""

import os
import re
import unicodedata
from dataclasses import dataclass, replace

from symbolic_attn.errors import InputFileError, SymbolicAttnError, shown
from symbolic_attn.exact.source import SOLUTION, parse_toml, read_text
from symbolic_attn.exact.syntax import to_text
from symbolic_attn.grading.claims import claimed_from_tree
# The tokens and the names are read by modules of their own; re-exported here, where
# callers have always found them.
from symbolic_attn.grading.solution_names import BadName, name_at, name_problem, normalize_name
from symbolic_attn.grading.solution_tokens import MAX_TOKENS, Problem, tokenize, without_hidden_text, written_text
from symbolic_attn.grading.solution_values import (FUNCS, MATRICES, MAX_DIMENSION, RELATIONS, SEPARATING, Formula,
                                                   Unreadable, claimed_tree)

__all__ = ["MAX_BYTES", "Statement", "Problem", "Submission", "normalize_name", "name_problem", "parse_submission",
           "read_submission", "position_key", "EXTENSIONS"]

MAX_BYTES = SOLUTION.limit  # bytes in one solution file, checked before reading
MAX_STATEMENTS = 10_000
EXTENSIONS = (".md", ".markdown", ".tex", ".txt", ".toml")

@dataclass(frozen=True)
class Statement:
    """One ``NAME = VALUE`` of a solution; ``claimed`` is None when it could not be read."""

    name: str  # the normalized name
    written: str  # the name as written
    line: int
    claimed: object = None
    problem: str = ""
    text: str = ""  # the value as written (for reports), cut short


@dataclass(frozen=True)
class Submission:
    """A solution read: its statements in order, the problems, or why nothing was read."""

    source: str
    statements: tuple = ()
    problems: tuple = ()
    refused: str = ""  # non-empty when the file itself could not be used
    blank: bool = False  # the text held nothing but spaces and line breaks (or only a byte-order mark)
    #: (source, kind, text) of every text file read -- kind md, tex or txt -- for the
    #: derivation questions, which read the chains in it (not name = value statements).
    documents: tuple = ()

    def answer(self, *names):
        """The last statement of any of ``names`` (normalized here), or None."""
        keys = {normalize_name(name) for name in names}
        found = [s for s in self.statements if s.name in keys]
        return found[-1] if found else None


# ------------------------------------------------------------------ reading files


def read_submission(path, source: str | None = None) -> Submission:
    """Read one solution file; problems with the file become ``refused``, never an exception.

    Read by the one file reader (:mod:`symbolic_attn.exact.source`): a link, folder, FIFO
    or device is refused unopened, the size checked before reading, UTF-8 or UTF-16 text,
    every line ending LF; a TOML solution pre-scanned before ``tomllib`` parses it.
    """
    source = source or os.path.basename(str(path))
    try:
        text = read_text(path, SOLUTION, source)
        if str(path).lower().endswith(".toml"):
            return _submission_of_table(parse_toml(text, source, parse_float=str), source, text)
    except InputFileError as error:
        return Submission(source, refused=error.reason if error.line is None else f"line {error.line}: {error.reason}")
    suffix = os.path.splitext(str(path))[1].lower()
    return parse_submission(text, source, latex=suffix == ".tex", kind=_DOCUMENT_KINDS.get(suffix, "md"))


#: A solution file's suffix -> the kind of document its chains are read as.
_DOCUMENT_KINDS = {".md": "md", ".markdown": "md", ".tex": "tex", ".txt": "txt"}


def position_key(quantity: str, row, col) -> str:
    """The name a ``[[claims]]`` entry without a name answers: ``@weights[3,2]``."""
    return f"@{quantity}[{'*' if row is None else row},{'*' if col is None else col}]"


def _submission_of_table(table: dict, source: str, text: str = "") -> Submission:
    """A TOML solution: ``NAME = "VALUE"`` pairs (at the top or in ``[answers]``), or
    ``[[claims]]`` entries as in an exercise file (``quantity``, ``row``, ``col``, ``value``;
    a ``name`` or ``label`` instead of the position also works).  Floats keep their text."""
    answers = table.get("answers", table)
    if not isinstance(answers, dict):
        return Submission(source, refused="[answers] must be a table of NAME = \"VALUE\"")
    entries = [(name, value) for name, value in answers.items() if name != "claims"]
    claims = table.get("claims", [])
    for entry in claims if isinstance(claims, list) else []:
        if isinstance(entry, dict) and "value" in entry:
            name = entry.get("name") or entry.get("label")
            if not isinstance(name, str) or not normalize_name(name):
                row, col = entry.get("row"), entry.get("col")
                name = position_key(str(entry.get("quantity")), row if isinstance(row, int) else None,
                                    col if isinstance(col, int) else None)
            entries.append((name, entry["value"]))
    statements, problems = [], []
    lines = text.split("\n")
    found = 0  # the line of the previous entry: entries are found in order after it
    for name, value in entries[:MAX_STATEMENTS]:
        value_text = _toml_value(value)
        if value_text is None:
            continue
        line = found = _key_line(lines, "value" if name.startswith("@") or name not in answers else name, found)
        key = name if name.startswith("@") else normalize_name(name) or name
        statement = _statement_of(key, name, line, tokenize(value_text, False)[0], value_text)
        if statement is not None and statement.claimed is None:
            problems.append(Problem(line, statement.problem))
        if statement is not None:
            statements.append(statement)
    return Submission(source, tuple(statements), tuple(problems))


def _key_line(lines: list, key: str, after: int) -> int:
    """The 1-based line after line ``after`` where ``key = ...`` is written (bare, "quoted"
    or 'quoted'), or ``after`` itself (1 at least) when the text does not show it plainly."""
    escaped = key.replace("\\", "\\\\").replace('"', '\\"')  # as a TOML basic string writes it
    forms = (key, f'"{key}"', f"'{key}'", f'"{escaped}"')
    pattern = re.compile(r"^\s*(?:" + "|".join(re.escape(form) for form in forms) + r")\s*=")
    for number in range(after, min(len(lines), after + 200)):  # a bounded look: never quadratic
        if pattern.match(lines[number]):
            return number + 1
    return max(after, 1)


def _toml_value(value, depth=0):
    """A TOML value as solution text: strings as written, arrays as lists (two levels)."""
    if isinstance(value, bool) or isinstance(value, dict) or depth > 2:
        return None
    if isinstance(value, list):
        items = [_toml_value(v, depth + 1) for v in value[:MAX_DIMENSION + 1]]
        return None if any(i is None for i in items) else "[" + ", ".join(items) + "]"
    return str(value)


# ------------------------------------------------------------------ statements


def parse_submission(text: str, source: str = "<solution>", latex: bool = False, kind: str | None = None) -> Submission:
    """Every ``NAME = VALUE`` statement of a solution text, and the problems met; the text
    itself is kept as a document of ``kind`` (md, tex or txt; default tex when ``latex``,
    else md) for derivation questions."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        return Submission(source, refused=f"text larger than the limit of {MAX_BYTES} bytes")
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # CR, LF and CRLF all end a line
    if not text.lstrip("\ufeff").strip():
        return Submission(source, blank=True)  # empty as a reader sees it (Notepad's empty file has a BOM)
    document = (source, kind or ("tex" if latex else "md"), text.lstrip("\ufeff"))
    return replace(_parse_statements(text, source, latex), documents=(document,))


def _parse_statements(text: str, source: str, latex: bool) -> Submission:
    text, problems = without_hidden_text(text, latex)
    code_lines = set()
    if not latex:
        text, code_lines = _markdown_lines(text)
    tokens, more = tokenize(text, latex)
    problems += more
    in_call = [call or heading for call, heading in zip(_call_arguments(tokens, code_lines), _in_headings(tokens))]
    statements = []
    at = 0
    while at < len(tokens) and len(statements) < MAX_STATEMENTS:
        code = tokens[at].line in code_lines
        if in_call[at] or (code and at > 0 and tokens[at - 1].kind != "nl"):
            at += 1  # a function call's argument (dim=-1), or code not at the start of its line
            continue
        try:
            found = name_at(tokens, at) if _separates(tokens, at) else None
        except BadName as error:
            relation = _relation_after(tokens, error.at, code)
            if relation is None:  # refused inside the name (a_{3<U+200B>1}, deep nesting): its relation is further on
                relation = _relation_on_line(tokens, error.at, code)
            if relation is not None:
                written = written_text(text, tokens[at:min(error.at, at + 12)])
                problems.append(Problem(tokens[at].line, f"{shown(written, 40)}: {error.message}"))
                _, after = _segments(tokens, relation)
                at = max(after, error.at)
            else:
                at = max(at + 1, error.at)
            continue
        if found is None:
            at += 1
            continue
        name, after = found
        relation = _relation_after(tokens, after, code)
        if relation is None:
            at += 1
            continue
        written = written_text(text, tokens[at:after])  # as the student wrote it (σ², not \sigma^{2})
        segments, at = _segments(tokens, relation)
        # The last value of a chain (a = e/(1+e) = 0.731 = 73.1%: 0.731); formulas are skipped,
        # and an unreadable end counts only when no value of the chain can be read.
        chosen = None
        for segment in reversed(segments):
            statement = _statement_of(name, written.rstrip("& "), tokens[relation].line, segment, text)
            if statement is not None and (statement.claimed is not None or chosen is None):
                chosen = statement
            if chosen is not None and chosen.claimed is not None:
                break
        if chosen is not None:
            if chosen.claimed is None:
                problems.append(Problem(chosen.line, chosen.problem))
            statements.append(chosen)
    problems += _broken_names(tokens, in_call, {s.line for s in statements} | {p.line for p in problems}, text)
    while at < len(tokens) and tokens[at].kind == "nl":
        at += 1  # the limit names the first line not read, not the end of the last one read
    if len(statements) >= MAX_STATEMENTS and at < len(tokens):
        line = tokens[at].line
        problems.append(Problem(line, f"more than {MAX_STATEMENTS} statements: the rest of the file "
                                f"(from line {line}) is not read"))
    return Submission(source, tuple(statements), tuple(problems))


def _relation_after(tokens, after, code):
    """The index of the relation after a name (``$a_{32}$ = 0.284``: the name in math, the
    relation outside), or None; in a code block ``name: [..]`` (printed output) also counts."""
    while after < len(tokens) and (tokens[after].text in ("&", r"\)") or tokens[after].kind == "dollar"):
        after += 1
    if after >= len(tokens):
        return None
    if tokens[after].kind == "rel" or tokens[after].text in RELATIONS or code and tokens[after].text == ":":
        return after
    return None


def _broken_names(tokens, in_call, accounted, source) -> list:
    """A problem for each line where a relation follows what can only be a broken name --
    an unclosed brace (``$\\tilde{S = ..``) or an invisible character (a bidi isolate) --
    and nothing was read or reported: such a line is never dropped silently.  Other
    lines with a relation and no statement (a formula, arithmetic) stay quiet."""
    found, start = [], 0
    for index, token in enumerate(tokens):
        if token.kind == "nl":
            start = index + 1
            continue
        if token.kind != "rel" or in_call[index] or token.line in accounted:
            continue
        before = tokens[start:index]
        invisible = next((t.text for t in before if t.kind == "char" and unicodedata.category(t.text)[0] == "C"), None)
        opened = sum(t.text == "{" for t in before) - sum(t.text == "}" for t in before)
        written = shown(written_text(source, before), 40)
        if invisible is not None:
            found.append(Problem(token.line, f"{written}: the invisible or control character U+{ord(invisible):04X} "
                                 f"before '{token.text}' hides the name: delete it"))
        elif opened > 0:
            found.append(Problem(token.line, f"{written}: a '{{' before '{token.text}' is not closed, so no name is "
                                 "read (write \\tilde{S} = ...)"))
        else:
            continue
        accounted = accounted | {token.line}
    return found


def _relation_on_line(tokens, at, code):
    """The index of the first relation after ``at`` on the same line, or None."""
    line = tokens[at].line if at < len(tokens) else None
    while at < len(tokens) and tokens[at].kind != "nl" and tokens[at].line == line:
        if tokens[at].kind == "rel" or tokens[at].text in RELATIONS or code and tokens[at].text == ":":
            return at
        at += 1
    return None


_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")


def _markdown_lines(text: str):
    """Headings blanked (``## At $p = 1$`` states no answer), fence lines blanked, and the
    line numbers inside code fences (pasted output: only ``name = ..``/``name: ..`` at the
    start of a line is read there)."""
    lines, code, fence = text.split("\n"), set(), None
    for number, line in enumerate(lines, 1):
        opening = _FENCE.match(line)
        if fence is None and opening:
            fence, lines[number - 1] = opening.group(1), ""
        elif fence is not None and opening and opening.group(1) == fence and not line.strip().strip(fence[0]):
            fence, lines[number - 1] = None, ""
        elif fence is not None:
            code.add(number)
        elif _HEADING.match(line):
            lines[number - 1] = ""
    return "\n".join(lines), code


_SECTIONS = {r"\part", r"\chapter", r"\section", r"\subsection", r"\subsubsection", r"\paragraph",
             r"\subparagraph", r"\caption", r"\title"}


def _in_headings(tokens) -> list:
    r"""For each token: is it inside a LaTeX heading's braces (``\section{At $p = 1$}``)?"""
    inside, depth, pending = [], 0, False
    for token in tokens:
        if depth:
            depth += (token.text == "{") - (token.text == "}")
        elif pending and token.text == "{":
            depth, pending = 1, False
        elif token.text != "*":
            pending = token.kind == "cmd" and token.text in _SECTIONS
        inside.append(depth > 0)
    return inside


def _call_arguments(tokens, code_lines) -> list:
    """For each token: is it inside the parentheses of a call (``F.softmax(prod, dim=-1)``,
    an opening parenthesis right after a word, ``)`` or ``]``)?  The end of a line ends every
    call, except in a code fence, where a call may span lines until a blank line."""
    inside, stack, calls = [], [], 0
    previous = None
    for token in tokens:
        inside.append(calls > 0)
        if token.kind == "nl" and (token.line not in code_lines or previous is not None and previous.kind == "nl"):
            stack, calls = [], 0
        elif token.kind == "char" and token.text == "(":
            call = token.tight and previous is not None and (previous.kind == "word" or previous.text in (")", "]"))
            stack.append(call)
            calls += call
        elif token.kind == "char" and token.text == ")" and stack:
            calls -= stack.pop()
        previous = token
    return inside


def _separates(tokens, at) -> bool:
    """May a statement start at ``tokens[at]`` (and not inside an expression)?"""
    if at == 0:
        return True
    token = tokens[at - 1]
    if token.kind == "char" and token.text in ("*", "-", "+", ">"):  # a Markdown bullet or quote
        return at == 1 or tokens[at - 2].kind == "nl"
    if not tokens[at].tight and (token.kind == "num" or token.text == "]"):
        return True  # after a finished value and a space: a31 = 0.503   a32 = 0.248 are two statements
    return (token.kind in ("nl", "dollar", "begin", "end", "rel") or token.text in SEPARATING
            or token.text in (r"\(", r"\)", r"\[", r"\]", "(", "|")
            or token.kind == "word" and len(token.text) > 1 and token.text not in FUNCS)


def _segments(tokens, at):
    """The right-hand sides of a chain ``= A \approx B ...`` and the index after it."""
    segments, current, depth, env_depth = [], [], 0, 0
    at += 1
    while at < len(tokens) and len(current) <= MAX_TOKENS:
        token = tokens[at]
        text = token.text
        opens = token.kind == "begin" and _matrix_like(token.env) or token.kind == "char" and text in ("(", "[", "{")
        closes = (token.kind == "end" and _matrix_like(token.env) and env_depth > 0 or
                  token.kind == "char" and text in (")", "]", "}") and depth > 0)
        if opens or closes:
            if token.kind in ("begin", "end"):
                env_depth += 1 if opens else -1
            else:
                depth += 1 if opens else -1
            current.append(token)
            at += 1
            continue
        if depth or env_depth:
            # An unclosed bracket never swallows the rest of the file: a blank line, a
            # math delimiter or the end of a non-matrix environment ends the value anyway.
            if token.kind == "nl" and at + 1 < len(tokens) and tokens[at + 1].kind == "nl" \
                    or token.kind == "dollar" or text in (r"\)", r"\]") or token.kind == "end" and not _matrix_like(token.env):
                break
            if token.kind != "nl":
                current.append(token)
            at += 1
            continue
        if token.kind == "rel" or text in RELATIONS:
            segments.append(current)
            current = []
            at += 1
            continue
        if not current and (token.kind in ("nl", "dollar") or text in (r"\(", r"\[", r"\)", r"\]")):
            at += 1  # the value may follow on the next line or in the next math span
            continue
        if current and _ends_value(tokens, at):
            break
        if token.kind in ("dollar", "end", "begin") or text in (r"\)", r"\]", "\\\\", "&", ")", "]", "}"):
            break
        current.append(token)
        at += 1
    segments.append(current)
    return [s for s in segments if s], at


def _matrix_like(env: str) -> bool:
    """Matrices, read or refused (vmatrix is a determinant) by the value grammar."""
    return env in MATRICES or env.rstrip("*").endswith("matrix")


def _ends_value(tokens, at) -> bool:
    token = tokens[at]
    if token.kind == "nl" or token.text in (";", r"\quad", r"\qquad"):
        return True
    if token.text == "," and at + 1 < len(tokens):
        following = tokens[at + 1]
        return not (following.tight and following.kind == "num" and following.text.isdigit()
                    and at > 0 and tokens[at - 1].kind == "num")
    if token.text == ".":  # a full stop, not a decimal point (those are inside numbers)
        return True
    try:
        found = name_at(tokens, at) if _separates(tokens, at) else None
    except BadName:
        return True
    if found is not None:
        after = found[1]
        return after < len(tokens) and (tokens[after].kind == "rel" or tokens[after].text == "&")
    return False


def _check_balanced(segment) -> None:
    """Refuse a right-hand side whose brackets do not balance: it is neither a value nor a
    formula (``A = tensor([A = tensor([...``), so it is reported, never skipped as a formula."""
    for opening, closing in (("(", ")"), ("[", "]"), ("{", "}")):
        opened = sum(t.kind == "char" and t.text == opening for t in segment)
        closed = sum(t.kind == "char" and t.text == closing for t in segment)
        if opened != closed:
            raise Unreadable(f"{opened} '{opening}' and {closed} '{closing}': the brackets do not balance")


def _statement_of(name, written, line, segment, source):
    """The statement of one right-hand side; None for a formula (not an answer).  Its
    ``text`` is the value as written in ``source`` (the text the tokens come from)."""
    text = written_text(source, segment[:400])[:200]
    try:
        tree = claimed_tree(segment)
        claimed = claimed_from_tree(tree, to_text(tree))
        if claimed.shape and len(claimed.shape) == 2 and max(claimed.shape) > MAX_DIMENSION:
            raise Unreadable(f"a {claimed.shape[0]}x{claimed.shape[1]} matrix exceeds the limit of {MAX_DIMENSION}")
        return Statement(name, written, line, claimed, text=text)
    except Formula:
        try:
            _check_balanced(segment)
        except Unreadable as error:  # a formula's brackets balance: this is a broken value
            return Statement(name, written, line, None, f"{written}: {error}", text)
        return None
    except Unreadable as error:
        message = f"{written}: {error}"
    except (SymbolicAttnError, RecursionError, ValueError, OverflowError) as error:
        message = f"{written}: {' '.join(str(error).split())[:160]}"
    return Statement(name, written, line, None, message, text)
