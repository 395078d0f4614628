"""notes.tex: inputs every result, holds the worked examples, compiles; derive --pdf and --format md."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from symbolic_attn.notes import build, document as notes, worked
from symbolic_attn.proofs import scripts as derivation_scripts
from symbolic_attn.render.blocks import Figure, Math
from symbolic_attn.cli import main

OUT = Path(__file__).resolve().parent.parent / "out"


@pytest.fixture(scope="module")
def results():
    return derivation_scripts.verify_all(derivation_scripts.load_scripts())


@pytest.fixture(scope="module")
def notes_tex(results):
    return notes.notes_document(results)["notes.tex"]


def test_notes_is_a_builder_and_committed(notes_tex):
    assert notes.notes_document in build.BUILDERS
    assert (OUT / "notes.tex").read_text(encoding="utf-8") == notes_tex, "run `symbolic-attn derive`"


def test_byte_stable(results, notes_tex):
    again = notes.notes_document(results)["notes.tex"]
    assert again == notes_tex and notes_tex.endswith("\n") and "\r" not in notes_tex
    for leak in ("/work", "/tmp", "0.1.0", "2026", "\\today"):
        assert leak not in notes_tex


def test_inputs_every_result_and_names_the_packages(results, notes_tex):
    for result in results:
        assert f"\\input{{{result.name}}}" in notes_tex
        assert f"\\label{{{result.name}}}\n" in notes_tex  # a numbered section per result
    # A contents list instead of index.tex (each section states its own scope); the audit
    # of every step in an appendix.
    assert "\\tableofcontents" in notes_tex and "\\input{index}" not in notes_tex
    assert "\\appendix\n\\section{How each step was checked}\\label{audit}\n\\input{audit}" in notes_tex
    assert "% Each result file (<NAME>.tex) is a fragment: \\input it into any LaTeX document whose" in notes_tex
    assert notes.FRAGMENT_PACKAGES == ("amsmath",)


@pytest.mark.parametrize("text", [
    r"\begin{bmatrix}0.284 & 0.140 & 0.576\end{bmatrix}",   # 000: rises
    r"\begin{bmatrix}0.860 & 1.432\end{bmatrix}",           # 000: output
    r"\begin{bmatrix}\frac{2}{3} & \frac{4}{3}\end{bmatrix}",  # 000: zero query
    r"z^{\mathrm{causal}}_1 &= \begin{bmatrix}1 & 0\end{bmatrix}",  # 000: causal grid
    r"\approx \begin{bmatrix}0.000 & 1.152\end{bmatrix}",    # 000: override moves by 2 a_33
    r"\begin{bmatrix}\frac{5}{3} & \frac{7}{6}\end{bmatrix}",  # 002
    r"\begin{bmatrix}\frac{1}{3} & \frac{40}{3}\end{bmatrix}",  # 002: value (0, 20)
    r"\approx \begin{bmatrix}0.330 & 0.670 & 0.000\end{bmatrix}",  # 004: causal row 2
    r"\approx \begin{bmatrix}1.604 & 1.198\end{bmatrix}",   # 004: Z row 1
    "so the correct rounding is $0.503$",                   # 004 prints 0.504
], ids=["rises", "rises-output", "zero-query", "causal-grid", "override", "row-output", "row-replaced",
        "by-hand-causal", "by-hand-Z", "rounding"])
def test_worked_examples_show_exact_values_and_decimals(notes_tex, text):
    assert text in notes_tex


def test_examples_have_figures_and_steps():
    blocks = worked.all_examples()
    assert sum(isinstance(b, Figure) for b in blocks) == 4
    assert sum(isinstance(b, Math) for b in blocks) > 15
    titles = [b.text for b in blocks if hasattr(b, "text")]
    for step in ("1. Compare", "2. Scale", "3. Normalize", "4. Combine", "With the causal mask",
                 "Intervention 1: a zero query", "Intervention 2: causal visibility",
                 "Intervention 3: the value override $2 \\to 4$", "Zeroing instead of masking (a mistake)"):
        assert step in titles


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _pdflatex():
    found = shutil.which("pdflatex")
    if found is None:
        pytest.fail("pdflatex not found: install texlive-latex-base texlive-latex-recommended texlive-pictures")
    return found


def test_committed_notes_compile_without_errors_or_overfull_boxes(tmp_path):
    for tex in OUT.glob("*.tex"):
        shutil.copy(tex, tmp_path)
    run = subprocess.run([_pdflatex(), "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "notes.tex"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    errors = [line for line in run.stdout.splitlines() if line.startswith("!")]
    assert run.returncode == 0 and not errors, errors or run.stdout[-2000:]
    assert (tmp_path / "notes.pdf").stat().st_size > 50_000
    log = (tmp_path / "notes.log").read_text(encoding="latin-1")
    # Nothing sticks out into the margin: not the results, not the worked examples.
    assert "symbolic-attn: worked examples" in log
    overfull = [line for line in log.splitlines() if line.startswith("Overfull")]
    assert not overfull, overfull


def test_derive_pdf_writes_notes_pdf(tmp_path, capsys):
    _pdflatex()
    assert main(["derive", "--out", str(tmp_path), "--pdf"]) == 0
    assert (tmp_path / "notes.pdf").read_bytes().startswith(b"%PDF")
    assert capsys.readouterr().out.splitlines()[-1] == str(tmp_path / "notes.pdf")
    assert oct(os.stat(tmp_path / "notes.pdf").st_mode & 0o777) == oct(0o666 & ~_umask())
    assert not list(tmp_path.glob("*.aux")) and not list(tmp_path.glob("*.log"))


def test_derive_pdf_without_pdflatex_says_so_in_one_line_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert main(["derive", "--out", str(tmp_path / "o"), "--pdf"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("symbolic-attn: error: --pdf needs pdflatex, which is not on PATH")
    assert err.endswith("; nothing was written\n")
    assert not (tmp_path / "o").exists()


def test_derive_format_md_writes_only_notes_md(tmp_path, capsys):
    assert main(["derive", "--out", str(tmp_path), "--format", "md"]) == 0
    # notes.md and the figures it links, as SVG files beside it.
    figures = [f"notes-figure-{n}.svg" for n in range(1, 5)]
    assert sorted(p.name for p in tmp_path.iterdir()) == figures + ["notes.md"]
    for name in figures + ["notes.md"]:
        assert (tmp_path / name).read_bytes() == (OUT / name).read_bytes(), f"{name}: run `symbolic-attn derive --format md`"
        assert f"]({name})" in (OUT / "notes.md").read_text(encoding="utf-8") or name == "notes.md"
    assert main(["derive", "--out", str(tmp_path), "--format", "md", "--pdf"]) == 2
    assert "--pdf compiles notes.tex, so it needs --format tex" in capsys.readouterr().err
