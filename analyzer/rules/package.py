"""Package and device rules: unreadable members, missing kernel source, target device mismatch."""

from __future__ import annotations

import re
from typing import Iterable

from ..core.capability import cc_text, parse_sm, sm_text
from ..expr import intervals
from ..core.findings import Finding, Location, Severity
from ..core.model import Assertion, Model, Package, Problem, ProblemKind
from ..query.severity import Consequence
from . import Case, Context, Rule, register
from . import enforcement as E
from .bounds import model_location, outcome_fields
from .words_inputs import NoKernelSourceWords, TargetDeviceMismatchWords, UncheckedExternCallWords, UnparsedMemberWords

PACKAGE_MODEL = "(package)"  # the `model` of findings about the package as a whole

_HASH = re.compile(r"[a-z0-9]{32,}")


def stable(text: str) -> str:
    """Text with build hashes (the hashed member names) replaced by `*`: for finding keys."""
    return _HASH.sub("*", text)


def sm_incompatibility(package: tuple[int, int, str], target: tuple[int, int, str]) -> str | None:
    """Why a cubin for `package` does not load on a `target` GPU, or None when it does.

    A cubin runs on the same major version with an equal or later minor (8.0 -> 8.6, not 8.6 -> 8.0);
    an architecture-specific target (`90a`) runs only on exactly that capability. The target's own
    suffix does not matter (an sm_90a device is a 9.0 device)."""
    p_major, p_minor, p_suffix = package
    t_major, t_minor, _ = target
    fields = dict(package_sm=sm_text(package), package_cc=cc_text(package), target_cc=cc_text(target),
                  package_major=p_major, target_major=t_major)
    if p_major != t_major:
        return TargetDeviceMismatch.MESSAGES["target-device-mismatch.sm.major"].format(**fields)
    if p_suffix == "a" and p_minor != t_minor:
        return TargetDeviceMismatch.MESSAGES["target-device-mismatch.sm.arch"].format(**fields)
    if p_minor > t_minor:
        return TargetDeviceMismatch.MESSAGES["target-device-mismatch.sm.minor"].format(**fields)
    return None


@register
class TargetDeviceMismatch(TargetDeviceMismatchWords, Rule):
    """The package was compiled for another device or GPU architecture than the target.

    ## What it does
    With a target given (`--target-device`, `--target-sm` or the `target-device`/`target-sm` keys
    of the configuration), compares it with the package's metadata: `AOTI_DEVICE_KEY` (cpu or cuda)
    and, for CUDA, `AOTI_COMPUTE_CAPABILITY`. A cubin built for compute capability X.Y loads on X.Z
    with Z >= Y only; an architecture-specific build (`90a`) only on exactly that capability. A
    target SM without a target device implies CUDA. Without a target this rule says nothing.

    ## Why it matters
    A package for the wrong device fails when it is loaded, on the production machine rather than at
    build time; a CUDA package for another architecture fails with `no kernel image is available for
    execution on the device` (or `CUDA_ERROR_NO_BINARY_FOR_GPU`) on its first launch.

    ## Example
    ```console
    $ aoti-lint check --target-sm 80 model.pt2      # AOTI_COMPUTE_CAPABILITY=90 (built on an H100/H200)
    ```

    ## Fix
    Compile the package on (or for) the target: on a machine with the target GPU, or with
    `TORCH_CUDA_ARCH_LIST` set to it.
    """

    name = "target-device-mismatch"
    code = "AOTI006"
    consequence = Consequence.FAILS
    op = "loading the package on the target device"

    VALID = (
        Case("fixtures/gather_dyn.cuda.stripped.pt2"),   # no target: nothing to compare
        Case("fixtures/gather_dyn.cuda.stripped.pt2", target_device="cuda", target_sm="90"),
        Case("fixtures/gather_dyn.cpu.stripped.pt2", target_device="cpu"),
    )
    INVALID = (
        Case("fixtures/gather_dyn.cuda.stripped.pt2", {"message_key": "target-device-mismatch.sm",
                                                        "fix_key": "target-device-mismatch.sm"}, target_sm="80"),
        Case("fixtures/gather_dyn.cuda.stripped.pt2", {"message_key": "target-device-mismatch.device"},
             target_device="cpu"),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        target = str(ctx.target_device or ("cuda" if ctx.target_sm else "")).split(":")[0].lower()
        device = str(model.device or "").split(":")[0].lower()
        if not target or not device:
            return
        location = Location(model.metadata_path) if model.metadata_path else model_location(model)
        device_key = model.device_key
        if device != target:
            fields = dict(model=model.name, device=device, target=target, key="AOTI_DEVICE_KEY",
                          device_key=device_key if device_key else f"(none; {device} from the wrapper)")
            yield self.finding(model, ctx, self.MESSAGES["target-device-mismatch.device"].format(**fields), location,
                               subject=model,
                               fix=self.FIXES["target-device-mismatch.device"].format(**fields),
                               key=f"device:{device}->{target}")
            return
        if device != "cuda" or not ctx.target_sm:
            return
        package_sm = parse_sm(model.compute_capability)
        target_sm = parse_sm(ctx.target_sm)
        if package_sm is None or target_sm is None:
            return
        why = sm_incompatibility(package_sm, target_sm)
        if why is None:
            return
        fields = dict(model=model.name, package_sm=sm_text(package_sm), target_sm=sm_text(target_sm), why=why)
        yield self.finding(model, ctx, self.MESSAGES["target-device-mismatch.sm"].format(**fields), location, subject=model,
                           fix=self.FIXES["target-device-mismatch.sm"].format(**fields),
                           key=f"sm:{sm_text(package_sm)}->{sm_text(target_sm)}")


def _problem_location(problem: Problem, fallback: str) -> Location:
    return problem.location if problem.location is not None else Location(fallback)


@register
class NoKernelSource(NoKernelSourceWords, Rule):
    """Kernels exist only as binaries: their assertions cannot be checked.

    ## What it does
    Reports each kernel (or model) whose source is not in the package: a Triton kernel without its
    embedded Python source, a launched kernel without a `*.kernel.cpp`, a model folder with only a
    `.so` and no `*.wrapper.cpp`.

    ## Why it matters
    The analyzer reads the generated source to find index assertions, reductions and divisions; a
    kernel without source is not checked, so a clean report says nothing about it.

    ## Example
    ```text
    data/aotinductor/model/xyz.wrapper.so       # no xyz.wrapper.cpp next to it
    ```

    ## Fix
    Keep the generated sources in the package (do not strip `*.wrapper.cpp` and `*.kernel.cpp`); they
    are small next to the binaries.
    """

    name = "no-kernel-source"
    code = "AOTI007"
    consequence = Consequence.ASSUMED

    VALID = (Case("fixtures/gather_dyn.cuda.stripped.pt2"),)
    INVALID = (
        # The Triton source embedded in the wrapper's comments removed: only the cubin is left.
        Case("fixtures/gather_dyn.cuda.stripped.pt2", {"message_key": "no-kernel-source"},
             edit=(".wrapper.cpp", rb"/\*\s*async_compile\.triton.*?\*/", b"")),
        Case("fixtures/gather_dyn.cpu.stripped.pt2", {"message_key": "no-kernel-source"},
             edit=(".kernel.cpp", None, None)),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        for problem in model.problems:
            if problem.kind == ProblemKind.NO_SOURCE:
                yield self._finding(model.name, ctx, problem, model.wrapper_path or model.name)

    def check_package(self, package: Package, ctx: Context) -> Iterable[Finding]:
        for problem in package.problems:
            if problem.kind == ProblemKind.NO_SOURCE:
                yield self._finding(PACKAGE_MODEL, ctx, problem, package.path)

    def _finding(self, model: str, ctx: Context, problem: Problem, fallback: str) -> Finding:
        return self.finding(model, ctx, self.MESSAGES["no-kernel-source"].format(problem=problem.message),
                            _problem_location(problem, fallback), subject=problem, fix=self.FIXES["no-kernel-source"],
                            key=f"no-source:{stable(problem.message)}")


@register
class UnparsedMember(UnparsedMemberWords, Rule):
    """A part of the package could not be read or parsed.

    ## What it does
    Reports the parts of the package the analyzer had to skip: a member that is not valid JSON or
    C++ where it should be, syntax errors inside `run_impl`, a wrapper without `run_impl`, a second
    wrapper in one model folder, an analysis limit (size, nesting, time) that was reached.

    ## Why it matters
    Whatever sits in a skipped part is not checked: assertions there are neither reported nor known
    to be safe. It can also mean that the package is truncated or was edited after it was built.

    ## Example
    ```text
    model/xyz.wrapper.cpp: 3 syntax error(s) inside run_impl; facts after them may be missing
    ```

    ## Fix
    Check that the package is intact (rebuild it, compare its checksum); if it is, report it so that
    the analyzer can learn the construct it could not parse.
    """

    name = "unparsed-member"
    code = "AOTI009"
    consequence = Consequence.SILENT

    VALID = (Case("fixtures/gather_dyn.cpu.stripped.pt2"),)
    INVALID = (
        Case("fixtures/gather_dyn.cpu.stripped.pt2", {"message_key": "unparsed-member"},
             edit=(".wrapper.cpp", rb"inputs\.clear\(\);", b"inputs.clear(; }}} ((")),
    )

    KINDS = (ProblemKind.PARSE, ProblemKind.UNREADABLE, ProblemKind.LIMIT)

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        for problem in model.problems:
            if problem.kind in self.KINDS:
                yield self._finding(model.name, ctx, problem, model.wrapper_path or model.name)

    def check_package(self, package: Package, ctx: Context) -> Iterable[Finding]:
        for problem in package.problems:
            if problem.kind in self.KINDS:
                yield self._finding(PACKAGE_MODEL, ctx, problem, package.path)

    def _finding(self, model: str, ctx: Context, problem: Problem, fallback: str) -> Finding:
        location = _problem_location(problem, fallback)
        what = self.MESSAGES[f"unparsed-member.{problem.kind}"]
        return self.finding(model, ctx, self.MESSAGES["unparsed-member"].format(what=what,
                                                                           problem=problem.message),
                            location, subject=problem, fix=self.FIXES["unparsed-member"],
                            key=f"{problem.kind}:{stable(location.path.rsplit('/', 1)[-1])}:{stable(problem.message)}")


@register
class UncheckedExternCall(UncheckedExternCallWords, Rule):
    """An ATen shim is called without checking its error code.

    ## What it does
    Finds `aoti_torch_*` shim calls in the wrapper's `run_impl` that are not wrapped in
    `AOTI_TORCH_ERROR_CODE_CHECK(...)`. Every shim returns an `AOTITorchError`; every other call in
    generated wrappers checks it, but some code paths (seen with `scatter_add` lowered to
    `aoti_torch_cpu_scatter_reduce_two_out` on CPU) discard it. Left out is a scatter or gather by
    the indices a sort or top-k returned along the same dim of a tensor of the same sizes (top-p
    sampling's mask scattered back to vocabulary order): its index is never out of range. Where a
    kernel launched after the call checks every value of the same index buffer against the target's
    size, an index the call discards fails there: the caller gets that error (an info).

    ## Why it matters
    The shim catches the C++ exception (an out-of-range index, an empty input) and returns an error
    code that nobody reads: the model returns normally with a partially computed output and nothing
    in the logs. Eager PyTorch raises `index 10 is out of bounds` for the same input. Where the size
    that empties the shim's target also fails an index check of the package (a gather of the same
    rows), the package raises that error, as eager does: the finding says so, an info.

    ## Example
    ```python
    def forward(self, x, idx, src):
        return x.scatter_add(0, idx, src)
    # CPU wrapper: `aoti_torch_cpu_scatter_reduce_two_out(buf0, buf0, 0, ...);` with its result ignored;
    # idx = 10 into 10 rows returns normally with part of the output missing.
    ```

    ## Fix
    Validate the op's index inputs before calling the model (for scatter: `0 <= idx < x.shape[dim]`),
    or compile the package for a device whose lowering checks the index (the CUDA build emits a
    device-side bound check), and report the codegen gap upstream.
    """

    name = "unchecked-extern-call"
    code = "AOTI011"
    consequence = Consequence.SILENT

    VALID = (
        Case("fixtures/stress/pkgs/scatter_add.cuda.stripped.pt2"),  # the CUDA lowering checks the index itself
        Case("fixtures/gather_dyn.cpu.stripped.pt2"),
        # Top-p sampling scatters its mask back by the sort's own indices: always in range.
        Case("fixtures/stranger14/cuda/nucleus.cuda.stripped.pt2"),
        # Counts per bucket: `scatter_add` by bucketize's insertion points (0..m) into m + 1 cells.
        Case("fixtures/stranger15/bucketize.cpu.stripped.pt2"),
    )
    INVALID = (
        # `aoti_torch_cpu_scatter_reduce_two_out(...)` with its error code discarded.
        Case("fixtures/stress/pkgs/scatter_add.cpu.stripped.pt2", {"message_key": "unchecked-extern-call.empty-target",
                                                                    "fix_key": "unchecked-extern-call.empty-target"}),
        # index_put with h = 0 (or w = 0) empties the target: the finding names the dim (the
        # user's fix is about that dim, not the shim).
        Case("fixtures/real/index_put.cpu.stripped.pt2", {"message_key": "unchecked-extern-call.empty-target",
                                                          "fix_key": "unchecked-extern-call.empty-target", "input": 0,
                                                          "dim": 0}, exported="fixtures/real/index_put.ep.pt2"),
        # A graph attention network: x empty empties the scatter's target, but the gather h[src]'s
        # index check fails at that size too, and the package raises it, as eager does.
        Case("fixtures/stranger5/gat.cpu.stripped.pt2", {"message_key": "unchecked-extern-call.empty-target.checked-first",
                                                         "fix_key": "unchecked-extern-call.empty-target", "input": 0,
                                                         "dim": 0, "severity": Severity.INFO},
             exported="fixtures/stranger5/gat.ep.pt2"),
        # Histogram bins scattered unchecked, then gathered by a kernel that checks every bin against the
        # grid's 256 cells: an out-of-range bin raises there (probed: n = 3000, 4096), as eager's scatter.
        Case("fixtures/stranger14/hist_bins.cpu.stripped.pt2", {"message_key": "unchecked-extern-call.checked-later",
                                                               "severity": Severity.INFO}),
    )

    def check(self, model: Model, ctx: Context) -> Iterable[Finding]:
        for launch in model.launches:
            if not launch.extern or launch.error_checked or launch.kernel in _CANNOT_FAIL or _sorted_indices(model, launch):
                continue
            inputs = sorted({i for name in launch.args for i in _input_positions(model, name)})
            who = ", ".join(model.input_text(i) for i in inputs) or self.MESSAGES["unchecked-extern-call.inputs"]
            fields = dict(call=launch.kernel, inputs=who)
            chain = tuple(c for c in (launch.comment,) if c)
            # The sizes that make the call fail: an input dim that empties its target.
            failure = E.extern_failure(model, launch) or {}
            key = "unchecked-extern-call"
            checked_first = failure.pop("checked_first", None)
            if failure:
                fields.update({k: failure.pop(k) for k in ("dims", "target", "empty_test")}, witness=failure["witness"],
                              assertion=checked_first)
                key = "unchecked-extern-call.empty-target" + (".checked-first" if checked_first else "")
                chain += (self.CHAIN[key].format(**fields),)
            # An index into an emptied target is out of range for eager too, which raises; the package
            # returns an empty result: no worse (the call's error that vanishes is the finding's point).
            # Where an index check fails at that size too, the package raises it, as eager does.
            eager = E.EAGER["index"] if checked_first else E.EAGER["target"] if failure else None
            later = None if failure else _checked_later(model, launch)
            if later is not None:
                key, eager = "unchecked-extern-call.checked-later", E.EAGER["scatter"]
                fields.update(index=str(later.index_buffer), kernel=later.kernel, bound=str(later.bound_value),
                              assertion=later.message, effect=outcome_fields(model, later)["effect"])
                chain += (self.CHAIN[key].format(**fields),)
            yield self.finding(model, ctx, self.MESSAGES[key].format(**fields), launch.location, subject=launch,
                               eager_rejects=eager,
                               fix=self.FIXES[key.removesuffix(".checked-first")].format(**fields), chain=chain,
                               key=f"unchecked:{launch.kernel}:" + ",".join(f"in{i}" for i in inputs), **failure)


def _checked_later(model: Model, launch) -> Assertion | None:
    """For a scatter or gather, an index check in a kernel launched after it that loads the same index
    buffer and bounds it by the target's size along `dim`: any index the call would reject fails there,
    and the package raises (or aborts) instead of returning the call's partial result."""
    found = _indexed(launch)
    if found is None:
        return None
    dim, index, target = found
    if target is None or not dim.isdigit() or int(dim) >= len(target):
        return None
    at = next(i for i, other in enumerate(model.launches) if other is launch)
    after = {later.kernel for later in model.launches[at + 1:]}
    shape = launch.arg_shapes[3] if len(launch.arg_shapes) > 3 else None
    for a in model.assertions:
        if a.linked and a.index_buffer == index and a.kernel in after \
                and str(a.bound_value) == target[int(dim)] and _covers(a.space_expr, shape):
            return a
    return None


def _covers(space: str | None, shape: tuple[str, ...] | None) -> bool:
    """Whether a kernel's iteration space is a whole multiple of a tensor's element count at sample sizes
    (`s64 * 8` over an index of `s64` values): it reads every value, not a slice of them."""
    if not space or not shape:
        return False
    numel = "*".join(f"({s})" for s in shape)
    try:
        names = intervals.names(f"({space}) + ({numel})")
        for value in (3, 17, 64):
            at = {n: value for n in names}
            count = intervals.evaluate(numel, at)
            if count <= 0 or intervals.evaluate(space, at) % count:
                return False
    except (ValueError, ZeroDivisionError):
        return False
    return True


def _input_positions(model: Model, arg: str) -> list[int]:
    return [inp.index for inp in model.inputs if inp.name == arg]


# Shims whose last output is indices along their `dim` (args[2]): a permutation of that dim (sort) or
# positions in it (topk).
_INDEX_PRODUCERS = ("_sort", "_sort_stable", "_argsort", "_topk")


def _indexed(launch) -> tuple[str, str, tuple[str, ...] | None] | None:
    """(dim, index buffer, target sizes) of a scatter or gather shim, `(out, self, dim, index, ...)`."""
    name = launch.kernel
    if not ("scatter" in name or "gather" in name) or len(launch.args) < 4 or len(launch.arg_shapes) < 2:
        return None
    return launch.args[2], launch.args[3], launch.arg_shapes[1]


# Shims whose output is an insertion point in [0, n], n the last dim of their searched argument.
# Ops called through the proxy executor (no C shim) that read no index and fail on no value of a
# tensor they accept: an FFT's conjugate and copy (CUDA autocorrelation); their error codes carry nothing.
_CANNOT_FAIL = frozenset({"aten._conj", "aten.clone", "aten.resolve_conj", "aten.resolve_neg", "aten.alias"})
_SEARCHES = {"_bucketize_Tensor": 1, "_searchsorted_Tensor": 0}


def _sorted_indices(model: Model, launch) -> bool:
    """A scatter or gather whose indices are always in range: those a sort or top-k returned along the
    same dim of a tensor of the same sizes (top-p sampling scatters its sorted mask back by the sort's
    indices), or a bucketize's into a dim longer than its boundaries (counts per bucket in m + 1 cells)."""
    found = _indexed(launch)
    if found is None:
        return False
    dim, index, target = found
    for producer in model.launches:
        if not (producer.extern and producer.args and producer.args[-1] == index):
            continue
        if producer.kernel.endswith(_INDEX_PRODUCERS) and len(producer.args) > 2 and producer.args[2] == dim:
            source = producer.arg_shapes[0] if producer.arg_shapes else None
            return source is not None and target is not None and source == target
        searched = next((at for suffix, at in _SEARCHES.items() if producer.kernel.endswith(suffix)), None)
        if searched is not None and target is not None and dim.isdigit() and int(dim) < len(target):
            shape = producer.arg_shapes[searched] if len(producer.arg_shapes) > searched else None
            return shape is not None and len(shape) > 0 and _longer(target[int(dim)], str(shape[-1]))
    return False


def _longer(size: str, n: str) -> bool:
    """Whether `size` > `n` at sample sizes (`1 + s29` against `s29`): room for every insertion point."""
    try:
        names = intervals.names(f"({size}) + ({n})")
        return all(intervals.evaluate(size, at) > intervals.evaluate(n, at)
                   for at in ({name: value for name in names} for value in (0, 1, 3, 17, 64)))
    except (ValueError, ZeroDivisionError):
        return False
