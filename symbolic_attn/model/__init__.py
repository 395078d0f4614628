"""The exact computations: masks, softmax, attention, each returning every named stage.

Owns: structural masks (:mod:`.masks`), the one attention core (:mod:`.attention`) and
its certified decimals straight from the numbers (:mod:`.decimals`); the named stages of a
computation and the one selection helper (:mod:`.trace`), built from stages and nested
traces by :mod:`.compose` with certified decimals of any closed form (:mod:`.certify`);
then heads (:mod:`.multihead`), positions (:mod:`.positional`), LayerNorm
(:mod:`.layernorm`), the feed-forward sublayer (:mod:`.feedforward`) and blocks
(:mod:`.block`); computation files as named definitions (:mod:`.program`, calling
:mod:`.functions`), the one catalogue of known mistakes -- ids, descriptions, the
sentences a student reads -- (:mod:`.mistakes`) and the model's mistakes as settings of
its computations (:mod:`.variants`); the exact backward passes, each a trace of named
gradient stages -- attention and softmax (:mod:`.backward`), LayerNorm
(:mod:`.backward_norm`), the feed-forward sublayer (:mod:`.backward_ffn`), heads
(:mod:`.backward_heads`) -- and the vector-Jacobian product of any computation by exact
differentiation (:mod:`.gradient`).

May import: :mod:`symbolic_attn.errors`, :mod:`symbolic_attn.exact`, :mod:`symbolic_attn.render`.
"""
