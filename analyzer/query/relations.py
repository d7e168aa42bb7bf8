"""One answer to "what multiple must this dim be": `relation(model, ref)` (the relations themselves are
read after linking by link/derive.py); the sizes that follow from it: `breaking_size` (the smallest size
in range that breaks it: AOTI014's witness), `fitting_below` (the largest size below a limit that keeps
it: AOTI002's witness fails for its size, not for its remainder) and `fitting_at_least` (a healthy size
for the other dims of a witness).
"""

from __future__ import annotations

import re

from ..core.model import DimRef, Evidence, Model, Relation
from .sizes import effective_max, effective_min


# -- the one answer, and the sizes that follow from it ---------------------------------------------

def relation(model: Model, ref: DimRef) -> Relation | None:
    """The relation the package assumes of this dim (what multiple it must be), or None."""
    for rel in model.relations:
        if rel.ref == ref:
            return rel
    return None


def from_own_size(model: Model, rel: Relation) -> bool:
    """The relation's quotient is a value the package computes from the real size, not an assumption:
    the size is a symbol of the compiled graph (`int64_t s0 = arg24_1_size[3];`), run_impl derives the
    quotient from it (`ps0 = s0 // 8` under a k8 s8 patch convolution, `ps2 = (s53 + 3) // 4` the length
    of a strided slice `xyz[:, ::4]`), and eager floors alike. A package whose graph knows only the
    quotient (`s45 = (1.0/8.0)*arg5_1_size_2`) computes the input's strides from `8*s45`: there the
    multiple is assumed; and the exported program's `8 * Dim` declares it, whatever the package reads."""
    name = model.known_dim(rel.ref).symbol or ""
    own = model.symbols.get(name)
    return Evidence.EXPORTED not in rel.evidence and own is not None and own.source == rel.ref \
        and _GRAPH_SYMBOL.fullmatch(name) is not None


_GRAPH_SYMBOL = re.compile(r"s\d+")   # a size symbol of the compiled graph's shape environment


def multiple_text(rel: Relation) -> str:
    """`a multiple of 20`, `1 more than a multiple of 2`: the relation in words (messages, why)."""
    remainder = rel.offset % rel.n
    return f"{remainder} more than a multiple of {rel.n}" if remainder else f"a multiple of {rel.n}"


def _range(model: Model, ref: DimRef) -> tuple[int, int | None] | None:
    dim = model.dim(ref)
    if dim is None or dim.value is not None:
        return None
    return effective_min(dim), effective_max(dim)


def breaking_size(model: Model, ref: DimRef) -> int | None:
    """The smallest size inside the dim's compiled (and declared) range that breaks its relation
    (81 for `20*k` in [80, 16000]); None without a relation or when every size in range keeps it."""
    rel, span = relation(model, ref), _range(model, ref)
    if rel is None or span is None:
        return None
    low, high = span
    size = max(low, 1)
    if rel.fits(size):
        size += 1
    return size if high is None or size <= high else None


def fitting_below(model: Model, ref: DimRef, limit: int) -> int:
    """The largest size below `limit` that keeps the dim's relation (60 below 80 for `20*k`), 0 at
    least; `limit - 1` without a relation."""
    rel = relation(model, ref)
    if rel is None:
        return max(0, limit - 1)
    size = limit - 1
    size -= (size - rel.offset) % rel.n
    return max(0, size)


def fitting_at_least(model: Model, ref: DimRef, size: int) -> int:
    """The smallest size >= `size` that keeps the dim's relation (`size` itself without one), or the
    largest inside the dim's range when that one is past its max."""
    rel = relation(model, ref)
    if rel is None:
        return size
    up = size + (-(size - rel.offset)) % rel.n
    span = _range(model, ref)
    if span is not None and span[1] is not None and up > span[1]:
        down = fitting_below(model, ref, span[1] + 1)   # past the compiled max: the largest one inside
        return down if down >= span[0] else up
    return up
