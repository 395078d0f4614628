r"""Known mistakes on heads, positions, LayerNorm and blocks, each a *setting* of the one
implementation, never a second one.

A variant maps an operation of :mod:`symbolic_attn.model.program` (``layer_norm``,
``multihead``, ``sinusoidal``, ``rope``, ``block``, and the backward passes
``attention_backward``, ``softmax_backward``, ``layer_norm_backward``,
``feed_forward_backward``) to settings that override it wherever
it is used (inside blocks too).  Diagnosis re-runs the same definitions under a variant
and compares the claimed numbers with the variant's trace at the same stage path.  What
each mistake means, and its remedy, are rows of the grading layer's one catalogue
(``symbolic_attn.model.mistakes``); this module holds only how to make it.

>>> import sympy
>>> inputs = {"z": sympy.Matrix([[1, 3]])}
>>> variant_trace(inputs, [("L", "layer_norm(z)")], "layer_norm_unbiased")["L"]
Matrix([[-sqrt(2)/2, sqrt(2)/2]])
>>> sorted(applicable([("L", "layer_norm(z)"), ("P", "sinusoidal(2, 2)")]))
['layer_norm_eps_outside', 'layer_norm_no_affine', 'layer_norm_unbiased', 'positions_from_one', 'sin_cos_swapped']
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from symbolic_attn.errors import StageError, SymbolicAttnError
from symbolic_attn.model.program import run_program
from symbolic_attn.model.trace import Trace

__all__ = ["VARIANTS", "variant_trace", "applicable", "variant_traces"]

VARIANTS: dict[str, dict] = {
    "layer_norm_unbiased": {"layer_norm": {"variance": "unbiased"}},
    "layer_norm_eps_outside": {"layer_norm": {"eps_placement": "outside"}},
    "layer_norm_no_affine": {"layer_norm": {"affine": False}},
    "positions_from_one": {"sinusoidal": {"first_position": 1}, "rope": {"first_position": 1}},
    "sin_cos_swapped": {"sinusoidal": {"swap": True}},
    "heads_order": {"multihead": {"head_order": "reversed"}},
    "output_projection_missing": {"multihead": {"project": False}},
    "norm_order": {"block": {"flip_norm": True}},
    "residual_missing": {"block": {"residual": False}},
    # the backward passes (settings of model.backward, backward_norm, backward_ffn)
    "grad_missing_scale": {"attention_backward": {"grad_scale": "missing"}},
    "grad_transposed_k": {"attention_backward": {"key_side": "transposed"}},
    "grad_diagonal_jacobian": {"attention_backward": {"softmax_jacobian": "diagonal"},
                               "softmax_backward": {"softmax_jacobian": "diagonal"}},
    "grad_missing_rowsum": {"attention_backward": {"softmax_jacobian": "no_rowsum"},
                            "softmax_backward": {"softmax_jacobian": "no_rowsum"}},
    "grad_unbiased_variance": {"layer_norm_backward": {"variance": "unbiased"}},
    "grad_no_mean_path": {"layer_norm_backward": {"mean_path": False}},
    "grad_beta_not_summed": {"layer_norm_backward": {"beta_summed": False}},
    "grad_relu_at_zero": {"feed_forward_backward": {"relu_at_zero": 1}},
}

#: Which functions a variant changes: it can only matter when one of them is called.
_USES = {
    "layer_norm": ("layer_norm", "encoder_block", "decoder_block"),
    "sinusoidal": ("sinusoidal",),
    "rope": ("rope",),
    "multihead": ("multihead", "encoder_block", "decoder_block"),
    "block": ("encoder_block", "decoder_block"),
    "attention_backward": ("attention_backward", "multihead_backward"),
    "softmax_backward": ("softmax_backward",),
    "layer_norm_backward": ("layer_norm_backward",),
    "feed_forward_backward": ("feed_forward_backward",),
}


def variant_trace(inputs: Mapping, definitions: Sequence, name: str) -> Trace:
    """The definitions' trace with the named mistake made everywhere it applies."""
    if name not in VARIANTS:
        raise StageError(f"unknown variant {name!r}: expected one of {', '.join(VARIANTS)}")
    return run_program(inputs, definitions, variant=VARIANTS[name])


def applicable(definitions: Sequence) -> list[str]:
    """The variants that can change anything: those whose operations the definitions call."""
    called = set()
    for _name, text in definitions:
        called.update(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", str(text)))
    return [name for name, settings in VARIANTS.items()
            if any(function in called for operation in settings for function in _USES[operation])]


def variant_traces(inputs: Mapping, definitions: Sequence) -> dict:
    """{variant: Trace} for every applicable variant; a variant that cannot be computed
    (a LayerNorm row of width 1 has no unbiased variance) maps to its error instead."""
    traces = {}
    for name in applicable(definitions):
        try:
            traces[name] = variant_trace(inputs, definitions, name)
        except SymbolicAttnError as error:
            traces[name] = error
    return traces
