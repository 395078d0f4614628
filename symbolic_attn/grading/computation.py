r"""Computation files: the ONE reader of ``[inputs]``, ``[define]`` and ``[attention]``.

``symbolic-attn run`` and ``symbolic-attn check`` read a file the same way: the same safe
file reading (the one file reader, :mod:`symbolic_attn.exact.source`: regular files only,
size first, TOML pre-scanned), the same value grammar for inputs (:mod:`symbolic_attn.grading.values`), the
same ``[attention]`` table with every mask form of the exercise format (``"none"``,
``"causal"``, ``{causal = true, offset = K}``, ``{padding = K}``, ``{keep = ...}``,
``{block = ...}``), read by :class:`symbolic_attn.grading.exercise` 's reader.

``[define]`` holds named definitions, evaluated in order by
:func:`symbolic_attn.model.program.run_program`; ``[attention]`` is the definition named
``attention`` (its matrices become hidden inputs ``attention_query``, ``attention_key``...,
its mask a ``keep`` grid unless it is plain ``"none"`` or ``"causal"``).

>>> c = parse_computation('''
... [inputs]
... X = [[1, 0], [0, 1]]
... [attention]
... query = "X"
... key = "X"
... value = "X"
... mask = {causal = true, offset = 0}
... [define]
... N = "layer_norm(X + attention)"
... ''', source="c.toml")
>>> c.definitions
(('attention', "attention(Q = attention_query, K = attention_key, V = attention_value, mask = 'causal', scale = 'default')"), ('N', 'layer_norm(X + attention)'))
>>> c.trace()["attention.weights"][0, :]
Matrix([[1, 0]])
>>> parse_computation('[define]\nA = 3\n', source="d.toml")
Traceback (most recent call last):
...
symbolic_attn.errors.ExerciseError: d.toml: define.A: expected a string such as "layer_norm(X)", got an integer 3
"""

from __future__ import annotations

from dataclasses import dataclass, field

from symbolic_attn.errors import ExerciseError
from symbolic_attn.exact.source import COMPUTATION, decode_text, parse_toml, read_bytes
from symbolic_attn.grading.reader import LIMITS, TomlFloat, show, type_name

__all__ = ["Computation", "load_computation", "parse_computation", "read_definitions", "attention_definition",
           "program_exercise", "COMPUTATION_KEYS"]

#: Top-level keys of a computation file (``claims``, ``grading``, ``questions`` are check's).
COMPUTATION_KEYS = {"title", "description", "symbols", "inputs", "attention", "define", "claims", "grading",
                    "questions"}


@dataclass(frozen=True)
class Computation:
    """What a file asks to compute: inputs (symbols included) and ordered definitions."""

    source: str
    title: str
    inputs: dict
    definitions: tuple
    symbols: dict = field(default_factory=dict)

    def trace(self, variant=None):
        """The program's trace (every definition and stage); computed once when plain."""
        from symbolic_attn.model.program import run_program

        if variant is None and "_trace" in self.__dict__:
            return self.__dict__["_trace"]
        trace = run_program(self.inputs, self.definitions, variant=variant)
        if variant is None:
            object.__setattr__(self, "_trace", trace)  # frozen dataclass: a cache, not state
        return trace


def load_computation(path) -> Computation:
    """Read a computation file by the one file reader (:mod:`symbolic_attn.exact.source`)."""
    from symbolic_attn.grading.text import clean

    source = clean(str(path), 200)
    return parse_computation(read_bytes(path, COMPUTATION, source), source=source)


def parse_computation(data, source: str = "<file>") -> Computation:
    """Validate TOML text (str or bytes) into a :class:`Computation`."""
    from symbolic_attn.grading.exercise import _Reader, _TOP_KEYS

    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if len(data) > LIMITS["file_bytes"]:
        raise ExerciseError(f"{source}: file larger than the limit of {LIMITS['file_bytes']} bytes")
    table = parse_toml(decode_text(data, source, "TOML"), source, parse_float=TomlFloat)
    reader = _Reader(source)
    reader.only_keys(table, _TOP_KEYS | COMPUTATION_KEYS, "")
    title = reader.typed(table, "title", "", (str,)) or ""
    reader.typed(table, "description", "", (str,))
    symbols = reader.symbols(reader.typed(table, "symbols", "", (list,)) or [])
    inputs = reader.inputs(reader.typed(table, "inputs", "", (dict,)) or {}, symbols)
    hidden, definitions = read_definitions(reader, table, {**symbols, **inputs})
    if not definitions:
        raise ExerciseError(f"{source}: nothing to compute: add a [define] table (or [attention])")
    return Computation(source, title, {**symbols, **inputs, **hidden}, tuple(definitions), symbols)


def program_exercise(reader, table: dict, title: str, symbols: dict, inputs: dict):
    """An exercise with ``[define]``: claims name any stage path of the program's trace."""
    import dataclasses

    from symbolic_attn.errors import SymbolicAttnError
    from symbolic_attn.grading.exercise import Exercise

    hidden, definitions = read_definitions(reader, table, {**symbols, **inputs})
    claims_table = reader.claims_table(table)
    exercise = Exercise(reader.source, title, None, (), {**inputs, **hidden}, symbols, tuple(definitions))
    try:
        exercise.trace()  # computed once, kept: claims are checked against its paths
    except SymbolicAttnError as error:
        raise reader.wrap("define", error) from None
    claims = tuple(reader.claim(index, entry, exercise) for index, entry in enumerate(claims_table))
    loaded = dataclasses.replace(exercise, claims=claims)
    object.__setattr__(loaded, "_trace", exercise.trace())
    return loaded


def read_definitions(reader, table: dict, names: dict) -> tuple[dict, list]:
    """(hidden inputs, [(name, text)]) from ``[define]`` and ``[attention]`` of ``table``."""
    define = table.get("define", {})
    if not isinstance(define, dict):
        raise reader.fail("define", f'expected a table of name = "definition", got {type_name(type(define))}')
    definitions = []
    for name, value in define.items():
        if not isinstance(value, str):
            raise reader.fail(f"define.{name}", f'expected a string such as "layer_norm(X)", got '
                              f"{type_name(type(value))} {show(value)}")
        if len(value) > LIMITS["string"]:
            raise reader.fail(f"define.{name}", f"definition of {len(value)} characters exceeds the limit of "
                              f"{LIMITS['string']}")
        definitions.append((name, value))
    hidden = {}
    if "attention" in table:
        if "attention" in define:
            raise reader.fail("attention", "both an [attention] table and a definition named attention")
        spec = reader.attention(reader.typed(table, "attention", "", (dict,)), names)
        hidden, text = attention_definition(spec, names, reader)
        definitions.insert(0, ("attention", text))
    return hidden, definitions


def attention_definition(spec, names: dict, reader) -> tuple[dict, str]:
    """(hidden inputs, definition text) computing the same attention as ``spec``
    (an :class:`~symbolic_attn.grading.exercise.AttentionSpec`)."""
    hidden, parts = {}, []

    def bind(key: str, value) -> str:
        name = f"attention_{key}"
        if name in names:
            raise reader.fail(f"attention.{key}", f"the input name {name} is taken (the [attention] table needs it)")
        hidden[name] = value
        return name

    if spec.scores is not None:
        parts.append(f"scores = {bind('scores', spec.scores)}")
    else:
        parts += [f"Q = {bind('query', spec.query)}", f"K = {bind('key', spec.key)}"]
    parts.append(f"V = {bind('value', spec.value)}")
    if spec.mask is None:
        parts.append("mask = 'none'")
    elif spec.mask_kind == "causal" and spec.mask_offset == 0:
        parts.append("mask = 'causal'")
    else:  # offsets, padding, keep, block: the exact grid the exercise reader built
        import sympy

        parts.append(f"mask = keep({bind('mask', sympy.ImmutableMatrix(spec.mask.keep_grid()))})")
    if spec.scale in ("default", "none"):
        parts.append(f"scale = '{spec.scale}'")
    else:
        parts.append(f"scale = {bind('scale', spec.scale)}")
    return hidden, f"attention({', '.join(parts)})"
