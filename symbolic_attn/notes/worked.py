r"""The worked examples of the three reference documents, step by step, by the core.

Each function returns a list of :mod:`~symbolic_attn.render.blocks`.  The numbers come from the
one attention core and its certified decimals; each claim the prose makes is decided by
``prove_equal`` while the blocks are built (see :func:`~symbolic_attn.render.blocks.check`).

* :func:`by_hand` -- "Attention, by hand" (004): compare, scale, normalize, combine on
  three tokens, then with the causal mask;
* :func:`one_row` -- "Read a tiny attention matrix" (002): the row 0, ln 2, ln 3
  unmasked, masked, zeroed (the mistake), and the value replacement;
* :func:`lab` -- "Start with a row of numbers" (000): grid/load/rises with W_Q = I,
  W_K = [[1,1],[0,1]], W_V = [[1,0],[0,2]] and its three interventions.

>>> blocks = one_row()
>>> blocks[0].text
'Worked example: one row from the scores $0$, $\\ln 2$, $\\ln 3$'
>>> [type(block).__name__ for block in blocks].count("Figure")
1
"""

from __future__ import annotations

import sympy
from sympy import Rational, log

from symbolic_attn.model.attention import attention, attention_from_scores
from symbolic_attn.notes.steps import check, denominator, heat, mask_panel, normalize_rows, row_line
from symbolic_attn.render.blocks import Figure, Heading, Math, Text, dec_matrix, matrix, tex
from symbolic_attn.model.masks import Mask
from symbolic_attn.exact.certified import decimal_string

__all__ = ["by_hand", "one_row", "lab", "all_examples", "example_parts"]

X = sympy.ImmutableMatrix([[1, 0], [0, 1], [1, 1]])


def by_hand() -> list:
    """004: Q = K = X, V = 2X, d_k = 2; all-visible, then causal."""
    tokens = ("it", "was", "tired")
    plain = attention(X, X, 2 * X)
    causal = attention(X, X, 2 * X, mask="causal")
    a33, reference = plain.decimals("weights", 6)[2][2], "0.504"
    rounded = plain.decimals("weights", 3)[2][2]
    verdict = "so the correct rounding is" if rounded != reference else "which indeed rounds to"
    check(causal.output.row(0), sympy.Matrix([[2, 0]]), "causal: the new 'it' is exactly [2, 0]")
    return [
        Heading("Worked example: attention by hand on three tokens"),
        Text("From the reference document “Attention, by hand”: the tokens it, was, tired with "
             "$Q = K = X$ and $V = 2X$, so $d_k = 2$. Four steps: compare, scale, normalize, combine."),
        Math((f"X &= {matrix(X)}, \\qquad V = 2X = {matrix(2 * X)}",)),
        Heading("1. Compare", 2),
        Math((f"S = QK^{{\\mathsf{{T}}}} &= {matrix(plain.scores)}",)),
        Heading("2. Scale", 2),
        Math((f"S' = \\frac{{S}}{{\\sqrt{{d_k}}}} &= {matrix(plain.scaled)} "
              f"\\approx {dec_matrix(plain.decimals('scaled', 3))}",)),
        Heading("3. Normalize", 2),
        Text("Row by row: exponentiate the scaled scores, add them, divide. Row 1 (it):"),
        Math(normalize_rows(plain, 0, "1", factor=True)),
        Text("Every row, with its certified 3-decimal rounding:"),
        Math(_rows_over(plain, "a", "weights")),
        Text(f"The reference prints ${reference}$ for $a_{{33}}$; the exact value is ${a33}\\ldots$, "
             f"{verdict} ${rounded}$."),
        Heading("4. Combine", 2),
        Math(_rows_over(plain, "z", "output", " = a_{i} V")),
        Heading("With the causal mask", 2),
        Text("Key $j$ is visible to query $i$ only when $j \\le i$. Blocked keys get weight exactly $0$ "
             "and leave the denominator, so each row still sums to $1$."),
        Math(_rows_over(causal, "a^{\\mathrm{causal}}", "weights") + _rows_over(causal, "z^{\\mathrm{causal}}", "output")),
        Text("The new it sees only itself, so its output is its own value $[2, 0]$, exactly."),
        Figure((heat(plain, "all keys visible", tokens, tokens), heat(causal, "causal", tokens, tokens),
                mask_panel(causal.mask, "causal mask", tokens, tokens)),
               "Weights $A$ of the three tokens (rows: queries, columns: keys), certified to 3 decimals. "
               "Grey crossed cells are blocked: weight exactly 0, not part of the softmax."),
    ]


def _rows_over(result, symbol: str, stage: str, suffix: str = "") -> tuple:
    """Every row of a stage as 1/D_i times numerators, after a line naming each D_i."""
    totals = [denominator(result, i) for i in range(result.shape.n)]
    names = [f"D_{{{i + 1}}}" for i in range(result.shape.n)]
    defined = ", \\quad ".join(f"{name} = {tex(total)}" for name, total in zip(names[1:], totals[1:]))
    lines = [] if stage != "weights" else [f"{names[0]} &= {tex(totals[0])}, \\quad {defined}"]
    for i, (name, total) in enumerate(zip(names, totals)):
        over = () if total.is_Integer else (name, total)
        label = f"{symbol}_{{{i + 1}}}" + suffix.replace("{i}", f"{{{i + 1}}}")
        lines.append(row_line(label, result, stage, i, over))
    return tuple(lines)


def one_row() -> list:
    """002: scores 0, ln 2, ln 3; values (1,0), (0,2), (3,1); masked, zeroed, replaced."""
    scores, V = [[0, log(2), log(3)]], sympy.ImmutableMatrix([[1, 0], [0, 2], [3, 1]])
    third_blocked = Mask.keep([[1, 1, 0]])
    plain = attention_from_scores(scores, V)
    masked = attention_from_scores(scores, V, mask=third_blocked)
    zeroed = attention_from_scores(scores, V, mask=third_blocked, masking="zero_after_softmax")
    V20 = sympy.Matrix(V)
    V20[1, :] = sympy.Matrix([[0, 20]])
    replaced = attention_from_scores(scores, V20, mask=third_blocked)
    check(plain.output, sympy.Matrix([[Rational(5, 3), Rational(7, 6)]]), "output (5/3, 7/6)")
    check(masked.output, sympy.Matrix([[Rational(1, 3), Rational(4, 3)]]), "masked output (1/3, 4/3)")
    check(sum(zeroed.weights), Rational(1, 2), "zeroed weights sum to 1/2")
    check(replaced.output[0, 1], Rational(40, 3), "value (0, 20) gives 40/3")
    check(replaced.weights, masked.weights, "replacing a value leaves the weights")
    keys = ("$k_1$", "$k_2$", "$k_3$")
    return [
        Heading("Worked example: one row from the scores $0$, $\\ln 2$, $\\ln 3$"),
        Text("From “Read a tiny attention matrix”: one query, three keys with already-scaled scores "
             "$s = (0, \\ln 2, \\ln 3)$ and values $v_1 = (1, 0)$, $v_2 = (0, 2)$, $v_3 = (3, 1)$."),
        Math(normalize_rows(plain, 0, "") + (row_line("z = a V", plain, "output", 0),)),
        Heading("The third key masked", 2),
        Text("Blocking the third key removes $e^{\\ln 3} = 3$ from the denominator: the rest renormalize."),
        Math(normalize_rows(masked, 0, "") + (row_line("z = a V", masked, "output", 0),)),
        Heading("Zeroing instead of masking (a mistake)", 2),
        Text("Setting the third weight to $0$ after the softmax keeps $3$ in the denominator: the "
             "weights sum to $1/2$, so this is not attention."),
        Math((row_line("a^{\\mathrm{zeroed}}", zeroed, "weights", 0),
              f"\\textstyle\\sum_j a^{{\\mathrm{{zeroed}}}}_j &= {sympy.latex(sum(zeroed.weights))}",
              row_line("z^{\\mathrm{zeroed}}", zeroed, "output", 0))),
        Heading("Same weights, different values", 2),
        Text("With the mask, replace $v_2$ by $(0, 20)$: the weights are unchanged and the output moves."),
        Math((row_line("a", replaced, "weights", 0), row_line("z", replaced, "output", 0))),
        Figure((heat(plain, "unmasked", ["$s$"], keys), heat(masked, "third key masked", ["$s$"], keys),
                heat(zeroed, "zeroed (wrong)", ["$s$"], keys, allowed=third_blocked.allowed)),
               "The row $0, \\ln 2, \\ln 3$: masked weights renormalize to $1/3, 2/3$; zeroed weights "
               "keep $1/6, 1/3$ and sum to $1/2$."),
    ]


def lab() -> list:
    """000: the grid/load/rises lab and its three interventions."""
    tokens = ("grid", "load", "rises")
    W_Q, W_K, W_V = sympy.eye(2), sympy.Matrix([[1, 1], [0, 1]]), sympy.Matrix([[1, 0], [0, 2]])
    Q, K, V = X * W_Q, X * W_K, X * W_V
    base = attention(Q, K, V)
    Q0 = sympy.Matrix(Q)
    Q0[2, :] = sympy.zeros(1, 2)
    zero_q = attention(Q0, K, V)
    causal = attention(Q, K, V, mask="causal")
    V4 = sympy.Matrix(V)
    V4[2, 1] = 4
    override = attention(Q, K, V4)
    # The output is linear in V: the change of output is attention on the change of V.
    delta = attention(Q, K, V4 - V)
    check(zero_q.output.row(2), sympy.Matrix([[Rational(2, 3), Rational(4, 3)]]), "zero query: [2/3, 4/3]")
    check(causal.output.row(0), sympy.Matrix([[1, 0]]), "causal grid: [1, 0]")
    check(causal.weights.row(2), base.weights.row(2), "causal: rises unchanged")
    check(override.weights, base.weights, "value override: weights unchanged")
    check(override.output - base.output, delta.output, "value override: change = A (V' - V)")
    check(delta.output.row(2), sympy.Matrix([[0, 2 * base.weights[2, 2]]]), "rises moves by [0, 2 a_3]")
    check(attention(Q, K, V4, mask="causal").output.row(0), causal.output.row(0), "blocked key: no effect")
    shift = decimal_string(2 * base.weights[2, 2], 3)
    # Rows of rises share one long denominator: print them as 1/D_3 times numerators.
    over = ("D_3", denominator(base, 2))
    return [
        Heading("Worked example: the grid/load/rises lab"),
        Text("From “Start with a row of numbers”: states $X$ for grid, load, rises and the projections "
             "reconstructed from the document's own arithmetic."),
        Math((f"X &= {matrix(X)}, \\qquad W_Q = {matrix(W_Q)}, \\qquad W_K = {matrix(W_K)}, \\qquad "
              f"W_V = {matrix(W_V)}",
              f"Q = X W_Q &= {matrix(Q)}, \\qquad K = X W_K = {matrix(K)}, \\qquad V = X W_V = {matrix(V)}")),
        Heading("Compare and scale", 2),
        Math((f"S = QK^{{\\mathsf{{T}}}} &= {matrix(base.scores)}",
              row_line("s'_3 = s_3 / \\sqrt{2}", base, "scaled", 2))),
        Heading("Normalize and combine: the row of rises", 2),
        Math(normalize_rows(base, 2, "3", factor=True) + (row_line("z_3 = a_3 V", base, "output", 2, over),)),
        Text("All three rows, certified to 3 decimals:"),
        Math((f"A &\\approx {dec_matrix(base.decimals('weights', 3))}, \\qquad "
              f"Z = AV \\approx {dec_matrix(base.decimals('output', 3))}",)),
        Heading("Intervention 1: a zero query", 2),
        Text("Set the query of rises to $0$: every score is $0$, every weight $1/3$, and the output is "
             "the plain average of the values, not zero."),
        Math((row_line("a_3", zero_q, "weights", 2), row_line("z_3", zero_q, "output", 2))),
        Heading("Intervention 2: causal visibility", 2),
        Text("With the causal mask grid sees only itself, so its output is its own value. "
             "Rises already sees every key: its row does not change."),
        Math((row_line("a^{\\mathrm{causal}}_1", causal, "weights", 0),
              row_line("z^{\\mathrm{causal}}_1", causal, "output", 0),
              row_line("a^{\\mathrm{causal}}_3 = a_3", causal, "weights", 2, over))),
        Heading("Intervention 3: the value override $2 \\to 4$", 2),
        Text("Change the second coordinate of the value of rises from $2$ to $4$. The scores and weights "
             "stay identical; only the second output coordinate moves, by $2 a_{33}$. "
             "Under the causal mask grid does not see rises, and the override has no effect on it."),
        Math((row_line("z'_3", override, "output", 2, over),
              row_line("z'_3 - z_3", delta, "output", 2, over),
              f"2 a_{{33}} &\\approx {shift}")),
        Figure((heat(base, "all keys visible", tokens, tokens), heat(causal, "causal", tokens, tokens),
                mask_panel(causal.mask, "causal mask", tokens, tokens)),
               "The lab's weights (rows: queries, columns: keys). Rises puts about "
               f"${base.decimals('weights', 3)[2][2]}$ on itself; the causal mask changes the first two rows only."),
    ]


def example_parts() -> tuple:
    """The worked examples as separate functions, in the order of the notes: attention (this
    module), then the rest of the transformer (:mod:`.worked_block`), then backpropagation
    (:mod:`.worked_backward`).  Each returns its
    blocks; ``derive`` computes them side by side."""
    from symbolic_attn.notes import worked_backward, worked_block

    return (by_hand, one_row, lab, worked_block.layer_norm_example, worked_block.positions_example,
            worked_block.heads_example, worked_block.block_example, worked_backward.backward_example)


def all_examples() -> list:
    """The worked examples' blocks, in the order of the notes."""
    return [block for part in example_parts() for block in part()]
