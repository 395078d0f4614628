"""The derivation abstraction: checked chains, cited steps, scopes, LaTeX and text."""

import pytest
import sympy

from symbolic_attn.proofs.chain import Assumption, Computed, Derivation, Scope, Step, cited
from symbolic_attn.errors import ProofError
from symbolic_attn.proofs.result import Case, Check, Counterexample, Result

x = sympy.Symbol("x", real=True)
t = sympy.Symbol("t", real=True)
ZERO = Assumption("A1", "the shift t is 0 & nothing else", "t = 0", rewrite=lambda e: e.subs(t, 0))


def chain(**overrides):
    settings = dict(
        title="Square",
        start=x * (x + 2) + 1 + t,
        steps=[
            Step((x + 1) ** 2 + t, "complete the square"),
            Step((x + 1) ** 2, "drop t", using=("A1",)),
            cited((x + 1) ** 2, "a famous rule"),
        ],
        assumptions=[ZERO],
        scope=Scope.proved("every real x"),
    )
    settings.update(overrides)
    return Derivation(**settings)


def test_a_correct_chain_verifies():
    assert chain().verify().cited_steps == (3,)


BROKEN = [
    ("wrong-sign", lambda d: d.with_step(1, rhs=(x - 1) ** 2 + t), r"^step 1 of 'Square': .* refuted: residual 4\*x"),
    ("missing-factor", lambda d: d.with_step(1, rhs=(x + 1) + t), r"^step 1 of 'Square'"),
    ("dropped-assumption", lambda d: d.without_assumption("A1"), r"^step 2 of 'Square': .* uses assumption A1, which is not stated$"),
    ("rule-not-used", lambda d: d.with_step(2, using=()), r"^step 2 of 'Square': .* \(drop t\): refuted: residual t is 1/2 at t=1/2$"),
]


@pytest.mark.parametrize("breaks, message", [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_a_broken_chain_is_rejected_naming_the_step(breaks, message):
    with pytest.raises(ProofError, match=message):
        breaks(chain()).verify()


def test_cited_steps_are_not_checked_but_visibly_marked():
    wrong = chain().with_step(3, rhs=x)  # cited: accepted, and printed as such
    wrong.verify()
    assert r"\textbf{cited, not machine-checked:} a famous rule" in wrong.latex()


def test_inequality_steps_are_proved_from_signs():
    positive = Derivation("Bound", 1 - sympy.exp(x) / (1 + sympy.exp(x)), [Step(sympy.Integer(0), "exp > 0", relation=">")])
    positive.verify()
    with pytest.raises(ProofError, match="^step 1 of 'Bound'"):
        positive.with_step(1, relation="<").verify()


def test_latex_is_an_align_with_a_text_column_and_escaped_text():
    text = chain().latex()
    assert text.splitlines()[0] == r"\begin{align*}"
    assert text.splitlines()[1] == r"t + x \left(x + 2\right) + 1 &= t + \left(x + 1\right)^{2} && \text{(1) complete the square} \\"
    assert text.endswith(r"\end{align*}")
    assert sympy.latex(chain()) == text and "aligned" in chain()._repr_latex_()


def test_matrices_print_as_bmatrix():
    m = sympy.Matrix([[1, sympy.Rational(1, 2)]])
    d = Derivation("M", Computed(r"\operatorname{f}(x)", m), [Step(m, "value")])
    assert r"\operatorname{f}(x) &= \begin{bmatrix}1 & \frac{1}{2}\end{bmatrix}" in d.latex()


def test_str_is_readable():
    assert str(chain()).splitlines() == [
        "Square  [proved for every real x]",
        "  t + x*(x + 2) + 1",
        "  = t + (x + 1)**2    (complete the square)  [expand]",
        "  = (x + 1)**2    (drop t)  [assumptions]",
        "  = (x + 1)**2    (a famous rule)  [cited]",
    ]


def test_scope_sentences():
    assert Scope.proved("every n").sentence() == "Proved for every n."
    assert Scope.checked("n <= 6").sentence() == "Checked (not proved in general) for n <= 6."
    assert Scope.counterexample("n = 2").sentence() == "Exact counterexample: n = 2."


def test_check_names_the_failing_case():
    check = Check("Sq", "x^2", [Case("x = 1", 1, 1), Case("x = 2", 4, 4)], scope=Scope.checked("x in {1, 2}"))
    check.verify()
    with pytest.raises(ProofError, match=r"^case 2 \(x = 2\) of 'Sq': refuted"):
        check.with_case(2, rhs=5).verify()


def test_counterexample_must_differ():
    good = Counterexample("E", [], Computed("e", sympy.E), Computed("3", sympy.Integer(3)), Scope.counterexample("e"))
    assert "certified non-zero" in good.verify().latex()
    with pytest.raises(ProofError, match="^counterexample 'E': not a counterexample"):
        Counterexample("E", [], Computed("a", sympy.Integer(3)), Computed("b", sympy.Integer(3)), Scope.counterexample("e")).verify()


def test_result_prints_assumptions_scope_and_cited_steps():
    result = Result("square", "Squares & more", "Text with 50% and $x^2$.", [chain()])
    text = result.verify().latex()
    assert text.startswith("\\section*{Squares \\& more}\nText with 50\\% and $x^2$.\n")
    assert r"\item (A1) the shift t is 0 \& nothing else: $t = 0$" in text
    assert r"\item Square: Proved for every real x." in text
    assert "not machine-checked: Square, step 3." in text
    assert text.endswith("\n") and "\r" not in text
