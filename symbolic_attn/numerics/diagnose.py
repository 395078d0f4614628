r"""Which classic bug an implementation has: its outputs against the exact bug variants.

Every bug is a **setting of the one attention core** (scale, mask, axis, empty-row policy,
value matrix, logits), computed exactly and held to the same float bounds as the correct
result.  A failing case is *explained* by a bug when the implementation's numbers are
within the bounds of that variant, and the variant is distinguishable from the correct
result on that case (so a vacuous bound explains nothing).

==========================  =============================================================
id                          variant of the core
==========================  =============================================================
``missing_scale``           ``scale="none"`` (1/sqrt(d_k) forgotten)
``scaled_by_dk``            ``scale=1/d_k``
``scale_ignored``           a given ``scale=`` ignored: 1/sqrt(d_k) used instead
``scale_applied_twice``     a given scale c applied twice: c^2
``mask_inverted``           ``mask.inverted()`` (keep read as block)
``mask_after_softmax``      ``masking="zero_after_softmax"``: blocked weights zeroed after
                            an unmasked softmax, rows not renormalized
``mask_fill_finite``        a finite number in place of -inf, filled (``masked_fill``) or
                            added: -1e4, -1e9 or finfo(dtype).min; the value found is named
``padding_on_queries``      a key padding mask applied to the queries (row i blocked when
                            key i is padding)
``unexpected_causal``       a causal mask (top-left or bottom-right) where none was asked
``causal_misaligned``       the other causal alignment (top-left <-> bottom-right), n != m
``kv_cache_offset``         a causal mask off by k positions (k found), not the other
                            alignment
``softmax_axis``            ``axis="queries"`` (normalized over queries)
``no_max_subtraction``      inf/NaN exactly on rows whose largest logit overflows exp
``half_precision_overflow`` inf/NaN exactly on rows where a product q . k (before the scale)
                            exceeds the largest number of a half-precision format
``empty_row_policy``        a fully masked row under another policy (zeros/uniform/nan)
``keys_as_values``          ``value=K``
``transposed_weights``      W^T in place of W (n = m)
``float32_accurate``        a float64 result within the float32 bounds only (the kernel
                            computes in float32: JAX, some float64 paths of Keras and HF)
==========================  =============================================================

Variants that leave a row without keys are tried under each empty-row policy.  A variant
whose output is NaN wherever the implementation's is never explains it (an output of NaN
everywhere is explained by no variant).  :func:`diagnosis` names a bug only when it
explains *every* failing case; otherwise the candidates are listed with the cases each
explains, the rest unexplained.

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
from fractions import Fraction

import flint
import sympy

from symbolic_attn.exact.certified import working_precision
from symbolic_attn.model.attention import attention, attention_from_scores
from symbolic_attn.model.masks import Mask
from symbolic_attn.numerics.backends import FloatFormat, float_format, numpy, numpy_dtype
from symbolic_attn.numerics.bounds import logit_bounds, representable
from symbolic_attn.numerics.compare import BITS, Expected, Run, expected_from, judge

__all__ = ["DIAGNOSES", "variants", "explain", "diagnosis", "labels_of", "found_labels"]

DIAGNOSES = {
    "missing_scale": "the scores were not multiplied by 1/sqrt(d_k)",
    "scaled_by_dk": "the scores were divided by d_k instead of sqrt(d_k)",
    "scale_ignored": "the given scale= was ignored (1/sqrt(d_k) used instead)",
    "scale_applied_twice": "the given scale was applied twice (scale squared)",
    "mask_inverted": "the mask was read with the opposite polarity (keep vs block)",
    "mask_after_softmax": "the mask was applied after softmax (blocked weights zeroed, rows not renormalized)",
    "mask_fill_finite": "a finite number stands in for -inf: fully masked rows and scores that large go wrong",
    "padding_on_queries": "the key padding mask was applied to the queries",
    "unexpected_causal": "a causal mask was applied where none was asked for",
    "causal_misaligned": "the causal mask is aligned top-left where bottom-right was meant, or the reverse (n != m)",
    "kv_cache_offset": "the causal mask is shifted by k positions (a KV-cache offset off by k)",
    "softmax_axis": "softmax normalized over the queries instead of the keys",
    "no_max_subtraction": "exp overflowed to inf/NaN: the row maximum was not subtracted before exp",
    "half_precision_overflow": "q . k overflowed the half-precision format: scale first, or accumulate in float32",
    "empty_row_policy": "a fully masked row does not follow the declared policy (zeros, uniform or nan)",
    "keys_as_values": "the keys K were used where the values V belong",
    "transposed_weights": "the weight matrix was used transposed",
    "float32_accurate": "a float64 result accurate only to float32: the kernel computes in float32",
}
POLICIES = ("zeros", "uniform", "nan")
#: The label mark of a match between a NaN variant and an output that is NaN everywhere.
NAN_ONLY = "(nan-output)"
#: The finite fills tried for ``mask_fill_finite`` (finfo(dtype).min is added per dtype).
FILLS = (sympy.Integer(-10**9), sympy.Integer(-10**4))


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

    def core(name, *, q=Q, k=K, v=V, mask_=mask, scale_=scale, label=None, **options):
        # normalized over the queries, the "rows" that may be empty are the columns
        lines = mask_.transposed() if mask_ is not None and options.get("axis") == "queries" else mask_
        for policy in _policies(lines, declared):
            variant = attention(q, k, v, mask=mask_, scale=scale_, on_empty_row=policy, **options)
            tag = policy if label is None else f"{label} {policy}"
            out.setdefault(name, []).append((tag, expected_from(variant, fmt, logsumexp=False)))

    core("missing_scale", scale_="none")
    if run.scale is None:
        core("scaled_by_dk", scale_=sympy.Rational(1, Q.cols))
    else:
        core("scale_ignored", scale_="default")
        core("scale_applied_twice", scale_=run.scale ** 2)
    if mask is not None:
        core("mask_inverted", mask_=mask.inverted())
        core("mask_after_softmax", masking="zero_after_softmax")
        out["mask_fill_finite"] = _finite_fills(run, fmt)
        if n <= m and all(row == mask.allowed[0] for row in mask.allowed) and not all(mask.allowed[0]):
            keys = mask.allowed[0]
            core("padding_on_queries", mask_=Mask.keep([[keys[i]] * m for i in range(n)]))
        _causal_shifts(core, mask, n, m)
    for align, offset in (("top_left", 0), ("bottom_right", m - n)):
        causal = Mask.causal(n, m, offset=offset)
        combined = causal if mask is None else mask & causal
        if combined != (mask if mask is not None else Mask.full(n, m)):
            lines = combined
            for policy in _policies(lines, declared):
                variant = attention(Q, K, V, mask=combined, scale=scale, on_empty_row=policy)
                out.setdefault("unexpected_causal", []).append((f"{align} {policy}", expected_from(variant, fmt, logsumexp=False)))
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


def _causal_shifts(core, mask: Mask, n: int, m: int) -> None:
    """The other causal alignments of a causal ``mask``: the other corner is
    ``causal_misaligned``, any other offset ``kv_cache_offset`` (labelled by its shift)."""
    offsets = [o for o in range(-(n - 1), m) if Mask.causal(n, m, offset=o) == mask]
    if not offsets:
        return
    own = offsets[0]
    other = m - n if own == 0 else 0 if own == m - n else None
    for shift in range(-(n - 1) - own, m - own):
        offset = own + shift
        if shift == 0 or Mask.causal(n, m, offset=offset) == mask or (abs(shift) > 4 and offset != other):
            continue
        if n != m and offset == other:
            core("causal_misaligned", mask_=Mask.causal(n, m, offset=offset),
                 label="to top_left" if offset == 0 else "to bottom_right")
        else:
            core("kv_cache_offset", mask_=Mask.causal(n, m, offset=offset), label=f"off by {shift:+d}")


def _finite_fills(run: Run, fmt: FloatFormat) -> list[tuple[str, Expected]]:
    """A finite number filled into blocked logits (masked_fill), or added to them (a bias):
    -1e9, -1e4 and finfo(dtype).min, each as the dtype holds it."""
    Q, K, V = run.exacts
    result, mask = run.result, run.mask
    scaled = result.scaled
    D = logit_bounds(Q, K, result.scale, fmt)
    u = fmt.unit_roundoff
    found = []
    lowest = -sympy.Rational(fmt.largest)
    fills = [(f"{float(f):g}", _held(f, fmt)) for f in FILLS] + [("finfo.min", lowest)]
    for name, fill in fills:
        if fill is None:  # beyond the format: the dtype turns it into -inf, the correct mask
            continue
        for how in ("fill", "add"):
            if how == "add" and name == "finfo.min":
                continue  # finfo.min + a score: the same as the fill, or -inf
            rows, errors = [], []
            for i in range(scaled.rows):
                row, err = [], []
                for j in range(scaled.cols):
                    t = scaled[i, j]
                    if mask.allowed[i][j]:
                        row.append(t)
                        err.append(D[i][j])
                    elif how == "fill":
                        row.append(fill)
                        err.append(0.0)
                    else:
                        row.append(t + fill)
                        err.append(D[i][j] + (0.0 if _exact_sum(t, D[i][j], fill, fmt) else 2 * u * abs(float(t + fill))))
                rows.append(row)
                errors.append(err)
            variant = attention_from_scores(sympy.ImmutableMatrix(rows), V, scale="none")
            found.append((f"{how} {name}", expected_from(variant, fmt, logit_error=errors, logsumexp=False)))
    return found


def _held(value, fmt: FloatFormat):
    """``value`` as ``fmt`` rounds it (None when it overflows to -inf)."""
    np = numpy()
    with np.errstate(over="ignore"):
        held = np.array(float(value), dtype=np.float64).astype(numpy_dtype(fmt)).astype(np.float64)
    return None if not np.isfinite(held) else sympy.Rational(Fraction(float(held)))


def _exact_sum(t, error, fill, fmt) -> bool:
    """Whether fl(t + fill) is exact: t exact in the format and the sum too."""
    if error != 0 or not t.is_Rational:
        return False
    value = Fraction(int(t.p), int(t.q))
    return representable(value, fmt) and representable(value + Fraction(int(fill.p), int(fill.q)), fmt)


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
    if fmt.name == "float64" and run.report.meets == "float32":
        found["float32_accurate"] = {"float32"}
    shaped = run.output.shape == (len(run.reference.output), len(run.reference.output[0]))
    all_nan = shaped and bool(run.output.size) and bool(numpy().isnan(run.output).all())  # not a huge wrong shape
    for name, candidates in variants(run, fmt).items():
        for label, variant in candidates:
            if _distinguishable(variant, run.reference) and all(
                s.passed for s in judge(_shaped(run.output, variant, "output"), _shaped(run.weights, variant, "weights"), variant, fmt)
            ):
                # a NaN-valued variant never explains a NaN output by itself: marked, it
                # counts only for a bug that explains some other case by its numbers
                found.setdefault(name, set()).add(f"{label} {NAN_ONLY}" if all_nan else label)
    if not shaped:
        return {name: found[name] for name in DIAGNOSES if name in found}  # no rows to read (and it may be huge)
    bad_rows = {i for i, row in enumerate(run.output.tolist()) if not all(map(math.isfinite, row))}
    expected_bad = {i for i, row in enumerate(run.reference.output) if any(b.is_nan() for b in row)}
    unexpected = bad_rows - expected_bad
    if unexpected and unexpected <= _overflow_rows(run, fmt):
        found["no_max_subtraction"] = {"overflow"}
    if unexpected and unexpected <= _product_overflow_rows(run, fmt):
        found["half_precision_overflow"] = {"q . k"}
    return {name: found[name] for name in DIAGNOSES if name in found}


def _product_overflow_rows(run: Run, fmt: FloatFormat) -> set[int]:
    """Rows where some exact q_i . k_j exceeds the largest number of ``fmt`` (a product
    formed before the scale overflows in a half format)."""
    Q, K, _ = run.exacts
    largest = sympy.Rational(Fraction(fmt.largest))
    return {i for i in range(Q.rows) if any(abs((Q.row(i) * K.row(j).T)[0, 0]) > largest for j in range(K.rows))}


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


def diagnosis(runs, explained, dtype, partial: bool = False):
    """The bugs that explain *every* failing case (``explained``: per run, :func:`explain`).

    A bug is named only when its variant explains each case that failed (an error raised
    by the implementation is not a failing case).  Bugs explaining every failing case are
    told apart by the passing cases: a bug whose variant differs from the correct result
    on a case the implementation got right is refuted (a uniform fully masked row looks
    like a -1e9 fill, but a masked_fill implementation would also have failed the case of
    real scores below -1e9).

    With ``partial=True``, returns ``(named, candidates)``: when nothing is named,
    ``candidates`` lists each bug that explains some failing cases with the numbers of
    those cases (0-based, into ``runs``), the largest first.
    """
    failing = [number for number, run in enumerate(runs) if run.report.verdict == "fail"]
    cases: dict[str, set[int]] = {}
    labels: dict[str, set[str]] = {}
    for number, found in enumerate(explained):
        for name, matched in found.items():
            cases.setdefault(name, set()).add(number)
            labels.setdefault(name, set()).update(matched)
    for name in list(cases):
        if all(NAN_ONLY in label for label in labels[name]):  # NaN matches NaN, and nothing else
            del cases[name]
    every = {name for name, mine in cases.items() if failing and set(failing) <= mine}
    if "float32_accurate" in every:  # the precision explains it: no bug variant is named beside it
        every = {"float32_accurate"}
    standing = {label for label in labels.get("mask_fill_finite", ())
                if not any(contradicted(run, dtype, "mask_fill_finite", {label}) for run in runs)}
    if {"mask_fill_finite", "empty_row_policy"} <= every and all("finfo.min" in label for label in standing):
        every.discard("mask_fill_finite")  # a finfo.min fill is the uniform policy itself (Hugging Face's)
    refuted = {name for name in every if len(every) > 1 and _refuted(name, runs, dtype, labels[name])}
    if every - refuted:
        every -= refuted
    named = [name for name in DIAGNOSES if name in every]
    if not partial:
        return named
    candidates = [] if named else sorted(((name, cases[name]) for name in cases if not any(
        cases[name] < other for other in cases.values())), key=lambda item: (-len(item[1]), list(DIAGNOSES).index(item[0])))
    return named, candidates


def _refuted(name, runs, dtype, labels) -> bool:
    """A passing case refutes the bug (its variant, or its overflow, would have shown)."""
    if name in ("no_max_subtraction", "half_precision_overflow"):
        fmt = float_format(dtype)
        rows = _overflow_rows if name == "no_max_subtraction" else _product_overflow_rows
        return any(run.report.passed and run.output is not None and rows(run, fmt) for run in runs)
    # refuted when every sub-variant that matched is (the -1e9 fill may stand while -1e4 falls)
    return all(any(contradicted(run, dtype, name, {label}) for run in runs) for label in labels)


def labels_of(explained, name) -> list[str]:
    """What was found for bug ``name`` over the cases (the fill, the offset), without the
    empty-row policy a variant was tried under.

    >>> labels_of([{"kv_cache_offset": {"off by +1 zeros"}}, {}], "kv_cache_offset")
    ['off by +1']
    """
    if name not in _LABELLED:
        return []
    per_case = []
    for case in explained:
        if name in case:
            words = ({w for w in label.split() if w not in POLICIES and w != NAN_ONLY} for label in case[name])
            per_case.append({" ".join(sorted(w, key=label_order(label))) for w, label in zip(words, case[name]) if w})
    common = set.intersection(*per_case) if per_case else set()
    return sorted(common or set().union(*per_case))


def found_labels(runs, explained, dtype, name) -> list[str]:
    """:func:`labels_of`, less the labels a passing case refutes (a -1e4 fill explains the
    failures of a -1e9 one, but would have failed the case of scores near -1e6 too)."""
    labels = labels_of(explained, name)
    raw: dict[str, set[str]] = {}
    for case in explained:
        for label in case.get(name, ()):
            words = " ".join(w for w in label.split() if w not in POLICIES and w != NAN_ONLY)
            raw.setdefault(words, set()).add(label)
    kept = [label for label in labels if not any(contradicted(run, dtype, name, raw.get(label, set())) for run in runs)]
    return kept or labels


def label_order(label: str):
    """Sort key keeping the words of ``label`` in their written order."""
    words = label.split()
    return lambda word: words.index(word)


#: The bugs whose labels say what was found (the fill value, the offset, the alignment).
_LABELLED = ("mask_fill_finite", "kv_cache_offset", "unexpected_causal")
