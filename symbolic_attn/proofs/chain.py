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
symbolic_attn.errors.RefutedError: step 1 of 'Square': x*(x + 2) + 1 = (x - 1)**2 (complete the square): refuted: residual 4*x is 2 at x=1/2
"""

import dataclasses
from dataclasses import dataclass
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import sympy

from symbolic_attn.errors import (
    AssumptionConflictError, ProofError, ScopeError, SymbolicAttnError, UndecidedError, one_line)
from symbolic_attn.render.latex import escape_text, expr_latex, prose_latex
from symbolic_attn.proofs.declarations import declarations, symbols_of
from symbolic_attn.proofs.conditions import contradicts
from symbolic_attn.proofs.messages import plain_text, short_line
from symbolic_attn.proofs.notation import unfold
from symbolic_attn.proofs.prove import (
    Assumption, Proof, check_consistent, examine, facts_of, prove_equal, prove_nonnegative, prove_positive)
from symbolic_attn.proofs.rules import prove_ge_term

__all__ = ["Assumption", "Computed", "Scope", "Step", "Derivation", "cited", "Displayed", "check_computed", "step_error"]

_RELATIONS = {"=": "=", "<": "<", ">": ">", "<=": r"\le", ">=": r"\ge"}


_SCOPE_LEADS = {
    "proved": "Proved for",
    "checked": "Checked (not proved in general) for",
    "counterexample": "Exact counterexample:",
    "cited": "Cited, not machine-checked:",
}


@dataclass(frozen=True)
class Scope:
    """How far a result is established: ``proved``, ``checked`` (finitely many cases),
    ``counterexample`` or ``cited`` (not machine-checked); ``detail`` says for what
    ("every n", "every n <= 6 ...").

    The kind must fit the part that carries it (a :class:`ScopeError` otherwise): a
    :class:`~.result.Check` is ``checked``, a :class:`~.result.Counterexample` is a
    ``counterexample``, a :class:`Derivation` whose steps are all cited is ``cited``.

    >>> Scope.checked("every n <= 6 with fully symbolic entries").sentence()
    'Checked (not proved in general) for every n <= 6 with fully symbolic entries.'
    >>> Scope.cited("the textbook's lemma").sentence()
    "Cited, not machine-checked: the textbook's lemma."
    """

    kind: str
    detail: str

    def __post_init__(self) -> None:
        if self.kind not in _SCOPE_LEADS:
            raise ScopeError(f"unknown scope kind {self.kind!r}; use one of {sorted(_SCOPE_LEADS)}")

    @classmethod
    def proved(cls, detail: str) -> "Scope":
        return cls("proved", detail)

    @classmethod
    def checked(cls, detail: str) -> "Scope":
        return cls("checked", detail)

    @classmethod
    def counterexample(cls, detail: str) -> "Scope":
        return cls("counterexample", detail)

    @classmethod
    def cited(cls, detail: str) -> "Scope":
        return cls("cited", detail)

    def sentence(self) -> str:
        """The scope as prose (``$...$`` math allowed; print with ``prose_latex``)."""
        return f"{_SCOPE_LEADS[self.kind]} {self.detail}."

    def latex(self) -> str:
        """The sentence as LaTeX prose (its ``$...$`` stays math, the rest is escaped)."""
        return prose_latex(self.sentence())

    def __str__(self) -> str:
        detail = _plain_math(self.detail)
        return f"{self.kind} for {detail}" if self.kind not in ("counterexample", "cited") else f"{self.kind}: {detail}"


def require_scope(part: Any, kinds: tuple[Any, ...], what: str) -> None:
    """Raise :class:`ScopeError` unless ``part.scope`` is of one of ``kinds`` (one line)."""
    if not isinstance(part.scope, Scope):
        raise ScopeError(f"{type(part).__name__} {part.title!r}: scope must be a Scope, got {type(part.scope).__name__}")
    if part.scope.kind not in kinds:
        allowed = " or ".join(f"Scope.{kind}(...)" for kind in kinds)
        raise ScopeError(f"{type(part).__name__} {part.title!r}: {what}, so its scope must be {allowed}, "
                         f"not Scope.{part.scope.kind}(...)")


#: What a free-LaTeX label is marked with wherever it is displayed (amsmath and KaTeX both read it).
UNCHECKED_MARK = r"\text{unchecked label}"


@dataclass(frozen=True)
class Computed:
    r"""A value produced by a computation, shown by a formula that is checked against it.

    ``latex`` is either a SymPy expression of named operators (:mod:`.operators`), printed
    as it is and *proved equal* to ``value`` before anything is printed (so a label cannot
    say something else), or a LaTeX string, which is free text the checker never reads: it
    is then printed visibly as the author's *unchecked label* -- under a brace marked
    "unchecked label" in every display, and listed with the assumptions ("where ... :=
    ``meaning`` (unchecked label ...)").

    >>> import sympy
    >>> str(Computed(r"\operatorname{softmax}(0)", sympy.Integer(1), "the softmax of one zero score"))
    '\\operatorname{softmax}(0) [unchecked label; = 1]'
    >>> print(Computed(r"\operatorname{softmax}(0)", sympy.Integer(1)).shown())
    \underbrace{\operatorname{softmax}(0)}_{\text{unchecked label}}
    """

    latex: object
    value: object
    meaning: str = ""

    @property
    def label(self) -> Any:
        """The checked label expression (None for free LaTeX)."""
        return None if isinstance(self.latex, str) else self.latex

    def shown(self) -> str:
        """LaTeX of the label: a checked expression as it is, free LaTeX marked unchecked."""
        if isinstance(self.latex, str):
            return "\\underbrace{" + self.latex + "}_{" + UNCHECKED_MARK + "}"
        return str(expr_latex(self.latex))

    def __str__(self) -> str:
        if isinstance(self.latex, str):
            return f"{self.latex} [unchecked label; = {_plain(self.value)}]"
        return f"{sympy.sstr(self.latex)} [= {_plain(self.value)}]"


def value_of(expr: Any) -> Any:
    """The mathematical value of an expression or :class:`Computed`."""
    return expr.value if isinstance(expr, Computed) else expr


def latex_of(expr: Any) -> str:
    """LaTeX of an expression, a matrix (``bmatrix``) or a :class:`Computed`."""
    return expr.shown() if isinstance(expr, Computed) else expr_latex(expr)


def definitions_of(items: Any) -> tuple[Any, ...]:
    """The free-LaTeX :class:`Computed` among ``items``: printed as definitions."""
    found: dict[Any, str] = {}
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
    using: tuple[Any, ...] = ()
    relation: str = "="
    cited: bool = False
    rules: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if self.relation not in _RELATIONS:
            raise ProofError(f"unknown relation {self.relation!r}; use one of {sorted(_RELATIONS)}")
        object.__setattr__(self, "using", tuple(self.using))
        object.__setattr__(self, "rules", tuple(self.rules))


def cited(rhs: Any, why: str, relation: str = "=") -> Step:
    """A step justified by citing a rule rather than by a machine check."""
    return Step(rhs, why, relation=relation, cited=True)


class Displayed:
    """Display paths of a part or result that verify first (printed = checked).

    ``latex()`` and ``sympy.latex(obj)`` (which write files and documents) verify and raise
    the :class:`ProofError`; ``_repr_latex_``, ``_repr_markdown_`` and ``str()`` (notebooks
    and terminals) verify and, on failure, show **NOT VERIFIED** with the one-line reason
    instead of clean math.  A successful verification is remembered on the object.
    """

    if TYPE_CHECKING:  # what every displayed object provides (declared for the type checker only)
        title: str
        #: What verification relied on, set by ``verify``: (strategies, rules).
        _trusted: tuple[tuple[str, ...], tuple[str, ...]]

        def verify(self) -> "Displayed": ...

        def latex(self) -> str: ...

    def verification_failure(self) -> SymbolicAttnError | None:
        """None once verified (remembered), else the error that verification raised."""
        if getattr(self, "_verified", False):
            return None
        try:
            self.verify()
        except SymbolicAttnError as error:
            return error
        return None

    def _ensure_verified(self) -> None:
        if not getattr(self, "_verified", False):
            self.verify()

    def _latex(self, printer: Any = None) -> str:
        return self.latex()

    def _repr_markdown_(self) -> str:
        from symbolic_attn.render.markdown import latex_to_markdown

        failure = self.verification_failure()
        if failure is not None:
            return unverified_markdown(self, failure)
        return latex_to_markdown(standalone_latex(self))


def unverified_reason(error: BaseException) -> str:
    """The one-line reason shown beside NOT VERIFIED."""
    return one_line(error, width=300)


def unverified_math(title: str, error: BaseException) -> str:
    r"""A notebook display of something that did not verify: text, never clean math.

    >>> print(unverified_math("Sq", ProofError("step 1: refuted")))
    $\displaystyle \begin{aligned}&\text{NOT VERIFIED: Sq}\\&\text{step 1: refuted}\end{aligned}$
    """
    from symbolic_attn.render.markdown import math_text

    return ("$\\displaystyle \\begin{aligned}&\\text{" + math_text("NOT VERIFIED: " + title) + "}\\\\&\\text{"
            + math_text(unverified_reason(error)) + "}\\end{aligned}$")


def unverified_markdown(thing: Any, error: BaseException) -> str:
    """Markdown of something that did not verify: the reason, then its plain text."""
    from symbolic_attn.render.markdown import escape_markdown

    return (f"**NOT VERIFIED:** {escape_markdown(unverified_reason(error))}\n\n```text\n{thing}\n```\n")


def condition_latex(assumption: Assumption) -> str:
    r"""LaTeX of the condition the checker uses for ``assumption`` (generated from the
    condition object, so it is the one used), or ``""`` without one.

    >>> x = sympy.Symbol("x")
    >>> condition_latex(Assumption("A1", "$x \\ge 0$", condition=x > 0))
    '$x > 0$'
    """
    if assumption.condition is None:
        return ""
    items = assumption.condition if isinstance(assumption.condition, (list, tuple)) else [assumption.condition]
    return ", ".join(_one_condition_latex(item) for item in items)


def _one_condition_latex(item: Any) -> str:
    if item is True or item is sympy.true:
        return "none (the relation is already true for the declared symbols)"
    if all(hasattr(item, name) for name in ("function", "low", "high")):  # a rules.Bijection
        return (f"${expr_latex(item.function)}$ a bijection of "
                f"$\\{{{expr_latex(sympy.sympify(item.low, strict=True))}, \\dots, {expr_latex(sympy.sympify(item.high, strict=True))}\\}}$")
    if isinstance(item, sympy.logic.boolalg.And):
        return ", ".join(_one_condition_latex(arg) for arg in item.args)
    if all(hasattr(item, name) for name in ("variable", "low", "high", "relation")):  # a ForAll
        relations = item.relation if isinstance(item.relation, (list, tuple)) else [item.relation]
        shown = ", ".join(expr_latex(sympy.sympify(r, strict=True)) for r in relations)
        return (f"${shown}$ for every integer ${expr_latex(item.variable)}$ with "
                f"${expr_latex(sympy.sympify(item.low, strict=True))} \\le {expr_latex(item.variable)} \\le "
                f"{expr_latex(sympy.sympify(item.high, strict=True))}$")
    if isinstance(item, sympy.assumptions.AppliedPredicate) and item.function == sympy.Q.invertible:
        return f"${expr_latex(item.arguments[0])}$ invertible"
    if isinstance(item, (sympy.Basic, bool)):
        return f"${expr_latex(sympy.sympify(item, strict=True))}$"
    return escape_text(str(item))


def condition_text(assumption: Assumption) -> str:
    """The checker's condition as plain text (for ``str``)."""
    if assumption.condition is None:
        return ""
    items = assumption.condition if isinstance(assumption.condition, (list, tuple)) else [assumption.condition]
    def text(item: Any) -> Any:
        if all(hasattr(item, name) for name in ("variable", "low", "high", "relation")):  # a ForAll
            relations = item.relation if isinstance(item.relation, (list, tuple)) else [item.relation]
            return (", ".join(sympy.sstr(r) for r in relations)
                    + f" for every integer {item.variable} in {item.low}..{item.high}")
        return sympy.sstr(item) if isinstance(item, sympy.Basic) else str(item)

    return ", ".join(text(item) for item in items)


def assumption_latex(assumption: Assumption) -> str:
    r"""One printed assumption: label, the author's text and formula, and the condition the
    checker uses (generated), so that a text saying ``x \ge 0`` beside a condition
    ``x > 0`` shows both.

    >>> x = sympy.Symbol("x")
    >>> assumption_latex(Assumption("A1", "$x$ is not negative", "x \\ge 0", condition=x > 0))
    '(A1) $x$ is not negative: $x \\ge 0$; condition used by the checker: $x > 0$'
    """
    text = f"({escape_text(assumption.label)}) {prose_latex(assumption.text)}"
    text += f": ${assumption.latex}$" if assumption.latex else ""
    used = condition_latex(assumption)
    return text + (f"; condition used by the checker: {used}" if used else "")


def assumption_lines(assumptions: Any, declared: Any, defined: Any) -> list[Any]:
    r"""The ``\item`` lines of an assumptions list: stated assumptions, declared flags and
    unchecked labels (empty when there is nothing to list)."""
    out = [f"\\item {assumption_latex(a)}" for a in assumptions]
    if declared:
        out.append("\\item Declared (the flags the checker uses): " + "; ".join(declared) + ".")
    groups: dict[str, list[str]] = {}
    for latex, meaning in defined:
        groups.setdefault(meaning, []).append(f"${latex}$")
    out.extend(f"\\item where {', '.join(names)} := {prose_latex(meaning)} (unchecked label: notation written by "
               "the author, not a checked formula; the checker used only the value)"
               for meaning, names in groups.items())
    return out


def scope_latex(part: Any) -> str:
    """A part's scope sentence, with its cited steps named (a proved chain may cite some)."""
    text: str = part.scope.latex()
    cited_steps = getattr(part, "cited_steps", ())
    if cited_steps and part.scope.kind != "cited":
        text += " " + prose_latex(f"Step {', '.join(map(str, cited_steps))} cited, not machine-checked.")
    return text


def standalone_latex(part: Any) -> str:
    """A part printed alone (a notebook's Markdown): title, its assumptions, its scope, then
    its display; verified first (raises ProofError)."""
    part._ensure_verified()
    out = [f"\\subsection*{{{prose_latex(part.title)}}}", ""]
    items = assumption_lines(part.assumptions, part.declarations(), part.definitions())
    out.append("\\paragraph{Assumptions.}")
    out.extend(["\\begin{itemize}", *items, "\\end{itemize}"] if items else ["None beyond the definitions."])
    out.extend(["", "\\paragraph{Scope.} " + scope_latex(part), ""])
    if part.note:
        out.append(prose_latex(part.note))
    out.append(part.latex())
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class Derivation(Displayed):
    r"""A checked chain of relations starting from ``start``.

    ``scope`` says what the chain establishes; by default "proved for all values of the
    symbols", or, when every step is cited, "cited, not machine-checked" (a chain of cited
    steps only may not say proved: :class:`ScopeError`; nor may a chain say counterexample).

    Displays verify first: ``latex()`` (and ``sympy.latex``) raise the ProofError, a
    notebook's ``_repr_latex_`` and ``str()`` say NOT VERIFIED:

    >>> x = sympy.Symbol("x")
    >>> wrong = Derivation("Twice", 2 * x, [Step(x ** 2, "double")])
    >>> print(wrong)  # doctest: +ELLIPSIS
    Twice  [NOT VERIFIED: step 1 of 'Twice': 2*x = x**2 (double): refuted: residual ... at x=1/2]
      2*x
      = x**2    (double)  [FAILED]
    >>> wrong.latex()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.RefutedError: step 1 of 'Twice': 2*x = x**2 (double): refuted: residual ... at x=1/2
    >>> "NOT VERIFIED" in wrong._repr_latex_()
    True
    >>> Derivation("Cited", x, [cited(x, "a book")], scope=Scope.proved("every x"))
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.ScopeError: Derivation 'Cited': every step is cited (not machine-checked), so its scope must be Scope.cited(...), not Scope.proved(...)
    """

    title: str
    start: object
    steps: Sequence[Step]
    assumptions: Sequence[Assumption] = ()
    scope: Scope = None  # type: ignore[assignment]  # None: the default scope, set by __post_init__
    note: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", tuple(self.steps))
        object.__setattr__(self, "assumptions", tuple(self.assumptions))
        all_cited = bool(self.steps) and all(step.cited for step in self.steps)
        if self.scope is None:
            detail = "all values of the symbols"
            object.__setattr__(self, "scope", Scope.cited(detail) if all_cited else Scope.proved(detail))
        if all_cited:
            require_scope(self, ("cited",), "every step is cited (not machine-checked)")
        else:
            require_scope(self, ("proved", "checked", "cited"), "a chain of steps is not a counterexample")

    # ------------------------------------------------------------------ checking

    def verify(self) -> "Derivation":
        """Check every non-cited step; return self, or raise ProofError naming the step.

        First the stated conditions are checked against the declarations (a stated
        ``x < 0`` beside a declared positive ``x`` is an AssumptionConflictError), and the
        symbols are collected (two different symbols printed alike: NameClashError).
        A success is remembered: the displays then print without checking again.
        """
        object.__setattr__(self, "_marks", ())
        object.__setattr__(self, "_failed_step", None)
        self.check_assumptions()
        self.symbols()
        by_label = {a.label: a for a in self.assumptions}
        previous = self.start
        strategies, rules, marks = [], [], []
        for number, step in enumerate(self.steps, 1):
            if step.cited:
                marks.append("cited")
            else:
                try:
                    proof = self._check_step(number, previous, step, by_label)
                except SymbolicAttnError:
                    object.__setattr__(self, "_marks", tuple(marks))
                    object.__setattr__(self, "_failed_step", number)
                    raise
                strategies.append(proof.strategy)
                rules.extend(proof.rules)
                marks.append(proof.strategy)
            previous = step.rhs
        object.__setattr__(self, "_trusted", (tuple(dict.fromkeys(strategies)), tuple(dict.fromkeys(rules))))
        object.__setattr__(self, "_marks", tuple(marks))
        object.__setattr__(self, "_verified", True)
        return self

    def check_assumptions(self) -> None:
        """Raise AssumptionConflictError if a stated condition contradicts a declared flag or
        another stated condition, or states an explicit map to be a bijection that is not one."""

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
        except (AssumptionConflictError, UndecidedError) as error:
            raise AssumptionConflictError(f"{self.title!r}: {error}") from None

    def _check_step(self, number: Any, previous: Any, step: Any, by_label: Any) -> Any:
        missing = [label for label in step.using if label not in by_label]
        where = (
            f"step {number} of {self.title!r}: {short_line(_plain(previous), 160)} {step.relation} "
            f"{short_line(_plain(step.rhs), 160)} ({step.why})"
        )
        if missing:
            raise ProofError(f"{where}: uses assumption {', '.join(missing)}, which is not stated")
        used = [by_label[label] for label in step.using]
        try:
            lhs, rhs = value_of(previous), value_of(step.rhs)
            check_computed(previous, used)
            check_computed(step.rhs, used)
            return _decide_step(lhs, rhs, step, used)
        except (ProofError, UndecidedError) as error:
            raise step_error(error)(f"{where}: {error}") from None

    def trusted_base(self) -> tuple[Any, ...]:
        """``(strategies, rules)`` that decided the steps (after :meth:`verify`)."""
        if not hasattr(self, "_trusted"):
            self.verify()
        return self._trusted

    def symbols(self) -> list[Any]:
        """Every symbol, sequence and matrix symbol of the chain (values and printed labels)."""
        items = [self.start] + [step.rhs for step in self.steps]
        return symbols_of([value_of(e) for e in items] + [e.label for e in items
                                                          if isinstance(e, Computed) and e.label is not None])

    def declarations(self) -> tuple[Any, ...]:
        """One line per group of symbols with the same declared flags (generated)."""
        return declarations(self.symbols())

    def definitions(self) -> tuple[Any, ...]:
        """``(latex, meaning)`` of every free-LaTeX value in the chain."""
        return definitions_of([self.start] + [step.rhs for step in self.steps])

    # ------------------------------------------------------------------ variants

    def with_step(self, number: int, **changes: Any) -> "Derivation":
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
    def cited_steps(self) -> tuple[Any, ...]:
        """Numbers of the steps that are cited rather than machine-checked."""
        return tuple(number for number, step in enumerate(self.steps, 1) if step.cited)

    # ------------------------------------------------------------------ printing

    def latex(self, column_limit: int | None = None) -> str:
        r"""The chain as an amsmath ``align*``, justifications in a ``\text{}`` column.

        Verified first: a failing chain raises its ProofError here (this is what files are
        written from, and nothing unverified is written).  A justification longer than
        ``column_limit`` characters (default: what fits on a page; ``\text`` never wraps)
        is printed as a note below the display instead.
        """
        self._ensure_verified()
        return self._display(column_limit)

    def _display(self, column_limit: int | None = None) -> str:
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

    def _repr_latex_(self) -> str:
        """A notebook's math: the verified chain, or a NOT VERIFIED text with the reason."""
        failure = self.verification_failure()
        if failure is not None:
            return unverified_math(self.title, failure)
        # A notebook cell has no page width: every justification stays in its column.
        return "$\\displaystyle " + self._display(column_limit=10**9).replace("align*", "aligned") + "$"

    def describe(self) -> str:
        """One line: title and scope (verified first: a chain that does not verify says so, and
        cited steps are named beside a proved scope)."""
        failure = self.verification_failure()
        if failure is not None:
            return f"{self.title}: NOT VERIFIED: {unverified_reason(failure)}"
        return f"{self.title}: {self.shown_scope()}"

    def shown_scope(self) -> Scope:
        """The scope as printed: a proved chain that cites some steps names them in it."""
        cited_steps = self.cited_steps
        if cited_steps and self.scope.kind != "cited":
            listed = ", ".join(map(str, cited_steps))
            return Scope(self.scope.kind, f"{self.scope.detail} (step {listed} cited, not machine-checked)")
        return self.scope

    def __str__(self) -> str:
        """Readable text: after verifying, the scope and each step's strategy; when
        verification fails, ``[NOT VERIFIED: reason]``, the failing step ``[FAILED]`` and
        those after it ``[not checked]``.  Then the assumptions, declarations and unchecked
        labels the chain relies on."""
        failure = self.verification_failure()
        header = f"[NOT VERIFIED: {unverified_reason(failure)}]" if failure is not None else f"[{self.scope}]"
        lines = [f"{self.title}  {header}", f"  {_plain(self.start)}"]
        marks = getattr(self, "_marks", ())
        failed = getattr(self, "_failed_step", None) if failure is not None else None
        for number, step in enumerate(self.steps, 1):
            if step.cited:
                mark = "cited"
            elif number <= len(marks):
                mark = marks[number - 1]
            else:
                mark = "FAILED" if number == failed else "not checked"
            lines.append(f"  {step.relation} {_plain(step.rhs)}    ({step.why})  [{mark}]")
        lines.extend(f"  assuming {assumption_text(a)}" for a in self.assumptions)
        try:
            declared = self.declarations()
        except SymbolicAttnError:
            declared = ()
        if declared:
            lines.append("  declared: " + "; ".join(_plain_math(line) for line in declared))
        lines.extend(f"  unchecked label: {latex} := {meaning}" for latex, meaning in self.definitions())
        return "\n".join(lines)


def assumption_text(assumption: Assumption) -> str:
    """An assumption as plain text, with the condition the checker uses."""
    text = f"({assumption.label}) {_plain_math(assumption.text)}"
    text += f": {_plain_math('$' + assumption.latex + '$')}" if assumption.latex else ""
    used = condition_text(assumption)
    return text + (f"; condition used by the checker: {used}" if used else "")


#: Longest justification (in characters of its source text) kept in the display's column.
_COLUMN_CHARACTERS = 56
#: Characters of LaTeX source above which the start and the first step share no line.
_WIDE_FIRST_LINE = 160


def step_error(error: BaseException) -> type[ProofError]:
    """The class to re-raise a failed step with: its own ProofError subclass, else ProofError."""
    return type(error) if isinstance(error, ProofError) else ProofError


def _decide_step(lhs: Any, rhs: Any, step: Any, used: Any) -> Any:
    if step.relation == "=":
        return prove_equal(lhs, rhs, used, step.rules)
    if step.rules and any(_rule_names(step.rules)[i] == "sum.ge_term" for i in range(len(step.rules))):
        big, small = (lhs, rhs) if step.relation in (">=", ">") else (rhs, lhs)
        if step.relation in (">", "<"):
            raise ProofError("rule sum.ge_term proves >= (or <=) only")
        prove_equal(big, big, used)  # exactness and side conditions of both sides
        prove_equal(small, small, used)
        prove_ge_term(unfold(big), unfold(small), facts_of(used))
        examine(big, small, ">=", used)
        return Proof("sign calculus", ("sum.ge_term",))
    difference = {"<": rhs - lhs, ">": lhs - rhs, "<=": rhs - lhs, ">=": lhs - rhs}[step.relation]
    prover = prove_positive if step.relation in ("<", ">") else prove_nonnegative
    proof = prover(difference, used)
    names = tuple(n for n in _rule_names(step.rules) if n in ("sum.positive",))
    return Proof(proof.strategy, names)


def _rule_names(rules: Any) -> tuple[Any, ...]:
    return tuple(name if isinstance(name, str) else name.name for name in rules)


def check_computed(expr: Any, used: Any) -> None:
    """A :class:`Computed` whose label is an expression must equal its value (printed = checked)."""
    if isinstance(expr, Computed) and expr.label is not None:
        try:
            prove_equal(expr.label, expr.value, used)
        except (ProofError, UndecidedError) as error:
            raise ProofError(f"the printed form {short_line(sympy.sstr(expr.label), 160)} is not the computed value: "
                             f"{error}") from None


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


def _plain(expr: Any) -> str:
    if isinstance(expr, Computed):
        return plain_text(expr)
    if isinstance(expr, sympy.MatrixBase):
        return plain_text(expr.tolist())
    return plain_text(expr)

