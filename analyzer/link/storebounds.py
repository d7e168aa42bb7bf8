"""Kernels' reads and writes against the size of the buffer they access (`Model.accesses`).

A kernel's writes (stores.py's `RawStore`: the pointer and its position) and reads (the `load(...)`
calls in its definitions) are matched, launch by launch, to the buffer passed for the pointer and its
size: the wrapper's allocation (`aoti_torch_empty_strided(2, int_array_3, ...)`), or the input's or
constant's shape. The loops around the access give its iteration space: C++ loop extents
(`KernelFacts.extents`, vector-lane `_inner` loops left out), a Triton grid's `xnumel * ynumel`
times its reduction's `r0_numel` (a masked access runs only where every mask holds).
Inductor accesses a buffer inside loops over that buffer, so both become 0 together; a scatter
(`out_ptr0[tmp1] = v` inside a loop over the index) or a resize (reads of the image inside loops
over the output size) does not, and when a size empties the buffer while the loop still runs, every
access lands outside it (`store-into-empty-buffer`, `read-from-empty-buffer`).
"""

from __future__ import annotations

import ast
import re
from typing import Iterator

from ..expr import intervals
from ..parse.kernels import KernelFacts
from ..core.model import Access
from .context import LinkContext
from .shapes import allocations
from ..expr.syntax import call_name, load_pointer
from ..expr.values import Values


def annotate(ctx: LinkContext) -> None:
    """Fill `model.accesses`: one record per write and read of a generated kernel at each of its
    launches, where the buffer's size and the access's loops are known."""
    model, wrapper, kfacts = ctx.model, ctx.wrapper, ctx.kfacts
    param_map, canonical, resolve = ctx.param_map, ctx.canonical, ctx.resolve
    allocated = allocations(wrapper)
    shapes = {inp.name: tuple(str(d.value) if d.value is not None else str(d.symbol) for d in inp.dims)
              for inp in model.inputs if inp.dims and all(d.value is not None or d.symbol for d in inp.dims)}
    shapes.update({c.name: tuple(str(s) for s in c.shape) for c in model.constants if c.shape})
    spaces: dict[tuple[str, int], str | None] = {}
    # Once per buffer shape and per space at a parameter map: 26,000 kernels write buffers of a few shapes.
    numels: dict[tuple[str, ...], str | None] = {}
    over: dict[tuple[str, int], str | None] = {}
    found: dict[str, list[tuple[str, int, bool]]] = {}
    loads: dict[int, tuple[ast.AST, tuple[str, ...]]] = {}  # id of a shared expression -> its loads' pointers
    for index, launch in enumerate(model.launches):
        facts = None if launch.extern else kfacts.get(launch.kernel)
        if facts is None or facts.locate is None or not _walked(facts):
            continue
        if facts.name not in found:
            found[facts.name] = list(_accesses(facts, loads))
        for pointer, pos, write in found[facts.name]:
            at = facts.params.index(pointer)
            if at >= len(launch.args):
                continue
            buf = launch.args[at]
            sizes = shapes.get(buf) or allocated.get(buf) or allocated.get(canonical(buf))
            key = (facts.name, pos if facts.kind == "cpp" else 0)  # a Triton grid is the kernel's
            if key not in spaces:
                spaces[key] = _space(facts, pos)
            space_expr = spaces[key]
            if sizes is None or space_expr is None:
                continue
            if sizes not in numels:
                numels[sizes] = _product(sizes, resolve)
            mapping = param_map(facts, index)
            # Launches passing the same sizes share one map (LinkContext.param_map), kept while linking.
            at_map = (space_expr, id(mapping))
            if at_map not in over:
                over[at_map] = _over(space_expr, mapping)
            numel, space = numels[sizes], over[at_map]
            if numel is None or space is None:
                continue
            model.accesses.append(Access(facts.name, pointer, buf, numel, space, facts.locate(pos),
                                         launch.location, write))


def _product(sizes: tuple[str, ...], resolve) -> str | None:
    try:
        return intervals.simplify("*".join(f"({resolve(s)})" for s in sizes) or "1")
    except ValueError:
        return None


def _over(space_expr: str, mapping: dict[str, str]) -> str | None:
    try:
        return intervals.simplify(intervals.substitute(space_expr, mapping))
    except ValueError:
        return None


def _accesses(facts: KernelFacts, loads: dict[int, tuple[ast.AST, tuple[str, ...]]]) -> Iterator[tuple[str, int, bool]]:
    """(pointer, position, write?) of the kernel's writes and reads, each position once. `loads`
    memoizes the pointers loaded by each expression: kernels share the parse of a repeated line."""
    seen: set[tuple[str, int]] = set()
    for store in facts.stores or ():
        # pos 0: a pointer also written in a form not read (stores.py): where, unknown.
        if store.pos and store.pointer in facts.params and (store.pointer, store.pos) not in seen:
            seen.add((store.pointer, store.pos))
            yield store.pointer, store.pos, True
    for defs in facts.defs.values():
        for pos, expr in defs:
            known = loads.get(id(expr))
            if known is None or known[0] is not expr:  # the expression kept alive beside its id
                known = loads[id(expr)] = (expr, tuple(
                    p for node in ast.walk(expr)
                    if isinstance(node, ast.Call) and (p := load_pointer(node) or _masked_read(facts, node))
                    and not _conditional(node)))
            for pointer in known[1]:
                if pointer in facts.params and not pointer.startswith("out_ptr") and (pointer, pos) not in seen:
                    seen.add((pointer, pos))
                    yield pointer, pos, False


def _masked_read(facts: KernelFacts, node: ast.Call) -> str | None:
    """The pointer of C++ `masked_load(in_ptr0, mask)` (ts.py's reading of `mask.template loadu<...>(in_ptr0
    + i)`) whose mask compares loop indices with constants only (a left pad's `x - 2 + lane >= 0`): it
    holds for the lanes past a tail loop's count too, so the load reads the buffer whatever its size
    (an RNN-T's blank-prefixed tokens at u = 0: SIGSEGV). A mask that compares with a size (`x2 < ks1`,
    a right pad) keeps the lanes inside the buffer: it is not counted."""
    if call_name(node) != "masked_load" or len(node.args) != 2 or not isinstance(node.args[0], ast.Name):
        return None
    names: set[str] = set()
    todo: list[ast.AST] = [node.args[1]]
    while todo and len(names) < 200:
        for n in ast.walk(todo.pop()):
            if isinstance(n, ast.Name) and n.id not in names:
                names.add(n.id)
                todo.extend(expr for _, expr in facts.defs.get(n.id, ())[:4])
    sizes = {p for p in facts.params if not p.startswith(("in_ptr", "out_ptr", "in_out_ptr"))}
    return None if todo or names & sizes or "unknown" in names else node.args[0].id


_GRID_MASK = re.compile(r"^(?:[xyz]|r\d*_?)mask$")


def _conditional(load: ast.Call) -> bool:
    """A Triton load masked by more than its grid (`tl.load(in_ptr0 + x0, tmp4 & xmask, other=0.0)`,
    `tmp4 = x1 < ks0`: a `cat` or a pad reads each input only where its own rows are): it may never
    run, so it is not counted as reading its buffer."""
    if call_name(load) != "tl.load":  # C++ `load(in_ptr0, index)`: its second argument is the index
        return False
    masks = [load.args[1]] if len(load.args) > 1 else [k.value for k in load.keywords if k.arg == "mask"]
    return any(isinstance(n, ast.Name) and not _GRID_MASK.match(n.id) for m in masks for n in ast.walk(m))


def _walked(facts: KernelFacts) -> bool:
    """A kernel whose accesses are read whatever the fast path decides: C++ kernels, and Triton
    kernels with an assertion, a division or a reduction (triage.py walks those; with
    AOTI_LINT_FAST_PATH=0 every kernel is walked, and the linked model must not change)."""
    return facts.kind == "cpp" or bool(facts.assertions or facts.divisions or facts.reductions)


_TRITON_NUMELS = ("xnumel", "ynumel", "znumel", "rnumel", "r0_numel", "r1_numel")


def _space(facts: KernelFacts, pos: int) -> str | None:
    """The product of the extents of the loops around position `pos` (over the kernel's params): "1"
    for a C++ access outside any loop; None for a Triton kernel without a known grid."""
    if facts.kind == "cpp":
        extents = [extent for var, spans in facts.extents.items() if not var.endswith("_inner")
                   for start, end, extent in spans if start <= pos < end]
    else:
        values = Values(facts)
        # Every numel of the grid, the reduction's too: an access masked by `r0_mask` runs only when
        # r0_numel > 0, and one outside the reduction loop is counted as running less often, never more.
        extents = [e for e in (values.upper(ast.Name(n), pos) for n in _TRITON_NUMELS
                               if n in facts.defs or n in values.params) if e is not None]
        if not extents:
            return None
    return "*".join(f"({e})" for e in extents) or "1"
