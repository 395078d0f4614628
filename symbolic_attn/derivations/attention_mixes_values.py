"""Attention mixes values.

Each output is a weighted average of the allowed values: weights are nonnegative and sum to
$1$.  So every output coordinate lies between the smallest and the largest allowed value in
that coordinate; a zero query gives equal weights and so the mean of the allowed values; and
changing value row $j$ by $\\Delta$ leaves the weights alone and moves the output by $a_j \\Delta$.
In general (every $n$) and with the numbers of the grid/load/rises lab.
"""

import sympy
from sympy import KroneckerDelta, Rational, Sum

from symbolic_attn.model.attention import attention
from symbolic_attn.proofs.chain import Assumption, Derivation, Scope, Step
from symbolic_attn.proofs.operators import NamedOperator, SoftmaxAt
from symbolic_attn.proofs.prove import ForAll
from symbolic_attn.proofs.result import Case, Check, Result

NAME = "attention_mixes_values"

n = sympy.Symbol("n", integer=True, positive=True)
i, j, k, q = sympy.symbols("i j k q", integer=True, positive=True)
s = sympy.IndexedBase("s", real=True)   # the scores of one query over its allowed keys 1..n
v = sympy.IndexedBase("v", real=True)   # one coordinate of the allowed values
L, U, delta = sympy.symbols("L U Delta", real=True)


class Weight(NamedOperator, sympy.Function):
    r"""``w_k = softmax(s)_k``, printed short."""

    nargs = 1

    def unfold(self):
        return SoftmaxAt(s[q], q, self.args[0], n)

    def _latex(self, printer, exp=None):
        text = "w_{%s}" % printer._print(self.args[0])
        return text if exp is None else "w_{%s}^{%s}" % (printer._print(self.args[0]), exp)


def w(index):
    return Weight(index)


NOTE = ("Here $w_k = \\operatorname{softmax}(s)_k = e^{s_k} / \\sum_{q=1}^{n} e^{s_q}$ over the allowed keys "
        "$k = 1, \\dots, n$ (blocked keys have weight $0$ and leave the sums).")


def output(values):
    return Sum(w(k) * values, (k, 1, n))


BOUNDS = Assumption("A1", "every allowed value lies in $[L, U]$ (in this coordinate)", r"L \le v_k \le U",
                    condition=ForAll(k, 1, n, [v[k] - L >= 0, U - v[k] >= 0]))
ROW = Assumption("A2", "the changed row $j$ is an allowed key", r"1 \le j \le n", condition=j <= n)


def lower_chain() -> Derivation:
    return Derivation(
        "Above the smallest allowed value, every $n$",
        output(v[k]) - L,
        [
            Step(output(v[k]) - L * Sum(w(k), (k, 1, n)), "the weights sum to $1$"),
            Step(Sum(w(k) * (v[k] - L), (k, 1, n)), "linearity", rules=("sum.linearity",)),
            Step(sympy.Integer(0), "nonnegative weights times nonnegative gaps", relation=">=", using=("A1",)),
        ],
        assumptions=[BOUNDS],
        scope=Scope.proved("every number $n \\ge 1$ of allowed keys and all real scores and values"),
        note=NOTE,
    )


def upper_chain() -> Derivation:
    return Derivation(
        "Below the largest allowed value, every $n$",
        U - output(v[k]),
        [
            Step(U * Sum(w(k), (k, 1, n)) - output(v[k]), "the weights sum to $1$"),
            Step(Sum(w(k) * (U - v[k]), (k, 1, n)), "linearity", rules=("sum.linearity",)),
            Step(sympy.Integer(0), "nonnegative weights times nonnegative gaps", relation=">=", using=("A1",)),
        ],
        assumptions=[BOUNDS],
        scope=Scope.proved("every number $n \\ge 1$ of allowed keys and all real scores and values"),
    )


def zero_query_chain() -> Derivation:
    return Derivation(
        "A zero query averages the allowed values",
        Sum(SoftmaxAt(sympy.Integer(0), q, k, n) * v[k], (k, 1, n)),
        [
            Step(Sum(v[k] / n, (k, 1, n)), "every score is $0$: every weight is $1/n$"),
            Step(Sum(v[k], (k, 1, n)) / n, "the mean of the allowed values", rules=("sum.factor_out",)),
        ],
        scope=Scope.proved("every number $n \\ge 1$ of allowed keys"),
    )


def change_chain() -> Derivation:
    return Derivation(
        "Changing value row $j$ by $\\Delta$",
        output(v[k] + KroneckerDelta(k, j) * delta) - output(v[k]),
        [
            Step(Sum(w(k) * KroneckerDelta(k, j) * delta, (k, 1, n)), "the weights do not depend on the values"),
            Step(w(j) * delta, "only $k = j$ is left", using=("A2",), rules=("sum.delta",)),
        ],
        assumptions=[ROW],
        scope=Scope.proved("every $n \\ge 1$, every allowed row $j$ and every change $\\Delta$"),
        note=NOTE,
    )


# The lab: states X for grid, load, rises; W_Q = I, W_K = [[1, 1], [0, 1]], W_V = diag(1, 2).
X = sympy.ImmutableMatrix([[1, 0], [0, 1], [1, 1]])
W_K, W_V = sympy.ImmutableMatrix([[1, 1], [0, 1]]), sympy.ImmutableMatrix([[1, 0], [0, 2]])


def lab_check() -> Check:
    Q, K, V = X, X * W_K, X * W_V
    base = attention(Q, K, V)
    Q0 = sympy.Matrix(Q)
    Q0[2, :] = sympy.zeros(1, 2)
    zero = attention(Q0, K, V)
    V4 = sympy.Matrix(V)
    V4[2, 1] = 4
    changed = attention(Q, K, V4)
    a3 = base.weights[2, 2]
    rise = changed.output[2, 1] - base.output[2, 1]
    cases = [
        Case("zero query for rises: the mean of the values", zero.output.row(2), sympy.ImmutableMatrix([[Rational(2, 3), Rational(4, 3)]])),
        Case("weights unchanged by the new value", changed.weights, base.weights),
        Case("the second coordinate of rises rises by $2 a_3$", rise, 2 * a3),
        Case("$2 a_3 = 1.152$ to three decimals", sympy.Abs(2 * a3 - Rational(1152, 1000)), Rational(1, 2000), "<"),
    ]
    for column in range(2):
        values = [V[r, column] for r in range(3)]
        cases.append(Case(f"rises, coordinate {column + 1}: at least the smallest value", min(values), base.output[2, column], "<="))
        cases.append(Case(f"rises, coordinate {column + 1}: at most the largest value", base.output[2, column], max(values), "<="))
    return Check(
        "The grid/load/rises lab",
        r"\begin{gathered}X = \begin{bmatrix}1 & 0 \\ 0 & 1 \\ 1 & 1\end{bmatrix}, \quad W_Q = I, \\ "
        r"W_K = \begin{bmatrix}1 & 1 \\ 0 & 1\end{bmatrix}, \quad W_V = \begin{bmatrix}1 & 0 \\ 0 & 2\end{bmatrix}"
        r"\end{gathered}",
        cases,
        scope=Scope.checked("the lab's numbers, exactly (the decimal certified)"),
        note="Computed by the library's exact attention; $a_3$ is the weight rises puts on itself.",
        summary=["zero query for rises: output $(2/3, 4/3)$", "new value $v_{3,2} = 4$: weights unchanged, "
                 "output of rises up by $2 a_3 \\approx 1.152$ in its second coordinate",
                 "each coordinate of rises' output between the smallest and largest value"],
    )


def build() -> Result:
    return Result(
        NAME,
        "Attention mixes values",
        __doc__.split("\n", 2)[2].strip(),
        [lower_chain(), upper_chain(), zero_query_chain(), change_chain(), lab_check()],
    )
