"""`--format markdown`: one pull-request comment (GitHub-flavoured Markdown)."""

from __future__ import annotations

import html
from typing import Sequence

from ..findings import Finding, Severity
from ._common import about, counts, position, summary

ICON = {Severity.ERROR: "🔴", Severity.WARNING: "🟡", Severity.INFO: "🔵"}


def cell(text: str) -> str:
    """Text safe inside a table cell: pipes escaped (even in code spans), newlines as <br>."""
    return text.replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def code_span(text: str) -> str:
    """`text` as inline code, with a fence longer than any backtick run inside it."""
    run = longest = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _details(f: Finding) -> str:
    title = html.escape(f"{f.code} {f.rule}: {position(f)}")
    lines = [f"<details><summary>{title}</summary>", ""]
    lines.append(f"{ICON[f.severity]} **{f.severity}**: {f.message}")
    if f.accepted:
        lines += ["", f"**Accepted:** {f.accepted}"]
    lines.append("")
    pkg = f"{code_span(f.package)}, " if f.package else ""
    lines.append(f"In {pkg}{about(f)}.")
    if f.chain:
        lines += ["", "Linking chain:", "", "```text", *f.chain, "```"]
    if f.snippet:
        lines += ["", "```text", *(line.rstrip("\r\n") for line in f.snippet), "```"]
    if f.witness:
        lines += ["", f"**Witness:** {code_span(f.witness)}"]
    if f.fix:
        lines += ["", f"**Fix:** {f.fix}"]
    lines += ["", "</details>"]
    return "\n".join(lines)


def render(
    findings: Sequence[Finding],
    *,
    packages: Sequence[object] = (),
    color: bool = False,
    rules: Sequence[type] | None = None,
) -> str:
    out = ["## aoti-lint", ""]
    if not findings:
        checked = f" ({len(packages)} package{'s' if len(packages) != 1 else ''})" if packages else ""
        return "\n".join(out + [f"✅ All checks passed{checked}."]) + "\n"
    out += [summary(findings, packages), ""]
    c = counts(findings)
    out += ["| severity | count |", "| --- | ---: |"]
    out += [f"| {ICON[sev]} {sev} | {n} |" for sev, n in c.items()]
    out += ["", "| code | rule | severity | location | message |", "| --- | --- | --- | --- | --- |"]
    for f in findings:
        out.append(
            f"| {f.code} | {cell(f.rule)} | {f.severity}{' (accepted)' if f.accepted else ''} "
            f"| {cell(code_span(position(f)))} "
            f"| {cell(f.message)} |"
        )
    out.append("")
    out += [_details(f) + "\n" for f in findings]
    return "\n".join(out).rstrip("\n") + "\n"
