"""`aoti-lint diff OLD NEW`: what a rebuild changes in what the package accepts and in its findings.

Both packages are read as `check` reads them; their contracts (analyzer/explain/contract.py: inputs, dtypes,
devices, each dim's compiled range and who checks it, declared ranges with exported programs) are
compared model by model, input by input, and their findings by build-stable identity (the
fingerprint of `check`'s SARIF and baselines, without the package path, so that two files of two
builds compare). A change *narrows* when the new build accepts less than the old one: an input, a
model or a dim gone or added, a dtype or device changed, a dim made static, a range that shrank. The
gate fails (exit 1) on a narrowing or a new finding at or above `--fail-on`.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..explain.contract import Contract, DimContract, InputContract
from ..core.findings import Finding, Severity
from ..core.model import Enforcement, input_position
from ..core.dimtext import span
from .common import fingerprint
from ..core.untrusted import md_cell, md_code
from ..core.messages import enforced
from ..core.untrusted import terminal, terminal_lines

SCHEMA = "aoti-lint.diff/1"
_STRENGTH = {Enforcement.NONE: 0, Enforcement.ENV: 1, Enforcement.ALWAYS: 2}


class Change(enum.Enum):
    """What changed; `narrows` says whether inputs the old build accepted may now fail."""

    MODEL_REMOVED = ("model-removed", True)
    MODEL_ADDED = ("model-added", False)
    INPUT_REMOVED = ("input-removed", True)
    INPUT_ADDED = ("input-added", True)        # old callers pass one input too few
    RANK_CHANGED = ("rank-changed", True)
    DTYPE_CHANGED = ("dtype-changed", True)
    DEVICE_CHANGED = ("device-changed", True)
    BECAME_STATIC = ("became-static", True)
    BECAME_DYNAMIC = ("became-dynamic", False)
    STATIC_SIZE_CHANGED = ("static-size-changed", True)
    RANGE_NARROWED = ("range-narrowed", True)
    RANGE_WIDENED = ("range-widened", False)
    CHECK_WEAKENED = ("check-weakened", False)  # accepts as much, rejects less of what fails
    CHECK_STRENGTHENED = ("check-strengthened", False)
    DECLARED_CHANGED = ("declared-range-changed", False)
    FINDING_ADDED = ("finding-added", False)    # gates by --fail-on, not as a narrowing
    FINDING_REMOVED = ("finding-removed", False)
    FINDING_CHANGED = ("finding-changed", False)  # the same subject, another verdict or severity

    def __init__(self, slug: str, narrows: bool) -> None:
        self.slug = slug
        self.narrows = narrows


@dataclass(frozen=True)
class Difference:
    change: Change
    model: str
    where: str                 # `x.shape[1]`, `input 0 x`, a finding's code and headline
    old: str | None
    new: str | None
    input: int | None = None
    dim: int | None = None
    finding: Finding | None = None   # the added, removed or changed (new) finding
    was: Finding | None = None       # a changed finding as the old build had it

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"change": self.change.slug, "narrows": self.change.narrows, "model": self.model,
                               "where": self.where, "old": self.old, "new": self.new, "input": self.input,
                               "dim": self.dim}
        for key, f in (("finding", self.finding), ("was", self.was)):
            if f is not None:
                out[key] = {"code": f.code, "rule": f.rule, "severity": str(f.severity), "message": f.message,
                            "message_key": f.message_key}
        return out


@dataclass
class Diff:
    old: str
    new: str
    differences: list[Difference] = field(default_factory=list)

    @property
    def narrowed(self) -> list[Difference]:
        return [d for d in self.differences if d.change.narrows]

    def added(self, at_least: Severity) -> list[Difference]:
        """New findings at or above `at_least`, and findings that rose to it from below."""
        return [d for d in self.differences if d.finding is not None and not d.finding.accepted
                and d.finding.severity >= at_least
                and (d.change is Change.FINDING_ADDED
                     or (d.change is Change.FINDING_CHANGED and d.was is not None and d.was.severity < at_least))]

    def exit_code(self, fail_on: Severity) -> int:
        return 1 if self.narrowed or self.added(fail_on) else 0


def identity(finding: Finding) -> str:
    """A finding's identity across two package files: its fingerprint without the package path."""
    return fingerprint(dataclasses.replace(finding, package=""))


def compare(old_path: str, new_path: str, old: Sequence[Contract], new: Sequence[Contract],
            old_findings: Sequence[Finding], new_findings: Sequence[Finding]) -> Diff:
    diff = Diff(old_path, new_path)
    old_models = {c.model: c for c in old}
    new_models = {c.model: c for c in new}
    for name, contract in old_models.items():
        if name not in new_models:
            diff.differences.append(Difference(Change.MODEL_REMOVED, name, f"model {name}", name, None))
        else:
            diff.differences.extend(_models(contract, new_models[name]))
    for name in new_models:
        if name not in old_models:
            diff.differences.append(Difference(Change.MODEL_ADDED, name, f"model {name}", None, name))
    diff.differences.extend(_findings(old_findings, new_findings))
    return diff


def _models(old: Contract, new: Contract) -> list[Difference]:
    out = []
    if (old.device or None) != (new.device or None):
        out.append(Difference(Change.DEVICE_CHANGED, old.model, f"model {old.model}", old.device, new.device))
    olds = {i.index: i for i in old.inputs}
    news = {i.index: i for i in new.inputs}
    for index, inp in olds.items():
        if index not in news:
            out.append(Difference(Change.INPUT_REMOVED, old.model, _input_name(inp), inp.display, None, index))
        else:
            out.extend(_inputs(old.model, inp, news[index], _complete(old) and _complete(new)))
    for index, inp in news.items():
        if index not in olds:
            out.append(Difference(Change.INPUT_ADDED, old.model, _input_name(inp), None, inp.display, index))
    return out


def _complete(c: Contract) -> bool:
    """Whether the package states every dim of its inputs: without input checks (torch 2.6 emits none
    for some models) only the dims its code reads are known, and an unknown is not a change."""
    return c.checks_gated is not None


def _input_name(inp: InputContract) -> str:
    return f"{input_position(inp.index)} {inp.display}"


def _inputs(model: str, old: InputContract, new: InputContract, complete: bool) -> list[Difference]:
    where = _input_name(new)
    out = []
    if old.dtype and new.dtype and old.dtype != new.dtype:
        out.append(Difference(Change.DTYPE_CHANGED, model, where, old.dtype, new.dtype, new.index))
    if old.device and new.device and old.device != new.device:
        out.append(Difference(Change.DEVICE_CHANGED, model, where, old.device, new.device, new.index))
    if complete and len(old.dims) != len(new.dims):
        out.append(Difference(Change.RANK_CHANGED, model, where, str(len(old.dims)), str(len(new.dims)), new.index))
        return out
    new_dims = {d.dim: d for d in new.dims}
    for a in old.dims:
        if a.dim in new_dims:
            out.extend(_dims(model, new.index, a, new_dims[a.dim]))
    return out


def _dims(model: str, index: int, old: DimContract, new: DimContract) -> list[Difference]:
    where = new.display

    def diff(change: Change, a: str | None, b: str | None) -> Difference:
        return Difference(change, model, where, a, b, index, new.dim)

    if old.value is not None or new.value is not None:
        if old.value is None:
            return [diff(Change.BECAME_STATIC, old.compiled, new.compiled)]
        if new.value is None:
            return [diff(Change.BECAME_DYNAMIC, old.compiled, new.compiled)]
        return [diff(Change.STATIC_SIZE_CHANGED, old.compiled, new.compiled)] if old.value != new.value else []
    out = []
    lo_old, lo_new = old.min or 0, new.min or 0
    hi_old, hi_new = old.max, new.max  # None: unbounded
    narrower = lo_new > lo_old or (hi_new is not None and (hi_old is None or hi_new < hi_old))
    wider = lo_new < lo_old or (hi_old is not None and (hi_new is None or hi_new > hi_old))
    if narrower:
        out.append(diff(Change.RANGE_NARROWED, old.compiled, new.compiled))
    elif wider:
        out.append(diff(Change.RANGE_WIDENED, old.compiled, new.compiled))
    if old.enforced is not new.enforced:
        change = Change.CHECK_WEAKENED if _STRENGTH[new.enforced] < _STRENGTH[old.enforced] else Change.CHECK_STRENGTHENED
        out.append(diff(change, enforced("who", old.enforced), enforced("who", new.enforced)))
    old_declared = (old.declared_min, old.declared_max)
    new_declared = (new.declared_min, new.declared_max)
    if old_declared != new_declared and old_declared != (None, None) and new_declared != (None, None):
        out.append(diff(Change.DECLARED_CHANGED, span(*old_declared), span(*new_declared)))
    return out


def _subject(f: Finding) -> tuple[str, str, int | None, int | None, str]:
    """What a finding is about, whatever the rule concluded: a finding whose verdict changed between
    builds (its max now enforced, another severity) has a new identity but the same subject."""
    return (f.rule, f.model or "", f.input, f.dim, f.kernel or "")


def _findings(old: Sequence[Finding], new: Sequence[Finding]) -> list[Difference]:
    old_ids = {identity(f): f for f in old}
    new_ids = {identity(f): f for f in new}
    gone = {_subject(f): f for key, f in old_ids.items() if key not in new_ids}
    out = []
    for key, f in new_ids.items():
        if key in old_ids:
            continue
        was = gone.pop(_subject(f), None)
        if was is not None:
            out.append(Difference(Change.FINDING_CHANGED, f.model or "", f"{f.code} {f.message}", str(was.severity),
                                  str(f.severity), f.input, f.dim, f, was))
        else:
            out.append(Difference(Change.FINDING_ADDED, f.model or "", f"{f.code} {f.message}", None,
                                  str(f.severity), f.input, f.dim, f))
    for f in gone.values():
        out.append(Difference(Change.FINDING_REMOVED, f.model or "", f"{f.code} {f.message}", str(f.severity),
                              None, f.input, f.dim, f))
    return out


def _words(d: Difference) -> str:
    if d.change is Change.FINDING_CHANGED and d.was is not None:
        return f"finding changed: {d.was.code} {d.was.message} ({d.old}) -> {d.where} ({d.new})"
    if d.change in (Change.FINDING_ADDED, Change.FINDING_REMOVED):
        verb = "new finding" if d.change is Change.FINDING_ADDED else "finding gone"
        return f"{verb}: {d.where} ({d.new or d.old})"
    if d.old is None:
        return f"{d.where}: added ({d.new})"
    if d.new is None:
        return f"{d.where}: removed (was {d.old})"
    return f"{d.where}: {d.old} -> {d.new}"


def render_text(diff: Diff, fail_on: Severity) -> str:
    lines = [f"{terminal(diff.old)} -> {terminal(diff.new)}"]
    if not diff.differences:
        lines.append("  no change in the contract or the findings")
    for d in diff.differences:
        mark = "!" if d.change.narrows or d in diff.added(fail_on) else " "
        lines.append(f"{mark} [{d.change.slug}] model {terminal(d.model)}: {terminal(_words(d))}")
    narrowed, added = len(diff.narrowed), len(diff.added(fail_on))
    lines.append(f"{len(diff.differences)} change(s): {narrowed} that accept less, {added} new finding(s) at or "
                 f"above {fail_on}.")
    return terminal_lines("\n".join(lines) + "\n")


def render_json(diff: Diff, fail_on: Severity) -> str:
    doc = {"schema": SCHEMA, "old": diff.old, "new": diff.new, "fail_on": str(fail_on),
           "exit_code": diff.exit_code(fail_on), "changes": [d.as_dict() for d in diff.differences]}
    return json.dumps(doc, indent=2, ensure_ascii=True) + "\n"


def code_span(text: str) -> str:
    """Untrusted text as one inline code span that stays in its table cell (analyzer.core.untrusted's
    markdown renderers: hidden characters shown escaped, a fence longer than any backtick run
    inside, `|` escaped for GFM tables)."""
    return md_cell(md_code(text)) if text else ""


def render_markdown(diff: Diff, fail_on: Severity) -> str:
    """A pull-request comment: every name from the packages is an inert code span (`code_span`)."""
    verdict = "accepts less than the old build" if diff.narrowed else "accepts at least what the old build did"
    lines = [f"**aoti-lint diff**: {code_span(diff.old)} → {code_span(diff.new)}: the new build {verdict}; "
             f"{len(diff.added(fail_on))} new finding(s) at or above {fail_on}.", ""]
    if diff.differences:
        lines += ["| | change | model | where | old | new |", "| --- | --- | --- | --- | --- | --- |"]
        for d in diff.differences:
            mark = "❗" if d.change.narrows or d in diff.added(fail_on) else ""
            lines.append(f"| {mark} | {d.change.slug} | {code_span(d.model)} | {code_span(d.where)} | "
                         f"{code_span(d.old or '')} | {code_span(d.new or '')} |")
    return "\n".join(lines) + "\n"
