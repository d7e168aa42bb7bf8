"""`--format sarif`: SARIF 2.1.0 for code-scanning tools (GitHub, VS Code SARIF viewer)."""

from __future__ import annotations

import re
from typing import Any, Sequence

from .. import REPOSITORY, __version__
from ..core.findings import Finding, PackageError, Severity
from ..core.untrusted import json_dumps, md_code, md_text, uri, visible
from .common import RUNTIME_CHECKS, detail, fingerprint, primary, rules_or_all
from .ruledoc import doc_url

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = REPOSITORY
FINGERPRINT_KEY = "aotiLint/v1"

LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _plain(markdown: str) -> str:
    """The docstring as plain text: headings without `## `, code fences dropped."""
    lines = []
    for line in markdown.splitlines():
        if line.strip().startswith("```"):
            continue
        lines.append(re.sub(r"^#+\s+", "", line))
    return "\n".join(lines).strip()


def rule_descriptor(rule: Any) -> dict[str, Any]:
    doc = rule.doc()
    sections = rule.sections()
    full = sections.get("What it does") or rule.summary()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary() or rule.name},
        "fullDescription": {"text": _plain(full) or rule.name},
        "help": {"text": _plain(doc) or rule.name, "markdown": doc or rule.name},
        "helpUri": doc_url(rule),
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        # The family module (bounds, empty, package) groups rules in code-scanning UIs.
        "properties": {"tags": [rule.__module__.rsplit(".", 1)[-1]]},
    }


def _message(f: Finding) -> dict[str, str]:
    """`text`: the headline (what code scanning lists); `markdown`: the headline, then the full
    explanation, the witness and the fix (code scanning renders it: every part made inert)."""
    parts = [md_text(f.message)]
    extra = detail(f)
    if extra:
        parts.append(md_text(extra))
    if f.witness:
        parts.append(f"Witness: {md_code(f.witness)}")
    if f.fix:
        parts.append(f"Fix: {md_text(f.fix)}")
    # `text` is shown as plain text: one line, hidden characters visible.
    return {"text": visible(f.message), "markdown": "\n\n".join(parts)}


def _location(f: Finding) -> dict[str, Any]:
    # A URI reference: member names are plain ASCII in practice, but spaces or `#` must be escaped
    # (and a file name that is not UTF-8 keeps its bytes).
    # The primary location (the model source line or the package path), never a hashed member.
    loc = primary(f)
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri(loc.path)}}
    if loc.line > 0:
        region: dict[str, Any] = {"startLine": loc.line}
        if loc.column > 0:
            region["startColumn"] = loc.column
        snippet = f.source.code if f.primary is not None and f.primary != f.location and f.source is not None \
            and f.source.code else (f.snippet[-1] if f.snippet and loc == f.location else None)
        if snippet:
            region["snippet"] = {"text": visible(snippet, keep="\t")}
        physical["region"] = region
    # The member path is relative to the package; the package itself is a logical location.
    qualified = f"{f.package}::{f.model}" if f.package else f.model
    logical = {"name": f.model, "fullyQualifiedName": qualified, "kind": "module"}
    if f.kernel:
        logical = {"name": f.kernel, "fullyQualifiedName": f"{qualified}::{f.kernel}", "kind": "function"}
    logicals = [logical]
    if f.primary is not None and f.primary != f.location:  # the member inside the package, secondary
        logicals.append({"name": f.location.path.rsplit("/", 1)[-1], "fullyQualifiedName":
                         f"{f.package}::{f.location.path}" if f.package else f.location.path, "kind": "resource"})
    return {"physicalLocation": physical, "logicalLocations": logicals}


def _called_from(f: Finding) -> dict[str, Any] | None:
    """Where the user's code called into the model (the outermost frame outside torch), as a
    related location: the file found here, else the path the exported program recorded."""
    called = getattr(f.source, "called_from", None) if f.source is not None else None
    if called is None:
        return None
    path = f.called_from.path if f.called_from is not None else called[0].replace("\\", "/")
    region: dict[str, Any] = {"startLine": called[1]} if called[1] else {}
    if region and called[2]:
        region["snippet"] = {"text": visible(called[2])}
    physical: dict[str, Any] = {"artifactLocation": {"uri": uri(path)}}
    if region:
        physical["region"] = region
    return {"id": 0, "physicalLocation": physical, "message": {"text": "called from"}}


def result(f: Finding, rule_index: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {"ruleId": f.code}
    if f.code in rule_index:
        out["ruleIndex"] = rule_index[f.code]
    out["level"] = LEVEL[f.severity]
    out["message"] = _message(f)
    out["locations"] = [_location(f)]
    related = _called_from(f)
    if related is not None:
        out["relatedLocations"] = [related]
    out["partialFingerprints"] = {FINGERPRINT_KEY: fingerprint(f)}
    if f.accepted:
        out["suppressions"] = [{"kind": "external", "status": "accepted", "justification": visible(f.accepted)}]
    props: dict[str, Any] = {"rule": f.rule, "package": f.package, "model": f.model,
                             "member": f.location.path, "member_line": f.location.line}
    for key in ("detail", "kernel", "input", "dim", "symbol", "witness", "fix"):
        value = getattr(f, key)
        if value is not None:
            props[key] = value
    if f.chain:
        props["chain"] = list(f.chain)
    if f.confirmation is not None:  # `aoti-lint confirm` ran the witness
        props["confirmation"] = f.confirmation
    out["properties"] = props
    return out


def invocation(errors: Sequence[PackageError]) -> dict[str, Any]:
    """The run's invocation when packages could not be read: one error notification each."""
    return {
        "executionSuccessful": False,
        "toolExecutionNotifications": [
            {
                "level": "error",
                "message": {"text": visible(e.message)},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri(e.package)}}}],
                "descriptor": {"id": "unreadable-package"},
            }
            for e in errors
        ],
    }


def render(
    findings: Sequence[Finding],
    *,
    packages: Sequence[object] = (),
    color: bool = False,
    rules: Sequence[type] | None = None,
    errors: Sequence[PackageError] = (),
) -> str:
    documented = rules_or_all(rules)
    index = {rule.code: i for i, rule in enumerate(documented)}
    doc: dict[str, Any] = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "aoti-lint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": [rule_descriptor(r) for r in documented],
                    }
                },
                "results": [result(f, index) for f in findings],
                # The deployment setting the results assume (`--runtime-checks`): on, off or unset.
                "properties": {"runtime_checks": RUNTIME_CHECKS.get()},
            }
        ],
    }
    if errors:
        doc["runs"][0]["invocations"] = [invocation(errors)]
    return json_dumps(doc, indent=2) + "\n"
