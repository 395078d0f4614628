r"""Random variables in a student's derivation: what was declared random, and the operators.

A derivation of the :math:`\sqrt{d_k}` scaling speaks of random vectors: the declarations say
which letters are random, which of them are independent, and their means and variances::

    q, k: random vector d_k, all components independent, mean 0, variance 1
    X, Y: random, independent, mean 0, variance 1
    Z: random, mean mu, variance s

The names of one statement are one :class:`RandomFamily`.  *independent* (for vectors *all
components independent*) puts the names in the one independent collection: every component
of every name declared independent -- in this statement or another -- is independent of
every other component declared independent.  Nothing is assumed about a name not declared
independent: it may depend on anything, the independent ones included.  A variance declared
0 makes every component its mean.  The mean and the variance are those of every component; either may be left out
(it is then unknown).  Every moment a derivation uses is assumed finite.

The reader reads ``\mathbb{E}[X]`` as :class:`Expectation` and ``\operatorname{Var}(X)`` as
:class:`Var`, both kept unevaluated: what they equal is decided by the rules of
:mod:`symbolic_attn.steps.expectation`, never by SymPy.

>>> import sympy
>>> family = RandomFamily(("q", "k"), "vector", True, sympy.Integer(0), sympy.Integer(1))
>>> randomness = Randomness((family,))
>>> q = sympy.IndexedBase("q", real=True)
>>> randomness.family_of(q[1]) is family, randomness.is_random(q[2] + 1), randomness.is_random(sympy.Integer(3))
(True, True, False)
>>> Var(q[1]).is_nonnegative, Expectation(q[1])
(True, E[q[1]])
"""

from dataclasses import dataclass
from typing import Any

import sympy

__all__ = ["Expectation", "Var", "Cov", "RandomFamily", "Randomness", "NO_RANDOMNESS", "has_operators", "Unknowns"]


class _Moment(sympy.Function):  # type: ignore[misc]  # sympy is untyped
    """An expectation, variance or covariance kept unevaluated, printed as the student
    writes it: its word, then its arguments in its brackets (plain and LaTeX); real
    when its arguments are."""

    _plain: tuple[str, str, str] = ("", "(", ")")
    _latex_form: tuple[str, str, str] = ("", "(", ")")

    def _eval_is_real(self) -> Any:
        return True if all(argument.is_real for argument in self.args) else None

    def _sympystr(self, printer: Any) -> str:
        word, opening, closing = self._plain
        return word + opening + ", ".join(printer._print(a) for a in self.args) + closing

    def _latex(self, printer: Any, exp: Any = None) -> str:
        word, opening, closing = self._latex_form
        text = r"%s\left%s%s\right%s" % (word, opening, ", ".join(printer._print(a) for a in self.args), closing)
        return text if exp is None else "%s^{%s}" % (text, exp)


class Expectation(_Moment):
    r"""``\mathbb{E}[X]``, unevaluated."""

    nargs = 1
    _plain = ("E", "[", "]")
    _latex_form = (r"\mathbb{E}", "[", "]")


class Var(_Moment):
    r"""``\operatorname{Var}(X)``, unevaluated: ``E[X^2] - E[X]^2``."""

    nargs = 1
    _plain = ("Var", "(", ")")
    _latex_form = (r"\operatorname{Var}", "(", ")")

    def _eval_is_nonnegative(self) -> Any:
        return True if self.args[0].is_real else None


class Cov(_Moment):
    r"""``\operatorname{Cov}(X, Y)``, unevaluated: ``E[X Y] - E[X] E[Y]``."""

    nargs = 2
    _plain = ("Cov", "(", ")")
    _latex_form = (r"\operatorname{Cov}", "(", ")")


@dataclass(frozen=True)
class RandomFamily:
    """The names one statement declared random: ``shape`` is ``vector`` or ``scalar``;
    ``independent`` whether all their components are mutually independent; ``mean`` and
    ``variance`` of every component (SymPy values), or None when not declared."""

    names: tuple[str, ...]
    shape: str
    independent: bool
    mean: Any
    variance: Any

    def text(self) -> str:
        parts = ["random vector" if self.shape == "vector" else "random"]
        if self.independent:
            parts.append("all components independent" if self.shape == "vector" else "independent")
        if self.mean is not None:
            parts.append(f"mean {sympy.sstr(self.mean)}")
        if self.variance is not None:
            parts.append(f"variance {sympy.sstr(self.variance)}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Randomness:
    """Every random family of a derivation's declarations."""

    families: tuple[RandomFamily, ...] = ()

    def family_named(self, name: str) -> RandomFamily | None:
        for family in self.families:
            if name in family.names:
                return family
        return None

    def family_of(self, atom: Any) -> RandomFamily | None:
        """The family of a random atom (an entry ``q[i]`` of a random vector, or a random
        scalar symbol); None for anything else."""
        if isinstance(atom, sympy.Indexed):
            return self.family_named(str(atom.base.label))
        if isinstance(atom, sympy.Symbol):
            family = self.family_named(atom.name)
            return family if family is not None and family.shape == "scalar" else None
        return None

    def atoms(self, expr: Any, *, in_moments: bool = False) -> set[Any]:
        """The random atoms of ``expr`` (entries of random vectors, random scalars), outside
        any expectation, variance or covariance (a moment is a number, not random) -- or
        everywhere, ``in_moments``."""
        if not isinstance(expr, sympy.Basic) or not self.families:
            return set()
        if isinstance(expr, (sympy.Indexed, sympy.Symbol)):
            return {expr} if self.family_of(expr) is not None else set()
        if isinstance(expr, (Expectation, Var, Cov)) and not in_moments:
            return set()
        found: set[Any] = set()
        for argument in expr.args:
            found |= self.atoms(argument, in_moments=in_moments)
        return found

    def is_random(self, expr: Any) -> bool:
        """Whether ``expr`` depends on a random atom."""
        return bool(self.atoms(expr))

    def key(self) -> tuple[Any, ...]:
        """What the families are, hashable (a decision remembered depends on it)."""
        return tuple((f.names, f.shape, f.independent, f.mean, f.variance) for f in self.families)


#: Declarations with no random variable.
NO_RANDOMNESS = Randomness()


def has_operators(expr: Any) -> bool:
    """Whether ``expr`` holds an expectation or a variance."""
    return isinstance(expr, sympy.Basic) and bool(expr.atoms(Expectation, Var, Cov))


class Unknowns:
    """Expectations and variances left unevaluated, each replaced by one unknown function of
    its indices -- the same unknown wherever it is the same moment -- so that the checker,
    which has no rule for them, compares them as unknowns (sound: what holds for every
    function holds for the moment).

    >>> q = sympy.IndexedBase("q", real=True)
    >>> i, l = sympy.symbols("i l", integer=True)
    >>> unknowns = Unknowns()
    >>> unknowns.abstract(Expectation(q[i] ** 4)), unknowns.abstract(Expectation(q[l] ** 4) + Var(q[i]))
    (E1(i), E1(l) + Var1(i))
    """

    def __init__(self) -> None:
        self.functions: dict[Any, Any] = {}
        self.used: set[Any] = set()

    def abstract(self, expr: Any) -> Any:
        if not isinstance(expr, sympy.Basic) or not expr.has(Expectation, Var, Cov):
            return expr
        return expr.replace(lambda e: isinstance(e, (Expectation, Var, Cov)), self.unknown)

    def unknown(self, moment: Any) -> Any:
        inside = sympy.Tuple(*moment.args) if isinstance(moment, Cov) else moment.args[0]
        indices = [s for s in sympy.preorder_traversal(inside) if isinstance(s, sympy.Symbol) and s.is_integer]
        indices = list(dict.fromkeys(indices))
        placeholders = {index: sympy.Symbol(f"_{position}", integer=True) for position, index in enumerate(indices)}
        template = (type(moment).__name__, inside.xreplace(placeholders))
        if template not in self.functions:
            kind = type(moment).__name__.replace("Expectation", "E")
            number = sum(1 for key in self.functions if key[0] == template[0]) + 1
            self.functions[template] = sympy.Function(f"{kind}{number}", real=True)
        self.used.add(moment)
        return self.functions[template](*indices) if indices else self.functions[template](sympy.Integer(0))
