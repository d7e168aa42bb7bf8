"""`aoti-lint merge`: many `check` reports (one per shard of a registry) into one.

JSON reports (`aoti-lint.check/1`) merge into one JSON report: findings and errors concatenated
in argument order. SARIF logs merge into one SARIF log with one run per input (SARIF's multi-run
form, which code scanning accepts). The inputs are read as JSON only, never trusted further.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..core.findings import Severity
from ..core.untrusted import json_dumps

JSON_SCHEMA = "aoti-lint.check/1"
SARIF_LEVELS = {"error": Severity.ERROR, "warning": Severity.WARNING, "note": Severity.INFO}
MAX_REPORT_BYTES = 1 << 30  # a report this large is not one of ours


class MergeError(ValueError):
    """An input that is not an aoti-lint JSON report or a SARIF log (one line, exit 2)."""


@dataclass
class Merged:
    kind: str  # "json" or "sarif"
    doc: dict[str, Any]
    severities: list[Severity] = field(default_factory=list)  # one per finding, for the exit code
    # One per finding: whether `aoti-lint confirm` confirmed it (`merge --confirmed-only` gates on these).
    confirmed: list[bool] = field(default_factory=list)
    errors: int = 0  # packages the merged runs could not read

    def text(self) -> str:
        return json_dumps(self.doc, indent=2) + "\n"


def _load(path: str) -> Any:
    with open(path, "rb") as fh:
        data = fh.read(MAX_REPORT_BYTES + 1)
    if len(data) > MAX_REPORT_BYTES:
        raise MergeError(f"{path}: larger than {MAX_REPORT_BYTES >> 20} MiB; not an aoti-lint report")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise MergeError(f"{path}: not JSON ({type(exc).__name__})") from None


def _kind(path: str, doc: Any) -> str:
    if isinstance(doc, dict) and doc.get("schema") == JSON_SCHEMA and isinstance(doc.get("findings"), list):
        return "json"
    if isinstance(doc, dict) and isinstance(doc.get("runs"), list) and str(doc.get("version", "")).startswith("2.1"):
        return "sarif"
    raise MergeError(f"{path}: neither an `aoti-lint check --format json` report nor a SARIF 2.1 log")


def _severity(path: str, text: Any, table: dict[str, Severity]) -> Severity:
    try:
        return table[text]
    except (KeyError, TypeError):
        raise MergeError(f"{path}: unknown severity {text!r}") from None


def merge(paths: list[str]) -> Merged:
    """Merge reports of one kind; MergeError names the first input that does not fit."""
    docs = [(path, _load(path)) for path in paths]
    kinds = {path: _kind(path, doc) for path, doc in docs}
    first = kinds[paths[0]]
    for path in paths:
        if kinds[path] != first:
            raise MergeError(f"{path}: a {kinds[path]} report cannot be merged with {first} reports ({paths[0]})")
    if first == "json":
        findings: list[Any] = []
        errors: list[Any] = []
        for _, doc in docs:
            findings.extend(doc["findings"])
            errors.extend(doc.get("errors") or [])
        table = {str(s): s for s in Severity}
        severities = [_severity(path, f.get("severity") if isinstance(f, dict) else None, table)
                      for path, doc in docs for f in doc["findings"]]
        out: dict[str, Any] = {"schema": JSON_SCHEMA, "findings": findings}
        # The deployment setting the shards assumed: kept when they agree, "mixed" when they do not.
        settings = {doc.get("runtime_checks") for _, doc in docs if isinstance(doc.get("runtime_checks"), str)}
        if settings:
            out = {"schema": JSON_SCHEMA, "runtime_checks": settings.pop() if len(settings) == 1 else "mixed",
                   "findings": findings}
        if errors:
            out["errors"] = errors
        confirm_runs = [doc["confirm"] for _, doc in docs if isinstance(doc.get("confirm"), dict)]
        if confirm_runs:  # confirm reports keep what they ran
            out["confirm"] = {"ran": True, "packages": [p for run in confirm_runs for p in run.get("packages") or []]}
        return Merged("json", out, severities, errors=len(errors), confirmed=[_confirmed(f) for f in findings])
    runs: list[Any] = []
    severities = []
    confirmed: list[bool] = []
    errors_n = 0
    for path, doc in docs:
        for run in doc["runs"]:
            if not isinstance(run, dict):
                raise MergeError(f"{path}: a SARIF run is not an object")
            runs.append(run)
            for result in run.get("results") or []:
                level = result.get("level", "warning") if isinstance(result, dict) else None
                severities.append(_severity(path, level, SARIF_LEVELS))
                confirmed.append(_confirmed(result.get("properties") if isinstance(result, dict) else None))
            for invocation in run.get("invocations") or []:
                if isinstance(invocation, dict):
                    errors_n += sum(1 for n in invocation.get("toolExecutionNotifications") or []
                                    if isinstance(n, dict) and n.get("level") == "error")
    base = dict(docs[0][1])
    base["runs"] = runs
    return Merged("sarif", base, severities, errors=errors_n, confirmed=confirmed)


def _confirmed(holder: Any) -> bool:
    """Whether a finding (JSON) or a SARIF result's properties carry a `confirmed` verdict."""
    confirmation = holder.get("confirmation") if isinstance(holder, dict) else None
    return isinstance(confirmation, dict) and confirmation.get("verdict") == "confirmed"
