"""Hypothesis strategies for your own property tests: exact rational matrices, masks
that leave every query a key, whole attention cases (needs the ``hypothesis`` package).

>>> from hypothesis import given, settings
>>> from symbolic_attn import attention
>>> @settings(max_examples=5, database=None)
... @given(attention_cases(max_n=3, max_m=3))
... def blocked_weights_are_zero(case):
...     weights = attention(case.q, case.k, case.v, mask=case.mask).weights
...     if case.mask is not None:
...         assert all(weights[i, j] == 0 for i, j in zip(*case.blocked()))
>>> blocked_weights_are_zero()
"""

from symbolic_attn.numerics.strategies import attention_cases, masks, rational_matrices, rationals

__all__ = ["rationals", "rational_matrices", "masks", "attention_cases"]
