"""ALiBi under a causal mask is a bias of $+m\\,j$ per key.

ALiBi adds $-m(i - j)$ to the score of query $i$ and key $j \\le i$ (slope $m$; the causal
mask blocks $j > i$).  Since $-m(i - j) = m\\,j - m\\,i$ and $-m\\,i$ is the same for every key
of row $i$, shift invariance (result b) removes it: the masked weights equal those with
the bias $+m\\,j$ alone -- for every $n$ and every slope.  Without the causal mask the
bias $-m|i - j|$ is not of this form.
"""

import sympy
from sympy import Mul, Sum, exp

from symbolic_attn.model.attention import softmax
from symbolic_attn.model.masks import Mask
from symbolic_attn.proofs.chain import Assumption, Computed, Derivation, Scope, Step
from symbolic_attn.proofs.operators import MaskedSoftmaxAt
from symbolic_attn.proofs.prove import Frac
from symbolic_attn.proofs.result import Case, Check, Counterexample, Result

NAME = "alibi_causal"

n = sympy.Symbol("n", integer=True, positive=True)
i, j, k = sympy.symbols("i j k", integer=True, positive=True)
s = sympy.IndexedBase("s", real=True)
x = sympy.IndexedBase("x", real=True)
a = sympy.IndexedBase("a", nonnegative=True)
m = sympy.Symbol("m", real=True)


def _sum(term):
    return Sum(term, (k, 1, n))


SELF = Assumption("A1", "$a_k = 1$ for an allowed key and $0$ for a blocked one; the causal mask lets query $i$ "
                  "see itself ($1 \\le i \\le n$)", r"a_i = 1",
                  rewrite=lambda e: e.xreplace({a[i]: sympy.Integer(1)}), condition=i <= n)
POSITIVE = Assumption(
    "P1", "proved in the first part for every real sequence, so for $s_k - m(i - k)$ and for $s_k + m k$",
    r"\sum_{k} a_k e^{s_k - m(i-k)} > 0,\ \sum_{k} a_k e^{s_k + m k} > 0",
    condition=[_sum(a[k] * exp(s[k] - m * (i - k))) > 0, _sum(a[k] * exp(s[k] + m * k)) > 0])


def positive_chain() -> Derivation:
    return Derivation(
        "A causal row has an allowed key",
        _sum(a[k] * exp(x[k])),
        [
            Step(a[i] * exp(x[i]), "a sum of nonnegative terms is at least its term $k = i$", relation=">=",
                 using=("A1",), rules=("sum.ge_term",)),
            Step(exp(x[i]), "the query sees itself: $a_i = 1$", using=("A1",)),
            Step(sympy.Integer(0), "$e^{t} > 0$", relation=">"),
        ],
        assumptions=[SELF],
        scope=Scope.proved("every $n \\ge 1$, every row $i$, every real sequence $x$ and every mask that lets "
                           "query $i$ see itself (the causal mask does)"),
    )


def alibi_chain() -> Derivation:
    shift = exp(-m * i)
    return Derivation(
        "The constant $-m\\,i$ of each row drops out",
        MaskedSoftmaxAt(s[k] - m * (i - k), a[k], k, j, n),
        [
            Step(Frac(a[j] * exp(s[j] - m * (i - j)), _sum(a[k] * exp(s[k] - m * (i - k)))),
                 "definition of the masked softmax", using=("P1",)),
            Step(Frac(Mul(shift, a[j] * exp(s[j] + m * j), evaluate=False),
                      _sum(Mul(shift, a[k] * exp(s[k] + m * k), evaluate=False))),
                 "$-m(i - k) = m k - m i$ and $e^{u+v} = e^u e^v$", using=("P1",)),
            Step(Frac(Mul(shift, a[j] * exp(s[j] + m * j), evaluate=False),
                      Mul(shift, _sum(a[k] * exp(s[k] + m * k)), evaluate=False)),
                 "$e^{-m i}$ does not depend on $k$: it leaves the sum", using=("P1",), rules=("sum.factor_out",)),
            Step(Frac(a[j] * exp(s[j] + m * j), _sum(a[k] * exp(s[k] + m * k))), "cancel $e^{-m i} \\ne 0$",
                 using=("P1",)),
            Step(MaskedSoftmaxAt(s[k] + m * k, a[k], k, j, n), "definition of the masked softmax", using=("P1",)),
        ],
        assumptions=[POSITIVE],
        scope=Scope.proved("every $n \\ge 1$, every row $i$ and key $j$, all real scores and every real slope $m$ "
                           "(the step holds for any mask whose row has an allowed key)"),
        note="Row $i$ of the causal mask: $a_k = 1$ for $k \\le i$, else $0$.",
    )


def alibi_bias(size, slope):
    """ALiBi's causal bias ``-slope (i - j)`` (blocked entries are masked anyway)."""
    return sympy.ImmutableMatrix(size, size, lambda r, c: -slope * (r - c))


def key_bias(size, slope):
    """The per-key bias ``+slope j`` (1-based ``j``)."""
    return sympy.ImmutableMatrix(size, size, lambda r, c: slope * (c + 1))


def _symbolic_scores(size):
    return sympy.ImmutableMatrix(size, size, lambda r, c: sympy.Symbol(f"s_{r + 1}{c + 1}", real=True))


def causal_check() -> Check:
    cases, summary = [], []
    slope = sympy.Symbol("m", real=True)
    for size in range(1, 6):
        scores = _symbolic_scores(size)
        causal = Mask.causal(size)
        cases.append(Case(f"$n = {size}$",
                          Computed(r"\operatorname{softmax}_M(S + B_{\mathrm{ALiBi}})",
                                   softmax(scores + alibi_bias(size, slope), causal)),
                          Computed(r"\operatorname{softmax}_M(S + m\,\mathbf{1} j^{T})",
                                   softmax(scores + key_bias(size, slope), causal))))
        summary.append(f"$n = {size}$: causal mask, $S$ with $n^2$ independent symbols, slope $m$ symbolic")
    return Check(
        "The masked softmax of the library, small $n$ (extra evidence)",
        r"\operatorname{softmax}_M(S + B_{\mathrm{ALiBi}}) = \operatorname{softmax}_M(S + m\,\mathbf{1} j^{T}), "
        r"\quad (B_{\mathrm{ALiBi}})_{ij} = -m(i - j)",
        cases,
        scope=Scope.checked("every $n \\le 5$ with the causal mask, fully symbolic scores and a symbolic slope"),
        note="Whole weight matrices computed by the library's exact masked softmax.",
        summary=summary,
    )


def bidirectional_counterexample() -> Counterexample:
    size, slope = 2, sympy.Integer(1)
    zeros = sympy.zeros(size, size)
    symmetric = sympy.ImmutableMatrix(size, size, lambda r, c: -slope * abs(r - c))
    return Counterexample(
        "Without the causal mask it fails",
        [("n", sympy.Integer(size)), ("m", slope), ("S", sympy.ImmutableMatrix(zeros))],
        Computed(r"\operatorname{softmax}(S - m|i - j|)", softmax(symmetric)),
        Computed(r"\operatorname{softmax}(S + m\,\mathbf{1} j^{T})", softmax(zeros + key_bias(size, slope))),
        scope=Scope.counterexample("$n = 2$, all keys visible, $m = 1$, $S = 0$"),
        note="Bidirectional ALiBi uses $-m|i - j|$; for the first query the later key is penalised, "
             "while $+m j$ favours it.",
    )


def build() -> Result:
    return Result(
        NAME,
        "ALiBi under a causal mask",
        __doc__.split("\n", 2)[2].strip(),
        [positive_chain(), alibi_chain(), causal_check(), bidirectional_counterexample()],
    )
