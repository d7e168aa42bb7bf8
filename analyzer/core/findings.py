"""Severity, Location and Finding: the frozen records every rule yields and every reporter reads."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Severity(enum.IntEnum):
    """Ordered so that `severity >= fail_on` is the gate's test."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (use error, warning or info)") from None

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, order=True, slots=True)
class Location:
    """A place inside the package: `path` is the member path inside the archive, line/column 1-based."""

    path: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line:
            return f"{self.path}:{self.line}:{self.column}"
        return self.path


@dataclass(frozen=True)
class Finding:
    """One diagnostic. Rendering lives in analyzer.report, never here.

    `input`/`dim`/`symbol` are None when the finding is not about one input dimension.
    `chain` is the human-readable linking chain (assertion -> parameter -> launch -> symbol -> input).
    `key` is the normalized expression used for stable fingerprints (never a hashed member name).
    Every string field may hold text from the package, the exported program or the config
    (analyzer.core.untrusted.Untrusted, composed into prose): reporters render each one through the
    escaping layer of their medium in analyzer.core.untrusted, never raw.
    `message` is the headline (under ~100 characters, in the user's names: analyzer/query/headline.py);
    `detail` the full explanation, with the compiler's names. `message_key` / `fix_key` name the
    catalog templates (the rule's own, analyzer/rules/words_*.py) of the message (HEADLINES and MESSAGES share the key)
    and of `fix`; `message_fields` are the fields the detail was filled with. Tests assert on keys
    and fields, not on prose.
    """

    code: str
    rule: str
    severity: Severity
    message: str
    model: str
    location: Location
    kernel: str | None = None
    input: int | None = None
    dim: int | None = None
    symbol: str | None = None
    witness: str | None = None
    # Every witness of the finding, `witness` (the primary) first: a finding about several sizes
    # (AOTI002: the size below the minimum and 0; AOTI010: both ends of a declared range) has more.
    witnesses: tuple[str, ...] = ()
    fix: str | None = None
    chain: tuple[str, ...] = ()
    key: str = ""
    package: str = ""
    snippet: tuple[str, ...] = field(default=(), compare=False)
    accepted: str | None = None  # the reason, when `[[tool.aoti-lint.accept]]` accepts it on purpose
    message_key: str = ""
    fix_key: str = ""
    # The user's code behind the kernel (analyzer.query.source.Source), from the exported program's graph.
    source: Any = field(default=None, compare=False)
    # A place the user can open (analyzer.app.locate): the model source line or the package path;
    # `location` stays the member inside the package (secondary).
    primary: Location | None = field(default=None, compare=False)
    # Where the user's code called into the model (`source.called_from`), as a file the user has
    # (analyzer.app.locate), when that file is found: SARIF's related location.
    called_from: Location | None = field(default=None, compare=False)
    detail: str = ""
    message_fields: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    # The same finding in other kernels (one graph op fused into several: GPT-2's position
    # embedding in three): (kernel, member location) of each, reported once under the first.
    also: tuple[tuple[str | None, Location], ...] = field(default=(), compare=False)
    # What running the finding's witness did (`aoti-lint confirm` only): analyzer.explain.confirm's
    # {"verdict", "probe", "outcome", "reason"}; None from `check`, which runs nothing.
    confirmation: dict[str, Any] | None = field(default=None, compare=False)
    # Repeats past the first LIST_LIMIT in `also`, counted only: output grows with the findings,
    # not with the kernels a package repeats one check in.
    also_more: int = field(default=0, compare=False)
    # A finding about several input dims (AOTI002's dims of one input, an extent over two sizes):
    # each dim with its own witness size and the witness at it, `input`/`dim` first.
    dims: tuple["DimWitness", ...] = field(default=(), compare=False)
    # The model record the finding is about (analyzer.core.model: the Assertion, Division, Reduction,
    # ConstantRead, Access, Launch, Dim, Input, Relation, Problem...), set by the rule that found it, as
    # a linter's violation carries its node: source attribution and the contract read it rather than
    # look the record up again by location. Never rendered; None for a finding read back from a report.
    subject: Any = field(default=None, compare=False, repr=False)
    # The user's ops (aten names: `embedding`, `mean`) that can raise the finding, from its rule
    # (`Rule.user_ops_of`): the graph node source attribution picks, the op a headline names from the
    # kernel's name. None: any op.
    user_ops: frozenset[str] | None = field(default=None, compare=False, repr=False)


_FINDING_FIELDS = frozenset(Finding.__dataclass_fields__)


def changed(finding: Finding, **changes: Any) -> Finding:
    """`dataclasses.replace(finding, **changes)` without running `__init__` over every field again:
    Finding has no `__post_init__`, and the rules' findings pass through three such changes each
    (a package repeating one check in 26,000 kernels: 78,000 of them, 8 us against 1 us each)."""
    if not _FINDING_FIELDS.issuperset(changes):
        raise TypeError(f"not fields of Finding: {sorted(set(changes) - _FINDING_FIELDS)}")
    out = object.__new__(Finding)
    out.__dict__.update(finding.__dict__)
    out.__dict__.update(changes)
    return out


@dataclass(frozen=True)
class DimWitness:
    """One dim of a finding about several: `size` is the dim's own witness size (AOTI002: the
    largest size below its compiled minimum; AOTI003: the smallest that passes the bound), `witness`
    the input shapes at it, every other dim valid."""

    input: int
    dim: int
    size: int | None = None
    witness: str | None = None


@dataclass(frozen=True)
class PackageError:
    """A package that could not be read at all: `package` as given or found, `message` one line."""

    package: str
    message: str
