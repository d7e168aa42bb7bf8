"""Index-bound rules: assertions whose bound or index comes from a model input dimension, and
assertions the analyzer could not link. Also the helpers the other rule families share (`where`,
`effect`, `env_clause`, `range_step`)."""

from __future__ import annotations

from typing import Iterable

from ..expr import intervals
from ..query import externs, sizes, witness as W
from ..core.findings import Finding, Location, Severity
from ..core.model import Assertion, DimRef, Model, where
from ..core.dimtext import range_text
from ..query.severity import Consequence, fails_like_eager
from ..query.source import INDEX_OPS
from . import Case, Context, FailingCondition, Rule, register
from . import enforcement as E, tablevalues as V
from .merging import unique_assertions
from .notes import worded_once
from . import tableextent as T
from .tableextent import int_text
from .words_kernels import EmptyIndexBoundWords, IndexExceedsConstantBoundWords, UnlinkedAssertionWords
from ..core.messages import CHAIN, EFFECTS, FIXES


def outcome(model: Model, a: Assertion) -> str:
    """What a failing index assertion does: "cuda" (a device-side assert), "cpu.abort" (the check
    runs inside an OpenMP parallel region: its exception cannot leave it, the process aborts),
    "cpu.raise" (RuntimeError to the caller), "cpu" (not known which), "unknown" (no device)."""
    device = str(model.device or "").split(":")[0].lower()
    if device == "cpu" and a.parallel is not None:
        return "cpu.abort" if a.parallel else "cpu.raise"
    return device if device in ("cuda", "cpu") else "unknown"


def outcome_fields(model: Model, a: Assertion) -> dict[str, str]:
    """The message fields `effect` (the detail's words) and `outcome` (the headline's verb)."""
    key = outcome(model, a)
    return dict(effect=_effect(key, a.message), outcome=key)


@worded_once
def _effect(key: str, message: str) -> str:
    return EFFECTS[key].format(message=message)


def env_clause(dim) -> str:
    """`, or run with AOTI_RUNTIME_CHECK_INPUTS=1 ...` where that would reject size 0, else ""."""
    return FIXES["env"] if sizes.env_check_rejects_zero(dim) else ""


def range_step(model: Model, ref: DimRef, dim, symbol: str | None = None) -> str:
    """The chain step `s77 = input 0 dim 0 (x.shape[0]), compiled for [2, inf), ...`."""
    return CHAIN["range"].format(symbol=symbol or W.symbol_of(model, ref) or "?", dim=model.describe(ref),
                                 range=range_text(dim))


def model_location(model: Model) -> Location:
    return Location(model.wrapper_path or model.name)


@register
class EmptyIndexBound(EmptyIndexBoundWords, Rule):
    """An index bound is an input dimension that the package accepts as 0.

    ## What it does
    Finds index-bound assertions (`index out of bounds: 0 <= tmp4 < ks0`) whose bound is a dynamic input dimension
    (or an expression over dimensions) that becomes 0 when a dimension is empty, while nothing at run time rejects
    size 0: the package's `check_input_N` range checks run only with `AOTI_RUNTIME_CHECK_INPUTS=1` (the default
    code generation), or the checked range includes 0. The bound is evaluated with the dimension set to 0; bounds
    that stay positive (`ks0 + 1`) and constant bounds (`100`) are not reported, nor is a check whose own loop (a
    C++ loop around it, a Triton kernel's `xnumel`) the same empty size empties: it never runs. A bound below 0
    at 0 (`nb - 1`) is witnessed where it is 0 (nb = 1): ops before the check that take it as a size (an
    allocation of nb - 1 rows) reject a negative one, as eager does, and accept 0.

    ## Why it matters
    `torch.export` records `Dim("n")` as `[0, inf)`, but Inductor compiles for `n >= 2` and does not
    check it by default. An empty tensor therefore reaches the kernel, and every index `i` fails
    `0 <= i < 0`: on CUDA a device-side assert that leaves the CUDA context unusable (every later CUDA
    call in the process fails, so one empty request takes a server down), on CPU
    `RuntimeError: index out of bounds` or an abort of the process. Eager PyTorch raises a catchable
    `IndexError` for most such inputs, and for some (`index_add` into an empty tensor) none at all; the
    exported signature does not say that empty inputs are invalid.

    When the index values are read from an input (`x[idx]` with `x` empty and `idx` not), every value
    is out of range for eager too: the input is the caller's mistake, and where the package fails no
    worse than eager (it raises, or asserts on CUDA) the finding says so and is an info. It stays an
    error where the check aborts the process (inside a CPU OpenMP region), the index is not data (an
    iteration range the empty size does not shrink), or it is read from an extern output the empty
    input shrinks (`repeat_interleave` of empty lengths): read past its end first (SIGSEGV), said.

    ## Example
    ```python
    class Gather(torch.nn.Module):
        def forward(self, x, idx):      # x: [n, 8], idx: [m]
            return x[idx] * 2

    ep = torch.export.export(Gather(), (x, idx), dynamic_shapes={"x": {0: Dim("n")}, "idx": {0: Dim("m")}})
    pkg = torch._inductor.aoti_compile_and_package(ep)
    # x.shape = (0, 8), idx.shape = (3,) -> "index out of bounds: 0 <= tmp4 < ks0"
    ```

    ## Fix
    Reject empty inputs before calling the model (`if x.shape[0] == 0: ...`), or run with
    `AOTI_RUNTIME_CHECK_INPUTS=1` so that the package's own check rejects size 0 with a clear error,
    or handle size 0 outside the model (and declare `Dim("n", min=1)` so that the exported contract
    says so).
    """

    name = "empty-index-bound"
    code = "AOTI001"
    consequence = Consequence.FAILS
    op = "the kernel's index check"
    user_ops = INDEX_OPS
    guarded = True

    VALID = (
        Case("fixtures/gather_static.cpu.stripped.pt2"),     # x[idx] with x static: the bound is 10
        Case("fixtures/embedding.cuda.stripped.pt2"),        # a table of 100 rows: a constant bound
        # Mixtral's MoE routing: batch 0 empties the bound 2*batch*seq and the loop around the check.
        Case("fixtures/stranger/mixtral.cpu.stripped.pt2", exported="fixtures/stranger/mixtral.ep.pt2"),
    )
    INVALID = (
        Case("fixtures/gather_dyn.cpu.stripped.pt2", {"message_key": "empty-index-bound", "input": 0, "dim": 0,
                                                       "kernel": "cpp_fused_index_mul_0"}),
        Case("fixtures/index_select_2d.cuda.stripped.pt2", {"message_key": "empty-index-bound", "input": 0, "dim": 1}),
        Case("fixtures/stress/pkgs/derived_dims.cpu.stripped.pt2", {"message_key": "empty-index-bound.expr"}),
        # Segment sums at CSR offsets: the bound `nb - 1` is 0 at nb = 1 (the package SIGSEGVs there), -1 at 0.
        Case("fixtures/stranger19/segment_csr.cpu.stripped.pt2", {"message_key": "empty-index-bound.at-size", "input": 1,
                                                                   "witness": "arg4_1.shape = (3, 16), arg5_1.shape = (1,)"}),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        def keep(a: Assertion) -> bool:
            return a.linked and a.bound_value is None and bool(a.bound_sources) and bool(a.bound_expr)

        for a in unique_assertions(model, keep):
            # Sizes no convolution rejects first are preferred; at sizes one does (an empty image
            # height), the package and eager raise its own error before any index runs.
            choice = W.empty_bound_choice(model, a, accept=lambda c: E.convolution_rejects(model, c) is None)
            convolution = None
            if choice is None:
                choice = W.empty_bound_choice(model, a)
                convolution = E.convolution_rejects(model, choice)
            if choice is None or a.bound_expr is None:  # `keep` has a bound expression
                continue
            ref = min(choice)
            dim, size = model.dim(ref), choice[ref] if len(choice) == 1 else 0
            value = W.evaluate_at(model, a.bound_expr, choice)
            shown = W.display_expr(model, a.bound_expr)
            simple = len(choice) == 1 and shown == W.dim_display(model, ref)
            fields = dict(bound=a.bound, assertion=a.message, kernel=a.kernel, dim_display=W.dim_display(model, ref),
                          where=where(ref), range_text=range_text(dim), **outcome_fields(model, a), **({"size": size} if size else {}),
                          bound_display=shown, zero=self.MESSAGES["empty-index-bound.zero"] if len(choice) == 1 else
                          self.MESSAGES["empty-index-bound.zero-with"].format(assignment=W.assignment_text(model, choice)))
            # The index loaded from an extern call's output that the emptied input shrinks: the
            # kernel reads it at the size the package assumes, past its end, before any check.
            short = externs.assumed_output(model, a.index_buffer, a.index_writer, choice)
            if short is not None:
                fields.update(outcome="overread", effect=self.MESSAGES["empty-index-bound.overread"].format(
                    call=short.launch.kernel, buffer=short.buffer, count=short.count, message=a.message,
                    sizes=", ".join(W.display_expr(model, size) for size in short.sizes)))
            # A bound like `nb - 1` is witnessed where it is 0 (nb = 1), not at 0 (W.empty_bound_choice).
            key = "empty-index-bound" if simple else "empty-index-bound.at-size" if size else "empty-index-bound.expr"
            message = self.MESSAGES[key]
            shown = "" if simple else f" {shown}"
            chain = (*a.chain, self.CHAIN["empty-index-bound.zero"].format(assignment=W.assignment_text(model, choice), bound_expr=shown,
                                                    value=int_text(value), index_var=a.index_var or "index"))
            key = (f"bound:{W.normalize_expr(model, a.bound_expr)};"
                   f"index:{','.join(f'in{i}' for i in a.index_sources)};kernel:{a.kernel}")
            # Index values loaded from a tensor (an input's, one computed from it by an op with a known range
            # such as bucketize's [0, len], a segment id) into a dim the witness empties: invalid for eager too, which raises as
            # the package does; not where the package is worse: it aborts, or reads an extern output past
            # its end before any check (a crash or garbage where eager raises).
            like_eager = short is None and fails_like_eager(str(fields["outcome"]))
            data = bool(a.index_sources or a.index_pointers) and (a.index_extent is None or bool(a.index_ops)) and like_eager
            argmax = E.empty_argmax(model, a, choice) if like_eager else None
            yield self.finding(
                model, ctx, message.format(**fields), a.location, subject=a, kernel=a.kernel, input=ref.input, dim=ref.dim,
                eager_rejects=convolution or argmax or (E.EAGER["index"] if data else None),
                symbol=W.symbol_of(model, ref), witness=W.witness(model, choice),
                fix=self.FIXES["empty-index-bound" if not size else "empty-index-bound.at-size" if
                               sizes.env_check_rejects_zero(dim, size) else "empty-index-bound.at-size-unchecked"].format(
                    empty_test=f"{W.check_expr(model, ref)} {'<=' if size else '=='} {size}", env=env_clause(dim),
                    least=size + 1, minimum=getattr(dim, "min", None)),
                chain=chain, key=key)

    def guard_condition(self, model: Model, finding: Finding) -> FailingCondition | None:
        """The bound at 0 while the index still ranges over something: every index fails."""
        a = finding.subject
        if not isinstance(a, Assertion) or not a.bound_expr:
            return None
        expr = f"({a.bound_expr}) <= 0" + (f" and ({a.index_extent}) > 0" if a.index_extent else "")
        return FailingCondition("empty-index-bound", expr,
                                f"the index bound of {a.kernel} (\"{a.message}\") is then "
                                f"{W.display_expr(model, a.bound_expr)} = 0 and every index fails")


@register
class IndexExceedsConstantBound(IndexExceedsConstantBoundWords, Rule):
    """An index that ranges over a dynamic size can exceed a constant bound.

    ## What it does
    Finds index-bound assertions with a constant bound (`y0 < 512`, a table of 512 rows) whose index is not data
    but a position that ranges over a dynamic input size, e.g. a positional embedding indexed by
    `torch.arange(x.shape[1])`. Interval arithmetic over the compiled and declared ranges of the sizes gives the
    largest index; when it can reach the bound, the sequence length that trips it is reported, one finding per
    launch of the kernel that reads other sizes (a position table shared by an encoder's and a decoder's lengths:
    one for each). The lookup past the table is one eager PyTorch rejects too (`IndexError: index out of range in
    self`), so the severity says what the package does worse: an error when the failed check aborts the process (a
    CPU check inside an OpenMP parallel region) and the compiled range itself reaches past the bound (no compiled
    maximum, or one above it: a table of 64 rows under a range compiled up to 4096), a warning when only the
    declared range does or the max is one only `AOTI_RUNTIME_CHECK_INPUTS=1` checks; an info when the check raises
    `RuntimeError` to the caller (a CPU check outside such a region) or asserts on CUDA, as eager's own lookup
    does. Past the range the package was traced for, eager may run other code (a model that rebuilds a longer
    sinusoidal table, as M2M100 does), so there the lookup counts as eager's own only when the table is a learned
    weight (`ConstantType::Parameter`, not in a sinusoidal table's module: FSMT rebuilds its own); a buffer's
    finding says nothing of eager. Indices that are loaded values (an embedding lookup of user tokens) are data
    errors, not shape errors, and are not reported; a position computed from an input's values and sizes
    (`(arange(seq) + lengths - seq).clamp(0)`, left-padded rows) is, with the smallest value that reads past the
    table (65 for 64 rows) as its witness, an info: eager makes the same lookup and rejects those values too,
    though a check in a parallel region aborts the process where eager raises. So is a floating-point input's own
    value cast to an index (row ids in a column of patches): no id the caller is told to keep in range. So is an
    index an op computes from an input's values whose range passes the table at every size (`searchsorted` into 16
    boundaries returns 0..16, read against 16 rows), with the values that take the op there as its witness,
    weighed as sizes are (an error where the check aborts).

    ## Why it matters
    Inputs that the package accepts by its own shape contract fail at run time: a device-side assert on CUDA
    (which poisons the CUDA context), `RuntimeError: index out of bounds` on CPU. Nothing in the exported
    signature says that sequences longer than the table are invalid.

    ## Example
    ```python
    class Pos(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.pe = torch.nn.Embedding(512, 16)

        def forward(self, x):                       # x: [b, seq, 16]
            return x + self.pe(torch.arange(x.shape[1]))

    torch.export.export(Pos(), (x,), dynamic_shapes={"x": {0: Dim("b"), 1: Dim("seq")}})
    # x.shape = (3, 513, 16) -> "index out of bounds: y0 < 512"
    ```

    ## Fix
    Declare the real limit when exporting (`Dim("seq", max=512)`) and run with `AOTI_RUNTIME_CHECK_INPUTS=1`, or
    reject longer inputs before calling the model, or size the table for the longest input.
    """

    name = "index-exceeds-constant-bound"
    code = "AOTI003"
    consequence = Consequence.FAILS
    op = "the kernel's index check on the constant table"
    user_ops = INDEX_OPS
    guarded = True

    VALID = (
        Case("fixtures/real/llama.cpu.stripped.pt2"),             # rotary positions: no table
        Case("fixtures/embedding.cpu.stripped.pt2"),              # the index is data (token ids)
    )
    INVALID = (
        # The check raises `RuntimeError: index out of bounds` as eager raises IndexError: an info.
        Case("fixtures/pos_embedding.cpu.stripped.pt2", {"message_key": "index-exceeds-constant-bound.unbounded",
                                                          "severity": Severity.INFO, "input": 0, "dim": 1}),
        # TiSASRec: `searchsorted` into 16 boundaries (0..16) read against 16 rows in a parallel region: SIGABRT.
        Case("fixtures/stranger19/tisasrec.cpu.stripped.pt2", {"message_key": "index-exceeds-constant-bound.op-values",
                                                               "severity": Severity.ERROR, "input": 1}),
        # seq compiled (and declared) for [2, 1000], a table of 512 rows: 513 is compiled for and fails,
        # with a device assert, as eager's own lookup on CUDA.
        Case("fixtures/pos_embedding_max1000.cuda.stripped.pt2", {
            "message_key": "index-exceeds-constant-bound.bounded", "severity": Severity.INFO, "input": 0, "dim": 1}),
        # 64 rows under Dim("seq", max=4096): seq 65 raises, with AOTI_RUNTIME_CHECK_INPUTS=1 too, as eager.
        Case("fixtures/launches/pos64_max4096.cpu.stripped.pt2", {
            "message_key": "index-exceeds-constant-bound.bounded", "severity": Severity.INFO, "input": 0, "dim": 1},
             exported="fixtures/launches/pos64_max4096.ep.pt2"),
        # One position kernel launched for the encoder's length and again for the decoder's: a finding
        # for each (the encoder's compiled for [2, 4096] by Inductor, the decoder's unbounded).
        Case("fixtures/launches/enc_dec_pos.cpu.stripped.pt2", {
            "message_key": "index-exceeds-constant-bound.bounded", "severity": Severity.INFO, "input": 0, "dim": 1}),
        Case("fixtures/launches/enc_dec_pos.cpu.stripped.pt2", {
            "message_key": "index-exceeds-constant-bound.unbounded", "severity": Severity.INFO, "input": 1, "dim": 1},
             exported="fixtures/launches/enc_dec_pos.ep.pt2"),
        Case("fixtures/stress/pkgs/item_arange.cpu.stripped.pt2", {
            "message_key": "index-exceeds-constant-bound.values", "input": 1}),
        # Left-padded positions `(arange(seq) + lengths - seq).clamp(0)` into a 64-row table: a length
        # of 65 aborts the process (an OpenMP region) where eager raises IndexError: an info.
        Case("fixtures/stranger8/lpad_pos.cpu.stripped.pt2", {
            "message_key": "index-exceeds-constant-bound.input-values", "severity": Severity.INFO, "input": 1,
            "dim": None}),
        # FSMT's sinusoidal table, a parameter it rebuilds longer in eager: past 64 tokens only the package raises.
        Case("fixtures/stranger14/fsmt.cpu.stripped.pt2", {
            "message_key": "index-exceeds-constant-bound.unenforced-max", "severity": Severity.WARNING, "input": 0},
             exported="fixtures/stranger14/fsmt.ep.pt2"),
        # Pix2Struct's row ids, its float patches' first column cast in the kernel, into a 64-row table.
        Case("fixtures/stranger13/pix2struct.cpu.stripped.pt2", {
            "message_key": "index-exceeds-constant-bound.cast-values", "severity": Severity.INFO, "input": 0}),
        # seq declared and compiled <= 512, but that max is checked only with AOTI_RUNTIME_CHECK_INPUTS=1.
        Case("fixtures/pos_embedding_capped.cpu.stripped.pt2", {
            "message_key": "index-exceeds-constant-bound.unenforced-max", "severity": Severity.INFO}),
        # GPT-2's check runs inside an OpenMP region: seq 129 aborts the process where eager raises.
        Case("fixtures/real/gpt2.cpu.stripped.pt2", {
            "message_key": "index-exceeds-constant-bound.unenforced-max", "severity": Severity.WARNING,
            "input": 0, "dim": 1}, exported="fixtures/real/gpt2.ep.pt2"),
        # RoBERTa's position ids, cumsum(ids != pad) + pad: the index is read from buffers whose
        # values the producing kernel and cumsum bound (buffers.py), [1, seq + 1] in a 130-row table.
        # On CPU the check aborts inside an OpenMP region (a warning: past the declared max); on CUDA
        # it asserts as eager's own lookup does (an info).
        *(Case(pkg, {"message_key": "index-exceeds-constant-bound.unenforced-max", "severity": severity,
                     "input": 0, "dim": 1}, exported="fixtures/stranger/roberta.ep.pt2")
          for pkg, severity in (("fixtures/stranger/roberta.cpu.stripped.pt2", Severity.WARNING),
                                ("fixtures/stranger/cuda/roberta.cuda.stripped.pt2", Severity.INFO))),
        # Packed positions, arange - cummax(where(ids == 0, arange, 0)): the running max keeps its
        # input's range [0, seq - 1], so an unpacked row of 65 tokens reads the 64-row table past its
        # end, inside the declared 128; the check aborts inside an OpenMP region (SIGABRT).
        Case("fixtures/stranger4/packed_pos.cpu.stripped.pt2", {
            "message_key": "index-exceeds-constant-bound.bounded", "severity": Severity.ERROR, "input": 0, "dim": 1},
             exported="fixtures/stranger4/packed_pos.ep.pt2"),
        # FastSpeech's frame count u0 = repeat_interleave(durations in [1, 8]) <= 8n: past 256 rows above n = 32.
        Case("fixtures/stranger12/length_reg.cpu.stripped.pt2", {"severity": Severity.WARNING, "input": 0, "dim": 0,
             "witness": "x.shape = (33, 32)"}, exported="fixtures/stranger12/length_reg.ep.pt2"),
        # Indices from topk (an extern call) and from argmax (a reduction the kernel stores and reads
        # back) index a 16-row table: in [0, n - 1], past it from n = 17.
        *(Case(f"fixtures/recall/{name}.cpu.stripped.pt2", {"message_key": "index-exceeds-constant-bound.unbounded",
                                                           "input": 0, "dim": 1}, exported=f"fixtures/recall/{name}.ep.pt2")
          for name in ("topk_table", "argmax_table")),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        def keep(a: Assertion) -> bool:
            return a.linked and a.bound_value is not None and bool(a.index_extent)

        # A check fused into many kernels: its extent is read, its dims' witnesses searched and its
        # words made once (None: no dim has an exceeding size).
        shared: dict[tuple, T.TableWords | None] = {}
        ranges = W.dim_ranges(model)
        read: dict[str, tuple] = {}
        for a in unique_assertions(model, keep):
            extent, bound_value = a.index_extent, a.bound_value
            if extent is None or bound_value is None:  # pragma: no cover - `keep` gives both; narrows the types
                continue
            if (known := read.get(extent)) is None:
                known = read[extent] = _extent_facts(model, extent, ranges)
            bounded, refs, high = known
            if bounded is not None:  # an unbacked size its op bounds by input sizes: read as that bound
                a, extent = V.bounded(model, a, *bounded), bounded[0]
            if refs is None and a.index_extent_value_inputs:
                finding = V.unbacked_extent(self, model, ctx, a, outcome_fields(model, a))
                if finding is not None:
                    yield finding
                continue
            if not refs:  # a constant extent: the values an op maps past the table, if it is one
                yield from (V.op_values(self, model, ctx, a, outcome_fields(model, a)) if refs == [] else ())
                continue
            if high is None:
                continue
            if high <= bound_value:
                # Within the compiled/declared ranges, but is that max checked by default?
                finding = E.unenforced_max(self, model, ctx, a, refs, outcome_fields(model, a))
                if finding is not None:
                    yield finding
                continue
            key = (extent, bound_value, tuple(refs))
            if key not in shared:
                choices = T.exceeding_dims(model, extent, bound_value, refs)
                shared[key] = T.table_words(self, model, extent, bound_value, choices) if choices else None
            if (words := shared[key]) is not None:
                yield T.table_finding(self, model, ctx, a, words, outcome_fields(model, a))
        # Positions computed from an input's values (kernels that fuse the same lookup repeat it).
        valued = unique_assertions(model, lambda a: a.linked and a.bound_value is not None and not a.index_extent
                                   and a.value_upper is not None)
        yield from V.all_input_values(self, model, ctx, ((a, outcome_fields(model, a)) for a in valued))

    def guard_condition(self, model: Model, finding: Finding) -> FailingCondition | None:
        """Positions past the table's rows; None for an extent the input's values set (no size rejects those)."""
        a = finding.subject
        if not isinstance(a, Assertion) or not a.index_extent or a.bound_value is None \
                or not W.expr_dims(model, a.index_extent):
            return None
        return FailingCondition("constant-table", f"({a.index_extent}) > {a.bound_value}",
                                f"positions up to {W.display_expr(model, a.index_extent)} - 1 exceed the constant "
                                f"table of {a.bound_value} rows in {a.kernel} (\"{a.message}\")")


def _extent_facts(model: Model, extent: str, ranges: dict[str, tuple[float, float | None]]) -> tuple:
    """(the bound an op gives an unbacked extent, or None; the input dims of the extent read; its
    highest value over `ranges`, None when not known): the same for every kernel holding the check."""
    bounded = sizes.bounded_extent(model, extent)
    read = bounded[0] if bounded is not None else extent
    refs = W.expr_dims(model, read)
    high = None
    if refs:
        try:
            _, high = intervals.evaluate_interval(read, ranges)
        except ValueError:
            high = None
    return bounded, refs, high


@register
class UnlinkedAssertion(UnlinkedAssertionWords, Rule):
    """An index assertion could not be linked to the model inputs.

    ## What it does
    Reports index-bound assertions the analyzer found in a kernel but could not follow to a model input or a
    constant: an unusual message form, a kernel never launched from `run_impl`, a bound argument that is not a
    size. The reason is part of the message.

    ## Why it matters
    The other rules say nothing about such an assertion, so a clean report does not mean that it
    cannot fail. It usually means the package was produced by a PyTorch version whose code
    generation the analyzer does not know yet.

    ## Example
    ```text
    AOTI_TORCH_CHECK(tmp3 < ks0 * 2, "index out of bounds: tmp3 < ks0 * 2")   # an unexpected form
    ```

    ## Fix
    Check the assertion by hand, and report the package so that the analyzer can learn its form.
    """

    name = "unlinked-assertion"
    code = "AOTI008"
    consequence = Consequence.SILENT
    user_ops = INDEX_OPS

    VALID = (Case("fixtures/gather_dyn.cpu.stripped.pt2"),
             # A kernel tiled over two axes checks `0 <= tl.broadcast_to(tmp15, [YBLOCK, XBLOCK]) < ks1`:
             # the broadcast index is linked as `tmp15` (topk's indices into the points).
             Case("fixtures/stranger10/cuda/ball_query.cuda.stripped.pt2"))
    INVALID = (
        # The bound renamed to a name that is no kernel parameter.
        Case("fixtures/gather_dyn.cpu.stripped.pt2", {"message_key": "unlinked-assertion",
                                                       "kernel": "cpp_fused_index_mul_0"},
             edit=(".kernel.cpp", rb"tmp7 < ks1", rb"tmp7 < zz1")),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        for a in unique_assertions(model, lambda a: not a.linked):
            reason = a.unlinked_reason or "no reason recorded"
            yield self.finding(
                model, ctx, self.MESSAGES["unlinked-assertion"].format(assertion=a.message, kernel=a.kernel, reason=reason),
                a.location, subject=a, kernel=a.kernel, fix=self.FIXES["unlinked-assertion"], chain=a.chain,
                key=f"unlinked:{a.message};kernel:{a.kernel}")
