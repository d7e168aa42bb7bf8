"""Accepting findings on purpose, from `[tool.aoti-lint]`:

```toml
[tool.aoti-lint.per-package-ignores]      # package glob -> rules that do not apply to it
"build/legacy_*.pt2" = ["unenforced-lower-bound", "AOTI005"]

[[tool.aoti-lint.accept]]                 # one finding, with a reason; shown as accepted
package = "build/ranker*.pt2"             # glob over the path as given, or its file name
rule = "empty-index-bound"                # name or code
input = 0                                 # optional: input position, and dim
dim = 0
model = "model"                           # optional
reason = "the server rejects empty batches before the model (ranker/serve.py:88)"
```

Per-package ignores act like `--ignore` for the matching packages. An accepted finding stays in
every report, marked accepted with its reason, and does not count for the exit code; an `accept`
entry that matches no finding of a checked package is reported, so the list only shrinks.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Any, Sequence

from ..core.findings import Finding


class AcceptError(ValueError):
    """A bad `accept` or `per-package-ignores` entry; the message is one line."""


@dataclass(frozen=True)
class Acceptance:
    package: str
    rule: str
    reason: str
    input: int | None = None
    dim: int | None = None
    model: str | None = None

    def describe(self) -> str:
        parts = [f"package {self.package!r}", f"rule {self.rule}"]
        parts += [f"{k} {v}" for k, v in (("input", self.input), ("dim", self.dim), ("model", self.model))
                  if v is not None]
        return ", ".join(parts)


def package_matches(glob: str, package: str) -> bool:
    """The glob against the package path as given (with `/`) or its file name."""
    path = PurePath(package).as_posix()
    return fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(PurePath(package).name, glob)


_ACCEPT_KEYS = {"package", "rule", "reason", "input", "dim", "model"}


def parse_accept(value: Any) -> tuple[Acceptance, ...]:
    if not isinstance(value, list):
        raise AcceptError("accept must be an array of tables ([[tool.aoti-lint.accept]])")
    out = []
    for n, raw in enumerate(value, start=1):
        where = f"accept #{n}"
        if not isinstance(raw, dict):
            raise AcceptError(f"{where} must be a table")
        unknown = sorted(set(raw) - _ACCEPT_KEYS)
        if unknown:
            raise AcceptError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_ACCEPT_KEYS))})")
        for key in ("package", "rule", "reason"):
            if not isinstance(raw.get(key), str) or not raw[key].strip():
                raise AcceptError(f"{where}: {key!r} is required (a non-empty string)")
        for key in ("input", "dim"):
            if key in raw and (isinstance(raw[key], bool) or not isinstance(raw[key], int) or raw[key] < 0):
                raise AcceptError(f"{where}: {key!r} must be a position (0, 1, ...), got {raw[key]!r}")
        if "model" in raw and not isinstance(raw["model"], str):
            raise AcceptError(f"{where}: 'model' must be a string")
        out.append(Acceptance(package=raw["package"].strip(), rule=raw["rule"].strip(), reason=raw["reason"].strip(),
                              input=raw.get("input"), dim=raw.get("dim"), model=raw.get("model")))
    return tuple(out)


def parse_per_package_ignores(value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise AcceptError("per-package-ignores must be a table of package glob = [rules]")
    out = []
    for glob, rules in value.items():
        if isinstance(rules, str):
            rules = [rules]
        if not isinstance(rules, list) or not all(isinstance(r, str) and r.strip() for r in rules):
            raise AcceptError(f"per-package-ignores {glob!r} must be a list of rule names or codes")
        out.append((glob, tuple(r.strip() for r in rules)))
    return tuple(out)


def check_rules(accepts: Sequence[Acceptance], ignores: Sequence[tuple[str, tuple[str, ...]]]) -> None:
    """Unknown rule names or codes are an error, not an entry that silently matches nothing."""
    from ..rules import find_rule, select_rules

    for a in accepts:
        if find_rule(a.rule) is None:
            raise AcceptError(f"accept: unknown rule {a.rule!r} (see `aoti-lint rules`)")
    for glob, selectors in ignores:
        try:
            select_rules((), selectors)
        except ValueError as exc:
            raise AcceptError(f"per-package-ignores {glob!r}: {exc}") from None


def ignored_rules(package: str, ignores: Sequence[tuple[str, tuple[str, ...]]]) -> set[str]:
    """Names of the rules that per-package-ignores turn off for `package`."""
    from ..rules import all_rules, select_rules

    selectors = [s for glob, sel in ignores if package_matches(glob, package) for s in sel]
    if not selectors:
        return set()
    kept = {r.name for r in select_rules((), selectors)}
    return {r.name for r in all_rules()} - kept


@dataclass(frozen=True)
class Applied:
    findings: tuple[Finding, ...]        # accepted ones carry their reason in `accepted`
    unused: tuple[Acceptance, ...]       # entries that matched no finding of a checked package


def apply(findings: Sequence[Finding], accepts: Sequence[Acceptance],
          ignores: Sequence[tuple[str, tuple[str, ...]]], packages: Sequence[str]) -> Applied:
    from ..rules import find_rule

    codes = {a: (rule.code if (rule := find_rule(a.rule)) else a.rule) for a in accepts}
    used: set[Acceptance] = set()
    out: list[Finding] = []
    off = {p: ignored_rules(p, ignores) for p in {f.package for f in findings}}
    for f in findings:
        if f.rule in off.get(f.package, set()):
            continue
        match = next((a for a in accepts if codes[a] == f.code and _fields_match(a, f)), None)
        if match is not None:
            used.add(match)
            f = replace(f, accepted=match.reason)
        out.append(f)
    unused = tuple(a for a in accepts if a not in used and any(package_matches(a.package, p) for p in packages))
    return Applied(findings=tuple(out), unused=unused)


def _fields_match(a: Acceptance, f: Finding) -> bool:
    return (package_matches(a.package, f.package)
            and (a.input is None or a.input == f.input)
            and (a.dim is None or a.dim == f.dim)
            and (a.model is None or a.model == f.model))


def apply_config(config: Any, findings: Sequence[Finding], packages: Sequence[str]) -> tuple[list[Finding], list[str]]:
    """A Config's accept entries and per-package ignores applied: the findings (accepted ones
    marked) and one note per unused entry. Unknown rules raise AcceptError."""
    check_rules(config.accept, config.per_package_ignores)
    applied = apply(findings, config.accept, config.per_package_ignores, packages)
    notes = [f"{config.source}: accept entry matches no finding (remove it): {entry.describe()}"
             for entry in applied.unused]
    return list(applied.findings), notes
