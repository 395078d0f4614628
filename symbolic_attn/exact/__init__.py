"""Exact values from text and Python values; certified decimals.  The bottom layer.

Owns: the bounds on untrusted input (:mod:`.limits`), the safe parser, one grammar in
which a nested list is a matrix everywhere (:mod:`.parse`), the float policy and Python
value conversion (:mod:`.convert`), certified arb intervals and the exact zero test for
numbers (:mod:`.certified`), rounding decisions in integers (:mod:`.rounding`), the
bounded memo for pure functions of exact values (:mod:`.memo`), and the one file reader
every input file goes through (:mod:`.source`: regular files, size first, UTF-8/UTF-16,
LF line endings, the TOML pre-scan).

May import: :mod:`symbolic_attn.errors` only.
"""
