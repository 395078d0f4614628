"""Exact values as text that the tool's own parser reads back to the same value.

SymPy's ``sstr`` writes Euler's number as ``E`` while input writes ``e``; everything the
tool prints as an exact string goes through :func:`exact_string` instead, so a printed
value can be pasted back into ``--scores``, an exercise file or a claim:

>>> import sympy
>>> exact_string(sympy.E / (1 + sympy.exp(sympy.sqrt(2) / 2)))
'e/(1 + exp(sqrt(2)/2))'
>>> from symbolic_attn.exact.parse import parse_expression
>>> value = sympy.E**2 / (sympy.E + sympy.log(3))
>>> parse_expression(exact_string(value)) == value
True
>>> exact_rows(sympy.Matrix([[sympy.Rational(1, 2), sympy.E]]))
[['1/2', 'e']]

Minus infinity (a blocked score of the ``masked`` stage) is written ``-inf``, as it is read.
Only ``nan`` (the weights of the ``nan`` empty-row policy, copying a library's output)
has no exact spelling: it is printed as ``nan``, which the parser refuses.
"""

from fractions import Fraction

import flint
import sympy
from sympy.printing.str import StrPrinter

from symbolic_attn.errors import UndecidedError
from symbolic_attn.exact.certified import decimal_string
from symbolic_attn.exact.intervals import certified_sign, proved_zero, to_arb, working_precision
from symbolic_attn.exact.rounding import certified_decimal, check_digits, rational_decimal

__all__ = ["exact_string", "exact_rows", "Canonical", "canonical_string", "node_count", "not_printed", "PRINT_BUDGET"]


class _ExactPrinter(StrPrinter):
    """SymPy's string printer with the parser's spelling of constants."""

    printmethod = "_symbolic_attn_exact"

    def _print_Exp1(self, expr):
        return "e"

    def _print_NegativeInfinity(self, expr):  # a blocked score, read back as -inf
        return "-inf"

    def _print_ImaginaryUnit(self, expr):  # never in a real result; refused on reading back
        return "I"


# order="none": SymPy's internal (canonical) term order, deterministic and much faster
# than sorting big closed forms; the same value.
_PRINTER = _ExactPrinter({"order": "none"})


def exact_string(expr) -> str:
    """One exact value as text in the parser's grammar (``e``, ``pi``, ``sqrt``, ``exp``, ``log``, ``**``)."""
    return _PRINTER.doprint(sympy.sympify(expr, strict=True) if not isinstance(expr, sympy.Basic) else expr)


def exact_rows(matrix) -> list[list[str]]:
    """Every entry of a matrix as :func:`exact_string`, row by row (lists, for JSON)."""
    return [[exact_string(entry) for entry in matrix.row(i)] for i in range(matrix.rows)]


# -- one canonical form per value --------------------------------------------------------

#: Expression nodes an entry may have to be printed exactly; beyond it the entry shows
#: ``(exact form: N nodes, not printed)`` beside its certified decimals (text, LaTeX, JSON).
PRINT_BUDGET = 600
#: Denominators tried for a rational candidate (the nearest such rational to an enclosure).
MAX_CANDIDATE_DENOMINATOR = 10**6
#: Bits of the enclosure that proposes a candidate: an irrational value is this close to a
#: rational of denominator <= MAX_CANDIDATE_DENOMINATOR essentially never, so a failed proof
#: (the only costly step) is rarely tried.
_CANDIDATE_BITS = 192


def node_count(expr, limit: int | None = None) -> int:
    """Expression nodes of ``expr`` (preorder), counting stops just past ``limit``.

    >>> node_count(sympy.exp(sympy.sqrt(2) / 2) / (1 + sympy.exp(sympy.sqrt(2) / 2)))
    17
    """
    count = 0
    for _ in sympy.preorder_traversal(expr):
        count += 1
        if limit is not None and count > limit:
            break
    return count


def _fraction(value) -> Fraction:
    """An arb's midpoint or radius (an exact binary number) as a Fraction."""
    mantissa, exponent = (int(part) for part in value.man_exp())
    return Fraction(mantissa) * Fraction(2) ** exponent


def _within_candidates(ball) -> bool:
    """Whether ``ball`` is narrow (radius under 2**-64 of its size) and its midpoint is 0
    or of size 2**-64 to 2**64, where a rational of small denominator may lie (decided on
    the binary exponents: a ball of exp(-10**6) is never turned into a huge Fraction)."""
    mantissa, exponent = (int(part) for part in ball.mid().man_exp())
    rad_mantissa, rad_exponent = (int(part) for part in ball.rad().man_exp())
    if mantissa == 0:
        return rad_mantissa == 0 or rad_exponent + rad_mantissa.bit_length() < -64
    size = exponent + abs(mantissa).bit_length()
    if not -64 <= size <= 64:
        return False
    return rad_mantissa == 0 or rad_exponent + rad_mantissa.bit_length() < size - 64


class Canonical:
    r"""The canonical small form of exact values: every subexpression that is provably a
    rational is replaced by that rational, bottom-up (so ``1/(2(1 + e^a)) + e^a/(2(1 + e^a))``
    is ``1/2`` and a LayerNorm of a two-wide row is exactly ``±1`` wherever it is used).

    A candidate comes from a certified enclosure (arb, :data:`_CANDIDATE_BITS` bits): the
    nearest rational of denominator at most :data:`MAX_CANDIDATE_DENOMINATOR` to its
    midpoint, kept only if it lies in the ball.  It replaces the value only when exact
    algebra proves the two equal: :func:`~symbolic_attn.exact.intervals.proved_zero` of the
    difference, or, for ``r != 0``, of ``value**2 - r**2`` together with a certified sign
    equal to r's (x**2 = r**2 and sign x = sign r give x = r).  Nothing is shown simplified
    that was not proved equal; a value nothing proves rational stays as it is (so does
    anything with free symbols, Floats or non-finite parts: it has no enclosure).  One instance remembers what it has seen (a trace shares
    subexpressions between stages).

    >>> a = sympy.exp(sympy.sqrt(2) / 2)
    >>> c = Canonical()
    >>> c(1 / (2 * (1 + a)) + a / (2 * (1 + a)))
    1/2
    >>> x = 1 - 1 / (1 + a)             # a softmax weight: irrational, kept
    >>> c(x) == x
    True
    >>> c((x - 1 / (1 + a)) / sympy.sqrt((x - 1 / (1 + a)) ** 2))   # c / sqrt(c**2) with c > 0
    1
    >>> c(sympy.sqrt(2) * sympy.sqrt(8) / 4 + a)   # the rational part inside a sum
    1 + exp(sqrt(2)/2)
    """

    def __init__(self):
        self._forms: dict = {}
        self._balls: dict = {}
        self._nodes: dict = {}

    def nodes(self, expr) -> int:
        """:func:`node_count` of ``expr`` (every node of the tree, repeats included),
        remembered per subexpression."""
        known = self._nodes.get(expr)
        if known is None:
            known = 1 + sum(self.nodes(arg) for arg in expr.args)
            self._nodes[expr] = known
        return known

    def decimal(self, expr, digits: int, significant: bool = False) -> str | None:
        """The certified decimal of ``expr`` (the same as
        :func:`~symbolic_attn.exact.certified.decimal_string`; None with free symbols), from
        the remembered enclosure of its canonical form when that one decides.

        >>> Canonical().decimal(sympy.exp(sympy.sqrt(2) / 2) / (1 + sympy.exp(sympy.sqrt(2) / 2)), 3)
        '0.670'
        """
        form = self(expr)
        digits = check_digits(digits, significant)
        if form.is_Rational:
            return rational_decimal(Fraction(int(form.p), int(form.q)), digits, significant)
        ball = self._ball(form)
        text = certified_decimal(ball, digits, significant) if ball is not False else None
        if text is not None:
            return text
        if form.free_symbols:
            return None
        return decimal_string(form, digits, significant)

    def __call__(self, expr):
        if not isinstance(expr, sympy.Expr) or expr.is_Rational or expr.is_Atom:
            return expr
        return self._form(expr)

    def matrix(self, matrix):
        """Every entry of ``matrix`` in its canonical form (an ImmutableMatrix)."""
        return sympy.ImmutableMatrix(matrix.rows, matrix.cols, [self(entry) for entry in matrix])

    def _form(self, expr):
        known = self._forms.get(expr)
        if known is not None:
            return known
        if expr.is_Rational or expr.is_Atom:
            return expr
        args = [self._form(arg) for arg in expr.args]
        rebuilt = expr.func(*args) if any(new is not old for new, old in zip(args, expr.args)) else expr
        result = rebuilt if rebuilt.is_Rational else (self._proved_rational(rebuilt) or rebuilt)
        self._forms[expr] = result
        return result

    def _ball(self, expr):
        """A certified ball of ``expr`` at :data:`_CANDIDATE_BITS` bits, built bottom-up from
        the remembered balls of its arguments (False where there is none)."""
        ball = self._balls.get(expr)
        if ball is not None:
            return ball
        try:
            with working_precision(_CANDIDATE_BITS):
                ball = self._combine(expr)
        except (UndecidedError, ValueError, TypeError, ZeroDivisionError, OverflowError):
            ball = False
        if ball is not False and not ball.is_finite():
            ball = False
        self._balls[expr] = ball
        return ball

    def _combine(self, expr):
        # Sums, products, powers and exp from the arguments' balls (the nodes a trace is
        # made of); anything else is enclosed whole by the one evaluator, to_arb.
        if expr.is_Rational or expr.is_Atom or not isinstance(expr, (sympy.Add, sympy.Mul, sympy.Pow, sympy.exp)):
            return to_arb(expr)
        if isinstance(expr, sympy.Pow) and not expr.exp.is_Rational:
            return to_arb(expr)
        balls = [self._ball(arg) for arg in (expr.args[:1] if isinstance(expr, sympy.Pow) else expr.args)]
        if any(ball is False for ball in balls):
            raise UndecidedError("no enclosure")
        if isinstance(expr, sympy.Add):
            return sum(balls[1:], balls[0])
        if isinstance(expr, sympy.Mul):
            total = balls[0]
            for ball in balls[1:]:
                total *= ball
            return total
        if isinstance(expr, sympy.exp):
            return balls[0].exp()
        exponent = expr.exp
        if exponent.is_Integer:
            return balls[0] ** int(exponent)
        return balls[0] ** flint.fmpq(int(exponent.p), int(exponent.q))

    def _proved_rational(self, expr):
        if not isinstance(expr, sympy.Expr):
            return None
        ball = self._ball(expr)
        if ball is False or not ball.is_finite():
            return None
        if not _within_candidates(ball):
            return None
        # The midpoint is of size 2**-64..2**64 (or 0), so it is a small Fraction; the radius
        # may be 2**-(10**1000) (a ball of exp(-10**1000)): never turned into a Fraction.
        middle = Fraction(0) if ball.mid() == 0 else _fraction(ball.mid())
        candidate = middle.limit_denominator(MAX_CANDIDATE_DENOMINATOR)
        if not (ball - flint.arb(flint.fmpq(candidate.numerator, candidate.denominator))).contains(0):
            return None
        rational = sympy.Rational(candidate.numerator, candidate.denominator)

        def directly():
            return proved_zero(expr - rational)

        def squared():  # x**2 = r**2 and sign x = sign r: x = r
            return (rational != 0 and certified_sign(expr) == (1 if rational > 0 else -1)
                    and proved_zero(expr**2 - rational**2))

        # A root of a compound (c / sqrt(c**2), a LayerNorm of two entries) is proved by its
        # square at once, while the direct test would labour first: try the square first.
        radical = any(isinstance(node, sympy.Pow) and not node.exp.is_Integer and not node.base.is_Rational
                      for node in sympy.preorder_traversal(expr))
        try:
            for attempt in ((squared, directly) if radical else (directly, squared)):
                if attempt():
                    return rational
        except (UndecidedError, ValueError, TypeError, ZeroDivisionError, RecursionError):
            return None
        return None


def canonical_string(expr, canonical: Canonical | None = None, budget: int = PRINT_BUDGET) -> tuple[str | None, int]:
    """(the exact string of ``expr``'s canonical form, its node count); the string is None
    when the form has more than ``budget`` nodes (then it is not printed; a rational is
    always printed).

    >>> canonical_string(sympy.sqrt(8) - sympy.sqrt(2) - sympy.sqrt(2))
    ('0', 1)
    >>> canonical_string(sympy.exp(sympy.sqrt(3)) + 1, budget=3)
    (None, 6)
    """
    canonical = canonical or Canonical()
    form = canonical(expr)
    nodes = canonical.nodes(form)
    if nodes > budget and not form.is_Rational:  # rationals are always shown as rationals
        return None, nodes
    return exact_string(form), nodes


def not_printed(nodes: int) -> str:
    """What an entry beyond the print budget shows instead of its closed form.

    >>> not_printed(14545)
    '(exact form: 14545 nodes, not printed)'
    """
    return f"(exact form: {nodes} nodes, not printed)"
