r"""Names as sources write them, read into one normal form (:func:`normalize_name`).

``a_{32}``, ``a_{3,2}``, ``a_32``, ``a32`` and ``a₃₂`` are one name; primes (``s'_{32}``,
``s^\prime_{32}``), layer superscripts (``z^{(2)}``), Greek letters (``\sigma^2``, ``σ²``),
accents (``\hat{y}``, ``ŷ``), ``\mathbf{}``/``\text{}`` wrappers and code identifiers
(``attn_scores_2``, ``\text{attn\_weights}``) are read as sources write them; case
counts.  The answer key's names and aliases and a solution's statements are read by this
one grammar (:func:`name_at` on the tokens of :mod:`.solution_tokens`); a text refused as
a name raises :class:`BadName` with the reason (more than :data:`MAX_PRIMES` primes, over
:data:`MAX_NAME` characters, a control character).

>>> normalize_name("z^{(2)}_3"), name_problem("s" + "'" * 5 + "_1")
('z_3^(2)', 'a name with more than 4 primes')
"""

import unicodedata

from symbolic_attn.errors import shown
from symbolic_attn.grading.solution_tokens import tokenize
from symbolic_attn.grading.solution_values import FRACS, FUNCS, IGNORED, RELATIONS, TIMES, WRAPPERS

__all__ = ["normalize_name", "name_problem", "name_at", "BadName", "ACCENTS", "MAX_NAME", "MAX_PRIMES"]

MAX_NAME = 64  # characters of a normalized name
MAX_PRIMES = 4
#: Accents over a name: \hat{y} is the name hat(y), never y itself.
ACCENTS = {r"\hat": "hat", r"\widehat": "hat", r"\tilde": "tilde", r"\widetilde": "tilde", r"\bar": "bar",
           r"\overline": "bar", r"\dot": "dot", r"\ddot": "ddot", r"\check": "check"}
_NOT_BASES = {"e", "nan", "NaN", "inf", "Inf", "infinity", "Infinity"}
#: LaTeX spacing, which does not count inside a name's index or superscript.
_SPACING = {r"\,", r"\;", r"\:", r"\!", r"\ "}


class BadName(Exception):
    """Text written where a name stands that is refused as a name (reported with the line)."""

    def __init__(self, message, at):
        super().__init__(message)
        self.message, self.at = message, at


def normalize_name(text: str) -> str:
    r"""One spelling per name: spacing, braces, math delimiters and separators between
    indices do not count; case does.  Returns "" for text that is not a name.  The answer
    key's names and aliases and a solution's statements are read by this one function.

    >>> {normalize_name(t) for t in ["a_{32}", "a_{3,2}", "a_32", "$a_{3 2}$", "a32", "a₃₂"]}
    {'a_32'}
    >>> normalize_name(r"\alpha_{32}"), normalize_name("A_{32}"), normalize_name(r"\mathbf{Z}")
    ('alpha_32', 'A_32', 'Z')
    >>> [normalize_name(t) for t in ["s'_{32}", "s_{32}'", r"s^\prime_{32}", "s′_{32}"]]
    ["s'_32", "s'_32", "s'_32", "s'_32"]
    >>> [normalize_name(t) for t in [r"z^{(2)}_3", r"\sigma^2", "σ²", r"\hat{y}", "ŷ", r"\text{attn\_weights}"]]
    ['z_3^(2)', 'sigma^2', 'sigma^2', 'hat(y)', 'hat(y)', 'attn_weights']
    """
    return _name_of(text)[0]


def name_problem(text: str) -> str:
    """Why ``text`` is not a name ("" when it is one)."""
    name, problem = _name_of(text)
    return "" if name else problem or "not a name such as a_{32}, s'_{32}, z^{(2)} or attn_weights"


def _name_of(text: str):
    if len(text) > 4 * MAX_NAME:
        return "", f"a name of {len(text)} characters (at most {MAX_NAME})"
    tokens = [t for t in tokenize(text, False)[0] if t.kind not in ("dollar", "nl") and t.text not in
              (r"\(", r"\)", r"\[", r"\]")]
    try:
        parsed = name_at(tokens, 0)
    except BadName as error:
        return "", error.message
    if parsed is None or parsed[1] != len(tokens):
        return "", ""
    return parsed[0], ""


def name_at(tokens, at, nested=0):
    r"""(normalized name, next index) when a name starts at ``at``, else None; raises
    :class:`BadName` for a name refused (too long, too many primes, a control character).

    name := base (primes | _index | ^superscript)*;  base := word | \greek | \mathbf{..} | \hat{name};
    primes := ' ... | ^\prime;  superscript := ^{(..)} | ^2 | ^{2}.
    """
    found = _base_at(tokens, at, nested)
    if found is None:
        return None
    base, at = found
    primes, index, upper, control = 0, "", "", None
    while at < len(tokens):
        token = tokens[at]
        if token.text == "'" and token.tight:
            start = at
            while at < len(tokens) and tokens[at].text == "'":
                at += 1
            primes += at - start
        elif token.text == "^" and at + 1 < len(tokens):
            found = _superscript_at(tokens, at + 1)
            if found is None:
                break
            kind, text, at = found
            if kind == "prime":
                primes += text
            elif upper:
                break
            else:
                upper = text
        elif not index and (token.text == "_" or token.kind == "num" and token.tight and token.text.isdigit()):
            found = _index_at(tokens, at)
            if found is None:
                return None
            index, at = found
        elif token.tight and token.kind == "char" and unicodedata.category(token.text)[0] == "C":
            control = control or token.text  # reported once the whole name is read
            at += 1
        else:
            break
    if primes > MAX_PRIMES:
        raise BadName(f"a name with more than {MAX_PRIMES} primes", at)
    name = base + "'" * primes + (f"_{index}" if index else "") + (f"^{upper}" if upper else "")
    if control is not None:
        raise BadName(f"the name {shown(name)} holds the invisible or control character U+{ord(control):04X}: "
                       "delete it", at)
    if len(name) > MAX_NAME:
        raise BadName(f"a name of {len(name)} characters (at most {MAX_NAME})", at)
    return name, at


def _base_at(tokens, at, nested):
    if at >= len(tokens):
        return None
    token = tokens[at]
    if token.kind == "word" and len(token.text) > MAX_NAME:
        raise BadName(f"a name of {len(token.text)} characters (at most {MAX_NAME})", at + 1)
    if token.kind == "cmd" and token.text in ACCENTS and nested >= 3:
        raise BadName("a name inside more than 3 nested accents or typefaces (\\mathbf{\\hat{y}} is fine)", at + 1)
    if token.kind == "cmd" and token.text in ACCENTS:
        braced = at + 1 < len(tokens) and tokens[at + 1].text == "{"
        found = name_at(tokens, at + 2 if braced else at + 1, nested + 1)
        if found is None:
            return None
        inner, after = found
        if braced:
            if after >= len(tokens) or tokens[after].text != "}":
                return None
            after += 1
        return f"{ACCENTS[token.text]}({inner})", after
    if token.kind == "cmd" and token.text in WRAPPERS and at + 1 < len(tokens) and tokens[at + 1].text == "{" \
            and at + 2 < len(tokens) and tokens[at + 2].kind == "cmd" and (tokens[at + 2].text in ACCENTS
                                                                            or tokens[at + 2].text in WRAPPERS):
        # \mathbf{\hat{y}}, \boldsymbol{\mathbf{A}}: the typeface is not part of the name
        if nested >= 3:
            raise BadName("a name inside more than 3 nested accents or typefaces (\\mathbf{\\hat{y}} is fine)", at + 1)
        found = name_at(tokens, at + 2, nested + 1)
        if found is None or found[1] >= len(tokens) or tokens[found[1]].text != "}":
            return None
        return found[0], found[1] + 1
    if token.kind == "cmd" and token.text in WRAPPERS and at + 1 < len(tokens) and tokens[at + 1].text == "{":
        parts, after, last = [], at + 2, None
        while after < len(tokens) and tokens[after].text != "}" and len(parts) <= 16:
            part = tokens[after]
            if part.text in ("_", r"\_"):
                parts.append("_")
            elif part.kind in ("word", "num") and not (last in ("word", "num") and not part.tight):
                parts.append(part.text)
            elif part.kind == "cmd" and part.text[1:].isalpha() and _plain_command(part.text) and not parts:
                parts.append(part.text[1:])
            else:
                return None
            last = part.kind
            after += 1
        name = "".join(parts)
        if after >= len(tokens) or not name or not name[0].isalpha() or name in FUNCS or name in _NOT_BASES:
            return None
        return name, after + 1
    if token.kind == "word" and token.text not in FUNCS and token.text not in _NOT_BASES:
        text, at = token.text, at + 1
        while at + 1 < len(tokens) and tokens[at].text == r"\_" and tokens[at].tight and tokens[at + 1].tight \
                and tokens[at + 1].kind in ("word", "num") and len(text) <= MAX_NAME:
            text, at = f"{text}_{tokens[at + 1].text}", at + 2  # attn\_weights: Markdown's escaped underscore
        return text, at
    if token.kind == "cmd" and token.text[1:].isalpha() and _plain_command(token.text):
        return token.text[1:], at + 1
    return None


def _plain_command(text) -> bool:
    r"""A command that can be a name (\alpha, \Sigma), not one of the grammar's."""
    return (text not in FUNCS and text not in IGNORED and text not in FRACS and text not in TIMES
            and text not in RELATIONS and text not in WRAPPERS and text not in ACCENTS
            and text not in (r"\pi", r"\prime", r"\infty", r"\cdots", r"\ldots", r"\dots", r"\to"))


def _superscript_at(tokens, at):
    r"""After ``^``: ("prime", count, next) for ^\prime or ^{\prime\prime}; ("upper", text, next)
    for a layer index ^{(2)}, ^{(l)} or a digit ^2, ^{2}; None for any other exponent."""
    token = tokens[at]
    if token.text == r"\prime":
        return "prime", 1, at + 1
    if token.kind == "num" and token.text.isdigit():
        return "upper", token.text[0], at + 1  # TeX: x^23 is x^{2}3
    if token.text == "(":  # plain text z^(2)
        end = _closing(tokens, at, "(", ")", strict=False)
        inner = _plain_parts(tokens, at + 1, end)
        return None if inner is None else ("upper", f"({inner})", end + 1)
    if token.text != "{":
        return None
    end = _closing(tokens, at, "{", "}", strict=at + 1 < len(tokens) and tokens[at + 1].text == "(")
    if end is None:
        return None
    inside = [t for t in tokens[at + 1:end] if t.text not in _SPACING]  # \sigma^{\,2} is \sigma^{2}
    if inside and all(t.text == r"\prime" or t.text == "'" for t in inside):
        return "prime", len(inside), end + 1
    if len(inside) == 1 and inside[0].kind == "num" and inside[0].text.isdigit():
        return "upper", inside[0].text, end + 1
    if inside and inside[0].text == "(":
        if len(inside) > 2 and inside[1].text == "(":
            raise BadName("a superscript such as ^{((2))} nests parentheses: a layer index is written ^{(2)}", end + 1)
        inner = _plain_parts(inside, 1, len(inside) - 1) if inside[-1].text == ")" else None
        if inner is None:
            raise BadName("a superscript in parentheses holds a layer index such as ^{(2)} or ^{(l)}", end + 1)
        return "upper", f"({inner})", end + 1
    return None


def _closing(tokens, at, opening, closing, strict, limit=24):
    """The index of the bracket closing ``tokens[at]`` within ``limit`` tokens; a longer
    or deeper superscript raises :class:`BadName` (it is never scanned to the end)."""
    depth = 0
    for index in range(at, min(len(tokens), at + limit)):
        depth += (tokens[index].text == opening) - (tokens[index].text == closing)
        if depth == 0:
            return index
    if strict and at + limit < len(tokens):
        end, depth = at, 0
        while end < len(tokens) and tokens[end].kind != "nl":  # to its end on its line (read once: the
            # reader goes on after it), so that the relation after it is found
            depth += (tokens[end].text == opening) - (tokens[end].text == closing)
            end += 1
            if depth == 0:
                break
        raise BadName(f"a superscript longer than {limit} tokens, or nested deeper, is not a name", end)
    return None


def _plain_parts(tokens, start, end):
    """The letters, digits and commands of an index, or None when anything else is there."""
    if end is None or end <= start:
        return None
    parts = []
    for token in tokens[start:end]:
        if token.kind in ("word", "num") or token.kind == "cmd" and token.text[1:].isalpha() and _plain_command(token.text):
            parts.append(token.text.lstrip("\\"))
        elif token.text not in (",", ";", "{", "}"):
            return None
    return "".join(parts) or None


def _index_at(tokens, at):
    """A subscript (``_{32}``, ``_{3,2}``, ``_3``) or the plain-text index of ``a32``."""
    if tokens[at].kind == "num":
        return tokens[at].text, at + 1  # a32: the plain-text spelling of a_{32}
    at += 1
    if at < len(tokens) and tokens[at].text == "{":
        depth, parts = 0, []
        while at < len(tokens):
            text = tokens[at].text
            depth += (text == "{") - (text == "}")
            if depth == 0:
                break
            if tokens[at].kind == "char" and unicodedata.category(text)[0] == "C":
                raise BadName(f"an index holds the invisible or control character U+{ord(text):04X}: delete it", at + 1)
            if text in _SPACING:
                at += 1  # \, and \; are spacing in an index: a_{3\,2} is a_{32}
                continue
            if text not in "{},;" and tokens[at].kind not in ("nl",):
                parts.append("_" if text == r"\_" else text.lstrip("\\"))
            if len(parts) > 16:
                return None
            at += 1
        if at >= len(tokens) or not parts:
            return None
        return "".join(parts), at + 1
    if at < len(tokens) and tokens[at].kind in ("num", "word") and tokens[at].tight:
        return tokens[at].text, at + 1
    return None
