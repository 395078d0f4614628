"""One notation, every front end (issue 19): the same text gives the same value or the same
kind of error through the command line's parser, exercise values, claimed values, answer-key
numbers and ``[define]`` definitions.

The rows include every divergence an outside battery measured: ``1e999`` accepted as a
claim but refused as an input, a fullwidth ``Ｘ`` read as ``X`` in ``[define]``, Arabic-Indic
digits read as numbers in answer keys.
"""

import pytest
import sympy

from symbolic_attn.errors import SymbolicAttnError
from symbolic_attn.exact.parse import parse_expression
from symbolic_attn.grading.answer_key import parse_answer_key
from symbolic_attn.grading.claims import parse_claimed
from symbolic_attn.grading.values import read_value
from symbolic_attn.model.program import run_program

R = sympy.Rational


def _command_line(text):
    return parse_expression(text)


def _exercise_value(text):
    return read_value(text)


def _claimed(text):
    (element,) = parse_claimed(text).elements
    return element.value


def _definition(text):
    return run_program({"X": sympy.ImmutableMatrix([[1]])}, [("D", text)])["D"]


KEY = """
[inputs]
X = [[1, 0], [0, 1]]

[attention]
query = "X"
key = "X"
value = "X"

[[questions]]
name = "a_{11}"
quantity = "weights"
row = 1
col = 1
points = "%s"
"""


def _points(text):
    return parse_answer_key(KEY % text.replace("\\", "\\\\"), "key.toml").questions[0].points


FRONT_ENDS = {
    "command line": _command_line,
    "exercise value": _exercise_value,
    "claimed value": _claimed,
    "[define]": _definition,
}

# (id, text, the exact value, or None when every front end must refuse it)
TEXTS = [
    ("decimal", "0.43", R(43, 100)),
    ("scientific", "2.5e2", R(250)),
    ("small-exponent", "1e-3", R(1, 1000)),
    ("huge-exponent", "1e999", None),
    ("many-digits", "1" * 500, None),
    ("fullwidth-digit", "\uff11", None),
    ("arabic-indic-digit", "\u0662", None),
    ("bengali-decimal", "0.\u09e7\u09ec", None),
    ("zero-width-space", "\u200b1", None),
    ("code", "__import__('os')", None),
]


def _answer(front_end, text):
    try:
        value = front_end(text)
    except SymbolicAttnError as error:
        return type(error).__mro__[1].__name__ if type(error).__name__ == "InputLimitError" else "refused"
    if isinstance(value, sympy.MatrixBase) and value.shape == (1, 1):
        value = value[0, 0]
    return value


@pytest.mark.parametrize("text, expected", [row[1:] for row in TEXTS], ids=[row[0] for row in TEXTS])
@pytest.mark.parametrize("front_end", FRONT_ENDS.values(), ids=FRONT_ENDS.keys())
def test_same_text_same_answer(front_end, text, expected):
    answer = _answer(front_end, text)
    if expected is None:
        assert answer in ("refused", "ParseError"), answer
    else:
        assert answer == expected


def test_the_fullwidth_name_is_not_the_input():
    with pytest.raises(SymbolicAttnError, match=r"non-ASCII character 'Ｘ' \(U\+FF38\)"):
        _definition("\uff38")


def test_the_huge_exponent_is_refused_alike():
    messages = set()
    for front_end in (_command_line, _exercise_value, _claimed):
        with pytest.raises(SymbolicAttnError) as caught:
            front_end("1e999")
        messages.add(str(caught.value).replace(" at column 1", ""))
    assert messages == {"decimal exponent 999 exceeds the limit of 400"}, messages


@pytest.mark.parametrize("text", ["\u0662", "\uff12", "2 ", "1/0", "1e999", "nan", "inf"])
def test_answer_key_points_use_the_one_reader(text):
    answer = _answer(_points, text)
    if text == "2 ":
        assert answer == 2
    else:
        assert answer == "refused"


def test_answer_key_points_read_rationals():
    assert _points("3/2") == R(3, 2) and _points("1.5") == R(3, 2)
