r"""The tokens of a student's solution text: what the statement finder and the name reader see.

A solution is data: this module only cuts text into tokens (numbers, LaTeX commands,
words, relations, math delimiters, environments), each with its line and whether a space
came before it.  Unicode spellings are first written as LaTeX writes them, so that one
grammar reads both: combining and precomposed accents (``ŷ``, ``x̄``) become ``\hat{y}``,
``\bar{x}``; superscript and subscript digits (``σ²``, ``a₃₂``) become ``^{2}``, ``_{32}``;
Greek letters standing alone become ``\sigma``.  What a reader of the rendered file never
sees (HTML comments, ``\iffalse``, the ``comment`` environment, LaTeX ``%`` comments) is
blanked first by :func:`without_hidden_text`, keeping line numbers.

>>> tokens, problems = tokenize("a₃₂ = 0.284", latex=False)
>>> [(t.kind, t.text) for t in tokens]
[('word', 'a'), ('char', '_'), ('char', '{'), ('num', '32'), ('char', '}'), ('rel', '='), ('num', '0.284')]
>>> without_hidden_text("x = 1 <!-- x = 2 -->", latex=False)
('x = 1 ', [])
"""

import heapq
import re
import unicodedata
from dataclasses import dataclass

from symbolic_attn.grading.solution_values import UNICODE

__all__ = ["Token", "Problem", "tokenize", "written_text", "without_hidden_text", "MAX_TOKENS"]

MAX_TOKENS = 300_000

_TOKEN = re.compile(r"""
    (?P<nl>\n)
  | (?P<space>[ \t\r\f\v]+)
  | (?P<begin>\\begin\s*\{\s*(?P<benv>[A-Za-z*]+)\s*\})
  | (?P<end>\\end\s*\{\s*(?P<eenv>[A-Za-z*]+)\s*\})
  | (?P<num>\d+(?:\.\d+)?(?:[eE][+-]?\d+(?![A-Za-z]))?|\.\d+)
  | (?P<cmd>\\[A-Za-z]+|\\.|\\$)
  | (?P<ident>[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![A-Za-z0-9_]))
  | (?P<word>[^\W\d_]+)
  | (?P<rel>:=|≈|≃|≐|=)
  | (?P<dollar>\$\$?)
  | (?P<brace>\{,\})
  | (?P<char>.)
""", re.VERBOSE | re.DOTALL)


@dataclass(frozen=True)
class Token:
    kind: str  # nl num cmd word rel dollar begin end char
    text: str
    line: int
    tight: bool  # no space before it
    env: str = ""
    start: int = 0  # where it was written: offsets in the text given to tokenize (before the
    end: int = 0  # Unicode spellings were rewritten), so that what was read is echoed as written


@dataclass(frozen=True)
class Problem:
    """Text that could not be read: its line (1-based) and what was wrong."""

    line: int
    message: str


# Unicode spellings of what LaTeX writes as commands: combining accents (x̄, ŷ, ã) become
# \bar{x}, \hat{y}, \tilde{a}; superscript and subscript digits (σ², a₃₂) become ^{2}, _{32}.
_MARKS = {"\u0302": "hat", "\u0303": "tilde", "\u0304": "bar", "\u0305": "bar", "\u0307": "dot", "\u0308": "ddot"}
# Only a letter standing alone is a symbol: "für", "año" and Greek prose stay words.
_PRECOMPOSED = {chr(c): unicodedata.normalize("NFD", chr(c)) for c in range(0xC0, 0x250)
                if len(unicodedata.normalize("NFD", chr(c))) == 2 and unicodedata.normalize("NFD", chr(c))[0].isascii()
                and unicodedata.normalize("NFD", chr(c))[1] in _MARKS}
_LETTERS = {old: new for old, new in UNICODE.items() if old.isalpha()}  # α -> \alpha, standing alone
_SIGNS = {old: new for old, new in UNICODE.items() if not old.isalpha()}
_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_SUBSCRIPT_DIGITS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")


# One pass over the text rewrites every Unicode spelling, remembering where each piece of
# the rewritten text was written.  "Standing alone" is judged on the text as written, with
# superscript and subscript digits not counting as letters (σ² is \sigma^{2}).
_LETTER_BEFORE = r"(?<![^\W\d_⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉])"
_LETTER_AFTER = r"(?![^\W\d_⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉])"
_SPELLINGS = re.compile(
    "(?P<precomposed>" + _LETTER_BEFORE + "[" + "".join(_PRECOMPOSED) + "]" + _LETTER_AFTER + ")"
    + "|(?P<accented>" + _LETTER_BEFORE + "[A-Za-z][\u0302\u0303\u0304\u0305\u0307\u0308]" + _LETTER_AFTER + ")"
    + "|(?P<superscript>[⁰¹²³⁴⁵⁶⁷⁸⁹]+)|(?P<subscript>[₀₁₂₃₄₅₆₇₈₉]+)"
    + "|(?P<letter>" + _LETTER_BEFORE + "[" + "".join(_LETTERS) + "]" + _LETTER_AFTER + ")"
    + "|(?P<sign>[" + re.escape("".join(_SIGNS)) + "])")
_LATEX_COMMENT = re.compile(r"(?<!\\)%[^\n]*")


def _spelling(match) -> str:
    kind, written = match.lastgroup, match.group()
    if kind == "precomposed":
        letter, mark = _PRECOMPOSED[written]
        return f"\\{_MARKS[mark]}{{{letter}}}"
    if kind == "accented":
        return f"\\{_MARKS[written[1]]}{{{written[0]}}}"
    if kind == "superscript":
        return "^{" + written.translate(_SUPERSCRIPT_DIGITS) + "}"
    if kind == "subscript":
        return "_{" + written.translate(_SUBSCRIPT_DIGITS) + "}"
    return _LETTERS[written] if kind == "letter" else _SIGNS[written]


def _rewritten(text: str, latex: bool):
    """(the text with LaTeX spellings, and for each of its characters the start and end of
    the text as written that it comes from); ``%`` comments dropped in LaTeX."""
    if text.isascii() and not latex:
        return text, range(len(text)), range(1, len(text) + 1)
    found = ([_SPELLINGS.finditer(text)] if not text.isascii() else []) + ([_LATEX_COMMENT.finditer(text)] if latex else [])
    pieces, starts, ends, at = [], [], [], 0
    for _, _, match in heapq.merge(*(((m.start(), n, m) for m in matches) for n, matches in enumerate(found))):
        if match.start() < at:
            continue  # inside a comment already dropped
        pieces.append(text[at:match.start()])
        starts.extend(range(at, match.start()))
        ends.extend(range(at + 1, match.start() + 1))
        new = "" if match.re is _LATEX_COMMENT else _spelling(match)
        pieces.append(new)
        starts.extend([match.start()] * len(new))
        ends.extend([match.end()] * len(new))
        at = match.end()
    pieces.append(text[at:])
    starts.extend(range(at, len(text)))
    ends.extend(range(at + 1, len(text) + 1))
    return "".join(pieces), starts, ends


def tokenize(text: str, latex: bool):
    """Tokens with their line numbers and where each was written; ``%`` comments dropped in LaTeX files."""
    rewritten, starts, ends = _rewritten(text, latex)
    tokens, line, tight, problems = [], 1, True, []
    for match in _TOKEN.finditer(rewritten):
        kind = match.lastgroup
        if kind in ("benv", "eenv"):
            kind = "begin" if match.group("begin") else "end"
        if kind == "space":
            tight = False
            continue
        if kind == "brace":  # 0{,}731: the LaTeX idiom for a decimal comma
            kind = "char"
        if kind == "ident":  # attn_scores_2: a code identifier is one word
            kind = "word"
        env = match.group("benv") or match.group("eenv") or "" if kind in ("begin", "end") else ""
        tokens.append(Token(kind, match.group(0), line, tight, env, starts[match.start()], ends[match.end() - 1]))
        if kind == "nl":
            line += 1
        tight = True
        if len(tokens) > MAX_TOKENS:
            problems.append(Problem(line, f"more than {MAX_TOKENS} tokens: the rest of the file is not read"))
            break
    return tokens, problems


def written_text(text: str, tokens) -> str:
    """The tokens' span of ``text`` as written (spaces collapsed), "" for no tokens."""
    if not tokens:
        return ""
    return " ".join(text[tokens[0].start:tokens[-1].end].split())


# What a reader of the rendered file never sees, so it is never graded: HTML comments
# (Markdown), \iffalse ... \fi (to an \else, whose branch is shown) and the comment
# environment (LaTeX, also raw LaTeX in Markdown).  Unclosed, each hides the rest of the file.
_HIDDEN = re.compile(r"""
    (?P<html><!--) .*? (?:(?P<html_end>-->)|\Z)
  | (?P<iffalse>\\iffalse(?![A-Za-z])) .*? (?:(?P<iffalse_end>\\(?:fi|else)(?![A-Za-z]))|\Z)
  | (?P<comment>\\begin\s*\{comment\}) .*? (?:(?P<comment_end>\\end\s*\{comment\})|\Z)
""", re.VERBOSE | re.DOTALL)
_CLOSING = {"html": "-->", "iffalse": r"\fi", "comment": r"\end{comment}"}


def without_hidden_text(text: str, latex: bool):
    """The text with hidden parts blanked (their line breaks kept, so line numbers stay),
    and a problem for each hidden part left unclosed."""
    if latex:
        text = re.sub(r"(?<!\\)%[^\n]*", "", text)  # before: a % comment may contain "\iffalse"
    problems = []

    def blank(match):
        kind = next(kind for kind in _CLOSING if match.group(kind))
        if match.group(f"{kind}_end") is None:
            line = text.count("\n", 0, match.start()) + 1
            problems.append(Problem(line, f"{match.group(kind)} without {_CLOSING[kind]}: "
                                    "the rest of the file is hidden and not read"))
        return "\n" * match.group(0).count("\n")

    return _HIDDEN.sub(blank, text), problems
