"""`--format markdown`: one pull-request comment (GitHub-flavoured Markdown).

The summary line, then one table row per finding (severity, code, headline, where: the user's source
line or the package), then each finding's details collapsed in `<details>` (the full explanation,
where inside the package, the user's code, the chain as a diagram and as text, the witness, the
fix). Nothing is said twice: the headline only in its row, a fix repeated within a package only
referred to. The comment stays within BUDGET characters (GitHub's limit is 65,536): when the
findings do not fit, the last rows and details are left out and a line says how many.

Every string of a finding goes through analyzer.core.untrusted's markdown renderers (prose through
`md_text`, names through `md_code`, blocks through `md_fence`, cells through `md_cell`, the summary
line's HTML through `html_text`): nothing from a package can open or close a table, a `<details>`,
a link, a mention or the Action's marker.
"""

from __future__ import annotations

import re
from typing import Sequence

from ..core.findings import Finding, PackageError, Severity
from ..core.messages import REPORT
from ..core.model import input_position
from ..core.untrusted import html_text, md_cell, md_code, md_fence, md_text, visible
from .common import RUNTIME_CHECKS, called_from, confirmation_text, detail, member, position, primary, summary

ICON = {Severity.ERROR: "🔴", Severity.WARNING: "🟡", Severity.INFO: "🔵"}


cell = md_cell
code_span = md_code


def _mermaid_text(text: str) -> str:
    """A label inside `["..."]`: one line, quotes, angle brackets and backticks (a label opening
    with one is a Mermaid markdown string) as Mermaid entity codes."""
    text = visible(" ".join(text.split()))
    return text.replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;").replace("`", "#96;")


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
        label = input_position(f.input, f.dim)
        defined = next((s for s in f.chain if f.symbol and s.startswith(f"{f.symbol} = ")), None)
        if defined is not None:  # "s77 = input 0 dim 0 (arg0_1.size(0)), compiled for [2, inf), ..."
            head, _, rest = defined[len(f.symbol or "") + 3:].partition(", ")
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
    lines = ["flowchart LR"]
    for key, label in nodes.items():
        text = _mermaid_text(label).replace("#lt;br/#gt;", "<br/>")
        lines.append(f'  {key}["{text}"]')
    lines.append("  " + " --> ".join(path))
    index = next((s for s in f.chain if s.startswith("values of input ")), None)
    if index is not None and f.kernel:  # "values of input 1 (arg1_1) -> tmp4 in kernel"
        lines.append(f'  idx["{_mermaid_text(index.split(" -> ")[0])}"] -. index .-> k')
    return md_fence(lines, "mermaid")


BUDGET = 60_000


def _where(f: Finding) -> str:
    """The primary location: the user's source line, else the package (or its member on disk)."""
    loc = primary(f)
    return f"{loc.path}:{loc.line}" + (f":{loc.column}" if loc.column else "") if loc.line else loc.path


def _also(kernel: str | None, where: str) -> str:
    """One repeat of a merged finding: in another kernel, or at another place of the wrapper."""
    if kernel is None:
        return REPORT["also-at"].format(where=where)
    return REPORT["also"].format(kernel=code_span(kernel), where=where)


def row(f: Finding) -> str:
    level = f"{ICON[f.severity]} {f.severity}" + (" (accepted)" if f.accepted else "")
    return f"| {level} | {f.code} | {cell(md_text(f.message))} | {cell(code_span(_where(f)))} |"


def details(f: Finding, fix_seen: str | None = None) -> str:
    """The collapsed block of one finding; `fix_seen`: the code that printed the same fix above."""
    # An HTML block: escaped and on one line (a blank line would end the block).
    title = html_text(f"{f.code} {f.rule}", keep="") + f" at <code>{html_text(_where(f), keep='')}</code>"
    lines = [f"<details><summary>{title}</summary>", ""]
    if f.accepted:
        lines += [f"**Accepted:** {md_text(f.accepted)}", ""]
    text = detail(f)
    if text:
        lines += [md_text(text), ""]
    inside = member(f) or (position(f) if f.location.path != _where(f).split(":")[0] else None)
    place = [f"model {md_text(f.model)}"] + ([f"member {code_span(inside)}"] if inside else [])
    lines += [(f"In {code_span(f.package)}, " if f.package else "In ") + ", ".join(place) + ".", ""]
    if f.source is not None:
        lines += [f"**Source:** {md_text(f.source.describe())}", ""]
        if f.source.code:
            lines += [*md_fence([f.source.code], "python"), ""]
        called = called_from(f)
        if called is not None:
            caller, code = called
            lines += [f"**Called from:** {code_span(caller)}" + (f": {code_span(code)}" if code else ""), ""]
    diagram = mermaid(f)
    if diagram:
        lines += [*diagram, ""]
    if f.chain:
        lines += [*md_fence(f.chain, "text"), ""]
    if f.snippet:
        lines += [*md_fence([line.rstrip("\r\n") for line in f.snippet], "text"), ""]
    if f.also:
        lines += [*("- " + _also(kernel, code_span(f"{loc.path.rsplit('/', 1)[-1]}:{loc.line}"))
                    for kernel, loc in f.also),
                  *(["- " + REPORT["also-more"].format(count=f.also_more)] if f.also_more else []), ""]
    if f.witness:
        others = [w for w in f.witnesses if w != f.witness]
        label = "Witnesses" if others else "Witness"
        lines += [f"**{label}:** " + ", ".join(code_span(w) for w in (f.witness, *others)), ""]
    if f.fix:
        lines += [f"**Fix:** {REPORT['see-fix'].format(code=fix_seen) if fix_seen else md_text(f.fix)}", ""]
    confirmed = confirmation_text(f)
    if confirmed is not None:  # `aoti-lint confirm` ran the witness (it quotes the package's output)
        lines += [f"**Confirm:** {md_text(confirmed)}", ""]
    lines.append("</details>")
    return "\n".join(lines)


def render(
    findings: Sequence[Finding],
    *,
    packages: Sequence[object] = (),
    color: bool = False,
    rules: Sequence[type] | None = None,
    errors: Sequence[PackageError] = (),
    budget: int = BUDGET,
) -> str:
    out = ["## aoti-lint", ""]
    if not findings and not errors:
        checked = f" ({len(packages)} package{'s' if len(packages) != 1 else ''}; runtime checks: " \
            f"{RUNTIME_CHECKS.get()})" if packages else f" (runtime checks: {RUNTIME_CHECKS.get()})"
        return "\n".join(out + [f"✅ All checks passed{checked}."]) + "\n"
    out += [summary(findings, packages, errors), ""]
    header = ["| severity | code | finding | where |", "| --- | --- | --- | --- |"]
    failed = [f"| 🔴 error | - | unreadable-package: {cell(md_text(e.message))} | {cell(code_span(e.package))} |"
              for e in errors]
    rows, blocks = [], []
    fixes: dict[tuple[str, str], str] = {}
    for f in findings:
        seen = fixes.get((f.package, f.fix or ""))
        if f.fix and seen is None:
            fixes[(f.package, f.fix)] = f.code
        rows.append(row(f))
        blocks.append(details(f, seen))
    # The most findings (in report order) whose rows and details fit, with room for the cut line.
    fixed = sum(len(line) + 1 for line in (*out, *header, *failed)) + 2
    more = REPORT["more"].format(count=len(findings))
    room = budget - fixed - len(more) - 4
    kept, used = len(findings), 0
    for i, (r, b) in enumerate(zip(rows, blocks)):
        used += len(r) + 1 + len(b) + 2
        if used > room:
            kept = i
            break
    table = [*header, *rows[:kept], *failed]
    body = out + table + [""]
    if kept < len(findings):
        body += [REPORT["more"].format(count=len(findings) - kept), ""]
    body += [b + "\n" for b in blocks[:kept]]
    return "\n".join(body).rstrip("\n") + "\n"
