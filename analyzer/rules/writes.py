"""Rules about kernels' writes: a write into a buffer that an input size empties."""

from __future__ import annotations

from typing import Iterable

from .. import witness as W
from ..findings import Finding, Severity
from ..model import Model, Store
from ..messages import CHAIN, FIXES, MESSAGES
from . import Case, Context, Rule, register
from .bounds import env_clause, where


@register
class StoreIntoEmptyBuffer(Rule):
    """A kernel writes into a buffer that an input size the package accepts makes empty.

    ## What it does
    Reads every write of a generated kernel (`out_ptr0[tmp1] = v`, `v.store(out_ptr0 + x0)`,
    `tl.store(out_ptr0 + x0, v, xmask)`) with the buffer it writes at each launch (its allocation's
    sizes, or the input's shape for a write into an input) and the loops around the write. Reports a
    write whose buffer has no elements when a dynamic dimension is 0 (which the package lets
    through: its range check runs only with `AOTI_RUNTIME_CHECK_INPUTS=1`) while its loops still
    run: a scatter whose loop runs over the index, not over the output. A write whose kernel fails
    an index check at the same size first is left to `empty-index-bound`.

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
    severity = Severity.ERROR

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
        seen: set[tuple] = set()
        for store in model.stores:
            ident = (store.kernel, store.location, store.numel, store.space_expr)
            if ident in seen:
                continue
            seen.add(ident)
            choice = _empty_choice(model, store)
            if choice is None:
                continue
            ref = min(choice)
            dim = model.dim(ref)
            space = W.evaluate_at(model, store.space_expr, choice)
            fields = dict(kernel=store.kernel, pointer=store.pointer, buffer=store.buffer,
                          numel=W.display_expr(model, store.numel), space=W.display_expr(model, store.space_expr),
                          dim_display=W.dim_display(model, ref), where=where(ref), range_text=W.range_text(dim),
                          writes=_count(space))
            chain = (CHAIN["store"].format(**fields),
                     CHAIN["store-empty"].format(assignment=W.assignment_text(model, choice), buffer=store.buffer,
                                                 writes=fields["writes"]))
            yield self.finding(
                model, ctx, MESSAGES["store-into-empty-buffer"].format(**fields), store.location,
                kernel=store.kernel, input=ref.input, dim=ref.dim, symbol=W.symbol_of(model, ref),
                witness=W.witness(model, choice),
                fix=FIXES["store-into-empty-buffer"].format(empty_test=f"{W.check_expr(model, ref)} == 0",
                                                           env=env_clause(dim)),
                chain=chain, key=f"store:{W.normalize_expr(model, store.numel)};kernel:{store.kernel}")


def _empty_choice(model: Model, store: Store) -> dict | None:
    """Dims at 0 (accepted by the package) that empty the buffer while the write's loops still run
    and no index check of the same kernel fails first."""
    refs = W.expr_dims(model, store.numel)
    if not refs:
        return None

    def works(choice) -> bool:
        if W.evaluate_at(model, store.numel, choice) != 0:
            return False
        space = W.evaluate_at(model, store.space_expr, choice)
        if space is None or space <= 0:
            return False
        tripped = W.tripped_assertion(model, choice)
        return tripped is None or _launched(model, tripped.kernel) > _launched(model, store.kernel, store.launch)

    return W.zero_choice(model, refs, works)


def _launched(model: Model, kernel: str, at=None) -> int:
    """The position of `kernel`'s launch (at location `at`, else its first) among the launches."""
    return next((i for i, launch in enumerate(model.launches)
                 if launch.kernel == kernel and (at is None or launch.location == at)), len(model.launches))


def _count(value: float | None) -> str:
    return "?" if value is None else str(int(value))
