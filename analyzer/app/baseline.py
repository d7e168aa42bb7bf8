"""Baselines: accept today's findings, fail only on new ones.

An entry is a finding's build-stable identity: the package's path relative to the baseline file's
folder (so the same baseline serves runs from any working directory) and the SARIF fingerprint (rule, input position, dim, normalized expression, model; never a hashed member
name, a line number or the message), with those fields spelled out for review. A rebuild of the
same model keeps its baseline; entries that match nothing any more are reported as stale so that a
baseline only shrinks. Baselines written before keys were relative to the baseline file (the
package as given on the command line) still match when run as they were written.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePath
from typing import Sequence

from ..core.findings import Finding
from ..core.model import input_position
from ..report.common import fingerprint

SCHEMA = "aoti-lint.baseline/1"


@dataclass(frozen=True)
class Entry:
    package: str
    fingerprint: str
    rule: str = ""
    model: str = ""
    input: int | None = None
    dim: int | None = None
    key: str = ""

    def describe(self) -> str:
        where = input_position(self.input, self.dim) if self.input is not None else ""
        parts = [self.rule, f"model {self.model}", where, f"`{self.key}`" if self.key else ""]
        return f"{self.package}: " + ", ".join(p for p in parts if p)


@dataclass(frozen=True)
class Outcome:
    """The findings still reported (new ones, and accepted ones as such), the number matched by the
    baseline, and stale entries."""

    new: tuple[Finding, ...]
    matched: int
    stale: tuple[Entry, ...]


def package_key(package: str, base: str | None = None) -> str:
    """The package relative to the folder `base` (the baseline file's), else as given, with `/`
    separators, so a baseline written on one OS or in one folder reads on another."""
    if base is not None:
        try:
            package = os.path.relpath(os.path.abspath(package), os.path.abspath(base or "."))
        except ValueError:  # another drive (Windows): keep the path as given
            pass
    return PurePath(package).as_posix()


def _identity(finding: Finding, base: str | None) -> tuple[str, str]:
    """(package key, fingerprint), both from the package's path relative to `base` when given."""
    key = package_key(finding.package, base)
    return key, fingerprint(dataclasses.replace(finding, package=key) if base is not None else finding)


def entry(finding: Finding, base: str | None = None) -> Entry:
    key, fp = _identity(finding, base)
    return Entry(package=key, fingerprint=fp, rule=finding.rule,
                 model=finding.model, input=finding.input, dim=finding.dim, key=finding.key)


def render(findings: Sequence[Finding], base: str | None = None) -> str:
    entries = sorted((entry(f, base) for f in findings if not f.accepted),
                     key=lambda e: (e.package, e.rule, e.model, e.fingerprint))
    doc = {"schema": SCHEMA, "entries": [
        {"package": e.package, "rule": e.rule, "model": e.model, "input": e.input, "dim": e.dim,
         "key": e.key, "fingerprint": e.fingerprint} for e in entries]}
    return json.dumps(doc, indent=2) + "\n"


def write(path: str, findings: Sequence[Finding]) -> int:
    from ..core.atomic import write_atomic

    write_atomic(path, render(findings, os.path.dirname(path)))
    return sum(1 for f in findings if not f.accepted)


MAX_BASELINE_BYTES = 256 << 20  # far above any real baseline (about 200 bytes an entry)


def load(path: str) -> list[Entry]:
    """The entries of a baseline file; a ValueError naming the file (one line) when it is not one:
    too large, not UTF-8, not JSON (nested too deeply, a number too long), or a wrong type."""
    with open(path, "rb") as fh:
        data = fh.read(MAX_BASELINE_BYTES + 1)
    if len(data) > MAX_BASELINE_BYTES:
        raise ValueError(f"{path}: not a baseline file (larger than {MAX_BASELINE_BYTES >> 20} MiB)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a baseline file (not UTF-8 at byte {exc.start})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not a baseline file (invalid JSON: {exc.msg} at line {exc.lineno})") from None
    except RecursionError:  # `[[[[...` thousands deep: json recurses once per level
        raise ValueError(f"{path}: not a baseline file (invalid JSON: nested too deeply)") from None
    except ValueError as exc:  # a number of more than 4300 digits
        raise ValueError(f"{path}: not a baseline file (invalid JSON: {' '.join(str(exc).split())[:120]})") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("entries"), list):
        raise ValueError(f"{path}: not a baseline file (expected schema {SCHEMA!r}; write one with --write-baseline)")
    return [_entry(path, n, raw) for n, raw in enumerate(doc["entries"], start=1)]


def _entry(path: str, n: int, raw: object) -> Entry:
    """One entry, its types checked; the error names the file and the entry's number."""
    where = f"{path}: baseline entry #{n}"
    if not isinstance(raw, dict):
        raise ValueError(f"{where} is not an object")
    for key in ("package", "fingerprint"):
        if not isinstance(raw.get(key), str):
            raise ValueError(f"{where}: {key!r} must be a string (a baseline entry needs a package and fingerprint)")
    for key in ("rule", "model", "key"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise ValueError(f"{where}: {key!r} must be a string")
    for key in ("input", "dim"):
        value = raw.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**31):
            raise ValueError(f"{where}: {key!r} must be a position (0, 1, ...) or null")
    return Entry(package=raw["package"], fingerprint=raw["fingerprint"], rule=raw.get("rule") or "",
                 model=raw.get("model") or "", input=raw.get("input"), dim=raw.get("dim"), key=raw.get("key") or "")


def apply(findings: Sequence[Finding], entries: Sequence[Entry], packages: Sequence[str],
          base: str | None = None) -> Outcome:
    """Split findings into new ones and those the baseline accepts (each entry accepts one finding).

    Entries for packages not checked in this run are neither matched nor stale; accepted findings
    stay in `new`, marked accepted. With `base` (the baseline file's folder) a finding matches an
    entry keyed relative to it, or one keyed by the package as given (older baselines).
    """
    budget = Counter((e.package, e.fingerprint) for e in entries)
    new: list[Finding] = []
    matched = 0
    for f in findings:
        if f.accepted:  # accepted in [tool.aoti-lint]: shown as such, never part of a baseline
            new.append(f)
            continue
        idents = [(package_key(f.package), fingerprint(f))]
        if base is not None:
            idents.insert(0, _identity(f, base))
        ident = next((i for i in idents if budget[i] > 0), None)
        if ident is not None:
            budget[ident] -= 1
            matched += 1
        else:
            new.append(f)
    checked = {package_key(p) for p in packages} | ({package_key(p, base) for p in packages} if base is not None else set())
    stale: list[Entry] = []
    for e in entries:
        if e.package in checked and budget[(e.package, e.fingerprint)] > 0:
            budget[(e.package, e.fingerprint)] -= 1
            stale.append(e)
    return Outcome(new=tuple(new), matched=matched, stale=tuple(stale))


def apply_file(path: str, findings: Sequence[Finding], packages: Sequence[str]) -> tuple[list[Finding], list[str]]:
    """The findings a baseline file does not accept, and notes: the counts, then each stale entry."""
    outcome = apply(findings, load(path), packages, os.path.dirname(path))
    new = sum(1 for f in outcome.new if not f.accepted)
    stale = len(outcome.stale)
    notes = [f"{path}: {outcome.matched} baselined finding(s) not shown, {new} new, "
             f"{stale} stale entr{'y' if stale == 1 else 'ies'}"]
    notes += [f"stale baseline entry (matches nothing now; rewrite with --write-baseline): {e.describe()}"
              for e in outcome.stale]
    return list(outcome.new), notes
