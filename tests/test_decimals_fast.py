"""The decimals' fast path (model.decimals) against the exact closed forms, digit for digit.

The fast path rounds entries it knows to be rational exactly and the others from arb
intervals, straight from the rational scores; the reference is the exact SymPy closed form
of every entry, rounded by ``decimal_string``.  Masks, every empty-row policy, the two
mistake maskings, both axes and values sitting exactly on rounding boundaries are covered.
"""

from fractions import Fraction

import flint
import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symbolic_attn.errors import DigitsError, StageError, UndecidedError
from symbolic_attn.exact.certified import certified_decimal, decimal_string, rational_decimal
from symbolic_attn.model import attention as core
from symbolic_attn.model.attention import attention, attention_from_scores
from symbolic_attn.model.masks import Mask

STAGES = ("scores", "scaled", "weights", "output")
# Few distinct small rationals, so that equal scores (and exact weights) come up often.
RATIONALS = st.sampled_from([Fraction(0), Fraction(1), Fraction(-1), Fraction(1, 2), Fraction(2), Fraction(-3, 4)])


def reference(result, stage, digits, significant):
    """Each exact closed-form entry rounded on its own (the slow, obviously right way)."""
    matrix = result.stage(stage)
    return [[decimal_text(e, digits, significant) for e in matrix.row(i)] for i in range(matrix.rows)]


def decimal_text(entry, digits, significant):
    if entry is sympy.nan:
        return "nan"
    if entry.free_symbols:
        return None
    try:
        return decimal_string(entry, digits, significant)
    except UndecidedError:
        # A closed form such as (e^(1/2)/2 + 1)/(e^(1/2) + 2) sits on a boundary and
        # decimal_string's simplify does not see that it is 1/2; cancelling over the
        # exponentials does (every denominator here is a sum of positive exponentials).
        return decimal_string(sympy.cancel(sympy.together(entry)), digits, significant)


@st.composite
def cases(draw):
    n, m = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    d_k, d_v = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    matrix = lambda rows, cols: [[draw(RATIONALS) for _ in range(cols)] for _ in range(rows)]  # noqa: E731 -- a one-line local helper
    grid = [[draw(st.booleans()) for _ in range(m)] for _ in range(n)]
    grid[0] = [j == 0 for j in range(m)]  # always one row with a single allowed key
    options = {
        "masking": draw(st.sampled_from(["renormalize", "renormalize", "zero_after_softmax", "zero_score"])),
        "on_empty_row": draw(st.sampled_from(["zeros", "uniform", "nan"])),
        "axis": draw(st.sampled_from(["keys", "keys", "queries"])),
        "stable": draw(st.booleans()),
    }
    scale = draw(st.sampled_from(["default", "none", "1/2", "sqrt(3)"]))
    if options["axis"] == "queries":
        grid = [[True] * m for _ in range(n)]  # the transposed softmax needs every column non-empty
    significant = draw(st.booleans())
    digits = draw(st.integers(1, 6)) if significant else draw(st.integers(0, 4))
    return (matrix(n, d_k), matrix(m, d_k), matrix(m, d_v)), Mask.keep(grid), scale, options, digits, significant


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_fast_decimals_equal_the_closed_forms(case):
    (Q, K, V), mask, scale, options, digits, significant = case
    result = attention(Q, K, V, mask=mask, scale=scale, **options)
    for stage in STAGES:
        fast = result.decimals(stage, digits, significant)
        fresh = attention(Q, K, V, mask=mask, scale=scale, **options)
        assert fast == reference(fresh, stage, digits, significant), stage


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(RATIONALS, min_size=3, max_size=3), min_size=2, max_size=2),
       st.lists(st.lists(st.booleans(), min_size=3, max_size=3), min_size=2, max_size=2),
       st.sampled_from(["zeros", "uniform", "nan"]))
def test_given_scores_with_empty_rows_equal_the_closed_forms(scores, grid, policy):
    values = [[Fraction(1, 2)], [Fraction(1, 4)], [Fraction(-1, 8)]]
    result = attention_from_scores(scores, values, mask=Mask.keep(grid), on_empty_row=policy)
    for stage in STAGES:
        for digits, significant in ((2, False), (30, True)):
            fresh = attention_from_scores(scores, values, mask=Mask.keep(grid), on_empty_row=policy)
            assert result.decimals(stage, digits, significant) == reference(fresh, stage, digits, significant)


# -- values exactly on a rounding boundary ------------------------------------------------

HALF = [[0, 0]]  # two equal scores: weights exactly 1/2


@pytest.mark.parametrize(
    "scores, values, mask, stage, digits, significant, expected",
    [
        (HALF, [[1], [0]], None, "weights", 0, False, [["1", "1"]]),  # 0.5 -> 1, away from zero
        (HALF, [[1], [0]], None, "output", 0, False, [["1"]]),
        ([[0, 0, 0, 0]], [[0], [0], [0], [Fraction(1, 2)]], None, "weights", 1, False, [["0.3"] * 4]),  # 1/4
        ([[0, 0, 0, 0]], [[0], [0], [0], [Fraction(1, 2)]], None, "output", 2, False, [["0.13"]]),  # 0.125
        ([[0, 0, 0, 0]], [[0], [0], [0], [Fraction(-1, 2)]], None, "output", 2, False, [["-0.13"]]),
        # Irrational weights, rational output: each distinct score's values average 1/8.
        ([[0, 0, 1, 1]], [[0], [Fraction(1, 4)], [Fraction(1, 8)], [Fraction(1, 8)]], None, "output", 2, False,
         [["0.13"]]),
        # A constant value column: the output is that constant, whatever the weights.
        ([[0, 1, 2]], [[Fraction(5, 8)], [Fraction(5, 8)], [Fraction(5, 8)]], None, "output", 2, False, [["0.63"]]),
        ([[0, 1, 2]], [[1], [1], [1]], None, "output", 30, True, [["1." + "0" * 29]]),
        # A lone allowed key: weight exactly 1, output exactly that key's value.
        ([[3, 1]], [[Fraction(1, 8)], [7]], Mask.keep([[1, 0]]), "weights", 30, True, [["1." + "0" * 29, "0"]]),
        ([[3, 1]], [[Fraction(1, 8)], [7]], Mask.keep([[1, 0]]), "output", 2, False, [["0.13"]]),
        ([[0, 0]], [[1], [1]], Mask.keep([[0, 0]]), "weights", 30, True, [["0", "0"]]),
    ],
    ids=["half-0places", "half-output", "quarter-1place", "eighth-2places", "minus-eighth", "group-means",
         "constant-column", "constant-one-30sig", "lone-key-weight-1", "lone-key-output",
         "empty-row-zeros"],
)
def test_values_on_rounding_boundaries(scores, values, mask, stage, digits, significant, expected):
    options = {}
    if mask is not None and not any(any(row) for row in mask.allowed):
        options = {"on_empty_row": "zeros"}
    result = attention_from_scores(scores, values, mask=mask, **options)
    assert result.decimals(stage, digits, significant) == expected


def test_zero_score_boundary_with_the_mistake_setting():
    # masking="zero_score": the blocked score 5 becomes 0, equal to the allowed score 0.
    result = attention_from_scores([[0, 5]], [[Fraction(1, 4)], [1]], mask=Mask.keep([[1, 0]]), masking="zero_score")
    assert result.decimals("weights", 0) == [["1", "1"]]  # 1/2 each, rounded away from zero
    assert result.decimals("output", 3) == [["0.625"]]  # (1/4 + 1)/2, exactly


def test_an_interval_alone_never_decides_a_boundary():
    """Why exact entries are needed: any ball around 1/2, however narrow, straddles the
    0-place boundary, and a ball around 1 straddles nothing at 30 significant digits."""
    with flint.ctx.workprec(4096) if hasattr(flint.ctx, "workprec") else _nothing():
        near_half = (flint.arb(1).exp() / (2 * flint.arb(1).exp()))
    assert certified_decimal(near_half, 0) is None
    assert rational_decimal(Fraction(1, 2), 0) == "1"


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_the_exact_test_is_not_fooled_by_unequal_group_means():
    # Group means 1/4 and 0: the output is irrational; its decimals still match the closed form.
    result = attention_from_scores([[0, 0, 1, 1]], [[0], [Fraction(1, 2)], [0], [0]])
    assert result._numbers.known("output") == [[None]]
    assert result.decimals("output", 30, True) == reference(result, "output", 30, True)


# -- the fast path builds no SymPy closed form ---------------------------------------------


def test_rational_inputs_never_build_closed_forms(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a SymPy closed form was built")

    monkeypatch.setattr(core, "_exact_rows", refuse)
    monkeypatch.setattr(core, "_product", refuse)
    monkeypatch.setattr(core, "sympy_matrix", refuse)
    n = 12
    Q = [[Fraction(i - j, 3) for j in range(4)] for i in range(n)]
    V = [[Fraction(i * j - 5, 7) for j in range(3)] for i in range(n)]
    result = attention(Q, Q, V, mask="causal")
    weights = result.decimals("weights", 30, significant=True)
    output = result.decimals("output", 30, significant=True)
    assert weights[0][0] == "1." + "0" * 29 and weights[0][1] == "0"
    assert output[0] == [rational_decimal(Fraction(-5, 7) + Fraction(0), 30, True), rational_decimal(Fraction(-5, 7), 30, True),
                         rational_decimal(Fraction(-5, 7), 30, True)]
    assert result.decimals("scores", 3)[1][0] == "0.889"  # [1/3, 0, -1/3, -2/3] . [0, -1/3, -2/3, -1], as fmpq
    monkeypatch.undo()
    assert result.decimals("scores", 3) == reference(attention(Q, Q, V, mask="causal"), "scores", 3, False)


PADDED = Mask.causal(6) & Mask.padding(6, 6, valid=4)
HOLES = Mask.keep([[1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0], [1, 1, 0, 1, 0, 0], [0, 0, 0, 0, 0, 1],
                   [1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 0, 0]])


@pytest.mark.parametrize(
    "mask, options, d_k",
    [
        ("causal", {}, 2),  # scale 1/sqrt(2): irrational scaled scores
        (PADDED, {}, 4),
        (HOLES, {"on_empty_row": "zeros"}, 3),
        (HOLES, {"on_empty_row": "uniform"}, 2),
        (HOLES, {"on_empty_row": "nan"}, 4),
        (HOLES, {"masking": "zero_after_softmax"}, 2),
        (HOLES, {"masking": "zero_score", "stable": True}, 2),
    ],
    ids=["causal-irrational-scale", "causal-and-padding", "empty-zeros", "empty-uniform", "empty-nan",
         "zero-after-softmax", "zero-score-stable"],
)
def test_masks_and_policies_need_no_closed_form(monkeypatch, mask, options, d_k):
    Q = [[Fraction((3 * i + j) % 5 - 2, 1 + j) for j in range(d_k)] for i in range(6)]
    K = [[Fraction((i * j) % 3 - 1, 2) for j in range(d_k)] for i in range(6)]
    V = [[Fraction(1, 2), 1], [0, 1], [Fraction(1, 8), 1], [Fraction(-1, 4), 1], [1, 1], [Fraction(3, 8), 1]]
    fast = attention(Q, K, V, mask=mask, **options)
    with monkeypatch.context() as patched:
        for name in ("_exact_rows", "_product", "sympy_matrix"):
            patched.setattr(core, name, lambda *a, **k: pytest.fail("a SymPy closed form was built"))
        got = {(stage, digits, sig): fast.decimals(stage, digits, sig)
               for stage in STAGES for digits, sig in ((0, False), (2, False), (30, True))}
    slow = attention(Q, K, V, mask=mask, **options)
    for (stage, digits, sig), text in got.items():
        assert text == reference(slow, stage, digits, sig), (stage, digits, sig)
    assert all(row[1] in ("1", "1.00", "1." + "0" * 29, "0", "0.00", "nan") for row in got["output", 0, False])


def test_intervals_hold_exact_balls_for_exact_entries():
    result = attention([[1, 0], [0, 1]], [[1, 0], [0, 1]], [[1, 2], [3, 4]], mask="causal", scale="none")
    weights = result.intervals("weights", 128)
    assert weights[0][0].is_exact() and weights[0][0] == 1 and weights[0][1].is_zero()
    assert not weights[1][0].is_exact()  # irrational: a genuine ball
    assert (1 / (1 + flint.arb(1).exp())).contains(weights[1][0])  # e^0 / (e^0 + e^1), at 53 bits
    assert not weights[1][0].contains(flint.arb(1) / 2)


def test_symbolic_entries_still_fall_back_to_closed_forms():
    x = sympy.Symbol("x")
    result = attention_from_scores([[0, x]], [[1], [2]])
    assert result.decimals("scores", 2) == [["0.00", None]]
    assert result.decimals("weights", 2) == [[None, None]]


def test_undecided_is_typed_when_precision_runs_out(monkeypatch):
    from symbolic_attn.model import decimals as module

    monkeypatch.setattr(module, "MAX_PRECISION", 64)  # below the first attempt: nothing decides
    with pytest.raises(UndecidedError, match=r"^cannot certify 3 digits of weights \(1,1\)"):
        attention([[1, 0]], [[1, 0], [0, 1]], [[1], [0]]).decimals("weights", 3)


# -- digit counts and stage names ---------------------------------------------------------


@pytest.mark.parametrize(
    "digits, significant, message",
    [
        (-3, False, r"^digit count -3 is outside 0\.\.1000 \(places after the point\)$"),
        (1001, False, r"^digit count 1001 is outside 0\.\.1000"),
        (0, True, r"^digit count 0 is outside 1\.\.1000 \(significant digits\)$"),
        (1.5, False, r"^digit count must be a whole number, got '1\.5' \(float\)$"),
        ("3", False, r"^digit count must be a whole number, got '3' \(str\)$"),
        (True, False, r"^digit count must be a whole number, got 'True' \(bool\)$"),
        (None, False, r"^digit count must be a whole number"),
        (10**5000, False, r"^digit count about 10\^5000 is outside 0\.\.1000"),
        (3, "yes", r"^significant must be True or False, got 'yes' \(str\)$"),
    ],
    ids=["negative", "too-many", "zero-significant", "float", "text", "bool", "none", "huge", "significant-text"],
)
def test_bad_digit_counts_are_refused(digits, significant, message):
    result = attention([[1, 0]], [[1, 0], [0, 1]], [[1], [0]])
    with pytest.raises(DigitsError, match=message):
        result.decimals("weights", digits, significant)
    with pytest.raises(DigitsError, match=message):
        decimal_string(sympy.Rational(1, 3), digits, significant)


def test_good_digit_counts_at_the_limits():
    result = attention([[1, 0]], [[1, 0], [0, 1]], [[1], [0]])
    assert result.decimals("weights", 0) == [["1", "0"]]  # 0.67 and 0.33 to 0 places
    assert len(result.decimals("weights", 1000)[0][0]) == 1002
    assert result.decimals("output", 1, significant=True) == [["0.7"]]
    assert result.trace.decimals("query", 2) if hasattr(result.trace, "decimals") else True


@pytest.mark.parametrize("stage", ["weight", "", "output ", 3, None], ids=repr)
def test_unknown_stage_names(stage):
    result = attention([[1, 0]], [[1, 0], [0, 1]], [[1], [0]])
    with pytest.raises(StageError, match=r"^unknown stage "):
        result.decimals(stage, 3)
    with pytest.raises(StageError, match=r"^unknown stage "):
        result.intervals(stage, 128)


@pytest.mark.parametrize("axis", ["keys", "queries"])
def test_symbolic_values_leave_the_weights_numeric(axis):
    x = sympy.Symbol("x")
    result = attention_from_scores([[0, 1], [1, 1]], [[x], [2]], axis=axis)
    assert result.decimals("weights", 3) == reference(result, "weights", 3, False)
    assert result.decimals("output", 3) == [[None], [None]]
    assert result.intervals("output", 128) == [[None], [None]]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0, sympy.log(2), sympy.log(3), sympy.Rational(1, 2)]), min_size=3, max_size=3),
                min_size=1, max_size=2),
       st.lists(st.sampled_from([sympy.Rational(1, 2), sympy.sqrt(2), 0, 1]), min_size=3, max_size=3),
       st.integers(0, 3))
def test_symbolic_scores_and_irrational_values_equal_the_closed_forms(scores, column, digits):
    """The general path (no rational scores): exact entries are found structurally, and an
    entry left on a boundary (log scores can give weights exactly 1/2) falls back to its
    closed form, proved rational."""
    values = [[v] for v in column]
    result = attention_from_scores(scores, values)
    for stage in STAGES:
        assert result.decimals(stage, digits) == reference(attention_from_scores(scores, values), stage, digits, False)


@pytest.mark.parametrize("bits, message", [(0, r"^precision of 0 bits is outside 16\.\.131072$"),
                                           (-5, r"^precision of -5 bits is outside"),
                                           (10**6, r"^precision of 1000000 bits is outside"),
                                           (10**400, r"^precision of a huge number of bits is outside"),
                                           (128.0, r"^precision must be a whole number of bits, got '128\.0' \(float\)$")],
                         ids=["zero", "negative", "large", "huge", "float"])
def test_bad_precisions_are_refused(bits, message):
    with pytest.raises(DigitsError, match=message):
        attention([[1, 0]], [[1, 0], [0, 1]], [[1], [0]]).intervals("weights", bits)


def test_trace_decimals_of_inputs_are_checked_and_symbolic_entries_are_none():
    result = attention([[sympy.Symbol("x"), 1]], [[1, 0], [0, 1]], [[1], [0]])
    assert result.trace.decimals("query", 2) == [[None, "1.00"]]
    with pytest.raises(DigitsError, match=r"^digit count -1 is outside"):
        result.trace.decimals("query", -1)
