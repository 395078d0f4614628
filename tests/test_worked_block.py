"""The worked examples for LayerNorm, positions, heads and the encoder block: in both notes,
numbers from the model, and every claim able to stop the build."""

import functools
from pathlib import Path

import pytest
import sympy

from symbolic_attn.errors import ProofError
from symbolic_attn.model.block import encoder_block
from symbolic_attn.model.layernorm import layer_norm
from symbolic_attn.model.multihead import multihead
from symbolic_attn.model.positional import sinusoidal
from symbolic_attn.notes import worked, worked_block
from symbolic_attn.notes.steps import stage_line
from symbolic_attn.render.blocks import Figure, Heading

OUT = Path(__file__).resolve().parent.parent / "out"

HEADINGS = ("Worked example: layer normalization of $[1, 3]$", "With $\\epsilon = 1/100$",
            "Worked example: sinusoidal positions in width 2", "Worked example: two heads on three tokens",
            "Each head's weights", "Concatenate, then $W_O$", "Worked example: a Post-LN encoder block",
            "Sublayer 1: attention, add, normalize", "Sublayer 2: feed-forward, add, normalize",
            "Pre-LN is a different block")

# (snippet, where): exact values and certified decimals the examples must print.
SNIPPETS = [
    (r"\mu = \tfrac{1}{2}(1 + 3) &= \begin{bmatrix}2\end{bmatrix}", "layer-norm-mean"),
    (r"\sigma^2 = \tfrac{1}{2}\left((-1)^2 + 1^2\right) &= \begin{bmatrix}1\end{bmatrix}", "layer-norm-variance"),
    (r"\frac{z - \mu}{\sqrt{\sigma^2 + \epsilon}}, \ \epsilon = 0 &= \begin{bmatrix}-1 & 1\end{bmatrix}", "layer-norm-output"),
    (r"\approx \begin{bmatrix}-0.995 & 0.995\end{bmatrix}", "layer-norm-eps"),
    (r"P &= \begin{bmatrix}0 & 1 \\ \sin{\left(1 \right)} & \cos{\left(1 \right)} \\ \sin{\left(2 \right)} & "
     r"\cos{\left(2 \right)}\end{bmatrix} \approx \begin{bmatrix}0.000 & 1.000 \\ 0.841 & 0.540 \\ 0.909 & -0.416\end{bmatrix}",
     "positions"),
    (r"\approx \begin{bmatrix}1.000 & 1.000 \\ 0.841 & 1.540 \\ 1.909 & 0.584\end{bmatrix}", "x-plus-p"),
    (r"\frac{e}{1 + 2 e} & \frac{1}{1 + 2 e} & \frac{e}{1 + 2 e}", "head-1-weights"),
    (r"\approx \begin{bmatrix}1.689 & 1.333 \\ 1.333 & 1.689 \\ 1.689 & 1.689\end{bmatrix}", "concat"),
    (r"\approx \begin{bmatrix}1.689 & 0.667 \\ 1.333 & 0.845 \\ 1.689 & 0.845\end{bmatrix}", "output-W_O"),
    (r"\approx \begin{bmatrix}2.689 & 0.667 \\ 1.333 & 1.845 \\ 2.689 & 1.845\end{bmatrix}", "add1"),
    (r"\text{add2} = Y + \operatorname{FFN}(Y) = \begin{bmatrix}1 & -2 \\ -2 & 1 \\ 1 & -2\end{bmatrix}", "add2"),
    (r"\text{norm2} = \operatorname{Block}(X) = \begin{bmatrix}1 & -1 \\ -1 & 1 \\ 1 & -1\end{bmatrix}", "norm2"),
    (r"\operatorname{PreLN}_{\epsilon = 1/100}(X) &\approx \begin{bmatrix}2.093 & -1.548 \\ -2.096 & 1.545 \\ "
     r"0.000 & 0.000\end{bmatrix}", "pre-ln"),
]


@pytest.fixture(scope="module")
def committed():
    return {name: (OUT / name).read_text(encoding="utf-8") for name in ("notes.tex", "notes.md")}


@pytest.mark.parametrize("name", ["notes.tex", "notes.md"])
@pytest.mark.parametrize("heading", HEADINGS, ids=[f"h{i}" for i in range(len(HEADINGS))])
def test_headings_are_in_both_notes(committed, name, heading):
    text = committed[name]
    # LaTeX prints headings as \section*/\subsection*, Markdown as ##/###; the heading text is the same.
    assert heading in text


@pytest.mark.parametrize("name", ["notes.tex", "notes.md"])
@pytest.mark.parametrize("snippet", [s for s, _ in SNIPPETS], ids=[i for _, i in SNIPPETS])
def test_values_are_in_both_notes(committed, name, snippet):
    assert snippet in committed[name]


def test_examples_follow_the_attention_examples_in_the_notes():
    blocks = worked.all_examples()
    titles = [b.text for b in blocks if isinstance(b, Heading) and b.level == 1]
    # then the backpropagation chapter (notes.worked_backward), last
    assert titles[-5:] == [HEADINGS[0], HEADINGS[2], HEADINGS[3], HEADINGS[6],
                           "Backpropagation through attention, exactly"]
    assert sum(isinstance(b, Figure) for b in worked_block.all_block_examples()) == 1


def test_numbers_come_from_the_model():
    """The printed two-head output is the model's multihead output, entry by entry."""
    t = multihead(worked_block.X, [list(h) for h in worked_block.HEADS], worked_block.WO)
    e = sympy.E
    assert t["output"].row(0) == sympy.Matrix([[4 * e / (1 + 2 * e), sympy.Rational(2, 3)]])
    assert t.decimals("output", 3)[1] == ["1.333", "0.845"]


# A wrong computation in place of the right one: some claim of the prose must fail.
WRONG = [
    ("layer_norm", functools.partial(layer_norm, variance="unbiased"), worked_block.layer_norm_example),
    ("layer_norm", functools.partial(layer_norm, eps_placement="outside"), worked_block.layer_norm_example),
    ("layer_norm", functools.partial(layer_norm, affine=False), worked_block.layer_norm_example),
    ("sinusoidal", functools.partial(sinusoidal, first_position=1), worked_block.positions_example),
    ("sinusoidal", functools.partial(sinusoidal, swap=True), worked_block.positions_example),
    ("multihead", functools.partial(multihead, head_order="reversed"), worked_block.heads_example),
    ("multihead", functools.partial(multihead, project=False), worked_block.heads_example),
    ("encoder_block", functools.partial(encoder_block, residual=False), worked_block.block_example),
    ("encoder_block", lambda *args, eps=0, **kw: encoder_block(*args, eps=eps or sympy.Rational(1, 100), **kw),
     worked_block.block_example),
]


@pytest.mark.parametrize("name, wrong, example", WRONG,
                         ids=["ln-unbiased", "ln-eps-outside", "ln-no-affine", "pe-from-one", "pe-swapped",
                              "heads-reversed", "no-W_O", "no-residual",
                              "eps-zero-ignored"])
def test_a_wrong_computation_stops_the_example(monkeypatch, name, wrong, example):
    monkeypatch.setattr(worked_block, name, wrong)
    with pytest.raises(ProofError, match=r"^worked example: "):
        example()


def test_pre_ln_must_refuse_eps_zero(monkeypatch):
    """The prose says Pre-LN with eps = 0 divides by zero on tired: a model that did not refuse fails it."""
    def lenient(*args, eps=0, norm="post", **kw):
        return encoder_block(*args, eps=eps if norm == "post" else sympy.Rational(1, 100), norm=norm, **kw)

    monkeypatch.setattr(worked_block, "encoder_block", lenient)
    with pytest.raises(ProofError, match=r"^worked example: Pre-LN with eps = 0 should divide by zero"):
        worked_block.block_example()


def test_the_right_computations_pass():
    for example in (worked_block.layer_norm_example, worked_block.positions_example,
                    worked_block.heads_example, worked_block.block_example):
        assert example()


def layer_norm_copy(output_claim):
    """A copy of the first lines of the LayerNorm example with the output as claimed."""
    plain = layer_norm([[1, 3]])
    return [stage_line("\\operatorname{LN}(z)", plain, "output", sympy.Matrix(output_claim))]


@pytest.mark.parametrize("claim", [[[1, -1]], [[-1, 2]], [[-sympy.sqrt(2) / 2, sympy.sqrt(2) / 2]]],
                         ids=["swapped", "off-by-one", "unbiased"])
def test_a_wrong_claim_in_a_copy_of_an_example_raises(claim):
    assert layer_norm_copy([[-1, 1]]) == ["\\operatorname{LN}(z) &= \\begin{bmatrix}-1 & 1\\end{bmatrix}"]
    with pytest.raises(ProofError, match=r"^worked example: \\operatorname\{LN\}\(z\) = output: entry \(1, [12]\): refuted"):
        layer_norm_copy(claim)
