r"""The exact side of a backward comparison: certified gradients and their float bounds.

:class:`ExactGradients` holds one case's exact inputs (the kernel's floats, converted
exactly), its forward :func:`~symbolic_attn.model.attention.attention` result and the
:func:`~symbolic_attn.model.backward.attention_backward` trace of the correct backward or of
one of its mistake settings (:data:`VARIANTS`).  :func:`expected_gradients` encloses dQ,
dK, dV in arb balls and attaches the bound of :mod:`.backward_bounds` to every entry.

>>> import sympy
>>> M = sympy.ImmutableMatrix
>>> exact = ExactGradients(M([[1, 0]]), M([[1, 0], [0, 1]]), M([[1], [0]]), M([[1]]), None, None)
>>> from symbolic_attn.numerics.backends import FORMATS
>>> balls, bounds = expected_gradients(exact, FORMATS["float64"]).stage("dV")
>>> len(balls), len(balls[0]), bounds[0][0] > 0
(2, 1, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import flint
import sympy

from symbolic_attn.exact.intervals import to_arb, working_precision
from symbolic_attn.model.attention import AttentionResult, attention
from symbolic_attn.model.backward import attention_backward
from symbolic_attn.model.masks import Mask
from symbolic_attn.model.trace import Trace
from symbolic_attn.numerics.backends import FloatFormat
from symbolic_attn.numerics.backward_bounds import backward_bounds, gradient_logit_bounds, logsumexp_weight_bounds
from symbolic_attn.numerics.bounds import output_bounds
from symbolic_attn.numerics.compare import BITS, expected_from

__all__ = ["VARIANTS", "ExactGradients", "GradientExpected", "expected_gradients", "upper"]

#: The mistakes, as settings of :func:`attention_backward` (None: the correct backward).
VARIANTS: dict[str | None, dict[str, str]] = {
    None: {},
    "grad_missing_scale": {"grad_scale": "missing"},
    "grad_transposed_k": {"key_side": "transposed"},
    "grad_diagonal_jacobian": {"softmax_jacobian": "diagonal"},
    "grad_missing_rowsum": {"softmax_jacobian": "no_rowsum"},
}
_ROW_TERM = {"full": "rowsum", "diagonal": "none", "no_rowsum": "own"}


@dataclass
class ExactGradients:
    """One case, exactly: Q, K, V, G (the floats' values), the mask and the exact scale
    (None: 1/sqrt(d_k)).  Traces and balls are computed once and remembered."""

    Q: sympy.ImmutableMatrix
    K: sympy.ImmutableMatrix
    V: sympy.ImmutableMatrix
    G: sympy.ImmutableMatrix
    mask: Mask | None
    scale: sympy.Expr | None
    _traces: dict = field(default_factory=dict, repr=False)
    _balls: dict = field(default_factory=dict, repr=False)

    @cached_property
    def forward(self) -> AttentionResult:
        return attention(self.Q, self.K, self.V, mask=self.mask, scale="default" if self.scale is None else self.scale)

    @property
    def c(self) -> sympy.Expr:
        """The exact scale the forward applied."""
        return self.forward.scale

    def applies(self, variant: str | None) -> bool:
        """Whether the mistake can be made on this case (a transposed K needs n = m)."""
        return variant != "grad_transposed_k" or self.Q.rows == self.K.rows

    def trace(self, variant: str | None = None) -> Trace:
        if variant not in self._traces:
            self._traces[variant] = attention_backward(self.Q, self.K, self.V, self.G, mask=self.mask,
                                                       scale=self.c, **VARIANTS[variant])
        return self._traces[variant]

    def balls(self, variant: str | None, stage: str) -> list[list]:
        key = (variant, stage)
        if key not in self._balls:
            with working_precision(BITS):
                self._balls[key] = [[to_arb(x) for x in row] for row in self.trace(variant)[stage].tolist()]
        return self._balls[key]


@dataclass(frozen=True)
class GradientExpected:
    """Exact dQ, dK, dV (arb balls) and the bound of each entry, for one dtype."""

    balls: dict
    bounds: dict

    def stage(self, name: str):
        return self.balls[name], self.bounds[name]


def upper(ball) -> float:
    """A float >= every point of the ball's absolute value (0 for an exact zero)."""
    if ball.is_zero():
        return 0.0
    return math.nextafter(float(ball.abs_upper()), math.inf)


def _uppers(grid) -> list[list[float]]:
    return [[upper(b) for b in row] for row in grid]


def _float_rows(matrix) -> list[list[float]]:
    with working_precision(BITS):
        return _uppers([[to_arb(x) for x in row] for row in matrix.tolist()])


def expected_gradients(exact: ExactGradients, fmt: FloatFormat, variant: str | None = None) -> GradientExpected:
    """The exact gradients of ``variant`` (None: the correct backward) and their bounds."""
    settings = VARIANTS[variant]
    D = gradient_logit_bounds(exact.Q, exact.K, exact.c, fmt)
    forward = expected_from(exact.forward, fmt, logit_error=D)
    n, m = exact.Q.rows, exact.K.rows
    B, EO = _weight_bounds(exact, forward, D, fmt)
    with working_precision(BITS):
        A = forward.weights
        dA = exact.balls(variant, "dA")
        rowsum = exact.balls(variant, "D")
        row_term = _ROW_TERM[settings.get("softmax_jacobian", "full")]
        zero = flint.arb(0)
        if row_term == "rowsum":
            rho = [[rowsum[i][0]] * m for i in range(n)]
        elif row_term == "none":
            rho = [[zero] * m for _ in range(n)]
        else:
            rho = [[A[i][j] * dA[i][j] for j in range(m)] for i in range(n)]
        diff = [[dA[i][j] - rho[i][j] for j in range(m)] for i in range(n)]
    scale = 1.0 if settings.get("grad_scale") == "missing" else math.nextafter(upper(_arb(exact.c)), math.inf)
    bounds = backward_bounds(
        weights=_uppers(A), weight_error=B, output=_uppers(forward.output), output_error=EO, query=_float_rows(exact.Q), key=_float_rows(exact.K),
        value=_float_rows(exact.V), grad=_float_rows(exact.G), dA=_uppers(dA), rho=_uppers(rho), diff=_uppers(diff),
        dscaled=_uppers(exact.balls(variant, "dScaled")), scale=scale, fmt=fmt, row_term=row_term,
        transposed=settings.get("key_side") == "transposed")
    balls = {stage: exact.balls(variant, stage) for stage in ("dQ", "dK", "dV")}
    return GradientExpected(balls, {stage: bounds[stage] for stage in ("dQ", "dK", "dV")})


def _weight_bounds(exact: ExactGradients, forward, D, fmt: FloatFormat):
    """The weights' bound for either way of computing them (step 1 or 1'), and the output's."""
    with working_precision(BITS):
        scaled = exact.forward.intervals("scaled", BITS)
    allowed = [[exact.mask is None or exact.mask.allowed[i][j] for j in range(len(row))] for i, row in enumerate(scaled)]
    t = [[float(b.mid()) if ok else -math.inf for b, ok in zip(row, oks)] for row, oks in zip(scaled, allowed)]
    w = [[float(b.mid()) for b in row] for row in forward.weights]
    again = logsumexp_weight_bounds(t, w, allowed, D, fmt)
    B = [[max(a, b) for a, b in zip(r1, r2)] for r1, r2 in zip(forward.weight_bounds, again)]
    return B, output_bounds(w, B, exact.V, fmt)


def _arb(expr):
    with working_precision(BITS):
        return to_arb(expr)
