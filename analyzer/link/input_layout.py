"""Each input's layout contract: the strides its kernels index it with, and who checks them.

Inductor's check_input_N checks only static strides (`if (8 != arg0_1_stride[0])`); a stride in size
symbols is in run_impl's `assert_size_stride(arg0_1, {s77, s27}, {s27, 1L}, "input")` (torch >= 2.13).
Both run only with AOTI_RUNTIME_CHECK_INPUTS=1 by default, like the size checks.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..core.model import Enforcement, Model
from ..parse.wrapper import WrapperFacts


def stride_text(strides: tuple[int | str | None, ...] | None) -> str:
    """`(8, 1)`, `(s27, 1)`; `?` for a stride the package does not record."""
    if strides is None:
        return "?"
    parts = ["?" if s is None else str(s) for s in strides]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def annotate(model: Model, w: WrapperFacts, resolve: Callable[[str], str]) -> None:
    """Each input's compiled strides: the static ones from check_input_N, those in size symbols from
    run_impl's assert_size_stride (over root symbols), and who checks them."""
    for inp in model.inputs:
        check = w.checks.get(inp.index)
        asserted = next((sa for sa in w.size_asserts if sa.tensor == inp.name and sa.strides), None)
        rank = len(inp.dims)
        if asserted is not None:
            rank = max(rank, len(asserted.strides))
        if not rank or (not (check and check.strides) and asserted is None):
            continue
        strides: list[int | str | None] = []
        for d in range(rank):
            literal = check.strides.get(d) if check else None
            if literal is not None:
                strides.append(literal)
                continue
            text = asserted.strides[d] if asserted is not None and d < len(asserted.strides) else None
            if text is None:
                strides.append(None)
            elif re.fullmatch(r"-?\d+", text):
                strides.append(int(text))
            else:
                strides.append(resolve(text))
        inp.strides = tuple(strides)
        if check is not None and check.strides:
            called = not w.checks_called or inp.index in w.checks_called
            inp.layout_enforced = (Enforcement.ENV if w.checks_gated else Enforcement.ALWAYS) if called \
                else Enforcement.NONE
            inp.layout_location = check.stride_location
        elif asserted is not None:
            inp.layout_enforced = Enforcement.ENV if asserted.gated else Enforcement.ALWAYS
            inp.layout_location = asserted.location
