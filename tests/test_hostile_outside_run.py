"""Outside hostile battery: `symbolic-attn run` computation files with [define]."""

from __future__ import annotations

import pytest

from hostile_outside_helpers import assert_bad_input, assert_bad_or_ok, assert_ok, cli, load_json, no_float_in_exact

INPUTS = '''[inputs]
X = [[1, 0], [0, 1], [1, 1]]
C = [[1, 1], [2, 2]]
WK = [[1, 1], [0, 1]]
WV = [[1, 0], [0, 2]]
'''


def file_with(*defs, inputs=INPUTS):
    body = "".join(f"{k} = {v}\n" for k, v in defs)
    return 'title = "r"\n' + inputs + "[define]\n" + body


def d(expr, name="A"):
    return (name, '"' + expr.replace("\\", "\\\\").replace('"', '\\"') + '"')


BAD = [
    ("unknown_function_eval", file_with(d("eval(X)")), ["eval"]),
    ("dunder_import", file_with(d("__import__('os').system('touch /tmp/x_pwned')")), ["__import__"]),
    ("exec_call", file_with(d("exec('1')")), ["exec"]),
    ("getattr_builtin", file_with(d("getattr(X, 'T')")), ["getattr"]),
    ("lambda", file_with(d("(lambda: X)()")), ["A"]),
    ("attribute_dunder", file_with(d("X.__class__")), ["__class__"]),
    ("stage_attribute_dunder", file_with(d("attention(X, X, X)"), d("A.__dict__", "B")), ["__dict__"]),
    ("unknown_stage", file_with(d("attention(X, X, X)"), d("A.secret", "B")), ["secret"]),
    ("cyrillic_lookalike_function", file_with(d("\u0430ttention(X, X, X)")), ["A"]),
    ("greek_lookalike_input", file_with(d("attention(\u03a7, X, X)")), ["A"]),
    ("fullwidth_parens", file_with(d("attention\uff08X, X, X\uff09")), ["A"]),
    ("fullwidth_digit_arg", file_with(d("sinusoidal(\uff13, 2)")), ["A"]),
    ("unknown_keyword", file_with(d("attention(X, X, X, foo = 1)")), ["foo"]),
    ("duplicate_keyword", file_with(d("layer_norm(X, eps = 1, eps = 2)")), ["eps"]),
    ("missing_argument", file_with(d("attention(X)")), ["attention"]),
    ("too_many_positional", file_with(d("sinusoidal(3, 2, 4, 5, 6, 7, 8)")), ["sinusoidal"]),
    ("forward_reference", file_with(d("B + X"), d("X", "B")), ["B"]),
    ("self_reference", file_with(d("A")), ["A"]),
    ("unknown_name", file_with(d("attention(Y, X, X)")), ["Y"]),
    ("string_as_matrix", file_with(d("attention('X', X, X)")), ["A"]),
    ("huge_power", file_with(d("X * 10**10**10")), ["A"]),
    ("power_tower", file_with(d("X * 9**9**9**9")), ["A"]),
    ("huge_literal", file_with(d("X * " + "9" * 5000)), ["A"]),
    ("deep_parens", file_with(d("(" * 3000 + "X" + ")" * 3000)), ["A"]),
    ("long_sum", file_with(d("+".join(["X"] * 30000))), ["A"]),
    ("unary_chain", file_with(d("-" * 50000 + "X")), ["A"]),
    ("disguised_zero_divisor", file_with(d("X / (log(8) - 3*log(2))")), ["A"]),
    ("disguised_zero_trig", file_with(d("X / (sin(pi/5)**2 + cos(pi/5)**2 - 1)")), ["A"]),
    ("div_zero", file_with(d("X / 0")), ["A"]),
    ("scale_disguised_zero_reciprocal", file_with(d("attention(X, X, X, scale = 1/(sqrt(2)*sqrt(3) - sqrt(6)))")), ["A"]),
    ("sinusoidal_huge_n", file_with(d("sinusoidal(10**6, 2)")), ["A"]),
    ("sinusoidal_zero_n", file_with(d("sinusoidal(0, 2)")), ["A"]),
    ("sinusoidal_negative_n", file_with(d("sinusoidal(-1, 2)")), ["A"]),
    ("sinusoidal_fraction_n", file_with(d("sinusoidal(3.5, 2)")), ["A"]),
    ("sinusoidal_base_zero", file_with(d("sinusoidal(3, 2, base = 0)")), ["A"]),
    ("ones_huge", file_with(d("ones(10**9, 10**9)")), ["A"]),
    ("ones_over_entries", file_with(d("ones(1024, 1024)")), ["A"]),
    ("ones_negative", file_with(d("ones(-1, 2)")), ["A"]),
    ("rope_odd_width", file_with(d("rope(ones(3, 3))")), ["A"]),
    ("alibi_zero_heads", file_with(d("alibi(3, heads = 0)")), ["A"]),
    ("alibi_many_heads", file_with(d("alibi(3, heads = 10**6)")), ["A"]),
    ("layer_norm_constant_row", file_with(d("layer_norm(C)")), ["A"]),
    ("layer_norm_negative_eps", file_with(d("layer_norm(X, eps = -1)")), ["eps"]),
    ("layer_norm_disguised_negative_eps", file_with(d("layer_norm(C, eps = log(2) - log(3))")), ["eps"]),
    ("layer_norm_bad_variance", file_with(d("layer_norm(X, variance = 'popular')")), ["variance"]),
    ("gelu_bad_approx", file_with(d("gelu(X, approximate = 'maybe')")), ["approximate"]),
    ("feed_forward_bad_activation", file_with(d("feed_forward(X, WK, activation = 'os.system')")), ["activation"]),
    ("feed_forward_shape", file_with(d("feed_forward(X, C @ C @ ones(2, 5), W2 = ones(3, 1))")), ["A"]),
    ("multihead_no_heads", file_with(d("multihead(X, heads = [])")), ["heads"]),
    ("multihead_bad_head", file_with(d("multihead(X, heads = [[X]])")), ["heads"]),
    ("encoder_bad_norm", file_with(d("encoder_block(X, heads = [[WK, WK, WV]], WO = WV, W1 = WK, W2 = WK, norm = 'sideways')")), ["norm"]),
    ("attention_bad_mask", file_with(d("attention(X, X, X, mask = 'causal; rm -rf')")), ["mask"]),
    ("attention_bad_empty_row", file_with(d("attention(X, X, X, on_empty_row = 'explode')")), ["on_empty_row"]),
    ("shape_mismatch", file_with(d("attention(X, WK @ ones(2, 3), X)")), ["A"]),
    ("matmul_shape", file_with(d("X @ X")), ["A"]),
    ("define_float", file_with(("A", "1.5")), ["A"]),
    ("define_name_dotted", file_with(('"A.b"', '"X"')), ["A.b"]),
    ("define_name_control", file_with(('"A\\u001b[2J"', '"X"')), ["\\x1b"]),
    ("define_name_newline", file_with(('"A\\nB"', '"X"')), ["\\n"]),
    ("define_redefines_input", file_with(d("X + X", "X")), ["X"]),
    ("input_float", file_with(d("X"), inputs="[inputs]\nX = [[0.5]]\n"), ["X"]),
    ("input_fullwidth", file_with(d("X"), inputs='[inputs]\nX = [["\uff15"]]\n'), ["X"]),
    ("no_define", 'title = "r"\n' + INPUTS, ["define"]),
    ("deep_array", file_with(d("X"), inputs="[inputs]\nX = " + "[" * 3000 + "1" + "]" * 3000 + "\n"), ["r.toml"]),
]


def _write(tmp_path, text):
    p = tmp_path / "r.toml"
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize("text,needles", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_definition_refused(tmp_path, text, needles):
    r = cli("run", _write(tmp_path, text), timeout=20, cwd=tmp_path)
    assert_bad_input(r, *needles)
    assert not (tmp_path / "x_pwned").exists()


def _ok_json(tmp_path, *defs, **kw):
    r = cli("run", _write(tmp_path, file_with(*defs, **kw)), "--format", "json", cwd=tmp_path)
    assert_ok(r)
    data = load_json(r)
    for st in data["stages"].values():
        no_float_in_exact(st["exact"])
    return data


def test_import_payload_never_runs(tmp_path):
    cli("run", _write(tmp_path, file_with(d("__import__('os').system('touch " + str(tmp_path / "pwned") + "')"))))
    assert not (tmp_path / "pwned").exists()


def test_decimal_exact(tmp_path):
    data = _ok_json(tmp_path, d("X * 0.1"))
    assert data["stages"]["A"]["exact"][0][0] == "1/10"


def test_sinusoidal_exact(tmp_path):
    data = _ok_json(tmp_path, d("sinusoidal(2, 2)"))
    assert data["stages"]["A"]["exact"][1] == ["sin(1)", "cos(1)"]


def test_scale_zero_is_uniform(tmp_path):
    data = _ok_json(tmp_path, d("attention(X, X, X, scale = sin(pi))"))
    w = [k for k in data["stages"] if k.endswith("weights")][0]
    assert data["stages"][w]["exact"][0] == ["1/3", "1/3", "1/3"]


@pytest.mark.parametrize("expr", [
    "sinusoidal(3, 3)", "sinusoidal(3, 2, base = -1)", "sinusoidal(3, 2, base = 1)",
    "X[0]", "layer_norm(X, eps = 10**1000)", "attention(X, X, X, mask = 'causal', on_empty_row = 'zeros')",
    "relu(-X)", "attention(X, X, X) + attention", "gelu(X)", "alibi(3, heads = 3)", "rope(X @ WK)", "exp(X)",
])
def test_refused_or_right(tmp_path, expr):
    r = cli("run", _write(tmp_path, file_with(d(expr))), "--format", "json", cwd=tmp_path)
    assert_bad_or_ok(r)
    if r.rc == 0:
        for st in load_json(r)["stages"].values():
            no_float_in_exact(st["exact"])


def test_digits_over_limit(tmp_path):
    assert_bad_input(cli("run", _write(tmp_path, file_with(d("X"))), "--digits", "100000"), "--digits")


def test_timeout_tiny(tmp_path):
    r = cli("run", _write(tmp_path, file_with(d("encoder_block(X, heads = [[WK, WK, WV]], WO = WV, W1 = WK, W2 = WK)"))),
            "--timeout", "0.05")
    assert_bad_or_ok(r)


def test_many_definitions(tmp_path):
    defs = [d("X", "A0")] + [d(f"A{i-1} + X", f"A{i}") for i in range(1, 3000)]
    r = cli("run", _write(tmp_path, file_with(*defs)), "--format", "json")
    assert_bad_or_ok(r)
