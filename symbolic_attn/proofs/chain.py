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

from symbolic_attn.errors import AssumptionConflictError, ProofError, UndecidedError
from symbolic_attn.render.latex import escape_text, expr_latex, prose_latex
from symbolic_attn.proofs.declarations import declarations, symbols_of
from symbolic_attn.proofs.prove import Assumption, facts_of, prove_equal, prove_nonnegative, prove_positive

__all__ = ["Assumption", "Computed", "Scope", "Step", "Derivation", "cited"]

_RELATIONS = {"=": "=", "<": "<", ">": ">", "<=": r"\le", ">=": r"\ge"}


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
        """The scope as prose (``$...$`` math allowed; print with ``prose_latex``)."""
        lead = {
            "proved": "Proved for",
            "checked": "Checked (not proved in general) for",
            "counterexample": "Exact counterexample:",
        }[self.kind]
        return f"{lead} {self.detail}."

    def latex(self) -> str:
        """The sentence as LaTeX prose (its ``$...$`` stays math, the rest is escaped)."""
        return prose_latex(self.sentence())

    def __str__(self) -> str:
        detail = _plain_math(self.detail)
        return f"{self.kind} for {detail}" if self.kind != "counterexample" else f"counterexample: {detail}"


@dataclass(frozen=True)
class Computed:
    r"""A value produced by a computation, shown by a formula that is checked against it.

    ``latex`` is either a SymPy expression of named operators (:mod:`.operators`), printed
    as it is and *proved equal* to ``value`` before anything is printed (so a label cannot
    say something else), or a LaTeX string, which is free text: it is then printed as a
    definition ("where ... := ...") listed with the assumptions, with ``meaning`` in words.

    >>> import sympy
    >>> str(Computed(r"\operatorname{softmax}(0)", sympy.Integer(1), "the softmax of one zero score"))
    '\\operatorname{softmax}(0) [= 1]'
    """

    latex: object
    value: object
    meaning: str = ""

    @property
    def label(self):
        """The checked label expression (None for free LaTeX)."""
        return None if isinstance(self.latex, str) else self.latex

    def shown(self) -> str:
        return self.latex if isinstance(self.latex, str) else expr_latex(self.latex)

    def __str__(self) -> str:
        label = self.latex if isinstance(self.latex, str) else sympy.sstr(self.latex)
        return f"{label} [= {_plain(self.value)}]"


def value_of(expr):
    """The mathematical value of an expression or :class:`Computed`."""
    return expr.value if isinstance(expr, Computed) else expr


def latex_of(expr) -> str:
    """LaTeX of an expression, a matrix (``bmatrix``) or a :class:`Computed`."""
    return expr.shown() if isinstance(expr, Computed) else expr_latex(expr)


def definitions_of(items) -> tuple:
    """The free-LaTeX :class:`Computed` among ``items``: printed as definitions."""
    found = {}
    for item in items:
        if isinstance(item, Computed) and item.label is None:
            found.setdefault(item.latex, item.meaning or "computed by the library's exact core")
    return tuple(found.items())


@dataclass(frozen=True)
class Step:
    """One link: ``previous <relation> rhs`` because of ``why``.

    ``using`` names the assumptions (by label) the check may use; ``rules`` names rules of
    the library (:mod:`.rules`) the check applies, each with its side conditions;
    ``cited=True`` marks a rule that is *not* machine-checked (it is printed as such).
    """

    rhs: object
    why: str
    using: tuple = ()
    relation: str = "="
    cited: bool = False
    rules: tuple = ()

    def __post_init__(self):
        if self.relation not in _RELATIONS:
            raise ProofError(f"unknown relation {self.relation!r}; use one of {sorted(_RELATIONS)}")
        object.__setattr__(self, "using", tuple(self.using))
        object.__setattr__(self, "rules", tuple(self.rules))


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
        """Check every non-cited step; return self, or raise ProofError naming the step.

        First the stated conditions are checked against the declarations (a stated
        ``x < 0`` beside a declared positive ``x`` is an AssumptionConflictError).
        """
        self.check_assumptions()
        by_label = {a.label: a for a in self.assumptions}
        previous = self.start
        strategies, rules = [], []
        for number, step in enumerate(self.steps, 1):
            if not step.cited:
                proof = self._check_step(number, previous, step, by_label)
                strategies.append(proof.strategy)
                rules.extend(proof.rules)
            previous = step.rhs
        object.__setattr__(self, "_trusted", (tuple(dict.fromkeys(strategies)), tuple(dict.fromkeys(rules))))
        return self

    def check_assumptions(self) -> None:
        """Raise AssumptionConflictError if a stated condition contradicts a declared flag or
        another stated condition, or states an explicit map to be a bijection that is not one."""
        from symbolic_attn.proofs.conditions import contradicts
        from symbolic_attn.proofs.prove import check_consistent

        for assumption in self.assumptions:
            try:
                conditions = assumption.conditions()
            except ProofError as error:
                raise AssumptionConflictError(f"{self.title!r}: assumption ({assumption.label}): {error}") from None
            for condition in conditions:
                if condition.kind not in (">0", ">=0", "!=0"):
                    continue
                if contradicts(condition):
                    stated = condition.why or f"states {condition}"
                    raise AssumptionConflictError(
                        f"{self.title!r}: assumption ({assumption.label}) {stated}, which contradicts "
                        "the declarations of its symbols")
        try:
            check_consistent(self.assumptions)
        except AssumptionConflictError as error:
            raise AssumptionConflictError(f"{self.title!r}: {error}") from None

    def _check_step(self, number, previous, step, by_label):
        missing = [label for label in step.using if label not in by_label]
        where = (
            f"step {number} of {self.title!r}: {_short(_plain(previous))} {step.relation} "
            f"{_short(_plain(step.rhs))} ({step.why})"
        )
        if missing:
            raise ProofError(f"{where}: uses assumption {', '.join(missing)}, which is not stated")
        used = [by_label[label] for label in step.using]
        try:
            lhs, rhs = value_of(previous), value_of(step.rhs)
            _check_computed(previous, used)
            _check_computed(step.rhs, used)
            return _decide_step(lhs, rhs, step, used)
        except (ProofError, UndecidedError) as error:
            raise _step_error(error)(f"{where}: {error}") from None

    def trusted_base(self) -> tuple:
        """``(strategies, rules)`` that decided the steps (after :meth:`verify`)."""
        if not hasattr(self, "_trusted"):
            self.verify()
        return self._trusted

    def symbols(self) -> list:
        """Every symbol, sequence and matrix symbol of the chain (values and printed labels)."""
        items = [self.start] + [step.rhs for step in self.steps]
        return symbols_of([value_of(e) for e in items] + [e.label for e in items
                                                          if isinstance(e, Computed) and e.label is not None])

    def declarations(self) -> tuple:
        """One line per group of symbols with the same declared flags (generated)."""
        return declarations(self.symbols())

    def definitions(self) -> tuple:
        """``(latex, meaning)`` of every free-LaTeX value in the chain."""
        return definitions_of([self.start] + [step.rhs for step in self.steps])

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
        wide = column_limit < 10**8 and any(len(latex_of(step.rhs)) > _WIDE_FIRST_LINE for step in self.steps)
        for number, step in enumerate(self.steps, 1):
            why = prose_latex(step.why)
            # What the column shows: the justification, the assumptions and the rules.
            shown = len(step.why) + sum(len(label) + 2 for label in step.using) + sum(
                len(name) + 2 for name in _rule_names(step.rules))
            if step.using:
                why += " [" + ", ".join(escape_text(label) for label in step.using) + "]"
            if step.rules:
                why += " [" + ", ".join(escape_text(name) for name in _rule_names(step.rules)) + "]"
            marker = r"\textbf{cited, not machine-checked:} " if step.cited else ""
            if wide:
                # A wide display: any text column would push it past the margin.
                notes.append(f"Step ({number}): {marker}{why}")
                column = f"({number})"
            elif shown > column_limit:
                notes.append(f"Step ({number}): {marker}{why}")
                column = f"({number}) " + (r"\textbf{cited}, see below" if step.cited else "see below")
            else:
                column = f"({number}) {marker}{why}"
            left = latex_of(self.start) + " " if number == 1 else ""
            if left and len(left) + len(latex_of(step.rhs)) > _WIDE_FIRST_LINE:
                # A long first line: the start expression gets a line of its own.
                left = left + "\\\\\n"
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
_COLUMN_CHARACTERS = 56
#: Characters of LaTeX source above which the start and the first step share no line.
_WIDE_FIRST_LINE = 160


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


def _step_error(error):
    """The class to re-raise a failed step with: its own ProofError subclass, else ProofError."""
    return type(error) if isinstance(error, ProofError) else ProofError


def _decide_step(lhs, rhs, step, used):
    from symbolic_attn.proofs.prove import Proof

    if step.relation == "=":
        return prove_equal(lhs, rhs, used, step.rules)
    if step.rules and any(_rule_names(step.rules)[i] == "sum.ge_term" for i in range(len(step.rules))):
        from symbolic_attn.proofs.rules import prove_ge_term

        big, small = (lhs, rhs) if step.relation in (">=", ">") else (rhs, lhs)
        if step.relation in (">", "<"):
            raise ProofError("rule sum.ge_term proves >= (or <=) only")
        prove_equal(big, big, used)  # exactness and side conditions of both sides
        prove_equal(small, small, used)
        prove_ge_term(_unfolded(big), _unfolded(small), facts_of(used))
        return Proof("sign calculus", ("sum.ge_term",))
    difference = {"<": rhs - lhs, ">": lhs - rhs, "<=": rhs - lhs, ">=": lhs - rhs}[step.relation]
    prover = prove_positive if step.relation in ("<", ">") else prove_nonnegative
    proof = prover(difference, used)
    names = tuple(n for n in _rule_names(step.rules) if n in ("sum.positive",))
    return Proof(proof.strategy, names)


def _unfolded(expr):
    from symbolic_attn.proofs.prove import _unfold

    return _unfold(expr)


def _rule_names(rules) -> tuple:
    return tuple(name if isinstance(name, str) else name.name for name in rules)


def _check_computed(expr, used):
    """A :class:`Computed` whose label is an expression must equal its value (printed = checked)."""
    if isinstance(expr, Computed) and expr.label is not None:
        try:
            prove_equal(expr.label, expr.value, used)
        except (ProofError, UndecidedError) as error:
            raise ProofError(f"the printed form {_short(sympy.sstr(expr.label))} is not the computed value: "
                             f"{error}") from None


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())  # one line, whatever the printer did with matrices
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _plain_math(text: str) -> str:
    """Scope prose for a terminal: the math ``$n \\le 6$`` becomes ``n <= 6``."""
    pieces = text.split("$")
    if len(pieces) % 2 == 0:
        return text
    for index in range(1, len(pieces), 2):
        piece = pieces[index]
        for macro, plain in ((r"\le", " <= "), (r"\ge", " >= "), (r"\times", " x "), (r"\sqrt", "sqrt"),
                             (r"\,", " "), (r"\dots", "..."), ("{", ""), ("}", "")):
            piece = piece.replace(macro, plain)
        pieces[index] = " ".join(piece.split())
    return "".join(pieces)


def _plain(expr) -> str:
    try:
        if isinstance(expr, Computed):
            return str(expr)
        if isinstance(expr, sympy.MatrixBase):
            return str(expr.tolist())
        return sympy.sstr(expr)
    except (ValueError, RecursionError):  # an integer of more than 4300 digits, a tree nested too deeply
        return "<an expression too large to print>"

