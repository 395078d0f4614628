"""The oracle page's copy-paste adapters and pytest examples run as shown."""

import re
from pathlib import Path

import pytest

from impls.libs import library

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "oracle.md").read_text(encoding="utf-8")


def _block(heading):
    part = PAGE.split(f"## {heading}\n", 1)[1]
    return re.search(r"```python\n(.*?)```", part, re.S).group(1)


def test_the_adapters_shown_pass_the_battery():
    library("torch"), library("jax"), library("ml_dtypes")
    code = _block("Adapters to copy")
    definitions = code.split("\nrun_battery(")[0]  # the calls name modules of the reader's own
    namespace: dict = {}
    exec(compile(definitions, "docs/oracle.md", "exec"), namespace)
    from symbolic_attn.testing import Capabilities, run_battery

    assert run_battery(namespace["sdpa"], dtype="float16", cases=2, empty_row="zeros").passed
    report = run_battery(namespace["sdpa_scaled"], cases=1, empty_row="zeros")
    assert report.passed and any(c.name.startswith("explicit_scale") for c in report.cases)
    assert run_battery(namespace["jax_attention"], cases=2, empty_row="uniform",
                       capabilities=Capabilities(same_dims=True)).passed


def test_the_pytest_examples_shown_run(tmp_path):
    pytest.importorskip("hypothesis")
    code = _block("In your pytest suite").replace("from mypkg.attn import attention", "from impls import correct as attention")
    code = code.replace("max_examples=50", "max_examples=5").replace("cases=16", "cases=1")
    namespace: dict = {}
    exec(compile(code, "docs/oracle.md", "exec"), namespace)
    namespace["test_attention_battery"]("float64")
    namespace["test_attention_on_any_exact_case"]()
