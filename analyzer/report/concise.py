"""`--format concise`: one line per finding (the text format's header), then the summary."""

from __future__ import annotations

from typing import Sequence

from ..findings import Finding, PackageError
from ._common import summary
from .text import header


def render(
    findings: Sequence[Finding],
    *,
    packages: Sequence[object] = (),
    color: bool = False,
    rules: Sequence[type] | None = None,
    errors: Sequence[PackageError] = (),
) -> str:
    lines = [header(f, color=color) for f in findings]
    lines.append(summary(findings, packages, errors))
    return "\n".join(lines) + "\n"
