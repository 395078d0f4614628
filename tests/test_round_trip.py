"""Every exact string the tool prints parses back, through its own parser, to the same value.

Over every printed stage (scores, scaled, weights, output) of several attention results,
in the text report and in JSON: masks, scales, irrational weights without symbols.
"""

import json
import re

import pytest
import sympy

from symbolic_attn.cli import main
from symbolic_attn.exact.parse import parse_expression
from symbolic_attn.model.attention import STAGES, attention, attention_from_scores
from symbolic_attn.model.masks import Mask
from symbolic_attn.render.display import json_report, text_report
from symbolic_attn.render.exact_text import exact_rows, exact_string

X = [[1, 0], [0, 1], [1, 1]]
RESULTS = {
    "by-hand-causal": lambda: attention(X, X, [[2, 0], [0, 2], [2, 2]], mask="causal"),
    "euler-scores": lambda: attention_from_scores([["e", "1", "0"], ["pi", "e**2", "ln(3)"]], [[1, 0], [0, 2], [3, 1]]),
    "keep-mask-scale": lambda: attention(
        [[1, 2], ["1/3", "sqrt(3)"]], [[1, 0], [0, 1], [2, 1]], [["e", 1], [0, "1/7"], [1, 1]],
        mask=Mask.keep([[1, 0, 1], [1, 1, 0]]), scale="1/3 + sqrt(5)/7",
    ),
    "padding-exp": lambda: attention_from_scores(
        [["exp(1/2)", "-e", "sin(1)"], ["cos(2)", "log(5, 2)", "0.25"]], [[1], [2], [3]], mask=Mask.padding(2, 3, valid=2)
    ),
    "decimals": lambda: attention([["0.1", "0.25"]], [["1.5", "-2"], ["0.001", "3"]], [["0.5"], ["2"]]),
}


def _same(printed: str, value) -> None:
    back = parse_expression(printed)
    assert back == value, f"{printed!r} reads back as {back}, not {value}"


@pytest.mark.parametrize("name", RESULTS, ids=list(RESULTS))
def test_every_printed_stage_reads_back(name):
    result = RESULTS[name]()
    for stage in STAGES:
        matrix = result.stage(stage)
        for printed, value in zip(sum(exact_rows(matrix), []), matrix):
            _same(printed, value)


@pytest.mark.parametrize("name", RESULTS, ids=list(RESULTS))
def test_json_exact_strings_and_scale_read_back(name):
    result = RESULTS[name]()
    document = json.loads(json_report(result))
    _same(document["scale"], result.scale)
    for stage in STAGES:
        matrix = result.stage(stage)
        assert len(document[stage]["exact"]) == matrix.rows
        for printed, value in zip(sum(document[stage]["exact"], []), matrix):
            _same(printed, value)


@pytest.mark.parametrize("name", RESULTS, ids=list(RESULTS))
def test_text_report_entries_read_back(name):
    result = RESULTS[name]()
    text = text_report(result, 3)
    entries = re.findall(r"^  ([SAZ]'?)\[(\d+),(\d+)\] = (.*?)(?:  [=≈] \S+)?$", text, flags=re.M)
    assert entries, text
    matrices = {"S": result.scores, "S'": result.scaled, "A": result.weights, "Z": result.output}
    for symbol, i, j, printed in entries:
        _same(printed, matrices[symbol][int(i) - 1, int(j) - 1])


def test_euler_is_printed_as_e():
    assert exact_string(sympy.E) == "e" and exact_string(sympy.E**2 + sympy.exp(sympy.sqrt(2))) in (
        "exp(2) + exp(sqrt(2))", "exp(sqrt(2)) + exp(2)")
    assert "E" not in exact_string(sympy.E / (1 + sympy.E))


def test_the_check_can_fail():
    """A spelling the parser does not read, or reads as another value, is caught."""
    from symbolic_attn.errors import ParseError

    with pytest.raises(ParseError):
        _same(sympy.latex(sympy.exp(sympy.sqrt(2))), sympy.exp(sympy.sqrt(2)))
    with pytest.raises(AssertionError):
        _same("exp(sqrt(3))", sympy.exp(sympy.sqrt(2)))
    with pytest.raises(ParseError):  # the one documented exception: nan has no exact value
        _same(exact_string(sympy.nan), sympy.nan)


def test_cli_text_and_json_read_back(capsys):
    argv = ["attention", "--scores", "[[e, 1, 0]]", "--v", "[[1],[2],[3]]"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "S[1,1] = e  ≈ 2.718" in out
    assert main([*argv, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["scores"]["exact"] == [["e", "1", "0"]]
    for printed in sum(document["weights"]["exact"], []):
        parse_expression(printed)
