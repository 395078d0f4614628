"""Issue 22, item 5: the derivations of examples/steps/ -- the four classic proofs written
right and with typical wrong steps, in Markdown, LaTeX and text, written from the issue by
someone who had not read the checker -- each step given the verdict (and the named
mistake) its author expected.  A disagreement the checker cannot settle yet is an
xfail(strict=True) with its reason, so that fixing it shows."""

import tomllib
from pathlib import Path

import pytest

from symbolic_attn.cli.steps import KINDS
from symbolic_attn.steps.report import check_text

FOLDER = Path(__file__).resolve().parent.parent / "examples" / "steps"
EXPECTED = tomllib.loads((FOLDER / "expected.toml").read_text(encoding="utf-8"))["file"] if FOLDER.exists() else []

#: file -> why the checker does not (yet) give every expected verdict.
KNOWN = {
}


def _verdicts(entry):
    path = FOLDER / entry["name"]
    report = check_text(path.read_text(encoding="utf-8"), KINDS[path.suffix], entry["name"],
                        symbols=entry.get("symbols"))
    found = [(s.line, s.verdict.verdict, s.verdict.diagnosis) for c in report.chains for s in c.steps]
    wanted = [(s["line"], s["verdict"], s.get("diagnosis")) for s in entry["steps"]]
    return found, wanted, report


def test_the_folder_has_the_issues_thirty_submissions_in_three_formats():
    names = [entry["name"] for entry in EXPECTED]
    assert len(names) >= 30 and {Path(n).suffix for n in names} == {".md", ".tex", ".txt"}
    assert sorted(names) == sorted(p.name for p in FOLDER.iterdir() if p.suffix in KINDS and p.name != "README.md")


@pytest.mark.parametrize("entry", [pytest.param(e, id=e["name"], marks=[pytest.mark.xfail(
    reason=KNOWN[e["name"]], strict=True)] if e["name"] in KNOWN else []) for e in EXPECTED])
def test_every_step_gets_the_expected_verdict(entry):
    found, wanted, report = _verdicts(entry)
    assert found == wanted, report.text()
    assert report.exit_code == entry["exit"]
