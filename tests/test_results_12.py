"""The seven results of issue 12: each verifies, has no cited step, states its scope, and
rejects a broken variant with the step (or case) named.

If the golden-file test fails because a derivation changed on purpose, refresh with
``symbolic-attn derive`` and ``symbolic-attn derive --format md`` (from the repository
root) and commit ``out/``.
"""

from pathlib import Path

import pytest
import sympy

from symbolic_attn.errors import ProofError
from symbolic_attn.notes import build
from symbolic_attn.proofs import scripts as derivation_scripts
from symbolic_attn.proofs.chain import Computed

OUT = Path(__file__).resolve().parent.parent / "out"
# Results e, f, i, j and the entries of h are scripts written on the checker's branch (rope,
# sinusoidal_positions, multihead_sum, alibi_causal, softmax_jacobian), tested in
# test_derivations.py; here: g, k, and the variance part of h.
NEW = ["layernorm_invariance", "softmax_jacobian_variance", "attention_mixes_values"]


@pytest.fixture(scope="module")
def scripts():
    return {script.name: script for script in derivation_scripts.load_scripts()}


@pytest.fixture(scope="module")
def results(scripts):
    return {name: script.result() for name, script in scripts.items()}


def _present(scripts):
    return [name for name in NEW if name in scripts]


def _part(result, title_start):
    return next(part for part in result.parts if part.title.startswith(title_start))


def _broken(result, title_start, change):
    number = next(i for i, part in enumerate(result.parts, 1) if part.title.startswith(title_start))
    return result.with_part(number, change(result.parts[number - 1]))


def _rejects(result, title_start, change, step):
    """The result with one part changed fails, naming that part's step."""
    with pytest.raises(ProofError, match=rf"^{step} of '{_escape(title_start)}"):
        _broken(result, title_start, change).verify()


def _escape(text):
    import re

    # Titles appear in messages as their repr: a backslash is doubled.
    return re.escape(text.replace("\\", "\\\\"))


@pytest.mark.parametrize("name", NEW)
def test_new_result_verifies_with_no_cited_step(results, name):
    result = results[name].verify()
    cited = [(part.title, part.cited_steps) for part in result.parts if getattr(part, "cited_steps", ())]
    assert cited == []
    text = result.latex()
    assert "cited" not in text
    for heading in (r"\paragraph{Scope.}", r"\paragraph{Assumptions.}", r"\paragraph{Trusted base.}"):
        assert heading in text
    base = result.trusted_base()
    assert base["strategies"] and all(rule in text.replace("\\_", "_") for rule in base["rules"])
    # Every chain is proved in general; finitely many cases are labelled as checked.
    kinds = {part.scope.kind for part in result.parts}
    assert "proved" in kinds


def test_committed_outputs_are_current(results):
    documents = build.render_documents([results[name] for name in sorted(results)])
    for file_name, text in documents.items():
        committed = OUT / file_name
        assert committed.exists(), f"{committed} missing: run `symbolic-attn derive`"
        assert committed.read_text(encoding="utf-8") == text, f"{committed} is stale: run `symbolic-attn derive`"
    notes = (OUT / "notes.tex").read_text(encoding="utf-8")
    for name in NEW:
        assert results[name].title in notes


# ------------------------------------------------------------------- g. LayerNorm


def test_layernorm_scope_and_broken_variants(scripts, results):
    module, result = scripts["layernorm_invariance"].module, results["layernorm_invariance"]
    x, k, j, a, b, eps = module.x, module.k, module.j, module.a, module.b, module.eps
    Frac, Mean, Var, LN = module.Frac, module.Mean, module.Var, module.LN
    # wrong offset: the shift b does not survive in the variance
    _rejects(result, "The variance scales", lambda d: d.with_step(5, rhs=a ** 2 * Var(x[k]) + b), "step 5")
    # missing condition: with eps = 0 and x possibly constant the denominator may vanish
    _rejects(result, "With $\\varepsilon = 0$", lambda d: d.without_assumption("A1").__class__(
        d.title, d.start, [s.__class__(s.rhs, s.why, tuple(u for u in s.using if u != "A1"), s.relation)
                           for s in d.steps], d.assumptions[:3] + d.assumptions[4:], d.scope), "step 2")
    # wrong epsilon: eps / a instead of eps / a^2; the scale dropped from the epsilon
    _rejects(result, "With $\\varepsilon > 0$", lambda d: d.with_step(3, rhs=Frac(
        a * (x[j] - Mean(x[k])), a * sympy.sqrt(Var(x[k]) + eps / a))), "step 3")
    _rejects(result, "With $\\varepsilon > 0$", lambda d: d.with_step(4, rhs=Frac(
        x[j] - Mean(x[k]), sympy.sqrt(Var(x[k]) + eps))), "step 4")
    # missing term: epsilon dropped from the denominator
    _rejects(result, "The squared norm", lambda d: d.with_step(2, rhs=Frac(
        sympy.Sum((x[j] - Mean(x[k])) ** 2, (j, 1, module.d)), Var(x[k]))), "step 2")
    # wrong normalisation: d - 1 (the sample variance) instead of d
    _rejects(result, "With $\\varepsilon = 0$ the squared norm", lambda d: d.with_step(3, rhs=module.d - 1), "step 3")
    # missing condition: without Var(x) > 0 the cancellation is not allowed
    _rejects(result, "With $\\varepsilon = 0$ the squared norm", lambda d: d.__class__(
        d.title, d.start, [st.__class__(st.rhs, st.why, tuple(u for u in st.using if u != "A1"), st.relation)
                           for st in d.steps], d.assumptions[:1], d.scope), "step 1")
    # the nonnegativity of the variance needs its definition
    _rejects(result, "The variance is nonnegative", lambda d: d.with_step(2, using=()), "step 2")
    example = _part(result, "A worked vector")
    with pytest.raises(ProofError, match=r"^case 4 \(squared norm with \$\\varepsilon = 1\$\) of 'A worked vector"):
        example.with_case(4, rhs=sympy.Integer(4)).verify()
    assert example.cases[3].rhs == sympy.Rational(76, 21)
    for title in ("A negative scale", "With $\\varepsilon > 0$ the scale"):
        counter = _part(result, title)
        with pytest.raises(ProofError, match="not a counterexample"):
            type(counter)(counter.title, counter.givens, counter.rhs, counter.rhs, counter.scope).verify()


# ------------------------------------------- h. softmax Jacobian: the variance parts


def test_jacobian_variance_parts_and_broken_variants(scripts, results):
    module, result = scripts["softmax_jacobian_variance"].module, results["softmax_jacobian_variance"]
    P, i, j, v, n = module.P, module.i, module.j, module.v, module.n
    assert str(_part(result, "The quadratic form").scope) == "proved for every n >= 1, all real scores and every real v"
    # wrong index: the deviation from 0 instead of from the weighted mean
    _rejects(result, "$J v$ is $p$", lambda d: d.with_step(3, rhs=P(i) * v[i]), "step 3")
    # missing condition: without the range of i the delta cannot pick the term j = i
    _rejects(result, "$J v$ is $p$", lambda d: d.without_assumption("A1").__class__(
        d.title, d.start, [st.__class__(st.rhs, st.why, (), st.relation, rules=st.rules) for st in d.steps],
        tuple(x for x in d.assumptions if x.label != "A1"), d.scope), "step 2")
    # wrong sign: the variance is not > 0 for every v (v constant gives 0)
    _rejects(result, "The quadratic form", lambda d: d.with_step(4, relation=">"), "step 4")
    # dropped assumption: without the lemma (J v)_i is not known
    _rejects(result, "The quadratic form", lambda d: d.without_assumption("P1").with_step(1, using=()), "step 1")
    # missing factor: the square's weights p_i dropped
    _rejects(result, "The quadratic form", lambda d: d.with_step(2, rhs=sympy.Sum(
        (v[i] - module.weighted_mean()) ** 2, (i, 1, n))), "step 2")
    explicit = _part(result, "Differentiating the softmax")
    with pytest.raises(ProofError, match=r"^case 2 \(\$n = 3\$\) of 'Differentiating the softmax of the library"):
        explicit.with_case(2, rhs=Computed("wrong", explicit.cases[1].rhs.value * 2)).verify()
    counter = _part(result, "The Jacobian is not")
    R = sympy.Rational
    assert counter.lhs.value == sympy.Matrix([[R(1, 4), -R(1, 4)], [-R(1, 4), R(1, 4)]])
    with pytest.raises(ProofError, match="not a counterexample"):
        type(counter)(counter.title, counter.givens, counter.lhs, counter.lhs, counter.scope).verify()


# ------------------------------------------- broken steps that once crashed the checker

# sympy.simplify raised StopIteration on these residuals (Sums inside square roots and
# quotients); the checker now contains SymPy's internal failures, so each is a typed rejection.
ONCE_CRASHING = [
    ("variance_chain", lambda m, d: d.with_step(5, rhs=m.a * m.Var(m.x[m.k])), 5),
    ("epsilon_chain", lambda m, d: d.with_step(5, rhs=m.LN(m.x[m.k], m.j, m.eps)), 5),
    ("norm_chain", lambda m, d: d.with_step(3, rhs=m.d), 3),
    ("norm_chain", lambda m, d: d.with_step(3, rhs=m.Frac(m.Var(m.x[m.k]), m.Var(m.x[m.k]) + m.eps)), 3),
]


@pytest.mark.parametrize("chain, change, step", ONCE_CRASHING,
                         ids=["variance scales by a", "epsilon forgets the scale", "norm is d", "norm without d"])
def test_broken_layernorm_step_rejected_with_a_typed_error(scripts, chain, change, step):
    module = scripts["layernorm_invariance"].module
    with pytest.raises(ProofError, match=rf"^step {step} of "):
        change(module, getattr(module, chain)()).verify()


# -------------------------------------------------------- k. attention mixes values


def test_mixing_scope_and_broken_variants(scripts, results):
    module, result = scripts["attention_mixes_values"].module, results["attention_mixes_values"]
    w, v, a, j, k, n, r, M, L, Delta = (module.w, module.v, module.a, module.j, module.k, module.n, module.r,
                                        module.M, module.L, module.Delta)
    Sum, Frac = sympy.Sum, module.Frac
    # wrong bound: without "M bounds the allowed values" the last step fails
    _rejects(result, "No output coordinate exceeds", lambda d: d.with_step(3, rhs=sympy.Sum(
        Frac(sympy.exp(module.s[j]) * a[j] * (M - v[j]), module._z()), (j, 1, n))).with_step(4, using=("A1",)),
        "step 4")
    # wrong sign: v_j + L
    _rejects(result, "No output coordinate is below", lambda d: d.with_step(1, rhs=Sum(w(j) * (v[j] + L), (j, 1, n))),
             "step 1")
    # missing factor: the mean over all n keys instead of the allowed ones
    _rejects(result, "A zero query", lambda d: d.with_step(2, rhs=Frac(Sum(a[j] * v[j], (j, 1, n)), n)), "step 2")
    # wrong index: the change lands on the weight of key j instead of r
    _rejects(result, "Changing value row", lambda d: d.with_step(2, rhs=w(j) * Delta), "step 2")
    # dropped assumption: r may lie outside 1..n
    _rejects(result, "Changing value row", lambda d: d.without_assumption("A3").with_step(2, using=("A1",)), "step 2")
    guide = _part(result, "The numbers of the guide")
    values = {case.label: case for case in guide.cases}
    R = sympy.Rational
    assert values["zero query: the mean of the values"].rhs == sympy.Matrix([[R(2, 3), R(4, 3)]])
    with pytest.raises(ProofError, match=r"^case 2 \(zero query: the mean of the values\) of 'The numbers of the guide"):
        guide.with_case(2, rhs=sympy.ImmutableMatrix([[R(2, 3), R(2, 3)]])).verify()
    # the certified bounds around 1.152 are tight enough to fail when moved past the value
    with pytest.raises(ProofError, match=r"^case 6 \(\$2 a_3 < 1.1525\$\)"):
        guide.with_case(6, rhs=R(1151, 1000)).verify()
    counter = _part(result, "Changing a key row")
    with pytest.raises(ProofError, match="not a counterexample"):
        type(counter)(counter.title, counter.givens, counter.rhs, counter.rhs, counter.scope).verify()
