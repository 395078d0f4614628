"""The ``reindex`` strategy (symbolic_attn.proofs.reindex): a sum reflected (j -> a + b - j) or
shifted (j -> j - c) proves the true reindexings of a sum, and never a false one (a reflection
with the wrong bounds, j -> n - j over 1..n, a shift that drops a term, a shift by a
non-integer); its substitution respects binders."""

import pytest
import sympy

from symbolic_attn.errors import SymbolicAttnError
from symbolic_attn.proofs.prove import prove_equal
from symbolic_attn.proofs.reindex import reflect, reindex, shift
from symbolic_attn.proofs.sums import expand_sums

n = sympy.Symbol("n", integer=True, positive=True)
j = sympy.Symbol("j", integer=True)
l = sympy.Symbol("l", integer=True)  # noqa: E741 -- the letter of the examples
i = sympy.Symbol("i", integer=True, positive=True)
v = sympy.IndexedBase("v", real=True)
s = sympy.IndexedBase("s", real=True)
Sum = sympy.Sum

TRUE = {
    "reflection j -> n + 1 - j": (Sum(v[n + 1 - j], (j, 1, n)), Sum(v[j], (j, 1, n))),
    "shift j -> j - 1": (Sum(v[j + 1], (j, 0, n - 1)), Sum(v[j], (j, 1, n))),
    "reflection over 2..n + 3, with the index itself in the summand":
        (Sum(j * v[n + 5 - j], (j, 2, n + 3)), Sum((n + 5 - j) * v[j], (j, 2, n + 3))),
    "both sums of a quotient (the permutation example)":
        (Sum(sympy.exp(s[i, n + 1 - j]) * v[n + 1 - j], (j, 1, n)) / Sum(sympy.exp(s[i, n + 1 - l]), (l, 1, n)),
         Sum(sympy.exp(s[i, j]) * v[j], (j, 1, n)) / Sum(sympy.exp(s[i, l]), (l, 1, n))),
}

FALSE = {
    "j -> n - j over 1..n (not a bijection of 1..n)": (Sum(v[n - j], (j, 1, n)), Sum(v[j], (j, 1, n))),
    "a shift that drops a term": (Sum(v[j + 1], (j, 0, n - 1)), Sum(v[j], (j, 1, n - 1))),
    "a reflection with the wrong bounds": (Sum(v[n + 2 - j], (j, 1, n)), Sum(v[j], (j, 1, n))),
    "a reflection over one term more": (Sum(v[n + 1 - j], (j, 0, n)), Sum(v[j], (j, 1, n))),
    "a shift of the summand without its range": (Sum(v[j + 1], (j, 1, n)), Sum(v[j], (j, 1, n))),
}


@pytest.mark.parametrize("left, right", list(TRUE.values()), ids=list(TRUE))
def test_a_true_reindexing_is_proved_by_reindex(left, right):
    assert prove_equal(left, right).strategy == "reindex"


@pytest.mark.parametrize("left, right", list(FALSE.values()), ids=list(FALSE))
def test_a_false_reindexing_is_never_proved(left, right):
    with pytest.raises(SymbolicAttnError):
        prove_equal(left, right)


def test_each_rewriting_equals_the_sum_at_every_size():
    """Written out at n = 0..5, every rewriting gives the sum it came from (independent code:
    the terms added one by one)."""
    m = sympy.Symbol("m", integer=True)
    sums = [Sum(v[n + 1 - j] * j, (j, 1, n)), Sum(v[j + 2], (j, -1, n)), Sum(Sum(s[j, m], (m, 1, j)), (j, 1, n))]
    for total in sums:
        for rewritten in (reflect(total), shift(total, 3), shift(total, -n), reindex(total)):
            for size in range(6):
                assert expand_sums(rewritten.subs(n, size)) - expand_sums(total.subs(n, size)) == 0


def test_the_substitution_never_captures():
    """The reflection j -> n + 1 - k puts an n into a sum that binds its own n: that inner n is
    renamed first, so the free n of the replacement stays free."""
    inner = Sum(v[n], (n, 1, j))  # binds n (a shadowing name)
    total = Sum(inner, (j, 1, n))
    reflected = reflect(total)
    assert n in reflected.free_symbols
    for size in range(5):
        assert expand_sums(reflected.subs(n, size)) - expand_sums(total.subs(n, size)) == 0


def test_what_is_not_a_bijection_of_the_integers_is_not_applied():
    total = Sum(v[j], (j, 1, n))
    assert shift(total, sympy.Rational(1, 2)) == total
    assert shift(total, sympy.Symbol("c", real=True)) == total  # not known to be an integer
    half = Sum(v[j], (j, sympy.Rational(1, 2), n))
    assert reflect(half) == half and reindex(half) == half
