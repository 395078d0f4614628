r"""``symbolic-attn run FILE.toml [--format text|latex|json] [--digits N]``: every definition
of a computation file, and every stage of it, exactly with certified decimals beside.

The file has ``[inputs]`` (integers, expression strings, or arrays of those) and
``[define]`` (named definitions, evaluated in order by
:func:`symbolic_attn.model.program.run_program`).  Today's ``[attention]`` table stays
valid: it is the definition named ``attention``.  Other tables (``claims``...) are left to
``check``.

JSON: ``{"definitions": {name: text}, "stages": {path: {"shape", "exact", "latex",
"decimal"}}}``; exact strings are read back by the tool's own parser (``e`` is Euler's
number), decimals have 30 significant digits.  Exit 0, or 2 with one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import tomllib
import warnings

import sympy
from sympy.printing.str import StrPrinter

from symbolic_attn.errors import ExerciseError, InputLimitError, ParseError, SymbolicAttnError
from symbolic_attn.exact.parse import parse_expression
from symbolic_attn.model.program import NAME, run_program
from symbolic_attn.render.latex import escape_text, matrix_latex

__all__ = ["add_parser", "run", "load_computation", "exact_text", "json_document"]

MAX_FILE_BYTES = 1_000_000
MAX_INPUTS = 64
MAX_DIMENSION = 64
MAX_DIGITS = 100
JSON_DIGITS = 30
#: Expression nodes of all printed stages together (see check_printable).
MAX_PRINTED_NODES = 250_000
_ATTENTION_KEYS = ("query", "key", "value", "scores", "mask", "scale")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "run",
        help="compute every definition of a file exactly, every stage with decimals beside it",
        description=(
            "Evaluate the [define] section of a TOML file in order (attention, multihead, sinusoidal, rope, "
            "alibi, layer_norm, relu, gelu, feed_forward, encoder_block, decoder_block, ...) and show every "
            "stage exactly, with certified decimals."
        ),
    )
    parser.add_argument("file", metavar="FILE.toml", help="the computation file")
    parser.add_argument("--format", choices=("text", "latex", "json"), default="text", help="output format (default text)")
    parser.add_argument("--digits", type=int, default=3, metavar="N",
                        help="decimal places shown in text and LaTeX (default 3); JSON always has 30 significant digits")
    parser.set_defaults(handler=run)


# -- reading the file ----------------------------------------------------------------------


class _TomlFloat(str):
    """A TOML float kept as its text, only to refuse it with a hint."""


def read_file(path: str) -> bytes:
    """The bytes of a regular file of at most MAX_FILE_BYTES, checked before reading."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise ExerciseError(f"{path}: cannot open the file ({error.strerror or error})") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise ExerciseError(f"{path}: not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise ExerciseError(f"{path}: {info.st_size} bytes exceed the limit of {MAX_FILE_BYTES}")
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise ExerciseError(f"{path}: cannot read the file ({error.strerror or error})") from None
    finally:
        os.close(descriptor)
    if len(data) > MAX_FILE_BYTES:
        raise ExerciseError(f"{path}: larger than the limit of {MAX_FILE_BYTES} bytes")
    return data


def load_computation(data: bytes, source: str = "<file>"):
    """(inputs, definitions) from the TOML bytes of a computation file."""
    if b"\x00" in data:
        raise ExerciseError(f"{source}: binary data (a NUL byte), not a TOML text file")
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        raise ExerciseError(f"{source}: not UTF-8 text (invalid byte at offset {error.start})") from None
    try:
        table = tomllib.loads(text, parse_float=_TomlFloat)
    except tomllib.TOMLDecodeError as error:
        raise ExerciseError(f"{source}: not valid TOML: {' '.join(str(error).split())}") from None
    except (ValueError, RecursionError, MemoryError) as error:
        raise ExerciseError(f"{source}: not a usable TOML file ({type(error).__name__})") from None
    symbols = _symbols(table.get("symbols", []), source)
    inputs = _inputs(table.get("inputs", {}), symbols, source)
    define = table.get("define", {})
    if not isinstance(define, dict):
        raise ExerciseError(f"{source}: define: expected a table of name = \"definition\"")
    definitions = []
    for name, value in define.items():
        if not isinstance(value, str):
            raise ExerciseError(f"{source}: define.{name}: expected a string such as \"layer_norm(X)\", got "
                                f"{type(value).__name__}")
        definitions.append((name, value))
    if "attention" in table:
        if "attention" in define:
            raise ExerciseError(f"{source}: attention: both an [attention] table and a definition named attention")
        definitions.insert(0, ("attention", _attention_definition(table["attention"], inputs, symbols, source)))
    if not definitions:
        raise ExerciseError(f"{source}: nothing to compute: add a [define] table (or [attention])")
    return inputs, definitions


def _symbols(names, source):
    if not isinstance(names, list) or len(names) > MAX_INPUTS:
        raise ExerciseError(f"{source}: symbols: expected a list of at most {MAX_INPUTS} names")
    result = {}
    for name in names:
        if not isinstance(name, str) or not NAME.match(name):
            raise ExerciseError(f"{source}: symbols: not a usable symbol name: {str(name)[:40]!r}")
        result[name] = sympy.Symbol(name, real=True)
    return result


def _inputs(table, symbols, source) -> dict:
    if not isinstance(table, dict):
        raise ExerciseError(f"{source}: inputs: expected a table")
    if len(table) > MAX_INPUTS:
        raise ExerciseError(f"{source}: inputs: {len(table)} inputs exceed the limit of {MAX_INPUTS}")
    inputs: dict = {}
    for name, value in table.items():
        inputs[name] = _exact(f"inputs.{name}", value, {**symbols, **inputs}, source)
    return {**symbols, **inputs}


def _exact(key, value, names, source):
    """An integer, an expression string, or an array (a row or rows) of those."""
    if isinstance(value, _TomlFloat):
        raise ExerciseError(f'{source}: {key}: TOML float {value} loses its written precision; write it as a string: "{value}"')
    if isinstance(value, bool) or not isinstance(value, (int, str, list)):
        raise ExerciseError(f"{source}: {key}: expected an integer, a string or an array, got {type(value).__name__}")
    try:
        if isinstance(value, int):
            if value.bit_length() > 1_330:
                raise ExerciseError(f"{source}: {key}: integer with more than 400 digits")
            return sympy.Integer(value)
        if isinstance(value, str):
            with warnings.catch_warnings():  # Python's "invalid decimal literal" warning is not ours to print
                warnings.simplefilter("ignore")
                result = parse_expression(value, names)
            return sympy.ImmutableMatrix(result) if isinstance(result, sympy.MatrixBase) else result
    except ExerciseError:
        raise
    except SymbolicAttnError as error:
        raise ExerciseError(f"{source}: {key}: {' '.join(str(error).split())}") from None
    rows = value if value and isinstance(value[0], list) else [value]
    if not rows or not rows[0] or len(rows) > MAX_DIMENSION or len(rows[0]) > MAX_DIMENSION:
        raise ExerciseError(f"{source}: {key}: expected a non-empty array of at most {MAX_DIMENSION}x{MAX_DIMENSION}")
    width = len(rows[0])
    entries = []
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != width:
            raise ExerciseError(f"{source}: {key}[{i}]: every row must be an array of {width} entries")
        for j, entry in enumerate(row):
            where = f"{key}[{i}][{j}]" if rows is value else f"{key}[{j}]"
            if isinstance(entry, list):
                raise ExerciseError(f"{source}: {where}: nested deeper than a matrix")
            number = _exact(where, entry, names, source)
            if isinstance(number, sympy.MatrixBase):
                raise ExerciseError(f"{source}: {where}: a matrix entry must be a number")
            entries.append(number)
    return sympy.ImmutableMatrix(len(rows), width, entries)


def _attention_definition(table, inputs, symbols, source) -> str:
    """The legacy [attention] table as the text of the definition named ``attention``."""
    if not isinstance(table, dict):
        raise ExerciseError(f"{source}: attention: expected a table")
    for key in table:
        if key not in _ATTENTION_KEYS:
            raise ExerciseError(f"{source}: attention.{key}: unknown key (expected one of {', '.join(_ATTENTION_KEYS)})")
    parts = []
    for key, argument in (("query", "Q"), ("key", "K"), ("value", "V"), ("scores", "scores")):
        if key not in table:
            continue
        value = table[key]
        if isinstance(value, str):
            parts.append(f"{argument} = ({value})")
        else:
            hidden = f"attention_{key}"
            if hidden in inputs:
                raise ExerciseError(f"{source}: attention.{key}: the input name {hidden} is taken")
            inputs[hidden] = _exact(f"attention.{key}", value, {**symbols, **inputs}, source)
            parts.append(f"{argument} = {hidden}")
    mask = table.get("mask", "none")
    if isinstance(mask, str) and mask in ("none", "causal"):
        parts.append(f"mask = '{mask}'")
    elif isinstance(mask, dict) and len(mask) == 1 and next(iter(mask)) in ("keep", "block"):
        (kind, grid), = mask.items()
        inputs[f"attention_{kind}"] = _exact(f"attention.mask.{kind}", grid, {}, source)
        parts.append(f"mask = {kind}(attention_{kind})")
    else:
        raise ExerciseError(f'{source}: attention.mask: expected "none", "causal", {{keep = [[...]]}} or {{block = [[...]]}}')
    scale = table.get("scale")
    if scale is not None:
        if isinstance(scale, str) and scale in ("default", "none"):
            parts.append(f"scale = '{scale}'")
        else:
            inputs["attention_scale"] = _exact("attention.scale", scale, {**symbols, **inputs}, source)
            parts.append("scale = attention_scale")
    return f"attention({', '.join(parts)})"


# -- showing the stages ---------------------------------------------------------------------


class _ExactPrinter(StrPrinter):
    """SymPy's string form, with Euler's number as ``e`` (what the parser reads)."""

    def _print_Exp1(self, expr):
        return "e"


_PRINTER = _ExactPrinter({"order": "none"})


def exact_text(expr) -> str:
    """An exact value as text the tool's own parser reads back.

    >>> exact_text(sympy.E / 3 + sympy.sqrt(2))
    'sqrt(2) + e/3'
    """
    return _PRINTER.doprint(expr)


def json_document(trace, definitions) -> dict:
    """The JSON object of a program's trace: every stage's shape, exact, LaTeX, decimals."""
    stages = {}
    for path in trace:
        matrix = trace[path]
        stages[path] = {
            "shape": [matrix.rows, matrix.cols],
            "exact": [[exact_text(e) for e in matrix.row(i)] for i in range(matrix.rows)],
            "latex": matrix_latex(matrix, order="none"),
            "decimal": trace.decimals(path, JSON_DIGITS, significant=True),
        }
    return {"definitions": dict(definitions), "stages": stages}


def _relation(entry, shown: str) -> str:
    from fractions import Fraction

    if entry.is_Rational and Fraction(int(entry.p), int(entry.q)) == Fraction(shown):
        return "="
    return "≈"


def shown_paths(trace) -> list:
    """The stages worth showing: ``A.output`` is ``A`` again (and ``M.head[1].output`` is
    ``M.head[1]``), so those repeats are left out of text and LaTeX (JSON keeps them)."""
    paths = list(trace)
    present = set(paths)
    return [p for p in paths if not (p.endswith(".output") and p[: -len(".output")] in present)]


def text_report(trace, definitions, digits: int) -> str:
    texts = dict(definitions)
    lines = []
    for path in shown_paths(trace):
        matrix = trace[path]
        decimals = trace.decimals(path, digits)
        title = f"{path} = {texts[path]}" if path in texts else path
        if lines:
            lines.append("")
        lines.append(f"{title} ({matrix.rows}x{matrix.cols})")
        width = max(len(d or "?") for row in decimals for d in row)
        for row in decimals:
            lines.append("  [ " + "  ".join((d or "?").rjust(width) for d in row) + " ]")
        for i in range(matrix.rows):
            for j in range(matrix.cols):
                entry, shown = matrix[i, j], decimals[i][j]
                exact = exact_text(entry)
                if shown is None or entry.is_Integer:
                    lines.append(f"  {path}[{i + 1},{j + 1}] = {exact}")
                else:
                    lines.append(f"  {path}[{i + 1},{j + 1}] = {exact}  {_relation(entry, shown)} {shown}")
    return "\n".join(lines)


def latex_report(trace, digits: int) -> str:
    rows = []
    for path in shown_paths(trace):
        matrix = trace[path]
        decimals = trace.decimals(path, digits)
        approx = r"\begin{bmatrix}" + r" \\ ".join(" & ".join(d or "?" for d in row) for row in decimals) + r"\end{bmatrix}"
        rows.append(rf"\text{{{escape_text(path)}}} &= {matrix_latex(matrix, order='none')} \approx {approx}")
    return "\\begin{align*}\n" + " \\\\\n".join(rows) + "\n\\end{align*}"


def check_printable(trace, limit: int = MAX_PRINTED_NODES) -> None:
    """Refuse, before printing anything, a file whose closed forms are too big to show.

    Every stage is printed exactly (text, LaTeX) with certified decimals: a 32 x 32
    two-head computation with a dense W_O printed 200 MB of JSON in eight minutes.
    """
    count = 0
    for path in trace:
        for entry in trace[path]:
            for _ in sympy.preorder_traversal(entry):
                count += 1
                if count > limit:
                    raise InputLimitError(
                        f"{path}: the exact stages of this file have more than {limit} expression nodes in all, too "
                        "many to print; use smaller matrices, or the Python API "
                        "(symbolic_attn.model.program.run_program) without printing"
                    )


def run(args: argparse.Namespace) -> int:
    if not 0 <= args.digits <= MAX_DIGITS:
        raise ParseError(f"--digits must be between 0 and {MAX_DIGITS}, got {args.digits}")
    inputs, definitions = load_computation(read_file(args.file), source=args.file)
    trace = run_program(inputs, definitions)
    check_printable(trace)
    if args.format == "json":
        print(json.dumps(json_document(trace, definitions), indent=2, ensure_ascii=False))
    elif args.format == "latex":
        print(latex_report(trace, args.digits))
    else:
        print(text_report(trace, definitions, args.digits))
    return 0
