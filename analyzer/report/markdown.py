"""`--format markdown`: one pull-request comment (GitHub-flavoured Markdown)."""

from __future__ import annotations

import html
import re
from typing import Sequence

from ..findings import Finding, PackageError, Severity
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


def _mermaid_text(text: str) -> str:
    """A label inside `["..."]`: quotes and angle brackets as Mermaid entity codes, one line."""
    text = " ".join(text.split())
    return text.replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


_QUOTED = re.compile(r'"([^"]+)"')


def mermaid(f: Finding) -> list[str]:
    """The finding's chain as a Mermaid flowchart (GitHub renders it): input -> size symbol ->
    kernel -> assertion, and the input whose values are the index. Empty when the finding is about
    neither an input nor a kernel."""
    if f.input is None and not f.kernel:
        return []
    nodes: dict[str, str] = {}
    path: list[str] = []
    if f.input is not None:
        label = f"input {f.input}" + (f" dim {f.dim}" if f.dim is not None else "")
        defined = next((s for s in f.chain if f.symbol and s.startswith(f"{f.symbol} = ")), None)
        if defined is not None:  # "s77 = input 0 dim 0 (arg0_1.size(0)), compiled for [2, inf), ..."
            head, _, rest = defined[len(f.symbol) + 3:].partition(", ")
            label = head
        nodes["in"] = label
        path.append("in")
        if f.symbol:
            nodes["sym"] = f"{f.symbol}: {rest}" if defined is not None and rest else f.symbol
            path.append("sym")
    if f.kernel:
        nodes["k"] = f"kernel {f.kernel}"
        path.append("k")
    quoted = _QUOTED.search(f.detail or f.message)
    check = f"{quoted.group(1)}" if quoted else f"{f.code} {f.rule}"
    nodes["at"] = f"{check}<br/>{position(f).rsplit('/', 1)[-1]}"
    path.append("at")
    lines = ["```mermaid", "flowchart LR"]
    for key, label in nodes.items():
        text = _mermaid_text(label).replace("#lt;br/#gt;", "<br/>")
        lines.append(f'  {key}["{text}"]')
    lines.append("  " + " --> ".join(path))
    index = next((s for s in f.chain if s.startswith("values of input ")), None)
    if index is not None and f.kernel:  # "values of input 1 (arg1_1) -> tmp4 in kernel"
        lines.append(f'  idx["{_mermaid_text(index.split(" -> ")[0])}"] -. index .-> k')
    lines.append("```")
    return lines


def _details(f: Finding) -> str:
    title = html.escape(f"{f.code} {f.rule}: {position(f)}")
    lines = [f"<details><summary>{title}</summary>", ""]
    lines.append(f"{ICON[f.severity]} **{f.severity}**: {f.message}")
    if f.detail and f.detail != f.message:
        lines += ["", f.detail]
    if f.accepted:
        lines += ["", f"**Accepted:** {f.accepted}"]
    lines.append("")
    pkg = f"{code_span(f.package)}, " if f.package else ""
    lines.append(f"In {pkg}{about(f)}.")
    diagram = mermaid(f)
    if diagram:
        lines += ["", *diagram]
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
    errors: Sequence[PackageError] = (),
) -> str:
    out = ["## aoti-lint", ""]
    if not findings and not errors:
        checked = f" ({len(packages)} package{'s' if len(packages) != 1 else ''})" if packages else ""
        return "\n".join(out + [f"✅ All checks passed{checked}."]) + "\n"
    out += [summary(findings, packages, errors), ""]
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
    for e in errors:
        out.append(f"| - | unreadable-package | error | {cell(code_span(e.package))} | {cell(e.message)} |")
    out.append("")
    out += [_details(f) + "\n" for f in findings]
    return "\n".join(out).rstrip("\n") + "\n"
