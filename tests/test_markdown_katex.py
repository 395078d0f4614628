"""Every emitted math block renders with KaTeX (throwOnError); the web notes use only
constructs KaTeX and MathJax share; notebook displays render.

Not skipped when Node or KaTeX is missing: CI runs ``npm ci --prefix tests/js`` (katex is
pinned in tests/js/package-lock.json); a missing tool must fail loudly.
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from symbolic_attn.proofs import scripts as derivation_scripts
from symbolic_attn.model.attention import attention
from symbolic_attn.notes.markdown import markdown_document

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out"
JS = ROOT / "tests" / "js"
REFRESH = "stale: run `symbolic-attn derive --format md` from the repository root and commit out/notes.md"
DISPLAY_ENVS = r"align\*|equation\*"


def katex_errors(blocks):
    """[(tex, error)] for the blocks KaTeX refuses; blocks are (tex, display) pairs."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node not found: install Node.js 20 and run `npm ci --prefix tests/js`")
    if not (JS / "node_modules" / "katex").is_dir():
        pytest.fail("KaTeX not installed: run `npm ci --prefix tests/js`")
    payload = json.dumps([{"tex": tex, "display": display} for tex, display in blocks])
    run = subprocess.run([node, str(JS / "render.js")], input=payload, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return [(tex, error) for (tex, _), error in zip(blocks, json.loads(run.stdout)) if error]


def _inline(text):
    """Inline $...$ spans of prose (escaped \\$ is not a delimiter)."""
    return [(m, False) for m in re.findall(r"(?<!\\)\$((?:[^$\\]|\\.)+?)\$", text)]


def markdown_math(text):
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    blocks = [(m, True) for m in re.findall(r"^\$\$\n(.*?)\n\$\$$", text, flags=re.S | re.M)]
    rest = re.sub(r"^\$\$\n.*?\n\$\$$", "", text, flags=re.S | re.M)
    return blocks + _inline(rest)


def tex_math(text):
    text = re.sub(r"\\begin\{verbatim\}.*?\\end\{verbatim\}", "", text, flags=re.S)
    text = re.sub(r"\\begin\{tikzpicture\}.*?\\end\{tikzpicture\}", "", text, flags=re.S)
    pattern = rf"\\begin\{{({DISPLAY_ENVS})\}}(.*?)\\end\{{\1\}}"
    blocks = [(f"\\begin{{aligned}}{body}\\end{{aligned}}" if env == "align*" else body, True)
              for env, body in re.findall(pattern, text, flags=re.S)]
    rest = re.sub(pattern, "", text, flags=re.S)
    rest = "\n".join(line for line in rest.splitlines() if not line.lstrip().startswith("%"))
    return blocks + _inline(rest)


@pytest.fixture(scope="module")
def results():
    return derivation_scripts.verify_all(derivation_scripts.load_scripts())


@pytest.fixture(scope="module")
def notes_md(results):
    return markdown_document(results)["notes.md"]


def test_committed_markdown_is_current(notes_md):
    assert (OUT / "notes.md").read_text(encoding="utf-8") == notes_md, REFRESH
    assert notes_md.endswith("\n") and "\r" not in notes_md


@pytest.mark.parametrize("forbidden", [r"\begin{align*}", r"\label", r"\DeclareMathOperator", r"\intertext",
                                       r"\begin{equation*}", r"\section", r"\item"])
def test_markdown_uses_only_shared_constructs(notes_md, forbidden):
    assert forbidden not in notes_md


def test_markdown_has_results_examples_and_kernel(notes_md):
    for heading in ("## Shift invariance of softmax", "## Worked example: the grid/load/rises lab",
                    "## The algorithm as a formula: the stable masked softmax"):
        assert heading in notes_md
    assert "| rises | 0.284 | 0.140 | 0.576 |" in notes_md
    assert "| it | 1.000 | × | × |" in notes_md


def test_every_markdown_math_block_renders_with_katex(notes_md):
    blocks = markdown_math(notes_md)
    assert sum(display for _, display in blocks) > 30 and len(blocks) > 80
    assert katex_errors(blocks) == []


@pytest.mark.parametrize("path", sorted(OUT.glob("*.tex")), ids=lambda p: p.name)
def test_every_tex_math_block_renders_with_katex(path):
    blocks = tex_math(path.read_text(encoding="utf-8"))
    assert blocks, f"no math found in {path.name}"
    assert katex_errors(blocks) == []


def test_katex_is_able_to_fail():
    errors = katex_errors([(r"\label{x} a", True), (r"\intertext{no}", True), ("a & b", False), ("x^2", False)])
    assert [tex for tex, _ in errors] == [r"\label{x} a", r"\intertext{no}", "a & b"]


def test_notebook_displays_render_and_print(results):
    shift = next(r for r in results if r.name == "shift_invariance")
    chain = shift.parts[0]
    lab = attention([[1, 0], [0, 1], [1, 1]], [[1, 1], [0, 1], [1, 2]], [[1, 0], [0, 2], [1, 2]], mask="causal")
    # Jupyter renders text/latex through MathJax: strip the $...$ wrapper, render the math.
    derivation_math = chain._repr_latex_()
    assert derivation_math.startswith("$\\displaystyle \\begin{aligned}") and derivation_math.endswith("$")
    lab_math = lab._repr_latex_()  # $$ aligned $$ blocks, which every notebook front end renders
    assert lab_math.startswith("$$\\begin{aligned}") and "\\begin{align*}" not in lab_math
    blocks = [(derivation_math[1:-1], True)] + [(math, True) for math in re.findall(r"\$\$(.*?)\$\$", lab_math, re.S)]
    assert len(blocks) >= 3
    blocks += tex_math(shift._repr_latex_())
    # A whole result (prose, lists, displays) is shown as Markdown, which notebooks prefer.
    markdown = shift._repr_markdown_()
    assert markdown.startswith("## Shift invariance of softmax") and "\\section" not in markdown
    blocks += markdown_math(markdown)
    assert katex_errors(blocks) == []
    # Terminals: short readable text, no LaTeX commands.
    assert str(shift).startswith("Shift invariance of softmax (shift_invariance)\n  Adding a constant")
    assert str(chain).splitlines()[0] == "Adding a constant to every score  [proved for every length n, all real scores and every real constant]"
    assert "A[1,1] = 1" in str(lab) and "\\begin" not in str(lab) + str(shift) + str(chain)


# ----------------------------------------------------------------------------- no math leaks into text

# In Markdown text (outside math spans and code) none of these may appear: a LaTeX command,
# an unescaped ^ _ $ or brace -- each means a math span was split or lost its dollars.
LEAKS = {
    "command": r"\\[A-Za-z]+",
    "caret": r"(?<!\\)\^",
    "underscore": r"(?<!\\)_",
    "dollar": r"(?<!\\)\$",
    "brace": r"(?<!\\)[{}]",
}


def text_segments(markdown):
    """The Markdown's text: without comments, code, display math and inline math spans."""
    text = re.sub(r"<!--.*?-->", "", markdown, flags=re.S)
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"^\$\$\n.*?\n\$\$$", "", text, flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.sub(r"(?<!\\)\$((?:[^$\\\n]|\\.)+?)\$", "", text)


def leaks(markdown):
    """[(kind, line)] of math leaked into text."""
    found = []
    for line in text_segments(markdown).splitlines():
        found += [(kind, line) for kind, pattern in LEAKS.items() if re.search(pattern, line)]
    return found


def every_markdown(results, notes_md):
    """(id, text) of every Markdown output: the notes and each result's notebook display."""
    return [("notes.md", notes_md)] + [(f"{r.name}._repr_markdown_", r._repr_markdown_()) for r in results]


def test_no_math_leaks_into_text(results, notes_md):
    for name, markdown in every_markdown(results, notes_md):
        assert leaks(markdown) == [], name


def test_every_math_span_of_every_markdown_output_renders(results, notes_md):
    for name, markdown in every_markdown(results, notes_md):
        blocks = markdown_math(markdown)
        assert blocks, name
        assert katex_errors(blocks) == [], name


def test_shift_invariance_introduction_pairs_its_dollars(results, notes_md):
    shift = next(r for r in results if r.name == "shift_invariance")
    for markdown in (notes_md, shift._repr_markdown_()):
        spans = [tex for tex, display in markdown_math(markdown) if not display]
        assert r"\operatorname{softmax}(s + c\mathbf{1}) = \operatorname{softmax}(s)" in spans
        assert r"c = -\max_k s_k" in spans


def test_user_notes_markdown_keeps_math_and_escaped_dollars(tmp_path):
    from symbolic_attn.cli.derive import derive

    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "square.py").write_text(USER_SCRIPT, encoding="utf-8")
    derive([folder], tmp_path / "out", fmt="md")
    markdown = (tmp_path / "out" / "notes.md").read_text(encoding="utf-8")
    assert leaks(markdown) == []
    inline = [tex for tex, display in markdown_math(markdown) if not display]
    assert "(x+1)^2 = x^2 + 2x + 1" in inline and "a_{ij}" in inline and "n" in inline
    assert r"it costs \$5, not \$3" in markdown and "5, not" not in "".join(inline)
    assert katex_errors(markdown_math(markdown)) == []


USER_SCRIPT = r'''"""Squares.

The square $(x+1)^2 =
x^2 + 2x + 1$ for real $x$, and
$a_{ij}$ holds.
"""
import sympy
from symbolic_attn.proofs.chain import Derivation, Scope, Step

NAME = "square"
x = sympy.Symbol("x")


def build():
    # A scope may hold $math$; an escaped \$ is a literal dollar and must stay text.
    return Derivation("Square $n$", (x + 1) ** 2, [Step(x**2 + 2*x + 1, "expand $(a+b)^2$")],
                      scope=Scope.proved("every x; it costs \\$5, not \\$3"))
'''


@pytest.mark.parametrize("markdown, kind", [
    # The old output of the shift-invariance introduction: dollars paired across the line break.
    ("$\\operatorname{softmax}(s + c\\mathbf{1}) =$\n\\operatorname{softmax}(s)$, for every $n$.", "command"),
    ("Taking $c = -\\max_k s_k$ gives the$\nmax-subtracted form", "dollar"),
    ("the scores s_1 and s^2", "underscore"),
    ("an exponent e^x", "caret"),
    ("a set {1, 2}", "brace"),
], ids=["split-span", "lone-dollar", "underscore", "caret", "brace"])
def test_leak_check_is_able_to_fail(markdown, kind):
    assert kind in [found for found, _ in leaks(markdown)]


@pytest.mark.parametrize("prose, expected", [
    ("a $x =\ny$ b", "a $x = y$ b"),
    (r"costs \$5 and $a$", r"costs \$5 and $a$"),
    (r"$a = \$1$ and $b$", r"$a = \$1$ and $b$"),
    ("a lone $ sign", r"a lone \$ sign"),
    ("$x$ and a lone $", r"$x$ and a lone \$"),
    ("$ x $", "$x$"),
    (r"50\% of \textbf{all} \texttt{zero\_score}", "50% of **all** `zero_score`"),
], ids=["span-across-lines", "escaped-dollar-in-text", "escaped-dollar-in-math", "lone-dollar",
        "trailing-lone-dollar", "inner-spaces", "text-escapes"])
def test_text_markdown(prose, expected):
    from symbolic_attn.render.markdown import text_markdown

    assert text_markdown(prose) == expected
