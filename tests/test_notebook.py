"""Issue 21, item 6: every object displays itself in a notebook, checked in a real kernel.

The example notebook (examples/notebooks/attention_in_a_notebook.ipynb) is executed by
nbclient with an IPython kernel, as Jupyter would run it; its cells assert exact values,
and this test asserts what each cell displays.
"""

import json
import subprocess
import sys
from pathlib import Path

import nbclient
import nbformat
import pytest

FOLDER = Path(__file__).resolve().parent.parent / "examples" / "notebooks"
NOTEBOOK = FOLDER / "attention_in_a_notebook.ipynb"


@pytest.fixture(scope="module")
def executed():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(FOLDER)}}).execute()
    return notebook


def _shown(cell) -> dict:
    """The richest representations a cell displayed (mime type -> text)."""
    found = {}
    for output in cell.outputs:
        assert output.output_type != "error", "".join(output.get("traceback", []))
        found.update(output.get("data", {}))
    return found


def test_the_notebook_runs_in_a_real_kernel_and_its_assertions_hold(executed):
    assert [cell.cell_type for cell in executed.cells][:2] == ["markdown", "code"]
    assert all(cell.get("execution_count") for cell in executed.cells if cell.cell_type == "code")


def test_an_attention_result_is_display_math_not_bare_align(executed):
    latex = _shown(executed.cells[1])["text/latex"]
    assert latex.count("$$\\begin{aligned}") >= 3 and "\\begin{align*}" not in latex


@pytest.mark.parametrize("index, stages", [(2, ["scores", "weights", "output"]), (3, ["mean", "variance", "output"]),
                                           (4, ["head[1].weights", "head[2].output", "concat"])])
def test_every_trace_displays_its_stages_as_markdown_with_display_math(executed, index, stages):
    shown = _shown(executed.cells[index])
    markdown = shown["text/markdown"]
    assert "<Trace" not in markdown and markdown.count("$$") >= 2 * len(stages)
    for stage in stages:
        assert f"**{stage}**" in markdown, (stage, markdown[:300])
    assert shown["text/latex"].startswith("$$\\begin{aligned}")


def test_a_trace_shows_certified_decimals_beside_what_is_not_rational(executed):
    markdown = _shown(executed.cells[2])["text/markdown"]
    weights = markdown.split("**weights**")[1].split("**")[0]
    assert "\\approx" in weights and "0.731" in weights  # e/(1+e) = 0.7310585...
    mean = _shown(executed.cells[3])["text/markdown"].split("**mean**")[1].split("**")[0]
    assert "\\approx" not in mean  # rational: exact only


def test_a_verified_result_displays_itself(executed):
    shown = _shown(executed.cells[5])
    assert any(kind in shown for kind in ("text/latex", "text/markdown"))
    assert "NOT VERIFIED" not in json.dumps(shown)


def test_the_committed_notebook_is_what_the_generator_writes(tmp_path):
    """The .ipynb is generated, unexecuted and byte-stable (a stale file fails here)."""
    copy = tmp_path / "make_notebook.py"
    copy.write_text((FOLDER / "make_notebook.py").read_text(encoding="utf-8"), encoding="utf-8")
    subprocess.run([sys.executable, str(copy)], check=True, capture_output=True, timeout=120)
    assert (tmp_path / NOTEBOOK.name).read_bytes() == NOTEBOOK.read_bytes()
