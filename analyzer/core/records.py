"""Model records kept apart from model.py's core: what kernels' text gives beside the parsed facts, and
the exported program's graph nodes."""

from __future__ import annotations

from dataclasses import dataclass

from .findings import Location


@dataclass(frozen=True)
class StrideRead:
    """A kernel stepping one buffer by one loop variable with two strides (over root symbols) that
    agree at some sizes and differ at others (analyzer/parse/loadstrides.py): an index Inductor
    simplified with a property of the traced sizes. `extent` is the loop's (root symbols)."""

    kernel: str
    pointer: str
    buffer: str
    first: str
    second: str
    sources: tuple
    location: Location
    extent: str | None = None


@dataclass(frozen=True)
class GraphNode:
    """One call node of the exported program's graph (`models/*.json`): the user's code behind a kernel.

    `op` is the ATen target without `torch.ops.` (`aten.embedding.default`); `args` the names of its
    tensor and size arguments in order, with `arg_shapes` their sizes (None for a dynamic size); `stack_trace`
    torch's text (`File "...", line N, in forward\n    code`); `module_stack` `(path, class)` outermost first."""

    name: str
    op: str
    args: tuple[str, ...] = ()
    arg_shapes: tuple[tuple[int | None, ...] | None, ...] = ()
    stack_trace: str | None = None
    module_stack: tuple[tuple[str, str], ...] = ()
    # Argument sizes, a dynamic one as text (`(s53 - 1)//2 + 1`); int-list arguments (`output_size`);
    # symbolic ones (a pad's amounts), a symbol as guard text over input sizes ("?" unread).
    arg_sizes: tuple[tuple[int | str, ...] | None, ...] = ()
    int_lists: tuple[tuple[int, ...], ...] = ()
    sym_lists: tuple[tuple[int | str, ...], ...] = ()
    # Arguments by their schema name, for ops read by name: ints, bools, int lists (`ceil_mode`,
    # `kernel_size`); and each tensor argument's sizes in the traced example (the node's `hint`s), which
    # decided what Inductor compiled where it branched on a size without a guard the package checks.
    params: tuple[tuple[str, int | bool | tuple[int, ...]], ...] = ()
    arg_hints: tuple[tuple[int | None, ...] | None, ...] = ()
