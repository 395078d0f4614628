"""Typed exceptions: every error the library raises on purpose is one of these.

Each error is also a ``ValueError`` (or ``TypeError`` where the *kind* of value was
wrong), so callers that only know the built-in hierarchy still catch it.  Messages say
what went wrong, where, and the offending value, on one line, so that the command line
can print ``str(error)`` as it is.
"""

__all__ = [
    "shown",
    "SymbolicAttnError",
    "ParseError",
    "InputLimitError",
    "FloatInputError",
    "ShapeError",
    "MaskError",
    "EmptyRowError",
    "UndecidedError",
    "ProofError",
    "ExerciseError",
    "ScriptError",
    "OutputError",
    "DerivationFailure",
    "PdfError",
    "StageError",
    "InexactStepError",
    "SideConditionError",
    "AssumptionConflictError",
]


class SymbolicAttnError(Exception):
    """Base class of every error symbolic_attn raises deliberately."""


class ParseError(SymbolicAttnError, ValueError):
    """Text that is not a valid exact expression or matrix."""


class InputLimitError(ParseError):
    """Input that is well formed but too large to accept (length, digits, depth...)."""


class FloatInputError(SymbolicAttnError, TypeError):
    """A binary float where an exact value is required."""


class ShapeError(SymbolicAttnError, ValueError):
    """Operands whose shapes break the attention shape contract."""


class MaskError(SymbolicAttnError, ValueError):
    """A mask that is malformed, of the wrong shape, or of an unknown kind."""


class EmptyRowError(MaskError):
    """A query row in which the mask allows no key, under the default policy."""


class UndecidedError(SymbolicAttnError, ValueError):
    """A comparison that could be neither proved nor refuted (never treated as a pass)."""


class ProofError(SymbolicAttnError, ValueError):
    """A derivation step that failed verification."""


class ExerciseError(SymbolicAttnError, ValueError):
    """An exercise file that cannot be read or is invalid."""


class ScriptError(SymbolicAttnError, ValueError):
    """A folder or derivation script that cannot be used (missing, no NAME/build, import fails)."""


class OutputError(SymbolicAttnError, OSError):
    """The output folder or a file in it cannot be written; nothing was changed."""


class DerivationFailure(ProofError):
    """A step of a derivation script that did not verify; the message names the file."""

    def __init__(self, path: str, error: Exception):
        super().__init__(f"{path}: {error}")
        self.path = path


class StageError(SymbolicAttnError, ValueError):
    """An unknown or malformed stage path, or a row/column outside the stage."""


class PdfError(SymbolicAttnError, RuntimeError):
    """pdflatex is missing or failed on the generated notes."""


class InexactStepError(ProofError):
    """A step containing a float or a non-finite value (nan, zoo, oo): nothing exact to check."""


class SideConditionError(ProofError):
    """A step needs a condition (a denominator nonzero, a log argument positive, a matrix
    invertible, a sum range not reversed) that the stated assumptions do not prove."""


class AssumptionConflictError(ProofError):
    """A stated assumption contradicts a declaration (a flag on a symbol)."""


def shown(value, width: int = 40) -> str:
    """An offending value for an error message, cut short: it may be enormous.

    >>> shown(10**100)
    '1000000000000000000000000000000000000...'
    """
    import sympy  # only here: the exceptions themselves need nothing

    text = sympy.sstr(value) if isinstance(value, sympy.Basic) else str(value)
    return text if len(text) <= width else text[: width - 3] + "..."
