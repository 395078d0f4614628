r"""The closed domain table: where every function and operator the checker may meet is defined.

A step ``lhs = rhs`` is an equality of *defined* values, so every node of both sides must
be defined at the values in question.  This table says, for each kind of node, what that
takes: ``cot x`` needs ``sin x != 0``, ``log x`` needs ``x > 0``, ``A^{-1}`` needs ``A``
invertible.  It is **closed**: a node whose class (or a base class) is not listed has no
domain rule, and the step fails with ``no domain rule for cot: cannot check this step``.
Soundness by default, not by a list of known-bad cases: a function nobody thought of is
refused, never passed.

A function class written for a derivation (an expectation ``E[.]``, say) brings its own
entry: a method ``domain_conditions(self)`` returning the same triples (``[]`` for a
function defined everywhere), stated where the class is defined and read by a reviewer
there.

Each entry maps a node to the conditions it needs, as ``(expression, kind, why)`` triples
(kinds: ``>0``, ``>=0``, ``!=0``, ``invertible``, ``integer``); the arguments' own
conditions are collected by :mod:`.conditions`, which walks the tree.  Sums and products
(their ranges) are handled there too, since a range changes the facts under it.

>>> import sympy
>>> x = sympy.Symbol("x", real=True)
>>> domain_conditions(sympy.cot(x))
[(sin(x), '!=0', 'cotangent')]
>>> domain_conditions(sympy.exp(x))
[]
>>> domain_conditions(sympy.LambertW(x))
Traceback (most recent call last):
...
symbolic_attn.errors.UndecidedError: no domain rule for LambertW: cannot check this step
"""

from typing import Any

import sympy
from sympy.core.function import AppliedUndef
from sympy.logic.boolalg import Boolean

from symbolic_attn.errors import UndecidedError

__all__ = ["domain_conditions", "DOMAIN_TABLE", "domain_table_rows"]


def _none(expr: Any) -> list[Any]:
    return []


def _argument(condition: Any, kind: str, why: str) -> Any:
    """An entry that puts one condition on the (only) argument."""
    return lambda expr: [(condition(expr.args[0]), kind, why)]


def _power(expr: Any) -> list[Any]:
    base, exponent = expr.args
    if exponent.is_integer and exponent.is_nonnegative:
        return []
    if exponent.is_integer and exponent.is_negative:
        return [(base, "!=0", "denominator")]
    if exponent.is_integer:
        # b^k with an integer k of unknown sign divides by b unless k >= 0: the sign of the
        # exponent is read from the facts (a bound index's range), not from a flag.
        return [(base, "!=0", "integer power of unknown sign", (exponent, ">=0"))]
    if exponent.is_Rational or exponent.is_nonnegative:
        return [(base, ">0" if exponent.is_negative else ">=0", "root")]
    if exponent.is_positive:
        return [(base, ">=0", "power with a positive non-integer exponent")]
    return [(base, ">0", "power with a non-integer exponent")]


def _matrix_power(expr: Any) -> list[Any]:
    base, exponent = expr.args
    if exponent.is_integer and exponent.is_nonnegative:
        return []
    if exponent.is_integer:
        # A^k with k < 0, or of unknown sign, is a power of the inverse.
        return [(base, "invertible", "matrix power with a negative (or unknown-sign) exponent")]
    raise UndecidedError(f"no domain rule for a matrix power with the exponent {sympy.sstr(exponent)[:80]} "
                         "(not an integer): cannot check this step")


def _matrix_element(expr: Any) -> Any:
    matrix, row, col = expr.args
    rows, cols = matrix.shape
    found = []
    for index, size, name in ((row, rows, "row"), (col, cols, "column")):
        found += [(index, "integer", f"the {name} index of an entry is an integer"),
                  (index, ">=0", f"the {name} index of an entry is at least 0"),
                  (size - 1 - index, ">=0", f"the {name} index of an entry lies within the shape")]
    return found


def _piecewise(expr: Any) -> list[Any]:
    # Every branch is required to be defined (stronger than needed, so sound); a Piecewise
    # without a final catch-all branch may have no value at all.
    if not expr.args or expr.args[-1].cond is not sympy.true:
        raise UndecidedError("no domain rule for a Piecewise without a final (value, True) branch: "
                             "cannot check this step")
    return []


#: Functions differentiable wherever they are defined; a derivative of anything else (|x|,
#: sign, max, floor, a Piecewise) has no domain rule: it does not exist at the kinks.
_SMOOTH = (sympy.Symbol, sympy.Number, sympy.NumberSymbol, sympy.Add, sympy.Mul, sympy.Pow, sympy.exp, sympy.log,
           sympy.sin, sympy.cos, sympy.tan, sympy.cot, sympy.sec, sympy.csc, sympy.sinh, sympy.cosh, sympy.tanh,
           sympy.coth, sympy.sech, sympy.csch, sympy.asin, sympy.acos, sympy.atan, sympy.asinh, sympy.acosh,
           sympy.atanh, sympy.erf, sympy.erfc, sympy.Indexed, sympy.IndexedBase, sympy.Idx, AppliedUndef,
           sympy.Tuple, sympy.Derivative, sympy.core.symbol.Str)


def _derivative(expr: Any) -> list[Any]:
    for node in sympy.preorder_traversal(expr.expr):
        if not isinstance(node, _SMOOTH) and not getattr(node, "is_named_operator", False):
            name = getattr(type(node), "__name__", str(type(node)))
            raise UndecidedError(f"no domain rule for the derivative of {name} (not differentiable everywhere): "
                                 "cannot check this step")
    if expr.doit().has(sympy.Derivative):
        raise UndecidedError(f"no domain rule for the derivative {sympy.sstr(expr)[:80]} (it does not evaluate): "
                             "cannot check this step")
    return []


_SIN, _COS = sympy.sin, sympy.cos

#: class -> (conditions of a node, the rule in words).  Looked up along the class's MRO.
DOMAIN_TABLE = {
    # atoms and arithmetic: defined everywhere (powers and division below)
    sympy.Symbol: (_none, "everywhere"),
    sympy.Idx: (_none, "everywhere"),
    sympy.Number: (_none, "everywhere (floats and non-finite values are refused separately)"),
    sympy.NumberSymbol: (_none, "everywhere (pi, e, ...)"),
    sympy.core.numbers.ImaginaryUnit: (_none, "everywhere"),
    sympy.Add: (_none, "everywhere"),
    sympy.Mul: (_none, "everywhere"),
    sympy.Pow: (_power, "b^k (k >= 0 integer): everywhere; k < 0: b != 0; k integer of unknown sign: "
                        "b != 0 unless k >= 0; rational k: b >= 0 (b > 0 if k < 0); other k: b > 0"),
    sympy.Tuple: (_none, "everywhere"),
    # exponential, logarithm
    sympy.exp: (_none, "everywhere"),
    sympy.log: (_argument(lambda a: a, ">0", "logarithm"), "x > 0"),
    # trigonometric
    sympy.sin: (_none, "everywhere"),
    sympy.cos: (_none, "everywhere"),
    sympy.tan: (_argument(_COS, "!=0", "tangent"), "cos x != 0"),
    sympy.cot: (_argument(_SIN, "!=0", "cotangent"), "sin x != 0"),
    sympy.sec: (_argument(_COS, "!=0", "secant"), "cos x != 0"),
    sympy.csc: (_argument(_SIN, "!=0", "cosecant"), "sin x != 0"),
    sympy.asin: (_argument(lambda a: 1 - a**2, ">=0", "arcsine argument in [-1, 1]"), "-1 <= x <= 1"),
    sympy.acos: (_argument(lambda a: 1 - a**2, ">=0", "arccosine argument in [-1, 1]"), "-1 <= x <= 1"),
    sympy.atan: (_argument(lambda a: 1 + a**2, "!=0", "arctangent (poles at +-i)"), "1 + x^2 != 0"),
    sympy.acot: (_argument(lambda a: 1 + a**2, "!=0", "arccotangent (poles at +-i)"), "1 + x^2 != 0"),
    sympy.asec: (_argument(lambda a: a**2 - 1, ">=0", "arcsecant argument outside (-1, 1)"), "x^2 >= 1"),
    sympy.acsc: (_argument(lambda a: a**2 - 1, ">=0", "arccosecant argument outside (-1, 1)"), "x^2 >= 1"),
    # hyperbolic
    sympy.sinh: (_none, "everywhere"),
    sympy.cosh: (_none, "everywhere"),
    sympy.tanh: (_argument(sympy.cosh, "!=0", "hyperbolic tangent"), "cosh x != 0"),
    sympy.coth: (_argument(sympy.sinh, "!=0", "hyperbolic cotangent"), "sinh x != 0"),
    sympy.sech: (_argument(sympy.cosh, "!=0", "hyperbolic secant"), "cosh x != 0"),
    sympy.csch: (_argument(sympy.sinh, "!=0", "hyperbolic cosecant"), "sinh x != 0"),
    sympy.asinh: (_none, "everywhere"),
    sympy.acosh: (_argument(lambda a: a - 1, ">=0", "inverse hyperbolic cosine argument >= 1"), "x >= 1"),
    sympy.atanh: (_argument(lambda a: 1 - a**2, ">0", "inverse hyperbolic tangent argument in (-1, 1)"),
                  "-1 < x < 1"),
    sympy.acoth: (_argument(lambda a: a**2 - 1, ">0", "inverse hyperbolic cotangent argument outside [-1, 1]"),
                  "x^2 > 1"),
    sympy.asech: (lambda e: [(e.args[0], ">0", "inverse hyperbolic secant argument in (0, 1]"),
                             (1 - e.args[0], ">=0", "inverse hyperbolic secant argument in (0, 1]")], "0 < x <= 1"),
    sympy.acsch: (_argument(lambda a: a, "!=0", "inverse hyperbolic cosecant"), "x != 0"),
    # special functions the model uses (GELU): entire
    sympy.erf: (_none, "everywhere"),
    sympy.erfc: (_none, "everywhere"),
    # pieces and orders
    sympy.Abs: (_none, "everywhere"),
    sympy.sign: (_none, "everywhere"),
    sympy.Max: (_none, "everywhere"),
    sympy.Min: (_none, "everywhere"),
    sympy.floor: (_none, "everywhere"),
    sympy.ceiling: (_none, "everywhere"),
    sympy.KroneckerDelta: (_none, "everywhere"),
    sympy.Piecewise: (_piecewise, "every branch defined, and a final (value, True) branch"),
    sympy.functions.elementary.piecewise.ExprCondPair: (_none, "its value and condition"),
    Boolean: (_none, "everywhere (relations and logic inside Piecewise)"),
    # sequences and undefined functions: arbitrary values, defined everywhere
    sympy.Indexed: (_none, "everywhere (its indices are checked)"),
    sympy.IndexedBase: (_none, "everywhere"),
    AppliedUndef: (_none, "an arbitrary function: everywhere"),
    sympy.Derivative: (_derivative, "of a function differentiable where it is defined (no abs, sign, max, "
                                    "floor, Piecewise), when it evaluates"),
    # matrices
    sympy.MatrixSymbol: (_none, "everywhere"),
    sympy.Identity: (_none, "everywhere"),
    sympy.ZeroMatrix: (_none, "everywhere"),
    sympy.MatAdd: (_none, "everywhere (shapes checked by SymPy)"),
    sympy.MatMul: (_none, "everywhere (shapes checked by SymPy)"),
    sympy.Transpose: (_none, "everywhere"),
    sympy.Inverse: (lambda e: [(e.args[0], "invertible", "inverse")], "A invertible"),
    sympy.MatPow: (_matrix_power, "A^k: k >= 0 integer everywhere; other integer k: A invertible"),
    sympy.Trace: (_none, "everywhere"),
    sympy.Determinant: (_none, "everywhere"),
    sympy.matrices.expressions.matexpr.MatrixElement: (_matrix_element, "integer indices within the shape "
                                                                          "(0 <= i <= rows - 1, 0 <= j <= cols - 1)"),
    sympy.HadamardProduct: (_none, "everywhere"),
    sympy.core.symbol.Str: (_none, "a name"),
}


def _entry(expr: Any) -> Any:
    for klass in type(expr).__mro__:
        found = DOMAIN_TABLE.get(klass)
        if found is not None:
            return found
    return None


def domain_conditions(expr: Any) -> list[Any]:
    """What ``expr``'s own node needs to be defined: ``(expression, kind, why)`` triples, and a
    fourth item (an alternative condition) for a power of unknown-sign exponent.

    Raises UndecidedError for a node without an entry (sums, products, named operators and
    display fractions are handled by the caller before this is asked).
    """
    own = getattr(type(expr), "domain_conditions", None)
    if callable(own):
        # A function class of an author's script brings its own entry (documented with it).
        return list(own(expr))
    entry = _entry(expr)
    if entry is None:
        name = getattr(type(expr), "__name__", str(type(expr)))
        raise UndecidedError(f"no domain rule for {name}: cannot check this step")
    return list(entry[0](expr))


#: The nodes :mod:`.conditions` handles itself (a range changes the facts below it).
WALKED_ROWS = (
    ("Sum", "integer limits a, b and a range that is not reversed (b >= a - 1); its terms under a <= k <= b"),
    ("Product", "integer limits a, b and a range that is not reversed (b >= a - 1); its factors under a <= k <= b"),
    ("Frac", "denominator != 0"),
    ("named operators", "their arguments; what they stand for is checked unfolded"),
    ("function classes of a script", "their own domain_conditions(self) method"),
)


def domain_table_rows() -> list[Any]:
    """``(name, rule)`` for every entry, sorted by name: the table as documentation."""
    rows = [(getattr(klass, "__name__", str(klass)), rule) for klass, (_, rule) in DOMAIN_TABLE.items()]
    return sorted(rows + list(WALKED_ROWS), key=lambda row: row[0].lower())
