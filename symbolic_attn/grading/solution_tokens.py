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

import re
import unicodedata
from dataclasses import dataclass

from symbolic_attn.grading.solution_values import UNICODE

__all__ = ["Token", "Problem", "tokenize", "without_hidden_text", "MAX_TOKENS"]

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


@dataclass(frozen=True)
class Problem:
    """Text that could not be read: its line (1-based) and what was wrong."""

    line: int
    message: str


# Unicode spellings of what LaTeX writes as commands: combining accents (x̄, ŷ, ã) become
# \bar{x}, \hat{y}, \tilde{a}; superscript and subscript digits (σ², a₃₂) become ^{2}, _{32}.
_MARKS = {"\u0302": "hat", "\u0303": "tilde", "\u0304": "bar", "\u0305": "bar", "\u0307": "dot", "\u0308": "ddot"}
# Only a letter standing alone is a symbol: "für", "año" and Greek prose stay words.
_ALONE_BEFORE, _ALONE_AFTER = r"(?<![^\W\d_])", r"(?![^\W\d_])"
_ACCENTED = re.compile(_ALONE_BEFORE + r"([A-Za-z])([\u0302\u0303\u0304\u0305\u0307\u0308])" + _ALONE_AFTER)
_PRECOMPOSED = {chr(c): unicodedata.normalize("NFD", chr(c)) for c in range(0xC0, 0x250)
                if len(unicodedata.normalize("NFD", chr(c))) == 2 and unicodedata.normalize("NFD", chr(c))[0].isascii()
                and unicodedata.normalize("NFD", chr(c))[1] in _MARKS}
_PRECOMPOSED_RE = re.compile(_ALONE_BEFORE + "[" + "".join(_PRECOMPOSED) + "]" + _ALONE_AFTER)
_LETTERS = {old: new for old, new in UNICODE.items() if old.isalpha()}  # α -> \alpha, standing alone
_LETTERS_RE = re.compile(_ALONE_BEFORE + "[" + "".join(_LETTERS) + "]" + _ALONE_AFTER)
_SIGNS = {old: new for old, new in UNICODE.items() if not old.isalpha()}
_SUPERSCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_SUBSCRIPT_DIGITS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
_SUPERSCRIPTS = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
_SUBSCRIPTS = re.compile("[₀₁₂₃₄₅₆₇₈₉]+")


def _unaccented(text: str) -> str:
    """Precomposed accented letters (ŷ, ā) as a letter and its combining mark."""
    return _PRECOMPOSED_RE.sub(lambda m: _PRECOMPOSED[m.group()], text) if not text.isascii() else text


def tokenize(text: str, latex: bool):
    """Tokens with their line numbers; ``%`` comments dropped in LaTeX files."""
    text = _ACCENTED.sub(lambda m: f"\\{_MARKS[m.group(2)]}{{{m.group(1)}}}", _unaccented(text))
    text = _SUPERSCRIPTS.sub(lambda m: "^{" + m.group().translate(_SUPERSCRIPT_DIGITS) + "}", text)
    text = _SUBSCRIPTS.sub(lambda m: "_{" + m.group().translate(_SUBSCRIPT_DIGITS) + "}", text)
    if not text.isascii():
        text = _LETTERS_RE.sub(lambda m: _LETTERS[m.group()], text)
        for old, new in _SIGNS.items():
            text = text.replace(old, new)
    if latex:
        text = re.sub(r"(?<!\\)%[^\n]*", "", text)
    tokens, line, tight, problems = [], 1, True, []
    for match in _TOKEN.finditer(text):
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
        tokens.append(Token(kind, match.group(0), line, tight, env))
        if kind == "nl":
            line += 1
        tight = True
        if len(tokens) > MAX_TOKENS:
            problems.append(Problem(line, f"more than {MAX_TOKENS} tokens: the rest of the file is not read"))
            break
    return tokens, problems


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
