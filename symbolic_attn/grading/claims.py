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

Claimed text is data, read by the one value grammar of grading
(:mod:`symbolic_attn.exact.syntax`): a number, or nested lists in brackets.  A bare
comma list (``"0.3, 0.7"``) is refused there, as everywhere.  Each entry keeps its written
text, so ``"0.140"`` keeps its three decimals; digits are ASCII only.

Judging has three outcomes: pass, fail and **undecided** (the comparison could not be
settled within its budget: intervals up to the certified module's precision limit, and an
exact proof only for expressions under a size bound).  Undecided is never a pass.

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

import functools
from dataclasses import dataclass
from fractions import Fraction

import sympy

from symbolic_attn.errors import InputLimitError, ParseError, ProofError, UndecidedError, shown
from symbolic_attn.exact.convert import to_exact
from symbolic_attn.exact import certified as numeric
from symbolic_attn.exact.evaluate import Evaluator
from symbolic_attn.exact.parse import parse_expression
from symbolic_attn.exact.syntax import Matrix, Node, Number, UnaryOp, matrix_entries, parse, to_text
from symbolic_attn.exact.limits import DEFAULT_LIMITS
from symbolic_attn.grading.outcomes import Verdict

__all__ = [
    "Element",
    "Claimed",
    "Tolerance",
    "Claim",
    "ElementVerdict",
    "parse_claimed",
    "claimed_from_tree",
    "parse_rule",
    "judge_element",
    "judge_values",
    "rule_text",
    "rule_bound",
    "verdict_of",
    "all_pass",
    "small_enough",
    "MAX_CLAIM_TEXT",
    "PROOF_SIZE",
]

MAX_CLAIM_TEXT = DEFAULT_LIMITS.max_claim_length  # the one set of bounds (exact.limits)
MAX_ELEMENTS = DEFAULT_LIMITS.max_claim_entries
#: Exact proofs are tried only for expressions of at most this many nodes (expand and
#: simplify grow with size; beyond it a boundary case is "undecided", never a hang).
PROOF_SIZE = 400


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
class Tolerance:
    """How close a claimed number must be, overriding its written precision (a claim's `rule`):
    an absolute tolerance, a relative one, or significant figures."""

    kind: str
    amount: sympy.Rational | int

    def describe(self) -> str:
        if self.kind == "sig_figs":
            return f"{self.amount} significant figures"
        return f"{self.kind} {self.amount}"


@dataclass(frozen=True)
class Claim:
    """One ``[[claims]]`` entry.  ``row``/``col`` are 1-based as in a_{ij}; None = all.

    ``quantity`` is a stage path of the exercise's trace (``weights``, ``output``...).
    """

    index: int
    quantity: str
    claimed: Claimed
    row: int | None = None
    col: int | None = None
    label: str | None = None
    rule: Tolerance | None = None

    @property
    def name(self) -> str:
        """The label (control characters escaped), or a generated one such as ``weights[3,2]``."""
        if self.label:
            return shown(self.label, 60)
        where = ",".join("*" if i is None else str(i) for i in (self.row, self.col))
        return self.quantity if where == "*,*" else f"{self.quantity}[{where}]"


@dataclass(frozen=True)
class ElementVerdict:
    """The judgement of one claimed number against one exact value."""

    ok: bool
    rule: str
    note: str = ""
    undecided: bool = False

    @property
    def state(self) -> Verdict:
        """``Verdict.PASS``, ``Verdict.FAIL`` or ``Verdict.UNDECIDED``."""
        return Verdict.UNDECIDED if self.undecided else Verdict.PASS if self.ok else Verdict.FAIL


def verdict_of(verdicts) -> Verdict:
    """A claim's verdict from its entries': any fail fails; else any undecided is undecided."""
    states = {v.state for v in verdicts}
    return Verdict.FAIL if Verdict.FAIL in states else Verdict.UNDECIDED if Verdict.UNDECIDED in states else Verdict.PASS


# ----------------------------------------------------------------- parsing claimed text


def parse_claimed(text: str, names=None) -> Claimed:
    """Read a claimed value: ``"0.5"``, ``"[1/3, 2/3]"``, ``"[[1,0],[0,1]]"``.

    The grammar is the input language's (:mod:`symbolic_attn.exact.syntax`), the same as
    every other value of an exercise; each number keeps its written text.  Raises
    :class:`ParseError` naming the offending piece.

    >>> parse_claimed("[[1, 0], [0.5, 0.50]]").shape
    (2, 2)
    >>> parse_claimed("0.330, 0.670")
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.ParseError: a list needs brackets: write [0.330, 0.670] (a bare comma at column 6)
    >>> parse_claimed("0.১৬৭")
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.ParseError: non-ASCII character '১' (U+09E7) at column 3: write numbers and names in ASCII, in "0.১৬৭"
    """
    if not isinstance(text, str):
        raise ParseError(f"a claimed value must be text, got {type(text).__name__}")
    if len(text) > MAX_CLAIM_TEXT:
        raise InputLimitError(f"claimed value of {len(text)} characters exceeds the limit of {MAX_CLAIM_TEXT}")
    return claimed_from_tree(parse(text), text, names)


def claimed_from_tree(tree: Node, text: str, names=None) -> Claimed:
    """A claimed value from its tree (a solution's reader builds the tree directly)."""
    shape, entries = _layout(tree, text)
    if len(entries) > MAX_ELEMENTS:
        raise InputLimitError(f"more than {MAX_ELEMENTS} numbers in one claimed value")
    evaluator = Evaluator(text, names)
    return Claimed(text, shape, tuple(_element(entry, text, evaluator) for entry in entries))


def _layout(tree: Node, text: str) -> tuple:
    """The shape of a claimed value and its entries in reading order (the language's rule)."""
    if not isinstance(tree, Matrix):
        return None, [tree]
    return matrix_entries(tree, text)


def _element(node: Node, text: str, evaluator: Evaluator) -> Element:
    """One claimed number.  Decimals keep their written precision; the rest is exact."""
    number, sign = node, ""
    if isinstance(node, UnaryOp) and isinstance(node.operand, Number):
        number, sign = node.operand, node.op
    # As written: the text's own piece, or (a tree built from a solution's LaTeX) the tree's.
    written = text[node.start:node.end].strip() if 0 <= node.start < node.end <= len(text) else to_text(node)
    if isinstance(number, Number) and number.decimals is not None:
        value = -number.value if sign == "-" else number.value
        decimals = number.decimals
        return Element(written or number.text, value, "decimal", None if number.scientific else decimals,
                       _half_unit(decimals))
    value = evaluator.evaluate(node)
    if isinstance(value, sympy.MatrixBase):
        raise ParseError(f"a claimed number must not be a matrix: {_quote(written or text)}")
    return Element(written or text, value, "exact")


@functools.cache
def _half_unit(decimals: int) -> sympy.Rational:
    """Half a unit of the last written digit: 1/2 10^-decimals."""
    return sympy.Rational(1, 2 * 10**decimals) if decimals >= 0 else sympy.Rational(10 ** -decimals, 2)


def parse_rule(kind: str, amount) -> Tolerance:
    """An override rule.  ``amount``: a positive exact number (text or int), or sig_figs.

    >>> parse_rule("tolerance", "0.01")
    Tolerance(kind='tolerance', amount=1/100)
    >>> parse_rule("sig_figs", 0)
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.ParseError: sig_figs must be an integer from 1 to 50, got 0
    """
    if kind == "sig_figs":
        if isinstance(amount, bool) or not isinstance(amount, int) or not 1 <= amount <= 50:
            raise ParseError(f"sig_figs must be an integer from 1 to 50, got {amount!r}")
        return Tolerance(kind, amount)
    if kind not in ("tolerance", "relative"):
        raise ParseError(f"unknown rule {kind!r}")
    if isinstance(amount, bool) or not isinstance(amount, (int, str)):
        raise ParseError(f"{kind} must be a number written as a string such as \"0.01\", got {type(amount).__name__}")
    value = sympy.Integer(amount) if isinstance(amount, int) else parse_expression(amount)
    if not (isinstance(value, sympy.Rational) and value >= 0):
        raise ParseError(f"{kind} must be a non-negative rational number, got {amount!r}")
    return Tolerance(kind, value)


def _quote(text: str) -> str:
    return '"' + shown(text, 60).replace('"', '\\"') + '"'


# ----------------------------------------------------------------- judging


def judge_values(values, claimed: Claimed, rule: Tolerance | None = None, balls=None) -> list[ElementVerdict]:
    """Judge each claimed number against the exact value in the same position.

    ``balls`` (optional) are arb enclosures of the same values, computed cheaply from the
    rational scores (``AttentionResult.intervals``); they settle most claims without
    building closed forms.  Whatever they leave open is decided from the exact value.
    """
    if len(values) != len(claimed.elements):
        raise ParseError(f"{len(claimed.elements)} claimed numbers for {len(values)} values")
    balls = balls if balls is not None else [None] * len(values)
    return [judge_element(v, e, rule, b) for v, e, b in zip(values, claimed.elements, balls)]


def all_pass(values, claimed: Claimed, rule: Tolerance | None = None, balls=None) -> bool:
    """Whether every claimed number passes; stops at the first that does not (diagnosis
    tries many variants, and most fail on their first entry)."""
    if len(values) != len(claimed.elements):
        return False
    balls = balls if balls is not None else [None] * len(values)
    return all(judge_element(v, e, rule, b).state == "pass" for v, e, b in zip(values, claimed.elements, balls))


def rule_text(element: Element, rule: Tolerance | None = None) -> str:
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


def rule_bound(element: Element, rule: Tolerance | None = None):
    """How far from the claimed number the value may be: half a unit of its last written
    digit, the rule's tolerance or significant figures, 0 for an exact claim, None for a
    relative rule (its bound depends on the value).

    >>> rule_bound(parse_claimed("0.140").elements[0]), rule_bound(parse_claimed("1/3").elements[0])
    (1/2000, 0)
    """
    if rule is not None and rule.kind == "relative":
        return None
    if rule is not None:
        return rule.amount if rule.kind == "tolerance" else _sig_fig_half_unit(element.value, rule.amount)
    return element.half_unit if element.kind == "decimal" else sympy.Integer(0)


def judge_element(exact, element: Element, rule: Tolerance | None = None, ball=None) -> ElementVerdict:
    """Judge one claimed number (lazily: ``exact`` may be a callable giving the value).

    A comparison that cannot be settled within its budget is ``undecided`` (with a note
    saying why) -- never a pass.
    """
    label = rule_text(element, rule)
    claimed = element.value
    if claimed is _MINUS_INFINITY:
        return _judge_minus_infinity(exact() if callable(exact) else exact, element, label)
    bound = rule_bound(element, rule)
    if ball is not None and bound is not None and claimed.is_Rational:
        decided = _ball_within(ball, claimed, bound)
        if decided is not None:
            return ElementVerdict(decided, label)
    exact = exact() if callable(exact) else exact
    exact = exact if isinstance(exact, sympy.Basic) else to_exact(exact)  # ints, Fractions; floats refused
    if exact is _MINUS_INFINITY:
        return _judge_minus_infinity(exact, element, label)
    try:
        if bound is None:
            return ElementVerdict(_within_relative(exact, claimed, rule.amount), label)
        if bound == 0:
            return ElementVerdict(_equal(exact, claimed), label)
        return ElementVerdict(_within(exact, claimed, bound), label)
    except UndecidedError as error:
        return ElementVerdict(False, label, f"undecided: {shown(' '.join(str(error).split()), 200)}", undecided=True)


_BALL_BITS = 256
_MINUS_INFINITY = sympy.S.NegativeInfinity


def _judge_minus_infinity(exact, element: Element, label: str) -> ElementVerdict:
    """-oo is -oo, exactly: a claimed -inf passes only where the value is -oo (a blocked
    position of the masked scores), and a finite claim never passes there.

    >>> _judge_minus_infinity(sympy.S.NegativeInfinity, parse_claimed("-inf").elements[0], "exact").ok
    True
    >>> _judge_minus_infinity(sympy.Integer(0), parse_claimed("-inf").elements[0], "exact").note
    '-inf was claimed, but the value is 0, finite (the position is not blocked)'
    """
    exact = exact if isinstance(exact, sympy.Basic) else to_exact(exact)
    claimed_infinite, exact_infinite = element.value is _MINUS_INFINITY, exact is _MINUS_INFINITY
    if claimed_infinite and exact_infinite:
        return ElementVerdict(True, "exact (-inf)")
    if claimed_infinite:
        return ElementVerdict(False, "exact (-inf)",
                              f"-inf was claimed, but the value is {shown(exact, 60)}, finite (the position is not blocked)")
    return ElementVerdict(False, label, f"the value is -inf (a blocked position), but {shown(element.text, 60)} "
                                        "was claimed, a finite number")


@functools.lru_cache(maxsize=65_536)
def _rational_ball(p: int, q: int):
    """The enclosure of p/q at _BALL_BITS, made once: a 64x64 claim is judged against
    every variant diagnosis tries, with the same claimed numbers and bounds."""
    import flint

    with numeric.working_precision(_BALL_BITS):
        return flint.arb(flint.fmpq(p, q))


def _ball_within(ball, claimed, bound):
    """True/False when the enclosure alone decides ``|x - claimed| <= bound``, else None."""
    if not ball.is_finite():
        return None
    with numeric.working_precision(_BALL_BITS):
        distance = abs(ball - _rational_ball(int(claimed.p), int(claimed.q)))
        limit = _rational_ball(int(bound.p), int(bound.q))
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


def small_enough(expr, limit: int = PROOF_SIZE) -> bool:
    """Whether ``expr`` is small enough to hand to an exact proof (expand, simplify).

    Counts nodes, stopping at ``limit``; a power with an integer exponent over 64 of a
    non-rational base counts as its exponent (expanding it builds that many terms).

    >>> small_enough(sympy.sqrt(2) + 1), small_enough((1 + sympy.sqrt(2)) ** 7000)
    (True, False)
    """
    count = 0
    for node in sympy.preorder_traversal(expr):
        count += 1
        if node.is_Pow and node.exp.is_Integer and not node.base.is_Rational:
            count += max(abs(int(node.exp)) - 64, 0) if abs(node.exp) < 10**6 else limit
        if count > limit:
            return False
    return True


def _equal(exact, claimed) -> bool:
    """Exact equality: rationals directly; otherwise refuted by intervals, or proved."""
    if exact.is_Rational and claimed.is_Rational:
        return exact == claimed
    from symbolic_attn.proofs.prove import prove_equal

    if not (exact - claimed).free_symbols and numeric.certified_sign(exact - claimed) not in (None, 0):
        return False  # the intervals exclude zero: certainly different
    if not (small_enough(exact) and small_enough(claimed)):
        raise UndecidedError(f"{shown(claimed, 60)} is too large an expression to prove equal within the budget")
    if _zero_by_exact_algebra(exact - claimed):
        return True
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
    if small_enough(exact) and any(_proved_zero(exact - point) for point in boundary_points):
        return True
    raise UndecidedError(f"{exact} is too close to the boundary of the rule to decide")


def _proved_zero(expr) -> bool:
    """An exact proof that ``expr`` is 0, by the core's one equality decider.

    Refuted and undecided are both "not proved" here; callers decide what that means.
    """
    if _zero_by_exact_algebra(expr):
        return True
    from symbolic_attn.proofs.prove import prove_equal

    try:
        prove_equal(expr, 0)
    except (ProofError, UndecidedError):
        return False
    return True


def _zero_by_exact_algebra(expr) -> bool:
    """The first step of the checker's decision for a number (proofs.prove): exact algebra
    (expand, then a minimal polynomial), no floats.  Taken here directly: most claims need
    nothing more, and the whole checker is then not entered."""
    return not expr.free_symbols and numeric.proved_zero(expr)
