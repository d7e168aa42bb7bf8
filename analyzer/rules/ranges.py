"""Input-range rules: dynamic dimensions whose compiled minimum, equality with another dimension or
declared range the package does not enforce at run time."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Iterable

from ..expr import intervals
from ..query import guards as G, relations, sizes, witness as W
from ..core.findings import DimWitness, Finding, Location, Severity
from ..core.model import DimRef, Enforcement, Model, where
from ..core.dimtext import compiled_span, declared_span
from ..query.severity import Consequence
from . import Case, Context, Rule, register
from . import enforcement as E
from .bounds import model_location, range_step
from .words_inputs import CompiledRangeNarrowerThanDeclaredWords, UnenforcedDimEqualityWords, UnenforcedLowerBoundWords
from ..core.messages import Text, enforced, listed, read_by


@register
class UnenforcedLowerBound(UnenforcedLowerBoundWords, Rule):
    """A dynamic dimension's compiled minimum is not checked at run time.

    ## What it does
    Finds dynamic input dimensions compiled for a minimum size of 1 or more (usually 2: `torch.export`
    specializes sizes 0 and 1 unless told otherwise) whose `check_input_N` range check runs only with
    `AOTI_RUNTIME_CHECK_INPUTS=1`, or that nothing checks at all. One finding per model names all its
    inputs' dimensions, the kernels whose launch arguments, assertions, reductions or divisions read them,
    and the extern (ATen shim) calls that receive an empty tensor at size 0. Its witnesses are the
    largest size below each minimum and 0. A dimension that must equal another one (`idx` and `src`
    of `index_add` share `m`) is reported once, at the dimension whose size the package reads. With
    an exported program that declares sizes below the compiled minimum, the finding says so too
    (`compiled-range-narrower-than-declared` is then not reported for that dimension).

    ## Why it matters
    Sizes below the minimum were never compiled for: the generated code may assume a size of at least
    2 (no broadcasting along it, a non-empty reduction, a valid index bound). Without the check such
    an input is not rejected; it runs through code that was specialized away from it, with results
    ranging from correct to wrong numbers to index assertions (see `empty-index-bound`).

    Most models run sizes 0 and 1 exactly like eager, so this is an assumption the package does not
    check, an info, unless a witness reaches an operation known to fail there: size 0 of the sequence
    length that CPU flash attention (`_scaled_dot_product_flash_attention_for_cpu`) divides by kills
    the process with SIGFPE, an error (a warning when the exported program's declared range excludes
    0). The same holds for a length computed from the dimension (`t // 4 - 1` patches of a series
    are 0 at t = 4..7): the largest such size below the minimum is the witness, where no buffer of
    negative size is allocated before the attention (that raises first). Failures at those sizes
    that other rules name (an empty index bound, an empty reduction) are reported by them.

    ## Example
    ```python
    ep = torch.export.export(model, (x,), dynamic_shapes={"x": {0: Dim("n")}})   # compiled for n >= 2
    pkg = torch._inductor.aoti_compile_and_package(ep)
    runner(torch.randn(1, 8))   # n = 1: not checked unless AOTI_RUNTIME_CHECK_INPUTS=1
    ```

    ## Fix
    Run with `AOTI_RUNTIME_CHECK_INPUTS=1`, or check the size before calling the model and handle
    smaller inputs outside it. Declaring `Dim("n", min=0)` does not help: the package is still
    compiled (and checked) for `n >= 2`.
    """

    name = "unenforced-lower-bound"
    code = "AOTI002"
    consequence = Consequence.ASSUMED
    guarded = range_guarded = True   # the compiled minimum, which the contract's guard checks per dim

    VALID = (Case("fixtures/gather_static.cpu.stripped.pt2"),)  # no dynamic dim
    INVALID = (
        Case("fixtures/gather_dyn.cpu.stripped.pt2", {"message_key": "unenforced-lower-bound", "input": 0, "dim": 0,
                                                       "fix_key": "unenforced-lower-bound"}),
        # No generated kernel reads n: the ATen shim `index_Tensor` gets the empty tensor.
        Case("fixtures/stress/pkgs/bool_mask.cpu.stripped.pt2", {"message_key": "unenforced-lower-bound.empty-calls-only"}),
        # seq = 0 feeds an empty tensor to CPU flash attention (SIGFPE).
        Case("fixtures/real/bert.cpu.stripped.pt2", {"message_key": "unenforced-lower-bound.empty-calls", "input": 0,
                                                     "dim": 1}, exported="fixtures/real/bert.ep.pt2"),
        # t // 4 - 1 patches: 0 at t = 4..7, the flash attention's length (SIGFPE at 7; below 4 a
        # buffer of negative size raises first). Below the declared 12: a warning.
        Case("fixtures/stranger5/patchtst.cpu.stripped.pt2", {"message_key": "unenforced-lower-bound.sdpa-at", "input": 0,
                                                              "dim": 1, "severity": Severity.WARNING},
             exported="fixtures/stranger5/patchtst.ep.pt2"),
        # BLOOM: run_impl checks seq != 0 before dividing by it (`Integer floor division by zero`).
        Case("fixtures/stranger3/bloom.cpu.stripped.pt2", {"message_key": "unenforced-lower-bound.empty-calls",
                                                           "input": 0, "dim": 1}, exported="fixtures/stranger3/bloom.ep.pt2"),
        # `Expected u0 >= 2` in run_impl rejects n = 1 at every call.
        Case("fixtures/real/nonzero_size.cpu.stripped.pt2", {"message_key": "unenforced-lower-bound.rejected",
                                                             "severity": Severity.INFO, "input": 0, "dim": 0}),
        Case("fixtures/pos_embedding.cpu.stripped.pt2", {"message_key": "unenforced-lower-bound"}),
        Case("fixtures/real/resnetish_min2.cpu.stripped.pt2", {"severity": Severity.INFO, "input": 0, "dim": 0},
             exported="fixtures/real/resnetish_min2.ep.pt2"),   # batch declared [2, inf): 1 and 0 outside the contract
        # scores.shape[1] declared [3, inf) (its witness outside the contract); no op known to fail: an info.
        Case("fixtures/topk_index.cpu.stripped.pt2", {"severity": Severity.INFO, "input": 0, "dim": 0},
             exported="fixtures/topk_index.ep.pt2"),
        # torch 2.6 records no range at all; check_lowerbound=False never checks the minimum.
        Case("fixtures/versions/2.6/gather_dyn.cpu.stripped.pt2", {"message_key": "unenforced-lower-bound", "input": 0,
                                                                    "dim": 0, "fix_key": "unenforced-lower-bound.none"}),
        Case("fixtures/versions/2.15/gather_nolb.cpu.stripped.pt2", {"message_key": "unenforced-lower-bound", "input": 0,
                                                                      "dim": 0, "fix_key": "unenforced-lower-bound.none"}),
        # batch = 0 feeds oneDNN's LSTM layer an empty batch (SIGFPE, probed; eager returns).
        Case("fixtures/stranger18/encodec.cpu.stripped.pt2", {"severity": Severity.ERROR, "input": 0, "dim": 0},
             exported="fixtures/stranger18/encodec.ep.pt2"),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        users = _kernels_by_symbol(model)
        # One finding per model, every dim of every input in it: what the package assumes, an info,
        # unless a witness reaches an operation known to fail (CPU flash attention at size 0).
        parts = [part for inp in model.inputs for dim in inp.dims
                 if (part := _lower_part(model, inp, dim, users)) is not None]
        if not parts:
            return
        # Dims with a consequence first, then one whose size 0 fails run_impl's own check (a known
        # error, named in the headline); dims whose every witness is outside the declared contract last.
        parts.sort(key=lambda part: (part.effect is None, not part.message.fields.get("zero_check"),
                                     all(W.outside_declared(model, w) for w in part.witnesses)))
        first = parts[0]
        message = first.message
        if len(parts) > 1:
            others = self.MESSAGES["unenforced-lower-bound.also"].format(dims=", ".join(p.short for p in parts[1:]))
            # The headline says "< min" once: whether the other dims share that minimum.
            same = all(p.message.fields.get("min") == message.fields.get("min") for p in parts[1:])
            message = Text(message + others, message.key, {**message.fields, "more_dims": len(parts) - 1,
                                                            "more_same_min": same})
        witnesses = tuple(w for p in parts for w in p.witnesses)
        effects = [p for p in parts if p.effect is not None]
        consequence: Consequence | None = None
        op: str | None = None
        if effects and effects[0].effect is not None:
            consequence, op = effects[0].effect
        # The failing op's witnesses outside the contract: a warning. (`_contract` lowers the finding
        # itself when every witness is outside, so that is not said twice.)
        outside = bool(effects) and all(W.outside_declared(model, p.witnesses[0]) for p in effects) \
            and not all(W.outside_declared(model, w) for w in witnesses)
        yield self.finding(
            model, ctx, message, first.location, subject=model.known_dim(first.ref),
            consequence=consequence, op=op, outside_contract=outside,
            input=first.ref.input, dim=first.ref.dim, symbol=first.symbol,
            witnesses=witnesses, fix=_fix(parts),
            chain=tuple(line for p in parts for line in p.chain),
            dims=tuple(DimWitness(p.ref.input, p.ref.dim, p.below, p.witnesses[0]) for p in parts),
            key=";".join(p.key for p in parts))


def _fix(parts: list["_LowerPart"]) -> Text:
    """The first dim's fix, and the checks of the input's other dims."""
    if len(parts) == 1:
        return parts[0].fix
    return parts[0].fix + UnenforcedLowerBound.FIXES["unenforced-lower-bound.also"].format(
        checks=" and ".join(f"{p.check} >= {p.min}" for p in parts[1:]))


@dataclass(frozen=True)
class _LowerPart:
    """What `unenforced-lower-bound` says about one dim of an input."""

    ref: DimRef
    symbol: str
    message: Text
    short: str            # the dim in the message of a finding led by another dim
    fix: Text
    location: Location
    chain: tuple[str, ...]
    effect: tuple[Consequence, str] | None   # what a witness reaches that fails, and the op (E.lower_bound_facts)
    # Below the minimum (the primary), 0, above a declared-but-not-compiled max; with an effect, the
    # size that reaches it (0) first.
    witnesses: tuple[str, ...]
    key: str
    check: str            # `x.shape[1]`, for the fix
    min: int
    below: int            # the primary witness's size


def _lower_symbol(model: Model, inp, dim) -> str | None:
    """The size symbol of a dim whose compiled minimum (>= 1) only the variable or nothing checks;
    None when the dim is not `unenforced-lower-bound`'s."""
    if dim.value is not None or dim.min is None or dim.min < 1 or dim.enforced is Enforcement.ALWAYS:
        return None
    ref = DimRef(inp.index, dim.dim)
    symbol = dim.symbol or W.symbol_of(model, ref)
    if symbol is None or _tied_to_another_dim(model, symbol, ref):
        # No size symbol of its own: the package reads this dim through the dim it must equal
        # (`assert_size_stride(arg6_1, {s17, 8L}, ...)`), which is reported.
        return None
    return symbol


def _declared_gap(dim) -> tuple[list[int], bool]:
    """Sizes the exported program declares but the package was not compiled for: those below the
    compiled minimum, and whether any above the compiled maximum (the 32-bit indexing limit of
    CUDA codegen is not a maximum). A dim with no declared range (no exported program) declares no
    minimum, and no maximum either: torch.export's `Dim` is unbounded unless told otherwise."""
    if dim.value is not None or dim.min is None:
        return [], False
    above = dim.max is not None and dim.max < sizes.INT32_MAX and (dim.declared_max is None or dim.declared_max > dim.max)
    if dim.declared_min is None:
        return [], above
    return list(range(dim.declared_min, dim.min)), above


def _sizes_text(below: list[int], above: bool, maximum: int | None) -> str:
    text = ", ".join(str(v) for v in below)
    if above:
        text += CompiledRangeNarrowerThanDeclared.MESSAGES["compiled-range-narrower-than-declared.above"].format(max=maximum)
    return text


def _lower_part(model: Model, inp, dim, users: dict[str, list[str]]) -> _LowerPart | None:
    symbol = _lower_symbol(model, inp, dim)
    if symbol is None:
        return None
    ref = DimRef(inp.index, dim.dim)
    kernels = users.get(symbol, [])
    below = E.below_min(model, ref, dim.min)  # a multiple of n for a dim read as n*k
    zero = below > 0 and sizes.can_be_zero(dim)
    fields = dict(dim_display=inp.dim_display(dim.dim), where=where(ref), min=dim.min,
                  enforcement=enforced("sentence", dim.lower_unchecked or dim.enforced), below=below,
                  kernels=listed(kernels), check_expr=W.check_expr(model, ref))
    fields["reach"] = UnenforcedLowerBound.MESSAGES["unenforced-lower-bound.reach-zero" if zero else "unenforced-lower-bound.reach"].format(
        below=below)
    message = UnenforcedLowerBound.MESSAGES["unenforced-lower-bound" if kernels else "unenforced-lower-bound.no-kernels"]
    fix = UnenforcedLowerBound.FIXES["unenforced-lower-bound" if dim.enforced is Enforcement.ENV and not dim.lower_unchecked
                else "unenforced-lower-bound.none"]
    sym = model.symbols.get(symbol)
    # Point at the check that is skipped (check_input_N), else at the symbol's binding.
    location = dim.check_location or (sym.location if sym is not None and sym.location is not None
                                      else model_location(model))
    chain = [range_step(model, ref, dim, symbol)]
    chain += read_by(kernels)
    # Sizes 0..below: an always-on assert that rejects them, extern calls fed empty tensors.
    text, extra, effect, at = E.lower_bound_facts(model, ref, below, fields) or (message.format(**fields), (), None, below)
    # compiled-range-narrower-than-declared on the same dim is said here (one finding per dim).
    declared_below, above = _declared_gap(dim)
    short = UnenforcedLowerBound.MESSAGES["unenforced-lower-bound.dim"].format(**fields)
    if declared_below:
        declared = dict(declared=declared_span(dim),
                        sizes=_sizes_text(declared_below, above, dim.max))
        text = Text(text + UnenforcedLowerBound.MESSAGES["unenforced-lower-bound.declared"].format(**declared), text.key)
        # Led by another dim, this dim's gap is said in its own words too (not only by a witness).
        short = UnenforcedLowerBound.MESSAGES["unenforced-lower-bound.dim-declared"].format(**fields, **declared)
    # Witnesses: the largest size below the minimum, then 0 where it reaches the kernels (extern calls
    # given an empty tensor die there), then max+1 of a declared range above it.
    witness_sizes = [below] + ([0] if zero else []) + ([dim.max + 1] if above and declared_below else [])
    if effect is not None:  # the size that reaches the failing op leads
        if at in witness_sizes:
            witness_sizes.remove(at)
        witness_sizes.insert(0, at)
    # The other dims where export's guards hold: the witness then breaks only this dim's minimum.
    base = {r: v for r, v in G.base_sizes(model).items() if r != ref}
    return _LowerPart(ref, symbol, text, short,
                      fix.format(**fields), location, (*chain, *extra), effect,
                      tuple(W.witness(model, {**base, ref: size}) for size in witness_sizes),
                      f"lower:in{ref.input}.d{ref.dim}>={dim.min}",
                      fields["check_expr"], dim.min, witness_sizes[0])


@register
class UnenforcedDimEquality(UnenforcedDimEqualityWords, Rule):
    """An input dimension must equal another one, and that is checked only on request.

    ## What it does
    Finds input dimensions the package never reads itself because it was compiled to assume they
    equal another dimension (or an expression of one: `index_put`'s values and indices share `m`,
    `y` of shape `[n + 1, 8]` next to `x` of shape `[2 * n, 8]`). The only check is the wrapper's
    `assert_size_stride(...)`, which runs only with `AOTI_RUNTIME_CHECK_INPUTS=1`; wrappers without it
    (torch 2.11 CUDA, CPU before 2.13) check nothing: there the exported program's shared `Dim` tells.

    ## Why it matters
    A caller that breaks the relation gets no error: kernels index the tensor with the other
    dimension's size, reading past its end (garbage values or a segmentation fault, with no message)
    or silently ignoring part of it. No index assertion guards this. Such an input is one eager
    PyTorch rejects too (the dims must be equal), so the finding is an info: the caller's mistake,
    which nothing in the package turns into an error.

    ## Example
    ```python
    def forward(self, x, idx, v):        # x: [n, 8], idx: [m], v: [m, 8]
        return x.index_put((idx,), v)
    # v.shape = (2, 8) with idx.shape = (3,): the kernel reads v[2], past its end
    ```

    ## Fix
    Check the relation before calling the model (`assert v.shape[0] == idx.shape[0]`), or run with
    `AOTI_RUNTIME_CHECK_INPUTS=1` so that the package's own `assert_size_stride` (if any) rejects it.
    """

    name = "unenforced-dim-equality"
    code = "AOTI012"
    consequence = Consequence.FAILS
    op = "kernels indexing the input with the other dim's size"
    eager_rejects = True    # every witness breaks the tie, which eager checks

    VALID = (Case("fixtures/gather_dyn.cpu.stripped.pt2"),)  # x and idx are independent
    INVALID = (
        Case("fixtures/stress/pkgs/index_put.cpu.stripped.pt2", {"message_key": "unenforced-dim-equality", "input": 2, "dim": 0}),
        # torch 2.11 CUDA (and CPU before 2.13) write no assert_size_stride: one Dim, checked nowhere.
        Case("fixtures/stranger10/cuda/ball_query.cuda.stripped.pt2", {"input": 1, "dim": 1, "fix": (
            "check `feats.shape[1] == xyz.shape[1]` before calling the model: the package has no check of it, not "
            "even with AOTI_RUNTIME_CHECK_INPUTS=1")}, exported="fixtures/stranger10/ball_query.ep.pt2"),
        Case("fixtures/stress/pkgs/gather3d_dim0.cpu.stripped.pt2", {"input": 1, "dim": 2}),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        for inp in model.inputs:
            for dim in inp.dims:
                if not dim.tied_expr or dim.tie_enforced is Enforcement.ALWAYS:
                    continue
                ref = DimRef(inp.index, dim.dim)
                if E.read_as_in_eager(model, ref, dim.tied_expr):
                    continue
                shapes = [list(shape) for shape in W.witness_shapes(model, {})]
                expected = shapes[ref.input][ref.dim]
                if expected < 1:
                    continue
                shapes[ref.input][ref.dim] = expected - 1
                fields = dict(dim_display=inp.dim_display(dim.dim), where=where(ref), check_expr=W.check_expr(model, ref),
                              expr=W.display_expr(model, dim.tied_expr), enforcement=enforced("sentence", dim.tie_enforced))
                location = dim.tie_location or dim.check_location or model_location(model)
                yield self.finding(
                    model, ctx, self.MESSAGES["unenforced-dim-equality"].format(**fields), location, subject=dim,
                    input=ref.input, dim=ref.dim, symbol=dim.symbol,
                    witness=W.format_witness(model, [tuple(s) for s in shapes]),
                    fix=self.FIXES["unenforced-dim-equality" + (".none" * (dim.tie_enforced == Enforcement.NONE))].format(**fields),
                    chain=(self.CHAIN["unenforced-dim-equality"].format(describe=model.describe(ref), expr=fields["expr"], tied_expr=dim.tied_expr),),
                    key=f"tie:in{ref.input}.d{ref.dim}=={W.normalize_expr(model, dim.tied_expr)}")


def _tied_to_another_dim(model: Model, symbol: str, ref: DimRef) -> bool:
    sym = model.symbols.get(symbol)
    return sym is not None and sym.source is not None and sym.source != ref


@register
class CompiledRangeNarrowerThanDeclared(CompiledRangeNarrowerThanDeclaredWords, Rule):
    """The package was compiled for fewer sizes than the exported program declares.

    ## What it does
    With an exported program (`--exported-program EP.pt2`, or one inside the package), compares each
    dynamic dimension's declared range (`Dim("n")` declares [0, inf) unless told otherwise) with the
    range the package was compiled for (`check_input_N`: usually `>= 2`, because `torch.export`
    specializes sizes 0 and 1). Reports the sizes the user allowed but the package never compiled for,
    below the compiled minimum and above the compiled maximum, and the kernels that read that
    dimension; a witness for each end. A compiled maximum (`torch._check(n <= 15)` in the model, or
    one Inductor chose) that nothing declares, with no exported program or one without a maximum
    for the dimension, is reported too (callers cannot know of that maximum). Sizes below the minimum of a dimension that
    `unenforced-lower-bound` reports are said in its finding instead, when both rules run.

    ## Why it matters
    Callers read the exported contract, not the generated C++: they will send sizes 0 and 1 because the
    export said they may. The package was never compiled for them, and its check that would say so runs
    only with `AOTI_RUNTIME_CHECK_INPUTS=1`; without it, an empty batch reaches kernels whose index
    bounds become 0 (see `empty-index-bound`). What those sizes do is what the rules that name an
    operation report; this finding, the gap between the two contracts, is an info.

    ## Example
    ```python
    ep = torch.export.export(m, (x, idx), dynamic_shapes=({0: Dim("n")}, {0: Dim("m")}))  # n in [0, inf)
    torch._inductor.aoti_compile_and_package(ep)   # check_input_0: n >= 2
    ```

    ## Fix
    Make the contract and the package agree: reject (or pad) sizes outside the compiled range before
    calling the model and document it, or run with `AOTI_RUNTIME_CHECK_INPUTS=1` so the package rejects
    them with a clear error. Declaring `Dim("n", min=2)` states the real contract.
    """

    name = "compiled-range-narrower-than-declared"
    code = "AOTI010"
    consequence = Consequence.ASSUMED

    VALID = (
        Case("fixtures/gather_dyn.cpu.stripped.pt2"),   # no exported program: nothing is declared
        Case("fixtures/gather_static.cpu.stripped.pt2", exported="fixtures/gather_static.ep.pt2"),
        # torch._check(n <= 15) under Dim.DYNAMIC: the exported program declares [2, 15] itself.
        Case("fixtures/launches/narrow_max.cpu.stripped.pt2", exported="fixtures/launches/narrow_max.ep.pt2"),
    )
    INVALID = (
        Case("fixtures/gather_dyn.cpu.stripped.pt2", {"message_key": "compiled-range-narrower-than-declared",
                                                       "input": 0, "dim": 0},
             exported="fixtures/gather_dyn.ep.pt2"),
        # batch declared [0, inf), compiled [2, 15]: 16 runs unchecked by default too.
        Case("fixtures/real/resnetish.cpu.stripped.pt2", {"message_key": "compiled-range-narrower-than-declared",
                                                          "input": 0, "dim": 0},
             exported="fixtures/real/resnetish.ep.pt2"),
        # batch declared [2, inf), compiled [2, 15]: the finding is about the sizes above 15 only.
        Case("fixtures/real/resnetish_min2.cpu.stripped.pt2",
             {"message_key": "compiled-range-narrower-than-declared.above-only", "input": 0, "dim": 0},
             exported="fixtures/real/resnetish_min2.ep.pt2"),
        # The same package without it: compiled for [2, 15] and no declared max is known (info).
        Case("fixtures/launches/narrow_max.cpu.stripped.pt2", {
            "message_key": "compiled-range-narrower-than-declared.undeclared-max", "severity": Severity.INFO,
            "input": 0, "dim": 0}),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        users = _kernels_by_symbol(model)
        for inp in model.inputs:
            for dim in inp.dims:
                below, above = _declared_gap(dim)
                ref = DimRef(inp.index, dim.dim)
                # A dim declared n*k (analyzer.query.relations) allows only multiples: 8 below 16, not 9..15.
                rel = relations.relation(model, ref)
                below = [v for v in below if rel is None or rel.fits(v)]
                if not below and not above:
                    continue
                symbol = dim.symbol or W.symbol_of(model, ref)
                if symbol is not None and _tied_to_another_dim(model, symbol, ref) or symbol is None and dim.tied_expr:
                    continue  # the dim it must equal is reported
                if below and ctx.runs(UnenforcedLowerBound.code) and _lower_symbol(model, inp, dim):
                    # The sizes below are said by unenforced-lower-bound's finding on this input; those
                    # above the compiled max (declared, or nothing declared) are this rule's still.
                    if not above:
                        continue
                    below = []
                kernels = users.get(symbol, []) if symbol else []
                fields = dict(dim_display=inp.dim_display(dim.dim), where=where(ref),
                              declared=declared_span(dim), compiled=compiled_span(dim),
                              sizes=_sizes_text(below, above, dim.max), kernels=listed(kernels) or "the compiled code",
                              enforcement=enforced("sentence", dim.enforced), min=dim.min, max=dim.max,
                              check_expr=W.check_expr(model, ref))
                location = dim.check_location or model_location(model)
                chain = (range_step(model, ref, dim, symbol), *read_by(kernels))
                # Below the minimum first; an above-max-only gap has max+1. Nothing declared for the
                # dim: its compiled max is all a caller could learn.
                undeclared = dim.declared_min is None and dim.declared_max is None
                key = "compiled-range-narrower-than-declared" + ("" if below else ".undeclared-max" if undeclared
                                                                 else ".above-only")
                over = [dim.max + 1] if above and dim.max is not None else []
                yield self.finding(
                    model, ctx, self.MESSAGES[key].format(**fields), location, subject=dim,
                    input=ref.input, dim=ref.dim, symbol=symbol,
                    witnesses=tuple(W.witness(model, {ref: size}) for size in [*below, *over]),
                    fix=self.FIXES[key].format(**fields), chain=chain,
                    key=f"declared:in{ref.input}.d{ref.dim}:{dim.declared_min}<{dim.min}" if below
                    else f"declared:in{ref.input}.d{ref.dim}:{dim.max}<{declared_span(dim)}")


_USERS: list[tuple[weakref.ref, dict[str, list[str]]]] = []


def _kernels_by_symbol(model: Model) -> dict[str, list[str]]:
    """Root symbol -> generated kernels that read it (launch arguments resolved through
    `model.symbols`, assertion bounds and extents, reductions, divisions), in launch order.
    Asked by AOTI002 and AOTI010 of the same model, one after the other: the last answer is kept."""
    if _USERS and _USERS[0][0]() is model:
        return _USERS[0][1]
    users = _users(model)
    _USERS[:] = [(weakref.ref(model), users)]
    return users


def _users(model: Model) -> dict[str, list[str]]:
    out: dict[str, dict[str, None]] = {}  # root symbol -> its kernels, in order (an ordered set)
    # Expression -> its root symbols, in order (thousands of launches share a few; most arguments,
    # buffers and streams, have none).
    seen: dict[str, list[str]] = {}
    symbols = W.symbol_dims(model)

    def add(kernel: str, expr: str | None) -> None:
        if not expr:
            return
        found = seen.get(expr)
        if found is None:
            found = seen[expr] = [root for root in _roots(expr) if root in symbols]
        for root in found:
            out.setdefault(root, {})[kernel] = None

    def _roots(expr: str) -> list[str]:
        try:
            names = intervals.names(expr)
        except ValueError:
            return []
        found: list[str] = []
        for name in names:
            sym = model.symbols.get(name)
            roots: frozenset[str] = frozenset((name,))
            if sym is not None and sym.expr != name:
                try:
                    roots = intervals.names(sym.expr)
                except ValueError:
                    roots = frozenset()
            found.extend(roots)
        return found

    for launch in model.launches:
        if launch.extern:
            continue
        for arg in launch.args:
            add(launch.kernel, arg)
    for a in model.assertions:
        add(a.kernel, a.bound_expr)
        add(a.kernel, a.index_extent)
    for d in model.divisions:
        if not d.in_wrapper:
            add(d.kernel, d.divisor_expr)
    for r in model.reductions:
        add(r.kernel, r.extent_expr)
    return {k: list(v) for k, v in out.items()}
