r"""Deciding equality: :func:`prove_equal` is the ONE place where ``lhs = rhs`` is decided.

SymPy's ``==`` is structural (``x*(y+1) == x*y + x`` is False) and ``Expr.equals`` may
fall back to floating-point evaluation, so neither proves anything alone.  Here a step is
proved by the first strategy of a fixed, documented order that shows the two sides equal:

0. ``notation``     -- display-only wrappers (:class:`Frac`) are unfolded first;
1. ``structural``   -- the two sides are the same SymPy tree;
2. ``assumptions``  -- rewrite both sides with the rules of the given assumptions and
   definitions (e.g. ``P^T P -> I``, ``E[q k] -> E[q] E[k]``), then compare structurally;
3. ``entrywise``    -- explicit matrices: same shape, then every entry by this same list;
   matrix expressions (``MatrixSymbol`` products) are compared after ``doit``/``expand``;
4. ``expand``       -- ``expand(lhs - rhs)`` is 0;
5. ``cancel``       -- ``cancel(together(lhs - rhs))`` is 0 (rational functions);
6. ``exp rules``    -- ``exp(a+b) = exp(a) exp(b)``, ``exp(log x) = x`` (expand, powsimp),
   then cancel;
7. ``sum rules``    -- sums over an index: evaluate sums of a constant, split, pull out
   factors free of the index, combine sums with the same limits, then cancel;
8. ``simplify``     -- ``simplify(lhs - rhs)`` is 0 (only for small expressions: slow).

If no strategy succeeds the step is **not** proved.  Numbers are then used only to
*refute*: free symbols are replaced by fixed small rationals (and symbolic sum lengths by
3), and the residual is evaluated with SymPy's error-tracked ``evalf(strict=True)``.  A
certified non-zero value raises :class:`ProofError` (refuted); otherwise
:class:`UndecidedError` (undecided -- also a failure, never a pass).

>>> import sympy
>>> x, y = sympy.symbols("x y")
>>> prove_equal(x * (y + 1), x * y + x).strategy
'expand'
>>> prove_equal((x**2 - 1) / (x - 1), x + 1).strategy
'cancel'
>>> prove_equal(x + 1, x + 2)
Traceback (most recent call last):
...
symbolic_attn.errors.ProofError: refuted: residual -1 is not zero
"""

from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

import sympy
from sympy.core.evalf import PrecisionExhausted
from sympy.simplify.simplify import factor_sum, sum_simplify

from symbolic_attn.errors import ProofError, UndecidedError

__all__ = [
    "Assumption",
    "Frac",
    "Proof",
    "Disproof",
    "prove_equal",
    "prove_positive",
    "prove_unequal",
    "STRATEGIES",
]

STRATEGIES = (
    "structural",
    "assumptions",
    "entrywise",
    "expand",
    "cancel",
    "exp rules",
    "sum rules",
    "simplify",
)

# simplify() is the last resort and can take seconds on big trees: refuse to try it
# beyond this operation count (the step is then undecided, which is a failure).
_SIMPLIFY_MAX_OPS = 400
_REWRITE_ROUNDS = 8
# Fixed (not random) refutation points keep every error message byte-stable.
_POINTS = (
    sympy.Rational(1, 2), sympy.Rational(2, 3), sympy.Rational(3, 4), sympy.Rational(5, 7),
    sympy.Rational(7, 5), sympy.Rational(4, 9), sympy.Rational(9, 11), sympy.Rational(6, 13),
)
_DIGITS = 30


@dataclass(frozen=True)
class Assumption:
    r"""A named hypothesis or definition, printed with every result that uses it.

    ``text`` is plain text (escaped when printed), ``latex`` an optional formula.  When
    ``rewrite`` is given, :func:`prove_equal` may use it: it maps an expression to an
    equal one *under this assumption* (``P^T P -> I``).  Dropping the assumption drops
    the rule, so a step that needs it can no longer be proved.

    >>> import sympy
    >>> c = sympy.Symbol("c")
    >>> zero = Assumption("c = 0", "the shift is zero", rewrite=lambda e: e.subs(c, 0))
    >>> prove_equal(c + 1, 1, [zero]).strategy
    'assumptions'
    """

    label: str
    text: str
    latex: str = ""
    rewrite: Optional[Callable] = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"({self.label}) {self.text}" + (f": {self.latex}" if self.latex else "")

    def apply(self, expr):
        """``expr`` rewritten by this assumption's rule (unchanged without a rule)."""
        return expr if self.rewrite is None else self.rewrite(expr)


class Frac(sympy.Expr):
    r"""``num / den`` kept exactly as written, for display (``\frac{num}{den}``).

    SymPy would reorder or cancel ``(a/Z) / (b/Z)`` as soon as it is built; a printed step
    should show it as written.  Proofs see plain ``num / den``.

    >>> import sympy
    >>> a, Z = sympy.symbols("a Z", positive=True)
    >>> sympy.latex(Frac(a / Z, 2 / Z))
    '\\frac{\\frac{a}{Z}}{\\frac{2}{Z}}'
    >>> prove_equal(Frac(a / Z, 2 / Z), a / 2).strategy
    'structural'
    """

    def __new__(cls, numerator, denominator):
        return sympy.Expr.__new__(cls, _sympify(numerator), _sympify(denominator))

    def doit(self, **hints):
        numerator, denominator = self.args
        if hints.get("deep", True):
            numerator, denominator = numerator.doit(**hints), denominator.doit(**hints)
        return numerator / denominator

    def _latex(self, printer, exp=None):
        text = r"\frac{%s}{%s}" % (printer._print(self.args[0]), printer._print(self.args[1]))
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)

    def _sympystr(self, printer):
        return "(%s)/(%s)" % (printer._print(self.args[0]), printer._print(self.args[1]))


def _unfold(expr):
    """Replace display-only :class:`Frac` by the quotient it stands for."""
    if isinstance(expr, sympy.MatrixBase):
        return expr.applyfunc(_unfold)
    if isinstance(expr, sympy.Basic) and expr.has(Frac):
        return expr.replace(lambda e: isinstance(e, Frac), lambda e: e.args[0] / e.args[1])
    return expr


@dataclass(frozen=True)
class Proof:
    """Evidence that ``lhs = rhs``: the strategy that decided it."""

    strategy: str


@dataclass(frozen=True)
class Disproof:
    """Evidence that ``lhs != rhs``: where they differ, and the certified non-zero residual."""

    where: str
    residual: object
    approx: str


def prove_equal(lhs, rhs, assumptions: Iterable[Assumption] = ()) -> Proof:
    """Prove ``lhs = rhs`` by the documented strategies; raise if not proved.

    Raises:
        ProofError: the two sides are shown different (``refuted``), message names the
            residual (and the point where numbers refuted it).
        UndecidedError: no strategy proved it and nothing refuted it.
    """
    assumptions = tuple(assumptions)
    lhs, rhs = _unfold(_sympify(lhs)), _unfold(_sympify(rhs))
    if lhs == rhs:
        return Proof("structural")
    if assumptions:
        lhs, rhs = _rewrite(lhs, assumptions), _rewrite(rhs, assumptions)
        if lhs == rhs:
            return Proof("assumptions")
    if _is_matrix(lhs) or _is_matrix(rhs):
        return _prove_matrix(lhs, rhs, assumptions)
    residual = lhs - rhs
    tried = [residual]
    for name, transform in _SCALAR_STRATEGIES:
        transformed = transform(residual)
        if _is_zero(transformed):
            return Proof(name)
        tried.append(transformed)
    # Report the shortest form of the residual that did not vanish.
    _refute_or_undecided(min(tried, key=lambda e: (len(sympy.sstr(e)), sympy.sstr(e))))


def prove_unequal(lhs, rhs) -> Disproof:
    """Certify that two concrete values (or matrices) differ: the counterexample check.

    The residual must be decided non-zero exactly (a non-zero rational, or SymPy's
    assumption system), or by error-tracked evaluation of a closed form without free
    symbols.  Anything else raises :class:`UndecidedError`; equal sides raise ProofError.

    >>> import sympy
    >>> prove_unequal(sympy.exp(1), 3).approx
    '-0.281718'
    """
    lhs, rhs = _unfold(_sympify(lhs)), _unfold(_sympify(rhs))
    if _is_matrix(lhs) or _is_matrix(rhs):
        if lhs.shape != rhs.shape:
            return Disproof(f"shape {lhs.shape} vs {rhs.shape}", sympy.nan, "shape")
        for i in range(lhs.rows):
            for j in range(lhs.cols):
                try:
                    found = prove_unequal(lhs[i, j], rhs[i, j])
                except (ProofError, UndecidedError):
                    continue
                return Disproof(f"entry ({i + 1}, {j + 1})", found.residual, found.approx)
        raise ProofError(f"not a counterexample: every entry of {lhs} and {rhs} agrees or is undecided")
    residual = sympy.simplify(lhs - rhs)
    if residual.free_symbols:
        raise UndecidedError(f"residual {residual} has free symbols: not a concrete counterexample")
    if residual == 0:
        raise ProofError(f"not a counterexample: {lhs} = {rhs}")
    value = _certified_value(residual)
    if value is None:
        raise UndecidedError(f"cannot certify that residual {residual} is non-zero")
    return Disproof("value", residual, value)


def prove_positive(expr, assumptions: Iterable[Assumption] = ()) -> Proof:
    """Prove ``expr > 0`` from SymPy's assumption system (symbol signs, exp > 0), no numbers.

    >>> import sympy
    >>> s = sympy.Symbol("s", real=True)
    >>> prove_positive(1 - sympy.exp(s) / (1 + sympy.exp(s))).strategy
    'positivity'
    """
    expr = _rewrite(_unfold(_sympify(expr)), tuple(assumptions))
    for candidate in (expr, sympy.cancel(sympy.together(expr)), sympy.factor(sympy.together(expr))):
        if candidate.is_positive is True:
            return Proof("positivity")
    raise UndecidedError(f"cannot show {expr} > 0")


# ---------------------------------------------------------------------------- internals


def _sympify(value):
    if isinstance(value, (sympy.Basic, sympy.MatrixBase)):
        return value
    if isinstance(value, float):
        raise TypeError(f"float {value!r} in a proof: use exact numbers")
    return sympy.sympify(value, strict=True)


def _is_matrix(value) -> bool:
    return isinstance(value, (sympy.MatrixBase, sympy.MatrixExpr))


def _rewrite(expr, assumptions):
    for _ in range(_REWRITE_ROUNDS):
        new = expr
        for assumption in assumptions:
            new = assumption.apply(new)
        if new == expr:
            return expr
        expr = new
    return expr


def _prove_matrix(lhs, rhs, assumptions) -> Proof:
    if lhs.shape != rhs.shape:
        raise ProofError(f"refuted: shapes {lhs.shape} and {rhs.shape} differ")
    if isinstance(lhs, sympy.MatrixBase) and isinstance(rhs, sympy.MatrixBase):
        for i in range(lhs.rows):
            for j in range(lhs.cols):
                try:
                    prove_equal(lhs[i, j], rhs[i, j], assumptions)
                except (ProofError, UndecidedError) as error:
                    raise type(error)(f"entry ({i + 1}, {j + 1}): {error}") from None
        return Proof("entrywise")
    # Matrix expressions: unfold (doit), distribute (expand), re-apply assumptions.
    for transform in (lambda m: m.doit(), lambda m: sympy.expand(m.doit())):
        left = _rewrite(transform(lhs), assumptions)
        right = _rewrite(transform(rhs), assumptions)
        if left == right:
            return Proof("entrywise")
        if isinstance(left, sympy.MatrixBase) and isinstance(right, sympy.MatrixBase):
            return _prove_matrix(left, right, assumptions)
    raise UndecidedError(f"residual {sympy.MatAdd(lhs, -rhs)} not shown to vanish")


def _is_zero(expr) -> bool:
    return expr == 0


def _exp_rules(expr):
    expanded = sympy.expand(expr, power_exp=True, mul=True, multinomial=False)
    return sympy.cancel(sympy.together(sympy.powsimp(expanded, combine="exp")))


def _sum_rules(expr):
    def normal_sum(term):
        return factor_sum(sympy.expand(term)) if isinstance(term, sympy.Sum) else term

    if not expr.has(sympy.Sum):
        return expr
    # Sums with a closed form (a constant summand: sum_{i=1}^{n} 1 = n) are evaluated.
    expr = expr.replace(lambda e: isinstance(e, sympy.Sum) and not e.function.has(*e.variables), lambda e: e.doit())
    expr = sympy.expand(expr)
    expr = expr.replace(lambda e: isinstance(e, sympy.Sum), lambda e: sympy.expand(e))
    expr = expr.replace(lambda e: isinstance(e, sympy.Sum), normal_sum)
    return sympy.cancel(sympy.together(sum_simplify(sympy.expand(expr))))


def _simplify(expr):
    if sympy.count_ops(expr) > _SIMPLIFY_MAX_OPS:
        return expr
    return sympy.simplify(expr)


_SCALAR_STRATEGIES = (
    ("expand", sympy.expand),
    ("cancel", lambda e: sympy.cancel(sympy.together(e))),
    ("exp rules", _exp_rules),
    ("sum rules", _sum_rules),
    ("simplify", _simplify),
)


def _refute_or_undecided(residual):
    """Raise ProofError if numbers show ``residual != 0``, else UndecidedError."""
    shown = _short(residual)
    if residual.is_number:
        value = _certified_value(residual)
        if value is not None:
            raise ProofError(f"refuted: residual {shown} is not zero")
        raise UndecidedError(f"residual {shown} not shown to vanish")
    point = _refutation_point(residual)
    if point is not None:
        substituted = residual.subs(point).doit()
        substituted = substituted.subs(_indexed_values(substituted))
        if not substituted.free_symbols:
            value = _certified_value(substituted)
            if value is not None:
                where = ", ".join(f"{name}={val}" for name, val in sorted((str(k), v) for k, v in point.items()))
                raise ProofError(f"refuted: residual {shown} is {value} at {where}")
    raise UndecidedError(f"residual {shown} not shown to vanish")


def _refutation_point(residual):
    if residual.atoms(sympy.MatrixSymbol) or residual.atoms(sympy.core.function.AppliedUndef):
        return None
    # Sum.free_symbols already leaves out summation variables; leave out the
    # IndexedBase labels too (their entries get values after the sums are expanded).
    bound = set()
    bound.update(indexed.base.label for indexed in residual.atoms(sympy.Indexed))
    free = sorted(residual.free_symbols - bound, key=str)
    # Free indices get distinct positions 1, 2, ... (so that s[i] and s[k] differ);
    # other integers (a symbolic length n) get a value large enough to contain them.
    in_index = set()
    for indexed in residual.atoms(sympy.Indexed):
        for index in indexed.indices:
            in_index.update(index.free_symbols)
    indices = [symbol for symbol in free if isinstance(symbol, sympy.Idx) or symbol in in_index]
    point = {symbol: sympy.Integer(position) for position, symbol in enumerate(indices, 1)}
    values = iter(_POINTS * 4)
    for symbol in free:
        if symbol in point or not isinstance(symbol, sympy.Symbol):
            continue
        if symbol.is_integer:
            point[symbol] = sympy.Integer(max(3, len(indices) + 1))
        else:
            value = next(values)
            point[symbol] = value if symbol.is_nonnegative else value * (-1) ** len(point)
    return point


def _indexed_values(expr):
    values = iter(_POINTS * 8)
    return {atom: next(values) for atom in sorted(expr.atoms(sympy.Indexed), key=str)}


def _certified_value(expr) -> Optional[str]:
    """Six digits of ``expr`` if it is certified non-zero, else None."""
    expr = sympy.nsimplify(expr) if expr.has(sympy.Float) else expr
    if expr.is_Rational:
        return None if expr == 0 else sympy.sstr(expr)
    if expr.is_zero is False and expr.is_real:
        return sympy.sstr(expr.evalf(6), full_prec=False)
    try:
        value = expr.evalf(_DIGITS, strict=True)
    except (PrecisionExhausted, TypeError, ValueError):
        return None
    if not value.is_Number or value == 0:
        return None
    return sympy.sstr(value.evalf(6), full_prec=False)


def _short(expr, limit: int = 300) -> str:
    text = sympy.sstr(expr)
    return text if len(text) <= limit else text[: limit - 3] + "..."
