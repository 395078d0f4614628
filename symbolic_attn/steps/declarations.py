r"""Declarations of a student's derivation: every letter it uses, with its domain.

The checker decides a step only over known domains, so the reader refuses a letter nobody
declared.  The declarations are one text (the ``--symbols`` option, or a file's
``% symbols: ...`` / ``<!-- symbols: ... -->`` line): statements separated by ``;`` or new
lines, each ``names: kind``.  The kinds:

=============================  ==============================================================
``real``                       a real number (``positive``, ``nonnegative``: with a sign)
``integer``                    an integer (``positive integer``, ``nonnegative integer``)
``integer A..B``               an index: an integer with ``A <= i <= B`` (A, B integers,
                               declared integers, or one shifted: ``0..n-1``); ``\sum_i``
                               takes its bounds from here
``real vector N``              a sequence ``x_1 .. x_N`` (``positive vector N``: positive entries)
``real matrix N x M``          entries ``s_{i,j}`` (also ``N×M``), ``positive matrix N x M``
``random``                     a random variable; ``random vector N`` a random vector; then,
                               after commas, ``all components independent`` (scalars:
                               ``independent``), ``mean M``, ``variance V``
                               (:mod:`.randomness`)
=============================  ==============================================================

A name is one letter (``x``), a letter with a subscript (``d_k``, ``d_{model}``) or a Greek
letter (``alpha`` or ``\alpha``).  ``e`` (Euler's number) and ``pi`` cannot be declared:
the reader always reads them as the constants.

>>> d = parse_declarations("n: positive integer; i, j: integer 1..n; x: real vector n; c: real")
>>> d.symbols["x"], d.lengths["x"], d.ranges["j"]
(x, n, (1, n))
>>> d.symbols["i"].is_positive, d.symbols["c"].is_real
(True, True)
>>> d.text()
'n: positive integer; i: integer 1..n; j: integer 1..n; x: real vector n; c: real'
>>> [a.label for a in d.assumptions()]
['i in 1..n', 'j in 1..n']
>>> parse_declarations("q, k: random vector n, all components independent, mean 0, variance 1; n: positive integer")
Traceback (most recent call last):
...
symbolic_attn.errors.StepReadError: line 1, column 1: --symbols: the length 'n' must be an integer or a name declared before as an integer
>>> r = parse_declarations("n: positive integer; q, k: random vector n, all components independent, mean 0, variance 1")
>>> r.randomness().families[0].names, r.text()
(('q', 'k'), 'n: positive integer; q, k: random vector n, all components independent, mean 0, variance 1')
>>> parse_declarations("e: real")
Traceback (most recent call last):
...
symbolic_attn.errors.StepReadError: line 1, column 1: --symbols: e cannot be declared: it is Euler's number e = exp(1) in maths (e^{x} is exp(x)); choose another letter
"""

import re
from dataclasses import dataclass, field
from typing import Any

import sympy

from symbolic_attn.errors import StepReadError
from symbolic_attn.proofs.chain import Assumption
from symbolic_attn.steps.randomness import RandomFamily, Randomness

__all__ = ["Declarations", "Entry", "parse_declarations", "GREEK", "MAX_DECLARATIONS", "MAX_DECLARATIONS_LENGTH"]

#: Most names declared in one text.
MAX_DECLARATIONS = 200
#: Longest declarations text, in characters.
MAX_DECLARATIONS_LENGTH = 10_000

#: Greek letters that may be declared (``\pi`` is the constant, never a name).
GREEK = frozenset(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi rho sigma tau "
    "upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Sigma Upsilon Phi Psi Omega".split())

_NAME = re.compile(r"^\\?([A-Za-z]+)(?:_(?:\{([A-Za-z0-9]+)\}|([A-Za-z0-9]+)))?$")
_SCALAR_KINDS = {
    "real": {"real": True},
    "positive": {"positive": True},
    "positive real": {"positive": True},
    "nonnegative": {"nonnegative": True},
    "nonnegative real": {"nonnegative": True},
    "integer": {"integer": True},
    "positive integer": {"integer": True, "positive": True},
    "nonnegative integer": {"integer": True, "nonnegative": True},
}
_RANDOM_HELP = "all components independent (or, for random scalars, independent), mean M, variance V"
_KINDS_HELP = ("real, positive, nonnegative, integer, positive integer, nonnegative integer, integer A..B, "
               "real vector N, positive vector N, real matrix N x M, random, random vector N")


@dataclass(frozen=True)
class Entry:
    """One declared name: ``shape`` is ``scalar``, ``index`` (an integer with a range),
    ``vector`` or ``matrix``; ``kind`` the kind as it is echoed."""

    name: str
    shape: str
    kind: str
    symbol: Any


@dataclass
class Declarations:
    """What the letters of a derivation are.

    ``symbols`` maps each declared name (``x``, ``d_k``, ``alpha``) to its SymPy object (a
    ``Symbol`` with the declared flags, or an ``IndexedBase`` for a vector or matrix);
    ``ranges`` maps an index to ``(low, high)``; ``lengths`` a vector to its length;
    ``shapes`` a matrix to ``(rows, columns)``; ``entries`` every name to its :class:`Entry`.
    """

    source: str = "--symbols"
    entries: dict[str, Entry] = field(default_factory=dict)
    symbols: dict[str, Any] = field(default_factory=dict)
    ranges: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    lengths: dict[str, Any] = field(default_factory=dict)
    shapes: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    #: each random name to its family (the names of one statement share one)
    random: dict[str, RandomFamily] = field(default_factory=dict)

    def index_ranges(self) -> dict[Any, tuple[Any, Any]]:
        """Each index's symbol to its declared ``(low, high)``."""
        return {self.symbols[name]: bounds for name, bounds in self.ranges.items()}

    def randomness(self) -> Randomness:
        """The random families declared, in the order declared."""
        return Randomness(tuple(dict.fromkeys(self.random.values())))

    def assumptions(self) -> list[Assumption]:
        """The facts the checker needs beyond the flags on the symbols: each index's range.

        As in ``derivations/shift_invariance.py`` an index from 1 is a positive integer
        Symbol; its upper bound (and a lower bound other than 0 or 1) is an
        :class:`~symbolic_attn.proofs.chain.Assumption` whose ``condition`` states it.
        """
        found = []
        for name, (low, high) in self.ranges.items():
            index = self.symbols[name]
            condition = sympy.And(sympy.Ge(index, low), sympy.Le(index, high))
            if condition is sympy.true:
                continue
            found.append(Assumption(f"{name} in {sympy.sstr(low)}..{sympy.sstr(high)}",
                                    f"${sympy.latex(index)}$ is an integer with "
                                    f"${sympy.latex(low)} \\le {sympy.latex(index)} \\le {sympy.latex(high)}$",
                                    condition=condition))
        return found

    def text(self) -> str:
        """The declarations echoed, one statement per name, in the order declared."""
        statements, done = [], set()
        for entry in self.entries.values():
            family = self.random.get(entry.name)
            if family is None:
                statements.append(f"{entry.name}: {entry.kind}")
            elif family not in done:  # a family is one statement: its independence joins its names
                done.add(family)
                statements.append(f"{', '.join(family.names)}: {entry.kind}")
        return "; ".join(statements)

    def shape_of(self, name: str) -> str | None:
        """``scalar``, ``index``, ``vector``, ``matrix``, or None for a name not declared."""
        entry = self.entries.get(name)
        return None if entry is None else entry.shape


def _name_of(written: str, fail: Any) -> str:
    match = _NAME.match(written)
    if match is None:
        fail(f"{written!r} is not a name: a name is a letter, a letter with a subscript (d_k) or a Greek letter (alpha)")
        raise AssertionError("unreachable")  # fail() raises
    base, subscript = match.group(1), match.group(2) or match.group(3)
    if written.startswith("\\") and base not in GREEK:
        fail(f"{written} is not a Greek letter that may be declared")
    if base == "pi":
        fail("pi cannot be declared: \\pi is the constant")
    if len(base) > 1 and base not in GREEK:
        fail(f"{written!r}: a name of several letters would be read as a product in maths; use one letter "
             "(with a subscript such as d_k) or a Greek letter")
    if base == "e" and not subscript:
        fail("e cannot be declared: it is Euler's number e = exp(1) in maths (e^{x} is exp(x)); choose another letter")
    return base if not subscript else f"{base}_{subscript}"


def _bound(text: str, declarations: Declarations, fail: Any, what: str) -> Any:
    if re.fullmatch(r"-?[0-9]{1,18}", text):
        return sympy.Integer(int(text))
    shifted = re.fullmatch(r"(.+?)([+-])([0-9]{1,18})", text)  # n-1, n+1: a declared integer and a shift
    if shifted is not None:
        base = _bound(shifted.group(1), declarations, fail, what)
        shift = int(shifted.group(3))
        return base + shift if shifted.group(2) == "+" else base - shift
    name = _name_of(text, fail)
    entry = declarations.entries.get(name)
    if entry is None or entry.shape not in ("scalar", "index") or not entry.symbol.is_integer:
        fail(f"{what} {text!r} must be an integer or a name declared before as an integer")
        raise AssertionError("unreachable")  # fail() raises
    return entry.symbol


def _length(text: str, declarations: Declarations, fail: Any) -> Any:
    value = _bound(text, declarations, fail, "the length")
    if not (value.is_positive and value.is_integer):
        fail(f"the length {text!r} must be a positive integer (declare it 'positive integer')")
    return value


def parse_declarations(text: str, source: str = "--symbols", *, line: int = 1, column: int = 1) -> Declarations:
    """The declarations written in ``text`` (``source`` names it in messages; ``line`` and
    ``column`` locate it in a file).  Raises :class:`~symbolic_attn.errors.StepReadError`
    (one line, naming the statement) for anything it cannot read.

    >>> parse_declarations("s: real matrix 2 x 3").shapes["s"]
    (2, 3)
    >>> parse_declarations("x: complex")
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.StepReadError: line 1, column 1: --symbols: unknown kind 'complex' for x; the kinds are real, positive, nonnegative, integer, positive integer, nonnegative integer, integer A..B, real vector N, positive vector N, real matrix N x M, random, random vector N
    """
    if len(text) > MAX_DECLARATIONS_LENGTH:
        raise StepReadError(line, column, f"{source}: declarations of {len(text)} characters, more than "
                            f"{MAX_DECLARATIONS_LENGTH}")
    declarations = Declarations(source=source)
    offset = 0
    for raw in re.split(r"([;\n])", text):
        if raw in (";", "\n"):
            offset += 1
            continue
        statement_line = line + text.count("\n", 0, offset)
        last_newline = text.rfind("\n", 0, offset)
        statement_column = (column if last_newline < 0 else 1) + offset - (last_newline + 1)
        statement_column += len(raw) - len(raw.lstrip())
        offset += len(raw)
        if raw.strip():
            _declare(raw.strip(), declarations, source, statement_line, statement_column)
    return declarations


def _declare(statement: str, declarations: Declarations, source: str, line: int, column: int) -> None:
    def fail(reason: str) -> None:
        raise StepReadError(line, column, f"{source}: {reason}")

    names_text, colon, kind_text = statement.partition(":")
    if not colon:
        fail(f"{statement!r} declares nothing: write 'names: kind', e.g. 'x: real'")
    names = [_name_of(written.strip(), fail) for written in names_text.split(",")]
    kind = " ".join(kind_text.replace("×", " x ").split())
    if kind.split(",")[0].split()[:1] == ["random"]:
        _declare_random(names, kind, declarations, fail)
        return
    for name in names:
        if name in declarations.entries:
            fail(f"{name} is declared twice")
        if len(declarations.entries) >= MAX_DECLARATIONS:
            fail(f"more than {MAX_DECLARATIONS} names declared")
        declarations.entries[name] = _entry(name, kind, declarations, fail)
        entry = declarations.entries[name]
        declarations.symbols[name] = entry.symbol


def _declare_random(names: list[str], kind: str, declarations: Declarations, fail: Any) -> None:
    """``names: random[, properties]`` or ``names: random vector N[, properties]``: one
    :class:`~symbolic_attn.steps.randomness.RandomFamily` for all the names of the statement."""
    what, *properties = [part.strip() for part in kind.split(",")]
    words = what.split()
    if words == ["random"] or words == ["random", "real"]:
        shape, length = "scalar", None
    elif len(words) == 3 and words[1] == "vector":
        shape, length = "vector", _length(words[2], declarations, fail)
    else:
        fail(f"unknown kind {what!r} for {', '.join(names)}: a random variable is 'random' or 'random vector N'")
        raise AssertionError("unreachable")  # fail() raises
    independent, mean, variance = False, None, None
    for written in properties:
        property_words = written.split()
        if written in ("independent", "mutually independent", "all components independent",
                       "components independent", "all independent"):
            if shape == "vector" and written in ("independent", "mutually independent"):
                fail(f"{written!r} is ambiguous for random vectors: write 'all components independent' (every "
                     "component of every vector of this statement independent of the others)")
            independent = True
        elif len(property_words) == 2 and property_words[0] in ("mean", "variance"):
            value = _moment(property_words[1], declarations, fail, property_words[0])
            if property_words[0] == "mean":
                mean = value
            else:
                variance = value
        else:
            fail(f"unknown property {written!r} of random {', '.join(names)}: the properties are {_RANDOM_HELP}")
    family = RandomFamily(tuple(names), shape, independent, mean, variance)
    for name in names:
        if name in declarations.entries:
            fail(f"{name} is declared twice")
        if len(declarations.entries) >= MAX_DECLARATIONS:
            fail(f"more than {MAX_DECLARATIONS} names declared")
        if shape == "vector":
            declarations.lengths[name] = length
            symbol: Any = sympy.IndexedBase(name, real=True)
            shown = f"random vector {sympy.sstr(length)}"
        else:
            symbol = sympy.Symbol(name, real=True)
            shown = "random"
        declarations.entries[name] = Entry(name, shape, ", ".join([shown, *family.text().split(", ")[1:]]), symbol)
        declarations.symbols[name] = symbol
        declarations.random[name] = family


def _moment(text: str, declarations: Declarations, fail: Any, what: str) -> Any:
    """A declared mean or variance: an integer, a fraction ``a/b``, or a declared real name."""
    found = re.fullmatch(r"(-?[0-9]{1,18})(?:/([0-9]{1,18}))?", text)
    if found is not None:
        if found.group(2) is not None and int(found.group(2)) == 0:
            fail(f"the {what} {text!r} divides by zero")
        value = sympy.Rational(int(found.group(1)), int(found.group(2) or 1))
    else:
        name = _name_of(text, fail)
        entry = declarations.entries.get(name)
        if entry is None or entry.shape != "scalar" or name in declarations.random or not entry.symbol.is_real:
            fail(f"the {what} {text!r} must be a number (0, 1, 1/2) or a name declared before as real")
            raise AssertionError("unreachable")  # fail() raises
        value = entry.symbol
    if what == "variance" and value.is_nonnegative is not True:
        fail(f"the variance {text!r} must be a number at least 0 or a name declared nonnegative or positive")
    return value


def _entry(name: str, kind: str, declarations: Declarations, fail: Any) -> Entry:
    words = kind.split()
    if kind in _SCALAR_KINDS:
        return Entry(name, "scalar", kind, sympy.Symbol(name, **_SCALAR_KINDS[kind]))
    if "random" in words:
        fail(f"{name}: 'random' comes first: 'random', 'random vector N', then the properties "
             f"({_RANDOM_HELP})")
    if len(words) == 2 and words[0] == "integer" and ".." in words[1]:
        low_text, _, high_text = words[1].partition("..")
        low = _bound(low_text, declarations, fail, "the lower bound")
        high = _bound(high_text, declarations, fail, "the upper bound")
        flags: dict[str, bool] = {"integer": True}
        if low.is_number and low >= 1:
            flags["positive"] = True
        elif low.is_number and low >= 0:
            flags["nonnegative"] = True
        declarations.ranges[name] = (low, high)
        return Entry(name, "index", f"integer {sympy.sstr(low)}..{sympy.sstr(high)}", sympy.Symbol(name, **flags))
    if len(words) == 3 and words[1] == "vector" and words[0] in ("real", "positive"):
        length = _length(words[2], declarations, fail)
        declarations.lengths[name] = length
        base = sympy.IndexedBase(name, **{words[0]: True})
        return Entry(name, "vector", f"{words[0]} vector {sympy.sstr(length)}", base)
    if len(words) == 5 and words[1] == "matrix" and words[3] == "x" and words[0] in ("real", "positive"):
        shape = (_length(words[2], declarations, fail), _length(words[4], declarations, fail))
        declarations.shapes[name] = shape
        base = sympy.IndexedBase(name, **{words[0]: True})
        return Entry(name, "matrix", f"{words[0]} matrix {sympy.sstr(shape[0])} x {sympy.sstr(shape[1])}", base)
    fail(f"unknown kind {kind!r} for {name}; the kinds are {_KINDS_HELP}")
    raise AssertionError("unreachable")  # fail() raises
