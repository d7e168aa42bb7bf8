"""`--format rdjson`: reviewdog's Diagnostic Format (rdjson), for `reviewdog -f=rdjson`.

A diagnostic's path is the package file as given (a file of the repository, which reviewdog can map
to a pull request's diff); the member inside the archive and its line lead the message, since lines
of a zip archive mean nothing to a reviewer.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import REPOSITORY
from ..core.findings import Finding, Severity
from ..core.untrusted import json_dumps, md_text
from .common import detail, position

SEVERITY = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING", Severity.INFO: "INFO"}


def diagnostic(f: Finding) -> dict[str, Any]:
    from .ruledoc import doc_url
    from ..rules import find_rule

    lines = [f"{position(f)}: {f.message}"] + ([f.detail] if detail(f) else [])
    if f.accepted:
        lines.insert(0, f"accepted: {f.accepted}")
    if f.witness:
        lines.append(f"witness: {f.witness}")
    if f.fix:
        lines.append(f"fix: {f.fix}")
    code: dict[str, Any] = {"value": f"{f.code} {f.rule}"}
    rule = find_rule(f.code)
    if rule is not None:
        code["url"] = doc_url(rule)
    return {
        # reviewdog posts the message as markdown in a review comment: each line made inert.
        "message": "\n".join(md_text(line) for line in lines),
        "location": {"path": f.package or f.location.path},
        "severity": "INFO" if f.accepted else SEVERITY[f.severity],
        "code": code,
        "original_output": f"{position(f)}: {f.code} [{f.rule}] {f.severity}: {f.message}",
    }


def render(
    findings: Sequence[Finding],
    *,
    packages: Sequence[object] = (),
    color: bool = False,
    rules: Sequence[type] | None = None,
    errors: Sequence[object] = (),  # unreadable packages: on stderr and in the exit code only
) -> str:
    doc = {"source": {"name": "aoti-lint", "url": REPOSITORY},
           "diagnostics": [diagnostic(f) for f in findings]}
    return json_dumps(doc, indent=2) + "\n"
