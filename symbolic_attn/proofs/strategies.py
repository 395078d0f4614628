r"""The strategies of :func:`~.prove.prove_equal` after the exact ones: each maps a residual to
an equal expression, valid under the side conditions the checker has already proved.

* ``expand``, ``cancel``, ``exp rules`` (``e^{a+b} = e^a e^b``);
* ``sum rules`` -- the normal form of sums (:mod:`.sums`): linearity, factors free of the
  index out, constant summands evaluated, bound indices renamed to canonical names by nesting
  depth (capture-avoiding); valid for non-reversed integer ranges only (which the side
  conditions guarantee), where SymPy's sum convention is the ordinary one;
* ``sums written out`` -- sums and products over concrete ranges written out term by term;
* ``reindex`` -- every sum reflected (``j -> a + b - j``) or shifted (``j -> j - c``) as its
  subscripts suggest (:mod:`.reindex`: bijections of the range, identities for integer
  limits), then the sum rules;
* ``sum closed forms`` -- SymPy's summation (polynomial, geometric, hypergeometric terms),
  a case split used only when the facts decide it; ``trace`` -- ``tr(XY) = tr(YX)``,
  ``tr(X) = tr(X^T)``;
* ``rewrite exp`` (trigonometric and hyperbolic functions as exponentials), ``expand trig``
  (angle addition, inside sums too), ``order`` (min/max resolved by the sign calculus);
* ``simplify`` -- only with every irrational number abstracted to a symbol, so that no
  numeric zero test can decide anything.

>>> import sympy
>>> x = sympy.Symbol("x")
>>> cancel((x**2 - 1) / (x - 1) - x - 1)
0
"""

from collections.abc import Callable
from typing import Any

import sympy

from symbolic_attn.exact.memo import memoized, memoized_in_scope
from symbolic_attn.proofs.binders import substitute
from symbolic_attn.proofs.conditions import Condition, Facts, decide_relation, prove_condition, range_membership
from symbolic_attn.proofs.reindex import reindex
from symbolic_attn.proofs.sums import MAX_TERMS, count_operations, expand_sums, sum_rules

__all__ = ["SCALAR_STRATEGIES", "cancel", "closed_forms", "has_denominator", "rewrite_exp"]

# simplify() is the last resort and can take seconds on big trees: refuse to try it
# beyond this operation count (the step is then undecided, which is a failure).
_SIMPLIFY_MAX_OPS = 400
_EXPAND_MAX_OPS = 4000
#: Rounds of rewriting (closed forms of inner sums first, then of the sums around them).
_REWRITE_ROUNDS = 8


def _bounded(transform: Callable[[Any, Facts], Any]) -> Callable[[Any, Facts], Any]:
    def guarded(expr: Any, facts: Facts) -> Any:
        if count_operations(expr) > _EXPAND_MAX_OPS or _large_power(expr):
            return expr
        return transform(expr, facts)

    return guarded


#: A sum raised to a higher integer power is not expanded (``(x + 1)^3000`` has 3001 terms
#: with coefficients of hundreds of digits): the step is then decided otherwise or refuted.
_MAX_EXPANDED_POWER = 100


@memoized
def _large_power(expr: Any) -> bool:
    return any(isinstance(node, sympy.Pow) and node.exp.is_Integer and abs(node.exp) > _MAX_EXPANDED_POWER
               and isinstance(node.base, sympy.Add) for node in sympy.preorder_traversal(expr))


def _exp_rules(expr: Any, facts: Facts | None = None) -> Any:
    if not _has_exp_or_symbolic_power(expr):
        return expr  # nothing for e^{a+b} = e^a e^b or x^a x^b = x^{a+b} to do: as "cancel" left it
    expanded = sympy.expand(expr, power_exp=True, mul=True, multinomial=False)
    combined = sympy.powsimp(expanded, combine="exp")
    # One fraction, reduced; the cheap numerator test of "cancel" first.
    return cancel(combined) if has_denominator(combined) else sympy.expand(combined)


def has_denominator(expr: Any) -> bool:
    """True when some power in ``expr`` has a negative (or unknown-sign) exponent."""
    return any(isinstance(node, sympy.Pow) and not node.exp.is_nonnegative for node in sympy.preorder_traversal(expr))


def _has_exp_or_symbolic_power(expr: Any) -> bool:
    return any(isinstance(node, sympy.exp) or (isinstance(node, sympy.Pow) and node.exp.free_symbols)
               for node in sympy.preorder_traversal(expr))


# -------------------------------------------------------------------------------- sums

@memoized_in_scope
def _sum_rules(expr: Any, facts: Facts | None = None) -> Any:
    """The sum normal form (:func:`.sums.sum_rules`), a delta resolved where the facts place it
    (remembered within a :func:`~symbolic_attn.exact.memo.scope`: one step's strategies and
    its diagnosis reach the same residual more than once)."""
    return sum_rules(expr, range_membership(facts))


def _written_out(expr: Any, facts: Facts | None = None) -> Any:
    """Sums and products over concrete ranges written out term by term (their definition, for
    a range that is not reversed: :func:`.sums.expand_sums`), then one reduced fraction: a
    step about three named terms and their sum needs no closed form."""
    if not expr.has(sympy.Sum, sympy.Product):
        return expr
    written = expand_sums(expr)
    if written == expr:
        return expr
    return cancel(written) if has_denominator(written) else sympy.expand(written)


def _reindexed(expr: Any, facts: Facts | None = None) -> Any:
    """Each sum of the expanded residual reindexed by a bijection of its range
    (:func:`.reindex.reindex`), then the sum normal form: the terms are reindexed before the
    sum rules merge sums over one range (a merged summand no longer shows its orientation)."""
    expanded = sympy.expand(expr)
    reindexed = reindex(expanded)
    if reindexed == expanded:
        return expr  # no sum to reindex: what the sum rules gave already
    return _sum_rules(reindexed, facts)


def closed_forms(expr: Any, facts: Facts | None = None) -> Any:
    """Sums and products in closed form by SymPy's summation (polynomial, geometric and
    hypergeometric terms: Gosper's algorithm), innermost first.

    Valid for ranges that are not reversed, which the side conditions guarantee (there the
    closed form of Karr's convention is the ordinary sum).  A closed form that depends on a
    case (``Piecewise((n + 1, Eq(r, 1)), (..., True))``) is used only when the facts decide the
    case; otherwise the sum is left as it is.
    """
    if not expr.has(sympy.Sum, sympy.Product):
        return expr

    def evaluate(total: Any) -> Any:
        if total.function.has(sympy.Sum, sympy.Product) or count_operations(total) > _SIMPLIFY_MAX_OPS:
            return total
        try:
            closed = _long_range_closed_form(total)
            if closed is None:
                closed = total.doit(deep=False)
        except Exception:  # a SymPy internal failure proves nothing: keep the sum
            return total
        if closed.has(sympy.Piecewise):
            closed = _decide_cases(closed, facts)
        if closed is not None and closed.has(sympy.factorial, sympy.RisingFactorial, sympy.FallingFactorial,
                                             sympy.binomial, sympy.gamma):
            # A product's closed form in factorials: their ratios reduced (identities of the
            # factorial at the non-negative integers the range guarantees).
            closed = sympy.combsimp(closed)
        if closed is None or closed.has(sympy.Sum, sympy.Product, sympy.Piecewise, sympy.Integral):
            return total
        return closed

    for _ in range(_REWRITE_ROUNDS):
        new = expr.replace(lambda e: isinstance(e, (sympy.Sum, sympy.Product)), evaluate)
        if new == expr:
            break
        expr = new
    return cancel(sympy.expand(expr)) if not expr.has(sympy.Sum, sympy.Product) else expr


def _long_range_closed_form(total: Any) -> Any:
    """A sum or product over a concrete range too long to write out: its closed form for a
    symbolic end, evaluated at the concrete end when that is cheap (a polynomial or rational
    function of the end; a power with the end in its exponent only for a small end).  Returns
    None for a range short enough to write out, and the sum itself when there is no cheap form
    (``doit`` with a concrete end of 10^12 adds 10^12 terms)."""
    if len(total.limits) != 1:
        return None
    variable, low, high = total.limits[0]
    if not (low.is_Integer and high.is_Integer) or high - low + 1 <= MAX_TERMS:
        return None
    end = sympy.Dummy("end", integer=True)
    closed = type(total)(total.function, (variable, low, end)).doit(deep=False)
    allowed = (sympy.Add, sympy.Mul, sympy.Pow, sympy.Symbol, sympy.Number)
    if not all(isinstance(node, allowed) for node in sympy.preorder_traversal(closed)):
        return total
    exponential = any(isinstance(node, sympy.Pow) and end in node.exp.free_symbols
                      for node in sympy.preorder_traversal(closed))
    if exponential and abs(high) > 10**4:
        return total
    return substitute(closed, {end: high})


def _decide_cases(expr: Any, facts: Facts | None) -> Any:
    """Each Piecewise replaced by the branch the facts select, or None when one cannot be selected."""
    facts = facts if facts is not None else Facts()
    undecided = []

    def select(piecewise: Any) -> Any:
        for value, condition in piecewise.args:
            verdict = decide_relation(condition, facts)
            if verdict is True:
                return value
            if verdict is None:
                undecided.append(condition)
                return piecewise
        undecided.append(piecewise)
        return piecewise

    chosen = expr.replace(lambda e: isinstance(e, sympy.Piecewise), select)
    return None if undecided else chosen


def _trace_forms(expr: Any, facts: Facts | None = None) -> Any:
    """Each trace of a product in one form: ``tr(XY) = tr(YX)`` and ``tr(X) = tr(X^T)``, so the
    least (by SymPy's sort key) of the rotations of the product and of its transpose."""
    if not expr.has(sympy.Trace):
        return expr

    def normal(trace: Any) -> Any:
        argument = trace.args[0]
        while isinstance(argument, sympy.Transpose):
            argument = argument.args[0]
        forms = []
        for product in (argument, sympy.Transpose(argument).doit()):
            factors = product.args if isinstance(product, sympy.MatMul) else (product,)
            scalars = [f for f in factors if not isinstance(f, sympy.MatrixExpr)]
            matrices = [f for f in factors if isinstance(f, sympy.MatrixExpr)]
            for r in range(max(1, len(matrices))):
                rotated = tuple(matrices[r:] + matrices[:r])
                forms.append(sympy.Mul(*scalars) * sympy.Trace(sympy.MatMul(*rotated).doit(deep=False)
                                                               if len(rotated) > 1 else rotated[0]))
        return min(forms, key=sympy.default_sort_key)

    return sympy.expand(expr.replace(lambda e: isinstance(e, sympy.Trace), normal))


# ----------------------------------------------------------------- further strategies


def rewrite_exp(expr: Any, facts: Facts | None = None) -> Any:
    """Trigonometric and hyperbolic functions as exponentials, then the exp rules."""
    trig = (sympy.sin, sympy.cos, sympy.tan, sympy.sinh, sympy.cosh, sympy.tanh)
    if not expr.has(*trig):
        return expr
    return _exp_rules(expr.rewrite(sympy.exp))


def _expand_trig(expr: Any, facts: Facts | None = None) -> Any:
    """sin, cos of sums expanded (angle addition), then sums normalised: exact identities."""
    trig = (sympy.sin, sympy.cos)
    if not expr.has(*trig):
        return expr
    expanded = expr.replace(lambda e: isinstance(e, trig), lambda e: sympy.expand_trig(e.func(sympy.expand(e.args[0]))))
    return _sum_rules(sympy.expand(expanded)) if expanded.has(sympy.Sum) else sympy.expand(expanded)


def _order(expr: Any, facts: Facts) -> Any:
    """Min/Max resolved where the sign calculus orders the arguments; ``|e|`` and ``sign(e)``
    where it signs ``e``."""
    if not expr.has(sympy.Min, sympy.Max, sympy.Abs, sympy.sign):
        return expr

    def absolute(e: Any) -> Any:
        argument = e.args[0]
        if prove_condition(Condition(argument, ">=0"), facts):
            return argument
        if prove_condition(Condition(-argument, ">=0"), facts):
            return -argument
        return e

    def signum(e: Any) -> Any:
        argument = e.args[0]
        if prove_condition(Condition(argument, ">0"), facts):
            return sympy.Integer(1)
        if prove_condition(Condition(-argument, ">0"), facts):
            return sympy.Integer(-1)
        return e

    expr = expr.replace(lambda e: isinstance(e, sympy.Abs), absolute)
    expr = expr.replace(lambda e: isinstance(e, sympy.sign), signum)

    def resolve(e: Any) -> Any:
        first, *rest = e.args
        for candidate in e.args:
            others = [o for o in e.args if o is not candidate]
            wanted: Callable[[Any], Any] = (  # noqa: B023 -- called in this iteration
                (lambda o: o - candidate) if isinstance(e, sympy.Min) else (lambda o: candidate - o))  # noqa: B023
            if all(prove_condition(Condition(wanted(o), ">=0"), facts) for o in others):
                return candidate
        return e

    resolved = expr.replace(lambda e: isinstance(e, (sympy.Min, sympy.Max)), resolve)
    return sympy.cancel(sympy.together(sympy.expand(resolved)))


def _simplify(expr: Any, facts: Facts | None = None) -> Any:
    """simplify() with every irrational number replaced by a symbol: it cannot decide numbers."""
    if count_operations(expr) > _SIMPLIFY_MAX_OPS or _large_power(expr):
        return expr
    stand_ins: dict[Any, Any] = {}

    def abstract(node: Any) -> Any:
        if isinstance(node, sympy.Basic) and not node.is_Rational and node.is_number and not node.free_symbols:
            stand_ins.setdefault(node, sympy.Dummy(f"c{len(stand_ins)}"))
            return stand_ins[node]
        return None

    abstracted = _replace_numbers(expr, abstract)
    result = sympy.simplify(abstracted)
    return result.xreplace({dummy: number for number, dummy in stand_ins.items()}) if result != 0 else result


def cancel(expr: Any, facts: Facts | None = None) -> Any:
    """``expr`` as one fraction, reduced; 0 as soon as the numerator expands to 0.

    A residual over a common denominator vanishes (where it is defined, which the side
    conditions guarantee) exactly when its numerator does, and expanding the numerator is
    much cheaper than the polynomial gcd ``cancel`` computes to reduce the fraction.
    Without a denominator there is nothing to bring together or reduce, so it is skipped:
    the residual is a polynomial in its atoms, which "expand" (tried before) decides, up to
    sums that vanish termwise (``Sum(0, ...)``), which the sum rules decide.
    """
    return _cancelled(expr)


@memoized_in_scope
def _cancelled(expr: Any) -> Any:
    """:func:`cancel`, remembered within a :func:`~symbolic_attn.exact.memo.scope` (the
    ``cancel`` and ``exp rules`` strategies often bring one residual to the same fraction)."""
    if not has_denominator(expr):
        return expr
    combined = sympy.together(expr)
    numerator, _ = sympy.fraction(combined)
    if sympy.expand(numerator) == 0:
        return sympy.Integer(0)
    return sympy.cancel(combined)


def _replace_numbers(expr: Any, abstract: Callable[[Any], Any]) -> Any:
    replaced = abstract(expr)
    if replaced is not None:
        return replaced
    if not expr.args:
        return expr
    return expr.func(*[_replace_numbers(arg, abstract) for arg in expr.args])


SCALAR_STRATEGIES = (
    ("expand", _bounded(lambda e, f: sympy.expand(e))),
    ("cancel", _bounded(cancel)),
    ("exp rules", _bounded(_exp_rules)),
    ("sum rules", _bounded(_sum_rules)),
    ("sums written out", _bounded(_written_out)),
    ("reindex", _bounded(_reindexed)),
    ("trace", _bounded(_trace_forms)),
    ("rewrite exp", _bounded(rewrite_exp)),
    ("expand trig", _bounded(_expand_trig)),
    ("order", _bounded(_order)),
    # SymPy's summation is slow (0.2 s a sum): after every quicker strategy has failed.
    ("sum closed forms", _bounded(closed_forms)),
    ("simplify", _simplify),
)

