"""Issue 12 beside the identities: where each identity stops (exact counterexamples).

The seven identities (rope, sinusoidal_positions, layernorm_invariance, softmax_jacobian,
multihead_sum, alibi_causal, attention_mixes_values) are tested in test_derivations.py.
Here: the result ``identity_limits`` -- each counterexample is certified, each one broken
(its two sides made equal, or the hypothesis restored) is rejected naming the part, and
the restored statements hold on the same numbers.  Plus: every committed output is current.

If the golden-file test fails because a derivation changed on purpose, refresh with
``symbolic-attn derive`` and ``symbolic-attn derive --format md`` and commit ``out/``.
"""

from pathlib import Path

import pytest
import sympy

from symbolic_attn.errors import ProofError
from symbolic_attn.notes import build
from symbolic_attn.proofs import scripts as derivation_scripts
from symbolic_attn.proofs.chain import Computed
from symbolic_attn.proofs.result import Counterexample

OUT = Path(__file__).resolve().parent.parent / "out"
ISSUE_12 = ["rope", "sinusoidal_positions", "layernorm_invariance", "softmax_jacobian", "multihead_sum",
            "alibi_causal", "attention_mixes_values"]
R = sympy.Rational


@pytest.fixture(scope="module")
def scripts():
    return {script.name: script for script in derivation_scripts.load_scripts()}


@pytest.fixture(scope="module")
def results(scripts):
    return {name: script.result() for name, script in scripts.items()}


@pytest.fixture(scope="module")
def limits(scripts, results):
    return scripts["identity_limits"].module, results["identity_limits"].verify()


def _part(result, title_start):
    return next(part for part in result.parts if part.title.startswith(title_start))


def test_issue_12_results_are_all_present_and_in_the_notes(results):
    notes = (OUT / "notes.tex").read_text(encoding="utf-8")
    for name in ISSUE_12 + ["identity_limits"]:
        assert name in results
        assert f"{name.replace('_', chr(92) + '_')}.tex" in notes or f"{name}.tex" in notes or \
            results[name].title in notes


def test_committed_outputs_are_current(results):
    documents = build.render_documents([results[name] for name in sorted(results)])
    for file_name, text in documents.items():
        committed = OUT / file_name
        assert committed.exists(), f"{committed} missing: run `symbolic-attn derive`"
        assert committed.read_text(encoding="utf-8") == text, f"{committed} is stale: run `symbolic-attn derive`"


COUNTEREXAMPLES = ["RoPE", "Sinusoidal", "ALiBi", "LayerNorm: a negative", "LayerNorm: with", "Softmax Jacobian",
                   "Attention: changing a key"]


def test_limits_are_counterexamples_with_no_cited_step(limits):
    module, result = limits
    kinds = [part.scope.kind for part in result.parts]
    assert kinds == ["counterexample"] * 7 + ["checked"]
    text = result.latex()
    assert "cited" not in text and text.count("(certified non-zero)") == 7
    assert result.trusted_base()["strategies"] == ["certified arithmetic", "structural"] or \
        set(result.trusted_base()["strategies"]) == {"certified arithmetic", "structural"}


@pytest.mark.parametrize("title", COUNTEREXAMPLES)
def test_each_counterexample_fails_when_both_sides_agree(limits, title):
    module, result = limits
    counter = _part(result, title)
    assert isinstance(counter, Counterexample)
    with pytest.raises(ProofError, match=r"^counterexample .*not a counterexample"):
        Counterexample(counter.title, counter.givens, counter.rhs, counter.rhs, counter.scope).verify()


def test_counterexample_values(limits):
    module, result = limits
    jacobian = _part(result, "Softmax Jacobian")
    assert jacobian.lhs.value == sympy.Matrix([[R(1, 4), -R(1, 4)], [-R(1, 4), R(1, 4)]])
    assert jacobian.rhs.value == sympy.Matrix([[R(1, 2), 0], [0, R(1, 2)]])
    rope = _part(result, "RoPE")
    assert (rope.lhs.value, rope.rhs.value) == (1, 0)
    # the tiny difference of the odd width is still certified (about -4.6e-6)
    odd = _part(result, "Sinusoidal").disproof()
    assert odd.approx.startswith("-4.64158")


def test_a_mislabelled_side_is_rejected(limits):
    module, result = limits
    counter = _part(result, "ALiBi")
    # "What is printed is what is checked": a label that is an expression must equal its value.
    wrong = Computed(sympy.Integer(1), counter.lhs.value)
    with pytest.raises(ProofError, match=r"^counterexample 'ALiBi.*the printed form 1 is not the computed value"):
        Counterexample(counter.title, counter.givens, wrong, counter.rhs, counter.scope).verify()


def test_restored_hypotheses_hold_and_a_broken_case_is_named(limits):
    module, result = limits
    check = _part(result, "With the hypotheses restored")
    assert len(check.cases) == 4
    # wrong epsilon: eps / a instead of eps / a^2
    wrong = Computed("wrong", module.layer_norm(module.EXAMPLE, R(1, 3)))
    with pytest.raises(ProofError, match=r"^case 3 \(LayerNorm: the scale moved into \$\\varepsilon\$\) of "
                                         r"'With the hypotheses restored"):
        check.with_case(3, rhs=wrong).verify()
    # wrong sign: the negative scale is not a restored hypothesis
    negative = Computed("wrong", module.layer_norm([-3 * v for v in module.EXAMPLE]))
    with pytest.raises(ProofError, match=r"^case 2 \(LayerNorm: a positive scale"):
        check.with_case(2, lhs=negative).verify()
