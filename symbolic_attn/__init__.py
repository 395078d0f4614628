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

from symbolic_attn.model.attention import AttentionResult, attention, attention_from_scores, softmax  # noqa: E402
from symbolic_attn.errors import *  # noqa: E402,F401,F403  (every error type, as listed in errors.__all__)
from symbolic_attn import errors as _errors  # noqa: E402
from symbolic_attn.exact.convert import to_exact, to_matrix  # noqa: E402
from symbolic_attn.model.masks import Mask  # noqa: E402
from symbolic_attn.model.multihead import multihead  # noqa: E402
from symbolic_attn.model.positional import alibi, alibi_slopes, rope, sinusoidal  # noqa: E402
from symbolic_attn.model.layernorm import layer_norm  # noqa: E402
from symbolic_attn.model.feedforward import feed_forward, gelu, relu  # noqa: E402
from symbolic_attn.model.block import decoder_block, encoder_block  # noqa: E402
from symbolic_attn.model.trace import Trace, select  # noqa: E402

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
