"""An answer key may use [define] (issue 20): LayerNorm, heads, positional encodings are
graded like attention, each question naming any stage path of the computation."""

import pytest

from symbolic_attn.cli import main
from symbolic_attn.errors import ExerciseError
from symbolic_attn.grading.answer_key import parse_answer_key
from symbolic_attn.grading.batch import grade_all
from symbolic_attn.grading.roster import discover

KEY = """
title = "LayerNorm, two heads and positions"
[inputs]
X = [[1, 0, 2], [0, 1, 1]]
W = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
[define]
N = "layer_norm(X)"
M = "multihead(X, heads = [[W, W, W], [W, W, W]])"
P = "sinusoidal(2, 2)"
[[questions]]
name = "n_{11}"
quantity = "N"
row = 1
col = 1
points = 1
[[questions]]
name = "A_1"
quantity = "M.head[1].weights"
row = 1
points = 2
[[questions]]
name = "p_{21}"
quantity = "P"
row = 2
col = 1
points = 1
"""


@pytest.fixture
def key():
    return parse_answer_key(KEY, "key.toml")


def _grade(key, tmp_path, files):
    folder = tmp_path / "subs"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return {r.student: r for r in grade_all(key, discover([folder]), jobs=1)}


def test_right_answers_on_define_stages_earn_every_point(key, tmp_path):
    results = _grade(key, tmp_path, {"ann.md": "$n_{11} = 0$, $A_1 = [0.850, 0.150]$, $p_{21} = 0.841$\n"})
    assert results["ann"].score == 4 and results["ann"].verdicts() == {"n_{11}": "pass", "A_1": "pass", "p_{21}": "pass"}


def test_wrong_answers_on_define_stages_are_rejected(key, tmp_path):
    """A check must be able to fail: uniform head weights, a LayerNorm entry of 1/2, cos(1)."""
    results = _grade(key, tmp_path, {"bob.txt": "n_{11} = 0.5\nA_1 = [0.5, 0.5]\np_{21} = 0.540\n"})
    assert results["bob"].score == 0
    assert set(results["bob"].verdicts().values()) == {"fail"}


def test_a_question_names_a_stage_of_the_computation(key):
    with pytest.raises(ExerciseError, match=r"question 1: quantity: expected one of .*M\.head\[1\]\.weights"):
        parse_answer_key(KEY.replace('quantity = "N"', 'quantity = "Q"'), "key.toml")


def test_grade_command_on_a_define_key_in_parallel(tmp_path, capsys):
    (tmp_path / "key.toml").write_text(KEY, encoding="utf-8")
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "ann.md").write_text("$n_{11} = 0$\n$A_1 = [0.850, 0.150]$\n$p_{21} = 0.841$\n", encoding="utf-8")
    (subs / "bob.md").write_text("$n_{11} = 1$\n", encoding="utf-8")
    status = main(["grade", str(tmp_path / "key.toml"), str(subs), "--out", str(tmp_path / "out"), "--jobs", "2"])
    assert status == 0, capsys.readouterr().err
    csv = (tmp_path / "out" / "grades.csv").read_text(encoding="utf-8").splitlines()
    assert csv[0] == "student,score,max_score,gradable,reason,n_{11},A_1,p_{21}"
    assert csv[1:] == ["ann,4,4,true,,1,2,1", "bob,0,4,true,,0,0,0"]
