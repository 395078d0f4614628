"""Numerics: numeric attention implementations held against the exact result.

Owns: the oracle for float implementations (numpy, JAX, PyTorch or a student's own):
finding array libraries without importing them eagerly (:mod:`.backends`), the mask
conventions of the libraries both ways (:mod:`.adapters`), the float error bounds per
dtype (:mod:`.bounds`), calling the implementation and reading what it returned
(:mod:`.calling`), certified comparison (:mod:`.compare`) and its reports
(:mod:`.report`), the battery of cases (:mod:`.battery`), what a kernel can take
(:mod:`.capabilities`), modules and multi-head callables (:mod:`.modules`) and running it
all (:mod:`.suite`), naming the classic bug (:mod:`.diagnose`), running the
implementation in a child process for the command line (:mod:`.isolation`), Hypothesis
strategies (:mod:`.strategies`), and the backward passes (:mod:`.backward`, with
:mod:`.backward_bounds`, :mod:`.backward_exact`, :mod:`.backward_cases`,
:mod:`.backward_diagnose`, :mod:`.backward_report`).  The public faces are :mod:`symbolic_attn.testing` and
:mod:`symbolic_attn.strategies`.

May import: :mod:`symbolic_attn.errors`, :mod:`symbolic_attn.exact`,
:mod:`symbolic_attn.render`, :mod:`symbolic_attn.model`, :mod:`symbolic_attn.proofs`,
:mod:`symbolic_attn.grading`.  Never numpy, JAX or PyTorch at import time.
"""
