"""The one answer to "which ops return a count the input's values decide?" (nonzero, unique, nms).

Such an op's output length is an unbacked size (`auto u0 = buf1.size(0);` after
`aoti_torch_cpu_nonzero(arg1_1, &buf1_handle)`): run_impl may check a range of it at every call, and
the values of the op's input decide whether they pass. Each op here says how it is spelled as an extern
call and in the exported graph, and the range of counts a non-empty input can give: at most its
elements (`numel`) or its rows (`rows`: torchvision's nms keeps at most one index per box), at least
`floor` (nms and unique keep at least one).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.model import shim_op


@dataclass(frozen=True)
class CountingOp:
    """An op whose output length its input's values decide, within [floor, cap]."""

    name: str
    calls: tuple[str, ...]       # its extern call ops (`shim_op` of the call, a custom op's name)
    graph_ops: tuple[str, ...]   # its ATen names in the exported program's graph (without overload)
    cap: str                     # "numel": at most the input's elements; "rows": at most its first dim
    floor: int                   # the fewest elements a non-empty input can give


COUNTING_OPS: tuple[CountingOp, ...] = (
    CountingOp("nonzero", ("nonzero",), ("nonzero",), "numel", 0),
    CountingOp("argwhere", ("argwhere",), ("argwhere",), "numel", 0),
    CountingOp("masked_select", ("masked_select",), ("masked_select",), "numel", 0),
    CountingOp("unique", ("unique", "_unique", "_unique2"), ("unique", "_unique2"), "numel", 1),
    CountingOp("nms", ("torchvision.nms",), ("nms",), "rows", 1),
)

# The graph ops of every counting op: where source attribution finds the user's call.
GRAPH_OPS = frozenset(name for op in COUNTING_OPS for name in op.graph_ops)


def counting_op(call: str) -> CountingOp | None:
    """The counting op an extern call runs (`aoti_torch_cpu_nonzero`, `aoti_torch_cpu__unique2`,
    `torchvision.nms`; an overload such as `unique_dim` too), else None."""
    op = shim_op(call)
    return next((c for c in COUNTING_OPS if any(op == name or op.startswith(name + "_") for name in c.calls)), None)
