"""Writes attention_in_a_notebook.ipynb (unexecuted, byte-stable): run it after editing the cells.

    python examples/notebooks/make_notebook.py

tests/test_notebook.py executes the notebook with a real kernel (nbclient) and checks what
each cell displays.
"""

from pathlib import Path

import nbformat

CELLS = [
    ("markdown", "# Attention, exactly, in a notebook\n\n"
                 "Every object of `symbolic_attn` displays itself: an attention result, any trace of named "
                 "stages (LayerNorm, heads, blocks), a verified result. Exact values, with certified decimals "
                 "beside those that are not rational."),
    ("code", "from symbolic_attn import Mask, attention, layer_norm, multihead\n"
             "result = attention([[1, 0], [0, 1]], [[1, 0], [0, 1]], [[1, 2], [3, 4]], Mask.causal(2), scale=1)\n"
             "result"),
    ("code", "import sympy\n"
             "e = sympy.E\n"
             "assert result.weights == sympy.Matrix([[1, 0], [1 / (1 + e), e / (1 + e)]])\n"
             "result.trace"),
    ("code", "norm = layer_norm([[1, 3], [2, 6]])\n"
             "assert norm['output'] == sympy.Matrix([[-1, 1], [-1, 1]])\n"
             "norm"),
    ("code", "heads = multihead([[1, 0], [0, 1]], [([[1, 0], [0, 1]],) * 3, ([[0, 1], [1, 0]],) * 3])\n"
             "heads"),
    ("code", "from symbolic_attn.derivations import shift_invariance\n"
             "shift_invariance.build()"),
]


def build() -> nbformat.NotebookNode:
    notebook = nbformat.v4.new_notebook()
    notebook.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                         "language_info": {"name": "python"}}
    for number, (kind, source) in enumerate(CELLS, start=1):
        cell = nbformat.v4.new_markdown_cell(source) if kind == "markdown" else nbformat.v4.new_code_cell(source)
        cell["id"] = f"cell-{number}"  # stable ids: the file is the same bytes every time
        notebook.cells.append(cell)
    return notebook


if __name__ == "__main__":
    path = Path(__file__).with_name("attention_in_a_notebook.ipynb")
    nbformat.write(build(), path)
    print(f"wrote {path}")
