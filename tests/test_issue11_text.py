"""Issue 11 read as a reviewer would: the API names it states, its `key = E` example, and
definition bombs built by chaining arithmetic (not only inside calls)."""

import inspect
import time

import pytest
import sympy
from sympy import Matrix as M, Rational as R

import symbolic_attn
from symbolic_attn.errors import DefinitionError, ExerciseError, InputLimitError
from symbolic_attn.model.program import run_program

I2 = sympy.eye(2)


@pytest.mark.parametrize("name, parameters", [
    ("multihead", None),
    ("sinusoidal", ["n", "d_model", "base"]),
    ("rope", ["X", "positions", "base"]),
    ("alibi", ["n", "m", "heads"]),
    ("layer_norm", ["X", "eps", "gamma", "beta"]),
    ("relu", ["X"]),
    ("gelu", ["X", "approximate"]),
    ("feed_forward", ["X", "W1", "b1", "W2", "b2", "activation"]),
    ("encoder_block", None),
    ("decoder_block", None),
], ids=lambda v: v if isinstance(v, str) else "")
def test_operations_are_importable_from_the_package(name, parameters):
    function = getattr(symbolic_attn, name)
    assert name in symbolic_attn.__all__
    if parameters:
        assert list(inspect.signature(function).parameters)[:len(parameters)] == parameters
    with pytest.raises(AttributeError):
        getattr(symbolic_attn, name + "_missing")


def test_issue_defaults_and_values_through_the_package():
    assert symbolic_attn.sinusoidal(2, 2)["output"] == M([[0, 1], [sympy.sin(1), sympy.cos(1)]])
    assert symbolic_attn.alibi(2, 2, heads=8)["slopes"] == M([[R(1, 2 ** k) for k in range(1, 9)]])
    assert symbolic_attn.layer_norm(M([[1, 2, 3]]))["output"] == M([[-sympy.sqrt(6) / 2, 0, sympy.sqrt(6) / 2]])


def test_a_stage_is_also_an_attribute():
    t = symbolic_attn.multihead(M([[1, 0], [0, 1]]), heads=[(I2, I2, I2)], WO=I2)
    assert t.output == t["output"] and t.concat == t["concat"]
    with pytest.raises(AttributeError, match="no attribute or stage 'weights'"):
        t.weights  # noqa: B018  (a nested stage is t["head[1].weights"])


def test_cross_attention_with_the_issue_names_D_and_E():
    # The issue writes multihead(query=D, key=E, ...): E names an input, not Euler's number.
    inputs = {"D": [[1, 0]], "E": [[1, 0], [0, 1], [1, 1]]}
    trace = run_program(inputs, [("C", "multihead(query = D, key = E, heads = [[I2, I2, I2]], WO = I2)"),
                                 ("F", "e * E")])
    assert trace["C.head[1].weights"].shape == (1, 3)
    assert trace["F"] == sympy.E * M(inputs["E"])  # e stays Euler's number
    with pytest.raises(DefinitionError, match=r"^definition 'A': 'E' is used before it is defined"):
        run_program({"X": [[1]]}, [("A", "E + X"), ("E", "X")])
    with pytest.raises(DefinitionError, match=r"^input 'e': not a usable name"):
        run_program({"e": [[1]]}, [("A", "e")])
    with pytest.raises(DefinitionError, match=r"^definition 'pi': not a usable name"):
        run_program({"X": [[1]]}, [("pi", "X")])


def test_exercise_file_accepts_an_input_named_E(tmp_path):
    from symbolic_attn.grading.exercise import load_exercise

    path = tmp_path / "cross.toml"
    path.write_text('[inputs]\nD = [[1, 0]]\nE = [[1, 0], [0, 1]]\n[define]\n'
                    'C = "multihead(query = D, key = E, heads = [[I2, I2, I2]], WO = I2)"\n', encoding="utf-8")
    load_exercise(path)
    path.write_text('[inputs]\ne = [[1, 0]]\n', encoding="utf-8")
    with pytest.raises(ExerciseError, match="not a usable input name"):
        load_exercise(path)


@pytest.mark.parametrize("inputs, step", [
    ({"X": [[3, 1], [1, 2]]}, "D{p} @ D{p}"),                      # integers double in size
    ({"X": [[3, 1], [1, 2]]}, "relu(D{p}) @ relu(D{p})"),          # the same through a call
    ({"X": [[1, 2], [0, 1]]}, "sinusoidal(2, 2) + D{p} @ D{p}"),  # closed forms double in size
], ids=["integers", "through-call", "closed-forms"])
def test_chained_arithmetic_bombs_stop_fast_naming_the_definition(inputs, step):
    definitions = [("D0", "X")] + [(f"D{i}", step.format(p=i - 1)) for i in range(1, 60)]
    start = time.perf_counter()
    # The bound met first may be the input language's own (an expression "of more than N
    # nodes", with its column) or the sublayers' ("N expression nodes"): the same bound.
    with pytest.raises(InputLimitError, match=r"^definition 'D\d+': .*(digits|nodes)"):
        run_program(inputs, definitions)
    assert time.perf_counter() - start < 10


def test_a_few_squarings_still_run():
    trace = run_program({"X": [[1, 1], [0, 1]]}, [("A", "X @ X"), ("B", "A @ A @ A")])
    assert trace["B"] == M([[1, 6], [0, 1]])


def _overfull(tmp_path, body: str) -> list:
    import re
    import shutil
    import subprocess

    pdflatex = shutil.which("pdflatex")
    assert pdflatex, "pdflatex is required"
    (tmp_path / "run.tex").write_text("\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n" + body
                                      + "\n\\end{document}\n", encoding="utf-8")
    compiled = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "run.tex"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert compiled.returncode == 0, compiled.stdout[-1500:]
    return re.findall(r"Overfull \\[hv]box \([0-9.]+pt too (?:wide|high)\)", (tmp_path / "run.log").read_text(errors="replace"))


def test_run_latex_of_the_issue_example_fits_the_page(capsys, tmp_path):
    from pathlib import Path

    from symbolic_attn.cli import main
    from symbolic_attn.cli.run import _LATEX_LINES

    issue = Path(__file__).resolve().parent.parent / "examples" / "define" / "issue.toml"
    assert main(["run", str(issue), "--format", "latex"]) == 0
    out = capsys.readouterr().out
    assert r"A^{(2)} &" in out and r"\text{M.head" not in out  # issue 21: mathematical labels
    blocks = out.split("\\begin{align*}")[1:]
    assert all(block.count("\\\\\n") < _LATEX_LINES for block in blocks)
    assert _overfull(tmp_path, out) == []
    # the check can fail: stage A whole on one line (the layout this replaced) overflows
    from symbolic_attn.grading.computation import load_computation
    from symbolic_attn.render.latex import matrix_latex

    a = matrix_latex(load_computation(issue).trace()["A"], order="none")
    assert _overfull(tmp_path, "\\begin{align*}\n\\text{A} &= " + a + "\n\\end{align*}")


@pytest.mark.parametrize("text", ["sinusoidal(3, 2)", "sinusoidal(n = 3, d = 2)", "sinusoidal(3, d_model = 2)"],
                         ids=["positional", "grammar-name", "api-name"])
def test_sinusoidal_width_is_d_or_d_model_in_definitions(text):
    trace = run_program({}, [("P", text)])
    assert trace["P"] == M([[0, 1], [sympy.sin(1), sympy.cos(1)], [sympy.sin(2), sympy.cos(2)]])


def test_sinusoidal_width_given_twice_is_refused():
    with pytest.raises(DefinitionError, match=r"^definition 'P': 'sinusoidal': argument 'd' given twice"):
        run_program({}, [("P", "sinusoidal(3, 2, d_model = 2)")])
