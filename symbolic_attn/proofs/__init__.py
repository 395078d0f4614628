"""The proof checker: the ONE place where an equality or inequality is decided.

Owns: :func:`~.prove.prove_equal` (:mod:`.prove`) and its strategies (:mod:`.strategies`),
side conditions and the sign calculus (:mod:`.conditions`), honest refutation
(:mod:`.refute`), the named rule library (:mod:`.rules`), named operators that print
themselves (:mod:`.operators`), printed declarations of symbol flags (:mod:`.declarations`),
chains of steps with assumptions and scope (:mod:`.chain`), results with checks and
counterexamples (:mod:`.result`), loading derivation scripts from folders (:mod:`.scripts`),
and running independent tasks on every core, a worker trusted only with a success
(:mod:`.parallel`).
The trusted base is the strategies, the sign calculus and the rule library.

May import: :mod:`symbolic_attn.errors`, :mod:`symbolic_attn.exact`,
:mod:`symbolic_attn.render`, :mod:`symbolic_attn.model`.
"""
