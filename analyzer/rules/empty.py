"""Empty-tensor rules: reductions and divisions over a dimension the package accepts as 0."""

from __future__ import annotations

from typing import Iterable

from ..query import externs, sizes, witness as W, zeros as Z
from ..core.findings import DimWitness, Finding, Severity
from ..core.model import DimRef, Division, Model, Reduction, where
from ..core.dimtext import range_text
from ..query.severity import Consequence
from ..query.source import DIVISION_OPS, REDUCTION_OPS, kernel_ops
from . import Case, Context, FailingCondition, Rule, register
from .bounds import env_clause, range_step as _range_step
from .enforcement import EAGER, negative_extern_arg
from .words_kernels import DivisionByDynamicSizeWords, EmptyReductionWords
from ..core.messages import IDENTITIES


def _first_empty(model: Model, seen: set, ident: tuple, expr: str | None, sources: tuple[DimRef, ...],
                 space: str | None = None, returned: bool = True):
    """(choice, first dim, its Dim, how eager rejects the choice or None) when `expr` can be 0 at
    run time while the kernel's own iteration space `space` is not (else the line never runs) and
    no index assertion fails first under that choice (the call would stop there); once per `ident`.
    A choice no extern call rejects is preferred: one that a convolution rejects raises eager's own
    error in the package too, so nothing silent comes of it (the caller's input, said so).
    `returned`: the consequence is a value the call returns (NaN, an identity), which a buffer of
    negative size elsewhere in the call (PatchTST's `t // 4 - 1` patches at t = 0) never lets out:
    its allocation raises `Trying to create tensor with negative dimension`."""
    if ident in seen:
        return None

    def raises(c) -> bool:
        return returned and negative_extern_arg(model, c) is not None

    choice = W.zero_assignment(model, expr, sources, space,
                               accept=lambda c: externs.rejecting_call(model, c) is None and not raises(c))
    rejected = None
    if choice is None:
        choice = W.zero_assignment(model, expr, sources, space)
        rejected = externs.rejecting_call(model, choice) if choice is not None else None
    if choice is None or W.tripped_assertion(model, choice) is not None or rejected is None and raises(choice):
        return None
    seen.add(ident)
    ref = min(choice)
    how = None if rejected is None else EAGER[rejected.op].format(padded=rejected.padded, kernel=rejected.kernel)
    return choice, ref, model.dim(ref), how


_FLOAT_DIVISION_OPS = DIVISION_OPS - {"floor_divide", "remainder", "fmod"}


@register
class DivisionByDynamicSize(DivisionByDynamicSizeWords, Rule):
    """A division by a size that the package accepts as 0.

    ## What it does
    Finds kernels that divide by a dynamic input size (a `mean` divides the sum by the number of
    elements) and integer `/` or `%` by a size in the wrapper's size arithmetic, where that size is 0
    for an empty input and nothing at run time rejects the empty input (the range checks run only
    with `AOTI_RUNTIME_CHECK_INPUTS=1`, or the checked range includes 0). When the same empty input
    also trips an index assertion (`empty-index-bound`), or gives another tensor a negative size
    (`t // 4 - 1` patches of a series at t = 0: its allocation raises), the call fails there and the
    division is not reported. Nor is a division that the empty input never reaches: when the same size also
    empties the kernel's own iteration space (its `xnumel`/`ynumel`, or a C++ loop around the
    division), the kernel does no work at all.
    When every empty size the division can see is one a convolution rejects (its input, padded,
    is smaller than its kernel: eager PyTorch and the package both raise `Kernel size can't be
    greater than actual input size`), the finding says so and is an info. A C++ kernel's own index
    arithmetic (`x0 % (2*(ks0 // 2))`) is reported where its divisor, a floor of sizes, is 0 at a
    size above 0 that the package lets through while the loops around it still run (a sequence of
    1 pooled in pairs): the smallest such size is the witness, an error (a warning outside the
    declared range); not where a failed index check or a convolution too small for that size
    stops the call first.

    ## Why it matters
    A float division by 0 gives NaN (0/0) or inf, silently: no error, just poisoned outputs that
    propagate through the rest of the model. An integer division by 0 in the wrapper kills the process
    with SIGFPE; in a kernel its result is undefined. Eager PyTorch gives NaN for a `mean` over an
    empty dim too, but usually a neighbouring op (`amax`, an index) raises first; in the package
    nothing does.

    ## Example
    ```python
    class M(torch.nn.Module):
        def forward(self, x):                 # x: [n, 5]
            return x.amax(dim=0) + x.mean(dim=0)
    # x.shape = (0, 5) -> all-NaN output, no error
    ```

    ## Fix
    Reject empty inputs before calling the model, or guard the division in the model
    (`x.sum(0) / max(x.shape[0], 1)`), or run with `AOTI_RUNTIME_CHECK_INPUTS=1` so that the
    package's own range check (compiled for sizes >= 2) rejects the empty input.
    """

    name = "division-by-dynamic-size"
    code = "AOTI004"
    consequence = Consequence.SILENT
    user_ops = DIVISION_OPS
    guarded = True

    VALID = (Case("fixtures/gather_dyn.cpu.stripped.pt2"),  # no division
             # `scores.mean(-1)` over seq with seq rows: seq = 0 empties the kernel, no division runs
             Case("fixtures/softmax_attn.cpu.stripped.pt2"),
             # `x.mean(1)` over t, but at t = 0 the t // 4 - 1 patches' buffers have a negative size:
             # the call raises, no NaN comes out
             Case("fixtures/stranger5/patchtst.cpu.stripped.pt2"))
    INVALID = (
        Case("fixtures/empty_reduce.cpu.stripped.pt2", {"message_key": "division-by-dynamic-size.float", "input": 0,
                                                         "dim": 0}),
        Case("fixtures/empty_reduce.cuda.stripped.pt2", {"message_key": "division-by-dynamic-size.float"}),
        # Funnel's pooled attention, `x0 % (2*(ks0 // 2))` in loops over `2 + 2*((ks0 - 1) // 2)`: at
        # seq = 1 the divisor is 0 and the loops run: SIGFPE (probed), below the compiled min 6.
        Case("fixtures/stranger9/funnel.cpu.stripped.pt2", {"message_key": "division-by-dynamic-size.index",
                                                             "input": 0, "dim": 1, "severity": Severity.WARNING,
                                                             "witness": "x.shape = (2, 1)"},
             exported="fixtures/stranger9/funnel.ep.pt2"),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        seen: set[tuple] = set()
        for d in model.divisions:
            if d.index_math:
                finding = self._index_math(model, ctx, d, seen)
                if finding is not None:
                    yield finding
                continue
            # An integer division in run_impl's size arithmetic kills the process where it runs,
            # before any later allocation can raise.
            found = _first_empty(model, seen, (d.kernel, d.divisor_expr, d.integer, d.in_wrapper),
                                 d.divisor_expr, d.sources, d.space_expr, returned=not (d.integer and d.in_wrapper))
            if found is None:
                continue
            choice, ref, dim, rejected = found
            variant = "float" if not d.integer else "integer" if d.in_wrapper else "integer-kernel"
            # A float division in a kernel whose only division op is a mean: eager's mean of an empty
            # dim is NaN too, so the package differs only where another op raises first in eager.
            mean = variant == "float" and not d.in_wrapper and \
                {op for op in kernel_ops(d.kernel) if op in _FLOAT_DIVISION_OPS} == {"mean"} and \
                not any(r.op in REPORTED_OPS and set(r.sources) & set(d.sources) for r in model.reductions)
            fields = dict(kernel=d.kernel, divisor=d.divisor, divisor_expr=W.display_expr(model, d.divisor_expr),
                          dim_display=W.dim_display(model, ref), where=where(ref), range_text=range_text(dim),
                          check_expr=W.check_expr(model, ref), env=env_clause(dim),
                          same=self.MESSAGES["division-by-dynamic-size.mean"] if mean else "")
            chain = (self.CHAIN["division-by-dynamic-size.divides"].format(kernel=d.kernel, divisor=d.divisor),
                     self.CHAIN["division-by-dynamic-size.divisor"].format(divisor=d.divisor, divisor_display=W.display_expr(model, d.divisor_expr),
                                             divisor_expr=d.divisor_expr),
                     _range_step(model, ref, dim),
                     self.CHAIN["division-by-dynamic-size.divisor-zero"].format(assignment=W.assignment_text(model, choice)))
            fix_key = "division-by-dynamic-size.float" if variant == "float" else "division-by-dynamic-size.integer"
            yield self.finding(
                model, ctx, self.MESSAGES[f"division-by-dynamic-size.{variant}"].format(**fields), d.location, subject=d,
                kernel=None if d.in_wrapper else d.kernel, input=ref.input, dim=ref.dim, eager_rejects=rejected,
                consequence=Consequence.ASSUMED if mean else None,
                symbol=W.symbol_of(model, ref), witness=W.witness(model, choice), fix=self.FIXES[fix_key].format(**fields),
                chain=chain,
                key=f"div:{W.normalize_expr(model, d.divisor_expr)};{variant};"
                    f"{'wrapper' if d.in_wrapper else 'kernel:' + d.kernel}")

    def user_ops_of(self, subject: object) -> frozenset[str] | None:
        """A float division is no integer op's (`remainder` fused beside a mean)."""
        if isinstance(subject, Division) and not subject.integer:
            return _FLOAT_DIVISION_OPS
        return self.user_ops

    def _index_math(self, model: Model, ctx: Context, d: Division, seen: set) -> Finding | None:
        """A C++ kernel's index arithmetic divided by a floor of sizes that reaches 0 at a size above
        0 while its loops run (at 0 the loops, the wrapper or a convolution stop first), each dim that
        alone can do so with its smallest such size."""
        ident = ("index", d.kernel, d.divisor_expr)
        # Unless a failed index check or a convolution too small for the size (eager's own error, a
        # patch embedding: it runs first) stops the call before.
        choices = [(r, n) for r, n in Z.zeros_above_zero(model, d.divisor_expr, d.sources, d.space_expr)
                   if W.tripped_assertion(model, {r: n}) is None and externs.rejecting_call(model, {r: n}) is None]
        if not choices or ident in seen:
            return None
        seen.add(ident)
        ref, size = choices[0]
        choice, dim = {ref: size}, model.known_dim(ref)
        # The fix rejects every size from there up to the first that divides by something again.
        above = next((n for n in range(size + 1, size + Z.HEAD) if W.evaluate_at(model, d.divisor_expr or "0", {ref: n})),
                     size + 1)
        fields = dict(kernel=d.kernel, divisor=d.divisor, divisor_expr=W.display_expr(model, d.divisor_expr),
                      dim_display=W.dim_display(model, ref), where=where(ref), range_text=range_text(dim), size=size,
                      check_expr=W.check_expr(model, ref), above=above,
                      env=self.FIXES["division-by-dynamic-size.env-below"].format(min=dim.min)
                      if sizes.env_check_rejects_zero(dim, size) else "")
        chain = (self.CHAIN["division-by-dynamic-size.divides"].format(kernel=d.kernel, divisor=d.divisor),
                 self.CHAIN["division-by-dynamic-size.divisor"].format(
                     divisor=d.divisor, divisor_display=W.display_expr(model, d.divisor_expr), divisor_expr=d.divisor_expr),
                 _range_step(model, ref, dim),
                 self.CHAIN["division-by-dynamic-size.divisor-zero"].format(assignment=W.assignment_text(model, choice)))
        return self.finding(
            model, ctx, self.MESSAGES["division-by-dynamic-size.index"].format(**fields), d.location, subject=d,
            consequence=Consequence.FAILS, op="the integer division in the kernel's index arithmetic",
            kernel=d.kernel, input=ref.input, dim=ref.dim, symbol=W.symbol_of(model, ref),
            witnesses=tuple(W.witness(model, {r: n}) for r, n in choices),
            dims=tuple(DimWitness(r.input, r.dim, n, W.witness(model, {r: n})) for r, n in choices)
            if len(choices) > 1 else (),
            fix=self.FIXES["division-by-dynamic-size.index"].format(**fields), chain=chain,
            key=f"div:{W.normalize_expr(model, d.divisor_expr)};index;kernel:{d.kernel}")

    def guard_condition(self, model: Model, finding: Finding) -> FailingCondition | None:
        d = finding.subject
        if not isinstance(d, Division) or not d.divisor_expr:
            return None
        return FailingCondition("division-by-empty-size", f"({d.divisor_expr}) == 0",
                                f"{d.kernel} divides by {W.display_expr(model, d.divisor_expr)} = 0")


# Ops whose empty result differs from eager PyTorch: eager raises ("Expected reduction dim 0 to have
# non-zero size"), the compiled kernel returns the identity. `prod` (identity 1) and `sum` (0) are
# what eager returns for an empty dim too, so they are not reported.
REPORTED_OPS = ("max", "min", "argmax", "argmin")


@register
class EmptyReduction(EmptyReductionWords, Rule):
    """A max/min/argmax/argmin reduction over a dimension that the package accepts as 0.

    ## What it does
    Finds `max`, `min`, `argmax` and `argmin` reductions (`amax`, `max(dim)`, `argmax`, ...) whose
    reduced extent is a dynamic input size that becomes 0 for an empty input while nothing at run
    time rejects it (range checks run only with `AOTI_RUNTIME_CHECK_INPUTS=1`, or include 0).
    `sum` and `prod` are not reported: their empty results (0 and 1) are what eager PyTorch returns.
    When the same empty input also trips an index assertion (`empty-index-bound`), the call fails
    there and the reduction is not reported. Nor is a reduction whose identity cannot reach an
    output: when the same size also empties the kernel's own iteration space (an attention softmax
    over the sequence has one row per position, so its `xnumel` has the same factor), the result
    is empty and no identity value is ever used; nor is a softmax's max, which is subtracted only
    from the elements of the dim it reduces (a cross-attention over an empty source returns what
    eager returns).
    An empty size a convolution rejects first (as eager does) makes the finding an info that says so.

    ## Why it matters
    Eager PyTorch raises `amax(): Expected reduction dim 0 to have non-zero size`. The compiled kernel
    does not check: it returns the reduction's identity, `-inf` for `max`, `inf` for `min`, index 0
    for `argmax`/`argmin`, and the model silently continues with it.

    ## Example
    ```python
    class M(torch.nn.Module):
        def forward(self, x):                 # x: [n, 5]
            return x.amax(dim=0) + x.mean(dim=0)
    # x.shape = (0, 5) -> amax gives -inf (the mean gives NaN), eager raises
    ```

    ## Fix
    Reject empty inputs before calling the model, as eager PyTorch would, or run with
    `AOTI_RUNTIME_CHECK_INPUTS=1` so that the package's own range check rejects them.
    """

    name = "empty-reduction"
    code = "AOTI005"
    consequence = Consequence.SILENT
    user_ops = frozenset().union(*REDUCTION_OPS.values())
    guarded = True

    VALID = (Case("fixtures/gather_dyn.cpu.stripped.pt2"),  # no reduction
             # attention softmax over seq with seq rows: seq = 0 empties its output too
             Case("fixtures/softmax_attn.cpu.stripped.pt2"),
             # Cross-attention's softmax over an empty source: its max meets no element (runs like eager).
             Case("fixtures/launches/enc_dec_pos.cpu.stripped.pt2"))
    INVALID = (
        Case("fixtures/empty_reduce.cuda.stripped.pt2", {"message_key": "empty-reduction", "input": 0, "dim": 0}),
        Case("fixtures/stress/pkgs/two_outputs.cpu.stripped.pt2", {"message_key": "empty-reduction", "input": 2}),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        seen: set[tuple] = set()
        for r in model.reductions:
            if r.op not in REPORTED_OPS or not r.sources:
                continue
            found = _first_empty(model, seen, (r.kernel, r.op, r.extent_expr), r.extent_expr, r.sources,
                                 r.space_expr)
            if found is None:
                continue
            choice, ref, dim, rejected = found
            fields = dict(op=r.op, kernel=r.kernel, extent=W.display_expr(model, r.extent_expr),
                          dim_display=W.dim_display(model, ref), where=where(ref), range_text=range_text(dim),
                          identity=IDENTITIES[r.op], check_expr=W.check_expr(model, ref), env=env_clause(dim))
            chain = (self.CHAIN["empty-reduction"].format(op=r.op, kernel=r.kernel, extent=W.display_expr(model, r.extent_expr),
                                               extent_expr=r.extent_expr),
                     _range_step(model, ref, dim),
                     self.CHAIN["empty-reduction.empty"].format(assignment=W.assignment_text(model, choice)))
            # A softmax's max over the emptied dim is subtracted only from elements of that dim, which
            # do not exist: the result is what eager returns (an encoder-decoder at an empty source
            # runs like eager; where eager raises, its own reshape of the empty source does).
            if r.op == "max" and "softmax" in kernel_ops(r.kernel):
                continue
            yield self.finding(
                model, ctx, self.MESSAGES["empty-reduction"].format(**fields), r.location, subject=r,
                eager_rejects=rejected,
                kernel=r.kernel, input=ref.input, dim=ref.dim, symbol=W.symbol_of(model, ref),
                witness=W.witness(model, choice), fix=self.FIXES["empty-reduction"].format(**fields), chain=chain,
                key=f"reduce:{r.op}:{W.normalize_expr(model, r.extent_expr)};kernel:{r.kernel}")

    def user_ops_of(self, subject: object) -> frozenset[str] | None:
        """The ops that lower to the reduction's own op (`max`: amax, softmax, ...)."""
        return REDUCTION_OPS.get(subject.op) if isinstance(subject, Reduction) else self.user_ops

    def guard_condition(self, model: Model, finding: Finding) -> FailingCondition | None:
        r = finding.subject
        if not isinstance(r, Reduction) or not r.extent_expr:
            return None
        return FailingCondition("empty-reduction", f"({r.extent_expr}) == 0",
                                f"the {r.op} reduction in {r.kernel} runs over "
                                f"{W.display_expr(model, r.extent_expr)} = 0 elements and returns its identity")
