"""What extern ATen calls reject on their own.

A shim call (`aoti_torch_cpu_convolution(...)`) runs the same ATen op as eager PyTorch, with the
same argument checks: an input that trips one of them raises eager's own error in the package too,
before anything the call would compute. Such an input is the caller's mistake, not the package's;
findings whose witness is one say so (the severity policy makes them infos).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..core.model import DimRef, Launch, Model
from .witness import Assignment, evaluate_at, symbol_of

# `aten.convolution` and `aten._convolution` (the same leading arguments), on CPU, CUDA or any device;
# not mkldnn's or cudnn's own entry points, whose arguments differ.
_CONVOLUTION = re.compile(r"aoti_torch_(?:cpu_|cuda_)?_?convolution")
_TOPK = re.compile(r"aoti_torch_(?:cpu_|cuda_)?topk")
_ARRAY = re.compile(r"array\(([-\d,\s]*)\)")
_SYMBOL = re.compile(r"\b[a-z]+\d+\b")   # a size symbol (`s59`, `u0`, `ps1`)
# aoti_torch_*_convolution(input, weight, bias, stride, len, padding, len, dilation, len, transposed, ...)
_PADDING, _DILATION, _TRANSPOSED = 5, 7, 9


@dataclass(frozen=True)
class Rejection:
    """A convolution whose input is smaller than its kernel: `padded` is the input's size along one
    spatial dim after padding, `kernel` the dilated kernel's extent there. ATen's check raises
    `Kernel size can't be greater than actual input size`. For `op` "topk", a top-k over a dim of
    `padded` elements with k = `kernel` > them: `selected index k out of range`."""

    launch: Launch
    padded: int
    kernel: int
    op: str = "convolution"


def rejecting_call(model: Model, choice: Assignment | None,
                   ops: tuple[str, ...] = ("convolution", "topk")) -> Rejection | None:
    """The first extern call that raises on its own under the sizes `choice` (the other dims at
    their witness sizes), or None. Convolutions (their padded input must be at least as large as the
    dilated kernel along every spatial dim) and top-k (k at most the scanned dim's size) are known;
    `ops` says which of the two to look for."""
    for launch in model.launches:
        if launch.extern and "convolution" in ops and _CONVOLUTION.fullmatch(launch.kernel):
            found = _too_small(model, launch, choice)
        elif launch.extern and "topk" in ops and _TOPK.fullmatch(launch.kernel):
            found = _too_few(model, launch, choice)
        else:
            continue
        if found is not None:
            return found
    return None


def _too_few(model: Model, launch: Launch, choice: Assignment | None) -> Rejection | None:
    """`aoti_torch_*_topk(self, k, dim, largest, sorted, &values, &indices)` over fewer than k elements."""
    args, shapes = launch.args, launch.arg_shapes
    source = shapes[0] if shapes else None
    if len(args) < 3 or not source or not args[1].isdigit() or not args[2].lstrip("-").isdigit():
        return None
    dim = int(args[2]) % len(source)
    size = evaluate_at(model, str(source[dim]), choice)
    return Rejection(launch, int(size), int(args[1]), "topk") if size is not None and size < int(args[1]) else None


def _ints(arg: str, count: int) -> list[int] | None:
    """`array(1, 1)` -> [1, 1]; a single value is broadcast to `count` dims (ATen's rule)."""
    found = _ARRAY.fullmatch(arg)
    if found is None:
        return None
    values = [int(v) for v in found.group(1).split(",") if v.strip()]
    if len(values) == 1:
        values *= count
    return values if len(values) == count else None


def _too_small(model: Model, launch: Launch, choice: Assignment | None) -> Rejection | None:
    args, shapes = launch.args, launch.arg_shapes
    if len(args) <= _TRANSPOSED or len(shapes) < 2 or args[_TRANSPOSED] != "0":
        return None   # transposed convolutions grow their input: no such check
    source, weight = shapes[0], shapes[1]
    if not source or not weight or len(source) != len(weight) or len(weight) < 3:
        return None
    spatial = len(weight) - 2
    padding, dilation = _ints(args[_PADDING], spatial), _ints(args[_DILATION], spatial)
    if padding is None or dilation is None:
        return None
    for size_expr, kernel_text, pad, dil in zip(source[2:], weight[2:], padding, dilation):
        if not kernel_text.isdigit():
            continue
        size = evaluate_at(model, size_expr, choice)
        if size is None:
            continue
        padded, extent = int(size) + 2 * pad, dil * (int(kernel_text) - 1) + 1
        if padded < extent:
            return Rejection(launch, padded, extent)
    return None


@dataclass(frozen=True)
class AssumedOutput:
    """A buffer an extern call allocates and returns (`&buf4_handle`), which the kernels read at the
    size the package takes it to have (`sizes`, stated only by an assert_size_stride that runs with
    AOTI_RUNTIME_CHECK_INPUTS=1), while one of the call's own inputs is empty: ATen sizes the output
    from its inputs (and their values), so at that witness it holds fewer than `count` elements or
    the call raises, and reads at the assumed size run past its end."""

    launch: Launch
    buffer: str
    sizes: tuple[str, ...]
    count: int


def assumed_output(model: Model, buffer: str | None, writer: int | None,
                   choice: Assignment | None) -> AssumedOutput | None:
    """The `AssumedOutput` of launch `writer`'s output `buffer` under the sizes `choice`, or None
    (not an extern call, not its own allocation, none of its inputs empty, no assumed size, or one
    that is 0 there too, or a size check that runs at every call)."""
    if buffer is None or writer is None or not 0 <= writer < len(model.launches):
        return None
    launch = model.launches[writer]
    if not launch.extern or buffer not in launch.outputs:
        return None
    shapes = dict(zip(launch.args, launch.arg_shapes))
    if shapes.get(buffer) is not None or not any(
            shape and buffer != arg and _count(model, shape, choice) == 0 for arg, shape in shapes.items()):
        return None
    checks = [c for c in model.size_checks if c.tensor == buffer]
    if not checks or not all(c.gated for c in checks):
        return None
    # A size the call can read off its inputs' shapes (bucketize's output is its values' shape)
    # holds whatever their values; only one from elsewhere (repeat_interleave's `output_size`, taken
    # to be another input's length) is the package's assumption.
    known = {symbol for shape in shapes.values() if shape for size in shape for symbol in _SYMBOL.findall(size)}
    if not any(not set(_SYMBOL.findall(size)) <= known for size in checks[0].sizes):
        return None
    count = _count(model, checks[0].sizes, choice)
    return AssumedOutput(launch, buffer, checks[0].sizes, count) if count else None


def _count(model: Model, shape: tuple[str, ...], choice: Assignment | None) -> int | None:
    """The element count of a shape over root symbols under `choice`; None when it cannot say."""
    total = 1
    for size in shape:
        value = evaluate_at(model, size, choice)
        if value is None or not math.isfinite(value):
            return None
        total *= int(value)
    return total


@dataclass(frozen=True)
class TiedBound:
    """run_impl's always-on check of an unbacked size that it also requires to equal an input dim
    (`Expected Eq(s77, u2)`, `Expected u2 <= 1024`): every call with the dim outside [min, max] fails
    with `RuntimeError: Expected u2 <= 1024 but received ...`, whatever the environment. `call` is
    the op returning the size (bincount's); `op` and `bound` the side the size breaks."""

    symbol: str
    op: str
    bound: int
    call: str


def tied_bound(model: Model, ref: DimRef, size: int) -> TiedBound | None:
    """The always-on check of an unbacked size tied to input dim `ref` that rejects `size`, or None."""
    symbol = symbol_of(model, ref)
    if symbol is None:
        return None
    for sym in model.symbols.values():
        if not sym.unbacked or sym.tied != symbol:
            continue
        for op, bound, broken in ((">=", sym.min, sym.min is not None and size < sym.min),
                                  ("<=", sym.max, sym.max is not None and size > sym.max)):
            if broken and bound is not None:
                producer = next((l for l in model.launches if l.extern and sym.expr in l.outputs), None)
                return TiedBound(sym.name, op, bound, size_call(producer))
    return None


def size_call(launch: Launch | None) -> str:
    """The call that returns a size: its op where it runs through the proxy executor (bincount's),
    else its shim; run_impl itself when none is known."""
    if launch is None:
        return "run_impl"
    nodes = launch.source_nodes
    return nodes[-1] if nodes and "proxy_executor" in launch.kernel else launch.kernel
