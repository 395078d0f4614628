"""The exercise loader: valid files load exactly; every invalid one is an ExerciseError
naming the file, the key and the problem."""

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from symbolic_attn.errors import ExerciseError
from symbolic_attn.grading.exercise import LIMITS, load_exercise, parse_exercise

BASE = """
title = "t"
[inputs]
X = [[1, 0], [0, 1], [1, 1]]
[attention]
query = "X"
key = "X"
value = "2*X"
"""
CLAIM = '\n[[claims]]\nquantity = "weights"\nrow = 1\nvalue = "[0.401, 0.198, 0.401]"\n'


def load(text, source="ex.toml"):
    return parse_exercise(text, source=source)


def test_valid_file_loads_exact_values():
    exercise = load(BASE + CLAIM)
    assert exercise.attention.value == sympy.Matrix([[2, 0], [0, 2], [2, 2]])
    assert exercise.attention.shape == (3, 3, 2, 2)
    (claim,) = exercise.claims
    assert (claim.quantity, claim.row, claim.col, claim.claimed.shape) == ("weights", 1, None, (3,))
    assert claim.name == "weights[1,*]"


def test_inputs_accept_integers_strings_and_arrays():
    exercise = load('[inputs]\nc = "1/3"\nr = ["0.43", "sqrt(2)", "ln(2)", 5]\n[attention]\nscores = "r"\nvalue = [[1],[1],[1],[1]]\n')
    assert exercise.inputs["c"] == sympy.Rational(1, 3)
    assert exercise.inputs["r"] == sympy.Matrix([[sympy.Rational(43, 100), sympy.sqrt(2), sympy.log(2), 5]])


def test_expressions_over_inputs():
    exercise = load('[inputs]\nX = [[1, 2]]\nW = [[1, 1], [0, 1]]\n[attention]\nquery = "(X @ W - X) / 2"\nkey = "X"\nvalue = "X @ (X.T @ X)"\nscale = "1/2"\n')
    assert exercise.attention.query == sympy.Matrix([[0, sympy.Rational(1, 2)]])
    assert exercise.attention.value == sympy.Matrix([[5, 10]])
    assert exercise.attention.scale == sympy.Rational(1, 2)


def test_masks():
    assert load(BASE + 'mask = "causal"\n').attention.mask.allowed[0] == (True, False, False)
    keep = load(BASE + "mask = {keep = [[1, 1, 0], [1, 1, 1], [true, false, true]]}\n").attention.mask
    assert keep.allowed[2] == (True, False, True)
    block = load(BASE + "mask = {block = [[0, 0, 1], [0, 0, 1], [0, 0, 1]]}\n").attention
    assert block.mask_kind == "block" and block.mask.allowed[0] == (True, True, False)


@pytest.mark.parametrize(
    "text, message",
    [
        (BASE + CLAIM.replace('"[0.401, 0.198, 0.401]"', "0.140"),
         r'^ex\.toml: claim 1: value: TOML float 0\.140 loses its written precision; write it as a string: "0\.140"$'),
        (BASE.replace('"2*X"', "0.5"), r"^ex\.toml: attention\.value: TOML float 0\.5 loses"),
        (BASE + CLAIM.replace("row = 1", "row = 4"), r"^ex\.toml: claim 1: row: 4 is outside 1\.\.3"),
        (BASE + CLAIM.replace("row = 1", "row = 0"), r"^ex\.toml: claim 1: row: 0 is outside 1\.\.3"),
        (BASE + CLAIM.replace("row = 1", 'row = "1"'), r"^ex\.toml: claim 1: row: expected an integer, got a string '1'$"),
        (BASE + CLAIM.replace('"weights"', '"weight"'), r"^ex\.toml: claim 1: quantity: expected one of query, key"),
        (BASE + CLAIM.replace("row = 1", "rows = 1"), r"^ex\.toml: claim 1: rows: unknown key"),
        (BASE + CLAIM.replace("[0.401, 0.198, 0.401]", "[0.4, 0.2]"),
         r"^ex\.toml: claim 1: value: claimed a list of 2 for a list of 3 \(weights row 1\)$"),
        (BASE + CLAIM.replace("[0.401, 0.198, 0.401]", "[0.4, 0.2,"), r"^ex\.toml: claim 1: value: "),
        (BASE + CLAIM + 'tolerance = "0.01"\nsig_figs = 3\n', r"^ex\.toml: claim 1: sig_figs: give at most one of"),
        (BASE + CLAIM + "tolerance = 0.01\n", r"^ex\.toml: claim 1: tolerance: TOML float 0\.01"),
        (BASE.replace('query = "X"', 'query = "Y"'), r"^ex\.toml: attention\.query: unknown name 'Y'"),
        (BASE.replace('query = "X"', 'query = "X.T"'), r"^ex\.toml: attention\.key: key width 2 differs from query width 3"),
        (BASE.replace('value = "2*X"', 'value = "[[1]]"'), r"^ex\.toml: attention\.value: "),
        (BASE.replace('query = "X"\n', ""), r"^ex\.toml: attention\.query: missing"),
        ('title = "t"\n', r"^ex\.toml: attention: missing$"),
        (BASE + 'scores = [[1, 2, 3]]\n', r"^ex\.toml: attention\.query: give either scores or query and key"),
        (BASE + 'mask = "upper"\n', r'^ex\.toml: attention\.mask: expected "none", "causal"'),
        (BASE + "mask = {keep = [[1, 1], [1, 1]]}\n", r"^ex\.toml: attention\.mask\.keep: a 2x2 mask for 3x3 scores$"),
        (BASE + "mask = {keep = [[1, 1, 2], [1, 1, 1], [1, 1, 1]]}\n", r"^ex\.toml: attention\.mask\.keep\[1,3\]: expected 0, 1"),
        (BASE + "mask = {keep = [[0, 0, 0], [1, 1, 1], [1, 1, 1]]}\n", r"^ex\.toml: attention\.mask\.keep: row 1 allows no key"),
        (BASE + 'scale = "c"\n', r"^ex\.toml: attention\.scale: unknown name 'c'|expected \"default\", \"none\" or a number"),
        ("claims = 3\n" + BASE, r"^ex\.toml: claims: expected an array, got an integer 3$"),
        ("description = 1979-05-27\n" + BASE, r"^ex\.toml: description: expected a string, got date"),
        ("bogus = 1\n" + BASE, r"^ex\.toml: bogus: unknown key"),
        ('symbols = ["sqrt"]\n' + BASE, r"^ex\.toml: symbols\[1\]: not a usable symbol name: 'sqrt'$"),
        (BASE.replace("X = [[1, 0], [0, 1], [1, 1]]", "X = [[1, 0], [0, 1], [1]]"), r"^ex\.toml: inputs\.X: row 3 has 1 entries, row 1 has 2$"),
        (BASE.replace("X = ", "__class__ = 1\nX = "), r"^ex\.toml: inputs\.__class__: not a usable input name"),
        ("x = = 1", r"^ex\.toml: not valid TOML: "),
        ('[attention]\nscores = [[0, 0]]\nvalue = [[1], [1]]\n[[claims]]\nquantity = "query"\nvalue = "1"\n',
         r"^ex\.toml: claim 1: quantity: no query in this exercise \(scores were given directly\)$"),
    ],
    ids=lambda value: None,
)
def test_invalid_files_name_file_key_and_problem(text, message):
    with pytest.raises(ExerciseError, match=message):
        load(text)


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\x00\x01\x02binary", r"^ex\.toml: binary data \(a NUL byte at offset 0\)"),
        (b'title = "\xff\xfe"', r"^ex\.toml: not UTF-8 text \(invalid byte 0xff at offset 9\); save it as UTF-8$"),
        (b"x = " + b"9" * 10**6, r"^ex\.toml: file larger than the limit"),
        # A bare number of more than 400 digits: refused by the pre-scan, before tomllib.
        (b"x = " + b"9" * 5000, r"^ex\.toml: line 1: x: a number of 5000 digits exceeds the limit of 400$"),
        (b"x = " + b"9" * 4000, r"^ex\.toml: line 1: x: a number of 4000 digits exceeds the limit of 400$"),
        (b"[inputs]\nx = " + b"9" * 4000, r"^ex\.toml: line 2: inputs\.x: a number of 4000 digits exceeds the limit of 400$"),
        (b"x = " + b"[" * 5000 + b"]" * 5000, r"^ex\.toml: "),
        (b"a = 1\n" * 200_000, r"^ex\.toml: file larger than the limit of 1000000 bytes$"),
    ],
    ids=["nul", "utf8", "megadigit-int", "5000-digit-int", "4000-digit-int", "4000-digit-input", "deep-arrays", "too-large"],
)
def test_hostile_bytes(data, message):
    with pytest.raises(ExerciseError, match=message):
        parse_exercise(data, source="ex.toml")


def test_bounded_sizes():
    wide = "[[" + ", ".join(["0"] * (LIMITS["dimension"] + 1)) + "]]"
    with pytest.raises(ExerciseError, match=r"^ex\.toml: inputs\.X\[1\]: 65 entries exceed the limit of 64 per dimension$"):
        load(f"[inputs]\nX = {wide}\n[attention]\nscores = \"X\"\nvalue = \"X\"\n")
    # A small file cannot build a big matrix: an outer product of two bounded inputs is bounded too.
    with pytest.raises(ExerciseError, match=r"exceed the limit of 64"):
        load("[inputs]\nu = [" + ", ".join(["1"] * 100) + "]\n[attention]\nscores = \"u.T @ u\"\nvalue = \"u.T\"\n")


def test_missing_file(tmp_path):
    with pytest.raises(ExerciseError, match=r"nope\.toml: cannot read the file"):
        load_exercise(tmp_path / "nope.toml")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_bytes_only_exercise_errors(data):
    try:
        parse_exercise(data, source="fuzz.toml")
    except ExerciseError as error:
        assert str(error).startswith("fuzz.toml: ") and "\n" not in str(error)


_values = st.recursive(
    st.one_of(st.integers(-10**6, 10**6), st.booleans(), st.text(alphabet="01/.+*Xsqrt()[], ", max_size=12),
              st.sampled_from(["0.140", "X", "X.T", "causal", "none", "weights", "1/3", "__import__('os')"])),
    lambda children: st.lists(children, max_size=4),
    max_leaves=12,
)


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return "[" + ", ".join(_toml(item) for item in value) + "]"


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["X", "W", "n"]), _values, max_size=3),
    st.dictionaries(st.sampled_from(["query", "key", "value", "scores", "mask", "scale"]), _values, max_size=5),
    st.lists(st.dictionaries(st.sampled_from(["quantity", "row", "col", "value", "label", "tolerance", "sig_figs"]),
                             _values, max_size=5), max_size=3),
)
def test_fuzz_structured_files_only_exercise_errors(inputs, attention, claims):
    lines = ["[inputs]"] + [f"{k} = {_toml(v)}" for k, v in inputs.items()]
    lines += ["[attention]"] + [f"{k} = {_toml(v)}" for k, v in attention.items()]
    for claim in claims:
        lines += ["[[claims]]"] + [f"{k} = {_toml(v)}" for k, v in claim.items()]
    try:
        parse_exercise("\n".join(lines) + "\n", source="fuzz.toml")
    except ExerciseError as error:
        assert str(error).startswith("fuzz.toml: ") and "\n" not in str(error)
