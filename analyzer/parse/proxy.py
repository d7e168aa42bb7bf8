"""Custom ops called through the proxy executor (torchvision::nms, torchvision::roi_align, any
torch.library op that has no C shim):

    AtenTensorHandle buf1_handle;  // output buffer
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_new_uninitialized_tensor(&buf1_handle));
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_proxy_executor_call_function(proxy_executor, 0, 3,
        std::array<int64_t, 3>{4, 4, 2}.data(), 3, std::array<AtenTensorHandle, 3>{arg0_1, arg1_1, buf1}.data()));

The wrapper allocates each output first (the allocation carries the op's `Original ATen:
[torchvision.roi_align]` comment) and the op fills it. `normalize` turns the pair into one extern
call named after the op (`torchvision.roi_align`) whose arguments are its tensors and whose outputs
are the tensors allocated for it, so that the linker, the shape reader and the rules see a custom op
as they see an ATen shim: what it reads, what it writes (nms's kept indices, whose count is `u0`).
"""

from __future__ import annotations

import re
from dataclasses import replace

from .call import Call

CALL = "aoti_torch_proxy_executor_call_function"
ALLOCATE = "aoti_torch_new_uninitialized_tensor"
_OP = re.compile(r"Original ATen: \[([\w.:]+)\]")
_FIXED = 5  # proxy_executor, extern node index, num_ints, ints, num_tensors; then the tensors


def tensors(names: list[str]) -> tuple[str, ...]:
    """The tensor names of the call's last argument (`std::array<AtenTensorHandle, 3>{arg0_1,
    arg1_1, buf1}.data()`, whose identifiers in order are these names)."""
    return tuple(n for n in names if n not in ("std", "array", "AtenTensorHandle", "data"))


def normalize(calls: list[Call]) -> list[Call]:
    """`calls` with each proxy call named after its op, reading its input tensors and writing the
    tensors allocated for it; those allocations (which compute nothing) left out."""
    if not any(c.function == CALL for c in calls):
        return calls
    allocated = {c.outputs[0]: c for c in calls if c.function == ALLOCATE and c.outputs}
    filled: set[str] = set()
    rewritten: dict[int, Call] = {}
    for i, c in enumerate(calls):
        if c.function != CALL:
            continue
        args = tuple(a for a in c.arg_names[_FIXED:] if a)
        outputs = tuple(a for a in args if a in allocated and a not in filled)
        filled.update(outputs)
        comment = next((allocated[o].comment for o in outputs if allocated[o].comment), c.comment)
        op = _OP.search(comment or "")
        rewritten[i] = replace(c, function=op.group(1) if op else CALL, args=args, arg_names=args,
                               comment=comment, outputs=outputs)
    return [rewritten.get(i, c) for i, c in enumerate(calls)
            if not (c.function == ALLOCATE and c.outputs and c.outputs[0] in filled)]
