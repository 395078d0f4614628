r"""Claims: a number written in a solution, and the rule that judges it.

A claim is judged **by how it is written**:

* an integer, a fraction or an exact expression (``"1"``, ``"2/6"``, ``"sqrt(2)/2"``)
  must equal the exact value, decided exactly;
* a decimal with *k* digits after the point (``"0.140"``: k = 3) passes when it is a
  correct rounding: ``|exact - claimed| <= 1/2 * 10^-k`` (a value exactly halfway passes).
  ``"1.52e-3"`` is a decimal too: half a unit of its last written digit.

Every comparison with an irrational value is **certified**: interval bounds
(:mod:`symbolic_attn.exact.certified`, python-flint's arb) at rising precision until the answer is
sure; when the exact value sits exactly on the boundary, an exact proof decides.  No
binary float is ever compared.

A claim may override the rule with ``tolerance`` (absolute), ``relative`` or ``sig_figs``.

Claimed text is data.  Lists are split here by a small tokenizer (so that ``"0.140"``
keeps its three decimals); only a non-decimal atom goes to the safe parser.

>>> c = parse_claimed("[0.401, 0.198, 1/2]")
>>> c.shape, [e.kind for e in c.elements], c.elements[0].decimals
((3,), ['decimal', 'decimal', 'exact'], 3)
>>> judge_element(sympy.Rational(1, 3), parse_claimed("0.333").elements[0]).ok
True
>>> judge_element(sympy.Rational(1, 3), parse_claimed("0.334").elements[0]).ok
False
>>> judge_element(sympy.Rational(1, 8), parse_claimed("0.13").elements[0]).ok  # halfway
True
>>> judge_element(sympy.sqrt(2), parse_claimed("1.414").elements[0]).rule
'3 decimals'
"""

import re
from dataclasses import dataclass
from fractions import Fraction

import sympy

from symbolic_attn.errors import ParseError, ProofError, UndecidedError
from symbolic_attn.exact.convert import to_exact
from symbolic_attn.exact import certified as numeric
from symbolic_attn.exact.parse import exact_decimal, parse_expression

__all__ = [
    "QUANTITIES",
    "Element",
    "Claimed",
    "Rule",
    "Claim",
    "ElementVerdict",
    "parse_claimed",
    "parse_rule",
    "judge_element",
    "judge_values",
    "rule_text",
    "select",
    "MAX_CLAIM_TEXT",
]

#: The quantities a claim may name, in the order attention computes them.
QUANTITIES = ("query", "key", "value", "scores", "scaled", "weights", "output")

MAX_CLAIM_TEXT = 100_000  # characters in one claimed value (a 64x64 matrix of decimals fits)
MAX_ATOM_TEXT = 2_000  # characters in one claimed number
MAX_DECIMAL_DIGITS = 400  # digits in one claimed decimal (certification cost grows with it)
MAX_ELEMENTS = 4_096
_INTEGER = re.compile(r"^[+-]?\d+$")
_DECIMAL = re.compile(r"^([+-]?)(\d*)\.(\d+)(?:[eE]([+-]?\d{1,3}))?$")
_SCIENTIFIC = re.compile(r"^([+-]?)(\d+)[eE]([+-]?\d{1,3})$")


@dataclass(frozen=True)
class Element:
    """One claimed number: its text, exact value and how it was written.

    ``kind`` is ``"exact"`` or ``"decimal"``; a decimal carries its ``half_unit``
    (half a unit of its last written digit) and, for plain decimals, ``decimals`` = k.
    """

    text: str
    value: sympy.Expr
    kind: str
    decimals: int | None = None
    half_unit: sympy.Rational | None = None


@dataclass(frozen=True)
class Claimed:
    """A claimed value: ``shape`` is None (a number), ``(n,)`` or ``(rows, cols)``."""

    text: str
    shape: tuple | None
    elements: tuple


@dataclass(frozen=True)
class Rule:
    """An override of the written-precision rule: tolerance, relative or sig_figs."""

    kind: str
    amount: sympy.Rational | int

    def describe(self) -> str:
        if self.kind == "sig_figs":
            return f"{self.amount} significant figures"
        return f"{self.kind} {self.amount}"


@dataclass(frozen=True)
class Claim:
    """One ``[[claims]]`` entry.  ``row``/``col`` are 1-based as in a_{ij}; None = all."""

    index: int
    quantity: str
    claimed: Claimed
    row: int | None = None
    col: int | None = None
    label: str | None = None
    rule: Rule | None = None

    @property
    def name(self) -> str:
        """The label, or a generated one such as ``weights[3,2]``."""
        if self.label:
            return self.label
        where = ",".join("*" if i is None else str(i) for i in (self.row, self.col))
        return self.quantity if where == "*,*" else f"{self.quantity}[{where}]"


@dataclass(frozen=True)
class ElementVerdict:
    """The judgement of one claimed number against one exact value."""

    ok: bool
    rule: str
    note: str = ""


# ----------------------------------------------------------------- parsing claimed text


def parse_claimed(text: str, names=None) -> Claimed:
    """Split a claimed value into numbers: ``"0.5"``, ``"[1/3, 2/3]"``, ``"[[1,0],[0,1]]"``.

    A bare comma-separated list (``"0.330, 0.670"``) is read as one row.  Raises
    :class:`ParseError` naming the offending piece.

    >>> parse_claimed("[[1, 0], [0.5, 0.50]]").shape
    (2, 2)
    >>> parse_claimed("0.330, 0.670").shape
    (2,)
    >>> parse_claimed("[1, [2]]")
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.ParseError: claimed value mixes numbers and lists: "[1, [2]]"
    """
    if not isinstance(text, str):
        raise ParseError(f"a claimed value must be text, got {type(text).__name__}")
    if len(text) > MAX_CLAIM_TEXT:
        raise ParseError(f"claimed value of {len(text)} characters exceeds the limit of {MAX_CLAIM_TEXT}")
    tree = _split(text)
    if isinstance(tree, str):
        return Claimed(text, None, (_atom(tree, names),))
    if all(isinstance(item, str) for item in tree):
        return Claimed(text, (len(tree),), tuple(_atom(item, names) for item in tree))
    if not all(isinstance(item, list) for item in tree):
        raise ParseError(f"claimed value mixes numbers and lists: {_quote(text)}")
    width = len(tree[0])
    for number, row in enumerate(tree, start=1):
        if any(isinstance(item, list) for item in row):
            raise ParseError(f"claimed value nested deeper than a matrix: {_quote(text)}")
        if len(row) != width:
            raise ParseError(f"claimed row {number} has {len(row)} numbers, row 1 has {width}: {_quote(text)}")
    elements = tuple(_atom(item, names) for row in tree for item in row)
    return Claimed(text, (len(tree), width), elements)


def _split(text: str):
    """Nested lists of atom texts.  ``[``, ``]`` and ``,`` inside parentheses belong to atoms.

    Tokens first (brackets, commas, atoms), then a two-level recursive descent: a claimed
    value is at most a matrix, so deeper nesting is refused before any recursion.
    """
    tokens, atom, parens, brackets = [], [], 0, 0
    for position, char in enumerate(text, start=1):
        parens += (char == "(") - (char == ")")
        if parens < 0:
            raise ParseError(f"unbalanced ')' at column {position} in {_quote(text)}")
        if parens == 0 and char in "[],":
            if "".join(atom).strip():
                tokens.append(("atom", "".join(atom).strip(), position))
            atom = []
            brackets += (char == "[") - (char == "]")
            if brackets > 2:
                raise ParseError(f"claimed value nested deeper than a matrix at column {position} in {_quote(text)}")
            tokens.append((char, char, position))
            if len(tokens) > 3 * MAX_ELEMENTS:
                raise ParseError(f"more than {MAX_ELEMENTS} numbers in one claimed value")
        else:
            atom.append(char)
    if parens:
        raise ParseError(f"unbalanced '(' in {_quote(text)}")
    if "".join(atom).strip():
        tokens.append(("atom", "".join(atom).strip(), len(text)))
    if not tokens:
        raise ParseError("empty claimed value")
    if tokens[0][0] != "[" and any(kind == "," for kind, _, _ in tokens):
        tokens = [("[", "[", 0)] + tokens + [("]", "]", len(text))]  # "0.330, 0.670" is one row
    value, end = _descend(tokens, 0, text)
    if end != len(tokens):
        raise ParseError(f"unexpected '{tokens[end][1]}' at column {tokens[end][2]} in {_quote(text)}")
    return value


def _descend(tokens, at, text):
    """One value starting at token ``at``: an atom, or '[' value (',' value)* ']'."""
    if at >= len(tokens):
        raise ParseError(f"claimed value ends too early: {_quote(text)}")
    kind, piece, position = tokens[at]
    if kind == "atom":
        return piece, at + 1
    if kind != "[":
        raise ParseError(f"missing number before '{piece}' at column {position} in {_quote(text)}")
    items = []
    at += 1
    while True:
        item, at = _descend(tokens, at, text)
        items.append(item)
        if at >= len(tokens):
            raise ParseError(f"missing ']' in {_quote(text)}")
        kind, piece, position = tokens[at]
        at += 1
        if kind == "]":
            return items, at
        if kind != ",":
            raise ParseError(f"expected ',' or ']' at column {position} in {_quote(text)}")


def _atom(text: str, names) -> Element:
    """One claimed number.  Decimals keep their written precision; the rest is exact."""
    if len(text) > MAX_ATOM_TEXT:
        raise ParseError(f"claimed number of {len(text)} characters exceeds the limit of {MAX_ATOM_TEXT}")
    if _INTEGER.match(text):
        if len(text) > MAX_DECIMAL_DIGITS:
            raise ParseError(f"claimed integer with {len(text)} digits exceeds the limit of {MAX_DECIMAL_DIGITS}")
        return Element(text, sympy.Integer(int(text)), "exact")
    match = _DECIMAL.match(text) or _SCIENTIFIC.match(text)
    if match:
        digits = sum(ch.isdigit() for ch in text.split("e")[0].split("E")[0])
        if digits > MAX_DECIMAL_DIGITS:
            raise ParseError(f"claimed decimal with {digits} digits exceeds the limit of {MAX_DECIMAL_DIGITS}")
        sign, body = (-1 if text.startswith("-") else 1), text.lstrip("+-")
        value = sign * exact_decimal(body)
        groups = match.groups()
        fraction_digits = len(groups[2]) if match.re is _DECIMAL else 0
        exponent = int(groups[3] or 0) if match.re is _DECIMAL else int(groups[2])
        decimals = fraction_digits - exponent
        half = sympy.Rational(1, 2) * sympy.Rational(10) ** (-decimals)
        return Element(text, value, "decimal", decimals if exponent == 0 else None, half)
    value = parse_expression(text, names)
    if isinstance(value, sympy.MatrixBase):
        raise ParseError(f"a claimed number must not be a matrix: {_quote(text)}")
    return Element(text, value, "exact")


def parse_rule(kind: str, amount) -> Rule:
    """An override rule.  ``amount``: a positive exact number (text or int), or sig_figs.

    >>> parse_rule("tolerance", "0.01")
    Rule(kind='tolerance', amount=1/100)
    >>> parse_rule("sig_figs", 0)
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.ParseError: sig_figs must be an integer from 1 to 50, got 0
    """
    if kind == "sig_figs":
        if isinstance(amount, bool) or not isinstance(amount, int) or not 1 <= amount <= 50:
            raise ParseError(f"sig_figs must be an integer from 1 to 50, got {amount!r}")
        return Rule(kind, amount)
    if kind not in ("tolerance", "relative"):
        raise ParseError(f"unknown rule {kind!r}")
    if isinstance(amount, bool) or not isinstance(amount, (int, str)):
        raise ParseError(f"{kind} must be a number written as a string such as \"0.01\", got {type(amount).__name__}")
    value = sympy.Integer(amount) if isinstance(amount, int) else parse_expression(amount)
    if not (isinstance(value, sympy.Rational) and value >= 0):
        raise ParseError(f"{kind} must be a non-negative rational number, got {amount!r}")
    return Rule(kind, value)


def _quote(text: str) -> str:
    shown = text if len(text) <= 60 else text[:57] + "..."
    return '"' + shown.replace('"', '\\"') + '"'


# ----------------------------------------------------------------- judging


def select(matrix: sympy.MatrixBase, row: int | None, col: int | None):
    """The claimed part of a quantity (1-based row/col; None = all), flat and its shape.

    >>> select(sympy.Matrix([[1, 2], [3, 4]]), None, 2)
    ([2, 4], (2,))
    """
    if row is not None and col is not None:
        return [matrix[row - 1, col - 1]], None
    if row is not None:
        return list(matrix.row(row - 1)), (matrix.cols,)
    if col is not None:
        return list(matrix.col(col - 1)), (matrix.rows,)
    return list(matrix), (matrix.rows, matrix.cols)


def judge_values(values, claimed: Claimed, rule: Rule | None = None, balls=None) -> list[ElementVerdict]:
    """Judge each claimed number against the exact value in the same position.

    ``balls`` (optional) are arb enclosures of the same values, computed cheaply from the
    rational scores (``AttentionResult.intervals``); they settle most claims without
    building closed forms.  Whatever they leave open is decided from the exact value.
    """
    if len(values) != len(claimed.elements):
        raise ValueError(f"{len(claimed.elements)} claimed numbers for {len(values)} values")
    balls = balls if balls is not None else [None] * len(values)
    return [judge_element(v, e, rule, b) for v, e, b in zip(values, claimed.elements, balls)]


def rule_text(element: Element, rule: Rule | None = None) -> str:
    """The rule a claimed number is judged by, as shown in reports.

    >>> rule_text(parse_claimed("0.140").elements[0]), rule_text(parse_claimed("2/6").elements[0])
    ('3 decimals', 'exact')
    """
    if rule is not None:
        return rule.describe()
    if element.kind == "decimal":
        if element.decimals is not None:
            return f"{element.decimals} decimal{'' if element.decimals == 1 else 's'}"
        return f"within {element.half_unit}"
    return "exact"


def judge_element(exact, element: Element, rule: Rule | None = None, ball=None) -> ElementVerdict:
    """Judge one claimed number (lazily: ``exact`` may be a callable giving the value).

    An undecidable comparison is a fail, with a note saying so -- never a pass.
    """
    label = rule_text(element, rule)
    claimed = element.value
    if rule is not None and rule.kind == "relative":
        bound = None
    elif rule is not None:
        bound = rule.amount if rule.kind == "tolerance" else _sig_fig_half_unit(claimed, rule.amount)
    else:
        bound = element.half_unit if element.kind == "decimal" else sympy.Integer(0)
    if ball is not None and bound is not None and claimed.is_Rational:
        decided = _ball_within(ball, claimed, bound)
        if decided is not None:
            return ElementVerdict(decided, label)
    exact = exact() if callable(exact) else exact
    exact = exact if isinstance(exact, sympy.Basic) else to_exact(exact)  # ints, Fractions; floats refused
    try:
        if bound is None:
            return ElementVerdict(_within_relative(exact, claimed, rule.amount), label)
        if bound == 0:
            return ElementVerdict(_equal(exact, claimed), label)
        return ElementVerdict(_within(exact, claimed, bound), label)
    except UndecidedError as error:
        return ElementVerdict(False, label, f"undecided: {' '.join(str(error).split())[:200]}")


def _ball_within(ball, claimed, bound):
    """True/False when the enclosure alone decides ``|x - claimed| <= bound``, else None."""
    if not ball.is_finite():
        return None
    with numeric.working_precision(256):
        distance = abs(ball - numeric.to_arb(claimed))
        limit = numeric.to_arb(bound)
        if distance < limit:
            return True
        if distance > limit:
            return False
    return None


def _fraction(value) -> Fraction:
    return Fraction(int(value.p), int(value.q))


def _sig_fig_half_unit(claimed, figures: int):
    """Half a unit in the last of ``figures`` significant digits of the claimed number.

    >>> _sig_fig_half_unit(sympy.Rational(284, 1000), 3), _sig_fig_half_unit(sympy.Integer(1432), 2)
    (1/2000, 50)
    """
    if claimed == 0 or not claimed.is_Rational:
        return sympy.Integer(0)
    magnitude, exponent = abs(_fraction(claimed)), 0
    while magnitude >= 10:
        magnitude, exponent = magnitude / 10, exponent + 1
    while magnitude < 1:
        magnitude, exponent = magnitude * 10, exponent - 1
    return sympy.Rational(1, 2) * sympy.Rational(10) ** (exponent - figures + 1)


def _equal(exact, claimed) -> bool:
    """Exact equality: rationals directly; otherwise refuted by intervals, or proved."""
    if exact.is_Rational and claimed.is_Rational:
        return exact == claimed
    from symbolic_attn.proofs.prove import prove_equal

    if not (exact - claimed).free_symbols and numeric.certified_sign(exact - claimed) not in (None, 0):
        return False  # the intervals exclude zero: certainly different
    try:
        prove_equal(exact, claimed)
    except ProofError:
        return False
    return True  # UndecidedError propagates: undecided is a fail, noted as such


def _within(exact, claimed, bound) -> bool:
    """``|exact - claimed| <= bound`` (claimed and bound rational), certified by the core."""
    if exact.free_symbols:
        raise UndecidedError(f"{exact} has free symbols: only an exact claim can be judged")
    if not claimed.is_Rational:
        return _decide(exact, abs(exact - claimed) - bound, [])
    return numeric.within(exact, _fraction(claimed), _fraction(bound))


def _within_relative(exact, claimed, ratio) -> bool:
    """``|exact - claimed| <= ratio * |exact|``, certified."""
    if exact.free_symbols:
        raise UndecidedError(f"{exact} has free symbols: only an exact claim can be judged")
    if exact.is_Rational and claimed.is_Rational:
        return abs(exact - claimed) <= ratio * abs(exact)
    # Equality in the rule needs exact = claimed / (1 -+ ratio): rational, so provable.
    candidates = [claimed / (1 + ratio)] + ([claimed / (1 - ratio)] if ratio != 1 else [])
    return _decide(exact, abs(exact - claimed) - ratio * abs(exact), candidates)


def _decide(exact, margin, boundary_points) -> bool:
    """True iff margin <= 0.  Intervals first; on the boundary, an exact proof."""
    sign = numeric.certified_sign(margin)
    if sign is not None:
        return sign <= 0
    if any(_proved_zero(exact - point) for point in boundary_points):
        return True
    raise UndecidedError(f"{exact} is too close to the boundary of the rule to decide")


def _proved_zero(expr) -> bool:
    """An exact proof that ``expr`` is 0, by the core's one equality decider.

    Refuted and undecided are both "not proved" here; callers decide what that means.
    """
    from symbolic_attn.proofs.prove import prove_equal

    try:
        prove_equal(expr, 0)
    except (ProofError, UndecidedError):
        return False
    return True
