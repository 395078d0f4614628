r"""Deciding equality: :func:`prove_equal` is the ONE place where ``lhs = rhs`` is decided.

SymPy's ``==`` is structural and ``Expr.equals``, ``is_zero`` and ``simplify`` may decide
a number by a low-precision evaluation, so none of them proves anything alone.  A step is
checked in this fixed, documented order (the **trusted base** is this list, the sign
calculus of :mod:`.conditions` and the rule library of :mod:`.rules`):

0. ``exact values``  -- no float and no non-finite value (nan, zoo, oo) anywhere
   (:class:`~symbolic_attn.errors.InexactStepError`);
1. ``side conditions`` -- every condition the two sides need to be defined (denominators
   ``!= 0``, log arguments ``> 0``, root bases ``>= 0``, inverses invertible, sum ranges not
   reversed) is proved from the declarations and stated assumptions, else
   :class:`~symbolic_attn.errors.SideConditionError` names it;
2. ``rules``         -- the named rules of the step are applied (each checks its own
   conditions); ``notation`` (:class:`Frac`, named operators) is unfolded;
3. ``structural``    -- the same SymPy tree;  ``assumptions`` -- after the stated rewrites;
4. ``entrywise``     -- explicit matrices entry by entry; matrix expressions after
   ``doit``/distribution;
5. symbol-free residuals: ``exact arithmetic`` only (expansion, minimal polynomial); a
   certified arb enclosure excluding 0 refutes; anything else is undecided;
6. ``expand``, ``cancel``, ``exp rules``, ``sum rules`` (linearity, constant summands,
   renaming bound indices, all valid for non-reversed ranges), ``sums written out`` (over
   concrete ranges, term by term), ``reindex`` (a sum reflected
   ``j -> a + b - j`` or shifted ``j -> j - c``: bijections of its integer range), ``rewrite exp``
   (trigonometric and hyperbolic functions as exponentials), ``expand trig`` (angle addition,
   inside sums too), ``order`` (min/max resolved
   by the sign calculus), ``simplify`` (with every irrational number abstracted to a
   symbol, so no numeric zero test can decide anything).  A residual with a sum over an
   index tries the ``sum rules`` right after ``expand``; any other residual with a
   denominator tries ``cancel`` first.

If no strategy succeeds the step is **not** proved.  Numbers then only *refute*: a point
satisfying every declaration and stated condition, with sums evaluated by the empty-sum
convention, where the residual is certified non-zero.  Otherwise: "not shown to vanish".

>>> import sympy
>>> x, y = sympy.symbols("x y")
>>> prove_equal(x * (y + 1), x * y + x).strategy
'expand'
>>> prove_equal((x**2 - 1) / (x - 1), x + 1)
Traceback (most recent call last):
...
symbolic_attn.errors.SideConditionError: needs x - 1 != 0 (denominator): not proved from the declarations and stated assumptions
>>> prove_equal((x**2 - 1) / (x - 1), x + 1, [Assumption("A1", "x is not 1", condition=sympy.Ne(x, 1))]).strategy
'cancel'
>>> prove_equal(x + 1, x + 2)
Traceback (most recent call last):
...
symbolic_attn.errors.ProofError: refuted: residual -1 is not zero
"""

import contextlib
import dataclasses
from dataclasses import dataclass, field
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NoReturn

import sympy

from symbolic_attn.errors import AssumptionConflictError, CrossExaminationError, ProofError, SideConditionError, UndecidedError
from symbolic_attn.exact.certified import proved_zero
from symbolic_attn.exact.memo import memoized
from symbolic_attn.proofs.binders import bind_fresh, unbind
from symbolic_attn.proofs.consistency import linear_contradiction, linear_real_system
from symbolic_attn.proofs.conditions import (
    Condition, Facts, ForAll, contradicts, normalise, prove_condition, range_membership, reject_inexact, side_conditions,
    typed as _typed)
from symbolic_attn.proofs.crossexam import Examined, cross_examine
from symbolic_attn.proofs.messages import plain_text, short_line
from symbolic_attn.proofs.notation import Frac, step_value, unfold
from symbolic_attn.proofs.rules import apply_rules, distribute
from symbolic_attn.proofs.refute import certified_value, refute_or_undecided, safe_sign, symbol_free
from symbolic_attn.proofs.strategies import (
    SCALAR_STRATEGIES as _SCALAR_STRATEGIES, cancel, closed_forms, has_denominator, rewrite_exp)
from symbolic_attn.proofs.sums import expand_sums, sum_rules

__all__ = [
    "Assumption",
    "ForAll",
    "Frac",
    "Proof",
    "Disproof",
    "prove_equal",
    "prove_equal_quickly",
    "prove_positive",
    "prove_nonnegative",
    "prove_unequal",
    "examine",
    "without_cross_examination",
    "STRATEGIES",
]

#: Tried only once the quick strategies have failed on every way of applying a step's rules.
_LAST_RESORTS = ("sum closed forms", "simplify")

STRATEGIES = (
    "structural",
    "assumptions",
    "entrywise",
    "exact arithmetic",
    "expand",
    "cancel",
    "exp rules",
    "sum rules",
    "sums written out",
    "reindex",
    "trace",
    "rewrite exp",
    "expand trig",
    "order",
    "sum closed forms",
    "simplify",
    "sign calculus",
)

#: Rounds of rewriting by the assumptions' rules (a rule's result may match another rule).
_REWRITE_ROUNDS = 8

@dataclass(frozen=True)
class Assumption:
    r"""A named hypothesis or definition, printed with every result that uses it.

    ``text`` is prose (``$...$`` math allowed), ``latex`` an optional formula.  When
    ``rewrite`` is given, :func:`prove_equal` may use it: it maps an expression to an
    equal one *under this assumption* (``P^T P -> I``).  ``condition`` states a fact the
    side conditions may use: a relation (``x > 0``, ``n >= 2``, ``Ne(x, 1)``), an ``And``
    of them, or ``Q.invertible(X)``.  Dropping the assumption drops both, so a step that
    needs it can no longer be proved.

    >>> import sympy
    >>> c = sympy.Symbol("c")
    >>> zero = Assumption("c = 0", "the shift is zero", rewrite=lambda e: e.subs(c, 0))
    >>> prove_equal(c + 1, 1, [zero]).strategy
    'assumptions'
    """

    label: str
    text: str
    latex: str = ""
    rewrite: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    condition: object = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"({self.label}) {self.text}" + (f": {self.latex}" if self.latex else "")

    def apply(self, expr: Any) -> Any:
        """``expr`` rewritten by this assumption's rule (unchanged without a rule)."""
        return expr if self.rewrite is None else self.rewrite(expr)

    def conditions(self) -> tuple[Condition, ...]:
        """The stated facts, as :class:`~.conditions.Condition` objects."""
        if self.condition is None:
            return ()
        items = self.condition if isinstance(self.condition, (list, tuple)) else [self.condition]
        return tuple(c for item in items for c in normalise(item))


@dataclass(frozen=True)
class Proof:
    """Evidence that ``lhs = rhs``: the strategy that decided it, and the rules applied."""

    strategy: str
    rules: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Disproof:
    """Evidence that ``lhs != rhs``: where they differ, and the certified non-zero residual."""

    where: str
    residual: object
    approx: str


def facts_of(assumptions: Iterable[Assumption]) -> Facts:
    """The stated conditions of ``assumptions`` as :class:`Facts`, once they are shown not to
    contradict each other (:func:`check_consistent`)."""
    assumptions = tuple(assumptions)
    check_consistent(assumptions)
    return Facts.from_conditions([c for a in assumptions for c in a.conditions()])


def check_consistent(assumptions: Iterable[Assumption]) -> None:
    """Raise AssumptionConflictError when two stated conditions contradict each other.

    Assumptions that cannot hold together prove anything (``x > 1`` and ``x < 1/2``), so
    each stated condition is checked against each other one (and against the declared flags)
    by the sign calculus: a contradiction names both assumptions.
    """
    assumptions = tuple(assumptions)  # read twice: an iterator would be empty the second time
    stated = [(a.label, c) for a in assumptions for c in a.conditions() if c.kind in (">0", ">=0", "!=0")]
    universal = tuple((a.label, relation) for a in assumptions for relation in _examinable(a.condition)
                      if _is_forall_statement(a.condition, relation))
    if stated or universal:
        _check_consistent(tuple((label, c.expr, c.kind) for label, c in stated), universal)


def _is_forall_statement(condition: Any, relation: Any) -> bool:
    """Whether ``relation`` came from a ForAll of ``condition`` (a statement over a range)."""
    return isinstance(relation, sympy.Basic) and relation.has(sympy.Sum, sympy.Product) and _has_forall(condition)


def _has_forall(condition: Any) -> bool:
    if isinstance(condition, (list, tuple)):
        return any(_has_forall(item) for item in condition)
    return isinstance(condition, ForAll)


@memoized
def _check_consistent(stated: Any, universal: Any = ()) -> None:
    _check_pairs(stated)
    labels = linear_contradiction(stated)
    if labels:
        named = ", ".join(f"({label})" for label in labels[:-1]) + f" and ({labels[-1]})"
        raise AssumptionConflictError(f"assumptions {named} contradict each other: no values satisfy all of them "
                                      "(a non-negative combination of them says 0 > 0)")
    if not universal and linear_real_system(stated):
        return  # linear in real unknowns: no contradiction by Fourier-Motzkin means a point exists
    if not _CROSS_EXAMINATION[-1]:
        return
    relations = [_as_relation(expr, kind) for _, expr, kind in stated] + [relation for _, relation in universal]
    found = cross_examine(sympy.Integer(0), sympy.Integer(0), "=", relations, points=1)
    if found.points_used == 0:
        listed = ", ".join(f"({label})" for label in dict.fromkeys(
            [label for label, _, _ in stated] + [label for label, _ in universal]))
        raise UndecidedError(f"assumptions {listed} are not shown to hold together: no contradiction was found, "
                             f"and no exact point satisfying all of them "
                             f"({found.skipped_reason or 'none found'})")


def _as_relation(expr: Any, kind: str) -> Any:
    """``expr kind 0`` as a relation, a bound on one symbol written ``x >= c`` (the point search
    aims its draws at such bounds)."""
    make = {">0": sympy.StrictGreaterThan, ">=0": sympy.GreaterThan, "!=0": sympy.Unequality}[kind]
    symbols = expr.free_symbols
    if len(symbols) == 1 and not expr.has(sympy.Indexed):
        (symbol,) = symbols
        coefficient = expr.coeff(symbol)
        rest = sympy.expand(expr - coefficient * symbol)
        if coefficient.is_Rational and coefficient != 0 and rest.is_Rational and sympy.expand(expr).is_polynomial(symbol) \
                and sympy.degree(expr, symbol) == 1:
            bound = -rest / coefficient
            if kind == "!=0":
                return sympy.Unequality(symbol, bound)
            flipped = {">0": sympy.StrictLessThan, ">=0": sympy.LessThan}[kind]
            return make(symbol, bound) if coefficient > 0 else flipped(symbol, bound)
    return make(expr, 0)


def _check_pairs(stated: Any) -> None:
    """Each stated condition against the declarations and against each other one."""
    for index, (label, expr, kind) in enumerate(stated):
        if contradicts(Condition(expr, kind)):
            raise AssumptionConflictError(f"assumption ({label}) states {Condition(expr, kind)}, which contradicts "
                                          "the declarations of its symbols")
        for other_label, other_expr, other_kind in stated[index + 1:]:
            facts = Facts.from_conditions([Condition(other_expr, other_kind)])
            if contradicts(Condition(bind_fresh(expr), kind), facts):
                raise AssumptionConflictError(
                    f"assumptions ({label}) and ({other_label}) contradict each other: {Condition(expr, kind)} "
                    f"and {Condition(other_expr, other_kind)} cannot both hold")


def check_conditions(expressions: Any, facts: Facts) -> None:
    """Prove every side condition of ``expressions``; raise SideConditionError at the first unmet."""
    seen = set()
    for expr in expressions:
        for condition in side_conditions(expr):
            key = (condition.expr, condition.kind, condition.unless, getattr(condition, "ranges", ()))
            if key in seen:
                continue
            seen.add(key)
            if not prove_condition(condition, facts) and not (
                    condition.kind != "invertible" and _has_operator(condition.expr)
                    and prove_condition(dataclasses.replace(condition, expr=unfold(condition.expr)), facts)):
                why = f" ({condition.why})" if condition.why else ""
                raise SideConditionError(
                    f"needs {short_line(plain_text(condition), 200)}{why}: not proved from the declarations and stated assumptions")


def _has_operator(expr: Any) -> bool:
    return isinstance(expr, sympy.Basic) and any(
        getattr(node, "is_named_operator", False) or isinstance(node, Frac) for node in sympy.preorder_traversal(expr))


#: Whether proved steps are cross-examined: switched off only by :func:`without_cross_examination`
#: (the differential fuzzer and the benchmark, which measure the prover alone).
_CROSS_EXAMINATION = [True]
#: Admissible points at which each proved step is evaluated.
EXAMINED_POINTS = 4


@contextlib.contextmanager
def without_cross_examination() -> Iterator[None]:
    """Within this block, proved steps are not cross-examined (for tests of the prover alone)."""
    _CROSS_EXAMINATION.append(False)
    try:
        yield
    finally:
        _CROSS_EXAMINATION.pop()


def examine(lhs: Any, rhs: Any, relation: str, assumptions: Iterable[Assumption] = ()) -> Examined | None:
    """Cross-examine a proved step ``lhs relation rhs`` (:mod:`.crossexam`): both sides are
    evaluated at admissible exact points by code independent of the prover, and a certified
    disagreement raises :class:`~symbolic_attn.errors.CrossExaminationError`.

    Returns the :class:`~.crossexam.Examined` record (None when switched off).
    """
    if not _CROSS_EXAMINATION[-1]:
        return None
    assumptions = tuple(assumptions)  # read three times below: an iterator would be empty after the first
    conditions = [c for a in assumptions for c in _examinable(a.condition)]
    written = (unfold(lhs), unfold(rhs))
    if relation == "=" and written[0] == written[1]:
        return None  # the same tree, as written: nothing the prover decided to examine
    if not any(a.rewrite is not None for a in assumptions):
        return cross_examine(*written, relation, conditions, points=EXAMINED_POINTS)
    # A rewrite rule of an assumption states an equality (a definition Z := sum e^{s_k},
    # P^T P = I, a value beta_b = 1) that the random points do not know.  The step is examined
    # with the rules applied, as the prover used them, and as written; it is rejected when
    # both are certified wrong (a value rule applied to the step but not inside its sums can
    # make one of the two disagree by itself).
    rewritten = (unfold(_rewrite(written[0], assumptions)), unfold(_rewrite(written[1], assumptions)))
    try:
        return cross_examine(*rewritten, relation, conditions, points=EXAMINED_POINTS)
    except CrossExaminationError as error:
        first = error
    try:
        return cross_examine(*written, relation, conditions, points=EXAMINED_POINTS)
    except CrossExaminationError:
        raise first from None


def _examinable(condition: Any) -> list[Any]:
    """A stated condition as the cross-examination reads it: relations as they are; a ForAll
    as exact statements about its whole range; a stated bijection left out (its map is an
    undefined function, which the cross-examination cannot evaluate, or an explicit map that
    was checked when it was stated)."""
    if condition is None:
        return []
    if isinstance(condition, (list, tuple)):
        return [c for item in condition for c in _examinable(item)]
    if isinstance(condition, ForAll):
        relations = condition.relation if isinstance(condition.relation, (list, tuple)) else [condition.relation]
        found = []
        for relation in relations:
            for normal in normalise(relation):
                term = normal.expr
                limits = (condition.variable, condition.low, condition.high)
                if normal.kind in (">=0", ">0"):
                    # every term >= 0  <=>  the sum of (|e| - e) over the range is 0
                    found.append(sympy.Eq(sympy.Sum(sympy.Abs(term) - term, limits), 0))
                if normal.kind in (">0", "!=0"):
                    found.append(sympy.Ne(sympy.Product(term, limits), 0))
        return found
    if all(hasattr(condition, name) for name in ("function", "low", "high")):  # a Bijection
        return []
    return [condition]


@_typed
def prove_equal(lhs: Any, rhs: Any, assumptions: Iterable[Assumption] = (), rules: Iterable[Any] = ()) -> Proof:
    """Prove ``lhs = rhs`` by the documented strategies, then cross-examine it; raise if not proved.

    ``rules`` are rule objects of :mod:`.rules` (or their names) applied first.

    Raises:
        InexactStepError: a float or non-finite value in either side.
        SideConditionError: a condition the sides need is not proved.
        ProofError: the two sides are shown different (``refuted``); CrossExaminationError
            when the proof was found and the cross-examination certifies it wrong.
        UndecidedError: no strategy proved it and nothing refuted it.
    """
    assumptions = tuple(assumptions)
    proof = _prove_equal(lhs, rhs, assumptions, rules)
    examine(step_value(lhs), step_value(rhs), "=", assumptions)
    return proof


@_typed
def prove_equal_quickly(lhs: Any, rhs: Any, assumptions: Iterable[Assumption] = ()) -> Proof:
    """:func:`prove_equal` by the quick strategies only (no ``simplify``, no refutation),
    then the cross-examination: for trying many candidates (which wrong rule explains a
    step), where a candidate that needs the last resorts is not the explanation.

    Raises UndecidedError when the quick strategies do not prove it, and what
    :func:`prove_equal` raises otherwise.
    """
    assumptions = tuple(assumptions)
    lhs, rhs = step_value(lhs), step_value(rhs)
    reject_inexact(lhs)
    reject_inexact(rhs)
    facts = facts_of(assumptions)
    unfolded = (bind_fresh(unfold(lhs)), bind_fresh(unfold(rhs)))
    check_conditions((bind_fresh(lhs), bind_fresh(rhs)) + unfolded, facts)
    proof = _decide(*unfolded, assumptions, facts, thorough=False)
    examine(lhs, rhs, "=", assumptions)
    return proof


def _prove_equal(lhs: Any, rhs: Any, assumptions: tuple[Assumption, ...], rules: Any) -> Proof:
    """:func:`prove_equal` without the cross-examination: the proof alone."""
    lhs, rhs = step_value(lhs), step_value(rhs)
    reject_inexact(lhs)
    reject_inexact(rhs)
    facts = facts_of(assumptions)
    # Every bound index becomes its stand-in before anything else looks at the step.
    written = (bind_fresh(lhs), bind_fresh(rhs))
    unfolded = (bind_fresh(unfold(lhs)), bind_fresh(unfold(rhs)))
    # Conditions of the sides as written, and of what their named operators stand for.
    check_conditions(written + unfolded, facts)
    if not rules:
        return _decide(*unfolded, assumptions, facts)
    candidates, applied, unmet = apply_rules(*unfolded, rules, facts)
    candidates = [(bind_fresh(left), bind_fresh(right)) for left, right in candidates]
    if len(candidates) > 1:
        # Several ways to apply the rules: the quick strategies on each first, so that a
        # candidate that does not fit never costs a last resort (simplify, refutation).
        for left, right in candidates:
            try:
                return Proof(_decide(left, right, assumptions, facts, thorough=False).strategy, applied)
            except (ProofError, UndecidedError):
                continue
    first_error: ProofError | UndecidedError | None = None
    for left, right in candidates:
        try:
            return Proof(_decide(left, right, assumptions, facts).strategy, applied)
        except (ProofError, UndecidedError) as error:
            first_error = first_error or error
    assert first_error is not None  # apply_rules returns at least one candidate
    note = f" (a rule was not applied where {unmet[0]})" if unmet else ""
    if isinstance(first_error, UndecidedError):
        if unmet:
            raise type(unmet[0])(f"{unmet[0]}; after the rules {', '.join(applied)}: {first_error}") from None
        raise UndecidedError(f"after the rules {', '.join(applied)}: {first_error}") from None
    raise type(first_error)(f"after the rules {', '.join(applied)}: {first_error}{note}") from None


def _decide(lhs: Any, rhs: Any, assumptions: tuple[Assumption, ...], facts: Facts, thorough: bool = True) -> Proof:
    """Decide ``lhs = rhs``; ``thorough=False`` tries only the quick strategies (no simplify,
    no refutation) and raises UndecidedError when they do not prove it."""
    lhs, rhs = bind_fresh(unfold(lhs)), bind_fresh(unfold(rhs))
    if lhs == rhs:
        return Proof("structural")
    if assumptions:
        lhs, rhs = bind_fresh(unfold(_rewrite(lhs, assumptions))), bind_fresh(unfold(_rewrite(rhs, assumptions)))
        if lhs == rhs:
            return Proof("assumptions")
    reject_inexact(lhs)
    reject_inexact(rhs)
    if _is_matrix(lhs) or _is_matrix(rhs):
        return _prove_matrix(lhs, rhs, assumptions, facts, thorough)
    residual = lhs - rhs
    if symbol_free(residual):
        return _decide_number(residual)
    tried = [residual]
    refuted_before: Any = None  # the form the numbers were tried on before the last resorts
    for name, transform in _strategies_for(residual):
        if name in _LAST_RESORTS:
            if not thorough:
                continue
            if refuted_before is None:
                refuted_before = _refute_first(tried, facts)
        try:
            transformed = transform(residual, facts)
        except Exception:  # a SymPy internal failure (seen: StopIteration in sum_simplify) proves nothing
            continue
        if transformed == 0:
            return Proof(name)
        if transformed.is_number and symbol_free(transformed):  # is_number stops at the first letter
            try:
                return _decide_number(transformed, name)
            except UndecidedError:
                pass
        tried.append(transformed)
    if not thorough:
        raise UndecidedError("not proved by the quick strategies")
    shortest = _shortest(tried)
    if refuted_before is not None and refuted_before[0] == shortest:
        raise refuted_before[1]  # the same form as before the last resorts: no point tried twice
    _refute_shortest(shortest, facts)


def _shortest(tried: list[Any]) -> Any:
    """The shortest form of the residual that did not vanish (the one reported): by the length
    of its printed text, then the text.  Each distinct form is printed once (most strategies
    give a residual they cannot use back unchanged, and printing is most of the cost here)."""
    printed = {form: sympy.sstr(form) for form in dict.fromkeys(tried)}
    return min(printed, key=lambda form: (len(printed[form]), printed[form]))


def _refute_shortest(shortest: Any, facts: Facts) -> NoReturn:
    """Raise ProofError (refuted: a valid point where it is certified non-zero) or
    UndecidedError for the residual form ``shortest``."""
    if symbol_free(shortest):
        _decide_number(shortest)
    # Reported with the author's names for the bound indices.
    refute_or_undecided(unbind(shortest), facts)


def _refute_first(tried: list[Any], facts: Facts) -> tuple[Any, UndecidedError]:
    """Before the last resorts (SymPy's summation, ``simplify``: seconds on a big residual),
    the numbers: a step certified false at a valid point is false whatever a strategy could
    still do, so a false step never waits for them.  Raises the refutation; returns the form
    tried and why it was not refuted.  Numbers only ever refute here: a residual that no point
    refutes goes on to the last resorts, as before."""
    shortest = _shortest(tried)
    try:
        _refute_shortest(shortest, facts)
    except UndecidedError as error:
        return shortest, error
    raise AssertionError("unreachable: _refute_shortest always raises")


@_typed
def prove_unequal(lhs: Any, rhs: Any) -> Disproof:
    """Certify that two concrete values (or matrices) differ: the counterexample check.

    The residual must be a non-zero rational or a symbol-free value whose certified (arb)
    enclosure excludes 0.  Anything else raises :class:`UndecidedError`; sides proved equal
    raise ProofError.

    >>> import sympy
    >>> prove_unequal(sympy.exp(1), 3).approx
    '-0.281718'
    """
    lhs, rhs = bind_fresh(unfold(step_value(lhs))), bind_fresh(unfold(step_value(rhs)))
    reject_inexact(lhs)
    reject_inexact(rhs)
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
        raise ProofError(f"not a counterexample: every entry of {short_line(plain_text(lhs))} and {short_line(plain_text(rhs))} agrees "
                         "or is undecided")
    residual = expand_sums(lhs - rhs)
    if residual.free_symbols:
        residual = sympy.cancel(sympy.together(residual))
    if residual.free_symbols:
        raise UndecidedError(f"residual {short_line(plain_text(residual))} has free symbols: not a concrete counterexample")
    if residual == 0 or proved_zero(residual):
        raise ProofError(f"not a counterexample: {short_line(plain_text(lhs))} = {short_line(plain_text(rhs))}")
    value = certified_value(residual)
    if value is None:
        raise UndecidedError(f"cannot certify that residual {short_line(plain_text(residual))} is non-zero")
    return Disproof("value", residual, value)


@_typed
def prove_positive(expr: Any, assumptions: Iterable[Assumption] = ()) -> Proof:
    """Prove ``expr > 0`` by the sign calculus from declarations and stated facts, no floats.

    >>> import sympy
    >>> s = sympy.Symbol("s", real=True)
    >>> prove_positive(1 - sympy.exp(s) / (1 + sympy.exp(s))).strategy
    'sign calculus'
    """
    return _prove_sign(expr, assumptions, ">0")


@_typed
def prove_nonnegative(expr: Any, assumptions: Iterable[Assumption] = ()) -> Proof:
    """Prove ``expr >= 0`` (as :func:`prove_positive`)."""
    return _prove_sign(expr, assumptions, ">=0")


def _prove_sign(expr: Any, assumptions: Iterable[Assumption], kind: str) -> Proof:
    assumptions = tuple(assumptions)
    proof = _prove_sign_only(expr, assumptions, kind)
    examine(step_value(expr), sympy.Integer(0), ">" if kind == ">0" else ">=", assumptions)
    return proof


def _prove_sign_only(expr: Any, assumptions: tuple[Assumption, ...], kind: str) -> Proof:
    expr = step_value(expr)
    reject_inexact(expr)
    facts = facts_of(assumptions)
    check_conditions((bind_fresh(expr), bind_fresh(unfold(expr))), facts)
    expr = bind_fresh(unfold(_rewrite(bind_fresh(unfold(expr)), assumptions)))
    reject_inexact(expr)
    shown = "> 0" if kind == ">0" else ">= 0"
    if symbol_free(expr):
        expanded = expand_sums(expr)
        if prove_condition(Condition(expanded, kind), facts):
            return Proof("exact arithmetic")
        sign = safe_sign(expanded)
        if sign is not None and (sign < 0 or (sign == 0 and kind == ">0")):
            raise ProofError(f"refuted: {short_line(plain_text(expr))} is not {shown}")
        raise UndecidedError(f"cannot show {short_line(plain_text(expr))} {shown}")
    # One fraction first, its numerator expanded: a quotient of sums of positive terms is
    # signed by the rules at once, while the sign calculus on the step as written may search
    # much longer (and reducing the fraction, as cancel does, costs a polynomial gcd).
    # A sum over an index is signed termwise as written (bringing it over one denominator
    # only hides its terms).
    first, second = (lambda e: e, _one_fraction) if expr.has(sympy.Sum) else (_one_fraction, lambda e: e)
    transforms: tuple[Callable[[Any], Any], ...] = (
        first, second, cancel, lambda e: sympy.factor(sympy.together(e)), lambda e: sum_rules(e, range_membership(facts)))
    for transform in transforms:
        try:
            candidate = bind_fresh(transform(expr))
        except Exception:  # a SymPy internal failure (seen: StopIteration in sum_simplify) proves nothing
            continue
        if prove_condition(Condition(candidate, kind), facts):
            return Proof("sign calculus")
    raise UndecidedError(f"cannot show {short_line(plain_text(expr))} {shown}")


# ---------------------------------------------------------------------------- internals


def _is_matrix(value: Any) -> bool:
    return isinstance(value, (sympy.MatrixBase, sympy.MatrixExpr))


def _one_fraction(expr: Any) -> Any:
    """``expr`` over a common denominator, the numerator expanded (the fraction not reduced)."""
    numerator, denominator = sympy.fraction(sympy.together(expr))
    return sympy.Mul(sympy.expand(numerator), sympy.Pow(denominator, -1))


def _strategies_for(residual: Any) -> tuple[tuple[str, Callable[[Any, Facts], Any]], ...]:
    """The scalar strategies in the order to try them on ``residual``: a residual with sums
    over an index goes to the sum rules right after ``expand``, before the fraction rules
    (which cannot see into a sum and are slow on one); any other residual with a denominator
    goes to ``cancel`` first.  Every strategy is still tried; only the order differs."""
    wanted: tuple[str, ...]
    if residual.has(sympy.Sum):
        wanted = ("expand", "sum rules", "sums written out", "reindex")
    elif has_denominator(residual):
        wanted = ("cancel",)  # a quotient: expanding alone rarely decides it
    else:
        return _SCALAR_STRATEGIES
    first = [entry for name in wanted for entry in _SCALAR_STRATEGIES if entry[0] == name]
    return tuple(first) + tuple(entry for entry in _SCALAR_STRATEGIES if entry not in first)


def _rewrite(expr: Any, assumptions: tuple[Assumption, ...]) -> Any:
    """``expr`` rewritten by the assumptions' rules until nothing changes (bounded).

    The rules are the author's, written for the author's own names: they see the sums with
    the author's bound variables back wherever that captures nothing (:func:`.binders.unbind`),
    and what they return is bound again before any strategy sees it.
    """
    if not any(a.rewrite is not None for a in assumptions):
        return expr
    expr = unbind(expr)
    for _ in range(_REWRITE_ROUNDS):
        new = expr
        for assumption in assumptions:
            new = assumption.apply(new)
        if new == expr:
            return expr
        expr = new
    return expr


def _decide_number(residual: Any, strategy: str = "exact arithmetic") -> Proof:
    """A symbol-free residual: zero only by exact proof; non-zero only by a certified enclosure."""
    expanded = expand_sums(residual)
    exact_forms = (lambda e: e, sympy.expand, cancel, rewrite_exp, closed_forms)
    for transform in exact_forms:
        try:
            candidate = transform(expanded)
        except Exception:  # a SymPy internal failure (seen: StopIteration in sum_simplify) proves nothing
            continue
        if candidate == 0 or proved_zero(candidate):
            return Proof(strategy)
    shown = short_line(plain_text(residual))
    sign = safe_sign(expanded)
    if sign:
        raise ProofError(f"refuted: residual {shown} is not zero")
    raise UndecidedError(f"residual {shown} not shown to vanish (a number neither proved 0 nor certified non-zero)")


def _prove_matrix(lhs: Any, rhs: Any, assumptions: tuple[Assumption, ...], facts: Facts, thorough: bool = True) -> Proof:
    if getattr(lhs, "shape", None) != getattr(rhs, "shape", None):
        if _one_by_one(lhs) or _one_by_one(rhs):
            raise ProofError(f"refuted: a 1x1 matrix is not a scalar here (shapes {_shape(lhs)} and {_shape(rhs)}); "
                             "use the rule 'matrix.scalar'")
        raise ProofError(f"refuted: shapes {_shape(lhs)} and {_shape(rhs)} differ")
    if isinstance(lhs, sympy.MatrixBase) and isinstance(rhs, sympy.MatrixBase):
        for i in range(lhs.rows):
            for j in range(lhs.cols):
                try:
                    _decide(lhs[i, j], rhs[i, j], assumptions, facts, thorough)
                except (ProofError, UndecidedError) as error:
                    raise type(error)(f"entry ({i + 1}, {j + 1}): {error}") from None
        return Proof("entrywise")
    explicit_forms: tuple[Callable[[Any], Any], ...] = (lambda m: m.doit(), lambda m: distribute(m.doit()), _explicit)
    for transform in explicit_forms:
        try:
            left = _rewrite(transform(lhs), assumptions)
            right = _rewrite(transform(rhs), assumptions)
        except (TypeError, ValueError, AttributeError, IndexError):
            continue
        if left == right:
            return Proof("entrywise")
        if isinstance(left, sympy.MatrixBase) and isinstance(right, sympy.MatrixBase):
            return _prove_matrix(left, right, assumptions, facts, thorough)
    raise UndecidedError(f"residual {short_line(plain_text(sympy.MatAdd(lhs, -rhs)))} not shown to vanish")


def _explicit(matrix: Any) -> Any:
    if all(isinstance(size, (int, sympy.Integer)) for size in matrix.shape):
        return sympy.ImmutableMatrix(matrix.as_explicit())
    return matrix


def _one_by_one(value: Any) -> bool:
    return _is_matrix(value) and tuple(value.shape) == (1, 1)


def _shape(value: Any) -> tuple[Any, ...] | str:
    return tuple(value.shape) if _is_matrix(value) else "scalar"


