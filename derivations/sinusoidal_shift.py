"""Sinusoidal positions shift linearly, and their dot products depend only on the offset.

The sinusoidal encoding of position $p$ has one pair $(\\sin p\\omega_i, \\cos p\\omega_i)$ per
frequency $\\omega_i$, $i = 1, \\dots, h$, $d_{\\text{model}} = 2h$ (the original paper takes
$\\omega_i = 10000^{-2(i-1)/d_{\\text{model}}}$).  Moving to position $p + k$ rotates each pair by
$k\\omega_i$: $PE(p + k) = M_k\\, PE(p)$ with $M_k$ block diagonal and free of $p$.  Hence
$PE(p) \\cdot PE(p + k) = \\sum_i \\cos k\\omega_i$ depends on $k$ only.  An unpaired sine
coordinate (an odd width) breaks this.
"""

import sympy
from sympy import MatMul, Sum, cos, sin

from symbolic_attn.proofs.chain import Assumption, Computed, Derivation, Scope, Step
from symbolic_attn.proofs.result import Case, Check, Counterexample, Result

NAME = "sinusoidal_shift"

h = sympy.Symbol("h", integer=True, positive=True)
i = sympy.Symbol("i", integer=True, positive=True)
p, k, t = sympy.symbols("p k t", real=True)
omega = sympy.IndexedBase("omega", real=True)


def pe_pair(position, frequency):
    return sympy.ImmutableMatrix([sin(position * frequency), cos(position * frequency)])


def shift_block(offset, frequency):
    """``M_k`` on one pair: free of the position."""
    return sympy.ImmutableMatrix([[cos(offset * frequency), sin(offset * frequency)],
                                  [-sin(offset * frequency), cos(offset * frequency)]])


def pair_dot(left, right, pair):
    return sin(left * omega[pair]) * sin(right * omega[pair]) + cos(left * omega[pair]) * cos(right * omega[pair])


class PairDot(sympy.Function):
    r"""Notation ``PE^{(i)}(a) \cdot PE^{(i)}(b)`` (definition D1 unfolds it)."""

    nargs = 3

    def _latex(self, printer, exp=None):
        a, b, pair = (printer._print(x) for x in self.args)
        text = r"PE^{(%s)}(%s) \cdot PE^{(%s)}(%s)" % (pair, a, pair, b)
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)


class Dot(sympy.Function):
    r"""Notation ``PE(a) \cdot PE(b)`` (definition D2 unfolds it)."""

    nargs = 2

    def _latex(self, printer, exp=None):
        text = r"PE(%s) \cdot PE(%s)" % tuple(printer._print(x) for x in self.args)
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)


def _pair_definition(expr):
    return expr.replace(lambda e: isinstance(e, PairDot), lambda e: pair_dot(*e.args))


def _blocks(expr):
    return expr.replace(lambda e: isinstance(e, Dot), lambda e: Sum(PairDot(e.args[0], e.args[1], i), (i, 1, h)))


def _pair_lemma(expr):
    return expr.replace(lambda e: isinstance(e, PairDot), lambda e: cos((e.args[1] - e.args[0]) * omega[e.args[2]]))


def _dot_lemma(expr):
    return expr.replace(lambda e: isinstance(e, Dot),
                        lambda e: Sum(cos((e.args[1] - e.args[0]) * omega[i]), (i, 1, h)))


PAIR_DEFINITION = Assumption("D1", "the $i$-th pair of the encoding is $PE^{(i)}(p) = (\\sin p\\omega_i, "
                             "\\cos p\\omega_i)$", r"PE^{(i)}(a) \cdot PE^{(i)}(b) = \sin a\omega_i \sin b\omega_i + "
                             r"\cos a\omega_i \cos b\omega_i", rewrite=_pair_definition)
BLOCKS = Assumption("D2", "$d_{\\text{model}} = 2h$: the dot product is the sum of the $h$ pair products",
                    r"PE(a) \cdot PE(b) = \sum_{i=1}^{h} PE^{(i)}(a) \cdot PE^{(i)}(b)", rewrite=_blocks)
PAIR = Assumption("P1", "proved in the second part, for every pair $i$ and all real $a$, $b$",
                  r"PE^{(i)}(a) \cdot PE^{(i)}(b) = \cos (b - a)\omega_i", rewrite=_pair_lemma)
DOT = Assumption("P2", "proved in the third part, for all real $a$, $b$",
                 r"PE(a) \cdot PE(b) = \sum_{i=1}^{h} \cos (b - a)\omega_i", rewrite=_dot_lemma)


def shift_chain() -> Derivation:
    w = omega[i]
    return Derivation(
        "One pair moves by a rotation free of $p$",
        pe_pair(p + k, w),
        [
            Step(sympy.ImmutableMatrix([sin(p * w) * cos(k * w) + cos(p * w) * sin(k * w),
                                        cos(p * w) * cos(k * w) - sin(p * w) * sin(k * w)]),
                 "$\\sin$ and $\\cos$ of a sum of angles"),
            Step(MatMul(shift_block(k, w), pe_pair(p, w), evaluate=False),
                 "a matrix $M_k^{(i)}$ that does not contain $p$, times $PE^{(i)}(p)$"),
        ],
        scope=Scope.proved("every pair $i$ (so for the block-diagonal $M_k$ and every even $d_{\\text{model}}$), "
                           "all real $p$, $k$ and every real frequency $\\omega_i$"),
    )


def pair_chain() -> Derivation:
    return Derivation(
        "One pair: the dot product is a cosine of the offset",
        PairDot(p, p + k, i),
        [
            Step(pair_dot(p, p + k, i), "definition", using=("D1",)),
            Step(cos(k * omega[i]), "$\\cos$ of a difference"),
        ],
        assumptions=[PAIR_DEFINITION],
        scope=Scope.proved("every pair $i$, all real $p$, $k$ and every real $\\omega_i$"),
    )


def dot_chain() -> Derivation:
    return Derivation(
        "Every even width: sum over the pairs",
        Dot(p, p + k),
        [
            Step(Sum(PairDot(p, p + k, i), (i, 1, h)), "the dot product is a sum over the pairs", using=("D2",)),
            Step(Sum(cos(k * omega[i]), (i, 1, h)), "the second part, pair by pair", using=("P1",)),
        ],
        assumptions=[BLOCKS, PAIR],
        scope=Scope.proved("every even $d_{\\text{model}} = 2h$, all real $p$, $k$ and all real frequencies"),
    )


def offset_chain() -> Derivation:
    return Derivation(
        "Only the offset matters",
        Dot(p + t, p + t + k),
        [
            Step(Sum(cos(k * omega[i]), (i, 1, h)), "the third part", using=("P2",)),
            Step(Dot(p, p + k), "the third part again", using=("P2",)),
        ],
        assumptions=[DOT],
        scope=Scope.proved("every even $d_{\\text{model}}$, all real $p$, $k$ and every real shift $t$"),
    )


def frequencies(width):
    """The original paper's frequencies ``10000^(-2(i-1)/width)``, one per pair."""
    return [sympy.Integer(10000) ** sympy.Rational(-2 * j, width) for j in range(width // 2)]


def pe_vector(position, width):
    return sympy.ImmutableMatrix([entry for w in frequencies(width) for entry in pe_pair(position, w)])


def explicit_check() -> Check:
    cases, summary = [], []
    for width in (2, 4, 6):
        blocks = sympy.ImmutableMatrix(sympy.diag(*[shift_block(k, w) for w in frequencies(width)]))
        cases.append(Case(f"$d_{{\\text{{model}}}} = {width}$: linear shift",
                          Computed(r"PE(p + k)", pe_vector(p + k, width)),
                          Computed(r"M_k\, PE(p)", blocks * pe_vector(p, width))))
        cases.append(Case(f"$d_{{\\text{{model}}}} = {width}$: dot product",
                          Computed(r"PE(p)^{T} PE(p + k)", pe_vector(p, width).T * pe_vector(p + k, width)),
                          Computed(r"\textstyle\sum_i \cos k\omega_i",
                                   sympy.ImmutableMatrix([[sum(cos(k * w) for w in frequencies(width))]]))))
        summary.append(f"$d_{{\\text{{model}}}} = {width}$: frequencies $10000^{{-2(i-1)/{width}}}$, "
                       f"$p$ and $k$ symbolic, explicit ${width} \\times {width}$ matrix $M_k$")
    return Check(
        "The paper's frequencies, small widths (extra evidence)",
        r"PE(p + k) = M_k\, PE(p), \qquad PE(p) \cdot PE(p + k) = \sum_i \cos k\omega_i",
        cases,
        scope=Scope.checked("$d_{\\text{model}} = 2, 4, 6$ with the paper's frequencies and symbolic $p$, $k$"),
        note="Explicit vectors and block-diagonal matrices built from $\\sin$ and $\\cos$.",
        summary=summary,
    )


def odd_width_counterexample() -> Counterexample:
    width = 3
    # The paper's frequencies for width 3: a pair at frequency 1, then a lone sine at 10000^(-2/3).
    lone = sympy.Integer(10000) ** sympy.Rational(-2, 3)

    def pe(position):
        return sympy.ImmutableMatrix([sin(position), cos(position), sin(position * lone)])

    return Counterexample(
        "An unpaired sine coordinate breaks it",
        [(r"d_{\text{model}}", sympy.Integer(width)), ("k", sympy.Integer(0)),
         (r"(\omega_1, \omega_2)", sympy.ImmutableMatrix([[1, lone]]))],
        Computed(r"|PE(0)|^2", (pe(0).T * pe(0))[0, 0]),
        Computed(r"|PE(1)|^2", (pe(1).T * pe(1))[0, 0]),
        scope=Scope.counterexample("$d_{\\text{model}} = 3$ (odd), offset $k = 0$, positions $0$ and $1$"),
        note="With an odd width the last sine has no cosine partner, so $|PE(p)|^2$ is not constant: here $PE(p) = (\\sin p, \\cos p, \\sin \\omega_2 p)$.",
    )


def build() -> Result:
    return Result(
        NAME,
        "Sinusoidal positions shift linearly",
        __doc__.split("\n", 2)[2].strip(),
        [shift_chain(), pair_chain(), dot_chain(), offset_chain(), explicit_check(), odd_width_counterexample()],
    )
