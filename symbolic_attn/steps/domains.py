r"""What a step's sides need to be real numbers, decided before the step itself.

The reader notes, for each side, the argument of every root (``>= 0``), of every logarithm
(``> 0``) and the base of every power with an exponent that is not an integer
(:attr:`~symbolic_attn.steps.grammar.Reading.conditions`): SymPy forgets them as soon as it
builds the value (``\sqrt{c}^2`` is built as ``c``, ``e^{\log c}`` as ``c``).  A step is
decided only once every condition is proved under the declarations; a condition certified
false makes the side undefined (the step is false), and one that is neither stays the
reason the step is undecided.

>>> import sympy
>>> c = sympy.Symbol("c", real=True)
>>> domain_verdict((("nonnegative", c),), ()).reason
'needs c >= 0 (under a root), which the declarations do not give: declare it nonnegative or positive'
>>> domain_verdict((("nonnegative", c ** 2),), ()) is None
True
>>> domain_verdict((("positive", sympy.Integer(-1)),), ()).verdict
'false'
"""

from __future__ import annotations

from typing import Any

import sympy

from symbolic_attn.errors import SymbolicAttnError, TimeLimitError

__all__ = ["domain_verdict"]

_WHERE = {"nonnegative": ("under a root", ">= 0"), "positive": ("under a logarithm or a real power", "> 0")}


def domain_verdict(conditions: Any, assumptions: Any, randomness: Any = None, ranges: Any = None) -> Any:
    """None when every condition is proved, else the step's
    :class:`~symbolic_attn.steps.verdict.StepVerdict`: false for a condition certified
    false, undecided for one not proved."""
    from symbolic_attn.proofs.prove import prove_nonnegative, prove_positive
    from symbolic_attn.steps import echo
    from symbolic_attn.steps.verdict import StepVerdict
    from symbolic_attn.steps.randomness import NO_RANDOMNESS, Unknowns, has_operators

    randomness = randomness or NO_RANDOMNESS
    for kind, value in conditions:
        where, sign = _WHERE[kind]
        shown = echo.notation(value)
        expr = value
        try:
            if has_operators(expr):
                from symbolic_attn.steps.expectation import reduce_random

                expr = Unknowns().abstract(reduce_random(expr, randomness, ranges or {}))
            if expr.is_number:
                known = expr.is_nonnegative if kind == "nonnegative" else expr.is_positive
                if known is False:
                    return StepVerdict("false", f"false: {shown} = {sympy.sstr(expr)} {where} is not {sign}: "
                                                       "the side is not a real number")
            (prove_nonnegative if kind == "nonnegative" else prove_positive)(expr, assumptions)
        except TimeLimitError:
            raise
        except (SymbolicAttnError, TypeError, ValueError):
            hint = (": declare it nonnegative or positive" if kind == "nonnegative" and expr.is_Symbol else
                    ": declare it positive" if expr.is_Symbol else "")
            return StepVerdict("undecided", f"needs {shown} {sign} ({where}), which the declarations do not "
                                                   f"give{hint}")
    return None

