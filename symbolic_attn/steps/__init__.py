r"""The steps reader: a student's own derivation, read safely from LaTeX, Markdown or text.

Owns: the reader -- the declarations of the letters a derivation uses (:mod:`.declarations`), the
tokenizer (:mod:`.tokens`), the grammar of one side of a step (:mod:`.grammar`), the values
it reads -- scalars, vectors as functions of an index, matrices -- (:mod:`.values`; how an
explicit matrix was computed, kept for naming a mistake: :mod:`.written`), the
echo of a reading in the tool's notation and as LaTeX (:mod:`.echo`) and the document
reader that finds the displays, rows, chains, relations and reasons (:mod:`.document`) --
and the checking of what was read: a step's verdict (:mod:`.verdict`), what a side needs
to be a real number (:mod:`.domains`), one step decided by the sound checker
(:mod:`.decide`); for random variables the declared families and the unevaluated E, Var,
Cov (:mod:`.randomness`), the rules of expectation (:mod:`.expectation`), the small
distributions that refute (:mod:`.random_models`) and a step about them decided
(:mod:`.random_steps`); the wrong rules that name a false step (:mod:`.wrong_rules`) and
the report of every chain of a file (:mod:`.report`).
Nothing is evaluated and no general parser is used: every SymPy object is built from
tokens, and every line is either read (and echoed) or refused with the reason and column.

May import: :mod:`symbolic_attn.errors`, :mod:`symbolic_attn.exact`,
:mod:`symbolic_attn.render`, :mod:`symbolic_attn.model`, :mod:`symbolic_attn.proofs`.

Bottom to top: randomness, tokens, declarations, echo, written, values; grammar; document; verdict, expectation,
random_models, random_steps, domains; decide, wrong_rules; report.
"""
