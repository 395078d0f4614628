r"""The corpus of tricky lines for the steps reader: each with its expected reading or refusal.

A reading is checked twice: the echoed notation exactly, and the SymPy expression against
one built here independently (``==``, structural).  A refusal is checked by a substring of
its reason and its column.  The declarations used by every line are :data:`DECLARATIONS`.
"""

from dataclasses import dataclass
from typing import Any

import sympy
from sympy import E, Integer, Product, Rational, Sum, exp, log, pi, root, sqrt

from symbolic_attn.proofs.notation import Frac
from symbolic_attn.proofs.operators import SoftmaxAt
from symbolic_attn.steps.randomness import Cov, Expectation, Var

DECLARATIONS = ("n: positive integer; m: positive integer; i, j: integer 1..n; x, y: real vector n; "
                "z: positive vector m; a, b, c: real; t: positive; d_k: positive integer; "
                "s: real matrix n x n; alpha: real; Q, K: random vector n, all components independent, mean 0, "
                "variance 1; X, Y: random, independent")

n, m = sympy.symbols("n m", integer=True, positive=True)
i, j = sympy.symbols("i j", integer=True, positive=True)
x, y = sympy.IndexedBase("x", real=True), sympy.IndexedBase("y", real=True)
s = sympy.IndexedBase("s", real=True)
a, b, c = sympy.symbols("a b c", real=True)
t = sympy.Symbol("t", positive=True)
d_k = sympy.Symbol("d_k", integer=True, positive=True)
alpha = sympy.Symbol("alpha", real=True)
Q, K = sympy.IndexedBase("Q", real=True), sympy.IndexedBase("K", real=True)
X, Y = sympy.symbols("X Y", real=True)
#: The bound index the reader introduces (softmax, dot products), and an undeclared sum index.
k = sympy.Symbol("k", integer=True, positive=True)


@dataclass(frozen=True)
class Read:
    text: str
    notation: str
    expr: Any
    why: str = ""


@dataclass(frozen=True)
class Refused:
    text: str
    reason: str
    column: int
    why: str = ""


def _sum(term, index=j, low=1, high=n):
    return Sum(term, (index, low, high))


CORPUS = [
    # --- softmax: the misreading "\mathrm{softmax}(x) as a product of letters" and its spellings
    Read(r"\operatorname{softmax}(x + c)_i", "softmax(c + x[k] for k in 1..n)[i]", SoftmaxAt(x[k] + c, k, i, n)),
    Read(r"\mathrm{softmax}(x)_i", "softmax(x[k] for k in 1..n)[i]", SoftmaxAt(x[k], k, i, n), "not s*o*f*t*m*a*x"),
    Read(r"\text{softmax}(x)_{i}", "softmax(x[k] for k in 1..n)[i]", SoftmaxAt(x[k], k, i, n)),
    Read(r"\operatorname{softmax}\left(x\right)_i", "softmax(x[k] for k in 1..n)[i]", SoftmaxAt(x[k], k, i, n)),
    Read(r"\operatorname{softmax}(x)_j", "softmax(x[k] for k in 1..n)[j]", SoftmaxAt(x[k], k, j, n)),
    Read(r"\operatorname{softmax}(x - c)_i", "softmax(-c + x[k] for k in 1..n)[i]", SoftmaxAt(x[k] - c, k, i, n)),
    Read(r"\operatorname{softmax}(2x)_i", "softmax(2*x[k] for k in 1..n)[i]", SoftmaxAt(2 * x[k], k, i, n)),
    Read(r"\operatorname{softmax}(x + y)_i", "softmax(x[k] + y[k] for k in 1..n)[i]", SoftmaxAt(x[k] + y[k], k, i, n)),
    Read(r"\operatorname{softmax}(x / t)_i", "softmax(x[k] / t for k in 1..n)[i]", SoftmaxAt(Frac(x[k], t), k, i, n)),
    Read(r"\operatorname{softmax}\left(\frac{x}{\sqrt{d_k}}\right)_i", "softmax(x[k] / sqrt(d_k) for k in 1..n)[i]",
         SoftmaxAt(Frac(x[k], sqrt(d_k)), k, i, n)),
    Read(r"\operatorname{softmax}((x_k + c)_{k=1}^{n})_i", "softmax(c + x[k] for k in 1..n)[i]",
         SoftmaxAt(x[k] + c, k, i, n), "a sequence literal binds k"),
    Read(r"\operatorname{softmax}\left(\left(c + {x}_{k}\right)_{k=1}^{n}\right)_{i}",
         "softmax(c + x[k] for k in 1..n)[i]", SoftmaxAt(x[k] + c, k, i, n), "SoftmaxAt's own LaTeX reads back"),
    Read(r"\operatorname{softmax}(x)_i \cdot \sum_j e^{x_j}",
         "sum(exp(x[j]) for j in 1..n)*softmax(x[k] for k in 1..n)[i]", SoftmaxAt(x[k], k, i, n) * _sum(exp(x[j]))),
    Read(r"\sum_j \operatorname{softmax}(x)_j", "sum(softmax(x[k] for k in 1..n)[j] for j in 1..n)",
         _sum(SoftmaxAt(x[k], k, j, n))),
    Read(r"\frac{\operatorname{softmax}(x)_i}{\operatorname{softmax}(x)_j}",
         "softmax(x[k] for k in 1..n)[i] / softmax(x[k] for k in 1..n)[j]",
         Frac(SoftmaxAt(x[k], k, i, n), SoftmaxAt(x[k], k, j, n))),
    Refused(r"softmax(x)_i", "write \\operatorname{softmax}", 1, "a word of letters is never a product"),
    Refused(r"\mathrm{softmax}x", "softmax needs its argument in brackets", 17),
    Refused(r"\operatorname{softmax}(x)", "this side is a vector", 1),
    Refused(r"\operatorname{softmax}(a)_i", "softmax of a scalar", 1),
    Refused(r"\operatorname{softmax}(x^T)_i", "softmax of a transposed vector", 1),
    Refused(r"\operatorname{relu}(a)", "unknown function \\operatorname{relu}", 1),
    # --- the definition of softmax, sums and products
    Read(r"\frac{e^{x_i + c}}{\sum_{j=1}^{n} e^{x_j + c}}", "exp(c + x[i]) / sum(exp(c + x[j]) for j in 1..n)",
         Frac(exp(x[i] + c), _sum(exp(x[j] + c)))),
    Read(r"\frac{e^{x_i}}{\sum_j e^{x_j}}", "exp(x[i]) / sum(exp(x[j]) for j in 1..n)",
         Frac(exp(x[i]), _sum(exp(x[j]))), "\\sum_j takes the declared range of j"),
    Read(r"\dfrac{e^{c} e^{x_i}}{e^{c} \sum_j e^{x_j}}", "(exp(c)*exp(x[i])) / (sum(exp(x[j]) for j in 1..n)*exp(c))",
         Frac(exp(c) * exp(x[i]), exp(c) * _sum(exp(x[j])))),
    Read(r"\sum_j x_j + 1", "1 + sum(x[j] for j in 1..n)", _sum(x[j]) + 1, "the summand ends at +"),
    Read(r"\sum_{j=1}^{n} x_j y_j", "sum(x[j]*y[j] for j in 1..n)", _sum(x[j] * y[j])),
    Read(r"\sum^{n}_{j=1} x_j", "sum(x[j] for j in 1..n)", _sum(x[j]), "scripts in either order"),
    Read(r"\prod_{j=1}^{n} e^{x_j}", "prod(exp(x[j]) for j in 1..n)", Product(exp(x[j]), (j, 1, n))),
    Read(r"\prod_j x_j", "prod(x[j] for j in 1..n)", Product(x[j], (j, 1, n))),
    Read(r"\sum_{k=1}^{n} k", "sum(k for k in 1..n)", Sum(k, (k, 1, n)), "an undeclared index is bound by its sum"),
    Read(r"\sum_{k=1}^{m} z_k", "sum(z[k] for k in 1..m)", Sum(sympy.IndexedBase("z", positive=True)[k], (k, 1, m))),
    Read(r"\sum_{i=1}^{n}\sum_{j=1}^{n} s_{i,j}", "sum(s[i, j] for i in 1..n for j in 1..n)",
         Sum(Sum(s[i, j], (j, 1, n)), (i, 1, n))),
    Read(r"\sum_j s_{ij}", "sum(s[i, j] for j in 1..n)", _sum(s[i, j])),
    Read(r"2 \sum_j x_j y_j", "2*sum(x[j]*y[j] for j in 1..n)", 2 * _sum(x[j] * y[j])),
    Read(r"c + \sum_j (x_j - c)", "c + sum(-c + x[j] for j in 1..n)", c + _sum(x[j] - c)),
    Read(r"\sum_{j=1}^{n} \frac{e^{x_j}}{\sum_{k=1}^{n} e^{x_k}}",
         "sum(exp(x[j]) / sum(exp(x[k]) for k in 1..n) for j in 1..n)",
         _sum(Frac(exp(x[j]), Sum(exp(x[k]), (k, 1, n))))),
    Read(r"\prod_{k=1}^{3} k", "prod(k for k in 1..3)", Product(k, (k, 1, 3))),
    Read(r"\log\left(\sum_j e^{x_j}\right)", "log(sum(exp(x[j]) for j in 1..n))", log(_sum(exp(x[j])))),
    Refused(r"\sum_{j=1} x_j", "without an upper bound", 1),
    Refused(r"\sum_q x_q", "takes its bounds from the declared range of q", 6),
    Refused(r"\sum_{c=1}^{n} c", "the index of a sum must be an integer", 1),
    Refused(r"\sum x_j", "without its index", 1),
    Refused(r"\sum_{1 \le j \le n} x_j", "the index of \\sum must be a letter", 1),
    Refused(r"\log \sum_j e^{x_j}", "the argument of log must be in brackets", 6),
    # --- entries and indices
    Read(r"s_{i,j}", "s[i, j]", s[i, j]),
    Read(r"s_{ij}", "s[i, j]", s[i, j], "a matrix takes two single-letter indices"),
    Read(r"s_{1,2}", "s[1, 2]", s[1, 2]),
    Read(r"{s}_{i,j}", "s[i, j]", s[i, j], "as SymPy prints it"),
    Read(r"x_1 + x_2", "x[1] + x[2]", x[1] + x[2]),
    Read(r"x_{j+1}", "x[1 + j]", x[j + 1]),
    Read(r"x_n", "x[n]", x[n]),
    Read(r"{x}_{i}", "x[i]", x[i]),
    Read(r"x_i y_i", "x[i]*y[i]", x[i] * y[i]),
    Read(r"x_iy_i", "x[i]*y[i]", x[i] * y[i]),
    Read(r"d_k", "d_k", d_k, "a declared subscripted name"),
    Read(r"d_{k}", "d_k", d_k),
    Refused(r"x_{ij}", "a vector has one index", 4, "x_{ij} is not x at i*j"),
    Refused(r"s_{12}", "write its entry as s_{i,j}", 2),
    Refused(r"s", "s is a matrix", 1),
    Refused(r"x_0", "outside 1..n", 2),
    Refused(r"x_{n+1}", "outside 1..n", 2),
    Refused(r"z_i", "i ranges over 1..n, but the vector has entries 1..m", 2),
    Refused(r"x_c", "the index c is not an integer", 2),
    Refused(r"a_i", "a subscript on a, which has no entries", 2),
    Refused(r"x_{i,j}", "unexpected ','", 5),
    # --- e, exp, log, roots: the misreading "e as a symbol"
    Read(r"e^{x_i}", "exp(x[i])", exp(x[i])),
    Read(r"e^a", "exp(a)", exp(a)),
    Read(r"e", "E", E, "e is Euler's number"),
    Read(r"\mathrm{e}^{a}", "exp(a)", exp(a)),
    Read(r"\exp(a + b)", "exp(a + b)", exp(a + b)),
    Read(r"\exp a", "exp(a)", exp(a)),
    Read(r"\log(t)", "log(t)", log(t), "\\log is natural"),
    Read(r"\ln t", "log(t)", log(t)),
    Read(r"\log_2 t", "log(t)/log(2)", log(t) / log(2)),
    Read(r"\sqrt{d_k}", "sqrt(d_k)", sqrt(d_k)),
    Read(r"\sqrt[3]{t}", "t**(1/3)", root(t, 3)),
    Read(r"\log{\left(t \right)}^{2}", "log(t)**2", log(t) ** 2),
    Read(r"\exp\left(a\right)^2", "exp(2*a)", exp(a) ** 2),
    Read(r"e^{e^{e^{100}}}", "exp(exp(exp(100)))", exp(exp(exp(100))), "never evaluated"),
    Refused(r"e_i", "e is Euler's number", 2),
    Refused(r"ae", "(e is Euler's number)", 2),
    Refused(r"ne", "(e is Euler's number)", 2, "not \\ne"),
    Refused(r"exp(a)", "write \\exp", 1),
    Refused(r"log(a)", "write \\log", 1),
    Refused(r"e^{x}", "an exponent that is a vector", 2),
    Refused(r"\exp^2 a", "a power written on \\exp", 5),
    Refused(r"\log(0)", "the logarithm of a number that is not positive", 1),
    Refused(r"\sqrt{-4}", "the root of a negative number", 1),
    Refused(r"\sqrt{x}", "a root of a vector", 1),
    Refused(r"\log_1 t", "the base of a logarithm", 5),
    Refused(r"\log{a + b}", "braces { } group invisibly", 5),
    # --- arithmetic, products, fractions, powers
    Read(r"\frac{1}{2}", "1/2", Rational(1, 2)),
    Read(r"\frac{a}{2}", "a/2", a / 2),
    Read(r"\tfrac{a}{b}", "a / b", Frac(a, b)),
    Read(r"a / b", "a / b", Frac(a, b)),
    Read(r"\frac{a}{\sqrt{d_k}}", "a / sqrt(d_k)", Frac(a, sqrt(d_k))),
    Read(r"\frac{x_i - c}{t}", "(-c + x[i]) / t", Frac(x[i] - c, t)),
    Read(r"\frac{a}{b} c", "c*(a / b)", Frac(a, b) * c),
    Read(r"- \frac{a}{b}", "-a / b", -Frac(a, b)),
    Read(r"a \cdot b", "a*b", a * b),
    Read(r"a \times b", "a*b", a * b),
    Read(r"2a", "2*a", 2 * a),
    Read(r"ab", "a*b", a * b, "every letter declared: a product"),
    Read(r"a b", "a*b", a * b),
    Read(r"a\,b", "a*b", a * b),
    Read(r"a\;b\!c", "a*b*c", a * b * c),
    Read(r"-a^2", "-a**2", -a ** 2),
    Read(r"(-a)^2", "a**2", a ** 2),
    Read(r"a^{-1}", "1 / a", Frac(1, a), "a negative power is a fraction: a != 0 is then checked"),
    Read(r"a^{-2}", "1 / a**2", Frac(1, a ** 2)),
    Read(r"2^{-1}", "1/2", Rational(1, 2)),
    Read(r"2^{10}", "1024", Integer(1024)),
    Read(r"t^{1/2}", "sqrt(t)", sqrt(t)),
    Read(r"a^{b}", "a**b", a ** b),
    Read(r"0.401", "401/1000", Rational(401, 1000), "a decimal is exact"),
    Read(r"3 \cdot 4", "12", Integer(12)),
    Read(r"a - b - c", "a - b - c", a - b - c),
    Read(r"a - (b - c)", "a + c - b", a - (b - c)),
    Read(r"\left(a + b\right)^{2}", "(a + b)**2", (a + b) ** 2),
    Read(r"\bigl(a + b\bigr)^2", "(a + b)**2", (a + b) ** 2),
    Read(r"\Bigl[a + b\Bigr] c", "c*(a + b)", c * (a + b)),
    Read(r"\alpha a", "a*alpha", alpha * a),
    Read(r"\pi a", "pi*a", pi * a),
    Read(r"10^{100}", str(10 ** 100), Integer(10) ** 100),
    Refused(r"a^{10^{100}}", "exceeds the limit of 1000: the checker would have to expand it", 1),
    Refused(r"((a + b)^{20})^{20}", "a power of degree 400 exceeds the limit of 256", 1),
    Read(r"(a + b)^{200}", "(a + b)**200", (a + b) ** 200),
    Read(r"c(a + b)", "c*(a + b)", c * (a + b), "a declared letter before brackets is a factor, not a function"),
    Read(r"\sqrt{t}^2", "t", t),
    Read(r"\frac{a}{b}^2", "(a / b)**2", Frac(a, b) ** 2),
    Read(r"-2^2", "-4", Integer(-4)),
    Read(r"x_i^2", "x[i]**2", x[i] ** 2),
    Read(r"\sum_j \frac{x_j}{n}", "sum(x[j] / n for j in 1..n)", _sum(Frac(x[j], n))),
    Read(r"(\sum_j x_j) / n", "sum(x[j] for j in 1..n) / n", Frac(_sum(x[j]), n)),
    Refused(r"\sum_j x_j / n", "a / in the summand of a sum or product is ambiguous", 12),
    Refused(r"a^b^c", "a second ^ on one value", 4, "LaTeX refuses a double superscript"),
    Refused(r"x_i_j", "a second _ on one value", 4),
    Refused(r"a^2_i", "a subscript after a superscript", 4),
    Refused(r"1,000", "unexpected ','", 2, "not one thousand, not a tuple"),
    Refused(r".5", "unexpected '.'", 1),
    Refused(r"\log a b", "\\log x y is ambiguous", 8),
    Refused(r"\log{a} b", "\\log x y is ambiguous", 9),
    Refused(r"\exp a \cdot b", "\\exp x y is ambiguous", 8),
    Read(r"\log{\left(a \right)} b", "b*log(a)", b * log(a), "SymPy's own LaTeX of log"),
    Refused(r"a^{(b)}", "a superscript in brackets (x^{(i)}) names a sample", 2),
    Refused(r"1e-3", "looks like scientific notation", 1, "not 1*e - 3"),
    Refused(r"2e5", "looks like scientific notation", 1),
    Read(r"2e^{a}", "2*exp(a)", 2 * exp(a)),
    Refused(r"\mathbf{x}_i", "\\mathbf is not read", 1),
    Refused(r"\frac{d}{dx} a", "is a derivative: derivatives are not read", 1),
    Refused(r"a/b c", "a product after '/' is ambiguous", 5),
    Refused(r"{a + b}^2", "braces { } group invisibly", 1, "{a+b}^2 shows as a + b^2"),
    Refused(r"a^23", "a script of several digits without braces", 3, "LaTeX shows a^{2}3"),
    Refused(r"a^0.5", "a script of several digits without braces", 3),
    Refused(r"a2", "a number after a letter", 2),
    Refused(r"2 3", "two numbers side by side", 3),
    Refused(r"(a + b)2", "a number after a bracket or a script", 8),
    Refused(r"\frac{a}{0}", "division by zero", 1),
    Refused(r"0^{-1}", "a negative power of zero", 2),
    Refused(r"a!", "a factorial", 2),
    Refused(r"a'", "a prime", 2),
    Refused(r"\frac12", "needs its numerator in braces", 6),
    Refused(r"a \pm b", "\\pm is two values", 3),
    Refused(r"\cdots", "an ellipsis is not a value", 1),
    Refused(r"\infty", "\\infty is not a number", 1),
    Refused(r"\max_j x_j", "\\max is not read yet", 1),
    Refused(r"(a]", "( closed by ]", 3),
    Refused(r"(a + b", "unbalanced (", 1),
    Refused(r"a + b)", "unbalanced )", 6),
    Refused(r"a + ", "the side ends where a value was expected", 4),
    Refused(r"", "an empty side", 1),
    # --- letters: declarations and runs
    Refused(r"q", "undeclared letter q: declare it", 1),
    Refused(r"aq", "q is not declared", 2),
    Refused(r"xy", "a product of two vectors", 2),
    Refused(r"a y", "this side is a vector", 1),
    # --- vectors
    Read(r"x^\top y", "sum(x[k]*y[k] for k in 1..n)", Sum(x[k] * y[k], (k, 1, n))),
    Read(r"x^T y", "sum(x[k]*y[k] for k in 1..n)", Sum(x[k] * y[k], (k, 1, n))),
    Read(r"x^{\mathsf T} y", "sum(x[k]*y[k] for k in 1..n)", Sum(x[k] * y[k], (k, 1, n))),
    Read(r"x^{\top} y", "sum(x[k]*y[k] for k in 1..n)", Sum(x[k] * y[k], (k, 1, n))),
    Read(r"x \cdot y", "sum(x[k]*y[k] for k in 1..n)", Sum(x[k] * y[k], (k, 1, n))),
    Read(r"(x \odot y)_i", "x[i]*y[i]", x[i] * y[i]),
    Read(r"(c x)_i", "c*x[i]", c * x[i]),
    Read(r"(x + c)_i", "c + x[i]", x[i] + c),
    Refused(r"x \times y", "a cross product", 3),
    Refused(r"x^2", "a power of a vector", 2),
    Refused(r"a^\top", "a transpose of a scalar", 2),
    Refused(r"\frac{a}{x}", "division by a vector", 1),
    Refused(r"x + \begin{bmatrix} 1 \end{bmatrix}", "a vector combined with an explicit matrix", 3),
    # --- matrices
    Read(r"\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}", "[[1, 2], [3, 4]]", sympy.ImmutableMatrix([[1, 2], [3, 4]])),
    Read(r"\begin{pmatrix} a & b \end{pmatrix}^T", "[[a], [b]]", sympy.ImmutableMatrix([[a], [b]])),
    Read(r"2 \begin{bmatrix} a \\ b \end{bmatrix}", "[[2*a], [2*b]]", sympy.ImmutableMatrix([[2 * a], [2 * b]])),
    Read(r"\begin{bmatrix} 1 & 0 \\ 0 & 1 \end{bmatrix} \begin{bmatrix} a \\ b \end{bmatrix}", "[[a], [b]]",
         sympy.ImmutableMatrix([[a], [b]])),
    Refused(r"\begin{bmatrix} 1 & 2 \\ 3 \end{bmatrix}", "rows of different lengths", 1),
    Refused(r"\begin{vmatrix} 1 \end{vmatrix}", "only bmatrix and pmatrix are read", 1),
    # --- relations and displays inside a side: the misreadings "\approx 0.401 as approx*0.401", "align* as begin"
    Refused(r"\approx 0.401", "a relation \\approx inside one side", 1),
    Refused(r"approx 0.401", "write \\approx", 1),
    Refused(r"\begin{align*} a = b \end{align*}", "\\begin{align*} inside a side", 1),
    Refused(r"begin{align*}", "write \\begin{...}", 1),
    Refused(r"a = b", "a relation = inside one side", 3),
    Refused(r"a \equiv b", "a relation \\equiv inside one side", 3),
    Refused(r"\tag{1}", "\\tag belongs at the end of a row", 1),
    Refused(r"a \implies b", "a logical connective between steps is not read", 3),
    # --- expectations and variances, kept unevaluated (the rules of expectation decide them)
    Read(r"\mathbb{E}[a]", "E[a]", Expectation(a), "the expectation of a number is allowed: it is the number"),
    Read(r"\operatorname{Var}(a)", "Var(a)", Var(a)),
    Read(r"\mathbb{E}\left[Q_i K_i\right]", "E[K[i]*Q[i]]", Expectation(Q[i] * K[i])),
    Read(r"\mathbb{E}[Q_i]^2", "E[Q[i]]**2", Expectation(Q[i]) ** 2, "the square of the mean, not E[Q_i^2]"),
    Read(r"\mathbb{E}[Q_i^2]", "E[Q[i]**2]", Expectation(Q[i] ** 2)),
    Read(r"\operatorname{Var}\left(\sum_{j=1}^{n} Q_j K_j\right)", "Var(sum(K[j]*Q[j] for j in 1..n))",
         Var(_sum(Q[j] * K[j]))),
    Read(r"\mathrm{Var}(X)", "Var(X)", Var(X)),
    Read(r"\text{Var}(2 X)", "Var(2*X)", Var(2 * X)),
    Read(r"\operatorname{E}[X Y]", "E[X*Y]", Expectation(X * Y)),
    Read(r"\mathbb{E}(X)", "E[X]", Expectation(X), "round brackets too"),
    Read(r"\mathbb{E}\left[\left(\sum_{j=1}^{n} Q_j\right)^2\right]", "E[sum(Q[j] for j in 1..n)**2]",
         Expectation(_sum(Q[j]) ** 2)),
    Read(r"\operatorname{Var}(Q \cdot K)", "Var(sum(K[k]*Q[k] for k in 1..n))", Var(_sum(Q[k] * K[k], k))),
    Refused(r"\mathbb{E}[Q]", "the expectation of a vector or a matrix is not read", 1),
    Refused(r"\mathbb{E} X", "goes in brackets: \\mathbb{E}[X]", 12),
    Refused(r"\mathbb{E}_{X}[X]", "a script on the expectation is not read", 11),
    Refused(r"\mathbb{R}", "only \\mathbb{E}[X], an expectation", 1),
    Read(r"\operatorname{Cov}(X, Y)", "Cov(X, Y)", Cov(X, Y)),
    Read(r"\operatorname{Cov}\left(Q_i, \sum_{j=1}^{n} K_j\right)", "Cov(Q[i], sum(K[j] for j in 1..n))",
         Cov(Q[i], _sum(K[j]))),
    Refused(r"\operatorname{Cov}(X)", "a covariance has two arguments", 19),
    Refused(r"\operatorname{Cov}(X, Y, X)", "a covariance has two arguments", 19),
    Refused(r"\operatorname{Var} X", "goes in brackets: \\operatorname{Var}(X)", 20),
    Refused(r"\operatorname{Var}(Q)", "the variance of a vector or a matrix is not read", 1),
    Refused(r"E[X]", "undeclared letter E", 1, "E is a letter: the expectation is \\mathbb{E}"),
    # --- hostile input
    Refused(r"2^{2^{2^{99}}}", "a power of numbers with more than", 5, "a tower is refused, not evaluated"),
    Refused(r"\def\x{1}", "macros are never read", 1),
    Refused(r"\newcommand{\x}{1}", "macros are never read", 1),
    Refused(r"\input{/etc/passwd}", "\\input reads a file", 1),
    Refused(r"\foo", "unknown command \\foo", 1),
    Refused(r"\frac{1}{2", "unbalanced {: it is never closed", 9),
    Refused(r"\frac{1 \\ 2}{3}", "a row break", 9),
    Refused("\u0445 + 1", "non-ASCII character '\u0445' (U+0445 CYRILLIC SMALL LETTER HA)", 1, "a Cyrillic x"),
    Refused("a + \uff41", "U+FF41 FULLWIDTH LATIN SMALL LETTER A", 5),
    Refused("a\u200b+ b", "U+200B ZERO WIDTH SPACE", 2),
    Refused("a\x1b[31m", "control character U+001B", 2),
    Refused(r"a % hidden", "a % comment inside maths", 3),
    Refused("a+" * 500_000 + "a", "a side of 1000001 characters is longer than", 1),
    Refused("(" * 50 + "a" + ")" * 50, "nested more than 40 deep", 42),
    Refused("- " * 50 + "a", "nested more than 40 deep", 81),
    Refused("1" * 500, "a number of 500 digits is longer than", 1),
    Refused(r"\left| a \right|", "only ( ) [ ] are read as sized brackets", 1),
    Refused(r"\left. a \right.", "only ( ) [ ] are read as sized brackets", 1),
    Refused(r"\text{by definition}", "unknown function \\text{bydefinition}", 1),
]
