"""``symbolic-attn attention``: stages on stdout; bad input is one line on stderr, exit 2."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from symbolic_attn.cli import main

BY_HAND = ["--q", "[[1,0],[0,1],[1,1]]", "--k", "[[1,0],[0,1],[1,1]]", "--v", "[[2,0],[0,2],[2,2]]"]


def run(capsys, *argv):
    code = main(["attention", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_shows_every_stage_exact_beside_decimals(capsys):
    code, out, err = run(capsys, *BY_HAND, "--mask", "causal")
    assert code == 0 and err == ""
    assert "scale sqrt(2)/2 (1/sqrt(d_k)); mask causal" in out
    assert "  [ 0.330  0.670      · ]" in out  # issue 21: a weight the mask makes exactly 0 is marked
    assert "A[2,1] = 1/(1 + exp(sqrt(2)/2))  ≈ 0.330" in out
    assert "Z[1,1] = 2" not in out  # issue 21: no closed-form line for a rational entry by default
    code, out, err = run(capsys, *BY_HAND, "--mask", "causal", "--exact", "all")
    assert "Z[1,1] = 2" in out and "A[1,2] = 0  (blocked)" in out


def test_json_schema(capsys):
    code, out, _ = run(capsys, "--scores", "[[0, ln(2), ln(3)]]", "--v", "[[1,0],[0,2],[3,1]]", "--format", "json")
    data = json.loads(out)
    assert data["shape"] == {"n": 1, "m": 3, "d_k": None, "d_v": 2}
    assert data["weights"]["exact"] == [["1/6", "1/3", "1/2"]]
    assert data["output"]["exact"] == [["5/3", "7/6"]]
    assert data["weights"]["decimal"][0][0] == "0.166666666666666666666666666667"
    assert data["scores"]["decimal"][0][1] == "0.693147180559945309417232121458"
    assert data["weights"]["latex"] == r"\begin{bmatrix}\frac{1}{6} & \frac{1}{3} & \frac{1}{2}\end{bmatrix}"
    for stage in ("scores", "scaled", "weights", "output"):
        assert set(data[stage]) == {"exact", "latex", "decimal"}


def test_latex_is_align_blocks(capsys):
    code, out, _ = run(capsys, *BY_HAND, "--format", "latex", "--digits", "2")
    assert out.startswith(r"\begin{align*}") and out.rstrip().endswith(r"\end{align*}")
    assert out.count(r"\begin{align*}") == out.count(r"\end{align*}") == 4  # one per stage
    assert r"\approx \begin{bmatrix}0.40 & 0.20 & 0.40" in out


def test_masks_and_scales(capsys):
    code, out, _ = run(capsys, *BY_HAND, "--mask", "block:[[0,1,1],[0,0,1],[0,0,0]]", "--scale", "none")
    assert code == 0 and "; mask block:[[0,1,1],[0,0,1],[0,0,0]] (= causal)\n" in out and "scale 1 (none)" in out
    code, out, _ = run(capsys, *BY_HAND, "--mask", "keep:[[1,0,0],[1,1,0],[1,1,1]]", "--scale", "1/2")
    assert code == 0 and "mask keep:[[1,0,0],[1,1,0],[1,1,1]] (= causal)" in out and "scale 1/2" in out
    code, out, _ = run(capsys, *BY_HAND, "--mask", "causal")
    assert code == 0 and out.splitlines()[0].endswith("; mask causal")


@pytest.mark.parametrize(
    "spec, header",
    [
        ("block:[[1]]", "; mask block:[[1]]"),  # not 'keep [[0]]': echoed as given
        ("keep: [[0]]", "; mask keep: [[0]]"),
        ("padding:0", "; mask padding:0"),
        ("keep:[[0]]", "; mask keep:[[0]]"),
        ("none", "; mask none"),
    ],
    ids=["block", "keep-spaced", "padding", "keep", "none"],
)
def test_mask_is_echoed_as_given(capsys, spec, header):
    code, out, _ = run(capsys, "--q", "[[1]]", "--k", "[[1]]", "--v", "[[1]]", "--mask", spec, "--empty-row", "zeros")
    assert code == 0 and out.splitlines()[0].endswith(header)


def test_mask_echo_escapes_control_characters(capsys):
    code, out, _ = run(capsys, "--q", "[[1]]", "--k", "[[1]]", "--v", "[[1]]", "--mask", "keep:[[1]\n]")
    assert code == 0 and out.splitlines()[0].endswith("; mask keep:[[1]\\n] (= none)")


def test_version(capsys):
    from symbolic_attn.cli import __version__

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out == f"symbolic-attn {__version__}\n"
    project = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
    assert f'version = "{__version__}"' in project


@pytest.mark.parametrize("where", ["before", "after"])
def test_timeout_names_what_was_computed(where):
    heavy = ["--scores", "[[(1+sqrt(2))**256 - (3+2*sqrt(2))**128 + 1/2000, 0]]", "--v", "[[1],[0]]"]
    timeout = ["--timeout", "0.05"]
    argv = [*timeout, "attention", *heavy] if where == "before" else ["attention", *heavy, *timeout]
    completed = subprocess.run([sys.executable, "-m", "symbolic_attn", *argv], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 2 and completed.stdout == ""
    assert re.fullmatch(
        r"symbolic-attn: error: time limit of 0\.05 s reached while [a-z].*\(allow more with --timeout SECONDS, 0 for no limit\)\n",
        completed.stderr,
    )


@pytest.mark.parametrize("value", ["-1", "1e9", "nan", "inf", "99999999", "", "\x1b"], ids=["negative", "exponent", "nan", "inf", "huge", "empty", "escape"])
def test_timeout_values_are_checked(capsys, value):
    with pytest.raises(SystemExit) as exit_:
        main(["--timeout", value, "attention", "--v", "[[1]]"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1 and "argument --timeout" in err and "\x1b" not in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--q", "[[1,0]]", "--k", "[[1,0,1]]", "--v", "[[1]]"], r"Q is 1x2 and K is 1x3: queries and keys must have the same width d_k"),
        ([*BY_HAND, "--mask", "upper"], r"--mask: unknown mask 'upper'"),
        ([*BY_HAND, "--mask", "keep:[[1,1],[1,1]]"], r"--mask keep: the grid is 2x2, the scores are 3x3"),
        ([*BY_HAND, "--mask", "keep:[[0,0,0],[1,0,0],[1,1,1]]"], r"row 1 allows no key"),
        (["--q", "[[0.1]]", "--k", "[[__import__('os').system('echo pwned')]]", "--v", "[[1]]"], r"only named functions"),
        (["--q", "[[9**9**9**9]]", "--k", "[[1]]", "--v", "[[1]]"], r"exponent 387420489 at column 6 exceeds the limit"),
        (["--q", "[[x]]", "--k", "[[1]]", "--v", "[[1]]"], r"unknown name 'x'"),
        (["--scores", "[[1]]", "--v", "[[1]]", "--scale", "default"], r"--scale default needs d_k"),
        (["--v", "[[1]]"], r"give --q and --k"),
        ([*BY_HAND, "--digits", "1000"], r"--digits must be a whole number between 0 and 100, got '1000'"),
        ([*BY_HAND, "--digits", "\u0663"], r"--digits must be a whole number between 0 and 100"),
        ([*BY_HAND, "--scale", "1/0"], r"^symbolic-attn: error: --scale: division by zero at column 1 in \"1/0\"$"),
        ([*BY_HAND, "--scale", "0.5e999"], r"^symbolic-attn: error: --scale: decimal exponent 999"),
        (["--q", "[[1,0],[0,1]", "--k", "[[1]]", "--v", "[[1]]"], r"^symbolic-attn: error: --q: unclosed '\[' opened at column 1: no matching '\]'"),
        (["--q", "[[1,0],[0,1)]", "--k", "[[1]]", "--v", "[[1]]"], r"^symbolic-attn: error: --q: '\)' at column 12 does not match '\[' opened at column 8"),
        (["--scores", "[[((1+sqrt(2))**100)**7 - ((3+2*sqrt(2))**50)**7 + 1/2000]]", "--v", "[[1]]"], r"^symbolic-attn: error: --scores: a power of degree 700 built at column 3 exceeds the limit of 256 \(\(1 \+ sqrt\(2\)\)\*\*700\)$"),
        ([*BY_HAND, "--mask", "none:"], r"--mask: unknown mask 'none:'"),
        ([*BY_HAND, "--mask", "padding:²"], r"--mask padding: expected a whole number of valid keys, got '²'"),
        (["--q", "[[10**999*10**999]]", "--k", "[[1]]", "--v", "[[1]]"], r"--q: a number of about \d+ digits built"),
        (["--q", "[[pi**pi**pi**pi]]", "--k", "[[1]]", "--v", "[[1]]"], r"exponents beyond \+-6900 are refused \(the value is beyond 10\^3000\)"),
        (["--q", "[[0x" + "f" * 1000 + "]]", "--k", "[[1]]", "--v", "[[1]]"], r"--q: a number with 1002 digits"),
        (["--q", "[[(-1)**(1/2)]]", "--k", "[[1]]", "--v", "[[1]]"], r"--q: I is not a real number"),
        (["--q", str([[1]] * 17), "--k", "[[1]]", "--v", "[[1]]"], r"17 queries \(n\) exceed the attention command's limit of 16"),
    ],
    ids=["shape", "mask-kind", "mask-shape", "empty-row", "code", "power", "name", "scale", "missing", "digits", "digits-unicode", "scale-zero-division", "scale-exponent", "unclosed-bracket",
         "mismatched-bracket", "merged-power",
         "none-colon", "unicode-digit", "big-product", "huge-value", "hex", "complex", "too-many-queries"],
)
def test_bad_input_is_one_line_exit_2(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("symbolic-attn: error: ")
    assert re.search(message, err)


def test_empty_row_policy_option(capsys):
    code, out, _ = run(capsys, *BY_HAND, "--mask", "keep:[[0,0,0],[1,0,0],[1,1,1]]", "--empty-row", "zeros")
    assert code == 0 and "  [     ·      ·      · ]" in out  # zeros by the mask, marked (issue 21)


def test_console_entry_point_and_module_run_in_a_real_process():
    completed = subprocess.run(
        [sys.executable, "-m", "symbolic_attn", "attention", "--q", "[[1]]", "--k", "[[1]]", "--v", "[[1]]", "--mask", "foo:1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.returncode == 2
    assert completed.stderr.startswith("symbolic-attn: error: --mask: unknown mask") and "Traceback" not in completed.stderr
    usage = subprocess.run([sys.executable, "-m", "symbolic_attn", "attention", "--bogus"], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and usage.stderr.count("\n") == 1


def test_latex_output_compiles_with_pdflatex(capsys, tmp_path):
    import shutil

    code, out, _ = run(capsys, *BY_HAND, "--mask", "causal", "--format", "latex")
    assert code == 0 and r"M &= \begin{bmatrix}1 & 0 & 0" in out and r"\operatorname{softmax}_M(S')" in out
    document = "\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n" + out + "\\end{document}\n"
    (tmp_path / "stages.tex").write_text(document)
    pdflatex = shutil.which("pdflatex")
    assert pdflatex, "pdflatex is required (CI installs texlive-latex-base)"
    compiled = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "stages.tex"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert compiled.returncode == 0, compiled.stdout[-1500:]


def test_readme_bad_input_examples_are_the_real_output(capsys):
    import shlex

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Bad input") :]
    block = section[section.index("```text") + len("```text") : section.index("```", section.index("```text") + 7)]
    lines = block.strip().splitlines()
    examples = [(lines[i], lines[i + 1]) for i in range(0, len(lines), 2)]
    assert len(examples) >= 5
    for command, expected in examples:
        argv = shlex.split(command.removeprefix("$ "))
        assert argv[0] == "symbolic-attn"
        assert main(argv[1:]) == 2
        assert capsys.readouterr().err == expected + "\n"


LATEX_CASES = {
    "by-hand-causal": [*BY_HAND, "--mask", "causal"],
    "digits-100": [*BY_HAND, "--digits", "100"],
    "sixteen-tokens": [
        "--q", str([[(i * j + i) % 5 for j in range(4)] for i in range(16)]),
        "--k", str([[(i + 2 * j) % 3 for j in range(4)] for i in range(16)]),
        "--v", str([[i % 4, 1] for i in range(16)]), "--mask", "causal",
    ],
    "huge-numbers": ["--scores", "[[0, 1]]", "--v", "[[10**1000, 1/3**600], [1, 2]]"],
    "long-sums": ["--scores", "[[" + "+".join(f"sqrt({k})" for k in range(2, 60)) + ", 0, e]]", "--v", "[[1],[2],[3]]"],
    "products-and-functions": [
        "--scores", "[[" + "*".join(f"log({k})" for k in range(2, 40)) + ", sin(1)*cos(2)*" + "*".join(f"sqrt({k})" for k in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)) + "]]",
        "--v", "[[1, 2, 3], [2, 3, 4]]",
    ],
    "sixteen-columns": ["--scores", str([[f"{i}/{j + 7}" for j in range(16)] for i in range(3)]).replace("'", ""), "--v", str([[1]] * 16), "--digits", "10"],
    "scale-and-keep-mask": [
        "--q", "[[1,2,3,4]]", "--k", "[[1,2,3,4],[4,3,2,1],[0,1,0,1],[1,1,1,1]]", "--v", "[[1],[2],[3],[4]]",
        "--scale", "1/3 + sqrt(5)/7", "--mask", "keep:[[1,0,1,1]]",
    ],
}


def _overfull_boxes(tmp_path, body: str) -> list[str]:
    import shutil

    pdflatex = shutil.which("pdflatex")
    assert pdflatex, "pdflatex is required (CI installs texlive-latex-base)"
    document = "\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n" + body + "\n\\end{document}\n"
    (tmp_path / "fit.tex").write_text(document)
    compiled = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "fit.tex"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert compiled.returncode == 0, compiled.stdout[-1500:]
    log = (tmp_path / "fit.log").read_text(errors="replace")
    return re.findall(r"Overfull \\hbox \([0-9.]+pt too wide\)", log)


def test_every_latex_display_fits_the_text_width(capsys, tmp_path):
    bodies = []
    for name, argv in LATEX_CASES.items():
        code, out, err = run(capsys, *argv, "--format", "latex")
        assert code == 0 and err == "", name
        bodies.append(f"\\section*{{{name}}}\n{out}")
    assert _overfull_boxes(tmp_path, "\n".join(bodies)) == []


def test_the_overfull_check_can_fail(tmp_path):
    """The one-line layout this replaced (exact weights, then decimals) overflows the page."""
    from symbolic_attn.model.attention import attention
    from symbolic_attn.render.latex import matrix_latex

    result = attention([[1, 0], [0, 1], [1, 1]], [[1, 0], [0, 1], [1, 1]], [[2, 0], [0, 2], [2, 2]])
    weights = matrix_latex(result.weights, order="none")
    body = "\\begin{align*}\nA &= \\operatorname{softmax}(S') = " + weights + " \\approx " + weights + "\n\\end{align*}"
    assert _overfull_boxes(tmp_path, body)
