r"""The steps reader (issue 22, item 1): every line is read -- and echoed faithfully -- or refused.

The corpus (``tests/steps_corpus.py``) holds the tricky lines: each reading is compared by
its notation *and* by its SymPy expression against one built independently; each refusal by
its reason and column.  The document tests cover every environment, continuation rows,
reasons, names and the line/column mapping.  A property test reads back the echoed LaTeX of
random expressions of the grammar: the echo is faithful.
"""

import ast
import pickle
import sys
from pathlib import Path

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from symbolic_attn.errors import ParseError, StepReadError
from symbolic_attn.proofs.binders import substitute
from symbolic_attn.proofs.notation import Frac, unfold
from symbolic_attn.proofs.operators import SoftmaxAt
from symbolic_attn.steps.declarations import parse_declarations
from symbolic_attn.steps.document import read_document
from symbolic_attn.steps.grammar import read_math

sys.path.insert(0, str(Path(__file__).parent))
from steps_corpus import CORPUS, DECLARATIONS, Read, Refused  # noqa: E402
from steps_corpus import a, b, c, d_k, i, j, k, n, t, x, y  # noqa: E402

STEPS = Path(__file__).resolve().parent.parent / "symbolic_attn" / "steps"
D = parse_declarations(DECLARATIONS)


def _outcome(text, declarations=D, **where):
    try:
        return read_math(text, declarations, **where)
    except StepReadError as error:
        return error


def _case_id(case):
    return case.text[:40].encode("ascii", "backslashreplace").decode()


# ----------------------------------------------------------------------------- the corpus


@pytest.mark.parametrize("case", CORPUS, ids=_case_id)
def test_corpus_line(case):
    outcome = _outcome(case.text)
    if isinstance(case, Read):
        assert not isinstance(outcome, StepReadError), f"refused: {outcome}"
        assert outcome.notation == case.notation
        assert outcome.expr == case.expr, (outcome.expr, case.expr)
        # The echo is faithful: its LaTeX reads back to the same expression.
        assert read_math(outcome.latex, D).expr == case.expr, outcome.latex
    else:
        assert isinstance(outcome, StepReadError), f"read as {outcome.notation}: {case.why or 'must be refused'}"
        assert case.reason in outcome.reason, outcome.reason
        assert outcome.column == case.column, str(outcome)
        assert str(outcome).startswith(f"line 1, column {case.column}: ")
        assert "\n" not in str(outcome)


def test_corpus_counts():
    """At least 110 lines; read + refused = all, misread = 0 (each line's own test proves it)."""
    read = sum(isinstance(case, Read) for case in CORPUS)
    refused = sum(isinstance(case, Refused) for case in CORPUS)
    misread = sum(1 for case in CORPUS if isinstance(case, Read) != (not isinstance(_outcome(case.text), StepReadError)))
    assert len(CORPUS) >= 110 and read + refused == len(CORPUS) and misread == 0
    assert len({case.text for case in CORPUS}) == len(CORPUS), "a line is listed twice"
    print(f"corpus: {len(CORPUS)} lines, {read} read, {refused} refused, {misread} misread")


def test_the_four_misreadings_of_the_issue():
    """\\mathrm{softmax}(x) is not a product of letters, e is Euler's number, \\approx is a relation,
    a whole align* is a display (not the product b*e*g*i*n)."""
    assert read_math(r"\mathrm{softmax}(x)_i", D).expr == SoftmaxAt(x[k], k, i, n)
    assert read_math("e", D).expr is sympy.E
    with pytest.raises(StepReadError, match="e cannot be declared: it is Euler's number"):
        parse_declarations("e: real")
    doc = read_document("$$a = b \\\\ \\approx 0.401$$", "md", "m.md")
    assert [side.relation for side in doc.chains[0].sides] == [None, "=", "approx"]
    assert read_math(doc.chains[0].sides[2].text, D).decimals == 3
    doc = read_document("\\begin{align*}\na &= b\n\\end{align*}\n", "tex", "t.tex")
    assert [(s.relation, s.text) for s in doc.chains[0].sides] == [(None, "a"), ("=", "b")]


def test_an_error_is_a_typed_one_line_parse_error_that_survives_pickling():
    error = _outcome(r"a + \foo", line=3, column=10)
    assert isinstance(error, StepReadError) and isinstance(error, ParseError)
    assert (error.line, error.column) == (3, 14)
    assert str(error) == "line 3, column 14: unknown command \\foo: it is not part of the maths the reader knows"
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.line, copy.column, copy.reason, str(copy)) == (error.line, error.column, error.reason, str(error))


def test_a_side_over_two_lines_keeps_the_file_positions():
    error = _outcome("a +\n   \\foo", line=7, column=5)
    assert (error.line, error.column) == (8, 4)


def test_scripts_of_a_declared_letter_T_are_a_power_of_a_scalar_and_a_transpose_of_a_vector():
    declared = parse_declarations("n: positive integer; x, y: real vector n; a, T: real")
    assert read_math("a^T", declared).expr == sympy.Symbol("a", real=True) ** sympy.Symbol("T", real=True)
    assert read_math("x^T y", declared).notation == "sum(x[k]*y[k] for k in 1..n)"


def test_a_fresh_bound_index_never_captures_a_declared_or_bound_name():
    declared = parse_declarations("n: positive integer; i, k: integer 1..n; x: real vector n")
    reading = read_math(r"\operatorname{softmax}(x + x_k)_i", declared)
    assert reading.notation == "softmax(x[k] + x[l] for l in 1..n)[i]"
    inside_a_sum = read_math(r"\sum_{l=1}^{n} \operatorname{softmax}(x)_l", declared)
    term = inside_a_sum.expr.function
    assert isinstance(term, SoftmaxAt) and term.args[1].name not in ("l", "k", "i", "n")


# ----------------------------------------------------------------------------- declarations


def test_declarations_kinds_ranges_lengths_and_assumptions():
    declared = parse_declarations("n: positive integer\ni, j: integer 1..n; l: integer 0..n; x: positive vector n; "
                                  "s: real matrix n×2; c: nonnegative; w: integer; d_{model}: positive integer")
    assert declared.symbols["x"].assumptions0.get("positive") is True
    assert declared.shapes["s"] == (n, 2) and declared.lengths["x"] == n
    assert declared.symbols["l"].is_nonnegative and declared.symbols["c"].is_nonnegative
    assert declared.ranges["l"] == (0, n)
    assert "d_model" in declared.symbols and declared.symbols["d_model"].is_positive
    labels = {a.label: a for a in declared.assumptions()}
    assert set(labels) == {"i in 1..n", "j in 1..n", "l in 0..n"}
    assert labels["i in 1..n"].condition == sympy.Le(declared.symbols["i"], n)
    assert parse_declarations(declared.text()).text() == declared.text()
    assert read_math(r"\sqrt{d_{model}}", declared).notation == "sqrt(d_model)"
    shifted = parse_declarations("n: positive integer; r: integer 0..n-1; x: real vector n+1")
    assert shifted.ranges["r"] == (0, n - 1) and shifted.lengths["x"] == n + 1
    assert read_math(r"\sum_r x_{r+1}", shifted).notation == "sum(x[1 + r] for r in 0..-1 + n)"


@pytest.mark.parametrize("text,reason,column", [
    ("e: real", "e cannot be declared", 1),
    ("pi: real", "pi cannot be declared", 1),
    ("x: complex", "unknown kind 'complex'", 1),
    ("a: real; a: real", "a is declared twice", 10),
    ("xy: real", "a name of several letters", 1),
    ("X: random variable", "a random variable is 'random' or 'random vector N'", 1),
    ("q: real vector 2, random", "'random' comes first", 1),
    ("q: random vector 2, independent", "'independent' is ambiguous for random vectors", 1),
    ("X: random, mean", "unknown property 'mean'", 1),
    ("X: random, variance -1", "the variance '-1' must be a number at least 0", 1),
    ("c: real; X: random, variance c", "the variance 'c' must be a number at least 0", 10),
    ("X: random, mean 1/0", "divides by zero", 1),
    ("X: random, identically distributed", "unknown property 'identically distributed'", 1),
    ("n: real; x: real vector n", "the length 'n' must be an integer", 10),
    ("x: real vector m", "the length 'm' must be an integer or a name declared before", 1),
    ("i: integer 1..q", "the upper bound 'q'", 1),
    ("x real", "declares nothing", 1),
    ("a: real\n  b: imaginary", "unknown kind 'imaginary'", 3),
])
def test_bad_declarations_are_refused_on_one_line(text, reason, column):
    with pytest.raises(StepReadError) as raised:
        parse_declarations(text)
    assert reason in raised.value.reason and raised.value.column == column, str(raised.value)
    assert str(raised.value).count("\n") == 0 and "--symbols: " in str(raised.value)


def test_an_undeclared_letter_is_refused_with_how_to_declare_it():
    error = _outcome("a + q")
    assert error.reason.startswith("undeclared letter q: declare it, e.g. --symbols 'q: real'")
    assert error.column == 5


# ----------------------------------------------------------------------------- documents


def _sides(doc):
    return [[(s.relation, s.text, s.reason) for s in chain.sides] for chain in doc.chains]


TEX = r"""% symbols: n: positive integer; i, j: integer 1..n; x: real vector n; c: real
\documentclass{article}
\begin{document}
\section{Shift invariance}
\begin{align*}
\operatorname{softmax}(x + c)_i
  &= \frac{e^{x_i + c}}{\sum_j e^{x_j + c}} \quad\text{(definition of softmax)} \\
  &= \frac{e^{c} e^{x_i}}{e^{c} \sum_j e^{x_j}} \tag{$e^{a+b} = e^a e^b$} \\
  &= \operatorname{softmax}(x)_i. \nonumber
\end{align*}
\section{Bounds}
\begin{equation}\label{eq:bound}
\begin{aligned}
0 &< \operatorname{softmax}(x)_i \\
  &\le 1
\end{aligned}
\end{equation}
\begin{gather}
c = c \\
x_1 \ne x_2
\end{gather}
Prose with $x_i > 0$ inline, and $5 dollars$ without a relation.
\[ a \geq b \]
\end{document}
"""


def test_a_tex_file_every_environment_reasons_names_and_positions():
    doc = read_document(TEX, "tex", "answer.tex")
    assert doc.symbols_text == "n: positive integer; i, j: integer 1..n; x: real vector n; c: real"
    assert doc.symbols_line == 1
    assert [(chain.start_line, chain.name) for chain in doc.chains] == [
        (6, "Shift invariance"), (14, "eq:bound"), (19, "Bounds"), (20, "Bounds"), (22, "Bounds"), (23, "Bounds")]
    assert _sides(doc)[0] == [
        (None, r"\operatorname{softmax}(x + c)_i", None),
        ("=", r"\frac{e^{x_i + c}}{\sum_j e^{x_j + c}}", "definition of softmax"),
        ("=", r"\frac{e^{c} e^{x_i}}{e^{c} \sum_j e^{x_j}}", "$e^{a+b} = e^a e^b$"),
        ("=", r"\operatorname{softmax}(x)_i", None)]
    assert _sides(doc)[1:] == [
        [(None, "0", None), ("<", r"\operatorname{softmax}(x)_i", None), ("<=", "1", None)],
        [(None, "c", None), ("=", "c", None)], [(None, "x_1", None), ("!=", "x_2", None)],
        [(None, "x_i", None), (">", "0", None)], [(None, "a", None), (">=", "b", None)]]
    second = doc.chains[0].sides[1]
    assert (second.line, second.column) == (7, 6)
    declared = parse_declarations(doc.symbols_text)
    for chain in doc.chains[:2]:
        for side in chain.sides:
            read_math(side.text, declared, line=side.line, column=side.column)


def test_a_refusal_inside_a_document_points_into_the_file():
    doc = read_document("\\begin{align}\n  a &= b + \\foo \\\\\n  &= c\n\\end{align}", "tex", "t.tex")
    side = doc.chains[0].sides[1]
    error = _outcome(side.text, line=side.line, column=side.column)
    assert (error.line, error.column) == (2, 12)


MARKDOWN = """<!-- symbols: a, b, c: real -->
# First answer

$$
a = b \\quad\\text{(given)}
\\\\ = c
$$

Some prose, `$$ x = y $$` in code is no maths.

```
$$ q = r $$
```

## Second answer
\\[ a \\approx 0.5 \\]
$$ \\le b $$
<!-- $$ hidden = 1 $$ -->
"""


def test_a_markdown_file_headings_continuations_code_and_comments():
    doc = read_document(MARKDOWN, "md", "answer.md")
    assert doc.symbols_text == "a, b, c: real"
    assert [chain.name for chain in doc.chains] == ["First answer", "Second answer"]
    assert _sides(doc) == [[(None, "a", None), ("=", "b", "given"), ("=", "c", None)],
                           [(None, "a", None), ("approx", "0.5", None), ("<=", "b", None)]]
    first = doc.chains[0].sides
    assert [(s.line, s.column) for s in first] == [(5, 1), (5, 5), (6, 6)]


@pytest.mark.parametrize("row", [r"a = b \quad\text{(by parts)}", r"a = b \qquad (\text{by parts})",
                                 r"a = b \text{(by parts)}", r"a = b \; \text{(by parts)}.", r"a = b \tag{by parts}"])
def test_every_way_to_write_a_reason(row):
    doc = read_document("$$%s$$" % row, "md", "m.md")
    assert _sides(doc) == [[(None, "a", None), ("=", "b", "by parts")]]


def test_inline_parentheses_and_a_prose_line_break_before_a_bracket():
    doc = read_document("A line\\\\[2pt] break, and \\(a = b\\) inline.", "tex", "t.tex")
    assert _sides(doc) == [[(None, "a", None), ("=", "b", None)]]


def test_not_equal_written_with_not():
    doc = read_document("$$a \\not= b$$", "md", "m.md")
    assert _sides(doc) == [[(None, "a", None), ("!=", "b", None)]]
    doc = read_document("$$a \\not< b$$", "md", "m.md")
    assert "only \\not= (that is, \\ne) is read" in _outcome(doc.chains[0].sides[0].text).reason


def test_a_lone_dollar_in_prose_is_no_maths():
    doc = read_document("It costs $5.\n\nThen $a = b$ holds.", "md", "m.md")
    assert _sides(doc) == [[(None, "a", None), ("=", "b", None)]]


def test_an_aligned_inside_dollars_and_a_display_on_one_line():
    doc = read_document("$$\\begin{aligned} a &= b \\\\ &\\le c \\end{aligned}$$", "md", "m.md")
    assert _sides(doc) == [[(None, "a", None), ("=", "b", None), ("<=", "c", None)]]


def test_eqnarray_has_two_marks_a_row():
    doc = read_document("\\begin{eqnarray}\na &=& b \\\\\n &\\le& c\n\\end{eqnarray}", "tex", "t.tex")
    assert _sides(doc) == [[(None, "a", None), ("=", "b", None), ("<=", "c", None)]]


def test_a_matrix_inside_a_row_is_not_split():
    doc = read_document("$$\\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix} = b$$", "md", "m.md")
    assert _sides(doc) == [[(None, "\\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}", None), ("=", "b", None)]]


def test_a_text_file_one_chain_per_paragraph():
    doc = read_document("a = b\n  = c \\quad\\text{(by ...)}\n\\le d\n\nx = 1\n% symbols: a, b, c, d, x: real\n",
                        "txt", "t.txt")
    assert _sides(doc) == [[(None, "a", None), ("=", "b", None), ("=", "c", "by ..."), ("<=", "d", None)],
                           [(None, "x", None), ("=", "1", None)]]
    assert doc.symbols_text == "a, b, c, d, x: real"
    assert [(s.line, s.column) for s in doc.chains[0].sides] == [(1, 1), (1, 5), (2, 5), (3, 5)]


@pytest.mark.parametrize("text,kind,reason,where", [
    ("$$ a = b", "md", "the display $$ is never closed by $$", (1, 1)),
    ("\\begin{align}\na = b\n", "tex", "never closed by \\end{align}", (1, 1)),
    ("= a", "txt", "starts with a relation (=) but no chain comes before it", (1, 1)),
    ("a = b\n\n= c", "txt", "no chain comes before it", (3, 1)),
    ("$$a = = b$$", "md", "nothing between two relations", (1, 5)),
    ("$$a = $$", "md", "a relation with nothing after it", (1, 5)),
    ("$$a = b \\\\ + c$$", "md", "a row starting with + continues the expression", (1, 12)),
    ("x", "docx", "unknown kind 'docx'", (1, 1)),
    ("\\begin{align}\na &= b && c &= d\n\\end{align}", "tex", "4 alignment marks & in one row", (2, 8)),
])
def test_document_refusals(text, kind, reason, where):
    with pytest.raises(StepReadError) as raised:
        read_document(text, kind, "f")
    assert reason in raised.value.reason and (raised.value.line, raised.value.column) == where, str(raised.value)


def test_hostile_documents_are_bounded():
    with pytest.raises(StepReadError, match="longer than"):
        read_document("a" * 2_000_001, "txt", "big.txt")
    doc = read_document("prose " * 160_000 + "$$a = b$$", "md", "big.md")  # about 10^6 characters: quick
    assert _sides(doc) == [[(None, "a", None), ("=", "b", None)]]
    doc = read_document("$$\\frac{1 \\\\ 2}{3} = 1$$", "md", "m.md")  # \\ inside braces is no row break
    side = doc.chains[0].sides[0]
    assert "row break" in _outcome(side.text, line=side.line, column=side.column).reason


@pytest.mark.parametrize("text,kind", [
    ("<!--" * 240_000, "md"),                                         # unclosed comments
    ("".join("`" * (3 + k) + "\n" for k in range(1400)), "md"),       # fences of growing length
    ("\\section{" * 100_000, "tex"),                                  # unclosed titles
    ("$$" + " " * 999_000 + "$$", "md"),                              # a row of spaces
    ("<!-- symbols: " * 70_000, "md"),                                # unclosed declarations
    ("# " + " #" * 400_000, "md"),                                    # one endless heading
    ("$$ a = b " + "\\tag{" * 1500 + "$$", "md"),                      # unclosed tags in a row
], ids=["comments", "fences", "sections", "spaces", "symbols", "heading", "tags"])
def test_hostile_documents_take_linear_time(text, kind):
    """About 10^6 characters shaped against regular expressions: each read in a few seconds."""
    import time

    started = time.monotonic()
    try:
        read_document(text, kind, "hostile")
    except StepReadError:
        pass
    assert time.monotonic() - started < 30


def test_a_row_longer_than_the_limit_is_refused():
    with pytest.raises(StepReadError, match="a row of 9001 characters is longer than the 8000"):
        read_document("$$" + "a" * 9001 + "$$", "md", "m.md")


# ----------------------------------------------------------------------------- round trip


_DECLARED = [a, b, c, t, d_k]


def _leaves():
    return st.one_of(st.sampled_from(_DECLARED + [x[i], x[j], y[i], sympy.pi, sympy.E]),
                     st.integers(-5, 9).map(sympy.Integer),
                     st.tuples(st.integers(1, 7), st.integers(2, 9)).map(lambda p: sympy.Rational(*p)))


def _extend(children):
    positive = st.sampled_from([t, d_k, t + 1])
    return st.one_of(
        st.tuples(children, children).map(lambda p: p[0] + p[1]),
        st.tuples(children, children).map(lambda p: p[0] - p[1]),
        st.tuples(children, children).map(lambda p: p[0] * p[1]),
        st.tuples(children, st.sampled_from([t, d_k, a + b, sympy.sqrt(d_k)])).map(lambda p: Frac(*p)),
        st.tuples(children, st.integers(2, 3)).map(lambda p: p[0] ** p[1]),
        children.map(sympy.exp),
        positive.map(sympy.log),
        positive.map(sympy.sqrt),
        children.map(lambda e: sympy.Sum(e * x[k] + y[k], (k, 1, n))),
        children.map(lambda e: SoftmaxAt(x[k] + e, k, i, n)),
    )


def _scalar_expressions():
    return st.recursive(_leaves(), _extend, max_leaves=8)


def _alpha(expr, level=0):
    """``expr`` with every bound index (sums, products, softmax) renamed by its nesting level:
    two expressions equal up to the names of bound indices become equal."""
    if not isinstance(expr, sympy.Basic) or not expr.args:
        return expr
    if isinstance(expr, (sympy.Sum, sympy.Product)) and len(expr.limits) == 1:
        (index, low, high), = expr.limits
        name = sympy.Symbol(f"bound{level}", integer=True)
        body = _alpha(substitute(expr.function, {index: name}), level + 1)
        return type(expr)(body, (name, _alpha(low, level), _alpha(high, level)))
    if isinstance(expr, SoftmaxAt):
        term, index, entry, length = expr.args
        name = sympy.Symbol(f"bound{level}", integer=True)
        return SoftmaxAt(_alpha(substitute(term, {index: name}), level + 1), name, _alpha(entry, level), length)
    return expr.func(*[_alpha(arg, level) for arg in expr.args])


@settings(max_examples=150, deadline=None, database=None)
@given(_scalar_expressions())
def test_reading_the_echoed_latex_gives_the_same_expression(expr):
    """Print a random expression of the grammar as LaTeX, read it back: the same expression.

    Exactly for a reading's own echo; for the generated expression, up to the names of bound
    indices (the reader never reuses a bound name inside its scope, where SymPy's printer
    may: a softmax over k inside a sum over k is read with l)."""
    reading = read_math(sympy.latex(expr, order="none"), D)
    # SymPy itself may turn a Frac into a plain quotient (exp of a Frac does): equal once unfolded.
    assert _alpha(unfold(reading.expr)) == _alpha(unfold(expr))
    # A reading's own echo reads back to exactly that reading.
    again = read_math(reading.latex, D)
    assert again.expr == reading.expr and again.notation == reading.notation


# ----------------------------------------------------------------------------- safety


#: Called by name (builtins and SymPy's text readers), or as an attribute (``sympy.sympify``).
_UNSAFE_NAMES = {"eval", "exec", "compile", "sympify", "parse_expr", "parse_latex", "__import__", "S"}
_UNSAFE_ATTRIBUTES = {"eval", "exec", "sympify", "parse_expr", "parse_latex", "S", "simplify"}


@pytest.mark.parametrize("path", sorted(STEPS.glob("*.py")), ids=lambda p: p.name)
def test_the_reader_calls_nothing_that_evaluates_text(path):
    """No eval/exec/sympify/parse_expr/parse_latex anywhere in steps/ (SymPy objects are built from tokens)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                assert node.func.id not in _UNSAFE_NAMES, f"{path.name}:{node.lineno} calls {node.func.id}"
            else:
                name = getattr(node.func, "attr", "")
                assert name not in _UNSAFE_ATTRIBUTES, f"{path.name}:{node.lineno} calls {name}"
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [alias.name for alias in node.names] + [getattr(node, "module", None) or ""]
            assert not any("parsing" in module for module in modules), f"{path.name}:{node.lineno} imports a parser"


# ----------------------------------------------------------------------------- fuzz

_PIECES = [r"\frac", r"\sum", r"\prod", "_", "^", "{", "}", "(", ")", "[", "]", r"\left(", r"\right)", "x", "y", "a",
           "b", "c", "i", "j", "k", "n", "s", "e", "t", "T", "1", "2", "0.5", "+", "-", "/", r"\cdot", r"\odot",
           r"\times", "=", r"\le", r"\approx", "&", r"\\", ",", " ", r"\,", r"\exp", r"\log", r"\sqrt",
           r"\operatorname{softmax}", r"\mathrm{softmax}", r"\top", r"\mathsf", r"\begin{bmatrix}", r"\end{bmatrix}",
           r"\alpha", r"\pi", "d_k", r"\text{(by x)}", r"\tag{1}", "$", "$$", "\n", r"\quad", "'", "!", r"\foo"]


@settings(max_examples=400, deadline=None, database=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=25))
def test_any_text_is_read_or_refused_with_a_typed_error(pieces):
    """No crash, no other exception, no hang: a reading (which echoes and reads back) or a StepReadError."""
    text = "".join(pieces)
    outcome = _outcome(text)
    if not isinstance(outcome, StepReadError):
        assert read_math(outcome.latex, D).expr == outcome.expr, (text, outcome.latex)
    try:
        read_document(text, "md", "fuzz.md")
    except StepReadError:
        pass
