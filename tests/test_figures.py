"""TikZ figures: shades from exact decimals, blocked cells crossed and unnumbered, shapes checked."""

import pytest

from symbolic_attn.errors import ShapeError
from symbolic_attn.render.figures import heatmap, mask_grid, shade

ROWS = COLS = ("it", "was", "tired")
VALUES = (("1.000", "0.000", "0.000"), ("0.330", "0.670", "0.000"), ("0.248", "0.248", "0.503"))
CAUSAL = ((True, False, False), (True, True, False), (True, True, True))


@pytest.mark.parametrize("decimal, percent", [("0.000", 0), ("0.005", 1), ("0.004", 0), ("0.503", 50), ("1.000", 100)],
                         ids=["zero", "half-up", "down", "mid", "one"])
def test_shade_rounds_exactly(decimal, percent):
    assert shade(decimal) == percent


def test_shade_refuses_non_weights():
    with pytest.raises(ShapeError, match=r"^a weight must lie in \[0, 1\]"):
        shade("1.5")


def test_heatmap_labels_allowed_cells_and_crosses_blocked_ones():
    picture = heatmap(VALUES, CAUSAL, ROWS, COLS)
    assert picture.startswith("\\begin{tikzpicture}") and picture.endswith("\\end{tikzpicture}")
    for number in ("1.000", "0.330", "0.670", "0.248", "0.503"):
        assert f"{{{number}}};" in picture
    assert "{0.000}" not in picture  # blocked: a cross, not a printed zero
    assert picture.count("\\fill[black!12]") == 3 and picture.count("\\draw[black!45, thick]") == 3
    assert "\\fill[blue!100!white]" in picture and "\\node[text=white] at (0.5,-0.5) {1.000};" in picture
    assert "{keys}" in picture and "{tired};" in picture


def test_mask_grid_marks_every_cell():
    picture = mask_grid(CAUSAL, ROWS, COLS)
    assert picture.count("\\fill[teal!55]") == 6 and picture.count("\\fill[black!12]") == 3


def test_cell_borders_are_drawn_in_picture_units():
    # TikZ's `grid` steps in cm and missed the 0.8cm-high cells; borders are lines.
    picture = heatmap(VALUES, CAUSAL, ROWS, COLS)
    assert " grid " not in picture and "(0,-3) -- (3,-3)" in picture


def test_labels_are_escaped():
    assert "{a\\_b \\& c};" in mask_grid(((True,),), ("a_b & c",), ("k",))


@pytest.mark.parametrize("values, allowed, rows, cols", [
    ((("0.1",),), ((True,), (True,)), ("a",), ("k",)),
    ((("0.1", "0.2"),), ((True, True),), ("a",), ("k",)),
], ids=["rows", "cols"])
def test_shape_mismatch_is_refused(values, allowed, rows, cols):
    with pytest.raises(ShapeError):
        heatmap(values, allowed, rows, cols)
