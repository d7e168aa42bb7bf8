"""Every user-facing sentence that is not one rule's own, in one place (a leaf module: it imports
nothing from analyzer, so parsers, rules and reporters may all use it), and the catalog machinery.

A rule's own templates (its finding messages, headlines, fixes and chain lines) are class attributes
of the rule (rules/words_*.py, inherited by the rule class). Here are the shared tables: `FIXES` and
`CHAIN` entries several rules or the linker use, `EFFECTS` what happens at run time per device,
`WHY` the causes, fixes and report lines of `aoti-lint why`, the range and enforcement words.
`build` joins the shared tables and every rule's into the one catalog (`rules.catalog()`), checking
that every key follows one grammar (`KEY`) and is defined once. All are `str.format` templates with
named fields; the code that uses one fills it.

Each table is a frozen `Catalog`: nothing writes into one after it is made. It records which keys
were looked up and which fields were given when `TRACE` is on, so that a test can show that every
template and every field is used.
"""

from __future__ import annotations

import re
import string
from collections import defaultdict
from types import MappingProxyType
from typing import Iterable, Iterator, Mapping, NoReturn

# (table, key) -> the fields given a non-empty value; filled only while TRACE is true (tests).
TRACE = False
USED: dict[tuple[str, str], set[str]] = defaultdict(set)

# The most names a finding lists (kernels reading a size, calls, repeats of one check): a package
# decides how many there are, the report's size must not (`listed` says "and N more").
LIST_LIMIT = 20

# The one key grammar: kebab-case words (a rule name, or a shared entry's name), then optional
# dot-separated kebab-case variants: `empty-index-bound`, `target-device-mismatch.sm.major`.
KEY = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)*$")

# The tables a rule may hold its own templates in (class attributes of the same names).
RULE_TABLES: tuple[str, ...] = ("HEADLINES", "MESSAGES", "FIXES", "CHAIN")


class Text(str):
    """A filled template: the text, and the catalog table and key it came from (findings keep the
    key), the fields it was filled with, and the texts appended to it since (`parts`), so that a
    test can say which template and fields make each sentence (tests/golden/check)."""

    # Not a __dict__, three quarters of the size of a chain line (a model holds one or two per check).
    __slots__ = ("key", "fields", "table", "parts")
    key: str
    fields: dict
    table: str
    parts: tuple

    def __new__(cls, text: str, key: str, fields: dict | None = None, table: str | None = None,
                parts: tuple | None = None) -> "Text":
        out = super().__new__(cls, text)
        out.key = key
        # What the template was filled with (a headline reuses them; given: kept, not copied); a Text
        # rebuilt from a Text (`Text(message + more, message.key)`) keeps them, its table, its parts.
        out.fields = dict(getattr(text, "fields", None) or {}) if fields is None else fields
        out.table = getattr(text, "table", "") if table is None else table
        out.parts = tuple(getattr(text, "parts", ())) if parts is None else parts
        return out

    def __add__(self, other: str) -> "Text":  # a message with a fragment appended keeps key and fields
        if not other:
            return self
        return Text(str.__add__(self, other), self.key, self.fields, self.table, (*self.parts, other))

    def __reduce__(self):  # copy, deepcopy and pickle keep the key, fields and parts
        return (Text, (str(self), self.key, self.fields, self.table, self.parts))


def extended(message: str, more: str, **fields: object) -> Text:
    """`message` with `more` appended and `fields` added to its fields, keeping its key and table."""
    return Text(str(message) + more, getattr(message, "key", ""), {**(getattr(message, "fields", None) or {}), **fields},
                getattr(message, "table", ""), (*getattr(message, "parts", ()), *((more,) if more else ())))


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
        return Text(str.format(self, *args, **fields), self.key, fields, self.table)


class Catalog(Mapping[str, Template]):
    """`{key: Template}`, frozen when made; looking a key up marks it used (while `TRACE` is on)."""

    def __init__(self, name: str, entries: Mapping[str, str]) -> None:
        self.name = name
        self._entries = MappingProxyType({key: Template(text, name, key) for key, text in entries.items()})

    def __getitem__(self, key: str) -> Template:
        value = self._entries[key]
        if TRACE:
            USED[(self.name, key)]
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Catalog) and self.name == other.name and dict(self._entries) == dict(other._entries)

    __hash__ = None  # type: ignore[assignment]  # equal by content, like a dict

    def __repr__(self) -> str:
        return f"Catalog({self.name!r}, {len(self)} entries)"

    def __setattr__(self, name: str, value: object) -> None:
        if "_entries" in self.__dict__:
            _frozen(self)
        object.__setattr__(self, name, value)

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        _frozen(self)

    # Every way a dict is written to raises: a catalog holds what its declaration says, whatever
    # was imported before or after it.
    __setitem__ = __delitem__ = __ior__ = update = setdefault = pop = popitem = clear = _refuse


def _frozen(catalog: Catalog) -> NoReturn:
    raise TypeError(f"catalog {catalog.name} is frozen: declare templates on the rule class or in a shared table")


def build(shared: Iterable[Catalog], owners: Iterable[tuple[str, Iterable[Catalog]]]) -> Mapping[str, Catalog]:
    """The one catalog, `{table name: Catalog}` (frozen): the shared tables, joined with each owner's
    (a rule's name and its tables) by name. Raises ValueError on a key outside the grammar, an
    owner's key that does not start with its name, or a key defined twice in one table."""
    merged: dict[str, dict[str, str]] = {}
    owner_of: dict[tuple[str, str], str] = {}

    def add(catalog: Catalog, owner: str) -> None:
        for key, template in catalog.items():
            if not KEY.match(key):
                raise ValueError(f"{owner}: {catalog.name} key {key!r} is not `name` or `name.variant` in kebab-case")
            if owner != "shared" and key != owner and not key.startswith(owner + "."):
                raise ValueError(f"{owner}: {catalog.name} key {key!r} does not start with the rule's name")
            if (catalog.name, key) in owner_of:
                raise ValueError(f"{catalog.name} key {key!r} is defined by {owner_of[catalog.name, key]} and {owner}")
            owner_of[catalog.name, key] = owner
            merged.setdefault(catalog.name, {})[key] = str(template)

    for catalog in shared:
        add(catalog, "shared")
    for owner, tables in owners:
        for catalog in tables:
            add(catalog, owner)
    return MappingProxyType({name: Catalog(name, dict(sorted(entries.items()))) for name, entries in sorted(merged.items())})


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


def shared() -> list[Catalog]:
    """The shared tables of this module."""
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

# Headlines (each rule's HEADLINES, keyed like its MESSAGES: every whole message, i.e. not one of its
# FRAGMENTS, has one; the catalog test checks it) are filled by analyzer/query/headline.py with the
# message's own fields plus: `{dim_name}` (`x.shape[1]`, or `input 0 dim 1` without names),
# `{input_name}`, `{site}` (` in `transformer.wpe` (Embedding)` / ` at model.py:12` / empty),
# `{user_op}` (the user's op: `embedding`, else an op of the kernel's name, else `kernel`), `{verb}`
# (what a failed index check does on the device, VERBS), `{table_name}` (a constant's user name),
# `{aten_op}` (an extern call's ATen op), `{identity}` (SHORT_IDENTITIES), `{at_zero}` (AT_ZERO). The
# headline gets OUTSIDE_CONTRACT appended when the witnesses are outside the declared range,
# EAGER_REJECTS when eager rejects them too. Compiler names (tmpN, ksN, sN, argN_1, kernel names)
# never appear in one: they belong to the detail.
# What size 0 does where extern calls receive empty tensors (`{at_zero}`): the flash attention's
# SIGFPE when it is one of them (the message's `{sdpa}` fragment; oneDNN's RNN layer's, `rnn`), a convolution's own size error when
# one rejects the empty input first (its `conv_rejects` field), run_impl's own `!= 0` check of a
# divisor that size 0 makes 0 (its `zero_check` field), else the plain fact.
AT_ZERO = Catalog("AT_ZERO", {
    "calls": "at 0 ATen calls get empty tensors",
    "conv": "at 0 a convolution raises, as in eager",
    "check": "at 0 run_impl raises: a divisor is 0",
    "sdpa": "at 0 flash attention kills the process (SIGFPE)",
    "rnn": "at 0 oneDNN's RNN layer kills the process (SIGFPE)",
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
    # An index read past the end of a buffer an extern call returned smaller than assumed.
    "overread": "overruns a buffer in",
    "unknown": "fails",
})

# Lines of the human reports (text, markdown) that are not about one finding.
REPORT = Catalog("REPORT", {
    # A fix already printed in full for an earlier finding of the same package.
    "see-fix": "as for {code} above",
    # The same finding in other kernels (rules.merging), one line each.
    "also": "also in {kernel} at {where}",
    "also-at": "also at {where}",
    "also-more": "also in {count} more kernels",
    # A list of names cut at LIST_LIMIT (`listed`).
    "and-more": " and {count} more",
    # The markdown report cut to its size budget.
    "more": "**{count} more findings in the full report** (`aoti-lint --format text`, JSON or SARIF).",
})

# Fix clauses several rules append (and `why`).
FIXES = Catalog("FIXES", {
    # Appended as {env} where the package's own (gated) check would reject size 0.
    "env":
        ", or run with AOTI_RUNTIME_CHECK_INPUTS=1 so that the package's own check rejects size 0 with a "
        "clear error",
})

# Chain lines the linker writes and the framework or several rules append.
CHAIN = Catalog("CHAIN", {
    # A buffer access with no element to touch (access.py: both buffer rules).
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
    # An unbacked size its op bounds by what its input holds (repeat_interleave: the sum of its repeats).
    "unbacked-bound": "{symbol} is an output length its op bounds by what its input holds: at most {bound}",
    "range": "{symbol} = {dim}, {range}",
    "read-by": "read by {kernel}",
    "read-by-more": "read by {count} more kernels",
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

# Every fix of a failure a shape guard can reject points at `aoti-lint contract`: a guard is the fix that needs no rebuild.
CONTRACT_HINT = "; `aoti-lint contract PKG --emit python` writes a check_inputs() guard that rejects such inputs"

# Who enforces a dim's range (or a layout, a dtype, a tie) at run time, in each form a sentence or a
# table needs it: `<form>.<enforcement>` (`Enforcement`'s values, plus a dim's `lower_unchecked`
# kinds and a max's `declared` origin). `enforced(form, state)` is the one way to ask.
ENFORCED = Catalog("ENFORCED", {
    # the clause of a range: RANGE["compiled"]
    "range.env": "checked only with AOTI_RUNTIME_CHECK_INPUTS=1",
    "range.always": "checked at every call",
    "range.none": "not checked at run time",
    # an `inspect` table cell
    "cell.env": "only with AOTI_RUNTIME_CHECK_INPUTS=1",
    "cell.always": "at every call",
    "cell.none": "never",
    # who rejects a violation, in `contract`'s and `diff`'s words
    "who.always": "always",
    "who.env": "only with AOTI_RUNTIME_CHECK_INPUTS=1",
    "who.none": "never",
    # the clause after a condition of the emitted guard (written only for what is not always checked)
    "unchecked.env": "checked only with AOTI_RUNTIME_CHECK_INPUTS=1",
    "unchecked.none": "never checked",
    # a sentence of a finding's detail
    "sentence.env": "the check runs only when AOTI_RUNTIME_CHECK_INPUTS=1 is set",
    "sentence.none": "nothing checks it at run time",
    "sentence.always": "the check runs at every call",
    # Dim.lower_unchecked: minimums that no check records or runs, in any environment.
    "sentence.unrecorded": "the package records and checks no input range (torch 2.6 layout), not even with "
                           "AOTI_RUNTIME_CHECK_INPUTS=1",
    "sentence.disabled": "the lower bound is never checked, not even with AOTI_RUNTIME_CHECK_INPUTS=1 (built "
                         "with aot_inductor.check_lowerbound=False)",
    # where a dim's effective max comes from: the exported program's declaration, else the compiled
    # range, by how it is enforced
    "max-origin.declared": "declared",
    "max-origin.always": "compiled",
    "max-origin.env": "compiled, enforced only with AOTI_RUNTIME_CHECK_INPUTS=1",
    "max-origin.none": "compiled, not enforced",
})


def enforced(form: str, state: object) -> Template:
    """Who enforces it, worded for `form` (range, cell, who, unchecked, sentence, max-origin);
    `state` an `Enforcement` (or a lower_unchecked kind, `declared`)."""
    return ENFORCED[f"{form}.{state}"]


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
    "why.index.position": "a value of {who} of {value} or more: the position {index_var} computed from it reaches "
                          "{bound} (it is at most {upper} for a value v)",
    "why.index.position-fix": "keep every value of {who} below {value} before calling the model (e.g. "
                              "`{name}.max() < {value}`), or size the indexed table for the longest input",
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
    "why.symbol.tied": "{symbol} is the size {call} returns, which run_impl requires to equal {where}: it was "
                       "{got}, so {dim} was {got} (or a value of an input that {call} reads gave that size), and "
                       "the package was compiled for {symbol} {expected}, which run_impl checks at every call{declared}",
    "why.symbol.tied.fix": "keep {dim} {expected} (handle other inputs outside the model), or re-export with a Dim "
                           "range that allows {got} and recompile",
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
