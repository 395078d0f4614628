"""The four results: each verifies, matches its committed LaTeX, and rejects broken variants.

If a golden-file test fails because a derivation changed on purpose, refresh with
``symbolic-attn derive`` (run from the repository root) and commit ``out/``.
"""

from pathlib import Path

import pytest
import sympy

from symbolic_attn.notes import build
from symbolic_attn.proofs import scripts as derivation_scripts
from symbolic_attn.proofs.chain import Computed
from symbolic_attn.errors import ProofError

OUT = Path(__file__).resolve().parent.parent / "out"
REFRESH = "stale: run `symbolic-attn derive` from the repository root and commit out/"
NAMES = sorted(["alibi_causal", "masked_renormalization", "permutation_equivariance", "rope", "shift_invariance",
         "sinusoidal_positions", "sqrt_dk_scaling", "multihead_sum", "softmax_jacobian", "layernorm_invariance", "attention_mixes_values", "identity_limits", "attention_gradients"])


@pytest.fixture(scope="module")
def scripts():
    return {script.name: script for script in derivation_scripts.load_scripts()}


@pytest.fixture(scope="module")
def results(scripts):
    return {name: script.result() for name, script in scripts.items()}


def test_exactly_these_results(scripts):
    assert sorted(scripts) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_result_verifies(results, name):
    results[name].verify()


def test_committed_latex_is_current(results):
    documents = build.render_documents([results[name] for name in NAMES])
    for file_name, text in documents.items():
        committed = OUT / file_name
        assert committed.exists(), f"{committed} missing; {REFRESH}"
        assert committed.read_text(encoding="utf-8") == text, f"{committed} is {REFRESH}"


def test_every_result_states_scope_and_cited_steps(results):
    for result in results.values():
        text = result.latex()
        assert r"\paragraph{Scope.}" in text and r"\paragraph{Assumptions.}" in text
    permutation = results["permutation_equivariance"].latex()
    assert "Checked (not proved in general) for every $n \\le 6$" in permutation
    assert "Exact counterexample: $n = 2$" in permutation


@pytest.mark.parametrize("name", NAMES)
def test_no_cited_steps_and_a_visible_trusted_base(results, name):
    result = results[name]
    cited = [(part.title, part.cited_steps) for part in result.parts if getattr(part, "cited_steps", ())]
    assert cited == []
    text = result.latex()
    assert "cited" not in text and "\\paragraph{Trusted base.}" in text
    base = result.trusted_base()
    assert base["strategies"] and all(rule in text.replace("\\_", "_") for rule in base["rules"])


def test_rules_used_by_the_results(results):
    assert results["permutation_equivariance"].trusted_base()["rules"] == ["sum.delta", "sum.reindex(sigma)"]
    assert "sum.ge_term" in results["masked_renormalization"].trusted_base()["rules"]
    assert results["shift_invariance"].trusted_base()["rules"] == ["sum.factor_out"]


def _part(result, title_start):
    return next(part for part in result.parts if part.title.startswith(title_start))


def _broken(result, title_start, change):
    """The result with one part replaced by change(part)."""
    number = next(i for i, part in enumerate(result.parts, 1) if part.title.startswith(title_start))
    return result.with_part(number, change(result.parts[number - 1]))


# ---------------------------------------------------------------- a. permutation equivariance


def test_permutation_broken_variants(scripts, results):
    module, result = scripts["permutation_equivariance"].module, results["permutation_equivariance"]
    P, S, X, W_V, W_Q, W_K = module.P, module.S, module.X, module.W_V, module.W_Q, module.W_K
    Softmax = module.Softmax
    variants = {
        # wrong index: P^T S P instead of P S P^T
        "wrong index": (lambda d: d.with_step(2, rhs=Softmax(P.T * S * P) * P * X * W_V), "step 2"),
        # missing factor: the 1/sqrt(d_k) forgotten
        "missing factor": (lambda d: d.with_step(1, rhs=Softmax(P * X * W_Q * (P * X * W_K).T) * P * X * W_V), "step 1"),
        # dropped assumption: P^T P = I no longer available
        "dropped assumption": (lambda d: d.without_assumption("A1").with_step(4, using=()), "step 4"),
    }
    for _label, (change, step) in variants.items():
        with pytest.raises(ProofError, match=rf"^{step} of 'The matrix-level chain, general \$n\$'"):
            _broken(result, "The matrix-level chain", change).verify()
    lemma = _part(result, "The row-softmax lemma, small")
    last = lemma.cases[-1]
    wrong_sign = Computed("wrong", last.rhs.value.T)  # wrong index: transposed weights
    with pytest.raises(ProofError, match=r"^case 42 \(\$n = 6\$, permutation \[0, 1, 2, 3, 5, 4\]\) of 'The row-softmax lemma, small"):
        lemma.with_case(42, rhs=wrong_sign).verify()
    # The general lemma: reindexing without the rule, or without sigma stated a bijection, fails.
    general = "The row-softmax lemma, every"
    with pytest.raises(ProofError, match=r"^step 3 of 'The row-softmax lemma, every \$n\$'"):
        _broken(result, general, lambda d: d.with_step(3, rules=())).verify()
    no_bijection = module.Assumption("A2", "indices in range", condition=[module.i <= module.n, module.j <= module.n])
    with pytest.raises(ProofError, match=r"^step 3 of .*sum.reindex\(sigma\): needs sigma is a bijection of 1..n"):
        _broken(result, general, lambda d: d.__class__(d.title, d.start, d.steps,
                                                       (no_bijection,) + d.assumptions[1:], d.scope)).verify()
    with pytest.raises(ProofError, match=r"^step 2 of 'Entries of a permuted matrix"):
        _broken(result, "Entries of", lambda d: d.with_step(2, rhs=module.M[module.sigma(module.v), module.sigma(module.u)])).verify()
    counter = _part(result, "A fixed causal mask")
    with pytest.raises(ProofError, match="not a counterexample"):
        type(counter)(counter.title, counter.givens, counter.lhs, counter.lhs, counter.scope).verify()


# ---------------------------------------------------------------------- b. shift invariance


def test_shift_broken_variants(scripts, results):
    module, result = scripts["shift_invariance"].module, results["shift_invariance"]
    s, i, k, c, exp, Frac = module.s, module.i, module.k, module.c, sympy.exp, module.Frac
    sum_ = module._sum
    variants = {
        # (a sign flipped in numerator *and* denominator would still be right: only one)
        "wrong sign": (lambda d: d.with_step(2, rhs=Frac(exp(-c) * exp(s[i]), sum_(exp(c) * exp(s[k])))), "step 2"),
        "missing factor": (lambda d: d.with_step(3, rhs=Frac(exp(c) * exp(s[i]), sum_(exp(s[k])))), "step 3"),
        "wrong index": (lambda d: d.with_step(4, rhs=Frac(exp(s[k]), sum_(exp(s[k])))), "step 4"),
    }
    for _label, (change, step) in variants.items():
        with pytest.raises(ProofError, match=rf"^{step} of 'Adding a constant to every score'"):
            _broken(result, "Adding a constant", change).verify()
    # Dropped assumption: a "shift" c_k that depends on k cannot be taken out of the sum.
    c_k = sympy.IndexedBase("c", real=True)[k]
    with pytest.raises(ProofError, match=r"^step \d of 'per-key shift'"):
        module.shift_chain(c_k, r"s + c", "A1", "per-key shift").verify()


# ------------------------------------------------------------- c. masked renormalization


def test_masked_broken_variants(scripts, results):
    module, result = scripts["masked_renormalization"].module, results["masked_renormalization"]
    a, s, j, k, Z, Frac, exp = module.a, module.s, module.j, module.k, module.Z, module.Frac, sympy.exp
    sum_ = module._sum
    renorm = {
        "missing factor": (lambda d: d.with_step(1, rhs=Frac(a[j] * exp(s[j]), sum_(Frac(a[k] * exp(s[k]), Z)))), "step 1"),
        "wrong index": (lambda d: d.with_step(3, rhs=Frac(a[k] * exp(s[k]), sum_(a[k] * exp(s[k])))), "step 3"),
    }
    for _label, (change, step) in renorm.items():
        with pytest.raises(ProofError, match=rf"^{step} of 'Renormalized zeroed weights are the masked weights'"):
            _broken(result, "Renormalized", change).verify()
    beta = module.beta
    mass = {
        "wrong sign": (lambda d: d.with_step(2, rhs=1 + Frac(sum_(beta[k] * exp(s[k])), Z)), "step 2"),
        "dropped assumption": (lambda d: d.without_assumption("D1"), "step 1"),
        "strict inequality without the positive mass": (lambda d: d.without_assumption("P1").with_step(3, using=()),
                                                        "step 3"),
        "inequality reversed": (lambda d: d.with_step(3, relation=">"), "step 3"),
    }
    for _label, (change, step) in mass.items():
        with pytest.raises(ProofError, match=rf"^{step} of 'Zeroed weights sum to 1 minus the blocked mass'"):
            _broken(result, "Zeroed weights sum", change).verify()
    positive = {
        "term outside the sum's range": (lambda d: d.without_assumption("A3").with_step(1, using=()), "step 1"),
        "strict from a nonnegative sum alone": (lambda d: d.with_step(1, relation=">", rules=()), "step 1"),
    }
    for _label, (change, step) in positive.items():
        with pytest.raises(ProofError, match=rf"^{step} of 'The blocked mass is positive'"):
            _broken(result, "The blocked mass", change).verify()
    reference = _part(result, "The reference row")
    with pytest.raises(ProofError, match=r"^case 6 \(their sum\) of 'The reference row.*': refuted: residual -1/2"):
        reference.with_case(6, rhs=sympy.Integer(1)).verify()
    masks = _part(result, "Every mask")
    with pytest.raises(ProofError, match=r"^case 2 \(\$n = 2\$, allowed \[1, 0\]: zeroed weights sum below 1\)"):
        masks.with_case(2, relation="<", rhs=masks.cases[1].lhs).verify()


def test_reference_numbers(results):
    reference = _part(results["masked_renormalization"], "The reference row")
    values = {case.label: case.rhs for case in reference.cases}
    R = sympy.Rational
    assert values["softmax"] == sympy.Matrix([[R(1, 6), R(1, 3), R(1, 2)]])
    assert values["masked (renormalized)"] == sympy.Matrix([[R(1, 3), R(2, 3), 0]])
    assert values["zeroed after softmax"] == sympy.Matrix([[R(1, 6), R(1, 3), 0]])
    assert values["their sum"] == R(1, 2)
    assert values["masked output"] == sympy.Matrix([[R(1, 3), R(4, 3)]])
    assert values["output"] == sympy.Matrix([[R(5, 3), R(7, 6)]])


# -------------------------------------------------------------------- d. sqrt(d_k) scaling


def test_scaling_broken_variants(scripts, results):
    module, result = scripts["sqrt_dk_scaling"].module, results["sqrt_dk_scaling"]
    Var, q, k, i, d_k, DOT = module.Var, module.q, module.k, module.i, module.d_k, module.DOT
    mu_q, mu_k, sigma_q, sigma_k = module.mu_q, module.mu_k, module.sigma_q, module.sigma_k
    cases = [
        ("One term", 3, lambda d: d.with_step(3, rhs=(sigma_q**2 + mu_q**2) * (sigma_k**2 + mu_k**2) + mu_q**2 * mu_k**2),
         "wrong sign"),
        ("Scaling by", 1, lambda d: d.with_step(1, rhs=Var(DOT)), "missing factor"),
        ("The variance of", 1, lambda d: d.with_step(1, rhs=sympy.Sum(Var(q[i] * k[i + 1]), (i, 1, d_k))), "wrong index"),
        ("The mean of", 2, lambda d: d.without_assumption("A1").with_step(2, using=()), "dropped assumption"),
    ]
    for title, step, change, _label in cases:
        with pytest.raises(ProofError, match=rf"^step {step} of '{title}"):
            _broken(result, title, change).verify()


def test_scaling_numbers(results):
    check = _part(results["sqrt_dk_scaling"], "Exact confirmations")
    assert len(check.cases) == 12
    counter = _part(results["sqrt_dk_scaling"], "Without independence")
    assert counter.lhs.value == 0 and counter.rhs.value == 2


@pytest.mark.parametrize("label, width", [("rademacher", 2), ("normal", 1), ("uniform", 1)])
def test_closed_form_moments_agree_with_sympy_stats(scripts, label, width):
    """The derivation uses closed-form moments (fast); sympy.stats is the independent cross-check."""
    from sympy.stats import E, Normal, Rademacher, Uniform, variance

    module = scripts["sqrt_dk_scaling"].module
    make, moment = {
        "rademacher": (Rademacher, module.rademacher_moment),
        "normal": (lambda name: Normal(name, 0, 1), module.normal_moment),
        "uniform": (lambda name: Uniform(name, -sympy.sqrt(3), sympy.sqrt(3)), module.uniform_moment),
    }[label]
    qs = [make(f"q_{j}") for j in range(width)]
    ks = [make(f"k_{j}") for j in range(width)]
    dot = sympy.Add(*[a * b for a, b in zip(qs, ks)])
    mean, var = module.moments_of_dot(moment, width)
    assert sympy.simplify(E(dot) - mean) == 0 and sympy.simplify(variance(dot) - var) == 0
    for power in range(1, 5):
        assert sympy.simplify(E(qs[0] ** power) - moment(power)) == 0


# ------------------------------------------------------------------------ e. RoPE, j. ALiBi


def test_rope_broken_variants(scripts, results):
    module, result = scripts["rope"].module, results["rope"]
    i, h, m, n = module.i, module.h, module.m, module.n
    q1, q2, k1, k2 = module.a[i], module.b[i], module.u[i], module.v[i]
    variants = {
        "wrong sign": (lambda d: d.with_step(3, rhs=sympy.Sum((q1 * k1 + q2 * k2) * module.C(n - m)
                                                              + (q2 * k1 - q1 * k2) * module.S(n + m), (i, 1, h))),
                       "step 3"),
        "wrong difference": (lambda d: d.with_step(4, rhs=module.RelativeScore(m - n)), "step 4"),
        "missing term": (lambda d: d.with_step(1, rhs=sympy.Sum(q1 * k1 + q2 * k2, (i, 1, h))), "step 1"),
    }
    for _label, (change, step) in variants.items():
        with pytest.raises(ProofError, match=rf"^{step} of 'The score, every even width'"):
            _broken(result, "The score", change).verify()


def test_alibi_broken_variants(scripts, results):
    module, result = scripts["alibi_causal"].module, results["alibi_causal"]
    s, j, k, i, m = module.s, module.j, module.k, module.i, module.m
    variants = {
        "wrong sign": (lambda d: d.with_step(5, rhs=module.SoftmaxAt(s[k] - m * k, k, j, i)), "step 5"),
        "bidirectional row": (lambda d: d.with_step(5, rhs=module.SoftmaxAt(s[k] + m * k, k, j, i + 1)), "step 5"),
        "factor dropped": (lambda d: d.with_step(3, rhs=module.Frac(sympy.exp(-m * i) * sympy.exp(s[j] + m * j),
                                                                      module._row_sum(sympy.exp(s[k] + m * k)))),
                           "step 3"),
    }
    for _label, (change, step) in variants.items():
        with pytest.raises(ProofError, match=rf"^{step} of 'Row \$i\$ of causal ALiBi"):
            _broken(result, "Row $i$", change).verify()
    check = _part(result, "Whole matrices")
    wrong = check.cases[2].rhs.value.T
    with pytest.raises(ProofError, match=r"^case 3 \(\$n = 3\$\)"):
        check.with_case(3, rhs=wrong).verify()


# ------------------------------------------------------------------- f. sinusoidal positions


def test_sinusoidal_broken_variants(scripts, results):
    module, result = scripts["sinusoidal_positions"].module, results["sinusoidal_positions"]
    p, k, i, h, omega = module.p, module.k, module.i, module.h, module.omega
    wrong_rotation = sympy.ImmutableMatrix([[sympy.cos(k * omega[i]), -sympy.sin(k * omega[i])],
                                            [sympy.sin(k * omega[i]), sympy.cos(k * omega[i])]])
    with pytest.raises(ProofError, match=r"^step 2 of 'One pair moves by a rotation': .*refuted"):
        _broken(result, "One pair", lambda d: d.with_step(2, rhs=wrong_rotation * module.pair(p))).verify()
    with pytest.raises(ProofError, match=r"^step 3 of 'The dot product depends on the offset only'"):
        _broken(result, "The dot product",
                lambda d: d.with_step(3, rhs=sympy.Sum(sympy.cos((p + k) * omega[i]), (i, 1, h)))).verify()
    with pytest.raises(ProofError, match=r"^step 2 of 'The dot product depends on the offset only'"):
        _broken(result, "The dot product", lambda d: d.with_step(2, rhs=sympy.Sum(
            sympy.sin(k * omega[i]) * (sympy.sin(p * omega[i]) ** 2 + sympy.cos(p * omega[i]) ** 2), (i, 1, h)))).verify()


# ------------------------------------------------------------------------- i. multi-head sum


def test_multihead_broken_variants(scripts, results):
    module, result = scripts["multihead_sum"].module, results["multihead_sum"]
    C, W, t, j, g, r, h, d_v = module.C, module.W, module.t, module.j, module.g, module.r, module.h, module.d_v
    wrong = g * d_v + r  # off by one block
    title = r"^step {} of 'Entry \$\(t, j\)\$, every \$h\$ and all widths'"
    with pytest.raises(ProofError, match=title.format(1)):
        _broken(result, "Entry", lambda d: d.with_step(1, rhs=sympy.Sum(C[t, wrong] * W[wrong, j], (r, 1, d_v),
                                                                          (g, 1, h)))).verify()
    with pytest.raises(ProofError, match=title.format(2)):
        _broken(result, "Entry", lambda d: d.with_step(2, using=("D1",))).verify()
    with pytest.raises(ProofError, match=title.format(3)):
        _broken(result, "Entry", lambda d: d.with_step(3, rhs=sympy.Sum(module.HeadTerm(g, j, t), (g, 1, h)))).verify()
    check = _part(result, "Explicit")
    with pytest.raises(ProofError, match=r"^case 3 "):
        check.with_case(3, rhs=check.cases[3].rhs).verify()


# ---------------------------------------------------------------------- h. softmax Jacobian


def test_jacobian_broken_variants(scripts, results):
    module, result = scripts["softmax_jacobian"].module, results["softmax_jacobian"]
    p, i, j, n = module.p, module.i, module.j, module.n
    delta = sympy.KroneckerDelta
    with pytest.raises(ProofError, match=r"^step 3 of 'The entries, every \$n\$'.*refuted"):
        _broken(result, "The entries", lambda d: d.with_step(3, rhs=p(i) * (delta(i, j) + p(j)))).verify()
    with pytest.raises(ProofError, match=r"^step 2 of 'The entries, every \$n\$'.*needs -j \+ n >= 0"):
        _broken(result, "The entries", lambda d: d.without_assumption("A1").with_step(2, using=()).with_step(
            3, using=())).verify()
    with pytest.raises(ProofError, match=r"^step 2 of '\$J\$ is symmetric'"):
        _broken(result, "$J$ is symmetric", lambda d: d.with_step(2, rules=())).verify()
    with pytest.raises(ProofError, match=r"^step 3 of 'The rows sum to zero"):
        _broken(result, "The rows", lambda d: d.with_step(3, rhs=sympy.Integer(1))).verify()
    with pytest.raises(ProofError, match=r"^step 3 of '\$v\^\{T\} J v\$"):
        _broken(result, "$v^{T} J v$", lambda d: d.with_step(3, relation=">")).verify()
    with pytest.raises(ProofError, match=r"^step 2 of '\$v\^\{T\} J v\$.*refuted"):
        _broken(result, "$v^{T} J v$", lambda d: d.with_step(2, rhs=sympy.Sum(p(i) * module.v[i] ** 2, (i, 1, n)))).verify()
    check = _part(result, "The whole matrix")
    with pytest.raises(ProofError, match=r"^case 2 "):
        check.with_case(2, rhs=check.cases[1].rhs.T * 2).verify()


# ------------------------------------------------------------------ g. LayerNorm invariances


def test_layernorm_broken_variants(scripts, results):
    module, result = scripts["layernorm_invariance"].module, results["layernorm_invariance"]
    LN, x, k, i, a, b, eps = module.LN, module.x, module.k, module.i, module.a, module.b, module.eps
    with pytest.raises(ProofError, match=r"^step 3 of '\$.*epsilon > 0\$: a scale moves into"):
        _broken(result, "$\\epsilon > 0$", lambda d: d.with_step(3, rhs=LN(x[k], i, eps / a))).verify()
    with pytest.raises(ProofError, match=r"^step 3 of '\$.*epsilon = 0\$: scale and shift are ignored'"):
        _broken(result, "$\\epsilon = 0$", lambda d: d.with_step(3, rhs=LN(x[k] + b, i, 0) + 1)).verify()
    with pytest.raises(ProofError, match=r"^step 1 of '\$.*epsilon = 0\$.*needs .* != 0 \(denominator\)"):
        _broken(result, "$\\epsilon = 0$", lambda d: d.without_assumption("A1").with_step(1, using=()).with_step(
            2, using=()).with_step(3, using=())).verify()
    with pytest.raises(ProofError, match=r"^step 2 of 'The squared norm'"):
        _broken(result, "The squared norm", lambda d: d.with_step(
            2, rhs=module.spread(x[k]) / (module.spread(x[k]) + eps))).verify()


# ------------------------------------------------------------------ k. attention mixes values


def test_mixing_broken_variants(scripts, results):
    module, result = scripts["attention_mixes_values"].module, results["attention_mixes_values"]
    w, v, k, n, j, delta = module.w, module.v, module.k, module.n, module.j, module.delta
    with pytest.raises(ProofError, match=r"^step 3 of 'Above the smallest allowed value"):
        _broken(result, "Above", lambda d: d.without_assumption("A1").with_step(3, using=())).verify()
    with pytest.raises(ProofError, match=r"^step 2 of 'Changing value row .*refuted"):
        _broken(result, "Changing", lambda d: d.with_step(2, rhs=2 * w(j) * delta)).verify()
    with pytest.raises(ProofError, match=r"^step 1 of 'A zero query averages"):
        _broken(result, "A zero query", lambda d: d.with_step(1, rhs=sympy.Sum(v[k] / (n + 1), (k, 1, n)))).verify()
    lab = _part(result, "The grid/load/rises lab")
    with pytest.raises(ProofError, match=r"^case 3 .*refuted"):
        lab.with_case(3, rhs=lab.cases[2].rhs * sympy.Rational(3, 2)).verify()
    with pytest.raises(ProofError, match=r"^case 4 "):
        lab.with_case(4, rhs=sympy.Rational(1, 10**6)).verify()


# ------------------------------------------------------------ l. backpropagation through attention


def test_gradient_broken_variants(scripts, results):
    """Each classic mistake of a hand backward pass, written as the step's result, is refused."""
    module, result = scripts["attention_gradients"].module, results["attention_gradients"]
    A, G, K, Q, dS, tau, p, g = module.A, module.G, module.K, module.Q, module.dS, module.tau, module.p, module.g
    i, j, ell, a, b, n = module.i, module.j, module.ell, module.a, module.b, module.n
    Sum = sympy.Sum
    broken = [
        # dV = A G (A^T's index order swapped)
        ("$dV", 3, {"rhs": Sum(A[j, i] * G[i, b], (i, 1, n))}, r"^step 3 of '\$dV = A\^\{T\} G\$'"),
        # grad_missing_scale: dQ = dS' K
        ("$dQ", 4, {"rhs": Sum(dS[a, ell] * K[ell, b], (ell, 1, module.m))}, r"^step 4 of [\"']\$dQ = "),
        # grad_transposed_k: dK = tau dS' Q
        ("$dK", 3, {"rhs": Sum(tau * dS[a, i] * Q[i, b], (i, 1, n))}, r"^step 3 of [\"']\$dK = "),
        # grad_diagonal_jacobian: dS' = A * dA
        ("The softmax backward", 4, {"rhs": p(j) * g[j]}, r"^step 4 of 'The softmax backward"),
        # grad_missing_rowsum: dS' = A * (dA - A * dA)
        ("The softmax backward", 4, {"rhs": p(j) * (g[j] - p(j) * g[j])}, r"^step 4 of 'The softmax backward"),
        # the rows of A * dA do not sum to zero
        ("Each row", 3, {"rhs": sympy.Integer(1)}, r"^step 3 of [\"']Each row"),
        # D without the value rows: sum_c G_ic sum_j A_ij
        ("$\\operatorname{rowsum}", 3, {"rhs": Sum(G[i, module.c] * Sum(A[i, j], (j, 1, module.m)), (module.c, 1, module.d_v))},
         r"^step 3 of '\$\\+operatorname\{rowsum\}"),
        # exchanging the sums without the rule
        ("$\\operatorname{rowsum}", 2, {"rules": ()}, r"^step 2 of '\$\\+operatorname\{rowsum\}"),
    ]
    for title, step, change, pattern in broken:
        with pytest.raises(ProofError, match=pattern):
            _broken(result, title, lambda d, step=step, change=change: d.with_step(step, **change)).verify()
    # A blocked score: without "a_j = 0" the gradient is not 0
    with pytest.raises(ProofError, match=r"^step 4 of 'A blocked score gets gradient.*(refuted|not shown)"):
        _broken(result, "A blocked score", lambda d: d.without_assumption("M1").with_step(4, using=("M2",))).verify()
    # ... and without a key allowed in the row, the masked softmax is not defined
    with pytest.raises(ProofError, match=r"^step 1 of 'A blocked score.*denominator"):
        _broken(result, "A blocked score", lambda d: d.without_assumption("M2").with_step(1, using=("A4",))).verify()
    library = _part(result, "The library's backward pass")
    with pytest.raises(ProofError, match=r"^case 1 "):
        library.with_case(1, rhs=library.cases[0].rhs * 2).verify()
