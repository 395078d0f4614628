r"""Multi-head modules held to the exact multi-head attention, their weights read exactly.

The entry points (:func:`~symbolic_attn.numerics.compare.compare_attention`,
:func:`~symbolic_attn.numerics.suite.run_battery`, ``assert_attention_close``) take a
*module* as well as a function: an instance, or a zero-argument factory returning one.
:func:`module_kernel` recognises

* ``torch.nn.MultiheadAttention`` (called with ``need_weights=True,
  average_attn_weights=False``: the weights of every head are compared);
* the same weights through ``torch.nn.functional.multi_head_attention_forward``
  (:func:`torch_functional`);
* a nanoGPT-style ``CausalSelfAttention`` (``c_attn``, ``c_proj``, ``n_head``; causal-only
  self-attention: the battery gives it square causal cases only, and says so);

and a Hugging Face-style ``eager_attention_forward(module, query, key, value,
attention_mask, scaling, dropout=0.0, **kwargs)`` function is read as a kernel of its own
(:func:`hf_attention`: the additive finfo.min mask it expects, (batch, heads, n, d) in and
(batch, n, heads, d) out).

**Exactness.** Every weight and bias is a float of the module's dtype, so an exact dyadic
rational: they are read exactly (never through a decimal), and the exact result is the one
core (:func:`~symbolic_attn.model.attention.attention`) per head on Q_h = X_q W_Q^h + b_Q^h,
K_h, V_h, the heads concatenated and projected by W_O (+ b_O) exactly.

**The bound** extends :mod:`.bounds` through the projections: a projected entry is a dot
product of E terms and a bias, so within ``dQ = gamma_{E+2} (sum_c |x_c| |w_c| + |b|)``; the
logits of head h take ``c sum_l (dQ |K| + |Q| dK + dQ dK)`` more, the head's output
``sum_j (w_j + B_j) dV_j (1 + gamma_{2m+1})`` more, and the output projection
``sum_c e_c |W_O| + gamma_{H d_v + 2} (sum_c (|o_c| + e_c) |W_O| + |b_O|)``.
"""

from __future__ import annotations

import inspect
import math
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from collections.abc import Callable

import flint
import sympy

from symbolic_attn.errors import ImplementationError, ShapeError, shown
from symbolic_attn.exact.certified import working_precision
from symbolic_attn.model.attention import attention
from symbolic_attn.model.masks import Mask
from symbolic_attn.numerics.backends import FloatFormat, float_format, numpy, to_numpy
from symbolic_attn.numerics.bounds import SCALE_ROUNDINGS, inflate
from symbolic_attn.numerics.capabilities import Capabilities

__all__ = ["Projections", "ModuleKernel", "module_kernel", "torch_multihead", "torch_functional", "nanogpt",
           "hf_attention", "exact_rows"]


def exact_rows(array) -> tuple[tuple[Fraction, ...], ...]:
    """The exact values of a float matrix (a tensor or an array): each float is a dyadic
    rational, read with ``Fraction(float)`` — exactly, never through a decimal."""
    if type(array).__module__.split(".")[0] == "torch":
        array = array.detach().cpu().double()  # every float16/bfloat16/float32 is a float64
    rows = to_numpy(array, "weights").astype("float64").tolist()
    return tuple(tuple(Fraction(x) for x in row) for row in rows)


@dataclass(frozen=True)
class Projections:
    """A module's projections as exact rationals, in the x @ W orientation (inputs as rows):
    W_Q is E_q x E, W_K kdim x E, W_V vdim x E, W_O E x E_out; biases of length E (E_out)."""

    heads: int
    WQ: tuple
    WK: tuple
    WV: tuple
    WO: tuple
    bQ: tuple
    bK: tuple
    bV: tuple
    bO: tuple

    @property
    def width(self) -> int:
        return len(self.WQ[0])

    @property
    def head_dim(self) -> int:
        return self.width // self.heads


def _transposed(rows) -> tuple:
    return tuple(zip(*rows))


def _bias(tensor, width) -> tuple:
    if tensor is None:
        return (Fraction(0),) * width
    return exact_rows(tensor.reshape(1, -1))[0]


@dataclass
class ModuleKernel:
    """A module under test: its exact projections, how to call it on one case
    (``call(xq, xk, xv, keep_mask_or_None) -> (output, [weights of each head] or None)``),
    its dtype and what it can take."""

    name: str
    projections: Projections
    dtype: str
    call: Callable
    capabilities: Capabilities = field(default_factory=Capabilities)
    self_attention: bool = False  # query, key and value inputs are one sequence


def _torch():
    import importlib

    return importlib.import_module("torch")


def _dtype_of(module) -> str:
    parameter = next(iter(module.parameters()))
    return float_format(parameter.dtype).name


def _tensor(array, torch, dtype):
    np = numpy()
    return torch.from_numpy(np.ascontiguousarray(array.astype(np.float32 if dtype == "bfloat16" else array.dtype))).to(
        getattr(torch, dtype))


def _mha_projections(module) -> Projections:
    E, H = module.embed_dim, module.num_heads
    if module._qkv_same_embed_dim:
        W = exact_rows(module.in_proj_weight)
        WQ, WK, WV = W[:E], W[E:2 * E], W[2 * E:]
    else:
        WQ, WK, WV = (exact_rows(w) for w in (module.q_proj_weight, module.k_proj_weight, module.v_proj_weight))
    bias = module.in_proj_bias
    bQ, bK, bV = ((_bias(None, E),) * 3 if bias is None else
                  (_bias(bias[:E], E), _bias(bias[E:2 * E], E), _bias(bias[2 * E:], E)))
    if getattr(module, "bias_k", None) is not None or getattr(module, "add_zero_attn", False):
        raise ImplementationError("nn.MultiheadAttention with add_bias_kv or add_zero_attn adds keys of its own: not supported")
    WO = exact_rows(module.out_proj.weight)
    return Projections(H, _transposed(WQ), _transposed(WK), _transposed(WV), _transposed(WO), bQ, bK, bV,
                       _bias(module.out_proj.bias, len(WO)))


def torch_multihead(module) -> ModuleKernel:
    """``torch.nn.MultiheadAttention`` (unbatched inputs; the block-convention mask)."""
    torch = _torch()
    dtype = _dtype_of(module)
    module.eval()

    def call(xq, xk, xv, keep):
        blocked = None if keep is None else torch.from_numpy(~keep)
        with torch.no_grad():
            out, weights = module(*(_tensor(a, torch, dtype) for a in (xq, xk, xv)), attn_mask=blocked,
                                  need_weights=True, average_attn_weights=False)
        return out, [weights[h] for h in range(weights.shape[0])]

    return ModuleKernel("nn.MultiheadAttention", _mha_projections(module), dtype, call)


def torch_functional(module) -> ModuleKernel:
    """The weights of an ``nn.MultiheadAttention`` through
    ``torch.nn.functional.multi_head_attention_forward`` (inputs (L, E), unbatched)."""
    torch = _torch()
    F = torch.nn.functional
    dtype = _dtype_of(module)
    separate = not module._qkv_same_embed_dim

    def call(xq, xk, xv, keep):
        blocked = None if keep is None else torch.from_numpy(~keep)
        with torch.no_grad():
            out, weights = F.multi_head_attention_forward(
                *(_tensor(a, torch, dtype) for a in (xq, xk, xv)), module.embed_dim, module.num_heads,
                module.in_proj_weight, module.in_proj_bias, None, None, False, 0.0, module.out_proj.weight,
                module.out_proj.bias, training=False, need_weights=True, attn_mask=blocked,
                use_separate_proj_weight=separate, q_proj_weight=module.q_proj_weight, k_proj_weight=module.k_proj_weight,
                v_proj_weight=module.v_proj_weight, average_attn_weights=False)
        return out, [weights[h] for h in range(weights.shape[0])]

    return ModuleKernel("F.multi_head_attention_forward", _mha_projections(module), dtype, call)


def nanogpt(module) -> ModuleKernel:
    """A nanoGPT ``CausalSelfAttention``: ``c_attn`` (E -> 3E, q|k|v), ``c_proj``, ``n_head``;
    ``forward(x)`` on (batch, T, E), causal, self-attention only."""
    torch = _torch()
    dtype = _dtype_of(module)
    module.eval()
    E, H = module.c_attn.weight.shape[1], module.n_head
    W = exact_rows(module.c_attn.weight)
    bias = module.c_attn.bias
    WO = exact_rows(module.c_proj.weight)
    projections = Projections(H, _transposed(W[:E]), _transposed(W[E:2 * E]), _transposed(W[2 * E:]), _transposed(WO),
                              _bias(None if bias is None else bias[:E], E), _bias(None if bias is None else bias[E:2 * E], E),
                              _bias(None if bias is None else bias[2 * E:], E), _bias(module.c_proj.bias, len(WO)))

    def call(xq, xk, xv, keep):
        with torch.no_grad():
            return module(_tensor(xq, torch, dtype)[None])[0], None

    return ModuleKernel(type(module).__name__, projections, dtype, call,
                        Capabilities(causal_only=True, square_only=True), self_attention=True)


def hf_attention(fn):
    """A kernel ``f(q, k, v, mask)`` from a Hugging Face-style ``eager_attention_forward(
    module, query, key, value, attention_mask, scaling, dropout=0.0, **kwargs)``: one head,
    (1, 1, n, d) tensors in, the additive finfo(dtype).min mask of shape (1, 1, n, m),
    ``(output (1, n, 1, d_v), weights (1, 1, n, m))`` out."""
    from types import SimpleNamespace

    def attend(q, k, v, mask):
        torch = _torch()
        dtype = float_format(q.dtype).name
        q_, k_, v_ = (_tensor(a, torch, dtype)[None, None] for a in (q, k, v))
        additive = None
        if mask is not None:
            additive = torch.zeros(mask.shape, dtype=q_.dtype).masked_fill(~torch.from_numpy(mask), torch.finfo(q_.dtype).min)
            additive = additive[None, None]
        holder = SimpleNamespace(num_key_value_groups=1, training=False, is_causal=False)
        with torch.no_grad():
            out, weights = fn(holder, q_, k_, v_, additive, scaling=1 / math.sqrt(q.shape[1]), dropout=0.0)
        return out[0, :, 0, :], weights[0, 0]

    attend.__qualname__ = getattr(fn, "__qualname__", "eager_attention_forward")
    return attend


def _is_hf(fn) -> bool:
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return False
    return names[:1] == ["module"] and {"query", "key", "value", "attention_mask"} <= set(names)


def module_kernel(obj) -> ModuleKernel | None:
    """The :class:`ModuleKernel` of a module (or of what a zero-argument factory returns);
    None for a plain attention function."""
    if isinstance(obj, ModuleKernel):
        return obj
    torch = sys.modules.get("torch")  # a torch module was made by imported torch; never imported here
    if torch is not None and isinstance(obj, torch.nn.Module):
        if isinstance(obj, torch.nn.MultiheadAttention):
            return torch_multihead(obj)
        if all(hasattr(obj, name) for name in ("c_attn", "c_proj", "n_head")):
            return nanogpt(obj)
        raise ImplementationError(f"{type(obj).__name__}: a module the oracle cannot read (expected "
                                  "nn.MultiheadAttention or a nanoGPT-style CausalSelfAttention)")
    if callable(obj) and _factory(obj):
        made = obj()
        found = module_kernel(made) if torch is not None or "torch" in sys.modules else None
        if found is None:
            raise ImplementationError(f"{shown(getattr(obj, '__qualname__', obj))}: a factory must return a module, "
                                      f"got {type(made).__name__}")
        return found
    return None


def _factory(fn) -> bool:
    """A function of no parameter at all (it makes the module); never a class, and never
    a kernel (which takes q, k, v, mask)."""
    if isinstance(fn, type) or hasattr(fn, "returned_in_child"):
        return False
    try:
        return not inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def as_kernel(fn):
    """``fn`` ready for the battery: a module kernel, an HF-style function wrapped, or ``fn``."""
    if hasattr(fn, "returned_in_child"):  # run in a child process: the child reads it
        return fn
    found = module_kernel(fn)
    if found is not None:
        return found
    return hf_attention(fn) if _is_hf(fn) else fn


# ---------------------------------------------------------------- the exact side and its bound

def _affine(X, W, b):
    """X W + b, exactly (rows of Fractions)."""
    return [[sum((x * w for x, w in zip(row, col)), Fraction(0)) + bias for col, bias in zip(zip(*W), b)] for row in X]


def _affine_error(X, W, b, fmt: FloatFormat):
    """dY: the bound of each entry of fl(X W + b), any order (E products, the bias add)."""
    gamma = fmt.gamma(len(W) + 2)
    absW = [[abs(float(w)) for w in row] for row in W]
    return [[inflate(gamma * (math.fsum(abs(float(x)) * absW[c][col] for c, x in enumerate(row)) + abs(float(b[col]))))
             for col in range(len(W[0]))] for row in X]


def _cols(rows, start, stop):
    return [list(row[start:stop]) for row in rows]


def expected_module(projections: Projections, Xq, Xk, Xv, mask: Mask | None, fmt: FloatFormat, empty_row: str, bits: int):
    """(per head: (Expected of the head's weights), the output's arb balls, its bounds)."""
    from symbolic_attn.numerics.compare import Expected, expected_from

    P = projections
    Q, K, V = _affine(Xq, P.WQ, P.bQ), _affine(Xk, P.WK, P.bK), _affine(Xv, P.WV, P.bV)
    dQ, dK, dV = _affine_error(Xq, P.WQ, P.bQ, fmt), _affine_error(Xk, P.WK, P.bK, fmt), _affine_error(Xv, P.WV, P.bV, fmt)
    d, n, m = P.head_dim, len(Xq), len(Xk)
    c = 1 / math.sqrt(d)
    heads, balls, errors = [], [[] for _ in range(n)], [[] for _ in range(n)]
    for h in range(P.heads):
        lo, hi = h * d, (h + 1) * d
        Qh, Kh, Vh = _cols(Q, lo, hi), _cols(K, lo, hi), _cols(V, lo, hi)
        dq, dk, dv = _cols(dQ, lo, hi), _cols(dK, lo, hi), _cols(dV, lo, hi)
        gamma = fmt.gamma(d + SCALE_ROUNDINGS)
        D = [[inflate(c * math.fsum((abs(float(a)) + ea) * (abs(float(b)) + eb) * gamma + ea * abs(float(b)) + abs(float(a)) * eb
                                    + ea * eb for a, ea, b, eb in zip(Qh[i], dq[i], Kh[j], dk[j]))) for j in range(m)] for i in range(n)]
        result = attention(sympy.ImmutableMatrix(Qh), sympy.ImmutableMatrix(Kh), sympy.ImmutableMatrix(Vh), mask=mask,
                           on_empty_row=empty_row)
        expected = expected_from(result, fmt, bits=bits, logit_error=D)
        heads.append(expected)
        grow = fmt.gamma(2 * m + 1)
        for i in range(n):
            for col in range(len(Vh[0])):
                extra = math.fsum((abs(w) + B) * dv[j][col] for j, (w, B) in enumerate(
                    zip(_row_floats(expected.weights[i]), expected.weight_bounds[i])))
                balls[i].append(expected.output[i][col])
                errors[i].append(inflate(expected.output_bounds[i][col] + extra * (1 + grow)))
    WO, bO = P.WO, P.bO
    with working_precision(bits):
        concat = flint.arb_mat(balls)
        out = concat * flint.arb_mat([[flint.arb(flint.fmpq(w.numerator, w.denominator)) for w in row] for row in WO])
        output = [[out[i, j] + flint.arb(flint.fmpq(bO[j].numerator, bO[j].denominator)) for j in range(out.ncols())]
                  for i in range(out.nrows())]
    gamma = fmt.gamma(len(WO) + 2)
    bounds = []
    for i in range(n):
        e = errors[i]
        if any(math.isnan(x) for x in e):
            bounds.append([math.nan] * len(WO[0]))
            continue
        o = _row_floats(balls[i])
        row = []
        for j in range(len(WO[0])):
            spread = math.fsum(e[col] * abs(float(WO[col][j])) for col in range(len(WO)))
            size = math.fsum((abs(o[col]) + e[col]) * abs(float(WO[col][j])) for col in range(len(WO))) + abs(float(bO[j]))
            row.append(inflate(spread + gamma * size))
        bounds.append(row)
    return heads, Expected([], output, [], bounds)


def _row_floats(balls) -> list[float]:
    return [math.nan if b.is_nan() else float(b.mid()) for b in balls]


def check_inputs(kernel: ModuleKernel, exacts) -> None:
    """The inputs' widths against the module's projections (one-line ShapeError)."""
    P = kernel.projections
    for name, X, W in (("query", exacts[0], P.WQ), ("key", exacts[1], P.WK), ("value", exacts[2], P.WV)):
        if len(X[0]) != len(W):
            raise ShapeError(f"{kernel.name}: the {name} input has width {len(X[0])}, the module expects {len(W)}")
    if len(exacts[1]) != len(exacts[2]):
        raise ShapeError(f"{kernel.name}: {len(exacts[1])} keys but {len(exacts[2])} values")


# ---------------------------------------------------------------- one case, and the module battery

def run_module_case(kernel: ModuleKernel, q, k=None, v=None, mask=None, *, empty_row="error", mask_convention="keep",
                    name="case"):
    """The :class:`~symbolic_attn.numerics.report.CaseReport` of a module on one case: each
    head's weights (when the module returns them) and the output after W_O, each held to
    its bound.  ``q``, ``k``, ``v`` are the module's query, key and value *inputs* (rows of
    widths E_q, kdim, vdim); a self-attention module takes ``q`` alone."""
    from symbolic_attn.numerics.compare import as_arrays, describe_mask, measure, resolve_mask
    from symbolic_attn.numerics.report import CaseReport

    np = numpy()
    fmt = float_format(kernel.dtype)
    if kernel.self_attention or k is None:
        k = v = q
    arrays, exacts, rounded = as_arrays(q, k, v, fmt.name)
    rows = [[[Fraction(int(x.p), int(x.q)) for x in M.row(i)] for i in range(M.rows)] for M in exacts]
    check_inputs(kernel, rows)
    n, m = len(rows[0]), len(rows[1])
    structure = resolve_mask(mask, n, m, mask_convention, empty_row)
    if kernel.capabilities.causal_only and structure != Mask.causal(n, m):
        raise ShapeError(f"{kernel.name} is causal-only: give mask='causal' (n = m), got {describe_mask(structure)}")
    from symbolic_attn.numerics.compare import BITS

    heads, expected = expected_module(kernel.projections, *rows, structure, fmt, empty_row, BITS)
    P = kernel.projections
    shape = (n, m, P.head_dim, len(P.WO[0]))
    described = describe_mask(structure)
    keep = None if structure is None or not kernel.capabilities.passes_mask else np.array(structure.allowed, dtype=bool)
    try:
        output, weights = kernel.call(*arrays, keep)
        output = to_numpy(output, "output")
        weights = None if weights is None else [to_numpy(w, "weights") for w in weights]
    except (Exception, SystemExit) as error:  # the module's failure is the case's result
        return CaseReport(name, fmt.name, shape, described, error=shown(f"{type(error).__name__}: {error}", 200))
    from dataclasses import replace

    stages = []
    if weights is not None:
        for h, (w, head) in enumerate(zip(weights, heads), start=1):
            stages.append(replace(measure("weights", w, head, fmt), stage=f"head {h} weights"))
    stages.append(measure("output", output, expected, fmt))
    return CaseReport(name, fmt.name, shape, described, tuple(stages), inputs_rounded=rounded)


def module_cases(kernel: ModuleKernel, random: int, seed: int, empty_row: str):
    """The cases of a module's battery, in its own widths: self-attention, causal, cross
    (n != m), padding, a fully masked row (with a declared policy), then random ones."""
    import random as _random

    from symbolic_attn.numerics.battery import KernelCase

    P = kernel.projections
    rng = _random.Random(seed)
    widths = (len(P.WQ), len(P.WK), len(P.WV))
    same = len(set(widths)) == 1

    def matrix(rows, cols):
        return tuple(tuple(Fraction(rng.randint(-8, 8), 4) for _ in range(cols)) for _ in range(rows))

    def case(label, n, m, mask):
        q = matrix(n, widths[0])
        if n == m and (kernel.self_attention or (same and label.startswith("self"))):  # n != m: skipped if it must
            return KernelCase(label, q, q, q, mask)
        return KernelCase(label, q, matrix(m, widths[1]), matrix(m, widths[2]), mask)

    cases = [case("self", 3, 3, None), case("self_causal", 4, 4, Mask.causal(4)), case("cross", 2, 4, None),
             case("causal_bottom_right", 2, 4, Mask.causal(2, 4, offset=2)), case("padding", 3, 4, Mask.padding(3, 4, valid=2))]
    if empty_row != "error":
        cases.append(case("fully_masked_row", 3, 3, Mask.keep([[1, 0, 1], [0, 0, 0], [1, 1, 0]])))
    for number in range(1, random + 1):
        n, m = rng.randint(1, 4), rng.randint(1, 4)
        mask = rng.choice([None, Mask.causal(n, m, offset=max(m - n, 0)), Mask.padding(n, m, valid=rng.randint(1, m))])
        cases.append(case(f"random_{number}", n, m, mask))
    return cases
