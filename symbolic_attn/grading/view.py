r"""A lazy view of a result's stages, for judging claims without building closed forms.

:func:`symbolic_attn.model.trace.select` finds a claim's entries and positions in any
mapping of stage paths to matrices.  :class:`StageView` is such a mapping whose matrices
know their shape at once but give their entries as *functions*: the exact closed form of a
stage is built only if a claim cannot be settled by the certified intervals
(:meth:`StageView.balls`), or when a report prints it.

A view may override stages with exact matrices (rounded weights; given as a function of no
arguments, computed when first needed), or show every stage as
written down wrongly -- transposed, or times a power of ten -- which is how diagnosis
tests the mistakes ``transposed`` and ``decimal_point`` on the same trace.

>>> from symbolic_attn.model.attention import attention_from_scores
>>> from symbolic_attn.model.trace import select
>>> view = StageView(attention_from_scores([[0, 0], [0, 0]], [[1], [3]]))
>>> s = select(view, "weights", row=2)
>>> s.positions, [entry() for entry in s.entries]
([(2, 1), (2, 2)], [1/2, 1/2])
>>> [ball.mid().str(5) for ball in view.balls("output", [(1, 1)])]
['2.0000']
"""

from collections.abc import Mapping

import sympy

from symbolic_attn.errors import StageError, SymbolicAttnError, shown
from symbolic_attn.exact import certified as numeric

__all__ = ["StageView", "INTERVAL_BITS"]

INTERVAL_BITS = 128
_STAGES = ("scores", "scaled", "weights", "output")


class _LazyMatrix:
    """Shape now, entries as functions (``matrix[i, j]`` is a thunk), exact matrix once.

    ``grid`` (optional): the entries as rows of exact numbers, already known (an override),
    so that an entry needs no matrix at all.
    """

    def __init__(self, shape, build, grid=None):
        self.shape = shape
        self._build = build
        self._grid = grid
        self._value = None

    def exact(self):
        if self._value is None:
            self._value = self._build()
        return self._value

    def __getitem__(self, index):
        i, j = index
        if self._grid is not None:
            return lambda: self._grid[i][j]
        return lambda: self.exact()[i, j]


class StageView(Mapping):
    """Stage path -> lazy matrix over an AttentionResult (its trace), overrides, transform."""

    def __init__(self, result, overrides=None, transpose: bool = False, factor=1):
        self.result = result
        self.overrides = dict(overrides or {})
        self.transpose = transpose
        self.factor = sympy.sympify(factor, strict=True) if not isinstance(factor, sympy.Basic) else factor
        self._paths = list(result.trace)
        self._matrices = {}
        self._selections = {}

    def override(self, path):
        """The rows of exact numbers overriding ``path`` (computed now if given as a function;
        a matrix is turned into rows)."""
        value = self.overrides[path]
        if callable(value):
            value = value()
        if isinstance(value, sympy.MatrixBase):
            value = value.tolist()
        self.overrides[path] = value
        return value

    def select(self, path, row=None, col=None):
        """:func:`symbolic_attn.model.trace.select` on this view, remembered per (path, row, col):
        diagnosis asks the same question of one variant for every claim."""
        from symbolic_attn.model.trace import select

        key = (path, row, col)
        if key not in self._selections:
            self._selections[key] = select(self, path, row, col)
        return self._selections[key]

    def __iter__(self):
        return iter(self._paths)

    def __len__(self):
        return len(self._paths)

    def _shape(self, path):
        if path in self.overrides:
            grid = self.override(path)
            shape = (len(grid), len(grid[0]))
        elif path in _STAGES:
            shape = self.result.stage_shape(path)
        else:
            shape = self.result.trace.shape(path)  # inputs: already exact matrices
        return shape[::-1] if self.transpose else shape

    def _exact(self, path):
        matrix = sympy.ImmutableMatrix(self.override(path)) if path in self.overrides else self.result.trace[path]
        if self.transpose:
            matrix = matrix.T
        if self.factor != 1:
            matrix = matrix.applyfunc(lambda entry: self.factor * entry)
        return sympy.ImmutableMatrix(matrix)

    def __getitem__(self, path):
        if path not in self._matrices:
            if path not in self._paths:
                raise StageError(f"unknown stage {shown(path)!r}: expected one of {', '.join(self._paths)}")
            grid = None
            if path in self.overrides and not self.transpose:
                grid = self.override(path)
                if self.factor != 1:
                    grid = [[self.factor * entry for entry in row] for row in grid]
            self._matrices[path] = _LazyMatrix(self._shape(path), lambda: self._exact(path), grid)
        return self._matrices[path]

    def exact(self, path):
        """The whole exact stage (built now)."""
        return self[path].exact()

    def balls(self, path, positions):
        """Certified enclosures of the entries at 1-based ``positions``, or None when the
        stage has no cheap intervals (given inputs and overrides are exact rationals)."""
        if path not in _STAGES or path in self.overrides:
            return None
        try:
            grid = self.result.intervals(path, INTERVAL_BITS)
        except SymbolicAttnError:
            return None
        if self.factor != 1:
            with numeric.working_precision(INTERVAL_BITS):
                factor = numeric.to_arb(self.factor)
                return [factor * (grid[j - 1][i - 1] if self.transpose else grid[i - 1][j - 1]) for i, j in positions]
        return [grid[j - 1][i - 1] if self.transpose else grid[i - 1][j - 1] for i, j in positions]
