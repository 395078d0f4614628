"""Every committed out/*.tex compiles with pdflatex inside a minimal amsmath document.

Not skipped when pdflatex is missing: CI installs texlive-latex-base and
texlive-latex-recommended, and a missing TeX must fail loudly rather than pass silently.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

OUT = Path(__file__).resolve().parent.parent / "out"
FILES = sorted(OUT.glob("*.tex"))
WRAPPER = "\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n\\input{fragment}\n\\end{document}\n"


def test_there_is_something_to_compile():
    assert {f.name for f in FILES} >= {"index.tex", "shift_invariance.tex"}


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_compiles_with_pdflatex(path, tmp_path):
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        pytest.fail("pdflatex not found: install texlive-latex-base and texlive-latex-recommended")
    # A complete document (one with \documentclass) compiles as it is.
    source = path.read_text(encoding="utf-8")
    if "\\documentclass" in source:
        (tmp_path / "main.tex").write_text(source, encoding="utf-8")
        for other in FILES:  # a complete document (notes.tex) may \input the others
            shutil.copy(other, tmp_path)
    else:
        shutil.copy(path, tmp_path / "fragment.tex")
        (tmp_path / "main.tex").write_text(WRAPPER, encoding="utf-8")
    run = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "main.tex"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    errors = [line for line in run.stdout.splitlines() if line.startswith("!")]
    assert run.returncode == 0, f"{path.name} does not compile: {errors or run.stdout[-2000:]}"
    assert (tmp_path / "main.pdf").exists()
