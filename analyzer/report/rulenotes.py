"""What a rule's page adds to its docstring: the options that change its verdict and its known
limitations. Keyed by rule name; `docs/rules/*.md` and `aoti-lint explain` show them.

Every rule reads `--input-names` and `--exported-program` for wording (the user's input names in
messages and witnesses); only the effects on the verdict are listed here.
"""

from __future__ import annotations

NAMES_ONLY = ("`--exported-program` and `--input-names` change only the wording (the user's input names "
              "in the message and the witness).")

# The rules whose verdict `--runtime-checks on` changes (the checks AOTI_RUNTIME_CHECK_INPUTS=1 enables
# count as always run: analyzer.query.sizes.as_deployed).
RUNTIME_ON = (" `--runtime-checks on` (or `runtime-checks = \"on\"`: production sets AOTI_RUNTIME_CHECK_INPUTS=1): "
              "not reported where the check that variable enables rejects the witness.")

OPTIONS: dict[str, str] = {
    "empty-index-bound": (
        NAMES_ONLY + " A declared `Dim(\"n\", min=1)` does not remove the finding: the package does not "
        "enforce declared ranges, so an empty input still reaches the kernel. `--select`/`--ignore` and "
        "`[tool.aoti-lint]` turn the rule off."),
    "unenforced-lower-bound": (
        NAMES_ONLY + " Declaring `Dim(..., min=0)` does not change it: the package is still compiled "
        "for its own minimum." + RUNTIME_ON),
    "index-exceeds-constant-bound": (
        "`--exported-program`: a declared `max` counts in the interval arithmetic with the compiled one "
        "(the tighter wins): a max above the bound gives a warning instead of an error. A max within the "
        "bound gives no finding only when a check that always runs enforces it; checked only with "
        "`AOTI_RUNTIME_CHECK_INPUTS=1` it is a warning (size max+1 runs by default), never checked an "
        "error; with `--runtime-checks off` an error too, with `--runtime-checks on` not reported. "
        "`--input-names` changes only the wording."),
    "division-by-dynamic-size": NAMES_ONLY + " Declared minimums are not enforced by the package and do "
                                             "not remove the finding.",
    "empty-reduction": NAMES_ONLY + " Declared minimums are not enforced by the package and do not "
                                    "remove the finding.",
    "target-device-mismatch": (
        "`--target-device cpu|cuda` and `--target-sm SM` (or `target-device`/`target-sm` in "
        "`[tool.aoti-lint]`): without them the rule says nothing. `--target-sm` alone implies CUDA."),
    "no-kernel-source": "None: it reports what the package contains.",
    "unlinked-assertion": "None. `--input-names` changes only the wording.",
    "unparsed-member": (
        "The limits `--max-member-size`, `--max-total-size`, `--max-nesting` and `--timeout` (and their "
        "`[tool.aoti-lint]` keys): a member over a limit is skipped and reported here."),
    "compiled-range-narrower-than-declared": (
        "`--exported-program EP.pt2` (or an exported program inside the package): without a declared "
        "range the rule says nothing."),
    "unchecked-extern-call": "None.",
    "unenforced-dim-equality": NAMES_ONLY + RUNTIME_ON,
    "unenforced-divisibility": NAMES_ONLY + RUNTIME_ON,
    "unchecked-export-guard": (
        "Needs an exported program (`--exported-program`, or one inside the package) of torch 2.9 or later: "
        "its `guards_code` is what it reads. `--runtime-checks` does not change the verdict: the guards are "
        "checked neither by default nor with AOTI_RUNTIME_CHECK_INPUTS=1."),
    "adaptive-pool-traced-size": (
        "Needs an exported program (`--exported-program`, or one inside the package): its graph names the "
        "pooling and its map's sizes. `--runtime-checks` does not change the verdict: nothing checks the "
        "traced size, not even AOTI_RUNTIME_CHECK_INPUTS=1."),
    "ceil-mode-pool-traced-rounding": (
        "Needs an exported program (`--exported-program`, or one inside the package): its graph names the "
        "pooling, its `ceil_mode` and its map's sizes, traced and symbolic. `--runtime-checks` does not change "
        "the verdict: nothing checks the map's size, not even AOTI_RUNTIME_CHECK_INPUTS=1."),
    "stride-from-traced-size": (
        "None: it reads the package's kernels only. `--runtime-checks` does not change the verdict: nothing "
        "checks the sizes where the strides agree, not even AOTI_RUNTIME_CHECK_INPUTS=1."),
    "unchecked-input-layout": (
        "`--runtime-checks off` (or `runtime-checks = \"off\"` in `[tool.aoti-lint]`: production does not set "
        "AOTI_RUNTIME_CHECK_INPUTS): a warning (the model returns wrong values silently); `--runtime-checks on`: "
        "not reported (the package rejects other layouts and dtypes); unset: info, since every package built "
        "with the default configuration shares it. " + NAMES_ONLY),
    "index-exceeds-dynamic-bound": (
        "`--exported-program`: a declared `min` counts with the compiled one (the larger wins): sizes below "
        "it are not reported (the caller promised not to send them). `--input-names` changes only the wording."),
    "data-dependent-size-check": (
        "`--exported-program`: a witness size above the declared max says so (the finding stays info). "
        "`--input-names` changes only the wording."),
    "store-into-empty-buffer": NAMES_ONLY + " Declared minimums are not enforced by the package and do not "
                                            "remove the finding.",
    "read-from-empty-buffer": (
        "`--exported-program`: a witness outside the declared range (`Dim(\"h\", min=1)`, h = 0) lowers the "
        "finding to a warning. `--input-names` changes only the wording."),
    "read-past-constant": (
        "`--exported-program`: a declared `max` that nothing checks at run time does not remove the "
        "finding (a warning when the compiled max is checked with `AOTI_RUNTIME_CHECK_INPUTS=1`; an error with "
        "`--runtime-checks off`, not reported with `--runtime-checks on`). "
        "`--input-names` changes only the wording."),
}

STATIC = ("It reads the package's source only: a verdict is about what the generated code allows, not "
          "about the inputs your callers really send.")

LIMITATIONS: dict[str, str] = {
    "empty-index-bound": (
        STATIC + " Assertions in kernels present only as binaries are not seen (`no-kernel-source`); "
        "assertions it cannot link to an input are reported as `unlinked-assertion`, never as this "
        "rule. A bound that is 0 only for a combination of sizes is found when the combination sets "
        "single dims to 0; bounds whose value the expression language cannot evaluate are not reported."),
    "unenforced-lower-bound": (
        STATIC + " Size 1 below a compiled minimum of 2 often runs correctly (see `fixtures/README.md`: "
        "`gather_dyn` with n = 1 matches eager); the finding says the size was never compiled for, not "
        "that it fails."),
    "index-exceeds-constant-bound": (
        STATIC + " Only positional indices (from iteration ranges and sizes) are checked; an index that is "
        "loaded data (token ids into an embedding) is a data error and is not reported. A position computed "
        "from one input's values and sizes gets the smallest value that reads past the table at the witness's "
        "sizes (not at every size), and is an info: which values callers send is not in the package. Upper "
        "bounds recorded as 2147483647 (32-bit indexing) are treated as unbounded."),
    "division-by-dynamic-size": (
        STATIC + " Divisions hidden inside library calls (extern kernels, cuBLAS) are not seen; when an index "
        "assertion trips on the same empty input first, the division is not reported. A kernel's own index "
        "arithmetic is read in C++ kernels only (a Triton lane divides masked or not, and traps nothing), "
        "at sizes up to 64 above 0, and is not reported where a convolution rejects that size (whether it "
        "runs first is not known)."),
    "empty-reduction": (
        STATIC + " Reductions inside extern kernels are not seen; `sum`/`prod` over empty dims are not "
        "reported because their results match eager."),
    "target-device-mismatch": (
        "It compares metadata (`AOTI_DEVICE_KEY`, `AOTI_COMPUTE_CAPABILITY`), not the cubins themselves; "
        "a package without that metadata is not reported."),
    "no-kernel-source": "Binaries are listed, never opened or disassembled.",
    "unlinked-assertion": (
        "Each finding is a gap in the analyzer as much as in the package; the reason in the message "
        "says which link is missing."),
    "unparsed-member": (
        "The rest of the package is still analyzed, so other rules can miss findings that live in the "
        "skipped member."),
    "compiled-range-narrower-than-declared": (
        "The exported program is matched to models by name; a model without a matching program is "
        "not compared."),
    "unchecked-extern-call": (
        "It finds shim calls in the wrapper's `run_impl` only; shims called from kernel sources are not "
        "checked."),
    "unenforced-dim-equality": (
        STATIC + " Equalities the package checks itself (`check_input_N` with the check always on) are not "
        "reported."),
    "unenforced-divisibility": (
        STATIC + " Relations (`analyzer.query.relations`) are read from the package's quotient symbols "
        "(`s6 = (1.0/20.0)*size`, `c10::div_floor_integer`), its size checks "
        "(`assert_size_stride(x, {..., 20L*s6}, {20L*s6, 1L})`: sizes and strides) and the exported "
        "program's dim expressions (`20*s6`) and range constraints. A relation only the exported program "
        "declares (run_impl reads no quotient) is not reported, and products of dims (`h*w` "
        "flattened into one dim) are not read."),
    "index-exceeds-dynamic-bound": (
        STATIC + " Only an index whose every value the kernel bounds by a constant (a clamp, a `min`) is "
        "checked; an index bounded by a size, or read from a buffer another kernel bounds, is not. The finding "
        "assumes the model can produce the constant (any input value is clamped to it): an input whose values "
        "never reach it does not fail. The witness gives the sizes; the values are described, not given."),
    "data-dependent-size-check": (
        STATIC + " It cannot tell a bound the model asks for (`torch._check(idx.shape[0] >= 2)`: eager raises "
        "too) from one `torch.export` assumed (nms keeping >= 2 boxes: eager returns): the exported program "
        "attributes both to the op's line, hence info. Only counts of `nonzero`, `argwhere`, `masked_select`, "
        "`unique` and torchvision's `nms` are read (not boolean-mask indexing, nor `.item()` values, whose "
        "bounds come from the model's own checks); the witness gives the shapes and describes the values."),
    "store-into-empty-buffer": (
        STATIC + " Only writes of kernels whose source is read in full (C++ kernels; Triton kernels with an "
        "assertion, a division or a reduction) into buffers whose size the wrapper's allocation or an input's "
        "shape gives; the write's offset is not read: it reports a buffer that is empty while its write's "
        "loops run, not a write past the end of a non-empty one. A Triton write counts as running only when "
        "every numel of its grid (reduction included) is non-zero."),
    "read-from-empty-buffer": (
        STATIC + " As `store-into-empty-buffer`, for the loads in a kernel's definitions; a read that an index "
        "check, an always-on check of a data-dependent size, or an error-checked extern call given the empty "
        "tensor (which may raise) reaches first is not reported, though some of those calls accept empty "
        "tensors. A data-dependent loop size (`.item()`) counts at the least its always-on check allows "
        "(unknown below 1: not reported). A Triton load masked by more than its grid (`tmp4 & xmask` of a "
        "`cat`) is not counted; a C++ read inside a lambda called under a condition is not read at all."),
    "read-past-constant": (
        STATIC + " Only loads whose index the value-range engine bounds over iteration ranges are checked; "
        "a read in a kernel whose constant-bound index assertion over the same size fails first is left "
        "to `index-exceeds-constant-bound`. Vector loads count their first element."),
    "unchecked-export-guard": (
        "Without the exported program nothing is reported: the package's size arithmetic alone cannot tell a "
        "floor the op defines (a stride-14 convolution's `div_floor_integer(h, 14L)`) from one a guard "
        "assumed (a quotient the package reads as a size symbol is `unenforced-divisibility`'s). Sizes are "
        "tried up to 256 above each dim's smallest, strides are those of contiguous inputs, and a guard over "
        "anything but sizes, strides and storage offsets (or of a form outside the parser's whitelist) is "
        "skipped. What the broken guard does at run time is not derived: the probes of fixtures/recall show "
        "wrong shapes and wrong values."),
    "adaptive-pool-traced-size": (
        "Only `adaptive_avg_pool2d` and `adaptive_max_pool2d` (the lowerings seen to read a map's size with "
        "`guard_int`; Inductor's nearest upsampling does too, but its probes ran like eager), over a map whose "
        "side follows one input dim; the kernel is found by Inductor's descriptive names (the default "
        "`triton.descriptive_names`), and the traced size by the bins `(a*x) // b` in its text (where the "
        "traced size divided into a fixed window, any size no multiple of the bins stands for it). Sizes are "
        "tried up to 4096 above each dim's smallest; a size a convolution before the pooling rejects is skipped."),
    "ceil-mode-pool-traced-rounding": (
        "Only `max_pool2d` and `avg_pool2d` (their `_with_indices` form and the 1-d ones too) with windows of "
        "at most 25 elements, the ones Inductor lowers with `pooling_size`; 3-d poolings are not read. The "
        "rounding compiled is derived from Inductor's lowering at the traced size (the exported program's "
        "size hints), not read from the kernel; the kernel is found by Inductor's descriptive names. A map "
        "side must follow one input dim; sizes are tried up to 512 above each dim's smallest, skipping those "
        "a convolution before the pooling rejects; at most 64 distinct maps of one graph are searched."),
    "stride-from-traced-size": (
        "C++ kernels only (Triton's loads are not read), and only kernels that floor a size "
        "(`div_floor_integer`): a simplification without a floor is not seen. A stride is read from a term "
        "of the index holding one loop variable and otherwise constants and size parameters; two strides "
        "are compared over one size parameter at sizes 1 to 256 and must agree at one and differ at another "
        "where both step. Which of the two loads is wrong is not said (the one eager's layout disagrees "
        "with); the witness keeps the loop running at least twice."),
    "unchecked-input-layout": (
        "Torch 2.6 packages record no input checks: their layout is not known and nothing is reported. "
        "Inductor checks only static strides in `check_input_N`; a stride in size symbols is read from "
        "run_impl's `assert_size_stride` (torch >= 2.13) and is unknown (`?`) before. A stride of a dim of "
        "size 1 is never wrong (the guard ignores it; the package's own check does not). Whether a kernel "
        "really reads the input is not checked: an input passed only to an ATen call that accepts any "
        "layout is listed too."),
}
