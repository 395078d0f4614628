"""Test configuration shared by the test suite and the doctests in symbolic_attn/."""

import os

# Pin SymPy's ground types before anything imports SymPy, so that results print the same
# on every machine (python-flint, which we depend on, would otherwise be picked up).
os.environ.setdefault("SYMPY_GROUND_TYPES", "python")

from hypothesis import HealthCheck, settings

# Exact arithmetic on a shared 2-core machine: per-example timing is noise, not a signal.
settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=60
)
settings.load_profile("default")

# Running ``python -m symbolic_attn`` is the command line, not a module to doctest.
collect_ignore = ["symbolic_attn/__main__.py"]
