"""Test a numeric attention implementation against the exact result.

Importable without numpy: numpy is imported only when arrays have to be built.

>>> import numpy as np
>>> def attend(q, k, v, mask):
...     s = q @ k.T / np.sqrt(np.asarray(q.shape[-1], dtype=q.dtype))
...     s = np.where(mask, s, -np.inf) if mask is not None else s
...     w = np.exp(s - s.max(axis=-1, keepdims=True))
...     return (w / w.sum(axis=-1, keepdims=True)) @ v
>>> compare_attention(attend, [[1, 0]], [[1, 0], [0, 1]], [[1, 2], [3, 4]]).verdict
'pass'
>>> report = assert_attention_close(attend, dtype="float64", cases=2)
"""

from symbolic_attn.numerics.adapters import CONVENTIONS, KEY_CONVENTIONS, causal, causal_alignment, from_convention, to_convention
from symbolic_attn.numerics.backward import (
    assert_attention_backward_close, compare_attention_backward, jax_vjp, torch_autograd)
from symbolic_attn.numerics.backward_cases import GradientCase
from symbolic_attn.numerics.battery import KernelCase, battery
from symbolic_attn.numerics.bounds import EXP_ULPS
from symbolic_attn.numerics.capabilities import Capabilities
from symbolic_attn.numerics.compare import CaseReport, StageReport
from symbolic_attn.numerics.diagnose import DIAGNOSES
from symbolic_attn.numerics.suite import BatteryReport, assert_attention_close, compare_attention, run_battery

__all__ = [
    "compare_attention",
    "assert_attention_close",
    "run_battery",
    "battery",
    "KernelCase",
    "Capabilities",
    "CaseReport",
    "StageReport",
    "BatteryReport",
    "DIAGNOSES",
    "EXP_ULPS",
    "CONVENTIONS",
    "KEY_CONVENTIONS",
    "to_convention",
    "from_convention",
    "causal",
    "causal_alignment",
    "compare_attention_backward",
    "assert_attention_backward_close",
    "torch_autograd",
    "jax_vjp",
    "GradientCase",
]
