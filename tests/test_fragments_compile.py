"""Every generated fragment fits any document: a bare ``article`` with only amsmath (no
overfull box), a ``beamer`` frame at beamer's default size and in ``\\footnotesize`` (no
overfull box, and nothing runs off the bottom of a slide: the frame breaks), and the
notes -- each checked by compiling with pdflatex and reading the log.  Fragments hold no
sectioning command; long chains break.

Not skipped when pdflatex is missing: CI installs texlive-latex-base,
texlive-latex-recommended (amsmath, beamer) and texlive-pictures; a missing TeX must fail.
"""

import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
import sympy

from symbolic_attn.cli import main
from symbolic_attn.notes.fragment import fragment_latex, sheet
from symbolic_attn.proofs.chain import Derivation, Step
from symbolic_attn.proofs.result import Result

OUT = Path(__file__).resolve().parent.parent / "out"
FRAGMENTS = sorted(p for p in OUT.glob("*.tex") if p.name != "notes.tex")
ARTICLE = "\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n\\input{fragment}\n\\end{document}\n"
# As the README says: a frame that may break, at beamer's default size (11pt) ...
BEAMER_DEFAULT = ("\\documentclass{beamer}\n\\begin{document}\n\\begin{frame}[allowframebreaks]{A result}\n"
                  "\\input{fragment}\n\\end{frame}\n\\end{document}\n")
# ... or in \footnotesize, for more on a slide.
BEAMER = BEAMER_DEFAULT.replace("\\input{fragment}", "\\footnotesize\n\\input{fragment}")
SECTIONING = re.compile(r"\\(part|chapter|section|subsection|subsubsection|paragraph|subparagraph)\b")


def pdflatex():
    found = shutil.which("pdflatex")
    if found is None:
        pytest.fail("pdflatex not found: install texlive-latex-base texlive-latex-recommended texlive-pictures")
    return found


def compile_log(folder: Path, main_tex: str, runs: int = 1) -> str:
    """Compile ``main.tex`` in ``folder``; fail on an error; return the log."""
    (folder / "main.tex").write_text(main_tex, encoding="utf-8")
    for _ in range(runs):
        run = subprocess.run([pdflatex(), "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "main.tex"],
                             cwd=folder, capture_output=True, text=True, errors="replace", timeout=300)
        errors = [line for line in run.stdout.splitlines() if line.startswith("!")]
        assert run.returncode == 0 and not errors, errors or run.stdout[-2000:]
    return (folder / "main.log").read_text(encoding="latin-1")


def overfull(log: str) -> list:
    return [line for line in log.splitlines() if line.startswith("Overfull \\hbox")]


def runs_off_a_slide(log: str) -> list:
    """A frame's content taller than the slide by more than a rounding (lost at its bottom)."""
    return [line for line in log.splitlines() if (found := re.match(r"Overfull \\vbox \(([0-9.]+)pt", line))
            and float(found.group(1)) > 1.0]


def test_there_are_fragments():
    assert {p.name for p in FRAGMENTS} >= {"shift_invariance.tex", "index.tex", "audit.tex"}


@pytest.mark.parametrize("path", FRAGMENTS, ids=[p.name for p in FRAGMENTS])
def test_no_sectioning_command(path):
    assert not SECTIONING.search(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", FRAGMENTS, ids=[p.name for p in FRAGMENTS])
def test_fragment_fits_a_bare_article(path, tmp_path):
    shutil.copy(path, tmp_path / "fragment.tex")
    log = compile_log(tmp_path, ARTICLE)
    assert overfull(log) == [], f"{path.name} runs into the margin of a bare article"


@pytest.mark.parametrize("main_tex", [BEAMER_DEFAULT, BEAMER], ids=["default-size", "footnotesize"])
@pytest.mark.parametrize("path", FRAGMENTS, ids=[p.name for p in FRAGMENTS])
def test_fragment_fits_a_beamer_frame(path, tmp_path, main_tex):
    shutil.copy(path, tmp_path / "fragment.tex")
    # Nothing sticks out sideways; a long result is taller than one slide: the frame
    # breaks (between the steps of a chain too), and nothing is lost below the last one.
    log = compile_log(tmp_path, main_tex)
    assert overfull(log) == [], f"{path.name} runs into a slide's margin"
    assert runs_off_a_slide(log) == [], f"{path.name} runs off the bottom of a slide"


def test_the_notes_compile_with_every_reference_resolved(tmp_path):
    for path in OUT.glob("*.tex"):
        shutil.copy(path, tmp_path)
    log = compile_log(tmp_path, (OUT / "notes.tex").read_text(encoding="utf-8"), runs=2)
    assert overfull(log) == []
    assert "undefined" not in log.lower() and "multiply defined" not in log.lower()


def test_the_readme_example_fits(tmp_path):
    # The README's own example: a bare article, amsmath only, a heading of the user's own.
    shutil.copy(OUT / "shift_invariance.tex", tmp_path)
    log = compile_log(tmp_path, "\\documentclass{article}\n\\usepackage{amsmath}\n\\begin{document}\n"
                                "\\section{Shift invariance}\n\\input{shift_invariance}\n"
                                "By \\eqref{shift_invariance:1.3}, the factor comes out.\n\\end{document}\n", runs=2)
    assert overfull(log) == [] and "undefined" not in log.lower()


x = sympy.Symbol("x")


def _long_chain(steps: int) -> Result:
    """A chain of many small true steps: (x + 1)^2 rewritten back and forth."""
    square, expanded = (x + 1) ** 2, x**2 + 2 * x + 1
    chain = [Step(expanded if k % 2 == 0 else square, "expand" if k % 2 == 0 else "factor") for k in range(steps)]
    return Result("long_chain", "A long chain", "", [Derivation("Back and forth", square, chain)])


def test_a_long_chain_breaks_across_pages(tmp_path):
    (tmp_path / "fragment.tex").write_text(fragment_latex(sheet(_long_chain(80))), encoding="utf-8")
    log = compile_log(tmp_path, ARTICLE)
    assert overfull(log) == [] and "Output written on main.pdf (3 pages" in " ".join(log.split())


def test_a_long_chain_breaks_across_frames(tmp_path):
    (tmp_path / "fragment.tex").write_text(fragment_latex(sheet(_long_chain(80))), encoding="utf-8")
    log = compile_log(tmp_path, BEAMER_DEFAULT)
    assert overfull(log) == [] and runs_off_a_slide(log) == []
    assert int(re.search(r"Output written on main.pdf \((\d+) pages", " ".join(log.split())).group(1)) > 5


def test_a_wide_step_is_broken_between_terms(tmp_path):
    wide = sum(sympy.exp(sympy.sqrt(k) * x) for k in range(2, 30))
    result = Result("wide", "A wide step", "", [Derivation("Wide", wide, [Step(sympy.expand(wide), "expand")])])
    text = fragment_latex(sheet(result))
    (tmp_path / "fragment.tex").write_text(text, encoding="utf-8")
    assert overfull(compile_log(tmp_path, ARTICLE)) == []
    assert "\\label{wide:1.1}" in text and text.count("\\notag") >= 3  # the start alone, the right side in lines


SCRIPT = '''
"""Two one-liners."""
import sympy
from symbolic_attn.proofs.chain import Derivation, Scope, Step

NAME = "{name}"
x = sympy.Symbol("x")


def build():
    return Derivation("One line", x + x, [Step(2 * x, "add")], scope=Scope.proved("every x"))
'''


def test_a_users_fragments_fit_too(tmp_path):
    for name in ("first", "second"):
        (tmp_path / "mine").mkdir(exist_ok=True)
        (tmp_path / "mine" / f"{name}.py").write_text(textwrap.dedent(SCRIPT.format(name=name)), encoding="utf-8")
    assert main(["derive", str(tmp_path / "mine"), "--out", str(tmp_path / "out"), "--jobs", "1"]) == 0
    for name in ("first", "second", "index", "audit"):
        shutil.copy(tmp_path / "out" / f"{name}.tex", tmp_path / "fragment.tex")
        assert overfull(compile_log(tmp_path, ARTICLE)) == []
        for main_tex in (BEAMER_DEFAULT, BEAMER):
            log = compile_log(tmp_path, main_tex)
            assert overfull(log) == [] and runs_off_a_slide(log) == []
