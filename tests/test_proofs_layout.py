"""Inside the proof checker, data flows down: no import cycle, no private name imported.

The rules are :mod:`test_layout`'s, which holds them for every subpackage; they are named
here for ``symbolic_attn/proofs``, the trusted base, so that a failure there reads as one.
Every import of one proofs module by another counts, a lazy one inside a function as much
as one at the top (a lazy import hides a cycle from Python, not from the reader).
"""

import ast

from test_layout import PACKAGE, _cycles, _is_private, _module_name, _sibling_graph, _uses

PROOFS = PACKAGE / "proofs"


def test_no_import_cycle_inside_proofs():
    assert _cycles(_sibling_graph(PROOFS)) == []


def test_the_cycle_check_can_fail():
    cycles = _cycles({"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}})
    assert [members for _, members in cycles] == [["a", "b", "c"]]


def test_no_private_name_imported_across_modules():
    private = [f"{path.name}:{line} imports {name} from {module}"
               for path in sorted(PROOFS.glob("*.py")) for line, module, name in _uses(path)
               if name is not None and _is_private(name) and module != _module_name(path)]
    assert private == []


def test_the_package_docstring_names_every_module():
    doc = ast.get_docstring(ast.parse((PROOFS / "__init__.py").read_text(encoding="utf-8"))) or ""
    missing = [path.stem for path in sorted(PROOFS.glob("*.py"))
               if path.stem != "__init__" and f":mod:`.{path.stem}`" not in doc]
    assert missing == []
