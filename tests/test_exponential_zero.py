"""The exact zero test reads softmax weights as rational functions of exponentials.

exact.intervals.proved_zero maps every exp(q*a) to a power of one positive indeterminate
per atom a; an expression whose image is the zero rational function is zero.  These tests
show equal weights written differently being proved equal, and -- the part that matters --
nothing that is not zero ever being "proved" zero.
"""

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from symbolic_attn.exact.intervals import MAX_GENERATOR_POWER, certified_sign, proved_zero

a = sympy.sqrt(2)
E = sympy.exp


def test_the_softmax_weight_of_the_example_course_written_two_ways_is_proved_equal():
    exact = E(3 * a / 2) / (E(a / 2) + E(a) + E(3 * a / 2))
    claimed = E(a) / (1 + E(a / 2) + E(a))
    assert proved_zero(exact - claimed)


def test_shift_invariance_with_two_unrelated_atoms():
    shift = 1 + a  # exp(s + c) / sum exp(s_j + c) = exp(s) / sum exp(s_j)
    left = E(sympy.Rational(1, 3) + shift) / (E(shift) + E(sympy.Rational(1, 3) + shift) + E(a / 2 + shift))
    right = E(sympy.Rational(1, 3)) / (1 + E(sympy.Rational(1, 3)) + E(a / 2))
    assert proved_zero(left - right)


def test_e_itself_and_exp_of_minus_one():
    assert proved_zero(sympy.E / (1 + sympy.E) - 1 / (1 + E(-1)))
    assert proved_zero(sympy.E ** 2 * E(-1) - sympy.E)


def test_near_identities_are_not_proved():
    exact = E(3 * a / 2) / (E(a / 2) + E(a) + E(3 * a / 2))
    claimed = E(a) / (1 + E(a / 2) + E(a))
    for wrong in (exact - 2 * claimed, exact - claimed + sympy.Rational(1, 10**30),
                  exact - E(a) / (1 + E(a / 3) + E(a)), E(sympy.pi) - sympy.Rational(2314069263, 100000000),
                  sympy.E - sympy.Rational(27182818284590452, 10**16)):
        assert not proved_zero(wrong), wrong


def test_huge_powers_are_left_unproved_not_built():
    thousandth = sympy.Rational(1, 1000)
    # True (divide by exp(1/1000)), but it needs g**1001 for g = exp(1/1000): over the bound,
    # so "not proved" (the full checker or "undecided" takes over), never a power built without limit.
    identity = E(1) / (1 + E(1)) - E(1 + thousandth) / (E(thousandth) + E(1 + thousandth))
    assert 1000 > MAX_GENERATOR_POWER and not proved_zero(identity)
    assert not proved_zero(E(sympy.Integer(1000)) - E(thousandth))


_atoms = st.sampled_from([sympy.S.One, a, sympy.sqrt(3), sympy.Rational(1, 2) * a])
_exponent = st.builds(lambda k, atom: sympy.Rational(k, 2) * atom, st.integers(-4, 4), _atoms)
_coefficient = st.sampled_from([sympy.S.One, sympy.Integer(2), sympy.Rational(1, 3), a, 1 + a])


@st.composite
def _weights(draw):
    """A softmax-like quotient: a term over a sum of terms, each coefficient * exp(exponent)."""
    terms = [draw(_coefficient) * E(draw(_exponent)) for _ in range(draw(st.integers(1, 3)))]
    return terms[0] / sum(terms)


@settings(max_examples=60, deadline=None)
@given(_weights(), _exponent)
def test_a_quotient_rewritten_by_a_common_factor_is_proved_equal(weight, shift):
    numerator, denominator = sympy.fraction(weight)
    rewritten = (numerator * E(shift)) / sympy.expand(denominator * E(shift))
    assert proved_zero(weight - rewritten)


@settings(max_examples=80, deadline=None)
@given(_weights(), _weights(), st.sampled_from([sympy.S.Zero, sympy.Rational(1, 10**12), sympy.Integer(1)]))
def test_never_proves_a_nonzero_value_zero(first, second, offset):
    """Whatever the two quotients are, a "proved" zero is never a certified nonzero."""
    difference = first - second + offset
    if proved_zero(difference):
        assert certified_sign(difference) in (None, 0), difference
