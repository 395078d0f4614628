"""The built-in derivation scripts (one result each); run them with ``symbolic-attn derive``.

Part of the ``symbolic_attn`` package (nothing named ``derivations`` is installed at the top
level), so that ``symbolic-attn derive`` finds them from a wheel too.
The runner loads every ``*.py`` here except names starting with ``_`` (like this file).

Owns: the built-in results, one script per result (``NAME`` and ``build()``):
``alibi_causal``, ``attention_gradients``, ``attention_mixes_values``, ``identity_limits``, ``layernorm_invariance``,
``masked_renormalization``, ``multihead_sum``, ``permutation_equivariance``, ``rope``,
``shift_invariance``, ``sinusoidal_positions``, ``softmax_jacobian``, ``sqrt_dk_scaling``.

May import: :mod:`symbolic_attn.errors`, :mod:`symbolic_attn.exact`,
:mod:`symbolic_attn.render`, :mod:`symbolic_attn.model`, :mod:`symbolic_attn.proofs`.
Nothing imports them: :mod:`symbolic_attn.proofs.scripts` loads them by path.
"""
