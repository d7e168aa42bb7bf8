"""Code Inductor compiled for the traced sizes without a guard (analyzer.query.traced): adaptive poolings
lowered for the traced size of a dynamic map, ceil-mode poolings rounded as at the traced size, loads
whose stride it simplified with the traced size."""

from __future__ import annotations

from typing import Iterable

from ..core.findings import DimWitness, Finding
from ..core.messages import Catalog, listed
from ..core.model import Model
from ..expr import intervals
from ..query import traced as T
from ..query import witness as W
from ..query.severity import Consequence
from . import Case, Context, Rule, register
from .bounds import model_location


class TracedPoolingWords:
    """The wording of AOTI021 adaptive-pool-traced-size."""

    HEADLINES = Catalog("HEADLINES", {
        "adaptive-pool-traced-size":
            "{dim_name} = {size} pools {at} {side} in bins compiled for {traced_side}: wrong values, no check",
    })
    MESSAGES = Catalog("MESSAGES", {
        "adaptive-pool-traced-size":
            "`{op}` into {bins} bins over a map of {map_text} (dynamic) was lowered by Inductor for the map "
            "size of the traced example: kernel {kernel} computes the bins of {traced} as constants "
            "({how}) while it reads the real map at its own strides, and nothing checks the map's size, "
            "not even with AOTI_RUNTIME_CHECK_INPUTS=1 (Inductor's `guard_int` on the size is a guard an "
            "AOTInductor package never checks); {breaks} {is_are} accepted, a map of another size there: "
            "other values than eager's without an error (a smaller map is read past its rows, a "
            "larger one pooled in part) or an output of another shape",
    })
    FIXES = Catalog("FIXES", {
        "adaptive-pool-traced-size":
            "make the pooled map's size static (a fixed input resolution, or resize to one before the model), "
            "or pool over the dynamic map with ops that take its size at run time (`x.mean((-2, -1))` for one "
            "bin); where the size must vary, call the model only at the traced size ({traced})",
    })
    CHAIN = Catalog("CHAIN", {
        "adaptive-pool-traced-size": "{dim_display} = {size}: the map has {at} {side}, the kernel's bins are those of {traced}",
    })


_HOW = {True: "`{a}*x // {b}`: the bins of a map of {a}", False: "a fixed window: the traced size divided evenly"}


@register
class AdaptivePoolTracedSize(TracedPoolingWords, Rule):
    """An adaptive pooling over a map of dynamic size whose kernel was compiled for the traced size.

    ## What it does
    Reads the exported program's `adaptive_avg_pool2d` and `adaptive_max_pool2d` nodes whose input
    (the pooled map) has a dynamic height or width, and finds the package's generated kernel for them
    (named for the op; an ATen fallback call is correct at every size). Inductor's lowering reads the
    map's size with `guard_int`: the traced example's size becomes a constant of the kernel (the bins
    `16*x1 // 7` of a 16-row map pooled into 7, or a fixed window where the traced size divides), and
    the guard that would pin the map to it is checked by nothing in an AOTInductor package. The
    witness is each side's smallest size the package accepts where the map is not empty and has
    another size than the traced one (read from the bins; where they divided, a size no multiple of
    the bins) and no convolution rejects it.

    ## Why it matters
    Every other size returns other values than eager, silently, inside the declared range and with
    `AOTI_RUNTIME_CHECK_INPUTS=1`: a smaller map is read past its rows (values of the next image or
    past the buffer: garbage, NaN), a larger one pooled over its top-left part, or the output has
    another shape.

    ## Example
    ```python
    class Head(nn.Module):                # x: [b, 3, h, w], h and w dynamic in [3, 256]
        def forward(self, x):
            f = self.conv(x)              # stride 2: a map of (h - 1)//2 + 1 rows
            return self.fc(nn.functional.adaptive_avg_pool2d(f, (7, 7)).flatten(1))
    # traced at h = w = 32: the kernel pools a 16 x 16 map; at h = 3 it reads past a 2-row map
    ```

    ## Fix
    Make the pooled map's size static (a fixed input resolution), or pool with ops that take the size
    at run time (`x.mean((-2, -1))` for one bin), or call the model only at the traced size.

    """

    consequence = Consequence.FAILS
    op = "the adaptive pooling's kernel (bins of the traced map)"
    user_ops = frozenset(set(T.ADAPTIVE_OPS.values()))

    name = "adaptive-pool-traced-size"
    code = "AOTI021"

    VALID = (
        # AdaptiveAvgPool2d((1, 1)) over a dynamic map: one bin is a mean, computed at every size.
        Case("fixtures/real/resnetish.cpu.stripped.pt2", exported="fixtures/real/resnetish.ep.pt2"),
        # No exported program: the node and its map's sizes are unknown.
        Case("fixtures/stranger9/adaptive_head.cpu.stripped.pt2"),
    )
    INVALID = (
        # AdaptiveAvgPool2d((7, 7)) + AdaptiveMaxPool2d((7, 7)) over a stride-2 conv's map, traced at 16 x 16.
        Case("fixtures/stranger9/adaptive_head.cpu.stripped.pt2",
             {"message_key": "adaptive-pool-traced-size", "input": 0, "dim": 2, "witness": "x.shape = (3, 3, 3, 3)"},
             exported="fixtures/stranger9/adaptive_head.ep.pt2"),
        # The same model for CUDA (torch 2.11): the Triton kernel's bins `(16*x3) // 7`.
        Case("fixtures/stranger9/cuda/adaptive_head.cuda.stripped.pt2",
             {"message_key": "adaptive-pool-traced-size", "input": 0, "dim": 2, "witness": "x.shape = (3, 3, 3, 3)"},
             exported="fixtures/stranger9/adaptive_head.ep.pt2"),
        # adaptive_max_pool2d(x, (4, 4)) traced at 12 x 12: a fixed 3 x 3 window, 6 x 6 gives a 2 x 2 output.
        Case("fixtures/recall/adaptive_max.cpu.stripped.pt2",
             {"message_key": "adaptive-pool-traced-size", "input": 0, "dim": 2, "witness": "x.shape = (2, 3, 6, 6)"},
             exported="fixtures/recall/adaptive_max.ep.pt2"),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        for pool in T.traced_pools(model):
            dims = pool.dims
            first = dims[0]
            traced = listed(sorted({str(t) for d in dims for t in d.traced}), " or ") or "the traced size"
            breaks = [f"{W.dim_display(model, d.ref)} = {d.witness} ({d.map_size} {d.side})" for d in dims]
            kernel = model.kernels[pool.kernel]
            fields = dict(op=pool.op, bins=" x ".join(str(d.bins) for d in pool.dims),
                          map_text=" x ".join(f"`{_map_text(model, d)}`" for d in pool.dims), kernel=pool.kernel,
                          traced=traced, how=_how(first), breaks=listed(breaks, " or "),
                          is_are="is" if len(dims) == 1 else "are",
                          size=first.witness, at=first.map_size, side=first.side,
                          traced_side=f"{listed([str(t) for t in first.traced], ' or ')} {first.side}" if first.traced
                          else "the traced size")
            chain = tuple(self.CHAIN["adaptive-pool-traced-size"].format(
                dim_display=W.dim_display(model, d.ref), size=d.witness, at=d.map_size, side=d.side,
                traced=listed([str(t) for t in d.traced], " or ") or "the traced size") for d in dims)
            witnesses = tuple(W.witness(model, {d.ref: d.witness}) for d in dims)
            yield self.finding(
                model, ctx, self.MESSAGES["adaptive-pool-traced-size"].format(**fields),
                kernel.location or model_location(model),
                subject=pool, input=first.ref.input, dim=first.ref.dim, symbol=W.symbol_of(model, first.ref),
                kernel=pool.kernel, witnesses=witnesses, fix=self.FIXES["adaptive-pool-traced-size"].format(**fields),
                chain=chain, key=f"pool:{pool.node.name}",
                dims=tuple(DimWitness(d.ref.input, d.ref.dim, d.witness, w) for d, w in zip(dims, witnesses))
                if len(dims) > 1 else ())


def _map_text(model: Model, dim: "T.PooledDim | T.RoundedDim") -> str:
    symbol = model.known_dim(dim.ref).declared_expr or ""
    return intervals.substitute(dim.expr, {symbol: W.dim_display(model, dim.ref)})


def _how(dim: T.PooledDim) -> str:
    if dim.traced:
        return _HOW[True].format(a=dim.traced[0], b=dim.bins)
    return _HOW[False]


class CeilPoolWords:
    """The wording of AOTI023 ceil-mode-pool-traced-rounding."""

    HEADLINES = Catalog("HEADLINES", {
        "ceil-mode-pool-traced-rounding":
            "{dim_name} = {size}: `{op}` pools into {package} where eager pools into {program} (ceil mode "
            "compiled as at the traced size): wrong values, no check",
    })
    MESSAGES = Catalog("MESSAGES", {
        "ceil-mode-pool-traced-rounding":
            "`{op}` with `ceil_mode=True` over a map of {map_text} (dynamic) was lowered by Inductor with the "
            "rounding of the traced example's {traced} {side}: {how}, in kernel {kernel}, and nothing checks "
            "the map's size, not even with AOTI_RUNTIME_CHECK_INPUTS=1 (Inductor's guard that the rounding "
            "holds is one an AOTInductor package never checks); {breaks} {is_are} accepted: a map eager pools "
            "into more or fewer windows than the package, so other values than eager's without an error, or "
            "an output of another shape",
        "ceil-mode-pool-traced-rounding.floor":
            "ceil and floor agree there, so it dropped ceil mode and computes `(m - {reach}) // {stride} + 1` "
            "windows for a map of m",
        "ceil-mode-pool-traced-rounding.ceil":
            "it decided there whether the last window starts past the map, and applies that decision at every size",
    })
    FIXES = Catalog("FIXES", {
        "ceil-mode-pool-traced-rounding":
            "export from an example whose map size ceil mode rounds up ({dim_name} = {size} here), so that "
            "Inductor compiles ceil mode's arithmetic for every size, or pad the map explicitly and pool with "
            "`ceil_mode=False`; otherwise call the model only with sizes where both roundings agree",
    })
    CHAIN = Catalog("CHAIN", {
        "ceil-mode-pool-traced-rounding":
            "{dim_display} = {size}: a map of {at} {side}, pooled into {program} by eager and {package} by the package",
    })
    FRAGMENTS = frozenset({"ceil-mode-pool-traced-rounding.floor", "ceil-mode-pool-traced-rounding.ceil"})


@register
class CeilModePoolTracedRounding(CeilPoolWords, Rule):
    """A ceil-mode pooling over a map of dynamic size whose rounding was compiled for the traced size.

    ## What it does
    Reads the exported program's `max_pool2d` and `avg_pool2d` nodes (and the 1-d ones, which Inductor
    decomposes into them) with `ceil_mode=True` whose input (the pooled map) has a dynamic height or
    width, the map's size in the traced example (the node's size hints), and finds the package's
    generated kernel for them (an ATen fallback, for windows over 25 elements, rounds at every size). Inductor's `pooling_size` decides at the traced size whether
    ceil mode rounds up at all: where ceil and floor agree there (a stride-2 pool of an odd map), it
    compiles floor's arithmetic for every size, and where the last window would start past the map, it
    drops it for every size. The guard it records is checked by nothing in an AOTInductor package. The
    witness is each side's smallest size the package accepts where eager pools another count of
    windows than the package (and at least one) and no convolution rejects it.

    ## Why it matters
    Every such size returns other values than eager, silently, inside the declared range and with
    `AOTI_RUNTIME_CHECK_INPUTS=1`: the package's pooled map is one column short (or long), so the ops
    after it read the wrong windows, or the output has another shape.

    ## Example
    ```python
    def forward(self, x):                 # x: [b, 8, h, w], h and w Dim.AUTO, traced at w = 9
        b1 = F.relu(self.down(x))         # stride 2: (w - 1)//2 + 1 = 5 columns, odd
        b3 = F.max_pool2d(b1, 3, 2, ceil_mode=True)
        return F.interpolate(b3, size=x.shape[-2:])
    # the package pools (w - 1)//4 columns: at w = 11, 2 where eager pools 3 (wrong values)
    ```

    ## Fix
    Export from an example at which ceil mode rounds up (an even map above), so that Inductor compiles
    ceil mode's arithmetic; or pad the map explicitly and pool with `ceil_mode=False`; or call the model
    only at sizes where both roundings agree.

    """

    consequence = Consequence.FAILS
    op = "the pooling's kernel (rounded as at the traced size)"
    user_ops = frozenset(set(T.CEIL_POOL_OPS.values()))

    name = "ceil-mode-pool-traced-rounding"
    code = "AOTI023"

    VALID = (
        # No exported program: whether a pool rounds up is not in the package.
        Case("fixtures/stranger19/hrnet_fuse.cpu.stripped.pt2"),
        # avg_pool2d(ceil_mode=True) with a 640 x 640 window: Inductor leaves it to ATen, which rounds at
        # every size.
        Case("fixtures/stranger13/efficientnet.cpu.stripped.pt2", exported="fixtures/stranger13/efficientnet.ep.pt2"),
    )
    INVALID = (
        # max_pool2d(3, 2, ceil_mode=True) of a map of (w - 1)//2 + 1 columns, traced at 5 (odd): floor.
        Case("fixtures/stranger19/hrnet_fuse.cpu.stripped.pt2",
             {"message_key": "ceil-mode-pool-traced-rounding", "input": 0, "dim": 3,
              "witness": "x.shape = (3, 8, 7, 11)"},
             exported="fixtures/stranger19/hrnet_fuse.ep.pt2"),
        # Funnel's `avg_pool2d((2, 1), ceil_mode=True)` over the sequence, traced at 16 (even): floor.
        Case("fixtures/stranger9/funnel.cpu.stripped.pt2",
             {"message_key": "ceil-mode-pool-traced-rounding", "input": 0, "dim": 1, "witness": "x.shape = (2, 7)"},
             exported="fixtures/stranger9/funnel.ep.pt2"),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        for pool in T.rounded_pools(model):
            dims, first = pool.dims, pool.dims[0]
            breaks = [f"{W.dim_display(model, d.ref)} = {d.witness} ({d.map_size} {d.side})" for d in dims]
            how_key = "ceil-mode-pool-traced-rounding." + ("floor" if first.floor else "ceil")
            fields = dict(op=pool.op, map_text=" x ".join(f"`{_map_text(model, d)}`" for d in dims),
                          traced=first.traced, side=first.side, kernel=pool.kernel,
                          how=self.MESSAGES[how_key].format(
                              reach=first.rounding.dilation * (first.rounding.kernel - 1) + 1 - 2 * first.rounding.padding,
                              stride=first.rounding.stride),
                          breaks=listed(breaks, " or "), is_are="is" if len(dims) == 1 else "are",
                          size=first.witness, program=first.program, package=first.package,
                          dim_name=W.dim_display(model, first.ref))
            chain = tuple(self.CHAIN["ceil-mode-pool-traced-rounding"].format(
                dim_display=W.dim_display(model, d.ref), size=d.witness, at=d.map_size, side=d.side,
                program=d.program, package=d.package) for d in dims)
            witnesses = tuple(W.witness(model, {d.ref: d.witness}) for d in dims)
            kernel = model.kernels[pool.kernel]
            yield self.finding(
                model, ctx, self.MESSAGES["ceil-mode-pool-traced-rounding"].format(**fields),
                kernel.location or model_location(model),
                subject=pool, input=first.ref.input, dim=first.ref.dim, symbol=W.symbol_of(model, first.ref),
                kernel=pool.kernel, witnesses=witnesses,
                fix=self.FIXES["ceil-mode-pool-traced-rounding"].format(**fields), chain=chain,
                key=f"ceil-pool:{pool.node.name}",
                dims=tuple(DimWitness(d.ref.input, d.ref.dim, d.witness, w) for d, w in zip(dims, witnesses))
                if len(dims) > 1 else ())


class TracedStrideWords:
    """The wording of AOTI022 stride-from-traced-size."""

    HEADLINES = Catalog("HEADLINES", {
        "stride-from-traced-size":
            "{dim_name} = {size} reads `{buffer}` at a stride simplified for the traced size: wrong values, no check",
    })
    MESSAGES = Catalog("MESSAGES", {
        "stride-from-traced-size":
            "kernel {kernel} steps `{buffer}` along one loop by `{first}` at one load and by `{second}` at "
            "another: the same stride only where {agree} (Inductor simplified the index with a property of "
            "the traced size that nothing checks, not even with AOTI_RUNTIME_CHECK_INPUTS=1); at {where} = "
            "{size} they are {first_at} and {second_at}, and every row but the first is read at other "
            "elements than eager's (the last ones past the end of the buffer): wrong values without an "
            "error{also}",
        "stride-from-traced-size.also": "; the same in {more}",
    })
    FIXES = Catalog("FIXES", {
        "stride-from-traced-size":
            "call the model only with sizes where {agree}, or export with a Dim that states it so that the "
            "package is compiled and checked for those sizes; AOTI_RUNTIME_CHECK_INPUTS=1 does not check it",
    })
    CHAIN = Catalog("CHAIN", {
        "stride-from-traced-size": "{location}: `{pointer}` (`{buffer}`) stepped by `{first}` and by `{second}`",
    })
    FRAGMENTS = frozenset({"stride-from-traced-size.also"})


@register
class StrideFromTracedSize(TracedStrideWords, Rule):
    """A kernel reads one buffer with two strides along one loop that agree only at some sizes.

    ## What it does
    Reads each C++ kernel's loads (from its text, with Python's `ast`; kernels that floor a size
    only) and, for each pointer and loop, the stride of the loop variable in each load's index. Two
    strides over the same input size that agree at some sizes and differ at others are an index that
    Inductor simplified with a property of the traced sizes it never guards: ball query's centroids
    `xyz[:, ::4]` read at `12*x0*((3 + n) // 4)`, which is the points' own `3*n*x0` only when n is a
    multiple of 4, as the traced 64 is. The witness is the smallest size the package accepts where the
    two differ and the loop runs at least twice (one row is read alike by both). A Triton kernel has
    one flattened index, `xindex`, cut into digits by the size parameters (`x3 = xindex // ks0`): its
    loads are compared by the step each takes when xindex moves by one of those divisors (the CUDA
    ball query's `12*x3` against `3*ks0*x2`, `x2 = xindex // ks1`), related through the launch's
    arguments (`ks1 = n * ((n + 3) // 4)`).

    ## Why it matters
    Where the strides differ, one load reads other elements than eager does for every row after the
    first, and the last rows past the end of the buffer: wrong values, silently, inside the declared
    range and with `AOTI_RUNTIME_CHECK_INPUTS=1`.

    ## Example
    ```python
    def forward(self, xyz, feats):         # xyz: [b, n, 3], n dynamic in [8, 1024], traced at 64
        centroids = xyz[:, ::4]            # ceil(n / 4) centroids
        d = ((centroids[:, :, None] - xyz[:, None]) ** 2).sum(-1)
        ...
    # the kernel reads centroids at 12*x0*((3 + n)//4) and xyz at 3*n*x0: at n = 9, batch 2, wrong values
    ```

    ## Fix
    Call the model only at sizes where both strides agree (a multiple of 4 above), or export with a Dim
    that states it (`4 * Dim("k")`) so that the package is compiled and checked for exactly those sizes.

    """

    consequence = Consequence.FAILS
    op = "the kernel's load (a stride simplified for the traced size)"

    name = "stride-from-traced-size"
    code = "AOTI022"

    VALID = (
        # `ks0*ks0` and `ks0` for one `x0`, in two successive loops over it: two variables, not one.
        Case("fixtures/stranger3/opt.cpu.stripped.pt2"),
        # `ks1 // 2` and `max(1, ks1 // 2)`: they differ only where the dim has no rows.
        Case("fixtures/stranger9/topk_prune.cpu.stripped.pt2"),
        # Pairwise distances on CUDA: `3*x3` (x3 = xindex // n) and `3*x0 + 3*n*x2` (x2 = xindex // n*n)
        # both step a batch by 3n (`3*(n*n // n)`: exactly 3n at every n).
        Case("fixtures/stranger14/cuda/edgeconv.cuda.stripped.pt2"),
    )
    INVALID = (
        # Ball query traced at n = 64: centroids at `12*x0*((3 + n)//4)`, points at `3*n*x0`.
        Case("fixtures/stranger10/ball_query.cpu.stripped.pt2",
             {"message_key": "stride-from-traced-size", "input": 0, "dim": 1}),
        # On CUDA: `12*x3` (x3 = xindex // ks0) and `3*ks0*x2` (x2 = xindex // ks1) step the batch by
        # 12*((n + 3) // 4) and 3*n.
        Case("fixtures/stranger10/cuda/ball_query.cuda.stripped.pt2",
             {"input": 0, "dim": 1, "witness": "xyz.shape = (3, 9, 3), feats.shape = (3, 9, 16)"},
             exported="fixtures/stranger10/ball_query.ep.pt2"),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        groups: dict[tuple, list] = {}
        for read in model.stride_reads:
            groups.setdefault((read.buffer, read.first, read.second), []).append(read)
        for reads in groups.values():
            read = reads[0]
            found = T.stride_break(model, read)
            if found is None:
                continue
            buffer = _buffer_name(model, read.buffer)
            dim_text = W.dim_display(model, found.ref)
            fields = dict(kernel=read.kernel, buffer=buffer, first=W.display_expr(model, read.first),
                          second=W.display_expr(model, read.second), agree=_agree(dim_text, found.agree),
                          where=dim_text, size=found.size, first_at=found.first_at, second_at=found.second_at,
                          also=self.MESSAGES["stride-from-traced-size.also"].format(
                              more=f"{len(reads) - 1} more kernel{'' if len(reads) == 2 else 's'}") if len(reads) > 1
                          else "")
            chain = tuple(self.CHAIN["stride-from-traced-size"].format(
                location=f"{r.location.path.rsplit('/', 1)[-1]}:{r.location.line}", pointer=r.pointer, buffer=buffer,
                first=W.display_expr(model, r.first), second=W.display_expr(model, r.second)) for r in reads)
            yield self.finding(
                model, ctx, self.MESSAGES["stride-from-traced-size"].format(**fields), read.location, subject=read,
                input=found.ref.input, dim=found.ref.dim, symbol=W.symbol_of(model, found.ref), kernel=read.kernel,
                witness=W.witness(model, {found.ref: found.size}),
                fix=self.FIXES["stride-from-traced-size"].format(**fields), chain=chain,
                key=f"stride:{read.buffer}:{read.first}:{read.second}")


def _buffer_name(model: Model, buffer: str) -> str:
    """An input's user name, else the buffer as the wrapper names it."""
    for inp in model.inputs:
        if inp.name == buffer:
            return inp.display
    return buffer


def _agree(dim_text: str, agree: tuple[int, ...]) -> str:
    """`x.shape[1]` is a multiple of 4, or the sizes themselves (up to 64)."""
    for k in range(2, 65):
        if agree and all(n % k == 0 for n in agree) and set(range(k, 65, k)) <= set(agree):
            return f"{dim_text} is a multiple of {k}"
    shown = ", ".join(str(n) for n in agree[:4]) + (", ..." if len(agree) > 4 else "")
    return f"{dim_text} is one of {shown}" if agree else f"{dim_text} takes sizes above 64"
