r"""Declared flags, printed: every flag on every symbol of a derivation becomes an assumption line.

The checker uses the flags SymPy symbols carry (``positive=True``, ``integer=True``, ...);
a reader must see them.  :func:`declarations` generates the lines from the symbols
themselves, so nothing the checker relies on can be left out of the printed assumptions.

>>> import sympy
>>> n, d = sympy.symbols("n d", integer=True, positive=True)
>>> x = sympy.Symbol("x", real=True)
>>> declarations(symbols_of([n * x + d]))
('$d, n$: positive integers', '$x$: real')
"""

from typing import Any

import sympy

__all__ = ["symbols_of", "describe_flags", "declarations"]

#: The flags printed, strongest first within each family (weaker implied ones are left out).
_ORDER = ("zero", "positive", "negative", "nonnegative", "nonpositive", "nonzero", "even", "odd", "integer",
          "rational", "real", "finite", "complex", "commutative")


def symbols_of(expressions: Any) -> list[Any]:
    """Symbols, sequences (IndexedBase) and matrix symbols occurring in ``expressions``,
    sorted by name.

    Keyed by the symbol itself, not by its name: two *different* symbols that print alike
    (``Symbol('x')`` and ``Symbol('x', positive=True)``; a symbol and a matrix symbol both
    ``X``; two ``X`` of different shapes) are a :class:`NameClashError` naming the name and
    both flag sets, since the checker treats them as two variables and a reader sees one.
    The label of a sequence ``q`` (the ``q`` of ``q_i``) is part of the sequence.

    >>> x = sympy.Symbol("x")
    >>> symbols_of([x + sympy.Symbol("x", positive=True)])
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.NameClashError: two different symbols print as $x$: one with flags {none}, the other with flags {positive}; give them different names
    """
    found: dict[tuple[str, str], Any] = {}  # (namespace, printed name) -> the object
    seen = set()
    for expr in expressions:
        expr = getattr(expr, "value", expr) if not isinstance(expr, sympy.Basic) else expr
        stack = [p for p in ([expr] if not isinstance(expr, sympy.MatrixBase) else list(expr))
                 if isinstance(p, sympy.Basic)]
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            if isinstance(node, sympy.IndexedBase):
                _record(found, "sequence", node)
                stack.extend(node.args[1:])  # its shape, if any; the label is the sequence's own
                continue
            if isinstance(node, sympy.MatrixSymbol):
                _record(found, "plain", node)
                stack.extend(node.args[1:])
                continue
            if isinstance(node, sympy.Symbol) and not isinstance(node, sympy.Dummy):
                _record(found, "plain", node)
                continue
            stack.extend(node.args)
    return sorted(found.values(), key=lambda symbol: (sympy.sstr(symbol), isinstance(symbol, sympy.IndexedBase)))


def _record(found: Any, namespace: Any, symbol: Any) -> None:
    key = (namespace, _name_latex(symbol))
    other = found.setdefault(key, symbol)
    if other != symbol:
        from symbolic_attn.errors import NameClashError

        first, second = sorted((_what(other), _what(symbol)))
        raise NameClashError(f"two different symbols print as ${_name_latex(symbol)}$: one {first}, the other "
                             f"{second}; give them different names")


def _what(symbol: Any) -> str:
    """How a symbol differs from another of the same name: its kind, shape and flags."""
    if isinstance(symbol, sympy.MatrixSymbol):
        rows, cols = symbol.shape
        return f"a {sympy.sstr(rows)} x {sympy.sstr(cols)} matrix"
    base = symbol.label if isinstance(symbol, sympy.IndexedBase) else symbol
    original = getattr(base, "_assumptions_orig", None)
    if original is None:
        original = base.assumptions0
    flags = sorted(k for k, v in original.items() if v is True) + sorted(f"not {k}" for k, v in original.items()
                                                                          if v is False)
    return "with flags {" + (", ".join(flags) or "none") + "}"


def _flags(symbol: Any) -> dict[Any, Any]:
    if isinstance(symbol, sympy.IndexedBase):
        original = {k: v for k, v in symbol.label.assumptions0.items() if k in _ORDER and v is True}
        # IndexedBase keeps the flags it was given on its label.
        return _minimal(original)
    stated = getattr(symbol, "_assumptions_orig", None)
    if stated is None:
        stated = symbol.assumptions0
    return _minimal({k: v for k, v in stated.items() if k in _ORDER})


def _minimal(flags: Any) -> dict[Any, Any]:
    shown: dict[str, bool] = {k: v for k, v in flags.items() if v is True}
    implied = {
        "positive": ("nonnegative", "nonzero", "real", "finite", "complex", "commutative"),
        "negative": ("nonpositive", "nonzero", "real", "finite", "complex", "commutative"),
        "nonnegative": ("real", "finite", "complex", "commutative"),
        "nonpositive": ("real", "finite", "complex", "commutative"),
        "nonzero": ("real", "finite", "complex", "commutative"),
        "even": ("integer", "rational", "real", "finite", "complex", "commutative"),
        "odd": ("integer", "rational", "real", "finite", "complex", "commutative", "nonzero"),
        "integer": ("rational", "real", "finite", "complex", "commutative"),
        "rational": ("real", "finite", "complex", "commutative"),
        "real": ("finite", "complex", "commutative"),
        "finite": ("commutative",),
        "complex": ("commutative", "finite"),
        "zero": tuple(k for k in _ORDER if k not in ("zero", "positive", "negative", "nonzero", "odd")),
    }
    for flag in list(shown):
        for weaker in implied.get(flag, ()):
            if weaker != flag:
                shown.pop(weaker, None)
    shown.pop("commutative", None)
    for flag, value in flags.items():
        if value is False and flag in ("positive", "negative", "zero", "integer", "real"):
            shown[flag] = False
    return shown


def describe_flags(symbol: Any) -> str:
    """The declared flags of ``symbol`` in words ('positive integer', 'real', ...)."""
    flags = _flags(symbol)
    words = [k for k in _ORDER if flags.get(k) is True]
    words += [f"not {k}" for k in _ORDER if flags.get(k) is False]
    if ("even" in words or "odd" in words) and "integer" not in words:
        words.append("integer")
    if "integer" in words:
        words = [w for w in words if w != "integer"] + ["integer"]
    return " ".join(words)


def _name_latex(symbol: Any) -> str:
    if isinstance(symbol, sympy.IndexedBase):
        return "{" + str(sympy.latex(symbol.label)) + "}_k"
    return str(sympy.latex(symbol))


#: Characters of names above which a group's list of names may break across lines.
_UNBROKEN = 60


def declarations(symbols: Any) -> tuple[Any, ...]:
    """One line per group of symbols with the same flags (``$n, d_k$: positive integers``);
    matrix symbols with their shapes (``$P$: an $n \\times n$ matrix``)."""
    groups: dict[str, list[Any]] = {}
    lines = []
    for symbol in symbols:
        if isinstance(symbol, sympy.MatrixSymbol):
            rows, cols = symbol.shape
            lines.append(f"${sympy.latex(symbol)}$: a ${sympy.latex(rows)} \\times {sympy.latex(cols)}$ matrix")
            continue
        words = describe_flags(symbol)
        if not words:
            continue
        groups.setdefault(words, []).append(_name_latex(symbol))
    out = []
    for words, names in groups.items():
        plural = len(names) > 1
        text = words
        if plural:
            text = text + "s" if text.endswith(("integer", "number")) else text
        # A long list of names (the entries of a symbolic matrix) may break after a comma.
        separator = ", " if sum(len(name) for name in names) <= _UNBROKEN else ",\\allowbreak "
        out.append(f"${separator.join(names)}$: {text}")
    return tuple(out + lines)
