"""One set of bounds on untrusted input, shared by the parser, exercise files, claims and the CLI.

Every bound is checked *before* the value it limits is built, so hostile input fails at
once with an :class:`~symbolic_attn.errors.InputLimitError` instead of hanging.

>>> DEFAULT_LIMITS.max_digits
400
>>> Limits(max_rows=32).max_rows
32
"""

from dataclasses import dataclass

__all__ = ["Limits", "DEFAULT_LIMITS"]


@dataclass(frozen=True)
class Limits:
    """Bounds on what the parser accepts; all checked before building anything."""

    max_text_length: int = 200_000
    max_depth: int = 32  # brackets and parentheses nested
    max_tree_depth: int = 200  # operations nested, brackets or not
    max_digits: int = 400  # digits in one number literal
    max_decimal_exponent: int = 400  # |e| in 1e-3 style literals
    max_power_exponent: int = 1_000  # |p| and q in x**(p/q)
    max_result_bits: int = 4_000  # size of any exact rational built (about 1,200 digits)
    max_matrix_products: int = 6  # '@' in one expression
    max_product_work: int = 100_000  # multiply-adds of all '@' in one expression together
    max_function_argument: int = 6_900  # |x| in exp(x), sin(x), cos(x): e^6900 is about 10^2997
    max_rows: int = 1_024
    max_cols: int = 1_024
    max_entries: int = 65_536


DEFAULT_LIMITS = Limits()
