"""Exact values from text and Python values; certified decimals.  The bottom layer.

Owns: the bounds on untrusted input (:mod:`.limits`, one ``Limits`` for every front end),
the one input language -- its grammar, a cheap textual pass and then a typed tree with
source spans (:mod:`.syntax`), its one evaluator (:mod:`.evaluate`) and the entry points
text -> value (:mod:`.parse`) --, the float policy and Python
value conversion (:mod:`.convert`), arb enclosures, signs and the exact zero test for
numbers (:mod:`.intervals`, the bottom: the evaluator decides divisors with it), certified
decimals built on them (:mod:`.certified`), rounding decisions in integers (:mod:`.rounding`), the
bounded memo for pure functions of exact values (:mod:`.memo`), and the one file reader
every input file goes through (:mod:`.source`: regular files, size first, UTF-8/UTF-16,
LF line endings, the TOML pre-scan), and the wall-clock bound on one piece of work inside a
command (:mod:`.deadline`).

May import: :mod:`symbolic_attn.errors` only.
"""
