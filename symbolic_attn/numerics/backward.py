r"""Hold a kernel's attention *backward* pass to the exact gradients, with certified bounds.

A kernel is ``kernel(q, k, v, g, mask, scale) -> (dq, dk, dv)``: float arrays Q (n x d_k),
K (m x d_k), V (m x d_v), the upstream gradient g = dL/dO (n x d_v), ``mask`` None or a
boolean (n x m) array, True where query i may attend to key j, and ``scale`` None (use
1/sqrt(d_k)) or a float.  :func:`torch_autograd` and :func:`jax_vjp` turn a *forward*
``forward(q, k, v, mask, scale) -> output`` into such a kernel with the library's own
autodiff.  The floats the kernel receives are converted exactly to rationals, the exact
gradients at those inputs are :func:`~symbolic_attn.model.backward.attention_backward`'s,
enclosed in arb balls, and every entry of dQ, dK, dV is held to the bound of
:mod:`.backward_bounds`.  A failing kernel is diagnosed (:mod:`.backward_diagnose`).

>>> import numpy as np
>>> def backward(q, k, v, g, mask, scale):
...     c = q.dtype.type(1 / np.sqrt(q.shape[1]) if scale is None else scale)
...     s = c * (q @ k.T)
...     if mask is not None:
...         s = np.where(mask, s, -np.inf)
...     a = np.exp(s - s.max(axis=1, keepdims=True)); a /= a.sum(axis=1, keepdims=True)
...     da = g @ v.T
...     ds = a * (da - (da * a).sum(axis=1, keepdims=True))
...     return c * ds @ k, c * ds.T @ q, a.T @ g
>>> report = compare_attention_backward(backward, cases=0)
>>> report.passed, len(report.cases)
(True, 6)
>>> def diagonal(q, k, v, g, mask, scale):   # dS = A ⊙ dA: the softmax Jacobian's diagonal only
...     c = q.dtype.type(1 / np.sqrt(q.shape[1]) if scale is None else scale)
...     s = c * (q @ k.T)
...     s = s if mask is None else np.where(mask, s, -np.inf)
...     a = np.exp(s - s.max(axis=1, keepdims=True)); a /= a.sum(axis=1, keepdims=True)
...     ds = a * (g @ v.T)
...     return c * ds @ k, c * ds.T @ q, a.T @ g
>>> compare_attention_backward(diagonal, cases=0).diagnosis
('grad_diagonal_jacobian',)
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

import sympy

from symbolic_attn.errors import BackendError, ImplementationError, MaskError, ShapeError, SymbolicAttnError, shown
from symbolic_attn.exact.convert import to_exact
from symbolic_attn.model.masks import Mask
from symbolic_attn.numerics.backends import FORMATS, FloatFormat, exact_value, float_format, numpy, to_numpy
from symbolic_attn.numerics.backward_cases import GradientCase, gradient_battery
from symbolic_attn.numerics.backward_diagnose import backward_diagnosis
from symbolic_attn.numerics.backward_exact import ExactGradients, GradientExpected, expected_gradients
from symbolic_attn.numerics.backward_report import GRADIENTS, BackwardReport
from symbolic_attn.numerics.compare import describe_mask, measure
from symbolic_attn.numerics.report import CaseReport

__all__ = ["BackwardRun", "run_backward_case", "compare_attention_backward", "assert_attention_backward_close",
           "torch_autograd", "jax_vjp"]


@dataclass
class BackwardRun:
    """One case run: its report, the kernel's gradients (None if it raised), the exact side."""

    report: CaseReport
    computed: dict | None
    exact: ExactGradients
    reference: GradientExpected
    fmt: FloatFormat


def _arrays(case: GradientCase, fmt: FloatFormat):
    """The float arrays of the case in ``fmt``, their exact values, whether any was rounded."""
    np = numpy()
    arrays, exacts, rounded = [], [], False
    for label, rows in (("Q", case.q), ("K", case.k), ("V", case.v), ("G", case.g)):
        try:
            values = [[to_exact(x) for x in row] for row in rows]
            array = np.array([[float(x) for x in row] for row in values], dtype=fmt.name)
        except (TypeError, ValueError, OverflowError) as error:
            raise ShapeError(f"{label}: entries that are not finite {fmt.name} numbers ({shown(error)})") from None
        if array.ndim != 2 or not np.isfinite(array).all():
            raise ShapeError(f"{label}: expected a matrix of finite {fmt.name} numbers")
        floats = [[_value(x) for x in row] for row in array.tolist()]
        rounded |= any(not e.is_Rational or Fraction(int(e.p), int(e.q)) != f
                       for erow, frow in zip(values, floats) for e, f in zip(erow, frow))
        arrays.append(array)
        exacts.append(sympy.ImmutableMatrix([[sympy.Rational(f.numerator, f.denominator) for f in row] for row in floats]))
    Q, K, V, G = exacts
    if K.cols != Q.cols or V.rows != K.rows or G.shape != (Q.rows, V.cols):
        raise ShapeError(f"Q is {Q.rows}x{Q.cols}, K {K.rows}x{K.cols}, V {V.rows}x{V.cols}, G {G.rows}x{G.cols}: "
                         "expected Q n x d_k, K m x d_k, V m x d_v, G n x d_v")
    return arrays, exacts, rounded


def _value(x: float) -> Fraction:
    value = exact_value(x)
    if value is None:
        raise ShapeError(f"non-finite input {x!r}")
    return value


def _returned(value, shapes) -> dict:
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        raise ImplementationError(f"the kernel returned {type(value).__name__}, expected the tuple (dq, dk, dv)")
    return {stage: to_numpy(array, stage) for stage, array in zip(GRADIENTS, value)}


def run_backward_case(kernel, case: GradientCase, dtype="float64") -> BackwardRun:
    """Run ``kernel`` on one case and hold dQ, dK, dV to the exact gradients."""
    fmt = float_format(dtype)
    arrays, exacts, rounded = _arrays(case, fmt)
    mask = case.mask
    n, m, d_k, d_v = exacts[0].rows, exacts[1].rows, exacts[0].cols, exacts[2].cols
    if mask is not None and mask.shape != (n, m):
        raise ShapeError(f"{case.name}: the mask is {mask.shape[0]}x{mask.shape[1]} but there are {n} queries and {m} keys")
    if mask is not None and mask.empty_rows():
        raise MaskError(f"{case.name}: a fully masked row (query {mask.empty_rows()[0] + 1}) has no gradient to compare")
    scale = None if case.scale is None else to_exact(case.scale)
    Q, K, V, G = exacts
    exact = ExactGradients(Q, K, V, G, mask, scale)
    reference = expected_gradients(exact, fmt)
    shape, described = (n, m, d_k, d_v), describe_mask(mask)
    np = numpy()
    mask_arg = None if mask is None else np.array(mask.allowed, dtype=bool)
    try:
        computed = _returned(kernel(*(a.copy() for a in arrays), mask_arg, None if scale is None else float(scale)), shape)
    except SymbolicAttnError as error:
        return BackwardRun(CaseReport(case.name, fmt.name, shape, described, error=shown(str(error), 200)),
                           None, exact, reference, fmt)
    except (Exception, SystemExit) as error:  # the user's code: any failure is a result to report
        report = CaseReport(case.name, fmt.name, shape, described, error=shown(f"{type(error).__name__}: {error}", 200))
        return BackwardRun(report, None, exact, reference, fmt)
    stages = [measure(stage, computed[stage], reference, fmt) for stage in GRADIENTS]  # type: ignore[arg-type]
    meets = fmt.name if all(s.passed for s in stages) else _coarser(computed, exact, fmt)
    kinds = sorted({str(array.dtype) for array in computed.values()} - {fmt.name})
    notes = (f"returned {', '.join(kinds)} gradients for {fmt.name} inputs",) if kinds else ()
    report = CaseReport(case.name, fmt.name, shape, described, tuple(stages), inputs_rounded=rounded, meets=meets,
                        notes=notes)
    return BackwardRun(report, computed, exact, reference, fmt)


def _coarser(computed, exact, fmt) -> str | None:
    """float32 when a failing float64 kernel meets the float32 bounds (float32-accurate)."""
    single = FORMATS["float32"]
    if single.precision >= fmt.precision:
        return None
    reference = expected_gradients(exact, single)
    # measure reads only reference.stage(name): a GradientExpected serves as an Expected
    return "float32" if all(measure(s, computed[s], reference, single).passed for s in GRADIENTS) else None  # type: ignore[arg-type]


def _cases(cases, mask, scale) -> list[GradientCase]:
    if cases is None:
        chosen = gradient_battery()
    elif isinstance(cases, int) and not isinstance(cases, bool):
        chosen = gradient_battery(random=cases)
    elif isinstance(cases, Iterable) and not isinstance(cases, (str, bytes)):
        chosen = list(cases)
        if not chosen or not all(isinstance(case, GradientCase) for case in chosen):
            raise ShapeError("cases: expected None, a number of random cases, or a non-empty list of GradientCase")
    else:
        raise ShapeError(f"cases: expected None, a number of random cases, or a list of GradientCase, got {shown(cases)}")
    if mask != "any":
        if mask not in (None, "causal"):
            raise MaskError(f"mask: expected 'any' (each case's own), None or 'causal', got {shown(mask)!r}")
        chosen = [_with(case, mask=None if mask is None else Mask.causal(case.shape[0], case.shape[1])) for case in chosen]
    if not (isinstance(scale, str) and scale == "any"):
        given = None if isinstance(scale, str) and scale == "default" else to_exact(scale)
        if given is not None and not (given.is_Rational and given > 0):
            raise ShapeError(f"scale: expected 'any', 'default' or a positive rational, got {shown(scale)}")
        chosen = [_with(case, scale=None if given is None else Fraction(int(given.p), int(given.q))) for case in chosen]
    return chosen


def _with(case: GradientCase, **changes) -> GradientCase:
    return dataclasses.replace(case, **changes)


def compare_attention_backward(kernel, *, dtype="float64", cases=None, mask="any", scale="any",
                               name: str | None = None) -> BackwardReport:
    """Run ``kernel(q, k, v, g, mask, scale) -> (dq, dk, dv)`` on ``dtype`` arrays and hold
    every gradient entry to its certified bound around the exact gradient.

    Args:
        cases: None (the fixed cases and 8 random ones), a number of random cases after the
            fixed ones, or a list of :class:`~.backward_cases.GradientCase`.
        mask: "any" (each case's own), None (no mask in any case) or "causal" (every case).
        scale: "any" (each case's own), "default" (1/sqrt(d_k) everywhere), or an exact
            positive rational passed to the kernel as a float.

    Returns:
        a :class:`~.backward_report.BackwardReport`; when cases fail, its ``diagnosis``
        names the mistake whose exact variant explains every failing case, if one does.
    """
    runs = [run_backward_case(kernel, case, dtype) for case in _cases(cases, mask, scale)]
    label = name or getattr(kernel, "__name__", None) or type(kernel).__name__
    diagnosis, explained, unexplained = backward_diagnosis(runs)
    return BackwardReport(label, float_format(dtype).name, tuple(run.report for run in runs), diagnosis, explained,
                          unexplained)


def assert_attention_backward_close(kernel, **options) -> BackwardReport:
    """:func:`compare_attention_backward` for a test suite: AssertionError with the table
    when any case fails, else the report."""
    report = compare_attention_backward(kernel, **options)
    if not report.passed:
        raise AssertionError("the backward pass is outside its certified bounds\n" + report.table())
    return report


def _library(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        raise BackendError(f"{name} is needed for this adapter: pip install {name}") from None


def torch_autograd(forward, *, name: str | None = None):
    """A kernel from a PyTorch forward ``forward(q, k, v, mask, scale) -> output`` (tensors
    in and out; ``mask`` None or a bool tensor, True = attend): ``torch.autograd.grad`` of
    the output with ``grad_outputs=g``.  A gradient the output does not depend on is 0."""

    def kernel(q, k, v, g, mask, scale):
        torch = _library("torch")
        inputs = [torch.from_numpy(a).requires_grad_(True) for a in (q, k, v)]
        out = forward(*inputs, None if mask is None else torch.from_numpy(mask), scale)
        grads = torch.autograd.grad(out, inputs, grad_outputs=torch.from_numpy(g).reshape(out.shape), allow_unused=True)
        return tuple((torch.zeros_like(x) if d is None else d).detach().numpy() for x, d in zip(inputs, grads))

    kernel.__name__ = name or f"torch_autograd({getattr(forward, '__name__', 'forward')})"
    return kernel


def jax_vjp(forward, *, name: str | None = None):
    """A kernel from a JAX forward ``forward(q, k, v, mask, scale) -> output`` (``mask``
    None or a bool array): ``jax.vjp`` at (q, k, v) applied to g.  float64 needs
    ``jax.config.update("jax_enable_x64", True)``; without it the case reports an error."""

    def kernel(q, k, v, g, mask, scale):
        jax = _library("jax")
        arrays = [jax.numpy.asarray(a) for a in (q, k, v, g)]
        if str(arrays[0].dtype) != str(q.dtype):
            raise BackendError(f"jax_vjp: JAX made the {q.dtype} inputs {arrays[0].dtype}: "
                               "set jax.config.update('jax_enable_x64', True)")
        jmask = None if mask is None else jax.numpy.asarray(mask)
        out, pull = jax.vjp(lambda a, b, c: forward(a, b, c, jmask, scale), *arrays[:3])
        return tuple(numpy().asarray(x) for x in pull(arrays[3].reshape(out.shape).astype(out.dtype)))

    kernel.__name__ = name or f"jax_vjp({getattr(forward, '__name__', 'forward')})"
    return kernel
