r"""Worked examples for the rest of the transformer: LayerNorm, positions, heads, a block.

Each function returns a list of :mod:`~symbolic_attn.render.blocks`, printed after the
attention examples of :mod:`.worked`.  Every number comes from the exact model operations
(:func:`~symbolic_attn.model.layernorm.layer_norm`,
:func:`~symbolic_attn.model.positional.sinusoidal`,
:func:`~symbolic_attn.model.multihead.multihead`,
:func:`~symbolic_attn.model.block.encoder_block`, each a Trace) and their certified
decimals; every claim of the prose is decided by :func:`~symbolic_attn.notes.steps.check`
while the blocks are built, so a wrong claim stops the build.

* :func:`layer_norm_example` -- "Start with a row of numbers" (000): z = [1, 3] has mean 2
  and variance 1; LayerNorm gives [-1, 1]; then with eps = 1/100, the n - 1 variance (a
  mistake) and a gain and bias;
* :func:`positions_example` -- 000: sinusoidal encodings in width 2 (position 0 is [0, 1],
  position 1 is [sin 1, cos 1]) for positions 0..2, and X + P;
* :func:`heads_example` -- "Attention, by hand" (004) and 000: two heads on the three
  tokens, each reading one coordinate of X with V = 2X; concat and W_O;
* :func:`block_example` -- 000: the Post-LN encoder block around those two heads.

>>> blocks = layer_norm_example()
>>> blocks[0].text
'Worked example: layer normalization of $[1, 3]$'
"""

from __future__ import annotations

import sympy
from sympy import Rational, cos, sin, sqrt

from symbolic_attn.errors import ProofError, ZeroVarianceError
from symbolic_attn.model.block import encoder_block
from symbolic_attn.model.layernorm import layer_norm
from symbolic_attn.model.multihead import multihead
from symbolic_attn.model.positional import sinusoidal
from symbolic_attn.model.trace import Trace
from symbolic_attn.notes.steps import check, stage_line, trace_heat
from symbolic_attn.render.blocks import Figure, Heading, Math, Text, dec_matrix, matrix

__all__ = ["layer_norm_example", "positions_example", "heads_example", "block_example", "all_block_examples"]

M = sympy.ImmutableMatrix
X = M([[1, 0], [0, 1], [1, 1]])
E = sympy.E
#: 004's two heads, each on one coordinate ("a slice of the numbers") of X, with V = 2X.
HEADS = ((M([[1], [0]]), M([[1], [0]]), M([[2], [0]])),
         (M([[0], [1]]), M([[0], [1]]), M([[0], [2]])))
WO = M([[1, 0], [0, Rational(1, 2)]])
#: The feed-forward sublayer of the block: d_model = 2 -> d_ff = 3 -> 2.
W1, B1 = M([[1, 0, 1], [0, 1, 1]]), M([[0, 0, 1]])
W2, B2 = M([[1, 0], [0, 1], [-1, -1]]), M([[0, 0]])


def layer_norm_example() -> list:
    """000: LayerNorm of z = [1, 3], with eps = 0 and eps = 1/100; the n - 1 mistake; gamma, beta."""
    z = [[1, 3]]
    plain = layer_norm(z)
    eps = layer_norm(z, eps=Rational(1, 100))
    unbiased = layer_norm(z, variance="unbiased")
    affine = layer_norm(z, gamma=[[2, 1]], beta=[[0, 5]])
    check(plain["mean"], M([[2]]), "z = [1, 3] has mean 2")
    check(plain["variance"], M([[1]]), "z = [1, 3] has variance 1")
    check(eps["std"], M([[sqrt(101) / 10]]), "sqrt(1 + 1/100) = sqrt(101)/10")
    check(eps["output"], plain["centered"] / (sqrt(101) / 10), "with eps: (z - mean) / sqrt(101/100)")
    check(unbiased["variance"], M([[2]]), "the n - 1 variance of [1, 3] is 2")
    check(affine["output"], M([[2 * -1 + 0, 1 * 1 + 5]]), "gamma [2, 1], beta [0, 5]: [-2, 6]")
    return [
        Heading("Worked example: layer normalization of $[1, 3]$"),
        Text("From “Start with a row of numbers”: layer normalization acts across the features of one "
             "token. It centers them, divides by the standard deviation, then applies a gain $\\gamma$ "
             "and a bias $\\beta$ (here first $\\gamma = 1$, $\\beta = 0$). The document's example "
             "$z = [1, 3]$ has mean $2$ and variance $1$ before stabilization."),
        Math((f"z &= {matrix(M(z))}, \\qquad d = 2",
              stage_line("\\mu = \\tfrac{1}{2}(1 + 3)", plain, "mean"),
              stage_line("z - \\mu", plain, "centered"),
              stage_line("\\sigma^2 = \\tfrac{1}{2}\\left((-1)^2 + 1^2\\right)", plain, "variance"),
              stage_line("\\operatorname{LN}(z) = \\frac{z - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}}, "
                         "\\ \\epsilon = 0", plain, "output"))),
        Heading("With $\\epsilon = 1/100$", 2),
        Text("The small $\\epsilon$ sits inside the square root, as in PyTorch:"),
        Math((stage_line("\\sqrt{\\sigma^2 + \\epsilon}", eps, "std", M([[sqrt(101) / 10]])),
              stage_line("\\operatorname{LN}_\\epsilon(z)", eps, "output",
                         M([[-10 * sqrt(101) / 101, 10 * sqrt(101) / 101]])))),
        Heading("Two things to get right", 2),
        Text("The variance is the biased one: divide by $d = 2$, not $d - 1 = 1$. Dividing by "
             "$d - 1$ (a mistake here) gives variance $2$ and the output $[-\\sqrt{2}/2, \\sqrt{2}/2]$. A gain "
             "$\\gamma = [2, 1]$ and bias $\\beta = [0, 5]$ act coordinate by coordinate after the "
             "normalization."),
        Math((stage_line("\\sigma^2_{d-1}", unbiased, "variance"),
              stage_line("\\operatorname{LN}_{d-1}(z)", unbiased, "output", M([[-sqrt(2) / 2, sqrt(2) / 2]])),
              stage_line("\\gamma \\odot \\operatorname{LN}(z) + \\beta", affine, "output"))),
    ]


def positions_example() -> list:
    """000: sinusoidal encodings in width 2 for positions 0, 1, 2, and X + P."""
    pe = sinusoidal(3, 2)
    P = pe["output"]
    H = Trace({"sum": X + P})
    check(P.row(0), M([[0, 1]]), "position 0 is [0, 1]")
    check(P.row(1), M([[sin(1), cos(1)]]), "position 1 is [sin 1, cos 1]")
    check(pe["angles"], M([[0], [1], [2]]), "in width 2 the angle is the position")
    for p in range(3):
        check(P[p, 0] ** 2 + P[p, 1] ** 2, 1, f"position {p} lies on the unit circle")
    check(H["sum"], M([[1, 1], [sin(1), 1 + cos(1)], [1 + sin(2), 1 + cos(2)]]), "X + P")
    return [
        Heading("Worked example: sinusoidal positions in width 2"),
        Text("From “Start with a row of numbers”: attention alone cannot tell positions apart, so the "
             "original Transformer adds a position vector to each input state. For position "
             "$p = 0, 1, \\ldots$ and pair $i$ of a width $d_{\\mathrm{model}}$,"),
        Math(("\\operatorname{PE}(p, 2i) &= \\sin\\bigl(p / 10000^{2i/d_{\\mathrm{model}}}\\bigr), \\qquad "
              "\\operatorname{PE}(p, 2i+1) = \\cos\\bigl(p / 10000^{2i/d_{\\mathrm{model}}}\\bigr)",)),
        Text("In width $2$ there is one pair, $i = 0$, whose frequency is $10000^0 = 1$: the angle is "
             "the position itself. Positions $0, 1, 2$:"),
        Math((stage_line("\\theta_p = p", pe, "angles"),
              stage_line("P", pe, "output"))),
        Text("Position $0$ is $[0, 1]$ and position $1$ is $[\\sin 1, \\cos 1]$, as the document says; "
             "every row lies on the unit circle, $\\sin^2 p + \\cos^2 p = 1$. Added to the lab's "
             "states (the lab itself adds none):"),
        Math((f"X &= {matrix(X)}", stage_line("X + P", H, "sum"))),
        Text("The same token now gets different queries, keys and values at different positions."),
    ]


def heads_example() -> list:
    """004 and 000: two heads, each reading one coordinate of X, V = 2X; concat; W_O."""
    tokens = ("it", "was", "tired")
    t = multihead(X, [list(h) for h in HEADS], WO)
    third = M([[Rational(1, 3)] * 3])
    check(t["head[1].scaled"], t["head[1].scores"], "d_k = 1: the scale 1/sqrt(1) changes nothing")
    check(t["head[1].weights"].row(1), third, "head 1: was has equal scores, weights 1/3")
    check(t["head[2].weights"].row(0), third, "head 2: it has equal scores, weights 1/3")
    check(t["concat"], M.hstack(t["head[1].output"], t["head[2].output"]), "concat = [H_1 | H_2]")
    check(sympy.Integer(t["concat"].cols), 2 * 1, "concat has width H d_v = 2")
    check(t["output"], t["concat"] * WO, "output = concat W_O")
    check(t["head[1].output"][0, 0], 4 * E / (1 + 2 * E), "head 1 output of it: 4e/(1 + 2e)")
    (WQ1, _, WV1), (WQ2, _, WV2) = HEADS
    return [
        Heading("Worked example: two heads on three tokens"),
        Text("From “Attention, by hand” (many heads, each with its own tables on a slice of the "
             "numbers; glue the outputs together and mix with one more table) and the lab's "
             "$\\operatorname{MultiHead}(X) = [H_1 \\mid H_2]\\, W_O$. The tokens it, was, tired have "
             "the states $X$ of the earlier examples and $V = 2X$. Head $1$ reads only the first "
             "coordinate, head $2$ only the second, so $d_k = d_v = 1$ and the scale is "
             "$1/\\sqrt{1} = 1$."),
        Math((f"W_Q^1 = W_K^1 &= {matrix(WQ1)}, \\qquad W_V^1 = {matrix(WV1)}, \\qquad "
              f"W_Q^2 = W_K^2 = {matrix(WQ2)}, \\qquad W_V^2 = {matrix(WV2)}",
              stage_line("S^1 = Q^1 K^{1\\mathsf{T}}", t, "head[1].scores") + ", \\qquad "
              + stage_line("S^2", t, "head[2].scores").replace(" &= ", " = "))),
        Heading("Each head's weights", 2),
        Math((stage_line("A^1", t, "head[1].weights"), stage_line("A^2", t, "head[2].weights"))),
        Text("Was $= [0, 1]$ has first coordinate $0$: head $1$ gives it equal scores, so weights "
             "$1/3$ each. Head $2$ does the same for it $= [1, 0]$."),
        Heading("Concatenate, then $W_O$", 2),
        Text("Each head returns one column, $H_h = A^h V^h$; side by side they have width "
             "$H d_v = 2$, and $W_O$ maps them back to $d_{\\mathrm{model}} = 2$, so the result can "
             "be added to the input state."),
        Math((stage_line("[H_1 \\mid H_2]", t, "concat"),
              f"W_O &= {matrix(WO)}",
              stage_line("[H_1 \\mid H_2]\\, W_O", t, "output"))),
        Figure((trace_heat(t, "head[1].weights", "head 1 (first coordinate)", tokens, tokens),
                trace_heat(t, "head[2].weights", "head 2 (second coordinate)", tokens, tokens)),
               "Weights of the two heads (rows: queries, columns: keys), certified to 3 decimals. "
               "Each head compares one coordinate of the states."),
    ]


def block_example() -> list:
    """000: the Post-LN encoder block around the two heads, eps = 0, d_ff = 3."""
    b = encoder_block(X, [list(h) for h in HEADS], WO, W1=W1, b1=B1, W2=W2, b2=B2, eps=0, norm="post")
    signs = M([[1, -1], [-1, 1], [1, -1]])
    check(b["attention"], multihead(X, [list(h) for h in HEADS], WO)["output"], "the attention sublayer")
    check(b["add1"], X + b["attention"], "add1 = X + MultiHead(X)")
    for i in range(3):
        a, c = b["add1"][i, 0], b["add1"][i, 1]
        check(b["norm1"].row(i), M([[a - c, c - a]]) / sqrt((a - c) ** 2), f"row {i + 1}: width-2 LN keeps a sign")
    check(b["norm1"], signs, "norm1 rows are [1, -1] or [-1, 1]")
    check(b["ffn.hidden"], signs * W1 + M.vstack(B1, B1, B1), "hidden = norm1 W1 + b1")
    hidden = signs * W1 + M.vstack(B1, B1, B1)
    check(b["ffn.activated"], hidden.applyfunc(lambda x: sympy.Max(x, 0)), "ReLU zeroes the negative entries")
    check(b["add2"], b["norm1"] + b["ffn"], "add2 = norm1 + ffn")
    check(b["output"], b["norm2"], "the block output is norm2")
    # norm2 = signs, by a chain of fast checks (the direct comparison of the nested radicals
    # takes seconds): norm2 is LN(add2), add2 is the rational matrix below, and LN of that
    # rational matrix, computed by the model, is the signs.
    add2 = M([[1, -2], [-2, 1], [1, -2]])
    check(b["norm2"], layer_norm(b["add2"])["output"], "norm2 = LN(add2)")
    tail = layer_norm(add2)
    return [
        Heading("Worked example: a Post-LN encoder block"),
        Text("From “Start with a row of numbers”: an encoder block is self-attention and then a "
             "position-wise feed-forward sublayer, each with a residual addition followed by layer "
             "normalization (Post-LN, the original order; dropout omitted). Here the attention "
             "sublayer is the two heads and $W_O$ of the previous example, $\\epsilon = 0$, and the "
             "feed-forward sublayer has width $d_{\\mathrm{ff}} = 3$:"),
        Math(("Y &= \\operatorname{LN}\\bigl(X + \\operatorname{MultiHead}(X)\\bigr), \\qquad "
              "\\operatorname{Block}(X) = \\operatorname{LN}\\bigl(Y + \\operatorname{FFN}(Y)\\bigr)",
              "\\operatorname{FFN}(Y) &= \\max(0,\\ Y W_1 + b_1)\\, W_2 + b_2",
              f"W_1 &= {matrix(W1)}, \\qquad b_1 = {matrix(B1)}, \\qquad W_2 = {matrix(W2)}, \\qquad "
              f"b_2 = {matrix(B2)}")),
        Heading("Sublayer 1: attention, add, normalize", 2),
        Math((stage_line("\\text{add1} = X + \\operatorname{MultiHead}(X)", b, "add1"),
              stage_line("\\text{norm1} = Y = \\operatorname{LN}(\\text{add1})", b, "norm1", signs))),
        Text("In width $2$ with $\\epsilon = 0$, layer normalization keeps only which coordinate is "
             "larger: a row $[a, c]$ becomes $[a - c,\\ c - a] / |a - c|$, that is $[1, -1]$ or "
             "$[-1, 1]$ (checked on every row). Real models have hundreds of features."),
        Heading("Sublayer 2: feed-forward, add, normalize", 2),
        Math((_beside(stage_line("Y W_1 + b_1", b, "ffn.hidden", hidden),
                      stage_line("\\max(0,\\ Y W_1 + b_1)", b, "ffn.activated", M([[1, 0, 1], [0, 1, 1], [1, 0, 1]]))),
              _beside(stage_line("\\operatorname{FFN}(Y)", b, "ffn", M([[0, -1], [-1, 0], [0, -1]])),
                      stage_line("\\text{add2} = Y + \\operatorname{FFN}(Y)", b, "add2", add2),
                      stage_line("\\text{norm2} = \\operatorname{Block}(X)", tail, "output", signs)))),
        Text("The ReLU zeroes the negative entries; the residual path carries $Y$ around the "
             "feed-forward sublayer."),
    ] + _pre_ln()


def _beside(first: str, *others: str) -> str:
    """``name &= value`` lines as one row of the align (only the first aligned)."""
    return ", \\qquad ".join([first] + [other.replace(" &= ", " = ", 1) for other in others])


def _pre_ln() -> list:
    """Pre-LN on the same weights: undefined with eps = 0 (tired = [1, 1]); defined with eps = 1/100."""
    weights = dict(W1=W1, b1=B1, W2=W2, b2=B2, norm="pre")
    try:
        encoder_block(X, [list(h) for h in HEADS], WO, eps=0, **weights)
    except ZeroVarianceError as error:
        check(sympy.Integer(str(error).startswith("layer_norm row 3: variance is exactly 0")), 1,
              "Pre-LN with eps = 0 stops at row 3")
    else:
        raise ProofError("worked example: Pre-LN with eps = 0 should divide by zero on the row of tired")
    eps = Rational(1, 100)
    pre = encoder_block(X, [list(h) for h in HEADS], WO, eps=eps, **weights)
    check(pre["norm1"].row(2), M([[0, 0]]), "Pre-LN: LN of tired = [1, 1] is [0, 0]")
    check(pre["attention"].row(2), M([[0, 0]]), "Pre-LN: the attention adds nothing to tired")
    check(pre["ffn"].row(2), M([[-1, -1]]), "Pre-LN: the feed-forward sublayer gives tired -[1, 1]")
    check(pre["output"].row(2), M([[0, 0]]), "Pre-LN: tired ends at [0, 0]")
    check(pre["output"], pre["add2"], "Pre-LN: no final normalization")
    return [
        Heading("Pre-LN is a different block", 2),
        Text("Pre-LN, $x + \\operatorname{Sublayer}(\\operatorname{LN}(x))$, normalizes $X$ itself "
             "first. Tired's row $[1, 1]$ has variance exactly $0$: with $\\epsilon = 0$ the model stops "
             "with an error naming row $3$. With $\\epsilon = 1/100$ it is defined; there is no final "
             "normalization, and tired ends at exactly $[0, 0]$ (LN gives $[0, 0]$, the attention adds "
             "$0$, the feed-forward sublayer $-[1, 1]$):"),
        Math((f"\\operatorname{{PreLN}}_{{\\epsilon = 1/100}}(X) &\\approx {dec_matrix(pre.decimals('output', 3))}",)),
    ]


def all_block_examples() -> list:
    """The four examples, in the order of the notes."""
    return layer_norm_example() + positions_example() + heads_example() + block_example()
