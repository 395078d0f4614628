r"""The grammar of one side of a step: LaTeX maths read into a SymPy expression, or refused.

:func:`read_math` reads the text between two relations (``e^{x_i + c} / \sum_j e^{x_j + c}``)
by recursive descent over :mod:`.tokens`; every SymPy object is built directly (``Symbol``,
``Integer``, ``exp``, ``Sum``, :class:`~symbolic_attn.proofs.operators.SoftmaxAt` ...), nothing
is evaluated and no general LaTeX parser guesses.  What is read:

* numbers (``3``, ``0.401`` is exactly 401/1000), declared letters, ``d_k`` and Greek names
  as declared, ``e`` (Euler's number), ``\pi``; entries ``x_j``, ``x_{j+1}``, ``s_{i,j}``, ``s_{ij}``;
* ``+ -``, products ``\cdot``, ``\times``, ``*`` and juxtaposition (``2x``, ``c\,x_i``),
  ``\odot`` (entrywise), ``/`` and ``\frac``, ``\dfrac``, ``\tfrac`` (a fraction as written:
  :class:`~symbolic_attn.proofs.notation.Frac`), powers ``x^2``, ``x^{n-1}``, ``e^{...}``;
* ``\exp``, ``\log`` and ``\ln`` (natural; ``\log_2`` a base), ``\sqrt``, ``\sqrt[3]``;
* ``\sum_{j=1}^{n}``, ``\sum_j`` (bounds from the declared range of ``j``), ``\prod``: the
  summand is the product that follows (``\sum_j x_j + 1`` is ``(\sum_j x_j) + 1``);
* vectors (:mod:`.values`): ``x + c``, ``c x``, ``(\dots)_i``, ``x \cdot y``, ``x^\top y``,
  ``\operatorname{softmax}(v)_i`` (also ``\mathrm``, ``\text``), sequences ``(t_k)_{k=1}^{n}``;
* random variables (declared ``random``, :mod:`.randomness`): ``\mathbb{E}[X]`` (also
  ``\mathbb{E}\left[X\right]``, ``\operatorname{E}``), ``\operatorname{Var}(X)`` (also
  ``\mathrm``, ``\text``), ``\operatorname{Cov}(X, Y)``, kept unevaluated;
* explicit matrices ``bmatrix``/``pmatrix``, transposes ``^\top``, ``^T``, ``^{\mathsf T}``;
* brackets ``( )``, ``[ ]``, ``\left( \right)``, ``\bigl( \Bigr)``; spaces ``\, \; \! \quad``.

What shows differently from what it would mean is refused, never guessed: ``a/b c``, a
``/`` in a summand, ``{a + b}^2`` (braces group invisibly), ``a^23`` (LaTeX shows ``a^{2}3``),
``a^b^c``, ``x^2_i``, ``x_{ij}`` for a vector.  Every reading also passes the one input
language's bounds on a built value (:func:`~symbolic_attn.exact.limits.check_value`).

The rule for letters side by side: ``xy`` (no space) is the product ``x y`` only when every
letter is declared; a run that spells a function (``softmax``, ``exp``, ``log``, ``approx``
...) is refused with the command to write instead, and any other run with an undeclared
letter is refused naming it.  An undeclared letter is always refused with how to declare it.

>>> from symbolic_attn.steps.declarations import parse_declarations
>>> d = parse_declarations("n: positive integer; i, j: integer 1..n; x: real vector n; c: real")
>>> reading = read_math(r"\operatorname{softmax}(x + c)_i", d)
>>> reading.notation
'softmax(c + x[k] for k in 1..n)[i]'
>>> read_math(r"\frac{e^{x_i + c}}{\sum_j e^{x_j + c}}", d).notation
'exp(c + x[i]) / sum(exp(c + x[j]) for j in 1..n)'
>>> read_math(r"\mathrm{softmax}x", d)
Traceback (most recent call last):
...
symbolic_attn.errors.StepReadError: line 1, column 17: softmax needs its argument in brackets: \operatorname{softmax}(x)_i
>>> read_math("softmax(x)_i", d)
Traceback (most recent call last):
...
symbolic_attn.errors.StepReadError: line 1, column 1: the letters 'softmax' side by side would be a product of letters: write \operatorname{softmax}
"""

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import sympy

from symbolic_attn.errors import InputLimitError, StepReadError
from symbolic_attn.exact.limits import DEFAULT_LIMITS, check_value
from symbolic_attn.steps import echo
from symbolic_attn.steps.declarations import GREEK, Declarations
from symbolic_attn.steps.tokens import Token, tokenize
from symbolic_attn.steps.randomness import Cov, Expectation, Var
from symbolic_attn.steps.written import transpose as matrix_transpose
from symbolic_attn.steps.values import (
    Vector, bound_symbol, combine, declared_vector, divide, is_scalar, negate, sequence, softmax_of)

__all__ = ["Reading", "read_math", "MAX_DEPTH", "MAX_POWER_BITS", "MAX_MATRIX_ENTRIES"]

#: Deepest nesting of brackets, groups, scripts and signs.
MAX_DEPTH = 40
#: Largest power of two numbers evaluated, in bits of the result (2^{2^{99}} is refused): its
#: digits stay within what the tokenizer reads back (MAX_NUMBER_DIGITS).
MAX_POWER_BITS = 1300
#: Most entries of an explicit matrix.
MAX_MATRIX_ENTRIES = 400

#: Commands that are only space.
_SPACES = {"\\,", "\\;", "\\!", "\\:", "\\ ", "\\quad", "\\qquad", "\\displaystyle", "\\limits", "\\textstyle"}
#: Sizing commands before a delimiter.
_SIZES = {"\\left", "\\right", "\\big", "\\Big", "\\bigg", "\\Bigg", "\\bigl", "\\bigr", "\\Bigl", "\\Bigr",
          "\\biggl", "\\biggr", "\\Biggl", "\\Biggr", "\\bigm", "\\Bigm"}
_RELATIONS = {"=", "<", ">", "\\le", "\\leq", "\\ge", "\\geq", "\\approx", "\\ne", "\\neq", "\\sim", "\\equiv",
              "\\propto", "\\to", "\\leqslant", "\\geqslant", "\\simeq", "\\cong", "\\ll", "\\gg", "\\lt", "\\gt"}
#: Words that, written as letters side by side, are a function name: the command to write.
_WORDS = {"softmax": "\\operatorname{softmax}", "exp": "\\exp", "log": "\\log", "ln": "\\ln", "sqrt": "\\sqrt",
          "sum": "\\sum", "prod": "\\prod", "approx": "\\approx", "frac": "\\frac", "cdot": "\\cdot",
          "var": "\\operatorname{Var}", "max": "\\max", "min": "\\min", "sin": "\\sin", "cos": "\\cos",
          "tanh": "\\tanh", "begin": "\\begin{...}", "end": "\\end{...}", "le": "\\le", "leq": "\\le",
          "softmaxx": "\\operatorname{softmax}(x)", "relu": "\\operatorname{ReLU}", "mean": "\\operatorname{mean}",
          "sigma": "\\sigma", "alpha": "\\alpha", "pi": "\\pi", "top": "^\\top", "text": "\\text{...}"}
_FUNCTION_STYLES = {"\\operatorname", "\\mathrm", "\\text", "\\textrm", "\\mathit"}
_TRANSPOSE_COMMANDS = {"\\top", "\\intercal", "\\mathsf"}
_UNSUPPORTED = {
    "\\def": "\\def defines a macro: macros are never read",
    "\\newcommand": "\\newcommand defines a macro: macros are never read",
    "\\renewcommand": "\\renewcommand defines a macro: macros are never read",
    "\\input": "\\input reads a file: never done",
    "\\include": "\\include reads a file: never done",
    "\\cdots": "an ellipsis is not a value: write the sum \\sum_{j=1}^{n}",
    "\\ldots": "an ellipsis is not a value: write the sum \\sum_{j=1}^{n}",
    "\\dots": "an ellipsis is not a value: write the sum \\sum_{j=1}^{n}",
    "\\max": "\\max is not read yet",
    "\\min": "\\min is not read yet",
    "\\pm": "\\pm is two values: write each",
    "\\infty": "\\infty is not a number the checker reads",
    "\\partial": "derivatives are not read",
    "\\int": "integrals are not read",
    "\\lim": "limits are not read",
    "\\tag": "\\tag belongs at the end of a row (the document reader keeps it as the reason)",
    "\\not": "\\not before a relation: only \\not= (that is, \\ne) is read",
    "\\implies": "a logical connective between steps is not read: start a new row",
    "\\Rightarrow": "a logical connective between steps is not read: start a new row",
    "\\Longrightarrow": "a logical connective between steps is not read: start a new row",
    "\\iff": "a logical connective between steps is not read: start a new row",
    "\\Leftrightarrow": "a logical connective between steps is not read: start a new row",
    "\\therefore": "a logical connective between steps is not read: start a new row",
    "\\label": "\\label belongs at the end of a row",
    "\\nonumber": "\\nonumber belongs at the end of a row",
}


@dataclass(frozen=True)
class Reading:
    """One side, read: ``expr`` the SymPy value (a scalar expression or an explicit matrix),
    ``notation`` and ``latex`` its echo (:mod:`.echo`), ``decimals`` the digits after the
    point when the side is a single decimal number (``0.401``: 3; the written precision of
    an approximate claim), else None; ``text``, ``line``, ``column`` where it was read."""

    expr: Any
    notation: str
    latex: str
    decimals: int | None
    text: str
    line: int
    column: int
    #: What the side needs to be a real number, as written: ``("nonnegative", x)`` under a
    #: root, ``("positive", x)`` under a logarithm or as the base of a power with a
    #: non-integer exponent.  SymPy forgets them (``sqrt(c)**2`` is built as ``c``), so the
    #: reader keeps them and a step is decided only once they are proved.
    conditions: tuple[tuple[str, Any], ...] = ()


def read_math(text: str, declarations: Declarations, *, line: int = 1, column: int = 1) -> Reading:
    r"""``text`` (one side of a step) read with ``declarations``; ``line``, ``column`` are the
    position of its first character in the file.  Raises
    :class:`~symbolic_attn.errors.StepReadError` with the reason and the column of the
    offending token.

    >>> from symbolic_attn.steps.declarations import parse_declarations
    >>> read_math("0.401", parse_declarations("")).decimals
    3
    """
    tokens = _normalise(tokenize(text, line=line, column=column))
    parser = _Parser(tokens, declarations, (line, column), text)
    if not tokens:
        parser.fail_at(None, "an empty side: there is nothing to read")
    value = parser.expression()
    if parser.peek() is not None:
        parser.refuse_here()
    if isinstance(value, Vector):
        parser.fail_at(tokens[0], "this side is a vector: compare entries, e.g. (...)_i")
    try:  # the one input language's bounds on a built value (nodes, digits, exponents, degree)
        check_value(value, DEFAULT_LIMITS)
    except InputLimitError as error:
        parser.fail_at(tokens[0], f"{error}: the checker would have to expand it")
    decimals = None
    numbers = [t for t in tokens if t.kind == "number"]
    if len(numbers) == 1 and all(t.kind in ("number", "-", "+") for t in tokens) and "." in numbers[0].text:
        decimals = len(numbers[0].text.partition(".")[2])
    return Reading(value, echo.notation(value), echo.latex(value), decimals, text, line, column,
                   tuple(dict.fromkeys(parser.conditions)))


def _normalise(tokens: list[Token]) -> list[Token]:
    """Spaces dropped (the next token remembers it followed a space), sizing commands dropped
    before the delimiter they size."""
    kept: list[Token] = []
    space = False
    for position, token in enumerate(tokens):
        if token.kind == "command" and token.text in _SPACES:
            space = True
            continue
        if token.kind == "command" and token.text in _SIZES:
            following = tokens[position + 1] if position + 1 < len(tokens) else None
            if following is None or following.kind not in ("(", ")", "[", "]"):
                shown = following.text if following is not None else "the end"
                raise StepReadError(token.line, token.column, f"{token.text} before {shown}: only ( ) [ ] are read "
                                    "as sized brackets")
            space = space or token.space_before
            continue
        if space and not token.space_before:
            token = Token(token.kind, token.text, token.line, token.column, True)
        kept.append(token)
        space = False
    return kept


_CLOSING = {"(": ")", "[": "]", "{": "}"}


class _Parser:
    def __init__(self, tokens: list[Token], declarations: Declarations, start: tuple[int, int], text: str):
        self.tokens, self.declarations, self.start, self.text = tokens, declarations, start, text
        self.position = 0
        self.depth = 0
        self.scope: dict[str, Any] = {}  # bound indices (sums, sequences) by name
        self.checked_runs: set[int] = set()  # id() of the letter tokens whose run was checked
        self.conditions: list[tuple[str, Any]] = []  # what the side needs to be real (Reading.conditions)

    # ------------------------------------------------------------------ helpers

    def peek(self, ahead: int = 0) -> Token | None:
        position = self.position + ahead
        return self.tokens[position] if position < len(self.tokens) else None

    def advance(self) -> Token:
        token = self.tokens[self.position]
        self.position += 1
        return token

    def fail_at(self, token: Token | None, reason: str) -> NoReturn:
        if token is None:
            if self.tokens:
                last = self.tokens[-1]
                line, column = last.line, last.column + len(last.text)
            else:
                line, column = self.start
            raise StepReadError(line, column, reason)
        raise StepReadError(token.line, token.column, reason)

    def failer(self, token: Token | None) -> Callable[[str], NoReturn]:
        return lambda reason: self.fail_at(token, reason)

    def refuse_here(self) -> NoReturn:
        token = self.peek()
        if token is None:
            self.fail_at(None, "the side ends too early")
        if token.kind in ("=", "<", ">") or token.text in _RELATIONS:
            self.fail_at(token, f"a relation {token.text} inside one side: a chain is split at relations only at "
                         "the top level of a row")
        if token.kind == "rowbreak":
            self.fail_at(token, "a row break \\\\ inside a side (inside braces or a fraction)")
        if token.kind == "&":
            self.fail_at(token, "an alignment & inside a side (inside braces or brackets)")
        if token.kind in (")", "]", "}"):
            self.fail_at(token, f"unbalanced {token.text}: nothing opened it")
        self.fail_at(token, f"unexpected {token.text!r}")

    def expect(self, kind: str, what: str) -> Token:
        token = self.peek()
        if token is None or token.kind != kind:
            found = "the end" if token is None else repr(token.text)
            self.fail_at(token, f"expected {what}, found {found}")
        return self.advance()

    def enter(self, token: Token | None) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail_at(token, f"nested more than {MAX_DEPTH} deep")

    def taken(self) -> set[str]:
        return set(self.declarations.entries) | set(self.scope)

    # ------------------------------------------------------------------ grammar

    def expression(self) -> Any:
        value = self.term()
        while (token := self.peek()) is not None and token.kind in ("+", "-"):
            self.advance()
            right = self.term()
            value = combine(token.kind, value, right, self.failer(token), self.taken())
        return value

    def _ends_term(self, token: Token | None) -> bool:
        if token is None:
            return True
        if token.kind in ("+", "-", ")", "]", "}", "&", "rowbreak", ",", "=", "<", ">", "|"):
            return True
        return token.kind == "command" and (token.text in _RELATIONS or token.text == "\\end")

    def term(self, summand: bool = False) -> Any:
        """A product of factors; ``summand`` for the body of a sum or product, where ``/`` is
        ambiguous (``\\sum_j x_j / n``: the sum over j of x_j/n, or the sum divided by n?)."""
        value = self.signed()
        after_division = False
        while not self._ends_term(token := self.peek()):
            assert token is not None
            if token.text in ("\\cdot", "\\times", "*", "\\odot"):
                self.advance()
                right = self.signed()
                if token.text == "\\times" and isinstance(value, Vector) and isinstance(right, Vector):
                    self.fail_at(token, "\\times between two vectors (a cross product) is not read")
                op = "odot" if token.text == "\\odot" else ("dot" if token.text == "\\cdot" else "*")
                value = combine(op, value, right, self.failer(token), self.taken())
                after_division = False
            elif token.kind == "/":
                if summand:
                    self.fail_at(token, "a / in the summand of a sum or product is ambiguous: write \\frac{...}{...} "
                                 "or brackets")
                self.advance()
                value = divide(value, self.signed(), self.failer(token))
                after_division = True
            else:
                if after_division:
                    self.fail_at(token, "a product after '/' is ambiguous (a/b c): write \\frac{...}{...} or brackets")
                if token.kind == "number" and not token.space_before:
                    previous = self.tokens[self.position - 1]
                    if previous.kind == "letter":
                        self.fail_at(token, f"a number after a letter ({previous.text}{token.text}): write "
                                     f"{previous.text}_{token.text} for an entry, or the number first")
                if token.kind == "number" and self.tokens[self.position - 1].kind == "number":
                    self.fail_at(token, "two numbers side by side: write \\cdot between them")
                if token.kind == "number" and self.tokens[self.position - 1].kind in (")", "]", "}"):
                    self.fail_at(token, "a number after a bracket or a script ((a+b)2, x^{2}3): write \\cdot, or "
                                 "the number first")
                right = self.factor()
                value = combine("*", value, right, self.failer(token), self.taken())
        return value

    def signed(self) -> Any:
        token = self.peek()
        if token is not None and token.kind in ("-", "+"):
            self.advance()
            self.enter(token)
            value = self.signed()
            self.depth -= 1
            return negate(value) if token.kind == "-" else value
        return self.factor()

    def factor(self) -> Any:
        token = self.peek()
        if token is None:
            self.fail_at(None, "the side ends where a value was expected")
        if token.kind == "command" and token.text in ("\\sum", "\\prod"):
            return self.big_operator()
        value, base_token = self.atom()
        return self.scripts(value, base_token)

    # ------------------------------------------------------------------ scripts

    def script_group(self) -> tuple[int, int]:
        """The token range of a script's argument: a brace group or one token."""
        token = self.peek()
        if token is None:
            self.fail_at(None, "a script ^ or _ with nothing after it")
        if token.kind == "{":
            return self.group_range()
        if token.kind == "number" and len(token.text) > 1:
            self.fail_at(token, f"a script of several digits without braces shows only the first ({token.text[0]}): "
                         f"write {{{token.text}}}")
        if token.kind in ("letter", "number") or (token.kind == "command" and token.text not in ("\\frac", "\\sqrt")):
            self.advance()
            return self.position - 1, self.position
        self.fail_at(token, f"a script cannot start with {token.text!r}: put it in braces")

    def group_range(self) -> tuple[int, int]:
        """The inside of the brace group at the cursor; the cursor moves past its '}'."""
        opening = self.expect("{", "{")
        start, depth = self.position, 1
        while self.position < len(self.tokens):
            kind = self.tokens[self.position].kind
            depth += (kind == "{") - (kind == "}")
            if depth == 0:
                self.position += 1
                return start, self.position - 1
            self.position += 1
        self.fail_at(opening, "unbalanced {: it is never closed")

    def sub_parser_value(self, span: tuple[int, int], read: Callable[[], Any] | None = None) -> Any:
        """Read the tokens of ``span`` completely (with ``read``, an expression by default)."""
        saved_tokens, saved_position = self.tokens, self.position
        inside = self.tokens[span[0]:span[1]]
        if not inside:
            self.fail_at(self.tokens[max(span[0] - 1, 0)], "an empty group {}")
        self.tokens, self.position = inside, 0
        self.enter(inside[0])
        try:
            value = (read or self.expression)()
            if self.peek() is not None:
                self.refuse_here()
        finally:
            self.depth -= 1
            self.tokens, self.position = saved_tokens, saved_position
        return value

    def scripts(self, value: Any, base_token: Token) -> Any:
        seen: set[str] = set()
        while (token := self.peek()) is not None and token.kind in ("^", "_", "'", "!"):
            if token.kind in ("'", "!"):
                self.fail_at(token, "a prime or factorial is not read" if token.kind == "'" else
                             "a factorial ! is not read")
            if token.kind in seen:  # LaTeX refuses a^b^c and x_i_j ("double superscript"): so does the reader
                self.fail_at(token, f"a second {token.kind} on one value: write braces, e.g. {{a^b}}^c or a^{{b^c}}")
            if token.kind == "_" and "^" in seen:
                self.fail_at(token, "a subscript after a superscript (x^2_i shows as x_i^2): write the subscript first")
            seen.add(token.kind)
            self.advance()
            if token.kind == "_":
                value = self.entry_of(value, token, self.script_group())
            else:
                value = self.power(value, token, self.script_group())
        return value

    def is_transpose(self, span: tuple[int, int]) -> bool:
        inside = self.tokens[span[0]:span[1]]
        texts = [t.text for t in inside]
        return texts in (["\\top"], ["\\intercal"], ["T"], ["\\mathsf", "T"], ["\\mathsf", "{", "T", "}"])

    def power(self, base: Any, token: Token, span: tuple[int, int]) -> Any:
        inside = self.tokens[span[0]:span[1]]
        if inside and inside[0].kind == "(" and self.matching(span[0]) == span[1] - 1:
            self.fail_at(token, "a superscript in brackets (x^{(i)}) names a sample in ML texts, it is not read as a "
                         "power: write x^{i} for a power")
        transpose = self.is_transpose(span)
        written = [t.text for t in self.tokens[span[0]:span[1]]]
        if transpose and not is_scalar(base):
            if isinstance(base, Vector):
                return Vector(base.entry, base.length, not base.transposed)
            return matrix_transpose(base)  # base.T, its written form noted (steps.written)
        if transpose and written != ["T"]:
            self.fail_at(token, "a transpose of a scalar")
        if not is_scalar(base):
            self.fail_at(token, "a power of a vector or a matrix is not read (write entries)")
        exponent = self.sub_parser_value(span)
        if not is_scalar(exponent):
            self.fail_at(token, "an exponent that is a vector or a matrix")
        if base is sympy.E:
            return sympy.exp(exponent)
        if base.is_number and exponent.is_number:
            self.check_power_size(base, exponent, token)
        if exponent.is_Integer and exponent < 0 and not base.is_number:
            return divide(sympy.Integer(1), base ** -exponent, self.failer(token))
        if base == 0 and exponent.is_number and exponent.is_negative:
            self.fail_at(token, "a negative power of zero")
        if exponent.is_integer is not True and base.is_positive is not True:  # x^{1/2}, x^t: real for x > 0
            self.conditions.append(("positive" if exponent.is_nonnegative is not True else "nonnegative", base))
        return sympy.Pow(base, exponent)

    def check_power_size(self, base: Any, exponent: Any, token: Token) -> None:
        if not (base.is_Rational and exponent.is_Rational):
            return
        size = max(abs(int(base.p)), abs(int(base.q)), 2)
        bits = abs(exponent) * math.log2(size) if abs(exponent) < 10**30 else math.inf
        if bits > MAX_POWER_BITS:
            self.fail_at(token, f"a power of numbers with more than {MAX_POWER_BITS} bits is not evaluated: "
                         "write a smaller number")

    def entry_of(self, value: Any, token: Token, span: tuple[int, int]) -> Any:
        if isinstance(value, Vector):
            self.check_no_letter_run(span, "a vector")
            index = self.sub_parser_value(span)
            return value.entry(self.index_value(index, value.length, token))
        if isinstance(value, sympy.MatrixBase):
            self.fail_at(token, "an entry of an explicit matrix is not read: write the entry itself")
        self.fail_at(token, f"a subscript on {echo.notation(value)}, which has no entries")

    def check_no_letter_run(self, span: tuple[int, int], what: str) -> None:
        inside = self.tokens[span[0]:span[1]]
        for first, second in zip(inside, inside[1:]):
            if first.kind == "letter" and second.kind == "letter" and not second.space_before:
                self.fail_at(first, f"{what} has one index: {first.text}{second.text} would be the product: "
                             f"write {first.text} \\cdot {second.text} for a product, or declare a matrix")

    def index_value(self, index: Any, length: Any, token: Token) -> Any:
        if not is_scalar(index) or index.is_integer is not True:
            self.fail_at(token, f"the index {echo.notation(index)} is not an integer")
        outside = (index - 1).is_negative or (index - length).is_positive  # decided by the flags, never guessed
        if outside:
            self.fail_at(token, f"the index {echo.notation(index)} is outside 1..{echo.notation(length)}")
        name = getattr(index, "name", None)
        if name in self.declarations.ranges and name not in self.scope:
            low, high = self.declarations.ranges[name]
            if (low, high) != (1, length):
                self.fail_at(token, f"{name} ranges over {echo.notation(low)}..{echo.notation(high)}, but the vector "
                             f"has entries 1..{echo.notation(length)}")
        return index

    # ------------------------------------------------------------------ atoms

    def atom(self) -> tuple[Any, Token]:
        token = self.peek()
        assert token is not None
        kind = token.kind
        if kind == "number":
            self.advance()
            return self.number(token), token
        if kind == "letter":
            return self.letter(), token
        if kind in ("(", "["):
            return self.bracketed(), token
        if kind == "{":
            return self.braced(), token
        if kind == "command":
            return self.command(), token
        self.refuse_here()

    def number(self, token: Token) -> Any:
        whole, _, fraction = token.text.partition(".")
        if fraction:
            return sympy.Rational(int(whole + fraction), 10 ** len(fraction))
        return sympy.Integer(int(whole))

    def braced(self) -> Any:
        """A bare brace group: braces group invisibly, so only a single value may be inside
        ({x}_{k} as SymPy prints it); {a + b} would show as a + b."""
        opening = self.peek()
        span = self.group_range()
        inside = self.tokens[span[0]:span[1]]
        if len(inside) == 1 and inside[0].kind == "letter" or (
                len(inside) == 1 and inside[0].kind == "command" and inside[0].text[1:] in GREEK):
            name = self.name_token_text(inside[0])
            if name in self.declarations.shapes and name not in self.scope:  # {s}_{i,j}, as SymPy prints it
                return self.matrix_entry(str(name), self.declarations.symbols[str(name)], inside[0])
            saved_tokens, saved_position = self.tokens, self.position
            self.tokens, self.position = inside, 0
            try:
                return self.letter()
            finally:
                self.tokens, self.position = saved_tokens, saved_position

        def single() -> Any:
            return self.factor()

        try:
            return self.sub_parser_value(span, single)
        except StepReadError as error:
            if "unexpected" in error.reason or "inside one side" in error.reason or "ends" in error.reason:
                self.fail_at(opening, "braces { } group invisibly ({a + b}^2 shows as a + b^2): write brackets "
                             "\\left( ... \\right) around more than one value")
            raise

    def matching(self, position: int) -> int:
        """The position of the bracket closing the one at ``position``."""
        opening = self.tokens[position]
        depth = 0
        for index in range(position, len(self.tokens)):
            kind = self.tokens[index].kind
            if kind in ("(", "[", "{"):
                depth += 1
            elif kind in (")", "]", "}"):
                depth -= 1
                if depth == 0:
                    if kind != _CLOSING[opening.kind]:
                        self.fail_at(self.tokens[index], f"{opening.text} closed by {kind}")
                    return index
        self.fail_at(opening, f"unbalanced {opening.text}: it is never closed")

    def bracketed(self) -> Any:
        opening = self.advance()
        close = self.matching(self.position - 1)
        after = self.tokens[close + 1:close + 4]
        if (len(after) == 3 and after[0].kind == "_" and after[1].kind == "{"
                and self.position < close and self._is_sequence_subscript(close + 2)):
            return self.sequence_literal(opening, close)
        value = self.sub_parser_value((self.position, close))
        self.position = close + 1
        return value

    def _is_sequence_subscript(self, brace: int) -> bool:
        following = self.tokens[brace + 1:brace + 3]
        return len(following) == 2 and following[0].kind in ("letter", "command") and following[1].kind == "="

    def sequence_literal(self, opening: Token, close: int) -> Any:
        """``(t_k)_{k=1}^{n}``: the vector of the terms, ``k`` bound inside."""
        body_span = (self.position, close)
        self.position = close + 1
        name, low, high = self.limits(opening)
        if low != 1:
            self.fail_at(opening, "a sequence (..)_{k=a}^{b} is read only from 1: write (..)_{k=1}^{n}")
        index = self.binder(name, low, opening)
        body = self.with_bound(name, index, lambda: self.sub_parser_value(body_span))
        if not is_scalar(body):
            self.fail_at(opening, "a sequence of vectors is not read")
        return sequence(body, index, high)

    def with_bound(self, name: str, index: Any, read: Callable[[], Any]) -> Any:
        saved = self.scope.get(name)
        self.scope[name] = index
        try:
            return read()
        finally:
            if saved is None:
                self.scope.pop(name)
            else:
                self.scope[name] = saved

    # ------------------------------------------------------------------ letters

    def name_token_text(self, token: Token) -> str | None:
        if token.kind == "letter":
            return token.text
        if token.kind == "command" and token.text[1:] in GREEK:
            return token.text[1:]
        return None

    def letter(self) -> Any:
        token = self.advance()
        name = self.name_token_text(token)
        assert name is not None
        if token.kind == "letter":
            self.check_letter_run(token)
        subscript = self.peek()
        if subscript is not None and subscript.kind == "_":
            declared = self.subscripted_name(name)
            if declared is not None:
                return declared
        if name in self.scope:
            return self.scope[name]
        if name == "e" and token.kind == "letter":
            self.refuse_scientific_notation(token)
            following = self.peek()
            if following is not None and following.kind == "_":
                self.fail_at(following, "e is Euler's number: it has no entries (e_i is not read)")
            return sympy.E
        entry = self.declarations.entries.get(name)
        if entry is None:
            self.fail_at(token, f"undeclared letter {name}: declare it, e.g. --symbols '{name}: real' "
                         f"(or a line '% symbols: {name}: real' in the file)")
        if entry.shape == "vector":
            return declared_vector(entry.symbol, self.declarations.lengths[name])
        if entry.shape == "matrix":
            return self.matrix_entry(name, entry.symbol, token)
        return entry.symbol

    def refuse_scientific_notation(self, token: Token) -> None:
        """1e-3 and 2e5 would be 1 e - 3 and 2 e 5: refused, not read as 0.001 nor as products with e."""
        at = self.position - 1
        before = self.tokens[at - 1] if at > 0 else None
        after = self.peek()
        if before is None or before.kind != "number" or token.space_before or after is None or after.space_before:
            return
        sign = after.kind in ("-", "+")
        digit = self.peek(1) if sign else after
        if digit is not None and digit.kind == "number" and not digit.space_before:
            self.fail_at(before, f"{before.text}e{'' if not sign else after.text}{digit.text} looks like scientific "
                         f"notation: write {before.text} \\cdot 10^{{{after.text if sign else ''}{digit.text}}}")

    def subscripted_name(self, name: str) -> Any:
        """A declared name with a subscript (``d_k``, ``d_{model}``), the cursor on the ``_``."""
        following = self.peek(1)
        if following is None:
            return None
        if following.kind == "{":
            end = self.position + 2
            parts = []
            while end < len(self.tokens) and self.tokens[end].kind in ("letter", "number"):
                parts.append(self.tokens[end].text)
                end += 1
            if end < len(self.tokens) and self.tokens[end].kind == "}" and parts:
                full = f"{name}_{''.join(parts)}"
                if full in self.declarations.entries and self.declarations.entries[full].shape in ("scalar", "index"):
                    self.position = end + 1
                    return self.declarations.symbols[full]
            return None
        if following.kind in ("letter", "number"):
            full = f"{name}_{following.text}"
            if full in self.declarations.entries and self.declarations.entries[full].shape in ("scalar", "index"):
                self.position += 2
                return self.declarations.symbols[full]
        return None

    def check_letter_run(self, token: Token) -> None:
        start = self.position - 1
        if id(token) in self.checked_runs:
            return  # checked with the run it starts or continues
        end = start + 1
        while end < len(self.tokens) and self.tokens[end].kind == "letter" and not self.tokens[end].space_before:
            end += 1
        if end - start < 2:
            return
        self.checked_runs.update(id(t) for t in self.tokens[start:end])
        word = "".join(t.text for t in self.tokens[start:end])
        for known, command in _WORDS.items():
            if word.lower() == known or (word.lower().startswith(known) and len(known) > 2):
                self.fail_at(token, f"the letters '{word}' side by side would be a product of letters: write {command}")
        for letter_token in self.tokens[start:end]:
            letter = letter_token.text
            if letter not in self.declarations.entries and letter not in self.scope:
                why = "e is Euler's number" if letter == "e" else f"{letter} is not declared"
                self.fail_at(letter_token, f"the letters '{word}' side by side are read as a product only when every "
                             f"letter is declared ({why}): declare it, or separate the factors (\\cdot)")

    def matrix_entry(self, name: str, base: Any, token: Token) -> Any:
        underscore = self.peek()
        if underscore is None or underscore.kind != "_":
            self.fail_at(token, f"{name} is a matrix: write an entry {name}_{{i,j}}")
        self.advance()
        span = self.script_group()
        inside = self.tokens[span[0]:span[1]]
        rows, columns = self.declarations.shapes[name]
        commas = [k for k, t in enumerate(inside) if t.kind == ","]
        if len(commas) == 1:
            spans = [(span[0], span[0] + commas[0]), (span[0] + commas[0] + 1, span[1])]
            indices = [self.sub_parser_value(part) for part in spans]
        elif not commas and len(inside) == 2 and all(
                t.kind == "letter" or (t.kind == "number" and len(t.text) == 1) for t in inside):
            indices = [self.sub_parser_value((span[0] + k, span[0] + k + 1)) for k in range(2)]
        else:
            self.fail_at(underscore, f"{name} is a matrix: write its entry as {name}_{{i,j}} (two indices, a comma "
                         "between them)")
        return base[self.index_value(indices[0], rows, underscore), self.index_value(indices[1], columns, underscore)]

    # ------------------------------------------------------------------ commands

    def command(self) -> Any:
        token = self.peek()
        assert token is not None
        text = token.text
        if text[1:] in GREEK:
            return self.letter()
        self.advance()
        if text == "\\pi":
            return sympy.pi
        if text in ("\\frac", "\\dfrac", "\\tfrac"):
            self.refuse_derivative(token)
            numerator = self.argument(token, "numerator")
            denominator = self.argument(token, "denominator")
            return divide(numerator, denominator, self.failer(token))
        if text == "\\sqrt":
            return self.square_root(token)
        if text in ("\\exp", "\\log", "\\ln"):
            return self.function(token, text[1:])
        if text in _FUNCTION_STYLES:
            return self.named_function(token)
        if text == "\\mathbb":
            word = self.word_of_group(token)
            if word != "E":
                self.fail_at(token, f"\\mathbb{{{word}}} is not read: only \\mathbb{{E}}[X], an expectation")
            return self.random_operator(token, "E")
        if text == "\\begin":
            return self.matrix(token)
        if text in ("\\operatorname*",):
            self.fail_at(token, "\\operatorname* is not read")
        if text in ("\\mathbf", "\\boldsymbol", "\\vec", "\\bm"):
            self.fail_at(token, f"{text} is not read: write the letter itself (declared as a vector or a matrix)")
        if text in _UNSUPPORTED:
            self.fail_at(token, _UNSUPPORTED[text])
        if text in _RELATIONS:
            self.position -= 1
            self.refuse_here()
        if text == "\\end":
            self.fail_at(token, "\\end without \\begin")
        if text == "\\{" or text == "\\}":
            self.fail_at(token, "braces \\{ \\} (a set) are not read")
        self.fail_at(token, f"unknown command {text}: it is not part of the maths the reader knows")

    def refuse_derivative(self, token: Token) -> None:
        """\\frac{d}{dx}: with d and x declared it would be a quotient of products; it is a derivative."""
        texts = [t.text for t in self.tokens[self.position:self.position + 6]]
        if texts[:3] == ["{", "d", "}"] or (texts[:2] == ["{", "d"] and len(texts) > 2 and texts[2] != "_"):
            close = self.position + 1
            depth = 0
            for index in range(self.position, len(self.tokens)):
                depth += (self.tokens[index].kind == "{") - (self.tokens[index].kind == "}")
                if depth == 0:
                    close = index
                    break
            following = [t for t in self.tokens[close + 1:close + 4]]
            if (len(following) == 3 and following[0].kind == "{" and following[1].text == "d"
                    and following[2].kind == "letter"):
                self.fail_at(token, "\\frac{d}{dx} is a derivative: derivatives are not read")

    def argument(self, token: Token, what: str) -> Any:
        following = self.peek()
        if following is None or following.kind != "{":
            self.fail_at(following if following is not None else token,
                         f"{token.text} needs its {what} in braces: {token.text}{{...}}{{...}}")
        return self.sub_parser_value(self.group_range())

    def square_root(self, token: Token) -> Any:
        degree = None
        following = self.peek()
        if following is not None and following.kind == "[":
            close = self.matching(self.position)
            degree = self.sub_parser_value((self.position + 1, close))
            self.position = close + 1
            if not (is_scalar(degree) and degree.is_Integer and degree >= 2):
                self.fail_at(following, "the degree of a root must be an integer of at least 2")
        value = self.argument(token, "argument")
        if not is_scalar(value):
            self.fail_at(token, "a root of a vector or a matrix")
        if value.is_number and value.is_negative:
            self.fail_at(token, "the root of a negative number")
        if value.is_nonnegative is not True:
            self.conditions.append(("nonnegative", value))
        return sympy.sqrt(value) if degree is None else sympy.root(value, degree)

    def function_argument(self, token: Token, name: str) -> Any:
        """The argument of ``\\exp``, ``\\log``, ``\\ln``, softmax: brackets, a brace group, or
        one value with its scripts (``\\log x_i``)."""
        following = self.peek()
        if following is None:
            self.fail_at(token, f"{name} without an argument")
        if following.kind in ("(", "["):
            return self.bracketed()
        if following.kind == "{":
            shown_bracketed = self.bracketed_group_follows()
            value = self.braced()  # \log{x + 1} would show as log x + 1: one value only
        elif name == "softmax":
            self.fail_at(following, "softmax needs its argument in brackets: \\operatorname{softmax}(x)_i")
        elif following.kind in ("letter", "number") or (following.kind == "command" and following.text[1:] in GREEK):
            shown_bracketed = False
            atom, base_token = self.atom()
            value = self.scripts(atom, base_token)
        else:
            self.fail_at(following, f"the argument of {name} must be in brackets: \\{name}(...)")
        after = self.peek()
        if not shown_bracketed and not self._ends_term(after):
            assert after is not None
            self.fail_at(after, f"\\{name} x y is ambiguous (\\{name}(x y) or (\\{name} x) y): write brackets")
        return value

    def bracketed_group_follows(self) -> bool:
        """Whether the brace group at the cursor holds exactly one bracketed group: {\\left(t\\right)}."""
        opening = self.position
        if self.peek(1) is None or self.tokens[opening + 1].kind not in ("(", "["):
            return False
        close = self.matching(opening + 1)
        return close + 1 < len(self.tokens) and self.tokens[close + 1].kind == "}"

    def function(self, token: Token, name: str) -> Any:
        base = None
        following = self.peek()
        if following is not None and following.kind == "^":
            self.fail_at(following, f"a power written on \\{name} (\\{name}^2 x): write (\\{name} x)^2")
        if following is not None and following.kind == "_":
            if name != "log":
                self.fail_at(following, f"\\{name} takes no base")
            self.advance()
            base = self.sub_parser_value(self.script_group())
            if not (is_scalar(base) and base.is_number and base.is_positive and base != 1):
                self.fail_at(following, "the base of a logarithm must be a positive number other than 1")
        argument = self.function_argument(token, name)
        if not is_scalar(argument):
            self.fail_at(token, f"\\{name} of a vector or a matrix is not read: write an entry")
        if name == "exp":
            return sympy.exp(argument)
        if argument.is_number and argument.is_nonpositive:
            self.fail_at(token, "the logarithm of a number that is not positive")
        if argument.is_positive is not True:
            self.conditions.append(("positive", argument))
        return sympy.log(argument) if base is None else divide(sympy.log(argument), sympy.log(base),
                                                              self.failer(token))

    def word_of_group(self, token: Token) -> str:
        following = self.peek()
        if following is None or following.kind != "{":
            self.fail_at(token, f"{token.text} needs a name in braces: {token.text}{{softmax}}")
        span = self.group_range()
        inside = self.tokens[span[0]:span[1]]
        if not inside or not all(t.kind == "letter" for t in inside):
            self.fail_at(token, f"{token.text}{{...}} is read only around a function name (letters): prose in "
                         "\\text belongs after \\quad at the end of a row")
        return "".join(t.text for t in inside)

    def named_function(self, token: Token) -> Any:
        word = self.word_of_group(token)
        if word == "softmax":
            argument = self.function_argument(token, "softmax")
            if not isinstance(argument, Vector):
                self.fail_at(token, "softmax of a scalar: its argument must be a vector (declare it 'real vector n')")
            if argument.transposed:
                self.fail_at(token, "softmax of a transposed vector: write softmax(x)_i")
            return softmax_of(argument, self.taken())
        if word in ("exp", "log", "ln"):
            return self.function(token, word)
        if word == "e" and token.text == "\\mathrm":
            return sympy.E
        if word in ("Var", "var", "E"):
            return self.random_operator(token, "Var" if word != "E" else "E")
        if word in ("Cov", "cov"):
            return self.covariance(token)
        self.fail_at(token, f"unknown function {token.text}{{{word}}}: the reader knows softmax, exp, log, ln")

    def random_operator(self, token: Token, name: str) -> Any:
        """``\\mathbb{E}[X]`` (also ``\\mathbb{E}(X)``) or ``\\operatorname{Var}(X)``: the argument in
        brackets, a scalar (:mod:`.randomness`)."""
        following = self.peek()
        shown = "\\mathbb{E}[X]" if name == "E" else "\\operatorname{Var}(X)"
        if following is not None and following.kind in ("_", "^"):
            self.fail_at(following, f"a script on {'the expectation' if name == 'E' else 'Var'} is not read: "
                         f"write {shown}")
        if following is None or following.kind not in ("(", "["):
            self.fail_at(following if following is not None else token,
                         f"the argument of {'an expectation' if name == 'E' else 'a variance'} goes in brackets: "
                         f"{shown}")
        argument = self.bracketed()
        if not is_scalar(argument):
            self.fail_at(token, f"{'the expectation' if name == 'E' else 'the variance'} of a vector or a matrix is "
                         "not read: write an entry")
        return Expectation(argument) if name == "E" else Var(argument)

    def covariance(self, token: Token) -> Any:
        """``\\operatorname{Cov}(X, Y)``: two scalars in brackets, a comma between them."""
        opening = self.peek()
        if opening is None or opening.kind != "(":
            self.fail_at(opening if opening is not None else token,
                         "the arguments of a covariance go in brackets: \\operatorname{Cov}(X, Y)")
        close = self.matching(self.position)
        depth, commas = 0, []
        for position in range(self.position + 1, close):
            kind = self.tokens[position].kind
            depth += (kind in ("(", "[", "{")) - (kind in (")", "]", "}"))
            if depth == 0 and kind == ",":
                commas.append(position)
        if len(commas) != 1:
            self.fail_at(opening, "a covariance has two arguments, a comma between them: \\operatorname{Cov}(X, Y)")
        one = self.sub_parser_value((self.position + 1, commas[0]))
        other = self.sub_parser_value((commas[0] + 1, close))
        self.position = close + 1
        if not (is_scalar(one) and is_scalar(other)):
            self.fail_at(token, "the covariance of a vector or a matrix is not read: write entries")
        return Cov(one, other)

    # ------------------------------------------------------------------ big operators and matrices

    def limits(self, token: Token) -> tuple[str, Any, Any]:
        """``_{k=a}^{b}`` (either order) or ``_k`` (the range declared for ``k``), the cursor on
        the first script mark."""
        lower = upper = None
        for _ in range(2):
            mark = self.peek()
            if mark is None or mark.kind not in ("_", "^"):
                break
            if (lower if mark.kind == "_" else upper) is not None:
                self.fail_at(mark, f"two {mark.kind} scripts")
            self.advance()
            span = self.script_group()
            if mark.kind == "_":
                lower = span
            else:
                upper = span
        if lower is None:
            self.fail_at(token, f"{token.text} without its index: write {token.text}_{{j=1}}^{{n}}")
        inside = self.tokens[lower[0]:lower[1]]
        name = self.name_token_text(inside[0]) if inside else None
        if name is None:
            self.fail_at(token, f"the index of {token.text} must be a letter: {token.text}_{{j=1}}^{{n}}")
        if len(inside) == 1:
            if upper is not None:
                self.fail_at(token, f"{token.text}_{name}^{{...}} has no lower bound: write {token.text}_{{{name}=1}}^{{...}}")
            if name not in self.declarations.ranges:
                self.fail_at(inside[0], f"{token.text}_{name} takes its bounds from the declared range of {name}: "
                             f"declare '{name}: integer 1..n' or write {token.text}_{{{name}=1}}^{{n}}")
            low, high = self.declarations.ranges[name]
            return name, low, high
        if inside[1].kind != "=":
            self.fail_at(inside[1], f"the index of {token.text} is written {token.text}_{{{name}=1}}^{{n}}")
        if upper is None:
            self.fail_at(token, f"{token.text}_{{{name}=...}} without an upper bound ^{{...}}")
        low = self.sub_parser_value((lower[0] + 2, lower[1]))
        high = self.sub_parser_value(upper)
        for bound in (low, high):
            if not is_scalar(bound) or bound.is_integer is not True:
                self.fail_at(token, f"the bound {echo.notation(bound)} of {token.text} is not an integer")
        return name, low, high

    def binder(self, name: str, low: Any, token: Token) -> Any:
        entry = self.declarations.entries.get(name)
        if entry is None:
            return bound_symbol(name, low)
        if entry.shape not in ("scalar", "index") or not entry.symbol.is_integer:
            self.fail_at(token, f"{name} is declared {entry.kind}: the index of a sum must be an integer")
        return entry.symbol

    def big_operator(self) -> Any:
        token = self.advance()
        self.enter(token)
        name, low, high = self.limits(token)
        index = self.binder(name, low, token)
        body = self.with_bound(name, index, lambda: self.term(summand=True))
        self.depth -= 1
        if not is_scalar(body):
            self.fail_at(token, f"{token.text} of vectors or matrices is not read: write the entries")
        return (sympy.Sum if token.text == "\\sum" else sympy.Product)(body, (index, low, high))

    def matrix(self, token: Token) -> Any:
        environment = self.word_of_environment(token)
        if environment not in ("bmatrix", "pmatrix"):
            self.fail_at(token, f"\\begin{{{environment}}} inside a side: only bmatrix and pmatrix are read here "
                         "(align, equation ... are displays: the document reader reads them)")
        self.enter(token)
        rows: list[list[Any]] = [[]]
        count = 0
        while True:
            entry = self.expression()
            if not is_scalar(entry):
                self.fail_at(token, "a matrix entry that is a vector or a matrix")
            rows[-1].append(entry)
            count += 1
            if count > MAX_MATRIX_ENTRIES:
                self.fail_at(token, f"a matrix of more than {MAX_MATRIX_ENTRIES} entries")
            separator = self.peek()
            if separator is None:
                self.fail_at(token, f"\\begin{{{environment}}} is never ended")
            self.advance()
            if separator.kind == "&":
                continue
            if separator.kind == "rowbreak":
                following = self.peek()
                if following is not None and following.text == "\\end":
                    self.advance()
                    break
                rows.append([])
                continue
            if separator.text == "\\end":
                break
            self.position -= 1
            self.refuse_here()
        if self.word_of_environment(token) != environment:
            self.fail_at(token, f"\\begin{{{environment}}} ended by another environment")
        self.depth -= 1
        if len({len(row) for row in rows}) != 1:
            self.fail_at(token, "rows of different lengths in a matrix")
        return sympy.ImmutableMatrix(rows)

    def word_of_environment(self, token: Token) -> str:
        following = self.peek()
        if following is None or following.kind != "{":
            self.fail_at(token, f"{token.text} needs an environment name in braces")
        span = self.group_range()
        inside = self.tokens[span[0]:span[1]]
        if not inside or not all(t.kind in ("letter", "*") for t in inside):
            self.fail_at(token, "an environment name is letters")
        return "".join(t.text for t in inside)
