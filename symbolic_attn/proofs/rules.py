r"""The rule library: small, named, each applied with its side conditions.

A step names the rules it uses (``Step(rhs, why, rules=("sum.factor_out",))``); the checker
applies each named rule to the left side, the right side or both, proves the conditions
of every application, and then decides the rewritten step by the strategies of
:mod:`.prove`.  These rules and those strategies are the whole trusted base.

Sums (ranges ``k = a..b`` with ``b >= a - 1``: an empty sum is 0):

* ``sum.linearity``    -- ``sum (f + g) = sum f + sum g``;
* ``sum.factor_out``   -- ``sum c f = c sum f`` for ``c`` free of the index;
* ``sum.swap``         -- ``sum_k sum_j f = sum_j sum_k f`` (needs neither range to mention
  the other index);
* ``sum.split_first``  -- ``sum_{k=a}^{b} f = f(a) + sum_{k=a+1}^{b} f``  (needs ``b >= a``);
* ``sum.split_last``   -- ``sum_{k=a}^{b} f = sum_{k=a}^{b-1} f + f(b)``  (needs ``b >= a``);
* ``shift_index(m)``   -- ``sum_{k=a}^{b} f(k) = sum_{k=a+m}^{b+m} f(k - m)``;
* ``rename_index(k, j)`` -- ``sum_k f(k) = sum_j f(j)`` (needs ``j`` not free in ``f``);
* ``reindex_by(sigma)`` -- ``sum_{k=a}^{b} f(k) = sum_{k=a}^{b} f(sigma(k))`` (needs ``sigma``
  stated as a bijection of ``a..b``: :class:`Bijection`);
* ``split_blocks(w, g, r)`` -- ``sum_{c=1}^{h w} f(c) = sum_{g=1}^{h} sum_{r=1}^{w} f((g-1) w + r)``
  (needs ``w`` a positive and ``h`` a nonnegative integer);
* ``sum.delta``        -- ``sum_{k=a}^{b} [k = t] f(k) = f(t)`` (needs ``a <= t <= b``);
* ``sum.ge_term``      -- ``sum_{k=a}^{b} f(k) >= f(t)`` (needs ``f >= 0`` on the range and
  ``a <= t <= b``);
* ``sum.positive``     -- ``sum_{k=a}^{b} f(k) > 0`` (needs ``f > 0`` on the range and ``b >= a``).

Matrices:

* ``matrix.transpose_product`` -- ``(A B)^T = B^T A^T``;
* ``matrix.trace_cyclic``      -- ``tr(A B) = tr(B A)`` (products rotated to one form);
* ``matrix.expand``            -- ``(A + B) C = A C + B C`` keeping factor order, ``X^k`` as a
  product;
* ``matrix.entries``           -- a matrix expression of integer shape written entry by entry;
* ``matrix.scalar``            -- a ``1 x 1`` matrix read as its entry (refused for any other shape).

Trigonometry: ``trig.pythagoras`` -- ``sin^2 x = 1 - cos^2 x``.  Deltas: ``delta.substitute`` --
``[a = b] f(b) = [a = b] f(a)``.

>>> import sympy
>>> k, n = sympy.symbols("k n", integer=True, positive=True)
>>> f = sympy.IndexedBase("f")
>>> RULES["sum.split_last"].rewrite(sympy.Sum(f[k], (k, 1, n)))[0]
f[n] + Sum(f[k], (k, 1, n - 1))
"""

import itertools
from dataclasses import dataclass
from collections.abc import Callable, Iterable
from typing import Any

import sympy

from symbolic_attn.errors import ProofError, SideConditionError
from symbolic_attn.proofs.binders import bind_fresh, original_of, substitute
from symbolic_attn.proofs.conditions import Bounded, Condition, Facts, prove_condition, proves_integer

__all__ = ["Rule", "Bijection", "RULES", "rule", "shift_index", "rename_index", "reindex_by", "split_blocks",
           "apply_rules",
           "distribute", "prove_ge_term", "rule_names"]


@dataclass(frozen=True)
class Rule:
    """A named rewrite: ``rewrite(expr) -> (new_expr, conditions)``; ``statement`` in LaTeX."""

    name: str
    statement: str
    rewrite: Callable[..., Any]

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Bijection:
    """The stated fact ``sigma`` is a bijection of ``low..high`` (for :func:`reindex_by`)."""

    function: object
    low: object
    high: object


# --------------------------------------------------------------------------- helpers


def _sums(expr: Any) -> bool:
    return isinstance(expr, sympy.Sum)


def _rewrite_sums(transform: Any) -> Any:
    """A rewrite applying ``transform(sum) -> (new, conditions)`` to every Sum (innermost index).

    ``accept(conditions)`` decides, site by site, whether the conditions of an application are
    proved; a site whose conditions are not proved is left unchanged.  The conditions of a
    site inside other sums hold under their ranges (``1 <= i <= n`` for the outer index ``i``),
    which they carry: an outer index's declared flags are not what it ranges over.
    """

    def rewrite(expr: Any, accept: Any = lambda needed: True) -> tuple[Any, ...]:
        def walk(node: Any, ranges: Any) -> Any:
            if not isinstance(node, sympy.Basic) or not node.args or not node.has(sympy.Sum):
                return node
            if not isinstance(node, sympy.Sum):
                return node.func(*[walk(arg, ranges) for arg in node.args])
            outer = [tuple(limit) for limit in reversed(node.limits)]  # outermost first
            inside = ranges + tuple(limit for limit in outer[:-1] if len(limit) == 3)
            function = walk(node.function, inside + ((outer[-1],) if len(outer[-1]) == 3 else ()))
            # A multiple sum: the rule acts on its innermost index.
            site = sympy.Sum(function, node.limits[0])
            new, needed = transform(site)
            if new == site or not accept([_under(c, inside) for c in needed]):
                new = site
            return sympy.Sum(new, *node.limits[1:]) if len(node.limits) > 1 else new

        new = walk(expr, ()) if isinstance(expr, sympy.Basic) else expr
        return new, []

    return rewrite


def _under(condition: Any, ranges: Any) -> Any:
    """``condition`` under the ranges of the sums around its site."""
    if not ranges or condition.kind == "bijection":
        return condition
    return Bounded(condition.expr, condition.kind, condition.why, condition.unless,
                   tuple(getattr(condition, "ranges", ())) + tuple(ranges))


def _linearity(total: Any) -> tuple[Any, ...]:
    (variable, low, high), function = total.limits[0], sympy.expand(total.function)
    if not isinstance(function, sympy.Add):
        return total, []
    return sympy.Add(*[sympy.Sum(term, (variable, low, high)) for term in function.args]), []


def _factor_out(total: Any) -> tuple[Any, ...]:
    (variable, low, high), function = total.limits[0], total.function
    constant = [f for f in sympy.Mul.make_args(function) if not f.has(variable)]
    if not constant:
        return total, []
    rest = [f for f in sympy.Mul.make_args(function) if f.has(variable)]
    return sympy.Mul(*constant) * sympy.Sum(sympy.Mul(*rest), (variable, low, high)), []


def _swap(expr: Any) -> tuple[Any, ...]:
    """sum_k sum_j f = sum_j sum_k f for every double sum (SymPy writes a nested sum as one
    Sum with its limits innermost first): the two innermost indices are exchanged when
    neither range mentions the other index (finite sums over a rectangle; with SymPy's
    signed convention for reversed ranges too)."""
    if not isinstance(expr, sympy.Basic):
        return expr, []

    def independent(total: Any) -> bool:
        if not isinstance(total, sympy.Sum) or len(total.limits) < 2:
            return False
        first, second = total.limits[0], total.limits[1]
        if len(first) != 3 or len(second) != 3:
            return False
        return not (first[1].has(second[0]) or first[2].has(second[0])
                    or second[1].has(first[0]) or second[2].has(first[0]))

    def swapped(total: Any) -> Any:
        limits = list(total.limits)
        limits[0], limits[1] = limits[1], limits[0]
        return sympy.Sum(total.function, *limits)

    return expr.replace(independent, swapped), []


def _split_first(total: Any) -> tuple[Any, ...]:
    (variable, low, high), function = total.limits[0], total.function
    return (substitute(function, {variable: low}) + sympy.Sum(function, (variable, low + 1, high)),
            [Condition(high - low, ">=0", f"split off the first term: {variable} = {low}..{high} is not empty")])


def _split_last(total: Any) -> tuple[Any, ...]:
    (variable, low, high), function = total.limits[0], total.function
    return (sympy.Sum(function, (variable, low, high - 1)) + substitute(function, {variable: high}),
            [Condition(high - low, ">=0", f"split off the last term: {variable} = {low}..{high} is not empty")])


def shift_index(m: Any) -> Rule:
    """``sum_{k=a}^{b} f(k) = sum_{k=a+m}^{b+m} f(k - m)`` (``m`` an integer free of ``k``)."""
    m = sympy.sympify(m, strict=True)

    def shift(total: Any) -> tuple[Any, ...]:
        (variable, low, high), function = total.limits[0], total.function
        if variable in m.free_symbols or original_of(variable) in m.free_symbols:
            raise SideConditionError(f"rule sum.shift({m}): the shift may not mention the index {original_of(variable)} "
                                     "it shifts")
        return (sympy.Sum(substitute(function, {variable: variable - m}), (variable, low + m, high + m)),
                [Condition(m, "integer", f"the shift {m} is an integer (an index runs over the integers)")])

    return Rule(f"sum.shift({m})", r"\sum_{k=a}^{b} f(k) = \sum_{k=a+m}^{b+m} f(k-m)", _rewrite_sums(shift))


def rename_index(old: Any, new: Any) -> Rule:
    """``sum_k f(k) = sum_j f(j)``; refused when ``j`` already occurs in ``f``."""

    def rename(total: Any) -> tuple[Any, ...]:
        (variable, low, high), function = total.limits[0], total.function
        if variable != old and original_of(variable) != old:
            return total, []
        if new in function.free_symbols or new in low.free_symbols | high.free_symbols:
            raise SideConditionError(f"rule sum.rename: the new index {new} already occurs in {total}")
        # The author's new name, with none of its flags inside the sum: a renamed sum is the
        # same sum (alpha-equivalence), which the checker compares after binding both.
        return sympy.Sum(substitute(function, {variable: new}), (new, low, high)), []

    return Rule(f"sum.rename({old}->{new})", r"\sum_k f(k) = \sum_j f(j)", _rewrite_sums(rename))


def reindex_by(sigma: Any) -> Rule:
    """``sum_{k=a}^{b} f(k) = sum_{k=a}^{b} f(sigma(k))`` for a stated bijection of ``a..b``."""

    def reindex(total: Any) -> tuple[Any, ...]:
        (variable, low, high), function = total.limits[0], total.function
        return (sympy.Sum(substitute(function, {variable: sigma(variable)}), (variable, low, high)),
                [Condition((sigma, low, high), "bijection", f"{sigma} is a bijection of {low}..{high}")])

    return Rule(f"sum.reindex({sigma})", r"\sum_{k=a}^{b} f(k) = \sum_{k=a}^{b} f(\sigma(k))", _rewrite_sums(reindex))


def split_blocks(width: Any, block: Any, position: int) -> Rule:
    """``sum_{c=1}^{h w} f(c) = sum_{g=1}^{h} sum_{r=1}^{w} f((g-1) w + r)``: the columns in ``h``
    blocks of ``width`` (needs ``width`` a positive integer and ``h`` a nonnegative integer)."""
    width = sympy.sympify(width, strict=True)

    def split(total: Any) -> tuple[Any, ...]:
        (variable, low, high), function = total.limits[0], total.function
        count = sympy.cancel(high / width)
        if low != 1 or not (width.is_integer and width.is_positive and count.is_integer and count.is_nonnegative):
            return total, []
        if block == position or not all(isinstance(name, sympy.Symbol) for name in (block, position)):
            raise SideConditionError(f"rule sum.blocks: the new indices {block} and {position} must be two "
                                     "different symbols")
        taken = total.free_symbols | width.free_symbols
        for name in (block, position):
            if name in taken:
                raise SideConditionError(f"rule sum.blocks: the new index {name} already occurs in "
                                         f"{sympy.sstr(total)[:120]} (it would be captured)")
        inner = sympy.Sum(substitute(function, {variable: (block - 1) * width + position}), (position, 1, width))
        return sympy.Sum(inner, (block, 1, count)), []

    return Rule(f"sum.blocks({width})", r"\sum_{c=1}^{hw} f(c) = \sum_{g=1}^{h} \sum_{r=1}^{w} f((g-1)w + r)",
                _rewrite_sums(split))


def _delta(total: Any) -> tuple[Any, ...]:
    """Each term of the summand with a delta [k = t] (t free of k) becomes its value at k = t."""
    (variable, low, high), function = total.limits[0], total.function
    if not function.has(sympy.KroneckerDelta):
        return total, []
    result, conditions, changed = sympy.Integer(0), [], False
    for term in sympy.Add.make_args(sympy.expand(function)):
        target = _delta_target(term, variable)
        if target is None:
            result += sympy.Sum(term, (variable, low, high))
            continue
        delta, value = target
        rest = sympy.Mul(*[f for f in sympy.Mul.make_args(term) if f is not delta])
        result += substitute(rest, {variable: value})
        # [k = t] is 0 for every integer k when t is not an integer: no term would survive.
        conditions += [Condition(value, "integer", f"the target {value} is an integer"),Condition(value - low, ">=0", f"{value} lies in {low}..{high}"),
                       Condition(high - value, ">=0", f"{value} lies in {low}..{high}")]
        changed = True
    return (result, conditions) if changed else (total, [])


def _delta_target(term: Any, variable: Any) -> tuple[Any, ...] | None:
    for factor in sympy.Mul.make_args(term):
        if isinstance(factor, sympy.KroneckerDelta) and variable in factor.args:
            target = factor.args[1] if factor.args[0] == variable else factor.args[0]
            if not target.has(variable):
                return factor, target
    return None


def _transpose_product(expr: Any) -> tuple[Any, ...]:
    def reverse(e: Any) -> Any:
        return sympy.MatMul(*[sympy.Transpose(f) for f in reversed(e.args[0].args)]).doit(deep=False)

    return expr.replace(lambda e: isinstance(e, sympy.Transpose) and isinstance(e.args[0], sympy.MatMul), reverse), []


def _trace_cyclic(expr: Any) -> tuple[Any, ...]:
    def rotate(e: Any) -> Any:
        factors = e.args[0].args
        rotations = [sympy.MatMul(*(factors[r:] + factors[:r])) for r in range(len(factors))]
        return sympy.Trace(min(rotations, key=sympy.sstr))

    return expr.replace(lambda e: isinstance(e, sympy.Trace) and isinstance(e.args[0], sympy.MatMul), rotate), []


def distribute(expr: Any) -> Any:
    """Products of matrix sums distributed, factor order kept; ``X**k`` (integer k >= 1) as a product."""
    if not isinstance(expr, sympy.Basic) or not isinstance(expr, sympy.MatrixExpr):
        return expr
    if isinstance(expr, sympy.MatPow) and expr.args[1].is_Integer and expr.args[1] >= 1:
        return distribute(sympy.MatMul(*([expr.args[0]] * int(expr.args[1]))))
    if isinstance(expr, sympy.MatAdd):
        return sympy.MatAdd(*[distribute(a) for a in expr.args]).doit(deep=False)
    if isinstance(expr, sympy.MatMul):
        factors = [distribute(f) for f in expr.args]
        choices = [sympy.MatAdd.make_args(f) if isinstance(f, sympy.MatAdd) else (f,) for f in factors]
        terms = [sympy.MatMul(*combo).doit(deep=False) for combo in itertools.product(*choices)]
        return sympy.MatAdd(*terms).doit(deep=False) if len(terms) > 1 else terms[0]
    return expr


def _expand_matrix(expr: Any) -> tuple[Any, ...]:
    return distribute(expr), []


def _integer_shape(expr: Any) -> bool:
    return all(isinstance(size, (int, sympy.Integer)) for size in expr.shape)


def _entries(expr: Any) -> tuple[Any, ...]:
    if isinstance(expr, sympy.MatrixExpr) and _integer_shape(expr):
        return sympy.ImmutableMatrix(expr.as_explicit()), []
    if not isinstance(expr, sympy.Basic):
        return expr, []

    def diagonal_sum(trace: Any) -> Any:
        matrix = sympy.ImmutableMatrix(trace.args[0].as_explicit())
        return sympy.Add(*[matrix[i, i] for i in range(min(matrix.shape))])

    return expr.replace(lambda e: isinstance(e, sympy.Trace) and _integer_shape(e.args[0]), diagonal_sum), []


def _scalar(expr: Any) -> tuple[Any, ...]:
    if isinstance(expr, (sympy.MatrixBase, sympy.MatrixExpr)):
        if tuple(expr.shape) != (1, 1):
            raise SideConditionError(f"rule matrix.scalar: only a 1x1 matrix is a scalar, not shape {tuple(expr.shape)}")
        return (expr[0, 0] if isinstance(expr, sympy.MatrixBase) else sympy.ImmutableMatrix(expr.as_explicit())[0, 0]), []
    return expr, []


def _delta_substitute(expr: Any) -> tuple[Any, ...]:
    """``[a = b] f(b) = [a = b] f(a)``: inside a product with a Kronecker delta, the second index
    is replaced by the first (sums are expanded first so that every delta meets its factors)."""
    if not isinstance(expr, sympy.Basic) or not expr.has(sympy.KroneckerDelta):
        return expr, []

    def replace_second(product: Any) -> Any:
        deltas = [f for f in product.args if isinstance(f, sympy.KroneckerDelta)]
        if not deltas or not isinstance(deltas[0].args[1], sympy.Symbol):
            return product
        first, second = deltas[0].args
        others = [substitute(f, {second: first}) if f is not deltas[0] else f for f in product.args]
        return sympy.Mul(*others)

    return sympy.expand(expr).replace(lambda e: isinstance(e, sympy.Mul), replace_second), []


def _pythagoras(expr: Any) -> tuple[Any, ...]:
    """sin(x)**2 -> 1 - cos(x)**2 (every x): an exact identity."""
    if not isinstance(expr, sympy.Basic):
        return expr, []
    return expr.replace(lambda e: isinstance(e, sympy.Pow) and isinstance(e.base, sympy.sin) and e.exp == 2,
                        lambda e: 1 - sympy.cos(e.base.args[0]) ** 2), []


def _whole(transform: Any) -> Any:
    return lambda expr, accept=None: transform(expr)


RULES = {
    "sum.linearity": Rule("sum.linearity", r"\sum (f + g) = \sum f + \sum g", _rewrite_sums(_linearity)),
    "sum.factor_out": Rule("sum.factor_out", r"\sum_k c\, f(k) = c \sum_k f(k)", _rewrite_sums(_factor_out)),
    "sum.swap": Rule("sum.swap", r"\sum_{k=a}^{b} \sum_{j=c}^{d} f = \sum_{j=c}^{d} \sum_{k=a}^{b} f",
                     _whole(_swap)),
    "sum.split_first": Rule("sum.split_first", r"\sum_{k=a}^{b} f(k) = f(a) + \sum_{k=a+1}^{b} f(k)",
                            _rewrite_sums(_split_first)),
    "sum.split_last": Rule("sum.split_last", r"\sum_{k=a}^{b} f(k) = \sum_{k=a}^{b-1} f(k) + f(b)",
                           _rewrite_sums(_split_last)),
    "sum.delta": Rule("sum.delta", r"\sum_{k=a}^{b} \delta_{k t} f(k) = f(t)", _rewrite_sums(_delta)),
    "matrix.transpose_product": Rule("matrix.transpose_product", r"(AB)^{T} = B^{T} A^{T}", _whole(_transpose_product)),
    "matrix.trace_cyclic": Rule("matrix.trace_cyclic", r"\operatorname{tr}(AB) = \operatorname{tr}(BA)",
                                _whole(_trace_cyclic)),
    "matrix.expand": Rule("matrix.expand", r"(A + B) C = AC + BC", _whole(_expand_matrix)),
    "matrix.entries": Rule("matrix.entries", r"M = (M_{ij})", _whole(_entries)),
    "matrix.scalar": Rule("matrix.scalar", r"[a] = a", _whole(_scalar)),
    "delta.substitute": Rule("delta.substitute", r"\delta_{ab} f(b) = \delta_{ab} f(a)", _whole(_delta_substitute)),
    "trig.pythagoras": Rule("trig.pythagoras", r"\sin^2 x = 1 - \cos^2 x", _whole(_pythagoras)),
}
#: Rules that prove an inequality directly (used with relations >=, >, <=, <).
INEQUALITY_RULES = {
    "sum.ge_term": r"\sum_{k=a}^{b} f(k) \ge f(t) \text{ if } f \ge 0,\ a \le t \le b",
    "sum.positive": r"\sum_{k=a}^{b} f(k) > 0 \text{ if } f > 0,\ b \ge a",
}


def rule(name: "str | Rule") -> Rule:
    """The rule called ``name`` (a :class:`Rule` is returned as it is)."""
    if isinstance(name, Rule):
        return name
    if name in INEQUALITY_RULES:
        return Rule(name, INEQUALITY_RULES[name], lambda expr: (expr, []))
    try:
        return RULES[name]
    except KeyError:
        raise ProofError(f"unknown rule {name!r}; known: {', '.join(sorted(RULES) + sorted(INEQUALITY_RULES))}") from None


def rule_names(rules: "Iterable[str | Rule]") -> tuple[str, ...]:
    """The names of ``rules`` (rule objects or names)."""
    return tuple(name if isinstance(name, str) else name.name for name in rules)


def _check(conditions: Iterable[Condition], facts: Facts, name: str) -> None:
    for condition in conditions:
        if condition.kind == "bijection":
            if condition.expr not in facts_bijections(facts):
                raise SideConditionError(f"rule {name}: needs {condition.why}, which is not stated")
            continue
        if not prove_condition(condition, facts):
            raise SideConditionError(f"rule {name}: needs {condition} ({condition.why}), not proved")


def facts_bijections(facts: Facts) -> set[Any]:
    return set(facts.bijections)


def _apply(expr: Any, chosen: Rule, facts: Facts, unmet: list[SideConditionError]) -> Any:
    def accept(conditions: Iterable[Condition]) -> bool:
        try:
            _check(conditions, facts, chosen.name)
        except SideConditionError as error:
            unmet.append(error)
            return False
        return True

    new, conditions = chosen.rewrite(expr, accept)
    _check(conditions, facts, chosen.name)
    return new


def apply_rules(lhs: Any, rhs: Any, rules: "Iterable[str | Rule]", facts: Facts
                ) -> tuple[list[tuple[Any, Any]], tuple[str, ...], tuple[SideConditionError, ...]]:
    """The candidate rewritten steps: each rule applied to both sides, the left or the right.

    Returns ``(candidates, names, unmet)`` (``unmet``: the SideConditionErrors of sites left
    unchanged, reported if no candidate is proved); the checker accepts the step when it proves one
    candidate.  A rule that changes neither side is an error (a step must not name a rule
    it does not use); every application's side conditions are proved here.
    """
    candidates: list[tuple[Any, Any]] = [(lhs, rhs)]
    names: list[str] = []
    unmet: list[SideConditionError] = []
    for name in rules:
        chosen = rule(name)
        names.append(chosen.name)
        if chosen.name in INEQUALITY_RULES:
            continue
        following, changed = [], False
        for left, right in candidates:
            new_left, new_right = _apply(left, chosen, facts, unmet), _apply(right, chosen, facts, unmet)
            changed = changed or new_left != left or new_right != right
            for pair in ((new_left, new_right), (new_left, right), (left, new_right)):
                if pair not in following:
                    following.append(pair)
        if not changed:
            if unmet:
                raise unmet[0]
            raise ProofError(f"rule {chosen.name} does not apply to this step")
        candidates = following[:27]
    return candidates, tuple(names), tuple(unmet)


def prove_ge_term(total: Any, term: Any, facts: Facts) -> None:
    """``total >= term`` by ``sum.ge_term``: a sum of nonnegative terms is at least each term."""
    total, term = bind_fresh(total), bind_fresh(term)
    if not isinstance(total, sympy.Sum) or len(total.limits) != 1:
        raise ProofError(f"rule sum.ge_term: {total} is not a sum over one index")
    (variable, low, high), function = total.limits[0], total.function
    candidates = [t for t in _index_candidates(function, term, variable)]
    if not candidates:
        raise ProofError(f"rule sum.ge_term: {term} is not a term of {total}")
    target = candidates[0]
    if not proves_integer(target, facts):
        raise SideConditionError(f"rule sum.ge_term: the term's index {target} is not declared an integer")
    range_facts = facts.within(variable, low, high)
    if not prove_condition(Condition(function, ">=0"), range_facts):
        raise SideConditionError(f"rule sum.ge_term: needs every term {function} >= 0, not proved")
    for condition in (Condition(target - low, ">=0"), Condition(high - target, ">=0")):
        if not prove_condition(condition, facts):
            raise SideConditionError(f"rule sum.ge_term: needs {condition} (the term lies in the range), not proved")


def _index_candidates(function: Any, term: Any, variable: Any) -> Any:
    """Values t with function(t) == term (tried: the indices appearing in ``term``)."""
    found = []
    for atom in sorted(term.atoms(sympy.Indexed, sympy.Symbol), key=sympy.sstr):
        pieces = atom.indices if isinstance(atom, sympy.Indexed) else (atom,)
        for piece in pieces:
            if substitute(function, {variable: piece}) == term and piece not in found:
                found.append(piece)
    return found
