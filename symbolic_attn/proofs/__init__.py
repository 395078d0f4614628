"""The proof checker: the ONE place where an equality or inequality is decided.

Owns: :func:`~.prove.prove_equal` (:mod:`.prove`) and its strategies (:mod:`.strategies`),
the normal form of sums (:mod:`.sums`), sums reindexed by a reflection or a shift of their
range (:mod:`.reindex`), side conditions and the sign calculus
(:mod:`.conditions`), honest refutation (:mod:`.refute`), display notation and what it
stands for (:mod:`.notation`), values shown in messages (:mod:`.messages`), the named rule
library (:mod:`.rules`), named operators that print themselves (:mod:`.operators`), printed declarations of symbol flags (:mod:`.declarations`),
chains of steps with assumptions and scope (:mod:`.chain`), results with checks and
counterexamples (:mod:`.result`), loading derivation scripts from folders (:mod:`.scripts`),
running independent tasks on every core, a worker trusted only with a success
(:mod:`.parallel`), capture-avoiding substitution and stand-ins for bound indices
(:mod:`.binders`), the closed domain table (:mod:`.domains`), stated conditions checked
together (:mod:`.consistency`) and the independent cross-examination of every proved step
(:mod:`.crossexam`).
The trusted base is the binders, the domain table, the strategies with the sum normal form,
the sign calculus and the rule library, with the cross-examination as a second line of defence
(``docs/trusted-base.md``).

May import: :mod:`symbolic_attn.errors`, :mod:`symbolic_attn.exact`,
:mod:`symbolic_attn.render`, :mod:`symbolic_attn.model`.

The authoring API, in one import: ``from symbolic_attn.proofs import Derivation, Step, ...``
(the chain, results, the rule helpers and the named operators; every other name stays in its
module).

Data flows down: no module of proofs/ imports one that imports it back, not even lazily
inside a function, and no module imports another's private (underscored) name.  Bottom to
top: messages, binders, domains, consistency, crossexam, declarations, operators, parallel;
notation, sums, reindex; conditions; strategies, refute, rules; prove; chain; result; scripts.
"""

from symbolic_attn.proofs.chain import Assumption, Computed, Derivation, Scope, Step, cited
from symbolic_attn.proofs.conditions import ForAll
from symbolic_attn.proofs.operators import (
    ColumnSoftmax, MaskedSoftmax, MaskedSoftmaxAt, NamedOperator, RowSoftmax, Sigmoid, SoftmaxAt, Trace)
from symbolic_attn.proofs.prove import Frac
from symbolic_attn.proofs.result import Case, Check, Counterexample, Result
from symbolic_attn.proofs.rules import Bijection, rename_index, reindex_by, shift_index, split_blocks

__all__ = [
    "Derivation", "Step", "Assumption", "Scope", "Result", "Check", "Case", "Counterexample", "Computed",
    "Frac", "ForAll", "cited",
    "Bijection", "shift_index", "rename_index", "reindex_by", "split_blocks",
    "NamedOperator", "Sigmoid", "SoftmaxAt", "MaskedSoftmaxAt", "RowSoftmax", "ColumnSoftmax", "MaskedSoftmax", "Trace",
]
