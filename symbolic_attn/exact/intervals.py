"""Enclosures: rigorous arb intervals of exact values, and the exact zero test.

The bottom of the certified arithmetic: :func:`to_arb` encloses an exact real value in a
python-flint ``arb`` ball (every operation rounds outward, so the true value is always
inside), :func:`working_precision` and :func:`with_rising_precision` set and raise the bits,
:func:`certified_sign` proves a sign by intervals, and :func:`proved_zero` proves a value is
exactly 0 by exact algebra (no float is ever consulted).  The input language's evaluator
decides divisors with them; :mod:`.certified` builds certified decimals on them.

>>> import sympy
>>> certified_sign(sympy.sqrt(2) - sympy.Rational(14, 10)), proved_zero(sympy.sqrt(8) - 2 * sympy.sqrt(2))
(1, True)
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from fractions import Fraction
from typing import Any, SupportsIndex, TypeVar, cast

import flint
import sympy

from symbolic_attn.errors import DigitsError, UndecidedError, shown

__all__ = ["to_arb", "to_arb_over", "working_precision", "check_precision", "with_rising_precision", "certified_sign",
           "proved_zero", "START_PRECISION", "MAX_PRECISION", "MAX_ZERO_TEST_OPS"]

_T = TypeVar("_T")

#: Bits of working precision for the first attempt, and the most we try before giving up
#: (then an exact proof is attempted; if that fails too, the answer is "undecided").
START_PRECISION = 128
MAX_PRECISION = 32768
def check_precision(bits: SupportsIndex) -> int:
    """``bits`` as an int, if it is a usable working precision (16 to 4 * MAX_PRECISION).

    >>> check_precision(0)
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.DigitsError: precision of 0 bits is outside 16..131072
    """
    if isinstance(bits, bool) or not hasattr(type(bits), "__index__"):
        raise DigitsError(f"precision must be a whole number of bits, got {shown(bits)!r} ({type(bits).__name__})")
    bits = operator.index(bits)
    if not 16 <= bits <= 4 * MAX_PRECISION:
        count = bits if bits.bit_length() <= 64 else "a huge number of"
        raise DigitsError(f"precision of {count} bits is outside 16..{4 * MAX_PRECISION}")
    return bits


@contextmanager
def working_precision(bits: int) -> Iterator[None]:
    """Set arb's (global) working precision for the duration of a ``with`` block."""
    saved = flint.ctx.prec
    flint.ctx.prec = bits
    try:
        yield
    finally:
        flint.ctx.prec = saved


def to_arb(expr: Any) -> flint.arb:
    """An ``arb`` ball guaranteed to contain the exact real value of ``expr``.

    Call it inside :func:`working_precision`.  Raises :class:`UndecidedError` for values
    with free symbols or that are not real numbers.
    """
    if isinstance(expr, (int, Fraction)):
        return flint.arb(flint.fmpq(Fraction(expr).numerator, Fraction(expr).denominator))
    if expr.is_Rational:
        return flint.arb(flint.fmpq(int(expr.p), int(expr.q)))
    if expr.free_symbols:
        raise UndecidedError(f"{shown(expr)} has free symbols {sorted(map(str, expr.free_symbols))}; it has no decimal value")
    value = _arb_of(expr)
    if not value.is_finite():
        raise UndecidedError(f"{shown(expr)} is not a finite real number (or too large to enclose)")
    return value


def to_arb_over(expr: Any, balls: Mapping[Any, flint.arb]) -> flint.arb:
    """An ``arb`` ball containing every value of ``expr`` as each symbol in ``balls`` ranges
    over its ball (interval arithmetic: rigorous, possibly wide).

    Call it inside :func:`working_precision`.  A symbol not in ``balls``, a function
    without a certified evaluation, or a non-finite result raises :class:`UndecidedError`.

    >>> x = sympy.Symbol("x")
    >>> with working_precision(64):
    ...     ball = to_arb_over(x**2 - x, {x: flint.arb(2) + flint.arb(1).union(-flint.arb(1)) / 10})
    >>> bool(ball > 1), bool(ball < 3)
    (True, True)
    """
    missing = set(getattr(expr, "free_symbols", ())) - set(balls)
    if missing:
        raise UndecidedError(f"{shown(expr)} has free symbols {sorted(map(str, missing))} without a range")
    value = _arb_of(expr, balls)
    if not value.is_finite():
        raise UndecidedError(f"{shown(expr)} has no finite enclosure over the given ranges")
    return value


def _arb_of(expr: Any, env: Mapping[Any, flint.arb] | None = None) -> flint.arb:
    if env is not None and expr.is_Symbol and expr in env:  # a symbol ranging over a ball (to_arb_over)
        return env[expr]
    if expr.is_Rational:
        return flint.arb(flint.fmpq(int(expr.p), int(expr.q)))
    if expr is sympy.pi:
        return flint.arb.pi()
    if expr is sympy.E:
        return flint.arb(1).exp()
    if expr.is_Add:
        total = flint.arb(0)
        for term in expr.args:
            total += _arb_of(term, env)
        return total
    if expr.is_Mul:
        product = flint.arb(1)
        for factor in expr.args:
            product *= _arb_of(factor, env)
        return product
    if expr.is_Pow:
        base, exponent = expr.args
        if exponent.is_Integer:
            return _arb_of(base, env) ** int(exponent)
        if exponent.is_Rational:
            return _arb_of(base, env) ** flint.fmpq(int(exponent.p), int(exponent.q))
        return _arb_of(base, env) ** _arb_of(exponent, env)
    if isinstance(expr, sympy.exp):
        return _arb_of(expr.args[0], env).exp()
    if isinstance(expr, sympy.log) and len(expr.args) == 1:
        return _arb_of(expr.args[0], env).log()
    if isinstance(expr, (sympy.sin, sympy.cos, sympy.tan, sympy.sinh, sympy.cosh, sympy.tanh, sympy.atan, sympy.erf)):
        return getattr(_arb_of(expr.args[0], env), type(expr).__name__)()
    if isinstance(expr, (sympy.asin, sympy.acos)):
        # Outside [-1, 1] arb returns a non-finite ball: the value is then undecided.
        return getattr(_arb_of(expr.args[0], env), type(expr).__name__)()
    if isinstance(expr, sympy.Abs):
        return abs(_arb_of(expr.args[0], env))
    raise UndecidedError(f"no certified evaluation for {type(expr).__name__} in {shown(expr)}")


def with_rising_precision(attempt: Callable[[], _T | None]) -> _T | None:
    """Run ``attempt()`` at START_PRECISION, doubling up to MAX_PRECISION, until it answers.

    ``attempt`` computes with arb at the current working precision and returns None while
    its intervals are too wide to decide; the first other answer is returned (else None).
    """
    bits = START_PRECISION
    while bits <= MAX_PRECISION:
        with working_precision(bits):
            answer = attempt()
        if answer is not None:
            return answer
        bits *= 2
    return None


def certified_sign(expr: Any) -> int | None:
    """-1, 0 or 1: the sign of ``expr`` proved by intervals (0 only for a literal zero);
    None when no precision up to MAX_PRECISION decides it."""
    if expr == 0:
        return 0

    if getattr(expr, "free_symbols", None):
        to_arb(expr)  # raises UndecidedError naming the free symbols

    def attempt() -> int | None:
        try:
            ball = to_arb(expr)
        except UndecidedError:
            # A ball too wide at this precision (acos of a number just below 1 may touch
            # the domain's edge): try again with more bits.
            return None
        return 1 if ball > 0 else -1 if ball < 0 else None

    return with_rising_precision(attempt)


def _plainly_algebraic(expr: Any) -> bool | None:  # None (falsy): SymPy's fuzzy 'not known'
    """True when ``expr`` is built from rationals and ``i`` by ``+``, ``*`` and rational powers.

    The structural test, not SymPy's ``is_algebraic``: that one asks for signs, and SymPy
    answers sign questions by evaluating numerically (slow, and nothing to build on).

    >>> _plainly_algebraic(sympy.sqrt(2) + sympy.Rational(1, 3) * 5 ** sympy.Rational(1, 3))
    True
    >>> _plainly_algebraic(sympy.exp(1) + 1), _plainly_algebraic(sympy.GoldenRatio - sympy.cos(sympy.pi / 7))
    (False, True)
    """
    if expr.is_Rational or expr is sympy.I:
        return True
    if isinstance(expr, (sympy.Add, sympy.Mul)):
        return all(_plainly_algebraic(arg) for arg in expr.args)
    if isinstance(expr, sympy.Pow):
        return expr.exp.is_Rational and _plainly_algebraic(expr.base)
    if isinstance(expr, sympy.core.numbers.NumberSymbol):
        return expr.is_algebraic is True  # the golden ratio yes, pi and e no: a fact of the class
    if isinstance(expr, (sympy.sin, sympy.cos, sympy.tan)):
        return cast(bool | None, (expr.args[0] / sympy.pi).is_Rational)  # trigonometric values at rational multiples of pi
    return False


#: Above this many operations the exact zero test gives up (it is then "not proved").
MAX_ZERO_TEST_OPS = 400
#: The largest power of one generator the exponential zero test builds (exp(1000) next to
#: exp(1/1000) would be g**1000000): beyond it, "not proved".
MAX_GENERATOR_POWER = 64


def _zero_in_exponentials(expr: sympy.Expr) -> bool:
    r"""True when ``expr``, read as a rational function of exponentials, is the zero function.

    Softmax weights are quotients of sums of ``exp(q*a)`` (q rational, a an "atom" such as
    1 or sqrt(2)); ``expand`` cannot see that e^{3a/2}/(e^{a/2} + e^{a} + e^{3a/2}) equals
    e^{a}/(1 + e^{a/2} + e^{a}).  Here every ``exp(q1*a1 + q2*a2 + ...)`` becomes
    ``g1**(q1*d1) * g2**(q2*d2) * ...`` with one positive indeterminate ``g`` per atom
    (standing for ``exp(a/d)``, d the common denominator of its coefficients), so the
    expression becomes a rational function of the g's with algebraic coefficients.  That
    map respects sums and products (exp(x + y) = exp(x) exp(y)), so if the function is
    identically 0 -- its numerator over one denominator expands to 0 -- then so is its
    value at g = exp(a/d), where the expression was defined.  Sound whatever the atoms
    are (whether or not they are related); when the numerator does not vanish identically,
    the answer is "not proved", never "nonzero".

    >>> a = sympy.sqrt(2)
    >>> w1 = sympy.exp(3 * a / 2) / (sympy.exp(a / 2) + sympy.exp(a) + sympy.exp(3 * a / 2))
    >>> w2 = sympy.exp(a) / (1 + sympy.exp(a / 2) + sympy.exp(a))
    >>> _zero_in_exponentials(w1 - w2), _zero_in_exponentials(w1 - 2 * w2)
    (True, False)
    >>> _zero_in_exponentials(sympy.E / (1 + sympy.E) - 1 / (1 + sympy.exp(-1)))
    True
    """
    powers = [node for node in sympy.preorder_traversal(expr) if isinstance(node, sympy.exp) or node is sympy.E]
    if not powers:
        return False
    exponents: dict[Any, dict[Any, Any]] = {}  # the linear form of each exponent: {atom: rational coefficient}
    for node in set(powers):
        argument = sympy.S.One if node is sympy.E else node.args[0]
        if argument.free_symbols or argument.has(sympy.exp, sympy.E):
            return False  # nested exponentials: not a rational function of a few generators
        form: dict[Any, Any] = {}
        for term in sympy.Add.make_args(sympy.expand(argument)):
            coefficient, atom = term.as_coeff_Mul()
            if not coefficient.is_Rational:
                return False
            form[atom] = form.get(atom, sympy.S.Zero) + coefficient
        exponents[node] = form
    denominators: dict[Any, Any] = {}
    for form in exponents.values():
        for atom, coefficient in form.items():
            denominators[atom] = sympy.ilcm(denominators.get(atom, 1), coefficient.q)
    generators = {atom: sympy.Dummy("g", positive=True) for atom in denominators}
    images = {}
    for node, form in exponents.items():
        image = sympy.S.One
        for atom, coefficient in form.items():
            power = coefficient * denominators[atom]
            if abs(power) > MAX_GENERATOR_POWER:
                return False
            image *= generators[atom] ** int(power)
        images[node] = image
    mapped = expr.xreplace(images)
    if not _rational_in(mapped, set(generators.values())):
        return False
    numerator, _ = sympy.fraction(sympy.together(mapped))
    return bool(sympy.expand(numerator) == 0)


def _rational_in(expr: sympy.Expr, generators: set[Any]) -> bool:
    """Whether ``expr`` is built from the generators and plainly algebraic numbers by
    sums, products and integer powers (a rational function with algebraic coefficients)."""
    if expr in generators or expr.is_Rational:
        return True
    if not expr.free_symbols:
        return bool(_plainly_algebraic(expr))
    if isinstance(expr, (sympy.Add, sympy.Mul)):
        return all(_rational_in(arg, generators) for arg in expr.args)
    if isinstance(expr, sympy.Pow):
        return bool(expr.exp.is_Integer) and _rational_in(expr.base, generators)
    return False


def proved_zero(expr: Any) -> bool:
    """True only when exact algebra shows that the symbol-free ``expr`` is exactly 0.

    No floating-point evaluation is ever consulted: ``expand`` (valid rewriting only), then,
    for an algebraic number, its minimal polynomial (exact arithmetic in a number field).
    False means "not proved", never "nonzero": a certified nonzero comes from
    :func:`certified_sign`.

    >>> proved_zero(sympy.sqrt(8) - 2 * sympy.sqrt(2))
    True
    >>> proved_zero((1 + sympy.sqrt(2)) ** 2 - 3 - 2 * sympy.sqrt(2))
    True
    >>> proved_zero(sympy.acos(1 - sympy.Rational(1, 10**7)))
    False
    """
    expr = sympy.sympify(expr, strict=True)
    if expr == 0:
        return True
    if expr.free_symbols or expr.has(sympy.Float) or expr.count_ops() > MAX_ZERO_TEST_OPS:
        return False
    expanded = sympy.expand(expr)
    if expanded == 0:
        return True
    if _zero_in_exponentials(expanded):
        return True
    if not _plainly_algebraic(expanded):
        return False
    x = sympy.Dummy("x")
    try:
        return cast(bool, sympy.minimal_polynomial(expanded, x) == x)
    except (NotImplementedError, ValueError, TypeError):
        return False
