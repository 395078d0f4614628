"""Outside hostile battery: `symbolic-attn check` exercise files (README/--help only)."""

from __future__ import annotations

import os

import pytest

from hostile_outside_helpers import assert_bad_input, assert_bad_or_ok, assert_no_traceback, assert_ok, cli, load_json, no_float_in_exact

HEAD = '''title = "t"
[inputs]
X = [[1, 0], [0, 1], [1, 1]]
[attention]
query = "X"
key = "X"
value = "2*X"
'''
CLAIM = '''
[[claims]]
label = "a"
quantity = "weights"
row = 1
value = "[1, 0, 0]"
'''
GOOD = HEAD + 'mask = "causal"\n' + CLAIM


def claim(**kw):
    body = {"label": '"c"', "quantity": '"weights"', "row": "1", "value": '"[1, 0, 0]"'}
    body.update(kw)
    return "\n[[claims]]\n" + "".join(f"{k} = {v}\n" for k, v in body.items() if v is not None)


def write(tmp_path, text, name="ex.toml"):
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


BAD = [
    ("toml_float_value", HEAD + claim(value="0.33"), ["float"]),
    ("toml_float_inf", HEAD + claim(value="inf"), ["claim"]),
    ("toml_float_nan", HEAD + claim(value="nan"), ["claim"]),
    ("toml_float_1e999", HEAD + claim(value="1e999"), ["claim"]),
    ("toml_int_500000_digits", HEAD + claim(value="1" + "0" * 500000), ["claim"]),
    ("string_500000_digits", HEAD + claim(value='"' + "1" * 500000 + '"'), ["claim"]),
    ("input_500000_digit_int", HEAD.replace("X = [[1, 0]", "X = [[" + "9" * 500000 + ", 0]"), ["X"]),
    ("input_float", HEAD.replace("[[1, 0]", "[[1.5, 0]"), ["X"]),
    ("input_fullwidth", HEAD.replace("[[1, 0]", '[["\uff11", 0]'), ["X"]),
    ("input_arabic_indic", HEAD.replace("[[1, 0]", '[["\u0663", 0]'), ["X"]),
    ("input_power_tower", HEAD.replace("[[1, 0]", '[["9**9**9**9", 0]'), ["X"]),
    ("input_import", HEAD.replace("[[1, 0]", '[["__import__(\'os\')", 0]'), ["X"]),
    ("input_minus_inf", HEAD.replace("[[1, 0]", '[["-inf", 0]'), ["X"]),
    ("input_65_rows", HEAD.replace("X = [[1, 0], [0, 1], [1, 1]]", "X = [" + ",".join(["[1]"] * 65) + "]"), ["X"]),
    ("query_attribute", HEAD.replace('query = "X"', 'query = "X.__class__"') + CLAIM, ["query"]),
    ("query_call", HEAD.replace('query = "X"', 'query = "exec(X)"') + CLAIM, ["query"]),
    ("query_seven_products", HEAD.replace('query = "X"', 'query = "X @ X.T @ X @ X.T @ X @ X.T @ X @ X.T"') + CLAIM, ["query"]),
    ("query_unknown_name", HEAD.replace('query = "X"', 'query = "Y"') + CLAIM, ["Y"]),
    ("query_lookalike", HEAD.replace('query = "X"', 'query = "\u0425"') + CLAIM, ["query"]),
    ("scale_disguised_zero", HEAD + 'scale = "1/(log(8) - 3*log(2))"\n' + CLAIM, ["scale"]),
    ("scale_float", HEAD + 'scale = 0.5\n' + CLAIM, ["scale"]),
    ("mask_unknown", HEAD + 'mask = "sideways"\n' + CLAIM, ["mask"]),
    ("mask_padding_negative", HEAD + 'mask = {padding = -1}\n' + CLAIM, ["mask"]),
    ("mask_keep_ragged", HEAD + 'mask = {keep = [[1, 0], [1]]}\n' + CLAIM, ["mask"]),
    ("mask_offset_float", HEAD + 'mask = {causal = true, offset = 1.5}\n' + CLAIM, ["mask"]),
    ("mask_newline", HEAD + 'mask = "causal\\n"\n' + CLAIM, ["mask"]),
    ("row_zero", HEAD + claim(row="0"), ["row"]),
    ("row_negative", HEAD + claim(row="-1"), ["row"]),
    ("row_too_big", HEAD + claim(row="99"), ["row"]),
    ("row_string", HEAD + claim(row='"1"'), ["row"]),
    ("row_bool", HEAD + claim(row="true"), ["row"]),
    ("row_float", HEAD + claim(row="1.0"), ["row"]),
    ("row_huge", HEAD + claim(row="9223372036854775807"), ["row"]),
    ("quantity_unknown", HEAD + claim(quantity='"secrets"'), ["quantity"]),
    ("quantity_lookalike", HEAD + claim(quantity='"w\u0435ights"'), ["quantity"]),
    ("key_lookalike", HEAD + claim().replace("quantity", "qu\u0430ntity"), ["ex.toml"]),
    ("value_missing", HEAD + claim(value=None), ["value"]),
    ("value_bare_list", HEAD + claim(value='"0.3, 0.7, 0"'), ["claim"]),
    ("tolerance_float", HEAD + claim(tolerance="0.001"), ["tolerance"]),
    ("tolerance_negative", HEAD + claim(tolerance='"-1"'), ["tolerance"]),
    ("sig_figs_zero", HEAD + claim(value='"1"', col="1", sig_figs="0"), ["sig_figs"]),
    ("symbols_code", 'symbols = ["__import__"]\n' + GOOD, ["symbols"]),
    ("symbols_newline", 'symbols = ["x\\ny"]\n' + GOOD, ["symbols"]),
    ("symbols_digit_start", 'symbols = ["1x"]\n' + GOOD, ["symbols"]),
    ("no_attention", 'title = "t"\n' + CLAIM, ["attention"]),
    ("invalid_toml", GOOD + "\n[[claims]\n", ["ex.toml"]),
    ("duplicate_key", GOOD + 'title = "again"\n', ["ex.toml"]),
    ("deep_array_nesting", HEAD + claim(value="[" * 3000 + "1" + "]" * 3000), ["ex.toml"]),
    ("deep_inline_table", HEAD + "z = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n" + CLAIM, ["ex.toml"]),
    ("claims_8193", HEAD + "".join(claim() for _ in range(8193)), ["claim"]),
    ("value_deep_parens", HEAD + claim(value='"' + "(" * 5000 + "1" + ")" * 5000 + '"'), ["claim"]),
    ("value_exponent", HEAD + claim(value='"1e-999"'), ["claim"]),
    ("input_exp_tower", HEAD.replace("[[1, 0]", '[["exp(exp(exp(100)))", 0]'), ["X"]),
]


@pytest.mark.parametrize("value", ["exp(exp(exp(100)))", "1/exp(exp(exp(10)))", "[exp(exp(exp(100))), 0, 0]", "sqrt(exp(exp(exp(100))))"])
def test_hostile_claim_values_judged_fast(tmp_path, value):
    r = cli("check", write(tmp_path, HEAD + claim(value='"' + value + '"')), timeout=20)
    assert_no_traceback(r)
    assert r.rc in (1, 2), r.show()
    if r.rc == 2:
        assert_bad_input(r, "claim")


@pytest.mark.parametrize("text,needles", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_file_refused(tmp_path, text, needles):
    r = cli("check", write(tmp_path, text), timeout=20)
    assert_bad_input(r, *needles)


def test_not_utf8(tmp_path):
    assert_bad_input(cli("check", write(tmp_path, GOOD.encode() + b"# \xff\xfe\n")), "ex.toml")


def test_over_one_megabyte_sparse(tmp_path):
    p = write(tmp_path, GOOD)
    os.truncate(p, 3 * 1024 ** 3)  # 3 GB sparse: must be refused by its size, before reading
    assert_bad_input(cli("check", p), "ex.toml")


def test_directory(tmp_path):
    assert_bad_input(cli("check", tmp_path), str(tmp_path.name))


def test_fifo_does_not_block(tmp_path):
    f = tmp_path / "f.toml"
    os.mkfifo(f)
    assert_bad_input(cli("check", f, timeout=15), "f.toml")


def test_dev_zero(tmp_path):
    assert_bad_input(cli("check", "/dev/zero", timeout=15), "/dev/zero")


def test_missing_file(tmp_path):
    assert_bad_input(cli("check", tmp_path / "nope.toml"), "nope.toml")


def test_nul_in_file_name(tmp_path):
    r = cli("check", "ex\x01\x1b[2J.toml", cwd=tmp_path)
    assert_bad_input(r)
    assert "\x1b" not in r.err


def test_label_newline_cannot_forge_line(tmp_path):
    r = cli("check", write(tmp_path, HEAD + claim(label='"a\\nex.toml: 99 passed, 0 failed"')))
    assert_no_traceback(r)
    assert r.rc in (0, 1)
    assert not any(ln.startswith("ex.toml: 99 passed") for ln in r.out.splitlines()), r.out


def test_label_escape_sequences(tmp_path):
    r = cli("check", write(tmp_path, HEAD + claim(label='"\\u001b[2J\\u0007\\r"')))
    assert_no_traceback(r)
    assert r.rc in (0, 1)
    assert "\x1b" not in r.out and "\x07" not in r.out and "\r" not in r.out


def test_title_bidi_override(tmp_path):
    r = cli("check", write(tmp_path, GOOD.replace('title = "t"', 'title = "\\u202eevil"')))
    assert_no_traceback(r)
    assert "\u202e" not in r.out


def test_bom_file(tmp_path):
    r = cli("check", write(tmp_path, b"\xef\xbb\xbf" + GOOD.encode()))
    assert_bad_or_ok(r)


def test_crlf_file(tmp_path):
    r = cli("check", write(tmp_path, GOOD.replace("\n", "\r\n")))
    assert_ok(r)


def test_symbol_shadowing_e(tmp_path):
    r = cli("check", write(tmp_path, 'symbols = ["e"]\n' + GOOD))
    assert_bad_or_ok(r)


def test_json_no_float(tmp_path):
    r = cli("check", write(tmp_path, HEAD + claim(value='"[0.330, 0.670, 0]"', row="2")), "--format", "json")
    assert_no_traceback(r)
    d = load_json(r)
    for c in d["claims"]:
        no_float_in_exact(c["exact"])


def test_exact_halfway_passes(tmp_path):
    # 1/8 written as 0.13 with two decimals: |1/8 - 13/100| = 1/200, halfway passes (README)
    text = 'title = "h"\n[attention]\nscores = [["0", "ln(7)"]]\nvalue = [[1], [0]]\n' + claim(value='"0.13"', col="1")
    r = cli("check", write(tmp_path, text))
    assert_ok(r)


def test_halfway_minus_epsilon_fails(tmp_path):
    text = 'title = "h"\n[attention]\nscores = [["0", "ln(7)"]]\nvalue = [[1], [0]]\n' + claim(value='"0.14"', col="1")
    r = cli("check", write(tmp_path, text))
    assert_no_traceback(r)
    assert r.rc == 1, r.show()


def test_timeout_tiny(tmp_path):
    r = cli("check", write(tmp_path, GOOD), "--timeout", "0.001")
    assert_bad_or_ok(r)


def test_timeout_negative(tmp_path):
    assert_bad_input(cli("check", write(tmp_path, GOOD), "--timeout", "-3"), "--timeout")


def test_link_to_dev_random(tmp_path):
    (tmp_path / "l.toml").symlink_to("/dev/urandom")
    assert_bad_input(cli("check", tmp_path / "l.toml", timeout=15))
