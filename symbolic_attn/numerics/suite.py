r"""Run the battery against an implementation: reports, diagnosis, a pytest assertion.

>>> import numpy as np
>>> def attend(q, k, v, mask):
...     s = q @ k.T / np.sqrt(np.asarray(q.shape[-1], dtype=q.dtype))
...     s = np.where(mask, s, -np.inf) if mask is not None else s
...     w = np.exp(s - s.max(axis=-1, keepdims=True))
...     return (w / w.sum(axis=-1, keepdims=True)) @ v
>>> report = run_battery(attend, cases=2)
>>> report.passed, report.diagnosis
(True, [])
>>> def forgot(q, k, v, mask):
...     return attend(q * np.sqrt(np.asarray(q.shape[-1], dtype=q.dtype)), k, v, mask)
>>> run_battery(forgot, cases=0).diagnosis
['missing_scale']
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from symbolic_attn.errors import ImplementationError, doing, shown
from symbolic_attn.numerics.backends import float_format
from symbolic_attn.numerics.adapters import KEY_CONVENTIONS
from symbolic_attn.numerics.battery import MAX_RANDOM, KernelCase, battery, skipped
from symbolic_attn.numerics.calling import takes_scale
from symbolic_attn.numerics.capabilities import Capabilities, capabilities_of, select
from symbolic_attn.numerics.compare import CaseReport, run_case
from symbolic_attn.numerics.compare import compare_attention as compare_function
from symbolic_attn.numerics.diagnose import DIAGNOSES, diagnosis, explain, found_labels
from symbolic_attn.numerics.isolation import Isolated
from symbolic_attn.numerics.modules import ModuleKernel, as_kernel

__all__ = ["BatteryReport", "run_battery", "assert_attention_close", "compare_attention", "takes_scale"]


@dataclass(frozen=True)
class BatteryReport:
    """Every case's report, whether all passed, and the bugs that explain the failures."""

    dtype: str
    cases: tuple[CaseReport, ...]
    explained: tuple[tuple[str, ...], ...]  # per case, the bug ids that explain it
    diagnosed: tuple[str, ...] = ()  # the bugs that explain the failures (see diagnose.diagnosis)
    mask_convention: str = "keep"
    empty_row: str = "error"
    skipped: tuple[tuple[str, str], ...] = ()  # (case, why) left out: the dtype or the kernel cannot take it
    partial: tuple[tuple[str, tuple[str, ...]], ...] = ()  # candidates explaining only some failing cases
    found: tuple[tuple[str, tuple[str, ...]], ...] = ()  # per named bug, what was found (fill value, offset)

    @property
    def passed(self) -> bool:
        return all(case.passed for case in self.cases)

    @property
    def diagnosis(self) -> list[str]:
        """The diagnosis ids, in the order of :data:`~symbolic_attn.numerics.diagnose.DIAGNOSES`."""
        return list(self.diagnosed)

    def to_dict(self) -> dict:
        return {
            "passed": self.passed,
            "dtype": self.dtype,
            "mask_convention": self.mask_convention,
            "empty_row": self.empty_row,
            "cases": [dict(case.to_dict(), explained_by=list(ids)) for case, ids in zip(self.cases, self.explained)],
            "diagnosis": list(self.diagnosis),
            "found": {name: list(labels) for name, labels in self.found},
            "skipped": [{"case": name, "why": why} for name, why in self.skipped],
            "partial": [{"bug": name, "explains": list(cases)} for name, cases in self.partial],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False) + "\n"

    def table(self, width: int | None = None) -> str:
        """One row per case: shape, mask, the headline error, the bound, the verdict; then
        each failing case in detail, and the diagnosis.  Within ``width`` columns (default:
        the terminal's, :func:`~symbolic_attn.render.columns.terminal_columns`): a long case
        name or mask wraps in its column, and when the bugs that explain a case do not fit
        beside its verdict they are named in that case's detail below the table."""
        from symbolic_attn.render.columns import display_width, table, terminal_columns

        width = terminal_columns() if width is None else width
        header = ["case", "n", "m", "d_k", "d_v", "mask", "max error", "ulp", "bound", "verdict"]
        rows = []
        for case in self.cases:
            row = case.to_dict()
            rows.append([case.name, *(str(row[key]) for key in ("n", "m", "d_k", "d_v")), row["mask"],
                         *(_num(row[key]) for key in ("max_abs_error", "max_ulp", "bound")), case.verdict])
        verdicts = [case.verdict + (f" ({', '.join(ids)})" if ids else "") for case, ids in zip(self.cases, self.explained)]
        options = {"align": "<>>>><>>><", "gaps": [0, 2, 1, 1, 1, 2, 2, 2, 2, 2], "floors": [_CASE_FLOOR, None, None, None,
                   None, _MASK_FLOOR, None, None, None, None], "repeat": 1}
        full = [row[:-1] + [verdict] for row, verdict in zip(rows, verdicts)]
        # The ids beside the verdicts only in one block of columns that fits.
        beside = table(header, full, width, **dict(options, repeat=len(header)))
        fits = max(display_width(line) for line in beside) <= width
        lines = beside if fits else table(header, rows, width, **options)
        failed = [(c, ids) for c, ids in zip(self.cases, self.explained) if not c.passed]
        lines.append("")
        lines.append(f"{len(self.cases) - len(failed)} of {len(self.cases)} cases within the {self.dtype} bounds"
                     + (": PASS" if not failed else ": FAIL"))
        for case, ids in failed:
            lines.append("")
            detail = str(case).split("\n")
            if ids:
                detail.append(f"  explained by: {', '.join(ids)}")
            lines += _wrapped(detail, width)
        if self.diagnosis:
            lines.append("")
            lines.append("diagnosis:")
            detail = dict(self.found)
            lines += _wrapped([f"  {name}: {DIAGNOSES[name]}" + (f" (found: {', '.join(detail[name])})" if detail.get(name) else "")
                               for name in self.diagnosis], width)
        elif failed:
            lines.append("")
            if self.partial:
                lines.append("diagnosis: no known bug explains every failing case; candidates explain only")
                lines += _wrapped([f"  {name}: {', '.join(cases)}" for name, cases in self.partial], width)
                explained = {case for _, cases in self.partial for case in cases}
                rest = [case.name for case, _ in failed if case.name not in explained]
                if rest:
                    lines += _wrapped([f"  unexplained: {', '.join(rest)}"], width)
            else:
                lines.append("diagnosis: no known bug explains the failures")
        if self.skipped:
            lines.append("")
            lines.append(f"skipped {len(self.skipped)} case(s):")
            lines += _wrapped([f"  {name}: {why}" for name, why in self.skipped], width)
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.table()


#: The narrowest the case and mask columns become (their cells wrap).
_CASE_FLOOR, _MASK_FLOOR = 12, 10


def _wrapped(lines, width) -> list:
    """Each line within ``width`` columns, continued 4 spaces further in than it starts."""
    from symbolic_attn.render.columns import display_width, wrap

    out = []
    for line in lines:
        if display_width(line) <= width:
            out.append(line)
            continue
        lead = " " * (len(line) - len(line.lstrip(" ")))
        out += wrap(line.strip(" "), width, lead, lead + "    ")
    return out


def _num(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return f"{value:.3g}"


def _as_case(case, number) -> KernelCase:
    """A KernelCase from a KernelCase, a (q, k, v[, mask[, scale]]) tuple or a dict of those names."""
    if isinstance(case, KernelCase):
        return case
    if isinstance(case, dict):
        unknown = set(case) - {"name", "q", "k", "v", "mask", "scale"}
        if unknown or not {"q", "k", "v"} <= set(case):
            raise ImplementationError(f"cases[{number}]: a dict needs q, k, v (and optionally name, mask, scale), got {sorted(case)}")
        return KernelCase(case.get("name", f"case_{number}"), case["q"], case["k"], case["v"], case.get("mask"), case.get("scale"))
    if isinstance(case, tuple) and 3 <= len(case) <= 5:
        q, k, v, *rest = case
        return KernelCase(f"case_{number}", q, k, v, *rest)
    raise ImplementationError(f"cases[{number}]: expected a KernelCase, a (q, k, v, mask) tuple or a dict, got {type(case).__name__}")


def run_battery(fn, *, dtype="float32", cases=8, seed=0, mask_convention="keep", empty_row="error",
                capabilities: Capabilities | None = None) -> BatteryReport:
    """Hold ``fn`` to the exact result on the battery; diagnose the failures.

    A callable ``fn`` is called in this process; an
    :class:`~symbolic_attn.numerics.isolation.Isolated` one (the command line's) in its
    child process.

    ``cases`` is the number of random cases added to the fixed ones, or a list of cases
    to run instead: :class:`~symbolic_attn.numerics.battery.KernelCase` objects, ``(q, k, v)``
    or ``(q, k, v, mask)`` tuples, or dicts with those keys.

    ``capabilities`` (:class:`~symbolic_attn.numerics.capabilities.Capabilities`, or the
    kernel's ``attention_capabilities``) says what the kernel can take: the cases it cannot
    are skipped and listed in the report.
    """
    kernel = as_kernel(fn)
    if isinstance(kernel, ModuleKernel):
        return _module_battery(kernel, cases, seed, mask_convention, empty_row)
    fn = kernel
    fmt = float_format(dtype)
    scaled = fn.takes_scale if isinstance(fn, Isolated) else takes_scale(fn)  # a child process was told by fn's
    given = isinstance(cases, (list, tuple))
    chosen = cases if given else battery(cases, seed, empty_row=empty_row, takes_scale=scaled, dtype=fmt.name)
    left_out = () if given else tuple(skipped(cases, seed, empty_row=empty_row, takes_scale=scaled, dtype=fmt.name))
    limits = capabilities_of(fn, capabilities)
    if limits != Capabilities() or mask_convention in KEY_CONVENTIONS:
        chosen, unfit = select([_as_case(case, number) for number, case in enumerate(chosen, start=1)], limits)
        left_out += tuple(unfit)
        if mask_convention in KEY_CONVENTIONS:  # one row of keys: a padding mask, or none
            chosen, unfit = _per_key(chosen, mask_convention)
            left_out += tuple(unfit)
    runs, explained = [], []
    label = shown(getattr(fn, "__qualname__", None) or "the implementation")
    for number, case in enumerate(chosen, start=1):
        case = _as_case(case, number)
        # named for the message when a time limit runs out (a slow or looping fn)
        with doing(f"running {label} on case {shown(case.name)} ({number} of {len(chosen)})"):
            run = run_case(fn, case.q, case.k, case.v, case.mask, scale=case.scale, dtype=fmt.name,
                           mask_convention=mask_convention, empty_row=empty_row, name=case.name,
                           pass_mask=limits.passes_mask)
            runs.append(run)
            explained.append(explain(run, fmt.name))
    named, partial = diagnosis(runs, explained, fmt.name, partial=True)
    return BatteryReport(fmt.name, tuple(run.report for run in runs), tuple(tuple(found) for found in explained),
                         tuple(named), mask_convention, empty_row, left_out,
                         tuple((name, tuple(runs[i].report.name for i in sorted(numbers))) for name, numbers in partial),
                         tuple((name, tuple(found_labels(runs, explained, fmt.name, name))) for name in named))


def compare_attention(fn, q, k, v, mask=None, *, scale=None, dtype="float32", mask_convention="keep",
                      empty_row="error", name="case") -> CaseReport:
    """:func:`~symbolic_attn.numerics.compare.compare_attention` for a function, and for a
    module (``nn.MultiheadAttention``, a nanoGPT ``CausalSelfAttention``) or a
    zero-argument factory of one: then q, k, v are its query, key and value inputs, and
    its own weights and dtype are used (:mod:`.modules`).  A Hugging Face-style
    ``eager_attention_forward`` is read by its signature.

    >>> import numpy as np
    >>> def attend(q, k, v, mask):
    ...     w = np.exp(q @ k.T / np.sqrt(np.asarray(q.shape[1], dtype=q.dtype)))
    ...     return (w / w.sum(axis=1, keepdims=True)) @ v
    >>> compare_attention(attend, [[1, 0]], [[1, 0], [0, 1]], [[1, 2], [3, 4]]).verdict
    'pass'
    """
    from symbolic_attn.numerics.modules import run_module_case

    kernel = as_kernel(fn)
    if isinstance(kernel, ModuleKernel):  # a module: its inputs, its own dtype and weights
        return run_module_case(kernel, q, k, v, mask, empty_row=empty_row, mask_convention=mask_convention, name=name)
    return compare_function(kernel, q, k, v, mask, scale=scale, dtype=dtype, mask_convention=mask_convention,
                            empty_row=empty_row, name=name)


def _per_key(cases, convention):
    kept, skipped = [], []
    for case in cases:
        if case.mask is None or all(row == case.mask.allowed[0] for row in case.mask.allowed):
            kept.append(case)
        else:
            skipped.append((case.name, f"a {convention} mask gives one row of keys: it cannot hold this mask"))
    return kept, skipped


def _module_battery(kernel, cases, seed, mask_convention, empty_row) -> BatteryReport:
    """A module's battery: cases in its own widths (or the given ones), what it cannot
    take skipped; diagnosis is for single-head kernels, so none is named."""
    from symbolic_attn.numerics.modules import module_cases, run_module_case  # noqa: F811

    given = isinstance(cases, (list, tuple))
    if not given and (isinstance(cases, bool) or not isinstance(cases, int) or not 0 <= cases <= MAX_RANDOM):
        raise ImplementationError(f"the number of random cases must be a whole number in 0..{MAX_RANDOM}, got {shown(cases)}")
    chosen = [_as_case(case, number) for number, case in enumerate(cases, start=1)] if given else \
        module_cases(kernel, cases, seed, empty_row)
    chosen, left_out = select(chosen, kernel.capabilities)
    reports = []
    for number, case in enumerate(chosen, start=1):
        with doing(f"running {shown(kernel.name)} on case {shown(case.name)} ({number} of {len(chosen)})"):
            reports.append(run_module_case(kernel, case.q, case.k, case.v, case.mask, empty_row=empty_row,
                                           mask_convention=mask_convention, name=case.name))
    return BatteryReport(kernel.dtype, tuple(reports), tuple(() for _ in reports), (), mask_convention, empty_row,
                         tuple(left_out))


def assert_attention_close(fn, *, dtype="float32", cases=8, seed=0, mask_convention="keep", empty_row="error",
                           capabilities: Capabilities | None = None) -> BatteryReport:
    """For a pytest suite: raise ``AssertionError`` (with the table and the diagnosis)
    unless every case of the battery is within the ``dtype`` bounds of the exact result."""
    report = run_battery(fn, dtype=dtype, cases=cases, seed=seed, mask_convention=mask_convention, empty_row=empty_row,
                         capabilities=capabilities)
    if not report.passed:
        raise AssertionError("attention implementation outside the exact error bounds\n" + report.table())
    return report
