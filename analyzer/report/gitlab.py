"""`--format gitlab`: GitLab Code Quality JSON (a `codequality` report artifact).

`location.path` is the package file as given (a file of the repository) with line 1; the member and
line inside the archive lead the description. Fingerprints are the build-stable SARIF fingerprint
plus the package, made unique within the report (GitLab drops duplicates).
"""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

from ..core.findings import Finding, Severity
from ..core.untrusted import json_dumps, utf8, visible
from .common import fingerprint, position

SEVERITY = {Severity.ERROR: "critical", Severity.WARNING: "major", Severity.INFO: "info"}


def render(
    findings: Sequence[Finding],
    *,
    packages: Sequence[object] = (),
    color: bool = False,
    rules: Sequence[type] | None = None,
    errors: Sequence[object] = (),  # unreadable packages: on stderr and in the exit code only
) -> str:
    seen: dict[str, int] = {}
    out: list[dict[str, Any]] = []
    for f in findings:
        base = hashlib.sha256(utf8(f"{f.package}\x1f{fingerprint(f)}")).hexdigest()
        n = seen.get(base, 0)
        seen[base] = n + 1
        unique = base if n == 0 else hashlib.sha256(f"{base}\x1f{n}".encode()).hexdigest()
        description = f"{f.code} [{f.rule}] {position(f)}: {f.message}"
        if f.accepted:
            description = f"accepted ({f.accepted}): {description}"
        out.append({
            "description": visible(description),  # shown as plain text in the merge request
            "check_name": f.rule,
            "fingerprint": unique,
            "severity": "info" if f.accepted else SEVERITY[f.severity],
            "location": {"path": f.package or f.location.path, "lines": {"begin": 1}},
        })
    return json_dumps(out, indent=2) + "\n"
