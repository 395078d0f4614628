"""Masked renormalization is not zeroing.

A mask removes blocked keys before normalizing: the masked weights are the softmax over
the allowed keys only.  Zeroing the blocked weights of the full softmax afterwards is a
different operation: those weights sum to $1$ minus the blocked mass, which is $< 1$
whenever a key is blocked.  Renormalizing them recovers the masked weights.  Setting a
blocked score to $0$ is different again, since $e^0 = 1$ stays in the denominator.
"""

import itertools

import sympy
from sympy import Sum, exp, log

from symbolic_attn.model.attention import attention_from_scores, softmax
from symbolic_attn.proofs.prove import Frac
from symbolic_attn.proofs.chain import Assumption, Computed, Derivation, Scope, Step
from symbolic_attn.proofs.operators import MaskedSoftmaxAt, NamedOperator, SoftmaxAt
from symbolic_attn.model.masks import Mask
from symbolic_attn.proofs.result import Case, Check, Counterexample, Result

NAME = "masked_renormalization"

n = sympy.Symbol("n", integer=True, positive=True)
j, k = sympy.symbols("j k", integer=True, positive=True)
b = sympy.Symbol("b", integer=True, positive=True)
s = sympy.IndexedBase("s", real=True)
a = sympy.IndexedBase("a", nonnegative=True)
beta = sympy.IndexedBase("beta", nonnegative=True)

Z = sympy.Symbol("Z", positive=True)


def _sum(term):
    return Sum(term, (k, 1, n))


class ZeroedWeight(NamedOperator, sympy.Function):
    r"""``z_j = a_j \operatorname{softmax}(s)_j``: the full softmax with blocked weights set to 0."""

    nargs = 1

    def unfold(self):
        return a[self.args[0]] * SoftmaxAt(s[k], k, self.args[0], n)

    def _latex(self, printer, exp=None):
        text = "z_{%s}" % printer._print(self.args[0])
        return text if exp is None else "%s^{%s}" % (text, exp)


def _blocked(expr):
    return expr.replace(lambda e: isinstance(e, sympy.Indexed) and e.base == a, lambda e: 1 - beta[e.indices[0]])


PARTITION = Assumption("D1", "$Z$ names the softmax denominator", r"Z = \sum_{k=1}^{n} e^{s_k} > 0",
                       rewrite=lambda e: e.xreplace({Z: Sum(exp(s[k]), (k, 1, n))}))
INDICATOR = Assumption("A1", "$a_k = 1$ if key $k$ is allowed and $a_k = 0$ if it is blocked; "
                       "at least one key is allowed, so the masked denominator is positive",
                       r"\sum_{k=1}^{n} a_k e^{s_k} > 0", condition=_sum(a[k] * exp(s[k])) > 0)
COMPLEMENT = Assumption("A2", "$\\beta_k = 1 - a_k$ marks the blocked keys ($\\beta_k \\ge 0$)",
                        r"a_k = 1 - \beta_k", rewrite=_blocked)
BLOCKED = Assumption("A3", "key $b$ is blocked", r"\beta_b = 1,\ 1 \le b \le n",
                     rewrite=lambda e: e.xreplace({beta[b]: sympy.Integer(1)}), condition=b <= n)
POSITIVE_MASS = Assumption("P1", "proved in the previous part: the blocked mass is positive",
                           r"\sum_{k=1}^{n} \beta_k e^{s_k} > 0", condition=_sum(beta[k] * exp(s[k])) > 0)


def renormalization_chain() -> Derivation:
    return Derivation(
        "Renormalized zeroed weights are the masked weights",
        Frac(ZeroedWeight(j), _sum(ZeroedWeight(k))),
        [
            Step(Frac(Frac(a[j] * exp(s[j]), Z), _sum(Frac(a[k] * exp(s[k]), Z))),
                 "definition $z_j = a_j \\operatorname{softmax}(s)_j$", using=("D1", "A1")),
            Step(Frac(Frac(a[j] * exp(s[j]), Z), Frac(_sum(a[k] * exp(s[k])), Z)),
                 "$1/Z$ does not depend on $k$: it leaves the sum", using=("A1",), rules=("sum.factor_out",)),
            Step(Frac(a[j] * exp(s[j]), _sum(a[k] * exp(s[k]))), "cancel $Z > 0$", using=("A1",)),
            Step(MaskedSoftmaxAt(s[k], a[k], k, j, n),
                 "definition of the masked softmax (blocked keys leave the denominator)", using=("A1",)),
        ],
        assumptions=[PARTITION, INDICATOR],
        scope=Scope.proved("every $n \\ge 1$, all real scores and every mask with an allowed key"),
    )


def positive_mass_chain() -> Derivation:
    return Derivation(
        "The blocked mass is positive",
        _sum(beta[k] * exp(s[k])),
        [
            Step(beta[b] * exp(s[b]), "a sum of nonnegative terms is at least its term $k = b$", relation=">=",
                 using=("A3",), rules=("sum.ge_term",)),
            Step(exp(s[b]), "$\\beta_b = 1$: key $b$ is blocked", using=("A3",)),
            Step(sympy.Integer(0), "$e^{x} > 0$", relation=">"),
        ],
        assumptions=[COMPLEMENT, BLOCKED],
        scope=Scope.proved("every $n \\ge 1$, all real scores and every mask with a blocked key $b$"),
    )


def blocked_mass_chain() -> Derivation:
    return Derivation(
        "Zeroed weights sum to 1 minus the blocked mass",
        _sum(ZeroedWeight(k)),
        [
            Step(Frac(_sum(exp(s[k])) - _sum(beta[k] * exp(s[k])), Z),
                 "$a_k = 1 - \\beta_k$, split the sum", using=("D1", "A2")),
            Step(1 - Frac(_sum(beta[k] * exp(s[k])), Z), "$\\sum_k e^{s_k} = Z$", using=("D1",)),
            Step(sympy.Integer(1), "the blocked mass is positive (previous part) and $Z > 0$", relation="<",
                 using=("P1",)),
        ],
        assumptions=[PARTITION, COMPLEMENT, POSITIVE_MASS],
        scope=Scope.proved("every $n \\ge 1$, all real scores and every mask with a blocked key (strict inequality)"),
    )


def _symbolic_row(size):
    return sympy.ImmutableMatrix([[sympy.Symbol(f"s_{q}", real=True) for q in range(1, size + 1)]])


def masks_check() -> Check:
    """For every n <= 4 and every mask with a blocked and an allowed key, on symbolic scores."""
    cases, summary = [], []
    for size in range(2, 5):
        row = _symbolic_row(size)
        patterns = [p for p in itertools.product((1, 0), repeat=size) if 0 < sum(p) < size]
        for pattern in patterns:
            mask = Mask.keep([list(pattern)])
            masked = softmax(row, mask)
            zeroed = softmax(row, mask, masking="zero_after_softmax")
            zero_score = softmax(row, mask, masking="zero_score")
            total = sum(zeroed)
            where = f"$n = {size}$, allowed {list(pattern)}"
            cases.append(Case(f"{where}: renormalized zeroed = masked",
                              Computed(r"z / \textstyle\sum_k z_k", zeroed / total), Computed(r"\operatorname{softmax}_M(s)", masked)))
            cases.append(Case(f"{where}: zeroed weights sum below 1", Computed(r"\sum_k z_k", total), sympy.Integer(1), "<"))
            for q in (q for q in range(size) if pattern[q]):
                cases.append(Case(f"{where}: blocked score set to 0 lowers allowed weight {q + 1}",
                                  Computed(r"\operatorname{softmax}(s|_{s_b = 0})_j", zero_score[q]),
                                  Computed(r"\operatorname{softmax}_M(s)_j", masked[q]), "<"))
        summary.append(f"$n = {size}$: all {len(patterns)} masks with at least one blocked and one allowed key, "
                       f"scores $s_1, \\dots, s_{size}$ symbolic")
    return Check(
        "Every mask, small $n$, symbolic scores",
        r"\frac{z}{\sum_k z_k} = \operatorname{softmax}_M(s), \qquad \sum_k z_k < 1, \qquad "
        r"\operatorname{softmax}(s|_{s_b = 0})_j < \operatorname{softmax}_M(s)_j \ (a_j = 1)",
        cases,
        scope=Scope.checked("every $n \\le 4$ and every mask with a blocked and an allowed key, fully symbolic "
                            "real scores (extra evidence beside the proofs for every $n$)"),
        note="Computed by the library's softmax in its three masking settings: masked (the default), "
             "zeroed after softmax (`zero_after_softmax`) and blocked score set to 0 (`zero_score`).",
        summary=summary,
    )


# The reference document's row: scores 0, ln 2, ln 3; the third key is blocked.
SCORES = sympy.ImmutableMatrix([[0, log(2), log(3)]])
VALUES = sympy.ImmutableMatrix([[1, 0], [0, 2], [3, 1]])
KEEP = Mask.keep([[1, 1, 0]])
R = sympy.Rational


def _row(*entries):
    return sympy.ImmutableMatrix([list(entries)])


def reference_check() -> Check:
    full = attention_from_scores(SCORES, VALUES)
    masked = attention_from_scores(SCORES, VALUES, KEEP)
    zeroed = attention_from_scores(SCORES, VALUES, KEEP, masking="zero_after_softmax")
    zero_score = attention_from_scores(SCORES, VALUES, KEEP, masking="zero_score")
    new_values = VALUES.as_mutable()
    new_values[1, :] = _row(0, 20)
    replaced = attention_from_scores(SCORES, new_values, KEEP)
    cases = [
        Case("softmax", Computed(r"\operatorname{softmax}(s)", full.weights), _row(R(1, 6), R(1, 3), R(1, 2))),
        Case("output", Computed(r"\operatorname{softmax}(s) V", full.output), _row(R(5, 3), R(7, 6))),
        Case("masked (renormalized)", Computed(r"\operatorname{softmax}_M(s)", masked.weights), _row(R(1, 3), R(2, 3), 0)),
        Case("masked output", Computed(r"\operatorname{softmax}_M(s) V", masked.output), _row(R(1, 3), R(4, 3))),
        Case("zeroed after softmax", Computed(r"z", zeroed.weights), _row(R(1, 6), R(1, 3), 0)),
        Case("their sum", Computed(r"\textstyle\sum_k z_k", sum(zeroed.weights)), R(1, 2)),
        Case("zeroed output", Computed(r"z V", zeroed.output), _row(R(1, 6), R(2, 3))),
        Case("blocked score set to 0", Computed(r"\operatorname{softmax}(0, \ln 2, 0)", zero_score.weights),
             _row(R(1, 4), R(1, 2), R(1, 4))),
        Case("its output", Computed(r"\operatorname{softmax}(0, \ln 2, 0) V", zero_score.output), _row(1, R(5, 4))),
        Case("masked, second value replaced by (0, 20)", Computed(r"\operatorname{softmax}_M(s) V'", replaced.output),
             _row(R(1, 3), R(40, 3))),
    ]
    return Check(
        "The reference row: $s = (0, \\ln 2, \\ln 3)$, third key blocked",
        r"V = " + r"\begin{bmatrix}1 & 0 \\ 0 & 2 \\ 3 & 1\end{bmatrix}, \qquad M = (1, 1, 0)",
        cases,
        scope=Scope.checked("the reference document's numbers, exactly"),
        note="Every number of the reference explainer, recomputed exactly by the library and compared.",
        shown=range(len(cases)),
    )


def zeroing_counterexample() -> Counterexample:
    return Counterexample(
        "Zeroing is not masking",
        [("s", SCORES), ("M", _row(1, 1, 0))],
        Computed(r"\operatorname{softmax}_M(s)", softmax(SCORES, KEEP)),
        Computed(r"z", softmax(SCORES, KEEP, masking="zero_after_softmax")),
        scope=Scope.counterexample("the reference row, $n = 3$"),
    )


def build() -> Result:
    return Result(
        NAME,
        "Masked renormalization is not zeroing",
        __doc__.split("\n", 2)[2].strip(),
        [renormalization_chain(), positive_mass_chain(), blocked_mass_chain(), masks_check(), reference_check(), zeroing_counterexample()],
    )
