r"""The values a side is built from: scalars (SymPy expressions), vectors and explicit matrices.

A vector is *not* pretended to be a scalar: it is a function from an index to a scalar
(:class:`Vector`), with a length.  ``x + c`` (a vector plus a scalar) is the vector whose
entry ``k`` is ``x_k + c``; ``(x + c)_i`` is its entry ``i``; ``\operatorname{softmax}(v)``
is the vector whose entry ``t`` is ``SoftmaxAt(v_k, k, t, n)`` over a fresh bound index
``k``; ``x \cdot y`` and ``x^\top y`` are the sum of the products of the entries.  Every
combination that has no meaning (a vector times a vector, a vector plus a matrix, vectors
of different lengths) is refused by name.

>>> import sympy
>>> x = sympy.IndexedBase("x", real=True)
>>> n, i = sympy.symbols("n i", integer=True, positive=True)
>>> c = sympy.Symbol("c", real=True)
>>> shifted = combine("+", declared_vector(x, n), c, fail=print)
>>> shifted.entry(i)
c + x[i]
>>> softmax_of(shifted, taken=set()).entry(i)
softmax(c + x[k] for k in 1..n)[i]
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sympy

from symbolic_attn.proofs.binders import substitute
from symbolic_attn.proofs.notation import Frac
from symbolic_attn.proofs.operators import SoftmaxAt
from symbolic_attn.steps.written import product as matrix_product

__all__ = ["Vector", "declared_vector", "sequence", "combine", "negate", "divide", "softmax_of", "dot",
           "bound_symbol", "is_scalar", "FRESH_NAMES"]

#: Names tried, in order, for the bound index the reader introduces (softmax, dot products):
#: the first that is not declared, not bound around it and not free in the entries.
FRESH_NAMES = ("k", "l", "m", "p", "q", "r", "t", "u", "v", "w", "a", "b")


@dataclass(frozen=True)
class Vector:
    """A vector value: ``entry(t)`` is its entry at the index ``t`` (a SymPy integer
    expression), ``length`` its number of entries; ``transposed`` after ``^\\top``."""

    entry: Callable[[Any], Any]
    length: Any
    transposed: bool = False


def is_scalar(value: Any) -> bool:
    """Whether ``value`` is a scalar (neither a :class:`Vector` nor a matrix)."""
    return not isinstance(value, (Vector, sympy.MatrixBase))


def bound_symbol(name: str, low: Any) -> Any:
    """The symbol the reader binds for a sum's (or sequence's) index ``name`` that was not
    declared: an integer, positive when the range starts at 1 or more."""
    if getattr(low, "is_number", False) and low >= 1:
        return sympy.Symbol(name, integer=True, positive=True)
    return sympy.Symbol(name, integer=True)


def declared_vector(base: Any, length: Any) -> Vector:
    """The declared vector ``base`` (an IndexedBase) as a value."""
    return Vector(lambda index: base[index], length)


def sequence(body: Any, index: Any, length: Any) -> Vector:
    """The sequence ``(body)_{index=1}^{length}`` as a vector (capture-avoiding substitution)."""
    return Vector(lambda value: substitute(body, {index: value}), length)


def fresh_index(vectors: list[Vector], taken: set[str]) -> Any:
    """A bound index for the entries of ``vectors`` that captures nothing."""
    probe = sympy.Dummy("probe", integer=True)
    used = set(taken)
    for vector in vectors:
        used |= {getattr(symbol, "name", "") for symbol in getattr(vector.entry(probe), "free_symbols", set())}
    for name in FRESH_NAMES:
        if name not in used:
            return bound_symbol(name, sympy.Integer(1))
    return sympy.Dummy("k", integer=True, positive=True)


def softmax_of(vector: Vector, taken: set[str]) -> Vector:
    """The softmax of ``vector``: entry ``t`` is ``SoftmaxAt(vector_k, k, t, n)``."""
    index = fresh_index([vector], taken)
    term = vector.entry(index)
    return Vector(lambda entry: SoftmaxAt(term, index, entry, vector.length), vector.length)


def dot(left: Vector, right: Vector, taken: set[str], fail: Callable[[str], Any]) -> Any:
    """The sum of the products of the entries of two vectors of one length."""
    _same_length(left, right, fail)
    index = fresh_index([left, right], taken)
    return sympy.Sum(left.entry(index) * right.entry(index), (index, 1, left.length))


def _same_length(left: Vector, right: Vector, fail: Callable[[str], Any]) -> None:
    if sympy.expand(left.length - right.length) != 0:
        fail(f"vectors of different lengths ({sympy.sstr(left.length)} and {sympy.sstr(right.length)})")


def negate(value: Any) -> Any:
    """``-value`` for a scalar, a vector or a matrix."""
    if isinstance(value, Vector):
        return Vector(lambda index: -value.entry(index), value.length, value.transposed)
    return -value


def divide(numerator: Any, denominator: Any, fail: Callable[[str], Any]) -> Any:
    """``numerator / denominator`` as written: a :class:`~symbolic_attn.proofs.notation.Frac`
    (the checker then needs the denominator nonzero), and a plain product by ``1/d`` for a
    number ``d`` known to be nonzero (``2``, ``e``, ``\\sqrt{2}``)."""
    if not is_scalar(denominator):
        fail("division by a vector or a matrix")
    if isinstance(numerator, Vector):
        return Vector(lambda index: divide(numerator.entry(index), denominator, fail), numerator.length)
    if isinstance(numerator, sympy.MatrixBase):
        fail("division of a matrix: write the scalar factor 1/d in front")
    if denominator.is_Rational and denominator == 0:
        fail("division by zero")
    if denominator.is_number and denominator.is_nonzero is True:  # e, sqrt(2), log(2): no condition to check
        return numerator * (1 / denominator)
    return Frac(numerator, denominator)


def combine(op: str, left: Any, right: Any, fail: Callable[[str], Any], taken: set[str] | None = None) -> Any:
    """``left op right`` for op in ``+ - * odot`` (``*`` is every written product: ``\\cdot``,
    ``\\times``, juxtaposition; ``dot`` is ``\\cdot`` between two vectors)."""
    taken = set() if taken is None else taken
    vector_left, vector_right = isinstance(left, Vector), isinstance(right, Vector)
    if isinstance(left, sympy.MatrixBase) or isinstance(right, sympy.MatrixBase):
        return _combine_matrices(op, left, right, fail)
    if not (vector_left or vector_right):
        if op == "odot":
            fail("\\odot between two scalars: write \\cdot")
        return {"+": lambda: left + right, "-": lambda: left - right, "*": lambda: left * right,
                "dot": lambda: left * right}[op]()
    if op in ("+", "-"):
        if vector_left and vector_right:
            _same_length(left, right, fail)
        length = left.length if vector_left else right.length
        if (vector_left and left.transposed) or (vector_right and right.transposed):
            fail("a sum with a transposed vector")

        def entry(index: Any) -> Any:
            a = left.entry(index) if vector_left else left
            b = right.entry(index) if vector_right else right
            return a + b if op == "+" else a - b

        return Vector(entry, length)
    if vector_left and vector_right:
        if op == "dot" or (op == "*" and left.transposed and not right.transposed):
            return dot(left, right, taken, fail)
        if op == "odot":
            _same_length(left, right, fail)
            return Vector(lambda index: left.entry(index) * right.entry(index), left.length)
        fail("a product of two vectors: write x \\cdot y or x^\\top y (a scalar), or x \\odot y (entrywise)")
    if op == "odot":
        fail("\\odot between a vector and a scalar: write \\cdot")
    vector, scalar = (left, right) if vector_left else (right, left)
    if vector_left:
        return Vector(lambda index: vector.entry(index) * scalar, vector.length, vector.transposed)
    return Vector(lambda index: scalar * vector.entry(index), vector.length, vector.transposed)


def _combine_matrices(op: str, left: Any, right: Any, fail: Callable[[str], Any]) -> Any:
    if isinstance(left, Vector) or isinstance(right, Vector):
        fail("a vector combined with an explicit matrix: write the vector as a matrix too")
    both = isinstance(left, sympy.MatrixBase) and isinstance(right, sympy.MatrixBase)
    try:
        if op in ("+", "-"):
            if not both:
                fail("a scalar added to a matrix")
            return sympy.ImmutableMatrix(left + right if op == "+" else left - right)
        if op == "odot":
            if not both:
                fail("\\odot between a matrix and a scalar")
            return sympy.ImmutableMatrix(left.multiply_elementwise(right))
        return matrix_product(left, right) if both else sympy.ImmutableMatrix(left * right)  # form noted (steps.written)
    except sympy.ShapeError as error:
        fail(f"matrices of incompatible shapes: {error}")
    raise AssertionError("unreachable")
