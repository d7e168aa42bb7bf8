"""Kernels' writes against the size of the buffer they write (the `stores` of the linked model).

A kernel's stores (stores.py's `RawStore`, the pointer and its position) are matched, launch by
launch, to the buffer passed for the pointer and its size: the wrapper's allocation
(`aoti_torch_empty_strided(2, int_array_3, ...)`), or the input's shape when the kernel writes into
an input. The loops around the write give its iteration space: C++ loop extents
(`KernelFacts.extents`, vector-lane `_inner` loops left out), a Triton grid's `xnumel * ynumel`
times its reduction's `r0_numel` (a masked write runs only where every mask holds).
Inductor writes an output inside loops over that output, so both become 0 together; a scatter
(`out_ptr0[tmp1] = v` inside a loop over the index) does not, and when a size empties the buffer
while the loop still runs, every write lands outside it (`store-into-empty-buffer`).
"""

from __future__ import annotations

import ast
from typing import Callable

from . import intervals
from .kernels import KernelFacts
from .model import Model, Store
from .shapes import allocations
from .values import Values
from .wrapper import WrapperFacts


def annotate(model: Model, wrapper: WrapperFacts, kfacts: dict[str, KernelFacts],
             param_map: Callable[[KernelFacts, int], dict[str, str]], canonical: Callable[[str], str],
             resolve: Callable[[str], str]) -> None:
    """Fill `model.stores`: one record per write of a generated kernel at each of its launches,
    where the buffer's size and the write's loops are known."""
    allocated = allocations(wrapper)
    shapes = {inp.name: tuple(str(d.value) if d.value is not None else str(d.symbol) for d in inp.dims)
              for inp in model.inputs if inp.dims and all(d.value is not None or d.symbol for d in inp.dims)}
    spaces: dict[tuple[str, int], str | None] = {}
    for index, launch in enumerate(model.launches):
        facts = None if launch.extern else kfacts.get(launch.kernel)
        if facts is None or not facts.stores or facts.locate is None or not _walked(facts):
            continue
        for store in facts.stores:
            # pos 0: a pointer also written in a form not read (stores.py): where, unknown.
            if store.pos == 0 or store.pointer not in facts.params:
                continue
            at = facts.params.index(store.pointer)
            if at >= len(launch.args):
                continue
            buf = launch.args[at]
            sizes = shapes.get(buf) or allocated.get(buf) or allocated.get(canonical(buf))
            key = (facts.name, store.pos)
            if key not in spaces:
                spaces[key] = _space(facts, store.pos)
            if sizes is None or spaces[key] is None:
                continue
            try:
                numel = intervals.simplify("*".join(f"({resolve(s)})" for s in sizes) or "1")
                space = intervals.simplify(intervals.substitute(spaces[key], param_map(facts, index)))
            except ValueError:
                continue
            model.stores.append(Store(facts.name, store.pointer, buf, numel, space, facts.locate(store.pos),
                                      launch.location))


def _walked(facts: KernelFacts) -> bool:
    """A kernel whose stores are read whatever the fast path decides: C++ kernels, and Triton kernels
    with an assertion, a division or a reduction (triage.py walks those; with AOTI_LINT_FAST_PATH=0
    every kernel is walked, and the linked model must not change)."""
    return facts.kind == "cpp" or bool(facts.assertions or facts.divisions or facts.reductions)


_TRITON_NUMELS = ("xnumel", "ynumel", "znumel", "rnumel", "r0_numel", "r1_numel")


def _space(facts: KernelFacts, pos: int) -> str | None:
    """The product of the extents of the loops around position `pos` (over the kernel's params): "1"
    for a C++ write outside any loop; None for a Triton kernel without a known grid."""
    if facts.kind == "cpp":
        extents = [extent for var, spans in facts.extents.items() if not var.endswith("_inner")
                   for start, end, extent in spans if start <= pos < end]
    else:
        values = Values(facts)
        # Every numel of the grid, the reduction's too: a write masked by `r0_mask` runs only when
        # r0_numel > 0, and one outside the reduction loop is counted as running less often, never more.
        extents = [e for e in (values.upper(ast.Name(n), pos) for n in _TRITON_NUMELS
                               if n in facts.defs or n in values.params) if e is not None]
        if not extents:
            return None
    return "*".join(f"({e})" for e in extents) or "1"
