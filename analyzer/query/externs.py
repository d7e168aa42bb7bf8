"""What extern ATen calls reject on their own.

A shim call (`aoti_torch_cpu_convolution(...)`) runs the same ATen op as eager PyTorch, with the
same argument checks: an input that trips one of them raises eager's own error in the package too,
before anything the call would compute. Such an input is the caller's mistake, not the package's;
findings whose witness is one say so (the severity policy makes them infos).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.model import Launch, Model
from .witness import Assignment, evaluate_at

# `aten.convolution` and `aten._convolution` (the same leading arguments), on CPU, CUDA or any device;
# not mkldnn's or cudnn's own entry points, whose arguments differ.
_CONVOLUTION = re.compile(r"aoti_torch_(?:cpu_|cuda_)?_?convolution")
_ARRAY = re.compile(r"array\(([-\d,\s]*)\)")
# aoti_torch_*_convolution(input, weight, bias, stride, len, padding, len, dilation, len, transposed, ...)
_PADDING, _DILATION, _TRANSPOSED = 5, 7, 9


@dataclass(frozen=True)
class Rejection:
    """A convolution whose input is smaller than its kernel: `padded` is the input's size along one
    spatial dim after padding, `kernel` the dilated kernel's extent there. ATen's check raises
    `Kernel size can't be greater than actual input size`."""

    launch: Launch
    padded: int
    kernel: int


def rejecting_call(model: Model, choice: Assignment | None) -> Rejection | None:
    """The first extern call that raises on its own under the sizes `choice` (the other dims at
    their witness sizes), or None. Only convolutions are known: their padded input must be at least
    as large as the dilated kernel along every spatial dim."""
    for launch in model.launches:
        if launch.extern and _CONVOLUTION.fullmatch(launch.kernel):
            found = _too_small(model, launch, choice)
            if found is not None:
                return found
    return None


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
