"""The trusted base by principle: binders, the closed domain table, typed errors (issue 18).

The adversarial suite (adversarial_cases.py) holds false and true steps by class; this file
tests the mechanisms themselves: one capture-avoiding substitution, stand-ins for bound
indices, a domain table that refuses what it does not list, and no untyped exception from
any public entry point of ``symbolic_attn.proofs`` on pathological input.
"""

import functools
import re
from pathlib import Path

import pytest
import sympy
from sympy import KroneckerDelta, Lambda, Product, Sum

from symbolic_attn.errors import ProofError, SymbolicAttnError, UndecidedError
from symbolic_attn.proofs import domains
from symbolic_attn.proofs.binders import bind_fresh, substitute, unbind
from symbolic_attn.proofs.conditions import Condition, Facts, prove_condition, side_conditions
from symbolic_attn.proofs.prove import (
    Assumption, ForAll, prove_equal, prove_nonnegative, prove_positive, prove_unequal)

ROOT = Path(__file__).resolve().parent.parent
i, j, k, n = sympy.symbols("i j k n", integer=True, positive=True)
x = sympy.Symbol("x", real=True)
s = sympy.IndexedBase("s", real=True)


# ---------------------------------------------------------------------------- binders

SUBSTITUTIONS = [
    # (id, expression, mapping, expected, is the result alpha-equivalent to expected?)
    ("free-replaced", Sum(s[i, j], (i, 1, n)), {j: 2}, Sum(s[i, 2], (i, 1, n))),
    ("bound-shadows", Sum(s[i], (i, 1, n)), {i: 2}, Sum(s[i], (i, 1, n))),
    ("limit-replaced", Sum(s[i], (i, 1, n)), {n: 5}, Sum(s[i], (i, 1, 5))),
    ("inner-limit-sees-outer", Sum(s[i, j], (j, 1, i), (i, 1, n)), {i: 7}, Sum(s[i, j], (j, 1, i), (i, 1, n))),
    ("product-shadows", Product(s[k], (k, 1, n)), {k: 3}, Product(s[k], (k, 1, n))),
    ("lambda-shadows", Lambda(x, x + n), {x: 1}, Lambda(x, x + n)),
]


@pytest.mark.parametrize("expr, mapping, expected", [c[1:] for c in SUBSTITUTIONS], ids=[c[0] for c in SUBSTITUTIONS])
def test_substitution_respects_binders(expr, mapping, expected):
    assert substitute(expr, mapping) == expected


def test_substitution_renames_instead_of_capturing():
    # j -> i inside a sum over i: the bound i is renamed; the new i stays free.
    result = substitute(Sum(s[i, j], (i, 1, n)), {j: i})
    (bound, _, _), = result.limits
    assert bound != i and i in result.free_symbols
    assert result.function == s[bound, i]
    # what a bare xreplace does (the bug this module exists for): captured
    assert i not in Sum(s[i, j], (i, 1, n)).xreplace({j: i}).free_symbols


def test_lambda_is_renamed_before_capture():
    result = substitute(Lambda(x, x + sympy.Symbol("y")), {sympy.Symbol("y"): x})
    assert result(3) == 3 + x


def test_stand_ins_carry_only_integer():
    bound = bind_fresh(Sum(k - 1, (k, 0, n)))
    index = bound.limits[0][0]
    assert index != k and index.is_integer and index.is_positive is None
    assert bind_fresh(bound) == bound  # idempotent
    assert bind_fresh(Sum(k - 1, (k, 0, n))) == bound  # the same tree each time
    assert unbind(bound) == Sum(k - 1, (k, 0, n))


def test_nested_binders_get_different_stand_ins():
    bound = bind_fresh(Sum(Sum(s[k, k], (k, 1, n)), (k, 1, n)))
    inner, outer = bound.limits
    assert inner[0] != outer[0]


def test_a_fact_about_a_free_index_does_not_reach_a_bound_one():
    facts = Facts.from_conditions([s[k] > 0])
    assert prove_condition(Condition(s[k], ">0"), facts)
    assert not prove_condition(Condition(Sum(s[k], (k, 1, n)), ">0"), facts)
    universal = Facts.from_conditions([ForAll(k, 1, n, s[k] > 0)])
    assert prove_condition(Condition(Sum(s[k], (k, 1, n)), ">0"), universal)
    # ... but not over a range it was not stated for
    assert not prove_condition(Condition(Sum(s[k], (k, 0, n)), ">0"), universal)


def test_side_conditions_keep_their_ranges():
    one, zero = Sum(1 / k, (k, 1, n)), Sum(1 / k, (k, 0, n))
    found = side_conditions(one + zero)
    assert len([c for c in found if c.kind == "!=0"]) == 2


# --------------------------------------------------------------------- domain table

def test_the_documented_table_is_the_table():
    text = (ROOT / "docs" / "trusted-base.md").read_text()
    block = text.split("<!-- domain table: generated, do not edit by hand -->\n", 1)[1].split(
        "<!-- end of the domain table -->", 1)[0]
    documented = re.findall(r"^\| `([^`]+)` \| (.*) \|$", block, re.M)
    assert documented == domains.domain_table_rows()


UNLISTED = [
    ("lambert", sympy.LambertW(x)),
    ("gamma", sympy.gamma(x)),
    ("zeta", sympy.zeta(x)),
    ("integral", sympy.Integral(x, (x, 0, 1))),
    ("zeta-sum", Sum(sympy.zeta(k), (k, 1, n))),
]


@pytest.mark.parametrize("expr", [c[1] for c in UNLISTED], ids=[c[0] for c in UNLISTED])
def test_an_unlisted_node_fails_the_step(expr):
    with pytest.raises((UndecidedError, ProofError), match=r"no domain rule for "):
        prove_equal(expr, expr + 0 * x)


DOMAINS = [
    # (id, function, condition that makes it defined)
    ("cot", sympy.cot, lambda a: sympy.sin(a)),
    ("sec", sympy.sec, lambda a: sympy.cos(a)),
    ("csc", sympy.csc, lambda a: sympy.sin(a)),
    ("coth", sympy.coth, lambda a: sympy.sinh(a)),
    ("csch", sympy.csch, lambda a: sympy.sinh(a)),
    ("tan", sympy.tan, lambda a: sympy.cos(a)),
]


@pytest.mark.parametrize("function, denominator", [c[1:] for c in DOMAINS], ids=[c[0] for c in DOMAINS])
def test_reciprocal_trig_needs_its_condition(function, denominator):
    expr = function(x, evaluate=False)
    with pytest.raises(ProofError, match=re.escape(str(denominator(x))) + " != 0"):
        prove_equal(expr, expr)
    stated = Assumption("D", "stated", condition=sympy.Ne(denominator(x), 0))
    assert prove_equal(expr, expr, [stated]).strategy == "structural"


def test_a_script_function_brings_its_own_entry():
    class Expectation(sympy.Function):
        nargs = 1

        def domain_conditions(self):
            return [(self.args[0], ">0", "only positive arguments (for the test)")]

    with pytest.raises(ProofError, match=r"needs x > 0 \(only positive arguments"):
        prove_equal(Expectation(x), Expectation(x))
    assert prove_equal(Expectation(x), Expectation(x), [Assumption("P", "x > 0", condition=x > 0)])


def test_an_explicit_map_is_checked_as_a_bijection():
    from symbolic_attn.proofs.rules import Bijection, reindex_by

    double = Lambda(k, 2 * k)
    with pytest.raises(ProofError, match=r"cannot be checked to be a bijection"):
        prove_equal(Sum(s[k], (k, 1, n)), Sum(s[2 * k], (k, 1, n)),
                    [Assumption("B", "stated", condition=Bijection(double, 1, n))], [reindex_by(double)])
    reverse = Lambda(k, n + 1 - k)
    assert prove_equal(Sum(s[k], (k, 1, n)), Sum(s[n + 1 - k], (k, 1, n)),
                       [Assumption("B", "stated", condition=Bijection(reverse, 1, n))], [reindex_by(reverse)])


# ---------------------------------------------------------------------- typed errors

def _deep(levels):
    return functools.reduce(lambda e, _: sympy.exp(e, evaluate=False), range(levels), x)


PATHOLOGICAL = [
    ("huge-integer", sympy.Integer(10) ** 315653 + x),
    ("deep", _deep(2000)),
    ("double-sum", Sum(s[i] - s[j], (i, 1, n), (j, 1, n))),
    ("triple-sum", Sum(s[i] * s[j] * s[k], (i, 1, n), (j, 1, n), (k, 1, n))),
    ("long-sum", Sum(k, (k, 1, 10**9))),
    ("product-of-sums", Product(Sum(s[i, k], (i, 1, k)), (k, 1, n))),
    ("delta-sum", Sum(KroneckerDelta(i, sympy.Rational(1, 2)), (i, 1, n))),
    ("matrix", sympy.MatrixSymbol("A", n, n)),
    ("python-object", object()),
    ("string", "x + 1"),
    ("nan", sympy.nan),
]

ENTRY_POINTS = [
    ("prove_equal", lambda e: prove_equal(e, 1)),
    ("prove_equal-self", lambda e: prove_equal(e, e)),
    ("prove_positive", prove_positive),
    ("prove_nonnegative", prove_nonnegative),
    ("prove_unequal", lambda e: prove_unequal(e, 1)),
    ("prove_condition", lambda e: prove_condition(Condition(e, ">0"), Facts())),
]


@pytest.mark.parametrize("entry", [e[1] for e in ENTRY_POINTS], ids=[e[0] for e in ENTRY_POINTS])
@pytest.mark.parametrize("value", [p[1] for p in PATHOLOGICAL], ids=[p[0] for p in PATHOLOGICAL])
def test_pathological_input_gives_typed_errors_only(entry, value):
    try:
        entry(value)
    except SymbolicAttnError:
        pass  # a verdict or a typed refusal: fine
    # anything else propagates and fails the test


def test_derivation_of_pathological_input_names_the_step():
    from symbolic_attn.proofs.chain import Derivation, Step

    chain = Derivation("huge", x, [Step(x + sympy.Integer(10) ** 315653, "claimed")])
    with pytest.raises(ProofError, match=r"^step 1 of 'huge': x = <an expression too large to print>"):
        chain.verify()
