"""What the package really enforces at run time, by default (without AOTI_RUNTIME_CHECK_INPUTS).

The compiled range of a dim (`check_input_N`) and the declared range (the exported program) say
what sizes were meant; by default only checks that always run bound what reaches the kernels. These
helpers give the run-time ranges, the smallest size that takes an expression past a limit within
them, and how a dim's upper bound is enforced. Shared by `index-exceeds-constant-bound` (a max that
only the variable enforces) and `read-past-constant`.
"""

from __future__ import annotations

import re

from typing import Mapping

from ..expr import intervals
from ..query import counting, externs, guards as G, relations, sizes, source, witness as W
from ..core.findings import Location
from ..core.model import Assertion, ConstantKind, DimRef, Enforcement, Model, shim_op, where
from ..core.messages import listed
from ..query.severity import Consequence, fails_like_eager
from .words_inputs import UnenforcedLowerBoundWords as LowerBound
from .words_kernels import IndexExceedsConstantBoundWords as ConstantBound

# How values reach the maximum an op gives its output, in the user's terms (a witness's values).
VALUE_REACH = {
    "bucketize_Tensor": "a value above the last boundary (`bucketize` returns the boundaries' length)",
    "searchsorted_Tensor": "a value above the last element of the sorted sequence (`searchsorted` returns its length)",
    "topk": "the largest values in the last positions of the scanned dim (`topk` returns their indices)",
    "sort": "the last position sorted first (`sort` returns it as an index)",
    "sort_stable": "the last position sorted first (`sort` returns it as an index)",
    "cumsum": "no padding: every position counted (`cumsum` of the mask reaches the summed length)",
    "argmax": "the largest value in the last position of the reduced dim (`argmax` returns it)",
    "argmin": "the smallest value in the last position of the reduced dim (`argmin` returns it)",
    "cummax": "values that keep `cummax`'s running maximum at one end of its range (no new maximum along "
              "the dim, as in a row that is not packed)",
    "cummin": "values that keep `cummin`'s running minimum at one end of its range (no new minimum along "
              "the dim)",
    "other": "values for which `{op}` returns its largest result",
}


def reach_text(a) -> str:
    """Which values of the inputs make an op-bounded index reach its maximum, in the user's terms."""
    return listed([VALUE_REACH.get(op, VALUE_REACH["other"]).format(op=op) for op in a.index_ops])


def value_reach(a) -> tuple[str, ...]:
    """The chain step for an index an op's output bounds (`bucketize`, `topk`, `cumsum`), else ()."""
    return (ConstantBound.CHAIN["index-exceeds-constant-bound.value-reach"].format(index_var=a.index_var or "the index", reach=reach_text(a)),) \
        if a.index_ops else ()

# How eager PyTorch rejects a witness the same way as the package (Rule.finding's `eager_rejects`).
EAGER = {
    "table": "the same lookup past the table raises `IndexError: index out of range in self`",
    "index": "with the indexed dim empty, every index value is out of range: `IndexError`",
    "target": "with the target empty, every index value is out of range; the package returns an empty result",
    "scatter": "its own scatter or gather raises `index ... is out of bounds for dimension ...` at the same index",
    "convolution": "a convolution raises `Kernel size can't be greater than actual input size` first, in eager "
                   "and in the package alike: its input is {padded} after padding, its kernel {kernel}",
    "topk": "`topk` raises `selected index k out of range` first, in eager and in the package alike: its dim "
            "has {padded} elements, k is {kernel}",
    "argmax": "the index is `{op}` over the emptied dim, which raises first (`IndexError: {op}(): Expected "
              "reduction dim ... to have non-zero size`)",
}

# An argmax's range as the value engine writes it: `max(0, R - 1)` (C++) or `max((R) - 1, 0)` (Triton), plus 1.
_ARG_EXTENT = re.compile(r"max\(0, (.+) - 1\) \+ 1|max\(\((.+)\) - 1, 0\) \+ 1")


def empty_argmax(model: Model, a, choice: dict) -> str | None:
    """How eager rejects `choice` where the index is an argmax (argmin) over a dim that `choice` empties:
    eager's reduction raises before any lookup (a pointer network's argmax over its points), else None."""
    ops = [op for op in a.index_ops if op in ("argmax", "argmin")]
    found = _ARG_EXTENT.fullmatch(a.index_extent.strip()) if ops and a.index_extent else None
    if found is None or W.evaluate_at(model, found.group(1) or found.group(2), choice) != 0:
        return None
    return EAGER["argmax"].format(op=ops[0])


def runtime_ranges(model: Model) -> dict[str, tuple[float, float | None]]:
    """Root symbol -> (min, max) of the sizes that reach the kernels by default: the effective min
    (sizes below it are other rules' business) and the max only where a check always runs."""
    out = dict(W.dim_ranges(model))
    for name, ref in W.symbol_dims(model).items():
        dim = model.dim(ref)
        if dim is not None and name in out and sizes.max_enforcement(dim) is not Enforcement.ALWAYS:
            out[name] = (out[name][0], None)
    return out


def exceeds_at_runtime(model: Model, expr: str, limit: float) -> bool:
    """True when `expr` can be > `limit` for sizes that reach the kernels by default."""
    try:
        _, high = intervals.evaluate_interval(expr, runtime_ranges(model))
    except ValueError:
        return False
    return high is None or high > limit


def exceeds_declared(model: Model, expr: str, limit: float) -> bool:
    """True when `expr` can be > `limit` within the compiled and declared ranges."""
    try:
        _, high = intervals.evaluate_interval(expr, W.dim_ranges(model))
    except ValueError:
        return False
    return high is None or high > limit


def past_max_outside_contract(model: Model, refs: list[DimRef],
                              runtime_checks: str | None = None) -> tuple[bool, Enforcement]:
    """Whether sizes past the dims' max are outside the contract (the severity policy lowers such a
    finding to a warning): yes when every dim's max exists but only the variable checks it; no when
    one has none, or when the deployment is declared not to set the variable (`runtime_checks ==
    "off"`): the max is then unchecked in production and the failure is its consequence. (With "on"
    the rules see such a max as always checked: sizes.as_deployed.)"""
    kinds = {sizes.max_enforcement(model.dim(r)) for r in refs}
    if Enforcement.NONE in kinds:
        return False, Enforcement.NONE
    return runtime_checks != "off", Enforcement.ENV


def max_text(model: Model, ref: DimRef) -> str:
    """`max 128 (compiled and declared), checked only with AOTI_RUNTIME_CHECK_INPUTS=1`."""
    dim = model.dim(ref)
    if dim is None:
        return "no max"
    parts = []
    if dim.max is not None:
        parts.append(f"compiled for at most {dim.max}")
    if dim.declared_max is not None:
        parts.append(f"declared at most {dim.declared_max}")
    head = " and ".join(parts) if parts else "no max compiled or declared"
    enforcement = sizes.max_enforcement(dim)
    if enforcement is Enforcement.ENV:
        return head + ", a max that only AOTI_RUNTIME_CHECK_INPUTS=1 checks"
    if enforcement is Enforcement.NONE:
        return head + (", a max that nothing checks at run time" if parts else "")
    return head


def constant_label(model: Model, name: str) -> str:
    """`inner.embeddings.position_ids (1x128, constant inner_embeddings_position_ids)`."""
    const = next((c for c in model.constants if c.name == name), None)
    if const is None:
        return name
    shape = "x".join(str(s) for s in const.shape) if const.shape else "?"
    return f"{const.original_fqn or const.name} ({shape}, constant {const.name})"


def table_of(model: Model, a: Assertion) -> str | None:
    """The constant a constant-bound check selects rows of (`inner.wpe.weight (128x64)` for `tmp6 <
    128L`): source.table_read's."""
    read = source.table_read(model, a)
    return constant_label(model, read.constant) if read is not None else None


def eager_rejects_past_range(model: Model, a, outcome: str) -> str | None:
    """`eager_rejects_table` for a witness past the range the package was traced for: there eager
    may run other code than the package (M2M100's sinusoidal table is rebuilt longer, a slice of a
    buffer comes out shorter), so eager's rejection is known only when the table is a learned
    weight, whose rows no model code changes: every constant of that many rows that a launch of
    the kernel passes (its loads through a computed index are not traced to one) is a parameter,
    and the exported program's module doing the lookup is no sinusoidal table's (FSMT keeps its
    sinusoids as a parameter and rebuilds them longer when a sequence needs it)."""
    rows = {c.name: c for c in model.constants if c.shape and c.shape[0] == a.bound_value}
    tables = {arg for launch in model.launches if launch.kernel == a.kernel for arg in launch.args if arg in rows}
    learned = bool(tables) and all(rows[t].kind is ConstantKind.PARAMETER for t in tables) \
        and "sinusoid" not in (source.lookup_class(model, a) or "").lower()
    return eager_rejects_table(outcome) if learned else None



def unenforced_max(rule, model: Model, ctx, a, refs: list[DimRef], outcome: dict[str, str]):
    """`index-exceeds-constant-bound` for an index extent that the compiled and declared ranges keep
    within the bound but whose max nothing checks by default (GPT-2's `tmp6 < 128L` with
    `Dim("seq", max=128)`: seq = 129 aborts). None when the run-time ranges keep it within too."""
    limit = a.bound_value  # the index reaches extent - 1: it trips when the extent passes the bound
    if not exceeds_at_runtime(model, a.index_extent, limit):
        return None
    found = W.first_exceeding(model, a.index_extent, refs, limit)
    if found is None:
        return None
    ref, size = found
    outside, _ = past_max_outside_contract(model, refs, ctx.runtime_checks)
    table = table_of(model, a)
    assignment = {ref: size}
    fields = dict(assertion=a.message, kernel=a.kernel, extent=W.display_expr(model, a.index_extent),
                  dim_display=W.dim_display(model, ref), where=where(ref),
                  max_text=max_text(model, ref), limit=size - 1, bound_value=a.bound_value,
                  table=f" ({table})" if table else "", **outcome, check_expr=W.check_expr(model, ref))
    value = W.evaluate_at(model, a.index_extent, assignment)
    chain = (*a.chain, ConstantBound.CHAIN["index-exceeds-constant-bound.extent"].format(
                 index_var=a.index_var or "the index", extent=fields["extent"], assignment=W.assignment_text(model, assignment),
                 value="?" if value is None else int(value) - 1, bound_value=a.bound_value),
             *value_reach(a))
    return rule.finding(
        model, ctx, ConstantBound.MESSAGES["index-exceeds-constant-bound.unenforced-max"].format(**fields), a.location, subject=a,
        outside_contract=outside, contract=False,  # past_max_outside_contract weighs the declared max
        eager_rejects=eager_rejects_past_range(model, a, outcome["outcome"]),
        kernel=a.kernel, input=ref.input, dim=ref.dim, symbol=W.symbol_of(model, ref),
        witness=W.witness(model, assignment), fix=ConstantBound.FIXES["index-exceeds-constant-bound.unenforced-max"].format(**fields),
        chain=chain,
        key=f"extent-unenforced:{W.normalize_expr(model, a.index_extent)}>{a.bound_value};kernel:{a.kernel}")


def convolution_rejects(model: Model, choice: "Mapping[DimRef, int] | None") -> str | None:
    """How eager rejects `choice` when a convolution raises on it (its padded input smaller than its
    kernel), else None."""
    rejected = externs.rejecting_call(model, choice) if choice is not None else None
    return None if rejected is None else EAGER[rejected.op].format(padded=rejected.padded, kernel=rejected.kernel)


def eager_rejects_table(outcome: str) -> str | None:
    """How eager rejects an index past a constant table (the lookup Inductor checks is eager's own:
    `IndexError: index out of range in self`), when the package's failed check ends no worse (it
    raises, or asserts on CUDA as eager's lookup does); None where it aborts the process."""
    return EAGER["table"] if fails_like_eager(outcome) else None


# -- what sizes below a dim's compiled minimum really do (unenforced-lower-bound) ---------------------

SDPA_OP = "CPU flash attention (`_scaled_dot_product_flash_attention_for_cpu`), which divides by the length"
RNN_OP = "oneDNN's RNN layer (`mkldnn_rnn_layer`), which divides by the batch"
# Extern calls that divide by a size of their arguments (SIGFPE at 0, probed): op -> (rank, dim, op words).
ZERO_TRAPS = {"_scaled_dot_product_flash_attention_for_cpu": (4, 2, SDPA_OP), "mkldnn_rnn_layer": (3, 1, RNN_OP)}


def empty_extern_calls(model: Model, ref: DimRef, size: int = 0) -> list[str]:
    """Extern (ATen shim) calls that receive a tensor with no elements when `ref` is `size`, while
    at a valid size it has some: `name` or `name (xN)`, in call order."""
    counts: dict[str, int] = {}
    dim = model.dim(ref)
    valid = {ref: W.valid_size(dim)} if dim is not None else {}
    for launch in model.launches:
        if not launch.extern:
            continue
        for shape in launch.arg_shapes:
            if not shape:
                continue
            numel = "*".join(f"({s})" for s in shape)
            at = W.evaluate_at(model, numel, {ref: size})
            normal = W.evaluate_at(model, numel, valid)
            if at == 0 and normal:
                counts[launch.kernel] = counts.get(launch.kernel, 0) + 1
                break
    return [k if n == 1 else f"{k} (x{n})" for k, n in counts.items()]


def sdpa_length_zero(model: Model, ref: DimRef, size: int = 0) -> int | None:
    """The launch index of the first CPU flash attention call whose sequence length (dim -2 of a
    `[B, H, L, E]` tensor) `ref` at `size` empties: the kernel divides by it (SIGFPE). An empty batch
    or head dim does not (a ViT at batch 0 runs). None when there is none."""
    return next((index for index, _ in _sdpa_lengths(model, ref, size)), None)


def _flash_attention_lengths(model: Model, ops: "tuple[str, ...]" = ("_scaled_dot_product_flash_attention_for_cpu",)):
    """(launch index, the size it divides by) of each argument of each call of `ops` (ZERO_TRAPS): a
    CPU flash attention's sequence length, dim -2 of a `[B, H, L, E]` argument (queries and keys may
    differ in length); oneDNN's RNN layer's batch, dim 1 of its `[T, B, C]` input and states."""
    for index, launch in enumerate(model.launches):
        op = shim_op(launch.kernel) if launch.extern else None
        rank, dim, _ = ZERO_TRAPS[op] if op in ops else (0, 0, "")
        for shape in launch.arg_shapes if rank else ():
            if shape and len(shape) == rank:
                yield index, shape[dim]


def _sdpa_lengths(model: Model, ref: DimRef, size: int):
    """(launch index, length expression) of each CPU flash attention call that `ref` at `size` gives a
    sequence length of 0 while a valid size gives it one (its first such argument)."""
    dim = model.dim(ref)
    valid = {ref: W.valid_size(dim)} if dim is not None else {}
    last = None
    for index, length in _flash_attention_lengths(model, tuple(ZERO_TRAPS)):
        if index != last and W.evaluate_at(model, length, {ref: size}) == 0 and W.evaluate_at(model, length, valid):
            last = index
            yield index, length


def negative_extern_arg(model: Model, assignment: "Mapping[DimRef, int]", before: int | None = None) -> str | None:
    """The first extern call (of those before launch `before`, when given) one of whose tensors has a
    negative size under `assignment` (PatchTST's `t // 4 - 1` patches at t < 4): the allocation of that
    buffer raises `Trying to create tensor with negative dimension`, so the call fails there. None
    when there is none."""
    for launch in model.launches[:before]:
        if launch.extern and any(
                shape and any((v := W.evaluate_at(model, s, assignment)) is not None and v < 0 for s in shape)
                for shape in launch.arg_shapes):
            return launch.kernel
    return None


def sdpa_zero_below(model: Model, ref: DimRef, below: int) -> tuple[int, str] | None:
    """The largest size in [1, below] at which a size expression of `ref` (PatchTST's `t // 4 - 1`
    patches, 0 at t = 4..7) gives a CPU flash attention call a length of 0, with that expression,
    where no allocation before it is of negative size; None when there is none. Size expressions
    grow with each size, so the largest size where a length is at most 0 is found by bisection:
    a compiled minimum of a billion costs some thirty evaluations, not a billion."""
    dim = model.dim(ref)
    valid = {ref: W.valid_size(dim)} if dim is not None else {}
    found: list[tuple[int, str]] = []
    for index, length in _flash_attention_lengths(model):
        size = _largest_at_most_zero(model, length, ref, below)
        # Zero exactly, not at a valid size; no buffer of negative size, no convolution that rejects
        # its input, before the attention (either raises first).
        if size is not None and W.evaluate_at(model, length, {ref: size}) == 0 and W.evaluate_at(model, length, valid) \
                and negative_extern_arg(model, {ref: size}, before=index) is None \
                and not _rejected_before(model, {ref: size}, index):
            found.append((size, length))
    return max(found, key=lambda f: f[0]) if found else None


def _largest_at_most_zero(model: Model, expr: str, ref: DimRef, below: int) -> int | None:
    """The largest size in [1, below] at which `expr` (non-decreasing in the size) is <= 0."""
    first_positive = W.smallest_exceeding(model, expr, ref, 0, beyond_max=True, start=1)
    size = below if first_positive is None else min(first_positive - 1, below)
    value = W.evaluate_at(model, expr, {ref: size}) if size >= 1 else None
    return size if value is not None and value <= 0 else None


def _rejected_before(model: Model, choice: "Mapping[DimRef, int]", index: int) -> bool:
    rejected = externs.rejecting_call(model, choice)
    return rejected is not None and model.launches.index(rejected.launch) < index


def rejecting_assert(model: Model, ref: DimRef, size: int) -> tuple[str, int, str] | None:
    """An always-on runtime assert of run_impl that rejects every input with `ref` at `size`:
    (unbacked symbol, its asserted minimum, the shim it is read from). E.g. u0 = the number of nonzero
    elements of `mask`, `Expected u0 >= 2`, and mask.shape[0] = 1 -> u0 <= 1; or u2, the size of
    `bincount(dst, minlength=n)` that run_impl requires to equal n (`Expected Eq(s77, u2)`)."""
    symbol = W.symbol_of(model, ref)
    for sym in model.symbols.values():
        if not sym.unbacked or not sym.min or sym.min <= 0:
            continue
        producer = next((l for l in model.launches if l.extern and sym.expr in l.outputs), None)
        if symbol and sym.tied == symbol and size < sym.min:   # `Expected Eq(s77, u2)`: u2 is the size
            return sym.name, sym.min, externs.size_call(producer)
        if producer is None or counting.counting_op(producer.kernel) is None:
            continue
        for inp in model.inputs:
            if inp.name not in producer.args:
                continue
            if not any(d.symbol is not None and (d.symbol == symbol or W.symbol_of(model, DimRef(inp.index, d.dim)) == symbol)
                       for d in inp.dims) and inp.index != ref.input:
                continue
            shape = W.sizes(model, {ref: size})
            numel = 1
            for d in inp.dims:
                numel *= shape.get(DimRef(inp.index, d.dim), 1)
            if numel < sym.min:
                return sym.name, sym.min, producer.kernel
    return None


def lower_bound_facts(model: Model, ref: DimRef, below: int, fields: dict):
    """(message, chain lines, (consequence, op) or None, the size that reaches it) for
    `unenforced-lower-bound` when sizes 0..below do something specific: an always-on assert rejects
    `below` (an error, said by data-dependent-size-check: no consequence of its own here), extern
    calls receive an empty tensor at 0 (a consequence only where the analyzer knows what the call does
    with it: CPU flash attention divides by the length, SIGFPE), or a size between 1 and `below` gives
    a flash attention a length of 0 (a length computed from the dim). None when none: the rule's own
    message stands. The witness with a consequence leads."""
    hit = rejecting_assert(model, ref, below)
    if hit is not None:
        symbol, smin, call = hit
        key = "unenforced-lower-bound.rejected-tied" if model.symbols[symbol].tied else "unenforced-lower-bound.rejected"
        return LowerBound.MESSAGES[key].format(symbol=symbol, smin=smin, call=call, **fields), (), None, below
    if below >= 1 and sizes.can_be_zero(model.dim(ref)):
        calls = empty_extern_calls(model, ref, 0)
        if calls:
            verb = "receives" if len(calls) == 1 and "(x" not in calls[0] else "receive"
            key = "unenforced-lower-bound.empty-calls" if fields.get("kernels") else "unenforced-lower-bound.empty-calls-only"
            dim_symbol, check, checked_at = zero_check(model, ref)
            conv = externs.rejecting_call(model, {ref: 0}, ops=("convolution",))   # its words speak of one
            # Whichever raises first in run_impl ends the call there: a convolution launched before
            # the check (a patch embedding ahead of the window arithmetic) or the check before it.
            if check and conv is not None:
                check, conv = (None, conv) if _before(conv.launch.location, checked_at) else (check, None)
            # A convolution or a check that raises before the attention runs (SegFormer's patch
            # embedding) ends the call there: the division never happens.
            attention = sdpa_length_zero(model, ref)
            if attention is not None and (conv is not None and model.launches.index(conv.launch) < attention
                                          or check and _before(checked_at, model.launches[attention].location)):
                attention = None
            trap = ZERO_TRAPS[shim_op(model.launches[attention].kernel) or ""][2] if attention is not None else None
            sdpa = LowerBound.MESSAGES["unenforced-lower-bound.rnn" if trap == RNN_OP else "unenforced-lower-bound.sdpa"] \
                if trap else ""
            zero = LowerBound.MESSAGES["unenforced-lower-bound.zero-check"].format(symbol=dim_symbol, check=check) \
                if check else LowerBound.MESSAGES["unenforced-lower-bound.conv-rejects"].format(
                    padded=conv.padded, kernel=conv.kernel) if conv else ""
            message = LowerBound.MESSAGES[key].format(
                calls=listed(calls), verb=verb, sdpa=sdpa, zero=zero, conv_rejects="yes" if conv else "",
                zero_check="yes" if check else "", **({"rnn": "yes"} if trap == RNN_OP else {}), **fields)
            chain = (LowerBound.CHAIN["unenforced-lower-bound.zero-conv" if conv else "unenforced-lower-bound.zero"].format(
                zero=W.witness(model, {ref: 0}), calls=listed(calls), verb=verb),)
            if trap:
                return message, chain, (Consequence.FAILS, trap), 0
            return _sdpa_below(model, ref, below, fields) or (message, chain, None, 0)
    return _sdpa_below(model, ref, below, fields)


def zero_check(model: Model, ref: DimRef) -> tuple[str, str | None, Location | None]:
    """(what run_impl checks, its message, where) for the first of run_impl's `!= 0` checks that size 0 of
    `ref` fails: one of the dim's own symbol (`s45 != 0`), or of a size computed from it (a window
    count, `floordiv(h + (7 - h % 7) % 7, 7) != 0`: 0 at h = 0 though never in the compiled range).
    The other dims sit where export's guards hold. (the dim's symbol, None, None) when none fails."""
    symbol = model.known_dim(ref).symbol
    base = {**G.base_sizes(model), ref: 0}
    for checked, message, location in model.zero_checks:
        if checked == symbol:
            return symbol, message, location
        if symbol and ref in (W.expr_dims(model, checked) or ()) and W.evaluate_at(model, checked, base) == 0:
            return W.display_expr(model, checked), message, location
    return symbol or "", None, None


def _before(first: Location | None, second: Location | None) -> bool:
    """Whether `first` comes before `second` in the same member (run_impl's order of execution)."""
    return first is not None and second is not None and first.path == second.path and \
        (first.line, first.column) < (second.line, second.column)


def _sdpa_below(model: Model, ref: DimRef, below: int, fields: dict):
    """`lower_bound_facts` where a size between 1 and `below` empties a flash attention's length."""
    found = sdpa_zero_below(model, ref, below) if below >= 1 else None
    if found is None:
        return None
    at, length = found
    message = LowerBound.MESSAGES["unenforced-lower-bound.sdpa-at"].format(
        at=at, length=W.display_expr(model, length), **fields)
    chain = (LowerBound.CHAIN["unenforced-lower-bound.sdpa-at"].format(
        witness=W.witness(model, {ref: at}), length=W.display_expr(model, length)),)
    return message, chain, (Consequence.FAILS, SDPA_OP), at


def read_as_in_eager(model: Model, ref: DimRef, tied_expr: str) -> bool:
    """True when every call that reads the input of `ref` is an error-checked extern call (an ATen
    shim, a custom op such as torchvision.nms) that also receives the input whose size it must equal:
    the op sees both real shapes, as in eager (nms raises `boxes and scores should have same number of
    elements`), and no generated kernel indexes the input with the other size."""
    name = model.inputs[ref.input].name
    others = {model.inputs[r.input].name for r in W.expr_dims(model, tied_expr) or ()
              if 0 <= r.input < len(model.inputs) and r.input != ref.input}
    readers = [launch for launch in model.launches if name in launch.args]
    return bool(readers and others) and all(
        launch.extern and launch.error_checked and others & set(launch.args) for launch in readers)


# -- unchecked extern calls: the sizes that make them fail -------------------------------------------

def empty_target(model: Model, launch) -> tuple[list[DimRef], tuple[str, ...]] | None:
    """For an extern call that writes into its first tensor argument (`scatter_reduce_two_out(buf0,
    ...)`, `index_put_out(buf0, ...)`): an input dim that empties that target while another tensor
    argument (the index or values) keeps elements. Every index is then out of range."""
    shapes = [s for s in launch.arg_shapes if s]
    if len(shapes) < 2:
        return None
    target, others = shapes[0], shapes[1:]
    found: list[DimRef] = []
    for size in target:
        for ref in W.expr_dims(model, size) or []:
            if not sizes.can_be_zero(model.dim(ref)):
                continue
            if W.evaluate_at(model, size, {ref: 0}) != 0:
                continue
            for other in others:
                if other == target:
                    continue
                numel = W.evaluate_at(model, "*".join(f"({s})" for s in other), {ref: 0})
                if numel and ref not in found:
                    found.append(ref)
    return (found, target) if found else None


def extern_failure(model: Model, launch) -> dict | None:
    """Fields for `unchecked-extern-call`: input, dim, witness, and `dims`/`target` for its message."""
    found = empty_target(model, launch)
    if found is None:
        return None
    refs, target = found
    # An empty dim at which an index check fails (a gather of the same rows: GAT's h[src]) makes
    # the call raise, before or after the shim, as eager raises: the discarded error is not what
    # the caller sees. Dims at which none does lead.
    tripped = {r: W.tripped_assertion(model, {r: 0}) for r in refs}
    refs = sorted(refs, key=lambda r: tripped[r] is not None)
    ref = refs[0]
    shown = "(" + ", ".join(W.display_expr(model, s) for s in target) + ")"
    dims = " or ".join(f"{W.dim_display(model, r)} ({where(r)})" for r in refs)
    first = tripped[ref]
    return dict(input=ref.input, dim=ref.dim, symbol=W.symbol_of(model, ref),
                witness=W.witness(model, {ref: 0}), dims=dims, target=shown,
                empty_test=" or ".join(f"{W.check_expr(model, r)} == 0" for r in refs),
                checked_first=None if first is None else first.message)


def below_min(model: Model, ref: DimRef, minimum: int) -> int:
    """The largest size below the compiled minimum that keeps the dim's derived relation (a multiple
    of 20 for a length read as 20*k): a witness that fails for its size, not for its remainder."""
    return relations.fitting_below(model, ref, minimum)
