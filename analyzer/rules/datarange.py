"""Rules about what a kernel's own arithmetic does to the values it loads: an index the kernel keeps
in a constant range checked against a bound the package lets shrink below it."""

from __future__ import annotations

from typing import Iterable

from .. import sizes
from .. import witness as W
from ..findings import Finding, Severity
from ..model import Assertion, DimRef, Model
from ..messages import CHAIN, FIXES, MESSAGES
from . import Case, Context, Rule, register
from .bounds import _int_text, outcome_fields, unique_assertions, where


@register
class IndexExceedsDynamicBound(Rule):
    """An index the kernel keeps in a constant range can exceed a bound that is an input size.

    ## What it does
    Finds index-bound assertions (`index out of bounds: 0 <= tmp21 < ks2`) whose bound is a dynamic
    input dimension while the index is loaded data that the kernel itself bounds by a constant (a
    `clamp(index, 0, 400)` or `min(index, 400)` before an `index_select` or an embedding): the model
    produces every index up to that constant by design. When the package accepts sizes of the
    dimension (within its compiled and declared range) that make the bound that constant or less, the
    largest such size is reported, with a witness at that size. The bound at 0 is
    `empty-index-bound`'s finding, sizes below the compiled minimum `unenforced-lower-bound`'s.

    ## Why it matters
    The clamp says which indices the model may produce (any input value is valid: it is clamped), and
    the compiled range says which table sizes it may run with; the two disagree. An input whose values
    clamp to an index >= the table's size fails the check: on CPU inside an OpenMP region the whole
    process aborts (SIGABRT), on CUDA a device-side assert leaves the CUDA context unusable. Nothing in
    the exported signature says that the table must have more rows than the clamp's maximum.

    ## Example
    ```python
    class RepeatIndex(torch.nn.Module):   # test_aot_inductor.py's test_size_with_unbacked_add_expr
        def forward(self, values, repeats, embeddings):   # embeddings: [e, 8], e compiled for [2, 2048]
            index = torch.clamp(torch.repeat_interleave(values, repeats), 0, 400)
            return torch.index_select(embeddings, 0, index)
    # embeddings.shape = (400, 8) and a value >= 400 -> SIGABRT ("index out of bounds: 0 <= tmp21 < ks2")
    ```

    ## Fix
    Declare the real minimum when exporting (`Dim("e", min=401)`) and run with
    `AOTI_RUNTIME_CHECK_INPUTS=1`, or reject smaller sizes before calling the model, or clamp the index
    to the size it indexes (`clamp(index, 0, embeddings.shape[0] - 1)`) instead of a constant.
    """

    name = "index-exceeds-dynamic-bound"
    code = "AOTI015"
    severity = Severity.ERROR

    VALID = (
        Case("fixtures/gather_dyn.cpu.stripped.pt2"),        # x[idx]: the index is unbounded data
        Case("fixtures/pos_embedding.cpu.stripped.pt2"),     # a position index against a constant bound
        # The same package with the clamp lowered to 1: every compiled size (>= 2) holds indices 0 and 1.
        Case("fixtures/stranger2/tai_repeat_index.cpu.stripped.pt2",
             edit=(".kernel.cpp", rb"static_cast<int64_t>\(400\)", rb"static_cast<int64_t>(1)")),
    )
    INVALID = (
        # index_select(embeddings, 0, clamp(..., 0, 400)) with embeddings.shape[0] compiled for [2, 2048].
        Case("fixtures/stranger2/tai_repeat_index.cpu.stripped.pt2",
             {"message_key": "index-exceeds-dynamic-bound", "input": 2, "dim": 0, "severity": Severity.ERROR,
              "kernel": "cpp_fused__to_copy_clamp_index_select_0"},
             exported="fixtures/stranger2/tai_repeat_index.ep.pt2"),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        def keep(a: Assertion) -> bool:
            return (a.linked and a.bound_value is None and bool(a.bound_expr) and bool(a.bound_sources)
                    and bool(a.index_extent) and not a.index_extent_sources and not a.index_extent_value_inputs)

        for a in unique_assertions(model, keep):
            high = W.evaluate_at(model, a.index_extent or "")
            if high is None or high < 1:
                continue
            high = int(high) - 1  # the extent is exclusive
            choice = _witness(model, a, high)
            if choice is None:
                continue
            ref, limit = choice
            dim = model.dim(ref)
            assignment = {ref: limit}
            value = W.evaluate_at(model, a.bound_expr or "", assignment)
            inputs = ", ".join(f"`{model.inputs[i].display}`" for i in a.index_sources if i < len(model.inputs)) \
                or "the inputs"
            fields = dict(assertion=a.message, kernel=a.kernel, bound=a.bound,
                          bound_display=W.display_expr(model, a.bound_expr), dim_display=W.dim_display(model, ref),
                          where=where(ref), range_text=W.range_text(dim), low=sizes.effective_min(dim), limit=limit,
                          need=limit + 1, high=high, check_expr=W.check_expr(model, ref), inputs=inputs,
                          **outcome_fields(model, a))
            witness = MESSAGES["index-exceeds-dynamic-bound.witness"].format(
                shapes=W.witness(model, assignment), inputs=inputs, high=high)
            chain = (*a.chain, CHAIN["index-range"].format(index_var=a.index_var or "the index", high=high,
                                                           assignment=W.assignment_text(model, assignment),
                                                           value=_int_text(value)))
            yield self.finding(
                model, ctx, MESSAGES["index-exceeds-dynamic-bound"].format(**fields), a.location,
                kernel=a.kernel, input=ref.input, dim=ref.dim, symbol=W.symbol_of(model, ref),
                witness=witness, fix=FIXES["index-exceeds-dynamic-bound"].format(**fields), chain=chain,
                key=f"dynbound:{W.normalize_expr(model, a.bound_expr)}<={high};kernel:{a.kernel}")


def _witness(model: Model, a: Assertion, high: int) -> tuple[DimRef, int] | None:
    """The first bound dim (input order) with a size in its compiled/declared range that makes the
    bound between 1 and `high`: the largest such size (the other dims at their witness sizes)."""
    for ref in sorted(a.bound_sources):
        dim = model.dim(ref)
        if dim is None or dim.value is not None:
            continue
        low, top = max(sizes.effective_min(dim), 1), sizes.effective_max(dim)
        over = W.smallest_exceeding(model, a.bound_expr or "", ref, high)
        limit = over - 1 if over is not None else top
        if limit is None or limit < low:
            continue
        value = W.evaluate_at(model, a.bound_expr or "", {ref: limit})
        if value is not None and 1 <= value <= high:
            return ref, limit
    return None
