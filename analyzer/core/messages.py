"""Every user-facing sentence the rules, the linker's chains and `why` emit, in one place (a leaf
module: it imports nothing from analyzer, so parsers, rules and reporters may all use it).

`MESSAGES[...]` are finding messages, `FIXES[...]` the `fix` texts, `CHAIN[...]` the lines the
rules append to an assertion's linking chain, `EFFECTS[...]` what happens at run time per device,
`WHY[...]` the causes, fixes and report lines of `aoti-lint why`. Keys start with the rule name (or
`why.`) that owns them. All are `str.format` templates with named fields; the rule fills them.

Each table is a `Catalog`: it records which keys were looked up and which fields were given when
`TRACE` is on, so that a test can show that every template and every field is used.

Long module: it is data, every sentence of the tool in one table per kind, so that wording, headlines
and their tests stay in one place; code that fills them lives with the rules and reporters.
"""

from __future__ import annotations

import string
from collections import defaultdict

# (table, key) -> the fields given a non-empty value; filled only while TRACE is true (tests).
TRACE = False
USED: dict[tuple[str, str], set[str]] = defaultdict(set)

# The most names a finding lists (kernels reading a size, calls, repeats of one check): a package
# decides how many there are, the report's size must not (`listed` says "and N more").
LIST_LIMIT = 20


class Text(str):
    """A filled template: the text, and the catalog key it came from (findings keep the key)."""

    key: str
    fields: dict

    def __new__(cls, text: str, key: str, fields: dict | None = None) -> "Text":
        out = super().__new__(cls, text)
        out.key = key
        # What the template was filled with (a headline reuses them); a Text rebuilt from a Text
        # (`Text(message + more, message.key)`) keeps them.
        out.fields = dict(getattr(text, "fields", None) or {} if fields is None else fields)
        return out

    def __add__(self, other: str) -> "Text":  # a message with a fragment appended keeps key and fields
        return Text(str.__add__(self, other), self.key, self.fields)

    def __reduce__(self):  # copy, deepcopy and pickle keep the key and fields
        return (Text, (str(self), self.key, self.fields))


class Template(str):
    """A catalog entry: a `str` whose `format()` records the fields it was given."""

    table: str
    key: str

    def __new__(cls, text: str, table: str, key: str) -> "Template":
        out = super().__new__(cls, text)
        out.table, out.key = table, key
        return out

    def __reduce__(self):
        return (Template, (str(self), self.table, self.key))

    @property
    def fields(self) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(self) if name}

    def format(self, *args: object, **fields: object) -> Text:
        if TRACE:
            USED[(self.table, self.key)].update(k for k, v in fields.items() if str(v))
        return Text(str.format(self, *args, **fields), self.key, fields)


class Catalog(dict):
    """`{key: Template}`; looking a key up marks it used (while `TRACE` is on)."""

    def __init__(self, name: str, entries: dict[str, str]) -> None:
        super().__init__({key: Template(text, name, key) for key, text in entries.items()})
        self.name = name

    def __getitem__(self, key: str) -> Template:
        value = super().__getitem__(key)
        if TRACE:
            USED[(self.name, key)]
        return value

    def __setitem__(self, key: str, text: str) -> None:
        super().__setitem__(key, Template(text, self.name, key))

    def get(self, key, default=None):
        return self[key] if key in self else default


def listed(names: "list[str] | tuple[str, ...]", sep: str = ", ") -> str:
    """The names joined, or the first LIST_LIMIT of them and `and N more`."""
    if len(names) <= LIST_LIMIT:
        return sep.join(names)
    return sep.join(names[:LIST_LIMIT]) + REPORT["and-more"].format(count=len(names) - LIST_LIMIT)


def read_by(kernels: "list[str] | tuple[str, ...]") -> list[str]:
    """The chain's `read by K` lines: at most LIST_LIMIT, then one line counting the rest."""
    lines: list[str] = [CHAIN["read-by"].format(kernel=k) for k in kernels[:LIST_LIMIT]]
    if len(kernels) > LIST_LIMIT:
        lines.append(CHAIN["read-by-more"].format(count=len(kernels) - LIST_LIMIT))
    return lines


def catalogs() -> list[Catalog]:
    return [v for v in globals().values() if isinstance(v, Catalog)]

# What an out-of-bounds index does at run time, by device.
EFFECTS = Catalog("EFFECTS", {
    "cuda": "a device-side assert (`CUDA error: device-side assert triggered`) that leaves the CUDA "
            "context unusable for the rest of the process",
    "cpu": "`RuntimeError: {message}` (or an abort of the whole process where the error cannot be "
           "propagated)",
    "cpu.raise": "`RuntimeError: {message}` raised to the caller",
    "cpu.abort": "an abort of the whole process (SIGABRT): the check runs inside an OpenMP parallel region, "
                 "which its `RuntimeError: {message}` cannot leave",
    "unknown": "a failed index assertion (`{message}`) at run time",
})

# What an empty reduction returns, by op.
IDENTITIES = Catalog("IDENTITIES", {
    "max": "-inf (the lowest value of the dtype)",
    "min": "inf (the highest value of the dtype)",
    "argmax": "an arbitrary index (0) of a value that does not exist",
    "argmin": "an arbitrary index (0) of a value that does not exist",
})

MESSAGES = Catalog("MESSAGES", {
    # AOTI001 empty-index-bound
    "empty-index-bound":
        "index bound `{bound}` of \"{assertion}\" in {kernel} is {dim_display} ({where}), which the package "
        "accepts as 0 ({range_text}): with it empty the bound is 0 and every index fails, {effect}",
    "empty-index-bound.expr":
        "index bound `{bound}` of \"{assertion}\" in {kernel} is {bound_display}, which is 0 when {dim_display} "
        "({where}) is {zero}, and the package accepts that ({range_text}): every index fails, {effect}",
    "empty-index-bound.zero": "empty",
    "empty-index-bound.zero-with": "empty (with {assignment})",
    # AOTI002 unenforced-lower-bound
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
    # AOTI003 index-exceeds-constant-bound
    "index-exceeds-constant-bound.unbounded":
        "\"{assertion}\" in {kernel}: the index ranges over [0, {extent}) and {dim_display} ({where}) has "
        "{no_bound}, so any size above {limit} trips the constant bound {bound_value}, {effect}",
    "index-exceeds-constant-bound.bounded":
        "\"{assertion}\" in {kernel}: the index ranges over [0, {extent}) and {dim_display} ({where}) may be "
        "up to {max} ({max_origin}), but sizes above {limit} trip the constant bound {bound_value}, {effect}",
    "index-exceeds-constant-bound.values":
        "\"{assertion}\" in {kernel}: the index ranges over [0, {extent}) where {symbols} is read from the "
        "values of {inputs} (e.g. `.item()`), and nothing bounds it: a value of {value} or more trips the "
        "constant bound {bound_value}, {effect}",
    "index-exceeds-constant-bound.values-witness":
        "{shapes}; with {symbols} = {value} (read from the values of {inputs})",
    # AOTI015 index-exceeds-dynamic-bound
    "index-exceeds-dynamic-bound":
        "\"{assertion}\" in {kernel}: the kernel itself keeps the index in [0, {high}] (a clamp of loaded "
        "values), but its bound `{bound}` is {bound_display}, and the package accepts {dim_display} ({where}) "
        "down to {low} ({range_text}): at any size up to {limit} an index value the model produces by design "
        "fails the check, {effect}",
    "index-exceeds-dynamic-bound.witness": "{shapes}; with values of {inputs} that make the index {high}",
    # AOTI016 data-dependent-size-check
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
    # AOTI017 store-into-empty-buffer
    "store-into-empty-buffer":
        "{kernel} writes {buffer} (`{pointer}`) inside loops of {space} iterations that do not shrink with "
        "{dim_display} ({where}), but {buffer} has {numel} elements, none when {dim_display} is 0, which the "
        "package accepts ({range_text}): every write lands outside the empty buffer, a segmentation fault "
        "(SIGSEGV) or silent memory corruption, with no error message",
    # AOTI018 read-from-empty-buffer
    "read-from-empty-buffer":
        "{kernel} reads {buffer} (`{pointer}`) inside loops of {space} iterations that do not shrink with "
        "{dim_display} ({where}), but {buffer} has {numel} elements, none when {dim_display} is 0, which the "
        "package accepts ({range_text}): every read lands outside the empty buffer, a segmentation fault "
        "(SIGSEGV) or garbage values, with no error message",
    # AOTI004 division-by-dynamic-size
    "division-by-dynamic-size.float":
        "{kernel} divides by `{divisor}` = {divisor_expr}, which is 0 when {dim_display} ({where}) is empty "
        "({range_text}): the result is NaN (0/0) or inf, silently",
    "division-by-dynamic-size.integer":
        "{kernel} computes an integer `/` or `%` by `{divisor}` = {divisor_expr}, which is 0 when {dim_display} "
        "({where}) is empty ({range_text}): integer division by zero kills the process (SIGFPE)",
    "division-by-dynamic-size.integer-kernel":
        "{kernel} computes an integer `/` or `%` by `{divisor}` = {divisor_expr}, which is 0 when {dim_display} "
        "({where}) is empty ({range_text}): the result of an integer division by zero is undefined on CUDA "
        "and an error on CPU",
    # AOTI005 empty-reduction
    "empty-reduction":
        "{op} reduction in {kernel} over {extent} elements: when {dim_display} ({where}) is empty "
        "({range_text}) it returns its identity, {identity}, where eager PyTorch raises",
    # AOTI006 target-device-mismatch
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
    # AOTI007 no-kernel-source
    "no-kernel-source": "{problem}",
    # AOTI008 unlinked-assertion
    "unlinked-assertion":
        "assertion \"{assertion}\" in {kernel} could not be linked to the model inputs: {reason}; "
        "nothing is known about when it fails",
    # AOTI010 compiled-range-narrower-than-declared
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
    # AOTI011 unchecked-extern-call
    "unchecked-extern-call":
        "{call} is called without AOTI_TORCH_ERROR_CODE_CHECK: the error it returns (e.g. an out-of-range "
        "index in {inputs}) is discarded, and the model returns a partial result without any message",
    "unchecked-extern-call.inputs": "its inputs",
    # AOTI012 unenforced-dim-equality
    "unenforced-dim-equality":
        "{dim_display} ({where}) must equal {expr}: the package never reads it and uses that size instead, "
        "but {enforcement}: a smaller tensor is read past its end (garbage or a crash, no error message), "
        "a larger one is partly ignored",
    # AOTI009 unparsed-member
    "unparsed-member": "skipped ({what}): {problem}",
    "unparsed-member.parse": "parse error",
    "unparsed-member.unreadable": "unreadable",
    "unparsed-member.limit": "analysis limit reached",
})

# The headline of each finding: under ~100 characters, effect first, in the user's names. Keyed like
# MESSAGES (every MESSAGES key that is a whole message, i.e. not in FRAGMENTS, has one; the
# catalog test checks it). Filled by analyzer/query/headline.py with the message's own fields plus:
# `{dim_name}` (`x.shape[1]`, or `input 0 dim 1` without names), `{input_name}`, `{site}` (
# ` in `transformer.wpe` (Embedding)` / ` at model.py:12` / empty), `{user_op}` (the user's op:
# `embedding`, else an op of the kernel's name, else `kernel`), `{verb}` (what a failed index check
# does on the device, VERBS), `{table_name}` (a constant's user name), `{aten_op}` (an extern call's
# ATen op), `{identity}` (SHORT_IDENTITIES), `{at_zero}` (AT_ZERO). The headline gets OUTSIDE_CONTRACT
# appended when the witnesses are outside the declared range, EAGER_REJECTS when eager rejects them too. Compiler names (tmpN, ksN, sN, argN_1,
# kernel names) never appear here: they belong to the detail.
HEADLINES = Catalog("HEADLINES", {
    "empty-index-bound": "empty {dim_name} {verb} the {user_op}{site}: its index bound is 0",
    "empty-index-bound.expr": "empty {dim_name} {verb} the {user_op}{site}: its index bound becomes 0",
    "unenforced-lower-bound": "{dim_name} < {min} runs unchecked in code compiled for >= {min}",
    "unenforced-lower-bound.no-kernels": "{dim_name} < {min} is accepted unchecked by code compiled for >= {min}",
    "unenforced-lower-bound.empty-calls": "{dim_name} < {min} runs unchecked; {at_zero}",
    "unenforced-lower-bound.empty-calls-only": "{dim_name} < {min} is accepted unchecked; {at_zero}",
    "unenforced-lower-bound.rejected":
        "{dim_name} = {below} fails with an unexpected size error (compiled for >= {min})",
    "index-exceeds-constant-bound.unbounded": "{dim_name} > {limit} {verb} the {user_op}{site}: past its {bound_value} rows",
    "index-exceeds-constant-bound.bounded":
        "{dim_name} > {limit} (allowed up to {max}) {verb} the {user_op}{site}",
    "index-exceeds-constant-bound.unenforced-max":
        "{dim_name} > {limit} {verb} the {user_op}{site}: its max is unchecked",
    "index-exceeds-constant-bound.values": "a value >= {value} in {input_name} {verb} the {user_op}{site}",
    "index-exceeds-dynamic-bound": "{dim_name} <= {limit} {verb} the {user_op}{site}: its index reaches {high}",
    "data-dependent-size-check.min": "`{aten_op}`{site} returning < {min} elements raises an error: compiled for >= {min}",
    "data-dependent-size-check.max": "{dim_name} = {size} lets `{aten_op}`{site} return > {max} elements: an error",
    "store-into-empty-buffer": "empty {dim_name} makes the {user_op}{site} write past an empty buffer (SIGSEGV)",
    "read-from-empty-buffer": "empty {dim_name} makes the {user_op}{site} read past an empty buffer (SIGSEGV)",
    "division-by-dynamic-size.float": "empty {dim_name} gives NaN/inf silently: division by 0 in the {user_op}{site}",
    "division-by-dynamic-size.integer": "empty {dim_name} kills the process: integer division by 0 in the {user_op}{site}",
    "division-by-dynamic-size.integer-kernel":
        "empty {dim_name}: integer division by 0 in the {user_op}{site} (undefined result)",
    "empty-reduction": "empty {dim_name} makes the {user_op}{site} return {identity}; eager raises",
    "target-device-mismatch.device": "model '{model}' is compiled for {device} and cannot run on {target}",
    "target-device-mismatch.sm": "model '{model}' is compiled for sm_{package_sm} and cannot run on sm_{target_sm}",
    "no-kernel-source": "kernels present only as binaries: their index checks cannot be verified",
    "unlinked-assertion": "an index check in the {user_op}{site} is not linked to any input: check it by hand",
    "compiled-range-narrower-than-declared": "{dim_name} = {sizes}: allowed by the export, never compiled for",
    "compiled-range-narrower-than-declared.above-only":
        "{dim_name} > {max}: allowed by the export, never compiled for",
    "compiled-range-narrower-than-declared.undeclared-max": "{dim_name} > {max}: never compiled for, and no declared max says so",
    "unchecked-extern-call": "errors of `{aten_op}`{site} are discarded: partial result, no message",
    "unchecked-extern-call.empty-target":
        "empty {dim_name} makes `{aten_op}`{site} fail unseen: no error, a partial result",
    "unenforced-dim-equality": "{dim_name} != `{expr}` is unchecked: a smaller tensor is read past its end",
    "unparsed-member": "part of the package was skipped ({what}); the rest was analysed",
    "read-past-constant": "{dim_name} > {limit} silently reads past the end of {table_name}{site}",
    "unenforced-divisibility": "{dim_name} not {assumed} silently returns wrong values",
})

# Keys of MESSAGES that are parts of a message (filled into another), not a finding's message: they
# have no headline.
FRAGMENTS: set[str] = {
    "empty-index-bound.zero", "empty-index-bound.zero-with", "index-exceeds-constant-bound.values-witness", "index-exceeds-dynamic-bound.witness", "data-dependent-size-check.witness",
    "target-device-mismatch.sm.major", "target-device-mismatch.sm.minor", "target-device-mismatch.sm.arch",
    "unchecked-extern-call.inputs", "unparsed-member.parse", "unparsed-member.unreadable", "unparsed-member.limit",
    "unenforced-lower-bound.sdpa", "unenforced-lower-bound.zero-check", "compiled-range-narrower-than-declared.above", "unenforced-lower-bound.reach",
    "unenforced-lower-bound.reach-zero", "unenforced-lower-bound.declared", "unenforced-lower-bound.also",
    "unenforced-lower-bound.dim", "unenforced-lower-bound.dim-declared",
}

# What size 0 does where extern calls receive empty tensors (`{at_zero}`): the flash attention's
# SIGFPE when it is one of them (the message's `{sdpa}` fragment), else the plain fact.
AT_ZERO = Catalog("AT_ZERO", {
    "calls": "at 0 ATen calls get empty tensors",
    "sdpa": "at 0 flash attention kills the process (SIGFPE)",
})

# Appended to a headline whose witnesses the exported program's declared range excludes.
OUTSIDE_CONTRACT = " (outside the declared range)"
# The headline of a finding whose witness eager PyTorch rejects the same way (rules `_eager_rejects`).
EAGER_REJECTS = " (eager rejects it too)"

# What an empty reduction returns, by op, in a headline (`{identity}`).
SHORT_IDENTITIES = Catalog("SHORT_IDENTITIES", {
    "max": "-inf",
    "min": "inf",
    "argmax": "index 0",
    "argmin": "index 0",
})

# What a failed index check does, by device, as a headline's verb.
VERBS = Catalog("VERBS", {
    "cuda": "crashes",
    "cpu": "aborts",
    "cpu.abort": "aborts",
    "cpu.raise": "raises an error in",
    "unknown": "fails",
})

# Lines of the human reports (text, markdown) that are not about one finding.
REPORT = Catalog("REPORT", {
    # A fix already printed in full for an earlier finding of the same package.
    "see-fix": "as for {code} above",
    # The same finding in other kernels (rules.merge_repeats), one line each.
    "also": "also in {kernel} at {where}",
    "also-more": "also in {count} more kernels",
    # A list of names cut at LIST_LIMIT (`listed`).
    "and-more": " and {count} more",
    # The markdown report cut to its size budget.
    "more": "**{count} more findings in the full report** (`aoti-lint --format text`, JSON or SARIF).",
})

FIXES = Catalog("FIXES", {
    "empty-index-bound":
        "reject empty inputs before calling the model (`if {empty_test}: ...`){env}, or handle size 0 "
        "outside the model (and declare Dim(..., min=1) so that the exported contract says so)",
    "unenforced-lower-bound":
        "run with AOTI_RUNTIME_CHECK_INPUTS=1 so that the package rejects {dim_display} < {min}, or check "
        "`{check_expr} >= {min}` before calling the model and handle smaller inputs outside it (declaring "
        "Dim(..., min=0) does not change this: the package is still compiled for >= {min})",
    "unenforced-lower-bound.none":
        "check `{check_expr} >= {min}` before calling the model and handle smaller inputs outside it",
    # Appended to the first dim's fix when the input has more (one finding per input).
    "unenforced-lower-bound.also": "; the same for the input's other dims (`{checks}`)",
    "index-exceeds-constant-bound":
        "declare the dimension's real limit when exporting (Dim(..., max={bound_value})) and run with "
        "AOTI_RUNTIME_CHECK_INPUTS=1, or reject `{check_expr} > {limit}` before calling the model, or size the "
        "indexed table for the longest input",
    "index-exceeds-constant-bound.enforced":
        "lower the dimension's max to {limit} when exporting (Dim(..., max={limit})), or size the indexed table "
        "for {max}",
    "index-exceeds-constant-bound.values":
        "bound the value in the model with `torch._check({symbols} <= {bound_value})` (the package then checks "
        "it at every call), or reject larger values before calling the model",
    "index-exceeds-dynamic-bound":
        "declare the dimension's real minimum when exporting (Dim(..., min={need})) and run with "
        "AOTI_RUNTIME_CHECK_INPUTS=1, or reject `{check_expr} <= {limit}` before calling the model, or clamp the "
        "index in the model to the size it indexes (`{check_expr} - 1`) instead of {high}",
    "data-dependent-size-check.min":
        "if the model needs {symbol} >= {min}, reject inputs for which {call} returns fewer elements before "
        "calling the package (or catch its error); if not, re-export with an example input that gives {value} "
        "(or `torch._check` bounds that allow it) and recompile",
    "data-dependent-size-check.max":
        "reject {dim_display} > {max_size} before calling the model{env}",
    "data-dependent-size-check.env":
        ", or run with AOTI_RUNTIME_CHECK_INPUTS=1 so that the input check rejects it with an error about the input",
    "store-into-empty-buffer":
        "reject empty inputs before calling the model (`if {empty_test}: ...`){env}",
    "read-from-empty-buffer":
        "reject empty inputs before calling the model (`if {empty_test}: ...`){env}",
    "division-by-dynamic-size.float":
        "reject empty inputs before calling the model (`if {check_expr} == 0: ...`){env}, or guard the "
        "division in the model (e.g. divide by `max(n, 1)`)",
    "division-by-dynamic-size.integer":
        "reject empty inputs before calling the model (`if {check_expr} == 0: ...`){env}",
    "empty-reduction":
        "reject empty inputs before calling the model (`if {check_expr} == 0: ...`), as eager PyTorch does{env}",
    # Appended as {env} where the package's own (gated) check would reject size 0.
    "env":
        ", or run with AOTI_RUNTIME_CHECK_INPUTS=1 so that the package's own check rejects size 0 with a "
        "clear error",
    "target-device-mismatch.device":
        "re-export and compile the package on (or for) a {target} machine",
    "target-device-mismatch.sm":
        "compile the package for the target GPU (on an sm_{target_sm} machine, or with "
        "TORCH_CUDA_ARCH_LIST set to it)",
    "no-kernel-source":
        "keep the kernel source in the package (do not strip `*.wrapper.cpp`/`*.kernel.cpp`) so that it can be "
        "checked",
    "unlinked-assertion":
        "check this assertion by hand; please report the package so that the analyzer can learn its form",
    "compiled-range-narrower-than-declared":
        "reject {dim_display} < {min} before calling the model (`if {check_expr} < {min}: ...`) or run with "
        "AOTI_RUNTIME_CHECK_INPUTS=1, and declare the real contract when exporting (Dim(..., min={min}))",
    "compiled-range-narrower-than-declared.above-only":
        "reject {dim_display} > {max} before calling the model (`if {check_expr} > {max}: ...`) or run with "
        "AOTI_RUNTIME_CHECK_INPUTS=1, and declare the real contract when exporting (Dim(..., max={max}))",
    "compiled-range-narrower-than-declared.undeclared-max":
        "reject {dim_display} > {max} before calling the model (`if {check_expr} > {max}: ...`) or run with "
        "AOTI_RUNTIME_CHECK_INPUTS=1, and declare the real contract when exporting (Dim(..., max={max}))",
    "unchecked-extern-call":
        "validate {inputs} before calling the model (the values the op indexes with must be in range), or "
        "build for a device whose lowering checks them; report the unchecked call upstream",
    "unenforced-dim-equality":
        "check `{check_expr} == {expr}` before calling the model, or run with AOTI_RUNTIME_CHECK_INPUTS=1 so "
        "that the package's own assert_size_stride rejects a mismatch",
    "unparsed-member":
        "check that the package was not truncated or edited; if it is intact, please report it",
})

CHAIN = Catalog("CHAIN", {
    "zero": "with {assignment} the bound{bound_expr} is {value}: no index satisfies `{index_var} < {value}`",
    "extent": "{index_var} reaches {extent} - 1; with {assignment} that is {value} >= {bound_value}",
    "index-range": "{index_var} lies in [0, {high}] whatever was loaded; with {assignment} the bound is {value}, "
                   "so an index of {high} fails `{index_var} < {value}`",
    "store": "{kernel} writes {buffer} through {pointer}: {numel} elements, written in loops of {space} iterations",
    "read": "{kernel} reads {buffer} through {pointer}: {numel} elements, read in loops of {space} iterations",
    "access-empty": "with {assignment} {buffer} has no elements and the loops still run (at least {count} iterations)",
    # The linker's chain of an assertion (link.py).
    "values": "values of {who} -> {var} in {kernel}",
    "index-extent": "{var} in {kernel} ranges over [0, {extent})",
    "index": "{var} in {kernel}",
    "via": "loaded from {buffer}, written by {kernel} at {where}",
    "launch": "at the launch at {launch}, one of {count} launches of {kernel} that pass other sizes",
    "via-range": "loaded from {buffer}, which holds values in [{low}, {high}] (written by {kernel} at {where})",
    "bound-argument": "must be < {bound}: {param} is argument {position} of the launch at {launch}, passed {arg}",
    "bound-constant": "must be < {bound} (a constant)",
    "bound-expr": "so the bound is {bound_expr}",
    "unbacked": "{symbols} is read from the values of {input}, e.g. `.item()`: no shape check bounds it",
    "range": "{symbol} = {dim}, {range}",
    "read-by": "read by {kernel}",
    "read-by-more": "read by {count} more kernels",
    "divides": "{kernel} divides by {divisor}",
    "divisor": "{divisor} = {divisor_display} (over {divisor_expr})",
    "divisor-zero": "with {assignment} the divisor is 0",
    "reduction": "{op} reduction in {kernel} over {extent} elements (over {extent_expr})",
    "reduction-empty": "with {assignment} nothing is reduced and the identity is returned",
    "tie": "{describe} must equal {expr} ({tied_expr})",
    # A witness outside the exported program's declared range (rules/__init__.py `_contract`).
    "outside-contract":
        "outside the contract: {sizes}; the package does not reject it, but the caller promised not to send it "
        "({was} lowered to {now})",
    "outside-contract.kept":
        "outside the contract: {sizes}; the package does not reject it, but the caller promised not to send it",
    "outside-contract.message": " (outside the declared contract: {sizes})",
    "outside-contract.witness": "outside the contract: {witness} ({sizes})",
    # A witness eager PyTorch rejects the same way (rules/__init__.py `_eager_rejects`).
    "eager-rejects": "eager rejects this input too ({how}): the caller's input, not a failure of the package "
                     "(at most {now})",
    "eager-rejects.message": "; eager PyTorch rejects this input too ({how}), so it is not a failure of the package",
})

NO_BOUND = Catalog("NO_BOUND", {
    "none": "no upper bound in the package",
    "int32": "no upper bound in the package other than {max} (the 32-bit indexing limit)",
})

# A dim's range in words (model.range_text): `compiled for [2, inf), checked only with ...`.
RANGE = Catalog("RANGE", {
    "unknown": "compiled range unknown",
    "static": "static size {value}",
    "compiled": "compiled for {span}, {checked}",
    "declared": "; declared {span}",
    # Dim.lower_unchecked
    "unrecorded": "compiled range not recorded in the package (no input checks in this layout; export's 0/1 "
                  "specialization still means the code assumes sizes >= {min}), never checked at run time",
    "disabled": "compiled for {span} (export's 0/1 specialization), lower bound never checked, not even with "
                "AOTI_RUNTIME_CHECK_INPUTS=1 (built with aot_inductor.check_lowerbound=False)",
    "disabled.upper": "; its upper bound {checked}",
})

# When a dim's range check runs, as part of RANGE["compiled"] and as an `inspect` table cell.
CHECKED = Catalog("CHECKED", {
    "env": "checked only with AOTI_RUNTIME_CHECK_INPUTS=1",
    "always": "checked at every call",
    "none": "not checked at run time",
})
CHECKED_CELL = Catalog("CHECKED_CELL", {
    "env": "only with AOTI_RUNTIME_CHECK_INPUTS=1",
    "always": "at every call",
    "none": "never",
})

# Who rejects a violation at run time, in `contract`'s and `diff`'s words.
WHO_CHECKS = Catalog("WHO_CHECKS", {
    "always": "always",
    "env": "only with AOTI_RUNTIME_CHECK_INPUTS=1",
    "none": "never",
})
# The same, as the clause after a condition of the emitted guard (a condition is written only for
# what is not always checked).
UNCHECKED = Catalog("UNCHECKED", {
    "env": "checked only with AOTI_RUNTIME_CHECK_INPUTS=1",
    "none": "never checked",
})

# How an input dim's range is enforced at run time.
ENFORCEMENT = Catalog("ENFORCEMENT", {
    "env": "the check runs only when AOTI_RUNTIME_CHECK_INPUTS=1 is set",
    "none": "nothing checks it at run time",
    "always": "the check runs at every call",
    # Dim.lower_unchecked: minimums that no check records or runs, in any environment.
    "unrecorded": "the package records and checks no input range (torch 2.6 layout), not even with "
                  "AOTI_RUNTIME_CHECK_INPUTS=1",
    "disabled": "the lower bound is never checked, not even with AOTI_RUNTIME_CHECK_INPUTS=1 (built with "
                "aot_inductor.check_lowerbound=False)",
})

# Every fix of a failure a shape guard can reject points at `aoti-lint contract`: a guard is the fix that needs no rebuild.
CONTRACT_HINT = "; `aoti-lint contract PKG --emit python` writes a check_inputs() guard that rejects such inputs"
for _key in ("empty-index-bound", "unenforced-lower-bound", "unenforced-lower-bound.none", "store-into-empty-buffer",
             "read-from-empty-buffer",
             "index-exceeds-constant-bound", "index-exceeds-constant-bound.enforced",
             "division-by-dynamic-size.float", "division-by-dynamic-size.integer", "empty-reduction"):
    FIXES[_key] += CONTRACT_HINT

# Where a dim's effective max comes from (the exported program's declaration, else the compiled
# range, by how it is enforced).
MAX_ORIGIN = Catalog("MAX_ORIGIN", {
    "declared": "declared",
    "always": "compiled",
    "env": "compiled, enforced only with AOTI_RUNTIME_CHECK_INPUTS=1",
    "none": "compiled, not enforced",
})

# `aoti-lint why`: causes and fixes per failure kind, and the lines of its text report.
WHY = Catalog("WHY", {
    # index-assert, a bound that can be 0
    "why.index.empty": "{describe} was empty (size 0)",
    "why.index.zero": "{empty}: every index fails `{lower}{index_var} < 0`{otherwise}",
    "why.index.otherwise": "; otherwise {other}",
    "why.index.keep": "; and keep the values of {who} in {span}",
    # index-assert, a dynamic bound that stays positive
    "why.index.left": "the index {index_var} left {span}",
    "why.index.keep-values": "keep the values of {who} in {span} (check them before calling the model)",
    "why.index.keep-bound": "keep {bound} large enough for the index",
    # where the index comes from
    "why.index.value": "a value of {who} was outside {span}",
    "why.index.values": "an index computed from the values of {who} was outside {span}",
    "why.index.extent-dim": "{describe} was above {bound}{allowed}: {index_var} ranges over [0, {extent}) and must "
                            "stay < {bound}",
    "why.index.extent-allowed": " (the exported program allows up to {declared_max})",
    "why.index.extent-expr": "{who} made {extent} exceed {bound}: {index_var} ranges over [0, {extent}) and must "
                             "stay < {bound}",
    "why.index.value-fix": "check that every value of {who} lies in {span} before calling the model{example}, or "
                           "map invalid ids to a valid one",
    "why.index.value-example-both": " (e.g. `0 <= {name}.min()` and `{name}.max() < {bound_value}`)",
    "why.index.value-example-max": " (e.g. `{name}.max() < {bound_value}`)",
    "why.index.constant-unlinked": "the index {index_var} left {span} (its source is not linked to an input)",
    "why.index.constant-unlinked-fix": "check the index values fed to this kernel",
    "why.index.unlinked": "the assertion failed, but {reason}",
    "why.index.unlinked-reason": "its bound is not linked to an input",
    "why.index.unlinked-fix": "check the inputs that reach this kernel by hand",
    # what the log itself shows about the failing call (analyzer/explain/why/evidence.py)
    "why.evidence.shows": "; the log shows {facts}",
    "why.evidence.shape": "{who} of shape {shape}",
    "why.evidence.values": "{who} with value(s) {values}",
    "why.evidence.bound": "so the bound {bound} was {value}",
    "why.evidence.outside": "and {values} is outside [{lower}, {value})",
    "why.evidence.inside": "and {values} is inside [{lower}, {value})",
    "why.evidence.extent-past": "so {index_var} ran over [0, {extent}), past {value}",
    "why.evidence.extent-inside": "so {index_var} ran over [0, {extent}), within {value}",
    "why.evidence.ruled-out": "; unlikely: the log's own shapes and values rule this out ({facts})",
    # a kernel's own literal check
    "why.zero-check": "{who} was 0: run_impl divides by it ({symbol}) and checks first that it is not 0, "
                      "which raised \"{message}\"",
    "why.zero-check.fix": "reject an empty {who} before calling the model; with AOTI_RUNTIME_CHECK_INPUTS=1 the "
                          "package rejects sizes below those it was compiled for, with a message naming the input",
    "why.kernel-check": "{kernel} checks its input values itself and rejected them: \"{message}\"",
    "why.kernel-check.fix": "keep the input values within what the operation accepts (the message says which); "
                            "eager PyTorch raises the same error for the same input",
    # a failed ATen shim call
    "why.extern-call": "the ATen op {call} (called from the wrapper, not a generated kernel) rejected its arguments, "
                       "which come from {who}: an index out of range, an empty or mismatched tensor; the op's own "
                       "message, if any, precedes this line in the log",
    "why.extern-call.fix": "check {who} against what {op} accepts (run the same inputs through the eager model: it "
                           "raises the op's full error) before calling the package",
    # run_impl's check of a data-dependent size (`Expected u0 >= 2 but received 1`)
    "why.symbol": "{symbol} is not an input size but {origin}; it was {got}, and the package was compiled for "
                  "{symbol} {expected}, which run_impl checks at every call",
    "why.symbol.call": "the size of what {call} returned from {who}",
    "why.symbol.values": "a size read from the values of {who}",
    "why.symbol.fix": "keep {who} such that {symbol} {expected} (e.g. handle inputs that give {got} outside the "
                      "model), or re-export with an example input that gives such a size and with "
                      "torch._check bounds that allow it, and recompile",
    # input checks (check_input_N, assert_size_stride)
    "why.check.too-small": "{where} was {got}, below the compiled range {compiled}{declared}{special}",
    "why.check.too-small.special": " (torch.export's Dim starts at 0, but Inductor specializes sizes 0 and 1, so a "
                                   "dynamic dim is compiled for >= 2)",
    "why.check.too-small.fix": "handle {expr} < {expected} outside the model (pad the input, or take another path "
                               "for small inputs); the package cannot run it",
    "why.check.too-large": "{where} was {got}, above the compiled range {compiled}{declared}",
    "why.check.too-large.fix": "split the input so that {expr} <= {expected}, or re-export with a larger "
                               "Dim(..., max=...) and recompile",
    "why.check.declared": "; the exported program declared {declared}",
    "why.check.dim": "{where} was {got}, but the package was compiled with it static at {expected}",
    "why.check.dim.fix": "pass {expr} == {expected}, or re-export with that dim dynamic (Dim(...)) and recompile",
    "why.check.stride": "{who} has stride {got} at dim {dim}, but the package was compiled for stride {expected} "
                        "(a non-contiguous or transposed tensor)",
    "why.check.stride.fix": "pass a contiguous tensor (`{name}.contiguous()`)",
    "why.check.dtype": "{who} is {got}, but the package was compiled for {expected}",
    "why.check.dtype.fix": "cast it before the call (`.to(torch.{expected})`)",
    "why.check.device": "{who} is on {got}, but the package was compiled for {expected} (AOTI_DEVICE_KEY={key})",
    "why.check.device.fix": "move every input to {expected} before the call (`.to('{expected}')`)",
    "why.check.size": "an input's size at dim {dim} was {got}, but the package was compiled for {expected}",
    "why.check.size.fix": "pass inputs of the compiled shape (run with AOTI_RUNTIME_CHECK_INPUTS=1 to learn which "
                          "input)",
    # assert_size_stride of a derived dim (analyzer.query.relations): `expected size 801==800`.
    "why.check.multiple": "{where} was {got}, not {assumed}: the package was compiled for {relation} and "
                          "takes it as {expected}; without AOTI_RUNTIME_CHECK_INPUTS=1 this size returns wrong values "
                          "silently (unenforced-divisibility, AOTI014)",
    "why.check.multiple.fix": "pad or trim {expr} to a multiple of {n} before the call (`{expr} % {n} == {remainder}`); "
                              "`aoti-lint contract PKG --emit python` writes a guard that checks it",
    # device mismatch
    "why.device": "model '{model}' was compiled for {compiled}{key} but a tensor it received was on {on}{expects}",
    "why.device.key": " (AOTI_DEVICE_KEY={key})",
    "why.device.expects": "; the package expects {inputs}",
    "why.device.input": "{input} on {device}",
    "why.device.another": "another device",
    "why.device.fix": "first checks: (1) move every input to {compiled} before the call (`x.to('{compiled}')`), "
                      "outputs you pass in too; (2) load the package on the device it was compiled for "
                      "(AOTI_DEVICE_KEY={key}); (3) run once with AOTI_RUNTIME_CHECK_INPUTS=1 so that each input's "
                      "device is checked and named",
    # the text report
    "why.report.nothing": "no recognised failure in the text (expected an `index out of bounds: ...` assertion, an "
                          "input check such as `input_handles[0]: dim value is too small ...`, or a device mismatch)",
    "why.report.failure": "failure: {failure}",
    "why.report.lost-cpu": "CPU kernel error whose message was lost (two threads threw at once): {raw}",
    "why.report.lost-cuda": "CUDA device-side assert (the assertion text is not in the log): {raw}",
    "why.report.no-match": "no match in {package}: nothing in the package produces this message (was the log "
                           "produced by another build of the model?)",
    "why.report.unlinked-text": "no linked cause in {package}, but the message occurs in the package at {where}: "
                                "code the analyzer did not link; check it by hand",
    "why.report.count": "{count} candidate cause(s) in {package}, most likely first:",
})
