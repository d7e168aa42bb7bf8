"""What Inductor compiled for the traced sizes without a guard: adaptive poolings lowered for the
traced size of a map whose size is dynamic, and loads whose stride it simplified with a property of
the traced sizes (analyzer/parse/loadstrides.py).

Inductor's lowerings of `_adaptive_avg_pool2d` and `adaptive_max_pool2d` read the pooled map's height
and width with `V.graph.sizevars.guard_int`: the example's sizes become constants of the kernel (its
bins `16*x1 // 7` for a 16-row map pooled into 7, or a fixed window of 16 // 7... where they divide)
and the guard that would pin the map to them is not checked by an AOTInductor package. Which node
was lowered so, and over which sizes, needs the exported program (the node, its map's size
expressions, its `output_size`) and the package (a generated kernel named for the op, not the ATen
fallback; the bins in its text).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

from ..core.budget import poll
from ..core.model import DimRef, GraphNode, Model
from ..core.records import StrideRead
from ..expr import intervals
from . import externs
from . import witness as W
from .sizes import effective_max, effective_min

ADAPTIVE_OPS = {"aten.adaptive_avg_pool2d.default": "adaptive_avg_pool2d",
                "aten._adaptive_avg_pool2d.default": "adaptive_avg_pool2d",
                "aten.adaptive_max_pool2d.default": "adaptive_max_pool2d"}
SEARCH = 4096      # sizes tried above a dim's smallest accepted one


@dataclass(frozen=True)
class PooledDim:
    """One dynamic side of the pooled map: the input dim it follows, the map's size expression over
    the exported program's symbols, the bins, the map sizes the kernel was lowered for (its bins'
    numerators; empty where they divide and the kernel pools a fixed window), and the smallest size
    of the input dim the package accepts where the map has another size, and the map's size there."""

    ref: DimRef
    side: str                     # "rows" or "columns" of the map
    expr: str
    bins: int
    traced: tuple[int, ...]
    witness: int
    map_size: int


@dataclass(frozen=True)
class TracedPool:
    node: GraphNode
    op: str                       # `adaptive_avg_pool2d`
    kernel: str
    dims: tuple[PooledDim, ...]


def traced_pools(model: Model) -> Iterator[TracedPool]:
    """Each adaptive pooling of the exported program over a map of dynamic size that the package
    computes in a generated kernel, with the sides that have a witness (one bin per side is a mean or
    a max over the map: left out)."""
    symbols = {d.declared_expr: DimRef(i, d.dim) for i, inp in enumerate(model.inputs) for d in inp.dims
               if d.declared_expr}
    lowered: dict[str, list[str]] = {}
    for node in model.graph:
        op = ADAPTIVE_OPS.get(node.op)
        if op is None or not node.arg_sizes or not node.arg_sizes[0] or not node.int_lists:
            continue
        poll("adaptive poolings")
        sizes, out = node.arg_sizes[0], node.int_lists[0]
        if len(sizes) < 2 or len(out) != 2 or all(o == 1 for o in out):
            continue
        kernels = lowered.setdefault(op, _lowered(model, op))
        if not kernels:
            continue
        # Several poolings of one op: which kernel is whose is not known, so a witness avoids every
        # traced size any of them was lowered for (each is another size for the others too).
        kernel, bins = kernels[0], {pair for name in kernels for pair in model.kernels[name].pool_bins}
        dims = []
        for side, text, n in zip(("rows", "columns"), sizes[-2:], out):
            if not isinstance(text, str) or text == "?":
                continue
            names = intervals.names(text)
            if len(names) != 1 or next(iter(names)) not in symbols:
                continue
            ref = symbols[next(iter(names))]
            traced = tuple(sorted({a for a, b in bins if b == n}))
            found = _witness(model, ref, text, n, traced)
            if found is not None:
                dims.append(PooledDim(ref, side, text, n, traced, *found))
        if dims:
            yield TracedPool(node, op, kernel, tuple(dims))


def _lowered(model: Model, op: str) -> list[str]:
    """The generated kernels launched for the op (Inductor names a fused kernel for its ops); none
    where the package calls ATen's (a fallback computes the bins from the map's size)."""
    launched = {launch.kernel for launch in model.launches if not launch.extern}
    return [name for name in model.kernels if op in name and name in launched]


def _witness(model: Model, ref: DimRef, expr: str, bins: int, traced: tuple[int, ...]) -> tuple[int, int] | None:
    """The smallest size of `ref` the package accepts where the map is not empty and has a size it was
    not lowered for (not a numerator of its bins; where the traced size divided into a fixed window, one
    no multiple of the bins, which the traced one was), and no convolution rejects; (size, map size)."""
    for size, at in _map_sizes(model, ref, expr, SEARCH):
        if at < 1 or ((at in traced) if traced else (at % bins == 0)):
            continue
        if externs.rejecting_call(model, {ref: size}) is None:
            return size, at
    return None


def _map_sizes(model: Model, ref: DimRef, expr: str, search: int) -> Iterator[tuple[int, int]]:
    """(size of `ref`, the pooled map's size there) for the sizes the package accepts, from the dim's
    smallest up to `search` above it, where the map's size (over the exported program's symbol) is a
    whole number."""
    dim = model.known_dim(ref)
    low, high = effective_min(dim), effective_max(dim)
    top = low + search if high is None else min(high, low + search)
    symbol = dim.declared_expr or ""
    for size in range(low, top + 1):
        try:
            value = intervals.evaluate(expr, {symbol: size})
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
        if not math.isnan(value) and value == int(value):
            yield size, int(value)


# -- ceil-mode poolings rounded as at the traced size ---------------------------------------------------

# Inductor lowers these itself (`pooling_size`) unless the window is larger than 25 (an ATen fallback,
# which computes ceil mode at every size); the generated kernel is named for the ATen op.
CEIL_POOL_OPS = {"aten.max_pool2d.default": "max_pool2d", "aten.max_pool2d_with_indices.default": "max_pool2d",
                 "aten.avg_pool2d.default": "avg_pool2d", "aten.max_pool1d.default": "max_pool1d",
                 "aten.avg_pool1d.default": "avg_pool1d"}
# The 1-d ones are decomposed into the 2-d lowering over a map of one row.
_KERNEL_OPS = {"max_pool2d": "max_pool2d_with_indices", "avg_pool2d": "avg_pool2d",
               "max_pool1d": "max_pool2d_with_indices", "avg_pool1d": "avg_pool2d"}
_FALLBACK_WINDOW = 25
MAX_SEARCHES = 64   # distinct (map, rounding) searches of one graph; a real one repeats a few per stage
# Sizes tried above a dim's smallest: whether the two roundings agree repeats with the stride (times the
# divisors of the map's size), so a break shows within a few periods if at all.
ROUNDING_SEARCH = 512


@dataclass(frozen=True)
class Rounding:
    """A ceil-mode pooling's size arithmetic along one axis (PyTorch's `pooling_output_shape`)."""

    kernel: int
    stride: int
    padding: int
    dilation: int

    def floor(self, x: int) -> int:
        return (x + 2 * self.padding - self.dilation * (self.kernel - 1) - 1) // self.stride + 1

    def ceil(self, x: int, correct: bool) -> int:
        """Ceil mode's size; with `correct`, less the last window where it would start past the map."""
        out = (x + 2 * self.padding - self.dilation * (self.kernel - 1) + 2 * (self.stride - 1)) // self.stride
        return out - 1 if correct and (out - 1) * self.stride >= x + self.padding else out

    def compiled(self, x: int, traced: int) -> tuple[int, bool]:
        """The size Inductor's lowering computes at `x` for a map traced at `traced`, and whether it
        dropped ceil mode: each of its two branches is taken at the traced size (`guard_or_false`,
        `size_hint`), and the guard it records is never checked by an AOTInductor package."""
        out = (x + 2 * self.padding - self.dilation * (self.kernel - 1) + 2 * (self.stride - 1)) // self.stride
        if self.ceil(traced, False) != self.ceil(traced, True):
            out -= 1
        if self.floor(traced) == self.ceil(traced, True):
            return self.floor(x), True
        return out, False


@dataclass(frozen=True)
class RoundedDim:
    """One dynamic side of a ceil-mode pooling's map: the input dim it follows, the map's size over the
    exported program's symbols and in the traced example, and the smallest size of the input dim the
    package accepts where the package pools another count than eager (`package`, `program`)."""

    ref: DimRef
    side: str                     # "rows" or "columns" of the map
    expr: str
    traced: int
    floor: bool                   # compiled with floor's rounding (ceil mode dropped)
    rounding: Rounding
    witness: int
    map_size: int
    program: int
    package: int


@dataclass(frozen=True)
class RoundedPool:
    node: GraphNode
    op: str                       # `max_pool2d`
    kernel: str
    dims: tuple[RoundedDim, ...]


def rounded_pools(model: Model) -> Iterator[RoundedPool]:
    """Each ceil-mode pooling of the exported program over a map of dynamic size that the package
    computes in a generated kernel, with the sides where its rounding, taken at the traced size,
    differs from eager's at a size the package accepts."""
    symbols = {d.declared_expr: DimRef(i, d.dim) for i, inp in enumerate(model.inputs) for d in inp.dims
               if d.declared_expr}
    # A graph repeats one pooling over one map (a stage per block): each kernel lookup and search once.
    lowered: dict[str, list[str]] = {}
    searched: dict[tuple, tuple[int, int, int, int] | None] = {}
    for node in model.graph:
        op = CEIL_POOL_OPS.get(node.op)
        params = dict(node.params)
        if op is None or params.get("ceil_mode") is not True or not node.arg_sizes or not node.arg_hints:
            continue
        poll("ceil-mode poolings")
        sizes, hints = node.arg_sizes[0], node.arg_hints[0]
        roundings = _roundings(params, op)
        kernels = lowered.setdefault(op, _lowered(model, _KERNEL_OPS[op]))
        axes = 1 if op.endswith("1d") else 2
        if sizes is None or hints is None or roundings is None or not kernels or len(sizes) < axes + 1:
            continue
        dims = []
        sides = ("rows", "columns") if axes == 2 else ("positions",)
        for side, text, traced, rounding in zip(sides, sizes[-axes:], hints[-axes:], roundings[-axes:]):
            if not isinstance(text, str) or text == "?" or traced is None:
                continue
            names = intervals.names(text)
            ref = symbols.get(next(iter(names))) if len(names) == 1 else None
            key = (ref, text, traced, rounding)
            if ref is not None and key not in searched and len(searched) < MAX_SEARCHES:
                searched[key] = _rounding_break(model, ref, text, traced, rounding)
            found = searched.get(key)
            if ref is not None and found is not None:
                dims.append(RoundedDim(ref, side, text, traced, rounding.compiled(traced, traced)[1], rounding, *found))
        if dims:
            yield RoundedPool(node, op, kernels[0], tuple(dims))


def _roundings(params: dict, op: str) -> tuple[Rounding, Rounding] | None:
    """Both axes' arithmetic from the node's arguments (their schema defaults where left out); None
    where they are not two ints each or the window is one Inductor leaves to ATen."""
    def pair(name: str, default: tuple[int, ...]) -> tuple[int, ...] | None:
        value = params.get(name, default)
        value = (value,) if isinstance(value, int) and not isinstance(value, bool) else value
        if not isinstance(value, tuple) or len(value) not in (1, 2):
            return None
        return value * 2 if len(value) == 1 else value

    kernel = pair("kernel_size", ())
    if kernel is None or kernel[0] * kernel[1] > _FALLBACK_WINDOW:
        return None
    stride = pair("stride", ()) if params.get("stride") else kernel
    padding, dilation = pair("padding", (0,)), pair("dilation", (1,)) if op.startswith("max") else (1, 1)
    if stride is None or padding is None or dilation is None or min(stride) < 1:
        return None
    return (Rounding(kernel[0], stride[0], padding[0], dilation[0]),
            Rounding(kernel[1], stride[1], padding[1], dilation[1]))


def _rounding_break(model: Model, ref: DimRef, expr: str, traced: int,
                    rounding: Rounding) -> tuple[int, int, int, int] | None:
    """The smallest size of `ref` the package accepts where the map is one eager pools (at least one
    window) into another count than the package, and no call rejects it: (size, map size, eager's
    count, the package's)."""
    for size, at in _map_sizes(model, ref, expr, ROUNDING_SEARCH):
        program, package = rounding.ceil(at, True), rounding.compiled(at, traced)[0]
        if program >= 1 and program != package and externs.rejecting_call(model, {ref: size}) is None:
            return size, at, program, package
    return None


# -- loads stepped by two strides --------------------------------------------------------------------


@dataclass(frozen=True)
class StrideBreak:
    """A `StrideRead`'s smallest breaking size: `ref` at `size` (the strides `first_at`, `second_at`),
    the others at the witness's sizes, where the loop runs at least twice."""

    ref: DimRef
    size: int
    first_at: int
    second_at: int
    agree: tuple[int, ...]        # the sizes up to 64 where the two agree


def stride_break(model: Model, read: StrideRead) -> StrideBreak | None:
    """Where two strides of one load disagree (both at least 1) at a size of its one input dim the
    package accepts; None where they never do or the read follows several dims."""
    if len(read.sources) != 1:
        return None
    ref = read.sources[0]
    dim = model.known_dim(ref)
    symbol = W.symbol_of(model, ref)
    if symbol is None:
        return None
    low, high = effective_min(dim), effective_max(dim)
    top = low + SEARCH if high is None else min(high, low + SEARCH)
    values = W.symbol_values(model, {ref: max(low, 1)})
    for size in range(max(low, 1), top + 1):
        values[symbol] = size
        a, b = (W.evaluate_symbols(e, values) for e in (read.first, read.second))
        if a is None or b is None or a == b or min(a, b) < 1:
            continue
        extent = W.evaluate_symbols(read.extent, values) if read.extent else None
        if extent is not None and extent < 2:
            continue
        agree = tuple(n for n in range(1, 65) if W.evaluate_symbols(read.first, {symbol: n})
                      == W.evaluate_symbols(read.second, {symbol: n}))
        return StrideBreak(ref, size, int(a), int(b), agree)
    return None
