"""Rotary positions: the score depends on the positions only through their difference.

RoPE rotates each coordinate pair $(2i-1, 2i)$ of a query at position $m$ by the angle
$m\\theta_i$, and each pair of a key at position $n$ by $n\\theta_i$: $R_p$ is block-diagonal
with $2 \\times 2$ rotations.  Then $(R_m q)^{T} (R_n k) = q^{T} R_{n-m}\\, k$, for every even
width $d = 2h$, symbolic positions $m, n$ and frequencies $\\theta_i$.
"""

import sympy
from sympy import Sum, cos, sin

from symbolic_attn.proofs.chain import Computed, Derivation, Scope, Step
from symbolic_attn.proofs.operators import NamedOperator
from symbolic_attn.proofs.result import Case, Check, Result

NAME = "rope"

h, i = sympy.symbols("h i", integer=True, positive=True)
m, n = sympy.symbols("m n", real=True)
theta = sympy.IndexedBase("theta", real=True)
q, k = sympy.IndexedBase("q", real=True), sympy.IndexedBase("k", real=True)
# Pair i of the query is (a_i, b_i) = (q_{2i-1}, q_{2i}); of the key, (u_i, v_i) = (k_{2i-1}, k_{2i}).
a, b = sympy.IndexedBase("a", real=True), sympy.IndexedBase("b", real=True)
u, v = sympy.IndexedBase("u", real=True), sympy.IndexedBase("v", real=True)
PAIRS = {q: (a, b), k: (u, v)}


class C(NamedOperator, sympy.Function):
    r"""``c_p = cos(p theta_i)`` (pair ``i`` of the sum), printed short."""

    nargs = 1

    def unfold(self):
        return cos(self.args[0] * theta[i])

    def _latex(self, printer, exp=None):
        text = "c_{%s}" % printer._print(self.args[0])
        return text if exp is None else "%s^{%s}" % (text, exp)


class S(NamedOperator, sympy.Function):
    r"""``s_p = sin(p theta_i)``, printed short."""

    nargs = 1

    def unfold(self):
        return sin(self.args[0] * theta[i])

    def _latex(self, printer, exp=None):
        text = "s_{%s}" % printer._print(self.args[0])
        return text if exp is None else "%s^{%s}" % (text, exp)


def _rotated(p, vector, pair):
    """The pair (2i-1, 2i) of R_p vector."""
    angle = p * theta[pair]
    first, second = (base[pair] for base in PAIRS[vector])
    return cos(angle) * first - sin(angle) * second, sin(angle) * first + cos(angle) * second


class RotatedScore(NamedOperator, sympy.Function):
    r"""``(R_a q)^T (R_b k)`` summed over the ``h`` coordinate pairs (``d = 2h``)."""

    nargs = 2

    def unfold(self):
        a, b = self.args
        (q1, q2), (k1, k2) = _rotated(a, q, i), _rotated(b, k, i)
        return Sum(q1 * k1 + q2 * k2, (i, 1, h))

    def _latex(self, printer, exp=None):
        a, b = (printer._print(arg) for arg in self.args)
        text = r"\left(R_{%s} q\right)^{T} \left(R_{%s} k\right)" % (a, b)
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)


class RelativeScore(NamedOperator, sympy.Function):
    r"""``q^T R_c k``: the key rotated by ``c`` alone."""

    nargs = 1

    def unfold(self):
        (k1, k2) = _rotated(self.args[0], k, i)
        return Sum(a[i] * k1 + b[i] * k2, (i, 1, h))

    def _latex(self, printer, exp=None):
        text = r"q^{T} R_{%s}\, k" % printer._print(self.args[0])
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)


def rope_chain() -> Derivation:
    c_m, s_m, c_n, s_n = C(m), S(m), C(n), S(n)
    c_d, s_d = C(n - m), S(n - m)
    q1, q2, k1, k2 = a[i], b[i], u[i], v[i]
    return Derivation(
        "The score, every even width",
        RotatedScore(m, n),
        [
            Step(Sum((c_m * q1 - s_m * q2) * (c_n * k1 - s_n * k2) + (s_m * q1 + c_m * q2) * (s_n * k1 + c_n * k2),
                     (i, 1, h)), "rotate each pair"),
            Step(Sum((q1 * k1 + q2 * k2) * (c_m * c_n + s_m * s_n) + (q2 * k1 - q1 * k2) * (c_m * s_n - s_m * c_n),
                     (i, 1, h)), "multiply out, collect"),
            Step(Sum((q1 * k1 + q2 * k2) * c_d + (q2 * k1 - q1 * k2) * s_d, (i, 1, h)), "angle differences"),
            Step(RelativeScore(n - m), "rotate the key by $(n - m)\\theta_i$"),
        ],
        scope=Scope.proved("every even width $d = 2h$, all real positions $m, n$, frequencies and vectors"),
        note="For pair $i$ write $(a_i, b_i) = (q_{2i-1}, q_{2i})$, $(u_i, v_i) = (k_{2i-1}, k_{2i})$, "
             "$c_p = \\cos(p\\theta_i)$ and $s_p = \\sin(p\\theta_i)$.",
    )


def _block_rotation(p, size, freqs):
    matrix = sympy.zeros(size, size)
    for pair in range(size // 2):
        angle = p * freqs[pair]
        matrix[2 * pair, 2 * pair], matrix[2 * pair, 2 * pair + 1] = cos(angle), -sin(angle)
        matrix[2 * pair + 1, 2 * pair], matrix[2 * pair + 1, 2 * pair + 1] = sin(angle), cos(angle)
    return sympy.ImmutableMatrix(matrix)


def matrices_check() -> Check:
    cases = []
    for size in (2, 4, 6):
        freqs = sympy.symbols(f"theta_1:{size // 2 + 1}", real=True)
        qv = sympy.ImmutableMatrix(size, 1, lambda r, c: sympy.Symbol(f"q_{r + 1}", real=True))
        kv = sympy.ImmutableMatrix(size, 1, lambda r, c: sympy.Symbol(f"k_{r + 1}", real=True))
        left = (_block_rotation(m, size, freqs) * qv).T * (_block_rotation(n, size, freqs) * kv)
        right = qv.T * _block_rotation(n - m, size, freqs) * kv
        cases.append(Case(f"$d = {size}$", Computed(r"(R_m q)^{T} (R_n k)", left, "the explicit product"),
                          Computed(r"q^{T} R_{n-m} k", right, "the explicit product")))
    return Check(
        "Explicit block-diagonal matrices (extra evidence)",
        r"(R_m q)^{T} (R_n k) = q^{T} R_{n-m}\, k",
        cases,
        scope=Scope.checked("$d = 2, 4, 6$ with symbolic vectors, positions and frequencies"),
    )


def build() -> Result:
    return Result(
        NAME,
        "Rotary positions (RoPE)",
        __doc__.split("\n", 2)[2].strip(),
        [rope_chain(), matrices_check()],
    )
