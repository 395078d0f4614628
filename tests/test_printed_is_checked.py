"""What is printed is what was checked (issue 18, item 5).

Each table row is one way printing used to claim more than the checker did: a check that
said "proved", an assumption whose printed text was not the condition used, a symbol
printed once for two variables, a mask left out of softmax, a free label shown as a
formula, an unverified chain shown as clean math, a rewrite broader than its text.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import sympy

from symbolic_attn.errors import NameClashError, ProofError, ScopeError
from symbolic_attn.model.attention import softmax
from symbolic_attn.proofs import chain as chain_module
from symbolic_attn.proofs.chain import Assumption, Computed, Derivation, Scope, Step, cited
from symbolic_attn.proofs.prove import Frac
from symbolic_attn.proofs.operators import ColumnSoftmax, MaskedSoftmax, RowSoftmax
from symbolic_attn.proofs.result import Case, Check, Counterexample, Result
from symbolic_attn.render.markdown import result_markdown

ROOT = Path(__file__).resolve().parent.parent
x = sympy.Symbol("x", real=True)
c, sigma = sympy.symbols("c Sigma", real=True)


def _false_chain():
    """c * Sigma = c^2 * Sigma: false, and once shown by a notebook as clean math."""
    return Derivation("Scaling", c * sigma, [Step(c ** 2 * sigma, "scale")], scope=Scope.proved("every $c$"))


# ------------------------------------------------------------------ 1. scope from the kind of part

SCOPE_REFUSED = [
    ("check-says-proved",
     lambda: Check("C", "1 = 1", [Case("one", 1, 1)], Scope.proved("every $n \\ge 1$")),
     r"^Check 'C': a check covers finitely many cases, so its scope must be Scope\.checked\(\.\.\.\), "
     r"not Scope\.proved\(\.\.\.\)$"),
    ("counterexample-says-proved",
     lambda: Counterexample("E", [], Computed("e", sympy.E), Computed("3", sympy.Integer(3)), Scope.proved("e")),
     r"^Counterexample 'E': .* must be Scope\.counterexample\(\.\.\.\), not Scope\.proved\(\.\.\.\)$"),
    ("counterexample-says-checked",
     lambda: Counterexample("E", [], Computed("e", sympy.E), Computed("3", sympy.Integer(3)), Scope.checked("e")),
     r"^Counterexample 'E': .* not Scope\.checked\(\.\.\.\)$"),
    ("all-cited-chain-says-proved",
     lambda: Derivation("Book", x, [cited(x, "a textbook")], scope=Scope.proved("every x")),
     r"^Derivation 'Book': every step is cited \(not machine-checked\), so its scope must be Scope\.cited"),
    ("chain-says-counterexample",
     lambda: Derivation("Sq", x, [Step(x, "same")], scope=Scope.counterexample("x = 1")),
     r"^Derivation 'Sq': a chain of steps is not a counterexample"),
    ("unknown-kind", lambda: Scope("surely", "everything"), r"^unknown scope kind 'surely'"),
]


@pytest.mark.parametrize("build, message", [row[1:] for row in SCOPE_REFUSED], ids=[row[0] for row in SCOPE_REFUSED])
def test_a_scope_the_part_cannot_check_is_refused(build, message):
    with pytest.raises(ScopeError, match=message):
        build()


def test_a_chain_of_cited_steps_says_what_it_is():
    book = Derivation("Book", x, [cited(x, "a textbook")])
    assert book.scope.kind == "cited"
    text = Result("book", "Book", "", [book]).latex()
    assert r"\item Book: Cited, not machine-checked: all values of the symbols." in text
    assert "Proved" not in text
    # A proved chain with a cited step names the step beside its scope.
    mixed = Derivation("Mixed", x, [Step(x, "same"), cited(x, "a textbook")], scope=Scope.proved("every x"))
    assert "Proved for every x. Step 2 cited, not machine-checked." in Result("m", "M", "", [mixed]).latex()


# ------------------------------------------------------------------ 2./3. the conditions used are printed

POSITIVE = Assumption("A1", "$x$ is not negative", r"x \ge 0", condition=x > 0)
RECIPROCAL = Derivation("Reciprocal", Frac(x, x), [Step(sympy.Integer(1), "cancel", using=("A1",))],
                        assumptions=[POSITIVE], scope=Scope.proved("every $x$ of (A1)"))

PRINTED_CONDITIONS = [
    ("result-latex", lambda: Result("r", "R", "", [RECIPROCAL]).latex(),
     r"\item (A1) $x$ is not negative: $x \ge 0$; condition used by the checker: $x > 0$"),
    ("chain-str", lambda: str(RECIPROCAL), "  assuming (A1) x is not negative: x >= 0; condition used by the checker: x > 0"),
    ("chain-markdown-alone", lambda: RECIPROCAL._repr_markdown_(),
     "- (A1) $x$ is not negative: $x \\ge 0$; condition used by the checker: $x > 0$"),
    ("chain-str-declarations", lambda: str(RECIPROCAL), "  declared: x: real"),
    ("check-declarations", lambda: Result("r", "R", "", [Check("C", "a = a", [Case("a", sympy.Symbol("a", positive=True), sympy.Symbol("a", positive=True))], Scope.checked("one case"))]).latex(),
     r"\item Declared (the flags the checker uses): $a$: positive."),
]


@pytest.mark.parametrize("printed, expected", [row[1:] for row in PRINTED_CONDITIONS],
                         ids=[row[0] for row in PRINTED_CONDITIONS])
def test_the_condition_the_checker_used_is_printed(printed, expected):
    assert expected in printed().splitlines()


def test_two_different_assumptions_with_one_label_are_refused():
    other = Derivation("Other", x, [Step(x, "same")], assumptions=[Assumption("A1", "something else")])
    with pytest.raises(NameClashError, match=r"^r: two different assumptions are labelled \(A1\)"):
        Result("r", "R", "", [RECIPROCAL, other]).verify()


# ------------------------------------------------------------------ 4. one symbol per printed name

CLASHES = [
    ("flags-in-one-chain",
     lambda: Derivation("Two x", sympy.Symbol("x") + sympy.Symbol("x", positive=True), [Step(x, "?")]).verify(),
     r"^two different symbols print as \$x\$: one with flags \{none\}, the other with flags \{positive\}; "
     r"give them different names$"),
    ("flags-across-parts",
     lambda: Result("r", "R", "", [Derivation("A", x, [Step(x, "same")]),
                                   Derivation("B", sympy.Symbol("x", positive=True), [Step(sympy.Symbol("x", positive=True), "same")])]).verify(),
     r"^two different symbols print as \$x\$: one with flags \{positive\}, the other with flags \{real\}"),
    ("matrix-and-symbol",
     lambda: Derivation("X", sympy.Symbol("X") * sympy.MatrixSymbol("X", 2, 2), [Step(sympy.Symbol("X") * sympy.MatrixSymbol("X", 2, 2), "same")]).verify(),
     r"^two different symbols print as \$X\$: one a 2 x 2 matrix, the other with flags \{none\}"),
    ("check-case",
     lambda: Check("C", "x = x", [Case("x", x, sympy.Symbol("x"))], Scope.checked("one case")).verify(),
     r"^two different symbols print as \$x\$"),
]


@pytest.mark.parametrize("build", [row[1] for row in CLASHES], ids=[row[0] for row in CLASHES])
def test_two_symbols_that_print_alike_are_refused(build):
    message = next(row[2] for row in CLASHES if row[1] is build)
    with pytest.raises(NameClashError, match=message):
        build()


# ------------------------------------------------------------------ 5. operators print every argument

S = sympy.ImmutableMatrix([[0, sympy.log(2)], [sympy.log(3), 0]])
CAUSAL = sympy.ImmutableMatrix([[1, 0], [1, 1]])


def test_masked_softmax_prints_its_mask():
    from symbolic_attn.render.latex import expr_latex

    text = expr_latex(MaskedSoftmax(S, CAUSAL))
    assert text.startswith(r"\operatorname{softmax}\left(") and r"];\ \left[\begin{matrix}1 & 0\\1 & 1\end{matrix}" in text
    assert expr_latex(MaskedSoftmax(S, CAUSAL)) != expr_latex(MaskedSoftmax(S, sympy.ImmutableMatrix([[1, 1], [1, 1]])))
    assert sympy.sstr(MaskedSoftmax(S, CAUSAL)).count("Matrix") == 2


ARITY = [
    ("row-softmax-extra", lambda: RowSoftmax(S, CAUSAL), r"^RowSoftmax takes 1 argument\(s\), got 2$"),
    ("column-softmax-extra", lambda: ColumnSoftmax(S, CAUSAL), r"^ColumnSoftmax takes 1 argument\(s\), got 2$"),
    ("masked-softmax-no-mask", lambda: MaskedSoftmax(S), r"^MaskedSoftmax takes 2 argument\(s\), got 1$"),
]


@pytest.mark.parametrize("build, message", [row[1:] for row in ARITY], ids=[row[0] for row in ARITY])
def test_an_argument_that_would_not_be_printed_is_refused(build, message):
    with pytest.raises(ProofError, match=message):
        build()


# ------------------------------------------------------------------ 6. free labels are visibly unchecked

def test_a_free_label_is_printed_as_the_authors_unchecked_label():
    # The column softmax under a free label "softmax(S)": allowed, but never shown as checked.
    columns = softmax(S, axis="queries")
    lying = Derivation("Free", Computed(r"\operatorname{softmax}(S)", columns, "the column softmax"),
                       [Step(columns, "value")])
    display = lying.latex()
    assert r"\underbrace{\operatorname{softmax}(S)}_{\text{unchecked label}} &=" in display
    assert r"\operatorname{softmax}(S) &=" not in display
    text = Result("f", "F", "", [lying]).latex()
    assert r"where $\operatorname{softmax}(S)$ := the column softmax (unchecked label:" in text
    assert "unchecked label: \\operatorname{softmax}(S) := the column softmax" in str(lying)
    # A label written with a named operator is checked: it cannot stand for the column softmax.
    with pytest.raises(ProofError, match="printed form RowSoftmax"):
        Derivation("Checked", Computed(RowSoftmax(S), columns), [Step(columns, "value")]).latex()


# ------------------------------------------------------------------ 7. nothing displays before it verified

def _broken_result():
    return Result("broken", "Broken", "", [_false_chain()])


UNVERIFIED_SHOWN = [
    ("chain-str", lambda: str(_false_chain())),
    ("chain-repr-latex", lambda: _false_chain()._repr_latex_()),
    ("chain-repr-markdown", lambda: _false_chain()._repr_markdown_()),
    ("result-str", lambda: str(_broken_result())),
    ("result-repr-latex", lambda: _broken_result()._repr_latex_()),
    ("result-repr-markdown", lambda: _broken_result()._repr_markdown_()),
    ("check-str", lambda: str(Check("C", "1 = 2", [Case("one", 1, 2)], Scope.checked("one case")))),
    ("check-repr-latex", lambda: Check("C", "1 = 2", [Case("one", 1, 2)], Scope.checked("one case"))._repr_latex_()),
    ("counterexample-repr-latex",
     lambda: Counterexample("E", [], Computed("a", sympy.Integer(3)), Computed("b", sympy.Integer(3)),
                            Scope.counterexample("3"))._repr_latex_()),
]


@pytest.mark.parametrize("shown", [row[1] for row in UNVERIFIED_SHOWN], ids=[row[0] for row in UNVERIFIED_SHOWN])
def test_an_unverified_display_says_so(shown):
    text = shown()
    assert "NOT VERIFIED" in text
    assert "proved" not in text.lower().replace("not proved", "")
    assert "c^{2}" not in text and "Every step below was checked" not in text


UNVERIFIED_WRITTEN = [
    ("chain-latex", lambda: _false_chain().latex()),
    ("chain-sympy-latex", lambda: sympy.latex(_false_chain())),
    ("result-latex", lambda: _broken_result().latex()),
    ("result-sympy-latex", lambda: sympy.latex(_broken_result())),
    ("result-markdown", lambda: result_markdown(_broken_result())),
    ("check-latex", lambda: Check("C", "1 = 2", [Case("one", 1, 2)], Scope.checked("one case")).latex()),
    ("counterexample-latex",
     lambda: Counterexample("E", [], Computed("a", sympy.Integer(3)), Computed("b", sympy.Integer(3)),
                            Scope.counterexample("3")).latex()),
]


@pytest.mark.parametrize("write", [row[1] for row in UNVERIFIED_WRITTEN], ids=[row[0] for row in UNVERIFIED_WRITTEN])
def test_unverified_math_is_never_written(write):
    with pytest.raises(ProofError):
        write()


def test_a_failing_chain_marks_each_step():
    d = Derivation("Three", c * sigma, [Step(c * sigma, "same"), Step(c ** 2 * sigma, "scale"),
                                        Step(c ** 2 * sigma, "same again")])
    lines = str(d).splitlines()
    assert lines[0].startswith("Three  [NOT VERIFIED: step 2 of 'Three': ")
    assert [line.rsplit("[", 1)[1] for line in lines[2:5]] == ["structural]", "FAILED]", "not checked]"]


def test_a_verification_is_remembered(monkeypatch):
    good = Derivation("Square", (x + 1) ** 2, [Step(x ** 2 + 2 * x + 1, "expand")])
    good.verify()

    def refuse(*args, **kwargs):
        raise AssertionError("checked again")

    monkeypatch.setattr(chain_module, "prove_equal", refuse)
    assert good.latex().startswith("\\begin{align*}") and "NOT VERIFIED" not in str(good)
    # A fresh copy is checked again (and here, with the checker replaced, it cannot pass).
    with pytest.raises(AssertionError, match="checked again"):
        good.with_step(1, why="expanded").latex()


# ------------------------------------------------------------------ 8. the sqrt(d_k) rules say what they do

@pytest.fixture(scope="module")
def sqrt_dk():
    import runpy

    return runpy.run_path(str(ROOT / "symbolic_attn" / "derivations" / "sqrt_dk_scaling.py"))


def _rewrites(m):
    q, k, i, d = m["q"], m["k"], m["i"], m["d_k"]
    j = sympy.Symbol("j", integer=True, positive=True)
    Ex, Var = m["Ex"], m["Var"]
    return [
        # (id, rule, expression, rewritten or None for "left unchanged")
        ("moment-of-two-components", m["_standard_moments"], Ex(q[i] * q[j] ** 2), None),
        ("third-moment", m["_standard_moments"], Ex(q[i] ** 3), None),
        ("mean", m["_standard_moments"], Ex(q[i]), sympy.Integer(0)),
        ("second-moment", m["_standard_moments"], Ex(k[i] ** 2), sympy.Integer(1)),
        ("variance-of-dependent-terms", m["_independent_components"], Var(sympy.Sum(q[i] * q[i + 1], (i, 1, d))), None),
        ("variance-of-independent-terms", m["_independent_components"], Var(sympy.Sum(q[i] * k[i], (i, 1, d))),
         sympy.Sum(Var(q[i] * k[i]), (i, 1, d))),
        ("two-query-components", m["_independent_components"], Ex(q[i] * q[j]), None),
        ("query-and-key", m["_independent_components"], Ex(q[i] * k[j]), Ex(q[i]) * Ex(k[j])),
        ("pair-rule-has-no-sum-rule", m["_independent_pair"], Var(sympy.Sum(q[i] * k[i], (i, 1, d))), None),
        ("pair-rule", m["_independent_pair"], Ex(m["x"] ** 2 * m["y"] ** 2), Ex(m["x"] ** 2) * Ex(m["y"] ** 2)),
    ]


REWRITE_IDS = ["moment-of-two-components", "third-moment", "mean", "second-moment", "variance-of-dependent-terms",
               "variance-of-independent-terms", "two-query-components", "query-and-key", "pair-rule-has-no-sum-rule",
               "pair-rule"]


@pytest.mark.parametrize("case", REWRITE_IDS)
def test_each_sqrt_dk_rewrite_applies_exactly_where_its_text_says(sqrt_dk, case):
    _, rule, expr, expected = next(row for row in _rewrites(sqrt_dk) if row[0] == case)
    assert rule(expr) == (expr if expected is None else expected)


def test_sqrt_dk_output_does_not_depend_on_the_hash_seed():
    script = ("import runpy, sys; m = runpy.run_path(sys.argv[1]); "
              "sys.stdout.write(m['build']().latex())")
    outputs = []
    for seed in ("0", "1", "2", "3"):
        env = dict(os.environ, PYTHONHASHSEED=seed, SYMPY_GROUND_TYPES="python",
                   PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        run = subprocess.run([sys.executable, "-c", script, str(ROOT / "symbolic_attn" / "derivations" / "sqrt_dk_scaling.py")],
                             capture_output=True, text=True, env=env, timeout=300)
        assert run.returncode == 0, run.stderr[-2000:]
        outputs.append(run.stdout)
    assert outputs[0].startswith("\\section*{") and len(set(outputs)) == 1
