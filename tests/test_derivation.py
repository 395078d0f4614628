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
    # A free-LaTeX label is marked as the author's, unchecked, wherever it is displayed.
    assert (r"\underbrace{\operatorname{f}(x)}_{\text{unchecked label}} &= \begin{bmatrix}1 & \frac{1}{2}\end{bmatrix}"
            in d.latex())


def test_str_is_readable():
    assert str(chain()).splitlines() == [
        "Square  [proved for every real x]",
        "  t + x*(x + 2) + 1",
        "  = t + (x + 1)**2    (complete the square)  [expand]",
        "  = (x + 1)**2    (drop t)  [assumptions]",
        "  = (x + 1)**2    (a famous rule)  [cited]",
        "  assuming (A1) the shift t is 0 & nothing else: t = 0",
        "  declared: t, x: real",
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


# ------------------------------------------------------------------ the README's example


def _readme_section():
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    return text.split("### Writing your own derivation", 1)[1].split("\n### ", 1)[0]


def test_readme_script_verifies_and_its_error_is_the_real_one(tmp_path):
    import re

    from symbolic_attn.errors import DerivationFailure
    from symbolic_attn.proofs import scripts as derivation_scripts

    section = _readme_section()
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    folder = tmp_path / "my_derivations"
    folder.mkdir()
    script = folder / "weights_sum_to_one.py"
    script.write_text(code)
    [result] = derivation_scripts.verify_all(derivation_scripts.load_scripts([folder]))
    assert result.title.rstrip(".") == "Softmax weights sum to one"  # the heading drops the period
    assert result.trusted_base()["rules"] == ["sum.factor_out"]
    text = result.latex()
    assert "$i, k, n$: positive integers" in text and "$Z$: positive" in text
    # The README's wrong step: the lower limit of the sum in step 2 changed from 1 to 2.
    script.write_text(code.replace('Frac(Sum(exp(s[i]), (i, 1, n)), Z)', 'Frac(Sum(exp(s[i]), (i, 2, n)), Z)'))
    with pytest.raises(DerivationFailure) as caught:
        derivation_scripts.verify_all(derivation_scripts.load_scripts([folder]))
    shown = re.search(r"verification failed: my_derivations/weights_sum_to_one.py: (.*)\n", section).group(1)
    assert str(caught.value).split(".py: ", 1)[1] == shown


def test_build_that_raises_is_one_line(tmp_path):
    from symbolic_attn.errors import ScriptError
    from symbolic_attn.proofs import scripts as derivation_scripts

    (tmp_path / "boom.py").write_text('NAME = "boom"\n\ndef build():\n    raise KeyError("no\\nsuch")\n')
    [script] = derivation_scripts.load_scripts([tmp_path])
    with pytest.raises(ScriptError, match=r"^.*boom.py: build\(\) raised KeyError: 'no\\nsuch'$") as caught:
        script.result()
    assert "\n" not in str(caught.value)


def test_declared_flags_are_printed_and_conflicts_are_errors():
    from symbolic_attn.errors import AssumptionConflictError

    z = sympy.Symbol("Z", positive=True)
    n = sympy.Symbol("n", integer=True, even=True)
    d = Derivation("flags", z * n, [Step(n * z, "commute")], scope=Scope.proved("every $n$"))
    result = Result("flags", "Flags", "", [d]).verify()
    assert "Declared (the flags the checker uses): $Z$: positive; $n$: even integer." in result.latex()
    stated = Assumption("A1", "$Z \\ge 0$", condition=z < 0)
    with pytest.raises(AssumptionConflictError, match=r"^'flags': assumption \(A1\) .* contradicts the declarations"):
        Derivation("flags", z, [Step(z, "same")], assumptions=[stated]).verify()


def test_scope_and_assumptions_print_math_and_markdown_keeps_scope_apart():
    d = Derivation("Square", x, [Step(x, "same")], scope=Scope.checked("every $n \\le 6$, $d_k$, $n \\times n$"))
    text = Result("sq", "Sq", "", [d]).verify().latex()
    assert "Checked (not proved in general) for every $n \\le 6$, $d_k$, $n \\times n$." in text
    assert "\n\n\\paragraph{Scope.}" in text
    plain = Result("none", "None", "", [Check("C", "1 = 1", [Case("one", 1, 1)], Scope.checked("1"))]).latex()
    assert "None beyond the definitions.\n\n\\paragraph{Scope.}" in plain
    assert str(Scope.checked("every $n \\le 6$, $n \\times n$")) == "checked for every n <= 6, n x n"


def test_a_printed_label_must_be_its_value():
    from symbolic_attn.model.attention import softmax
    from symbolic_attn.proofs.operators import ColumnSoftmax, RowSoftmax

    m = sympy.ImmutableMatrix([[0, sympy.log(2)], [sympy.log(3), 0]])
    good = Derivation("rows", Computed(RowSoftmax(m), softmax(m)), [Step(softmax(m), "value")])
    assert r"\operatorname{softmax}\left(" in good.verify().latex()
    lying = Derivation("rows", Computed(RowSoftmax(m), softmax(m, axis="queries")), [Step(softmax(m, axis="queries"), "v")])
    with pytest.raises(ProofError, match=r"^step 1 of 'rows': .*the printed form RowSoftmax"):
        lying.verify()
    with pytest.raises(ProofError, match=r"printed form ColumnSoftmax"):
        Derivation("c", Computed(ColumnSoftmax(m), softmax(m)), [Step(softmax(m), "v")]).verify()
    free = Derivation("free", Computed(r"\mathrm{W}", softmax(m), "the weights of the example"), [Step(softmax(m), "v")])
    assert r"where $\mathrm{W}$ := the weights of the example" in Result("f", "F", "", [free]).verify().latex()
