"""One trace: claims, diagnosis and reports find entries only through model.trace.select.

Read from the source (ast): no grading module turns a claim's row/col into positions
itself, the report does not borrow the exercise's computation from the diagnosis, and the
quantities a claim may name are the stage paths of the exercise's own trace.
"""

import ast
from pathlib import Path

import pytest
import sympy

from symbolic_attn.errors import ExerciseError
from symbolic_attn.grading.exercise import parse_exercise
from symbolic_attn.grading.report import check_exercise
from symbolic_attn.grading.view import StageView
from symbolic_attn.model.trace import select

GRADING = Path(__file__).resolve().parent.parent / "symbolic_attn" / "grading"
MODULES = sorted(GRADING.glob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_no_module_turns_row_and_col_into_positions_itself(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            assert node.name not in ("_positions", "positions"), f"{path.name}: {node.name} duplicates select()"
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            left = node.left
            name = left.attr if isinstance(left, ast.Attribute) else getattr(left, "id", None)
            assert name not in ("row", "col"), f"{path.name}:{node.lineno}: row/col - 1 outside model.trace.select"


def test_report_does_not_borrow_the_computation_from_diagnose():
    tree = ast.parse((GRADING / "report.py").read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and node.module == "symbolic_attn.grading.diagnose" for alias in node.names}
    assert imported <= {"MISTAKES", "Diagnoser"}
    diagnose = ast.parse((GRADING / "diagnose.py").read_text())
    assert not any(isinstance(n, ast.FunctionDef) and n.name == "compute" for n in diagnose.body)


def test_the_view_selects_with_the_one_helper():
    source = (GRADING / "view.py").read_text()
    assert "from symbolic_attn.model.trace import select" in source


TEXT = """[inputs]
X = [[1, 0], [0, 1], [1, 1]]
[attention]
query = "X"
key = "X"
value = "2*X"
"""


def test_quantities_are_the_stage_paths_of_the_trace():
    exercise = parse_exercise(TEXT)
    assert exercise.quantities() == tuple(exercise.compute().trace)
    with pytest.raises(ExerciseError, match=r"^<exercise>: claim 1: quantity: expected one of query, key, value, "
                                           r"scores, scaled, masked, weights, output, got 'head\[1\]\.weights'$"):
        parse_exercise(TEXT + '[[claims]]\nquantity = "head[1].weights"\nvalue = "1"\n')


def test_a_lazy_view_selects_like_the_trace():
    result = parse_exercise(TEXT).compute()
    view = StageView(result)
    for row, col in [(None, None), (2, None), (None, 3), (3, 1)]:
        lazy, direct = select(view, "weights", row, col), select(result.trace, "weights", row, col)
        assert lazy.positions == direct.positions and lazy.shape == direct.shape
        assert [entry() for entry in lazy.entries] == direct.entries


def test_reports_carry_the_selection_positions():
    exercise = parse_exercise(TEXT + '[[claims]]\nquantity = "output"\ncol = 2\nvalue = "[1.198, 1.5, 1.503]"\n')
    (outcome,) = check_exercise(exercise).outcomes
    assert outcome.selection.positions == [(1, 2), (2, 2), (3, 2)]
    assert (outcome.verdict, outcome.wrong, outcome.decimals) == ("fail", [(2, 2)], ["1.19778", "1.60445", "1.50349"])
    assert all(isinstance(v, sympy.Basic) for v in outcome.values)
