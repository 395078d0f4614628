r"""Building a :class:`~symbolic_attn.model.trace.Trace` from stages and nested traces.

Every operation of the model layer (heads, positions, LayerNorm, feed-forward, blocks)
returns a trace built here.  A stage is a matrix (or a function computing it); a nested
trace is placed under a prefix, and the prefix alone names its final ``output``, so that
``attention`` is the multi-head output and ``attention.head[2].weights`` one head's weights.

Decimals stay certified and as fast as the nested trace can give them: a nested stage
asks its own trace (attention's batched arb route), every other stage is rounded entry by
entry through :func:`~symbolic_attn.model.certify.decimal_text` (erf and tanh included).

>>> import sympy
>>> inner = Trace({"hidden": sympy.Matrix([[1, -1]]), "output": sympy.Matrix([[1, 0]])})
>>> t = build_trace([("ffn", inner), ("output", lambda: sympy.Matrix([[sympy.Rational(1, 3)]]))])
>>> list(t)
['ffn', 'ffn.hidden', 'ffn.output', 'output']
>>> t["ffn"]
Matrix([[1, 0]])
>>> t.decimals("output", 3)
[['0.333']]
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable
from contextlib import contextmanager

import sympy

from symbolic_attn.errors import InputLimitError, ShapeError, UndecidedError
from symbolic_attn.model.certify import matrix_decimals
from symbolic_attn.model.trace import Trace

__all__ = ["has_stage", "build_trace", "output_of", "row_broadcast", "as_operand", "MaskSpec", "resolve_mask", "product",
           "check_size", "MAX_NODES", "node_limit", "default_node_limit", "ClosedFormTooLarge", "check_flag", "check_choice", "check_options", "decided_scalar"]


def check_flag(value, name: str) -> bool:
    """``value`` if it is a bool; anything else (``'no'`` is truthy!) is a typed error.

    >>> check_flag("no", "encoder_block: residual")
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.ShapeError: encoder_block: residual must be True or False, got 'no'
    """
    from symbolic_attn.errors import shown

    if not isinstance(value, bool):
        raise ShapeError(f"{name} must be True or False, got {shown(repr(value) if isinstance(value, str) else value)}")
    return value


def check_choice(value, choices, name: str) -> str:
    """``value`` if it is one of the named ``choices`` (text); else a typed error naming it."""
    from symbolic_attn.errors import shown

    if not isinstance(value, str) or value not in choices:
        raise ShapeError(f"unknown {name} {shown(repr(value) if isinstance(value, str) else value)}: "
                         f"expected one of {', '.join(choices)}")
    return value


def check_options(options, allowed, name: str) -> dict:
    """``options`` (None or a mapping of keyword names in ``allowed``) as a dict."""
    from collections.abc import Mapping

    from symbolic_attn.errors import shown

    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ShapeError(f"{name} must be a mapping of keyword arguments, got {shown(options)}")
    for key in options:
        if not isinstance(key, str) or key not in allowed:
            raise ShapeError(f"{name}: unknown option {shown(repr(key) if isinstance(key, str) else key)}: "
                             f"expected one of {', '.join(allowed)}")
    return dict(options)


def decided_scalar(value, name: str):
    """``value`` (exact) once its sign is decided exactly: a certified nonzero sign, or a
    proved exact zero (then ``0`` itself: ``sin(pi)``, ``log(8) - 3 log(2)``).  A value that
    neither decides (``1/(log(8) - 3 log(2))`` divides by a zero in disguise) is an
    :class:`UndecidedError` naming ``name``.  A value with free symbols is kept as it is.

    >>> decided_scalar(sympy.log(8) - 3 * sympy.log(2), "scale")
    0
    >>> decided_scalar(1 / (sympy.log(8) - 3 * sympy.log(2)), "scale")
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.UndecidedError: scale 1/(-3*log(2) + log(8)): its sign is not decided (is it 0, or does it divide by a disguised 0?)
    """
    from symbolic_attn.errors import shown
    from symbolic_attn.exact.certified import certified_sign, proved_zero

    if value.free_symbols:
        return value
    try:
        sign = certified_sign(value)
    except UndecidedError:
        sign = None
    if sign:
        return value
    if sign == 0 or proved_zero(value):
        return sympy.S.Zero
    raise UndecidedError(f"{name} {shown(value)}: its sign is not decided (is it 0, or does it divide by a disguised 0?)")


def build_trace(entries: Iterable[tuple[str, object]], settings=None) -> Trace:
    """A trace from ``(name, stage)`` pairs in order; a stage that is a Trace is nested."""
    stages: dict = {}
    delegated: dict = {}  # path -> (nested trace, its own path)
    for name, stage in entries:
        if isinstance(stage, Trace):
            if has_stage(stage, "output"):
                stages[name] = (lambda s=stage: s["output"])
                delegated[name] = (stage, "output")
            for path in stage:
                stages[f"{name}.{path}"] = (lambda s=stage, p=path: s[p])
                delegated[f"{name}.{path}"] = (stage, path)
        else:
            stages[name] = stage
    trace: Trace

    def decimals(path, digits, significant):
        if path in delegated:
            inner, inner_path = delegated[path]
            try:
                return inner.decimals(inner_path, digits, significant)
            except UndecidedError:  # e.g. a nested route that does not skip symbolic entries
                pass
        return matrix_decimals(trace[path], digits, significant)

    trace = Trace(stages, decimals=decimals, settings=settings)
    return trace


def has_stage(trace, path: str) -> bool:
    """Whether ``trace`` has the stage ``path`` (a Mapping's ``in`` would ask for the
    value, and an unknown stage is a StageError rather than a KeyError)."""
    return any(p == path for p in trace)


def output_of(value) -> sympy.ImmutableMatrix:
    """A trace's final ``output``, or the matrix itself."""
    if isinstance(value, Trace):
        return value["output"]
    return sympy.ImmutableMatrix(value)


def as_operand(value, name: str) -> sympy.ImmutableMatrix:
    """An exact matrix from a matrix, a trace (its output) or nested lists/text."""
    from symbolic_attn.exact.convert import to_matrix

    if isinstance(value, Trace):
        return value["output"]
    if isinstance(value, sympy.MatrixBase) and value.rows and value.cols:
        # Structural checks only: to_matrix would also ask SymPy whether each entry is real,
        # which for the large closed forms passed between sublayers is a slow numeric
        # evaluation (they are real by construction).
        from symbolic_attn.errors import FloatInputError, ParseError

        if value.has(sympy.Float):
            raise FloatInputError(f"{name}: SymPy Float refused: use Rational or a decimal string")
        if value.has(sympy.nan, sympy.zoo, sympy.oo, -sympy.oo, sympy.I):
            raise ParseError(f"{name}: entries must be finite real numbers")
        return sympy.ImmutableMatrix(value)
    return to_matrix(value, name=name)


def row_broadcast(value, rows: int, cols: int, name: str, default=None) -> sympy.ImmutableMatrix:
    """``value`` as a rows x cols matrix: a scalar fills it, a 1 x cols row repeats.

    >>> row_broadcast(sympy.Matrix([[1, 2]]), 2, 2, "b1")
    Matrix([
    [1, 2],
    [1, 2]])
    >>> row_broadcast(sympy.Matrix([[1, 2, 3]]), 2, 2, "b1")
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.ShapeError: b1 is 1x3: expected a number, a 1x2 row or a 2x2 matrix
    """
    from symbolic_attn.exact.convert import to_exact, to_matrix

    if value is None:
        value = default
    if isinstance(value, Trace):
        value = value["output"]
    if not isinstance(value, (sympy.MatrixBase, list, tuple, str)):
        scalar = to_exact(value)
        return sympy.ImmutableMatrix(rows, cols, [scalar] * (rows * cols))
    matrix = to_matrix(value, name=name)
    if matrix.shape == (1, 1) and cols != 1:
        return sympy.ImmutableMatrix(rows, cols, [matrix[0, 0]] * (rows * cols))
    if matrix.shape == (rows, cols):
        return matrix
    if matrix.shape == (1, cols):
        return sympy.ImmutableMatrix.vstack(*([matrix] * rows))
    raise ShapeError(
        f"{name} is {matrix.rows}x{matrix.cols}: expected a number, a 1x{cols} row or a {rows}x{cols} matrix"
    )


class MaskSpec:
    """A mask waiting for its size: ``padding(k)`` is only a grid once n and m are known.

    >>> MaskSpec("padding", 1).resolve(2, 3)
    Mask.keep([[1, 0, 0], [1, 0, 0]])
    """

    KINDS = ("none", "causal", "keep", "block", "padding")

    def __init__(self, kind: str, argument=None):
        from symbolic_attn.errors import MaskError, shown

        if not isinstance(kind, str) or kind not in self.KINDS:
            raise MaskError(f"unknown mask {shown(kind)!r}: expected one of {', '.join(self.KINDS)}")
        self.kind, self.argument = kind, argument

    def resolve(self, n: int, m: int):
        from symbolic_attn.errors import MaskError
        from symbolic_attn.model.masks import Mask

        if self.kind == "none":
            return Mask.full(n, m)
        if self.kind == "causal":
            return Mask.causal(n, m)
        if self.kind == "padding":
            return Mask.padding(n, m, self.argument)
        grid = self.argument.tolist() if isinstance(self.argument, sympy.MatrixBase) else self.argument
        mask = Mask.keep(grid) if self.kind == "keep" else Mask.block(grid)
        if mask.shape != (n, m):
            raise MaskError(f"{self.kind} mask is {mask.shape[0]}x{mask.shape[1]} but the scores are {n}x{m}")
        return mask

    def __repr__(self) -> str:
        return f"MaskSpec({self.kind!r})" if self.argument is None else f"MaskSpec({self.kind!r}, ...)"


def resolve_mask(mask, n: int, m: int):
    """``None``/'none', 'causal', a :class:`MaskSpec` or a Mask -> an n x m Mask."""
    from symbolic_attn.model.masks import as_mask

    if isinstance(mask, MaskSpec):
        return mask.resolve(n, m)
    return as_mask(mask, n, m)


def product(A, B) -> sympy.ImmutableMatrix:
    """The exact matrix product A B, skipping zero terms and unit factors: the one product
    of the model (attention's Q K^T and A V, heads, blocks) and of diagnosis.

    Rational matrices multiply through python-flint.

    SymPy's own product forms ``0 * x`` for every zero weight, and ``Mul`` then asks whether
    ``x`` is finite, which for a large closed form means a slow numeric evaluation; weights
    are mostly 0 and 1 in exercises, so skipping them keeps blocks fast (same exact value).

    >>> product(sympy.Matrix([[1, 0], [0, 2]]), sympy.Matrix([[sympy.exp(1)], [3]]))
    Matrix([
    [E],
    [6]])
    """
    if A.cols != B.rows:
        raise ShapeError(f"cannot multiply {A.rows}x{A.cols} by {B.rows}x{B.cols}")
    a_rows = A.tolist()
    if A.rows and B.cols and all(e.is_Rational for row in a_rows for e in row) and all(e.is_Rational for e in B):
        return _rational_product(a_rows, B.tolist())
    b_cols = [list(column) for column in zip(*B.tolist())] if B.rows else [[] for _ in range(B.cols)]
    entries = []
    for row in a_rows:
        out = []
        for column in b_cols:
            terms = []
            for a, b in zip(row, column):
                if (a == 0 and b is not sympy.nan) or (b == 0 and a is not sympy.nan):
                    continue  # nan * 0 stays nan, as in IEEE arithmetic
                terms.append(b if a == 1 else a if b == 1 else a * b)
            out.append(sympy.Add(*terms) if terms else sympy.S.Zero)
        entries.append(out)
    return sympy.ImmutableMatrix(A.rows, B.cols, [e for row in entries for e in row])


def _rational_product(a_rows, b_rows) -> sympy.ImmutableMatrix:
    """A product of rational matrices through python-flint (SymPy's takes seconds at 64 x 64)."""
    import flint

    def fmpq(rows):
        return flint.fmpq_mat(len(rows), len(rows[0]), [flint.fmpq(int(e.p), int(e.q)) for row in rows for e in row])

    C = fmpq(a_rows) * fmpq(b_rows)
    return sympy.ImmutableMatrix(C.nrows(), C.ncols(),
                                 [sympy.Rational(int(C[i, j].p), int(C[i, j].q)) for i in range(C.nrows()) for j in range(C.ncols())])


#: Expression-tree nodes one entry of a matrix passed on to another operation may have.
#: Exact closed forms grow with every sublayer (a softmax of a LayerNorm of a softmax...),
#: and SymPy's automatic simplification of large numeric trees is slow (a LayerNorm of four
#: entries of ~4,000 nodes ran for minutes); past this size the computation stops with an
#: error instead.  Big matrices of small entries (a 32 x 32 attention) are fine.
MAX_NODES = 2_000

#: The bound a caller chose with :func:`node_limit` (None: none chosen).  check_size uses
#: it, else MAX_NODES (the Python API); a computation file's definitions are computed
#: under the input language's own bound, whatever command reads the file
#: (:func:`default_node_limit`).
_NODE_LIMIT: contextvars.ContextVar[int | None] = contextvars.ContextVar("node_limit", default=None)


class ClosedFormTooLarge(InputLimitError):
    """An entry's exact closed form is over the node bound of the computation: the inputs
    are fine, the exact value is too large to pass on (``run`` reports it for that one
    definition and shows the others)."""


@contextmanager
def node_limit(limit: int):
    """Compute under another bound for :func:`check_size` (restored on leaving).

    >>> with node_limit(10):
    ...     check_size(sympy.Matrix([[sympy.exp(sympy.sqrt(2) + sympy.sqrt(3)) + sympy.sqrt(5)]]), "x")
    Traceback (most recent call last):
    ...
    symbolic_attn.model.compose.ClosedFormTooLarge: x: an entry's exact closed form has more than 10 expression nodes; choose inputs with simpler values (e.g. rational attention weights) or fewer nested sublayers
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"node_limit: expected a whole number >= 1, got {limit!r}")
    token = _NODE_LIMIT.set(limit)
    try:
        yield
    finally:
        _NODE_LIMIT.reset(token)


@contextmanager
def default_node_limit(limit: int):
    """Compute under ``limit`` unless a caller already chose a bound with :func:`node_limit`
    (which then stays in force): how a computation file's definitions get one bound in
    every command, and a test or ``run`` can still choose another.

    >>> with node_limit(10), default_node_limit(10_000):
    ...     _NODE_LIMIT.get()
    10
    """
    if _NODE_LIMIT.get() is not None:
        yield
        return
    with node_limit(limit):
        yield


def check_size(matrix, what: str, limit: int | None = None) -> None:
    """A :class:`ClosedFormTooLarge` (an :class:`~symbolic_attn.errors.InputLimitError`) when
    an entry of ``matrix`` has more than ``limit`` expression nodes (default: the bound in
    force, see :func:`node_limit`), counted with an early exit."""
    if limit is None:
        limit = _NODE_LIMIT.get() or MAX_NODES
    for entry in matrix:
        count = 0
        for _ in sympy.preorder_traversal(entry):
            count += 1
            if count > limit:
                raise ClosedFormTooLarge(
                    f"{what}: an entry's exact closed form has more than {limit} expression nodes; choose inputs "
                    "with simpler values (e.g. rational attention weights) or fewer nested sublayers"
                )
