"""The linking pass over kernels: a `Kernel` record for every kernel with source, launched or
named by a helper, the problems of those without, and each kernel's assertions, divisions and
reductions linked at every launch that gives them other sizes."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from ..core.budget import poll
from ..core.model import Division, Kernel, Problem, ProblemKind, Reduction
from ..core.records import StrideRead
from ..expr import intervals
from ..expr.values import Values
from ..parse.kernels import KernelFacts
from . import assertions
from .buffers import BufferRanges
from .context import LinkContext


def link_kernels(ctx: LinkContext, ranges: BufferRanges) -> None:
    """`model.kernels` and what each kernel's facts link to (`ranges`: buffers of known value range)."""
    model = ctx.model
    launches_by_kernel: dict[str, list[int]] = defaultdict(list)
    for i, launch in enumerate(model.launches):
        if not launch.extern:
            launches_by_kernel[launch.kernel].append(i)
    for helper in ctx.wrapper.helpers.values():
        kname = helper.name[len("call_"):]
        if helper.triton_source is None:
            model.kernels[kname] = Kernel(kname, "triton", helper.params, location=helper.location,
                                          has_source=False)
            model.problems.append(Problem(
                f"kernel {kname} has no embedded Triton source"
                + (f" ({helper.source_problem})" if helper.source_problem else "")
                + ": its assertions cannot be checked", helper.location, kind=ProblemKind.NO_SOURCE))
    for kname, facts in ctx.kfacts.items():
        _kernel(ctx, ranges, facts, launches_by_kernel.get(kname, []))
    for kname in launches_by_kernel:
        if kname not in model.kernels:
            launch = model.launches[launches_by_kernel[kname][0]]
            model.kernels[kname] = Kernel(kname, "cpp" if model.device == "cpu" else "triton",
                                          location=launch.location, has_source=False)
            model.problems.append(Problem(f"kernel {kname} is launched but its source is not in the package",
                                          launch.location, kind=ProblemKind.NO_SOURCE))


def _kernel(ctx: LinkContext, ranges: BufferRanges, facts: KernelFacts, indices: list[int]) -> None:
    """One kernel with source, launched at `indices` (its launches in `model.launches`)."""
    model, kname = ctx.model, facts.name
    # The facts' own table, not a copy: nothing changes it once parsed, and the facts go after linking.
    model.kernels[kname] = Kernel(kname, facts.kind, facts.params, facts.param_types,
                                  facts.location, has_source=True, pool_bins=facts.pool_bins)
    if facts.problem:
        model.problems.append(Problem(f"{kname}: {facts.problem}", facts.location, kind=ProblemKind.PARSE))
    model.kernel_messages.extend((kname, message, loc) for message, loc in facts.messages)
    values = Values(facts)
    for raw in facts.assertions:
        poll(f"linking the assertions of {kname}")
        model.assertions.extend(assertions.link_assertion(ctx, ranges, facts, values, raw, indices))
    # Every launch that gives the divisor (the reduced extent) other sizes, once each.
    for div in facts.divisions:
        for expr, sources, space in _over_launches(ctx, facts, div.divisor_expr, indices, div.space):
            model.divisions.append(Division(kname, div.divisor, expr, sources, div.location,
                                            integer=div.integer, space_expr=space, index_math=div.index_math))
    for red in facts.reductions:
        for expr, sources, space in _over_launches(ctx, facts, red.extent_expr, indices, red.space):
            model.reductions.append(Reduction(kname, red.op, expr, sources, red.location, space))
    for raw in facts.strides:
        model.stride_reads.extend(_stride_reads(ctx, facts, raw, indices))


def _stride_reads(ctx: LinkContext, facts: KernelFacts, raw, indices: list[int]) -> Iterator[StrideRead]:
    """A load's two strides at each launch that gives them input sizes, once per distinct pair."""
    seen: set[tuple] = set()
    position = facts.params.index(raw.pointer) if raw.pointer in facts.params else None
    for li in indices:
        mapping = ctx.param_map(facts, li)
        try:
            first, second = (intervals.substitute(e, mapping) for e in (raw.first, raw.second))
            extent = intervals.substitute(raw.extent, mapping) if raw.extent else None
        except ValueError:
            continue
        sources = ctx.sources(f"({first}) - ({second})")
        launch = ctx.model.launches[li]
        buffer = launch.args[position] if position is not None and position < len(launch.args) else raw.pointer
        # Strides that agree at some sizes and differ at others (a Triton kernel's relate only through
        # its launch's arguments), once per buffer and values: texts of one stride differ by a term of 0.
        signature = _agree_and_differ(ctx, first, second)
        if sources and signature is not None and (signature, buffer) not in seen:
            seen.add((signature, buffer))
            yield StrideRead(facts.name, raw.pointer, ctx.canonical(buffer), first, second, sources, raw.location,
                             extent)


def _agree_and_differ(ctx: LinkContext, first: str, second: str) -> tuple | None:
    """The two strides' values at sizes 1..64 of their one root symbol, when they agree at one of them
    and differ at another where both step (at least 1); None otherwise."""
    try:
        names = [n for n in intervals.names(f"({first}) - ({second})") if n in ctx.root]
    except ValueError:
        return None
    if len(names) != 1:
        return None
    values: list[tuple[float | None, float | None]] = []
    for n in range(1, 65):
        try:
            values.append((intervals.evaluate(first, {names[0]: n}), intervals.evaluate(second, {names[0]: n})))
        except (ValueError, ZeroDivisionError, OverflowError):
            values.append((None, None))
    agree = any(a is not None and a == b for a, b in values)
    differ = any(a is not None and b is not None and a != b and min(a, b) >= 1 for a, b in values)
    return tuple(values) if agree and differ else None


def _over_launches(ctx: LinkContext, facts: KernelFacts, expr: str | None, indices: list[int],
                   space: str | None = None) -> Iterator[tuple]:
    """`expr` (and `space`) at each launch whose arguments make it read input dims, once per
    distinct result."""
    seen: set[tuple] = set()
    for li in indices if expr is not None else ():
        try:  # `space` is from the same kernel's params: it substitutes when `expr` does
            resolved, space_expr = (intervals.substitute(e, ctx.param_map(facts, li)) if e else None
                                    for e in (expr, space))
        except ValueError:
            continue
        sources = ctx.sources(resolved)
        if sources and (resolved, space_expr) not in seen:
            seen.add((resolved, space_expr))
            yield resolved, sources, space_expr
