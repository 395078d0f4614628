"""symbolic_attn: transformer attention in exact arithmetic.

Exact inputs (:mod:`~symbolic_attn.exact.convert`, :mod:`~symbolic_attn.exact.parse`), structural
masks (:mod:`~symbolic_attn.model.masks`), the attention core with every stage kept
(:mod:`~symbolic_attn.model.attention`) and certified decimals (:mod:`~symbolic_attn.exact.certified`).

>>> from symbolic_attn import attention_from_scores
>>> attention_from_scores([["0", "ln(2)", "ln(3)"]], [[1, 0], [0, 2], [3, 1]]).weights
Matrix([[1/6, 1/3, 1/2]])
"""

import os

# SymPy picks its integer "ground types" when first imported: python-flint's if installed
# (it is, for certified arithmetic), else pure Python.  Printed results must be byte-identical
# on every machine, so pin the choice unless the user has made it explicitly.
os.environ.setdefault("SYMPY_GROUND_TYPES", "python")

from symbolic_attn.model.attention import AttentionResult, attention, attention_from_scores, softmax
from symbolic_attn.errors import *  # noqa: F403 -- every error type, as listed in errors.__all__
from symbolic_attn import errors as _errors
from symbolic_attn.exact.convert import to_exact, to_matrix
from symbolic_attn.model.masks import Mask
from symbolic_attn.model.multihead import multihead
from symbolic_attn.model.positional import alibi, alibi_slopes, rope, sinusoidal
from symbolic_attn.model.layernorm import layer_norm
from symbolic_attn.model.feedforward import feed_forward, gelu, relu
from symbolic_attn.model.block import decoder_block, encoder_block
from symbolic_attn.model.trace import Trace, select

__all__ = [
    "attention",
    "attention_from_scores",
    "softmax",
    "AttentionResult",
    "Mask",
    "to_exact",
    "to_matrix",
    "multihead",
    "sinusoidal",
    "rope",
    "alibi",
    "alibi_slopes",
    "layer_norm",
    "relu",
    "gelu",
    "feed_forward",
    "encoder_block",
    "decoder_block",
    "Trace",
    "select",
] + [name for name in _errors.__all__ if name[0].isupper()]
