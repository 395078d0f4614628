"""Every file the site is built from that does not come from this source tree.

Each is a package of a registry (npm or PyPI), fetched by that registry's own client
(``npm pack``, ``pip download``) and accepted only when its sha256 is the one written here.
Changing a version means changing its hash too, and re-running the browser tests.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Pin", "PINS", "PYODIDE", "KATEX", "WHEELS", "PYODIDE_FILES", "FLINT_PLATFORM"]

#: The wheel tag of python-flint's WebAssembly build for the pinned Pyodide (ABI 2026_0,
#: CPython 3.14): the ``abi_version`` of Pyodide's own ``pyodide-lock.json``.
FLINT_PLATFORM = "pyemscripten_2026_0_wasm32"


@dataclass(frozen=True)
class Pin:
    """One downloaded file: its registry, name, version, file name and sha256."""

    registry: str  # "npm" or "pypi"
    name: str
    version: str
    filename: str
    sha256: str
    platform: str = ""  # a pip --platform tag for a binary wheel; "" for a pure one


PYODIDE = Pin("npm", "pyodide", "314.0.8", "pyodide-314.0.8.tgz",
              "9a52704e0ae5b07aaacb8e4fed9f1658e8024694a078695ea45ac79dee4cefcb")
# The version tests/js/package.json pins for the notes' rendering tests.
KATEX = Pin("npm", "katex", "0.19.1", "katex-0.19.1.tgz",
            "24da5a599eb2fcede2e270b99a6ff48bca816beecc95feeb84e8cccbd1bb34fd")
WHEELS = (
    Pin("pypi", "mpmath", "1.3.0", "mpmath-1.3.0-py3-none-any.whl",
        "a0b2b9fe80bbcd81a6647ff13108738cfb482d481d826cc0e02f5b35e5c88d2c"),
    Pin("pypi", "sympy", "1.14.0", "sympy-1.14.0-py3-none-any.whl",
        "e091cc3e99d2141a0ba2847328f5479b05d94a6635cb96148ccb3f34671bd8f5"),
    Pin("pypi", "python-flint", "0.9.0", f"python_flint-0.9.0-cp314-cp314-{FLINT_PLATFORM}.whl",
        "b31f5c00e0e36040ab58d00b3025156e20869b990d776e4bf90f870b1ee11ad3", platform=FLINT_PLATFORM),
)
PINS = (PYODIDE, KATEX) + WHEELS

#: The files of the npm pyodide package the page needs (the rest are examples and types).
PYODIDE_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
