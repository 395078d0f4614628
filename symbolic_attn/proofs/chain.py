r"""A derivation is a chain ``e0 R1 e1 R2 e2 ...``, each link justified and checked.

Modelled on Lean's ``calc`` blocks: every :class:`Step` holds the relation, the next
expression and a justification.  :meth:`Derivation.verify` decides each link with
:func:`symbolic_attn.proofs.prove.prove_equal` (or :func:`prove_positive` for ``<``/``>``),
using only the :class:`Assumption` objects the step names.  A step that is a *cited*
rule (a known fact we do not machine-check, e.g. a lemma checked only up to some n) is
never passed off as checked: it is printed with "cited, not machine-checked".

>>> import sympy
>>> x = sympy.Symbol("x")
>>> chain = Derivation("Square", x * (x + 2) + 1, [
...     Step((x + 1) ** 2, "complete the square"),
... ], scope=Scope.proved("every x"))
>>> print(chain.verify())
Square  [proved for every x]
  x*(x + 2) + 1
  = (x + 1)**2    (complete the square)  [expand]
>>> chain.with_step(1, rhs=(x - 1) ** 2).verify()
Traceback (most recent call last):
...
symbolic_attn.errors.ProofError: step 1 of 'Square': x*(x + 2) + 1 = (x - 1)**2 (complete the square): refuted: residual 4*x is 2 at x=1/2
"""

import dataclasses
from dataclasses import dataclass
from typing import Sequence

import sympy

from symbolic_attn.errors import ProofError, UndecidedError
from symbolic_attn.render.latex import escape_text, expr_latex, prose_latex
from symbolic_attn.proofs.prove import Assumption, prove_equal, prove_positive

__all__ = ["Assumption", "Computed", "Scope", "Step", "Derivation", "cited"]

_RELATIONS = {"=": "=", "<": "<", ">": ">"}


@dataclass(frozen=True)
class Scope:
    """How far a result is established: ``proved``, ``checked`` (finitely many cases) or
    ``counterexample``; ``detail`` says for what ("every n", "every n <= 6 ...").

    >>> Scope.checked("every n <= 6 with fully symbolic entries").sentence()
    'Checked (not proved in general) for every n <= 6 with fully symbolic entries.'
    """

    kind: str
    detail: str

    @classmethod
    def proved(cls, detail: str) -> "Scope":
        return cls("proved", detail)

    @classmethod
    def checked(cls, detail: str) -> "Scope":
        return cls("checked", detail)

    @classmethod
    def counterexample(cls, detail: str) -> "Scope":
        return cls("counterexample", detail)

    def sentence(self) -> str:
        lead = {
            "proved": "Proved for",
            "checked": "Checked (not proved in general) for",
            "counterexample": "Exact counterexample:",
        }[self.kind]
        return f"{lead} {self.detail}."

    def __str__(self) -> str:
        return f"{self.kind} for {self.detail}" if self.kind != "counterexample" else f"counterexample: {self.detail}"


@dataclass(frozen=True)
class Computed:
    r"""A value produced by a computation, shown as a formula: ``softmax(s)`` *is* ``value``.

    Proofs use ``value``; LaTeX shows ``latex``.  This is how a derivation starts from
    the attention core's exact output without printing its whole closed form.

    >>> import sympy
    >>> str(Computed(r"\operatorname{softmax}(0)", sympy.Integer(1)))
    '\\operatorname{softmax}(0) [= 1]'
    """

    latex: str
    value: object

    def __str__(self) -> str:
        return f"{self.latex} [= {_plain(self.value)}]"


def value_of(expr):
    """The mathematical value of an expression or :class:`Computed`."""
    return expr.value if isinstance(expr, Computed) else expr


def latex_of(expr) -> str:
    """LaTeX of an expression, a matrix (``bmatrix``) or a :class:`Computed`."""
    return expr.latex if isinstance(expr, Computed) else expr_latex(expr)


@dataclass(frozen=True)
class Step:
    """One link: ``previous <relation> rhs`` because of ``why``.

    ``using`` names the assumptions (by label) the check may use; ``cited=True`` marks
    a rule that is *not* machine-checked (it is printed as such).
    """

    rhs: object
    why: str
    using: tuple = ()
    relation: str = "="
    cited: bool = False

    def __post_init__(self):
        if self.relation not in _RELATIONS:
            raise ValueError(f"unknown relation {self.relation!r}; use one of {sorted(_RELATIONS)}")
        object.__setattr__(self, "using", tuple(self.using))


def cited(rhs, why: str, relation: str = "=") -> Step:
    """A step justified by citing a rule rather than by a machine check."""
    return Step(rhs, why, relation=relation, cited=True)


@dataclass(frozen=True)
class Derivation:
    """A checked chain of relations starting from ``start``."""

    title: str
    start: object
    steps: Sequence[Step]
    assumptions: Sequence[Assumption] = ()
    scope: Scope = Scope.proved("all values of the symbols")
    note: str = ""

    def __post_init__(self):
        object.__setattr__(self, "steps", tuple(self.steps))
        object.__setattr__(self, "assumptions", tuple(self.assumptions))

    # ------------------------------------------------------------------ checking

    def verify(self) -> "Derivation":
        """Check every non-cited step; return self, or raise ProofError naming the step."""
        by_label = {a.label: a for a in self.assumptions}
        previous = self.start
        for number, step in enumerate(self.steps, 1):
            if not step.cited:
                self._check_step(number, previous, step, by_label)
            previous = step.rhs
        return self

    def _check_step(self, number, previous, step, by_label):
        missing = [label for label in step.using if label not in by_label]
        where = (
            f"step {number} of {self.title!r}: {_plain(previous)} {step.relation} "
            f"{_plain(step.rhs)} ({step.why})"
        )
        if missing:
            raise ProofError(f"{where}: uses assumption {', '.join(missing)}, which is not stated")
        used = [by_label[label] for label in step.using]
        lhs, rhs = value_of(previous), value_of(step.rhs)
        try:
            if step.relation == "=":
                prove_equal(lhs, rhs, used)
            elif step.relation == "<":
                prove_positive(rhs - lhs, used)
            else:
                prove_positive(lhs - rhs, used)
        except (ProofError, UndecidedError) as error:
            raise ProofError(f"{where}: {error}") from None

    # ------------------------------------------------------------------ variants

    def with_step(self, number: int, **changes) -> "Derivation":
        """A copy with step ``number`` (1-based) changed, e.g. to show a wrong step fails."""
        steps = list(self.steps)
        steps[number - 1] = dataclasses.replace(steps[number - 1], **changes)
        return dataclasses.replace(self, steps=tuple(steps))

    def without_assumption(self, label: str) -> "Derivation":
        """A copy in which the assumption ``label`` is no longer stated."""
        kept = tuple(a for a in self.assumptions if a.label != label)
        if len(kept) == len(self.assumptions):
            raise KeyError(label)
        return dataclasses.replace(self, assumptions=kept)

    @property
    def cited_steps(self) -> tuple:
        """Numbers of the steps that are cited rather than machine-checked."""
        return tuple(number for number, step in enumerate(self.steps, 1) if step.cited)

    # ------------------------------------------------------------------ printing

    def latex(self, column_limit: int | None = None) -> str:
        r"""The chain as an amsmath ``align*``, justifications in a ``\text{}`` column.

        A justification longer than ``column_limit`` characters (default: what fits on a
        page; ``\text`` never wraps) is printed as a note below the display instead.
        """
        column_limit = _COLUMN_CHARACTERS if column_limit is None else column_limit
        lines, notes = [], []
        for number, step in enumerate(self.steps, 1):
            why = prose_latex(step.why)
            if step.using:
                why += " [" + ", ".join(escape_text(label) for label in step.using) + "]"
            marker = r"\textbf{cited, not machine-checked:} " if step.cited else ""
            if len(step.why) > column_limit:
                notes.append(f"Step ({number}): {marker}{why}")
                column = f"({number}) " + (r"\textbf{cited}, see below" if step.cited else "see below")
            else:
                column = f"({number}) {marker}{why}"
            left = latex_of(self.start) + " " if number == 1 else ""
            lines.append(f"{left}&{_RELATIONS[step.relation]} {latex_of(step.rhs)} && \\text{{{column}}}")
        body = " \\\\\n".join(lines)
        display = "\\begin{align*}\n" + body + "\n\\end{align*}"
        return display + "".join("\n\n" + note for note in notes)

    def _latex(self, printer=None) -> str:
        return self.latex()

    def _repr_latex_(self) -> str:
        # A notebook cell has no page width: every justification stays in its column.
        return "$\\displaystyle " + self.latex(column_limit=10**9).replace("align*", "aligned") + "$"

    def describe(self) -> str:
        """One line: title and scope."""
        return f"{self.title}: {self.scope}"

    def __str__(self) -> str:
        lines = [f"{self.title}  [{self.scope}]", f"  {_plain(self.start)}"]
        for step in self.steps:
            mark = "cited" if step.cited else _strategy_hint(self, step)
            lines.append(f"  {step.relation} {_plain(step.rhs)}    ({step.why})  [{mark}]")
        return "\n".join(lines)


#: Longest justification (in characters of its source text) kept in the display's column.
_COLUMN_CHARACTERS = 64


def _strategy_hint(derivation: Derivation, step: Step) -> str:
    """Which strategy proves the step (for the readable ``str``); 'unchecked' if none."""
    index = derivation.steps.index(step)
    previous = derivation.start if index == 0 else derivation.steps[index - 1].rhs
    used = [a for a in derivation.assumptions if a.label in step.using]
    if step.relation != "=":
        return "positivity"
    try:
        return prove_equal(value_of(previous), value_of(step.rhs), used).strategy
    except (ProofError, UndecidedError):
        return "NOT PROVED"


def _plain(expr) -> str:
    if isinstance(expr, Computed):
        return str(expr)
    if isinstance(expr, sympy.MatrixBase):
        return str(expr.tolist())
    return sympy.sstr(expr)

