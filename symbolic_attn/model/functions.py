r"""The functions a computation file's definitions may call, and how their arguments are read.

Each entry of :data:`FUNCTIONS` is ``name -> (parameters, handler)``: parameters are
``(name, kind, default)`` (``_REQUIRED`` for none), the kind says how an evaluated argument
is converted (matrix, scalar, count, option, mask, heads, positions, number_or_matrix,
matrices; ``definition`` and ``input`` are names, read without evaluating them), and the handler calls the one implementation in the model layer, applying a
variant's settings (see :mod:`symbolic_attn.model.variants`) where it has any.

>>> sorted(FUNCTIONS)[:4]
['alibi', 'attention', 'attention_backward', 'block']
"""

from __future__ import annotations

import sympy

from symbolic_attn.errors import DefinitionError
from symbolic_attn.model.compose import MaskSpec, build_trace

__all__ = ["FUNCTIONS", "Option", "REQUIRED"]

REQUIRED = object()

class Option(str):
    """A quoted option in a definition ('causal', 'pre', 'tanh'...)."""


# -- the functions a definition may call --------------------------------------------------
# Each: name -> (parameters [(name, kind, default)], handler(evaluator, **arguments)).
# Kinds convert evaluated arguments: matrix, scalar, count, option, mask, heads, positions,
# number_or_matrix, matrices (the rest of the positional arguments).


def _attention(ev, Q, K, V, mask, scale, scores):
    from symbolic_attn.model.attention import attention, attention_from_scores
    from symbolic_attn.model.compose import resolve_mask

    overrides = dict(ev.variant.get("attention", {}))  # a mistake of the attention core itself
    scale = overrides.pop("scale", scale)
    if scores is not None:  # given (already scaled) scores, as the [attention] table allows
        if Q is not None or K is not None:
            raise DefinitionError("attention: give either scores= or Q and K, not both")
        scale = "none" if scale == "default" else scale
        return attention_from_scores(scores, V, mask=resolve_mask(mask, *scores.shape), scale=scale, **overrides).trace
    if Q is None or K is None:
        raise DefinitionError("attention needs Q, K and V (or scores= and V)")
    return attention(Q, K, V, mask=resolve_mask(mask, Q.rows, K.rows), scale=scale, **overrides).trace


def _softmax(ev, S, mask):
    from symbolic_attn.model.attention import softmax
    from symbolic_attn.model.compose import resolve_mask

    weights = softmax(S, resolve_mask(mask, *S.shape))
    return build_trace([("weights", weights), ("output", weights)])


def _multihead(ev, X, heads, WO, mask, query, key, scale):
    from symbolic_attn.model.multihead import multihead

    if X is not None and query is not None:
        raise DefinitionError("multihead: give the input X or query= (with key= for cross-attention), not both")
    source = X if X is not None else query
    if source is None:
        raise DefinitionError("multihead: the input is missing (multihead(X, heads=...) or multihead(query=D, key=E, ...))")
    options = _multihead_options(ev)
    scale = options.pop("scale", scale)
    return multihead(source, heads, WO, key=key, mask=mask, scale=scale, **options)


def _multihead_options(ev) -> dict:
    """Settings for every head: the attention core's (``attention``) and multihead's own."""
    return {**ev.variant.get("attention", {}), **ev.variant.get("multihead", {})}


def _sinusoidal(ev, n, d, base):
    from symbolic_attn.model.positional import sinusoidal

    return sinusoidal(n, d, base, **ev.variant.get("sinusoidal", {}))


def _rope(ev, X, positions, base):
    from symbolic_attn.model.positional import rope

    return rope(X, positions, base, **ev.variant.get("rope", {}))


def _alibi(ev, n, m, heads):
    from symbolic_attn.model.positional import alibi

    return alibi(n, m, heads)


def _layer_norm(ev, X, eps, gamma, beta):
    from symbolic_attn.model.layernorm import layer_norm

    return layer_norm(X, eps, gamma, beta, **ev.variant.get("layer_norm", {}))


def _relu(ev, X):
    from symbolic_attn.model.feedforward import relu

    return relu(X)


def _gelu(ev, X, approximate):
    from symbolic_attn.model.feedforward import gelu

    return gelu(X, approximate)


def _feed_forward(ev, X, W1, b1, W2, b2, activation):
    from symbolic_attn.model.feedforward import feed_forward

    return feed_forward(X, W1, b1, W2, b2, activation)


def _block_options(ev, norm):
    block = dict(ev.variant.get("block", {}))
    if block.pop("flip_norm", False):
        norm = "pre" if norm == "post" else "post"
    return {"norm": norm, "layer_norm_options": ev.variant.get("layer_norm"),
            "multihead_options": _multihead_options(ev), **block}


def _encoder_block(ev, X, heads, WO, W1, b1, W2, b2, eps, norm, mask, activation, gamma1, beta1, gamma2, beta2):
    from symbolic_attn.model.block import encoder_block

    return encoder_block(X, heads, WO, W1, b1, W2, b2, eps, mask=mask, activation=activation, gamma1=gamma1,
                         beta1=beta1, gamma2=gamma2, beta2=beta2, **_block_options(ev, norm))


def _decoder_block(ev, X, memory, self_heads, self_WO, cross_heads, cross_WO, W1, b1, W2, b2, eps, norm, mask,
                   memory_mask, activation):
    from symbolic_attn.model.block import decoder_block

    return decoder_block(X, memory, self_heads, self_WO, cross_heads, cross_WO, W1, b1, W2, b2, eps, mask=mask,
                         memory_mask=memory_mask, activation=activation, **_block_options(ev, norm))


def _attention_backward(ev, Q, K, V, G, mask, scale):
    from symbolic_attn.model.backward import attention_backward
    from symbolic_attn.model.compose import resolve_mask

    return attention_backward(Q, K, V, G, mask=resolve_mask(mask, Q.rows, K.rows), scale=scale,
                              **ev.variant.get("attention_backward", {}))


def _softmax_backward(ev, S, G, mask):
    from symbolic_attn.model.backward import softmax_backward
    from symbolic_attn.model.compose import resolve_mask

    return softmax_backward(S, G, resolve_mask(mask, *S.shape), **ev.variant.get("softmax_backward", {}))


def _layer_norm_backward(ev, X, G, eps, gamma, beta):
    from symbolic_attn.model.backward_norm import layer_norm_backward

    return layer_norm_backward(X, G, eps, gamma, beta, **ev.variant.get("layer_norm_backward", {}))


def _feed_forward_backward(ev, X, W1, b1, W2, b2, G, activation):
    from symbolic_attn.model.backward_ffn import feed_forward_backward

    return feed_forward_backward(X, W1, b1, W2, b2, G, activation, **ev.variant.get("feed_forward_backward", {}))


def _multihead_backward(ev, X, heads, WO, G, mask, key, scale):
    from symbolic_attn.model.backward_heads import multihead_backward

    return multihead_backward(X, heads, WO, G, key=key, mask=mask, scale=scale,
                              **ev.variant.get("attention_backward", {}))


def _grad(ev, E, G, wrt):
    return ev.gradient(E, G, wrt)


def _concat(ev, matrices):
    if not matrices:
        raise DefinitionError("concat needs at least one matrix")
    rows = {m.rows for m in matrices}
    if len(rows) != 1:
        raise DefinitionError(f"concat: the matrices have different row counts {sorted(rows)}")
    return sympy.ImmutableMatrix.hstack(*matrices)


def _identity(ev, n):
    return sympy.ImmutableMatrix(sympy.eye(n))


def _ones(ev, n, m):
    return sympy.ImmutableMatrix(sympy.ones(n, n if m is None else m))


def _zeros(ev, n, m):
    return sympy.ImmutableMatrix(sympy.zeros(n, n if m is None else m))


def _transpose(ev, A):
    return A.T


def _keep(ev, M):
    return MaskSpec("keep", M)


def _block(ev, M):
    return MaskSpec("block", M)


def _padding(ev, k):
    return MaskSpec("padding", k)


_MASK = ("mask", "mask", Option("none"))
FUNCTIONS = {
    "attention": ([("Q", "matrix", None), ("K", "matrix", None), ("V", "matrix", REQUIRED), _MASK,
                   ("scale", "scale", Option("default")), ("scores", "matrix", None)], _attention),
    "softmax": ([("S", "matrix", REQUIRED), _MASK], _softmax),
    "multihead": ([("X", "matrix", None), ("heads", "heads", REQUIRED), ("WO", "matrix", None), _MASK,
                   ("query", "matrix", None), ("key", "matrix", None), ("scale", "scale", Option("default"))],
                  _multihead),
    "sinusoidal": ([("n", "count", REQUIRED), ("d", "count", REQUIRED), ("base", "scalar", 10000)], _sinusoidal),
    "rope": ([("X", "matrix", REQUIRED), ("positions", "positions", None), ("base", "scalar", 10000)], _rope),
    "alibi": ([("n", "count", REQUIRED), ("m", "count", None), ("heads", "count", 1)], _alibi),
    "layer_norm": ([("X", "matrix", REQUIRED), ("eps", "scalar", 0), ("gamma", "number_or_matrix", 1),
                    ("beta", "number_or_matrix", 0)], _layer_norm),
    "relu": ([("X", "matrix", REQUIRED)], _relu),
    "gelu": ([("X", "matrix", REQUIRED), ("approximate", ("none", "tanh"), Option("none"))], _gelu),
    "feed_forward": ([("X", "matrix", REQUIRED), ("W1", "matrix", REQUIRED), ("b1", "number_or_matrix", 0),
                      ("W2", "matrix", REQUIRED), ("b2", "number_or_matrix", 0),
                      ("activation", ("relu", "gelu", "gelu_tanh", "none"), Option("relu"))], _feed_forward),
    "encoder_block": ([("X", "matrix", REQUIRED), ("heads", "heads", REQUIRED), ("WO", "matrix", REQUIRED),
                       ("W1", "matrix", REQUIRED), ("b1", "number_or_matrix", 0), ("W2", "matrix", REQUIRED),
                       ("b2", "number_or_matrix", 0), ("eps", "scalar", 0), ("norm", ("post", "pre"), Option("post")),
                       _MASK, ("activation", ("relu", "gelu", "gelu_tanh", "none"), Option("relu")),
                       ("gamma1", "number_or_matrix", 1), ("beta1", "number_or_matrix", 0),
                       ("gamma2", "number_or_matrix", 1), ("beta2", "number_or_matrix", 0)], _encoder_block),
    "decoder_block": ([("X", "matrix", REQUIRED), ("memory", "matrix", REQUIRED), ("self_heads", "heads", REQUIRED),
                       ("self_WO", "matrix", REQUIRED), ("cross_heads", "heads", REQUIRED),
                       ("cross_WO", "matrix", REQUIRED), ("W1", "matrix", REQUIRED), ("b1", "number_or_matrix", 0),
                       ("W2", "matrix", REQUIRED), ("b2", "number_or_matrix", 0), ("eps", "scalar", 0),
                       ("norm", ("post", "pre"), Option("post")), ("mask", "mask", Option("causal")),
                       ("memory_mask", "mask", Option("none")),
                       ("activation", ("relu", "gelu", "gelu_tanh", "none"), Option("relu"))], _decoder_block),
    "attention_backward": ([("Q", "matrix", REQUIRED), ("K", "matrix", REQUIRED), ("V", "matrix", REQUIRED),
                            ("G", "matrix", REQUIRED), _MASK, ("scale", "scale", Option("default"))],
                           _attention_backward),
    "softmax_backward": ([("S", "matrix", REQUIRED), ("G", "matrix", REQUIRED), _MASK], _softmax_backward),
    "layer_norm_backward": ([("X", "matrix", REQUIRED), ("G", "matrix", REQUIRED), ("eps", "scalar", 0),
                             ("gamma", "number_or_matrix", 1), ("beta", "number_or_matrix", 0)],
                            _layer_norm_backward),
    "feed_forward_backward": ([("X", "matrix", REQUIRED), ("W1", "matrix", REQUIRED), ("b1", "number_or_matrix", 0),
                               ("W2", "matrix", REQUIRED), ("b2", "number_or_matrix", 0), ("G", "matrix", REQUIRED),
                               ("activation", ("relu", "gelu", "gelu_tanh", "none"), Option("relu"))],
                              _feed_forward_backward),
    "multihead_backward": ([("X", "matrix", REQUIRED), ("heads", "heads", REQUIRED), ("WO", "matrix", None),
                            ("G", "matrix", REQUIRED), _MASK, ("key", "matrix", None),
                            ("scale", "scale", Option("default"))], _multihead_backward),
    "grad": ([("E", "definition", REQUIRED), ("G", "matrix", REQUIRED), ("wrt", "input", REQUIRED)], _grad),
    "concat": ([("matrices", "matrices", REQUIRED)], _concat),
    "identity": ([("n", "count", REQUIRED)], _identity),
    "ones": ([("n", "count", REQUIRED), ("m", "count", None)], _ones),
    "zeros": ([("n", "count", REQUIRED), ("m", "count", None)], _zeros),
    "transpose": ([("A", "matrix", REQUIRED)], _transpose),
    "keep": ([("M", "matrix", REQUIRED)], _keep),
    "block": ([("M", "matrix", REQUIRED)], _block),
    "padding": ([("k", "count0", REQUIRED)], _padding),
}
