"""Issue 22, item 2: ``symbolic-attn steps FILE`` -- every step of every chain decided,
the JSON shape of the issue, exit 0 / 1 / 2, bad input one line."""

import json

import pytest

from symbolic_attn.cli import main

SYMBOLS = "n: positive integer; i, j: integer 1..n; x: real vector n; c: real"
SHIFT = r"""<!-- symbols: n: positive integer; i, j: integer 1..n; x: real vector n; c: real -->
## shift

$$
\begin{aligned}
\operatorname{softmax}(x + c)_i &= \frac{e^{x_i + c}}{\sum_{j=1}^{n} e^{x_j + c}} \\
&= \frac{e^{c} e^{x_i}}{e^{c} \sum_{j=1}^{n} e^{x_j}} \\
&= \frac{e^{x_i}}{\sum_j e^{x_j}} \\
&= \operatorname{softmax}(x)_i
\end{aligned}
$$
"""
WRONG = r"""% symbols: n: positive integer; j: integer 1..n; x: real vector n; c: real
\begin{align*}
\sum_{j=1}^{n} e^{x_j + c} &= e^c + \sum_{j=1}^{n} e^{x_j} \\
  &= e^c + \sum_{j=1}^{n} e^{x_j}
\end{align*}
"""
STEP_KEYS = {"line", "from", "to", "read", "relation", "verdict", "reason", "counterexample", "diagnosis"}


def steps(capsys, *argv):
    code = main(["steps", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def write(tmp_path):
    def write(text, name):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path
    return write


def test_a_right_derivation_is_proved_step_by_step(capsys, write):
    code, out, err = steps(capsys, write(SHIFT, "shift.md"))
    assert (code, err) == (0, "")
    assert "chain 1 'shift' (line 6): 4 steps, 4 proved" in out
    code, out, _ = steps(capsys, write(SHIFT, "shift.md"), "--format", "json")
    [chain] = json.loads(out)["chains"]
    assert chain["start_line"] == 6 and [s["line"] for s in chain["steps"]] == [6, 7, 8, 9]
    assert all(STEP_KEYS <= set(s) and s["verdict"] == "proved" for s in chain["steps"])
    assert chain["steps"][0]["from"] == r"\operatorname{softmax}(x + c)_i"


def test_a_false_step_has_its_counterexample_and_its_mistake(capsys, write):
    code, out, _ = steps(capsys, write(WRONG, "wrong.tex"), "--format", "json")
    assert code == 1
    first, second = json.loads(out)["chains"][0]["steps"]
    assert first["verdict"] == "false" and first["diagnosis"] == "shift_added"
    assert {"c", "n"} <= set(first["counterexample"]) and "x_1" in first["counterexample"]
    assert second["verdict"] == "proved"  # the next step, from the student's own line, still decided
    code, out, _ = steps(capsys, write(WRONG, "wrong.tex"))
    assert code == 1 and "FALSE" in out and "mistake: The shift was added instead of multiplied" in out


def test_symbols_on_the_command_line_and_unreadable_lines(capsys, write):
    text = "e^{x_1 + c} = e^{x_1} e^{c}\n= \\foo c\n"
    code, out, _ = steps(capsys, write(text, "proof.txt"), "--symbols", SYMBOLS, "--format", "json")
    assert code == 1
    proved, unreadable = json.loads(out)["chains"][0]["steps"]
    assert proved["verdict"] == "proved" and unreadable["verdict"] == "unreadable"
    assert unreadable["reason"].startswith("line 2, column 3: unknown command \\foo")


@pytest.mark.parametrize("name, text, message", [
    ("proof.pdf", "x = x", "expected a .md, .tex or .txt file, got the suffix '.pdf'"),
    ("proof.md", "$$ a = b $$\n", "symbols"),
    ("open.md", "$$ 1 = 1\n", "open.md: line 1, column 1: the display $$ is never closed by $$"),
])
def test_bad_input_is_one_line_exit_2(capsys, write, name, text, message):
    code, out, err = steps(capsys, write(text, name), *(["--symbols", "a: what"] if name == "proof.md" else []))
    assert err.startswith("symbolic-attn: error: ")
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_without_declarations_numbers_are_read_and_a_letter_says_how_to_declare_it(capsys, write):
    code, out, _ = steps(capsys, write("2 + 2 = 4\n= x\n", "proof.txt"), "--format", "json")
    right, letter = json.loads(out)["chains"][0]["steps"]
    assert code == 1 and right["verdict"] == "proved" and letter["verdict"] == "unreadable"
    assert "undeclared letter x: declare it" in letter["reason"]


def test_a_file_too_large_or_a_folder_is_refused(capsys, write, tmp_path):
    code, _, err = steps(capsys, write("x" * 300_000, "big.md"))
    assert code == 2 and "larger than the limit" in err
    (tmp_path / "folder.md").mkdir()
    code, _, err = steps(capsys, tmp_path / "folder.md")
    assert code == 2 and "folder.md" in err
