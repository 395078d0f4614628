r"""Honest refutation: numbers may refute a step, never prove one.

A counterexample point gives every free symbol a value that satisfies its declared flags
(sign, integer, parity, ...) and every stated condition; sums are written out with the
empty-sum convention; the residual must be defined there (every side condition holds) and
certified non-zero by an arb enclosure.  Otherwise the answer is "not shown to vanish".
The number of attempts is bounded; any number of symbols gets values (no pool to exhaust).

>>> import sympy
>>> x = sympy.Symbol("x", negative=True)
>>> _sample(x, 0, 0)
-1/2
"""

from typing import Any, NoReturn


import sympy

from symbolic_attn.errors import ProofError, RefutedError, UndecidedError
from symbolic_attn.exact.certified import certified_sign, decimal_string
from symbolic_attn.proofs.conditions import Facts, reject_inexact, side_conditions
from symbolic_attn.proofs.binders import substitute
from symbolic_attn.proofs.messages import plain_text, short_line
from symbolic_attn.proofs.notation import unfold
from symbolic_attn.proofs.sums import expand_sums

__all__ = ["refute_or_undecided", "refute_sign", "certified_value", "safe_sign", "symbol_free", "differs_at"]

_ATTEMPTS = 4


def symbol_free(expr: Any) -> bool:
    """``expr`` is a number as written: no free symbol and no entry of a sequence (``s[1]``)."""
    return isinstance(expr, sympy.Basic) and not expr.free_symbols and not expr.atoms(sympy.Indexed)


def safe_sign(expr: Any) -> int | None:
    """The certified sign of a number (-1, 0 or 1), or None when it cannot be certified."""
    if expr.is_Rational:
        return (1 if expr.p > 0 else -1) if expr.p else 0
    try:
        return certified_sign(expr)
    except (UndecidedError, TypeError, ValueError, ZeroDivisionError):
        return None


def differs_at(lhs: Any, rhs: Any, point: dict[str, Any]) -> bool:
    """Whether ``lhs - rhs`` is certified non-zero at ``point``: the letters' exact values by
    name, a sequence's entries as ``x[2]`` (what :class:`~symbolic_attn.errors.RefutedError`
    gives).  Two expressions that differ there are not equal, so a candidate can be set aside
    without a proof attempt; False whenever it cannot be said (a letter or an entry without
    a value, a sum whose length is not a number, a value not defined there, a matrix).
    Numbers refute here, never prove.

    >>> import sympy
    >>> x, c = sympy.IndexedBase("x"), sympy.Symbol("c", real=True)
    >>> differs_at(sympy.exp(x[1] + c), sympy.exp(x[1]) + sympy.exp(c), {"x[1]": 0, "c": 1})
    True
    >>> differs_at(sympy.exp(x[1] + c), sympy.exp(x[1]) * sympy.exp(c), {"x[1]": 0, "c": 1})
    False
    >>> differs_at(c * x[2], 0, {"c": 1})   # x[2] has no value: nothing is said
    False
    """
    try:
        expr = unfold(lhs) - unfold(rhs)
        if not isinstance(expr, sympy.Expr):
            return False
        values = {symbol: sympy.sympify(point[symbol.name]) for symbol in expr.free_symbols
                  if type(symbol) is sympy.Symbol and symbol.name in point}
        if not all(_admissible(symbol, value) for symbol, value in values.items()):
            return False  # a value the symbol's own flags exclude: not a point of it
        expr = expand_sums(substitute(expr, values))
        entries = {entry: sympy.sympify(point[str(entry)]) for entry in expr.atoms(sympy.Indexed) if str(entry) in point}
        expr = expr.xreplace(entries)
        if not symbol_free(expr) or expr.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
            return False
        reject_inexact(expr)
        sign = safe_sign(expr)
    except Exception:  # a value that cannot be computed says nothing
        return False
    return sign is not None and sign != 0


def _admissible(symbol: Any, value: Any) -> bool:
    """Whether ``value`` has every flag declared on ``symbol`` (integer, positive, ...)."""
    flags = ("integer", "real", "positive", "negative", "nonnegative", "nonpositive", "nonzero", "even", "odd")
    return all(getattr(value, f"is_{flag}") is True for flag in flags if getattr(symbol, f"is_{flag}") is True)


def refute_or_undecided(residual: Any, facts: Facts) -> NoReturn:
    """Raise ProofError if a valid point certifies ``residual != 0``, else UndecidedError."""
    _refute(residual, facts, lambda sign: sign != 0, "not shown to vanish")


def refute_sign(expr: Any, facts: Facts, kind: str) -> NoReturn:
    """Raise :class:`RefutedError` if a valid point certifies that ``expr`` is not ``> 0``
    (``kind`` ``">0"``: its value there is negative or exactly 0) or not ``>= 0`` (``">=0"``:
    negative there); else UndecidedError.  The same points, flags and stated facts as
    :func:`refute_or_undecided`: numbers refute a sign, never prove one.

    >>> import sympy
    >>> from symbolic_attn.proofs.conditions import Facts
    >>> t = sympy.Symbol("t", real=True)
    >>> try:
    ...     refute_sign(t**2 - t, Facts(), ">0")
    ... except RefutedError as error:
    ...     print(error.point)
    {'t': 1/2}
    """
    if kind not in (">0", ">=0"):
        raise ValueError(f"refute_sign: kind must be '>0' or '>=0', got {kind!r}")
    violates = (lambda sign: sign <= 0) if kind == ">0" else (lambda sign: sign < 0)
    _refute(expr, facts, violates, f"not shown to be {kind[0]} {kind[1:]}")


def _refute(residual: Any, facts: Facts, violates: Any, undecided: str) -> NoReturn:
    """A valid point where the certified sign of ``residual`` ``violates`` what was claimed
    raises RefutedError (the point, entries included); none found raises UndecidedError."""
    shown = short_line(plain_text(residual))
    # Entries of matrix symbols (A[0, 1]) are independent unknowns: give them values as well.
    elements = sorted(residual.atoms(sympy.matrices.expressions.matexpr.MatrixElement), key=str)
    if elements and all(e.args[1].is_Integer and e.args[2].is_Integer for e in elements):
        residual = residual.xreplace({e: sympy.Dummy(f"{e.args[0]}[{e.args[1]},{e.args[2]}]") for e in elements})
    for attempt in range(_ATTEMPTS):
        point = _refutation_point(residual, facts, attempt)
        if point is None:
            break
        found = _value_at(residual, point, facts, attempt)
        if found is None:
            continue
        value, entries = found
        sign = safe_sign(value) if value != 0 else 0
        if sign is not None and violates(sign):
            where = ", ".join(f"{name}={val}" for name, val in sorted((getattr(k, "name", str(k)), v)
                                                                     for k, v in point.items()))
            # The message names the point's symbols; the error carries the entries too, so
            # that a reader can be given every value the difference was computed at.
            every = {getattr(k, "name", str(k)): v for k, v in point.items()}
            every.update({str(k): v for k, v in entries.items()})
            difference = certified_value(value)
            raise RefutedError(f"refuted: residual {shown} is {difference or 0} at {where}", every, difference or "0")
    raise UndecidedError(f"residual {shown} {undecided}")


def _sample(symbol: Any, position: int, attempt: int) -> Any:
    """A value that satisfies every flag of ``symbol`` (position and attempt vary it)."""
    j = position + 3 * attempt
    if symbol.is_integer:
        if symbol.is_zero:
            return sympy.Integer(0)
        magnitude = 3 + j
        if symbol.is_even:
            magnitude += magnitude % 2
        elif symbol.is_odd:
            magnitude += 1 - magnitude % 2
        negative = symbol.is_negative or (symbol.is_nonpositive and not symbol.is_nonnegative)
        if not negative and not symbol.is_nonnegative and j % 2:
            negative = True
        return -sympy.Integer(magnitude) if negative else sympy.Integer(magnitude)
    if symbol.is_zero:
        return sympy.Integer(0)
    value = sympy.Rational(j + 1, j + 2) if j % 3 == 0 else sympy.Rational(2 * j + 3, j + 2)
    if symbol.is_negative or (symbol.is_nonpositive and not symbol.is_nonnegative):
        return -value
    if symbol.is_nonnegative:
        return value
    return value if j % 2 == 0 else -value


def _refutation_point(residual: Any, facts: Facts, attempt: int) -> dict[Any, Any] | None:
    if residual.atoms(sympy.MatrixSymbol) or residual.atoms(sympy.core.function.AppliedUndef):
        return None
    if facts.universal:
        # A ForAll fact constrains every entry of a sequence over a range: the points below
        # do not respect it, and a point that breaks a stated fact refutes nothing.
        return None
    bound = {indexed.base.label for indexed in residual.atoms(sympy.Indexed)}
    free = sorted(residual.free_symbols - bound, key=str)
    for fact in facts.conditions:
        free += sorted((fact.expr.free_symbols - set(free)) - bound, key=str)
    in_index = set()
    for indexed in residual.atoms(sympy.Indexed):
        for index in indexed.indices:
            in_index.update(index.free_symbols)
    # Integers only the stated facts mention (an index i with 1 <= i <= n, while the residual
    # is about n) are index-like too: small values, so that a bound such as i <= n holds.
    only_in_facts = {s for s in free if s not in residual.free_symbols and getattr(s, "is_integer", False)}
    indices = [symbol for symbol in free if isinstance(symbol, sympy.Idx) or symbol in in_index or symbol in only_in_facts]
    # An upper bound (n in i <= n, stated as n - i >= 0) gets the larger values: the symbols
    # that facts bound from above come first, whatever order the facts name them in.
    indices.sort(key=lambda symbol: sum(1 for fact in facts.conditions
                                        if _coefficient(fact.expr, symbol) > 0))
    point = {}
    for position, symbol in enumerate(indices, 1):
        point[symbol] = sympy.Integer(position + attempt)
    length = max(3, len(indices) + 1 + attempt)
    for position, symbol in enumerate(free):
        if symbol in point or not isinstance(symbol, sympy.Symbol):
            continue
        if symbol.is_integer and symbol.is_positive and not symbol.is_even and not symbol.is_odd:
            point[symbol] = sympy.Integer(length + position)
        else:
            point[symbol] = _sample(symbol, position, attempt)
    for fact in facts.conditions:
        value = expand_sums(fact.expr.subs(point, simultaneous=True))
        if value.free_symbols or not _holds_exactly(value, fact.kind):
            return _refutation_point_retry(residual, facts, attempt)
    return point


def _coefficient(expr: Any, symbol: Any) -> int:
    """The sign of ``symbol``'s coefficient in a linear fact (0 when it is not linear in it)."""
    try:
        coefficient = sympy.expand(expr).coeff(symbol)
    except (TypeError, ValueError):
        return 0
    return 1 if coefficient.is_positive else -1 if coefficient.is_negative else 0


def _refutation_point_retry(residual: Any, facts: Facts, attempt: int) -> dict[Any, Any] | None:
    # Stated facts rule this point out; the next attempt moves every value (bounded).
    return None if attempt + 1 >= _ATTEMPTS else _refutation_point(residual, facts, attempt + 1)


def _holds_exactly(value: Any, kind: str) -> bool:
    sign = safe_sign(value) if value.is_number else None
    if sign is None:
        return False
    return bool({">0": sign > 0, ">=0": sign >= 0, "!=0": sign != 0}[kind])


def _value_at(residual: Any, point: dict[Any, Any], facts: Facts, attempt: int) -> tuple[Any, dict[Any, Any]] | None:
    """(the residual at ``point``, the values given to the entries of sequences), sums
    written out; None when the residual has no certified value there."""
    value = expand_sums(residual.subs(point, simultaneous=True))
    values = {}
    for position, atom in enumerate(sorted(value.atoms(sympy.Indexed), key=str)):
        values[atom] = _sample(atom, position, attempt)
    value = value.xreplace(values)
    try:
        reject_inexact(value)
    except ProofError:
        return None
    if not symbol_free(value):
        return None
    # Every side condition must hold at the point, or the residual is not a value there.
    for condition in side_conditions(value):
        if condition.kind != "invertible" and not _holds_exactly(condition.expr, condition.kind):
            return None
    return value, values


def certified_value(expr: Any) -> str | None:
    """Six digits of ``expr`` if it is certified non-zero, else None."""
    if expr.is_Rational:
        if expr == 0:
            return None
        if max(abs(expr.p), expr.q).bit_length() > 200:
            # a rational of more than 60 digits is shown by its leading digits
            try:
                return "about " + decimal_string(expr, 6, significant=True)
            except (UndecidedError, TypeError, ValueError):
                return "a non-zero rational"
        return str(sympy.sstr(expr))
    if not safe_sign(expr):
        return None
    try:
        return decimal_string(expr, 6, significant=True)
    except (UndecidedError, TypeError, ValueError):
        return "non-zero"
