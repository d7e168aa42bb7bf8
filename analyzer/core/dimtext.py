"""How a dim's ranges are said: `[2, 512]` compiled, `[0, 128]` declared (reports, rules and `why` ask here).

Plain functions of the numbers, for a `Dim` of the linked model and for a contract's copy of one;
`range_text` builds the whole sentence from them.
"""

from __future__ import annotations

from typing import Protocol

from .messages import RANGE, enforced


def span(low: int | None, high: int | None) -> str:
    """`[2, inf)` / `[2, 512]`: a size range, with a missing low end read as 0."""
    low = 0 if low is None else low
    return f"[{low}, inf)" if high is None else f"[{low}, {high}]"


class Ranged(Protocol):
    """A dim's sizes as compiled and declared (a `Dim`, or a contract's copy of one)."""

    @property
    def value(self) -> int | None: ...
    @property
    def min(self) -> int | None: ...
    @property
    def max(self) -> int | None: ...
    @property
    def declared_min(self) -> int | None: ...
    @property
    def declared_max(self) -> int | None: ...


def compiled_span(dim: Ranged) -> str:
    """`[2, 512]`: the range a dynamic dim was compiled for (`check_input_N`)."""
    return span(dim.min, dim.max)


def has_declared(dim: Ranged) -> bool:
    """Whether the exported program declares a range for the dim (either end)."""
    return dim.declared_min is not None or dim.declared_max is not None


def declared_span(dim: Ranged) -> str:
    """`[0, 128]`: the range the exported program declares for the dim."""
    return span(dim.declared_min, dim.declared_max)


def declared_clause(dim: Ranged) -> str:
    """`, declared [0, 128]` after a dynamic dim's compiled range where a range is declared, else ""."""
    return f", declared {declared_span(dim)}" if dim.value is None and has_declared(dim) else ""


class Checked(Ranged, Protocol):
    """A linked `Dim`: its ranges, who checks them and which minimum goes unchecked."""

    @property
    def enforced(self) -> str: ...
    @property
    def lower_unchecked(self) -> str | None: ...


def range_text(dim: "Checked | None") -> str:
    """`compiled for [2, inf), checked only with AOTI_RUNTIME_CHECK_INPUTS=1; declared [0, inf)`.

    The wording is the message catalog's (`RANGE`, `ENFORCED` in messages.py)."""
    if dim is None:
        return RANGE["unknown"]
    if dim.value is not None:
        return RANGE["static"].format(value=dim.value)
    if dim.lower_unchecked:
        text = RANGE[dim.lower_unchecked].format(span=compiled_span(dim), min=dim.min)
        if dim.lower_unchecked == "disabled" and dim.max is not None:
            text += RANGE["disabled.upper"].format(checked=enforced("range", dim.enforced))
        if has_declared(dim):
            text += RANGE["declared"].format(span=declared_span(dim))
        return str(text)
    text = RANGE["compiled"].format(span=compiled_span(dim), checked=enforced("range", dim.enforced))
    if has_declared(dim):
        text += RANGE["declared"].format(span=declared_span(dim))
    return str(text)
