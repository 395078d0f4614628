"""The package is layered: a subpackage imports only from the layers below it.

Read from the source with :mod:`ast` (every ``import`` anywhere in a module, lazy ones
inside functions included), so an upward import fails here before it tangles the code.
"""

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "symbolic_attn"

#: Bottom to top.  A module may import its own layer and every layer before it.
#: ``derivations`` are the built-in scripts (loaded by path, imported by none).
LAYERS = ["errors", "exact", "render", "model", "proofs", "derivations", "steps", "grading", "numerics", "notes", "web", "cli"]
#: Top-level modules that sit above everything (the public API and ``python -m``).
API = {"__init__", "__main__", "testing", "strategies"}


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "symbolic_attn":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(("symbolic_attn",) + path.relative_to(PACKAGE).with_suffix("").parts[:-1])
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            if base == "symbolic_attn":  # from symbolic_attn import x: x is the layer
                for alias in node.names:
                    yield node.lineno, f"symbolic_attn.{alias.name}"
            else:
                yield node.lineno, base


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        yield relative.parts[0].removesuffix(".py"), path


@pytest.mark.parametrize("layer,path", list(_modules()), ids=lambda v: str(v.relative_to(PACKAGE)) if isinstance(v, Path) else v)
def test_no_upward_import(layer, path):
    if layer in API:
        return
    assert layer in LAYERS, f"{path}: {layer!r} is in no layer; add it to LAYERS"
    own = LAYERS.index(layer)
    for line, target in _imports(path):
        target_layer = _layer_of(target)
        if target_layer is None:
            continue
        assert target_layer not in API, f"{path}:{line} imports the public API {target}"
        assert LAYERS.index(target_layer) <= own, f"{path}:{line}: layer {layer!r} imports upward: {target}"


def test_the_checker_catches_an_upward_import(tmp_path, monkeypatch):
    """The rule itself can fail: a fake exact/ module importing the proof checker."""
    fake = tmp_path / "symbolic_attn" / "exact"
    fake.mkdir(parents=True)
    (fake / "bad.py").write_text("def f():\n    from symbolic_attn.proofs.prove import prove_equal\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", tmp_path / "symbolic_attn")
    with pytest.raises(AssertionError, match="imports upward"):
        test_no_upward_import("exact", fake / "bad.py")


def test_every_subpackage_says_what_it_owns_and_may_import():
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert "Owns" in doc or init.parent.name == "cli", f"{init}: docstring must say what it owns"
        assert "May import" in doc or init.parent.name == "cli", f"{init}: docstring must say what it may import"


def test_public_api_keeps_working():
    from symbolic_attn import AttentionResult, Mask, attention, attention_from_scores, softmax  # noqa: F401 -- importing them is the test
    import symbolic_attn
    from symbolic_attn import errors

    for name in errors.__all__:
        if name[0].isupper():
            assert getattr(symbolic_attn, name) is getattr(errors, name), f"{name} not exported by symbolic_attn"


def test_the_authoring_api_is_one_import():
    """``from symbolic_attn.proofs import ...`` gives the authoring names, the very objects of their modules."""
    import symbolic_attn.proofs as proofs
    from symbolic_attn.proofs import chain, conditions, operators, prove, result, rules

    homes = (chain, conditions, operators, prove, result, rules)
    for name in proofs.__all__:
        value = getattr(proofs, name)
        assert any(getattr(home, name, None) is value for home in homes), name


# --- Within a subpackage: no import cycles, no private names across modules, a docstring map. ---


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("symbolic_attn",) + parts)


def _is_module(name: str) -> bool:
    """Whether the dotted ``symbolic_attn...`` name is a module (or package) of the tree under ``PACKAGE``."""
    relative = Path(*name.split(".")[1:]) if "." in name else Path()
    return (PACKAGE / relative).with_suffix(".py").is_file() or (PACKAGE / relative / "__init__.py").is_file()


def _resolve(node: ast.ImportFrom, path: Path) -> str:
    """The absolute module of a ``from ... import`` (relative ones resolved against ``path``)."""
    if not node.level:
        return node.module or ""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    package = package[: len(package) - node.level + 1]
    return ".".join(package + ([node.module] if node.module else []))


def _uses(path: Path):
    """Every use of another module of the package: ``(line, module, name)``.

    ``name`` is the imported name (``from m import name``) or the attribute read off a module
    bound by an import (``m.name`` after ``import symbolic_attn.x.m as m`` or ``from x import m``);
    it is ``None`` for a bare ``import m``.  A ``from`` import of a submodule is a use of the
    submodule itself.  Imports anywhere count, lazy ones inside functions included.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bound: dict[str, str] = {}  # local name -> module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "symbolic_attn":
                    yield node.lineno, alias.name, None
                    if alias.asname:
                        bound[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, path)
            if base.split(".")[0] != "symbolic_attn":
                continue
            for alias in node.names:
                if _is_module(f"{base}.{alias.name}"):
                    yield node.lineno, f"{base}.{alias.name}", None
                    bound[alias.asname or alias.name] = f"{base}.{alias.name}"
                else:
                    yield node.lineno, base, alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            yield node.lineno, bound[node.value.id], node.attr


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _subpackages():
    return sorted(init.parent for init in PACKAGE.glob("*/__init__.py"))


def _sibling_graph(package: Path) -> dict[str, dict[str, int]]:
    """Module -> {sibling module it imports: first line}, for the ``*.py`` modules of one subpackage.

    ``__init__`` is a module like the others: a name imported from the package itself
    (``from symbolic_attn.cli import add_jobs_option``) is a use of ``__init__``, which
    usually imports its modules in turn.
    """
    own = _module_name(package)
    prefix = own + "."
    graph: dict[str, dict[str, int]] = {}
    for path in sorted(package.glob("*.py")):
        edges = graph.setdefault(path.stem, {})
        for line, module, name in _uses(path):
            if module == own and name is not None:
                sibling = "__init__"
            elif module.startswith(prefix):
                sibling = module[len(prefix):].split(".")[0]
            else:
                continue
            if sibling != path.stem and (package / f"{sibling}.py").is_file():
                edges[sibling] = min(line, edges.get(sibling, line))
    return graph


def _cycles(graph: dict[str, dict[str, int]]) -> list[tuple[list[str], list[str]]]:
    """One cycle per strongly connected component of more than one module: ``(path, members)``.

    The path ``a, b, ..., a`` is a shortest cycle through the first member; ``members`` are all the
    modules tangled with it (breaking that one cycle may leave another among them).
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[list[str]] = []

    def connect(node: str) -> None:  # Tarjan: the graphs are a few dozen modules, recursion is fine
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
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
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)

    cycles = []
    for component in sorted(components):
        members = set(component)
        start = component[0]
        # Shortest way back to the start inside the component (breadth first), so the path is a real cycle.
        previous: dict[str, str] = {}
        frontier = [start]
        while frontier and start not in previous:
            following = []
            for node in frontier:
                for target in sorted(graph[node]):
                    if target in members and target not in previous:
                        previous[target] = node
                        following.append(target)
            frontier = following
        path = [start]
        node = previous[start]
        while node != start:
            path.append(node)
            node = previous[node]
        path.append(start)
        path.reverse()
        cycles.append((path, component))
    return cycles


@pytest.mark.parametrize("package", _subpackages(), ids=lambda p: p.name)
def test_no_import_cycle_inside_a_subpackage(package):
    """Modules of one subpackage import each other without a cycle, lazy imports counted.

    A cycle only runs because some import of it waits inside a function; the modules then
    cannot be read bottom to top.  Shared code moves down into the module that owns it.
    """
    graph = _sibling_graph(package)
    found = []
    for cycle, members in _cycles(graph):
        lines = ", ".join(f"{a}.py:{graph[a][b]}" for a, b in zip(cycle, cycle[1:]))
        tangled = f", among {', '.join(members)}" if len(members) > len(cycle) - 1 else ""
        found.append(f"{' -> '.join(cycle)} ({lines}{tangled})")
    assert not found, f"{package.name}/: import cycles: " + "; ".join(found)


@pytest.mark.parametrize("layer,path", list(_modules()), ids=lambda v: str(v.relative_to(PACKAGE)) if isinstance(v, Path) else v)
def test_no_private_name_across_modules(layer, path):
    """A name starting with ``_`` is private to its module: no other module imports or reads it.

    When other modules need it, it gets a public name and a docstring (or moves to the module
    that owns it).  A public name imported under a private alias (``import x as _x``) is fine.
    """
    own = _module_name(path)
    found = [
        f"{path.relative_to(PACKAGE)}:{line} uses {module}.{name}"
        for line, module, name in _uses(path)
        if name is not None and _is_private(name) and module != own
    ]
    assert not found, "private names used across modules: " + "; ".join(sorted(set(found)))


@pytest.mark.parametrize("package", _subpackages(), ids=lambda p: p.name)
def test_every_subpackage_docstring_names_its_modules(package):
    """The ``__init__`` docstring is the map of the subpackage: it names each of its modules.

    As a reference, :mod:`.name` (or with the full dotted path), or as a literal ````name````.
    """
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
    dotted = re.escape(_module_name(package))
    missing = [
        path.stem
        for path in sorted(package.glob("*.py"))
        if path.name != "__init__.py"
        and not re.search(rf":mod:`~?(?:{dotted})?\.{re.escape(path.stem)}`|``{re.escape(path.stem)}``", doc)
    ]
    assert not missing, f"{package.name}/__init__.py: the docstring names no module {', '.join(missing)}"


def _fake_package(tmp_path, monkeypatch, files: dict[str, str]) -> Path:
    """A throwaway ``symbolic_attn`` tree in ``tmp_path`` that the checkers read instead of the real one."""
    root = tmp_path / "symbolic_attn"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    monkeypatch.setattr(__import__(__name__), "PACKAGE", root)
    return root


def test_the_checker_catches_a_cycle(tmp_path, monkeypatch):
    """A lazy import closing a cycle is still a cycle, reported as a path."""
    root = _fake_package(tmp_path, monkeypatch, {
        "sub/__init__.py": '"""Owns: :mod:`.a`, :mod:`.b`, :mod:`.c`."""\n',
        "sub/a.py": "from symbolic_attn.sub.b import g\n",
        "sub/b.py": "from . import c\n",
        "sub/c.py": "def h():\n    from symbolic_attn.sub import a\n",
    })
    with pytest.raises(AssertionError, match=r"a -> b -> c -> a \(a\.py:1, b\.py:1, c\.py:2\)"):
        test_no_import_cycle_inside_a_subpackage(root / "sub")


def test_the_checker_catches_a_cycle_through_the_package(tmp_path, monkeypatch):
    """A module importing a name of its own package's ``__init__``, which imports the module."""
    root = _fake_package(tmp_path, monkeypatch, {
        "sub/__init__.py": "def helper():\n    pass\n\n\ndef main():\n    from symbolic_attn.sub import a\n",
        "sub/a.py": "from symbolic_attn.sub import helper\n",
    })
    with pytest.raises(AssertionError, match=r"__init__ -> a -> __init__ \(__init__\.py:6, a\.py:1\)"):
        test_no_import_cycle_inside_a_subpackage(root / "sub")


def test_the_checker_catches_a_private_import(tmp_path, monkeypatch):
    """``from m import _name`` and ``m._name`` in another module fail; a private alias does not."""
    root = _fake_package(tmp_path, monkeypatch, {
        "sub/__init__.py": "",
        "sub/a.py": "def _helper():\n    pass\n\n\ndef helper():\n    _helper()\n",
        "sub/b.py": "from symbolic_attn.sub.a import helper as _helper\n",
        "sub/c.py": "def f():\n    from .a import _helper\n",
        "sub/d.py": "import symbolic_attn.sub.a as a\n\na._helper()\n",
    })
    test_no_private_name_across_modules("sub", root / "sub" / "a.py")
    test_no_private_name_across_modules("sub", root / "sub" / "b.py")
    with pytest.raises(AssertionError, match=r"c\.py:2 uses symbolic_attn\.sub\.a\._helper"):
        test_no_private_name_across_modules("sub", root / "sub" / "c.py")
    with pytest.raises(AssertionError, match=r"d\.py:3 uses symbolic_attn\.sub\.a\._helper"):
        test_no_private_name_across_modules("sub", root / "sub" / "d.py")


def test_the_checker_catches_an_unnamed_module(tmp_path, monkeypatch):
    """A module the ``__init__`` docstring does not name fails; one named as a literal passes."""
    root = _fake_package(tmp_path, monkeypatch, {
        "sub/__init__.py": '"""Owns: the conditions (:mod:`.conditions`) and ``prove``."""\n',
        "sub/conditions.py": "",
        "sub/prove.py": "",
        "sub/forgotten.py": "",
    })
    with pytest.raises(AssertionError) as failure:
        test_every_subpackage_docstring_names_its_modules(root / "sub")
    assert str(failure.value).splitlines()[0].endswith("the docstring names no module forgotten")
