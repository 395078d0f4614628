r"""Transformer blocks, exactly: sublayers with residual additions and layer normalization.

Post-LN (the 2017 paper): each sublayer is ``LN(x + Sublayer(x))``; stages, in order,
``attention``, ``add1``, ``norm1``, ``ffn``, ``add2``, ``norm2``, ``output``.
Pre-LN: each sublayer is ``x + Sublayer(LN(x))``; stages ``norm1``, ``attention``,
``add1``, ``norm2``, ``ffn``, ``add2``, ``output`` (no final normalization).

``attention`` is the multi-head trace (``attention.head[2].weights``, ``attention.concat``,
and ``attention`` itself its output), ``ffn`` the feed-forward trace (``ffn.hidden``...),
``norm1`` the LayerNorm trace (``norm1.mean``, ``norm1.variance``...).

The decoder block has three sublayers: masked (causal by default) ``self_attention``,
``cross_attention`` over an encoder output (``memory``), then ``ffn``; its stages are
numbered ``add1..add3`` and ``norm1..norm3``.

>>> X = [[1, 0], [0, 1]]
>>> zero = [[0, 0], [0, 0]]
>>> t = encoder_block(X, heads=[(zero, zero, zero)], WO=zero, W1=zero, W2=zero)
>>> [p for p in t if "." not in p]
['attention', 'add1', 'norm1', 'ffn', 'add2', 'norm2', 'output']
>>> t["output"]
Matrix([
[ 1, -1],
[-1,  1]])
>>> [p for p in encoder_block(X, heads=[(zero, zero, zero)], WO=zero, W1=zero, W2=zero, norm="pre") if "." not in p]
['norm1', 'attention', 'add1', 'norm2', 'ffn', 'add2', 'output']

``residual=False`` (the addition forgotten) and the other ``norm`` are classic mistakes,
kept as settings of this one implementation; ``layer_norm_options`` and
``multihead_options`` pass settings (such as a variant) to every LayerNorm and head.
"""

from __future__ import annotations

import sympy

from symbolic_attn.errors import ShapeError
from symbolic_attn.model.compose import as_operand, build_trace, check_choice, check_flag, check_options, check_size
from symbolic_attn.model.feedforward import feed_forward
from symbolic_attn.model.layernorm import layer_norm
from symbolic_attn.model.multihead import multihead
from symbolic_attn.model.trace import Trace

__all__ = ["encoder_block", "decoder_block", "NORMS"]

NORMS = {"post": "LN(x + Sublayer(x)) (the 2017 paper)", "pre": "x + Sublayer(LN(x))"}
#: The keywords ``layer_norm_options`` and ``multihead_options`` may pass on (the others
#: are the block's own arguments).
LAYER_NORM_OPTIONS = ("variance", "eps_placement", "affine")
MULTIHEAD_OPTIONS = ("scale", "head_order", "project", "masking", "axis", "on_empty_row", "stable")


def _stack(X, sublayers, *, norm, eps, gammas, betas, residual, layer_norm_options, settings) -> Trace:
    """Apply ``sublayers`` [(name, function(input) -> Trace)] with residuals and norms."""
    check_choice(norm, NORMS, "norm")
    check_flag(residual, "residual")
    ln_options = check_options(layer_norm_options, LAYER_NORM_OPTIONS, "layer_norm_options")
    entries = []
    x = X
    for k, (name, sublayer) in enumerate(sublayers, start=1):
        def normalize(value, k=k):
            return layer_norm(value, eps=eps, gamma=gammas[k - 1], beta=betas[k - 1], **ln_options)

        check_size(x, f"the input of {name}")
        if norm == "pre":
            normed = normalize(x)
            entries.append((f"norm{k}", normed))
            trace = sublayer(normed["output"])
        else:
            trace = sublayer(x)
        entries.append((name, trace))
        out = trace["output"]
        check_size(out, name)
        if out.shape != x.shape:
            raise ShapeError(
                f"{name}: the sublayer output is {out.rows}x{out.cols} but its input is {x.rows}x{x.cols}; "
                "the residual addition needs equal shapes (check W_O or W2)"
            )
        added = sympy.ImmutableMatrix(x + out) if residual else out
        entries.append((f"add{k}", added))
        if norm == "post":
            normed = normalize(added)
            entries.append((f"norm{k}", normed))
            x = normed["output"]
        else:
            x = added
    entries.append(("output", x))
    return build_trace(entries, settings={**settings, "norm": norm, "eps": eps, "residual": residual})


def encoder_block(X, heads, WO, W1, b1=0, W2=None, b2=0, eps=0, norm: str = "post", mask=None,
                  activation: str = "relu", gamma1=1, beta1=0, gamma2=1, beta2=0, *, residual: bool = True,
                  layer_norm_options=None, multihead_options=None) -> Trace:
    """One encoder block: multi-head self-attention, then the feed-forward sublayer."""
    X = as_operand(X, "encoder_block input")
    check_flag(residual, "encoder_block: residual")
    mh_options = check_options(multihead_options, MULTIHEAD_OPTIONS, "multihead_options")
    sublayers = [
        ("attention", lambda x: multihead(x, heads, WO, mask=mask, **mh_options)),
        ("ffn", lambda x: feed_forward(x, W1, b1, W2, b2, activation=activation)),
    ]
    return _stack(X, sublayers, norm=norm, eps=eps, gammas=[gamma1, gamma2], betas=[beta1, beta2],
                  residual=residual, layer_norm_options=layer_norm_options, settings={"block": "encoder"})


def decoder_block(X, memory, self_heads, self_WO, cross_heads, cross_WO, W1, b1=0, W2=None, b2=0, eps=0,
                  norm: str = "post", mask="causal", memory_mask=None, activation: str = "relu",
                  gamma1=1, beta1=0, gamma2=1, beta2=0, gamma3=1, beta3=0, *, residual: bool = True,
                  layer_norm_options=None, multihead_options=None) -> Trace:
    """One decoder block: masked self-attention, cross-attention over ``memory`` (the
    encoder output: keys and values), then the feed-forward sublayer."""
    X = as_operand(X, "decoder_block input")
    check_flag(residual, "decoder_block: residual")
    E = as_operand(memory, "decoder_block memory")
    check_size(E, "decoder_block memory")
    mh_options = check_options(multihead_options, MULTIHEAD_OPTIONS, "multihead_options")
    sublayers = [
        ("self_attention", lambda x: multihead(x, self_heads, self_WO, mask=mask, **mh_options)),
        ("cross_attention", lambda x: multihead(x, cross_heads, cross_WO, key=E, mask=memory_mask, **mh_options)),
        ("ffn", lambda x: feed_forward(x, W1, b1, W2, b2, activation=activation)),
    ]
    return _stack(X, sublayers, norm=norm, eps=eps, gammas=[gamma1, gamma2, gamma3], betas=[beta1, beta2, beta3],
                  residual=residual, layer_norm_options=layer_norm_options, settings={"block": "decoder"})
