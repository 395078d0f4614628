"""Issue 21, item 5: terminal output that fits, shows the claimed value beside the exact one,
says the diagnosis in sentences, marks blocked entries and prints closed forms only where
they say something (``attention --exact``, ``--stage``, ``--decimals-only``)."""

import json
import re
from pathlib import Path

import pytest

from symbolic_attn.cli import main
from symbolic_attn.grading.exercise import load_exercise
from symbolic_attn.grading.feedback import sentence
from symbolic_attn.model.attention import AttentionResult

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
BY_HAND = ["--q", "[[1,0],[0,1],[1,1]]", "--k", "[[1,0],[0,1],[1,1]]", "--v", "[[2,0],[0,2],[2,2]]"]
WRONG_AT = """
[inputs]
X = [[1, 0], [0, 1], [1, 1]]
[attention]
query = "X"
key = "X"
value = "2*X"
[[claims]]
label = "a whole matrix of weights, two of them wrong, with a label long enough to be cut short"
quantity = "weights"
value = "[[0.401, 0.111, 0.401], [0.198, 0.401, 0.401], [0.248, 0.248, 0.999]]"
[[claims]]
label = "z"
quantity = "output"
row = 1
col = 1
value = "9"
"""


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- check ---------------------------------------------------------------------------------


def _exercises(tmp_path):
    """Relative names (a long absolute path is the one thing the table does not cut)."""
    (tmp_path / "wrong.toml").write_text(WRONG_AT)
    for name in ("readme.toml", "002_zeroing.toml", "000_layer_norm.toml"):
        (tmp_path / name).write_bytes((EXAMPLES / name).read_bytes())
    return [Path("readme.toml"), Path("002_zeroing.toml"), Path("000_layer_norm.toml"), Path("wrong.toml")]


@pytest.mark.parametrize("columns", [80, 60, 120], ids=["80", "60", "120"])
def test_check_text_fits_the_terminal(tmp_path, capsys, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.chdir(tmp_path)
    for path in _exercises(tmp_path):
        code, out, err = run(capsys, "check", str(path))
        assert code in (0, 1), err
        too_wide = [line for line in out.splitlines() if len(line) > columns]
        assert not too_wide, (path.name, too_wide)


def test_check_without_a_terminal_is_80_columns(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.chdir(EXAMPLES)
    code, out, _ = run(capsys, "check", "readme.toml")
    assert code == 1 and max(len(line) for line in out.splitlines()) <= 80


def test_check_shows_the_claimed_value_in_a_column_when_wide(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    _, out, _ = run(capsys, "check", str(EXAMPLES / "readme.toml"))
    header = out.splitlines()[1]
    assert header.split() == ["label", "verdict", "claimed", "exact", "decimal", "rule"]
    row = next(line for line in out.splitlines() if line.startswith("a_3 "))
    assert "[0.212, 0.212, 0.576]" in row and "[0.24826, 0.24826, 0.50349]" in row and "FAIL" in row


def test_check_narrow_puts_the_values_below_the_row(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    _, out, _ = run(capsys, "check", str(EXAMPLES / "readme.toml"))
    lines = out.splitlines()
    assert lines[1].split() == ["label", "verdict", "rule"]
    row = next(k for k, line in enumerate(lines) if line.startswith("a_3 "))
    assert lines[row + 1] == "    claimed  [0.212, 0.212, 0.576]"
    assert lines[row + 2].startswith("    exact    [exp(sqrt(2)/2)/")
    assert "    decimal  [0.24826, 0.24826, 0.50349]" in lines[row + 2:row + 6]


def test_check_diagnosis_is_the_catalogue_sentence(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    exercise = load_exercise(EXAMPLES / "readme.toml")
    expected = sentence("unscaled", exercise)
    assert "√d_k = √2" in expected
    _, out, _ = run(capsys, "check", str(EXAMPLES / "readme.toml"))
    assert not any(line.rstrip().endswith(" unscaled") for line in out.splitlines())  # no bare id
    flowed = " ".join(line.strip() for line in out.splitlines() if line.startswith("    "))
    assert expected in flowed


def test_check_json_adds_diagnosis_sentences(capsys):
    code, out, _ = run(capsys, "check", str(EXAMPLES / "readme.toml"), "--format", "json")
    exercise = load_exercise(EXAMPLES / "readme.toml")
    for claim in json.loads(out)["claims"]:
        assert claim["diagnosis_sentences"] == [sentence(mistake, exercise) for mistake in claim["diagnosis"]]
    (wrong,) = [c for c in json.loads(out)["claims"] if c["verdict"] == "fail"]
    assert wrong["diagnosis"] == ["unscaled"] and wrong["diagnosis_sentences"][0].startswith("These values come from")


def test_check_says_which_entries_and_that_nothing_explains_a_value(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)
    path = _exercises(tmp_path)[-1]
    _, out, _ = run(capsys, "check", str(path))
    assert "    wrong at [1,2] [3,3]" in out
    assert "    label    a whole matrix of weights, two of them wrong, with a lab" in out
    assert "No known mistake reproduces this value: recompute it." in out


def test_check_digits_sets_the_decimal_column(capsys):
    _, out, _ = run(capsys, "check", str(EXAMPLES / "readme.toml"), "--digits", "7", "--format", "json")
    decimals = {c["label"]: c["decimal"] for c in json.loads(out)["claims"]}
    assert decimals["a_3"] == "[0.2482551, 0.2482551, 0.5034898]"
    code, _, err = run(capsys, "check", str(EXAMPLES / "readme.toml"), "--digits", "101")
    assert code == 2 and "--digits must be a whole number between 0 and 100" in err


def test_check_markdown_table(capsys):
    code, out, _ = run(capsys, "check", str(EXAMPLES / "readme.toml"), "--format", "markdown")
    lines = out.splitlines()
    assert code == 1 and lines[2] == "| label | verdict | claimed | exact | decimal | rule | diagnosis |"
    row = next(line for line in lines if line.startswith("| a\\_3 |"))
    assert "| FAIL | `[0.212, 0.212, 0.576]` |" in row and "These values come from the unscaled scores" in row
    assert run(capsys, "check", str(EXAMPLES / "readme.toml"), "--format", "md")[1] == out  # the old spelling


# -- attention -----------------------------------------------------------------------------


def _entry_lines(out):
    return [line for line in out.splitlines() if re.match(r"^  [A-Z][^ ]*\[\d+,\d+\] = ", line)]


def test_attention_nontrivial_is_the_default_and_skips_rationals(capsys):
    _, default, _ = run(capsys, "attention", *BY_HAND, "--mask", "causal")
    _, nontrivial, _ = run(capsys, "attention", *BY_HAND, "--mask", "causal", "--exact", "nontrivial")
    _, every, _ = run(capsys, "attention", *BY_HAND, "--mask", "causal", "--exact", "all")
    assert default == nontrivial
    assert len(_entry_lines(every)) == 9 * 4 + 6  # S, S', S+M, A (3x3) and Z (3x2)
    shown = _entry_lines(nontrivial)
    assert shown and all("≈" in line for line in shown)  # only the irrational entries
    assert not any(line.startswith(("  S[", "  A[1,", "  Z[1,")) for line in shown)
    assert "  A[2,1] = 1/(1 + exp(sqrt(2)/2))  ≈ 0.330" in shown


def test_attention_exact_none_and_decimals_only_print_the_grids_alone(capsys, monkeypatch):
    _, none, _ = run(capsys, "attention", *BY_HAND, "--exact", "none")
    assert _entry_lines(none) == [] and "  [ 0.401  0.198  0.401 ]" in none

    def refuse(self, name):
        raise AssertionError("a closed form was built")

    monkeypatch.setattr(AttentionResult, "stage", refuse)
    code, only, err = run(capsys, "attention", *BY_HAND, "--decimals-only")
    assert code == 0, err
    assert only == none
    code, out, _ = run(capsys, "attention", *BY_HAND, "--decimals-only", "--format", "json")
    document = json.loads(out)
    assert code == 0 and set(document["weights"]) == {"decimal"}
    code, _, err = run(capsys, "attention", *BY_HAND, "--decimals-only", "--exact", "all")
    assert code == 2 and "--decimals-only prints no closed form" in err


def test_attention_sixteen_tokens_prints_far_fewer_lines(capsys):
    grid = str([[(i * j) % 3 for j in range(4)] for i in range(16)]).replace(" ", "")
    args = ["attention", "--q", grid, "--k", grid, "--v", grid]
    every = run(capsys, *args, "--exact", "all")[1].count("\n")
    default = run(capsys, *args)[1].count("\n")
    decimals = run(capsys, *args, "--decimals-only")[1].count("\n")
    assert every > 850 and default < every * 0.4 and decimals < 100


def test_attention_stage_shows_only_those(capsys):
    code, out, _ = run(capsys, "attention", *BY_HAND, "--stage", "output", "--stage", "weights")
    titles = [line for line in out.splitlines() if re.match(r"^[a-z].*\(\d+x\d+\)", line)]
    assert code == 0 and titles == ["weights A = softmax(S') (3x3)", "output Z = A V (3x2)"]  # in the trace's order
    code, out, _ = run(capsys, "attention", *BY_HAND, "--stage", "value", "--exact", "all")
    assert code == 0 and "values V (3x2)" in out and "  V[1,1] = 2" in out and "weights" not in out
    code, out, _ = run(capsys, "attention", *BY_HAND, "--stage", "weights", "--format", "json")
    assert set(json.loads(out)) == {"shape", "scale", "mask", "weights"}
    code, out, _ = run(capsys, "attention", *BY_HAND, "--stage", "scores", "--format", "latex")
    assert out.count(r"\begin{align*}") == 1 and r"S = QK^{\mathsf{T}}" in out


def test_attention_unknown_stage_is_one_line_with_a_suggestion(capsys):
    code, out, err = run(capsys, "attention", *BY_HAND, "--stage", "weight")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--stage: unknown stage 'weight' (did you mean 'weights'?)" in err


def test_attention_marks_blocked_entries(capsys):
    code, out, _ = run(capsys, "attention", *BY_HAND, "--mask", "causal", "--exact", "all")
    assert code == 0
    assert "mask M, 1 = may attend, · = blocked (3x3)\n  [ 1  ·  · ]\n  [ 1  1  · ]\n  [ 1  1  1 ]" in out
    assert "  [   1.000  (0.000)  (1.000) ]" in out  # S: blocked scores in parentheses
    assert "  [ 0.707     −∞     −∞ ]" in out  # S' + M
    assert "  [ 1.000      ·      · ]" in out  # A: exactly 0 by the mask
    assert "  A[1,2] = 0  (blocked)" in out and "  S'+M[1,2] = -inf  (blocked)" in out
    _, plain, _ = run(capsys, "attention", *BY_HAND)
    assert "mask M" not in plain and "·" not in plain and "(" not in plain.split("\n\n", 1)[1].split("\n")[1]


def test_attention_uniform_empty_row_is_not_marked_zero(capsys):
    code, out, _ = run(capsys, "attention", *BY_HAND, "--mask", "keep:[[0,0,0],[1,0,0],[1,1,1]]",
                       "--empty-row", "uniform", "--stage", "weights")
    assert code == 0 and "  [ 0.333  0.333  0.333 ]" in out and "  [ 1.000      ·      · ]" in out


def test_attention_markdown_is_math_blocks(capsys):
    code, out, _ = run(capsys, "attention", *BY_HAND, "--format", "markdown")
    assert code == 0 and out.startswith("attention: n=3 queries")
    assert out.count("$$\n\\begin{align*}") == out.count("\\end{align*}\n$$") == 4
    assert run(capsys, "attention", *BY_HAND, "--format", "md")[1] == out
    assert run(capsys, "attention", *BY_HAND, "--format", "tex")[1] == run(capsys, "attention", *BY_HAND, "--format", "latex")[1]


def test_readme_shows_the_real_check_table(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(EXAMPLES.parent)
    readme = (EXAMPLES.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("```text\nexamples/readme.toml: ")[1].split("```")[0]
    shown = ("examples/readme.toml: " + block).split("\n...\n")[0].splitlines()
    _, out, _ = run(capsys, "check", "examples/readme.toml")
    assert out.splitlines()[:len(shown)] == shown


def test_readme_shows_the_real_attention_weights(capsys):
    readme = (EXAMPLES.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("## A hand calculation")[1].split("```text\n")[1].split("```")[0]
    _, out, _ = run(capsys, "attention", *BY_HAND, "--mask", "causal")
    for piece in block.split("...\n"):
        assert piece.strip("\n") in out
