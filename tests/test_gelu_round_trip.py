"""GELU's erf and tanh: parsed by the safe parser (bounded like exp, sin, cos), certified
by exact.certified.to_arb, printed by `run` and read back to the same exact value, and
claimable in `check`."""

import json

import pytest
import sympy

from symbolic_attn.cli import main
from symbolic_attn.errors import InputLimitError, ParseError
from symbolic_attn.exact.certified import decimal_string, to_arb, working_precision
from symbolic_attn.exact.parse import parse_expression
from symbolic_attn.grading.exercise import parse_exercise
from symbolic_attn.grading.report import check_exercise

HALF = sympy.Rational(1, 2)


@pytest.mark.parametrize("text,value", [
    ("erf(1)", sympy.erf(1)),
    ("tanh(1/2)", sympy.tanh(HALF)),
    ("1/2 * (1 + erf(1/sqrt(2)))", HALF * (1 + sympy.erf(1 / sympy.sqrt(2)))),
    ("erf(-2) + tanh(0)", -sympy.erf(2)),
], ids=["erf", "tanh", "phi", "odd"])
def test_parser_reads_erf_and_tanh(text, value):
    assert parse_expression(text) == value


@pytest.mark.parametrize("text,error,message", [
    ("erf(10**9)", InputLimitError, r"^erf of 1000000000 at column 1: arguments beyond"),
    ("tanh(-10**9)", InputLimitError, r"^tanh of -1000000000 at column 1: arguments beyond"),
    ("erfc(1)", ParseError, r"unknown function 'erfc'"),
    ("erf(1, 2)", ParseError, r"'erf' takes 1 argument"),
    ("tanh(x=1)", ParseError, r"'tanh' takes no keyword arguments"),
], ids=["erf_bound", "tanh_bound", "unknown", "arity", "keyword"])
def test_parser_bounds_erf_and_tanh(text, error, message):
    with pytest.raises(error, match=message):
        parse_expression(text)


@pytest.mark.parametrize("value,digits,expected", [
    (sympy.erf(1), 20, "0.84270079294971486934"),
    (sympy.tanh(1), 20, "0.76159415595576488812"),
    (HALF * (1 + sympy.erf(1 / sympy.sqrt(2))), 12, "0.841344746069"),
], ids=["erf", "tanh", "phi"])
def test_to_arb_certifies_erf_and_tanh(value, digits, expected):
    assert decimal_string(value, digits, significant=True) == expected
    with working_precision(200):  # the ball is tight around the value, within the last digit shown
        assert abs(to_arb(value) - to_arb(sympy.Rational(expected))) < to_arb(sympy.Rational(1, 10**digits))


def test_wrong_values_are_not_inside_the_ball():
    with working_precision(200):
        assert not to_arb(sympy.erf(1)).contains(to_arb(sympy.Rational("0.8427")))
        assert not to_arb(sympy.tanh(1)).overlaps(to_arb(sympy.erf(1)))


GELU = """
[inputs]
X = [[1, -1], [2, "1/2"]]
[define]
G = "gelu(X)"
T = "gelu(X, approximate = 'tanh')"
"""


def test_run_prints_gelu_and_it_reads_back(tmp_path, capsys):
    path = tmp_path / "g.toml"
    path.write_text(GELU)
    assert main(["run", str(path), "--format", "json"]) == 0
    stages = json.loads(capsys.readouterr().out)["stages"]
    from symbolic_attn.grading.exercise import parse_exercise as read

    trace = read(GELU, source="g.toml").trace()
    for name in ("G", "T"):
        printed = [entry for row in stages[name]["exact"] for entry in row]
        assert any("erf" in p or "tanh" in p for p in printed)
        assert [parse_expression(p) for p in printed] == list(trace[name])
        assert all(d is not None for row in stages[name]["decimal"] for d in row)


def test_check_claims_on_gelu():
    text = GELU + """
[[claims]]
label = "exact"
quantity = "G"
row = 1
col = 1
value = "1/2 * (1 + erf(1/sqrt(2)))"
[[claims]]
label = "decimals"
quantity = "G"
row = 1
value = "[0.8413, -0.1587]"
[[claims]]
label = "tanh form claimed for the exact"
quantity = "G"
row = 2
col = 1
value = "1 + tanh(sqrt(2/pi) * (2 + 0.044715 * 8))"
[[claims]]
label = "wrong sign"
quantity = "T"
row = 1
value = "[0.8412, 0.1588]"
"""
    outcomes = check_exercise(parse_exercise(text, source="g.toml")).outcomes
    assert [(o.claim.label, o.verdict) for o in outcomes] == [
        ("exact", "pass"), ("decimals", "pass"), ("tanh form claimed for the exact", "fail"), ("wrong sign", "fail")]
