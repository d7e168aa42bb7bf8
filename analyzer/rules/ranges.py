"""Input-range rules: dynamic dimensions whose compiled minimum, equality with another dimension or
declared range the package does not enforce at run time."""

from __future__ import annotations

from typing import Iterable

from .. import intervals
from .. import witness as W
from ..findings import Finding, Severity
from ..model import DimRef, Model, span
from . import Case, Context, Rule, register
from . import enforcement as E
from .bounds import model_location, range_step, where
from ..messages import CHAIN, ENFORCEMENT, FIXES, MESSAGES


@register
class UnenforcedLowerBound(Rule):
    """A dynamic dimension's compiled minimum is not checked at run time.

    ## What it does
    Finds dynamic input dimensions compiled for a minimum size of 1 or more (usually 2: `torch.export`
    specializes sizes 0 and 1 unless told otherwise) whose `check_input_N` range check runs only with
    `AOTI_RUNTIME_CHECK_INPUTS=1`, or that nothing checks at all. The finding lists the kernels whose
    launch arguments, assertions, reductions or divisions read the dimension. A dimension that must
    equal another one (`idx` and `src` of `index_add` share `m`) is reported once, at the dimension
    whose size the package reads.

    ## Why it matters
    Sizes below the minimum were never compiled for: the generated code may assume a size of at least
    2 (no broadcasting along it, a non-empty reduction, a valid index bound). Without the check such
    an input is not rejected; it runs through code that was specialized away from it, with results
    ranging from correct to wrong numbers to index assertions (see `empty-index-bound`).

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
    severity = Severity.WARNING

    VALID = (Case("fixtures/gather_static.cpu.stripped.pt2"),)  # no dynamic dim
    INVALID = (
        Case("fixtures/gather_dyn.cpu.stripped.pt2", {"message_key": "unenforced-lower-bound", "input": 0, "dim": 0,
                                                       "fix_key": "unenforced-lower-bound"}),
        Case("fixtures/stress/pkgs/bool_mask.cpu.stripped.pt2", {"message_key": "unenforced-lower-bound.no-kernels"}),
        # Issue 10 point 4: seq = 0 feeds an empty tensor to CPU flash attention (SIGFPE).
        Case("fixtures/real/bert.cpu.stripped.pt2", {"message_key": "unenforced-lower-bound.empty-calls", "input": 0,
                                                     "dim": 1}, exported="fixtures/real/bert.ep.pt2"),
        # Issue 10 point 5: `Expected u0 >= 2` in run_impl rejects n = 1 at every call.
        Case("fixtures/real/nonzero_size.cpu.stripped.pt2", {"message_key": "unenforced-lower-bound.rejected",
                                                             "severity": Severity.INFO, "input": 0, "dim": 0}),
        Case("fixtures/pos_embedding.cpu.stripped.pt2", {"message_key": "unenforced-lower-bound"}),
        # torch 2.6 records no range at all; check_lowerbound=False never checks the minimum.
        Case("fixtures/versions/2.6/gather_dyn.cpu.stripped.pt2", {"message_key": "unenforced-lower-bound", "input": 0,
                                                                    "dim": 0, "fix_key": "unenforced-lower-bound.none"}),
        Case("fixtures/versions/2.15/gather_nolb.cpu.stripped.pt2", {"message_key": "unenforced-lower-bound",
                                                                      "input": 0, "dim": 0,
                                                                      "fix_key": "unenforced-lower-bound.none"}),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        users = _kernels_by_symbol(model)
        for inp in model.inputs:
            for dim in inp.dims:
                if dim.value is not None or dim.min is None or dim.min < 1 or dim.enforced not in ("env", "none"):
                    continue
                ref = DimRef(inp.index, dim.dim)
                symbol = dim.symbol or W.symbol_of(model, ref)
                if symbol is None or _tied_to_another_dim(model, symbol, ref):
                    # No size symbol of its own: the package reads this dim through the dim it must
                    # equal (`assert_size_stride(arg6_1, {s17, 8L}, ...)`), which is reported.
                    continue
                kernels = users.get(symbol, [])
                below = E.below_min(model, ref, dim.min)  # a multiple of n for a dim read as n*k
                fields = dict(dim_display=inp.dim_display(dim.dim), where=where(ref), min=dim.min,
                              enforcement=ENFORCEMENT[dim.lower_unchecked or dim.enforced], below=below,
                              kernels=", ".join(kernels), check_expr=W.check_expr(model, ref))
                message = MESSAGES["unenforced-lower-bound" if kernels else "unenforced-lower-bound.no-kernels"]
                fix = FIXES["unenforced-lower-bound" if dim.enforced == "env" and not dim.lower_unchecked
                            else "unenforced-lower-bound.none"]
                sym = model.symbols.get(symbol) if symbol else None
                # Point at the check that is skipped (check_input_N), else at the symbol's binding.
                location = dim.check_location or (sym.location if sym is not None and sym.location is not None
                                                  else model_location(model))
                chain = [range_step(model, ref, dim, symbol)]
                chain += [CHAIN["read-by"].format(kernel=k) for k in kernels]
                # Sizes 0..below: an always-on assert that rejects them, extern calls fed empty tensors.
                text, extra, severity = E.lower_bound_facts(model, ref, below, fields) or \
                    (message.format(**fields), (), None)
                yield self.finding(
                    model, ctx, text, location, severity=severity,
                    input=ref.input, dim=ref.dim, symbol=symbol,
                    witness=W.witness(model, {ref: below}), fix=fix.format(**fields), chain=(*chain, *extra),
                    key=f"lower:in{ref.input}.d{ref.dim}>={dim.min}")


@register
class UnenforcedDimEquality(Rule):
    """An input dimension must equal another one, and that is checked only on request.

    ## What it does
    Finds input dimensions the package never reads itself because it was compiled to assume they
    equal another dimension (or an expression of one: `index_put`'s values and indices share `m`,
    `y` of shape `[n + 1, 8]` next to `x` of shape `[2 * n, 8]`). The only check is the wrapper's
    `assert_size_stride(...)`, which runs only with `AOTI_RUNTIME_CHECK_INPUTS=1`.

    ## Why it matters
    A caller that breaks the relation gets no error: kernels index the tensor with the other
    dimension's size, reading past its end (garbage values or a segmentation fault, with no message)
    or silently ignoring part of it. No index assertion guards this.

    ## Example
    ```python
    def forward(self, x, idx, v):        # x: [n, 8], idx: [m], v: [m, 8]
        return x.index_put((idx,), v)
    # v.shape = (2, 8) with idx.shape = (3,): the kernel reads v[2], past its end
    ```

    ## Fix
    Check the relation before calling the model (`assert v.shape[0] == idx.shape[0]`), or run with
    `AOTI_RUNTIME_CHECK_INPUTS=1` so that the package's own `assert_size_stride` rejects it.
    """

    name = "unenforced-dim-equality"
    code = "AOTI012"
    severity = Severity.WARNING

    VALID = (Case("fixtures/gather_dyn.cpu.stripped.pt2"),)  # x and idx are independent
    INVALID = (
        Case("fixtures/stress/pkgs/index_put.cpu.stripped.pt2", {"message_key": "unenforced-dim-equality", "input": 2,
                                                                  "dim": 0}),
        Case("fixtures/stress/pkgs/gather3d_dim0.cpu.stripped.pt2", {"input": 1, "dim": 2}),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        for inp in model.inputs:
            for dim in inp.dims:
                if not dim.tied_expr or dim.tie_enforced == "always":
                    continue
                ref = DimRef(inp.index, dim.dim)
                shapes = [list(shape) for shape in W.witness_shapes(model, {})]
                expected = shapes[ref.input][ref.dim]
                if expected < 1:
                    continue
                shapes[ref.input][ref.dim] = expected - 1
                fields = dict(dim_display=inp.dim_display(dim.dim), where=where(ref),
                              expr=W.display_expr(model, dim.tied_expr), enforcement=ENFORCEMENT[dim.tie_enforced],
                              check_expr=W.check_expr(model, ref))
                location = dim.tie_location or dim.check_location or model_location(model)
                yield self.finding(
                    model, ctx, MESSAGES["unenforced-dim-equality"].format(**fields), location,
                    input=ref.input, dim=ref.dim, symbol=dim.symbol,
                    witness=W.format_witness(model, [tuple(s) for s in shapes]),
                    fix=FIXES["unenforced-dim-equality"].format(**fields),
                    chain=(CHAIN["tie"].format(describe=model.describe(ref), expr=fields["expr"], tied_expr=dim.tied_expr),),
                    key=f"tie:in{ref.input}.d{ref.dim}=={W.normalize_expr(model, dim.tied_expr)}")


def _tied_to_another_dim(model: Model, symbol: str, ref: DimRef) -> bool:
    sym = model.symbols.get(symbol)
    return sym is not None and sym.source is not None and sym.source != ref


@register
class CompiledRangeNarrowerThanDeclared(Rule):
    """The package was compiled for fewer sizes than the exported program declares.

    ## What it does
    With an exported program (`--exported-program EP.pt2`, or one inside the package), compares each
    dynamic dimension's declared range (`Dim("n")` declares [0, inf) unless told otherwise) with the
    range the package was compiled for (`check_input_N`: usually `>= 2`, because `torch.export`
    specializes sizes 0 and 1). Reports the sizes the user allowed but the package never compiled for,
    and the kernels that read that dimension.

    ## Why it matters
    Callers read the exported contract, not the generated C++: they will send sizes 0 and 1 because the
    export said they may. The package was never compiled for them, and its check that would say so runs
    only with `AOTI_RUNTIME_CHECK_INPUTS=1`; without it, an empty batch reaches kernels whose index
    bounds become 0 (see `empty-index-bound`).

    ## Example
    ```python
    ep = torch.export.export(m, (x, idx), dynamic_shapes=({0: Dim("n")}, {0: Dim("m")}))  # n in [0, inf)
    torch._inductor.aoti_compile_and_package(ep)   # check_input_0: n >= 2
    ```

    ## Fix
    Make the contract and the package agree: reject (or pad) sizes below the compiled minimum before
    calling the model and document it, or run with `AOTI_RUNTIME_CHECK_INPUTS=1` so the package rejects
    them with a clear error. Declaring `Dim("n", min=2)` states the real contract.
    """

    name = "compiled-range-narrower-than-declared"
    code = "AOTI010"
    severity = Severity.WARNING

    VALID = (
        Case("fixtures/gather_dyn.cpu.stripped.pt2"),   # no exported program: nothing is declared
        Case("fixtures/gather_static.cpu.stripped.pt2", exported="fixtures/gather_static.ep.pt2"),
    )
    INVALID = (
        Case("fixtures/gather_dyn.cpu.stripped.pt2", {"message_key": "compiled-range-narrower-than-declared",
                                                       "input": 0, "dim": 0},
             exported="fixtures/gather_dyn.ep.pt2"),
        # batch declared [0, inf), compiled [2, 15]: 16 runs unchecked by default too.
        Case("fixtures/real/resnetish.cpu.stripped.pt2", {"message_key": "compiled-range-narrower-than-declared",
                                                          "input": 0, "dim": 0},
             exported="fixtures/real/resnetish.ep.pt2"),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        users = _kernels_by_symbol(model)
        for inp in model.inputs:
            for dim in inp.dims:
                if dim.value is not None or dim.declared_min is None or dim.min is None:
                    continue
                if dim.declared_min >= dim.min:
                    continue
                ref = DimRef(inp.index, dim.dim)
                symbol = dim.symbol or W.symbol_of(model, ref)
                if symbol is not None and _tied_to_another_dim(model, symbol, ref):
                    continue
                missing = list(range(dim.declared_min, dim.min))
                sizes_text = ", ".join(str(v) for v in missing)
                if dim.max is not None and (dim.declared_max is None or dim.declared_max > dim.max):
                    # ... and sizes above the compiled max that the declared range allows (issue 16).
                    sizes_text += MESSAGES["compiled-range-narrower-than-declared.above"].format(max=dim.max)
                kernels = users.get(symbol, []) if symbol else []
                fields = dict(dim_display=inp.dim_display(dim.dim), where=where(ref),
                              declared=span(dim.declared_min, dim.declared_max), compiled=span(dim.min, dim.max),
                              sizes=sizes_text, kernels=", ".join(kernels) or "the compiled code",
                              enforcement=ENFORCEMENT.get(dim.enforced, dim.enforced), min=dim.min,
                              check_expr=W.check_expr(model, ref))
                location = dim.check_location or model_location(model)
                chain = (range_step(model, ref, dim, symbol), *(CHAIN["read-by"].format(kernel=k) for k in kernels))
                yield self.finding(
                    model, ctx, MESSAGES["compiled-range-narrower-than-declared"].format(**fields), location,
                    input=ref.input, dim=ref.dim, symbol=symbol,
                    witness=W.witness(model, {ref: missing[0]}),
                    fix=FIXES["compiled-range-narrower-than-declared"].format(**fields), chain=chain,
                    key=f"declared:in{ref.input}.d{ref.dim}:{dim.declared_min}<{dim.min}")


def _kernels_by_symbol(model: Model) -> dict[str, list[str]]:
    """Root symbol -> generated kernels that read it (launch arguments resolved through
    `model.symbols`, assertion bounds and extents, reductions, divisions), in launch order."""
    out: dict[str, list[str]] = {}

    def add(kernel: str, expr: str | None) -> None:
        if not expr:
            return
        try:
            names = intervals.names(expr)
        except ValueError:
            return
        for name in names:
            sym = model.symbols.get(name)
            roots = {name}
            if sym is not None and sym.expr != name:
                try:
                    roots = intervals.names(sym.expr)
                except ValueError:
                    roots = set()
            for root in roots:
                out.setdefault(root, {})[kernel] = None

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
    roots = W.symbol_dims(model)
    return {k: list(v) for k, v in out.items() if k in roots}
