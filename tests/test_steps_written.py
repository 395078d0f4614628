r"""Explicit matrices keep how they were written (symbolic_attn.steps.written): a product or a
transpose the reader computes notes its unevaluated form, so ``transpose_order`` is named on
bmatrix products -- only when the wrong rule applied to the written form is proved to give
the other side."""

import sympy

from symbolic_attn.steps.report import check_text
from symbolic_attn.steps.written import form_of, product, recording, transpose

P = r"\begin{bmatrix} 0 & 1 \\ 1 & 0 \end{bmatrix}"
K = r"\begin{bmatrix} k_{1,1} & k_{1,2} \\ k_{2,1} & k_{2,2} \end{bmatrix}"
DECLARED = "% symbols: k: real matrix 2 x 2\n"


def _steps(*sides):
    text = DECLARED + "\\begin{align*}\n" + " \\\\\n".join(
        ("" if n == 0 else "&= ") + side for n, side in enumerate(sides)) + "\n\\end{align*}\n"
    report = check_text(text, "tex", "t.tex")
    return [(s.verdict.verdict, s.verdict.diagnosis) for c in report.chains for s in c.steps]


def test_the_transpose_of_a_product_in_the_same_order_is_named():
    assert _steps(rf"\left({P} {K}\right)^{{T}}", rf"{P}^{{T}} {K}^{{T}}") == [("false", "transpose_order")]


def test_the_right_order_is_proved_and_other_wrong_steps_are_not_named_transpose_order():
    assert _steps(rf"\left({P} {K}\right)^{{T}}", rf"{K}^{{T}} {P}^{{T}}") == [("proved", None)]
    # false, but not the same-order transpose: the product itself, untransposed
    assert _steps(rf"\left({P} {K}\right)^{{T}}", rf"{P} {K}") == [("false", None)]
    # false, and the same-order transpose plus something: not that rule either
    assert _steps(rf"\left({P} {K}\right)^{{T}}", rf"{P}^{{T}} {K}^{{T}} + {P}") == [("false", None)]


def test_a_noted_form_equals_the_matrix_it_is_noted_for():
    a = sympy.ImmutableMatrix([[1, 2], [3, 4]])
    b = sympy.ImmutableMatrix([[0, 5], [7, 1]])
    with recording() as forms:
        value = product(transpose(product(a, b)), a)
    assert form_of(value, forms).doit() == value == (a * b).T * a
    assert product(a, b) == a * b and form_of(a * b) == a * b  # outside a recording nothing is noted
