"""ALiBi under a causal mask is a bias of +slope times the key position.

ALiBi adds $-m\\,(i - j)$ to the score of query $i$ and key $j$ ($m > 0$ the head's slope).
Under a causal mask query $i$ sees the keys $j = 1, \\dots, i$ only, and on that row the part
$-m\\,i$ is the same for every key: shift invariance removes it, so the weights are those of
the bias $+m\\,j$ per key, for every length $n$.
"""

import sympy
from sympy import Mul, Sum, exp

from symbolic_attn.model.masks import Mask
from symbolic_attn.proofs.chain import Computed, Derivation, Scope, Step
from symbolic_attn.proofs.operators import MaskedSoftmax, SoftmaxAt
from symbolic_attn.proofs.prove import Frac
from symbolic_attn.proofs.result import Case, Check, Result

NAME = "alibi_causal"

i, j, k = sympy.symbols("i j k", integer=True, positive=True)
m = sympy.Symbol("m", positive=True)
s = sympy.IndexedBase("s", real=True)


def _row_sum(term):
    return Sum(term, (k, 1, i))


def alibi_chain() -> Derivation:
    shift = -m * i
    return Derivation(
        "Row $i$ of causal ALiBi, every $n$",
        SoftmaxAt(s[k] + m * (k - i), k, j, i),
        [
            Step(Frac(exp(s[j] + m * (j - i)), _row_sum(exp(s[k] + m * (k - i)))), "definition of softmax"),
            Step(Frac(Mul(exp(shift), exp(s[j] + m * j), evaluate=False),
                      _row_sum(Mul(exp(shift), exp(s[k] + m * k), evaluate=False))), "$e^{a+b} = e^a e^b$"),
            Step(Frac(Mul(exp(shift), exp(s[j] + m * j), evaluate=False),
                      Mul(exp(shift), _row_sum(exp(s[k] + m * k)), evaluate=False)),
                 "$e^{-m i}$ is free of $k$", rules=("sum.factor_out",)),
            Step(Frac(exp(s[j] + m * j), _row_sum(exp(s[k] + m * k))), "cancel $e^{-m i} > 0$"),
            Step(SoftmaxAt(s[k] + m * k, k, j, i), "definition of softmax"),
        ],
        scope=Scope.proved("every query $i \\ge 1$ (so every length $n$), all real scores and every slope $m > 0$"),
        note="Query $i$ under the causal mask: the allowed keys are $k = 1, \\dots, i$ (blocked keys leave "
             "the denominator).",
    )


def _alibi(size, slope):
    return sympy.ImmutableMatrix(size, size, lambda r, c: -slope * (r - c))


def _key_bias(size, slope):
    return sympy.ImmutableMatrix(size, size, lambda r, c: slope * (c + 1))


def matrices_check() -> Check:
    cases, summary = [], []
    slope = sympy.Symbol("m", positive=True)
    for size in range(1, 5):
        scores = sympy.ImmutableMatrix(size, size, lambda r, c: sympy.Symbol(f"s_{r + 1}{c + 1}", real=True))
        grid = sympy.ImmutableMatrix(Mask.causal(size).keep_grid())
        alibi = MaskedSoftmax(scores + _alibi(size, slope), grid)
        bias = MaskedSoftmax(scores + _key_bias(size, slope), grid)
        cases.append(Case(f"$n = {size}$", Computed(alibi, alibi.unfold()), Computed(bias, bias.unfold())))
        summary.append(f"$n = {size}$: symbolic scores $s_{{ij}}$ and slope $m$, causal mask")
    return Check(
        "Whole matrices, small $n$ (extra evidence)",
        r"\operatorname{softmax}_M\!\left(S - m\,(i - j)_{ij}\right) = \operatorname{softmax}_M\!\left(S + m\,(j)_{ij}\right)"
        r"\quad (M \text{ causal})",
        cases,
        scope=Scope.checked("every $n \\le 4$ with symbolic scores and slope (the library's masked softmax)"),
        summary=summary,
    )


def build() -> Result:
    return Result(
        NAME,
        "ALiBi under a causal mask",
        __doc__.split("\n", 2)[2].strip(),
        [alibi_chain(), matrices_check()],
    )
