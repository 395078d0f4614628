r"""Which classic bug an implementation has: its outputs against the exact bug variants.

Every bug is a **setting of the one attention core** (scale, mask, axis, empty-row policy,
value matrix, logits), computed exactly and held to the same float bounds as the correct
result.  A failing case is *explained* by a bug when the implementation's numbers are
within the bounds of that variant, and the variant is distinguishable from the correct
result on that case (so a vacuous bound explains nothing).

=========================  ==============================================================
id                         variant of the core
=========================  ==============================================================
``missing_scale``          ``scale="none"`` (1/sqrt(d_k) forgotten)
``scaled_by_dk``           ``scale=1/d_k``
``mask_inverted``          ``mask.inverted()`` (keep read as block)
``mask_large_negative``    logits with -1e9 in place of -inf: filled (``masked_fill``) or
                           added; wrong on fully masked rows and scores near 1e9
``causal_misaligned``      the other causal alignment (top-left <-> bottom-right), n != m
``softmax_axis``           ``axis="queries"`` (normalized over queries)
``no_max_subtraction``     inf/NaN exactly on rows whose largest logit overflows exp
``empty_row_policy``       a fully masked row under another policy (zeros/uniform/nan)
``keys_as_values``         ``value=K``
``transposed_weights``     W^T in place of W (n = m)
=========================  ==============================================================

Variants that leave a row without keys are tried under each empty-row policy.

>>> import numpy as np
>>> from symbolic_attn.numerics.compare import run_case
>>> def by_dk(q, k, v, mask):
...     w = np.exp(q @ k.T / q.shape[1]); return (w / w.sum(axis=1, keepdims=True)) @ v
>>> run = run_case(by_dk, [[1, 2], [0, 1]], [[1, 0], [2, 1]], [[1, 0], [0, 1]])
>>> run.report.verdict, list(explain(run, "float32"))
('fail', ['scaled_by_dk'])
"""

from __future__ import annotations

import math

import flint
import sympy

from symbolic_attn.exact.certified import working_precision
from symbolic_attn.model.attention import attention, attention_from_scores
from symbolic_attn.model.masks import Mask
from symbolic_attn.numerics.backends import FloatFormat, float_format
from symbolic_attn.numerics.bounds import logit_bounds, representable
from symbolic_attn.numerics.compare import BITS, Expected, Run, expected_from, judge

__all__ = ["DIAGNOSES", "variants", "explain", "diagnosis"]

DIAGNOSES = {
    "missing_scale": "the scores were not multiplied by 1/sqrt(d_k)",
    "scaled_by_dk": "the scores were divided by d_k instead of sqrt(d_k)",
    "mask_inverted": "the mask was read with the opposite polarity (keep vs block)",
    "mask_large_negative": "a finite -1e9 stands in for -inf: fully masked rows and scores near 1e9 go wrong",
    "causal_misaligned": "the causal mask is aligned top-left where bottom-right was meant, or the reverse (n != m)",
    "softmax_axis": "softmax normalized over the queries instead of the keys",
    "no_max_subtraction": "exp overflowed to inf/NaN: the row maximum was not subtracted before exp",
    "empty_row_policy": "a fully masked row does not follow the declared policy (zeros, uniform or nan)",
    "keys_as_values": "the keys K were used where the values V belong",
    "transposed_weights": "the weight matrix was used transposed",
}
POLICIES = ("zeros", "uniform", "nan")
LARGE_NEGATIVE = sympy.Integer(-10**9)


def _policies(mask: Mask | None, declared: str):
    """The policies to try for a variant mask: its own rows may be empty."""
    if mask is not None and mask.empty_rows():
        return POLICIES
    return (declared if declared != "error" else "zeros",)


def variants(run: Run, fmt: FloatFormat) -> dict[str, list[tuple[str, Expected]]]:
    """The exact result of each applicable bug on the case of ``run``, with its bounds,
    as (label, result) pairs: a label tells sub-variants apart (the empty-row policy
    tried, "fill" or "add" for -1e9)."""
    Q, K, V = run.exacts
    mask, result, declared = run.mask, run.result, run.empty_row
    n, m = Q.rows, K.rows
    scale = "default" if run.scale is None else run.scale
    out: dict[str, list[tuple[str, Expected]]] = {}

    def core(name, *, q=Q, k=K, v=V, mask_=mask, scale_=scale, **options):
        # normalized over the queries, the "rows" that may be empty are the columns
        lines = mask_.transposed() if mask_ is not None and options.get("axis") == "queries" else mask_
        for policy in _policies(lines, declared):
            variant = attention(q, k, v, mask=mask_, scale=scale_, on_empty_row=policy, **options)
            out.setdefault(name, []).append((policy, expected_from(variant, fmt, logsumexp=False)))

    core("missing_scale", scale_="none")
    if run.scale is None:
        core("scaled_by_dk", scale_=sympy.Rational(1, Q.cols))
    if mask is not None:
        core("mask_inverted", mask_=mask.inverted())
        out["mask_large_negative"] = _large_negative(run, fmt)
        offset = m - n
        if n != m and mask == Mask.causal(n, m):
            core("causal_misaligned", mask_=Mask.causal(n, m, offset=offset))
        elif n != m and mask == Mask.causal(n, m, offset=offset):
            core("causal_misaligned", mask_=Mask.causal(n, m))
    core("softmax_axis", mask_=mask if mask is not None else Mask.full(n, m), axis="queries")
    if mask is not None and mask.empty_rows():
        for policy in POLICIES:
            if policy != declared:
                variant = attention(Q, K, V, mask=mask, scale=scale, on_empty_row=policy)
                out.setdefault("empty_row_policy", []).append((policy, expected_from(variant, fmt, logsumexp=False)))
    core("keys_as_values", v=K)
    if n == m:
        out["transposed_weights"] = [("transposed", expected_from(result, fmt, transpose=True, logsumexp=False))]
    return out


def _large_negative(run: Run, fmt: FloatFormat) -> list[tuple[str, Expected]]:
    """-1e9 filled into blocked logits (masked_fill), or added to them (a bias)."""
    Q, K, V = run.exacts
    result, mask = run.result, run.mask
    scaled = result.scaled
    D = logit_bounds(Q, K, result.scale, fmt)
    u = fmt.unit_roundoff
    found = []
    for how in ("fill", "add"):
        rows, errors = [], []
        for i in range(scaled.rows):
            row, err = [], []
            for j in range(scaled.cols):
                t = scaled[i, j]
                if mask.allowed[i][j]:
                    row.append(t)
                    err.append(D[i][j])
                elif how == "fill":
                    row.append(LARGE_NEGATIVE)
                    err.append(0.0)
                else:
                    row.append(t + LARGE_NEGATIVE)
                    err.append(D[i][j] + (0.0 if _exact_sum(t, D[i][j], fmt) else 2 * u * abs(float(t + LARGE_NEGATIVE))))
            rows.append(row)
            errors.append(err)
        variant = attention_from_scores(sympy.ImmutableMatrix(rows), V, scale="none")
        found.append((how, expected_from(variant, fmt, logit_error=errors, logsumexp=False)))
    return found


def _exact_sum(t, error, fmt) -> bool:
    """Whether fl(t - 1e9) is exact: t exact in the format and the difference too."""
    if error != 0 or not t.is_Rational:
        return False
    from fractions import Fraction

    value = Fraction(int(t.p), int(t.q))
    return representable(value, fmt) and representable(value - 10**9, fmt)


def _distinguishable(variant: Expected, correct: Expected) -> bool:
    """Some entry where the two exact results differ by more than both bounds together."""
    for stage in ("weights", "output"):
        balls, bounds = variant.stage(stage)
        other, other_bounds = correct.stage(stage)
        if len(balls) != len(other) or len(balls[0]) != len(other[0]):
            return True
        for row, brow, orow, obrow in zip(balls, bounds, other, other_bounds):
            for a, ba, b, bb in zip(row, brow, orow, obrow):
                if a.is_nan() or b.is_nan():
                    if a.is_nan() != b.is_nan():
                        return True
                    continue
                with working_precision(BITS):
                    gap = abs(a - b)
                if gap > flint.arb(ba) + flint.arb(bb):
                    return True
    return False


def _overflow_rows(run: Run, fmt: FloatFormat) -> set[int]:
    """Rows whose largest allowed logit overflows exp (or whose every exp underflows)."""
    rows = set()
    with working_precision(BITS):
        scaled = run.result.intervals("scaled", BITS)
    for i, row in enumerate(scaled):
        allowed = [float(t.mid()) for j, t in enumerate(row) if run.mask is None or run.mask.allowed[i][j]]
        if allowed and (max(allowed) > fmt.log_largest or max(allowed) < math.log(fmt.smallest_subnormal)):
            rows.add(i)
    return rows


def explain(run: Run, dtype) -> dict[str, set[str]]:
    """The bug ids that explain this failing case, each with the labels of the
    sub-variants that match (empty for a passing case)."""
    fmt = float_format(dtype)
    if run.report.passed or run.output is None:
        return {}
    found: dict[str, set[str]] = {}
    for name, candidates in variants(run, fmt).items():
        for label, variant in candidates:
            if _distinguishable(variant, run.reference) and all(
                s.passed for s in judge(_shaped(run.output, variant, "output"), _shaped(run.weights, variant, "weights"), variant, fmt)
            ):
                found.setdefault(name, set()).add(label)
    if run.output.shape != (len(run.reference.output), len(run.reference.output[0])):
        return {name: found[name] for name in DIAGNOSES if name in found}  # no rows to read (and it may be huge)
    bad_rows = {i for i, row in enumerate(run.output.tolist()) if not all(map(math.isfinite, row))}
    expected_bad = {i for i, row in enumerate(run.reference.output) if any(b.is_nan() for b in row)}
    overflow = _overflow_rows(run, fmt)
    if bad_rows - expected_bad and (bad_rows - expected_bad) <= overflow:
        found["no_max_subtraction"] = {"overflow"}
    return {name: found[name] for name in DIAGNOSES if name in found}


def contradicted(run: Run, dtype, name: str, labels: set[str]) -> bool:
    """Whether a passing case refutes a bug: one of its sub-variants (``labels``) differs
    from the correct result there, yet the implementation got the correct result."""
    if not run.report.passed:
        return False
    fmt = float_format(dtype)
    return any(label in labels and _distinguishable(variant, run.reference)
               for label, variant in variants(run, fmt).get(name, []))


def _shaped(array, variant: Expected, stage: str):
    """The implementation's array, transposed if that is the variant's shape (m x n weights)."""
    if array is None:
        return None
    balls, _ = variant.stage(stage)
    if array.shape != (len(balls), len(balls[0])) and array.shape == (len(balls[0]), len(balls)):
        return array.T
    return array


def diagnosis(runs, explained, dtype) -> list[str]:
    """The bugs that explain the failing cases (``explained``: per run, :func:`explain`).

    A bug whose cases another bug explains too, and more besides, is dropped (an inverted
    mask also looks like -1e9 masking on one case).  Bugs explaining exactly the same cases
    are told apart by the passing cases: a bug whose variant differs from the correct
    result on a case the implementation got right is refuted (a uniform fully masked row
    looks like -1e9 filled in, but a masked_fill implementation would also have failed
    the case of real scores below -1e9).
    """
    cases: dict[str, set[int]] = {}
    labels: dict[str, set[str]] = {}
    for number, found in enumerate(explained):
        for name, matched in found.items():
            cases.setdefault(name, set()).add(number)
            labels.setdefault(name, set()).update(matched)
    kept = {name for name, mine in cases.items() if not any(mine < other for other in cases.values())}
    for name in sorted(kept):
        rivals = [other for other in kept if other != name and cases[other] == cases[name]]
        if rivals and any(contradicted(run, dtype, name, labels[name]) for run in runs):
            kept.discard(name)
    return [name for name in DIAGNOSES if name in kept]
