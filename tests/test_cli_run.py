"""``symbolic-attn run FILE.toml``: every definition and stage, exact with decimals; bad input
is one line on stderr and exit 2."""

import json
import os
import time
from pathlib import Path

import pytest
from symbolic_attn.cli import main
from symbolic_attn.exact.parse import parse_expression
from symbolic_attn.model.certify import decimal_text

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DEFINE = EXAMPLES / "define"
ISSUE = DEFINE / "issue.toml"


def run(capsys, *argv):
    code = main(["run", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path, text, name="f.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_json_has_every_definition_and_stage(capsys):
    code, out, err = run(capsys, ISSUE, "--format", "json")
    assert code == 0 and err == ""
    data = json.loads(out)
    stages = data["stages"]
    for path in ("P", "H", "A", "A.weights", "M", "M.head[1].weights", "M.head[2].output", "M.concat", "N", "N.mean", "F"):
        assert path in stages
    assert stages["P"]["shape"] == [3, 2]
    assert stages["P"]["exact"] == [["0", "1"], ["sin(1)", "cos(1)"], ["sin(2)", "cos(2)"]]
    assert stages["P"]["decimal"][1] == ["0.841470984807896506652502321630", "0.540302305868139717400936607443"]
    assert stages["P"]["latex"].startswith(r"\begin{bmatrix}0 & 1")
    assert data["definitions"]["A"] == "attention(H, H @ WK, H @ WV, mask = 'causal')"
    assert set(stages["A.weights"]) == {"shape", "exact", "latex", "decimal"}


def test_json_exact_strings_parse_back(capsys):
    code, out, _ = run(capsys, DEFINE / "encoder.toml", "--format", "json")
    assert code == 0
    stages = json.loads(out)["stages"]
    checked = 0
    for path, stage in stages.items():
        for i, (exact_row, decimal_row) in enumerate(zip(stage["exact"], stage["decimal"]), start=1):
            for j, (text, decimal) in enumerate(zip(exact_row, decimal_row), start=1):
                if text is None:  # over the print budget: not printed, and said so
                    assert stage["not_printed"][f"{i},{j}"] > 0 and stage["latex"] is None
                    continue
                # the parsed text is the same number: its certified 30 digits agree
                assert decimal_text(parse_expression(text), 30, significant=True) == decimal, (path, text)
                checked += 1
    assert checked > 100


def test_exact_strings_print_e_as_e(tmp_path, capsys):
    path = write(tmp_path, '[inputs]\nX = [["e", "1"]]\n[define]\nY = "X + X"\n')
    code, out, _ = run(capsys, path, "--format", "json")
    assert code == 0
    assert json.loads(out)["stages"]["Y"]["exact"] == [["2*e", "2"]]


def test_text_shows_exact_beside_decimals(capsys):
    code, out, err = run(capsys, DEFINE / "layer_norm.toml", "--digits", "4")
    assert code == 0 and err == ""
    assert "L = layer_norm(z) (1x2)" in out
    assert "  Leps[1,1] = -10*sqrt(101)/101  ≈ -0.9950" in out
    assert "L.variance[1,1] = 1" in out
    assert "L.output" not in out  # the same matrix as L, not shown twice


def test_latex(capsys):
    code, out, _ = run(capsys, DEFINE / "positional.toml", "--format", "latex")
    assert code == 0
    assert out.startswith("\\begin{align*}\n") and out.rstrip().endswith("\\end{align*}")
    # labels are mathematical (symbolic_attn.render.labels): names upright, stages as symbols
    assert r"\mathrm{P2} &= \begin{bmatrix}0 & 1 \\ \sin{\left(1 \right)} & \cos{\left(1 \right)}" in out
    assert r"\theta &=" in out and r"\text{P2" not in out


def test_legacy_attention_table_is_the_definition_named_attention(capsys):
    code, out, _ = run(capsys, EXAMPLES / "000_causal.toml", "--format", "json")
    assert code == 0
    stages = json.loads(out)["stages"]
    assert "attention.weights" in stages and "attention" in stages


# examples/steps/ holds derivations, a key of derivation questions and their expectations:
# nothing there is a computation (tests/test_examples_steps*.py run them).
@pytest.mark.parametrize("example", sorted(str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*.toml")
                                            if p.name != "expected.toml" and "steps" not in p.relative_to(EXAMPLES).parts))
def test_every_example_runs(example, capsys):
    start = time.perf_counter()
    code, out, err = run(capsys, EXAMPLES / example)
    if example == "000_transfer_all_blocked.toml":  # an exercise whose mask leaves a row empty
        assert code == 2 and "row 1 allows no key" in err
        return
    assert (code, err) == (0, ""), err
    assert time.perf_counter() - start < 30


BAD = [
    ("float", "[inputs]\nX = 0.5\n[define]\nY = 'X'\n", r"inputs.X: TOML float 0.5 loses its written precision"),
    ("unknown_function", "[define]\nY = \"system('ls')\"\n", r"definition 'Y': unknown function 'system'"),
    ("before", "[define]\nA = 'B'\nB = 'I2'\n", r"definition 'A': 'B' is used before it is defined"),
    ("self", "[define]\nA = 'A @ I2'\n", r"definition 'A': 'A' refers to itself"),
    ("bomb", "[define]\nA = 'layer_norm(I2 * 9**9**9**9)'\n", r"definition 'A': "),
    ("zero_variance", "[inputs]\nX = [[1, 1]]\n[define]\nN = 'layer_norm(X)'\n",
     r"definition 'N': layer_norm row 1: variance is exactly 0"),
    ("not_toml", "[define\n", r"not valid TOML"),
    ("nothing", "title = 'x'\n", r"nothing to compute"),
    ("define_not_string", "[define]\nA = 3\n", r"define.A: expected a string"),
    ("binary", "\x00", r"binary data"),
    ("syntax_warning_input", '[inputs]\nX = "1X"\n[define]\nA = "X"\n', r"inputs.X: malformed expression"),
    ("syntax_warning_define", '[define]\nA = "1X + I2"\n', r"definition 'A': malformed expression"),
]


@pytest.mark.parametrize("name,text,message", BAD, ids=[b[0] for b in BAD])
def test_bad_files_exit_2_with_one_line(tmp_path, capsys, name, text, message):
    start = time.perf_counter()
    code, out, err = run(capsys, write(tmp_path, text))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("symbolic-attn: error: ")
    assert __import__("re").search(message, err), err
    assert time.perf_counter() - start < 3


def test_ten_thousand_definitions_exit_2_fast(tmp_path, capsys):
    text = "[define]\n" + "".join(f"d{i} = 'I2'\n" for i in range(10_000))
    start = time.perf_counter()
    code, _, err = run(capsys, write(tmp_path, text))
    assert code == 2 and "definition 'd64': 10000 definitions exceed the limit of 64" in err
    assert time.perf_counter() - start < 3


def test_not_a_regular_file(tmp_path, capsys):
    code, _, err = run(capsys, tmp_path)
    assert code == 2 and "is a directory, not a regular computation file" in err
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, _, err = run(capsys, fifo)
    assert code == 2 and "is a FIFO (named pipe), not a regular computation file" in err
    code, _, err = run(capsys, tmp_path / "missing.toml")
    assert code == 2 and "cannot read the file" in err


def test_file_too_large(tmp_path, capsys):
    path = tmp_path / "big.toml"
    path.write_bytes(b"#" * 1_000_001)
    code, _, err = run(capsys, path)
    assert code == 2 and "larger than the limit of 1000000 bytes" in err


def test_digits_bounds(capsys):
    code, _, err = run(capsys, ISSUE, "--digits", "101")
    assert code == 2 and "--digits must be between 0 and 100" in err


MASKS = [
    ("none", '"none"', [[1, 1, 1], [1, 1, 1], [1, 1, 1]]),
    ("causal", '"causal"', [[1, 0, 0], [1, 1, 0], [1, 1, 1]]),
    ("causal_offset", "{causal = true, offset = 1}", [[1, 1, 0], [1, 1, 1], [1, 1, 1]]),
    ("padding", "{padding = 2}", [[1, 1, 0], [1, 1, 0], [1, 1, 0]]),
    ("keep", "{keep = [[1, 0, 1], [0, 1, 0], [1, 1, 1]]}", [[1, 0, 1], [0, 1, 0], [1, 1, 1]]),
    ("block", "{block = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]}", [[0, 1, 0], [1, 0, 1], [0, 0, 1]]),
]


@pytest.mark.parametrize("name,mask,allowed", MASKS, ids=[m[0] for m in MASKS])
def test_every_mask_form_of_the_exercise_format(tmp_path, capsys, name, mask, allowed):
    """run reads [attention] with the exercise reader: zero scores give uniform weights over
    exactly the allowed keys (a wrong mask reading would move a weight)."""
    text = f'[attention]\nscores = [[0, 0, 0], [0, 0, 0], [0, 0, 0]]\nvalue = [[1], [2], [3]]\nmask = {mask}\n'
    code, out, err = run(capsys, write(tmp_path, text), "--format", "json")
    assert code == 0, err
    weights = json.loads(out)["stages"]["attention.weights"]["exact"]
    expected = [[("1" if sum(row) == 1 else f"1/{sum(row)}") if a else "0" for a in row] for row in allowed]
    assert weights == expected


def test_run_and_check_read_the_same_file(tmp_path, capsys):
    """One reader: a mask whose row is empty is refused by both, with the same message."""
    path = write(tmp_path, '[attention]\nscores = [[0, 0]]\nvalue = [[1], [2]]\nmask = {keep = [[0, 0]]}\n')
    code, _, run_err = run(capsys, path)
    assert code == 2
    assert main(["check", str(path)]) == 2
    check_err = capsys.readouterr().err
    assert run_err == check_err and "attention.mask.keep: row 1 allows no key" in run_err
