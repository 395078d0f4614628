"""Hostile values at the Python API of the model operations (issue 19): a typed, one-line
error naming the argument, never a binary float in an exact result or an untyped exception."""

import pytest
import sympy

from symbolic_attn.errors import SymbolicAttnError
from symbolic_attn.model.layernorm import layer_norm
from symbolic_attn.model.positional import rope, sinusoidal

X = sympy.ImmutableMatrix([[1, 2], [3, 4]])
t = sympy.Symbol("t", positive=True)

REFUSED = [
    ("sinusoidal-float-position", lambda: sinusoidal(2, 2, first_position=0.5), r"first_position must be an integer"),
    ("sinusoidal-text-position", lambda: sinusoidal(2, 2, first_position="a"), r"first_position must be an integer"),
    ("sinusoidal-bool-position", lambda: sinusoidal(2, 2, first_position=True), r"first_position must be an integer"),
    ("sinusoidal-text-swap", lambda: sinusoidal(2, 2, swap="yes"), r"swap must be True or False"),
    ("rope-float-position", lambda: rope(X, first_position=0.5), r"first_position must be an integer"),
    ("layer-norm-negative-symbolic-eps", lambda: layer_norm(X, eps=-t), r"eps must be >= 0, got -t"),
    ("layer-norm-text-affine", lambda: layer_norm(X, affine="no"), r"affine must be True or False, got 'no'"),
]


@pytest.mark.parametrize("call, message", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_refused_with_a_typed_error(call, message):
    with pytest.raises(SymbolicAttnError, match=message):
        call()


def test_the_accepted_forms_still_work():
    assert sinusoidal(2, 2, first_position=sympy.Integer(1))["angles"][0, 0] == 1
    assert layer_norm(X, eps=t)["output"].shape == (2, 2)
    assert layer_norm(X, affine=False)["output"].shape == (2, 2)
