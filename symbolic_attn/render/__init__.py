"""How exact values and documents print: LaTeX, Markdown, text tables, JSON, figures.

Owns: LaTeX of exact expressions and matrices, escaping of free text (:mod:`.latex`), the
text/LaTeX/JSON views of a computed trace (:mod:`.display`), exact strings that parse
back to the same value and the one canonical form of each value (:mod:`.exact_text`),
mathematical labels of stage paths (:mod:`.labels`), document blocks
(:mod:`.blocks`), Markdown conversion (:mod:`.markdown`), TikZ figures (:mod:`.figures`),
notebook display of any trace (:mod:`.notebook`) and text that fits a terminal -- display
width, wrapping, tables of columns (:mod:`.columns`).
It sits *below* the objects it prints (they print themselves through it), so it works
on duck-typed values and never imports them.

May import: :mod:`symbolic_attn.errors`, :mod:`symbolic_attn.exact`.
"""
