"""The linking pass over a kernel's index assertions: assertion -> kernel parameter of its bound
(by position: `ksM` numbering is per kernel) -> launch argument -> size expression over root
symbols -> input dim (or a constant), at each launch of the kernel; index sources followed from
`in_ptrK` through intermediate buffers to the inputs, and the chain of lines that says so."""

from __future__ import annotations

import contextlib

from ..core.messages import CHAIN
from ..core.model import Assertion
from ..core.dimtext import range_text
from ..expr import intervals
from ..expr.values import VALUE, Values
from ..parse.kernels import KernelFacts, index_node
from .buffers import BufferRanges
from .context import LinkContext, intervals_names, where


def link_assertion(ctx: LinkContext, ranges: BufferRanges, facts: KernelFacts, values: Values, raw,
                   indices: list[int]) -> list[Assertion]:
    """The assertion as linked at each launch of its kernel: a kernel reused for other sizes (one
    position table for an encoder's and a decoder's lengths) checks other dims at each call site.
    Launches that link it alike (the same bound, index sources and extent: a layer's kernel
    reused by every layer) give one assertion, at the first of them."""
    def unlinked(reason: str) -> list[Assertion]:
        a = Assertion(kernel=facts.name, message=raw.message, location=raw.location, index_var=raw.index_var,
                      lower=raw.lower, bound=raw.bound, parallel=raw.parallel, linked=False,
                      unlinked_reason=reason)
        return [a]

    if raw.index_var is None or raw.bound_py is None:
        return unlinked("the assertion message is not of the form `index out of bounds: [L <=] var < bound`")
    if not indices:
        return unlinked(f"{facts.name} is never launched from run_impl")
    index = index_node(raw.index_var)
    if index is None:
        return unlinked(f"the index `{raw.index_var}` of the assertion message is not an expression")
    ptrs, _ = values.sources(index, raw.line)
    upper = (values.data_upper if ptrs else values.upper)(index, raw.line)
    # An index from loaded data that an op in the kernel bounds by a size (an in-kernel bucketize).
    bounding = tuple(sorted(values.bounding_ops)) if ptrs and upper is not None else ()
    out: list[Assertion] = []
    firsts: list[int] = []
    seen: set[tuple] = set()
    for li in indices:
        a = _assertion_at(ctx, ranges, facts, raw, index, ptrs, upper, li, seen, bounding)
        if a is not None:
            out.append(a)
            firsts.append(li)
    if not out:
        return unlinked("the bound could not be mapped to a launch argument")
    if len(out) > 1:  # say which call site each one is linked through
        for a, li in zip(out, firsts):
            launch = ctx.model.launches[li]
            a.chain = a.chain[:1] + (CHAIN["launch"].format(launch=where(launch.location), count=len(out),
                                                            kernel=facts.name),) + a.chain[1:]
    return out


def _assertion_at(ctx: LinkContext, ranges: BufferRanges, facts: KernelFacts, raw, index, ptrs, upper, li: int,
                  seen: set[tuple], bounding: tuple[str, ...] = ()) -> Assertion | None:
    """The assertion linked through launch `li`; None when its bound does not map there or an
    earlier launch in `seen` linked it alike (its chain is then never built). `bounding`: the ops in
    the kernel that bound a loaded index by a size (they name what reaches the maximum)."""
    mapping = ctx.param_map(facts, li)
    try:
        bound_expr = intervals.substitute(raw.bound_py, mapping)
    except ValueError:
        return None
    a = Assertion(kernel=facts.name, message=raw.message, location=raw.location, index_var=raw.index_var,
                  lower=raw.lower, bound=raw.bound, parallel=raw.parallel, index_pointers=tuple(sorted(ptrs)))
    launch = ctx.model.launches[li]
    index_inputs: set[int] = set()
    via: str | None = None
    for pos in (i for i, p in enumerate(facts.params) if p in ptrs):  # in parameter order, not set order
        if pos < len(launch.args):
            index_inputs |= ctx.buffer_inputs(launch.args[pos], li)
            if via is None:
                via = ctx.via(launch.args[pos], li)
                if via is not None:
                    a.index_buffer, a.index_writer = launch.args[pos], ctx.writer(launch.args[pos], li)
    a.bound_expr, a.bound_sources = bound_expr, ctx.sources(bound_expr)
    with contextlib.suppress(ValueError):  # the check's own iteration space, at the same launch
        a.space_expr = intervals.substitute(raw.space, mapping) if raw.space else None
    a.index_sources = tuple(sorted(index_inputs))
    # An index loaded from buffers of known value range (buffers.py) still has an extent.
    _extent(ctx, a, upper if not ptrs else ranges.index_upper(facts, index, raw.line, li) or upper, mapping,
            bound_expr)
    ident = (a.bound_expr, a.index_sources, a.index_extent, a.space_expr)
    if ident in seen:
        return None
    seen.add(ident)
    if len(index_inputs) == 1 and len(ptrs) == 1 and not a.index_extent and (a.bound_value is not None or a.bound_sources):
        # Only a table's check without an extent asks for it (query.valueindex): the input's value as
        # VALUE, through what the ops between make of it (a cumsum of a mask sums `n` of them).
        (ptr,) = ptrs
        slot = facts.params.index(ptr)
        loaded = BufferRanges(ctx, ctx.model.inputs[next(iter(index_inputs))].name).buffer_range(
            launch.args[slot], li) if slot < len(launch.args) else None
        a.value_upper = _value_upper(facts, index, raw.line, ptrs, mapping, loaded)
    a.chain = _chain(ctx, facts, raw, a, li, mapping)
    steps = ranges.steps(facts, li, ptrs) if a.index_extent and ptrs else ()
    if steps:
        a.index_ops = ranges.ops(facts, li, ptrs)
    elif a.index_extent and bounding:
        a.index_ops = bounding
    if steps or via:  # an index loaded from buffers of known range: what they hold, else who wrote it
        a.chain = a.chain[:1] + (steps or ((via,) if via else ())) + a.chain[1:]
    return a


def _value_upper(facts: KernelFacts, index, line: int, ptrs, mapping: dict[str, str],
                 loaded: tuple[str, str] | None = None) -> str | None:
    """The index's maximum at the launch with the one input value it loads read as `VALUE` (its
    arithmetic with sizes and loop variables kept; `loaded`: the loaded buffer's range over VALUE
    where an op made it from the input, `(min(0, s27*VALUE), s27*VALUE)` for a cumsum along s27):
    None when it stays unknown."""
    found = Values(facts, load_ranges={p: loaded or (VALUE, VALUE) for p in ptrs}).upper(index, line)
    try:
        return intervals.simplify(intervals.substitute(found, mapping)) if found else None
    except ValueError:
        return None


def _extent(ctx: LinkContext, a: Assertion, found: str | None, mapping: dict[str, str], bound_expr: str) -> None:
    """The index's extent at the launch (`found`: its inclusive maximum over the kernel's params),
    and the bound's value where it is a constant (or why the assertion is not linked)."""
    if found is not None:
        try:
            a.index_extent = intervals.simplify(f"({intervals.substitute(found, mapping)}) + 1")
            a.index_extent_sources = ctx.sources(a.index_extent)
            a.index_extent_value_inputs = ctx.value_inputs(a.index_extent)
        except ValueError:
            a.index_extent = None
    try:
        lo, hi = intervals.evaluate_interval(bound_expr, {})
        if lo == hi:
            a.bound_value = int(lo)
    except ValueError:
        if not a.bound_sources:
            a.linked = False
            a.unlinked_reason = f"the bound {a.bound} resolves to {a.bound_expr}, which is not over input sizes"


def _chain(ctx: LinkContext, facts: KernelFacts, raw, a: Assertion, li: int, mapping: dict[str, str]
           ) -> tuple[str, ...]:
    """The lines from the check to the input: the index, the bound's launch argument, the ranges."""
    model = ctx.model
    lines = []
    if a.index_sources:
        who = ", ".join(model.input_text(i) for i in a.index_sources if i < len(model.inputs))
        lines.append(CHAIN["values"].format(who=who, var=raw.index_var, kernel=facts.name))
    elif a.index_extent:
        lines.append(CHAIN["index-extent"].format(var=raw.index_var, kernel=facts.name, extent=a.index_extent))
    else:
        lines.append(CHAIN["index"].format(var=raw.index_var, kernel=facts.name))
    launch = model.launches[li]
    params = facts.params
    used = intervals_names(raw.bound_py or "")
    # In parameter order (a set's order would change from run to run).
    bound_params = [p for p in params if p in used and p in mapping]
    for p in bound_params:
        pos = params.index(p)
        arg = launch.args[pos] if pos < len(launch.args) else "?"
        lines.append(CHAIN["bound-argument"].format(bound=a.bound, param=p, position=pos,
                                                    launch=where(launch.location), arg=arg))
    if not bound_params:
        lines.append(ctx.chain_line("bound-constant", bound=a.bound))
    elif a.bound_expr and a.bound_expr not in ctx.root and a.bound_expr != a.bound:
        lines.append(ctx.chain_line("bound-expr", bound_expr=a.bound_expr))
    for i in a.index_extent_value_inputs:
        if i < len(model.inputs):
            unbacked = sorted(n for n in intervals_names(a.index_extent or "")
                              if n in model.symbols and model.symbols[n].unbacked)
            lines.append(ctx.chain_line("unbacked", symbols=", ".join(unbacked) or "the extent",
                                        input=model.input_text(i)))
    for ref in a.bound_sources + tuple(r for r in a.index_extent_sources if r not in a.bound_sources):
        line = ctx.range_lines.get(ref)
        if line is None:  # the dims' ranges are settled before kernels are linked: once per dim
            dim = model.dim(ref)
            symbol = dim.symbol if dim else None
            line = ctx.range_lines[ref] = ctx.chain_line("range", symbol=symbol or "?", dim=model.describe(ref),
                                                         range=range_text(dim))
        lines.append(line)
    return tuple(lines)
