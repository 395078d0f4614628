r"""What a kernel can take: the battery asks it only that, and says what it skipped.

A kernel declares its limits with :class:`Capabilities`, given to
:func:`~symbolic_attn.numerics.suite.run_battery` (``capabilities=``) or set as the
kernel's ``attention_capabilities`` attribute (module adapters set it themselves):

==================  ==========================================================================
``causal_only``     the kernel always applies a top-left causal mask and takes no mask: it
                    gets the square cases only, with the causal mask in place of theirs
``square_only``     n = m only (self-attention)
``same_dims``       d_v = d_k only (JAX's ``dot_product_attention``, one head dimension)
``takes_mask``      ``False``: no mask argument; cases with a mask are skipped, ``mask=None``
==================  ==========================================================================

>>> from symbolic_attn.numerics.battery import battery
>>> cases, skipped = select(battery(0), Capabilities(causal_only=True))
>>> sorted({case.mask is not None for case in cases}), skipped[0]
([True], ('cross_attention', 'the kernel is causal-only: n != m'))
>>> select(battery(0), Capabilities(same_dims=True))[1][0]
('cross_attention', 'the kernel takes d_v = d_k only: d_k = 3, d_v = 5')
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from symbolic_attn.errors import ImplementationError, shown
from symbolic_attn.model.masks import Mask

__all__ = ["Capabilities", "select", "capabilities_of"]


@dataclass(frozen=True)
class Capabilities:
    """The limits a kernel declares (all off: it takes every case)."""

    causal_only: bool = False
    square_only: bool = False
    same_dims: bool = False
    takes_mask: bool = True

    def __post_init__(self):
        for name in ("causal_only", "square_only", "same_dims", "takes_mask"):
            if not isinstance(getattr(self, name), bool):
                raise ImplementationError(f"capabilities: {name} must be True or False, got {shown(getattr(self, name))}")

    @property
    def passes_mask(self) -> bool:
        """Whether the kernel is given the mask (a causal-only kernel applies its own)."""
        return self.takes_mask and not self.causal_only


def capabilities_of(fn, given: Capabilities | None = None) -> Capabilities:
    """``given``, else the kernel's ``attention_capabilities``, else no limits."""
    found = given if given is not None else getattr(fn, "attention_capabilities", None)
    if found is None:
        return Capabilities()
    if not isinstance(found, Capabilities):
        raise ImplementationError(f"capabilities: expected a Capabilities, got {type(found).__name__}")
    return found


def select(cases, capabilities: Capabilities) -> tuple[list, list[tuple[str, str]]]:
    """(the cases the kernel can take, (name, why) for each skipped one)."""
    kept, skipped = [], []
    for case in cases:
        n, m, d_k, d_v = case.shape
        why = None
        if (capabilities.causal_only or capabilities.square_only) and n != m:
            why = f"the kernel is {'causal-only' if capabilities.causal_only else 'square-only'}: n != m"
        elif capabilities.same_dims and d_k != d_v:
            why = f"the kernel takes d_v = d_k only: d_k = {d_k}, d_v = {d_v}"
        elif capabilities.causal_only:
            causal = Mask.causal(n)
            if case.mask is not None and case.mask != causal:
                why = "the kernel is causal-only: this case's mask is not the causal one"
            else:
                case = replace(case, mask=causal)
        elif not capabilities.takes_mask and case.mask is not None:
            why = "the kernel takes no mask"
        if why is None:
            kept.append(case)
        else:
            skipped.append((case.name, why))
    return kept, skipped
