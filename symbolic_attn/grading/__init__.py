"""Grading: exercise files, claims, judging, known mistakes, diagnosis and reports.

Owns: reading exercise TOML as data (:mod:`.exercise`; files read by the one file reader,
:mod:`symbolic_attn.exact.source`; typed TOML access and the masks in :mod:`.reader`), the one value grammar of numbers and nested-list matrices
(:mod:`.values`), claims and the rules that judge them (:mod:`.claims`), a lazy view of a
result's stages for selecting entries without closed forms (:mod:`.view`), mistakes as
settings of the one core (:mod:`.diagnose`), the verdict report (:mod:`.report`), and
showing input-derived text safely (:mod:`.text`).

May import: :mod:`symbolic_attn.errors`, :mod:`symbolic_attn.exact`,
:mod:`symbolic_attn.render`, :mod:`symbolic_attn.model`, :mod:`symbolic_attn.proofs`.
"""
