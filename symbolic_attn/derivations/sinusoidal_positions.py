"""Sinusoidal positions shift linearly.

The sinusoidal encoding puts $\\sin(p\\,\\omega_i)$ and $\\cos(p\\,\\omega_i)$ in the coordinate pair
$(2i-1, 2i)$ of position $p$.  Moving to position $p + k$ rotates every pair by $k\\,\\omega_i$:
$PE(p + k) = M_k\\, PE(p)$ with $M_k$ block-diagonal and free of $p$, so the dot product
$PE(p) \\cdot PE(p + k)$ depends on the offset $k$ only.
"""

import sympy
from sympy import Sum, cos, sin

from symbolic_attn.proofs.chain import Derivation, Scope, Step
from symbolic_attn.proofs.operators import NamedOperator
from symbolic_attn.proofs.result import Case, Check, Result

NAME = "sinusoidal_positions"

h, i = sympy.symbols("h i", integer=True, positive=True)
p, k = sympy.symbols("p k", real=True)
omega = sympy.IndexedBase("omega", real=True)


def pair(position):
    """The pair (2i-1, 2i) of PE(position) as a column."""
    angle = position * omega[i]
    return sympy.ImmutableMatrix([[sin(angle)], [cos(angle)]])


def rotation(offset):
    """The pair block of M_offset: it does not depend on the position."""
    angle = offset * omega[i]
    return sympy.ImmutableMatrix([[cos(angle), sin(angle)], [-sin(angle), cos(angle)]])


class DotPE(NamedOperator, sympy.Function):
    r"""``PE(a) . PE(b)`` summed over the ``h`` pairs (``d_model = 2h``)."""

    nargs = 2

    def unfold(self):
        a, b = self.args
        return Sum(sin(a * omega[i]) * sin(b * omega[i]) + cos(a * omega[i]) * cos(b * omega[i]), (i, 1, h))

    def _latex(self, printer, exp=None):
        text = r"PE(%s) \cdot PE(%s)" % tuple(printer._print(arg) for arg in self.args)
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)


def shift_chain() -> Derivation:
    angle_p, angle_k = p * omega[i], k * omega[i]
    return Derivation(
        "One pair moves by a rotation",
        pair(p + k),
        [
            Step(sympy.ImmutableMatrix([[sin(angle_p) * cos(angle_k) + cos(angle_p) * sin(angle_k)],
                                        [cos(angle_p) * cos(angle_k) - sin(angle_p) * sin(angle_k)]]),
                 "angle addition"),
            Step(rotation(k) * pair(p), "a rotation by $k\\omega_i$ applied to the pair of $PE(p)$"),
        ],
        scope=Scope.proved("every pair $i$ (so every even $d_{model} = 2h$), all real $p$, $k$ and frequencies"),
        note="The matrix $M_k$ has these $2 \\times 2$ blocks on its diagonal; it contains no $p$.",
    )


def dot_chain() -> Derivation:
    angle_p, angle_k = p * omega[i], k * omega[i]
    return Derivation(
        "The dot product depends on the offset only",
        DotPE(p, p + k),
        [
            Step(Sum(sin(angle_p) * sin(angle_p + angle_k) + cos(angle_p) * cos(angle_p + angle_k), (i, 1, h)),
                 "definition: a sum over the pairs"),
            Step(Sum(cos(angle_k) * (sin(angle_p) ** 2 + cos(angle_p) ** 2), (i, 1, h)), "angle addition"),
            Step(Sum(cos(angle_k), (i, 1, h)), "$\\sin^2 + \\cos^2 = 1$", rules=("trig.pythagoras",)),
        ],
        scope=Scope.proved("every even $d_{model} = 2h$, all real $p$, $k$ and frequencies"),
    )


def small_check() -> Check:
    cases = []
    for pairs in (1, 2, 3):
        freqs = sympy.symbols(f"omega_1:{pairs + 1}", positive=True)
        left = sum((sin(p * w) * sin((p + k) * w) + cos(p * w) * cos((p + k) * w) for w in freqs), sympy.Integer(0))
        cases.append(Case(f"$d_{{model}} = {2 * pairs}$", left, sum((cos(k * w) for w in freqs), sympy.Integer(0))))
    return Check(
        "Written out for small widths (extra evidence)",
        r"PE(p) \cdot PE(p + k) = \sum_i \cos(k\,\omega_i)",
        cases,
        scope=Scope.checked("$d_{model} = 2, 4, 6$ with symbolic $p$, $k$, $\\omega_i$"),
    )


def build() -> Result:
    return Result(
        NAME,
        "Sinusoidal positions shift linearly",
        __doc__.split("\n", 2)[2].strip(),
        [shift_chain(), dot_chain(), small_check()],
    )
