"""Lecture notes: worked examples, the latexified kernel, building the documents.

Owns: the worked examples of the reference documents (:mod:`.worked`, filled and checked
by :mod:`.steps`), the stable masked softmax kernel (:mod:`.kernel`), ``notes.tex`` and its
PDF (:mod:`.document`), ``notes.md`` (:mod:`.markdown`), the worked transformer-block examples (:mod:`.worked_block`), the
backpropagation chapter's worked example (:mod:`.worked_backward`) and the set of documents
``derive`` writes (:mod:`.build`), and each result as a fragment that fits any document (:mod:`.fragment`).

May import: every layer below it (errors, exact, render, model, proofs, grading).
"""
