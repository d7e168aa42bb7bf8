"""The linking passes over run_impl's size symbols: each symbol as an expression over the root
symbols (those read from an input's sizes), the wrapper's own divisions by them, and the inputs
whose values an unbacked symbol (`u0`) was read from."""

from __future__ import annotations

import contextlib
import math
import re

from ..core.findings import Location
from ..core.model import DimRef, Division, Symbol, shim_op
from ..expr import intervals
from ..expr.syntax import divisor_texts
from .context import LinkContext, intervals_names

_UNBACKED = re.compile(r"^u\d+$")


def link_symbols(ctx: LinkContext) -> None:
    """`model.symbols`, in declaration order, each over the root symbols declared before it."""
    for decl in ctx.wrapper.symbols:
        if decl.kind in ("size", "stride") and decl.buffer is not None:
            index = ctx.input_by_name.get(decl.buffer)
            source = DimRef(index, decl.dim) if index is not None and decl.dim is not None \
                and decl.kind == "size" else None
            ctx.model.symbols[decl.name] = Symbol(decl.name, decl.name, source, decl.location,
                                                  is_stride=decl.kind == "stride")
            ctx.sym_expr[decl.name] = decl.name
            if source is not None:
                ctx.root.setdefault(decl.name, source)
            continue
        try:
            expr = intervals.substitute(decl.expr, ctx.sym_expr)
        except ValueError:
            expr = decl.expr
        unbacked = bool(_UNBACKED.match(decl.name)) and not (intervals_names(expr) & set(ctx.root))
        low, high = ctx.wrapper.symbol_bounds.get(decl.name, (None, None))
        # A tie to a root symbol (`Expected Eq(s77, u2)`) holds at every call: u2 is that input size.
        tie = ctx.sym_expr.get(ctx.wrapper.symbol_ties.get(decl.name, ""))
        ctx.model.symbols[decl.name] = Symbol(decl.name, expr, None, decl.location, unbacked=unbacked,
                                              min=low, max=high, tied=tie if unbacked and tie in ctx.root else None)
        ctx.sym_expr[decl.name] = decl.name if unbacked else expr
        _wrapper_division(ctx, decl.name, decl.expr, decl.location)


def _wrapper_division(ctx: LinkContext, name: str, expr: str, location: Location) -> None:
    # Integer `/` or `%` by a size symbol in the wrapper traps (SIGFPE) when that size is 0.
    for text in divisor_texts(expr):
        resolved = ctx.resolve(text)
        sources = ctx.sources(resolved)
        if sources:
            ctx.model.divisions.append(Division(kernel=f"run_impl ({name})", divisor=text, divisor_expr=resolved,
                                                sources=sources, location=location, integer=True,
                                                in_wrapper=True))


def unbacked_sources(ctx: LinkContext) -> None:
    """Unbacked symbols read from tensors: follow `u0 = u0_raw` to the shim that wrote `u0_raw`
    (`aoti_torch_item_int64(arg2_1, &u0_raw)`) and on to the inputs whose values it read. Runs once
    the launches (the shims among them) are linked."""
    end = len(ctx.model.launches)
    for sym in ctx.model.symbols.values():
        if not sym.unbacked:
            continue
        try:
            names = intervals_names(sym.expr) | {sym.name}
        except ValueError:
            continue
        found: set[int] = set()
        for name in names:
            found |= ctx.buffer_inputs(name, end)
        sym.value_inputs = tuple(sorted(found))


def unbacked_bounds(ctx: LinkContext, buffer_range, shapes) -> None:
    """An unbacked size that an op's output length bounds by what its input holds: repeat_interleave's
    length is the sum of its repeats, at most their maximum times their count (FastSpeech's length
    regulator: durations clamped to [1, 8], `u0 <= 8*s77`). `buffer_range(buf, before)` and
    `shapes(launch)` are the buffer ranges' (buffers.py). Runs once those exist."""
    model = ctx.model
    for sym in model.symbols.values():
        if not sym.unbacked or sym.max_expr is not None:
            continue
        writers = ctx.producers.get(ctx.canonical(sym.expr), ())
        if not writers:
            continue
        index = writers[-1]
        launch = model.launches[index]
        if not launch.extern or shim_op(launch.kernel) != "repeat_interleave_Tensor" or not launch.args:
            continue
        found, shape = buffer_range(launch.args[0], index), (shapes(index) or (None,))[0]
        if found is None or not shape or len(shape) != 1:
            continue
        try:
            low, high = intervals.evaluate_interval(found[0], {})[0], found[1]
            with contextlib.suppress(ValueError):  # repeats are integers: a float bound (`8.0`) floors
                high = str(math.floor(intervals.evaluate_interval(high, {})[1]))
            bound = intervals.simplify(f"({high}) * ({shape[0]})")
        except (ValueError, OverflowError):
            continue
        if low >= 0 and intervals_names(bound) <= set(ctx.root):
            sym.max_expr = bound
