"""The wording of the rules about inputs the package accepts unchecked and about the package itself
(AOTI002, 006, 007, 009, 010, 011, 012, 014, 016, 019, 020): one class per rule, which the rule
class inherits, as in words_kernels.py (which says how the tables and keys are laid out).
"""

from __future__ import annotations

from ..core.messages import CONTRACT_HINT, Catalog


class UnenforcedLowerBoundWords:
    """The wording of AOTI002 unenforced-lower-bound."""

    HEADLINES = Catalog("HEADLINES", {
        "unenforced-lower-bound": "{dim_name} < {min} runs unchecked in code compiled for >= {min}",
        "unenforced-lower-bound.no-kernels": "{dim_name} < {min} is accepted unchecked by code compiled for >= {min}",
        "unenforced-lower-bound.empty-calls": "{dim_name} < {min} runs unchecked; {at_zero}",
        "unenforced-lower-bound.empty-calls-only": "{dim_name} < {min} is accepted unchecked; {at_zero}",
        "unenforced-lower-bound.rejected":
            "{dim_name} = {below} fails with an unexpected size error (compiled for >= {min})",
        "unenforced-lower-bound.rejected-tied":
            "{dim_name} = {below} fails with an unexpected size error (compiled for >= {min})",
        "unenforced-lower-bound.sdpa-at": "{dim_name} < {min} runs unchecked; at {at} SIGFPE in flash "
                                          "attention",
    })
    MESSAGES = Catalog("MESSAGES", {
        "unenforced-lower-bound":
            "{dim_display} ({where}) was compiled for sizes >= {min} but {enforcement}: {reach} {kernels} unchecked",
        "unenforced-lower-bound.no-kernels":
            "{dim_display} ({where}) was compiled for sizes >= {min} but {enforcement}: {reach} the compiled code "
            "unchecked",
        # {reach}: the witness sizes: 0 as well as the size just below the minimum, since either can be what breaks.
        "unenforced-lower-bound.reach": "size {below} reaches",
        "unenforced-lower-bound.reach-zero": "sizes {below} and 0 reach",
        # Appended: the exported program's declared range on the same dim (AOTI010 merged into it: one finding per dim).
        "unenforced-lower-bound.declared":
            "; the exported program declares {declared}, so size(s) {sizes} are allowed by the contract but were "
            "never compiled for",
        # Appended: the input's other dims (one finding per input).
        "unenforced-lower-bound.also": "; the same holds for {dims}",
        "unenforced-lower-bound.dim": "{dim_display} ({where}, compiled for >= {min}, size {below})",
        "unenforced-lower-bound.dim-declared":
            "{dim_display} ({where}, compiled for >= {min}, size {below}; declared {declared}, so size(s) {sizes} "
            "were never compiled for)",
        "unenforced-lower-bound.empty-calls":
            "{dim_display} ({where}) was compiled for sizes >= {min} but {enforcement}: size {below} reaches "
            "{kernels} unchecked; at size 0, {calls} {verb} an empty tensor, which ATen may reject or crash on{sdpa}"
            "{zero}",
        # No generated kernel reads the dim, but extern calls (ATen shims, custom ops such as
        # torchvision.roi_align through the proxy executor) get its tensors.
        "unenforced-lower-bound.empty-calls-only":
            "{dim_display} ({where}) was compiled for sizes >= {min} but {enforcement}: {reach} the compiled code "
            "unchecked; at size 0, {calls} {verb} an empty tensor, which the op may reject or crash on",
        "unenforced-lower-bound.sdpa": " (CPU flash attention divides by zero: SIGFPE kills the process)",
        "unenforced-lower-bound.rnn": " (oneDNN's RNN layer divides by the empty batch: SIGFPE kills the process)",
        # A length computed from the dim (patches of a series: t // 4 - 1) is 0 at a size above 0.
        "unenforced-lower-bound.sdpa-at":
            "{dim_display} ({where}) was compiled for sizes >= {min} but {enforcement}: {reach} {kernels} "
            "unchecked; at size {at}, CPU flash attention gets a sequence length of {length} = 0 and divides by it: "
            "SIGFPE kills the process",
        # run_impl divides by the size and checks it first (BLOOM): size 0 ends in that error.
        "unenforced-lower-bound.zero-check":
            "; run_impl divides by {symbol} and checks first that it is not 0, so "
            "the call fails with `RuntimeError: {check}`",
        # A convolution among those calls rejects size 0 itself (stn's 3x3 conv at h = 0): eager's error.
        "unenforced-lower-bound.conv-rejects":
            "; a convolution among them raises `Kernel size can't be greater than actual input size` first (its "
            "input is {padded} after padding, its kernel {kernel}), as eager does",
        "unenforced-lower-bound.rejected":
            "{dim_display} ({where}) was compiled for sizes >= {min} and {enforcement}, but size {below} does not "
            "reach the kernels: {symbol} (the count {call} returns, at most the elements of its input) is checked "
            "by run_impl at every call, so the call fails with `RuntimeError: Expected {symbol} >= {smin} but "
            "received ...`, an error the eager model need not give",
        "unenforced-lower-bound.rejected-tied":
            "{dim_display} ({where}) was compiled for sizes >= {min} and {enforcement}, but size {below} does not "
            "reach the kernels: {symbol} (the size {call} returns, which run_impl requires to equal {dim_display}) "
            "is checked by run_impl at every call, so the call fails with `RuntimeError: Expected {symbol} >= "
            "{smin} but received {below}`, an error the eager model need not give",
    })
    FIXES = Catalog("FIXES", {
        "unenforced-lower-bound":
            "run with AOTI_RUNTIME_CHECK_INPUTS=1 so that the package rejects {dim_display} < {min}, or check "
            "`{check_expr} >= {min}` before calling the model and handle smaller inputs outside it (declaring "
            "Dim(..., min=0) does not change this: the package is still compiled for >= {min})" + CONTRACT_HINT,
        "unenforced-lower-bound.none":
            "check `{check_expr} >= {min}` before calling the model and handle smaller inputs outside it" + CONTRACT_HINT,
        # Appended to the first dim's fix when the input has more (one finding per input).
        "unenforced-lower-bound.also": "; the same for the input's other dims (`{checks}`)",
    })
    CHAIN = Catalog("CHAIN", {
        "unenforced-lower-bound.zero": "at size 0 ({zero}): {calls} {verb} an empty tensor",
        "unenforced-lower-bound.sdpa-at": "at {witness}: the flash attention's length {length} is 0 (no buffer "
                                          "of negative size is allocated before it)",
        "unenforced-lower-bound.zero-conv": "at size 0 ({zero}): {calls} {verb} an empty tensor; a convolution "
                                            "rejects it first, as eager does",
    })
    FRAGMENTS = frozenset({
        "unenforced-lower-bound.also", "unenforced-lower-bound.declared", "unenforced-lower-bound.dim",
        "unenforced-lower-bound.dim-declared", "unenforced-lower-bound.reach", "unenforced-lower-bound.reach-zero",
        "unenforced-lower-bound.sdpa", "unenforced-lower-bound.rnn", "unenforced-lower-bound.zero-check", "unenforced-lower-bound.conv-rejects",
    })


class TargetDeviceMismatchWords:
    """The wording of AOTI006 target-device-mismatch."""

    HEADLINES = Catalog("HEADLINES", {
        "target-device-mismatch.device": "model '{model}' is compiled for {device} and cannot run on {target}",
        "target-device-mismatch.sm": "model '{model}' is compiled for sm_{package_sm} and cannot run on sm_{target_sm}",
    })
    MESSAGES = Catalog("MESSAGES", {
        "target-device-mismatch.device":
            "model '{model}' was compiled for {device} ({key}={device_key}) but the target device is {target}: "
            "the package cannot run there",
        "target-device-mismatch.sm":
            "model '{model}' holds CUDA kernels compiled for sm_{package_sm} (AOTI_COMPUTE_CAPABILITY={package_sm}) "
            "but the target is sm_{target_sm}: {why}",
        "target-device-mismatch.sm.major":
            "a cubin built for compute capability {package_major}.x does not load on {target_major}.x",
        "target-device-mismatch.sm.minor":
            "a cubin built for {package_cc} needs a device of {package_cc} or a later minor revision of the same "
            "major version, and {target_cc} is older",
        "target-device-mismatch.sm.arch":
            "sm_{package_sm} is an architecture-specific target: its cubin runs only on exactly {package_cc}",
    })
    FIXES = Catalog("FIXES", {
        "target-device-mismatch.device":
            "re-export and compile the package on (or for) a {target} machine",
        "target-device-mismatch.sm":
            "compile the package for the target GPU (on an sm_{target_sm} machine, or with "
            "TORCH_CUDA_ARCH_LIST set to it)",
    })
    FRAGMENTS = frozenset({
        "target-device-mismatch.sm.arch", "target-device-mismatch.sm.major", "target-device-mismatch.sm.minor",
    })


class NoKernelSourceWords:
    """The wording of AOTI007 no-kernel-source."""

    HEADLINES = Catalog("HEADLINES", {
        "no-kernel-source": "kernels present only as binaries: their index checks cannot be verified",
    })
    MESSAGES = Catalog("MESSAGES", {
        "no-kernel-source": "{problem}",
    })
    FIXES = Catalog("FIXES", {
        "no-kernel-source":
            "keep the kernel source in the package (do not strip `*.wrapper.cpp`/`*.kernel.cpp`) so that it can be "
            "checked",
    })


class UnparsedMemberWords:
    """The wording of AOTI009 unparsed-member."""

    HEADLINES = Catalog("HEADLINES", {
        "unparsed-member": "part of the package was skipped ({what}); the rest was analysed",
    })
    MESSAGES = Catalog("MESSAGES", {
        "unparsed-member": "skipped ({what}): {problem}",
        "unparsed-member.parse": "parse error",
        "unparsed-member.unreadable": "unreadable",
        "unparsed-member.limit": "analysis limit reached",
    })
    FIXES = Catalog("FIXES", {
        "unparsed-member":
            "check that the package was not truncated or edited; if it is intact, please report it",
    })
    FRAGMENTS = frozenset({"unparsed-member.limit", "unparsed-member.parse", "unparsed-member.unreadable"})


class CompiledRangeNarrowerThanDeclaredWords:
    """The wording of AOTI010 compiled-range-narrower-than-declared."""

    HEADLINES = Catalog("HEADLINES", {
        "compiled-range-narrower-than-declared": "{dim_name} = {sizes}: allowed by the export, never compiled for",
        "compiled-range-narrower-than-declared.above-only":
            "{dim_name} > {max}: allowed by the export, never compiled for",
        "compiled-range-narrower-than-declared.undeclared-max": "{dim_name} > {max}: never compiled for, and no declared max says so",
    })
    MESSAGES = Catalog("MESSAGES", {
        "compiled-range-narrower-than-declared":
            "{dim_display} ({where}) is declared {declared} by the exported program but the package was compiled "
            "for {compiled}: size(s) {sizes} are allowed by the contract but were never compiled for ({enforcement}); "
            "they reach {kernels}",
        "compiled-range-narrower-than-declared.above-only":
            "{dim_display} ({where}) is declared {declared} by the exported program but the package was compiled "
            "for {compiled}: sizes above {max} are allowed by the contract but were never compiled for ({enforcement}); "
            "they reach {kernels}",
        "compiled-range-narrower-than-declared.undeclared-max":
            "{dim_display} ({where}) was compiled for {compiled} but no declared range is known for it (no exported "
            "program, or none for this dim), so nothing tells callers of that maximum: sizes above {max} were never "
            "compiled for ({enforcement}); they reach {kernels}",
        "compiled-range-narrower-than-declared.above": " and every size above {max}",
    })
    FIXES = Catalog("FIXES", {
        "compiled-range-narrower-than-declared":
            "reject {dim_display} < {min} before calling the model (`if {check_expr} < {min}: ...`) or run with "
            "AOTI_RUNTIME_CHECK_INPUTS=1, and declare the real contract when exporting (Dim(..., min={min}))",
        "compiled-range-narrower-than-declared.above-only":
            "reject {dim_display} > {max} before calling the model (`if {check_expr} > {max}: ...`) or run with "
            "AOTI_RUNTIME_CHECK_INPUTS=1, and declare the real contract when exporting (Dim(..., max={max}))",
        "compiled-range-narrower-than-declared.undeclared-max":
            "reject {dim_display} > {max} before calling the model (`if {check_expr} > {max}: ...`) or run with "
            "AOTI_RUNTIME_CHECK_INPUTS=1, and declare the real contract when exporting (Dim(..., max={max}))",
    })
    FRAGMENTS = frozenset({"compiled-range-narrower-than-declared.above"})


class UncheckedExternCallWords:
    """The wording of AOTI011 unchecked-extern-call."""

    HEADLINES = Catalog("HEADLINES", {
        "unchecked-extern-call": "errors of `{aten_op}`{site} are discarded: partial result, no message",
        "unchecked-extern-call.empty-target":
            "empty {dim_name} makes `{aten_op}`{site} fail unseen: no error, a partial result",
        "unchecked-extern-call.empty-target.checked-first":
            "errors of `{aten_op}` are discarded; empty {dim_name} raises an index error anyway",
        "unchecked-extern-call.checked-later":
            "errors of `{aten_op}` are discarded; a later check of the same indices reports them",
    })
    MESSAGES = Catalog("MESSAGES", {
        "unchecked-extern-call":
            "{call} is called without AOTI_TORCH_ERROR_CODE_CHECK: the error it returns (e.g. an out-of-range "
            "index in {inputs}) is discarded, and the model returns a partial result without any message",
        "unchecked-extern-call.inputs": "its inputs",
        # The message names the input dims and the witness too: the user needs both to act on it.
        "unchecked-extern-call.empty-target":
            "{call} is called without AOTI_TORCH_ERROR_CODE_CHECK and fails unseen when {dims} is 0 (e.g. {witness}): "
            "its target {target} is then empty and every index is out of range, but the error it returns is discarded "
            "and the model returns without any message where eager PyTorch raises",
        # The same sizes trip an index check of the package (a gather of the emptied rows): it raises
        # (before or after the call: either way the caller gets that error).
        "unchecked-extern-call.empty-target.checked-first":
            "{call} is called without AOTI_TORCH_ERROR_CODE_CHECK, so an error it returns is discarded; {dims} at 0 "
            "(e.g. {witness}) empties its target {target}, but the index check \"{assertion}\" fails at the same sizes "
            "and the package raises it: the discarded error is not what the caller sees",
        # Every index the call reads is checked against the same bound by a kernel after it.
        "unchecked-extern-call.checked-later":
            "{call} is called without AOTI_TORCH_ERROR_CODE_CHECK, so an out-of-range index in {index} is "
            "discarded there, but {kernel} checks every value of {index} against the target's {bound} rows later "
            "(\"{assertion}\"): {effect}; the partial result never reaches the caller",
    })
    FIXES = Catalog("FIXES", {
        "unchecked-extern-call":
            "validate {inputs} before calling the model (the values the op indexes with must be in range), or "
            "build for a device whose lowering checks them; report the unchecked call upstream",
        "unchecked-extern-call.empty-target":
            "reject `{empty_test}` before calling the model (eager PyTorch raises for it) and validate {inputs} "
            "(the values the op indexes with must be in range); report the unchecked call upstream",
        "unchecked-extern-call.checked-later":
            "validate {inputs} before calling the model (the values the op indexes with must be in range) if the "
            "later check's error is not the one to show; report the unchecked call upstream",
    })
    CHAIN = Catalog("CHAIN", {
        "unchecked-extern-call.empty-target":
            "with {dims} = 0 its target (sizes {target}) is empty, so every index is out of range: eager PyTorch "
            "raises, the package returns without a message",
        "unchecked-extern-call.empty-target.checked-first":
            "with {dims} = 0 its target (sizes {target}) is empty, but the index check \"{assertion}\" fails "
            "too: the package raises, as eager PyTorch does",
        "unchecked-extern-call.checked-later":
            "{index} is loaded whole by {kernel} and checked there: \"{assertion}\" ({bound} = the target's rows)",
    })
    FRAGMENTS = frozenset({"unchecked-extern-call.inputs"})


class UnenforcedDimEqualityWords:
    """The wording of AOTI012 unenforced-dim-equality."""

    HEADLINES = Catalog("HEADLINES", {
        "unenforced-dim-equality": "{dim_name} != `{expr}` is unchecked: a smaller tensor is read past its end",
    })
    MESSAGES = Catalog("MESSAGES", {
        "unenforced-dim-equality":
            "{dim_display} ({where}) must equal {expr}: the package never reads it and uses that size instead, "
            "but {enforcement}: a smaller tensor is read past its end (garbage or a crash, no error message), "
            "a larger one is partly ignored",
    })
    FIXES = Catalog("FIXES", {
        "unenforced-dim-equality":
            "check `{check_expr} == {expr}` before calling the model, or run with AOTI_RUNTIME_CHECK_INPUTS=1 so "
            "that the package's own assert_size_stride rejects a mismatch",
        "unenforced-dim-equality.none":
            "check `{check_expr} == {expr}` before calling the model: the package has no check of it, not even with "
            "AOTI_RUNTIME_CHECK_INPUTS=1",
    })
    CHAIN = Catalog("CHAIN", {
        "unenforced-dim-equality": "{describe} must equal {expr} ({tied_expr})",
    })


class UnenforcedDivisibilityWords:
    """The wording of AOTI014 unenforced-divisibility."""

    HEADLINES = Catalog("HEADLINES", {
        "unenforced-divisibility": "{dim_name} not {assumed} silently returns wrong values",
    })
    MESSAGES = Catalog("MESSAGES", {
        "unenforced-divisibility":
            "{dim_display} ({where}) is assumed to be {assumed}: the package reads {symbol} = {quotient} "
            "and uses {relation} as the size, but {enforcement}: a size like {size} runs as if it were "
            "{rounded} and returns wrong values without any message",
    })
    FIXES = Catalog("FIXES", {
        "unenforced-divisibility":
            "check `{check_expr} % {n} == {remainder}` before calling the model (pad or trim the input to a multiple "
            "of {n}), or run with AOTI_RUNTIME_CHECK_INPUTS=1 so that the package's size check `{relation}` rejects "
            "it" + CONTRACT_HINT,
        "unenforced-divisibility.none":
            "check `{check_expr} % {n} == {remainder}` before calling the model (pad or trim the input to a multiple "
            "of {n}); the package has no check of this, not even with AOTI_RUNTIME_CHECK_INPUTS=1" + CONTRACT_HINT,
    })
    CHAIN = Catalog("CHAIN", {
        "unenforced-divisibility": "{symbol} = {quotient} (read by run_impl); expected size {relation}: {enforcement}",
        "unenforced-divisibility.declared": "exported program: {dim_display} = {relation}{symbol_range}",
    })


class DataDependentSizeCheckWords:
    """The wording of AOTI016 data-dependent-size-check."""

    HEADLINES = Catalog("HEADLINES", {
        "data-dependent-size-check.min": "`{aten_op}`{site} returning < {min} elements raises an error: compiled for >= {min}",
        "data-dependent-size-check.max": "{dim_name} = {size} lets `{aten_op}`{site} return > {max} elements: an error",
    })
    MESSAGES = Catalog("MESSAGES", {
        "data-dependent-size-check.min":
            "{symbol} is the number of elements {call} returns for {who}, which their values decide (up to {cap}), "
            "and run_impl checks {symbol} >= {min} at every call: values that make {call} return {value} fail with "
            "`RuntimeError: Expected {symbol} >= {min} but received {value}` at any input size; eager PyTorch "
            "returns a result for them unless the model itself checks that bound",
        "data-dependent-size-check.max":
            "{symbol} is the number of elements {call} returns for {who}, which their values decide (up to {cap}), "
            "and run_impl checks {symbol} <= {max} at every call: with {dim_display} ({where}) = {size} ({range_text}) "
            "values that make {call} return {value} fail with `RuntimeError: Expected {symbol} <= {max} but "
            "received {value}`, an error about {symbol} rather than the input",
        "data-dependent-size-check.witness": "{shapes}; with values of {who} that make {call} return {value}",
    })
    FIXES = Catalog("FIXES", {
        "data-dependent-size-check.min":
            "if the model needs {symbol} >= {min}, reject inputs for which {call} returns fewer elements before "
            "calling the package (or catch its error); if not, re-export with an example input that gives {value} "
            "(or `torch._check` bounds that allow it) and recompile",
        "data-dependent-size-check.max":
            "reject {dim_display} > {max_size} before calling the model{env}",
        "data-dependent-size-check.env":
            ", or run with AOTI_RUNTIME_CHECK_INPUTS=1 so that the input check rejects it with an error about the input",
    })
    FRAGMENTS = frozenset({"data-dependent-size-check.witness"})


class UncheckedInputLayoutWords:
    """The wording of AOTI019 unchecked-input-layout."""

    HEADLINES = Catalog("HEADLINES", {
        "unchecked-input-layout": "{names}: another layout or dtype (e.g. {example}) returns wrong values unchecked",
    })
    MESSAGES = Catalog("MESSAGES", {
        "unchecked-input-layout":
            "the kernels index {inputs} with the strides and dtype the package was compiled for, and {enforcement}: "
            "by default a tensor of the right shape in another layout (a transposed or sliced view, channels_last) "
            "or of another dtype is read as if it had that layout, and the model returns wrong values without an "
            "error{deployment}",
        "unchecked-input-layout.off": " (the deployment does not set AOTI_RUNTIME_CHECK_INPUTS)",
        "unchecked-input-layout.witness": "{name} = {expr} (shape {shape}, strides {strides}{dtype})",
    })
    FIXES = Catalog("FIXES", {
        "unchecked-input-layout":
            "pass contiguous tensors of the compiled dtype ({calls}), or run with AOTI_RUNTIME_CHECK_INPUTS=1 so that "
            "the package rejects other layouts; `aoti-lint contract PKG --emit python` writes a check_inputs() guard "
            "that checks `.stride()` and `.dtype`",
    })
    FRAGMENTS = frozenset({"unchecked-input-layout.off", "unchecked-input-layout.witness"})


class UncheckedExportGuardWords:
    """The wording of AOTI020 unchecked-export-guard."""

    HEADLINES = Catalog("HEADLINES", {
        # The guard's text stays out of the headline: it is the exported program's (input names and all).
        "unchecked-export-guard": "{dim_name} = {size} breaks a guard the export assumed, {kind}: checked by nothing",
    })
    MESSAGES = Catalog("MESSAGES", {
        "unchecked-export-guard":
            "the exported program was traced under the guard {guard} (export kept it: a branch the model took on "
            "the example's sizes, or a view that needed them), and the package checks it neither by default nor "
            "with AOTI_RUNTIME_CHECK_INPUTS=1: {breaks} {is_are} inside the compiled and declared range and "
            "{breaks_verb} it, and the package runs them through code traced for sizes that keep it: wrong values or a "
            "wrong output shape without an error where eager takes the other branch, or an error from inside a "
            "kernel{also}",
        "unchecked-export-guard.also": "; the same sizes break {count} more guard{s} of the program",
    })
    FIXES = Catalog("FIXES", {
        "unchecked-export-guard":
            "check {guard_user} before calling the model (pad or resize the input so that it holds), or export "
            "with a Dim that states it (`{hint}`) so that the package is compiled and checked for it; "
            "AOTI_RUNTIME_CHECK_INPUTS=1 does not check it",
    })
    CHAIN = Catalog("CHAIN", {
        "unchecked-export-guard": "guard {guard} of the exported program: false at {assignment}",
        "unchecked-export-guard.range": "{dim_display}: compiled for {compiled}, declared {declared}; {enforcement}",
        "unchecked-export-guard.base": "every guard holds at {assignment}, the other sizes of each witness",
        "unchecked-export-guard.outer-crop":
            "the guard is {dim_display}'s padding being 0, and {other} pads a later dim of the same map: where "
            "it breaks, eager crops the padded rows off the outer dim, a prefix of the map that the package "
            "reads alike (an assumption with no known consequence; the later dim's guard is the one that bites)",
        "unchecked-export-guard.zero-pad":
            "the exported graph pads by `{amount}`, the guard's margin, which is 0 at {breaks}: there the traced "
            "branch pads by nothing, as eager's other branch does (an assumption with no known consequence)",
    })
    FRAGMENTS = frozenset({"unchecked-export-guard.also"})
