"""Rules about what a kernel's own arithmetic does to the values it loads: an index the kernel keeps
in a constant range checked against a bound the package lets shrink below it."""

from __future__ import annotations

from typing import Iterable

from ..query import counting, sizes, valueindex as VI, witness as W
from ..core.findings import Finding, Severity
from ..core.model import Assertion, DimRef, Enforcement, Model, Symbol, where
from ..core.dimtext import range_text
from ..core.messages import listed
from ..query.severity import Consequence
from ..query.source import COUNT_OPS, INDEX_OPS
from . import Case, Context, Rule, register
from .bounds import outcome_fields
from .tableextent import int_text
from .merging import unique_assertions
from . import enforcement as E
from .enforcement import reach_text
from .words_inputs import DataDependentSizeCheckWords
from .words_kernels import IndexExceedsDynamicBoundWords


@register
class IndexExceedsDynamicBound(IndexExceedsDynamicBoundWords, Rule):
    """An index the kernel keeps in a constant range can exceed a bound that is an input size.

    ## What it does
    Finds index-bound assertions (`index out of bounds: 0 <= tmp21 < ks2`) whose bound is a dynamic
    input dimension while the index is loaded data that the kernel itself bounds by a constant (a
    `clamp(index, 0, 400)` or `min(index, 400)` before an `index_select` or an embedding): the model
    produces every index up to that constant by design. When the package accepts sizes of the
    dimension (within its compiled and declared range) that make the bound that constant or less, the
    largest such size is reported, with a witness at that size. The bound at 0 is
    `empty-index-bound`'s finding, sizes below the compiled minimum `unenforced-lower-bound`'s.
    An index an op bounds by a size (`bucketize`/`searchsorted` by the searched length, in [0, n];
    `topk`/`sort` indices, in [0, n - 1]) checked against a bound that is a size too is reported where
    its maximum reaches the bound, with the values that reach it in the op's terms ("a value above the
    last boundary"); eager raises IndexError on those values too, so that finding is an info. So is a
    position computed from an integer input's values and sizes (a jagged row's column `i - offsets[row]`,
    a running sum of counts) checked against a size, with the first sizes and the smallest value that
    reach it; the value itself (`x[idx]`, negative-index wrapping aside) is the caller's data and is not
    reported, nor are a float input's coordinates.

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
    consequence = Consequence.FAILS
    op = "the kernel's index check"
    user_ops = INDEX_OPS

    VALID = (
        Case("fixtures/gather_dyn.cpu.stripped.pt2"),        # x[idx]: the index is unbounded data
        Case("fixtures/pos_embedding.cpu.stripped.pt2"),     # a position index against a constant bound
        # index_select's index is the value itself (negative-index wrapping aside): the caller's data.
        Case("fixtures/versions/2.15/index_select_2d.cpu.stripped.pt2"),
        # An affine grid's float coordinates (grid sampling masks them), no ids.
        Case("fixtures/stranger4/stn.cpu.stripped.pt2", exported="fixtures/stranger4/stn.ep.pt2"),
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
        # `vals[torch.bucketize(x, boundaries)]`, vals as long as boundaries: a value past the last
        # boundary gives index len(boundaries); eager raises IndexError there too (probed): an info.
        Case("fixtures/recall/bucketize_table.cpu.stripped.pt2",
             {"message_key": "index-exceeds-dynamic-bound.sized", "input": 1, "dim": 0, "severity": Severity.INFO},
             exported="fixtures/recall/bucketize_table.ep.pt2"),
        Case("fixtures/searchsorted_index.cpu.stripped.pt2",
             {"message_key": "index-exceeds-dynamic-bound.sized", "severity": Severity.INFO}),
        # A jagged batch laid into L columns at `x0 - offsets[row]`: a row longer than L aborts (SIGABRT,
        # probed at total = 1025); eager's index_put raises IndexError on the same values: an info.
        Case("fixtures/stranger18/jagged_dense.cpu.stripped.pt2",
             {"message_key": "index-exceeds-dynamic-bound.position", "input": 1, "severity": Severity.INFO},
             exported="fixtures/stranger18/jagged_dense.ep.pt2"),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        def keep(a: Assertion) -> bool:
            return (a.linked and a.bound_value is None and bool(a.bound_expr) and bool(a.bound_sources)
                    and bool(a.index_extent) and not a.index_extent_sources and not a.index_extent_value_inputs)

        def sized(a: Assertion) -> bool:
            return (a.linked and a.bound_value is None and bool(a.bound_expr) and bool(a.bound_sources)
                    and bool(a.index_extent_sources) and not a.index_extent_value_inputs and bool(a.index_ops))

        def position(a: Assertion) -> bool:
            return VI.sized_position(model, a)

        for found in (self._sized(model, ctx, a) for a in unique_assertions(model, sized)):
            if found is not None:
                yield found
        for found in (self._position(model, ctx, a) for a in unique_assertions(model, position)):
            if found is not None:
                yield found

        for a in unique_assertions(model, keep):
            high = W.evaluate_at(model, a.index_extent or "")
            if high is None or high < 1:
                continue
            high = int(high) - 1  # the extent is exclusive
            choice = _witness(model, a, high)
            if choice is None:
                continue
            ref, limit = choice
            dim = model.known_dim(ref)
            assignment = {ref: limit}
            value = W.evaluate_at(model, a.bound_expr or "", assignment)
            inputs = ", ".join(f"`{model.inputs[i].display}`" for i in a.index_sources if i < len(model.inputs)) \
                or "the inputs"
            fields = dict(assertion=a.message, kernel=a.kernel, bound=a.bound,
                          bound_display=W.display_expr(model, a.bound_expr), dim_display=W.dim_display(model, ref),
                          where=where(ref), range_text=range_text(dim), low=sizes.effective_min(dim), limit=limit,
                          need=limit + 1, high=high, check_expr=W.check_expr(model, ref), inputs=inputs,
                          **outcome_fields(model, a))
            witness = self.MESSAGES["index-exceeds-dynamic-bound.witness"].format(
                shapes=W.witness(model, assignment), inputs=inputs, high=high)
            chain = (*a.chain, self.CHAIN["index-exceeds-dynamic-bound.index-range"].format(index_var=a.index_var or "the index", high=high,
                                                           assignment=W.assignment_text(model, assignment),
                                                           value=int_text(value)))
            yield self.finding(
                model, ctx, self.MESSAGES["index-exceeds-dynamic-bound"].format(**fields), a.location, subject=a,
                kernel=a.kernel, input=ref.input, dim=ref.dim, symbol=W.symbol_of(model, ref),
                witness=witness, fix=self.FIXES["index-exceeds-dynamic-bound"].format(**fields), chain=chain,
                key=f"dynbound:{W.normalize_expr(model, a.bound_expr)}<={high};kernel:{a.kernel}")


    def _sized(self, model: Model, ctx: Context, a: Assertion) -> Finding | None:
        """An index whose values an op bounds by a size (`bucketize` by the boundaries' length, `topk`
        by the scanned dim) against a bound that is a size too: the witness sizes where the index's
        maximum reaches the bound, with the values that reach it in the op's own terms."""
        extent, bound = a.index_extent or "", a.bound_expr or ""
        assignment: dict[DimRef, int] = {}
        high, value = W.evaluate_at(model, extent), W.evaluate_at(model, bound)
        if high is None or value is None:
            return None
        if high - 1 < value:
            # Not at the witness sizes: the smallest size of an extent dim that reaches the bound.
            for ref in a.index_extent_sources:
                over = W.smallest_exceeding(model, extent, ref, value)
                if over is not None:
                    assignment = {ref: over}
                    high, value = W.evaluate_at(model, extent, assignment), W.evaluate_at(model, bound, assignment)
                    break
            if high is None or value is None or high - 1 < value:
                return None
        ref = (a.index_extent_sources + a.bound_sources)[0]
        inputs = ", ".join(f"`{model.inputs[i].display}`" for i in a.index_sources if i < len(model.inputs)) \
            or "the inputs"
        reach = reach_text(a)
        fields = dict(assertion=a.message, kernel=a.kernel, bound=a.bound, bound_display=W.display_expr(model, bound),
                      extent=W.display_expr(model, f"({extent}) - 1"),
                      ops=listed([f"`{op.removesuffix('_Tensor')}`" for op in a.index_ops]),
                      reach=reach, assignment=W.assignment_text(model, assignment) if assignment else "the witness sizes",
                      high=int_text(high - 1), value=int_text(value), inputs=inputs, dim_display=W.dim_display(model, ref),
                      limit=int_text(value), check_expr=W.check_expr(model, ref), **outcome_fields(model, a))
        witness = self.MESSAGES["index-exceeds-dynamic-bound.sized-witness"].format(
            shapes=W.witness(model, assignment), reach=reach)
        chain = (*a.chain, self.CHAIN["index-exceeds-dynamic-bound.index-range-sized"].format(index_var=a.index_var or "the index", **fields))
        return self.finding(
            model, ctx, self.MESSAGES["index-exceeds-dynamic-bound.sized"].format(**fields), a.location, subject=a,
            # eager raises IndexError on the same values (probed): the package's check is no worse
            consequence=Consequence.ASSUMED, kernel=a.kernel, input=ref.input, dim=ref.dim,
            symbol=W.symbol_of(model, ref),
            witness=witness, fix=self.FIXES["index-exceeds-dynamic-bound.sized"].format(**fields), chain=chain,
            key=f"dynbound:{W.normalize_expr(model, bound)}<={W.normalize_expr(model, extent)};kernel:{a.kernel}")


    def _position(self, model: Model, ctx: Context, a: Assertion) -> Finding | None:
        """A position computed from one input's values and sizes (a jagged row's column, `i - offsets[row]`)
        against a size: the first sizes (the witness's, else an index dim's smallest) and the smallest value
        of the input there that take it to the bound. Eager's lookup raises on those values too: an info."""
        upper, bound = a.value_upper or "", a.bound_expr or ""
        found = VI.position_witness(model, upper, bound)
        if found is None:
            return None
        assignment, value = found
        (first,) = a.index_sources
        inputs, ref = model.input_text(first), (sorted(assignment) or sorted(a.bound_sources))[0]
        fields = dict(assertion=a.message, kernel=a.kernel, bound=a.bound, bound_display=W.display_expr(model, bound),
                      inputs=inputs, upper=VI.shown(model, a), value=value, dim_display=W.dim_display(model, ref),
                      assignment=W.assignment_text(model, assignment) if assignment else "the witness sizes",
                      **outcome_fields(model, a))
        witness = self.MESSAGES["index-exceeds-dynamic-bound.position-witness"].format(
            shapes=W.witness(model, assignment), value=value, inputs=inputs)
        chain = (*a.chain, self.CHAIN["index-exceeds-dynamic-bound.position"].format(
            index_var=a.index_var or "the index", **fields))
        return self.finding(
            model, ctx, self.MESSAGES["index-exceeds-dynamic-bound.position"].format(**fields), a.location, subject=a,
            consequence=Consequence.ASSUMED, eager_rejects=E.EAGER["table"], kernel=a.kernel, input=first, witness=witness,
            fix=self.FIXES["index-exceeds-dynamic-bound.position"].format(**fields), chain=chain,
            key=f"dynbound:position:in{first}:{W.normalize_expr(model, upper)}>={W.normalize_expr(model, bound)}")


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


# run_impl's `u0 <= 9223372036854775806` (int64 max - 1) bounds nothing.
_NO_MAX = 2**62


@register
class DataDependentSizeCheck(DataDependentSizeCheckWords, Rule):
    """A size the input's values decide is compiled for a range those values can leave.

    ## What it does
    Finds unbacked sizes (the number of elements `nonzero`, `masked_select`, `unique` or
    torchvision's `nms` returns) for which the package's `run_impl` checks a range at every call
    (`Expected u0 >= 2`, `Expected u0 <= 1024`), where the values of the op's input can give a count
    outside it: fewer than the minimum at any input size (no nonzero element, boxes that all overlap),
    or more than the maximum at an input size the package accepts. It names the op and the bound, with
    a witness: the input shapes and the count the values must give.

    ## Why it matters
    The check raises `RuntimeError: Expected u0 >= 2 but received 1`, an error about a compiler
    symbol, not about the input, for an input of a valid shape. When the bound comes from what
    `torch.export` assumed about the op's output (nms keeping at least 2 boxes: its example input kept
    more) rather than from the model, eager PyTorch returns a result for the same input: a detection
    model fails on every image with a single detection.

    ## Example
    ```python
    class NmsIou(torch.nn.Module):
        def forward(self, boxes, scores):              # boxes: [n, 4], scores: [n]
            keep = torchvision.ops.nms(boxes, scores, 0.5)
            return torchvision.ops.box_iou(boxes[keep], boxes)
    # compiled for u0 = len(keep) >= 2: three boxes that overlap -> "Expected u0 >= 2 but received 1"
    ```

    ## Fix
    Where the model needs the bound, say so with `torch._check` and handle such inputs before calling
    the package; where it does not, re-export with an example input whose count lies outside the
    assumed range (one kept box) or with `torch._check` bounds that allow it, and recompile.
    """

    name = "data-dependent-size-check"
    code = "AOTI016"
    consequence = Consequence.ASSUMED
    user_ops = COUNT_OPS

    VALID = (
        Case("fixtures/gather_dyn.cpu.stripped.pt2"),                   # no data-dependent size
        Case("fixtures/stress/pkgs/nonzero_index.cpu.stripped.pt2"),     # nonzero's count, no bound
        # tai_resize's u0 = target_size.item(), checked to [1, 4000]: a value, not a count.
        Case("fixtures/stranger2/tai_resize.cpu.stripped.pt2"),
    )
    INVALID = (
        Case("fixtures/stranger2/tv_nms_iou.cpu.stripped.pt2",
             {"message_key": "data-dependent-size-check.min", "input": 0, "dim": 0, "kernel": "torchvision.nms"},
             exported="fixtures/stranger2/tv_nms_iou.ep.pt2"),
        # nonzero's count is at most n, declared and compiled <= 1024: only n = 1025 exceeds `u0 <= 1024`.
        Case("fixtures/stranger2/tai_nonzero_mm.cpu.stripped.pt2",
             {"message_key": "data-dependent-size-check.max", "input": 0, "dim": 0,
              "kernel": "aoti_torch_cpu_nonzero"}, exported="fixtures/stranger2/tai_nonzero_mm.ep.pt2"),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        for sym in model.symbols.values():
            if not sym.unbacked:
                continue
            producer = next((launch for launch in model.launches if launch.extern and sym.expr in launch.outputs), None)
            op = counting.counting_op(producer.kernel) if producer is not None else None
            if producer is None or op is None or not producer.arg_shapes or not producer.arg_shapes[0]:
                continue
            floor = op.floor
            shape = producer.arg_shapes[0]
            cap = f"({shape[0]})" if op.cap == "rows" else "*".join(f"({s})" for s in shape)
            inputs = [inp for inp in model.inputs if inp.name in producer.args]
            if not inputs:
                continue
            first = inputs[0]
            who = ", ".join(f"`{inp.display}`" for inp in inputs)
            base = dict(symbol=sym.name, call=producer.kernel, who=who, cap=W.display_expr(model, cap))
            if sym.min is not None and sym.min - 1 >= floor:
                value = sym.min - 1
                at = W.evaluate_at(model, cap)
                if at is not None and at >= max(value, 1):
                    fields = dict(base, min=sym.min, value=value)
                    yield self._finding(model, ctx, sym, producer, "min", fields, first.index, 0,
                                        W.witness(model, {}), f"{producer.kernel}:{sym.name}>={sym.min}")
            if sym.max is not None and sym.max < _NO_MAX:
                found = _exceeding(model, cap, sym.max)
                if found is not None:
                    assignment, ref, size = found
                    dim = model.known_dim(ref)
                    env = sizes.max_enforcement(dim) is Enforcement.ENV and dim.max is not None and dim.max < size
                    fields = dict(base, max=sym.max, value=sym.max + 1, dim_display=W.dim_display(model, ref),
                                  where=where(ref), size=size, max_size=size - 1, range_text=range_text(dim),
                                  env=self.FIXES["data-dependent-size-check.env"] if env else "")
                    yield self._finding(model, ctx, sym, producer, "max", fields, ref.input, ref.dim,
                                        W.witness(model, assignment), f"{producer.kernel}:{sym.name}<={sym.max}")

    def _finding(self, model: Model, ctx: Context, sym: Symbol, producer, end: str, fields: dict, input: int,
                 dim: int, shapes: str, key: str) -> Finding:
        key_name = f"data-dependent-size-check.{end}"
        witness = self.MESSAGES["data-dependent-size-check.witness"].format(shapes=shapes, **fields)
        return self.finding(
            model, ctx, self.MESSAGES[key_name].format(**fields), producer.location, subject=sym,
            kernel=producer.kernel, input=input, dim=dim, witness=witness, fix=self.FIXES[key_name].format(**fields),
            chain=tuple(c for c in (producer.comment,) if c), key=f"data-size:{key}")


def _exceeding(model: Model, cap: str, limit: int) -> tuple[dict[DimRef, int], DimRef, int] | None:
    """The first dim of `cap` (input order) with a size the package accepts (above its compiled max
    unless a check that always runs enforces it) that makes `cap` > `limit`, the other dims of `cap`
    at their largest sizes: (the assignment, the dim, its size)."""
    refs = sorted(W.expr_dims(model, cap) or ())
    for ref in refs:
        dim = model.dim(ref)
        if dim is None or dim.value is not None:
            continue
        others = {r: top for r in refs if r != ref and (top := sizes.effective_max(model.known_dim(r))) is not None}
        size = W.smallest_exceeding(model, cap, ref, limit, others, beyond_max=True)
        if size is not None and sizes.accepts(dim, size):
            return {**others, ref: size}, ref, size
    return None
