"""`--format json`: the `aoti-lint.check/1` contract, keys in a fixed order."""

from __future__ import annotations

from typing import Any, Sequence

from ..core.findings import Finding, PackageError
from ..core.untrusted import json_dumps
from .common import RUNTIME_CHECKS, location_json, primary

SCHEMA = "aoti-lint.check/1"


def finding_dict(f: Finding) -> dict[str, Any]:
    """One finding as the contract spells it (`message` the headline, `detail` the full
    explanation; `input`/`dim`/... null when not about one);
    `accepted` (the reason) only on a finding accepted in [tool.aoti-lint]."""
    out = {
        "code": f.code,
        "rule": f.rule,
        "severity": str(f.severity),
        "message": f.message,
        "detail": f.detail or f.message,
        "message_key": f.message_key,
        "package": f.package,
        "model": f.model,
        "kernel": f.kernel,
        "input": f.input,
        "dim": f.dim,
        "symbol": f.symbol,
        "location": location_json(primary(f)),
        "member": f.location.path,
        "member_line": f.location.line,
        "witness": f.witness,
        "witnesses": list(f.witnesses) or ([f.witness] if f.witness else []),
        "fix": f.fix,
        "chain": list(f.chain),
        "source": f.source.to_json() if f.source is not None else None,
    }
    if len(f.dims) > 1:  # a finding about several dims: each with its own breaking size and witness
        out["dims"] = [{"input": d.input, "dim": d.dim, "size": d.size, "witness": d.witness} for d in f.dims]
    if f.also:  # the same finding in other kernels, reported once (rules.merging)
        out["also"] = [{"kernel": kernel, "member": loc.path, "member_line": loc.line} for kernel, loc in f.also]
    if f.also_more:  # repeats past the listed ones, counted (messages.LIST_LIMIT)
        out["also_more"] = f.also_more
    if f.accepted:
        out["accepted"] = f.accepted
    if f.confirmation is not None:
        out["confirmation"] = f.confirmation
    return out


def render(
    findings: Sequence[Finding],
    *,
    packages: Sequence[object] = (),
    color: bool = False,
    rules: Sequence[type] | None = None,
    errors: Sequence[PackageError] = (),
) -> str:
    doc: dict[str, Any] = {"schema": SCHEMA, "runtime_checks": RUNTIME_CHECKS.get(),
                           "findings": [finding_dict(f) for f in findings]}
    if errors:  # only when a package could not be read, so clean outputs keep their shape
        doc["errors"] = [{"package": e.package, "message": e.message} for e in errors]
    return json_dumps(doc, indent=2) + "\n"
