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

import sympy

__all__ = ["symbols_of", "describe_flags", "declarations"]

#: The flags printed, strongest first within each family (weaker implied ones are left out).
_ORDER = ("zero", "positive", "negative", "nonnegative", "nonpositive", "nonzero", "even", "odd", "integer",
          "rational", "real", "finite", "complex", "commutative")


def symbols_of(expressions) -> list:
    """Symbols, sequences (IndexedBase) and matrix symbols occurring in ``expressions``."""
    found = {}
    for expr in expressions:
        expr = getattr(expr, "value", expr) if not isinstance(expr, sympy.Basic) else expr
        for part in ([expr] if not isinstance(expr, sympy.MatrixBase) else list(expr)):
            if not isinstance(part, sympy.Basic):
                continue
            for node in sympy.preorder_traversal(part):
                if isinstance(node, sympy.IndexedBase):
                    found[sympy.sstr(node)] = node
                elif isinstance(node, sympy.MatrixSymbol):
                    found.setdefault(sympy.sstr(node), node)
                elif isinstance(node, sympy.Symbol) and not isinstance(node, sympy.Dummy):
                    if not isinstance(found.get(sympy.sstr(node)), sympy.IndexedBase):
                        found.setdefault(sympy.sstr(node), node)
    return [found[name] for name in sorted(found)]


def _flags(symbol) -> dict:
    if isinstance(symbol, sympy.IndexedBase):
        original = {k: v for k, v in symbol.label.assumptions0.items() if k in _ORDER and v is True}
        # IndexedBase keeps the flags it was given on its label.
        return _minimal(original)
    original = getattr(symbol, "_assumptions_orig", None)
    if original is None:
        original = symbol.assumptions0
    return _minimal({k: v for k, v in original.items() if k in _ORDER})


def _minimal(flags) -> dict:
    shown = {k: v for k, v in flags.items() if v is True}
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


def describe_flags(symbol) -> str:
    """The declared flags of ``symbol`` in words ('positive integer', 'real', ...)."""
    flags = _flags(symbol)
    words = [k for k in _ORDER if flags.get(k) is True]
    words += [f"not {k}" for k in _ORDER if flags.get(k) is False]
    if ("even" in words or "odd" in words) and "integer" not in words:
        words.append("integer")
    if "integer" in words:
        words = [w for w in words if w != "integer"] + ["integer"]
    return " ".join(words)


def _name_latex(symbol) -> str:
    if isinstance(symbol, sympy.IndexedBase):
        return "{" + sympy.latex(symbol.label) + "}_k"
    if isinstance(symbol, sympy.MatrixSymbol):
        return sympy.latex(symbol)
    return sympy.latex(symbol)


def declarations(symbols) -> tuple:
    """One line per group of symbols with the same flags (``$n, d_k$: positive integers``);
    matrix symbols with their shapes (``$P$: an $n \\times n$ matrix``)."""
    groups = {}
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
        out.append(f"${', '.join(names)}$: {text}")
    return tuple(out + lines)
