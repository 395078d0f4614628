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
from symbolic_attn.exact.parse import parse_expression as read_value
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


# -- the same error, word for word ---------------------------------------------------------
#
# Every front end reads the text with the one grammar (exact.syntax) and the one evaluator
# (exact.evaluate), so a refused text gets one message: only the front end's own prefix
# ("definition 'D': ") and whether the text is quoted back (' in "..."') may differ.

SAME_ERROR_TEXTS = [
    "1e999", "1" * 500, "\uff11", "\u0662", "0.\u09e7\u09ec", "\u200b1", "__import__('os')", "0x10", "1j",
    "1 < 2", "X == X", "lambda: 1", "True", "(1, 2)", "1 +", "(1", "1)", "[1,,2]", "2x", "1/0",
    "sqrt(-1)", "ln(0)", "exp(7000)", "9^9^9^9", "-" * 300 + "1", "0.3, 0.7", "0,245", "f'{1}'", "(x := 1)",
    "1 % 2", "e^(e^(e^100))", "sqrt(e^(e^100))",
]
# [define] extends the language with quoted options and stage paths, so it refuses these
# differently (an option is not a result; 'a' is no computation): refused everywhere.
EXTENDED_IN_DEFINE = ["'text'", "a.b", "A.weights"]


def _message(front_end, text):
    try:
        front_end(text)
    except SymbolicAttnError as error:
        message = str(error)
        message = message.removeprefix("definition 'D': ")
        quoted = message.rfind(' in "')
        return message[:quoted] if quoted > 0 and message.endswith('"') else message
    return None


@pytest.mark.parametrize("text", SAME_ERROR_TEXTS, ids=lambda t: t[:20])
def test_a_refused_text_gets_one_message_everywhere(text):
    messages = {name: _message(front_end, text) for name, front_end in FRONT_ENDS.items()}
    assert None not in messages.values(), messages
    assert len(set(messages.values())) == 1, messages


@pytest.mark.parametrize("text", EXTENDED_IN_DEFINE)
@pytest.mark.parametrize("front_end", FRONT_ENDS.values(), ids=FRONT_ENDS.keys())
def test_options_and_stages_are_refused_outside_their_computation(front_end, text):
    assert _message(front_end, text) is not None


# -- the same value ---------------------------------------------------------------------------

SAME_VALUE_TEXTS = [
    ("1.", 1), ("1_000", 1000), (".5", R(1, 2)), ("2^3^2", 512), ("-2^2", -4), ("2**-1", R(1, 2)),
    ("--1", 1), ("(1/3)", R(1, 3)), ("sqrt(8)", 2 * sympy.sqrt(2)), ("e^0", 1), ("log(8, 2)", 3),
    ("+".join(["1"] * 300), 300), ("*".join(["2"] * 10), 1024),
]


@pytest.mark.parametrize("text, expected", SAME_VALUE_TEXTS, ids=lambda v: str(v)[:20])
@pytest.mark.parametrize("front_end", FRONT_ENDS.values(), ids=FRONT_ENDS.keys())
def test_an_accepted_text_has_one_value_everywhere(front_end, text, expected):
    assert _answer(front_end, text) == expected


MATRIX_FRONT_ENDS = {
    "command line": lambda text: __import__("symbolic_attn.exact.parse", fromlist=["parse_matrix"]).parse_matrix(text),
    "exercise value": _exercise_value,
    "[define]": _definition,
}


@pytest.mark.parametrize("text, expected", [
    ("[[1, 0], [0, 1/2]]", sympy.ImmutableMatrix([[1, 0], [0, R(1, 2)]])),
    ("[1, 2, 3,]", sympy.ImmutableMatrix([[1, 2, 3]])),
    ("[[1, 2]] * 2", sympy.ImmutableMatrix([[2, 4]])),
    ("[[1, 2]].T", sympy.ImmutableMatrix([[1], [2]])),
    ("[[1, 2], [3, 4]] + [[10, 20]]", sympy.ImmutableMatrix([[11, 22], [13, 24]])),
])
@pytest.mark.parametrize("front_end", MATRIX_FRONT_ENDS.values(), ids=MATRIX_FRONT_ENDS.keys())
def test_a_matrix_has_one_value_everywhere(front_end, text, expected):
    assert sympy.ImmutableMatrix(front_end(text)) == expected


# ("[]" is an empty matrix everywhere but in [define], where it is an empty list of heads.)
@pytest.mark.parametrize("text", ["[[1, 2], [3]]", "[[[1]]]", "[[1, 2]] + 1", "[[1, 2]] @ [[1, 2]]",
                                  "[[1, 2]] ^ 2", "[[1]] / [[1]]"])
def test_a_bad_matrix_gets_one_message_everywhere(text):
    messages = {name: _message(front_end, text) for name, front_end in MATRIX_FRONT_ENDS.items()}
    assert None not in messages.values(), messages
    assert len(set(messages.values())) == 1, messages


# -- a disguised zero divisor (issue 19) -------------------------------------------------------
#
# A divisor must be certainly nonzero.  One SymPy does not see as 0 is decided exactly
# (intervals for a nonzero sign, exact algebra for zero); one neither decides is refused,
# never divided by: an "exact" 1/(sin(1)^2 + cos(1)^2 - 1) would be a division by zero.

@pytest.mark.parametrize("text, message", [
    ("1/(sqrt(2)*sqrt(3) - sqrt(6))", r"^division by zero"),
    ("1/((1 + sqrt(2))^2 - 3 - 2*sqrt(2))", r"^division by zero: the divisor .* is exactly 0"),
    ("1/(sin(1)^2 + cos(1)^2 - 1)", r"^cannot decide whether the divisor .* is zero"),
    ("(sin(1)^2 + cos(1)^2 - 1)^(-1)", r"^cannot decide whether .*to a negative power, is zero"),
    ("sqrt(sin(1)^2 + cos(1)^2 - 1)", r"^sqrt of a number not shown non-negative"),
])
@pytest.mark.parametrize("front_end", FRONT_ENDS.values(), ids=FRONT_ENDS.keys())
def test_a_disguised_zero_is_never_a_divisor(front_end, text, message):
    import re

    found = _message(front_end, text)
    assert found is not None and re.search(message, found), found


def test_a_disguised_zero_divisor_in_define_names_the_definition_and_the_division():
    with pytest.raises(SymbolicAttnError, match=r"^definition 'D': cannot decide whether the divisor "
                                                 r"-1 \+ cos\(1\)\*\*2 \+ sin\(1\)\*\*2 is zero at column 1 in "):
        run_program({"X": sympy.ImmutableMatrix([[1]])}, [("D", "X / (sin(1)^2 + cos(1)^2 - 1)")])


@pytest.mark.parametrize("text, expected", [
    ("1/sqrt(2)", sympy.sqrt(2) / 2), ("1/(exp(1) - 2)", 1 / (sympy.E - 2)), ("ln(sin(1)^2 + cos(1)^2)", 0),
])
def test_a_divisor_shown_nonzero_is_divided_by(text, expected):
    assert sympy.simplify(parse_expression(text) - expected) == 0


def test_a_claimed_entry_keeps_its_whole_written_text():
    """Spans reach a bracketed operand's closing parenthesis: the claim echoes what was written."""
    assert [e.text for e in parse_claimed("[e^(e^(2)), -(1/3), (0.5)]").elements] == ["e^(e^(2))", "-(1/3)", "0.5"]


def test_showing_a_tower_of_exponentials_does_not_evaluate_it():
    """Messages print expressions without sorting a sum's terms by value (which evaluates them)."""
    import subprocess
    import sys

    code = ("import sympy; from symbolic_attn.errors import shown; "
            "print(shown(sympy.exp(sympy.exp(sympy.exp(100))) - sympy.exp(sympy.exp(100))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "exp(exp(exp(100)))" in done.stdout, done.stderr
