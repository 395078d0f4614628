"""One matrix grammar: one table of texts through every entry point.

The same text must give the same value, or be refused, everywhere a matrix may be
written: the command line (``attention --scores``), an exercise's ``[inputs]`` string and
TOML array, an ``[attention]`` field, and a claimed value.  Valid texts must give equal
exact values; invalid ones must be refused by every entry point with a message of the
same kind (the regular expression of each row matches every entry point's message).
"""

import json

import pytest
import sympy

from symbolic_attn.cli import main
from symbolic_attn.errors import ExerciseError, ParseError
from symbolic_attn.exact.parse import parse_matrix
from symbolic_attn.grading.claims import parse_claimed
from symbolic_attn.grading.exercise import parse_exercise
from symbolic_attn.exact.parse import parse_expression as read_value

L2, L3 = sympy.log(2), sympy.log(3)
M = sympy.ImmutableMatrix

# text, the same matrix as a TOML array (None: no array spelling), the exact value
VALID = [
    ("[[0, ln(2), ln(3)]]", '[["0", "ln(2)", "ln(3)"]]', M([[0, L2, L3]])),
    ("[0, ln(2), ln(3)]", '["0", "ln(2)", "ln(3)"]', M([[0, L2, L3]])),
    ("[[1, 0], [0, 2], [3, 1]]", "[[1, 0], [0, 2], [3, 1]]", M([[1, 0], [0, 2], [3, 1]])),
    ("[[1/2, 0.25], [sqrt(2), e]]", '[["1/2", "0.25"], ["sqrt(2)", "e"]]',
     M([[sympy.Rational(1, 2), sympy.Rational(1, 4)], [sympy.sqrt(2), sympy.E]])),
    ("[[log(8, 2), -1]]", '[["log(8, 2)", -1]]', M([[3, -1]])),
    ("[[1, 2],]", '[[1, 2],]', M([[1, 2]])),
    ("  [[ 1 ,2 ]]  ", "[[ 1 ,2 ]]", M([[1, 2]])),
    ("[[2^3, 1e-3]]", '[["2^3", "1e-3"]]', M([[8, sympy.Rational(1, 1000)]])),
]

# text, its TOML array spelling (None: none), a pattern every entry point's message matches
INVALID = [
    ("[[1, 2], [3]]", '[[1, 2], [3]]', r"row 2 has 1 entries, row 1 has 2"),
    ("[[1, 0], [0, 1]", None, r"unclosed '\[' (opened )?at column 1|malformed expression"),
    ("[]", "[]", r"empty matrix"),
    ("[[[1]]]", '[[["1"]]]', r"not a matrix|only allowed as a whole matrix|nested deeper than a matrix"),
    ("0.3, 0.7", None, r"a list needs brackets|expected a matrix written as nested lists"),
    ("[[0.\u09e7\u09ec]]", None, r"non-ASCII character|malformed expression"),
    ("[[\U0001d7ce, 1]]", None, r"non-ASCII character|malformed expression"),
    ("[[x, 1]]", '[["x", 1]]', r"unknown name 'x'"),
    ("[[__import__('os'), 1]]", '[["__import__(\'os\')", 1]]', r"unknown function '__import__'"),
    ("[[1,,2]]", None, r"missing entry before ','|malformed expression"),
    ("[[1, 2]] + 1", None, r"cannot add a number and a matrix at column 1"),
    ("[[1, 2], [3, [4]]]", None, r"not a matrix|only allowed as a whole matrix"),
    ("[[9**9**9**9]]", '[["9**9**9**9"]]', r"exceeds the limit"),
]
IDS_VALID = ["row", "flat", "3x2", "mixed", "comma-in-call", "trailing-comma", "spaces", "power"]
IDS_INVALID = ["ragged", "unclosed", "empty", "deep", "bare-list", "bengali", "math-bold", "unknown-name",
               "code", "double-comma", "trailing-expression", "entry-list", "tower"]


def cli(text, cols, capsys):
    values = "[" + ", ".join("[1]" for _ in range(cols)) + "]"
    status = main(["attention", "--scores", text, "--v", values, "--format", "json"])
    out, err = capsys.readouterr()
    return status, out, err


def toml_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def exercise_with(inputs="", attention='scores = "S"', claim=None, cols=3):
    values = "[" + ", ".join("[1]" for _ in range(cols)) + "]"
    text = f"[inputs]\n{inputs}\n[attention]\n{attention}\nvalue = {values}\n"
    if claim is not None:
        text += f'[[claims]]\nlabel = "c"\nquantity = "scores"\nvalue = {claim}\n'
    return parse_exercise(text, source="g.toml")


def canonical(value):
    return "[" + ", ".join("[" + ", ".join(sympy.sstr(e) for e in value.row(i)) + "]" for i in range(value.rows)) + "]"


@pytest.mark.parametrize("text, array, value", VALID, ids=IDS_VALID)
def test_valid_text_same_value_everywhere(text, array, value, capsys):
    cols = value.cols
    assert read_value(text) == value
    assert parse_matrix(text) == value
    # [inputs] string and array, [attention] field
    assert exercise_with(f"S = {toml_string(text)}", cols=cols).attention.scores == value
    assert exercise_with(f"S = {array}", cols=cols).attention.scores == value
    assert exercise_with(attention=f"scores = {toml_string(text)}", cols=cols).attention.scores == value
    assert exercise_with(attention=f"scores = {array}", cols=cols).attention.scores == value
    # a claim: the same numbers, judged against the exercise's own scores, pass
    checked = exercise_with(f"S = {toml_string(canonical(value))}", claim=toml_string(text), cols=cols)
    claimed = [element.value for element in checked.claims[0].claimed.elements]
    assert claimed == list(value)
    # the command line: the same report as for the canonical spelling of the value
    status, out, err = cli(text, cols, capsys)
    assert status == 0, err
    reference = cli(canonical(value), cols, capsys)
    assert json.loads(out)["scores"] == json.loads(reference[1])["scores"]


@pytest.mark.parametrize("text, array, pattern", INVALID, ids=IDS_INVALID)
def test_invalid_text_refused_everywhere(text, array, pattern, capsys):
    with pytest.raises(ParseError, match=pattern):
        read_value(text)
    with pytest.raises(ParseError, match=pattern):
        parse_matrix(text)
    with pytest.raises(ParseError, match=pattern):
        parse_claimed(text)
    with pytest.raises(ExerciseError, match=r"^g\.toml: inputs\.S: .*(" + pattern + ")"):
        exercise_with(f"S = {toml_string(text)}")
    with pytest.raises(ExerciseError, match=r"^g\.toml: attention\.scores: .*(" + pattern + ")"):
        exercise_with(attention=f"scores = {toml_string(text)}")
    with pytest.raises(ExerciseError, match=r"^g\.toml: claim 1 \('c'\): value: .*(" + pattern + ")"):
        exercise_with("S = [[1, 2, 3]]", claim=toml_string(text))
    if array is not None:
        with pytest.raises(ExerciseError, match=r"^g\.toml: inputs\.S(\[[0-9,]+\])*: .*(" + pattern + ")"):
            exercise_with(f"S = {array}")
    status, out, err = cli(text, 3, capsys)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert __import__("re").search(pattern, err), err


def test_scalars_are_not_matrices_but_read_alike():
    """A scalar text is the same number in [inputs] and claims; the CLI's matrix options need brackets."""
    assert read_value("1/3 + ln(2)") == sympy.Rational(1, 3) + L2
    assert parse_claimed("1/3 + ln(2)").elements[0].value == sympy.Rational(1, 3) + L2
    assert exercise_with("c = \"1/3 + ln(2)\"\nS = [[1, 2, 3]]").inputs["c"] == sympy.Rational(1, 3) + L2
