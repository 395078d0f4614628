"""Rotary positions (RoPE): the score depends on positions only through their offset.

RoPE rotates each coordinate pair $i = 1, \\dots, h$ of a query at position $m$ by the
angle $m\\theta_i$ ($d = 2h$): $R_m$ is block diagonal with the $2 \\times 2$ rotations
$R(m\\theta_i)$.  Then $(R_m q)^{T}(R_n k) = q^{T} R_{n-m} k$, so moving both positions by
the same amount leaves every score unchanged.  The proof works pair by pair (a rotation
acts on its own pair only) and then sums over the pairs, so it holds for every even $d$.
"""

import sympy
from sympy import Sum, cos, pi, sin

from symbolic_attn.proofs.operators import NamedOperator
from symbolic_attn.proofs.chain import Assumption, Computed, Derivation, Scope, Step
from symbolic_attn.proofs.result import Case, Check, Counterexample, Result

NAME = "rope_relative"

h = sympy.Symbol("h", integer=True, positive=True)
i = sympy.Symbol("i", integer=True, positive=True)
m, n, t = sympy.symbols("m n t", integer=True)
q = sympy.IndexedBase("q", real=True)
k = sympy.IndexedBase("k", real=True)
theta = sympy.IndexedBase("theta", real=True)


def rotate(angle, x, y):
    """The 2x2 rotation by ``angle`` applied to the pair ``(x, y)``."""
    return cos(angle) * x - sin(angle) * y, sin(angle) * x + cos(angle) * y


def pair_product(left, right, pair):
    """``(R(left theta_i) q^(i))^T (R(right theta_i) k^(i))`` written out."""
    u = rotate(left * theta[pair], q[2 * pair - 1], q[2 * pair])
    w = rotate(right * theta[pair], k[2 * pair - 1], k[2 * pair])
    return u[0] * w[0] + u[1] * w[1]


def pair_relative(offset, pair):
    """``q^(i)^T R(offset theta_i) k^(i)`` written out."""
    w = rotate(offset * theta[pair], k[2 * pair - 1], k[2 * pair])
    return q[2 * pair - 1] * w[0] + q[2 * pair] * w[1]


class PairScore(sympy.Function):
    r"""Notation ``(R(m\theta_i) q^{(i)})^T (R(n\theta_i) k^{(i)})``: only definition D1 unfolds it."""

    nargs = 3

    def _latex(self, printer, exp=None):
        left, right, pair = (printer._print(a) for a in self.args)
        text = (r"\left(R(%s\,\theta_{%s})\, q^{(%s)}\right)^{T} \left(R(%s\,\theta_{%s})\, k^{(%s)}\right)"
                % (left, pair, pair, right, pair, pair))
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)


class PairRelative(sympy.Function):
    r"""Notation ``q^{(i)T} R(r\theta_i) k^{(i)}``: only definition D1 unfolds it."""

    nargs = 2

    def _latex(self, printer, exp=None):
        offset, pair = (printer._print(a) for a in self.args)
        text = r"q^{(%s)T} R\left(\left(%s\right)\theta_{%s}\right) k^{(%s)}" % (pair, offset, pair, pair)
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)


class Score(sympy.Function):
    r"""Notation ``(R_m q)^T (R_n k)`` for the block-diagonal ``R_p`` (definition D2 unfolds it)."""

    nargs = 2

    def _latex(self, printer, exp=None):
        text = r"\left(R_{%s} q\right)^{T} \left(R_{%s} k\right)" % tuple(printer._print(a) for a in self.args)
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)


class RelativeScore(sympy.Function):
    r"""Notation ``q^T R_r k`` (definition D2 unfolds it)."""

    nargs = 1

    def _latex(self, printer, exp=None):
        text = r"q^{T} R_{%s}\, k" % printer._print(self.args[0])
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)


def _pair_definitions(expr):
    expr = expr.replace(lambda e: isinstance(e, PairScore), lambda e: pair_product(*e.args))
    return expr.replace(lambda e: isinstance(e, PairRelative), lambda e: pair_relative(*e.args))


def _block_diagonal(expr):
    expr = expr.replace(lambda e: isinstance(e, Score), lambda e: Sum(PairScore(e.args[0], e.args[1], i), (i, 1, h)))
    return expr.replace(lambda e: isinstance(e, RelativeScore), lambda e: Sum(PairRelative(e.args[0], i), (i, 1, h)))


def _pair_lemma(expr):
    return expr.replace(lambda e: isinstance(e, PairScore), lambda e: PairRelative(e.args[1] - e.args[0], e.args[2]))


def _score_lemma(expr):
    return expr.replace(lambda e: isinstance(e, Score), lambda e: RelativeScore(e.args[1] - e.args[0]))


ROTATION = Assumption(
    "D1", "$R(\\alpha)$ is the rotation of the plane by $\\alpha$; $q^{(i)} = (q_{2i-1}, q_{2i})$ and "
    "$k^{(i)} = (k_{2i-1}, k_{2i})$ are the $i$-th coordinate pairs",
    r"R(\alpha) = \begin{bmatrix} \cos\alpha & -\sin\alpha \\ \sin\alpha & \cos\alpha \end{bmatrix}",
    rewrite=_pair_definitions)
BLOCKS = Assumption(
    "D2", "$d = 2h$ and $R_p$ is block diagonal with blocks $R(p\\theta_1), \\dots, R(p\\theta_h)$, so a product "
    "$(R_m q)^{T}(R_n k)$ is the sum of the $h$ pair products (a block acts on its own pair only)",
    r"\left(R_m q\right)^{T}\left(R_n k\right) = \sum_{i=1}^{h} \left(R(m\theta_i) q^{(i)}\right)^{T}"
    r"\left(R(n\theta_i) k^{(i)}\right)",
    rewrite=_block_diagonal)
PAIR = Assumption("P1", "the first part with $\\alpha = m\\theta_i$, $\\beta = n\\theta_i$, $x = q^{(i)}$, "
                  "$y = k^{(i)}$, for every pair $i$ and all integers $m$, $n$",
                  r"\left(R(m\theta_i) q^{(i)}\right)^{T}\left(R(n\theta_i) k^{(i)}\right) = "
                  r"q^{(i)T} R\left((n-m)\theta_i\right) k^{(i)}", rewrite=_pair_lemma)
SCORE = Assumption("P2", "proved in the second part, for all integers $m$, $n$",
                   r"\left(R_m q\right)^{T}\left(R_n k\right) = q^{T} R_{n-m} k", rewrite=_score_lemma)


def _pair(base, pair):
    return sympy.ImmutableMatrix([base[2 * pair - 1], base[2 * pair]])


def _product(*factors):
    """A matrix product kept as written (so each factor prints)."""
    return sympy.MatMul(*factors, evaluate=False)


alpha, beta = sympy.symbols("alpha beta", real=True)
x1, x2, y1, y2 = sympy.symbols("x_1 x_2 y_1 y_2", real=True)


class RotatedProduct(NamedOperator, sympy.Expr):
    r"""``(R(\alpha) x)^T (R(\beta) y)`` for the pairs ``x``, ``y``: prints so, unfolds to its value."""

    def __new__(cls, first, second):
        return sympy.Expr.__new__(cls, sympy.sympify(first), sympy.sympify(second))

    def unfold(self):
        first, second = self.args
        x_, y_ = sympy.ImmutableMatrix([x1, x2]), sympy.ImmutableMatrix([y1, y2])
        return ((_rotation(first) * x_).T * (_rotation(second) * y_))[0, 0]

    def _latex(self, printer, exp=None):
        return r"\left(R(%s)\, x\right)^{T} \left(R(%s)\, y\right)" % tuple(printer._print(a) for a in self.args)


def pair_chain() -> Derivation:
    x_, y_ = sympy.ImmutableMatrix([x1, x2]), sympy.ImmutableMatrix([y1, y2])
    return Derivation(
        "One pair: two rotations compose",
        RotatedProduct(alpha, beta),
        [
            Step(_product(sympy.Transpose(x_), sympy.Transpose(_rotation(alpha)), _rotation(beta), y_),
                 "$(R x)^{T} = x^{T} R^{T}$, and the $1 \\times 1$ product is read as its entry",
                 rules=("matrix.scalar",)),
            Step(_product(sympy.Transpose(x_), _rotation(beta - alpha), y_), "$\\cos$, $\\sin$ of a difference"),
        ],
        scope=Scope.proved("all real angles $\\alpha$, $\\beta$ and all real pairs $x$, $y$; with "
                           "$\\alpha = m\\theta_i$, $\\beta = n\\theta_i$, $x = q^{(i)}$, $y = k^{(i)}$ this is "
                           "$(R(m\\theta_i) q^{(i)})^{T} (R(n\\theta_i) k^{(i)}) = q^{(i)T} R((n-m)\\theta_i) k^{(i)}$"),
        note="The $2 \\times 2$ products are multiplied out and compared entry by entry; a $1 \\times 1$ matrix "
             "is read as its entry (rule matrix.scalar).",
    )


def score_chain() -> Derivation:
    return Derivation(
        "Every even width: sum over the pairs",
        Score(m, n),
        [
            Step(Sum(PairScore(m, n, i), (i, 1, h)), "$R_m$, $R_n$ are block diagonal", using=("D2",)),
            Step(Sum(PairRelative(n - m, i), (i, 1, h)), "the first part, pair by pair", using=("P1",)),
            Step(RelativeScore(n - m), "$R_{n-m}$ is block diagonal", using=("D2",)),
        ],
        assumptions=[ROTATION, BLOCKS, PAIR],
        scope=Scope.proved("every even $d = 2h$ ($h \\ge 1$), all integer positions $m$, $n$, all real angles "
                           "$\\theta_1, \\dots, \\theta_h$ and all real $q$, $k$"),
    )


def shift_chain() -> Derivation:
    return Derivation(
        "Only the offset matters",
        Score(m + t, n + t),
        [
            Step(RelativeScore(n - m), "the second part: the offset is $(n + t) - (m + t) = n - m$", using=("P2",)),
            Step(Score(m, n), "the second part again", using=("P2",)),
        ],
        assumptions=[SCORE],
        scope=Scope.proved("every even $d$, all integer positions $m$, $n$ and every integer shift $t$"),
    )


def _rotation(angle):
    return sympy.ImmutableMatrix([[cos(angle), -sin(angle)], [sin(angle), cos(angle)]])


def rope_matrix(position, angles):
    """The explicit block-diagonal ``R_p`` for the given angles (one per pair)."""
    return sympy.ImmutableMatrix(sympy.diag(*[_rotation(position * angle) for angle in angles]))


def explicit_check() -> Check:
    cases, summary = [], []
    for pairs in (1, 2, 3):
        width = 2 * pairs
        angles = [sympy.Symbol(f"theta_{p}", real=True) for p in range(1, pairs + 1)]
        qv = sympy.ImmutableMatrix([sympy.Symbol(f"q_{c}", real=True) for c in range(1, width + 1)])
        kv = sympy.ImmutableMatrix([sympy.Symbol(f"k_{c}", real=True) for c in range(1, width + 1)])
        left = (rope_matrix(m, angles) * qv).T * (rope_matrix(n, angles) * kv)
        right = qv.T * rope_matrix(n - m, angles) * kv
        by_pairs = sympy.ImmutableMatrix([[sum(
            pair_product(m, n, p).xreplace({q[2 * p - 1]: qv[2 * p - 2], q[2 * p]: qv[2 * p - 1],
                                             k[2 * p - 1]: kv[2 * p - 2], k[2 * p]: kv[2 * p - 1],
                                             theta[p]: angles[p - 1]})
            for p in range(1, pairs + 1))]])
        cases.append(Case(f"$d = {width}$: the block product is the sum over pairs",
                          Computed(r"(R_m q)^{T} (R_n k)", left), Computed(r"\textstyle\sum_i \text{pair products}",
                                                                          by_pairs)))
        cases.append(Case(f"$d = {width}$: relative form", Computed(r"(R_m q)^{T} (R_n k)", left),
                          Computed(r"q^{T} R_{n-m} k", right)))
        summary.append(f"$d = {width}$: explicit ${width} \\times {width}$ matrices $R_m$, $R_n$, $R_{{n-m}}$; "
                       f"$q$, $k$, the angles and $m$, $n$ symbolic")
    return Check(
        "Explicit matrices, small $d$ (extra evidence)",
        r"(R_m q)^{T} (R_n k) = q^{T} R_{n-m} k",
        cases,
        scope=Scope.checked("$d = 2, 4, 6$ with explicit block-diagonal matrices and fully symbolic $q$, $k$, "
                            "$\\theta_i$, $m$, $n$ (this also checks the block structure D2 for these widths)"),
        note="Computed as products of explicit SymPy matrices built from $\\cos$ and $\\sin$.",
        summary=summary,
    )


def offset_counterexample() -> Counterexample:
    angle = pi / 2
    qv = sympy.ImmutableMatrix([1, 0])
    same = (rope_matrix(0, [angle]) * qv).T * (rope_matrix(0, [angle]) * qv)
    apart = (rope_matrix(0, [angle]) * qv).T * (rope_matrix(1, [angle]) * qv)
    return Counterexample(
        "The score does depend on the offset",
        [("d", sympy.Integer(2)), (r"\theta_1", angle), ("q = k", qv)],
        Computed(r"(R_0 q)^{T} (R_0 k)", same),
        Computed(r"(R_0 q)^{T} (R_1 k)", apart),
        scope=Scope.counterexample("$d = 2$, $\\theta_1 = \\pi/2$, $q = k = (1, 0)$, offsets $0$ and $1$"),
        note="Invariance is under moving both positions, not under moving one: a quarter turn makes the "
             "key orthogonal to the query.",
    )


def build() -> Result:
    return Result(
        NAME,
        "Rotary positions give relative scores",
        __doc__.split("\n", 2)[2].strip(),
        [pair_chain(), score_chain(), shift_chain(), explicit_check(), offset_counterexample()],
    )
