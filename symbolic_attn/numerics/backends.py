"""Array libraries, found through ``sys.modules`` and imported only when arrays are needed.

``import symbolic_attn.testing`` must work on a machine without numpy: numpy is imported
the first time the oracle has to build float arrays, and JAX or PyTorch arrays returned by
an implementation are recognised by their type's module, never by importing the library.

The float formats the oracle knows: IEEE 754 binary16, binary32 and binary64, and
bfloat16 (float32's range, 8 bits of precision; numpy arrays of it come from
``ml_dtypes``, which JAX installs):

>>> FORMATS["float32"].unit_roundoff == 2.0 ** -24
True
>>> FORMATS["float16"].unit_roundoff == 2.0 ** -11, FORMATS["float16"].largest
(True, 65504.0)
>>> FORMATS["bfloat16"].unit_roundoff == 2.0 ** -8, FORMATS["bfloat16"].largest == FORMATS["float32"].largest
(True, False)
>>> ulp(1.0, "float32") == 2.0 ** -23
True
>>> exact_value(0.1)
Fraction(3602879701896397, 36028797018963968)
"""

from __future__ import annotations

import importlib
import math
import sys
from dataclasses import dataclass
from fractions import Fraction

from symbolic_attn.errors import BackendError, ShapeError, shown

__all__ = ["FloatFormat", "FORMATS", "HALF", "float_format", "numpy", "numpy_dtype", "to_numpy", "exact_value", "ulp",
           "round_to"]


@dataclass(frozen=True)
class FloatFormat:
    """An IEEE binary format: ``precision`` bits of significand (implicit bit included)."""

    name: str
    precision: int
    min_exponent: int  # the exponent of the smallest normal number, 2**min_exponent
    max_exponent: int  # the largest finite number is below 2**(max_exponent + 1)

    @property
    def unit_roundoff(self) -> float:
        """u = 2**-p: the relative error of one correctly rounded operation."""
        return 2.0 ** -self.precision

    @property
    def smallest_normal(self) -> float:
        return 2.0 ** self.min_exponent

    @property
    def smallest_subnormal(self) -> float:
        return 2.0 ** (self.min_exponent - self.precision + 1)

    @property
    def largest(self) -> float:
        return (2.0 - 2.0 ** (1 - self.precision)) * 2.0 ** self.max_exponent

    @property
    def log_largest(self) -> float:
        """ln of the largest finite number: exp(x) overflows for x above it."""
        return math.log(self.largest)

    def gamma(self, n: int) -> float:
        """gamma_n = n u / (1 - n u), the bound of n chained roundings (Higham, Lemma 3.1)."""
        nu = n * self.unit_roundoff
        if nu >= 1:
            return math.inf
        return nu / (1 - nu)


FORMATS = {
    "float16": FloatFormat("float16", 11, -14, 15),
    "bfloat16": FloatFormat("bfloat16", 8, -126, 127),
    "float32": FloatFormat("float32", 24, -126, 127),
    "float64": FloatFormat("float64", 53, -1022, 1023),
}
#: The half-precision formats (kernels commonly accumulate them in float32).
HALF = ("float16", "bfloat16")


def float_format(dtype) -> FloatFormat:
    """The format named ``dtype`` ("float16", "bfloat16", "float32" or "float64"; numpy
    and torch dtypes accepted)."""
    name = getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or dtype
    if isinstance(name, str) and name.startswith("torch."):  # torch.float16 has no name
        name = name[len("torch."):]
    elif not isinstance(name, str) and type(dtype).__module__.split(".")[0] == "torch":
        name = str(dtype).removeprefix("torch.")
    if not isinstance(name, str) or name not in FORMATS:
        raise BackendError(f"unknown dtype {shown(dtype)!r}: expected one of {', '.join(FORMATS)}")
    return FORMATS[name]


def numpy():
    """The numpy module: already imported by the caller, else imported now."""
    module = sys.modules.get("numpy")
    if module is not None:
        return module
    try:
        return importlib.import_module("numpy")
    except ImportError:
        raise BackendError("numpy is needed to build float arrays for an implementation: pip install numpy") from None


def numpy_dtype(dtype):
    """The numpy dtype of a format (bfloat16 through ``ml_dtypes``, imported only here)."""
    np = numpy()
    fmt = float_format(dtype)
    if fmt.name != "bfloat16":
        return np.dtype(fmt.name)
    try:
        ml_dtypes = importlib.import_module("ml_dtypes")
    except ImportError:
        raise BackendError("bfloat16 arrays need the ml_dtypes package (JAX installs it): pip install ml_dtypes") from None
    return np.dtype(ml_dtypes.bfloat16)


def to_numpy(array, name: str = "output"):
    """A numpy array from whatever an implementation returned (numpy, JAX, PyTorch, lists).

    PyTorch tensors are recognised by their ``detach`` method and type module, never by
    importing torch; JAX arrays convert through ``__array__``.
    """
    np = numpy()
    if type(array).__module__.split(".")[0] == "torch" and hasattr(array, "detach"):
        array = array.detach().cpu()
        if str(array.dtype) == "torch.bfloat16":
            array = array.float()
        array = array.numpy()
    try:
        result = np.asarray(array)
    except (TypeError, ValueError) as error:
        raise ShapeError(f"{name}: cannot read {type(array).__name__} as an array: {shown(error)}") from None
    if result.dtype.name == "bfloat16":  # ml_dtypes' kind is "V"; every bfloat16 is a float32
        result = result.astype(np.float32)
    if result.dtype.kind not in "fiub":
        raise ShapeError(f"{name}: expected real numbers, got an array of dtype {result.dtype}")
    # Leading axes of size 1 (batch, heads) are accepted and dropped.
    while result.ndim > 2 and result.shape[0] == 1:
        result = result[0]
    if result.ndim == 1:
        result = result[None, :]
    if result.ndim != 2:
        raise ShapeError(f"{name}: expected a matrix, got an array of shape {tuple(result.shape)}")
    return result


def exact_value(x) -> Fraction | None:
    """The exact rational value of a float (every finite float is a dyadic rational);
    ``None`` for NaN and infinities."""
    x = float(x)
    if not math.isfinite(x):
        return None
    return Fraction(x)


def ulp(x: float, dtype) -> float:
    """The unit in the last place of ``x`` in ``dtype`` (for 0: the smallest subnormal)."""
    fmt = float_format(dtype)
    x = abs(float(x))
    if x == 0 or not math.isfinite(x):
        return fmt.smallest_subnormal
    exponent = max(math.frexp(x)[1] - 1, fmt.min_exponent)
    return 2.0 ** (exponent - fmt.precision + 1)


def round_to(values, dtype):
    """``values`` (nested lists of exact numbers or floats) as a numpy array of ``dtype``."""
    np = numpy()
    return np.array([[float(v) for v in row] for row in values], dtype=numpy_dtype(dtype))
