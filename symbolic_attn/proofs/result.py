r"""A result: the statement, assumptions and scope of one theorem, and its checked parts.

A :class:`Result` is what one derivation script builds and what ``symbolic-attn derive``
writes to one ``.tex`` file.  Its parts are any mix of

* :class:`~symbolic_attn.proofs.chain.Derivation` -- a checked chain (general statements);
* :class:`Check` -- one statement checked in finitely many cases (scope: "checked");
* :class:`Counterexample` -- exact values certified to differ (scope: "counterexample").

Every part has ``verify()`` (raises :class:`ProofError` naming the step or case) and
``latex()``.  Prose may contain ``$...$`` math; everything else in it is escaped.

>>> import sympy
>>> x = sympy.Symbol("x")
>>> check = Check("Squares", r"(x+1)^2 = x^2 + 2x + 1", [
...     Case("x = 1", (1 + 1) ** 2, 1 + 2 + 1), Case("x = 2", 3 ** 2, 4 + 4 + 1)],
...     scope=Scope.checked("x in {1, 2}"))
>>> print(Result("squares", "Squares", "Two cases.", [check]).verify())
Squares (squares)
  Squares: checked for x in {1, 2} (2 cases; their labels are the author's, unchecked)
"""

import dataclasses
from dataclasses import dataclass
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from symbolic_attn.proofs.chain import (
    Computed, Derivation, Displayed, Scope, assumption_lines, check_computed, definitions_of, latex_of, step_error,
    require_scope, scope_latex, unverified_markdown, unverified_math, unverified_reason, value_of)
from symbolic_attn.proofs.declarations import declarations, symbols_of
from symbolic_attn.errors import NameClashError, ProofError, UndecidedError
from symbolic_attn.render.latex import escape_text, prose_latex
from symbolic_attn.proofs.prove import STRATEGIES, prove_equal, prove_nonnegative, prove_positive, prove_unequal

__all__ = ["Case", "Check", "Counterexample", "Result", "Printed", "PrintedPart"]


@dataclass(frozen=True)
class Case:
    """One instance of a checked statement: ``lhs = rhs`` (or ``<``) in the situation ``label``."""

    label: str
    lhs: object
    rhs: object
    relation: str = "="


class _Part(Displayed):
    """Display shared by the parts of a result: ``sympy.latex``, notebooks, terminals.

    Every display verifies first (see :class:`~symbolic_attn.proofs.chain.Displayed`):
    ``latex()`` raises a part's ProofError, ``_repr_latex_`` and ``str()`` say NOT VERIFIED.
    """

    assumptions = ()

    if TYPE_CHECKING:  # what each part provides (declared for the type checker only)
        scope: Scope
        note: str

        def _items(self) -> list[Any]: ...

        def _display(self) -> str: ...

        def describe(self) -> str: ...

    def latex(self) -> str:
        """The part's display; verified first (raises ProofError: nothing unverified is printed)."""
        self._ensure_verified()
        return self._display()

    def _repr_latex_(self) -> str:
        failure = self.verification_failure()
        if failure is not None:
            return unverified_math(self.title, failure)
        return self._display()

    def symbols(self) -> list[Any]:
        """Every symbol of the values and checked labels (their flags are what the checker used)."""
        items = self._items()
        return symbols_of([value_of(e) for e in items] + [e.label for e in items
                                                          if isinstance(e, Computed) and e.label is not None])

    def declarations(self) -> tuple[Any, ...]:
        """The declared flags of the part's symbols, generated (printed with the result)."""
        return declarations(self.symbols())

    def definitions(self) -> tuple[Any, ...]:
        return definitions_of(self._items())

    def __str__(self) -> str:
        failure = self.verification_failure()
        if failure is not None:
            return f"{self.title}: NOT VERIFIED: {unverified_reason(failure)}"
        return self.describe()


@dataclass(frozen=True)
class Check(_Part):
    """A statement checked, with :func:`prove_equal`, in each of finitely many cases.

    ``summary`` lines say which cases were covered (printed); ``shown`` cases are
    displayed in full as worked instances.
    """

    title: str
    statement: str
    cases: Sequence[Case]
    scope: Scope
    note: str = ""
    summary: Sequence[str] = ()
    shown: Sequence[int] = ()

    def __post_init__(self) -> None:
        for name in ("cases", "summary", "shown"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        require_scope(self, ("checked",), "a check covers finitely many cases")

    def _items(self) -> list[Any]:
        return [item for case in self.cases for item in (case.lhs, case.rhs)]

    def verify(self) -> "Check":
        """Check every case (a ProofError names the first that fails); remembered on success."""
        self.symbols()
        strategies = []
        for number, case in enumerate(self.cases, 1):
            lhs, rhs = value_of(case.lhs), value_of(case.rhs)
            try:
                check_computed(case.lhs, ())
                check_computed(case.rhs, ())
                if case.relation == "=":
                    strategies.append(prove_equal(lhs, rhs).strategy)
                elif case.relation == "<":
                    strategies.append(prove_positive(rhs - lhs).strategy)
                elif case.relation == "<=":
                    strategies.append(prove_nonnegative(rhs - lhs).strategy)
                else:
                    raise ProofError(f"unknown relation {case.relation!r}")
            except (ProofError, UndecidedError) as error:
                raise step_error(error)(f"case {number} ({case.label}) of {self.title!r}: {error}") from None
        object.__setattr__(self, "_trusted", (tuple(dict.fromkeys(strategies)), ()))
        object.__setattr__(self, "_verified", True)
        return self

    def trusted_base(self) -> tuple[Any, ...]:
        if not hasattr(self, "_trusted"):
            self.verify()
        return self._trusted

    def with_case(self, number: int, **changes: Any) -> "Check":
        """A copy with case ``number`` (1-based) changed."""
        cases = list(self.cases)
        cases[number - 1] = dataclasses.replace(cases[number - 1], **changes)
        return dataclasses.replace(self, cases=tuple(cases))

    def _display(self) -> str:
        lines = ["\\begin{equation*}\n" + self.statement + "\n\\end{equation*}"]
        if self.summary:
            items = "\n".join(f"\\item {prose_latex(line)}" for line in self.summary)
            lines.append(f"Machine-checked in {len(self.cases)} cases:\n"
                         f"\\begin{{itemize}}\n{items}\n\\end{{itemize}}")
        for index in self.shown:
            # A worked instance: both sides, and the exact value they share.
            case = self.cases[index]
            rows = [f"{latex_of(case.lhs)} &= {latex_of(value_of(case.lhs))}"]
            if case.relation == "=":
                rows.append(f"&= {latex_of(case.rhs)}")
            else:
                rows.append(f"&{case.relation} {latex_of(value_of(case.rhs))} = {latex_of(case.rhs)}")
            rows[-1] += f" && \\text{{{prose_latex(case.label)}}}"
            lines.append("For instance:\n\\begin{align*}\n" + " \\\\\n".join(rows) + "\n\\end{align*}")
        return "\n".join(lines)

    def describe(self) -> str:
        return f"{self.title}: {self.scope} ({len(self.cases)} cases; their labels are the author's, unchecked)"


@dataclass(frozen=True)
class Counterexample(_Part):
    """Exact inputs (``givens``: LaTeX name, value) for which ``lhs`` and ``rhs`` differ."""

    title: str
    givens: Sequence[tuple[Any, ...]]
    lhs: Computed
    rhs: Computed
    scope: Scope
    note: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "givens", tuple(self.givens))
        require_scope(self, ("counterexample",), "exact values that differ are a counterexample")

    def _items(self) -> list[Any]:
        return [self.lhs, self.rhs]

    def verify(self) -> "Counterexample":
        """Check the labels and certify that the two sides differ; remembered on success."""
        self.symbols()
        try:
            check_computed(self.lhs, ())
            check_computed(self.rhs, ())
        except (ProofError, UndecidedError) as error:
            raise ProofError(f"counterexample {self.title!r}: {error}") from None
        object.__setattr__(self, "_found", self.disproof())
        object.__setattr__(self, "_verified", True)
        return self

    def trusted_base(self) -> tuple[Any, ...]:
        return (("certified arithmetic",), ())

    def disproof(self) -> Any:
        """Where the two sides differ, certified (see :func:`prove_unequal`)."""
        try:
            return prove_unequal(value_of(self.lhs), value_of(self.rhs))
        except (ProofError, UndecidedError) as error:
            raise ProofError(f"counterexample {self.title!r}: {error}") from None

    def _display(self) -> str:
        found = getattr(self, "_found", None) or self.disproof()
        rows = [f"{name} &= {latex_of(value)}" for name, value in self.givens]
        rows.append(f"{latex_of(self.lhs)} &= {latex_of(self.lhs.value)}")
        rows.append(f"{latex_of(self.rhs)} &= {latex_of(self.rhs.value)}")
        rows.append(f"{latex_of(self.lhs)} &\\neq {latex_of(self.rhs)}")
        # The reason is a sentence below the display: marked labels leave no room for a column.
        why = escape_text(f"The two sides differ in {found.where} by {found.approx} (certified non-zero).")
        return "\\begin{align*}\n" + " \\\\\n".join(rows) + "\n\\end{align*}\n" + why

    def describe(self) -> str:
        return f"{self.title}: {self.scope}"


@dataclass(frozen=True)
class Result(Displayed):
    """One theorem of the notes: title, introduction, and its verified parts.

    Printed only once verified (remembered): ``latex()`` raises the ProofError of the first
    failing part, ``str()``, ``_repr_latex_`` and ``_repr_markdown_`` say NOT VERIFIED.
    Everything the parts rely on is listed: every stated assumption (two different ones
    with one label are a :class:`NameClashError`), the declared flags of every symbol of
    every part (checks and counterexamples included), every unchecked label.
    """

    name: str
    title: str
    intro: str
    parts: Sequence["Derivation | Check | Counterexample"]

    def __post_init__(self) -> None:
        object.__setattr__(self, "parts", tuple(self.parts))

    def verify(self) -> "Result":
        """Verify every part (first failure raises ProofError naming part and step), then
        that what will be printed is unambiguous (one assumption per label, one symbol per
        printed name)."""
        for part in self.parts:
            part.verify()
        _ = self.assumptions  # the property raises on two assumptions with one label
        self.declarations()
        object.__setattr__(self, "_verified", True)
        return self

    def trusted_base(self) -> dict[Any, Any]:
        """What the verification relied on: ``{"strategies": [...], "rules": [...]}`` (verifies first)."""
        strategies: list[str] = []
        rules: list[str] = []
        for part in self.parts:
            used = part.trusted_base() if hasattr(part, "trusted_base") else ((), ())
            strategies.extend(used[0])
            rules.extend(used[1])
        order = {name: index for index, name in enumerate(STRATEGIES)}
        return {"strategies": sorted(dict.fromkeys(strategies), key=lambda n: (order.get(n, 99), n)),
                "rules": sorted(dict.fromkeys(rules))}

    def rules(self) -> list[Any]:
        """What ``list`` prints: the library rules used, then the checker's strategies (verifies first)."""
        base = self.trusted_base()
        return list(base["rules"]) + [f"checker: {name}" for name in base["strategies"]]

    def verified_scopes(self) -> tuple[Any, ...]:
        """``(part title, scope)`` pairs, after verifying the result (raises if a step fails)."""
        if not getattr(self, "_verified", False):
            self.verify()
        return tuple((part.title, _shown_scope(part)) for part in self.parts)

    def declarations(self) -> tuple[Any, ...]:
        """The declared flags of every symbol of every part, generated; two different
        symbols that print alike are a :class:`NameClashError`."""
        return declarations(symbols_of([symbol for part in self.parts
                                        for symbol in (part.symbols() if hasattr(part, "symbols") else ())]))

    def definitions(self) -> tuple[Any, ...]:
        found: dict[str, str] = {}
        for part in self.parts:
            for latex, meaning in part.definitions() if hasattr(part, "definitions") else ():
                found.setdefault(latex, meaning)
        return tuple(found.items())

    def printed(self) -> "Printed":
        """This result verified, reduced to what the documents print (plain data, picklable).

        ``derive`` verifies each result in a worker process and sends this back: the text
        comes from the very object that was just verified.
        """
        if not getattr(self, "_verified", False):
            self.verify()
        return Printed(self.name, self.title, self.intro,
                       tuple(PrintedPart(part.title, _shown_scope(part)) for part in self.parts),
                       self.latex(), self.trusted_base(), tuple(str(rule) for rule in self.rules()))

    def with_part(self, number: int, part: Any) -> "Result":
        """A copy with part ``number`` (1-based) replaced (for broken variants in tests)."""
        parts = list(self.parts)
        parts[number - 1] = part
        return dataclasses.replace(self, parts=tuple(parts))

    @property
    def assumptions(self) -> tuple[Any, ...]:
        """Every assumption stated by some part, in order of first appearance (two different
        assumptions with one label: :class:`NameClashError`, one of them would not be printed)."""
        seen: dict[str, Any] = {}
        for part in self.parts:
            for assumption in getattr(part, "assumptions", ()):
                other = seen.setdefault(assumption.label, assumption)
                if other != assumption:
                    raise NameClashError(f"{self.name}: two different assumptions are labelled "
                                         f"({assumption.label}): {str(other)[:80]!r} and {str(assumption)[:80]!r}")
        return tuple(seen.values())

    def latex(self) -> str:
        """The result as a LaTeX fragment (compiles inside any amsmath document); verified
        first (raises ProofError: nothing unverified is written)."""
        self._ensure_verified()
        out = [f"\\section*{{{prose_latex(self.title)}}}", prose_latex(self.intro), ""]
        out.append("\\paragraph{Assumptions.}")
        items = assumption_lines(self.assumptions, self.declarations(), self.definitions())
        if items:
            out.extend(["\\begin{itemize}", *items, "\\end{itemize}"])
        else:
            out.append("None beyond the definitions.")
        # A blank line ends the paragraph, so Markdown keeps "Scope." apart as well.
        out.append("")
        out.append("\\paragraph{Scope.}")
        out.append("\\begin{itemize}")
        out.extend(f"\\item {prose_latex(part.title)}: {scope_latex(part)}" for part in self.parts)
        out.append("\\end{itemize}")
        base = self.trusted_base()
        out.append("")
        out.append("\\paragraph{Trusted base.} Side conditions proved by the sign calculus; steps checked by "
                   "the strategies "
                   + escape_text(", ".join(base["strategies"]) or "none")
                   + (" and the rules " + escape_text(", ".join(base["rules"])) if base["rules"] else
                      " (no rule of the library)") + ".")
        cited = [(part.title, part.cited_steps) for part in self.parts
                 if isinstance(part, Derivation) and part.cited_steps]
        if cited:
            listed = "; ".join(f"{title}, step {', '.join(map(str, steps))}" for title, steps in cited)
            out.append("Steps marked \\textbf{cited} are not machine-checked: "
                       f"{prose_latex(listed)}. Every other step was checked before printing.")
        else:
            out.append("Every step below was checked by the computer before printing.")
        for part in self.parts:
            out.extend(["", f"\\subsection*{{{prose_latex(part.title)}}}"])
            if part.note:
                out.append(prose_latex(part.note))
            out.append(part.latex())
        return "\n".join(out) + "\n"

    def _repr_latex_(self) -> str:
        failure = self.verification_failure()
        if failure is not None:
            return unverified_math(self.title, failure)
        return self.latex()

    def _repr_markdown_(self) -> str:
        # A whole result is prose with displays, not one formula: notebooks (which prefer
        # Markdown to LaTeX) show it as headings, lists and $$ math.
        from symbolic_attn.render.markdown import result_markdown

        failure = self.verification_failure()
        if failure is not None:
            return unverified_markdown(self, failure)
        return result_markdown(self)

    def __str__(self) -> str:
        """Title and each part's scope once verified; otherwise NOT VERIFIED with the
        reason, each part that did not verify marked."""
        failure = self.verification_failure()
        lines = [f"{self.title} ({self.name})" + (f"  [NOT VERIFIED: {unverified_reason(failure)}]"
                                                   if failure is not None else "")]
        for part in self.parts:
            if failure is not None and not getattr(part, "_verified", False):
                lines.append(f"  {part.title}: NOT VERIFIED")
                continue
            describe = getattr(part, "describe", None)
            lines.append("  " + (describe() if describe else f"{part.title}: {part.scope}"))
        return "\n".join(lines)


@dataclass(frozen=True)
class PrintedPart:
    """A verified part as the index prints it: its title and scope."""

    title: str
    scope: object


@dataclass(frozen=True)
class Printed:
    """A verified :class:`Result` as the documents print it (from :meth:`Result.printed`).

    Plain data: name, title, introduction, each part's title and scope, the result's LaTeX
    and what its verification relied on.  Builders of documents read only these, so the
    documents can be assembled from results verified in other processes.

    >>> import sympy
    >>> from symbolic_attn.proofs.chain import Derivation, Step
    >>> x = sympy.Symbol("x")
    >>> chain = Derivation("Square", (x + 1) ** 2, [Step(x**2 + 2 * x + 1, "expand")])
    >>> printed = Result("square", "A square", "", [chain]).printed()
    >>> printed.parts[0].title, printed.trusted_base()["strategies"]
    ('Square', ['expand'])
    """

    name: str
    title: str
    intro: str
    parts: tuple[Any, ...]
    text: str
    trusted: dict[Any, Any]
    rules_used: tuple[Any, ...] = ()

    def latex(self) -> str:
        """The result as a LaTeX fragment, as :meth:`Result.latex` printed it."""
        return self.text

    def trusted_base(self) -> dict[Any, Any]:
        """``{"strategies": [...], "rules": [...]}``, as :meth:`Result.trusted_base` gave it."""
        return self.trusted

    def rules(self) -> list[Any]:
        """What ``list`` prints, as :meth:`Result.rules` gave it: the library rules used, then
        the checker's strategies."""
        return list(self.rules_used)

    def verified_scopes(self) -> tuple[Any, ...]:
        """``(part title, scope)`` pairs (the result was verified before it was printed)."""
        return tuple((part.title, part.scope) for part in self.parts)

    def _repr_latex_(self) -> str:
        return self.text


def _shown_scope(part: Any) -> Any:
    """A part's scope as printed (a chain names its cited steps in it)."""
    shown = getattr(part, "shown_scope", None)
    return shown() if callable(shown) else part.scope
