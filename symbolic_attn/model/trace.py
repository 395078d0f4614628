r"""A trace: the named stages of one exact computation, and the ONE selection helper.

Every computation of the model layer (attention today; heads, positions, LayerNorm and
whole blocks later) can be seen as a :class:`Trace`: an ordered mapping from *stage paths*
to exact matrices.  A path is a dotted name, each part optionally indexed from 1::

    weights            output             head[2].weights        block.norm1

Claims, diagnosis, reports and display all find what they need with :func:`select`
(path, row, col -> the entries and their 1-based positions), so "row 3, column 2 of the
weights" is spelled out in exactly one place.

Stages are computed lazily: a stage may be given as a matrix or as a function of no
arguments that computes it the first time it is asked for.

>>> import sympy
>>> t = Trace({"scores": sympy.Matrix([[1, 2], [3, 4]]), "output": lambda: sympy.Matrix([[5, 6]])})
>>> list(t)
['scores', 'output']
>>> t["output"]
Matrix([[5, 6]])
>>> t.output == t["output"]
True
>>> s = select(t, "scores", col=2)
>>> s.entries, s.positions, s.shape
([2, 4], [(1, 2), (2, 2)], (2,))
>>> nested = Trace({}).with_nested("head[1]", t)
>>> list(nested)
['head[1].scores', 'head[1].output']
>>> select(t, "weights")
Traceback (most recent call last):
...
symbolic_attn.errors.StageError: unknown stage 'weights': expected one of scores, output
"""

from __future__ import annotations

import contextvars
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from collections.abc import Callable

import sympy

from symbolic_attn.errors import StageError, shown

__all__ = ["Trace", "Selection", "select", "check_path", "stage_matrix", "PATH", "STAGE_ALIASES", "known_path"]

#: A stage path: dotted names, each optionally indexed from 1 (``head[2].weights``).
PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[1-9][0-9]{0,3}\])?(\.[A-Za-z_][A-Za-z0-9_]*(\[[1-9][0-9]{0,3}\])?)*$")
MAX_PATH_LENGTH = 200


def check_path(path) -> str:
    """``path`` if it is a well-formed stage path, else a :class:`StageError` naming it.

    >>> check_path("head[2].weights")
    'head[2].weights'
    >>> check_path("head[0]")
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.StageError: malformed stage path 'head[0]': ...
    """
    if not isinstance(path, str) or len(path) > MAX_PATH_LENGTH or not PATH.match(path):
        raise StageError(
            f"malformed stage path {shown(path)!r}: expected names joined by '.', each optionally "
            "indexed from 1, as in 'weights' or 'head[2].weights'"
        )
    return path


#: Other names sources give a stage, read as the stage itself where no stage has the name:
#: the masked scores S' + M (PyTorch's and the issue's ``A.masked_scores``) are ``masked``.
STAGE_ALIASES = {"masked_scores": "masked"}


def known_path(path, paths):
    """``path`` if it is one of ``paths``; else the stage it is another name for, when that
    one is (``A.masked_scores`` -> ``A.masked``); else ``path`` unchanged.

    >>> known_path("A.masked_scores", ["A.scores", "A.masked"]), known_path("masked_scores", ["masked_scores"])
    ('A.masked', 'masked_scores')
    """
    if not isinstance(path, str) or path in paths:
        return path
    head, dot, last = path.rpartition(".")
    other = head + dot + STAGE_ALIASES.get(last, last)
    return other if other in paths else path


class Trace(Mapping):
    """Ordered stage path -> exact matrix; stages given as functions are computed once.

    ``decimals`` (optional) is a function ``(path, digits, significant) -> rows of str``
    that a computation with a faster certified route (attention's arb intervals) provides;
    otherwise each entry is rounded on its own by :func:`~symbolic_attn.exact.certified.decimal_string`.
    """

    def __init__(self, stages: Mapping[str, object], *, decimals: Callable | None = None, settings: Mapping | None = None):
        if not isinstance(stages, Mapping):
            raise StageError(f"Trace: stages must be a mapping of stage paths to matrices, got {shown(stages)}")
        if decimals is not None and not callable(decimals):
            raise StageError(f"Trace: decimals must be a function (path, digits, significant) or None, got {shown(decimals)}")
        if settings is not None and not isinstance(settings, Mapping):
            raise StageError(f"Trace: settings must be a mapping or None, got {shown(settings)}")
        self._stages = {check_path(name): stage for name, stage in stages.items()}
        self._values: dict[str, sympy.ImmutableMatrix] = {}
        self._decimals = decimals
        #: What produced the trace (scale, mask, options...), for display and diagnosis.
        self.settings = dict(settings or {})
        # A stage given as a function is computed under the bounds in force where the trace
        # was built (a computation file's node limit, say), not wherever it is first read.
        self._context = contextvars.copy_context()

    def __getitem__(self, path: str) -> sympy.ImmutableMatrix:
        if not isinstance(path, str) or path not in self._stages:
            check_path(path)
            raise StageError(f"unknown stage {shown(path)!r}: expected one of {', '.join(self._stages) or 'none'}")
        if path not in self._values:
            stage = self._stages[path]
            value = self._context.copy().run(stage) if callable(stage) else stage
            self._values[path] = stage_matrix(value, path)
        return self._values[path]

    def __getattr__(self, name: str):
        # ``trace.output`` as ``trace["output"]``, like AttentionResult's attributes; only
        # for plain stage names (dotted paths need ``trace["head[2].weights"]``).
        stages = self.__dict__.get("_stages")
        if stages is not None and not name.startswith("_") and name in stages:
            return self[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute or stage {name!r}")

    def __iter__(self):
        return iter(self._stages)

    def __contains__(self, path) -> bool:
        return isinstance(path, str) and path in self._stages

    def __len__(self) -> int:
        return len(self._stages)

    def __repr__(self) -> str:
        return f"<Trace {', '.join(self._stages)}>"

    # Notebooks: every stage, exact, with certified decimals beside (render.notebook).

    def _repr_markdown_(self) -> str:
        from symbolic_attn.render.notebook import trace_markdown

        return trace_markdown(self)

    def _repr_latex_(self) -> str:
        from symbolic_attn.render.notebook import trace_latex

        return trace_latex(self)

    def shape(self, path: str) -> tuple[int, int]:
        value = self[path]
        return value.rows, value.cols

    def with_nested(self, prefix: str, other: Trace) -> Trace:
        """This trace plus every stage of ``other`` under ``prefix.`` (``head[2].weights``).

        Each stage keeps its own route to certified decimals (a nested attention keeps its
        fast intervals).
        """
        check_path(prefix)
        if not isinstance(other, Trace):
            raise StageError(f"with_nested({prefix!r}, ...): expected a Trace to nest, got {shown(other)}")
        stages = dict(self._stages)
        routes = {path: self for path in self._stages}
        for path in other:
            stages[f"{prefix}.{path}"] = (lambda p=path: other[p])
            routes[f"{prefix}.{path}"] = (other, path)

        def decimals(path, digits, significant):
            route = routes[path]
            if isinstance(route, tuple):
                return route[0].decimals(route[1], digits, significant)
            return route.decimals(path, digits, significant)

        nested = Trace(stages, decimals=decimals, settings=self.settings)
        return nested

    def decimals(self, path: str, digits: int = 3, significant: bool = False) -> list[list[str | None]]:
        """Certified decimals of one stage (``None`` for an entry with free symbols)."""
        from symbolic_attn.exact.certified import decimal_string

        if self._decimals is not None and path in self._stages:
            return self._decimals(path, digits, significant)
        value = self[path]
        return [[None if e.free_symbols else decimal_string(e, digits, significant) for e in value.row(i)]
                for i in range(value.rows)]


@dataclass(frozen=True)
class Selection:
    """Part of a stage: its entries in reading order and their 1-based (row, col) positions.

    ``shape`` is ``None`` for one entry, ``(k,)`` for a row or column, ``(rows, cols)``
    for a whole matrix.
    """

    path: str
    row: int | None
    col: int | None
    entries: list
    positions: list
    shape: tuple | None

    def where(self, index: int) -> str:
        """``'weights[3,2]'``: where entry ``index`` of the selection is, for messages."""
        i, j = self.positions[index]
        return f"{self.path}[{i},{j}]"


def stage_matrix(value, path: str) -> sympy.ImmutableMatrix:
    """The value of stage ``path`` as an immutable matrix of SymPy expressions; anything
    else (``None``, a number, a ragged list, a binary float) is a :class:`StageError`.

    >>> stage_matrix([[1, 2]], "scores")
    Matrix([[1, 2]])
    >>> stage_matrix(5, "scores")
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.StageError: stage 'scores' is not a matrix: got 5 (int)
    """
    if isinstance(value, sympy.MatrixBase):
        return sympy.ImmutableMatrix(value)
    if hasattr(value, "tolist") and not isinstance(value, sympy.Basic):
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or not value:
        raise StageError(f"stage {shown(path)!r} is not a matrix: got {shown(value)} ({type(value).__name__})")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SymPy's deprecation of non-Expr entries: refused below
            matrix = sympy.ImmutableMatrix(value)
    except Exception:  # SymPy's TypeError/ValueError for ragged or nested junk
        raise StageError(f"stage {shown(path)!r} is not a matrix: got {shown(value, 60)}") from None
    if not matrix.rows or not matrix.cols:
        raise StageError(f"stage {shown(path)!r} is an empty matrix ({matrix.rows}x{matrix.cols})")
    for entry in matrix:
        if not isinstance(entry, sympy.Expr) or isinstance(entry, sympy.Float):
            raise StageError(f"stage {shown(path)!r} has an entry {shown(entry)} that is not an exact number")
    return matrix


def _matrix_like(value, path: str):
    """A stage of a plain mapping: anything with a (rows, cols) ``shape`` and ``[i, j]``
    entries as it is (the graders' lazy views), otherwise an exact matrix or a StageError."""
    shape = getattr(value, "shape", None)
    if (isinstance(shape, tuple) and len(shape) == 2 and all(isinstance(n, int) and n > 0 for n in shape)
            and hasattr(value, "__getitem__")):
        return value
    return stage_matrix(value, path)


def select(source, path: str, row: int | None = None, col: int | None = None) -> Selection:
    """Entries of ``source[path]`` at 1-based ``row``/``col`` (``None`` = all), with positions.

    ``source`` is a :class:`Trace` or any mapping of paths to matrices.  A row or column
    outside the stage is a :class:`StageError` naming the stage and its shape.

    >>> select(None, "weights")
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.StageError: select: the source must be a Trace or a mapping of stage paths to matrices, got None
    """
    if not isinstance(source, Mapping):
        raise StageError(f"select: the source must be a Trace or a mapping of stage paths to matrices, got {shown(source)}")
    if isinstance(source, Trace):
        matrix = source[path]
    else:
        check_path(path)
        if path not in source:
            raise StageError(f"unknown stage {path!r}: expected one of {', '.join(map(str, source)) or 'none'}")
        matrix = _matrix_like(source[path], path)
    rows, cols = matrix.shape
    for name, index, size in (("row", row, rows), ("column", col, cols)):
        if index is not None and (isinstance(index, bool) or not isinstance(index, int) or not 1 <= index <= size):
            raise StageError(f"{name} {shown(index)} is outside {path}, which is {rows}x{cols} (rows and columns count from 1)")
    row_range = [row] if row is not None else range(1, rows + 1)
    col_range = [col] if col is not None else range(1, cols + 1)
    positions = [(i, j) for i in row_range for j in col_range]
    entries = [matrix[i - 1, j - 1] for i, j in positions]
    if row is not None and col is not None:
        shape = None
    elif row is not None:
        shape = (cols,)
    elif col is not None:
        shape = (rows,)
    else:
        shape = (rows, cols)
    return Selection(path, row, col, entries, positions, shape)
