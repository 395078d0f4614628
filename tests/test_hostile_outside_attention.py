"""Outside hostile battery: `symbolic-attn attention` (written from README/--help only)."""

from __future__ import annotations

import pytest

from hostile_outside_helpers import assert_bad_input, assert_bad_or_ok, assert_ok, cli, load_json, no_float_in_exact

ONE = ["--k", "[[1]]", "--v", "[[1]]"]


def q(value, *extra):
    return ["attention", "--q", value, *ONE, *extra]


def s(value, v="[[1],[2]]", *extra):
    return ["attention", "--scores", value, "--v", v, *extra]


BAD = [
    # hostile numbers
    ("fullwidth_digit", q("[[\uff11]]"), ["--q"]),
    ("arabic_indic_digit", q("[[\u0661]]"), ["--q"]),
    ("devanagari_digit", q("[[\u0967]]"), ["--q"]),
    ("superscript_two", q("[[2\u00b2]]"), ["--q"]),
    # "[[-inf, 0]]" is read now: -inf blocks its position (tests/test_issue20_minus_infinity.py)
    ("minus_minus_inf", s("[[--inf, 0]]"), ["--scores"]),
    ("minus_inf_arithmetic", s("[[-inf + 1, 0]]"), ["--scores"]),
    ("inf", s("[[inf, 0]]"), ["--scores"]),
    ("nan", s("[[nan, 0]]"), ["--scores"]),
    ("sympy_oo", s("[[oo, 0]]"), ["--scores"]),
    ("sympy_minus_oo", s("[[-oo, 0]]"), ["--scores"]),
    ("sympy_zoo", s("[[zoo, 0]]"), ["--scores"]),
    ("python_float_inf_text", s("[[float('inf'), 0]]"), ["--scores"]),
    ("decimal_exponent_huge", q("[[1e-999]]"), ["--q"]),
    ("digits_100000", q("[[" + "7" * 100000 + "]]"), ["--q"]),
    ("power_tower", q("[[9**9**9**9]]"), ["--q", "exponent"]),
    ("result_bits_product", q("[[2**999*2**999*2**999*2**999*2**999]]"), ["--q"]),
    ("degree_7000", s("[[((1+sqrt(2))**1000)**7]]", "[[1]]"), ["--scores"]),
    ("exp_tower_argument", s("[[exp(exp(exp(10))), 0]]"), ["--scores"]),
    # code, not data
    ("dunder_import", q("[[__import__('os')]]"), ["--q", "__import__"]),
    ("lambda", q("[[(lambda: 1)()]]"), ["--q"]),
    ("attribute_class", q("[[(1).__class__]]"), ["--q"]),
    ("subscript", q("[[[1][0]]]"), ["--q"]),
    ("walrus", q("[[(x := 1)]]"), ["--q"]),
    ("string_literal", q("[['1']]"), ["--q"]),
    ("true_name", q("[[True]]"), ["--q"]),
    ("none_name", q("[[None]]"), ["--q"]),
    ("complex_literal", q("[[1j]]"), ["--q"]),
    ("unknown_function_eval", q("[[eval(1)]]"), ["--q", "eval"]),
    ("lookalike_cyrillic_e", q("[[\u0435xp(1)]]"), ["--q"]),
    ("fullwidth_paren", q("[[exp\uff081\uff09]]"), ["--q"]),
    # zero divisors, disguised
    ("div_zero_literal", q("[[1/0]]"), ["--q"]),
    ("zero_pow_neg", q("[[0**-1]]"), ["--q"]),
    ("log_zero", s("[[log(0), 0]]"), ["--scores"]),
    ("scale_div_zero", ["attention", "--q", "[[1]]", *ONE, "--scale", "1/0"], ["--scale"]),
    ("scale_disguised_zero_log", ["attention", "--q", "[[1]]", *ONE, "--scale", "1/(log(8)-3*log(2))"], ["--scale"]),
    ("scale_disguised_zero_trig", ["attention", "--q", "[[1]]", *ONE, "--scale", "1/(sin(pi/7)**2+cos(pi/7)**2-1)"], ["--scale"]),
    ("entry_disguised_zero_sqrt", q("[[1/(sqrt(2)*sqrt(3)-sqrt(6))]]"), ["--q"]),
    ("scale_minus_inf", ["attention", "--q", "[[1]]", *ONE, "--scale", "-inf"], ["--scale"]),
    ("scale_nan", ["attention", "--q", "[[1]]", *ONE, "--scale", "nan"], ["--scale"]),
    # structure
    ("ragged", q("[[1,2],[3]]"), ["--q"]),
    ("empty_inner", q("[[]]"), ["--q"]),
    ("empty_outer", q("[]"), ["--q"]),
    ("unclosed", q("[[1,0],[0,1]"), ["--q", "unclosed"]),
    ("deep_brackets", q("[" * 60 + "1" + "]" * 60), ["--q"]),
    ("deep_parens", q("[[" + "(" * 5000 + "1" + ")" * 5000 + "]]"), ["--q"]),
    ("unary_minus_chain", q("[[" + "-" * 100000 + "1]]"), ["--q"]),
    ("long_sum_nodes", q("[[" + "+".join(["sqrt(2)"] * 15000) + "]]"), ["--q"]),
    ("three_d", q("[[[1]]]"), ["--q"]),
    ("seventeen_queries", ["attention", "--scores", "[" + ",".join(["[0]"] * 17) + "]", "--v", "[[1]]"], ["17"]),
    ("shape_mismatch_dk", ["attention", "--q", "[[1,0]]", "--k", "[[1]]", "--v", "[[1]]"], ["1x2", "1x1"]),
    ("shape_mismatch_v", ["attention", "--q", "[[1]]", "--k", "[[1],[2]]", "--v", "[[1]]"], ["2x1", "1x1"]),
    ("double_point", q("[[1.5.2]]"), ["--q"]),
    # control / invisible characters in values: one line, escaped
    ("newline_in_value", q("[[1]]\nsymbolic-attn: all good"), ["--q", "\\n"]),
    ("esc_in_value", q("[[\x1b[31m1]]"), ["--q", "\\x1b"]),
    ("nbsp_in_value", q("[[\u00a01]]"), ["--q"]),
    ("zero_width_space", q("[[1\u200b]]"), ["--q"]),
    ("bidi_override", q("[[\u202e1]]"), ["--q"]),
    # masks
    ("mask_wrong_shape", ["attention", "--q", "[[1]]", *ONE, "--mask", "keep:[[1,0]]"], ["--mask"]),
    ("mask_value_two", ["attention", "--q", "[[1]]", *ONE, "--mask", "keep:[[2]]"], ["--mask"]),
    ("mask_value_half", ["attention", "--q", "[[1]]", *ONE, "--mask", "keep:[[0.5]]"], ["--mask"]),
    ("mask_padding_negative", ["attention", "--q", "[[1]]", *ONE, "--mask", "padding:-1"], ["--mask"]),
    ("mask_padding_zero_empty_row", ["attention", "--q", "[[1]]", *ONE, "--mask", "padding:0"], ["row"]),
    ("mask_block_all", ["attention", "--q", "[[1]]", *ONE, "--mask", "block:[[1]]"], ["row"]),
    ("mask_causal_newline", ["attention", "--q", "[[1]]", *ONE, "--mask", "causal\nx"], ["--mask"]),
    ("mask_unknown_kind", ["attention", "--q", "[[1]]", *ONE, "--mask", "evil:[[1]]"], ["--mask"]),
    ("mask_keep_code", ["attention", "--q", "[[1]]", *ONE, "--mask", "keep:__import__('os')"], ["--mask"]),
    # options
    ("digits_101", ["attention", "--q", "[[1]]", *ONE, "--digits", "101"], ["--digits"]),
    ("digits_negative", ["attention", "--q", "[[1]]", *ONE, "--digits", "-1"], ["--digits"]),
    ("digits_fraction", ["attention", "--q", "[[1]]", *ONE, "--digits", "3.5"], ["--digits"]),
    ("digits_huge", ["attention", "--q", "[[1]]", *ONE, "--digits", "9" * 5000], ["--digits"]),
    ("timeout_negative", ["attention", "--q", "[[1]]", *ONE, "--timeout", "-1"], ["--timeout"]),
    ("timeout_nan", ["attention", "--q", "[[1]]", *ONE, "--timeout", "nan"], ["--timeout"]),
    ("format_unknown", ["attention", "--q", "[[1]]", *ONE, "--format", "xml"], ["--format"]),
    ("empty_row_unknown", ["attention", "--q", "[[1]]", *ONE, "--empty-row", "explode"], ["--empty-row"]),
    ("unknown_option", ["attention", "--q", "[[1]]", *ONE, "--evil", "1"], ["--evil"]),
    ("missing_v", ["attention", "--q", "[[1]]", "--k", "[[1]]"], ["--v"]),
    ("missing_k", ["attention", "--q", "[[1]]", "--v", "[[1]]"], ["--k"]),
]


@pytest.mark.parametrize("args,needles", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_input_refused(args, needles):
    r = cli(*args, timeout=20)
    assert_bad_input(r, *needles)
    assert "\x1b" not in r.err and "\r" not in r.err, "raw control character reached stderr"


def _json_ok(check):
    def inner(r):
        data = load_json(r)
        for stage in ("scores", "scaled", "weights", "output"):
            if stage in data:
                no_float_in_exact(data[stage]["exact"])
        assert check(data) is not False, "accepted but wrong: " + r.show()
    return inner


EITHER = [
    # accepted or refused, but never a traceback, never slow, never a float
    ("one_e_999_scores", s("[[1e999, 0]]", "[[1],[2]]", "--format", "json"), lambda d: None),
    ("underscore_digits", q("[[1_000]]", "--format", "json"), lambda d: d["scores"]["exact"] == [["1000"]]),
    ("cr_in_value", q("[[1\r]]", "--format", "json"), lambda d: d["scores"]["exact"] == [["1"]]),
    ("hex_literal", q("[[0x10]]", "--format", "json"), lambda d: None),
    ("sqrt_minus_one", s("[[sqrt(-1), 0]]", "[[1],[2]]", "--format", "json"), lambda d: None),
    ("log_minus_one", s("[[log(-1), 0]]", "[[1],[2]]", "--format", "json"), lambda d: None),
    ("free_symbol", q("[[x]]", "--format", "json"), lambda d: None),
    ("bare_scalar", q("5", "--format", "json"), lambda d: None),
    ("padding_beyond_m", ["attention", "--q", "[[1]]", *ONE, "--mask", "padding:99", "--format", "json"], lambda d: None),
    ("timeout_inf", ["attention", "--q", "[[1]]", *ONE, "--timeout", "inf"], None),
    ("timeout_1e999", ["attention", "--q", "[[1]]", *ONE, "--timeout", "1e999"], None),
    ("scores_and_q", ["attention", "--scores", "[[0]]", "--q", "[[1]]", *ONE], None),
    ("tiny_timeout_heavy", ["--timeout", "0.2", "attention", "--scores",
                            "[" + ",".join(["[" + ",".join(f"exp(sqrt({i}+{j}))" for j in range(16)) + "]" for i in range(16)]) + "]",
                            "--v", "[" + ",".join(["[1]"] * 16) + "]", "--digits", "100"], None),
]


@pytest.mark.parametrize("args,check", [c[1:] for c in EITHER], ids=[c[0] for c in EITHER])
def test_refused_or_right(args, check):
    r = cli(*args, timeout=20)
    assert_bad_or_ok(r, None if check is None else _json_ok(check))


def test_decimal_is_exact_in_json():
    r = cli("attention", "--q", "[[0.43]]", *ONE, "--format", "json")
    assert_ok(r)
    d = load_json(r)
    assert d["scores"]["exact"] == [["43/100"]]


def test_scale_decimal_exact():
    r = cli("attention", "--q", "[[1]]", *ONE, "--scale", "0.5", "--format", "json")
    assert_ok(r)
    assert load_json(r)["scale"] == "1/2"


def test_blocked_weight_exactly_zero_json():
    r = cli("attention", "--scores", "[[0, 1]]", "--v", "[[1],[2]]", "--mask", "keep:[[1,0]]", "--format", "json")
    assert_ok(r)
    d = load_json(r)
    assert d["weights"]["exact"] == [["1", "0"]]


def test_exp_1000_ok():
    r = cli("attention", "--scores", "[[1000, 0]]", "--v", "[[1],[2]]", "--format", "json")
    assert_ok(r)
    d = load_json(r)
    no_float_in_exact(d["weights"]["exact"])
    assert d["weights"]["decimal"][0][0].startswith("1.0000")


def test_exact_text_round_trips():
    r = cli("attention", "--scores", "[[0, sqrt(2)/3]]", "--v", "[[1],[0]]", "--format", "json")
    assert_ok(r)
    w = load_json(r)["weights"]["exact"][0]
    r2 = cli("attention", "--scores", "[[" + w[0] + ", " + w[1] + "]]", "--v", "[[1],[0]]", "--format", "json")
    assert_ok(r2)


def test_empty_row_nan_policy_no_traceback():
    r = cli("attention", "--q", "[[1]]", *ONE, "--mask", "block:[[1]]", "--empty-row", "nan", "--format", "json")
    assert_ok(r)


def test_digits_100_latex():
    r = cli("attention", "--q", "[[1,0],[0,1]]", "--k", "[[1,0],[0,1]]", "--v", "[[1],[2]]", "--digits", "100", "--format", "latex")
    assert_ok(r)
