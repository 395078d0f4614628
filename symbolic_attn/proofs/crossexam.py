r"""Cross-examination: a proved step, evaluated at concrete points by code that shares nothing with the checker.

The checker (:mod:`symbolic_attn.proofs.prove` and its rules) proves ``lhs = rhs`` (or an
inequality) by normal forms and rewriting.  It has had soundness bugs -- bound variables
captured in sums, summation ranges ignored, a symbol declared only ``real`` treated as an
integer.  This module is a second, independent line of defence: after the checker has
accepted a step, :func:`cross_examine` chooses a few *admissible* concrete points (values
that respect every symbol's flags and every stated condition), evaluates both sides there
with its own small evaluator, and certifies the relation.  A point where the relation is
**certified false** proves the checker wrong, and the step is rejected with
:class:`~symbolic_attn.errors.CrossExaminationError`: "the checker's proof was wrong;
please report: ...".

Why independent: the module does not import (and was written without reading) the
checker's strategies, rules, conditions, prover or refuter, and it never asks SymPy to
decide anything (no ``evalf``, ``doit``, ``simplify``, ``equals``, ``is_zero``).  It only
walks the expression tree (``.func``/``.args``) and computes: exactly with
:class:`fractions.Fraction` while every value is rational, otherwise with python-flint's
``arb`` balls (each operation rounds outward, so the true value is always inside the
ball; arb's working precision is set with the project's one context manager,
``exact.certified.working_precision``, which decides nothing).  ``Sum``/``Product`` are loops over an environment of bound values (inner binders
shadow outer ones; nothing is substituted textually), and a reversed range is refused.

What it evaluates: rationals, symbols, ``Indexed`` entries, ``+ * **``, ``exp log``,
the trigonometric and hyperbolic functions and ``asin acos atan``, ``Abs sign Max Min
floor ceiling``, ``Piecewise``, ``KroneckerDelta``, ``Sum``/``Product`` (several limits),
``pi E GoldenRatio Catalan EulerGamma``, ``factorial binomial``, explicit matrices and
matrix expressions (``MatrixSymbol MatMul MatAdd Transpose Inverse MatPow Identity
ZeroMatrix OneMatrix Trace Determinant MatrixElement HadamardProduct``), the project's
named operators (through their own ``unfold()``) and ``Frac(num, den)``.  Anything else
(an undefined function ``f(x)``, ``Float``, ``oo``, ``I``, ``Derivative``, ``Integral``...)
makes the step unusable: the result says why, and nothing is raised.  A point where a side
is undefined (a zero denominator, ``log`` of a non-positive number, a singular inverse) is
not admissible, and another is tried.

Equalities between irrational values can never be *certified* by balls (the difference is
a ball around 0); such points are counted in ``points_close`` (agreement to about half the
working precision), never in ``points_used``.

>>> import sympy
>>> x = sympy.Symbol("x", real=True)
>>> cross_examine((x**2 - 1) / (x - 1), x + 1).points_used > 0
True
>>> cross_examine(sympy.exp(x), 1 + x, ">=").points_used > 0
True
>>> cross_examine(sympy.exp(x), 1 + x + x**2, ">=")
Traceback (most recent call last):
...
symbolic_attn.errors.CrossExaminationError: the checker's proof was wrong; please report: lhs = ..., rhs = ... at x=...
"""

from __future__ import annotations

import hashlib
import math
import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import flint
import sympy
from sympy.core.function import AppliedUndef
from sympy.tensor.indexed import Idx, Indexed

from symbolic_attn.errors import CrossExaminationError, one_line, safe_text
from symbolic_attn.exact.certified import working_precision

__all__ = ["Examined", "cross_examine", "RELATIONS"]

#: The relations a step may state between its two sides.
RELATIONS = ("=", "<", "<=", ">", ">=")

#: Points tried at most per call (admissible or not), and tree nodes evaluated at most per
#: point and per call: every loop in here is bounded by one of these.
MAX_ATTEMPTS = 40
MAX_NODES_PER_POINT = 20_000
MAX_NODES_PER_CALL = 60_000
#: Steps of more nodes than this are examined at two points (each point costs milliseconds).
SMALL_STEP = 1500
#: A Sum/Product range longer than this at a point makes the point unusable.
MAX_TERMS = 200
#: Expressions nested deeper than this are not examined (the evaluator recurses).
MAX_DEPTH = 200
#: An exact rational whose numerator or denominator exceeds this many bits continues as a
#: ball: exact arithmetic on huge numbers is slow and buys nothing here.
MAX_BITS = 20_000
#: Integer exponents larger than this (in absolute value) are not computed.
MAX_EXPONENT = 10**6
#: Matrix symbols get sizes 1..MAX_SIZE; explicit matrices larger than MAX_EXPLICIT per
#: side are not inverted or multiplied.
MAX_SIZE = 5
MAX_EXPLICIT = 12
#: Working precisions in bits: the second is tried only when the first leaves a comparison
#: or a domain check undecided.
PRECISIONS = (128, 1024)


@dataclass(frozen=True)
class Examined:
    """What :func:`cross_examine` did.

    ``points_tried``: points drawn (admissible or not); ``points_used``: points where both
    sides were evaluated and the relation was certified to hold; ``skipped_reason``: why no
    point was used (empty when some were); ``points_close``: points where an (in)equality
    of irrational values agreed to within the working precision but could not be certified.
    """

    points_tried: int
    points_used: int
    skipped_reason: str = ""
    points_close: int = 0


# --------------------------------------------------------------------------------------
# Internal signals.  None of them leaves this module.


class _Unsupported(Exception):
    """The expression holds something this evaluator cannot compute at any point."""


class _Undefined(Exception):
    """The expression is undefined (or unusable) at this point: try another point."""


class _Uncertain(_Undefined):
    """A domain check or a branch could not be decided at this precision (may retry)."""


class _OverBudget(_Undefined):
    """The point needed more tree nodes than the budget: other points will likely too."""


# --------------------------------------------------------------------------------------
# Values: Fraction (exact), flint.arb (a certified ball), or _Matrix of those.


class _Matrix:
    """An explicit matrix of values, row-major."""

    __slots__ = ("rows", "cols", "entries")

    def __init__(self, rows: int, cols: int, entries: Any) -> None:
        self.rows, self.cols, self.entries = rows, cols, tuple(entries)

    def at(self, i: int, j: int) -> Any:
        return self.entries[i * self.cols + j]

    def text(self) -> str:
        rows = ("[" + ", ".join(_short(self.at(i, j)) for j in range(self.cols)) + "]" for i in range(self.rows))
        return "[" + ", ".join(rows) + "]"


def _to_arb(value: Any) -> Any:
    if isinstance(value, flint.arb):
        return value
    return flint.arb(flint.fmpq(value.numerator, value.denominator))


def _exact(value: Fraction) -> Any:
    """``value`` itself, or the ball enclosing it when it has grown too large to keep exact."""
    if value.numerator.bit_length() > MAX_BITS or value.denominator.bit_length() > MAX_BITS:
        return _to_arb(value)
    return value


def _finite(ball: Any) -> Any:
    if not ball.is_finite():
        raise _Uncertain("a value overflowed or lost all precision")
    return ball


def _sign(value: Any) -> Any:
    """-1, 0 or 1 when certified, None when the ball straddles 0."""
    if isinstance(value, Fraction):
        return (value > 0) - (value < 0)
    if value.is_exact():  # a ball of radius 0 is an exact (dyadic) value
        return (value > 0) - (value < 0)
    if value > 0:
        return 1
    if value < 0:
        return -1
    return None


def _integer_of(value: Any) -> int | None:
    """The value as a Python int when it certainly is an integer, else None."""
    if isinstance(value, Fraction):
        return value.numerator if value.denominator == 1 else None
    if isinstance(value, flint.arb) and value.is_exact() and value.is_finite() and value.is_integer():
        return int(value.unique_fmpz())
    return None


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, _Matrix) or isinstance(b, _Matrix):
        if not (isinstance(a, _Matrix) and isinstance(b, _Matrix)):
            raise _Unsupported("a matrix added to a scalar")
        if (a.rows, a.cols) != (b.rows, b.cols):
            raise _Undefined("matrices of different shapes added")
        return _Matrix(a.rows, a.cols, map(_add, a.entries, b.entries))
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return _exact(a + b)
    return _to_arb(a) + _to_arb(b)


def _mul(a: Any, b: Any) -> Any:
    if isinstance(a, _Matrix) and isinstance(b, _Matrix):
        return _matmul(a, b)
    if isinstance(a, _Matrix):
        a, b = b, a  # scalars commute with matrices
    if isinstance(b, _Matrix):
        return _Matrix(b.rows, b.cols, (_mul(a, entry) for entry in b.entries))
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return _exact(a * b)
    return _to_arb(a) * _to_arb(b)


def _reciprocal(value: Any) -> Any:
    if isinstance(value, _Matrix):
        return _inverse(value)
    sign = _sign(value)
    if sign == 0:
        raise _Undefined("division by zero")
    if sign is None:
        raise _Uncertain("division by a value that may be zero")
    if isinstance(value, Fraction):
        return 1 / value
    return _finite(1 / value)


def _matmul(a: _Matrix, b: _Matrix) -> _Matrix:
    if a.cols != b.rows:
        raise _Undefined("matrix product of mismatched shapes")
    if max(a.rows, a.cols, b.cols) > MAX_EXPLICIT:
        raise _Unsupported("a matrix product larger than 12x12")
    entries = []
    for i in range(a.rows):
        for j in range(b.cols):
            total = Fraction(0)
            for k in range(a.cols):
                total = _add(total, _mul(a.at(i, k), b.at(k, j)))
            entries.append(total)
    return _Matrix(a.rows, b.cols, entries)


def _transpose(a: _Matrix) -> _Matrix:
    return _Matrix(a.cols, a.rows, (a.at(i, j) for j in range(a.cols) for i in range(a.rows)))


def _identity(n: int) -> _Matrix:
    return _Matrix(n, n, (Fraction(int(i == j)) for i in range(n) for j in range(n)))


def _eliminate(a: _Matrix, augment: _Matrix | None) -> tuple[Any, _Matrix | None]:
    """Gaussian elimination of square ``a`` (and ``augment`` alongside): (det, solved augment).

    A pivot is any entry certified non-zero; when a column has none and some entry is not
    certainly zero, the answer is uncertain.  det is 0 when a column is certainly all zero.
    """
    n = a.rows
    if a.cols != n:
        raise _Undefined("determinant or inverse of a non-square matrix")
    if n > MAX_EXPLICIT:
        raise _Unsupported("a determinant or inverse larger than 12x12")
    width = n + (augment.cols if augment is not None else 0)
    rows = [[a.at(i, j) for j in range(n)] + ([augment.at(i, j) for j in range(augment.cols)] if augment else [])
            for i in range(n)]
    det = Fraction(1)
    for col in range(n):
        signs = [_sign(rows[r][col]) for r in range(col, n)]
        pivot = next((col + k for k, s in enumerate(signs) if s in (-1, 1)), None)
        if pivot is None:
            if all(s == 0 for s in signs):
                return Fraction(0), None
            raise _Uncertain("a pivot that may be zero")
        if pivot != col:
            rows[col], rows[pivot] = rows[pivot], rows[col]
            det = _mul(det, Fraction(-1))
        inverse_pivot = _reciprocal(rows[col][col])
        det = _mul(det, rows[col][col])
        rows[col] = [_mul(entry, inverse_pivot) for entry in rows[col]]
        for r in range(n):
            if r != col and _sign(rows[r][col]) != 0:
                factor = rows[r][col]
                rows[r] = [_add(rows[r][c], _mul(Fraction(-1), _mul(factor, rows[col][c]))) for c in range(width)]
    if augment is None:
        return det, None
    return det, _Matrix(n, augment.cols, (rows[i][n + j] for i in range(n) for j in range(augment.cols)))


def _determinant(a: _Matrix) -> Any:
    return _eliminate(a, None)[0]


def _inverse(a: _Matrix) -> _Matrix:
    det, inverse = _eliminate(a, _identity(a.rows))
    if inverse is None:
        raise _Undefined("inverse of a singular matrix")
    return inverse


def _short(value: Any) -> str:
    """A value for a message: rationals exactly when short, otherwise 6 significant digits."""
    if isinstance(value, _Matrix):
        return value.text()
    if isinstance(value, Fraction):
        if value.numerator.bit_length() < 80 and value.denominator.bit_length() < 80:
            return str(value)
        value = _to_arb(value)
    return safe_text(value.str(6, radius=False), 40)  # a huge exponent is still cut short


# --------------------------------------------------------------------------------------
# Flags: which values a symbol's assumptions allow.

#: Facts that every finite real rational value has.
_ALWAYS = frozenset({"commutative", "complex", "real", "finite", "hermitian", "algebraic", "rational"})
#: Facts no rational value has: a symbol that needs one is not examined.
_NEVER = frozenset({"irrational", "transcendental", "infinite", "imaginary"})


def _fact(name: str, value: Fraction) -> Any:
    """Whether the rational ``value`` has the assumption ``name`` (None: cannot tell)."""
    name = name[len("extended_"):] if name.startswith("extended_") else name
    if name in _ALWAYS:
        return True
    if name in _NEVER:
        return False
    integral = value.denominator == 1
    tests = {
        "integer": integral,
        "noninteger": not integral,
        "positive": value > 0,
        "negative": value < 0,
        "nonnegative": value >= 0,
        "nonpositive": value <= 0,
        "zero": value == 0,
        "nonzero": value != 0,
        "antihermitian": value == 0,  # a real number is antihermitian only when it is 0
        "even": integral and value.numerator % 2 == 0,
        "odd": integral and value.numerator % 2 == 1,
        "prime": integral and _is_prime(value.numerator),
        "composite": integral and value.numerator > 1 and not _is_prime(value.numerator),
    }
    return tests.get(name)


def _is_prime(n: int) -> bool:
    return n >= 2 and all(n % d for d in range(2, math.isqrt(n) + 1)) if n < 10**6 else False


def _allowed(facts: dict[Any, Any], value: Fraction) -> bool:
    """Whether ``value`` satisfies every fact; a fact that cannot be read is _Unsupported."""
    for name, wanted in facts.items():
        has = _fact(name, value)
        if has is None:
            raise _Unsupported(f"a symbol with the assumption {name}={wanted}")
        if has != wanted:
            return False
    return True


def _facts_of(symbol: Any) -> dict[Any, Any]:
    facts = dict(getattr(symbol, "assumptions0", {}) or {})
    if facts.get("real") is False or facts.get("commutative") is False:
        raise _Unsupported(f"the non-real or non-commutative symbol {safe_text(symbol, 30)}")
    return facts


#: Fallback values, tried in order when random draws keep missing a symbol's flags.
_FALLBACK = tuple(Fraction(v) for v in (0, 1, -1, 2, -2, 3, -3, 4, 5, 6, 7, 11)) + tuple(
    Fraction(p, q) for p, q in ((1, 2), (-1, 2), (7, 3), (-5, 2), (1, 3)))


# --------------------------------------------------------------------------------------
# Points.


class _Point:
    """One concrete point: the values of symbols, indexed entries and matrix symbols.

    Values are drawn on first use (deterministically: the draws follow the evaluation
    order, which follows the tree) and memoized, so that ``s[2]`` is the same value
    everywhere in the point and at every working precision.
    """

    def __init__(self, rng: random.Random, boundary: bool, small: frozenset[Any], hints: dict[Any, Any]) -> None:
        self.rng, self.boundary, self.small, self.hints = rng, boundary, small, hints
        self.values: dict[Any, Any] = {}
        self.labels: dict[Any, Any] = {}  # key -> text shown in a report

    def symbol(self, symbol: Any) -> Fraction:
        if symbol not in self.values:
            facts = _facts_of(symbol)
            self.values[symbol] = self._draw(facts, symbol in self.small, self.hints.get(symbol))
            self.labels[symbol] = safe_text(symbol, 30)
        value: Fraction = self.values[symbol]
        return value

    def entry(self, base: Any, indices: tuple[Any, ...]) -> Fraction:
        key = (base, indices)
        if key not in self.values:
            facts = {}
            for source in (getattr(base, "label", None), base):
                facts.update(_facts_of(source) if source is not None else {})
            self.values[key] = self._draw(facts, False, None)
            self.labels[key] = f"{safe_text(base, 30)}[{','.join(map(str, indices))}]"
        value: Fraction = self.values[key]
        return value

    def matrix(self, symbol: Any, rows: int, cols: int) -> _Matrix:
        key = (symbol, rows, cols)
        if key not in self.values:
            matrix = None
            for _ in range(3):  # square ones are redrawn when singular, so most are invertible
                matrix = _Matrix(rows, cols, (self._matrix_entry() for _ in range(rows * cols)))
                if rows != cols or _determinant(matrix) != 0:
                    break
            self.values[key] = matrix
            self.labels[key] = safe_text(symbol, 30)
        matrix_value: _Matrix = self.values[key]
        return matrix_value

    def _matrix_entry(self) -> Fraction:
        return self.rng.choice((Fraction(-3), Fraction(-2), Fraction(-1), Fraction(0), Fraction(1), Fraction(2),
                                Fraction(3), Fraction(1, 2), Fraction(-1, 2), Fraction(5, 3)))

    def _draw(self, facts: dict[Any, Any], small: bool, hint: Any) -> Fraction:
        integer = facts.get("integer") is True
        for attempt in range(24):
            value = self._candidate(integer, small, hint, wide=attempt >= 12)
            if _allowed(facts, value):
                return value
        for value in _FALLBACK:
            if _allowed(facts, value):
                return value
        raise _Unsupported("a symbol whose flags no small rational satisfies")

    def _candidate(self, integer: bool, small: bool, hint: Any, wide: bool) -> Fraction:
        rng = self.rng
        if hint is not None and rng.random() < 0.6:
            return self._within(hint, integer)
        if integer:
            if wide:
                return Fraction(rng.randint(-8, 8))
            if small:  # sum bounds and sizes: 0..6, with 0, 1, 2 at boundary points
                return Fraction(rng.choice((0, 1, 2)) if self.boundary else rng.randint(0, 6))
            return Fraction(rng.choice((0, 1, -1, 2)) if self.boundary else rng.randint(-4, 6))
        # A real (or unflagged) symbol: mostly NOT an integer, so that a checker that took
        # it for one is caught; 0, 1, -1 and 1/2 at boundary points.
        if self.boundary and not wide:
            return rng.choice((Fraction(0), Fraction(1), Fraction(-1), Fraction(1, 2), Fraction(2), Fraction(-1, 2)))
        if small and rng.random() < 0.5:
            return Fraction(rng.randint(0, 6))
        if rng.random() < 0.25:
            return Fraction(rng.randint(-4, 6))
        q = rng.choice((2, 3, 4, 5, 7))
        p = rng.choice([p for p in range(-5 * q, 6 * q + 1) if p % q])
        return Fraction(p, q)

    def _within(self, hint: Any, integer: bool) -> Fraction:
        low, high = hint
        rng = self.rng
        value: Fraction
        if low is not None and high is not None:
            value = low + (high - low) * Fraction(rng.randint(0, 12), 12)
        elif low is not None:
            value = low + rng.choice((Fraction(0), Fraction(1, 3), Fraction(1), Fraction(7, 3), Fraction(4)))
        else:
            value = high - rng.choice((Fraction(0), Fraction(1, 3), Fraction(1), Fraction(7, 3), Fraction(4)))
        if integer:
            value = Fraction(math.ceil(value) if low is not None else math.floor(value))
        return value

    def describe(self) -> str:
        parts = []
        for key, label in self.labels.items():
            value = self.values[key]
            parts.append((label, f"{label}={_short(value)}"))
        return ", ".join(text for _, text in sorted(parts)) or "(no symbols)"


# --------------------------------------------------------------------------------------
# Comparisons, certified: True, False, or None (undecided).


def _compare(relation: str, a: Any, b: Any) -> Any:
    if isinstance(a, _Matrix) or isinstance(b, _Matrix):
        return _compare_matrices(relation, a, b)
    difference = _add(a, _mul(Fraction(-1), b))
    if isinstance(difference, Fraction):
        return {"=": difference == 0, "!=": difference != 0, ">": difference > 0, ">=": difference >= 0,
                "<": difference < 0, "<=": difference <= 0}[relation]
    if not difference.is_finite():
        return None
    # arb's comparisons are certified: True only when they hold for every point of the ball.
    positive, negative = difference > 0, difference < 0
    nonnegative, nonpositive = difference >= 0, difference <= 0
    zero = difference.is_exact() and difference.is_zero()
    holds, fails = {
        "=": (zero, positive or negative),
        "!=": (positive or negative, zero),
        ">": (positive, nonpositive),
        ">=": (nonnegative, negative),
        "<": (negative, nonnegative),
        "<=": (nonpositive, positive),
    }[relation]
    return True if holds else False if fails else None


def _compare_matrices(relation: str, a: Any, b: Any) -> Any:
    if relation not in ("=", "!="):
        raise _Unsupported("an inequality between matrices")
    a, b = (_zero_like(a, b), b) if not isinstance(a, _Matrix) else (a, _zero_like(b, a))
    equal: bool | None
    if (a.rows, a.cols) != (b.rows, b.cols):
        equal = False
    else:
        results = [_compare("=", x, y) for x, y in zip(a.entries, b.entries)]
        equal = False if False in results else True if all(results) else None
    if relation == "=" or equal is None:
        return equal
    return not equal


def _zero_like(value: Any, matrix: _Matrix) -> _Matrix:
    """A scalar compared with a matrix: only 0 means something (the zero matrix)."""
    if isinstance(value, _Matrix):
        return value
    if isinstance(value, Fraction) and value == 0:
        return _Matrix(matrix.rows, matrix.cols, [Fraction(0)] * (matrix.rows * matrix.cols))
    raise _Unsupported("a matrix compared with a non-zero scalar")


def _close(relation: str, a: Any, b: Any, bits: int) -> bool:
    """Whether an undecided (in)equality agrees to about half the working precision."""
    if relation not in ("=", "<=", ">="):
        return False  # a strict inequality whose sides agree may well be false
    if isinstance(a, _Matrix) or isinstance(b, _Matrix):
        if not (isinstance(a, _Matrix) and isinstance(b, _Matrix)) or (a.rows, a.cols) != (b.rows, b.cols):
            return False
        return all(_close("=", x, y, bits) for x, y in zip(a.entries, b.entries))
    a, b = _to_arb(a), _to_arb(b)
    difference = a - b
    if not (difference.is_finite() and 0 in difference):
        return False
    scale = 1 + max(abs(a).upper(), abs(b).upper())
    return bool(difference.rad() < scale * flint.arb(2) ** (-(bits // 2)))


# --------------------------------------------------------------------------------------
# The evaluator: a walk over the tree with an environment of bound values.


class _Evaluator:
    """Evaluates trees at one point and one precision, counting the nodes it visits."""

    def __init__(self, point: _Point, budget: int, unfolded: dict[Any, Any]) -> None:
        self.point, self.budget, self.unfolded = point, budget, unfolded
        self.nodes = 0

    def value(self, node: Any, env: dict[Any, Any], depth: int) -> Any:
        self.nodes += 1
        if self.nodes > self.budget:
            raise _OverBudget("more tree nodes than the budget allows at this point")
        if depth > MAX_DEPTH:
            raise _Unsupported("an expression nested too deeply")
        return _handler(type(node))(self, node, env, depth + 1)

    def scalar(self, node: Any, env: dict[Any, Any], depth: int) -> Any:
        result = self.value(node, env, depth)
        if isinstance(result, _Matrix):
            raise _Unsupported("a matrix where a number is needed")
        return result

    def integer(self, node: Any, env: dict[Any, Any], depth: int) -> int:
        result = _integer_of(self.scalar(node, env, depth))
        if result is None:
            raise _Undefined("a value that must be an integer (a bound, an index, a size) is not one")
        return result

    def size(self, node: Any, env: dict[Any, Any], depth: int) -> int:
        size = self.integer(node, env, depth)
        # Sizes given by symbols stay small; an explicit Identity(8) is allowed a bit more.
        limit = MAX_EXPLICIT if isinstance(node, (int, sympy.Integer)) else MAX_SIZE
        if not 1 <= size <= limit:
            raise _Undefined(f"a matrix size of {size} (only 1..{limit} are examined)")
        return size

    def truth(self, node: Any, env: dict[Any, Any], depth: int) -> Any:
        """A condition at the point: True, False or None (undecided)."""
        self.nodes += 1
        if self.nodes > self.budget:
            raise _OverBudget("more tree nodes than the budget allows at this point")
        if depth > MAX_DEPTH:
            raise _Unsupported("a condition nested too deeply")
        if node is True or node is sympy.true:
            return True
        if node is False or node is sympy.false:
            return False
        if isinstance(node, sympy.core.relational.Relational) and type(node) in _RELATIONALS:
            left = self.value(node.lhs, env, depth + 1)
            right = self.value(node.rhs, env, depth + 1)
            return _compare(_RELATIONALS[type(node)], left, right)
        if isinstance(node, (sympy.And, sympy.Or)):
            results = [self.truth(arg, env, depth + 1) for arg in node.args]
            decisive = isinstance(node, sympy.Or)  # Or: one True decides; And: one False
            if decisive in results:
                return decisive
            return None if None in results else not decisive
        if isinstance(node, sympy.Not):
            result = self.truth(node.args[0], env, depth + 1)
            return None if result is None else not result
        if isinstance(node, sympy.assumptions.assume.AppliedPredicate):
            return self._predicate(node, env, depth + 1)
        raise _Unsupported(f"the condition {type(node).__name__}")

    def _predicate(self, node: Any, env: dict[Any, Any], depth: int) -> Any:
        name = getattr(node.function, "name", None)
        if len(node.arguments) != 1:
            raise _Unsupported(f"the predicate Q.{name}")
        value = self.value(node.arguments[0], env, depth)
        if isinstance(value, _Matrix):
            square = value.rows == value.cols
            if name in ("invertible", "singular"):
                if not square:
                    return name == "singular"
                sign = _sign(_determinant(value))
                return None if sign is None else (sign != 0) == (name == "invertible")
            if name == "square":
                return square
            if name == "symmetric":
                return _compare("=", value, _transpose(value)) if square else False
            raise _Unsupported(f"the predicate Q.{name} of a matrix")
        sign = _sign(value)
        integral = _integer_of(value)
        if name in ("real", "finite", "complex", "extended_real"):
            return True
        if name == "rational":
            return True if isinstance(value, Fraction) else None
        if name in ("integer", "even", "odd"):
            if integral is None:
                return False if isinstance(value, Fraction) else None
            return name == "integer" or (integral % 2 == 0) == (name == "even")
        tests = {"positive": lambda s: s > 0, "negative": lambda s: s < 0, "nonnegative": lambda s: s >= 0,
                 "nonpositive": lambda s: s <= 0, "zero": lambda s: s == 0, "nonzero": lambda s: s != 0}
        if name not in tests:
            raise _Unsupported(f"the predicate Q.{name}")
        return None if sign is None else tests[name](sign)

    # Sums and products: loops over an environment, outermost limit first.

    def iterate(self, body: Any, limits: Any, env: dict[Any, Any], depth: int, product: bool) -> Any:
        if not limits:
            return self.value(body, env, depth)
        variable, low, high = self._limit(limits[-1])  # SymPy lists the innermost limit first
        start = self.integer(low, env, depth)
        stop = self.integer(high, env, depth)
        if stop < start - 1:
            raise _Undefined("a reversed summation range")
        if stop - start + 1 > MAX_TERMS:
            raise _Undefined(f"a range of more than {MAX_TERMS} terms")
        total: Fraction | _Matrix = Fraction(int(product))
        inner = dict(env)  # the bound variable shadows any outer binding of the same symbol
        for k in range(start, stop + 1):
            inner[variable] = Fraction(k)
            term = self.iterate(body, limits[:-1], inner, depth, product)
            if product:
                total = _mul(total, term)
            elif isinstance(term, _Matrix) and _is_zero(total):
                total = term  # a sum of matrices starts from its first term
            else:
                total = _add(total, term)
        return total

    @staticmethod
    def _limit(limit: tuple[Any, ...]) -> Any:
        if len(limit) != 3 or not isinstance(limit[0], (sympy.Symbol, Idx)):
            raise _Unsupported("a sum or product limit that is not (variable, low, high)")
        return limit

    def named(self, node: Any, env: dict[Any, Any], depth: int) -> Any:
        """A project operator: its own definition (``unfold``), never the checker's."""
        unfolded = self._unfold(node)
        if unfolded is not None:
            return self.value(unfolded, env, depth)
        # Matrix operators unfold only with explicit arguments: give them this point's.
        # (A failure inside the operator's own code reaches the one boundary in _examine.)
        arguments = [_as_sympy(self.value(arg, env, depth)) for arg in node.args]
        rebuilt = type(node)(*arguments)
        unfolded = rebuilt.unfold()
        if unfolded == rebuilt:
            raise _Unsupported(f"the operator {type(node).__name__}")
        return self.value(unfolded, {}, depth)

    def _unfold(self, node: Any) -> Any:
        if node not in self.unfolded:
            unfolded = node.unfold()
            self.unfolded[node] = None if unfolded == node else unfolded
        return self.unfolded[node]


def _is_zero(value: Any) -> bool:
    return isinstance(value, Fraction) and value == 0


def _as_sympy(value: Any) -> Any:
    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    if isinstance(value, _Matrix) and all(isinstance(entry, Fraction) for entry in value.entries):
        return sympy.ImmutableMatrix(value.rows, value.cols, [_as_sympy(entry) for entry in value.entries])
    raise _Undefined("an operator argument that is not exact at this point")


_RELATIONALS = {sympy.Eq: "=", sympy.Ne: "!=", sympy.Lt: "<", sympy.Le: "<=", sympy.Gt: ">", sympy.Ge: ">="}


# --------------------------------------------------------------------------------------
# Node handlers: handler(evaluator, node, env, depth) -> value.


def _rational(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    return _exact(Fraction(node.p, node.q))


def _python_number(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    return _exact(Fraction(node))


def _symbol(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    if node in env:
        return env[node]
    if isinstance(node, Idx) and (node.lower is not None or node.upper is not None):
        raise _Unsupported("a free Idx with a range")
    return ev.point.symbol(node)


def _indexed(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    indices = tuple(ev.integer(index, env, depth) for index in node.indices)
    return ev.point.entry(node.base, indices)


def _fold(combine: Any) -> Any:
    def handler(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
        args = node.args
        total = ev.value(args[0], env, depth)
        for arg in args[1:]:
            total = combine(total, ev.value(arg, env, depth))
        return total

    return handler


def _pow(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    base, exponent = node.args
    return _power(ev.value(base, env, depth), ev.scalar(exponent, env, depth))


def _power(base: Any, exponent: Any) -> Any:
    integral = _integer_of(exponent)
    if isinstance(base, _Matrix):
        return _matrix_power(base, integral)
    if integral is not None:
        return _integer_power(base, integral)
    sign = _sign(base)
    if sign == 0:
        exponent_sign = _sign(exponent)
        if exponent_sign is None:
            raise _Uncertain("0 to a power whose sign is undecided")
        if exponent_sign > 0:
            return Fraction(0)
        raise _Undefined("0 to a non-positive power")
    if sign is None:
        raise _Uncertain("a power of a base whose sign is undecided")
    if sign < 0:
        raise _Undefined("a negative number to a non-integer power (not real)")
    if isinstance(base, Fraction) and isinstance(exponent, Fraction):
        root = _exact_root(base, exponent.denominator)
        if root is not None:
            return _integer_power(root, exponent.numerator)
    return _finite(_to_arb(base) ** _to_arb(exponent))


def _exact_root(value: Fraction, degree: int) -> Any:
    """The exact positive ``degree``-th root of ``value`` when it is rational, else None."""
    if degree > 64:
        return None
    parts = []
    for part in (value.numerator, value.denominator):
        root = int(flint.fmpz(part).root(degree))
        if root**degree != part:
            return None
        parts.append(root)
    return Fraction(*parts)


def _integer_power(base: Any, exponent: int) -> Any:
    if exponent == 0:
        return Fraction(1)  # SymPy's convention, 0**0 = 1
    if isinstance(base, Fraction) and base in (0, 1, -1):
        if base == 0 and exponent < 0:
            raise _Undefined("division by zero (0 to a negative power)")
        return base if base != -1 or exponent % 2 else Fraction(1)
    if abs(exponent) > MAX_EXPONENT:
        raise _Undefined("an exponent too large to compute")
    if exponent < 0:
        base, exponent = _reciprocal(base), -exponent
    if isinstance(base, Fraction):
        if max(base.numerator.bit_length(), base.denominator.bit_length()) * exponent <= MAX_BITS:
            return base**exponent
        base = _to_arb(base)
    return _finite(base**exponent)


def _matrix_power(base: _Matrix, exponent: Any) -> Any:
    if exponent is None:
        raise _Undefined("a matrix power with a non-integer exponent")
    if base.rows != base.cols:
        raise _Undefined("a power of a non-square matrix")
    if abs(exponent) > 64:
        raise _Undefined("a matrix power above 64")
    if exponent < 0:
        base, exponent = _inverse(base), -exponent
    result = _identity(base.rows)
    while exponent:  # square and multiply: at most 12 products of matrices
        if exponent & 1:
            result = _matmul(result, base)
        exponent >>= 1
        if exponent:
            base = _matmul(base, base)
    return result


def _domain_positive(x: Any) -> None:
    sign = _sign(x)
    if sign is None:
        raise _Uncertain("a logarithm of a value whose sign is undecided")
    if sign <= 0:
        raise _Undefined("a logarithm of a non-positive number")


def _domain_nonzero_via(method: str) -> Any:
    """A check that ``method(x)`` (sin, cos, or x itself) is certified non-zero."""

    def check(x: Any) -> None:
        if method in ("sin", "identity") and _is_zero(x):
            raise _Undefined("a pole at 0")
        sign = _sign(x if method == "identity" else getattr(_to_arb(x), method)())
        if sign is None:
            raise _Uncertain(f"a value near a pole ({method} may be 0)")
        if sign == 0:
            raise _Undefined("a pole")

    return check


def _domain_unit_interval(x: Any) -> None:
    if isinstance(x, Fraction):
        if not -1 <= x <= 1:
            raise _Undefined("asin/acos of a value outside [-1, 1]")
        return
    if x > 1 or x < -1:
        raise _Undefined("asin/acos of a value outside [-1, 1]")
    if not (x >= -1 and x <= 1):
        raise _Uncertain("asin/acos of a value that may lie outside [-1, 1]")


def _function(method: str, exact: dict[Any, Any] | None = None, domain: Any = None) -> Any:
    """A real function of one argument computed by the arb ``method``.

    ``exact`` gives the values at rational points where the result is rational (exp(0) =
    1...), so that such values stay exact; ``domain`` raises where it is undefined.
    """

    def handler(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
        if len(node.args) != 1:
            raise _Unsupported(f"{type(node).__name__} with {len(node.args)} arguments")
        x = ev.scalar(node.args[0], env, depth)
        if exact and isinstance(x, Fraction) and x in exact:
            return exact[x]
        if domain is not None:
            domain(x)
        return _finite(getattr(_to_arb(x), method)())

    return handler


_ZERO, _ONE = Fraction(0), Fraction(1)
_FUNCTIONS = {
    sympy.exp: _function("exp", {_ZERO: _ONE}),
    sympy.log: _function("log", {_ONE: _ZERO}, _domain_positive),
    sympy.sin: _function("sin", {_ZERO: _ZERO}),
    sympy.cos: _function("cos", {_ZERO: _ONE}),
    sympy.tan: _function("tan", {_ZERO: _ZERO}, _domain_nonzero_via("cos")),
    sympy.cot: _function("cot", None, _domain_nonzero_via("sin")),
    sympy.sec: _function("sec", {_ZERO: _ONE}, _domain_nonzero_via("cos")),
    sympy.csc: _function("csc", None, _domain_nonzero_via("sin")),
    sympy.sinh: _function("sinh", {_ZERO: _ZERO}),
    sympy.cosh: _function("cosh", {_ZERO: _ONE}),
    sympy.tanh: _function("tanh", {_ZERO: _ZERO}),
    sympy.coth: _function("coth", None, _domain_nonzero_via("identity")),
    sympy.sech: _function("sech", {_ZERO: _ONE}),
    sympy.csch: _function("csch", None, _domain_nonzero_via("identity")),
    sympy.asin: _function("asin", {_ZERO: _ZERO}, _domain_unit_interval),
    sympy.acos: _function("acos", {_ONE: _ZERO}, _domain_unit_interval),
    sympy.atan: _function("atan", {_ZERO: _ZERO}),
}


def _abs(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    x = ev.scalar(node.args[0], env, depth)
    return abs(x)


def _signum(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    sign = _sign(ev.scalar(node.args[0], env, depth))
    if sign is None:
        raise _Uncertain("the sign of a value near 0")
    return Fraction(sign)


def _extremum(largest: bool) -> Any:
    def handler(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
        values = [ev.scalar(arg, env, depth) for arg in node.args]
        if all(isinstance(v, Fraction) for v in values):
            return max(values) if largest else min(values)
        result = _to_arb(values[0])
        for v in values[1:]:  # arb's max/min enclose the extremum of the balls: certified
            result = result.max(_to_arb(v)) if largest else result.min(_to_arb(v))
        return result

    return handler


def _rounding(up: bool) -> Any:
    def handler(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
        x = ev.scalar(node.args[0], env, depth)
        if isinstance(x, Fraction):
            return Fraction(math.ceil(x) if up else math.floor(x))
        result = _integer_of(x.ceil() if up else x.floor())
        if result is None:
            raise _Uncertain("floor/ceiling of a value near an integer")
        return Fraction(result)

    return handler


def _identity_function(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    # re, conjugate: every value here is real
    return ev.value(node.args[0], env, depth)


def _imaginary_part(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    ev.scalar(node.args[0], env, depth)
    return Fraction(0)


def _piecewise(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    for expression, condition in node.args:
        holds = ev.truth(condition, env, depth)
        if holds is None:
            raise _Uncertain("a Piecewise condition undecided at this point")
        if holds:
            return ev.value(expression, env, depth)
    raise _Undefined("no Piecewise branch applies")


def _kronecker(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    if len(node.args) != 2:
        raise _Unsupported("KroneckerDelta with a third argument")
    i, j = (ev.scalar(arg, env, depth) for arg in node.args)
    equal = _compare("=", i, j)
    if equal is None:
        raise _Uncertain("KroneckerDelta of values that may be equal")
    return Fraction(int(equal))


def _factorial(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    n = _integer_of(ev.scalar(node.args[0], env, depth))
    if n is None or not 0 <= n <= 1000:
        raise _Undefined("factorial outside 0..1000 (or of a non-integer)")
    return _exact(Fraction(math.factorial(n)))


def _binomial(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    n, k = (_integer_of(ev.scalar(arg, env, depth)) for arg in node.args)
    if n is None or k is None or not 0 <= n <= 1000:
        raise _Undefined("binomial outside whole numbers n in 0..1000")
    return Fraction(math.comb(n, k) if 0 <= k <= n else 0)


def _sum(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    return ev.iterate(node.function, node.limits, env, depth, product=False)


def _product(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    return ev.iterate(node.function, node.limits, env, depth, product=True)


def _constant(make: Any) -> Any:
    def handler(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
        return make()

    return handler


# Matrices.


def _explicit_matrix(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    rows, cols = node.shape
    if rows * cols > MAX_EXPLICIT * MAX_EXPLICIT or rows * cols == 0:
        raise _Unsupported("an explicit matrix that is empty or larger than 12x12")
    return _Matrix(rows, cols, (ev.scalar(node[i, j], env, depth) for i in range(rows) for j in range(cols)))


def _matrix_symbol(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    rows, cols = (ev.size(dim, env, depth) for dim in node.shape)
    return ev.point.matrix(node, rows, cols)


def _identity_matrix(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    return _identity(ev.size(node.args[0], env, depth))


def _filled_matrix(fill: int) -> Any:
    def handler(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
        rows, cols = (ev.size(dim, env, depth) for dim in node.args[:2])
        return _Matrix(rows, cols, [Fraction(fill)] * (rows * cols))

    return handler


def _matrix_of(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> _Matrix:
    value = ev.value(node, env, depth)
    if not isinstance(value, _Matrix):
        raise _Unsupported("a number where a matrix is needed")
    return value


def _transpose_node(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    value = ev.value(node.args[0], env, depth)
    return _transpose(value) if isinstance(value, _Matrix) else value


def _inverse_node(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    return _reciprocal(ev.value(node.args[0], env, depth))


def _trace(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    matrix = _matrix_of(ev, node.args[0], env, depth)
    if matrix.rows != matrix.cols:
        raise _Undefined("the trace of a non-square matrix")
    total = Fraction(0)
    for i in range(matrix.rows):
        total = _add(total, matrix.at(i, i))
    return total


def _determinant_node(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    return _determinant(_matrix_of(ev, node.args[0], env, depth))


def _matrix_element(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    parent, i, j = node.args
    matrix = _matrix_of(ev, parent, env, depth)
    i, j = ev.integer(i, env, depth), ev.integer(j, env, depth)
    if not (0 <= i < matrix.rows and 0 <= j < matrix.cols):
        raise _Undefined("a matrix element outside the matrix")
    return matrix.at(i, j)


def _hadamard(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    matrices = [_matrix_of(ev, arg, env, depth) for arg in node.args]
    result = matrices[0]
    for other in matrices[1:]:
        if (other.rows, other.cols) != (result.rows, result.cols):
            raise _Undefined("a Hadamard product of different shapes")
        result = _Matrix(result.rows, result.cols, map(_mul, result.entries, other.entries))
    return result


def _frac(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    numerator, denominator = node.args
    return _mul(ev.value(numerator, env, depth), _reciprocal(ev.scalar(denominator, env, depth)))


def _unsupported(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> None:
    raise _Unsupported(_describe_unsupported(node))


def _describe_unsupported(node: Any) -> str:
    if isinstance(node, AppliedUndef):
        return f"the undefined function {safe_text(node.func, 30)} (no value to give it)"
    if isinstance(node, sympy.Float):
        return "a Float (nothing exact to check)"
    if isinstance(node, (sympy.core.numbers.NaN, sympy.core.numbers.Infinity, sympy.core.numbers.NegativeInfinity,
                         sympy.core.numbers.ComplexInfinity)):
        return "a non-finite value (nan, oo or zoo)"
    if node is sympy.I:
        return "the imaginary unit I (only real values are examined)"
    return f"{type(node).__name__} (not evaluated by the cross-examiner)"


def _build_table() -> dict[Any, Any]:
    from sympy.matrices.expressions import (Adjoint, Determinant, HadamardProduct, Identity, Inverse, MatAdd,
                                            MatMul, MatPow, MatrixSymbol, OneMatrix, Trace, Transpose, ZeroMatrix)
    from sympy.matrices.expressions.matexpr import MatrixElement

    numbers = sympy.core.numbers
    table = {
        bool: _unsupported,
        int: _python_number,
        Fraction: _python_number,
        # Unsupported on purpose, listed before the classes they derive from.
        AppliedUndef: _unsupported,
        sympy.Float: _unsupported,
        numbers.NaN: _unsupported,
        numbers.Infinity: _unsupported,
        numbers.NegativeInfinity: _unsupported,
        numbers.ComplexInfinity: _unsupported,
        numbers.ImaginaryUnit: _unsupported,
        sympy.Rational: _rational,
        numbers.Pi: _constant(flint.arb.pi),
        numbers.Exp1: _constant(flint.arb.const_e),
        numbers.GoldenRatio: _constant(lambda: (1 + flint.arb(5).sqrt()) / 2),
        numbers.Catalan: _constant(flint.arb.const_catalan),
        numbers.EulerGamma: _constant(flint.arb.const_euler),
        sympy.Symbol: _symbol,
        Idx: _symbol,
        Indexed: _indexed,
        sympy.Add: _fold(_add),
        sympy.Mul: _fold(_mul),
        sympy.Pow: _pow,
        sympy.Abs: _abs,
        sympy.sign: _signum,
        sympy.Max: _extremum(True),
        sympy.Min: _extremum(False),
        sympy.floor: _rounding(False),
        sympy.ceiling: _rounding(True),
        sympy.re: _identity_function,
        sympy.conjugate: _identity_function,
        sympy.im: _imaginary_part,
        sympy.Piecewise: _piecewise,
        sympy.KroneckerDelta: _kronecker,
        sympy.factorial: _factorial,
        sympy.binomial: _binomial,
        sympy.Sum: _sum,
        sympy.Product: _product,
        sympy.MatrixBase: _explicit_matrix,
        MatrixSymbol: _matrix_symbol,
        Identity: _identity_matrix,
        ZeroMatrix: _filled_matrix(0),
        OneMatrix: _filled_matrix(1),
        MatAdd: _fold(_add),
        MatMul: _fold(_mul),
        MatPow: _pow,
        Transpose: _transpose_node,
        Adjoint: _transpose_node,  # real entries: the adjoint is the transpose
        Inverse: _inverse_node,
        Trace: _trace,
        Determinant: _determinant_node,
        MatrixElement: _matrix_element,
        HadamardProduct: _hadamard,
    }
    table.update(_FUNCTIONS)
    return table


_TABLE = _build_table()
_HANDLERS: dict[Any, Any] = {}


def _named_handler(ev: _Evaluator, node: Any, env: dict[Any, Any], depth: int) -> Any:
    return ev.named(node, env, depth)


def _handler(cls: type[Any]) -> Any:
    """The handler of a node class: the project's operators first, then the class's MRO."""
    found = _HANDLERS.get(cls)
    if found is None:
        if getattr(cls, "is_named_operator", False) is True:
            found = _named_handler
        elif cls.__name__ == "Frac":
            found = _frac
        else:
            found = next((_TABLE[k] for k in cls.__mro__ if k in _TABLE), _unsupported)
        _HANDLERS[cls] = found
    return found


# --------------------------------------------------------------------------------------
# The examination.


def cross_examine(lhs: Any, rhs: Any, relation: str = "=", conditions: Any = (), *, points: int = 6, seed_text: str = "") -> Examined:
    """Evaluate ``lhs relation rhs`` at up to ``points`` admissible points, independently.

    ``conditions`` are stated facts (SymPy relations, ``And``/``Or``/``Not``, ``Ne``, ``Eq``,
    ``Q.invertible(A)``, ``Q.positive(x)``...); a point is admissible only where each is
    certified true.  A condition that cannot be read at all makes every point inadmissible.
    Raises :class:`~symbolic_attn.errors.CrossExaminationError` when the relation is
    certified false at an admissible point; otherwise returns what was done.  Nothing else
    is raised: what cannot be evaluated is skipped, and ``skipped_reason`` says why.

    >>> import sympy
    >>> k, n = sympy.symbols("k n", integer=True, nonnegative=True)
    >>> cross_examine(sympy.Product(2, (k, 1, n)), 2**n)
    Examined(points_tried=6, points_used=6, skipped_reason='', points_close=0)
    >>> cross_examine(sympy.Product(2, (k, 1, n)), 2**(n + 1))
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.CrossExaminationError: the checker's proof was wrong; please report: lhs = 2, rhs = 4 at n=1
    >>> f = sympy.Function("f")
    >>> cross_examine(f(n), f(n)).skipped_reason
    'cannot evaluate the undefined function f (no value to give it)'
    """
    if isinstance(relation, str) and relation == "==":
        relation = "="
    if not isinstance(relation, str) or relation not in RELATIONS:
        return Examined(0, 0, f"unknown relation {safe_text(repr(relation), 20)}")
    wanted = points if isinstance(points, int) and not isinstance(points, bool) else 0
    wanted = max(0, min(wanted, MAX_ATTEMPTS))
    if wanted == 0:
        return Examined(0, 0, "no points requested")
    facts, unreadable = _read_conditions(conditions)
    if unreadable:
        return Examined(0, 0, f"a stated condition cannot be read ({unreadable}): no point is admissible")
    try:
        small, size = _scan([lhs, rhs, *facts])
    except _Unsupported as error:
        return Examined(0, 0, one_line(f"cannot evaluate {error}"))
    examination = _Examination(lhs, rhs, relation, facts, small, _seed(seed_text, relation, lhs, rhs, facts))
    # A big step (a 6 x 6 symbolic softmax) costs milliseconds a point: fewer points for it.
    return examination.run(wanted if size <= SMALL_STEP else min(wanted, 2))


class _Examination:
    def __init__(self, lhs: Any, rhs: Any, relation: Any, facts: Any, small: Any, seed: Any) -> None:
        self.lhs, self.rhs, self.relation, self.facts = lhs, rhs, relation, facts
        self.small, self.seed, self.hints = small, seed, _hints(facts)
        self.unfolded: dict[Any, Any] = {}
        self.nodes = 0
        self.constant = not any(_has_unknowns(item) for item in (lhs, rhs, *facts))
        self.seen_close = False

    def run(self, wanted: int) -> Examined:
        tried = used = close = over_budget = 0
        reasons: list[Any] = []
        if self.constant:
            wanted = 1  # nothing to draw: every point is the same point
        for attempt in range(MAX_ATTEMPTS):
            if used + close >= wanted or self.nodes >= MAX_NODES_PER_CALL or over_budget >= 2:
                break
            tried += 1
            point = _Point(random.Random(f"{self.seed}:{attempt}"), attempt % 3 == 0, self.small, self.hints)
            try:
                verdict, detail = self._examine(point)
            except _Unsupported as error:
                reason = "" if used else one_line(f"cannot evaluate {error}")
                return Examined(tried, used, reason, close)
            if verdict == "false":
                left, right = detail
                raise CrossExaminationError(one_line(
                    f"the checker's proof was wrong; please report: lhs = {_short(left)}, rhs = {_short(right)} "
                    f"at {point.describe()}"))
            used += verdict == "held"
            over_budget += verdict == "over budget"
            close += verdict == "close"
            if verdict in ("inadmissible", "undecided", "over budget") and detail not in reasons:
                reasons.append(detail)
        if used:
            return Examined(tried, used, "", close)
        if close:
            why = "the sides agree to the working precision but irrational values cannot be certified equal"
        elif self.nodes >= MAX_NODES_PER_CALL or over_budget >= 2:
            why = "the evaluation budget ran out"
        else:
            why = f"no admissible point in {tried} attempts"
        if reasons:
            why += " (" + "; ".join(reasons[:3]) + ")"
        return Examined(tried, 0, one_line(why), close)

    def _examine(self, point: _Point) -> tuple[Any, ...]:
        """("held"|"close"|"false"|"undecided"|"inadmissible", detail) at one point."""
        verdict = sides = None
        # Once one point has agreed at every precision without being certifiable (irrational
        # values equal), the others are read at the first precision only: a second pass at
        # 1024 bits finds nothing new there and costs as much as the rest.
        precisions = PRECISIONS[:1] if self.seen_close else PRECISIONS
        for bits in precisions:
            evaluator = _Evaluator(point, min(MAX_NODES_PER_POINT, MAX_NODES_PER_CALL - self.nodes), self.unfolded)
            try:
                with working_precision(bits):
                    for fact in self.facts:
                        holds = evaluator.truth(fact, {}, 0)
                        if holds is False:
                            return "inadmissible", "a stated condition is false at the point"
                        if holds is None:
                            raise _Uncertain("a stated condition is undecided at the point")
                    sides = (evaluator.value(self.lhs, {}, 0), evaluator.value(self.rhs, {}, 0))
                    verdict = _compare(self.relation, *sides)
                    if verdict is None and bits == precisions[-1] and _close(self.relation, *sides, bits):
                        self.seen_close = True
                        return "close", ""
            except _Unsupported:
                raise
            except _Uncertain as error:
                verdict, sides, reason = None, None, str(error)
            except _OverBudget as error:
                return "over budget", str(error)
            except _Undefined as error:
                return "inadmissible", str(error)
            except Exception as error:  # noqa: BLE001 -- the one boundary: a SymPy or flint
                # internal failure on a weird value means this point cannot be used, never a verdict.
                return "inadmissible", f"{type(error).__name__} while evaluating"
            finally:
                self.nodes += evaluator.nodes
            if verdict is True:
                return "held", ""
            if verdict is False:
                return "false", sides
        return "undecided", reason if sides is None else "a comparison undecided at every precision"


def _has_unknowns(item: Any) -> bool:
    """Whether a point gives ``item`` anything to vary: a free symbol, a sequence entry, a
    matrix symbol (when not, every point is the same point)."""
    from sympy.matrices.expressions import MatrixSymbol

    if isinstance(item, sympy.MatrixBase):
        return any(_has_unknowns(entry) for entry in item)
    if not isinstance(item, sympy.Basic):
        return False
    try:
        return bool(item.free_symbols) or item.has(Indexed, MatrixSymbol)
    except (AttributeError, TypeError):  # a tree with non-SymPy arguments: assume it varies
        return True


def _read_conditions(conditions: Any) -> tuple[Any, ...]:
    """(the conditions as a list of SymPy booleans, text naming one that cannot be read)."""
    if isinstance(conditions, (sympy.Basic, bool)):
        conditions = (conditions,)
    try:
        items = list(conditions)[:1000]
    except TypeError:
        return [], type(conditions).__name__
    facts = []
    for item in items:
        if item is True or item is sympy.true:
            continue
        if item is False or isinstance(item, sympy.logic.boolalg.Boolean):
            facts.append(item)
            continue
        return [], type(item).__name__
    return facts, ""


def _scan(roots: Any) -> tuple[Any, ...]:
    """The symbols used as sum/product bounds or matrix sizes, after checking the trees'
    size and depth (without recursion: the trees may be hostile)."""
    from sympy.matrices.expressions import Identity, MatrixSymbol, OneMatrix, ZeroMatrix

    small = set()
    stack = [(root, 0, False) for root in roots]
    seen = 0
    while stack:
        node, depth, bound = stack.pop()
        seen += 1
        if seen > MAX_NODES_PER_POINT:
            raise _Unsupported(f"an expression of more than {MAX_NODES_PER_POINT} nodes")
        if depth > MAX_DEPTH:
            raise _Unsupported(f"an expression nested more than {MAX_DEPTH} deep")
        if not isinstance(node, sympy.Basic):
            continue
        if bound and isinstance(node, sympy.Symbol):
            small.add(node)
        if isinstance(node, (sympy.Sum, sympy.Product)):
            stack.append((node.function, depth + 1, bound))
            for limit in node.limits:
                stack.extend((part, depth + 1, bound or position > 0) for position, part in enumerate(limit))
        elif isinstance(node, MatrixSymbol):
            stack.extend((size, depth + 1, True) for size in node.shape)
        else:
            sizes = isinstance(node, (Identity, ZeroMatrix, OneMatrix))
            stack.extend((arg, depth + 1, bound or sizes) for arg in node.args)
    return frozenset(small), seen


def _hints(facts: Any) -> dict[Any, Any]:
    """Bounds ``symbol > c``, ``symbol <= c``... read from the conditions, to aim the draws.

    Only a hint: every condition is still checked at every point.
    """
    hints: dict[Any, Any] = {}
    pending = list(facts)
    while pending:
        fact = pending.pop()
        if isinstance(fact, sympy.And):
            pending.extend(fact.args)
            continue
        if type(fact) not in _RELATIONALS or _RELATIONALS[type(fact)] == "!=":
            continue
        relation, left, right = _RELATIONALS[type(fact)], fact.lhs, fact.rhs
        if isinstance(right, sympy.Symbol) and isinstance(left, sympy.Rational):
            left, right = right, left
            relation = {">": "<", ">=": "<=", "<": ">", "<=": ">=", "=": "="}[relation]
        if not (isinstance(left, sympy.Symbol) and isinstance(right, sympy.Rational)):
            continue
        if abs(right.p).bit_length() > 64 or right.q.bit_length() > 64:
            continue
        value = Fraction(right.p, right.q)
        low, high = hints.get(left, (None, None))
        if relation in (">", ">=", "="):
            low = value if low is None else max(low, value)
        if relation in ("<", "<=", "="):
            high = value if high is None else min(high, value)
        hints[left] = (low, high)
    return hints


def _seed(seed_text: Any, relation: Any, lhs: Any, rhs: Any, facts: Any) -> str:
    """A stable text naming the inputs (never ``hash()``: PYTHONHASHSEED must not matter)."""
    digest = hashlib.sha256()
    for part in (safe_text(seed_text, 200), relation):
        digest.update(part.encode("utf-8", "replace") + b"\x00")
    for item in (lhs, rhs, *facts):
        _digest_tree(item, digest)
    return digest.hexdigest()


#: Nodes of a tree that name its seed (a prefix of the tree in preorder is enough to vary it).
_SEED_NODES = 2000


def _digest_tree(item: Any, digest: Any) -> None:
    """Feed ``digest`` the class names and atoms of ``item`` in preorder, iteratively and at
    most :data:`_SEED_NODES` nodes (``srepr`` of a big explicit matrix costs milliseconds)."""
    stack, seen = [item], 0
    while stack and seen < _SEED_NODES:
        node = stack.pop()
        seen += 1
        digest.update(type(node).__name__.encode() + b"(")
        if isinstance(node, sympy.Integer):
            value = int(node)
            digest.update(str(value).encode() if value.bit_length() < 256 else f"<{value.bit_length()} bits>".encode())
        elif isinstance(node, sympy.Rational):
            digest.update(f"{node.p}/{node.q}".encode() if max(abs(node.p), node.q).bit_length() < 256 else b"<q>")
        elif isinstance(node, (sympy.Symbol, sympy.core.symbol.Str)):
            digest.update(getattr(node, "name", "").encode("utf-8", "replace"))
        elif isinstance(node, sympy.MatrixBase):
            stack.extend(reversed(list(node)))
        elif isinstance(node, sympy.Basic):
            stack.extend(reversed(node.args))
