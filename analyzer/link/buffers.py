"""Value ranges of intermediate buffers, where the code that writes them bounds them.

RoBERTa's position ids are `cumsum(input_ids != padding_idx) * mask + padding_idx`: a kernel stores
`x != 1` (0 or 1) into `buf0`, `aoti_torch_cpu_cumsum(buf0, 1L, ...)` sums it along a dim of s27
elements into `buf2` (values in [0, s27]), and the embedding kernel loads both and checks the sum
against the 130-row position table. The index is "data" to a linker that stops at loads; with the
ranges of `buf0` and `buf2` it is an expression over sizes, which the constant-bound rule reads.

A buffer's range is that of the last launch writing it before the reader: a generated kernel's
stores to the `out_ptrN` parameter passed the buffer (the value-range engine over the stored value,
the kernel's own loads of ranged buffers included, then the launch's arguments), or an extern
(shim) call's transfer function (`EXTERN_TRANSFERS`). Anything else (an `in_out_ptr`, a write form
not read, an unknown shim, a model input or constant) is unknown: loads of it stay data.
"""

from __future__ import annotations

import ast
from typing import Callable

from ..expr import intervals
from ..parse.kernels import KernelFacts
from ..parse.triage import walk_triton
from ..core.messages import CHAIN
from ..core.model import shim_op
from .context import LinkContext
from .shapes import ShapeReader
from ..expr.syntax import POINTER_PARAM, scan_sum_range
from ..expr.values import VALUE, Values

Range = tuple[str, str]
_DEPTH = 20


def _cumsum(args: tuple[str, ...], shapes, value_range: Callable[[int], Range | None], out: int | None = None
            ) -> Range | None:
    """`aoti_torch_cpu_cumsum(buf0, 1L, &dtype, &out)`: along dim d of n elements, a running sum of
    values in [lo, hi] lies in [min(0, n*lo), n*hi]."""
    if len(args) < 2 or not shapes or not shapes[0]:
        return None
    found = value_range(0)
    try:
        dim = int(str(args[1]).rstrip("lL"))
    except ValueError:
        return None
    shape = shapes[0]
    dim = dim + len(shape) if dim < 0 else dim
    if found is None or not 0 <= dim < len(shape):
        return None
    n = shape[dim]
    low, high = scan_sum_range(n, found[0], found[1], False), scan_sum_range(n, found[0], found[1], True)
    return None if low is None or high is None else (_simplify(low), _simplify(high))


def _last_dim(shape) -> str | None:
    return str(shape[-1]) if shape else None


def _searched(position: int) -> Callable[..., Range | None]:
    """`bucketize(x, boundaries)`, `searchsorted(sorted, x)`: an insertion point in [0, n], n the
    length of the searched argument's last dim (a value past the last element gives n itself)."""
    def transfer(args: tuple[str, ...], shapes, value_range: Callable[[int], Range | None],
                 out: int | None = None) -> Range | None:
        n = _last_dim(shapes[position]) if len(shapes) > position else None
        return None if n is None else ("0", _simplify(n))
    return transfer


def _indices(values_out: int, dim_arg: int) -> Callable[..., Range | None]:
    """`topk(x, k, dim, ..., &values, &indices)`, `sort(x, stable, dim, ..., &values, &indices)`: the
    indices output lies in [0, n - 1], n the size of x along `dim`; the values output is unknown."""
    def transfer(args: tuple[str, ...], shapes, value_range: Callable[[int], Range | None],
                 out: int | None = None) -> Range | None:
        if out is None or out != values_out + 1 or not shapes or not shapes[0] or len(args) <= dim_arg:
            return None
        try:
            dim = int(str(args[dim_arg]).rstrip("lL"))
        except ValueError:
            return None
        shape = shapes[0]
        dim = dim + len(shape) if dim < 0 else dim
        if not 0 <= dim < len(shape):
            return None
        return "0", _simplify(f"({shape[dim]}) - 1")
    return transfer


def _sorted(values_out: int, dim_arg: int) -> Callable[..., Range | None]:
    """`sort(x, dim, descending, &values, &indices)`, `sort_stable(x, stable, dim, ...)`: the values
    output holds x's values, so their range (topk's indices sorted back to their order stay in [0,
    n - 1]); the indices output lies in [0, n - 1] along `dim`."""
    def transfer(args: tuple[str, ...], shapes, value_range: Callable[[int], Range | None],
                 out: int | None = None) -> Range | None:
        return value_range(0) if out == values_out else _indices(values_out, dim_arg)(args, shapes, value_range, out)
    return transfer


def _running(args: tuple[str, ...], shapes, value_range: Callable[[int], Range | None], out: int | None = None
             ) -> Range | None:
    """`aoti_torch_cpu_cummax(buf0, 1L, &values, &indices)` (and cummin): a running max or min of values
    in [lo, hi] stays in [lo, hi]; its indices lie in [0, n - 1] along the dim of n elements."""
    if len(args) < 4 or out not in (2, 3):
        return None
    if out == 2:
        return value_range(0)
    return _indices(2, 1)(args, shapes, value_range, out)


def _counts(args: tuple[str, ...], shapes, value_range: Callable[[int], Range | None], out: int | None = None
            ) -> Range | None:
    """`aoti_torch_cpu_histc(x, bins, min, max, &out)`: each bin counts elements of x, [0, x.numel()]."""
    if not shapes or not shapes[0]:
        return None
    return "0", _simplify("*".join(f"({size})" for size in shapes[0]))


# Shim (without its `aoti_torch_<device>_` prefix) -> transfer function from its arguments (as
# written), their shapes over root symbols, the value range of tensor argument i, and the position
# among the arguments of the output asked about, to the range of the values of that output.
EXTERN_TRANSFERS: dict[str, Callable[..., Range | None]] = {
    "cumsum": _cumsum,
    "bucketize_Tensor": _searched(1),
    "searchsorted_Tensor": _searched(0),
    "topk": _indices(5, 2),
    "sort": _sorted(3, 1),
    "sort_stable": _sorted(4, 2),
    "cummax": _running,
    "cummin": _running,
    "kthvalue": _indices(4, 2),
    "histc": _counts,
}


def _simplify(expr: str) -> str:
    try:
        return intervals.simplify(expr)
    except ValueError:
        return expr


class BufferRanges:
    """Answers `load_ranges(facts, launch)`: the known value range of each buffer a launch passes
    to a kernel's pointer parameters. Built by the linker once its launches exist."""

    def __init__(self, ctx: LinkContext, values_of: str | None = None) -> None:
        # `values_of`: an input whose values read as `VALUE` (a position computed from them: the
        # running sum of a mask); without it an input's values are unknown.
        self.values_of = values_of
        self.model, self.wrapper, self.kfacts = ctx.model, ctx.wrapper, ctx.kfacts
        self.producers, self.canonical, self.resolve, self.param_map = ctx.producers, ctx.canonical, ctx.resolve, \
            ctx.param_map
        self._memo: dict[tuple[str, int], Range | None] = {}
        self._walked: dict[str, KernelFacts | None] = {}
        self._calls: dict | None = None
        self._reader: ShapeReader | None = None
        # (kernel, out_ptr) -> the reduction ("argmax") whose index the kernel stores there and reads back.
        self.own_ops: dict[tuple[str, str], str] = {}
        # (buffer, launch) -> the ops inside the writing kernel that bounded what it stored (an
        # in-kernel bucketize by the boundaries' length).
        self.written_ops: dict[tuple[str, int], tuple[str, ...]] = {}

    def index_upper(self, facts: KernelFacts, index: ast.expr, line: int, launch_index: int) -> str | None:
        """Inclusive maximum of `index` at `line` over the kernel's params and root symbols, with the
        loads of buffers of known range at launch `launch_index` read as those ranges; None when
        no buffer it is passed has a known range, or the maximum stays unknown."""
        ranges = self.load_ranges(facts, launch_index)
        return Values(facts, load_ranges=ranges).upper(index, line) if ranges else None

    def steps(self, facts: KernelFacts, launch_index: int, pointers: set[str]) -> tuple[str, ...]:
        """Chain steps for the buffers of known range among `pointers` (parameter order): what each
        holds and which launch wrote it."""
        launch, out = self.model.launches[launch_index], []
        for param, (low, high) in self.load_ranges(facts, launch_index).items():
            if param not in pointers:
                continue
            buf = launch.args[facts.params.index(param)]
            own = self.own_ops.get((facts.name, param))
            writer = launch if own else \
                self.model.launches[[i for i in self.producers[self.canonical(buf)] if i < launch_index][-1]]
            where = f"{writer.location.path.rsplit('/', 1)[-1]}:{writer.location.line}"
            out.append(CHAIN["via-range"].format(buffer=buf, low=low, high=high, kernel=f"its own {own}" if own
                                                 else writer.kernel, where=where))
        return tuple(out)

    def ops(self, facts: KernelFacts, launch_index: int, pointers: set[str]) -> tuple[str, ...]:
        """The shims (without their prefix) that wrote the buffers of known range among `pointers`."""
        launch, out = self.model.launches[launch_index], []
        for param in self.load_ranges(facts, launch_index):
            if param not in pointers:
                continue
            own = self.own_ops.get((facts.name, param))
            if own:
                out.append(own)
                continue
            buf = self.canonical(launch.args[facts.params.index(param)])
            at = [i for i in self.producers[buf] if i < launch_index][-1]
            writer = self.model.launches[at]
            if writer.extern:
                out.append(shim_op(writer.kernel))
                continue
            if (buf, at) in self.written_ops:
                out += self.written_ops[(buf, at)]
                continue
            # A kernel that stores an argmax/argmin's index (CUDA's `max_with_index`): that op bounds it.
            facts_w = self._facts(writer.kernel)
            ops = {r.op for r in facts_w.reductions} if facts_w is not None else set()
            if len(ops) == 1 and ops <= {"argmax", "argmin"}:
                out += sorted(ops)
        return tuple(dict.fromkeys(out))

    def shapes(self, index: int) -> tuple:
        """Sizes (over root symbols) of the arguments of extern launch `index`."""
        if self._calls is None:
            self._calls = {(c.location, c.function): c for c in self.wrapper.calls}
            self._reader = ShapeReader(self.wrapper, self.model, self.canonical, self.resolve)
        launch = self.model.launches[index]
        call = self._calls.get((launch.location, launch.kernel))
        return self._reader(call) if call is not None and self._reader is not None else ()

    def load_ranges(self, facts: KernelFacts, launch_index: int, depth: int = 0) -> dict[str, Range]:
        """Pointer parameter -> range of the buffer launch `launch_index` passes there, where known."""
        launch = self.model.launches[launch_index]
        out: dict[str, Range] = {}
        for pos, param in enumerate(facts.params):
            if pos < len(launch.args) and POINTER_PARAM.match(param) and not param.startswith("out_ptr"):
                found = self.buffer_range(launch.args[pos], launch_index, depth)
                if found is not None:
                    out[param] = found
            elif pos < len(launch.args) and param.startswith("out_ptr"):
                found = self._own_index(facts, param, launch_index)
                if found is not None:
                    out[param] = found
        return out

    def _own_index(self, facts: KernelFacts, param: str, launch_index: int) -> Range | None:
        """An `out_ptrN` the kernel itself fills with the index of its argmax/argmin and reads back
        (`out_ptr0[x0] = tmp_acc0.index; ... tmp0 = out_ptr0[x0]`, a fused `table[x.argmax(-1)]`): the
        index lies in [0, n - 1], n the reduction's extent at this launch."""
        stores = [s for s in facts.stores or () if s.pointer == param and s.value is not None]
        if not stores or not all(isinstance(s.value, ast.Name) and s.value.id.startswith("tmp_acc") for s in stores):
            return None
        extents = {r.extent_expr for r in facts.reductions if r.op in ("argmax", "argmin") and r.extent_expr}
        if len(extents) != 1:
            return None
        try:
            extent = intervals.substitute(extents.pop(), self.param_map(facts, launch_index))
        except ValueError:
            return None
        self.own_ops[(facts.name, param)] = next(r.op for r in facts.reductions if r.op in ("argmax", "argmin"))
        # Over an empty dim the accumulator keeps its initial index 0 (CLIP at seq 0 aborts on it).
        return "0", _simplify(f"max(0, ({extent}) - 1)")

    def buffer_range(self, buf: str, before: int, depth: int = 0) -> Range | None:
        """Range of the values in `buf` as launch `before` reads it, or None (unknown)."""
        buf = self.canonical(buf)
        if buf == self.values_of:
            return VALUE, VALUE
        key = (buf, before)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # a cycle reads as unknown
        writers = [i for i in self.producers.get(buf, ()) if i < before]
        found = self._written(buf, writers[-1], depth + 1) if writers and depth < _DEPTH else None
        self._memo[key] = found
        return found

    def _written(self, buf: str, index: int, depth: int) -> Range | None:
        launch = self.model.launches[index]
        if launch.extern:
            transfer = EXTERN_TRANSFERS.get(shim_op(launch.kernel))
            if transfer is None:
                return None
            names = launch.args
            out = next((i for i, name in enumerate(names) if self.canonical(name) == buf), None)
            return transfer(launch.args, self.shapes(index),
                            lambda i: self.buffer_range(names[i], index, depth) if i < len(names) else None, out)
        facts = self._facts(launch.kernel)
        if facts is None or facts.stores is None:
            return None
        params = [p for pos, p in enumerate(facts.params) if pos < len(launch.args) and p.startswith("out_ptr")
                  and self.canonical(launch.args[pos]) == buf]
        if len(params) != 1:
            return None
        stores = [s for s in facts.stores if s.pointer == params[0]]
        if not stores or any(s.value is None for s in stores):
            return None
        values = Values(facts, load_ranges=self.load_ranges(facts, index, depth))
        mapping = self.param_map(facts, index)
        lows, highs = set(), set()
        for store in stores:
            if store.value is None:  # none is (checked above)
                return None
            low, high = values.lower(store.value, store.pos + 1), values.upper(store.value, store.pos + 1)
            if low is None or high is None:
                return None
            try:
                lows.add(_simplify(intervals.substitute(low, mapping)))
                highs.add(_simplify(intervals.substitute(high, mapping)))
            except ValueError:
                return None
        if values.bounding_ops:
            self.written_ops[(buf, index)] = tuple(sorted(values.bounding_ops))
        return (_join("min", lows), _join("max", highs))

    def _facts(self, kernel: str) -> KernelFacts | None:
        """The kernel's facts with its stores: a kernel the fast path did not walk is walked here."""
        facts = self.kfacts.get(kernel)
        if facts is None or facts.stores is not None or facts.kind != "triton":
            return facts
        if kernel not in self._walked:
            helper = self.wrapper.helpers.get(f"call_{kernel}")
            # The walk without the decorator's parse (triage.walk_triton: the same facts).
            self._walked[kernel] = None if helper is None or helper.triton_source is None else walk_triton(
                kernel, helper.triton_source, facts.location.path, helper.source_first_line, helper.source_indent, ())
        return self._walked[kernel]


def _join(fn: str, exprs: set[str]) -> str:
    ordered = sorted(exprs)
    out = ordered[0]
    for e in ordered[1:]:
        out = f"{fn}({out}, {e})"
    return out
