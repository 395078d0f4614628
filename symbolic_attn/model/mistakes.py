r"""The one mistake catalogue: every diagnosis id, what it means, and the remedy a student reads.

Each :class:`Mistake` is one row: its ``id`` (as in the rubric and the JSON), a short
``description`` (tables, ``check``'s column) and a ``remedy`` sentence (``grade``'s feedback,
the web page).  The remedy may name the exercise's own numbers: ``{d_k}``, ``{scale}``,
``{unscaled_remedy}`` and ``{detail}`` are filled in by :meth:`Mistake.sentence` from the
exercise, never another exercise's numbers.

How a mistake is *reproduced* lives with the computation it changes, not here: the
attention core's settings in :mod:`symbolic_attn.grading.diagnose` (and, for ``[define]``
exercises, :data:`symbolic_attn.grading.program_diagnose.CORE_VARIANTS`), the settings of
heads, positions, LayerNorm and blocks in :data:`symbolic_attn.model.variants.VARIANTS`,
the wrong rules of a derivation step in :data:`symbolic_attn.steps.wrong_rules.WRONG_RULES`.
Every id either of them uses is a row of :data:`CATALOGUE` (a test checks it), and the
order of the rows is the order diagnoses are listed in.

>>> CATALOGUE["unscaled"].description
'1/sqrt(d_k) forgotten'
>>> CATALOGUE["sum_normalized"].kind
'attention'
>>> describe("layer_norm_unbiased")
'LayerNorm with the unbiased variance (divided by d - 1 instead of d)'
>>> CATALOGUE["scaled_by_dk"].sentence({"d_k": 4})
'The scores were divided by d_k = 4: divide them by √d_k = √4 instead.'
>>> sorted(ids(), key=order)[:3]
['unscaled', 'scaled_by_dk', 'scaled_twice']
"""

from __future__ import annotations

import string
from dataclasses import dataclass

__all__ = ["Mistake", "CATALOGUE", "describe", "ids", "order", "KINDS"]

#: ``attention``: a setting of the attention core; ``model``: of heads, positions,
#: LayerNorm or blocks; ``written``: the right result written down wrongly;
#: ``follow``: a value that follows from the student's own earlier answers; ``step``: a
#: wrong rule used in one step of a derivation (reproduced by :mod:`symbolic_attn.steps.wrong_rules`).
KINDS = ("attention", "model", "written", "follow", "step")


@dataclass(frozen=True)
class Mistake:
    """One known mistake: its id, what it is, and what to do about it."""

    id: str
    kind: str
    description: str
    remedy: str  # a sentence; may name {d_k}, {scale}, {unscaled_remedy}, {detail}

    def sentence(self, context: dict | None = None, detail: str = "") -> str:
        """The remedy with the exercise's numbers filled in (a placeholder the context does
        not give reads as its generic name: ``d_k``, ``the given scale``)."""
        values = {"d_k": "d_k", "scale": "the scale the exercise gives",
                  "unscaled_remedy": "divide the scores by √d_k before the softmax", **(context or {})}
        values["detail"] = f" ({detail})" if detail else ""
        return string.Formatter().vformat(self.remedy, (), values)


def _rows(*rows) -> dict:
    return {row[0]: Mistake(*row) for row in rows}


CATALOGUE: dict[str, Mistake] = _rows(
    # --- the attention core -------------------------------------------------------------
    ("unscaled", "attention", "1/sqrt(d_k) forgotten",
     "These values come from the unscaled scores: {unscaled_remedy}."),
    ("scaled_by_dk", "attention", "divided by d_k instead of sqrt(d_k)",
     "The scores were divided by d_k = {d_k}: divide them by √d_k = √{d_k} instead."),
    ("scaled_twice", "attention", "scaled twice",
     "The scale was applied twice: scale the scores once ({scale})."),
    ("wrong_scale", "attention", "the wrong scale",
     "The scores were scaled by the wrong factor: this exercise scales them by {scale}."),
    ("mask_ignored", "attention", "the mask left out",
     "The mask was ignored: blocked keys get weight exactly 0 and leave the softmax of their row."),
    ("zeroed_not_renormalized", "attention", "blocked weights zeroed after softmax, not renormalized",
     "The softmax was taken over all keys and the blocked weights zeroed afterwards: leave blocked keys out "
     "of the softmax, so that the allowed weights of each row sum to 1."),
    ("mask_score_zero", "attention", "blocked scores set to 0 instead of removed",
     "The blocked scores were set to 0, but exp(0) = 1 still counts: blocked keys get weight exactly 0 and "
     "leave the denominator."),
    ("mask_inverted", "attention", "mask polarity swapped (keep/block)",
     "The mask is the wrong way round: keep the allowed positions and block the others."),
    ("mask_shifted", "attention", "causal mask off by one",
     "The causal mask is off by one: query i sees keys 1 to i, itself included."),
    ("softmax_columns", "attention", "softmax over the wrong axis (columns)",
     "The softmax was taken down the columns: normalize each row (the keys of one query) so that it sums to 1."),
    ("sum_normalized", "attention", "scores divided by their row sum instead of softmax",
     "The scores were divided by their row sum (a simple normalization), not passed through the softmax: "
     "each weight is exp(score) over the sum of the exps of its row."),
    ("keys_as_values", "attention", "keys used as values",
     "The keys K were used where the values V belong: the output is the weights times V."),
    # --- heads, positions, LayerNorm, blocks (settings in model.variants) ----------------
    ("layer_norm_unbiased", "model", "LayerNorm with the unbiased variance (divided by d - 1 instead of d)",
     "The variance was divided by d - 1: LayerNorm uses the biased variance, the mean of the squared "
     "deviations (divided by d)."),
    ("layer_norm_eps_outside", "model", "LayerNorm with eps added after the square root: sqrt(variance) + eps",
     "eps was added after the square root: LayerNorm divides by sqrt(variance + eps)."),
    ("layer_norm_no_affine", "model", "LayerNorm without gamma and beta (the affine step forgotten)",
     "The affine step was left out: multiply the normalized values by gamma and add beta."),
    ("positions_from_one", "model", "positions counted from 1 instead of 0",
     "The positions were counted from 1: the first token is at position 0."),
    ("sin_cos_swapped", "model", "cos on the even columns and sin on the odd ones",
     "sin and cos are swapped: sin goes on the even columns (0, 2, ...) and cos on the odd ones."),
    ("heads_order", "model", "heads concatenated in the reverse order",
     "The heads were concatenated in the reverse order: head 1 comes first."),
    ("output_projection_missing", "model", "the output projection W_O forgotten (the concatenation as output)",
     "The output projection was left out: multiply the concatenated heads by W_O."),
    ("norm_order", "model", "Pre-LN computed for Post-LN, or the reverse",
     "LayerNorm is in the wrong place: check whether the block normalizes before the sublayer (Pre-LN) or "
     "after the residual addition (Post-LN)."),
    ("residual_missing", "model", "the residual addition forgotten (Sublayer(x) instead of x + Sublayer(x))",
     "The residual addition was left out: the sublayer's output is added to its input, x + Sublayer(x)."),
    # --- the backward passes (settings in model.variants) --------------------------------
    ("grad_missing_scale", "model", "the scale left out of the gradients (dQ = dScaled K, without 1/sqrt(d_k))",
     "The scale was left out of the backward pass: the forward pass multiplies the scores by the scale, so "
     "dS = scale · dScaled, dQ = scale · dScaled K and dK = scale · dScaledᵀ Q carry it too."),
    ("grad_transposed_k", "model", "dQ and dK with the transposes swapped (dSᵀ K and dS Q)",
     "The transposes are on the wrong side: query i's gradient collects row i of dS, dQ = dS K, and key j's "
     "collects column j, dK = dSᵀ Q."),
    ("grad_diagonal_jacobian", "model", "the softmax Jacobian taken as diagonal (dScaled = A ⊙ dA)",
     "The softmax backward kept only A ⊙ dA: every weight of a row depends on every score of the row, so "
     "dScaled = A ⊙ (dA − rowsum(dA ⊙ A))."),
    ("grad_missing_rowsum", "model", "the row sum left out of the softmax backward (dScaled = A ⊙ (dA − A ⊙ dA))",
     "The subtracted term was not summed over the row: dScaled = A ⊙ (dA − rowsum(dA ⊙ A)), one number per row "
     "(FlashAttention's D = rowsum(dO ⊙ O))."),
    ("grad_unbiased_variance", "model", "the LayerNorm backward with the unbiased variance (d - 1)",
     "The LayerNorm gradient used the unbiased variance: LayerNorm divides by d, so the variance's derivative "
     "is 2(x − mean)/d."),
    ("grad_no_mean_path", "model", "the LayerNorm backward without the mean and variance terms (dX = dxhat / std)",
     "The mean and the variance depend on every entry of the row: dX = dxhat/std + dvar · 2(x − mean)/d + "
     "dmean/d, not dxhat/std alone."),
    ("grad_beta_not_summed", "model", "dbeta not summed over the rows (dbeta = G)",
     "dbeta was taken as G itself: beta is shared by every row, so its gradient is G summed over the rows."),
    ("grad_relu_at_zero", "model", "relu'(0) taken as 1 (a convention difference, not an error)",
     "relu has no derivative at 0, where this answer took relu'(0) = 1: a convention difference, not an "
     "error; this exercise uses relu'(0) = 0, as PyTorch and JAX do."),
    # --- the right result, written down wrongly ------------------------------------------
    ("transposed", "written", "the matrix written transposed",
     "The matrix is transposed: row i belongs to query i."),
    ("decimal_point", "written", "decimal point misplaced",
     "The decimal point is misplaced (the value is off by a power of ten): check the magnitude."),
    ("rounded_intermediates", "written", "computed from rounded intermediates",
     "These follow from rounded intermediate values{detail}: keep exact values (or more digits) until the "
     "final answer."),
    ("forced_row_sum", "written", "rounded weights forced to sum to 1",
     "Rounded weights were adjusted so that the row sums to 1: give each weight correctly rounded, even when "
     "the rounded row does not sum to exactly 1."),
    # --- the student's own earlier answers -----------------------------------------------
    ("follows_from_claimed", "follow", "follows from the solution's own earlier claim",
     "This follows from your own earlier answers as you wrote them, which were wrong: the method is right, "
     "fix the earlier step."),
    # --- a wrong rule in one step of a derivation ----------------------------------------
    ("exp_of_sum", "step", "e^(a+b) written as e^a + e^b",
     "The exponential of a sum was split into a sum of exponentials: e^(a+b) = e^a · e^b, not e^a + e^b."),
    ("sum_term_left_out", "step", "a term of the summand not summed (Σ(a + b) as Σa + b)",
     "A term of the summand was taken out of the sum as it is: Σ_j (a + b) = Σ_j a + Σ_j b, and Σ_j b = n·b "
     "when b does not depend on j."),
    ("dependent_factor_out", "step", "a factor that depends on the index pulled out of the sum",
     "A factor that depends on the summation index was moved out of the sum: only factors that do not "
     "depend on the index may be pulled out."),
    ("shift_added", "step", "Σ e^(x_j + c) written as e^c + Σ e^(x_j)",
     "The shift was added instead of multiplied: Σ_j e^(x_j + c) = e^c · Σ_j e^(x_j)."),
    ("log_of_sum", "step", "the log of a sum as the sum of logs",
     "The logarithm of a sum was split into a sum of logarithms: log(a·b) = log a + log b, but log(a + b) "
     "has no such rule."),
    ("cancelled_a_term", "step", "a term of a sum cancelled against one term",
     "A single term was cancelled against one term of a sum: only a factor of the whole numerator and the "
     "whole denominator cancels."),
    ("index_captured", "step", "a sum's index renamed to a letter already used outside it",
     "The summation index was renamed to a letter that already means something outside the sum: rename it "
     "to a new letter."),
    ("variance_of_sum", "step", "Var(X + Y) = Var X + Var Y without independence",
     "The variance of a sum was split without independence: Var(X + Y) = Var X + Var Y + 2 Cov(X, Y), and "
     "the covariance vanishes only for uncorrelated terms."),
    ("variance_scale", "step", "Var(aX) written as a·Var(X)",
     "A constant came out of the variance unsquared: Var(aX) = a² Var(X)."),
    # after the variance rules: a wrong rule on the Var the student wrote is the more telling name
    ("sqrt_dk_vs_dk", "step", "√d_k and d_k confused",
     "√d_k and d_k were confused: the scores are divided by √d_k, and their variance is d_k."),
    ("softmax_scale", "step", "softmax(c·x) written as softmax(x)",
     "A scale was dropped inside the softmax: softmax is unchanged by adding a constant to every entry, "
     "not by multiplying them by one."),
    ("transpose_order", "step", "(AB)^T written as A^T B^T",
     "The transpose of a product reverses the order: (AB)^T = B^T A^T."),
)

_ORDER = {mistake: index for index, mistake in enumerate(CATALOGUE)}


def ids(kind: str | None = None) -> list[str]:
    """The ids of the catalogue (of one kind), in its order."""
    return [m.id for m in CATALOGUE.values() if kind is None or m.kind == kind]


def order(mistake: str) -> int:
    """The position of an id in the catalogue (an unknown id sorts last)."""
    return _ORDER.get(mistake, len(_ORDER))


def describe(mistake: str) -> str:
    """The short description of an id (the id itself, spaced, for one the catalogue lacks)."""
    row = CATALOGUE.get(mistake)
    return row.description if row else mistake.replace("_", " ")
