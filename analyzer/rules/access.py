"""Rules about kernels' accesses to buffers: a write into, or a read from, a buffer that an input size
empties while the loops around the access still run."""

from __future__ import annotations

from typing import Iterable

from ..expr import intervals
from ..query import witness as W
from ..core.findings import Finding, Severity
from ..core.model import Access, Model, where
from ..core.dimtext import range_text
from ..core.messages import CHAIN
from ..query.severity import Consequence
from ..query.source import ACCESS_OPS
from . import Case, Context, Rule, register
from . import enforcement as E
from .bounds import env_clause
from .words_kernels import ReadFromEmptyBufferWords, StoreIntoEmptyBufferWords


@register
class StoreIntoEmptyBuffer(StoreIntoEmptyBufferWords, Rule):
    """A kernel writes into a buffer that an input size the package accepts makes empty.

    ## What it does
    Reads every write of a generated kernel (`out_ptr0[tmp1] = v`, `v.store(out_ptr0 + x0)`,
    `tl.store(out_ptr0 + x0, v, xmask)`) with the buffer it writes at each launch (its allocation's
    sizes, or the input's shape for a write into an input) and the loops around the write. Reports a
    write whose buffer has no elements when a dynamic dimension is 0 (which the package lets
    through: its range check runs only with `AOTI_RUNTIME_CHECK_INPUTS=1`) while its loops still
    run: a scatter whose loop runs over the index, not over the output. A write that an index check
    (`empty-index-bound`), an always-on check of a data-dependent size or an error-checked extern call
    given the empty tensor reaches first is not reported (they may fail before it).

    ## Why it matters
    No check guards the write: Inductor assumes the index fits the output (`index.size(0) <=
    inp.size(0)` for `scatter`), true for the sizes it compiled for (>= 2), not for 0. Every write then
    lands outside an empty allocation: a segmentation fault (SIGSEGV) or silent memory corruption, with
    no error message, where eager PyTorch raises an `IndexError`.

    ## Example
    ```python
    class Scatter(torch.nn.Module):            # test_aot_inductor.py's test_scatter_fallback
        def forward(self, inp, index, src):      # inp: [r, c] (r, c compiled for >= 2), index: [1, 4]
            return torch.scatter(inp, 1, index, src)
    # inp.shape = (0, 3): the kernel writes row 0 of an output with no rows -> SIGSEGV
    ```

    ## Fix
    Reject empty inputs before calling the model, or run with `AOTI_RUNTIME_CHECK_INPUTS=1` so that
    the package's own check rejects size 0 with a clear error.
    """

    name = "store-into-empty-buffer"
    code = "AOTI017"
    consequence = Consequence.FAILS
    user_ops = ACCESS_OPS
    op = "the kernel's scatter store"

    VALID = (
        Case("fixtures/gather_dyn.cpu.stripped.pt2"),        # writes over the output's own elements
        Case("fixtures/stress/pkgs/index_put.cpu.stripped.pt2"),
    )
    INVALID = (
        # scatter(inp, 1, index, src): the loop runs over index's 1x4, the output has r*c elements.
        Case("fixtures/stranger2/tai_scatter.cpu.stripped.pt2",
             {"message_key": "store-into-empty-buffer", "input": 0, "dim": 0, "kernel": "cpp_fused_scatter_0"},
             exported="fixtures/stranger2/tai_scatter.ep.pt2"),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        return _findings(self, model, ctx, write=True)


@register
class ReadFromEmptyBuffer(ReadFromEmptyBufferWords, Rule):
    """A kernel reads from a buffer that an input size the package accepts makes empty.

    ## What it does
    Reads every load of a generated kernel (`in_ptr0[x2 + w*tmp10]`, `tl.load(in_ptr0 + x0, xmask)`)
    with the buffer it reads at each launch (an input, a constant or an intermediate buffer, with its
    shape) and the loops around the read. Reports a read whose buffer has no elements when a dynamic
    dimension is 0 (which the package lets through) while its loops still run: loops over another
    size, such as a resize's output size read from a tensor's values. A read that an index check, an
    always-on size check or an extern call given the empty tensor reaches first is not reported (they
    may fail before it). A masked vector load (`mask.template loadu<int64_t,2>(in_ptr0 + i)`) counts
    where its mask compares loop indices with constants only (a left pad's `x - 2 + lane >= 0`): a tail
    loop then reads every lane the mask allows, past its count, whatever the buffer's size.

    ## Why it matters
    Nothing guards the read: Inductor's `_unsafe_index` (bilinear and nearest resize, gathers it
    proved safe for the sizes it compiled for) has no assertion. With the buffer empty, every read
    lands outside it: a segmentation fault (SIGSEGV), or garbage values returned silently, where eager
    PyTorch raises.

    ## Example
    ```python
    def forward(self, image, target_size):           # image: [3, h, w], h, w compiled for >= 2
        th, tw = target_size.tolist()
        return resize(image, [th, tw], InterpolationMode.BILINEAR)   # torchvision's tensor resize
    # image.shape = (3, 0, 5): the kernel reads row min(i + 1, h - 1) = -1 of an empty image -> SIGSEGV
    ```

    ## Fix
    Reject empty inputs before calling the model, or run with `AOTI_RUNTIME_CHECK_INPUTS=1` so that
    the package's own check rejects size 0 with a clear error.
    """

    name = "read-from-empty-buffer"
    code = "AOTI018"
    consequence = Consequence.FAILS
    user_ops = ACCESS_OPS
    op = "the kernel's read (a resize's `_unsafe_index`)"

    VALID = (
        Case("fixtures/gather_dyn.cpu.stripped.pt2"),        # reads inside loops over the buffer read
        # 1-d U-Net: x's dim 2 at 0 empties a read in loops of 8 + ..., but the conv (an extern call
        # given the empty x) raises first.
        Case("fixtures/real/unet_skip.cpu.stripped.pt2"),
        # nonzero_size: x at 0 empties a read indexed by nonzero's result; `Expected u0 >= 2` fails first.
        Case("fixtures/real/nonzero_size.cpu.stripped.pt2"),
    )
    INVALID = (
        # torchvision's bilinear resize: loops over the target size (u0, u1 >= 1), reads of the image.
        Case("fixtures/stranger2/tai_resize.cpu.stripped.pt2",
             {"message_key": "read-from-empty-buffer", "input": 0, "dim": 1}),
        # An RNN-T's blank-prefixed tokens: the left pad's masked tail load reads `tokens` at u = 0 (SIGSEGV).
        Case("fixtures/stranger15/rnnt_joint.cpu.stripped.pt2", {"input": 1, "dim": 1, "severity": Severity.ERROR,
                                                                 "witness": "feats.shape = (3, 3, 16), tokens.shape = (3, 0)"},
             exported="fixtures/stranger15/rnnt_joint.ep.pt2"),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        return _findings(self, model, ctx, write=False)


def _findings(rule: Rule, model: Model, ctx: Context, write: bool) -> Iterable[Finding]:
    seen: set[tuple] = set()
    order = _Order(model)
    key = "store-into-empty-buffer" if write else "read-from-empty-buffer"
    for access in model.accesses:
        ident = (access.kernel, access.pointer, access.numel, access.space_expr)
        if access.write != write or ident in seen:
            continue
        seen.add(ident)
        pair = (access.numel, access.space_expr)
        if order.emptied.get(pair) is False:
            continue  # no zero choice empties this buffer while its loops run (`_empty_choice`)
        # As empty-index-bound: sizes no convolution rejects first are preferred.
        choice = _empty_choice(model, access, order, accept=lambda c: E.convolution_rejects(model, c) is None)
        convolution = None
        if choice is None and order.emptied.get(pair) is False:
            continue
        if choice is None:
            choice = _empty_choice(model, access, order)
            convolution = E.convolution_rejects(model, choice)
        if choice is None:
            continue
        ref = min(choice)
        dim = model.dim(ref)
        runs = _space_at(model, access.space_expr, choice, order.floors)
        fields = dict(kernel=access.kernel, pointer=access.pointer, buffer=access.buffer,
                      numel=W.display_expr(model, access.numel), space=W.display_expr(model, access.space_expr),
                      dim_display=W.dim_display(model, ref), where=where(ref), range_text=range_text(dim),
                      count=_count(runs))
        chain = (rule.CHAIN[key].format(**fields),
                 CHAIN["access-empty"].format(assignment=W.assignment_text(model, choice), buffer=access.buffer,
                                              count=fields["count"]))
        yield rule.finding(
            model, ctx, rule.MESSAGES[key].format(**fields), access.location, subject=access, eager_rejects=convolution,
            kernel=access.kernel, input=ref.input, dim=ref.dim, symbol=W.symbol_of(model, ref),
            witness=W.witness(model, choice),
            fix=rule.FIXES[key].format(empty_test=f"{W.check_expr(model, ref)} == 0", env=env_clause(dim)),
            chain=chain, key=f"{'store' if write else 'read'}:{W.normalize_expr(model, access.numel)};"
                             f"kernel:{access.kernel}")


def _empty_choice(model: Model, access: Access, order: "_Order", accept=None) -> dict | None:
    """Dims at 0 (accepted by the package) that empty the buffer while the access's loops still run,
    and that nothing before it rejects: an index check that fails (in this kernel or an earlier one),
    an always-on check of a data-dependent size, an error-checked extern call given an empty tensor."""
    refs = W.expr_dims(model, access.numel)
    if not refs:
        return None
    at = order.at.get((access.kernel, access.launch), len(model.launches))

    def empties(choice) -> bool:  # the buffer empty while the loops run: what the launch adds is checked below
        if W.evaluate_at(model, access.numel, choice) != 0:
            return False
        runs = _space_at(model, access.space_expr, choice, order.floors)
        return runs is not None and runs > 0

    # Kernels repeat a buffer size and loop count (one per copy of a fused op): whether any zero
    # choice empties the buffer while the loops run is asked once for each pair.
    pair = (access.numel, access.space_expr)
    if pair not in order.emptied:
        order.emptied[pair] = W.zero_choice(model, refs, empties) is not None
    if not order.emptied[pair]:
        return None

    def works(choice) -> bool:
        if not empties(choice):
            return False
        tripped = W.tripped_assertion(model, choice)
        if tripped is not None and order.first.get(tripped.kernel, len(model.launches)) <= at:
            return False
        if any(E.rejecting_assert(model, ref, size) for ref, size in choice.items()):
            return False
        return not _empty_extern_before(model, choice, at) and (accept is None or accept(choice))

    return W.zero_choice(model, refs, works)


def _space_at(model: Model, space: str, choice, floors: dict[str, str]) -> float | None:
    """The access's loop count under `choice`, with data-dependent sizes at `floors`."""
    try:
        expr = intervals.substitute(space, floors) if floors else space
    except ValueError:
        return None
    return W.evaluate_at(model, expr, choice)


class _Order:
    """Per model: each launch's position, each kernel's first launch, and the least value an
    always-on check lets each data-dependent size take (a resize's target from `.item()`: unknown
    below 1, so such a size counts only when its check says >= 1)."""

    def __init__(self, model: Model) -> None:
        self.at: dict[tuple, int] = {}
        self.first: dict[str, int] = {}
        for i, launch in enumerate(model.launches):
            self.at.setdefault((launch.kernel, launch.location), i)
            self.first.setdefault(launch.kernel, i)
        self.floors = {name: str(sym.min) for name, sym in model.symbols.items()
                       if sym.unbacked and sym.min is not None and sym.min >= 1}
        # (buffer size, loop count) -> whether a zero choice empties the buffer while the loops run.
        self.emptied: dict[tuple[str, str], bool] = {}


def _empty_extern_before(model: Model, choice, before: int) -> bool:
    """An error-checked extern call launched before `before` that receives an empty tensor under
    `choice` (a conv raises `Kernel size can't be greater than actual input size`)."""
    for launch in model.launches[:before]:
        if not launch.extern or not launch.error_checked:
            continue
        for shape in launch.arg_shapes:
            if shape and W.evaluate_at(model, "*".join(f"({s})" for s in shape), choice) == 0:
                return True
    return False


def _count(value: float | None) -> str:
    return "?" if value is None else str(int(value))
