"""The wording of the rules about what a kernel does with an index, a read, a store, a division or
a reduction (AOTI001, 003, 004, 005, 008, 013, 015, 017, 018): one class per rule, which the rule
class inherits (`class EmptyIndexBound(EmptyIndexBoundWords, Rule)`), so that the rule holds its own
templates and nothing else; words_inputs.py holds the other rules'.

Each class has frozen `Catalog`s `HEADLINES`, `MESSAGES`, `FIXES`, `CHAIN` (the tables it has
words in) and `FRAGMENTS` (keys of `MESSAGES` filled into another message: they have no headline).
A key is `<rule-name>` or `<rule-name>.<variant>` (kebab-case words, dot-separated); `rules.catalog()`
checks that and builds the one catalog of every rule's and the shared templates (core/messages.py).
All are `str.format` templates with named fields; the rule fills them.
"""

from __future__ import annotations

from ..core.messages import CONTRACT_HINT, Catalog


class EmptyIndexBoundWords:
    """The wording of AOTI001 empty-index-bound."""

    HEADLINES = Catalog("HEADLINES", {
        "empty-index-bound": "empty {dim_name} {verb} the {user_op}{site}: its index bound is 0",
        "empty-index-bound.expr": "empty {dim_name} {verb} the {user_op}{site}: its index bound becomes 0",
        "empty-index-bound.at-size": "{dim_name} = {size} {verb} the {user_op}{site}: its index bound becomes 0",
    })
    MESSAGES = Catalog("MESSAGES", {
        "empty-index-bound":
            "index bound `{bound}` of \"{assertion}\" in {kernel} is {dim_display} ({where}), which the package "
            "accepts as 0 ({range_text}): with it empty the bound is 0 and every index fails, {effect}",
        "empty-index-bound.expr":
            "index bound `{bound}` of \"{assertion}\" in {kernel} is {bound_display}, which is 0 when {dim_display} "
            "({where}) is {zero}, and the package accepts that ({range_text}): every index fails, {effect}",
        "empty-index-bound.at-size":
            "index bound `{bound}` of \"{assertion}\" in {kernel} is {bound_display}, which is 0 when {dim_display} "
            "({where}) is {size} (below 0 when it is empty), and the package accepts that ({range_text}): every "
            "index fails, {effect}",
        "empty-index-bound.overread":
            "but first the kernel reads the index from {buffer}, which {call} allocates at those sizes "
            "while the package takes it to hold {count} elements ([{sizes}], checked only with "
            "AOTI_RUNTIME_CHECK_INPUTS=1): those reads run past its end, undefined behaviour (a crash such as "
            "SIGSEGV, or garbage indices) before `{message}` can raise",
        "empty-index-bound.zero": "empty",
        "empty-index-bound.zero-with": "empty (with {assignment})",
    })
    FIXES = Catalog("FIXES", {
        "empty-index-bound":
            "reject empty inputs before calling the model (`if {empty_test}: ...`){env}, or handle size 0 "
            "outside the model (and declare Dim(..., min=1) so that the exported contract says so)" + CONTRACT_HINT,
        "empty-index-bound.at-size":
            "reject inputs with `{empty_test}` before calling the model, or run with AOTI_RUNTIME_CHECK_INPUTS=1 so "
            "that the package's own check rejects sizes below {minimum} with a clear error, or handle those sizes "
            "outside the model (and declare Dim(..., min={least}) so that the exported contract says so)" + CONTRACT_HINT,
        "empty-index-bound.at-size-unchecked":
            "reject inputs with `{empty_test}` before calling the model, or handle those sizes outside the model "
            "(and declare Dim(..., min={least}) so that the exported contract says so)" + CONTRACT_HINT,
    })
    CHAIN = Catalog("CHAIN", {
        "empty-index-bound.zero": "with {assignment} the bound{bound_expr} is {value}: no index satisfies `{index_var} < {value}`",
    })
    FRAGMENTS = frozenset({"empty-index-bound.overread", "empty-index-bound.zero", "empty-index-bound.zero-with"})


class IndexExceedsConstantBoundWords:
    """The wording of AOTI003 index-exceeds-constant-bound."""

    HEADLINES = Catalog("HEADLINES", {
        "index-exceeds-constant-bound.unbounded": "{dim_name} > {limit} {verb} the {user_op}{site}: past its {bound_value} rows",
        "index-exceeds-constant-bound.bounded":
            "{dim_name} > {limit} (allowed up to {max}) {verb} the {user_op}{site}",
        "index-exceeds-constant-bound.unenforced-max":
            "{dim_name} > {limit} {verb} the {user_op}{site}: its max is unchecked",
        "index-exceeds-constant-bound.values": "a value >= {value} in {input_name} {verb} the {user_op}{site}",
        "index-exceeds-constant-bound.input-values":
            "a value >= {value} in {input_name} {verb} the {user_op}{site}: a position computed from it",
        "index-exceeds-constant-bound.cast-values":
            "a value >= {value} in {input_name} {verb} the {user_op}{site}: its {dtype} values cast to an index",
        "index-exceeds-constant-bound.op-values": "the `{op}` result reaching {bound_value} {verb} the {user_op}{site}",
    })
    MESSAGES = Catalog("MESSAGES", {
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
        "index-exceeds-constant-bound.input-values":
            "\"{assertion}\" in {kernel}: the index is a position computed from the values of {inputs} and sizes, "
            "at most {upper} for a value v; at the witness's sizes a value of {value} or more trips the constant "
            "bound {bound_value}, {effect}",
        "index-exceeds-constant-bound.input-values-witness": "{shapes}; with a value of {value} in {inputs}",
        "index-exceeds-constant-bound.cast-values":
            "\"{assertion}\" in {kernel}: the index is the {dtype} value of {inputs} cast to an integer: a "
            "value of {value} or more trips the constant bound {bound_value}, {effect}",
        "index-exceeds-constant-bound.op-values":
            "\"{assertion}\" in {kernel}: the index is the output of `{op}` over the values of {inputs}, which "
            "lies in [0, {top}] at any size, and {reach} gives {bound_value} or more: past the constant bound "
            "{bound_value}, {effect}",
        "index-exceeds-constant-bound.op-values-witness": "{shapes}; with {reach}",
        "index-exceeds-constant-bound.unenforced-max":
            "\"{assertion}\" in {kernel}: the index ranges over [0, {extent}) and {dim_display} ({where}) is "
            "{max_text}; by default nothing stops a size above {limit}, which trips the constant bound "
            "{bound_value}{table}, {effect}",
    })
    FIXES = Catalog("FIXES", {
        "index-exceeds-constant-bound":
            "declare the dimension's real limit when exporting (Dim(..., max={bound_value})) and run with "
            "AOTI_RUNTIME_CHECK_INPUTS=1, or reject `{check_expr} > {limit}` before calling the model, or size the "
            "indexed table for the longest input" + CONTRACT_HINT,
        "index-exceeds-constant-bound.enforced":
            "lower the dimension's max to {limit} when exporting (Dim(..., max={limit})), or size the indexed table "
            "for {max}" + CONTRACT_HINT,
        "index-exceeds-constant-bound.values":
            "bound the value in the model with `torch._check({symbols} <= {bound_value})` (the package then checks "
            "it at every call), or reject larger values before calling the model",
        "index-exceeds-constant-bound.input-values":
            "reject values of {inputs} of {value} or more before calling the model (a row longer than the table), "
            "or size the indexed table for the longest input",
        "index-exceeds-constant-bound.cast-values":
            "keep the values of {inputs} that the model casts to an index below {bound_value} (reject larger ones "
            "before calling the model), or size the indexed table for the largest value",
        "index-exceeds-constant-bound.op-values":
            "keep `{op}`'s result below {bound_value} in the model (clamp it to {limit}, or add a row for it), or "
            "reject values of {inputs} that it maps to {bound_value} or more before calling the model",
        "index-exceeds-constant-bound.unenforced-max":
            "run with AOTI_RUNTIME_CHECK_INPUTS=1 where the package was compiled with that max ({max_text}), or "
            "reject `{check_expr} > {limit}` before calling the model" + CONTRACT_HINT,
    })
    CHAIN = Catalog("CHAIN", {
        "index-exceeds-constant-bound.extent": "{index_var} reaches {extent} - 1; with {assignment} that is {value} >= {bound_value}",
        "index-exceeds-constant-bound.value-reach": "{index_var} reaches that maximum for {reach}",
        "index-exceeds-constant-bound.input-value":
            "{index_var} is at most {upper} for a value v of {inputs}: {bound_value} or more from v = {value}",
        "index-exceeds-constant-bound.cast-value":
            "{index_var} is the {dtype} value of {inputs} cast to an integer: {value} or more is past the table",
    })
    FRAGMENTS = frozenset({"index-exceeds-constant-bound.values-witness",
                           "index-exceeds-constant-bound.input-values-witness",
                           "index-exceeds-constant-bound.op-values-witness"})


class DivisionByDynamicSizeWords:
    """The wording of AOTI004 division-by-dynamic-size."""

    HEADLINES = Catalog("HEADLINES", {
        "division-by-dynamic-size.float": "empty {dim_name} gives NaN/inf silently: division by 0 in the {user_op}{site}",
        "division-by-dynamic-size.integer": "empty {dim_name} kills the process: integer division by 0 in the {user_op}{site}",
        "division-by-dynamic-size.integer-kernel":
            "empty {dim_name}: integer division by 0 in the {user_op}{site} (undefined result)",
        "division-by-dynamic-size.index":
            "{dim_name} = {size} kills the process: integer division by 0 in the {user_op}{site}",
    })
    MESSAGES = Catalog("MESSAGES", {
        "division-by-dynamic-size.float":
            "{kernel} divides by `{divisor}` = {divisor_expr}, which is 0 when {dim_display} ({where}) is empty "
            "({range_text}): the result is NaN (0/0) or inf, silently{same}",
        "division-by-dynamic-size.mean":
            "; eager's mean of an empty dim is NaN too, so the package differs from eager only where another "
            "op raises on the empty input first in eager (an `amax`, an index: their own findings say so)",
        "division-by-dynamic-size.integer":
            "{kernel} computes an integer `/` or `%` by `{divisor}` = {divisor_expr}, which is 0 when {dim_display} "
            "({where}) is empty ({range_text}): integer division by zero kills the process (SIGFPE)",
        "division-by-dynamic-size.integer-kernel":
            "{kernel} computes an integer `/` or `%` by `{divisor}` = {divisor_expr}, which is 0 when {dim_display} "
            "({where}) is empty ({range_text}): the result of an integer division by zero is undefined on CUDA "
            "and an error on CPU",
        "division-by-dynamic-size.index":
            "{kernel} computes its indices with an integer `/` or `%` by `{divisor}` = {divisor_expr}, which is 0 "
            "when {dim_display} ({where}) is {size} ({range_text}) while the loops around it run: integer division "
            "by zero kills the process (SIGFPE)",
    })
    FIXES = Catalog("FIXES", {
        "division-by-dynamic-size.float":
            "reject empty inputs before calling the model (`if {check_expr} == 0: ...`){env}, or guard the "
            "division in the model (e.g. divide by `max(n, 1)`)" + CONTRACT_HINT,
        "division-by-dynamic-size.integer":
            "reject empty inputs before calling the model (`if {check_expr} == 0: ...`){env}" + CONTRACT_HINT,
        "division-by-dynamic-size.index":
            "reject `{check_expr} < {above}` before calling the model{env}, or export with `Dim(..., min={above})`"
            + CONTRACT_HINT,
        "division-by-dynamic-size.env-below":
            ", or run with AOTI_RUNTIME_CHECK_INPUTS=1 so that the package's own check rejects sizes below {min} "
            "with a clear error",
    })
    CHAIN = Catalog("CHAIN", {
        "division-by-dynamic-size.divides": "{kernel} divides by {divisor}",
        "division-by-dynamic-size.divisor": "{divisor} = {divisor_display} (over {divisor_expr})",
        "division-by-dynamic-size.divisor-zero": "with {assignment} the divisor is 0",
    })
    FRAGMENTS = frozenset({"division-by-dynamic-size.mean"})


class EmptyReductionWords:
    """The wording of AOTI005 empty-reduction."""

    HEADLINES = Catalog("HEADLINES", {
        "empty-reduction": "empty {dim_name} makes the {user_op}{site} return {identity}; eager raises",
    })
    MESSAGES = Catalog("MESSAGES", {
        "empty-reduction":
            "{op} reduction in {kernel} over {extent} elements: when {dim_display} ({where}) is empty "
            "({range_text}) it returns its identity, {identity}, where eager PyTorch raises",
    })
    FIXES = Catalog("FIXES", {
        "empty-reduction":
            "reject empty inputs before calling the model (`if {check_expr} == 0: ...`), as eager PyTorch does{env}" + CONTRACT_HINT,
    })
    CHAIN = Catalog("CHAIN", {
        "empty-reduction": "{op} reduction in {kernel} over {extent} elements (over {extent_expr})",
        "empty-reduction.empty": "with {assignment} nothing is reduced and the identity is returned",
    })


class UnlinkedAssertionWords:
    """The wording of AOTI008 unlinked-assertion."""

    HEADLINES = Catalog("HEADLINES", {
        "unlinked-assertion": "an index check in the {user_op}{site} is not linked to any input: check it by hand",
    })
    MESSAGES = Catalog("MESSAGES", {
        "unlinked-assertion":
            "assertion \"{assertion}\" in {kernel} could not be linked to the model inputs: {reason}; "
            "nothing is known about when it fails",
    })
    FIXES = Catalog("FIXES", {
        "unlinked-assertion":
            "check this assertion by hand; please report the package so that the analyzer can learn its form",
    })


class ReadPastConstantWords:
    """The wording of AOTI013 read-past-constant."""

    HEADLINES = Catalog("HEADLINES", {
        "read-past-constant": "{dim_name} > {limit} silently reads past the end of {table_name}{site}",
        "read-past-constant.checked":
            "{dim_name} > {limit} reads past {table_name}{site}: wrong values or {check_outcome}",
        "read-past-constant.view": "{dim_name} > {limit} silently reads past the end of {table_name}{site}",
    })
    MESSAGES = Catalog("MESSAGES", {
        "read-past-constant":
            "{kernel} reads {table} at element index up to {index_max}, which passes its {numel} elements when "
            "{dim_display} ({where}) is above {limit} ({max_text}): nothing checks the index, so the kernel "
            "silently reads past the end of the constant (wrong values, or a crash), where eager PyTorch raises",
        "read-past-constant.checked":
            "{kernel} reads {table} at element index up to {index_max}, which passes its {numel} elements when "
            "{dim_display} ({where}) is above {limit} ({max_text}): nothing checks that index, and the kernel's "
            "\"{assertion}\" checks the values read past the end, whatever lies in memory there: out of range, the "
            "check fails ({effect}); in range, wrong values; eager PyTorch raises",
        "read-past-constant.view":
            "{kernel} is passed a view of {table} reaching element index {index_max}, past its {numel} elements "
            "when {dim_display} ({where}) is above {limit} ({max_text}): ATen reads the view as given, so the call "
            "silently reads past the end of the constant (wrong values, or a crash), where eager PyTorch computes "
            "with the real size or raises",
        # What the headline says the check does with the garbage it reads (filled into `check_outcome`).
        "read-past-constant.check-fails": "a failed index check",
        "read-past-constant.check-aborts": "an abort",
    })
    FRAGMENTS = frozenset({"read-past-constant.check-fails", "read-past-constant.check-aborts"})
    FIXES = Catalog("FIXES", {
        "read-past-constant":
            "reject `{check_expr} > {limit}` before calling the model, or run with AOTI_RUNTIME_CHECK_INPUTS=1 where "
            "the package was compiled with that max; declare the limit when exporting (Dim(..., max={limit})) or size "
            "{table} for the longest input",
    })
    CHAIN = Catalog("CHAIN", {
        "read-past-constant":
            "{pointer} of {kernel} is {table}; the index reaches {index_max} (element {value} with {assignment}) >= {numel}",
    })


class IndexExceedsDynamicBoundWords:
    """The wording of AOTI015 index-exceeds-dynamic-bound."""

    HEADLINES = Catalog("HEADLINES", {
        "index-exceeds-dynamic-bound": "{dim_name} <= {limit} {verb} the {user_op}{site}: its index reaches {high}",
        "index-exceeds-dynamic-bound.sized":
            "the {ops} result reaching {high} {verb} the {user_op}{site} (eager raises too)",
        "index-exceeds-dynamic-bound.position":
            "a value of {value} in {input_name} {verb} the {user_op}{site}: a position from it reaches {bound_display}",
    })
    MESSAGES = Catalog("MESSAGES", {
        "index-exceeds-dynamic-bound":
            "\"{assertion}\" in {kernel}: the kernel itself keeps the index in [0, {high}] (a clamp of loaded "
            "values), but its bound `{bound}` is {bound_display}, and the package accepts {dim_display} ({where}) "
            "down to {low} ({range_text}): at any size up to {limit} an index value the model produces by design "
            "fails the check, {effect}",
        "index-exceeds-dynamic-bound.witness": "{shapes}; with values of {inputs} that make the index {high}",
        "index-exceeds-dynamic-bound.sized":
            "\"{assertion}\" in {kernel}: the index is the output of {ops}, which lies in [0, {extent}], but its bound "
            "`{bound}` is {bound_display}: at {assignment} the index reaches {high} >= {value} for {reach}, and the check "
            "fails, {effect}; eager indexes the same way and raises IndexError on those values: the input is invalid "
            "for the model itself (an info: the package fails it where eager does too)",
        "index-exceeds-dynamic-bound.sized-witness": "{shapes}; with {reach}",
        "index-exceeds-dynamic-bound.position":
            "\"{assertion}\" in {kernel}: the index is a position computed from the values of {inputs} and sizes, at "
            "most {upper} for a value v, and its bound `{bound}` is {bound_display}: at {assignment} a value of "
            "{value} takes it there, and the check fails, {effect}",
        "index-exceeds-dynamic-bound.position-witness": "{shapes}; with a value of {value} in {inputs}",
    })
    FIXES = Catalog("FIXES", {
        "index-exceeds-dynamic-bound":
            "declare the dimension's real minimum when exporting (Dim(..., min={need})) and run with "
            "AOTI_RUNTIME_CHECK_INPUTS=1, or reject `{check_expr} <= {limit}` before calling the model, or clamp the "
            "index in the model to the size it indexes (`{check_expr} - 1`) instead of {high}",
        "index-exceeds-dynamic-bound.sized":
            "make the indexed tensor one longer than the range of {ops} (the index can be {extent}), or clamp the "
            "index to `{bound_display} - 1` in the model, or reject inputs whose values give {reach}",
        "index-exceeds-dynamic-bound.position":
            "reject values of {inputs} that put the position at {bound_display} or past it before calling the "
            "model, or clamp the position to `{bound_display} - 1` in the model",
    })
    CHAIN = Catalog("CHAIN", {
        "index-exceeds-dynamic-bound.index-range": "{index_var} lies in [0, {high}] whatever was loaded; with {assignment} the bound is {value}, "
                       "so an index of {high} fails `{index_var} < {value}`",
        "index-exceeds-dynamic-bound.index-range-sized":
            "{index_var} is the output of {ops}: in [0, {extent}]; the bound is {bound_display} "
            "({value} at {assignment})",
        "index-exceeds-dynamic-bound.position":
            "{index_var} is at most {upper} for a value v of {inputs}; at {assignment} v = {value} takes it to "
            "{bound_display}",
    })
    FRAGMENTS = frozenset({"index-exceeds-dynamic-bound.sized-witness", "index-exceeds-dynamic-bound.witness",
                           "index-exceeds-dynamic-bound.position-witness"})


class StoreIntoEmptyBufferWords:
    """The wording of AOTI017 store-into-empty-buffer."""

    HEADLINES = Catalog("HEADLINES", {
        "store-into-empty-buffer": "empty {dim_name} makes the {user_op}{site} write past an empty buffer (SIGSEGV)",
    })
    MESSAGES = Catalog("MESSAGES", {
        "store-into-empty-buffer":
            "{kernel} writes {buffer} (`{pointer}`) inside loops of {space} iterations that do not shrink with "
            "{dim_display} ({where}), but {buffer} has {numel} elements, none when {dim_display} is 0, which the "
            "package accepts ({range_text}): every write lands outside the empty buffer, a segmentation fault "
            "(SIGSEGV) or silent memory corruption, with no error message",
    })
    FIXES = Catalog("FIXES", {
        "store-into-empty-buffer":
            "reject empty inputs before calling the model (`if {empty_test}: ...`){env}" + CONTRACT_HINT,
    })
    CHAIN = Catalog("CHAIN", {
        "store-into-empty-buffer": "{kernel} writes {buffer} through {pointer}: {numel} elements, written in loops of {space} iterations",
    })


class ReadFromEmptyBufferWords:
    """The wording of AOTI018 read-from-empty-buffer."""

    HEADLINES = Catalog("HEADLINES", {
        "read-from-empty-buffer": "empty {dim_name} makes the {user_op}{site} read past an empty buffer (SIGSEGV)",
    })
    MESSAGES = Catalog("MESSAGES", {
        "read-from-empty-buffer":
            "{kernel} reads {buffer} (`{pointer}`) inside loops of {space} iterations that do not shrink with "
            "{dim_display} ({where}), but {buffer} has {numel} elements, none when {dim_display} is 0, which the "
            "package accepts ({range_text}): every read lands outside the empty buffer, a segmentation fault "
            "(SIGSEGV) or garbage values, with no error message",
    })
    FIXES = Catalog("FIXES", {
        "read-from-empty-buffer":
            "reject empty inputs before calling the model (`if {empty_test}: ...`){env}" + CONTRACT_HINT,
    })
    CHAIN = Catalog("CHAIN", {
        "read-from-empty-buffer": "{kernel} reads {buffer} through {pointer}: {numel} elements, read in loops of {space} iterations",
    })
