"""Every example exercise (the reference documents' claims) gives its expected verdicts."""

import json
import tomllib
from pathlib import Path

import pytest

from symbolic_attn.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
EXPECTED = tomllib.loads((EXAMPLES / "expected.toml").read_text())


def test_every_example_file_has_an_expectation():
    files = {path.name for path in EXAMPLES.glob("*.toml")} - {"expected.toml"}
    files |= {f"{folder}/{path.name}" for folder in ("define", "backward") for path in (EXAMPLES / folder).glob("*.toml")}
    assert files == set(EXPECTED)


def test_every_known_mistake_is_seeded_in_the_define_examples():
    """Each diagnosis of model.variants reproduces a seeded claim of examples/define/ (the
    backward passes' of examples/backward/)."""
    from symbolic_attn.model.variants import VARIANTS

    seeded = {mistake for name, expected in EXPECTED.items() if name.startswith(("define/", "backward/"))
              for diagnosis in expected.get("fail", {}).values() for mistake in diagnosis}
    assert seeded == set(VARIANTS)


@pytest.mark.parametrize("name", sorted(EXPECTED), ids=sorted(EXPECTED))
def test_example_verdicts(name, capsys):
    expected = EXPECTED[name]
    status = main(["check", str(EXAMPLES / name), "--format", "json"])
    out, err = capsys.readouterr()
    assert status == expected["exit"], err
    if status == 2:
        assert expected["message"] in err
        assert err.count("\n") == 1
        return
    report = json.loads(out)
    failures = {claim["label"]: claim["diagnosis"] for claim in report["claims"] if claim["verdict"] == "fail"}
    assert failures == expected.get("fail", {})
    assert report["failed"] == len(failures)
    assert report["passed"] == len(report["claims"]) - len(failures)


def test_the_reference_documents_wrong_numbers(capsys):
    """Document 004 prints 0.504 and 1.504; the certified values are 0.50349 and 1.50349."""
    assert main(["check", str(EXAMPLES / "004_by_hand.toml"), "--format", "json"]) == 1
    claims = {c["label"]: c for c in json.loads(capsys.readouterr().out)["claims"]}
    assert claims["A row 3"]["decimal"] == "[0.24826, 0.24826, 0.50349]"
    assert claims["Z row 3"]["decimal"] == "[1.50349, 1.50349]"
    assert claims["A row 3"]["exact"] == (
        "[exp(sqrt(2)/2)/(2*exp(sqrt(2)/2) + exp(sqrt(2))), exp(sqrt(2)/2)/(2*exp(sqrt(2)/2) + exp(sqrt(2))), "
        "exp(sqrt(2))/(2*exp(sqrt(2)/2) + exp(sqrt(2)))]"
    )


def test_text_format_of_the_readme_example(capsys):
    assert main(["check", str(EXAMPLES / "readme.toml")]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(str(EXAMPLES / "readme.toml") + ": 3 passed, 1 failed")
    lines = out.splitlines()
    (row,) = [k for k, line in enumerate(lines) if line.startswith("a_3 ")]
    assert "FAIL" in lines[row]
    below = " ".join(line.strip() for line in lines[row + 1:] if line.startswith(" "))
    assert "These values come from the unscaled scores: divide the scores by √d_k = √2" in below
