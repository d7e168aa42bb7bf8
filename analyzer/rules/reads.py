"""Reads from constants of static size at an index that grows with an input size."""

from __future__ import annotations

from typing import Iterable

from ..query import sizes, witness as W
from ..core.findings import DimWitness, Finding, Severity
from ..core.model import Assertion, Model, where
from ..query.severity import Consequence
from . import Context, Rule, register
from . import Case, enforcement as E
from .bounds import outcome_fields
from .words_kernels import ReadPastConstantWords
from ..expr.values import VALUE


def _guarding(model: Model) -> dict[str | None, set]:
    """Kernel -> the sizes its constant-bound index assertions range over: such an assertion in the
    kernel of a read over the same sizes fails first (GPT-2's `tmp6 < 128L` before
    `in_ptr2[x2 + 64*x1]`), and `index-exceeds-constant-bound` reports it. (Asked per read, a scan
    of every assertion was quadratic in the kernels: 20 M steps for 6,000 kernels.)"""
    out: dict[str | None, set] = {}
    for a in model.assertions:
        if a.bound_value is not None and a.index_extent:
            out.setdefault(a.kernel, set()).update(a.index_extent_sources)
        elif a.bound_value is not None and a.value_upper and VALUE not in a.value_upper:
            # A position from data kept below a size (`ids % m` against 64 rows) is checked there too.
            out.setdefault(a.kernel, set()).update(W.expr_dims(model, a.value_upper) or ())
    return out


def _checking(model: Model) -> dict[tuple[str, str], Assertion]:
    """(kernel, pointer) -> the first index assertion of that kernel whose index is loaded through
    that pointer: a read past a constant's end feeds it garbage (SqueezeBERT's `tmp7 < 64L` on
    `in_ptr2[x1]`), which then aborts or raises rather than returning quietly."""
    out: dict[tuple[str, str], Assertion] = {}
    for a in model.assertions:
        for pointer in a.index_pointers:
            out.setdefault((a.kernel, pointer), a)
    return out


@register
class ReadPastConstant(ReadPastConstantWords, Rule):
    """A kernel reads a constant of static size at an index that grows with an input size.

    ## What it does
    Finds loads from constants, parameters and buffers of static size (`constants_info_[i].shape`)
    whose index comes from iteration ranges over a dynamic input size, not from data, so that no
    index assertion guards it: BERT's `position_ids` buffer (128 entries) read as `in_ptr2[x1]`
    with `x1` over `[0, seq)`. The value-range engine gives the largest index; when the sizes that
    reach the kernel by default can take it past the constant's element count, the smallest such size
    is the witness, one per dim that alone can do so (MobileViT's patch grid over height and width).
    An error when nothing bounds the size at run time, a warning when a max exists
    but only `AOTI_RUNTIME_CHECK_INPUTS=1` checks it. A read in a kernel whose constant-bound index
    assertion over the same size fails first is left to `index-exceeds-constant-bound`. Views of a
    constant that run_impl passes to an ATen call are read too (`reinterpret_tensor_wrapper(pe, 2,
    sizes, strides, offset)` into `mm_out`: Wav2Vec2-Conformer's relative positions), up to the view's
    last element, `offset + sum((size - 1) * stride)`.

    ## Why it matters
    The read runs past the end of the buffer: the package returns a result computed from whatever
    lies in memory after it (or crashes), where eager PyTorch raises. Nothing is printed. Where
    the kernel checks the values it read as an index (position ids into the position table), the
    garbage reaches that check: out of range it aborts the process on CPU (a device-side assert on
    CUDA), in range the result is wrong; the finding says which check.

    ## Example
    ```python
    model = BertModel(BertConfig(max_position_embeddings=128, ...))
    ep = torch.export.export(model, (ids,), dynamic_shapes={"input_ids": {1: Dim("seq", max=128)}})
    # seq = 129: the package returns a [2, 129, 64] result; eager raises
    # "The expanded size of the tensor (129) must match the existing size (128)"
    ```

    ## Fix
    Run with `AOTI_RUNTIME_CHECK_INPUTS=1` (when the package was compiled with the real max), or
    reject longer inputs before calling the model; declare the limit when exporting
    (`Dim("seq", max=128)`).
    """

    name = "read-past-constant"
    code = "AOTI013"
    consequence = Consequence.FAILS
    op = "the kernel's read of the constant"
    VALID = (Case("fixtures/real/vit.cpu.stripped.pt2", exported="fixtures/real/vit.ep.pt2"),
             # GPT-2's table read is guarded by `tmp6 < 128L` (index-exceeds-constant-bound reports it).
             Case("fixtures/real/gpt2.cpu.stripped.pt2", exported="fixtures/real/gpt2.ep.pt2"))
    # BERT's read of `position_ids` past its 128 entries feeds the embedding's `tmp7 < 128L`: probed
    # at seq 129 the bytes there passed it (wrong values); SqueezeBERT's at 65 aborted the process.
    INVALID = (  # Wav2Vec2-Conformer's `pe` viewed past its 127 rows above 1319 samples: 1320 wrong.
               Case("fixtures/stranger12/w2v2_conformer.cpu.stripped.pt2",
                    {"message_key": "read-past-constant.view", "input": 0, "dim": 1, "severity": Severity.INFO},
                    exported="fixtures/stranger12/w2v2_conformer.ep.pt2"),
               Case("fixtures/real/bert.cpu.stripped.pt2", {"message_key": "read-past-constant.checked", "input": 0, "dim": 1,
                                                            "severity": Severity.WARNING},
                    exported="fixtures/real/bert.ep.pt2"),
               # ELECTRA's check runs outside any OpenMP region: a failure raises (65 returned wrong values).
               Case("fixtures/stranger10/electra.cpu.stripped.pt2",
                    {"message_key": "read-past-constant.checked", "input": 0, "dim": 1,
                     "message": "`x.shape[1]` > 64 reads past `inner.embeddings.position_ids`: wrong values or a "
                                "failed index check"}, exported="fixtures/stranger10/electra.ep.pt2"),
               # `table.as_strided((len, 16), (16, 1))` adds no guard: the compiled and declared ranges
               # themselves let the read pass the 128 rows, an error where nothing bounds the size
               # (x: Dim("n")), a warning where a max exists (y: Dim("m", max=256)); both probed.
               Case("fixtures/strided_table.cpu.stripped.pt2",
                    {"message_key": "read-past-constant", "input": 0, "dim": 0, "severity": Severity.ERROR,
                     "witness": "x.shape = (129, 16), y.shape = (3, 16)"},
                    exported="fixtures/strided_table.ep.pt2"),
               Case("fixtures/strided_table.cpu.stripped.pt2",
                    {"message_key": "read-past-constant", "input": 1, "dim": 0, "severity": Severity.WARNING,
                     "witness": "x.shape = (3, 16), y.shape = (129, 16)"},
                    exported="fixtures/strided_table.ep.pt2"))

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        seen: set[tuple] = set()
        guarding, checking = _guarding(model), _checking(model)
        for read in model.constant_reads:
            limit = read.numel - 1
            if guarding.get(read.kernel, set()) & set(read.sources) \
                    or not E.exceeds_at_runtime(model, read.index_max, limit):
                continue
            ident = (read.kernel, read.constant, W.normalize_expr(model, read.index_max))
            if ident in seen:
                continue
            seen.add(ident)
            refs = list(read.sources)
            # Every dim whose size alone takes the index past the constant (MobileViT's patch grid
            # over h and w), each with its own smallest size; the first leads.
            choices = [(r, n) for r in refs if (n := W.smallest_exceeding(model, read.index_max, r, limit,
                                                                          beyond_max=True)) is not None]
            if not choices:
                continue
            ref, size = choices[0]
            contract = E.exceeds_declared(model, read.index_max, limit)
            if contract:
                # The compiled or declared range itself allows it: as index-exceeds-constant-bound.
                outside = not sizes.unbounded(model.known_dim(ref))
            else:  # past the max: weighed by how it is declared and enforced
                outside, _ = E.past_max_outside_contract(model, refs, ctx.runtime_checks)
            table = E.constant_label(model, read.constant)
            assignment = {ref: size}
            value = W.evaluate_at(model, read.index_max, assignment)
            fields = dict(kernel=read.kernel, table=table, index_max=W.display_expr(model, read.index_max),
                          numel=read.numel, dim_display=W.dim_display(model, ref), where=where(ref),
                          limit=size - 1, max_text=E.max_text(model, ref), check_expr=W.check_expr(model, ref))
            check = checking.get((read.kernel, read.pointer))
            key = "read-past-constant.view" if read.view else \
                "read-past-constant" if check is None else "read-past-constant.checked"
            if check is not None:
                outcome = outcome_fields(model, check)
                # An abort (an OpenMP region) is what a user sees; elsewhere a raise or a wrong value.
                verdict = "check-aborts" if outcome["outcome"] == "cpu.abort" else "check-fails"
                fields.update(assertion=check.message, effect=outcome["effect"],
                              check_outcome=self.MESSAGES[f"read-past-constant.{verdict}"].format())
            chain = (self.CHAIN["read-past-constant"].format(pointer=read.pointer, kernel=read.kernel, table=table, index_max=fields["index_max"],
                                  value="?" if value is None else int(value),
                                  assignment=W.assignment_text(model, assignment), numel=read.numel),)
            yield self.finding(
                model, ctx, self.MESSAGES[key].format(**fields), read.location, subject=read,
                outside_contract=outside, contract=contract,
                kernel=read.kernel, input=ref.input, dim=ref.dim, symbol=W.symbol_of(model, ref),
                witness=W.witness(model, assignment), fix=self.FIXES["read-past-constant"].format(**fields), chain=chain,
                witnesses=tuple(W.witness(model, {r: n}) for r, n in choices) if len(choices) > 1 else (),
                dims=tuple(DimWitness(r.input, r.dim, n, W.witness(model, {r: n})) for r, n in choices)
                if len(choices) > 1 else (),
                key=f"read:{read.constant}:{W.normalize_expr(model, read.index_max)}>{limit};kernel:{read.kernel}")
