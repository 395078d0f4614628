"""Reading students' solutions: statements, names, values, decimal commas, refusals."""

import os
import re

import pytest
import sympy

from symbolic_attn.grading.submissions import MAX_BYTES, normalize_name, parse_submission, read_submission


def answer(text, name, latex=False):
    statement = parse_submission(text, latex=latex).answer(name)
    assert statement is not None, f"no statement for {name} in {text!r}"
    assert statement.claimed is not None, statement.problem
    return statement.claimed


READ = [
    ("inline-dollar", r"so $a_{32} = 0.284$.", "a_{32}", "0.284"),
    ("approx-cmd", r"$a_{32} \approx 0.284$", "a_{32}", "0.284"),
    ("approx-unicode", "a_32 ≈ 0.284", "a_{32}", "0.284"),
    ("paren-math", r"\( a_{3,2} = 0.284 \)", "a_{32}", "0.284"),
    ("bracket-math", "\\[\n a_{3 2} = 0.284\n\\]", "a_{32}", "0.284"),
    ("double-dollar", "$$a_{32}=0.284$$", "a_{32}", "0.284"),
    ("plain-a32", "a32 = 0.284", "a_{32}", "0.284"),
    ("trailing-zeros-kept", "w = 0.2840", "w", "0.2840"),
    ("negative", "s = -0.5", "s", "-0.5"),
    ("unicode-minus", "s = −0.5", "s", "-0.5"),
    ("chain-last", r"$a = \frac{e}{1+e} \approx 0.731$", "a", "0.731"),
    ("chain-formula-first", r"Z = \mathrm{softmax}(QK^T/\sqrt{2}) V = [0.86, 1.43]", "Z", "[0.86, 1.43]"),
    ("scientific-latex", r"a = 2.8 \times 10^{-1}", "a", "2.8e-1"),
    ("scientific-cdot", r"a = 2.8 \cdot 10^{-1}", "a", "2.8e-1"),
    ("scientific-plain", "a = 2.8e-1", "a", "2.8e-1"),
    ("frac", r"a = \frac{1}{3}", "a", "1/3"),
    ("dfrac", r"a = \dfrac{2}{6}", "a", "2/6"),
    ("frac-digits", r"a = \frac12", "a", "1/2"),
    ("frac-digit-brace", r"a = \frac1{3}", "a", "1/3"),
    ("unicode-sqrt", "a = √2/2", "a", "sqrt(2)/2"),
    ("array-hline", r"M = \left[\begin{array}{cc} \hline 1 & 2 \\ 3 & 4 \end{array}\right]", "M", "[[1, 2], [3, 4]]"),
    ("slash", "a = 1/3", "a", "1/3"),
    ("sqrt", r"a = \sqrt{2}/2", "a", "sqrt(2)/2"),
    ("exp-power", r"a = e^{-1}", "a", "e^(-1)"),
    ("exp-cmd", r"a = \exp(2) \cdot 3", "a", "exp(2)*3"),
    ("ln", r"a = \ln 2", "a", "ln(2)"),
    ("times", r"a = 2 \times 3", "a", "2*3"),
    ("mathrm-e", r"a = \mathrm{e}^{2}", "a", "e^2"),
    ("implicit-product", r"a = 2\sqrt{2}", "a", "2*sqrt(2)"),
    ("row-brackets", "w = [0.33, 0.67, 0]", "w", "[0.33, 0.67, 0]"),
    ("row-parens", "w = (0.33, 0.67, 0)", "w", "[0.33, 0.67, 0]"),
    ("nested-lists", "M = [[1, 2], [3, 4]]", "M", "[[1, 2], [3, 4]]"),
    ("bmatrix", r"M = \begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}", "M", "[[1, 2], [3, 4]]"),
    ("pmatrix-multiline", "M =\n\\begin{pmatrix}\n1 & 2\\\\\n3 & 4\n\\end{pmatrix}", "M", "[[1, 2], [3, 4]]"),
    ("array-in-brackets", r"M = \left[\begin{array}{cc} 1 & 2 \\ 3 & 4 \end{array}\right]", "M", "[[1, 2], [3, 4]]"),
    ("transpose", r"v = \begin{bmatrix} 1 \\ 2 \end{bmatrix}^T", "v", "[[1, 2]]"),
    ("chain-unreadable-end", r"a = 0.284 = 28.4\%", "a", "0.284"),
    ("hash-comment-after", "a_32 = 0.284   # from the table", "a_{32}", "0.284"),
    ("prose-after", "a = 0.731 (rounded to 3 decimals)", "a", "0.731"),
    ("text-after", r"$a = 0.731 \text{ roughly}$", "a", "0.731"),
    ("comma-decimal", "a = 0,731", "a", "0.731"),
    ("comma-decimal-braces", "a = 0{,}731", "a", "0.731"),
    ("comma-decimal-list", "w = [0,33; 0,67]", "w", "[0.33, 0.67]"),
    ("comma-decimal-matrix", r"M = \begin{bmatrix} 0,5 & 0,25 \end{bmatrix}", "M", "[[0.5, 0.25]]"),
    ("alpha-command", r"$\alpha_{32} = 0.14$", r"alpha_{32}", "0.14"),
    ("alpha-unicode", "α_{32} ≈ 0.14", r"\alpha_{32}", "0.14"),
    ("name-in-math-only", "$a_{32}$ = 0.284", "a_{32}", "0.284"),
    ("value-in-next-display", "Z =\n$$\n\\begin{bmatrix} 1 & 2 \\end{bmatrix}\n$$", "Z", "[[1, 2]]"),
    ("markdown-bullet", "* a_{32} = 0.284", "a_{32}", "0.284"),
    ("sum-in-chain-not-a-name", "w = a*v_1 + b*v_2 = [0.9, 1.5]", "w", "[0.9, 1.5]"),
]


@pytest.mark.parametrize("text, name, expected", [r[1:] for r in READ], ids=[r[0] for r in READ])
def test_reads(text, name, expected):
    assert answer(text, name).text == expected


@pytest.mark.parametrize("latex", [False, True], ids=["text", "latex"])
def test_several_statements_per_line_in_align(latex):
    text = "\\begin{align*}\n a_{31} &= 0.2 & a_{32} &= 0.3 \\\\\n a_{33} &\\approx 0.5\n\\end{align*}"
    found = {s.name: s.claimed.text for s in parse_submission(text, latex=latex).statements}
    assert found == {"a_31": "0.2", "a_32": "0.3", "a_33": "0.5"}


def test_several_statements_in_prose():
    found = parse_submission("We get a_{31} = 0.2, a_{32} = 0.3 and a_{33} = 0.5.").statements
    assert [(s.name, s.claimed.text) for s in found] == [("a_31", "0.2"), ("a_32", "0.3"), ("a_33", "0.5")]


def test_last_statement_wins_and_a_formula_does_not_replace_a_value():
    text = "a_{32} = 0.150\nCorrection: a_{32} = 0.140\nwhere a_{32} = e^{s_{32}} / \\sum_j e^{s_{3j}}"
    assert answer(text, "a_{32}").text == "0.140"


def test_decimals_keep_written_precision():
    claimed = answer("w = 0.140", "w")
    assert claimed.elements[0].value == sympy.Rational(7, 50) and claimed.elements[0].decimals == 3
    assert answer(r"w = 2.8 \times 10^{-1}", "w").elements[0].half_unit == sympy.Rational(1, 200)


def test_output_in_a_tex_comment_is_not_read():
    assert parse_submission("% a = 0.5\na = 0.7", latex=True).answer("a").claimed.text == "0.7"


NAMES = [
    ("braces", "a_{32}", "a_32"),
    ("comma", "a_{3,2}", "a_32"),
    ("space", "a_{3 2}", "a_32"),
    ("dollars", "$a_{32}$", "a_32"),
    ("no-braces", "a_32", "a_32"),
    ("plain", "a32", "a_32"),
    ("greek", r"\alpha_{32}", "alpha_32"),
    ("greek-plain", "alpha_32", "alpha_32"),
    ("bold", r"\mathbf{Z}", "Z"),
]


@pytest.mark.parametrize("text, expected", [n[1:] for n in NAMES], ids=[n[0] for n in NAMES])
def test_name_normalization(text, expected):
    assert normalize_name(text) == expected


@pytest.mark.parametrize("other", ["A_{32}", "a_{23}", "a_{3}", "b_{32}"], ids=["case", "swapped", "short", "letter"])
def test_different_names_do_not_match(other):
    assert normalize_name(other) != normalize_name("a_{32}")
    assert parse_submission(f"{other} = 0.5").answer("a_{32}") is None


UNREADABLE = [
    ("double-point", "w = 0.2.3", "unexpected"),
    ("percent", r"w = 28.4\%", "percentage"),
    ("unbalanced", "w = [0.2, 0.3", "ends too early|expected"),
    ("ragged", "w = [[1, 2], [3]]", "different lengths"),
    ("empty-cell", r"w = \begin{bmatrix} 1 & & 2 \end{bmatrix}", "empty cell"),
    ("mixed", "w = [1, [2, 3]]", "mixes"),
    ("unknown-env", r"w = \begin{vmatrix} 1 & 2 \end{vmatrix}", "not a matrix"),
    ("bare-exponent", "w = e^12", "braces"),
]


@pytest.mark.parametrize("text, message", [u[1:] for u in UNREADABLE], ids=[u[0] for u in UNREADABLE])
def test_unreadable_is_reported_with_its_line(text, message):
    submission = parse_submission("intro\n\n" + text)
    statement = submission.answer("w")
    assert statement is not None and statement.claimed is None
    assert submission.problems and submission.problems[0].line == 3
    assert re.search(message, submission.problems[0].message)


def test_commas_in_a_comma_list_separate_entries():
    # [0,33, 0,67] is four entries, never silently two decimals
    assert answer("w = [0,33, 0,67]", "w").shape == (4,)


HOSTILE = [
    ("deep-brackets", "w = " + "[" * 5000 + "1" + "]" * 5000),
    ("deep-fracs", "w = " + r"\frac{1}{" * 3000 + "1" + "}" * 3000),
    ("tower", "w = 9^{9^{9^{9}}}"),
    ("huge-digits", "w = " + "9" * 5000),
    ("huge-exponent", "w = 1e999999"),
    ("many-statements", "w = 1\n" * 20000),
    ("long-line", "w = " + "1+" * 50000 + "1"),
    ("big-matrix", "w = [" + ", ".join(["1"] * 100) + "]"),
    ("control-chars", "w = 0.5\x1b[2J\x07"),
]


@pytest.mark.parametrize("text", [h[1] for h in HOSTILE], ids=[h[0] for h in HOSTILE])
def test_hostile_text_never_crashes(text):
    submission = parse_submission(text)
    assert isinstance(submission.problems, tuple)


def test_file_checks(tmp_path):
    big = tmp_path / "huge.md"
    with open(big, "wb") as handle:  # sparse: 500 MB on paper, nothing on disk
        handle.truncate(500 * 1024 * 1024)
    assert "larger than the limit of 1000000 bytes" in read_submission(big).refused
    (tmp_path / "junk.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert read_submission(tmp_path / "junk.md").refused.startswith("binary data")
    (tmp_path / "latin.md").write_bytes("a = 0,5 \xe9".encode("latin-1"))
    assert read_submission(tmp_path / "latin.md").refused.startswith("not UTF-8")
    (tmp_path / "folder.md").mkdir()
    assert "is a directory, not a regular solution file" in read_submission(tmp_path / "folder.md").refused
    os.symlink(tmp_path / "junk.md", tmp_path / "link.md")
    assert "is a symbolic link, not a regular solution file" in read_submission(tmp_path / "link.md").refused
    (tmp_path / "ok.md").write_text("$w = 0.5$", encoding="utf-8")
    assert read_submission(tmp_path / "ok.md").answer("w").claimed.text == "0.5"
    assert MAX_BYTES < 500 * 1024 * 1024


def test_toml_solution(tmp_path):
    path = tmp_path / "ann.toml"
    path.write_text('[answers]\n"a_{32}" = "0.140"\nZ = "[[1, 0], [0, 1]]"\n', encoding="utf-8")
    submission = read_submission(path)
    assert submission.answer("a_32").claimed.text == "0.140"
    assert submission.answer("Z").claimed.shape == (2, 2)


def test_toml_claims_solution_answers_by_position(tmp_path):
    from symbolic_attn.grading.answer_key import parse_answer_key
    from symbolic_attn.grading.batch import grade

    key = parse_answer_key('[attention]\nscores = [["0", "ln(3)"]]\nvalue = [[1, 0], [0, 1]]\n'
                           '[[questions]]\nname = "w"\nquantity = "weights"\nrow = 1\ncol = 2\n'
                           '[[questions]]\nname = "z"\nquantity = "output"\npoints = 2\n')
    path = tmp_path / "bob.toml"
    path.write_text('[[claims]]\nquantity = "weights"\nrow = 1\ncol = 2\nvalue = "0.75"\n'
                    '[[claims]]\nquantity = "output"\nvalue = ["0.25", "0.70"]\n', encoding="utf-8")
    result = grade(key, "bob", read_submission(path))
    assert [(q.verdict, q.points) for q in result.questions] == [("pass", 1), ("fail", 1)]


@pytest.mark.parametrize("text", ["w = [0.2, 0.3\n\nv = 0.5", "$w = [0.2, 0.3$ and $v = 0.5$",
                                  "\\begin{align} w &= (0.2 \\end{align}\nv = 0.5"],
                         ids=["blank-line", "dollar", "environment"])
def test_an_unclosed_bracket_does_not_swallow_later_answers(text):
    submission = parse_submission(text)
    assert submission.answer("w").claimed is None
    assert submission.answer("v").claimed.text == "0.5"
