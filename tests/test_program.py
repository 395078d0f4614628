"""The [define] evaluator: definitions in order, stage access, and hostile text refused fast
with a typed error naming the definition."""

import time

import pytest
import sympy
from sympy import Rational as R
from sympy import cos, sin, sqrt

from symbolic_attn.errors import (
    DefinitionError,
    InputLimitError,
    MaskError,
    ParseError,
    ShapeError,
    StageError,
    SymbolicAttnError,
    ZeroVarianceError,
)
from symbolic_attn.model.attention import attention
from symbolic_attn.model.program import run_program

M = sympy.ImmutableMatrix
INPUTS = {
    "X": M([[1, 0], [0, 1], [1, 1]]),
    "WK": M([[1, 1], [0, 1]]),
    "WV": M([[1, 0], [0, 2]]),
    "W1": M([[1, -1, 0], [0, 1, 1]]),
    "b1": M([[0, 0, -1]]),
    "W2": M([[1, 0], [0, 1], [1, 1]]),
    "b2": M([[0, 1]]),
    "k": 2,
}
ISSUE = [
    ("P", "sinusoidal(3, 2)"),
    ("H", "X + P"),
    ("A", "attention(H, H @ WK, H @ WV, mask = 'causal')"),
    ("M", "multihead(X, heads = [[I2, WK, WV], [WK, I2, WV]], WO = I4, mask = 'none')"),
    ("N", "layer_norm(X + A.output, eps = 1/100)"),
    ("F", "feed_forward(N, W1, b1, W2, b2, activation = 'relu')"),
]


@pytest.fixture(scope="module")
def issue_trace():
    return run_program(INPUTS, ISSUE)


def test_the_issue_example(issue_trace):
    t = issue_trace
    assert t["P"] == M([[0, 1], [sin(1), cos(1)], [sin(2), cos(2)]])
    assert t["H"] == INPUTS["X"] + t["P"]
    H = t["H"]
    direct = attention(H, H * INPUTS["WK"], H * INPUTS["WV"], mask="causal")
    assert t["A.weights"] == direct.weights and t["A"] == direct.output
    assert t["M.head[2].weights"] == attention(INPUTS["X"] * INPUTS["WK"], INPUTS["X"], INPUTS["X"] * INPUTS["WV"]).weights
    assert t.shape("M.concat") == (3, 4) and t["M"] == t["M.concat"]
    assert t["N.mean"][0] == 2  # row 1 of X + A.output is [2, 2]: constant, eps keeps it finite
    assert t["N"].row(0) == M([[0, 0]])
    assert t.decimals("F", 5)[1] == ["0.00000", "2.99461"]
    for path in ("P", "A.weights", "M.head[1].weights", "M.head[2].output", "M.concat", "N", "F.hidden"):
        assert path in list(t)


def test_definitions_are_kept_with_their_own_traces(issue_trace):
    definitions = issue_trace.settings["definitions"]
    assert list(definitions) == ["P", "H", "A", "M", "N", "F"]
    assert definitions["A"]["weights"] == issue_trace["A.weights"]


@pytest.mark.parametrize("text,expected", [
    ("X.T @ X", M([[2, 1], [1, 2]])),
    ("2 * I2 - WK / 2", M([[R(3, 2), -R(1, 2)], [0, R(3, 2)]])),
    ("k * I2", M([[2, 0], [0, 2]])),
    ("-X[0:1] if False else -WK", M([[-1, -1], [0, -1]])),
    ("concat(X, X @ WK)", M([[1, 0, 1, 1], [0, 1, 0, 1], [1, 1, 1, 2]])),
    ("transpose(WK) + WK.T", M([[2, 0], [2, 2]])),
    ("ones(1, 2) + zeros(1, 2) + identity(2)[0] if False else ones(2) + identity(2)", M([[2, 1], [1, 2]])),
    ("[[1, 2], [3, 4]] @ I2", M([[1, 2], [3, 4]])),
    ("X + b2", M([[1, 1], [0, 2], [1, 2]])),  # a 1 x d row repeats over the rows
    ("sqrt(2) * I2", M([[sqrt(2), 0], [0, sqrt(2)]])),
    ("relu(X - ones(3, 2))", M([[0, 0], [0, 0], [0, 0]])),
], ids=["transpose_product", "scalars", "scalar_input", "bad_ifexp", "concat", "transpose", "bad_subscript",
        "literal", "row_broadcast", "sqrt_scalar", "relu"])
def test_expressions(text, expected):
    if " if False" in text:
        with pytest.raises(DefinitionError, match=r"^definition 'D': "):
            run_program(INPUTS, [("D", text)])
        return
    assert run_program(INPUTS, [("D", text)])["D"] == expected


def test_masks_in_definitions():
    t = run_program({"Q": M([[1, 0], [0, 1]]), "G": M([[1, 0], [1, 1]])}, [
        ("A", "attention(Q, Q, Q, mask = keep(G))"),
        ("C", "attention(Q, Q, Q, mask = padding(1))"),
        ("S", "softmax(zeros(2, 2), mask = 'causal')"),
        ("L", "attention(Q, Q, Q, mask = keep([[1, 1], [0, 1]]), scale = 1)"),
    ])
    assert t["A.weights"].row(0) == M([[1, 0]])
    assert t["C.weights"] == M([[1, 0], [1, 0]])
    assert t["S"] == M([[1, 0], [R(1, 2), R(1, 2)]])
    assert t["L.weights"].row(1) == M([[0, 1]])


def test_block_mask_with_an_empty_row_is_refused():
    with pytest.raises(SymbolicAttnError, match=r"^definition 'B': row 2 allows no key"):
        run_program({"Q": M([[1, 0], [0, 1]]), "G": M([[0, 1], [1, 1]])}, [("B", "attention(Q, Q, Q, mask = block(G))")])


def test_stage_access_and_blocks():
    inputs = {"X": M([[1, 0], [0, 2]]), "Z": M.zeros(2, 2)}
    t = run_program(inputs, [
        ("B", "encoder_block(X, heads = [[I2, Z, I2]], WO = I2, W1 = Z, b1 = 0, W2 = Z, b2 = 0, eps = 0, norm = 'post')"),
        ("W", "B.attention.head[1].weights"),
        ("C", "B.norm1 @ B.attention.head[1].weights.T"),
        ("Pre", "encoder_block(X, heads = [[I2, Z, I2]], WO = I2, W1 = Z, W2 = Z, norm = 'pre')"),
        ("D", "decoder_block(X, B, self_heads = [[I2, Z, I2]], self_WO = I2, cross_heads = [[I2, Z, I2]], cross_WO = I2, W1 = Z, W2 = Z)"),
        ("R", "alibi(2, heads = 2)"),
        ("S", "R.slopes"),
        ("G", "gelu(zeros(1, 2), approximate = 'tanh')"),
        ("Ro", "rope(X, positions = [0, 0])"),
    ])
    assert t["W"] == M([[R(1, 2), R(1, 2)]] * 2)
    assert t["B"] == M([[1, -1], [-1, 1]]) and t["Pre"] == inputs["X"]
    assert t["D.self_attention.head[1].weights"] == M([[1, 0], [R(1, 2), R(1, 2)]])
    assert t["S"] == M([[R(1, 16), R(1, 256)]])
    assert t["R.head[2]"][1, 0] == -R(1, 256)
    assert t["Ro"] == inputs["X"]
    assert "B.attention.head[1].weights" in list(t)


def test_variants_are_settings_of_the_same_operations():
    inputs = {"z": M([[1, 3]])}
    right = run_program(inputs, [("L", "layer_norm(z)"), ("P", "sinusoidal(2, 2)")])
    wrong = run_program(inputs, [("L", "layer_norm(z)"), ("P", "sinusoidal(2, 2)")],
                        variant={"layer_norm": {"variance": "unbiased"}, "sinusoidal": {"first_position": 1}})
    assert right["L"] == M([[-1, 1]]) and wrong["L"] == M([[-1 / sqrt(2), 1 / sqrt(2)]])
    assert wrong["P"] == M([[sin(1), cos(1)], [sin(2), cos(2)]])


# -- hostile and wrong definitions -------------------------------------------------------------


HOSTILE = [
    ("unknown_function", "open('/etc/passwd')", DefinitionError, r"unknown function 'open'"),
    ("dunder", "__import__('os').system('true')", DefinitionError, r"only named functions may be called"),
    ("dunder_call", "__import__('os')", DefinitionError, r"unknown function '__import__'"),
    ("attribute_call", "X.__class__", DefinitionError, r"'X' has no stages"),
    ("method_call", "X.T.__class__()", DefinitionError, r"only named functions may be called"),
    ("lambda", "(lambda: 1)()", DefinitionError, r"lambda is not allowed"),
    ("unknown_name", "Y + X", DefinitionError, r"unknown name 'Y'"),
    ("self_reference", "D + X", DefinitionError, r"'D' refers to itself"),
    ("power_bomb", "layer_norm(X * 9**9**9**9)", InputLimitError, r""),
    ("exp_bomb", "layer_norm(X * exp(10**6))", InputLimitError, r""),
    ("digits_bomb", "X * 1" + "0" * 5000, InputLimitError, r""),
    ("decimal_exponent", "X * 1e999999", InputLimitError, r""),
    ("identity_bomb", "I999 @ I999", InputLimitError, r"identity size 999 exceeds"),
    ("ones_bomb", "ones(100000, 100000)", InputLimitError, r"exceeds the limit of 64"),
    ("sinusoidal_bomb", "sinusoidal(10**9, 2)", InputLimitError, r""),
    ("alibi_bomb", "alibi(32, 32, heads = 10**6)", InputLimitError, r""),
    ("heads_bomb", "multihead(X, heads = [[I2, I2, I2]] * 100)", SymbolicAttnError, r"expected a number"),
    ("deep_calls", "relu(" * 10 + "X" + ")" * 10, InputLimitError, r"calls nested more than"),
    ("deep_brackets", "(" * 100 + "X" + ")" * 100, InputLimitError, r"brackets nested"),
    ("deep_signs", "-" * 300 + "X", InputLimitError, r"nested more than 200 operations deep"),
    ("many_calls", "+".join(["relu(X)"] * 40), InputLimitError, r"more than 32 function calls"),
    ("matmul_chain", "@".join(["WK"] * 2000), InputLimitError, r""),
    ("star_kwargs", "relu(**X)", DefinitionError, r"'\*\*' arguments"),
    ("unknown_keyword", "relu(X, mode = 'x')", DefinitionError, r"'relu' has no argument 'mode'"),
    ("bad_option", "gelu(X, approximate = 'erf2')", DefinitionError, r"expected one of 'none', 'tanh'"),
    ("bad_mask", "attention(X, X, X, mask = 'upper')", DefinitionError, r"expected 'none', 'causal'"),
    ("missing_argument", "feed_forward(X, WK)", DefinitionError, r"needs the argument 'W2'"),
    ("string_result", "'causal'", DefinitionError, r"the result is the option"),
    ("comparison", "X == X", DefinitionError, r"comparison is not allowed"),
    ("fstring", "f'{X}'", DefinitionError, r"an f-string is not allowed"),
    ("matrix_times_matrix", "X * X", DefinitionError, r"use '@'"),
    ("shape", "X @ X", DefinitionError, r"cannot multiply 3x2 by 3x2"),
    ("scalar_function_of_matrix", "sqrt(X)", DefinitionError, r"'sqrt' takes a number"),
    ("unknown_stage", "F.weights", DefinitionError, r"'F' is used before it is defined"),
    ("syntax", "relu(X", ParseError, r"unclosed .\(. opened at column 5"),
    ("zero_variance", "layer_norm(ones(2, 2))", ZeroVarianceError, r"layer_norm row 1: variance is exactly 0"),
    ("float_mask_count", "attention(X, X, X, mask = padding(1.5))", DefinitionError, r"whole number"),
]


@pytest.mark.parametrize("name,text,error,message", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_definitions_fail_fast_naming_the_definition(name, text, error, message):
    start = time.perf_counter()
    with pytest.raises(error, match=r"^definition 'D': .*" + message):
        run_program(INPUTS, [("D", text), ("F", "relu(X)")])
    assert time.perf_counter() - start < 2


def test_a_name_used_before_its_definition():
    with pytest.raises(DefinitionError, match=r"^definition 'A': 'B' is used before it is defined"):
        run_program(INPUTS, [("A", "B @ X"), ("B", "X.T")])


def test_a_stage_that_does_not_exist():
    with pytest.raises(StageError, match=r"^definition 'B': unknown stage 'weight'"):
        run_program(INPUTS, [("A", "attention(X, X, X)"), ("B", "A.weight")])


def test_alibi_with_heads_has_no_single_output():
    with pytest.raises(DefinitionError, match=r"^definition 'B': this computation has no single output"):
        run_program(INPUTS, [("A", "alibi(3, heads = 2)"), ("B", "A + X @ X.T")])


def test_ten_thousand_definitions_fail_fast():
    start = time.perf_counter()
    definitions = [(f"d{i}", "X") for i in range(10_000)]
    with pytest.raises(InputLimitError, match=r"^definition 'd64': 10000 definitions exceed the limit of 64"):
        run_program(INPUTS, definitions)
    assert time.perf_counter() - start < 1


@pytest.mark.parametrize("name,error", [
    ("e", DefinitionError), ("I3", DefinitionError), ("X", DefinitionError), ("1x", DefinitionError),
    ("a" * 40, DefinitionError),
], ids=["constant", "identity", "input", "digit", "long"])
def test_unusable_definition_names(name, error):
    with pytest.raises(error, match=r"^definition '"):
        run_program(INPUTS, [(name, "X")])


def test_duplicate_definition():
    with pytest.raises(DefinitionError, match=r"^definition 'A': defined twice"):
        run_program(INPUTS, [("A", "X"), ("A", "X")])


def test_errors_of_operations_keep_their_type():
    with pytest.raises(ShapeError, match=r"^definition 'A': feed_forward: X is 3x2 and W1 is 3x1"):
        run_program(INPUTS, [("A", "feed_forward(X, ones(3, 1), 0, ones(1, 1), 0)")])
    with pytest.raises(MaskError, match=r"^definition 'A': keep mask is 2x2 but the scores are 3x3"):
        run_program(INPUTS, [("A", "attention(X, X, X, mask = keep(I2))")])
    with pytest.raises(ParseError, match=r"^definition 'A': "):
        run_program(INPUTS, [("A", "X * ln(0)")])


def test_growing_closed_forms_are_bounded():
    start = time.perf_counter()
    inputs = {"X": M([[1, 2, 0], [0, 1, 3], [2, 0, 1]])}
    chain = [("A", "attention(X, X, X)")]
    for i in range(1, 6):
        prev = chain[-1][0]
        chain.append((f"A{i}", f"attention(layer_norm({prev}, eps = 1/7), {prev}, {prev})"))
    with pytest.raises(InputLimitError, match=r"^definition 'A\d': "):
        run_program(inputs, chain)
    assert time.perf_counter() - start < 60
