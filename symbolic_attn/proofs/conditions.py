r"""Side conditions and signs: what a step needs to be defined, and proving it from facts.

A step ``lhs = rhs`` is an equality of *defined* values.  :func:`side_conditions` reads,
from the expressions as written, every condition they need: each denominator ``!= 0``,
each ``log`` argument ``> 0``, each square-root (non-integer power) base ``>= 0``, each
matrix inverse invertible, each sum range not reversed (``b >= a - 1``, so that SymPy's
sum equals the ordinary sum, empty when ``b = a - 1``).  :func:`prove_condition` proves
one of them from

* the **declarations**: flags on symbols (``positive=True``, ``integer=True``, ...), and
* the **facts**: conditions stated as assumptions (``x > 0``, ``n >= 2``, ``Ne(x, 1)``,
  ``Q.invertible(X)``),

by a small sign calculus (sums and products of signed terms, ``exp > 0``, even powers,
sums of positive terms over a non-empty range, monotonicity of ``exp``/``log``).  Numbers
are decided by exact rationals or certified intervals (arb), never by SymPy's
low-precision numeric sign tests.

>>> import sympy
>>> x = sympy.Symbol("x", real=True)
>>> [str(c) for c in side_conditions(1 / (x - 1) + sympy.log(x))]
['x - 1 != 0', 'x > 0']
>>> prove_condition(Condition(sympy.exp(x) + 1, ">0"), Facts())
True
>>> prove_condition(Condition(x - 1, "!=0"), Facts())
False
>>> prove_condition(Condition(x - 1, "!=0"), Facts.from_conditions([sympy.Ne(x, 1)]))
True
"""

import functools
from dataclasses import dataclass, field
from collections.abc import Callable, Iterable
from typing import Any, TypeVar, cast

import sympy

from symbolic_attn.errors import InexactStepError, SymbolicAttnError, UndecidedError, shown
from symbolic_attn.exact.certified import certified_sign, proved_zero
from symbolic_attn.exact.memo import memoized
from symbolic_attn.proofs.binders import bind_fresh, binder_limits, bound_stand_in, original_of, substitute
from symbolic_attn.proofs.domains import domain_conditions
from symbolic_attn.proofs.messages import plain_text
from symbolic_attn.proofs.notation import Frac
from symbolic_attn.proofs.sums import Membership, sum_rules

__all__ = ["Condition", "Facts", "ForAll", "proves_integer", "plain_text", "side_conditions", "prove_condition", "reject_inexact", "is_plain_number",
           "range_membership"]

_KINDS = (">0", ">=0", "!=0", "invertible", "integer")
_SHOWN = {">0": "> 0", ">=0": ">= 0", "!=0": "!= 0", "integer": "is an integer"}
#: Recursion depth of the sign calculus (its terms are small; deeper means "not proved").
_DEPTH = 12


@dataclass(frozen=True)
class Condition:
    """``expr > 0``, ``expr >= 0``, ``expr != 0`` or ``expr`` invertible (a matrix)."""

    expr: Any
    kind: str
    why: str = ""
    #: Another condition that makes this one unnecessary (``b^k`` needs ``b != 0`` unless ``k >= 0``).
    unless: Any = None

    def __str__(self) -> str:
        if self.kind == "invertible":
            return f"{plain_text(self.expr)} invertible"
        text = f"{plain_text(self.expr)} {_SHOWN[self.kind]}"
        return text + (f" (or {self.unless})" if self.unless is not None else "")


@dataclass(frozen=True)
class Facts:
    """Stated conditions (from assumptions), normalised to ``expr kind`` form."""

    conditions: tuple[Condition, ...] = ()
    invertible: frozenset[Any] = field(default_factory=frozenset)
    bijections: frozenset[Any] = field(default_factory=frozenset)
    #: Stated facts for every index of a range: ``(variable, low, high, Condition)`` (:class:`ForAll`).
    universal: tuple[tuple[Any, Any, Any, Condition], ...] = ()

    @classmethod
    def from_conditions(cls, stated: Iterable[Any]) -> "Facts":
        """Facts from relations (``x > 0``, ``a <= b``, ``Ne(a, b)``) and ``Q.invertible(X)``."""
        conditions, invertible, bijections, universal = [], set(), set(), []
        for item in stated:
            for normal in normalise(item):
                if normal.kind == "invertible":
                    invertible.add(normal.expr)
                elif normal.kind == "bijection":
                    bijections.add(normal.expr)
                elif normal.kind == "forall":
                    universal.append(normal.expr)
                else:
                    # Bound as every step is, so that a fact about a sum meets the sum.
                    conditions.append(Condition(bind_fresh(normal.expr), normal.kind, normal.why))
        return cls(tuple(conditions), frozenset(invertible), frozenset(bijections), tuple(universal))

    def plus(self, extra: Iterable[Condition]) -> "Facts":
        return Facts(self.conditions + tuple(extra), self.invertible, self.bijections, self.universal)

    def within(self, variable: Any, low: Any, high: Any, depth: int = 4) -> "Facts":
        """These facts inside a range: ``low <= variable <= high``, and every :class:`ForAll` fact
        whose range is shown to contain this one, instantiated at ``variable``."""
        extra = [Condition(variable - low, ">=0"), Condition(high - variable, ">=0")]
        return self.plus(extra + self._instances(variable, low, high, depth))

    def at(self, term: Any, depth: int = 4) -> "Facts":
        """These facts with every :class:`ForAll` fact instantiated at the integer ``term`` where
        ``term`` is shown to lie in its range."""
        return self.plus(self._instances(term, term, term, depth)) if self.universal else self

    def _instances(self, variable: Any, low: Any, high: Any, depth: int) -> list[Condition]:
        found = []
        plain = Facts(self.conditions, self.invertible, self.bijections)
        for bound, first, last, condition in self.universal:
            if not getattr(variable, "is_integer", False):
                continue
            if _holds(low - first, ">=0", plain, depth) and _holds(last - high, ">=0", plain, depth):
                found.append(Condition(substitute(condition.expr, {bound: variable}), condition.kind))
        return found


@dataclass(frozen=True)
class ForAll:
    """A stated fact for every integer ``variable`` in ``low..high``: ``ForAll(k, 1, n, v[k] >= L)``.

    A fact about a free ``k`` says nothing about a bound ``k``; a fact meant for every index
    of a range is stated with this, and the checker uses it at every index it can show to
    lie in the range (inside sums over a sub-range, and at integer terms in the range).
    """

    variable: object
    low: object
    high: object
    relation: object


def normalise(item: Any) -> list[Condition]:
    """A stated relation as a list of :class:`Condition` (``a < b`` is ``b - a > 0``)."""
    if isinstance(item, Condition):
        return [item]
    if item is sympy.true or item is True:
        return []
    if item is sympy.false or item is False:
        # SymPy already decided the stated relation is false for the declared symbols.
        return [Condition(sympy.Integer(-1), ">0", "states a relation that SymPy already evaluates to False")]
    if all(hasattr(item, name) for name in ("function", "low", "high")):  # a rules.Bijection
        sigma, low, high = item.function, sympy.sympify(item.low, strict=True), sympy.sympify(item.high, strict=True)
        _check_explicit_bijection(sigma, low, high)
        # sigma maps low..high into low..high: the values of sigma are in the range.
        return [Condition((sigma, low, high), "bijection")]
    if isinstance(item, ForAll):
        variable = bound_stand_in(item.variable, -1)  # the same stand-in each time: facts stay equal
        low, high = sympy.sympify(item.low, strict=True), sympy.sympify(item.high, strict=True)
        relations = item.relation if isinstance(item.relation, (list, tuple)) else [item.relation]
        return [Condition((variable, low, high, Condition(bind_fresh(substitute(c.expr, {item.variable: variable})),
                                                          c.kind)), "forall")
                for relation in relations for c in normalise(relation)]
    if isinstance(item, sympy.logic.boolalg.And):
        return [c for arg in item.args for c in normalise(arg)]
    if isinstance(item, sympy.assumptions.AppliedPredicate) and item.function == sympy.Q.invertible:
        return [Condition(item.arguments[0], "invertible")]
    kinds = {
        sympy.StrictGreaterThan: (">0", 1), sympy.StrictLessThan: (">0", -1),
        sympy.GreaterThan: (">=0", 1), sympy.LessThan: (">=0", -1), sympy.Unequality: ("!=0", 1),
    }
    for relation, (kind, sign) in kinds.items():
        if isinstance(item, relation):
            return [Condition(sign * (item.lhs - item.rhs), kind)]
    if isinstance(item, sympy.Equality):
        # a = b gives a - b >= 0 and b - a >= 0.
        return [Condition(item.lhs - item.rhs, ">=0"), Condition(item.rhs - item.lhs, ">=0")]
    from symbolic_attn.errors import ProofError

    raise ProofError(f"not a condition: {str(item)[:80]!r} (use x > 0, a <= b, Ne(a, b), Q.invertible(X))")


def _check_explicit_bijection(sigma: Any, low: Any, high: Any) -> None:
    """A stated bijection that is an explicit map is checked, not trusted.

    An undefined function (``sympy.Function("sigma")``) is a hypothesis, printed as such.
    An explicit map (a ``Lambda`` or a Python function) must be the identity or the reversal
    ``k -> a + b - k`` of ``a..b``, or, for concrete limits (at most 1000 values), map them
    one-to-one onto themselves.
    """
    from symbolic_attn.errors import ProofError

    if isinstance(sigma, sympy.core.function.UndefinedFunction):
        return
    k = sympy.Dummy("k", integer=True)
    try:
        image = sympy.sympify(sigma(k), strict=True)
    except (TypeError, ValueError, sympy.SympifyError) as error:
        raise ProofError(f"the stated bijection {sigma!r} cannot be applied to an index: {error}") from None
    if sympy.expand(image - k) == 0 or sympy.expand(image + k - low - high) == 0:
        return
    shown = substitute(image, {k: sympy.Symbol("k")})
    if low.is_Integer and high.is_Integer and 0 <= high - low < 1000:
        values = [substitute(image, {k: sympy.Integer(v)}) for v in range(int(low), int(high) + 1)]
        if all(v.is_Integer for v in values) and sorted(int(v) for v in values) == list(range(int(low), int(high) + 1)):
            return
        raise ProofError(f"the stated map k -> {plain_text(shown, 80)} is not a bijection of {low}..{high}")
    raise ProofError(f"the stated map k -> {plain_text(shown, 80)} is explicit and cannot be checked to be a "
                     f"bijection of {plain_text(low, 40)}..{plain_text(high, 40)} (only the identity and the reversal "
                     "are recognised): state the permutation as an undefined function, sympy.Function('sigma')")


# ------------------------------------------------------------------- exactness of a step


_NON_FINITE = (sympy.core.numbers.NaN, sympy.core.numbers.ComplexInfinity, sympy.core.numbers.Infinity,
               sympy.core.numbers.NegativeInfinity)


def reject_inexact(value: Any, where: str = "") -> None:
    """Raise InexactStepError if a float or non-finite value occurs anywhere in ``value``.

    >>> reject_inexact(sympy.Symbol("x") + sympy.Rational(1, 3))
    >>> reject_inexact(sympy.Symbol("x") + sympy.Float("0.5"))
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.InexactStepError: float 0.500000000000000 in the step: use exact numbers (Rational)
    """
    if isinstance(value, sympy.MatrixBase):
        for entry in value:
            reject_inexact(entry, where)
        return
    try:
        # Only SymPy trees are remembered: a Python 2.0 equals, and hashes like, a clean 2.
        (_exact_basic if isinstance(value, sympy.Basic) else _exact_tree)(value)
    except InexactStepError as error:
        raise InexactStepError(f"{where}{error}") from None


def _exact_tree(value: Any) -> None:
    """Raise for a float or non-finite value anywhere in ``value`` (its arguments, and plain
    containers among them).  Each distinct subtree is visited once: SymPy shares subtrees."""
    stack, visited = [value], set()
    while stack:
        node = stack.pop()
        if isinstance(node, float):
            raise InexactStepError(f"Python float {node!r}: use exact numbers (Rational)")
        if isinstance(node, (tuple, list, frozenset, set)):
            stack.extend(node)
            continue
        if not isinstance(node, sympy.Basic):
            continue
        try:
            if node in visited:
                continue
            visited.add(node)
        except TypeError:  # an unhashable node: visited each time it occurs
            pass
        if isinstance(node, sympy.Float):
            raise InexactStepError(f"float {node} in the step: use exact numbers (Rational)")
        if isinstance(node, _NON_FINITE):
            raise InexactStepError(f"non-finite value {node} in the step (an undefined expression)")
        stack.extend(node.args)


#: A SymPy tree found clean is remembered: a step passes the checker several times.
_exact_basic = memoized(_exact_tree)


@memoized
def is_plain_number(expr: Any) -> bool:
    """True when every number-valued part of ``expr`` is a Rational (no pi, sqrt(2), acos(1/2)):
    SymPy's own sign reasoning is then exact (it has nothing to evaluate numerically)."""
    return not any(isinstance(node, sympy.Basic) and not node.is_Rational and getattr(node, "is_number", False)
                   for node in sympy.preorder_traversal(expr))


# ------------------------------------------------------------------- collecting conditions


def side_conditions(expr: Any, inside: Any = ()) -> list[Any]:
    """Every condition ``expr`` needs to be defined, in order of first appearance.

    ``inside`` carries the ranges of enclosing sums: a condition on a term of
    ``Sum(f, (k, a, b))`` holds for every ``k`` with ``a <= k <= b`` (it is proved for a
    generic such ``k``, with the facts ``k - a >= 0`` and ``b - k >= 0``).
    """
    return list(_side_conditions(expr, tuple(inside)))


@memoized
def _side_conditions(expr: Any, inside: Any) -> tuple[Any, ...]:
    found: list[Condition] = []
    _collect(expr, inside, found)
    unique, seen = [], set()
    for condition in found:
        # The ranges are part of a condition: k != 0 on 1..n is not k != 0 on 0..n.
        pair = (condition.expr, condition.kind, getattr(condition, "ranges", ()))
        if pair not in seen:
            seen.add(pair)
            unique.append(condition)
    return tuple(unique)


@dataclass(frozen=True)
class Bounded(Condition):
    """A condition under the ranges of enclosing sums (``ranges``: (k, a, b) triples)."""

    ranges: tuple[Any, ...] = ()


def _add(found: Any, expr: Any, kind: str, why: str, inside: Any, unless: Any = None) -> None:
    found.append(Bounded(expr, kind, why, unless, inside) if inside else Condition(expr, kind, why, unless))


def _collect(expr: Any, inside: Any, found: Any) -> None:
    """Walk ``expr``: each node's own conditions from the closed domain table
    (:mod:`.domains`), each range's from :func:`_collect_range`, then the arguments'."""
    if isinstance(expr, sympy.MatrixBase):
        for entry in expr:
            _collect(entry, inside, found)
        return
    if not isinstance(expr, sympy.Basic):
        return
    if isinstance(expr, (sympy.Sum, sympy.Product)):
        ranges = inside
        for limit in binder_limits(expr):
            ranges = _collect_range(expr, limit, ranges, found)
        _collect(expr.function, ranges, found)
        return
    if getattr(expr, "is_named_operator", False):
        pass  # its arguments are collected here; what it stands for is checked unfolded
    elif isinstance(expr, Frac):  # its denominator counts
        _add(found, expr.args[1], "!=0", "denominator", inside)
    else:
        for needed in domain_conditions(expr):
            unless = None
            if len(needed) > 3:
                unless = Bounded(needed[3][0], needed[3][1], "", None, inside) if inside else Condition(*needed[3])
            _add(found, needed[0], needed[1], needed[2], inside, unless)
    for arg in expr.args:
        _collect(arg, inside, found)


def _collect_range(expr: Any, limit: tuple[Any, ...], ranges: Any, found: Any) -> Any:
    """A sum's or product's range ``k = a..b``: integer limits (the index runs over integers)
    and not reversed (``b >= a - 1``: SymPy's Karr convention gives a reversed range a value
    that is not the ordinary empty sum or product).  Returns the ranges inside it."""
    kind = "sum" if isinstance(expr, sympy.Sum) else "product"
    if len(limit) != 3:
        raise UndecidedError(f"no domain rule for an indefinite {kind} over {limit[0]}: cannot check this step")
    variable, low, high = limit
    _collect(low, ranges, found)
    _collect(high, ranges, found)
    for end, name in ((low, "lower"), (high, "upper")):
        _add(found, end, "integer", f"the {name} limit of the {kind} over {original_of(variable)} is an integer",
             ranges)
    _add(found, high - low + 1, ">=0", f"the range {original_of(variable)} = {plain_text(low, 80)}..{plain_text(high, 80)} "
         f"is not reversed", ranges)
    _collect_flags_of_index(kind, original_of(variable), low, high, ranges, found)
    return ranges + ((variable, low, high),)


def _collect_flags_of_index(kind: str, index: Any, low: Any, high: Any, ranges: Any, found: Any) -> None:
    """The range must agree with the flags the author declared on the index.

    The checker gives a bound index no flag but ``integer``, but SymPy has already used the
    author's flags when the summand was built: with ``k`` declared positive, ``Max(k, 1)`` is
    built as ``k`` and ``Abs(k - 1)`` as ``k - 1``, which is false at ``k = 0``.  So a sum over
    ``k`` declared positive must start at 1 or above, and so on.
    """
    flags = getattr(index, "assumptions0", {})
    name = f"the index {index} of the {kind} is declared"
    shown = f"{index} = {plain_text(low, 40)}..{plain_text(high, 40)}"
    fix = f"(SymPy used the flag when it built the terms; declare {index} integer only to sum over this range)"
    if flags.get("positive"):
        _add(found, low - 1, ">=0", f"{name} positive, so its range {shown} must start at 1 or above {fix}", ranges)
    elif flags.get("nonnegative"):
        _add(found, low, ">=0", f"{name} nonnegative, so its range {shown} must start at 0 or above {fix}", ranges)
    if flags.get("negative"):
        _add(found, -1 - high, ">=0", f"{name} negative, so its range {shown} must end at -1 or below {fix}", ranges)
    elif flags.get("nonpositive"):
        _add(found, -high, ">=0", f"{name} nonpositive, so its range {shown} must end at 0 or below {fix}", ranges)
    for flag in ("even", "odd", "prime", "composite", "zero"):
        if flags.get(flag):
            raise UndecidedError(f"{name} {flag}, which a range of consecutive integers is not: declare it "
                                 "integer only")
    if flags.get("nonzero") and not (flags.get("positive") or flags.get("negative")):
        raise UndecidedError(f"{name} nonzero, which a range of consecutive integers may not be: declare it "
                             "integer only (or positive)")
    for flag in ("integer", "rational", "real", "finite"):
        if flags.get(flag) is False:
            raise UndecidedError(f"{name} not {flag}, but a {kind} index runs over the integers")


# ------------------------------------------------------------------- proving conditions


_Function = TypeVar("_Function", bound=Callable[..., Any])


def typed(function: _Function) -> _Function:
    """Every failure of a public entry point of the checker is a typed error of the library.

    SymPy and Python can fail inside the checker on pathological input (a recursion too
    deep, an integer too long to print, an object that is no expression): that is not a
    verdict, so it becomes an UndecidedError naming what happened -- the step is not
    proved, never passed.
    """

    @functools.wraps(function)
    def checked(*args: Any, **keywords: Any) -> Any:
        try:
            return function(*args, **keywords)
        except SymbolicAttnError:
            raise
        except (RecursionError, ValueError, TypeError, AttributeError, IndexError, KeyError, ZeroDivisionError,
                NotImplementedError, OverflowError, MemoryError, StopIteration) as error:
            if isinstance(error, RecursionError):
                detail = "the expression is nested too deeply"
            else:
                detail = shown(" ".join(plain_text(error).split()), 160)
            raise UndecidedError(f"the checker could not decide this ({type(error).__name__}: {detail})") from None

    return cast(_Function, checked)  # functools.wraps keeps the signature; mypy cannot see it


@typed
def prove_condition(condition: Condition, facts: Facts) -> bool:
    """True when the condition follows from declarations and ``facts`` (False: not proved)."""
    if not isinstance(condition.expr, (sympy.Basic, tuple)):
        raise UndecidedError(f"not an expression: {type(condition.expr).__name__}")
    return bool(_prove_condition_remembered(condition, facts))


def _condition_key(condition: Condition, facts: Facts) -> tuple[Any, ...]:
    """What a proof of ``condition`` depends on (its ranges too, for a :class:`Bounded`)."""
    return (condition.expr, condition.kind, condition.unless, getattr(condition, "ranges", ()), facts)


@memoized(key=_condition_key)  # type: ignore[untyped-decorator]  # memoized(key=...) returns Any
def _prove_condition_remembered(condition: Condition, facts: Facts) -> bool:
    """True when the condition follows from declarations and ``facts`` (False: not proved)."""
    if condition.unless is not None and prove_condition(condition.unless, facts):
        return True
    return _prove_condition(condition, facts)


def _prove_condition(condition: Condition, facts: Facts) -> bool:
    expr = condition.expr
    if condition.kind == "invertible":
        return _invertible(expr, facts, _DEPTH)
    if condition.kind == "integer":
        # Only the flags (exact reasoning, nothing evaluated): a bound index is an integer,
        # a declared integer is; n/2 for an integer n is not known to be.
        return proves_integer(expr, facts)
    expr = bind_fresh(expr)
    for variable, low, high in getattr(condition, "ranges", ()):
        facts = facts.within(variable, low, high)
    if facts.universal:
        for index in _integer_indices(expr):
            facts = facts.at(index)
    facts = _bijection_facts(expr, facts)
    expr, facts = _flagged(expr, facts)
    return bool(_holds(expr, condition.kind, facts, _DEPTH))


def _integer_indices(expr: Any) -> list[Any]:
    """The integer indices of the sequences in ``expr`` (where a ForAll fact may apply)."""
    found: dict[Any, None] = {}
    for indexed in sorted(expr.atoms(sympy.Indexed), key=sympy.default_sort_key) if isinstance(expr, sympy.Basic) else ():
        for index in indexed.indices:
            if getattr(index, "is_integer", False) and not index.is_number:
                found.setdefault(index, None)
    return list(found)


def _bijection_facts(expr: Any, facts: Facts) -> Any:
    """A stated bijection sigma of lo..hi puts sigma(x) in lo..hi for every x proved in lo..hi."""
    if not facts.bijections or not isinstance(expr, sympy.Basic):
        return facts
    extra = []
    for sigma, low, high in facts.bijections:
        for application in expr.atoms(sympy.core.function.AppliedUndef):
            if application.func != sigma or len(application.args) != 1:
                continue
            argument = application.args[0]
            if _holds(argument - low, ">=0", facts, _DEPTH) and _holds(high - argument, ">=0", facts, _DEPTH):
                extra += [Condition(application - low, ">=0"), Condition(high - application, ">=0")]
    return facts.plus(extra) if extra else facts


def proves_integer(expr: Any, facts: Facts) -> bool:
    """``expr`` is an integer: by its flags (exact reasoning), or as the value of a stated
    bijection of an integer range at an integer argument."""
    if getattr(expr, "is_integer", False):
        return True
    if isinstance(expr, sympy.core.function.AppliedUndef) and len(expr.args) == 1:
        return any(expr.func == sigma for sigma, _, _ in facts.bijections) and proves_integer(expr.args[0], facts)
    return False


def range_membership(facts: Facts | None = None) -> Membership:
    """The sign calculus's answer to the sum normal form (:mod:`.sums`): ``t`` is an integer
    with ``a <= t <= b`` under the enclosing ranges, from ``facts`` (none when None)."""
    known = facts if facts is not None else Facts()

    def member(target: Any, low: Any, high: Any, ranges: tuple[Any, ...]) -> bool:
        return proves_integer(target, known) and all(
            prove_condition(Bounded(expr, ">=0", "", None, tuple(ranges)), known) for expr in (target - low, high - target))

    return member


def decide_relation(relation: Any, facts: Facts) -> Any:
    """True or False when the facts decide ``relation`` (``Eq``, ``Ne``, ``<``, ... and their
    ``And``/``Or``/``Not``), None otherwise."""
    if relation is sympy.true or relation is True:
        return True
    if relation is sympy.false or relation is False:
        return False
    if isinstance(relation, (sympy.Equality, sympy.Unequality)):
        difference = relation.lhs - relation.rhs
        if sympy.expand(difference) == 0:
            verdict = True
        elif prove_condition(Condition(difference, "!=0"), facts):
            verdict = False
        else:
            return None
        return verdict if isinstance(relation, sympy.Equality) else not verdict
    if isinstance(relation, sympy.Not):
        inner = decide_relation(relation.args[0], facts)
        return None if inner is None else not inner
    if isinstance(relation, (sympy.And, sympy.Or)):
        verdicts = [decide_relation(arg, facts) for arg in relation.args]
        if isinstance(relation, sympy.And):
            return False if False in verdicts else (True if all(v is True for v in verdicts) else None)
        return True if True in verdicts else (False if all(v is False for v in verdicts) else None)
    if isinstance(relation, sympy.core.relational.Relational):
        (condition,) = normalise(relation)
        if prove_condition(condition, facts):
            return True
        if contradicts(condition, facts):
            return False
    return None


def contradicts(condition: Condition, facts: Facts = Facts()) -> bool:
    """True when the declarations prove the stated condition false."""
    if condition.kind not in (">0", ">=0", "!=0"):
        return False
    expr = condition.expr
    if condition.kind == ">0":
        return bool(_holds(-expr, ">=0", facts, _DEPTH))
    if condition.kind == ">=0":
        return bool(_holds(-expr, ">0", facts, _DEPTH))
    return expr == 0 or (expr.is_number and proved_zero(expr))


def _invertible(matrix: Any, facts: Facts, depth: int) -> bool:
    """``matrix`` invertible: stated, the identity, or built from invertible square matrices by
    transposes, inverses, integer powers and products (with non-zero scalar factors); an
    explicit matrix whose determinant is proved non-zero."""
    if depth <= 0:
        return False
    if matrix in facts.invertible or isinstance(matrix, sympy.Identity):
        return True
    if isinstance(matrix, (sympy.Transpose, sympy.Inverse)):
        return _invertible(matrix.args[0], facts, depth - 1)
    if isinstance(matrix, sympy.MatPow) and matrix.args[1].is_integer:
        return _invertible(matrix.args[0], facts, depth - 1)
    if isinstance(matrix, sympy.MatMul):
        scalars = [f for f in matrix.args if not getattr(f, "is_Matrix", False) and not isinstance(f, sympy.MatrixExpr)]
        factors = [f for f in matrix.args if f not in scalars]
        return (all(f.is_square and _invertible(f, facts, depth - 1) for f in factors)
                and all(prove_condition(Condition(c, "!=0"), facts) for c in scalars))
    if isinstance(matrix, sympy.MatrixBase) and matrix.is_square and matrix.rows <= 6:
        return prove_condition(Condition(sympy.expand(matrix.det()), "!=0"), facts)
    return False


def _flagged(expr: Any, facts: Facts) -> tuple[Any, ...]:
    """Stated signs of plain symbols become flags on stand-ins, so the sign calculus sees them."""
    replace = {}
    for fact in facts.conditions:
        symbol = fact.expr
        sign = 1
        if isinstance(symbol, sympy.Mul) and symbol.args[0] == -1 and len(symbol.args) == 2:
            sign, symbol = -1, symbol.args[1]
        if not isinstance(symbol, sympy.Symbol) or symbol in replace:
            continue
        flags = {key: value for key, value in symbol.assumptions0.items() if value is True and key in _FLAG_KEYS}
        if fact.kind == "!=0":
            flags["nonzero"] = True
        elif sign == 1:
            flags["positive" if fact.kind == ">0" else "nonnegative"] = True
        else:
            flags["negative" if fact.kind == ">0" else "nonpositive"] = True
        key = (symbol, tuple(sorted(flags.items())))
        if key not in _STAND_INS:
            try:
                _STAND_INS[key] = sympy.Dummy(symbol.name, **flags)
            except Exception:  # inconsistent flags: leave the symbol (the conflict check reports it)
                continue
        # The same stand-in every time, so that the caches of the sign calculus can hit.
        replace[symbol] = _STAND_INS[key]
    if not replace:
        return expr, facts

    def swap(e: Any) -> Any:
        return substitute(e, replace)

    return swap(expr), Facts(tuple(Condition(swap(c.expr), c.kind) for c in facts.conditions), facts.invertible,
                             facts.bijections, facts.universal)


_STAND_INS: dict[Any, Any] = {}
_FLAG_KEYS = ("real", "integer", "positive", "negative", "nonnegative", "nonpositive", "nonzero", "even", "odd")


@memoized
def _holds(expr: Any, kind: str, facts: Facts, depth: int) -> bool:
    if depth <= 0:
        return False
    expr = sympy.sympify(expr, strict=True)
    if expr.is_number:
        return _number_holds(expr, kind)
    if kind == "!=0" and _nonzero_by_factors(expr, facts, depth):
        return True
    if isinstance(expr, (sympy.Symbol, sympy.Indexed)):
        # A symbol's own flags (or a fact stating it) answer at once; comparing it with
        # every fact first (expanding each difference) is what takes time.
        sign = _sign(expr, facts, depth - 1)
        if sign is not None and _sign_gives(sign, kind):
            return True
    for fact in facts.conditions:
        if _follows(expr, kind, fact, facts, depth):
            return True
    sign = _sign(expr, facts, depth - 1)
    if sign is not None and _sign_gives(sign, kind):
        return True
    if kind == "!=0" and len(expr.free_symbols) < 6:
        # Factored, a sum may become a product whose factors are shown non-zero one by one.
        factored = sympy.factor(expr)
        if factored != expr and _nonzero_by_factors(factored, facts, depth):
            return True
    return False


def _nonzero_by_factors(expr: Any, facts: Facts, depth: int) -> bool:
    """A product is non-zero when every factor is; ``b^e`` with ``e > 0`` when ``b`` is; ``b^e``
    with ``e < 0`` always (where it is defined, which its own side condition ensures).

    Tried first for ``!= 0``: each factor is small, while the whole product compared with the
    facts, or expanded, is not.
    """
    if isinstance(expr, sympy.Mul):
        return all(_holds(factor, "!=0", facts, depth - 1) for factor in expr.args)
    if isinstance(expr, sympy.Pow) and not isinstance(expr, sympy.MatPow):
        if expr.exp.is_negative:
            return True
        if expr.exp.is_positive:
            return bool(_holds(expr.base, "!=0", facts, depth - 1))
    return False


def _sign_gives(sign: Any, kind: str) -> bool:
    return {">0": sign in ("+",), ">=0": sign in ("+", "0+"), "!=0": sign in ("+", "-", "!0")}[kind]


def _number_holds(expr: Any, kind: str) -> bool:
    if expr.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
        return False
    if expr.is_Rational:
        return bool({">0": expr > 0, ">=0": expr >= 0, "!=0": expr != 0}[kind])
    try:
        sign = certified_sign(expr)
    except UndecidedError:
        return False
    if sign is None:
        return kind == ">=0" and proved_zero(expr)
    return {">0": sign > 0, ">=0": sign >= 0, "!=0": sign != 0}[kind]


def _follows(expr: Any, kind: str, fact: Any, facts: Facts, depth: int) -> bool:
    """``expr kind`` from one stated fact: the same expression, or ``expr - fact`` signed."""
    if (fact.kind == ">0" and expr.has(sympy.Sum) and fact.expr.has(sympy.Sum) and depth > 2
            and _sums_under_roots(expr) == _sums_under_roots(fact.expr)):
        # expr = r * fact with r > 0 (sums in normal form, e.g. the spread of a x + b is a^2 times
        # the spread of x): then expr > 0 as well.
        try:
            member = range_membership(Facts())
            ratio = sympy.cancel(sum_rules(expr, member) / sum_rules(fact.expr, member))
        except Exception:  # a SymPy failure proves nothing
            ratio = None
        if ratio is not None and not ratio.has(sympy.Sum) and _sign(ratio, Facts(), depth - 2) == "+":
            return True
    difference = sympy.expand(expr - fact.expr)
    if fact.kind == "!=0":
        return kind == "!=0" and (difference == 0 or sympy.expand(expr + fact.expr) == 0)
    if difference == 0:
        return _sign_gives("+" if fact.kind == ">0" else "0+", kind)
    if kind == "!=0":
        kind = ">0"
    if not difference.free_symbols or depth > 2:
        sign = _sign(difference, Facts(invertible=facts.invertible), depth - 2)
        if sign is None:
            return False
        if fact.kind == ">0":
            return sign in ("+", "0+")
        return sign == "+" or (kind == ">=0" and sign == "0+")
    return False


def _sums_under_roots(expr: Any) -> bool:
    """True when a sum stands under a non-integer power (``sqrt`` of a sum): a quotient of two
    expressions that differ in this keeps a sum, so comparing them by quotient is futile."""
    return any(isinstance(node, sympy.Pow) and not node.exp.is_integer and node.base.has(sympy.Sum)
               for node in sympy.preorder_traversal(expr))


def _sign(expr: Any, facts: Facts, depth: int) -> Any:
    """'+' (> 0), '0+' (>= 0), '-' (< 0), '0-' (<= 0), '!0' (nonzero), or None (unknown)."""
    if depth <= 0:
        return None
    sign = _sign_by_rules(expr, facts, depth)
    if sign in (None, "0+", "0-", "!0") and not expr.is_number and _worth_asking_sympy(expr) and is_plain_number(expr):
        # SymPy's reasoning is exact when no irrational number can reach its numeric tests.
        better = _flag_sign(expr)
        if better is not None and (sign is None or better in ("+", "-")):
            return better
    return sign


def _worth_asking_sympy(expr: Any) -> bool:
    """Whether SymPy's own sign reasoning may add something to the rules: not for a sum of
    three or more terms (the rules have already signed it termwise; measured on every
    derivation and example, SymPy never decided one, at about 1.5 ms a question)."""
    return not (isinstance(expr, sympy.Add) and len(expr.args) > 2)


def _sign_by_rules(expr: Any, facts: Facts, depth: int) -> Any:
    if expr.is_number:
        for kind, sign in ((">0", "+"), (">=0", "0+")):
            if _number_holds(expr, kind):
                return sign
        if _number_holds(-expr, ">0"):
            return "-"
        if _number_holds(-expr, ">=0"):
            return "0-"
        return None
    known = _fact_sign(expr, facts)
    if known is not None:
        return known
    if isinstance(expr, (sympy.Symbol, sympy.Indexed)):
        sign = _flag_sign(expr)
        if sign not in ("+", "-") and facts.conditions and depth > 2:
            # A stated bound (x > 10) signs x too: x - (x - 10) = 10 > 0.
            if any(_follows(expr, ">0", fact, facts, depth - 1) for fact in facts.conditions):
                return "+"
            if any(_follows(-expr, ">0", fact, facts, depth - 1) for fact in facts.conditions):
                return "-"
        return sign
    if isinstance(expr, sympy.exp):
        return "+" if expr.args[0].is_extended_real and _real(expr.args[0]) else None
    if isinstance(expr, (sympy.cosh,)):
        return "+" if _real(expr.args[0]) else None
    if isinstance(expr, sympy.Abs):
        return "+" if _holds(expr.args[0], "!=0", facts, depth - 1) else "0+"
    if isinstance(expr, sympy.Add):
        return _add_sign(expr, facts, depth)
    if isinstance(expr, sympy.Mul):
        return _mul_sign([_sign(f, facts, depth - 1) for f in expr.args])
    if isinstance(expr, sympy.Pow):
        return _pow_sign(expr, facts, depth)
    if isinstance(expr, sympy.log):
        argument = expr.args[0]
        if _holds(argument - 1, ">0", facts, depth - 1):
            return "+"
        if _holds(argument - 1, ">=0", facts, depth - 1):
            return "0+"
        return None
    if isinstance(expr, sympy.Sum):
        return _sum_sign(expr, facts, depth)
    if isinstance(expr, (sympy.Max, sympy.Min)):
        signs = [_sign(a, facts, depth - 1) for a in expr.args]
        if isinstance(expr, sympy.Max) and any(s == "+" for s in signs):
            return "+"
        if isinstance(expr, sympy.Min) and all(s == "+" for s in signs):
            return "+"
        if all(s in ("+", "0+") for s in signs):
            return "0+"
        return None
    return None


def _fact_sign(expr: Any, facts: Facts) -> Any:
    """The sign a stated fact gives ``expr`` directly (the same expression or its negative)."""
    return _fact_sign_of(expr, facts) if facts.conditions else None


@memoized
def _fact_sign_of(expr: Any, facts: Facts) -> Any:
    symbols = expr.free_symbols
    for fact in facts.conditions:
        # Equal up to sign after expansion needs the fact's symbols among the expression's
        # (expansion only removes symbols): a cheap test that skips the expansion.
        if not _expanded_symbols(fact.expr) <= symbols:
            continue
        signs = {">0": ("+", "-"), ">=0": ("0+", "0-"), "!=0": ("!0", "!0")}[fact.kind]
        if expr == fact.expr or sympy.expand(expr - fact.expr) == 0:
            return signs[0]
        if sympy.expand(expr + fact.expr) == 0:
            return signs[1]
    return None


@memoized
def _expanded_symbols(expr: Any) -> frozenset[Any]:
    return frozenset(sympy.expand(expr).free_symbols)


def _real(expr: Any) -> bool:
    return expr.is_extended_real is True and expr.is_finite is not False


@memoized
def _flag_sign(expr: Any) -> Any:
    """The sign SymPy's assumptions give (remembered: a rebuilt expression has lost its own cache)."""
    try:
        return _flag_sign_of(expr)
    except Exception:  # SymPy's assumption system can fail (inconsistent cached facts): unknown
        return None


def _flag_sign_of(expr: Any) -> str | None:
    if expr.is_positive:
        return "+"
    if expr.is_negative:
        return "-"
    if expr.is_nonnegative:
        return "0+"
    if expr.is_nonpositive:
        return "0-"
    if expr.is_nonzero:
        return "!0"
    return None


def _negate(sign: Any) -> Any:
    return {"+": "-", "-": "+", "0+": "0-", "0-": "0+", "!0": "!0"}.get(sign)


def _mul_sign(signs: Any) -> Any:
    if any(s is None for s in signs):
        if all(s in ("!0", "+", "-") for s in signs if s is not None) and False:
            return None
        return None
    negative = sum(1 for s in signs if s in ("-", "0-")) % 2
    if any(s == "!0" for s in signs):
        return "!0" if all(s in ("+", "-", "!0") for s in signs) else None
    strict = all(s in ("+", "-") for s in signs)
    if negative:
        return "-" if strict else "0-"
    return "+" if strict else "0+"


def _add_sign(expr: Any, facts: Facts, depth: int) -> Any:
    signs = [_sign(t, facts, depth - 1) for t in expr.args]
    if all(s in ("+", "0+") for s in signs):
        return "+" if "+" in signs else "0+"
    if all(s in ("-", "0-") for s in signs):
        return "-" if "-" in signs else "0-"
    if len(expr.args) == 2:
        # One positive and one negative term: compare their logarithms (log is increasing).
        first, second = expr.args
        if signs[0] in ("-", "0-"):
            first, second = second, first
            signs = signs[::-1]
        if signs == ["+", "-"]:
            gap = sympy.expand(sympy.expand_log(sympy.log(first), force=False)
                               - sympy.expand_log(sympy.log(-second), force=False))
            if not gap.has(sympy.log) or gap.is_number:
                sign = _sign(gap, facts, depth - 1)
                if sign in ("+", "0+", "-", "0-"):
                    return sign
    lowered = _lower_bound(expr, signs, facts, depth)
    if lowered is not None:
        sign = _sign(lowered, facts, depth - 1)
        if sign in ("+", "0+"):
            return sign  # expr >= lowered
    return None


def _lower_bound(expr: Any, signs: Any, facts: Facts, depth: int) -> Any:
    """A smaller expression than the sum ``expr``, term by term, or None.

    Two exact inequalities, each applied to a term where it holds:

    * ``c e^u >= c (1 + u)`` for ``c > 0`` and real ``u`` (the tangent line of a convex
      function lies below it);
    * ``c (sum_{k=a}^{b} f(k)) - c f(t) >= 0`` for ``f >= 0`` on the range and an integer
      ``t`` with ``a <= t <= b`` (the sum minus one of its terms is the sum of the others).
    """
    terms = list(expr.args)
    changed = False
    for position, term in enumerate(terms):
        coefficient, rest = term.as_coeff_Mul()
        if isinstance(rest, sympy.exp) and coefficient > 0 and _real(rest.args[0]):
            terms[position] = coefficient * (1 + rest.args[0])
            changed = True
    for position, term in enumerate(terms):
        coefficient, total = term.as_coeff_Mul()
        if not isinstance(total, sympy.Sum) or coefficient <= 0 or len(total.limits) != 1:
            continue
        for other, candidate in enumerate(terms):
            if other != position and candidate != 0 and _is_term_of(total, -candidate / coefficient, facts, depth):
                terms[position], terms[other] = sympy.Integer(0), sympy.Integer(0)
                changed = True
                break
    return sympy.Add(*terms) if changed else None


def _is_term_of(total: Any, term: Any, facts: Facts, depth: int) -> bool:
    """``term`` is ``f(t)`` for the summand ``f`` of ``total``, an integer ``t`` in its range, and
    ``f >= 0`` on the range."""
    (variable, low, high), function = total.limits[0], total.function
    pieces: list[Any] = []
    for atom in sorted(term.atoms(sympy.Indexed, sympy.Symbol), key=sympy.default_sort_key):
        pieces.extend(atom.indices if isinstance(atom, sympy.Indexed) else (atom,))
    for target in dict.fromkeys(pieces):
        if not target.is_integer or variable in getattr(target, "free_symbols", ()):
            continue
        if sympy.expand(substitute(function, {variable: target}) - term) != 0:
            continue
        bounds = facts.within(variable, low, high)
        return bool(_holds(target - low, ">=0", facts, depth - 1) and _holds(high - target, ">=0", facts, depth - 1)
                    and _holds(function, ">=0", bounds, depth - 1))
    return False


def _pow_sign(expr: Any, facts: Facts, depth: int) -> Any:
    base, exponent = expr.args
    base_sign = _sign(base, facts, depth - 1)
    if base_sign == "+":
        return "+" if _real(exponent) else None
    if exponent.is_integer:
        if exponent.is_even and _real(base):
            return "+" if base_sign in ("+", "-", "!0") else "0+"
        if exponent.is_odd:
            return base_sign
        if base_sign == "0+" and exponent.is_nonnegative:
            return "0+"
    elif base_sign == "0+" and exponent.is_positive:
        return "0+"
    return None


def _sum_sign(expr: Any, facts: Facts, depth: int) -> Any:
    """The sign of a sum, from the sign of its terms over its (non-empty or empty) range.

    A multiple sum is a sum over its outermost index of the sum over the others; it is
    taken apart here (rebuilding ``Sum(Sum(f, inner), outer)`` would merge back into the
    same multiple sum).
    """
    if len(expr.limits) > 1:
        function = sympy.Sum(expr.function, *expr.limits[:-1])
    else:
        function = expr.function
    variable, low, high = expr.limits[-1]
    constant = [f for f in sympy.Mul.make_args(function) if variable not in f.free_symbols]
    if constant and _holds(high - low + 1, ">=0", facts, depth - 1):
        # A factor free of the index leaves the sum (valid for a non-reversed range).
        rest = sympy.Mul(*[f for f in sympy.Mul.make_args(function) if variable in f.free_symbols])
        inner = sympy.Sum(rest, (variable, low, high))
        return _mul_sign([_sign(sympy.Mul(*constant), facts, depth - 1), _sign(inner, facts, depth - 1)])
    bounds = facts.within(variable, low, high)
    if not _holds(high - low + 1, ">=0", facts, depth - 1):
        return None
    term = _sign(function, bounds, depth - 1)
    if term is None:
        term = "+" if _holds(function, ">0", bounds, depth - 1) else (
            "0+" if _holds(function, ">=0", bounds, depth - 1) else None)
    if term == "+":
        return "+" if _holds(high - low, ">=0", facts, depth - 1) else "0+"
    if term == "0+":
        return "0+"
    if term == "-":
        return "-" if _holds(high - low, ">=0", facts, depth - 1) else "0-"
    if term == "0-":
        return "0-"
    return None
