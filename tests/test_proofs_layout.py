"""Inside the proof checker, data flows down: no import cycle, no private name imported.

Read from the source with :mod:`ast`: every import of one module of ``symbolic_attn/proofs``
by another counts, a lazy one inside a function as much as one at the top (a lazy import
hides a cycle from Python, not from the reader).
"""

import ast
from pathlib import Path

PROOFS = Path(__file__).resolve().parent.parent / "symbolic_attn" / "proofs"
PACKAGE = "symbolic_attn.proofs"


def _imports(path: Path):
    """(module imported, names imported from it, line) for each import of a proofs module."""
    modules = {p.stem for p in PROOFS.glob("*.py")}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    yield alias.name.split(".")[2], (), node.lineno
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                module = PACKAGE + ("." + module if module else "")
            names = tuple(alias.name for alias in node.names)
            if module == PACKAGE:
                for name in names:
                    if name in modules:
                        yield name, (), node.lineno
            elif module.startswith(PACKAGE + "."):
                yield module.split(".")[2], names, node.lineno


def _graph() -> dict:
    graph: dict = {}
    for path in sorted(PROOFS.glob("*.py")):
        graph[path.stem] = {target for target, _, _ in _imports(path) if target != path.stem}
    return graph


def _cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    found: list = []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_inside_proofs():
    assert _cycles(_graph()) == []


def test_the_cycle_check_can_fail():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_private_name_imported_across_modules():
    private = [f"{path.name}:{line} imports {name} from {target}"
               for path in sorted(PROOFS.glob("*.py")) for target, names, line in _imports(path)
               for name in names if name.startswith("_") and target != path.stem]
    assert private == []


def test_the_package_docstring_names_every_module():
    doc = ast.get_docstring(ast.parse((PROOFS / "__init__.py").read_text(encoding="utf-8"))) or ""
    missing = [path.stem for path in sorted(PROOFS.glob("*.py"))
               if path.stem != "__init__" and f":mod:`.{path.stem}`" not in doc]
    assert missing == []
