"""Issue 21, item 7: one command line.  One ``--format`` vocabulary (the old ``tex``/``md``
still read), ``--digits`` where decimals are shown, 1-based positions in messages, a
generated shell completion script, and an ``examples:`` block in every command's help."""

import argparse
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from symbolic_attn.cli import build_parser, main
from symbolic_attn.cli.completion import bash_script, command_table, zsh_script
from symbolic_attn.cli.options import FORMAT_ALIASES, FORMATS
from symbolic_attn.errors import ExerciseError
from symbolic_attn.grading.answer_key import parse_answer_key
from symbolic_attn.grading.exercise import parse_exercise

ROOT = Path(__file__).resolve().parent.parent
COURSE = ROOT / "examples" / "course"
PRINTING = ("attention", "check", "run", "grade", "compare", "derive")
BY_HAND = ["--q", "[[1,0],[0,1]]", "--k", "[[1,0],[0,1]]", "--v", "[[1],[2]]"]


def _commands(parser, prefix=""):
    """(name path, parser) of every subcommand, nested ones (autograder run) included."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                path = f"{prefix} {name}".strip()
                yield path, child
                yield from _commands(child, path)


COMMANDS = dict(_commands(build_parser()))


def _format_action(parser):
    return next((a for a in parser._actions if "--format" in a.option_strings), None)


@pytest.mark.parametrize("name", PRINTING, ids=PRINTING)
def test_every_printing_command_speaks_one_format_vocabulary(name):
    action = _format_action(COMMANDS[name])
    assert action is not None, f"{name} has no --format"
    assert set(action.choices) <= set(FORMATS), (name, action.choices)
    assert action.default in action.choices


@pytest.mark.parametrize("name, old, new", [("attention", "tex", "latex"), ("attention", "md", "markdown"),
                                            ("derive", "tex", "latex"), ("derive", "md", "markdown"),
                                            ("check", "md", "markdown"), ("grade", "md", "markdown")],
                         ids=["attention-tex", "attention-md", "derive-tex", "derive-md", "check-md", "grade-md"])
def test_old_spellings_still_work(name, old, new):
    assert FORMAT_ALIASES[old] == new
    required = {"attention": ["--v", "[[1]]"], "derive": [], "check": ["x.toml"], "grade": ["k.toml", "s.md"]}[name]
    args = build_parser().parse_args([name, *required, "--format", old])
    assert args.format == new


SQUARE = '''"""A square."""
import sympy
from symbolic_attn.proofs.chain import Derivation, Scope, Step

NAME = "square"
x = sympy.Symbol("x")


def build():
    return Derivation("Square", (x + 1) ** 2, [Step(x**2 + 2*x + 1, "expand")], scope=Scope.proved("every x"))
'''


@pytest.mark.parametrize("spelling", ["markdown", "md"])
def test_derive_markdown_is_notes_md(tmp_path, spelling):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "square.py").write_text(SQUARE, encoding="utf-8")
    assert main(["derive", str(tmp_path / "mine"), "--out", str(tmp_path / "o"), "--format", spelling, "--jobs", "1"]) == 0
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["notes.md"]


def test_pdf_needs_latex_is_said_in_both_spellings(capsys):
    assert main(["derive", "--format", "markdown", "--pdf", "--out", "unused"]) == 2
    assert "needs --format tex (= latex, the default)" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["attention", "check", "run"], ids=["attention", "check", "run"])
def test_digits_wherever_decimals_are_shown(name):
    assert any("--digits" in a.option_strings for a in COMMANDS[name]._actions)


@pytest.mark.parametrize("name", sorted(COMMANDS), ids=sorted(COMMANDS))
def test_every_help_ends_with_examples(name):
    text = COMMANDS[name].format_help()
    assert "\nexamples:\n" in text, name
    block = text.split("\nexamples:\n", 1)[1].strip("\n").splitlines()
    assert block and all(line.startswith("  ") for line in block), block
    assert any("symbolic-attn" in line for line in block)


def test_top_level_help_has_examples(capsys):
    assert "\nexamples:\n" in build_parser().format_help()


# -- grade --format ------------------------------------------------------------------------


def test_grade_json_and_markdown(capsys):
    submissions = [str(COURSE / "submissions" / name) for name in ("ann.md", "ben.tex")]
    code = main(["grade", str(COURSE / "exercise.toml"), *submissions, "--jobs", "1", "--format", "json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0 and document["graded"] == 2 and document["not_gradable"] == 0
    assert [s["student"] for s in document["students"]] == ["ann", "ben"]
    assert main(["grade", str(COURSE / "exercise.toml"), *submissions, "--jobs", "1", "--format", "markdown"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| student | score | max |") and lines[2].startswith("| ann | 12 | 12 |")


# -- positions count from 1 ----------------------------------------------------------------

BASE = '[inputs]\nX = [[1, 0], [0, 1], [1, 1]]\n[attention]\nquery = "X"\nkey = "X"\nvalue = "X"\n'


@pytest.mark.parametrize("text, message", [
    (BASE + "mask = {keep = [[1, 1, 2], [1, 1, 1], [1, 1, 1]]}\n", r"^e\.toml: attention\.mask\.keep\[1,3\]: expected 0, 1"),
    (BASE.replace("[1, 1]]", '[1, "1+"]]'), r"^e\.toml: inputs\.X\[3,2\]: malformed expression: .* at column 3"),
    ('symbols = ["a", "sqrt"]\n' + BASE, r"^e\.toml: symbols\[2\]: not a usable symbol name"),
    ('[inputs]\nQ = {value = [["0.5", "0.25"]], rounded = 1}\n[attention]\nscores = "Q"\nvalue = [[1], [1]]\n',
     r"^e\.toml: inputs\.Q\.value\[1,2\]: 0.25 has more decimals"),
], ids=["mask-entry", "input-entry", "symbol", "rounded-entry"])
def test_exercise_positions_are_one_based(text, message):
    with pytest.raises(ExerciseError, match=message):
        parse_exercise(text, source="e.toml")


def test_answer_key_questions_count_from_one():
    key = BASE + '[[questions]]\nname = "w"\nquantity = "weights"\n[[questions]]\nname = "z"\nquantity = "output"\npoints = 0\n'
    with pytest.raises(ExerciseError, match=r"^k\.toml: question 2: points: expected a positive number"):
        parse_answer_key(key, "k.toml")
    twice = BASE + '[[questions]]\nname = "w"\nquantity = "weights"\n[[questions]]\nname = "w"\nquantity = "output"\n'
    with pytest.raises(ExerciseError, match=r"^k\.toml: question 2: name: 'w' is also a name of question 1$"):
        parse_answer_key(twice, "k.toml")


def test_attention_positions_are_one_based(capsys):
    assert main(["attention", "--q", "[[1,0],[0,1]]", "--k", "[[1,0],[0,1]]", "--v", "[[1],[2]]", "--mask",
                 "keep:[[1,0],[1,2]]"]) == 2
    assert "entry (2,2) is 2" in capsys.readouterr().err


# -- shell completion ----------------------------------------------------------------------


def test_completion_table_is_the_parsers():
    table = command_table(build_parser())
    assert set(table[""]["commands"]) >= set(PRINTING) | {"autograder", "list", "completion"}
    assert table["attention"]["values"]["--format"] == ("text", "latex", "markdown", "json")
    assert "weights" in table["attention"]["values"]["--stage"]
    assert table["autograder"]["commands"] == ["gradescope", "prairielearn", "run", "example-course"]
    assert table["autograder run"]["commands"] == ["gradescope", "prairielearn"]
    assert "--out" in table["grade"]["files"] and "--digits" not in table["check"]["files"]


def test_completion_command_prints_the_scripts(capsys):
    assert main(["completion", "bash"]) == 0
    bash = capsys.readouterr().out
    assert bash == bash_script(build_parser()) and bash.rstrip().endswith("complete -o filenames -o bashdefault "
                                                                            "-F _symbolic_attn symbolic-attn")
    assert main(["completion", "zsh"]) == 0
    zsh = capsys.readouterr().out
    assert zsh == zsh_script(build_parser()) and "bashcompinit" in zsh
    with pytest.raises(SystemExit):
        main(["completion", "fish"])


BASH = shutil.which("bash")


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("words, expected", [
    (["a"], ["attention", "autograder"]),
    (["attention", "--for"], ["--format"]),
    (["attention", "--format", ""], ["text", "latex", "markdown", "json"]),
    (["attention", "--exact", "n"], ["nontrivial", "none"]),
    (["attention", "--stage", "w"], ["weights"]),
    (["autograder", "run", ""], ["gradescope", "prairielearn"]),
    (["--timeout", "5", "check", "--d"], ["--digits"]),
    (["derive", "--format", ""], ["latex", "markdown"]),
    (["completion", ""], ["bash", "zsh"]),
], ids=["command", "option", "format", "exact", "stage", "nested", "after-timeout", "derive", "shell"])
def test_bash_completes(tmp_path, words, expected):
    script = tmp_path / "complete.sh"
    script.write_text(bash_script(build_parser()))
    quoted = " ".join(f"'{w}'" for w in ["symbolic-attn", *words])
    program = (f"source {script}; COMP_WORDS=({quoted}); COMP_CWORD={len(words)}; _symbolic_attn; "
               'printf "%s\\n" "${COMPREPLY[@]}"')
    done = subprocess.run([BASH, "--norc", "-c", program], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.split()) == sorted(expected)


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
def test_bash_script_is_valid_bash(tmp_path):
    script = tmp_path / "complete.sh"
    script.write_text(bash_script(build_parser()))
    assert subprocess.run([BASH, "-n", str(script)], capture_output=True, timeout=30).returncode == 0


@pytest.mark.parametrize("name", ["attention", "check"], ids=["attention", "check"])
def test_help_examples_run(name, capsys, monkeypatch):
    """The examples these commands' --help show run as shown (from the repository root)."""
    import shlex

    monkeypatch.chdir(ROOT)
    block = COMMANDS[name].format_help().split("\nexamples:\n", 1)[1]
    ran = 0
    for line in block.strip("\n").splitlines():
        words = shlex.split(line.split("  #")[0].strip())
        while words and "=" in words[0] and not words[0].startswith("-"):
            key, _, value = words.pop(0).partition("=")
            monkeypatch.setenv(key, value)
        if words[:1] != ["symbolic-attn"] or ">" in words:
            continue
        assert main(words[1:]) in (0, 1), line
        ran += 1
    capsys.readouterr()
    assert ran >= 1
