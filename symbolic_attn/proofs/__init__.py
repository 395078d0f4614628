"""The proof checker: the ONE place where an equality or inequality is decided.

Owns: :func:`~.prove.prove_equal` and its strategies (:mod:`.prove`), chains of steps with
assumptions and scope (:mod:`.chain`), results with checks and counterexamples
(:mod:`.result`), and loading derivation scripts from folders (:mod:`.scripts`).

May import: :mod:`symbolic_attn.errors`, :mod:`symbolic_attn.exact`,
:mod:`symbolic_attn.render`, :mod:`symbolic_attn.model`.
"""
