"""Shapes of the tensors that extern (ATen shim) calls receive, as size expressions.

`run_impl` allocates buffers with `aoti_torch_empty_strided(ndim, int_array_N, ...)` and passes
views inline as `reinterpret_tensor_wrapper(buf5, 4, int_array_12, int_array_13, 0)`; the
`int_array_N` initializers (`{2L, 2L, s27, 32L}`) give the sizes. With them a rule can tell which
shim calls receive a tensor that is empty when an input dim is 0 (BERT's
`aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu` at seq = 0 divides by zero).
"""

from __future__ import annotations

import re
from typing import Callable

from ..core.model import Model, SizeCheck
from ..parse.call import Call
from ..parse.wrapper import WrapperFacts

_VIEW = re.compile(r"^\s*reinterpret_tensor_wrapper\(\s*(\w+)\s*,\s*\d+\s*,\s*(int_array_\d+)\b")


def allocations(wrapper: WrapperFacts) -> dict[str, tuple[str, ...]]:
    """Buffer -> the sizes it was allocated with (`aoti_torch_empty_strided`)."""
    out: dict[str, tuple[str, ...]] = {}
    for call in wrapper.calls:
        if "empty_strided" in call.function and len(call.args) >= 2 and call.outputs:
            sizes = wrapper.int_arrays.get(call.args[1].strip())
            if sizes is not None:
                out.setdefault(call.outputs[0], sizes)
    return out


def annotate(model: Model, wrapper: WrapperFacts, canonical: Callable[[str], str],
             resolve: Callable[[str], str]) -> None:
    """Set `arg_shapes` of every extern launch (matched to its wrapper call by location) and the
    model's `size_checks`."""
    model.size_checks = [SizeCheck(a.tensor, a.sizes, a.location, a.gated, a.strides) for a in wrapper.size_asserts]
    reader = ShapeReader(wrapper, model, canonical, resolve)
    calls = {(c.location, c.function): c for c in wrapper.calls}
    for launch in model.launches:
        call = calls.get((launch.location, launch.kernel))
        if launch.extern and call is not None:
            launch.arg_shapes = reader(call)


class ShapeReader:
    """`reader(call)` -> each argument's sizes over root symbols, or None (not a tensor, or unknown).
    `canonical` follows buffer aliases, `resolve` rewrites symbols to root symbols."""

    def __init__(self, wrapper: WrapperFacts, model: Model, canonical: Callable[[str], str],
                 resolve: Callable[[str], str]) -> None:
        self.wrapper, self.canonical, self.resolve = wrapper, canonical, resolve
        self.allocated = allocations(wrapper)
        # An extern's output is allocated by the shim, not run_impl: as another call's input its sizes are
        # those the wrapper's own `assert_size_stride` states for it (a sort's indices sorted again). As
        # its writer's output they stay unknown: the package's assumption, which the call may not keep.
        self.asserted = {c.tensor: tuple(c.sizes) for c in wrapper.size_asserts}
        self.known: dict[str, tuple[str, ...]] = {
            c.name: tuple(str(s) for s in c.shape) for c in model.constants if c.shape}
        for inp in model.inputs:
            if inp.dims and all(d.symbol is not None or d.value is not None for d in inp.dims):
                self.known[inp.name] = tuple(str(d.value) if d.value is not None else str(d.symbol)
                                             for d in inp.dims)

    def __call__(self, call: Call) -> tuple[tuple[str, ...] | None, ...]:
        inputs = {name: sizes for name, sizes in self.asserted.items() if name not in call.outputs}
        return arg_shapes(call, self.wrapper, {**inputs, **self.allocated}, self.canonical, self.resolve, self.known)


def arg_shapes(call: Call, wrapper: WrapperFacts, allocated: dict[str, tuple[str, ...]],
               canonical: Callable[[str], str], resolve: Callable[[str], str],
               known: dict[str, tuple[str, ...]]) -> tuple[tuple[str, ...] | None, ...]:
    """One entry per argument of `call`: its sizes over root symbols, or None (not a tensor, or
    unknown). `known`: shapes of inputs and constants by name."""
    out: list[tuple[str, ...] | None] = []
    for arg in call.args:
        sizes: tuple[str, ...] | None = None
        view = _VIEW.match(arg)
        if view:
            sizes = wrapper.int_arrays.get(view.group(2))
        else:
            name = arg.strip()
            if re.match(r"^\w+$", name):
                view_of = wrapper.views.get(name)
                sizes = known.get(name) or (wrapper.int_arrays.get(view_of) if view_of else None) \
                    or allocated.get(name) or allocated.get(canonical(name))
        out.append(None if sizes is None else tuple(resolve(s) for s in sizes))
    return tuple(out)
