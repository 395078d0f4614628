"""Grading: exercise files, claims, judging, known mistakes, diagnosis and reports.

Owns: reading exercise TOML as data (:mod:`.exercise`), claims and the rules that judge
them (:mod:`.claims`), mistakes as settings of the one core (:mod:`.diagnose`) and the
verdict report (:mod:`.report`).

May import: :mod:`symbolic_attn.errors`, :mod:`symbolic_attn.exact`,
:mod:`symbolic_attn.render`, :mod:`symbolic_attn.model`, :mod:`symbolic_attn.proofs`.
"""
