"""The differential fuzzer of the checker: true identities, mutated into false ones.

Hypothesis draws the parameters of true identities over sums, products, exp/log, matrices
and masks (a template per family); each is mutated into false variants the way a slip of
the pen makes them (swap or move a bound, drop a factor, capture a name, change a range
end, flip an inequality).  The *prover alone* (``without_cross_examination``) must accept
every true identity of these families, and it must never accept a mutant that the
independent cross-examination (:mod:`symbolic_attn.proofs.crossexam`) refutes at a point.

Run as a script it prints the counts per family and mutation (``python tests/checker_fuzz.py
[EXAMPLES]``); ``test_checker_fuzz.py`` runs it under pytest.
"""

import sys
from collections import Counter
from dataclasses import dataclass, field

import sympy
from sympy import KroneckerDelta, Product, Rational, Sum, exp, log

from symbolic_attn.errors import CrossExaminationError, SymbolicAttnError
from symbolic_attn.model.attention import softmax
from symbolic_attn.model.masks import Mask
from symbolic_attn.proofs.crossexam import cross_examine
from symbolic_attn.proofs.prove import (
    Assumption, prove_equal, prove_nonnegative, prove_positive, without_cross_examination)
from symbolic_attn.proofs.rules import shift_index

i, j, k = sympy.symbols("i j k", integer=True)
n = sympy.Symbol("n", integer=True, positive=True)
x, y = sympy.symbols("x y", real=True)
xp, yp = sympy.symbols("x y", positive=True)
s = sympy.IndexedBase("s", real=True)
S = sympy.IndexedBase("S", real=True)

#: Summands a template may use (each a function of the index).
SUMMANDS = (lambda t: s[t], lambda t: s[t] ** 2, lambda t: t * s[t], lambda t: exp(s[t]), lambda t: t**2)


@dataclass(frozen=True)
class Statement:
    """``lhs relation rhs`` under ``assumptions`` with ``rules``; ``family`` and ``mutation`` name it."""

    family: str
    mutation: str
    lhs: object
    rhs: object
    relation: str = "="
    assumptions: tuple = ()
    rules: tuple = field(default=(), compare=False)


def accepted_by_prover(statement: Statement) -> bool:
    """The prover's verdict alone (the cross-examination switched off)."""
    with without_cross_examination():
        try:
            if statement.relation == "=":
                prove_equal(statement.lhs, statement.rhs, statement.assumptions, statement.rules)
            else:
                big, small = ((statement.lhs, statement.rhs) if statement.relation in (">", ">=")
                              else (statement.rhs, statement.lhs))
                prover = prove_positive if statement.relation in (">", "<") else prove_nonnegative
                prover(big - small, statement.assumptions)
        except SymbolicAttnError:
            return False
    return True


def refuted_by_cross_examination(statement: Statement) -> bool:
    """Whether the independent evaluator certifies the statement false at some point."""
    conditions = [a.condition for a in statement.assumptions if a.condition is not None]
    try:
        cross_examine(statement.lhs, statement.rhs, statement.relation, conditions, points=8,
                      seed_text=statement.family + statement.mutation)
    except CrossExaminationError:
        return True
    return False


# ------------------------------------------------------------------------- templates
# Each takes drawn parameters and returns (the true statement, its mutants).


def linearity(c, d, low, which, other):
    f, g = SUMMANDS[which], SUMMANDS[other]
    lhs = Sum(c * f(k) + d * g(k), (k, low, n))
    rhs = c * Sum(f(k), (k, low, n)) + d * Sum(g(k), (k, low, n))
    true = Statement("linearity", "none", lhs, rhs)
    mutants = [
        Statement("linearity", "move a bound", lhs, c * Sum(f(k), (k, low + 1, n)) + d * Sum(g(k), (k, low, n))),
        Statement("linearity", "change a range end", lhs, c * Sum(f(k), (k, low, n + 1)) + d * Sum(g(k), (k, low, n))),
        Statement("linearity", "drop a factor", lhs, Sum(f(k), (k, low, n)) + d * Sum(g(k), (k, low, n))),
        Statement("linearity", "index escapes", lhs, c * n * f(k) + d * Sum(g(k), (k, low, n))),
    ]
    return true, [m for m in mutants if m.rhs != rhs]


def constant_sum(c, low, extra):
    lhs = Sum(c, (k, low, n + extra))
    true = Statement("constant sum", "none", lhs, c * (n + extra - low + 1))
    mutants = [Statement("constant sum", "change a range end", lhs, c * (n + extra - low + 2))]
    if c != 1:
        mutants.append(Statement("constant sum", "drop a factor", lhs, n + extra - low + 1))
    return true, mutants


def gauss(c):
    lhs = Sum(c * k, (k, 1, n))
    true = Statement("gauss", "none", lhs, c * n * (n + 1) / 2)
    return true, [
        Statement("gauss", "change a range end", Sum(c * k, (k, 1, n + 1)), c * n * (n + 1) / 2),
        Statement("gauss", "move a bound", Sum(c * k, (k, 0, n)), c * n * (n - 1) / 2),
    ]


def double_sum(c, triangular):
    inner = (j, 1, i) if triangular else (j, 1, n)
    lhs = Sum(Sum(c * S[i, j], inner), (i, 1, n))
    swapped = Sum(Sum(c * S[i, j], (i, j, n)), (j, 1, n)) if triangular else Sum(Sum(c * S[i, j], (i, 1, n)), (j, 1, n))
    true = Statement("double sum", "none", lhs, swapped)
    mutants = [
        Statement("double sum", "capture a name", lhs, n * Sum(c * S[i, i], (i, 1, n))),
        Statement("double sum", "swap a bound", lhs, Sum(Sum(c * S[i, j], (i, 1, j)), (j, 1, n))),
        Statement("double sum", "change a range end", lhs, Sum(Sum(c * S[i, j], inner), (i, 1, n - 1))),
    ]
    return true, mutants


def rectangle(c, width):
    """Sums over a rectangle of queries and keys: the order of summation is free, the
    arguments are not."""
    m = n + width
    lhs = Sum(Sum(c * S[i, j], (j, 1, m)), (i, 1, n))
    true = Statement("rectangle", "none", lhs, Sum(Sum(c * S[i, j], (i, 1, n)), (j, 1, m)))
    return true, [
        Statement("rectangle", "swap the arguments", lhs, Sum(Sum(c * S[j, i], (j, 1, m)), (i, 1, n))),
        Statement("rectangle", "swap the ranges", lhs, Sum(Sum(c * S[i, j], (i, 1, m)), (j, 1, n))),
        Statement("rectangle", "capture a name", lhs, Sum(Sum(c * S[i, i], (j, 1, m)), (i, 1, n))),
    ]


def deltas(c):
    lhs = Sum(Sum(c * KroneckerDelta(i, j), (i, 1, n)), (j, 1, n))
    true = Statement("deltas", "none", lhs, c * n)
    return true, [
        Statement("deltas", "capture a name", Sum(Sum(c * KroneckerDelta(i, i), (i, 1, n)), (j, 1, n)), c * n),
        Statement("deltas", "drop a factor", lhs, c * n**2),
        Statement("deltas", "change a range end", Sum(Sum(c * KroneckerDelta(i, j), (i, 1, n - 1)), (j, 1, n)), c * n),
    ]


def shift(m, which):
    f = SUMMANDS[which]
    lhs = Sum(f(k), (k, 1, n))
    shifted = Sum(f(k - m), (k, 1 + m, n + m))
    true = Statement("shift", "none", lhs, shifted, rules=(shift_index(m),))
    return true, [
        Statement("shift", "change a range end", lhs, Sum(f(k - m), (k, 1 + m, n + m - 1)), rules=(shift_index(m),)),
        Statement("shift", "forget the shift", lhs, Sum(f(k), (k, 1 + m, n + m)), rules=(shift_index(m),)),
    ]


def products(c, low):
    lhs = Product(c, (k, low, n))
    true = Statement("product", "none", lhs, c ** (n - low + 1))
    return true, [
        Statement("product", "change a range end", lhs, c ** (n - low + 2)),
        Statement("product", "move a bound", Product(c, (k, low + 1, n)), c ** (n - low + 1)),
    ]


def exp_log(a, b):
    lhs = exp(a * x + b * y)
    positive = Assumption("P", "x, y > 0", condition=sympy.And(xp > 0, yp > 0))
    true = Statement("exp log", "none", lhs, exp(x) ** a * exp(y) ** b)
    return true, [
        Statement("exp log", "drop a factor", lhs, exp(x) ** a),
        Statement("exp log", "swap a bound", lhs, exp(y) ** a * exp(x) ** b if a != b else exp(x) ** (a + 1) * exp(y) ** b),
        Statement("exp log", "log of a sum", log(xp + yp), log(xp) + log(yp), assumptions=(positive,)),
    ]


def matrices(entries):
    a = sympy.ImmutableMatrix(2, 2, entries[:4])
    b = sympy.ImmutableMatrix(2, 2, entries[4:])
    true = Statement("matrices", "none", (a * b).T, b.T * a.T)
    mutants = [Statement("matrices", "swap a factor", (a * b).T, a.T * b.T)]
    if a * b != b * a:
        mutants.append(Statement("matrices", "commute", a * b, b * a))
    return true, [m for m in mutants if m.lhs != m.rhs]


def masks(logs, keep):
    grid = [[1, 1, 1], list(keep)]
    if not any(grid[1]):
        grid[1][0] = 1
    scores = sympy.ImmutableMatrix([[log(v) for v in logs[:3]], [log(v) for v in logs[3:]]])
    weights = softmax(scores, Mask.keep(grid))
    full = softmax(scores)
    true = Statement("masks", "none", sum(weights.row(1)), sympy.Integer(1))
    mutants = []
    blocked = [col for col, allowed in enumerate(grid[1]) if not allowed]
    if blocked:
        # a blocked weight set to 0 without renormalizing the others
        zeroed = [0 if not allowed else full[1, col] for col, allowed in enumerate(grid[1])]
        mutants.append(Statement("masks", "zero instead of renormalize", sum(zeroed), sympy.Integer(1)))
        mutants.append(Statement("masks", "blocked weight kept", weights[1, blocked[0]], full[1, blocked[0]]))
    return true, mutants


def inequalities(c):
    true = Statement("inequalities", "none", exp(c * x), 1 + c * x, ">=")
    return true, [
        Statement("inequalities", "flip an inequality", exp(c * x), 1 + c * x, "<="),
        Statement("inequalities", "drop a term", exp(c * x), 1 + c * x + x**2, ">="),
        Statement("inequalities", "strict at the tangent point", exp(c * x), 1 + c * x, ">"),
    ]


# --------------------------------------------------------------------------- running

TALLY = Counter()


def judge(true: Statement, mutants) -> list:
    """Problems found (empty when the checker behaved): a true identity refused by the prover,
    or a mutant that the prover accepts and the cross-examination refutes."""
    problems = []
    TALLY[("generated", true.family)] += 1
    if not accepted_by_prover(true):
        problems.append(f"true {true.family} identity refused: {true.lhs} {true.relation} {true.rhs}")
    for mutant in mutants:
        key = f"{mutant.family}: {mutant.mutation}"
        TALLY[("mutants", key)] += 1
        accepted = accepted_by_prover(mutant)
        refuted = refuted_by_cross_examination(mutant)
        TALLY[("rejected", key)] += not accepted
        TALLY[("refutable", key)] += refuted
        if accepted and refuted:
            problems.append(f"{key} accepted although refuted: {mutant.lhs} {mutant.relation} {mutant.rhs}")
    return problems


def report() -> str:
    keys = sorted({key for kind, key in TALLY if kind == "mutants"})
    lines = [f"identities generated: {sum(v for (kind, _), v in TALLY.items() if kind == 'generated')}"]
    for key in keys:
        lines.append(f"  {key}: {TALLY[('mutants', key)]} mutants, {TALLY[('rejected', key)]} rejected by the "
                     f"prover, {TALLY[('refutable', key)]} refuted by the cross-examination")
    total = sum(TALLY[("mutants", key)] for key in keys)
    rejected = sum(TALLY[("rejected", key)] for key in keys)
    lines.append(f"mutants: {total}, rejected by the prover: {rejected}")
    return "\n".join(lines)


if __name__ == "__main__":
    import random

    examples = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    rng = random.Random(1)
    small = [Rational(v) for v in (2, 3, -1, 5)] + [Rational(1, 2), Rational(-3, 2)]
    found = []
    for _ in range(examples):
        c, d = rng.choice(small), rng.choice(small)
        found += judge(*linearity(c, d, rng.choice([0, 1, 2]), rng.randrange(5), rng.randrange(5)))
        found += judge(*constant_sum(c, rng.choice([0, 1]), rng.choice([0, 1, 2])))
        found += judge(*gauss(c))
        found += judge(*double_sum(c, rng.random() < 0.5))
        found += judge(*deltas(c))
        found += judge(*rectangle(c, rng.choice([1, 2])))
        found += judge(*shift(rng.choice([1, 2, -1]), rng.randrange(5)))
        found += judge(*products(rng.choice([2, 3, Rational(1, 2)]), rng.choice([0, 1])))
        found += judge(*exp_log(rng.choice([1, 2, 3]), rng.choice([1, 2, -1])))
        found += judge(*matrices([Rational(rng.randint(-3, 3), rng.randint(1, 3)) for _ in range(8)]))
        found += judge(*masks([rng.randint(1, 5) for _ in range(6)], [rng.randint(0, 1) for _ in range(3)]))
        found += judge(*inequalities(rng.choice([1, 2, -1, Rational(1, 2)])))
    print(report())
    for problem in found:
        print("PROBLEM:", problem)
    sys.exit(1 if found else 0)
