"""Grading: exercise files, claims, judging, known mistakes, diagnosis and reports.

Owns: reading exercise TOML as data (:mod:`.exercise`, a computation file with claims:
:mod:`.computation` reads ``[inputs]``, ``[attention]`` and ``[define]``; files come through
the one file reader, :mod:`symbolic_attn.exact.source`, and every value through the one
input language, :mod:`symbolic_attn.exact.parse`; typed TOML access and the masks are
:mod:`.computation`'s ``TableReader``), claims and the rules that judge them (:mod:`.claims`), a lazy view of a
result's stages for selecting entries without closed forms (:mod:`.view`), the one check
pipeline every exercise kind goes through, for ``check`` and ``grade`` alike (:mod:`.pipeline`:
compute, select, judge, diagnose, outcome), the one mistake catalogue (:mod:`symbolic_attn.model.mistakes`),
mistakes as settings of the one core (:mod:`.diagnose`; what follows from a solution's own
earlier claims within their rounding: :mod:`.follow_through`) and of named definitions
(:mod:`.program_diagnose`), inputs declared printed-rounded, whose claims are judged over
every input that rounds to the printed one (:mod:`.rounded_inputs`), the verdicts, which
print themselves (:mod:`.outcomes`), and the command line's report (:mod:`.report`).

Grading a course: the answer key of an exercise (:mod:`.answer_key`), who the students are
(:mod:`.roster`), reading their solutions (:mod:`.submissions`: the statements; their tokens in
:mod:`.solution_tokens`, their names in :mod:`.solution_names`, the grammar of their values in
:mod:`.solution_values`), points for every student (:mod:`.batch`; a question's and a
student's result: :mod:`.results`), derivation questions -- a student's chain, every step
decided by :mod:`symbolic_attn.steps` -- (:mod:`.derivation_questions`), a sentence of
feedback per diagnosis (:mod:`.feedback`) and the grade files (:mod:`.exports`); one
platform upload graded as one submission, and the Gradescope and PrairieLearn bundles that
do it (:mod:`.bundles`).

May import: :mod:`symbolic_attn.errors`, :mod:`symbolic_attn.exact`,
:mod:`symbolic_attn.render`, :mod:`symbolic_attn.model`, :mod:`symbolic_attn.proofs`,
:mod:`symbolic_attn.steps`.
"""
