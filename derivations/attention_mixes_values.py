"""Attention mixes values: the guide's lab, in general and with its numbers.

An output row is $o = \\sum_j w_j V_j$ with (masked) softmax weights $w_j \\ge 0$ that sum to
$1$ over the allowed keys.  So each output coordinate lies between the smallest and the
largest allowed value in that coordinate; a zero query gives equal weights over the
allowed keys, hence the mean of the allowed values; and changing value row $r$ by
$\\Delta$ leaves the weights alone (they are computed from queries and keys only) and moves
the output by $w_r \\Delta$.  The guide's lab: $X$ of the three tokens grid, load, rises,
$W_Q = I$, $W_K = \\begin{bmatrix}1 & 1\\\\ 0 & 1\\end{bmatrix}$, $W_V = \\begin{bmatrix}1 & 0\\\\ 0 & 2\\end{bmatrix}$.
"""

import sympy
from sympy import KroneckerDelta, Rational, Sum, exp

from symbolic_attn.model.attention import attention
from symbolic_attn.proofs.chain import Assumption, Computed, Derivation, Scope, Step
from symbolic_attn.proofs.operators import MaskedSoftmaxAt, NamedOperator
from symbolic_attn.proofs.prove import Frac
from symbolic_attn.proofs.result import Case, Check, Counterexample, Result

NAME = "attention_mixes_values"

n, d = sympy.symbols("n d", integer=True, positive=True)
j, k, r, c = sympy.symbols("j k r c", integer=True, positive=True)
s = sympy.IndexedBase("s", real=True)
a = sympy.IndexedBase("a", nonnegative=True)
v = sympy.IndexedBase("v", real=True)
q = sympy.IndexedBase("q", real=True)
K = sympy.IndexedBase("K", real=True)
u = sympy.IndexedBase("u", nonnegative=True)
ell = sympy.IndexedBase("ell", nonnegative=True)
M, L, Delta = sympy.symbols("M L Delta", real=True)


class Weight(NamedOperator, sympy.Function):
    r"""``w_j``: the masked softmax weight of key ``j`` (prints short, unfolds to its definition)."""

    nargs = 1

    def unfold(self):
        return MaskedSoftmaxAt(s[k], a[k], k, self.args[0], n)

    def _latex(self, printer, exp=None):
        text = "w_{%s}" % printer._print(self.args[0])
        return text if exp is None else "w_{%s}^{%s}" % (printer._print(self.args[0]), exp)


class QueryWeight(NamedOperator, sympy.Function):
    r"""``w_j(q)``: the weight of key ``j`` for the scores ``s_k = \sum_c q_c K_{kc}`` of the query ``q``."""

    nargs = 1

    def unfold(self):
        return MaskedSoftmaxAt(Sum(q[c] * K[k, c], (c, 1, d)), a[k], k, self.args[0], n)

    def _latex(self, printer, exp=None):
        text = "w_{%s}(q)" % printer._print(self.args[0])
        return text if exp is None else r"\left(%s\right)^{%s}" % (text, exp)


class Z(NamedOperator, sympy.Expr):
    r"""``Z = \sum_k a_k e^{s_k}``, the masked denominator."""

    def __new__(cls):
        return sympy.Expr.__new__(cls)

    def unfold(self):
        return Sum(a[k] * exp(s[k]), (k, 1, n))

    def _latex(self, printer, exp=None):
        return "Z" if exp is None else "Z^{%s}" % exp

    def _sympystr(self, printer):
        return "Z"


def w(entry, term=None):
    """The masked softmax weight of key ``entry`` for the scores ``term`` (default ``s_k``, printed ``w_j``)."""
    return Weight(entry) if term is None else QueryWeight(entry)


def _z():
    return Z()


SCORE = Sum(q[c] * K[k, c], (c, 1, d))
NAMES = Assumption("D1", "the names $w_j$, $Z$ and $w_j(q)$ (printed short; the checker unfolds them)",
                   r"w_j = \operatorname{softmax}_a(s)_j = \frac{a_j e^{s_j}}{Z},\ Z = \sum_{k=1}^{n} a_k e^{s_k},\ "
                   r"w_j(q) = \operatorname{softmax}_a\left(\textstyle\sum_c q_c K_{kc}\right)_j")
ALLOWED = Assumption("A1", "$a_k = 1$ for an allowed key and $0$ for a blocked one; at least one key is allowed, so "
                     "$\\sum_k a_k e^{t_k} > 0$ for all real $t_k$: for the scores $s_k$, for $q K_k^{T}$ and for $0$",
                     r"\sum_{k=1}^{n} a_k e^{s_k} > 0,\ \sum_{k=1}^{n} a_k e^{q K_k^{T}} > 0,\ \sum_{k=1}^{n} a_k > 0",
                     condition=[Sum(a[k] * exp(s[k]), (k, 1, n)) > 0, Sum(a[k] * exp(SCORE), (k, 1, n)) > 0, Sum(a[k], (k, 1, n)) > 0])
UPPER = Assumption("B1", "$M$ is at least every allowed value of the coordinate: $u_j := a_j (M - v_j) \\ge 0$",
                   r"u_j = a_j (M - v_j) \ge 0",
                   rewrite=lambda e: e.replace(lambda x: isinstance(x, sympy.Indexed) and x.base == u,
                                               lambda x: a[x.indices[0]] * (M - v[x.indices[0]])))
LOWER = Assumption("B2", "$L$ is at most every allowed value of the coordinate: $\\ell_j := a_j (v_j - L) \\ge 0$",
                   r"\ell_j = a_j (v_j - L) \ge 0",
                   rewrite=lambda e: e.replace(lambda x: isinstance(x, sympy.Indexed) and x.base == ell,
                                               lambda x: a[x.indices[0]] * (v[x.indices[0]] - L)))
ZERO_QUERY = Assumption("A2", "the query is zero", r"q = 0",
                        rewrite=lambda e: e.replace(lambda x: isinstance(x, sympy.Indexed) and x.base == q,
                                                    lambda x: sympy.Integer(0)))
ROW = Assumption("A3", "the changed row $r$ is one of the $n$ keys", r"1 \le r \le n", condition=r <= n)


def _output(values):
    return Sum(w(j) * values, (j, 1, n))


def upper_chain() -> Derivation:
    return Derivation(
        "No output coordinate exceeds the largest allowed value",
        M - _output(v[j]),
        [
            Step(Sum(w(j) * (M - v[j]), (j, 1, n)), "the weights sum to $1$", using=("A1",)),
            Step(Sum(Frac(exp(s[j]) * a[j] * (M - v[j]), _z()), (j, 1, n)), "definition of the weights",
                 using=("A1",)),
            Step(Sum(Frac(exp(s[j]) * u[j], _z()), (j, 1, n)), "the name $u_j$", using=("A1", "B1")),
            Step(sympy.Integer(0), "a sum of terms $e^{s_j} u_j / Z \\ge 0$", relation=">=", using=("A1",)),
        ],
        assumptions=[NAMES, ALLOWED, UPPER],
        scope=Scope.proved("every $n \\ge 1$, every mask with an allowed key, all real scores and values, and "
                           "every coordinate (write $v_j = V_{jc}$)"),
        note="$o_c = \\sum_j w_j v_j$ with $v_j = V_{jc}$; so $o_c \\le \\max_{j \\text{ allowed}} V_{jc}$.",
    )


def lower_chain() -> Derivation:
    return Derivation(
        "No output coordinate is below the smallest allowed value",
        _output(v[j]) - L,
        [
            Step(Sum(w(j) * (v[j] - L), (j, 1, n)), "the weights sum to $1$", using=("A1",)),
            Step(Sum(Frac(exp(s[j]) * a[j] * (v[j] - L), _z()), (j, 1, n)), "definition of the weights",
                 using=("A1",)),
            Step(Sum(Frac(exp(s[j]) * ell[j], _z()), (j, 1, n)), "the name $\\ell_j$", using=("A1", "B2")),
            Step(sympy.Integer(0), "a sum of terms $e^{s_j} \\ell_j / Z \\ge 0$", relation=">=", using=("A1",)),
        ],
        assumptions=[NAMES, ALLOWED, LOWER],
        scope=Scope.proved("every $n \\ge 1$, every mask with an allowed key, all real scores and values, and "
                           "every coordinate"),
    )


def zero_query_chain() -> Derivation:
    score = SCORE
    return Derivation(
        "A zero query averages the allowed values",
        Sum(w(j, score) * v[j], (j, 1, n)),
        [
            Step(Sum(Frac(a[j], Sum(a[k], (k, 1, n))) * v[j], (j, 1, n)),
                 "the scores $s_k = \\sum_c q_c K_{kc}$ are all $0$ and $e^0 = 1$: equal weights on the allowed keys",
                 using=("A1", "A2")),
            Step(Frac(Sum(a[j] * v[j], (j, 1, n)), Sum(a[k], (k, 1, n))),
                 "the mean of the allowed values", using=("A1",), rules=("sum.factor_out",)),
        ],
        assumptions=[NAMES, ALLOWED, ZERO_QUERY],
        scope=Scope.proved("every $n \\ge 1$, every width $d$, every mask with an allowed key and all real keys and "
                           "values"),
    )


def value_change_chain() -> Derivation:
    return Derivation(
        "Changing value row $r$ by $\\Delta$ moves the output by $w_r \\Delta$",
        _output(v[j] + KroneckerDelta(j, r) * Delta) - _output(v[j]),
        [
            Step(Sum(w(j) * KroneckerDelta(j, r) * Delta, (j, 1, n)), "linearity: the weights do not contain $v$",
                 using=("A1",)),
            Step(w(r) * Delta, "only $j = r$ contributes", using=("A1", "A3"), rules=("sum.delta",)),
        ],
        assumptions=[NAMES, ALLOWED, ROW],
        scope=Scope.proved("every $n \\ge 1$, every mask with an allowed key, every row $r$, all real scores, values "
                           "and every real $\\Delta$ (one coordinate; apply it to each)"),
        note="The weights $w_j$ are computed from the scores, which involve queries and keys only, so they are "
             "the same before and after the change.",
    )


# The guide's lab (examples/000_lab.toml).
X = sympy.ImmutableMatrix([[1, 0], [0, 1], [1, 1]])
W_Q = sympy.ImmutableMatrix(sympy.eye(2))
W_K = sympy.ImmutableMatrix([[1, 1], [0, 1]])
W_V = sympy.ImmutableMatrix([[1, 0], [0, 2]])


def lab(values=None, query=None):
    values = X * W_V if values is None else values
    return attention(X * W_Q if query is None else query, X * W_K, values)


def _row(*entries):
    return sympy.ImmutableMatrix([list(entries)])


def guide_check() -> Check:
    before = lab()
    changed = (X * W_V).as_mutable()
    changed[2, 1] = 4
    after = lab(sympy.ImmutableMatrix(changed))
    zero = attention(sympy.zeros(1, 2), X * W_K, X * W_V)
    a3 = before.weights[2, 2]
    rises = before.output.row(2)
    values = X * W_V
    cases = [
        Case("zero query: equal weights", Computed(r"w(q = 0)", zero.weights), _row(*[Rational(1, 3)] * 3)),
        Case("zero query: the mean of the values", Computed(r"o(q = 0)", zero.output),
             _row(Rational(2, 3), Rational(4, 3))),
        Case("rises: weights unchanged by the value change", Computed(r"w'", after.weights.row(2)),
             Computed(r"w", before.weights.row(2))),
        Case("rises: the output moves by $(0, 2 a_3)$", Computed(r"o' - o", after.output.row(2) - rises),
             Computed(r"(0, 2 a_3)", _row(0, 2 * a3))),
        Case("$2 a_3 > 1.1515$", Rational(11515, 10000), Computed(r"2 a_3", 2 * a3), "<"),
        Case("$2 a_3 < 1.1525$", Computed(r"2 a_3", 2 * a3), Rational(11525, 10000), "<"),
        Case("rises, first coordinate $\\ge$ smallest value $0$", min(values[:, 0]), Computed(r"o_1", rises[0]), "<="),
        Case("rises, first coordinate $\\le$ largest value $1$", Computed(r"o_1", rises[0]), max(values[:, 0]), "<="),
        Case("rises, second coordinate $\\ge$ smallest value $0$", min(values[:, 1]), Computed(r"o_2", rises[1]),
             "<="),
        Case("rises, second coordinate $\\le$ largest value $2$", Computed(r"o_2", rises[1]), max(values[:, 1]),
             "<="),
    ]
    return Check(
        "The numbers of the guide, exactly",
        r"V = X W_V = \begin{bmatrix}1 & 0\\ 0 & 2\\ 1 & 2\end{bmatrix}, \quad "
        r"a = \operatorname{softmax}\left(\sqrt{2}, \tfrac{\sqrt{2}}{2}, \tfrac{3\sqrt{2}}{2}\right) "
        r"\approx (0.284, 0.140, 0.576)",
        cases,
        scope=Scope.checked("the guide's lab ($n = 3$, $d = 2$, no mask), exactly; $2 a_3 \\approx 1.152$ certified "
                            "by rational bounds"),
        note="Computed by the library's exact attention; the value change sets $V_{32}$ from $2$ to $4$.",
        shown=[1, 3],
    )


def key_change_counterexample() -> Counterexample:
    keys = (X * W_K).as_mutable()
    keys[2, 1] = 4
    changed = attention(X * W_Q, sympy.ImmutableMatrix(keys), X * W_V)
    return Counterexample(
        "Changing a key row instead does move the weights",
        [(r"K_{32}", sympy.Integer(4))],
        Computed(r"w'_3", changed.weights[2, 2]),
        Computed(r"w_3", lab().weights[2, 2]),
        scope=Scope.counterexample("the guide's lab with the key of rises changed from $(1, 2)$ to $(1, 4)$"),
        note="Values enter only after the weights; keys enter the scores.",
    )


def build() -> Result:
    return Result(
        NAME,
        "Attention mixes values",
        __doc__.split("\n", 2)[2].strip(),
        [upper_chain(), lower_chain(), zero_query_chain(), value_change_chain(), guide_check(),
         key_change_counterexample()],
    )
