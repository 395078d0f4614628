r"""Exercise files (TOML): the inputs of an attention exercise and a solution's claims.

Exercise files come from students, so everything here treats the file as data: sizes are
bounded before parsing (only a regular file is read, its size checked first, the TOML
pre-scanned: the one file reader, :mod:`symbolic_attn.exact.source`), every value's TOML type is checked,
values go through the one value grammar (:mod:`symbolic_attn.exact.parse`: a number or
nested lists, each entry by the safe parser, never ``eval``), and every problem is an
:class:`ExerciseError` naming the file, the key (``attention.value``, or a claim as
``claim 3 ('label')``, counted from 1) and the value, with control characters escaped.

Masks: ``"none"``, ``"causal"``, ``{causal = true, offset = 1}`` (key j allowed for query
i when j <= i + offset, 1-based or not alike), ``{padding = 3}`` (only the first 3 keys are
real), ``{keep = [[...]]}``, ``{block = [[...]]}`` -- the command line's masks.

An exercise is a computation with claims: its ``[symbols]``, ``[inputs]``, ``[attention]``
and ``[define]`` are read as in a computation file (:mod:`symbolic_attn.grading.computation`),
and only the ``[[claims]]`` are read here.  The exercise runs its own computation:
:meth:`Exercise.compute` runs the one attention core on the exercise's inputs, with any
setting changed (how diagnosis reproduces a mistake), and claims name a stage path of its
trace.

>>> text = '''
... title = "one row"
... [inputs]
... V = [[1, 0], [0, 2], [3, 1]]
... [attention]
... scores = [["0", "ln(2)", "ln(3)"]]
... value = "V"
... [[claims]]
... quantity = "weights"
... value = "[1/6, 2/6, 3/6]"
... '''
>>> exercise = parse_exercise(text, source="row.toml")
>>> exercise.attention.scores
Matrix([[0, log(2), log(3)]])
>>> exercise.claims[0].claimed.shape
(3,)
>>> parse_exercise('title = "t"\n[inputs]\nx = 0.140\n', source="bad.toml")
Traceback (most recent call last):
...
symbolic_attn.errors.ExerciseError: bad.toml: inputs.x: TOML float 0.140 loses its written precision; write it as a string: "0.140"
"""

import dataclasses
import math
from dataclasses import dataclass, field

import sympy

from symbolic_attn.errors import ExerciseError, ShapeError, StageError, SymbolicAttnError, quoted, shown
from symbolic_attn.grading.claims import Claim, parse_claimed, parse_rule
from symbolic_attn.grading.computation import (LIMITS, AttentionSpec, ComputationReader, TomlFloat, read_definitions, show,
                                                type_name)
from symbolic_attn.grading.rounded_inputs import RoundedInputs
from symbolic_attn.exact.convert import to_exact
from symbolic_attn.exact.source import EXERCISE, decode_text, parse_toml, read_bytes
from symbolic_attn.model.attention import Options, as_mask, attention, attention_from_scores
from symbolic_attn.model.trace import known_path

__all__ = ["Exercise", "AttentionSpec", "load_exercise", "parse_exercise", "exercise_table", "exercise_from_table",
           "LIMITS"]

_KEEP = object()  # "this setting as the exercise gives it"
_TOP_KEYS = {"title", "symbols", "inputs", "attention", "define", "claims", "description",
             "grading", "questions"}  # the answer key: read by grading.answer_key
_CLAIM_KEYS = {"quantity", "row", "col", "value", "label", "tolerance", "relative", "sig_figs"}


@dataclass(frozen=True)
class Exercise:
    """A loaded exercise: where it came from, its inputs, attention and claims.

    An exercise with ``[define]`` has ``definitions`` ((name, text) pairs, ``[attention]``
    among them as the definition named ``attention``) and ``attention`` None: its claims
    name stage paths of the program's trace (:meth:`trace`).
    """

    source: str
    title: str
    attention: AttentionSpec | None
    claims: tuple = ()
    inputs: dict = field(default_factory=dict)
    symbols: dict = field(default_factory=dict)
    definitions: tuple = ()
    rounded: object = None  # a grading.rounded_inputs.RoundedInputs when inputs were printed rounded

    def trace(self, variant=None):
        """The stages claims name: the program's trace for ``[define]`` (under a
        :mod:`~symbolic_attn.model.variants` setting when given), else the attention's."""
        if not self.definitions:
            return self.compute().trace
        from symbolic_attn.model.program import run_program

        if variant is None and "_trace" in self.__dict__:
            return self.__dict__["_trace"]
        trace = run_program({**self.symbols, **self.inputs}, self.definitions, variant=variant)
        if variant is None:
            object.__setattr__(self, "_trace", trace)  # frozen dataclass: a cache, not state
        return trace

    def compute(self, *, mask=_KEEP, scale=_KEEP, query=None, key=None, value=None, scores=None, **options):
        """Run the one attention core on this exercise, with any setting changed.

        ``mask`` (a Mask or None), ``scale``, ``query``/``key``/``value`` or ``scores``
        replace the exercise's own; ``options`` (``masking``, ``axis``, ``on_empty_row``)
        go to the core.  Returns the :class:`~symbolic_attn.model.attention.AttentionResult`,
        whose ``trace`` holds the named stages.  Called without arguments, the result is
        computed once and kept.
        """
        if self.definitions:  # named definitions: their stages are in trace(), not one attention
            raise StageError("an exercise with [define] has no single attention to compute: use its trace()")
        plain = mask is _KEEP and scale is _KEEP and query is key is value is scores is None and not options
        if plain and "_result" in self.__dict__:
            return self.__dict__["_result"]
        spec = self.attention
        mask = spec.mask if mask is _KEEP else mask
        value = spec.value if value is None else value
        if not plain and query is key is None:
            # The core's own result with other settings, reusing its exact matrices: Q K^T
            # and the conversion of a 64x64 exercise are the costly part of every variant.
            base = self.compute()
            n, m = base.scores.shape
            if value.shape != base.value.shape or (scores is not None and scores.shape != (n, m)):
                raise ShapeError("a variant's matrices must keep the exercise's shapes")
            if scores is not None:  # given scores are already scaled, as in attention_from_scores
                scale = "none" if scale is _KEEP else scale
            else:
                scale = spec.scale if scale is _KEEP else scale
            if scale == "default" and base.d_k is None:
                raise ShapeError("scale 'default' needs d_k, which given scores do not have")
            scale = 1 / sympy.sqrt(base.d_k) if scale == "default" else 1 if scale in (None, "none") else to_exact(scale)
            changes = {"query": None, "key": None, "d_k": None, "scores": sympy.ImmutableMatrix(scores)} \
                if scores is not None else {}
            return dataclasses.replace(base, value=sympy.ImmutableMatrix(value), scale=sympy.sympify(scale, strict=True),
                                       mask=as_mask(mask, n, m), options=Options.from_keywords(options), **changes)
        if scores is not None or spec.scores is not None:
            use = spec.scores if scores is None else scores
            result = attention_from_scores(use, value, mask, scale="none" if scale is _KEEP else scale, **options)
        else:
            result = attention(spec.query if query is None else query, spec.key if key is None else key, value,
                               mask, spec.scale if scale is _KEEP else scale, **options)
        if plain:
            object.__setattr__(self, "_result", result)  # frozen dataclass: a cache, not state
        return result

    def quantities(self) -> tuple:
        """The stage paths a claim may name: those of the exercise's trace."""
        return tuple(self.trace())

    def quantity_shape(self, quantity: str):
        """(rows, cols) of a stage, from the inputs' shapes (no stage is computed)."""
        if self.definitions:
            return self.trace().shape(quantity)
        n, m, d_k, d_v = self.attention.shape
        shapes = {"query": (n, d_k), "key": (m, d_k), "value": (m, d_v), "scores": (n, m),
                  "scaled": (n, m), "masked": (n, m), "weights": (n, m), "output": (n, d_v)}
        return shapes[quantity] if quantity in shapes else self.compute().trace.shape(quantity)


def load_exercise(path) -> Exercise:
    """Read and validate an exercise file; any problem is an :class:`ExerciseError`.

    Read by the one file reader (:mod:`symbolic_attn.exact.source`): only a regular file
    (a directory, FIFO or device is refused at once), its size checked before reading.
    """
    source = shown(str(path), 200)
    return parse_exercise(read_bytes(path, EXERCISE, source), source=source)


def parse_exercise(data, source: str = "<exercise>") -> Exercise:
    """Validate TOML text (str or bytes) into an :class:`Exercise`."""
    return exercise_from_table(exercise_table(data, source), source)


def exercise_table(data, source: str = "<exercise>") -> dict:
    """The TOML table of exercise text (str or bytes): size, encoding and shape checked
    (floats kept as :class:`TomlFloat`), for :func:`exercise_from_table` and the answer key."""
    source = shown(source, 200)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if len(data) > LIMITS["file_bytes"]:
        raise ExerciseError(f"{source}: file larger than the limit of {LIMITS['file_bytes']} bytes")
    return parse_toml(decode_text(data, source, "TOML"), source, parse_float=TomlFloat)


def exercise_from_table(table: dict, source: str) -> Exercise:
    """Validate a parsed exercise table (from :func:`exercise_table`, read once)."""
    return _Reader(shown(source, 200)).exercise(table)


class _Reader(ComputationReader):
    """Validates the parsed TOML table of an exercise: a computation's tables, then the claims.

    ``[symbols]``, ``[inputs]``, ``[attention]`` and ``[define]`` are read as in a computation
    file (:class:`~symbolic_attn.grading.computation.ComputationReader`); what an exercise adds
    is ``[[claims]]``, each checked against the stage paths of the exercise's own trace.
    """

    # -- the file -----------------------------------------------------------------

    def exercise(self, table: dict) -> Exercise:
        self.only_keys(table, _TOP_KEYS, "")
        title = self.typed(table, "title", "", (str,)) or ""
        self.typed(table, "description", "", (str,))
        symbols = self.symbols(self.typed(table, "symbols", "", (list,)) or [])
        inputs = self.inputs(self.typed(table, "inputs", "", (dict,)) or {}, symbols)
        if "define" in table:  # claims on any stage of named definitions
            return self.program(table, title, symbols, inputs)
        attention = self.attention(self.typed(table, "attention", "", (dict,), required=True), {**symbols, **inputs})
        claims_table = self.claims_table(table)
        exercise = Exercise(self.source, title, attention, (), inputs, symbols)
        try:
            exercise.compute()  # the trace whose stage paths claims name (computed once, kept)
        except SymbolicAttnError as error:
            raise self.wrap("attention", error) from None
        claims = tuple(self.claim(index, entry, exercise) for index, entry in enumerate(claims_table))
        rounded = RoundedInputs.read(self, table, symbols, inputs)
        loaded = Exercise(self.source, title, attention, claims, inputs, symbols, rounded=rounded)
        object.__setattr__(loaded, "_result", exercise.compute())
        return loaded

    def program(self, table: dict, title: str, symbols: dict, inputs: dict) -> Exercise:
        """An exercise with ``[define]``: claims name any stage path of the program's trace."""
        hidden, definitions = read_definitions(self, table, {**symbols, **inputs})
        claims_table = self.claims_table(table)
        exercise = Exercise(self.source, title, None, (), {**inputs, **hidden}, symbols, tuple(definitions))
        try:
            exercise.trace()  # computed once, kept: claims are checked against its paths
        except SymbolicAttnError as error:
            raise self.wrap("define", error) from None
        claims = tuple(self.claim(index, entry, exercise) for index, entry in enumerate(claims_table))
        loaded = dataclasses.replace(exercise, claims=claims, rounded=RoundedInputs.read(self, table, symbols, inputs))
        object.__setattr__(loaded, "_trace", exercise.trace())
        return loaded

    def claims_table(self, table: dict) -> list:
        claims_table = table.get("claims", [])
        if not isinstance(claims_table, list):  # the array of tables is bounded by its own limit
            raise self.fail("claims", f"expected an array, got {type_name(type(claims_table))} {show(claims_table)}")
        if len(claims_table) > LIMITS["claims"]:
            raise self.fail("claims", f"{len(claims_table)} claims exceed the limit of {LIMITS['claims']}")
        return claims_table

    def claim(self, index: int, entry, exercise: Exercise) -> Claim:
        """One ``[[claims]]`` table; errors name it ``claim 3 ('label')``, counted from 1."""
        if not isinstance(entry, dict):
            raise self.fail(f"claim {index + 1}", f"expected a table ([[claims]]), got {type_name(type(entry))}")
        label = entry.get("label")
        named = f"claim {index + 1}" + (f" ({quoted(label, 40)})" if isinstance(label, str) and label else "")
        prefix = named + ": "
        self.only_keys(entry, _CLAIM_KEYS, prefix)
        label = self.typed(entry, "label", prefix, (str,))
        quantity = self.typed(entry, "quantity", prefix, (str,), required=True)
        quantities = exercise.quantities()
        quantity = known_path(quantity, quantities)  # masked_scores: the stage masked
        if quantity not in quantities:
            if quantity in ("query", "key") and not exercise.definitions:
                raise self.fail(prefix + "quantity", f"no {quantity} in this exercise (scores were given directly)")
            if exercise.definitions:  # many paths: the offending one first, then those nearby
                near = [path for path in quantities if path.split(".")[0] == quantity.split(".")[0]] or \
                    [name for name, _ in exercise.definitions]
                raise self.fail(prefix + "quantity", f"unknown stage {show(quantity)}: expected a definition or one "
                                f"of its stages, such as {', '.join(near[:12])}{', ...' if len(near) > 12 else ''}")
            raise self.fail(prefix + "quantity", f"expected one of {', '.join(quantities)}, got {show(quantity)}")
        rows, cols = exercise.quantity_shape(quantity)
        row = self.index(entry, "row", prefix, rows, quantity)
        col = self.index(entry, "col", prefix, cols, quantity)
        text = self.typed(entry, "value", prefix, (str,), required=True)
        try:
            claimed = parse_claimed(text, exercise.symbols)
        except SymbolicAttnError as error:
            raise self.wrap(prefix + "value", error) from None
        except RecursionError:
            raise self.fail(prefix + "value", "nested too deeply") from None
        expected = _expected_shape(rows, cols, row, col)
        if not _shape_fits(claimed.shape, expected):
            raise self.fail(prefix + "value", f"claimed {_describe_shape(claimed.shape)} for {_describe_shape(expected)} "
                            f"({quantity}{'' if row is None else f' row {row}'}{'' if col is None else f' col {col}'})")
        rules = [name for name in ("tolerance", "relative", "sig_figs") if name in entry]
        if len(rules) > 1:
            raise self.fail(prefix + rules[1], f"give at most one of tolerance, relative, sig_figs (got {', '.join(rules)})")
        rule = None
        if rules:
            amount = self.typed(entry, rules[0], prefix, (int, str))
            try:
                rule = parse_rule(rules[0], amount)
            except SymbolicAttnError as error:
                raise self.wrap(prefix + rules[0], error) from None
        return Claim(index + 1, quantity, claimed, row, col, label, rule)

    def index(self, entry: dict, name: str, prefix: str, size: int, quantity: str):
        value = self.typed(entry, name, prefix, (int,))
        if value is None:
            return None
        if isinstance(value, bool) or not 1 <= value <= size:
            raise self.fail(prefix + name, f"{value} is outside 1..{size} ({quantity} has {size} {name}s; indices are 1-based)")
        return value


def _expected_shape(rows, cols, row, col):
    if row is not None and col is not None:
        return None
    if row is not None:
        return (cols,)
    if col is not None:
        return (rows,)
    return (rows, cols)


def _shape_fits(claimed, expected) -> bool:
    """A claimed shape matches, allowing a flat list for a single row or column."""
    if claimed == expected:
        return True
    if expected is None:
        return claimed in ((1,), (1, 1))
    if claimed is None:
        return math.prod(expected) == 1
    if len(expected) == 1:
        return claimed in ((1, expected[0]), (expected[0], 1))
    if len(claimed) == 1:
        return 1 in expected and claimed[0] == math.prod(expected)
    return False


def _describe_shape(shape) -> str:
    if shape is None:
        return "one number"
    if len(shape) == 1:
        return f"a list of {shape[0]}"
    return f"a {shape[0]}x{shape[1]} matrix"
