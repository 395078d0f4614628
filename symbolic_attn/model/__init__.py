"""The exact computations: masks, softmax, attention, each returning every named stage.

Owns: structural masks (:mod:`.masks`), the one attention core (:mod:`.attention`) and
its certified decimals straight from the numbers (:mod:`.decimals`); later heads,
positions, LayerNorm and blocks.

May import: :mod:`symbolic_attn.errors`, :mod:`symbolic_attn.exact`, :mod:`symbolic_attn.render`.
"""
