"""`--format github`: GitHub Actions workflow commands, one annotation per finding."""

from __future__ import annotations

from typing import Sequence

from ..core.findings import Finding, PackageError, Severity
from ..core.untrusted import workflow_data, workflow_property
from .common import primary

COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


# The message part and a `key=value` property, as actions/toolkit's escapeData/escapeProperty.
escape_data = workflow_data
escape_property = workflow_property


def annotation(f: Finding) -> str:
    loc = primary(f)
    props = [f"file={escape_property(loc.path)}"]
    if loc.line > 0:
        props.append(f"line={loc.line}")
        if loc.column > 0:
            props.append(f"col={loc.column}")
    accepted = " (accepted)" if f.accepted else ""
    props.append(f"title={escape_property(f'{f.code} {f.rule}{accepted}')}")
    message = f"accepted: {f.accepted}\n{f.message}" if f.accepted else f.message
    if f.witness:
        message += f"\nwitness: {f.witness}"
    if f.fix:
        message += f"\nfix: {f.fix}"
    command = "notice" if f.accepted else COMMAND[f.severity]  # accepted: visible, never a failure
    return f"::{command} {','.join(props)}::{escape_data(message)}"


def render(
    findings: Sequence[Finding],
    *,
    packages: Sequence[object] = (),
    color: bool = False,
    rules: Sequence[type] | None = None,
    errors: Sequence[PackageError] = (),
) -> str:
    lines = [annotation(f) for f in findings]
    lines += [f"::error file={escape_property(e.package)},title=unreadable package::{escape_data(e.message)}"
              for e in errors]
    return "".join(line + "\n" for line in lines)
