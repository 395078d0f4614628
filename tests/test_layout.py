"""The package is layered: a subpackage imports only from the layers below it.

Read from the source with :mod:`ast` (every ``import`` anywhere in a module, lazy ones
inside functions included), so an upward import fails here before it tangles the code.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "symbolic_attn"

#: Bottom to top.  A module may import its own layer and every layer before it.
LAYERS = ["errors", "exact", "render", "model", "proofs", "grading", "numerics", "notes", "cli"]
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
