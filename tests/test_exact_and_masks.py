"""Exact inputs (the float policy) and masks as structure."""

from decimal import Decimal
from fractions import Fraction

import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from symbolic_attn.errors import FloatInputError, MaskError, ParseError, ShapeError
from symbolic_attn.exact.convert import to_exact, to_matrix
from symbolic_attn.model.masks import Mask

R = sympy.Rational


@pytest.mark.parametrize(
    "value, expected",
    [(3, sympy.Integer(3)), (Fraction(2, 6), R(1, 3)), (Decimal("0.25"), R(1, 4)), ("1/7", R(1, 7)), (sympy.Symbol("c"), sympy.Symbol("c"))],
    ids=["int", "Fraction", "Decimal", "text", "symbol"],
)
def test_exact_values(value, expected):
    assert to_exact(value) == expected


@pytest.mark.parametrize("value", [0.1, 1.0, float("inf")], ids=str)
def test_binary_floats_are_refused_with_a_hint(value):
    with pytest.raises(FloatInputError, match=r"^binary float"):
        to_exact(value)


def test_float_hint_gives_the_exact_spelling():
    with pytest.raises(FloatInputError, match=r"write the string '0\.1' \(exactly 1/10\) or Fraction\(1, 10\)"):
        to_exact(0.1)


def test_sympy_float_is_refused_too():
    with pytest.raises(FloatInputError, match=r"^SymPy Float"):
        to_exact(sympy.Float("0.5") + sympy.Symbol("x"))


def test_matrix_entry_errors_name_the_entry():
    with pytest.raises(FloatInputError, match=r"^Q\[2,1\]: binary float 0\.5"):
        to_matrix([[1, 2], [0.5, 1]], name="Q")
    with pytest.raises(ShapeError, match=r"^V: row 2 has 1 entries, row 1 has 2"):
        to_matrix([[1, 2], [3]], name="V")
    with pytest.raises(ParseError, match=r"^a boolean"):
        to_exact(True)


def test_causal_mask_and_offset():
    assert Mask.causal(3).keep_grid() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    # Decoding 2 new queries against 4 cached keys: the last query sees every key.
    assert Mask.causal(2, 4, offset=2).keep_grid() == [[1, 1, 1, 0], [1, 1, 1, 1]]
    assert Mask.causal(2, 3).keep_grid() == [[1, 0, 0], [1, 1, 0]]


def test_padding_and_combination():
    both = Mask.causal(3) & Mask.padding(3, 3, valid=2)
    assert both.keep_grid() == [[1, 0, 0], [1, 1, 0], [1, 1, 0]]
    with pytest.raises(MaskError, match=r"^cannot combine masks of shapes \(2, 2\) and \(3, 3\)"):
        Mask.causal(2) & Mask.causal(3)
    with pytest.raises(MaskError, match=r"^padding: valid key count 4 is outside 0\.\.3"):
        Mask.padding(2, 3, 4)


def test_additive_mask_accepts_only_zero_and_minus_infinity():
    assert Mask.additive([[0, -sympy.oo], [0, 0]]) == Mask.keep([[1, 0], [1, 1]])
    assert Mask.additive([[0.0, float("-inf")]]) == Mask.keep([[1, 0]])
    with pytest.raises(MaskError, match=r"^additive mask entry \(1,2\) is -1000000000\.0: only 0 .* approximates a mask"):
        Mask.additive([[0, -1e9]])


def test_keep_grid_rejects_non_boolean_entries():
    with pytest.raises(MaskError, match=r"^keep mask entry \(1,2\) is 2: expected True/False or 1/0"):
        Mask.keep([[1, 2]])
    with pytest.raises(MaskError, match=r"^keep mask entry \(1,1\) is 1\.0"):
        Mask.keep([[1.0]])  # a float mask is additive in PyTorch: refuse the ambiguity


def test_permuted_mask_is_p_m_p_transpose():
    mask = Mask.causal(3)
    perm = [2, 0, 1]
    P = sympy.Matrix(3, 3, lambda i, j: 1 if j == perm[i] else 0)
    M = sympy.Matrix(mask.keep_grid())
    assert sympy.Matrix(mask.permuted(perm).keep_grid()) == P * M * P.T


grids = st.integers(1, 5).flatmap(
    lambda n: st.integers(1, 5).flatmap(lambda m: st.lists(st.lists(st.booleans(), min_size=m, max_size=m), min_size=n, max_size=n))
)


@given(grids)
def test_keep_and_block_are_each_others_inverse(grid):
    assert Mask.block(grid) == Mask.keep(grid).inverted()
    assert Mask.block(Mask.keep(grid).block_grid()) == Mask.keep(grid)
    assert Mask.keep(Mask.block(grid).keep_grid()) == Mask.block(grid)
    assert Mask.keep(grid).inverted().inverted() == Mask.keep(grid)


@pytest.mark.parametrize("valid", [[1, 2], "2", 1.0, True], ids=str)
def test_padding_needs_a_whole_number(valid):
    with pytest.raises(MaskError, match=r"^padding: the valid key count must be a whole number"):
        Mask.padding(2, 3, valid)


def test_complex_numbers_are_refused():
    with pytest.raises(ParseError, match=r"^X\[1,1\]: not a real number: I"):
        to_matrix([[sympy.I]], name="X")
