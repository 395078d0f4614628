r"""The grammar of the one input language: text -> a small typed tree with source spans.

Every front end reads numbers, names and bracketed matrices through this one grammar: the
command line's options, the strings and arrays of exercise files, claimed values, answer
keys, the ``[define]`` definitions of computation files and the values a student's
solution states.  Nothing is evaluated here and nothing is handed to Python's parser: the
text is cut into tokens by one regular expression and read by a small recursive descent,
after :func:`check_text` has bounded it (length, ASCII only -- Python would read other
digits and NFKC-fold letters, a fullwidth 'ｅ' becoming the constant e --, no control
characters, brackets that match and nest at most ``max_depth`` deep, bounded runs of
digits and names, decimal exponents and matrix products).

The tree (all nodes frozen, each with ``start``/``end``, offsets into the text)::

    Number(text, value, decimals)      0.140 -> value 7/50, decimals 3 (None: an integer)
    Name(name)                         X, W_Q, e, pi
    String(text)                       'causal' (an option of a [define] function)
    Call(name, args, keywords)         sqrt(2), attention(Q, K, V, mask = 'causal')
    UnaryOp(op, operand)               -x
    BinOp(op, left, right)             + - * / ^ @      (``**`` is read as ``^``)
    Transpose(operand)                 X.T
    Attribute(operand, name)           A.weights        (a stage of a computation)
    Index(operand, index)              M.head[2]
    Matrix(items)                      [1, 2] (one row), [[1, 0], [0, 1]]

Precedence is the usual one of hand-written maths (and Python's): ``^`` binds tightest
and to the right (``2^3^2`` is ``2^9``), a sign binds looser than ``^`` (``-2^2`` is -4),
then ``* / @`` and ``+ -`` from the left.  A flat sum of many terms is a chain, not a
nesting: ``1+1+...+1`` is as deep as ``1+1``; ``max_tree_depth`` bounds real nesting
(signs, powers, brackets).

>>> tree = parse("2^-1 + X.T")
>>> tree.op, tree.left, tree.right
('+', BinOp(op='^', left=Number(text='2', value=2, decimals=None, start=0, end=1), right=UnaryOp(op='-', operand=Number(text='1', value=1, decimals=None, start=3, end=4), start=2, end=4), start=0, end=4), Transpose(operand=Name(name='X', start=7, end=8), start=7, end=10))
>>> parse("0.140").decimals, parse("2.5e2").value
(3, 250)
>>> parse("0.3, 0.7")
Traceback (most recent call last):
...
symbolic_attn.errors.ParseError: a list needs brackets: write [0.3, 0.7] (a bare comma at column 4)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import sympy

from symbolic_attn.errors import InputLimitError, ParseError, shown
from symbolic_attn.exact.limits import DEFAULT_LIMITS, Limits

__all__ = [
    "Node", "Number", "Name", "String", "Call", "Keyword", "UnaryOp", "BinOp", "Transpose", "Attribute", "Index",
    "Matrix", "parse", "number_value", "left_chain", "matrix_entries", "size", "to_text", "check_text", "check_brackets", "snippet",
]


class Node:
    """A piece of the tree; ``start`` and ``end`` are offsets into the text (column = start + 1).

    Not a dataclass itself, so that each node's own fields come first and its span last."""

    start: int
    end: int

    @property
    def column(self) -> int:
        return self.start + 1


@dataclass(frozen=True)
class Number(Node):
    """A number as written: its text, its exact value, and ``decimals`` -- the digits written
    after the point minus the decimal exponent (``0.140`` 3, ``2.5e2`` -1, ``1e-3`` 3); None
    for an integer written without point or exponent (exact)."""

    text: str
    value: Any
    decimals: int | None
    start: int
    end: int

    @property
    def scientific(self) -> bool:
        """Whether the number was written with a decimal exponent (``2.8e-1``)."""
        return "e" in self.text.lower()


@dataclass(frozen=True)
class Name(Node):
    name: str
    start: int
    end: int


@dataclass(frozen=True)
class String(Node):
    """A quoted option such as ``'causal'`` (only ``[define]`` gives it a meaning)."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Keyword(Node):
    name: str
    value: Node
    start: int
    end: int


@dataclass(frozen=True)
class Call(Node):
    name: str
    args: tuple[Node, ...]
    keywords: tuple[Keyword, ...]
    start: int
    end: int


@dataclass(frozen=True)
class UnaryOp(Node):
    op: str
    operand: Node
    start: int
    end: int


@dataclass(frozen=True)
class BinOp(Node):
    op: str
    left: Node
    right: Node
    start: int
    end: int


@dataclass(frozen=True)
class Transpose(Node):
    operand: Node
    start: int
    end: int


@dataclass(frozen=True)
class Attribute(Node):
    operand: Node
    name: str
    start: int
    end: int


@dataclass(frozen=True)
class Index(Node):
    operand: Node
    index: Node
    start: int
    end: int


@dataclass(frozen=True)
class Matrix(Node):
    """A bracketed list: its items are entries (one row) or bracketed rows."""

    items: tuple[Node, ...]
    start: int
    end: int


# ASCII digits only ([0-9], not \d: "0.১৬৭" in Bengali digits is not 0.167); "_" groups
# digits as in Python (1_000).
_DIGITS = r"[0-9](?:_?[0-9])*"
_NUMBER = re.compile(rf"(?:{_DIGITS}(?:\.(?:{_DIGITS})?)?|\.{_DIGITS})(?:[eE][+-]?[0-9]+)?")
_TOKEN = re.compile(
    r"(?P<space>[ \t\r\n]+)"
    rf"|(?P<number>{_NUMBER.pattern})"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<string>'[^'\r\n]*'|\"[^\"\r\n]*\")"
    r"|(?P<op>\*\*|[-+*/^@()\[\],=.])"
)
_NUMBER_PARTS = re.compile(r"^([0-9_]*)(?:\.([0-9_]*))?(?:[eE]([+-]?[0-9]+))?$")
#: What Python would read here, named for the message (the language has none of them).
_FOREIGN = {"<": "comparison", ">": "comparison", "!": "'!'", "%": "a percentage (write the number itself: 0.284, not 28.4%)",
            "{": "a brace", "}": "a brace", "|": "'|'", "&": "'&'", "~": "'~'", ":": "':'", ";": "';'",
            "#": "a comment", "`": "'`'", "$": "'$'", "?": "'?'", "\\": "a backslash (LaTeX is read in solutions only)"}
_KEYWORDS = {"lambda": "lambda", "if": "a conditional expression", "else": "a conditional expression",
             "for": "a comprehension", "and": "a boolean operator", "or": "a boolean operator",
             "not": "a boolean operator", "in": "comparison", "is": "comparison", "await": "await",
             "yield": "yield", "import": "import", "True": "literal True", "False": "literal False",
             "None": "literal None"}
_PREFIXES = {"f", "r", "b", "u", "fr", "rf", "br", "rb"}  # f'..', b'..': Python's strings


@dataclass(frozen=True)
class _Token:
    kind: str  # number, name, string, op, end
    text: str
    start: int
    end: int


# -- the textual pass: cheap bounds before any token is made --------------------------

# Runs of letters, digits and underscores: numbers (0x... too) and names, bounded alike.
_TOKEN_RUN = re.compile(r"\w+")
_EXPONENT = re.compile(r"(?<![A-Za-z_])\d*\.?\d+[eE]([+-]?\d+)")


def snippet(text: str, width: int = 60) -> str:
    """The offending text, quoted and cut short, for an error message."""
    return '"' + shown(text, width).replace('"', '\\"') + '"'


_CLOSING = {"(": ")", "[": "]", "{": "}"}


def check_brackets(text: str, limits: Limits) -> None:
    """Brackets nest at most ``max_depth`` deep and match; a mismatch names both columns.

    >>> check_brackets("[[1,0],[0,1]", DEFAULT_LIMITS)
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.ParseError: unclosed '[' opened at column 1: no matching ']' in "[[1,0],[0,1]"
    """
    stack, deepest, mismatch = [], 0, None
    for column, char in enumerate(text, start=1):
        if char in _CLOSING:
            stack.append((char, column))
            deepest = max(deepest, len(stack))
        elif char in ")]}" and mismatch is None:
            if not stack:
                mismatch = f"'{char}' at column {column} closes no bracket"
                continue
            opener, opened = stack.pop()
            if _CLOSING[opener] != char:
                mismatch = f"'{char}' at column {column} does not match '{opener}' opened at column {opened}"
    if deepest > limits.max_depth:
        raise InputLimitError(f"brackets nested {deepest} deep exceed the limit of {limits.max_depth}")
    if mismatch:
        raise ParseError(f"{mismatch} in {snippet(text)}")
    if stack:
        opener, opened = stack[-1]
        raise ParseError(
            f"unclosed '{opener}' opened at column {opened}: no matching '{_CLOSING[opener]}' in {snippet(text)}"
        )


def check_text(text: str, limits: Limits) -> None:
    """The textual pass before the text is cut into tokens: length, ASCII only, no control
    characters, brackets, runs of digits and names, matrix products and decimal exponents,
    each bounded by ``limits``.

    >>> check_text("\uff38 @ W", DEFAULT_LIMITS)
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.ParseError: non-ASCII character 'Ｘ' (U+FF38) at column 1: write numbers and names in ASCII, in "Ｘ @ W"
    """
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {shown(type(text).__name__)}")
    if not isinstance(limits, Limits):
        raise ParseError(f"limits must be a Limits object, got {shown(type(limits).__name__)}")
    if len(text) > limits.max_text_length:
        raise InputLimitError(f"text of {len(text)} characters exceeds the limit of {limits.max_text_length}")
    if not text.strip():
        raise ParseError("empty expression")
    for column, char in enumerate(text, start=1):
        # ASCII only: Python's parser would read other digits or NFKC-fold letters
        # (a fullwidth 'ｅ' becomes the constant e); a hand-written maths text needs none.
        if not char.isascii():
            raise ParseError(
                f"non-ASCII character '{shown(char)}' (U+{ord(char):04X}) at column {column}: write numbers and "
                f"names in ASCII, in {snippet(text)}"
            )
        if not char.isprintable() and char not in " \t\r\n":
            raise ParseError(f"control character '{shown(char)}' at column {column} in {snippet(text)}")
    check_brackets(text, limits)
    for run in _TOKEN_RUN.finditer(text):
        if len(run.group()) > limits.max_digits:
            what = f"a number with {len(run.group())} digits" if run.group()[0].isdigit() else f"a name of {len(run.group())} characters"
            raise InputLimitError(f"{what} at column {run.start() + 1} exceeds the limit of {limits.max_digits}")
    if text.count("@") > limits.max_matrix_products:
        raise InputLimitError(f"{text.count('@')} matrix products exceed the limit of {limits.max_matrix_products}")
    for match in _EXPONENT.finditer(text):
        if abs(int(match.group(1))) > limits.max_decimal_exponent:
            raise InputLimitError(
                f"decimal exponent {match.group(1)} at column {match.start() + 1} exceeds the limit of "
                f"{limits.max_decimal_exponent}"
            )


def number_value(text: str, limits: Limits = DEFAULT_LIMITS) -> tuple[Any, int | None]:
    """The exact value and the written precision of a decimal literal (ASCII digits only).

    >>> number_value("0.140"), number_value("1e-3"), number_value("1_000")
    ((7/50, 3), (1/1000, 3), (1000, None))
    """
    if not isinstance(text, str) or len(text) > limits.max_text_length or not _NUMBER.fullmatch(text):
        raise ParseError(f"not a number: '{shown(text)}' (ASCII digits only)")
    parts = _NUMBER_PARTS.match(text)
    assert parts is not None  # _NUMBER matched
    whole, fraction, exponent = (parts.group(1) or "").replace("_", ""), parts.group(2), parts.group(3)
    fraction_digits = (fraction or "").replace("_", "")
    if len(whole) + len(fraction_digits) > limits.max_digits:
        raise InputLimitError(
            f"a number with {len(whole) + len(fraction_digits)} digits exceeds the limit of {limits.max_digits}")
    power = 0
    if exponent is not None:
        if len(exponent) > 12 or abs(int(exponent)) > limits.max_decimal_exponent:
            raise InputLimitError(f"decimal exponent {shown(exponent, 20)} exceeds the limit of "
                                  f"{limits.max_decimal_exponent}")
        power = int(exponent)
    value = sympy.Rational(int(whole + fraction_digits or "0"), 10 ** len(fraction_digits))
    if power:
        value *= sympy.Rational(10) ** power
    written = fraction_digits if fraction is not None else None
    if written is None and exponent is None:
        return value, None
    # "1." (a point, no digits) is the integer 1, exactly as written; "1e3" counts as 0 decimals.
    decimals = (len(written) if written else 0) - power
    return value, (None if written == "" and exponent is None else decimals)


def _tokens(text: str, limits: Limits) -> list[_Token]:
    tokens, at = [], 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            char = text[at]
            if text.startswith(("!=", "<=", ">="), at):
                raise ParseError(f"comparison is not allowed ('{text[at:at + 2]}' at column {at + 1}) in {snippet(text)}")
            if text.startswith(":=", at):
                raise ParseError(f"an assignment is not allowed (':=' at column {at + 1}) in {snippet(text)}")
            what = _FOREIGN.get(char, f"'{shown(char)}'")
            raise ParseError(f"{what} is not allowed ('{shown(char)}' at column {at + 1}) in {snippet(text)}")
        kind = match.lastgroup or "op"
        if kind == "op" and text.startswith("==", at):
            raise ParseError(f"comparison is not allowed ('==' at column {at + 1}) in {snippet(text)}")
        if kind == "number" and match.end() < len(text) and (text[match.end()].isalnum() or text[match.end()] == "_"):
            word = re.match(r"[A-Za-z0-9_.]*", text[match.end():])
            whole = text[at:match.end() + (word.end() if word else 0)]
            if not (re.match(r"0[xXbBoO]", whole) or whole[-1] in "jJ"):  # "2x", "1X": no implicit products
                raise ParseError(f"malformed expression: a number followed by '{shown(text[match.end()], 5)}' at "
                                 f"column {match.end() + 1} (write 2*x for a product) in {snippet(text)}")
            raise ParseError(f"only decimal numbers are allowed, not '{shown(whole, 20)}' at column {at + 1} (hex, "
                             f"binary and complex literals are not allowed) in {snippet(text)}")
        if kind == "name" and text[match.end():match.end() + 1] in ("'", '"') and match.group().lower() in _PREFIXES:
            raise ParseError(f"an f-string is not allowed (nor b'', r'' strings) at column {at + 1} in {snippet(text)}")
        if kind == "name" and match.group() in _KEYWORDS:
            raise ParseError(f"{_KEYWORDS[match.group()]} is not allowed ('{match.group()}' at column {at + 1}) in "
                             f"{snippet(text)}")
        if kind != "space":
            tokens.append(_Token(kind, match.group(), at, match.end()))
        at = match.end()
    tokens.append(_Token("end", "", len(text), len(text)))
    return tokens


def parse(text: str, limits: Limits = DEFAULT_LIMITS) -> Node:
    """Read ``text`` as one expression of the input language; raise :class:`ParseError`
    (or :class:`InputLimitError`) naming the column and the offending piece."""
    check_text(text, limits)
    return _Parser(text, _tokens(text, limits), limits).whole()


class _Parser:
    r"""expression := term (('+'|'-') term)*;  term := unary (('*'|'/'|'@') unary)*;
    unary := ('-'|'+')* power;  power := postfix (('^'|'**') unary)?;
    postfix := atom ('.' NAME | '[' expression ']')*;  atom := NUMBER | STRING | NAME
    | NAME '(' arguments ')' | '(' expression ')' | '[' items ']'."""

    def __init__(self, text: str, tokens: list[_Token], limits: Limits):
        self.text, self.tokens, self.limits = text, tokens, limits
        self.at = 0
        self.depth = 0
        # Where a bracketed piece starts with its "(" and ends with its ")": an operator's
        # span reaches them (as Python's ast does), while the piece keeps its own span.
        self.opened: dict[int, int] = {}
        self.closed: dict[int, int] = {}

    # -- tokens -------------------------------------------------------------------

    def peek(self) -> _Token:
        return self.tokens[self.at]

    def take(self) -> _Token:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def fail(self, token: _Token, what: str) -> ParseError:
        return ParseError(f"{what} at column {token.start + 1} in {snippet(self.text)}")

    def expect(self, text: str) -> _Token:
        token = self.peek()
        if token.text != text or token.kind != "op":
            found = "the end" if token.kind == "end" else f"'{shown(token.text, 20)}'"
            raise self.fail(token, f"malformed expression: expected '{text}', found {found}")
        return self.take()

    def start_of(self, node: Node) -> int:
        return self.opened.get(id(node), node.start)

    def end_of(self, node: Node) -> int:
        return self.closed.get(id(node), node.end)

    def deeper(self) -> None:
        self.depth += 1
        if self.depth > self.limits.max_tree_depth:
            raise InputLimitError(f"expression nested more than {self.limits.max_tree_depth} operations deep: "
                                  f"{snippet(self.text)}")

    # -- grammar ------------------------------------------------------------------

    def whole(self) -> Node:
        node = self.expression()
        token = self.peek()
        if token.kind != "end":
            if token.text == "," and self.depth == 0:
                raise _bare_list(self.text, token.start + 1)
            if token.text == "=":
                raise self.fail(token, "an assignment ('=') is not allowed")
            raise self.fail(token, f"malformed expression: unexpected '{shown(token.text, 20)}'")
        return node

    def expression(self) -> Node:
        node = self.term()
        while self.peek().kind == "op" and self.peek().text in "+-":
            op = self.take().text
            right = self.term()
            node = BinOp(op, node, right, self.start_of(node), self.end_of(right))
        return node

    def term(self) -> Node:
        node = self.unary()
        while self.peek().kind == "op" and self.peek().text in ("*", "/", "@"):
            op = self.take().text
            right = self.unary()
            node = BinOp(op, node, right, self.start_of(node), self.end_of(right))
        return node

    def unary(self) -> Node:
        signs = []
        while self.peek().kind == "op" and self.peek().text in "+-":
            self.deeper()
            signs.append(self.take())
        node = self.power()
        self.depth -= len(signs)
        for sign in reversed(signs):  # built without recursion: "- - - ... 1" is a loop
            node = UnaryOp(sign.text, node, sign.start, self.end_of(node))
        return node

    def power(self) -> Node:
        base = self.postfix()
        if self.peek().kind == "op" and self.peek().text in ("^", "**"):
            self.take()
            self.deeper()
            exponent = self.unary()
            self.depth -= 1
            return BinOp("^", base, exponent, self.start_of(base), self.end_of(exponent))
        return base

    def postfix(self) -> Node:
        node = self.atom()
        while self.peek().kind == "op" and self.peek().text in (".", "["):
            if self.take().text == ".":
                name = self.take()
                if name.kind != "name":
                    raise self.fail(name, "expected a name after '.' (such as .T, the transpose)")
                node = Transpose(node, self.start_of(node), name.end) if name.text == "T" else \
                    Attribute(node, name.text, self.start_of(node), name.end)
            else:
                self.deeper()
                index = self.expression()
                self.depth -= 1
                close = self.expect("]")
                node = Index(node, index, self.start_of(node), close.end)
        if self.peek().kind == "op" and self.peek().text == "(":
            raise ParseError(f"only named functions may be called (sqrt, exp, ln, log, sin, cos, erf, tanh; [define] "
                             f"adds the model functions), at column {node.column} in {snippet(self.text)}")
        return node

    def atom(self) -> Node:
        token = self.take()
        if token.kind == "number":
            value, decimals = number_value(token.text, self.limits)
            return Number(token.text, value, decimals, token.start, token.end)
        if token.kind == "string":
            return String(token.text[1:-1], token.start, token.end)
        if token.kind == "name":
            if self.peek().kind == "op" and self.peek().text == "(":
                return self.call(token)
            return Name(token.text, token.start, token.end)
        if token.kind == "op" and token.text == "(":
            if self.peek().text == ")":
                raise self.fail(token, "empty parentheses () are not allowed")
            self.deeper()
            node = self.expression()
            if self.peek().text == ",":
                raise self.fail(self.peek(), "a tuple is not allowed (a list of values is written in brackets)")
            close = self.expect(")")
            self.depth -= 1
            self.opened[id(node)] = token.start
            self.closed[id(node)] = close.end
            return node
        if token.kind == "op" and token.text == "[":
            return self.matrix(token)
        if token.kind == "end":
            raise self.fail(token, "malformed expression: it ends too early")
        if token.text == ",":
            raise self.fail(token, "missing entry before ','")
        raise self.fail(token, f"malformed expression: unexpected '{shown(token.text, 20)}'")

    def call(self, name: _Token) -> Call:
        self.take()  # "("
        self.deeper()
        args: list[Node] = []
        keywords: list[Keyword] = []
        while self.peek().text != ")":
            token = self.peek()
            if token.kind == "name" and self.tokens[self.at + 1].text == "=":
                self.at += 2
                value = self.expression()
                if any(k.name == token.text for k in keywords):
                    raise self.fail(token, f"'{name.text}': argument '{token.text}' given twice")
                keywords.append(Keyword(token.text, value, token.start, value.end))
            else:
                if token.text in ("*", "**"):
                    raise self.fail(token, "'*' and '**' arguments are not allowed")
                argument = self.expression()
                if keywords:
                    raise self.fail(token, "a positional argument after a keyword argument")
                args.append(argument)
            if self.peek().text != ",":
                break
            self.take()
        close = self.expect(")")
        self.depth -= 1
        return Call(name.text, tuple(args), tuple(keywords), name.start, close.end)

    def matrix(self, opening: _Token) -> Matrix:
        self.deeper()
        items: list[Node] = []
        while self.peek().text != "]":
            items.append(self.expression())
            if len(items) > self.limits.max_entries:
                raise InputLimitError(f"more than {self.limits.max_entries} entries in {snippet(self.text)}")
            if self.peek().text != ",":
                break
            self.take()
        close = self.expect("]")
        self.depth -= 1
        return Matrix(tuple(items), opening.start, close.end)


_DECIMAL_COMMA = re.compile(r"^\s*([+-]?[0-9]+),([0-9]+)\s*$")


def _bare_list(text: str, column: int) -> ParseError:
    """A top-level comma: the value needed brackets (or was a decimal comma)."""
    match = _DECIMAL_COMMA.match(text)
    if match:  # "0,245": a decimal comma, as many countries write it
        whole, fraction = match.groups()
        return ParseError(f"a decimal comma is not read: write {whole}.{fraction} (or [{whole}, {fraction}] for a list)")
    pieces = ", ".join(shown(piece.strip(), 20) for piece in text.split(",")[:4])
    more = ", ..." if text.count(",") > 3 else ""
    return ParseError(f"a list needs brackets: write [{pieces}{more}] (a bare comma at column {column})")


def left_chain(node: Node, ops: str) -> tuple[Node, list[tuple[BinOp, Node]]]:
    """A left-nested chain of operators in ``ops`` (``a - b + c``) as its first operand and
    the (operator node, right operand) pairs after it, found without recursion.

    >>> first, rest = left_chain(parse("1 - 2 + 3"), "+-")
    >>> first.text, [(op.op, right.text) for op, right in rest]
    ('1', [('-', '2'), ('+', '3')])
    """
    rest: list[tuple[BinOp, Node]] = []
    while isinstance(node, BinOp) and node.op in ops:
        rest.append((node, node.right))
        node = node.left
    rest.reverse()
    return node, rest


def matrix_entries(node: Matrix, text: str) -> tuple[tuple[int, ...], list[Node]]:
    """The shape of a bracketed matrix and its entries in reading order: ``(k,)`` for a flat
    list ``[1, 2]`` (one row), ``(rows, cols)`` for ``[[1, 2], [3, 4]]``.  An empty matrix,
    ragged rows or a nested entry is a :class:`ParseError` naming the column -- the one
    rule for every front end (the evaluator's values, the claims' written numbers).

    >>> matrix_entries(parse("[[1, 2], [3, 4]]"), "")[0], matrix_entries(parse("[1, 2, 3]"), "")[0]
    ((2, 2), (3,))
    """
    def fail(at: Node, what: str) -> ParseError:
        return ParseError(f"{what} at column {at.column} in {snippet(text)}")

    if not node.items:
        raise fail(node, "empty matrix")
    nested = isinstance(node.items[0], Matrix)
    rows = node.items if nested else (node,)
    width = len(rows[0].items) if isinstance(rows[0], Matrix) else 0
    if width == 0:
        raise fail(node, "empty matrix")
    entries: list[Node] = []
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, Matrix):
            raise fail(row, f"row {number} is not a list")
        if len(row.items) != width:
            raise fail(row, f"row {number} has {len(row.items)} entries, row 1 has {width}")
        for entry in row.items:
            if isinstance(entry, Matrix):
                raise fail(entry, "a matrix entry must be a number, not a matrix")
        entries.extend(row.items)
    return ((len(rows), width) if nested else (width,)), entries


def size(node: Node) -> int:
    """The number of nodes of a tree: the one size measure of written input.

    >>> size(parse("[[1, 2], [3, x + 1]]"))
    9
    """
    count, stack = 0, [node]
    while stack:
        current = stack.pop()
        count += 1
        for child in _children(current):
            stack.append(child)
    return count


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, BinOp):
        return (node.left, node.right)
    if isinstance(node, (UnaryOp, Transpose, Attribute)):
        return (node.operand,)
    if isinstance(node, Index):
        return (node.operand, node.index)
    if isinstance(node, Call):
        return node.args + tuple(k.value for k in node.keywords)
    if isinstance(node, Keyword):
        return (node.value,)
    if isinstance(node, Matrix):
        return node.items
    return ()


_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "@": 2, "^": 4}


def to_text(node: Node) -> str:
    """A tree written back in the language, for display only (a value is never re-read
    from it): the fewest parentheses that keep its meaning.

    >>> to_text(parse("(1 + 2) * -x^2 - (3 - 4)"))
    '(1 + 2)*-x^2 - (3 - 4)'
    """
    return _text(node, 0)


def _text(node: Node, context: int) -> str:
    if isinstance(node, Number):
        return node.text
    if isinstance(node, Name):
        return node.name
    if isinstance(node, String):
        return repr(node.text)
    if isinstance(node, Matrix):
        return "[" + ", ".join(_text(item, 0) for item in node.items) + "]"
    if isinstance(node, Call):
        parts = [_text(a, 0) for a in node.args] + [f"{k.name} = {_text(k.value, 0)}" for k in node.keywords]
        return f"{node.name}({', '.join(parts)})"
    if isinstance(node, Transpose):
        return _text(node.operand, 5) + ".T"
    if isinstance(node, Attribute):
        return _text(node.operand, 5) + "." + node.name
    if isinstance(node, Index):
        return _text(node.operand, 5) + f"[{_text(node.index, 0)}]"
    if isinstance(node, UnaryOp):
        written = node.op + _text(node.operand, 3)
        return f"({written})" if context > 3 else written
    if isinstance(node, BinOp):
        own = _PRECEDENCE[node.op]
        if node.op == "^":  # right-associative
            written = f"{_text(node.left, own + 1)}^{_text(node.right, own)}"
        else:
            spaced = f" {node.op} " if own == 1 else node.op
            written = f"{_text(node.left, own)}{spaced}{_text(node.right, own + 1)}"
        return f"({written})" if own < context else written
    return "?"
