"""Issue 21, items 1 and 2: ``run`` shows exact values at a size people can read, one
definition at a time, in one canonical form for text, LaTeX and JSON, with mathematical
LaTeX labels."""

import json
import re
from decimal import Decimal
import time
from pathlib import Path

import pytest
import sympy

from symbolic_attn.cli import main
from symbolic_attn.cli import run as run_module
from symbolic_attn.exact.parse import parse_expression
from symbolic_attn.render.exact_text import Canonical, canonical_string
from symbolic_attn.render.labels import entry_label, markdown_table, stage_label

ROOT = Path(__file__).resolve().parent.parent
HALF = '''[inputs]
X = [[1, 0], [0, 1]]
[define]
M = "multihead(X, heads = [[I2, I2, I2], [I2, I2, I2]], WO = [[1/2], [0], [0], [1/2]])"
'''
IDENTITIES = '''[inputs]
X = [[1, 0], [0, 1]]
[define]
B = "encoder_block(X, heads = [[I2, I2, I2]], WO = I2, W1 = I2, W2 = I2)"
'''
# The block: three tokens, width 4, two heads, small integer weights.
BLOCK = '''[inputs]
X = [[1, 0, 2, -1], [0, 1, 1, 0], [2, -1, 0, 1]]
WQ1 = [[1, 0], [0, 1], [1, 0], [0, 1]]
WK1 = [[0, 1], [1, 0], [1, 1], [0, 0]]
WV1 = [[1, 0], [0, 1], [0, 0], [1, 1]]
WQ2 = [[0, 1], [1, 1], [0, 0], [1, 0]]
WK2 = [[1, 0], [0, 0], [0, 1], [1, 1]]
WV2 = [[0, 1], [1, 0], [1, 1], [0, 0]]
W1 = [[1, -1, 0, 1], [0, 1, 1, 0], [1, 0, -1, 0], [0, 0, 1, 1]]
W2 = [[1, 0, 0, 1], [0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1]]
[define]
E = "encoder_block(X, heads = [[WQ1, WK1, WV1], [WQ2, WK2, WV2]], WO = I4, W1 = W1, W2 = W2)"
'''


def run(capsys, *argv):
    code = main(["run", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def write(tmp_path):
    def write(text, name="f.toml"):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path
    return write


# -- one canonical form, proved -----------------------------------------------------------

A = sympy.exp(sympy.sqrt(2) / 2)
CANONICAL = [
    ("multihead-half", 1 / (2 * (1 + A)) + A / (2 * (1 + A)), sympy.Rational(1, 2)),
    ("layer-norm-one", (1 - 2 / (1 + A)) / sympy.sqrt((1 - 2 / (1 + A)) ** 2), sympy.S.One),
    ("layer-norm-minus-one", -(1 - 2 / (1 + A)) / sympy.sqrt((1 - 2 / (1 + A)) ** 2), -sympy.S.One),
    ("inside-a-sum", sympy.sqrt(8) * sympy.sqrt(2) / 4 + sympy.log(3) * (A / (1 + A) + 1 / (1 + A)),
     1 + sympy.log(3)),
]


@pytest.mark.parametrize("value,expected", [c[1:] for c in CANONICAL], ids=[c[0] for c in CANONICAL])
def test_values_proved_rational_are_shown_as_the_rational(value, expected):
    assert Canonical()(value) == expected


NOT_EQUAL = [
    ("half-plus-tiny", sympy.Rational(1, 2) + sympy.exp(-200)),       # inside any 192-bit ball around 1/2
    ("one-minus-tiny", 1 - sympy.exp(-sympy.Integer(300)) * sympy.sqrt(2)),
    ("weight", A / (1 + A)),
    ("symbolic", sympy.Symbol("x") / 2 + sympy.Rational(1, 3)),
]


@pytest.mark.parametrize("value", [c[1] for c in NOT_EQUAL], ids=[c[0] for c in NOT_EQUAL])
def test_nothing_unproved_is_simplified(value):
    """A candidate from an enclosure is only a proposal: without a proof the value stays."""
    assert Canonical()(value) == value


def test_print_budget_says_how_large_the_form_is():
    text, nodes = canonical_string(sum(sympy.exp(sympy.sqrt(k)) for k in range(2, 40)), budget=50)
    assert text is None and nodes > 50
    assert canonical_string(sympy.Rational(10**50 + 1, 3), budget=0) == (f"{10**50 + 1}/3", 1)  # rationals always


def test_half_is_written_one_way_in_text_latex_and_json(capsys, write):
    path = write(HALF)
    code, text, _ = run(capsys, path, "--stage", "M")
    assert code == 0 and "M[1,1] = 1/2  = 0.500" in text and "exp" not in text
    code, latex, _ = run(capsys, path, "--stage", "M", "--format", "latex")
    assert r"\mathrm{M} &= \begin{bmatrix}\frac{1}{2} \\ \frac{1}{2}\end{bmatrix}" in latex
    code, out, _ = run(capsys, path, "--format", "json")
    stage = json.loads(out)["stages"]["M"]
    assert stage["exact"] == [["1/2"], ["1/2"]] and stage["latex"] == r"\begin{bmatrix}\frac{1}{2} \\ \frac{1}{2}\end{bmatrix}"


def test_identity_block_is_exactly_plus_minus_one(capsys, write):
    code, out, err = run(capsys, write(IDENTITIES), "--format", "json")
    assert (code, err) == (0, "")
    stages = json.loads(out)["stages"]
    assert stages["B"]["exact"] == [["1", "-1"], ["-1", "1"]]
    assert stages["B.norm1"]["exact"] == [["1", "-1"], ["-1", "1"]]
    # every printed exact string still reads back to its certified value
    for path, stage in stages.items():
        for exact_row, decimal_row in zip(stage["exact"], stage["decimal"]):
            for text, decimal in zip(exact_row, decimal_row):
                assert run_module.Canonical().decimal(parse_expression(text), 30, significant=True) == decimal, path


# -- the block: every stage shown, fast --------------------------------------------


def test_block_of_three_tokens_width_four_two_heads(capsys, write):
    start = time.perf_counter()
    code, out, err = run(capsys, write(BLOCK))
    elapsed = time.perf_counter() - start
    assert (code, err) == (0, ""), err
    assert elapsed < 15  # about 3 s on a quiet machine; generous for shared CI cores
    assert re.search(r"^  E\[1,1\] ≈ 0\.171  \(exact form: \d+ nodes, not printed\)$", out, re.M)
    for stage in ("E.attention.head[2].weights", "E.norm1", "E.ffn.hidden", "E.add2", "E.norm2.variance"):
        assert f"\n{stage} (" in out
    grids = re.findall(r"^  \[ (.*) \]$", out, re.M)
    assert grids and all("?" not in row for row in grids)  # every stage has certified decimals
    code, out, _ = run(capsys, write(BLOCK), "--format", "json", "--stage", "E")
    stage = json.loads(out)["stages"]["E"]
    assert stage["exact"][0][0] is None and stage["not_printed"]["1,1"] > run_module.PRINT_BUDGET
    assert stage["latex"] is None and stage["decimal"][0][0].startswith("0.17")


@pytest.mark.parametrize("example", ["encoder.toml", "heads.toml", "issue.toml"])
def test_reference_blocks_run_with_every_stage(capsys, example):
    start = time.perf_counter()
    code, out, err = run(capsys, ROOT / "examples" / "define" / example)
    assert (code, err) == (0, "")
    assert time.perf_counter() - start < 15
    grids = re.findall(r"^  \[ (.*) \]$", out, re.M)
    assert grids and all("?" not in row for row in grids)  # every stage has certified decimals
    if example == "encoder.toml":  # the encoder and decoder blocks of the reference documents print whole
        assert "not printed" not in out


# -- one definition at a time ---------------------------------------------------------------

TOO_LARGE = '''[inputs]
X = [[1, 0], [0, 1], [1, 1]]
WK = [[1, 1], [0, 1]]
[define]
P = "sinusoidal(3, 2)"
A = "attention(X + P, X + P, X + P)"
N = "layer_norm(A + X, eps = 1/100)"
F = "N @ WK"
C = "X @ WK"
'''


def test_a_definition_too_large_says_why_in_its_place(capsys, write, monkeypatch):
    monkeypatch.setattr(run_module, "RUN_NODE_LIMIT", 60)
    code, out, err = run(capsys, write(TOO_LARGE))
    assert code == 1
    assert err == "symbolic-attn: not shown: N, F (too large to compute exactly; see its place)\n"
    blocks = out.split("\n\n")
    heads = [block.splitlines()[0] for block in blocks]
    n = heads.index("N = layer_norm(A + X, eps = 1/100)")
    assert blocks[n].splitlines()[1].startswith("  not shown: ") and "more than 60 expression nodes" in blocks[n]
    assert blocks[n + 1] == "F = N @ WK\n  not shown: uses 'N', which was not computed (see N)"
    assert heads[n + 2].startswith("C = X @ WK") and heads[0].startswith("P = sinusoidal(3, 2)")
    code, out, _ = run(capsys, write(TOO_LARGE), "--format", "json")
    data = json.loads(out)
    assert code == 1 and set(data["not_shown"]) == {"N", "F"} and "C" in data["stages"] and "N" not in data["stages"]
    code, out, _ = run(capsys, write(TOO_LARGE), "--format", "latex")
    assert code == 1 and r"\mathrm{N} &\quad \text{not shown: its exact value is too large to compute}" in out
    code, out, _ = run(capsys, write(TOO_LARGE), "--stage", "N.mean", "--stage", "C")
    assert code == 1 and out.startswith("N = layer_norm") and "\n\nC = X @ WK" in out


def test_a_definition_too_slow_is_not_shown_and_the_others_are(capsys, write, monkeypatch):
    monkeypatch.setattr(run_module, "DEFINITION_SECONDS", 0.05)
    code, out, err = run(capsys, write(BLOCK.replace('[define]\n', '[define]\nC = "X + X"\n')))
    assert code == 1 and "not shown: E" in err
    assert "E = encoder_block" in out and "took more than 0.05 s to compute" in out
    assert "C[1,1] = 2" in out


# -- options ----------------------------------------------------------------------------------


def test_stage_selects_and_unknown_stage_names_the_known_ones(capsys, write):
    path = write(HALF)
    code, out, _ = run(capsys, path, "--stage", "M.head[2].weights", "--stage", "M.head[1].masked_scores")
    assert code == 0
    assert [line for line in out.splitlines() if line and not line.startswith(" ")] == [
        "M.head[2].weights (2x2)", "M.head[1].masked (2x2)"]
    code, out, err = run(capsys, path, "--stage", "M.heads")
    assert code == 2 and out == ""
    assert err.startswith("symbolic-attn: error: unknown stage 'M.heads': expected one of M, M.head[1], ")
    code, _, err = run(capsys, path, "--stage", "M.head[0]")
    assert code == 2 and "malformed stage path 'M.head[0]'" in err


def test_decimals_only(capsys, write):
    path = write(HALF)
    code, out, _ = run(capsys, path, "--decimals-only", "--stage", "M.head[1].weights")
    assert code == 0 and out == "M.head[1].weights (2x2)\n  [ 0.670  0.330 ]\n  [ 0.330  0.670 ]\n"
    code, out, _ = run(capsys, path, "--decimals-only", "--format", "json")
    assert all(set(stage) == {"shape", "decimal"} for stage in json.loads(out)["stages"].values())
    code, out, _ = run(capsys, path, "--decimals-only", "--format", "latex", "--stage", "M.head[1].weights")
    assert out == ("\\begin{align*}\nA^{(1)} &\\approx \\begin{bmatrix}0.670 & 0.330 \\\\ 0.330 & 0.670\\end{bmatrix}"
                   "\n\\end{align*}\n")


def test_markdown_is_a_heading_and_a_display_per_stage(capsys, write):
    code, out, _ = run(capsys, write(HALF), "--format", "markdown", "--stage", "M", "--stage", "M.head[1].weights")
    assert code == 0
    assert out.startswith("#### `M` = `multihead(X, heads = [[I2, I2, I2], [I2, I2, I2]], WO = [[1/2], [0], [0], [1/2]])`"
                          "\n\n$$\n\\begin{aligned}\n\\mathrm{M} &= ")
    assert "#### `M.head[1].weights`\n\n$$\n\\begin{aligned}\nA^{(1)} &= " in out
    assert out.count("$$") == 4


def test_output_is_byte_stable(capsys, write):
    path = write(BLOCK)
    first = run(capsys, path, "--format", "json")
    assert run(capsys, path, "--format", "json") == first


# -- labels --------------------------------------------------------------------------------------

LABELS = [
    ("M.head[1].weights", "A^{(1)}", "A^{(1)}_{1,2}"),
    ("A.weights", "A", "A_{1,2}"),
    ("A", r"\mathrm{A}", r"\mathrm{A}_{1,2}"),
    ("M.head[2].output", "Z^{(2)}", "Z^{(2)}_{1,2}"),
    ("M.concat", "C", "C_{1,2}"),
    ("Enc.norm1.variance", r"\sigma^{2}_{1}", r"\left(\sigma^{2}_{1}\right)_{1,2}"),
    ("Enc.norm2", r"\mathrm{LN}_{2}", r"\left(\mathrm{LN}_{2}\right)_{1,2}"),
    ("Dec.self_attention.head[1].masked", r"\tilde{S}^{(1)}_{\mathrm{self}}", r"\left(\tilde{S}^{(1)}_{\mathrm{self}}\right)_{1,2}"),
    ("F.activated", r"\phi(H)", r"\left(\phi(H)\right)_{1,2}"),
]


@pytest.mark.parametrize("path,label,entry", LABELS, ids=[c[0] for c in LABELS])
def test_latex_labels_are_mathematical(path, label, entry):
    assert (stage_label(path), entry_label(path, 1, 2)) == (label, entry)


def test_run_latex_has_no_text_labels(capsys):
    code, out, _ = run(capsys, ROOT / "examples" / "define" / "issue.toml", "--format", "latex")
    assert code == 0 and r"\text{M.head" not in out and r"A^{(1)}" in out


def test_readme_shows_the_label_table_and_the_bounds():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert markdown_table() in readme
    assert f"more than {run_module.PRINT_BUDGET} expression nodes is not printed" in readme
    assert f"over {run_module.RUN_NODE_LIMIT:,} nodes, or more than {run_module.DEFINITION_SECONDS:g} s of work" in readme


def test_latex_compiles_without_overfull_boxes(capsys, write, tmp_path):
    import shutil
    import subprocess

    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        pytest.skip("pdflatex is not installed")
    bodies = []
    for text in (HALF, IDENTITIES, BLOCK, TOO_LARGE):
        code, out, _ = run(capsys, write(text), "--format", "latex")
        bodies.append(out)
    (tmp_path / "run.tex").write_text("\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n"
                                      + "\n".join(bodies) + "\n\\end{document}\n", encoding="utf-8")
    compiled = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "run.tex"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert compiled.returncode == 0, compiled.stdout[-1500:]
    log = (tmp_path / "run.log").read_text(errors="replace")
    assert re.findall(r"Overfull \\hbox \([0-9.]+pt too wide\)", log) == []


POST_PRE = '''[inputs]
X = [[1, 0, 2], [0, 1, 1], [2, 1, 0]]
W1 = [[1, -1, 0], [0, 1, 1], [1, 0, -1]]
W2 = [[1, 0, 1], [0, 1, 0], [1, 1, 0]]
[define]
Post = "encoder_block(X, heads = [[I3, I3, I3]], WO = I3, W1 = W1, W2 = W2, norm = 'post')"
Pre = "encoder_block(X, heads = [[I3, I3, I3]], WO = I3, W1 = W1, W2 = W2, norm = 'pre')"
Diff = "Post - Pre"
'''


def test_post_ln_pre_ln_and_their_difference(capsys, write):
    """The issue's hidden case: both blocks on a 3x3 input, and their difference."""
    start = time.perf_counter()
    code, out, err = run(capsys, write(POST_PRE), "--stage", "Diff", "--format", "json")
    assert (code, err) == (0, "") and time.perf_counter() - start < 20
    decimals = json.loads(out)["stages"]["Diff"]["decimal"]
    assert decimals[0][0].startswith("-1.76")


def test_attention_text_shares_the_canonical_form():
    from symbolic_attn.model.attention import attention_from_scores
    from symbolic_attn.render.display import json_report, text_report

    result = attention_from_scores([["0"]], [["(1 + sqrt(2))**2 - 2*sqrt(2)"]])  # exactly 3, in disguise
    assert "sqrt" in str(result.output[0, 0])
    assert "Z[1,1] = 3\n" in text_report(result) + "\n"
    assert json.loads(json_report(result))["output"]["exact"][0][0] == "3"


def test_numbers_that_grow_too_large_stop_only_their_definitions(capsys, write):
    """D_k = D_{k-1} @ D_{k-1} doubles the digits: the first past the bound and the ones
    using it are not shown; the file's other definitions are."""
    chain = "".join(f'D{k} = "D{k - 1} @ D{k - 1}"\n' for k in range(1, 16))
    code, out, err = run(capsys, write('[inputs]\nX = [[3, 1], [1, 2]]\n[define]\nD0 = "X"\n' + chain + 'C = "X + X"\n'))
    assert code == 1 and "C[1,1] = 6" in out and "D10[1,1] = " in out
    assert re.search(r"^D12 = D11 @ D11\n  not shown: a number of about \d+ digits .* exceeds the limit of 1200 digits$", out, re.M)
    assert "D15 = D14 @ D14\n  not shown: uses 'D14', which was not computed (see D14)" in out


def test_a_ball_of_a_vanishing_exponential_is_never_made_a_fraction():
    """exp(-10**1000) has an arb ball whose radius is 2**-(~10**1000): the canonical form
    must not turn it into a Fraction (that hung `attention --scores "[[-10**1000, 0]]"`)."""
    import subprocess
    import sys

    code = ("import sympy\nfrom symbolic_attn.render.exact_text import Canonical\n"
            "tiny = sympy.exp(-sympy.Integer(10)**1000)\nvalue = (2 + tiny) / (1 + tiny)\n"
            "print(Canonical()(value) == value, Canonical()(tiny - tiny + 1))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.split() == ["True", "1"], done.stdout + done.stderr


def test_check_and_grade_take_the_block_run_shows(capsys, write):
    """`check` and `grade` read a computation file under the same node bound as `run`: the
    issue's block (closed forms of thousands of nodes) is judged, not refused, and a wrong
    number is still wrong."""
    from symbolic_attn.grading.answer_key import parse_answer_key
    from symbolic_attn.grading.batch import grade
    from symbolic_attn.grading.report import check_exercise
    from symbolic_attn.grading.exercise import parse_exercise
    from symbolic_attn.grading.submissions import parse_submission

    _, out, _ = run(capsys, write(BLOCK), "--format", "json", "--stage", "E", "--digits", "3")
    right = [str(Decimal(d).quantize(Decimal("0.001"))) for d in json.loads(out)["stages"]["E"]["decimal"][0]]
    claims = (f'[[claims]]\nquantity = "E"\nrow = 1\nvalue = "[{", ".join(right)}]"\n'
              '[[claims]]\nquantity = "E"\nrow = 1\nvalue = "[0.171, 0, 0, 0]"\n')
    report = check_exercise(parse_exercise(BLOCK + claims, source="block.toml"))
    assert [o.verdict for o in report.outcomes] == ["pass", "fail"]
    assert report.outcomes[1].wrong == [(1, 2), (1, 3), (1, 4)]
    key = parse_answer_key(BLOCK + '[[questions]]\nname = "out"\nquantity = "E"\nrow = 1\npoints = 4\n', source="key.toml")
    assert grade(key, "ann", parse_submission(f"out = [{', '.join(right)}]")).questions[0].verdict == "pass"
    assert grade(key, "bob", parse_submission("out = [0.171, 0, 0, 0]")).questions[0].verdict == "fail"
