"""Where the identities stop: exact counterexamples to their tempting extensions.

Each identity of these notes needs its hypotheses.  Dropping one gives a false statement,
and a single exact instance shows it: the two sides below are computed by the library's
exact core (or written out from the definitions) and certified to differ.  Moving only one
position changes a RoPE score; an odd width leaves a sine without its cosine; ALiBi's
$-m|i - j|$ without a causal mask is not a per-key bias; LayerNorm is not invariant under
a negative scale, nor under any scale once $\\varepsilon > 0$; the softmax Jacobian is not
$\\operatorname{diag}(p)$; and changing a key, unlike a value, moves the weights.
"""

import sympy
from sympy import cos, pi, sin, sqrt

from symbolic_attn.model.attention import attention, softmax
from symbolic_attn.proofs.chain import Computed, Scope
from symbolic_attn.proofs.result import Case, Check, Counterexample, Result

NAME = "identity_limits"

R = sympy.Rational


def _rotation(angle):
    return sympy.ImmutableMatrix([[cos(angle), -sin(angle)], [sin(angle), cos(angle)]])


def rope_one_position() -> Counterexample:
    q = sympy.ImmutableMatrix([1, 0])
    quarter = pi / 2
    same = ((_rotation(0) * q).T * (_rotation(0) * q))[0, 0]
    moved = ((_rotation(0) * q).T * (_rotation(quarter) * q))[0, 0]
    return Counterexample(
        "RoPE: moving one position changes the score",
        [("d", sympy.Integer(2)), (r"\theta_1", quarter), ("q = k", q)],
        Computed(r"(R_0 q)^{T} (R_0 k)", same),
        Computed(r"(R_0 q)^{T} (R_1 k)", moved),
        scope=Scope.counterexample("$d = 2$, $\\theta_1 = \\pi/2$, $q = k = (1, 0)$, offsets $0$ and $1$"),
        note="The score depends on $n - m$ only: shifting both positions leaves it, shifting one does not.",
    )


def sinusoidal_odd_width() -> Counterexample:
    # The paper's frequencies for width 3: a pair at frequency 1, then a lone sine at 10000^(-2/3).
    lone = sympy.Integer(10000) ** R(-2, 3)

    def pe(position):
        return sympy.ImmutableMatrix([sin(position), cos(position), sin(position * lone)])

    return Counterexample(
        "Sinusoidal positions: an unpaired sine breaks the shift",
        [(r"d_{\text{model}}", sympy.Integer(3)), (r"(\omega_1, \omega_2)", sympy.ImmutableMatrix([[1, lone]]))],
        Computed(r"|PE(0)|^2", (pe(0).T * pe(0))[0, 0]),
        Computed(r"|PE(1)|^2", (pe(1).T * pe(1))[0, 0]),
        scope=Scope.counterexample("model width $3$ (odd), offset $k = 0$, positions $0$ and $1$"),
        note="With $PE(p) = (\\sin p, \\cos p, \\sin \\omega_2 p)$ the dot product $PE(p) \\cdot PE(p + 0)$ depends "
             "on $p$.",
    )


def alibi_bidirectional() -> Counterexample:
    size, slope = 2, sympy.Integer(1)
    zeros = sympy.ImmutableMatrix(sympy.zeros(size, size))
    symmetric = sympy.ImmutableMatrix(size, size, lambda r, c: -slope * abs(r - c))
    per_key = sympy.ImmutableMatrix(size, size, lambda r, c: slope * (c + 1))
    return Counterexample(
        "ALiBi: without the causal mask it is not a per-key bias",
        [("n", sympy.Integer(size)), ("m", slope), ("S", zeros)],
        Computed(r"\operatorname{softmax}(-m|i - j|)", softmax(zeros + symmetric)),
        Computed(r"\operatorname{softmax}(m j)", softmax(zeros + per_key)),
        scope=Scope.counterexample("$n = 2$, all keys visible, $m = 1$, $S = 0$"),
        note="For the first query the bidirectional bias penalises the later key, while $+m j$ favours it.",
    )


EXAMPLE = [sympy.Integer(1), sympy.Integer(2), sympy.Integer(4), sympy.Integer(9)]


def layer_norm(vector, epsilon=0):
    """LayerNorm of an explicit vector (gain 1, bias 0, population variance), exactly."""
    size = len(vector)
    mean = sum(vector, sympy.Integer(0)) / size
    variance = sum(((v - mean) ** 2 for v in vector), sympy.Integer(0)) / size
    return sympy.ImmutableMatrix([[(v - mean) / sqrt(variance + epsilon) for v in vector]])


def layernorm_negative_scale() -> Counterexample:
    return Counterexample(
        "LayerNorm: a negative scale flips the sign",
        [("x", sympy.ImmutableMatrix([EXAMPLE])), ("a", sympy.Integer(-1))],
        Computed(r"\operatorname{LN}(-x)", layer_norm([-v for v in EXAMPLE])),
        Computed(r"\operatorname{LN}(x)", layer_norm(EXAMPLE)),
        scope=Scope.counterexample("$x = (1, 2, 4, 9)$, $a = -1$, $\\varepsilon = 0$: the condition $a > 0$ is needed"),
    )


def layernorm_epsilon_scale() -> Counterexample:
    return Counterexample(
        "LayerNorm: with $\\varepsilon > 0$ the scale is not forgotten",
        [("x", sympy.ImmutableMatrix([EXAMPLE])), ("a", sympy.Integer(3)), (r"\varepsilon", sympy.Integer(1))],
        Computed(r"\operatorname{LN}_1(3x)", layer_norm([3 * v for v in EXAMPLE], 1)),
        Computed(r"\operatorname{LN}_1(x)", layer_norm(EXAMPLE, 1)),
        scope=Scope.counterexample("$x = (1, 2, 4, 9)$, $a = 3$, $\\varepsilon = 1$"),
        note="The scale moves into the epsilon instead: $\\operatorname{LN}_1(3x) = \\operatorname{LN}_{1/9}(x)$.",
    )


def jacobian_diagonal() -> Counterexample:
    scores = [sympy.Symbol("s_1", real=True), sympy.Symbol("s_2", real=True)]
    weights = list(softmax(sympy.ImmutableMatrix([scores])))
    at_zero = {scores[0]: 0, scores[1]: 0}
    jacobian = sympy.ImmutableMatrix(2, 2, lambda a, b: sympy.diff(weights[a], scores[b]).xreplace(at_zero))
    return Counterexample(
        "Softmax Jacobian: it is not $\\operatorname{diag}(p)$",
        [("s", sympy.ImmutableMatrix([[0, 0]]))],
        Computed(r"J", jacobian),
        Computed(r"\operatorname{diag}(p)", sympy.ImmutableMatrix(sympy.diag(*[w.xreplace(at_zero) for w in weights]))),
        scope=Scope.counterexample("$n = 2$, $s = (0, 0)$: forgetting the normalizer's derivative"),
        note="Differentiating only the numerator $e^{s_i}$ gives $\\operatorname{diag}(p)$, whose rows do not "
             "sum to $0$.",
    )


# The lab of the guide: X of grid, load, rises; W_Q = I, W_K = [[1, 1], [0, 1]], W_V = [[1, 0], [0, 2]].
X = sympy.ImmutableMatrix([[1, 0], [0, 1], [1, 1]])
W_K = sympy.ImmutableMatrix([[1, 1], [0, 1]])
W_V = sympy.ImmutableMatrix([[1, 0], [0, 2]])


def key_change() -> Counterexample:
    keys = (X * W_K).as_mutable()
    keys[2, 1] = 4
    changed = attention(X, sympy.ImmutableMatrix(keys), X * W_V)
    before = attention(X, X * W_K, X * W_V)
    return Counterexample(
        "Attention: changing a key row, unlike a value row, moves the weights",
        [(r"K_{32}", sympy.Integer(4))],
        Computed(r"w'_3", changed.weights[2, 2]),
        Computed(r"w_3", before.weights[2, 2]),
        scope=Scope.counterexample("the lab of the guide, the key of rises changed from $(1, 2)$ to $(1, 4)$"),
        note="Values enter only after the weights; keys enter the scores.",
    )


def corrected_check() -> Check:
    """The statements with their hypotheses restored, on the same numbers."""
    scores = [sympy.Symbol("s_1", real=True), sympy.Symbol("s_2", real=True)]
    weights = list(softmax(sympy.ImmutableMatrix([scores])))
    at_zero = {scores[0]: 0, scores[1]: 0}
    jacobian = sympy.ImmutableMatrix(2, 2, lambda a, b: sympy.diff(weights[a], scores[b]).xreplace(at_zero))
    quarter, q = pi / 2, sympy.ImmutableMatrix([1, 0])
    cases = [
        Case("RoPE: both positions moved by $1$", Computed(r"(R_1 q)^{T} (R_1 k)", ((_rotation(quarter) * q).T
                                                                                  * (_rotation(quarter) * q))[0, 0]),
             Computed(r"(R_0 q)^{T} (R_0 k)", ((_rotation(0) * q).T * (_rotation(0) * q))[0, 0])),
        Case("LayerNorm: a positive scale, $\\varepsilon = 0$", Computed(r"\operatorname{LN}(3x)",
                                                                      layer_norm([3 * v for v in EXAMPLE])),
             Computed(r"\operatorname{LN}(x)", layer_norm(EXAMPLE))),
        Case("LayerNorm: the scale moved into $\\varepsilon$", Computed(r"\operatorname{LN}_1(3x)",
                                                                     layer_norm([3 * v for v in EXAMPLE], 1)),
             Computed(r"\operatorname{LN}_{1/9}(x)", layer_norm(EXAMPLE, R(1, 9)))),
        Case("Jacobian: the rows sum to $0$", Computed(r"J \mathbf{1}", jacobian * sympy.ones(2, 1)),
             sympy.ImmutableMatrix([0, 0])),
    ]
    return Check(
        "With the hypotheses restored (the same numbers)",
        r"(R_{m+t} q)^{T} (R_{n+t} k) = (R_m q)^{T} (R_n k), \quad \operatorname{LN}(a x) = \operatorname{LN}(x)\ "
        r"(a > 0), \quad \operatorname{LN}_\varepsilon(a x) = \operatorname{LN}_{\varepsilon / a^2}(x), \quad "
        r"J \mathbf{1} = 0",
        cases,
        scope=Scope.checked("the numbers of the counterexamples above, exactly (the general proofs are in the "
                            "results on each identity)"),
        note="Computed exactly, as in the counterexamples.",
    )


def build() -> Result:
    return Result(
        NAME,
        "Where the identities stop",
        __doc__.split("\n", 2)[2].strip(),
        [rope_one_position(), sinusoidal_odd_width(), alibi_bidirectional(), layernorm_negative_scale(),
         layernorm_epsilon_scale(), jacobian_diagonal(), key_change(), corrected_check()],
    )
