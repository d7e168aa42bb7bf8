"""The linking passes over the wrapper's inputs: each input's dims (size symbols, check_input_N
ranges and who enforces them), the constants, and the dims tied to another by assert_size_stride."""

from __future__ import annotations

import re

from ..core.model import Constant, ConstantKind, Dim, DimRef, Enforcement, Input
from ..parse.wrapper import WrapperFacts
from .context import LinkContext, intervals_names


def link_inputs(ctx: LinkContext) -> None:
    """`model.inputs` and `model.constants`, in the wrapper's index order."""
    w, model = ctx.wrapper, ctx.model
    for index in sorted(w.inputs):
        name = w.inputs[index]
        ctx.input_by_name[name] = index
        check = w.checks.get(index)
        dim_list = _dims(w, name, check)
        enforced = Enforcement.NONE
        if check is not None and (not w.checks_called or index in w.checks_called):
            enforced = Enforcement.ENV if w.checks_gated else Enforcement.ALWAYS
        for dim in dim_list:
            if dim.value is not None or dim.min is not None or dim.max is not None:
                dim.enforced = enforced
        model.inputs.append(Input(index=index, name=name, dims=dim_list,
                                  dtype=check.dtype if check else None, device=check.device if check else None,
                                  rank_known=check is not None or any(sa.tensor == name for sa in w.size_asserts)))
    for index in sorted(w.constants):
        entry = w.constants[index]
        cname = entry.get("name") or f"constant{index}"
        ctx.constant_names.add(cname)
        kind = next((k for k in ConstantKind if k.value == entry.get("type")), None)
        model.constants.append(Constant(index=index, name=cname, shape=entry.get("shape"),
                                        original_fqn=entry.get("original_fqn"), kind=kind))


def _dims(w: WrapperFacts, name: str, check) -> list[Dim]:
    """Input `name`'s dims: check_input_N's values and ranges, and each dim's size symbol."""
    dims: dict[int, Dim] = {}
    if check:
        for d, dc in check.dims.items():
            dims[d] = Dim(dim=d, value=dc.value, min=dc.min, max=dc.max, check_location=dc.location)
    for decl in w.symbols:
        if decl.buffer == name and decl.kind == "size" and decl.dim is not None:
            dim = dims.setdefault(decl.dim, Dim(dim=decl.dim))
            if dim.symbol is None:
                dim.symbol = decl.name
    # A dim equal to another's has no `int64_t`: assert_size_stride(argN_1, {s17, 8L}, ...) names its symbol.
    for sa in w.size_asserts:
        if sa.tensor != name:
            continue
        for d, size in enumerate(sa.sizes):
            hit = dims.get(d)
            if hit is not None and hit.symbol is None and hit.value is None and re.match(r"^[a-z]+\d+$", size):
                hit.symbol = size
    ndims = max(dims) + 1 if dims else 0
    return [dims.get(i, Dim(dim=i)) for i in range(ndims)]


def link_ties(ctx: LinkContext) -> None:
    """Dims that must equal another dim (or an expression of one) and that the package never
    reads itself: `assert_size_stride(arg6_1, {s17, 8L}, ...)` where s17 is read from arg5_1."""
    for sa in ctx.wrapper.size_asserts:
        index = ctx.input_by_name.get(sa.tensor)
        if index is None:
            continue
        inp = ctx.model.inputs[index]
        for d, size in enumerate(sa.sizes):
            if d >= len(inp.dims) or inp.dims[d].value is not None or re.fullmatch(r"-?\d+", size):
                continue
            resolved = ctx.resolve(size)
            try:
                names = intervals_names(resolved)
            except ValueError:
                continue
            own = DimRef(index, d)
            if names and all(ctx.root.get(n) == own for n in names):
                continue  # the dim's own size symbol: nothing tied
            dim = inp.dims[d]
            dim.tied_expr = resolved
            dim.tie_enforced = Enforcement.ENV if sa.gated else Enforcement.ALWAYS
            dim.tie_location = sa.location
