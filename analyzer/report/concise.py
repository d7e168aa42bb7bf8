"""`--format concise`: one line per finding, at most 160 characters (`path:line:col: CODE severity:
headline`, the headline cut to fit), then the summary."""

from __future__ import annotations

from typing import Sequence

from ..core.findings import Finding, PackageError
from ..query.headline import ELLIPSIS, shorten
from .common import BOLD, SEVERITY_COLOR, paint, summary
from ..core.untrusted import terminal, terminal_lines
from .text import where

WIDTH = 160
PATH_LIMIT = 100  # a longer path keeps its end (the file name)


def line(f: Finding, *, color: bool = False) -> str:
    """`path:line:col: CODE severity: headline`, at most WIDTH characters (without colour codes)."""
    place = where(f)
    if len(place) > PATH_LIMIT:
        place = ELLIPSIS + place[-(PATH_LIMIT - 1):]
    level = str(f.severity) + (" (accepted)" if f.accepted else "")
    head = f"{place}: {f.code} {level}: "
    text = shorten(terminal(" ".join(f.message.split())), max(WIDTH - len(head), 1))
    if not color:
        return head + text
    sev = SEVERITY_COLOR[f.severity]
    return (f"{paint(place, BOLD, color=True)}: {paint(f.code, BOLD, sev, color=True)} "
            f"{paint(level, sev, color=True)}: {text}")


def render(
    findings: Sequence[Finding],
    *,
    packages: Sequence[object] = (),
    color: bool = False,
    rules: Sequence[type] | None = None,
    errors: Sequence[PackageError] = (),
) -> str:
    lines = [line(f, color=color) for f in findings]
    lines.append(summary(findings, packages, errors))
    return terminal_lines("\n".join(lines) + "\n")
