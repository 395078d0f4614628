"""One error path: typed errors only, one escaped line per message, values that never crash."""

import time
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import sympy

import symbolic_attn
from symbolic_attn import errors
from symbolic_attn.errors import (
    FloatInputError,
    InputLimitError,
    MaskError,
    ParseError,
    SymbolicAttnError,
    one_line,
    safe_text,
    shown,
)
from symbolic_attn.exact.convert import to_exact, to_matrix
from symbolic_attn.exact.parse import parse_expression, parse_matrix
from symbolic_attn.model.masks import Mask


@pytest.mark.parametrize(
    "text, expected",
    [
        ("plain", "plain"),
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
        ("bell\x07", "bell\\x07"),
        ("a\nfake.toml: 99 passed, 0 failed", "a\\nfake.toml: 99 passed, 0 failed"),
        ("cr\rover", "cr\\rover"),
        ("tab\there", "tab\\there"),
        ("nul\x00", "nul\\x00"),
        ("del\x7f", "del\\x7f"),
        ("c1\x9b31m", "c1\\x9b31m"),
        ("bidi\u202eevil", "bidi\\u202eevil"),
        ("line\u2028sep", "line\\u2028sep"),
        ("surrogate\udcff", "surrogate\\udcff"),
        ("zero\u200bwidth", "zero\\u200bwidth"),
        ("unicode ≈ é ok", "unicode ≈ é ok"),
    ],
    ids=["plain", "esc", "bel", "newline", "cr", "tab", "nul", "del", "c1-csi", "bidi", "line-sep", "surrogate",
         "zero-width", "printable-unicode"],
)
def test_safe_text_escapes_controls(text, expected):
    assert safe_text(text) == expected
    assert safe_text(safe_text(text)) == expected  # idempotent
    assert safe_text(text).isprintable()


def test_safe_text_cuts_and_one_line_is_one_line():
    assert safe_text("x" * 500, 20) == "x" * 17 + "..."
    line = one_line(ValueError("first\nsecond\r\x1b[2K" + "y" * 1000))
    assert "\n" not in line and "\r" not in line and "\x1b" not in line and len(line) <= errors.MESSAGE_WIDTH
    assert line.startswith("first\\nsecond\\r\\x1b[2K")
    assert one_line(KeyError()) == "KeyError"


@pytest.mark.parametrize(
    "value, expected",
    [
        (2**20000, r"^<an integer of 6021 digits>$"),
        (-(10**5000), r"^<an integer of 5001 digits>$"),
        (sympy.Integer(2) ** 20000, r"^<an integer of 6021 digits>$"),
        ("\x1b[2J", r"^\\x1b\[2J$"),
        (10**100, r"^1{1}0{36}\.\.\.$"),
    ],
    ids=["int", "negative-int", "sympy-int", "escape", "cut"],
)
def test_shown_never_fails(value, expected):
    import re

    assert re.match(expected, shown(value))


def test_every_error_type_is_exported_and_typed():
    for name in errors.__all__:
        thing = getattr(errors, name)
        if isinstance(thing, type) and issubclass(thing, BaseException):
            assert getattr(symbolic_attn, name) is thing
            # The time budget unwinds like KeyboardInterrupt: no library `except` may catch it.
            expected = (BaseException,) if name == "TimeLimitError" else (SymbolicAttnError,)
            assert issubclass(thing, expected) and (name != "TimeLimitError" or not issubclass(thing, Exception))


# Public calls with hostile arguments: each must raise a typed error, at once.
CALLS = {
    "keep-huge-int": (lambda: Mask.keep([[2**20000]]), MaskError, r"^keep mask entry \(1,1\) is <an integer of 6021 digits>"),
    "block-huge-int": (lambda: Mask.block([[1, 10**5000]]), MaskError, r"^block mask entry \(1,2\) is <an integer"),
    "additive-huge-int": (lambda: Mask.additive([[2**20000]]), MaskError, r"^additive mask entry \(1,1\) is <an integer"),
    "causal-offset-text": (lambda: Mask.causal(2, offset="1"), MaskError, r"^causal: the offset must be a whole number, got str '1'"),
    "causal-offset-float": (lambda: Mask.causal(2, offset=0.5), MaskError, r"^causal: the offset must be a whole number, got the float 0\.5"),
    "causal-offset-bool": (lambda: Mask.causal(2, offset=True), MaskError, r"^causal: the offset must be a whole number, not the boolean"),
    "causal-size-float": (lambda: Mask.causal(2.0), MaskError, r"^mask size n must be a whole number, got the float 2\.0"),
    "causal-size-huge": (lambda: Mask.causal(10**400), MaskError, r"^mask of 100000000\.\.\.x100000000\.\.\. exceeds the size limit of 1024x1024"),
    "padding-valid-text": (lambda: Mask.padding(2, 2, "1"), MaskError, r"^padding: the valid key count must be a whole number"),
    "keep-float-entry": (lambda: Mask.keep([[1.0]]), MaskError, r"^keep mask entry \(1,1\) is 1\.0 \(a float: write 1 or 0\)"),
    "keep-array-entry": (lambda: Mask.keep([[np.array([1, 1])]]), MaskError, r"^keep mask entry \(1,1\) is \[1 1\]"),
    "keep-ragged": (lambda: Mask.keep([[1, 0], [1]]), MaskError, r"^mask row 2 has 1 entries, row 1 has 2"),
    "mask-and-int": (lambda: Mask.causal(2) & 3, MaskError, r"^a Mask combines only with a Mask, not a int"),
    "mask-direct-garbage": (lambda: Mask(5), MaskError, r"^a mask's grid must be rows of True/False, got int"),
    "mask-direct-entry": (lambda: Mask(((1, "x"),)), MaskError, r"^mask mask entry \(1,2\) is 'x'"),
    "permuted-none": (lambda: Mask.causal(2).permuted(None), MaskError, r"^permuted: None is not a permutation"),
    "permuted-text": (lambda: Mask.causal(2).permuted("ab"), MaskError, r"^permuted: None is not a permutation"),
    "is-allowed-outside": (lambda: Mask.causal(2).is_allowed(5, 0), MaskError, r"^query index 5 is outside 0\.\.1"),
    "is-allowed-float": (lambda: Mask.causal(2).is_allowed(0.5, 0), MaskError, r"^the query index must be a whole number"),
    "decimal-exponent": (lambda: to_exact(Decimal("1e999999999")), InputLimitError, r"^a Decimal with exponent 999999999 exceeds"),
    "decimal-digits": (lambda: to_exact(Decimal("1" * 5000)), InputLimitError, r"^a Decimal of 5000 digits exceeds"),
    "decimal-nan": (lambda: to_exact(Decimal("NaN")), ParseError, r"^not a finite number: NaN"),
    "sympy-true": (lambda: to_exact(sympy.true), ParseError, r"^a SymPy BooleanTrue \(True\) is not a number"),
    "sympy-true-matrix": (lambda: to_matrix([[sympy.true]]), ParseError, r"^matrix\[1,1\]: a SymPy BooleanTrue"),
    "sympy-interval": (lambda: to_exact(sympy.Interval(0, 1)), ParseError, r"^a SymPy Interval"),
    "numpy-float64": (lambda: to_exact(np.float64(0.5)), FloatInputError, r"^binary float 0\.5 refused: write the string '0\.5' \(exactly 1/2\)"),
    "numpy-float32": (lambda: to_exact(np.float32(0.25)), FloatInputError, r"^binary float 0\.25 refused"),
    "numpy-bool": (lambda: to_exact(np.bool_(True)), ParseError, r"^a boolean \(True\) is not a number"),
    "numpy-float-matrix": (lambda: to_matrix(np.array([[0.5]])), FloatInputError, r"^matrix\[1,1\]: binary float 0\.5"),
    "huge-int": (lambda: to_exact(2**20000), InputLimitError, r"^an integer of about 6000 digits exceeds the limit of 1200 digits"),
    "huge-fraction": (lambda: to_exact(Fraction(1, 3**5000)), InputLimitError, r"^an integer of about \d+ digits exceeds"),
    "complex": (lambda: to_exact(1j), ParseError, r"^cannot use a complex as an exact number: 1j"),
    "none": (lambda: to_exact(None), ParseError, r"^cannot use a NoneType as an exact number"),
    "sympy-merged-power": (lambda: to_exact((sympy.Symbol("x") ** 1000) ** 1000), InputLimitError, r"^exponent 1000000 in x\*\*1000000"),
    "sympy-degree": (lambda: to_exact((1 + sympy.sqrt(2)) ** 200 * (1 + sympy.sqrt(3)) ** 200), InputLimitError, r"^a power of degree 400 exceeds the limit of 256"),
    "sympy-huge-tree": (lambda: to_exact(sympy.Add(*[a * b for a, b in zip(sympy.symbols("a:3400"), sympy.symbols("b:3400"))])), InputLimitError, r"^an expression of more than 10000 nodes"),
    "parse-merged-power": (lambda: parse_expression("((1+sqrt(2))**100)**3"), InputLimitError, r"^a power of degree 300 built at column 1 exceeds"),
    "parse-unclosed": (lambda: parse_matrix("[[1,0],[0,1]"), ParseError, r"^unclosed '\[' opened at column 1: no matching '\]'"),
    "parse-inner-unclosed": (lambda: parse_matrix("[[1,0],[0,sqrt(1]]"), ParseError, r"^'\]' at column 17 does not match '\(' opened at column 15"),
    "parse-extra-close": (lambda: parse_matrix("[[1]]]"), ParseError, r"^'\]' at column 6 closes no bracket"),
    "parse-unicode-digit": (lambda: parse_expression("0.\u09e7\u09ec"), ParseError, r"^non-ASCII character '\u09e7' \(U\+09E7\) at column 3"),
    "parse-bold-digit": (lambda: parse_expression("\U0001d7cf"), ParseError, r"^non-ASCII character"),
    "parse-fullwidth-e": (lambda: parse_expression("\uff45"), ParseError, r"^non-ASCII character"),
    "parse-escape": (lambda: parse_expression("1\x1b[31m"), ParseError, r"^control character '\\x1b' at column 2"),
}


@pytest.mark.parametrize("name", CALLS, ids=list(CALLS))
def test_public_calls_raise_typed_errors_at_once(name):
    call, error, message = CALLS[name]
    start = time.perf_counter()
    with pytest.raises(error, match=message) as caught:
        call()
    assert time.perf_counter() - start < 1.0
    assert isinstance(caught.value, SymbolicAttnError)
    assert str(caught.value).isprintable() and len(str(caught.value)) < 400


@pytest.mark.parametrize(
    "value, expected",
    [(np.int64(2), 2), (np.int8(-3), -3), (np.uint16(7), 7), (sympy.Integer(4), 4), (Decimal("0.125"), sympy.Rational(1, 8))],
    ids=["int64", "int8", "uint16", "sympy-int", "decimal"],
)
def test_exact_scalars_accepted(value, expected):
    assert to_exact(value) == expected


def test_numpy_sizes_and_grids_are_accepted():
    assert Mask.causal(np.int64(2), offset=np.int32(1)) == Mask.full(2, 2)
    assert Mask.keep(np.array([[1, 0]], dtype=bool)) == Mask.keep([[True, False]])
    assert Mask.padding(np.int64(2), 3, np.int64(1)).allowed[0] == (True, False, False)
