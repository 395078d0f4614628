r"""Mathematical LaTeX labels of stage paths: ``M.head[1].weights`` is :math:`A^{(1)}`.

A stage path (:mod:`symbolic_attn.model.trace`) names a definition, then the stages inside
it.  Its label is the symbol of its last stage (:data:`SYMBOLS`), with a head ``head[h]``
on the way written as the superscript ``(h)`` and a numbered or named sublayer
(``norm2``, ``self_attention``) as a subscript; ``X.output`` is labelled as ``X`` (it is
the same matrix), and a definition alone by its name, upright.  The definition's name is not part
of a stage's label: ``run --format latex`` shows each definition's stages after the
definition itself.

>>> stage_label("M.head[1].weights"), entry_label("M.head[1].weights", 1, 2)
('A^{(1)}', 'A^{(1)}_{1,2}')
>>> stage_label("Enc.norm2.mean"), entry_label("Enc.norm2.mean", 3, 1)
('\\mu_{2}', '\\left(\\mu_{2}\\right)_{3,1}')
>>> stage_label("D.cross_attention.head[2].scores")
'S^{(2)}_{\\mathrm{cross}}'
>>> stage_label("Enc"), stage_label("A"), stage_label("A.output"), stage_label("A.weights"), stage_label("F.hidden")
('\\mathrm{Enc}', '\\mathrm{A}', '\\mathrm{A}', 'A', 'H')
>>> stage_label("my_def.weights"), stage_label("my_def"), stage_label("B.extra_stage")
('A', '\\mathrm{my\\_def}', '\\text{extra\\_stage}')
>>> print(markdown_table().splitlines()[2])
| `weights` | $A$ | attention weights, softmax of the (masked) scaled scores |
"""

from __future__ import annotations

import re

from symbolic_attn.render.latex import escape_text

__all__ = ["SYMBOLS", "QUALIFIERS", "stage_label", "entry_label", "markdown_table"]

#: The last stage of a path -> (LaTeX symbol, what it is).  ``head[h]``, ``norm{k}`` and
#: ``add{k}`` are numbered forms (below); an unknown stage is written as text.
SYMBOLS = {
    "weights": ("A", "attention weights, softmax of the (masked) scaled scores"),
    "scores": ("S", "scores Q K^T (or the given scores)"),
    "scaled": ("S'", "scaled scores, scale times S"),
    "masked": (r"\tilde{S}", "scaled scores with -inf where the mask blocks"),
    "query": ("Q", "queries X W_Q"),
    "key": ("K", "keys X W_K"),
    "value": ("V", "values X W_V"),
    "head[h]": ("Z^{(h)}", "output of head h (an ALiBi head: its biases B^{(h)})"),
    "concat": ("C", "the heads' outputs side by side"),
    "mean": (r"\mu", "LayerNorm: row means"),
    "centered": (r"X - \mu", "LayerNorm: rows minus their mean"),
    "variance": (r"\sigma^{2}", "LayerNorm: row variances"),
    "std": (r"\sigma", "LayerNorm: the denominators actually used"),
    "normalized": (r"\hat{X}", "LayerNorm: before gamma and beta"),
    "hidden": ("H", "feed-forward: X W_1 + b_1"),
    "activated": (r"\phi(H)", "feed-forward: the activation of H"),
    "angles": (r"\theta", "positions: the angles"),
    "slopes": ("m", "ALiBi: the slope of each head"),
    "attention": (r"\mathrm{MHA}", "block: the attention sublayer"),
    "self_attention": (r"\mathrm{MHA}_{\mathrm{self}}", "decoder block: masked self-attention"),
    "cross_attention": (r"\mathrm{MHA}_{\mathrm{cross}}", "decoder block: cross-attention"),
    "ffn": (r"\mathrm{FFN}", "block: the feed-forward sublayer"),
    "add{k}": (r"\mathrm{Add}_{k}", "block: input plus sublayer k (the residual)"),
    "norm{k}": (r"\mathrm{LN}_{k}", "block: the k-th LayerNorm"),
}

#: A stage on the way to the last one -> the subscript it adds (None: nothing).
QUALIFIERS = {"attention": None, "ffn": None, "self_attention": r"\mathrm{self}", "cross_attention": r"\mathrm{cross}"}

_HEAD = re.compile(r"^head\[([0-9]+)\]$")
_NUMBERED = re.compile(r"^(norm|add)([0-9]+)$")
_PLAIN = {name: symbol for name, (symbol, _meaning) in SYMBOLS.items() if "{" not in name and "[" not in name}
_PLAIN["variance"] = r"\sigma"  # its square goes with the superscripts
_PLAIN["self_attention"] = r"\mathrm{MHA}"
_PLAIN["cross_attention"] = r"\mathrm{MHA}"


def _name(name: str) -> str:
    """A definition's name as math, upright (``\\mathrm{A}``: never the italic symbol A of
    the weights)."""
    return r"\mathrm{" + name.replace("_", r"\_") + "}"


def _parts(path: str) -> tuple[str, list, list]:
    """(base symbol, superscripts, subscripts) of ``path``."""
    parts = path.split(".")
    if len(parts) > 1 and parts[-1] == "output":
        parts = parts[:-1]
    if len(parts) == 1:
        return _name(parts[0]), [], []
    sup, sub = [], []
    for part in parts[1:-1]:
        head, numbered = _HEAD.match(part), _NUMBERED.match(part)
        if head:
            sup.append(f"({head.group(1)})")
        elif numbered:
            sub.append(numbered.group(2))
        elif QUALIFIERS.get(part):
            sub.append(QUALIFIERS[part])
    last = parts[-1]
    head, numbered = _HEAD.match(last), _NUMBERED.match(last)
    if head:
        sup.append(f"({head.group(1)})")
        return "Z", sup, sub
    if numbered:
        return (r"\mathrm{LN}" if numbered.group(1) == "norm" else r"\mathrm{Add}"), sup, [numbered.group(2), *sub]
    if last == "variance":
        sup.append("2")
    if last in QUALIFIERS and QUALIFIERS[last]:
        sub.append(QUALIFIERS[last])
    if last in _PLAIN:
        return _PLAIN[last], sup, sub
    return r"\text{" + escape_text(last) + "}", sup, sub


def _compose(base: str, sup: list, sub: list) -> str:
    text = base
    if sup:
        text += "^{" + "".join(sup) + "}"
    if sub:
        text += "_{" + ", ".join(sub) + "}"
    return text


def stage_label(path: str) -> str:
    """The LaTeX label of a whole stage (the left-hand side of its matrix)."""
    return _compose(*_parts(path))


def entry_label(path: str, row: int, col: int) -> str:
    r"""The LaTeX label of entry (``row``, ``col``) of a stage, counted from 1: the stage's
    symbol with subscript ``row,col`` (in parentheses when the symbol has a subscript of
    its own or is more than one symbol)."""
    base, sup, sub = _parts(path)
    if sub or re.search(r"[ ()+\-]", base):
        return r"\left(" + _compose(base, sup, sub) + r"\right)_{" + f"{row},{col}" + "}"
    return _compose(base, sup, [f"{row},{col}"])


def markdown_table() -> str:
    """The label table as Markdown (the README shows it)."""
    lines = ["| stage | label | what it is |", "|---|---|---|"]
    lines += [f"| `{name}` | ${symbol}$ | {meaning} |" for name, (symbol, meaning) in SYMBOLS.items()]
    return "\n".join(lines)
