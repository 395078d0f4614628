"""The first, textual pass of the safe parser: cheap bounds, then Python's tree.

Before anything is built: the text's length, ASCII only (Python would read other digits
and NFKC-fold letters: a fullwidth 'ｅ' becomes the constant e), no control characters,
brackets that match (a mismatch names both columns) and nest at most ``max_depth`` deep,
bounded runs of digits and names, decimal exponents, the count of matrix products, and
the depth of the operation tree.  Only then does :func:`ast.parse` build a tree, which
:mod:`symbolic_attn.exact.parse` walks through its allow-list.

>>> parse_tree("[[1, 2]]", DEFAULT_LIMITS).body.__class__.__name__
'List'
"""

import ast
import re

from symbolic_attn.errors import InputLimitError, ParseError, shown
from symbolic_attn.exact.limits import DEFAULT_LIMITS, Limits  # noqa: F401 -- DEFAULT_LIMITS: for the doctests

__all__ = ["parse_tree", "check_text", "check_brackets", "check_tree_depth", "snippet"]

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


def parse_tree(text: str, limits: Limits) -> ast.Expression:
    """Cheap textual limits first, then Python's parser (which only builds a tree)."""
    check_text(text, limits)
    try:
        tree = ast.parse(text.replace("^", "**").strip(), mode="eval")
    except SyntaxError as error:
        at = f" at column {error.offset}" if error.offset else ""
        raise ParseError(f"malformed expression{at} in {snippet(text)}") from None
    except (MemoryError, RecursionError, ValueError):
        raise InputLimitError(f"expression too complex to parse: {snippet(text)}") from None
    check_tree_depth(tree.body, limits.max_tree_depth, f"expression nested more than {limits.max_tree_depth} "
                     f"operations deep: {snippet(text)}")
    return tree


def check_text(text: str, limits: Limits) -> None:
    """The textual pass every front end of the input language makes before Python's parser
    sees the text (command line, exercise values, ``[define]`` definitions): length, ASCII
    only, no control characters, brackets, runs of digits and names, matrix products and
    decimal exponents, each bounded by ``limits``.

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


def check_tree_depth(node: ast.AST, limit: int, message: str) -> None:
    """Raise :class:`InputLimitError` (``message``) when the ast below ``node`` is deeper than ``limit``.

    Operators nest without brackets too ("1+1+...+1", "- - - 1"): the depth is bounded with
    an explicit stack, before any recursive evaluator sees the tree.

    >>> check_tree_depth(ast.parse("-" * 5 + "1", mode="eval").body, 3, "too deep")
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.InputLimitError: too deep
    """
    stack = [(node, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise InputLimitError(message)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
