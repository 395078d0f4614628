"""Shift invariance: adding the same constant to every score leaves softmax unchanged.

For scores $s_1, \\dots, s_n$ and a constant $c$, $\\operatorname{softmax}(s + c\\mathbf{1}) =
\\operatorname{softmax}(s)$, for every $n$.  Taking $c = -\\max_k s_k$ gives the
max-subtracted form that implementations use to avoid overflow.
"""

import sympy
from sympy import Mul, Sum, exp

from symbolic_attn.model.attention import softmax
from symbolic_attn.proofs.prove import Frac
from symbolic_attn.proofs.chain import Assumption, Derivation, Scope, Step
from symbolic_attn.proofs.operators import SoftmaxAt
from symbolic_attn.proofs.result import Case, Check, Result

NAME = "shift_invariance"

n = sympy.Symbol("n", integer=True, positive=True)
i, k = sympy.symbols("i k", integer=True, positive=True)
s = sympy.IndexedBase("s", real=True)
c = sympy.Symbol("c", real=True)
m = sympy.Symbol("m", real=True)


def _sum(term):
    return Sum(term, (k, 1, n))


def shift_chain(shift, shifted_latex: str, label: str, title: str) -> Derivation:
    """softmax(s + shift 1)_i = softmax(s)_i, for a shift that does not depend on k."""
    constant = Assumption(
        label, f"the shift in ${shifted_latex}$ is real and the same for every key $k$ (it does not depend on $k$)"
    )
    start = SoftmaxAt(s[k] + shift, k, i, n)
    return Derivation(
        title,
        start,
        [
            Step(Frac(exp(s[i] + shift), _sum(exp(s[k] + shift))), "definition of softmax"),
            Step(Frac(Mul(exp(shift), exp(s[i]), evaluate=False), _sum(Mul(exp(shift), exp(s[k]), evaluate=False))),
                 "$e^{a+b} = e^a e^b$"),
            Step(Frac(Mul(exp(shift), exp(s[i]), evaluate=False), Mul(exp(shift), _sum(exp(s[k])), evaluate=False)),
                 "factor free of $k$ out of the sum", using=(label,), rules=("sum.factor_out",)),
            Step(Frac(exp(s[i]), _sum(exp(s[k]))), "cancel the common factor ($e^x \\neq 0$)"),
            Step(SoftmaxAt(s[k], k, i, n), "definition of softmax"),
        ],
        assumptions=[constant],
        scope=Scope.proved("every length $n$, all real scores and every real constant"),
    )


def stable_check() -> Check:
    """The core's max-subtracted softmax equals its plain softmax (symbolic rows, n <= 5)."""
    cases = []
    for length in range(1, 6):
        row = sympy.Matrix([[sympy.Symbol(f"s_{j}", real=True) for j in range(1, length + 1)]])
        cases.append(Case(f"n = {length}", softmax(row, stable=True), softmax(row)))
    return Check(
        "The implementation's stable form",
        r"\operatorname{softmax}(s - \max_k s_k\,\mathbf{1}) = \operatorname{softmax}(s)"
        r"\quad\text{(computed by \texttt{softmax(stable=True)})}",
        cases,
        scope=Scope.checked("every $n \\le 5$ with fully symbolic scores (extra evidence; the general proof is above)"),
        note="The library's own stable softmax, on a symbolic row, against its plain softmax.",
        summary=[f"$n = {length}$: " + ", ".join(f"$s_{j}$" for j in range(1, length + 1)) + " symbolic"
                 for length in range(1, 6)],
    )


def build() -> Result:
    return Result(
        NAME,
        "Shift invariance of softmax",
        __doc__.split("\n", 2)[2].strip(),
        [
            shift_chain(c, r"s + c\,\mathbf{1}", "A1", "Adding a constant to every score"),
            shift_chain(-m, r"s - m\,\mathbf{1}", "A2", "The max-subtracted form, $m = \\max_k s_k$"),
            stable_check(),
        ],
    )
