"""The backward passes in computation files: definitions, stage access, claims, answer keys,
``run``'s display, and ``grad`` (exact differentiation of an earlier definition)."""

import json

import pytest
import sympy
from sympy import Rational as R
from sympy import sqrt

from symbolic_attn.cli import main
from symbolic_attn.errors import DefinitionError, UndecidedError
from symbolic_attn.grading.answer_key import parse_answer_key
from symbolic_attn.grading.batch import grade_all
from symbolic_attn.grading.roster import discover
from symbolic_attn.model.program import run_program

M = sympy.ImmutableMatrix
INPUTS = {"Q": M.zeros(3, 2), "K": M([[1, 0], [0, 1], [1, 1]]), "V": M([[1, 0], [0, 2], [1, 1]]),
          "G": M([[1, 0], [0, 1], [1, -1]]), "X": M([[0, 0, 3], [1, 2, 5]]), "GX": M([[1, 0, 0], [0, 2, -1]])}


def test_attention_backward_in_a_definition_and_its_stages():
    t = run_program(INPUTS, [("B", "attention_backward(Q, K, V, G, mask = 'causal')"), ("C", "B.dQ + B.dQ")])
    assert [p for p in t if p.startswith("B.")] == ["B.dO", "B.dV", "B.dA", "B.D", "B.dScaled", "B.dS", "B.dQ", "B.dK"]
    assert t["B.dS"][1, 2] is sympy.S.Zero
    assert t["C"] == 2 * t["B.dQ"]
    assert t["B.dQ"][2, :] == M([[5 * sqrt(2) / 18, -2 * sqrt(2) / 9]])


def test_grad_agrees_with_every_named_backward():
    definitions = [
        ("A", "attention(Q, K, V, mask = 'causal')"), ("B", "attention_backward(Q, K, V, G, mask = 'causal')"),
        ("GQ", "grad(A, G, wrt = 'Q')"), ("GK", "grad(A, G, wrt = 'K')"), ("GV", "grad(A, G, wrt = 'V')"),
        ("N", "layer_norm(X, eps = 2, gamma = [[1, 2, 1]])"),
        ("L", "layer_norm_backward(X, GX, eps = 2, gamma = [[1, 2, 1]])"), ("GN", "grad(N, GX, wrt = 'X')"),
        ("F", "feed_forward(X, [[1], [0], [1]], 1, [[2, -1]], 0, activation = 'gelu')"),
        ("FB", "feed_forward_backward(X, [[1], [0], [1]], 1, [[2, -1]], 0, [[1, 0], [0, 2]], activation = 'gelu')"),
        ("GF", "grad(F, [[1, 0], [0, 2]], wrt = 'X')"),
    ]
    t = run_program(INPUTS, definitions)
    from symbolic_attn.proofs.prove import prove_equal

    for left, right in (("GQ", "B.dQ"), ("GK", "B.dK"), ("GV", "B.dV"), ("GN", "L.dX"), ("GF", "FB.dX")):
        for a, b in zip(t[left], t[right]):
            if a.is_Rational and b.is_Rational:
                assert a == b, (left, right)
            else:
                prove_equal(a, b)


def test_grad_errors_name_the_definition():
    with pytest.raises(DefinitionError, match=r"^definition 'D': grad: wrt: expected the quoted name of a matrix input"):
        run_program(INPUTS, [("A", "attention(Q, K, V)"), ("D", "grad(A, G, wrt = 'Z')")])
    with pytest.raises(DefinitionError, match=r"^definition 'D': grad: E: expected the name of an earlier definition"):
        run_program(INPUTS, [("D", "grad(Q, G, wrt = 'Q')")])
    with pytest.raises(DefinitionError, match=r"^definition 'D': grad: 'B' has no single output"):
        run_program(INPUTS, [("B", "attention_backward(Q, K, V, G)"), ("D", "grad(B, G, wrt = 'Q')")])
    with pytest.raises(UndecidedError, match=r"^definition 'D': grad: the derivative needs relu'\(0\)"):
        run_program({"h": M([[1, -1]])}, [("F", "relu(h @ [[1], [1]])"), ("D", "grad(F, [[1]], wrt = 'h')")])


def test_softmax_and_multihead_backward_in_definitions():
    t = run_program({"S": M([[0, 0, 0]]), "g": M([[1, 0, 0]]), "X": M([[1, 0], [0, 1]])},
                    [("S1", "softmax_backward(S, g, mask = keep([[1, 1, 0]]))"),
                     ("H", "multihead_backward(X, heads = [[I2, I2, I2]], WO = I2, G = X, mask = 'causal')")])
    assert t["S1.dS"] == M([[R(1, 4), -R(1, 4), 0]])
    assert t["H.head[1].dS"][0, 1] is sympy.S.Zero
    assert {"H.dWO", "H.dconcat", "H.dW_Q[1]", "H.dX"} <= set(t)


def test_run_shows_every_gradient_stage_with_certified_decimals(capsys):
    assert main(["run", "examples/backward/attention.toml", "--format", "json"]) == 0
    stages = json.loads(capsys.readouterr().out)["stages"]
    for stage in ("B.dO", "B.dV", "B.dA", "B.D", "B.dScaled", "B.dS", "B.dQ", "B.dK", "GQ"):
        assert stage in stages
    assert main(["run", "examples/backward/attention.toml", "--decimals-only"]) == 0
    out = capsys.readouterr().out
    assert "B.dQ (3x2)\n  [  0.000   0.000 ]\n  [ -0.354   0.354 ]\n  [  0.393  -0.314 ]\n" in out


KEY = """
title = "attention backward"
[inputs]
Q = [[0, 0], [0, 0], [0, 0]]
K = [[1, 0], [0, 1], [1, 1]]
V = [[1, 0], [0, 2], [1, 1]]
G = [[1, 0], [0, 1], [1, -1]]
[define]
B = "attention_backward(Q, K, V, G, mask = 'causal')"
[[questions]]
name = "dS_{23}"
quantity = "B.dS"
row = 2
col = 3
points = 1
[[questions]]
name = "dQ_3"
quantity = "B.dQ"
row = 3
points = 2
"""


def _grade(tmp_path, files):
    key = parse_answer_key(KEY, "key.toml")
    folder = tmp_path / "subs"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return {r.student: r for r in grade_all(key, discover([folder]), jobs=1)}


def test_an_answer_key_grades_gradient_stages_and_diagnoses_the_mistake(tmp_path):
    results = _grade(tmp_path, {"ann.txt": "dS_{23} = 0\ndQ_3 = [0.393, -0.314]\n",
                                "bob.txt": "dS_{23} = 0.1\ndQ_3 = [5/9, -4/9]\n"})
    assert results["ann"].score == 3
    assert results["bob"].score == 0
    bob = {q.name: q for q in results["bob"].questions}
    assert bob["dQ_3"].diagnosis == ["grad_missing_scale"]
