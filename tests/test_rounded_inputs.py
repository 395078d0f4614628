"""Inputs declared printed-rounded (issue 20): ``Q = {value = ..., rounded = 4}``.

The textbook case is built honestly: "true" inputs with seven decimals, their exact weights
rounded to 4 places (what the book publishes), the inputs rounded to 4 places (what the
book prints); exact arithmetic shows the published weight is not the correct rounding of
the weights computed from the printed inputs.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import sympy

from symbolic_attn.errors import ExerciseError
from symbolic_attn.exact.certified import decimal_string
from symbolic_attn.grading.answer_key import parse_answer_key
from symbolic_attn.grading.batch import grade
from symbolic_attn.grading.computation import parse_computation
from symbolic_attn.grading.exercise import parse_exercise
from symbolic_attn.grading.report import check_exercise
from symbolic_attn.grading.rounded_inputs import MAX_ROUNDED_ENTRIES
from symbolic_attn.grading.submissions import parse_submission
from symbolic_attn.model.attention import attention

ROOT = Path(__file__).resolve().parent.parent

R = sympy.Rational
TRUE_Q = sympy.ImmutableMatrix([[R(3913, 10**7), R(9509051, 10**7)]])
TRUE_K = sympy.ImmutableMatrix([[R(2537804, 10**7), R(9002967, 10**7)],
                                [R(1702289, 10**7), R(6100362, 10**7)],
                                [R(427833, 10**7), R(1179699, 10**7)]])
V = sympy.ImmutableMatrix([[1, 0], [0, 1], [1, 1]])
PRINTED_Q = [["0.0004", "0.9509"]]
PRINTED_K = [["0.2538", "0.9003"], ["0.1702", "0.6100"], ["0.0428", "0.1180"]]
PUBLISHED = ["0.4143", "0.3409", "0.2448"]  # the book's weights, from the unrounded inputs
PUBLISHED_TEXT = ", ".join(PUBLISHED)


def rounded(value, places):
    return R(sympy.floor(value * 10**places + R(1, 2)), 10**places)


def exact(rows):
    return sympy.ImmutableMatrix([[R(x) for x in row] for row in rows])


def toml(rows):
    return "[" + ", ".join("[" + ", ".join(f'"{x}"' for x in row) + "]" for row in rows) + "]"


def textbook(places=4, weights=PUBLISHED_TEXT, extra=""):
    q = toml(PRINTED_Q) if places is None else f"{{value = {toml(PRINTED_Q)}, rounded = {places}}}"
    k = toml(PRINTED_K) if places is None else f"{{value = {toml(PRINTED_K)}, rounded = {places}}}"
    return f"""
title = "Example 9.3 (printed inputs)"
[inputs]
Q = {q}
K = {k}
V = [[1, 0], [0, 1], [1, 1]]
[attention]
query = "Q"
key = "K"
value = "V"
[[claims]]
label = "weights"
quantity = "weights"
value = "[{weights}]"
{extra}"""


def test_the_textbook_case_is_honest():
    """The printed inputs are the true ones rounded; the published weights are the true
    weights rounded; from the printed inputs, weight 2 rounds differently."""
    assert TRUE_Q.applyfunc(lambda x: rounded(x, 4)) == exact(PRINTED_Q)
    assert TRUE_K.applyfunc(lambda x: rounded(x, 4)) == exact(PRINTED_K)
    true_weights = attention(TRUE_Q, TRUE_K, V).trace["weights"]
    printed_weights = attention(exact(PRINTED_Q), exact(PRINTED_K), V).trace["weights"]
    assert [decimal_string(w, 4) for w in true_weights] == PUBLISHED
    assert [decimal_string(w, 4) for w in printed_weights] == ["0.4143", "0.3408", "0.2448"]
    # |published - exact from printed| is more than half a unit: certified, not by floats
    from symbolic_attn.exact.certified import within
    from fractions import Fraction

    assert not within(printed_weights[1], Fraction(3409, 10000), Fraction(1, 20000))


def test_the_published_weights_fail_without_rounded_and_pass_with_it():
    plain = check_exercise(parse_exercise(textbook(places=None), source="book.toml")).outcomes[0]
    assert (plain.verdict, plain.wrong) == ("fail", [(1, 2)])
    report = check_exercise(parse_exercise(textbook(), source="book.toml"))
    (outcome,) = report.outcomes
    assert outcome.verdict == "pass" and outcome.wrong == [] and outcome.undecided == []
    assert outcome.rule == "4 decimals"
    assert any(note.startswith("a correct value for inputs within their printed rounding (Q +/- 0.00005, "
                                "K +/- 0.00005)") for note in outcome.notes)


def test_a_wrong_number_fails_with_rounded():
    outcome = check_exercise(parse_exercise(textbook(weights="0.4143, 0.3419, 0.2448"), source="b.toml")).outcomes[0]
    assert (outcome.verdict, outcome.wrong) == ("fail", [(1, 2)])
    assert outcome.notes == [next(n for n in outcome.notes if n.startswith("no inputs within their printed rounding"))]
    # one digit off in the last place, beyond what the rounding of the inputs can explain
    off = check_exercise(parse_exercise(textbook(weights="0.4143, 0.3411, 0.2448"), source="b.toml")).outcomes[0]
    assert (off.verdict, off.wrong) == ("fail", [(1, 2)])


def test_outputs_and_other_rules():
    extra = """
[[claims]]
label = "o"
quantity = "output"
value = "[0.6591, 0.5857]"
[[claims]]
label = "tol"
quantity = "weights"
col = 2
value = "0.34"
tolerance = "0.0005"
"""
    report = check_exercise(parse_exercise(textbook(extra=extra), source="b.toml"))
    assert [o.verdict for o in report.outcomes] == ["pass", "pass", "fail"]


SCORES = """
[inputs]
s = {{value = [["0.12", "0.47"]], rounded = 2}}
[attention]
scores = "s"
value = [[1], [0]]
[[claims]]
quantity = "{quantity}"
col = 1
value = "{value}"
"""


@pytest.mark.parametrize("quantity, value, expected", [
    ("scores", "3/25", "pass"),  # the printed point itself
    ("scores", "123/1000", "pass"),  # an exact claim is a point: inside the box
    ("scores", "0.1249", "pass"),
    ("scores", "13/100", "fail"),  # outside [0.115, 0.125]
    ("weights", "0.4112", "pass"),  # the weight ranges over [0.41097, 0.41580]
    ("weights", "0.4159", "fail"),  # beyond it by less than a unit of the claim: branch and bound
    ("weights", "1/2", "fail"),
], ids=["printed", "exact-inside", "decimal-inside", "exact-outside", "weight-inside", "weight-just-outside",
        "exact-weight-outside"])
def test_exact_and_decimal_claims_over_the_box(quantity, value, expected):
    exercise = parse_exercise(SCORES.format(quantity=quantity, value=value), source="s.toml")
    assert check_exercise(exercise).outcomes[0].verdict == expected


def test_undecided_is_honest_and_never_a_pass():
    """x is printed 0 (rounded to 4 places), y = x*x ranges over [0, 2.5e-9]: the claim
    0.000000001 ([5e-10, 1.5e-9]) is reachable (x = 3.2e-5), but the gradient at the printed
    point is 0, so the search's points are all the printed point (y = 0, too small), and the
    enclosure meets the claim: neither is certified."""
    exercise = parse_exercise("""
[inputs]
x = {value = "0", rounded = 4}
[define]
y = "x*x"
[[claims]]
quantity = "y"
value = "0.000000001"
[[claims]]
quantity = "y"
value = "0.00000001"
""", source="sq.toml")
    undecided, wrong = check_exercise(exercise).outcomes
    assert undecided.verdict == "undecided" and undecided.undecided == [(1, 1)]
    assert undecided.notes[0].startswith("undecided: the printed inputs do not give it; no inputs within their "
                                         "printed rounding (x +/- 0.00005) were found")
    assert wrong.verdict == "fail"  # [5e-9, 1.5e-8] is beyond 2.5e-9: certified


def test_define_exercises_follow_rounded_inputs():
    text = f"""
[inputs]
Q = {{value = {toml(PRINTED_Q)}, rounded = 4}}
K = {{value = {toml(PRINTED_K)}, rounded = 4}}
V = [[1, 0], [0, 1], [1, 1]]
[define]
A = "attention(Q = Q, K = K, V = V)"
[[claims]]
quantity = "A.weights"
value = "[{', '.join(PUBLISHED)}]"
"""
    assert check_exercise(parse_exercise(text, source="d.toml")).outcomes[0].verdict == "pass"
    plain = text.replace("{value = ", "").replace(", rounded = 4}", "")
    assert check_exercise(parse_exercise(plain, source="d.toml")).outcomes[0].verdict == "fail"
    question = '[[questions]]\nname = "w"\nquantity = "A.weights"\nrow = 1\ncol = 2\npoints = 1\n'
    assert grade(parse_answer_key(text + question), "s", parse_submission("w = 0.3409")).questions[0].verdict == "pass"
    assert grade(parse_answer_key(plain + question), "s", parse_submission("w = 0.3409")).questions[0].verdict == "fail"


def test_a_computation_file_runs_at_the_printed_values():
    computation = parse_computation('[inputs]\nx = {value = "0.25", rounded = 2}\n[define]\ny = "2*x"\n', source="c.toml")
    assert computation.trace()["y"] == sympy.Matrix([[sympy.Rational(1, 2)]])


BASE = '[attention]\nquery = "Q"\nkey = "K"\nvalue = [[1]]\n'
REFUSED = [
    ("places-text", 'Q = {value = [["0.5"]], rounded = "4"}',
     r"^r.toml: inputs.Q.rounded: expected the decimal places, a whole number from 0 to 20, got '4'$"),
    ("places-bool", 'Q = {value = [["0.5"]], rounded = true}', r"^r.toml: inputs.Q.rounded: expected the decimal places"),
    ("places-negative", 'Q = {value = [["0.5"]], rounded = -1}',
     r"^r.toml: inputs.Q.rounded: expected the decimal places, a whole number from 0 to 20, got -1$"),
    ("places-too-big", 'Q = {value = [["0.5"]], rounded = 21}', r"^r.toml: inputs.Q.rounded: .* got 21$"),
    ("more-decimals", 'Q = {value = [["0.5", "0.43051"]], rounded = 4}',
     r"^r.toml: inputs.Q.value\[1,2\]: 0.43051 has more decimals than the 4 declared by rounded$"),
    ("more-decimals-text", 'Q = {value = "[[0.5, 0.125]]", rounded = 2}',
     r"^r.toml: inputs.Q.value\[1,2\]: 0.125 has more decimals than the 2 declared by rounded$"),
    ("fraction", 'Q = {value = [["1/3"]], rounded = 4}', r"^r.toml: inputs.Q.value\[1,1\]: 1/3 has more decimals"),
    ("symbolic", 'Q = {value = [["ln(2)"]], rounded = 4}',
     r"^r.toml: inputs.Q.value\[1,1\]: a rounded input's entries must be printed numbers, got 'log\(2\)'$"),
    ("unknown-key", 'Q = {value = [["0.5"]], rounded = 4, digits = 4}',
     r"^r.toml: inputs.Q.digits: unknown key \(expected one of: rounded, value\)$"),
    ("no-places", 'Q = {value = [["0.5"]]}', r"^r.toml: inputs.Q.rounded: missing"),
    ("no-value", "Q = {rounded = 4}", r"^r.toml: inputs.Q.value: missing"),
    ("toml-float", "Q = {value = [[0.5]], rounded = 4}",
     r'^r.toml: inputs.Q.value\[1,1\]: TOML float 0.5 loses its written precision; write it as a string: "0.5"$'),
    ("bad-value", 'Q = {value = true, rounded = 4}', r"^r.toml: inputs.Q.value: expected an integer, a string or an array"),
]


@pytest.mark.parametrize("line, message", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_bad_rounded_inputs_are_refused(line, message):
    with pytest.raises(ExerciseError, match=message):
        parse_exercise(f"[inputs]\n{line}\nK = [[1]]\n{BASE}", source="r.toml")


def test_a_rounded_value_belongs_in_inputs():
    with pytest.raises(ExerciseError, match=r"^r.toml: attention.query: declare a rounded value in \[inputs\] "):
        parse_exercise('[attention]\nquery = {value = [["0.5"]], rounded = 1}\nkey = [[1]]\nvalue = [[1]]\n',
                       source="r.toml")


def test_a_rounded_scale_is_refused():
    with pytest.raises(ExerciseError, match=r"^r.toml: inputs.c.rounded: the computation cannot follow rounded inputs: "
                                            r"attention.scale: expected \"default\", \"none\" or a number, got 'c'$"):
        parse_exercise('[inputs]\nc = {value = "0.5", rounded = 1}\n[attention]\nquery = [[1]]\nkey = [[1]]\n'
                       'value = [[1]]\nscale = "c"\n', source="r.toml")


def test_a_symbolic_entry_and_too_many_entries_are_refused():
    with pytest.raises(ExerciseError, match=r"^r.toml: inputs.Q.value\[1,1\]: a rounded input's entries must be "
                                            r"printed numbers, got 'a'$"):
        parse_exercise(f'symbols = ["a"]\n[inputs]\nQ = {{value = "[[a]]", rounded = 1}}\nK = [[1]]\n{BASE}',
                       source="r.toml")
    side = MAX_ROUNDED_ENTRIES // 8 + 1
    rows = toml([["0"] * 8] * side)
    with pytest.raises(ExerciseError, match=rf"^r.toml: inputs: {side * 8} rounded entries exceed the limit of "
                                            rf"{MAX_ROUNDED_ENTRIES}$"):
        parse_exercise(f"[inputs]\nQ = {{value = {rows}, rounded = 1}}\n[attention]\nscores = \"Q\"\n"
                       f"value = {toml([['1']] * 8)}\n", source="r.toml")


def test_grading_with_an_answer_key():
    questions = """
[[questions]]
name = "a_{12}"
quantity = "weights"
row = 1
col = 2
points = 1
decimals = 4
"""
    submission = parse_submission("a_{12} = 0.3409")
    with_rounded = parse_answer_key(textbook() + questions, source="key.toml")
    assert grade(with_rounded, "s", submission).questions[0].verdict == "pass"
    plain = parse_answer_key(textbook(places=None) + questions, source="key.toml")
    assert grade(plain, "s", submission).questions[0].verdict == "fail"
    assert grade(with_rounded, "s", parse_submission("a_{12} = 0.3420")).questions[0].verdict == "fail"


def test_the_check_command(tmp_path):
    path = tmp_path / "book.toml"
    path.write_text(textbook())
    run = [sys.executable, "-m", "symbolic_attn", "check", str(path), "--format", "json"]
    done = subprocess.run(run, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    (claim,) = json.loads(done.stdout)["claims"]
    assert claim["verdict"] == "pass" and "printed rounding" in claim["note"]
    path.write_text(textbook(places=None))
    assert subprocess.run(run, capture_output=True, text=True, cwd=ROOT, timeout=120).returncode == 1
    path.write_text(textbook().replace("rounded = 4", "rounded = 3", 1))
    refused = subprocess.run(run, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith("inputs.Q.value[1,1]: 0.0004 has more decimals than the 3 declared by "
                                           "rounded")


def test_the_readme_example_says_what_it_does():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("**Inputs printed rounded.**", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    (outcome,) = check_exercise(parse_exercise(block, source="README.md")).outcomes
    assert outcome.verdict == "pass"
    plain = block.replace("{value = ", "").replace(", rounded = 4}", "").replace("    # or value", "  # or value")
    assert check_exercise(parse_exercise(plain, source="README.md")).outcomes[0].wrong == [(1, 2)]
