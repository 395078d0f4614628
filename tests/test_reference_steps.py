"""Issue 22, item 5: the reference documents' own derivations -- shift invariance (002's
"constant offset"), the sqrt(d_k) variance (000 section 3.2.1 and its footnote) and
permutation (000's "a position-free mixture") -- written as a student would and run
through ``steps``: every step proved.  Each with a wrong variant that is not."""

from pathlib import Path

import pytest

from symbolic_attn.steps.report import check_text

FOLDER = Path(__file__).resolve().parent.parent / "examples" / "steps" / "reference"
FILES = sorted(p.name for p in FOLDER.glob("*.md"))


def _report(text: str, name: str):
    return check_text(text, "md", name)


def test_the_three_derivations_are_there():
    assert FILES == ["permutation_equivariance.md", "shift_invariance.md", "sqrt_dk_variance.md"]


@pytest.mark.parametrize("name", FILES)
def test_every_step_of_the_reference_derivation_is_proved(name):
    report = _report((FOLDER / name).read_text(encoding="utf-8"), name)
    verdicts = [s.verdict.verdict for c in report.chains for s in c.steps]
    assert verdicts and set(verdicts) == {"proved"}, report.text()
    assert report.exit_code == 0


# file -> (text replaced, wrong text, the line whose step must then fail)
WRONG = {
    "shift_invariance.md": (r"\frac{e^{c}\, e^{s_i}}{\sum_{j=1}^{n} e^{c}\, e^{s_j}}",
                            r"\frac{e^{c} + e^{s_i}}{\sum_{j=1}^{n} e^{c}\, e^{s_j}}", 14),
    "sqrt_dk_variance.md": (r"\left(\frac{1}{\sqrt{d_k}}\right)^2 \operatorname{Var}", r"\frac{1}{\sqrt{d_k}} \operatorname{Var}",
                            28),
    "permutation_equivariance.md": (r"{e^{s_2} v_2 + e^{s_3} v_3 + e^{s_1} v_1}", r"{e^{s_2} v_3 + e^{s_3} v_2 + e^{s_1} v_1}",
                                    17),
}


@pytest.mark.parametrize("name", FILES)
def test_a_wrong_variant_of_the_reference_derivation_is_caught(name):
    text = (FOLDER / name).read_text(encoding="utf-8")
    written, wrong, line = WRONG[name]
    assert text.count(written) == 1
    report = _report(text.replace(written, wrong), name)
    verdicts = {s.line: s.verdict.verdict for c in report.chains for s in c.steps}
    assert verdicts[line] == "false", report.text()
    assert report.exit_code == 1


def test_a_wrong_reindexing_in_the_general_permutation_is_caught():
    text = (FOLDER / "permutation_equivariance.md").read_text(encoding="utf-8")
    written = r"\frac{\sum_{j=1}^{n} e^{S_{i,j}} u_j}{\sum_{l=1}^{n} e^{S_{i,l}}} \quad"
    assert text.count(written) == 1
    report = _report(text.replace(written, r"\frac{\sum_{j=1}^{n} e^{S_{i,j}} u_{n+1-j}}{\sum_{l=1}^{n} e^{S_{i,l}}} \quad"),
                     "permutation_equivariance.md")
    verdicts = {s.line: s.verdict.verdict for c in report.chains for s in c.steps}
    assert verdicts[31] != "proved", report.text()  # the values not moved with their keys


def test_without_independence_the_variance_derivation_is_not_proved():
    text = (FOLDER / "sqrt_dk_variance.md").read_text(encoding="utf-8").replace("all components independent, ", "")
    report = _report(text, "sqrt_dk_variance.md")
    verdicts = {s.line: s.verdict.verdict for c in report.chains for s in c.steps}
    assert verdicts[16] == "false" and verdicts[18] == "false", report.text()  # variances add; E factors
