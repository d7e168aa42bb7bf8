"""Linking: parser facts -> the linked `Model`.

assertion -> kernel parameter of its bound (by position: `ksM` numbering is per kernel) -> launch
argument -> size expression over symbols -> input index and dim (or a constant). Index sources
follow `in_ptrK` to the launch argument and through intermediate buffers to the kernels or extern
calls that produced them. Everything is done with dictionaries built once (context.py's
`LinkContext`, which every pass takes); nothing rescans text. Each launch of a kernel is linked on
its own (a kernel reused for other sizes checks other dims).
"""

from __future__ import annotations

from . import buffers, input_layout, inputs, launches, reads, storebounds, symbols
from ..core.findings import Location
from ..core.model import Model, Problem
from ..parse.kernels import KernelFacts
from ..parse.wrapper import WrapperFacts
from .context import LinkContext
from .kernels import link_kernels


def link_model(name: str, metadata: dict, wrapper: WrapperFacts | None, kernels: list[KernelFacts], *,
               kernel_paths: tuple[str, ...] = (), binaries: tuple[str, ...] = (), cpp_only: bool = False,
               problems: list[Problem], annotate=None) -> Model:
    """`annotate(model)` runs once the inputs exist and before anything refers to them by name
    (user input names and declared ranges from an exported program)."""
    model = Model(name=name, metadata=dict(metadata), kernel_paths=kernel_paths, binaries=binaries,
                  cpp_only=cpp_only, problems=list(problems))
    model.device = (metadata.get("AOTI_DEVICE_KEY") or None) if isinstance(metadata, dict) else None
    if wrapper is None:
        return model
    model.wrapper_path = wrapper.path
    model.in_spec = wrapper.in_spec
    model.checks_gated = wrapper.checks_gated if wrapper.checks else None
    if model.device is None:
        model.device = "cuda" if wrapper.helpers else ("cpu" if kernels else None)
    if not wrapper.run_impl_found:
        model.problems.append(Problem("no run_impl function found in the wrapper: launches and size symbols "
                                      "cannot be linked", Location(wrapper.path)))
    if wrapper.errors_in_model_code:
        model.problems.append(Problem(f"{wrapper.errors_in_model_code} syntax error(s) inside run_impl; "
                                      "facts after them may be missing", wrapper.error_location))
    _run_passes(LinkContext.of(model, wrapper, kernels), annotate)
    return model


def _run_passes(ctx: LinkContext, annotate) -> None:
    """The passes in the order each needs the last: inputs before the names an exported program
    gives them, symbols before strides and ties, launches before buffers and kernels."""
    inputs.link_inputs(ctx)
    if annotate is not None:
        annotate(ctx.model)
    symbols.link_symbols(ctx)  # then each input's strides, over the root symbols (input_layout)
    input_layout.annotate(ctx.model, ctx.wrapper, ctx.resolve)
    inputs.link_ties(ctx)
    launches.link_launches(ctx)
    ranges = buffers.BufferRanges(ctx)
    symbols.unbacked_sources(ctx)
    symbols.unbacked_bounds(ctx, ranges.buffer_range, ranges.shapes)
    link_kernels(ctx, ranges)
    reads.annotate(ctx)
    storebounds.annotate(ctx)
