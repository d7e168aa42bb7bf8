"""Model records that kernels' text gives beside the parsed facts (kept apart from model.py's core)."""

from __future__ import annotations

from dataclasses import dataclass

from .findings import Location


@dataclass(frozen=True)
class StrideRead:
    """A kernel stepping one buffer by one loop variable with two strides (over root symbols) that
    agree at some sizes and differ at others (analyzer/parse/loadstrides.py): an index Inductor
    simplified with a property of the traced sizes. `extent` is the loop's (root symbols)."""

    kernel: str
    pointer: str
    buffer: str
    first: str
    second: str
    sources: tuple
    location: Location
    extent: str | None = None
