"""The default `check` format: one block per finding, ruff-like, then a summary line.

A block is the headline (`path:line:col: CODE [rule] severity: headline`), then indented detail:
the full explanation (wrapped), where in the package, the user's source, the linking chain, the
snippet, the witness and the fix. A fix already printed for an earlier finding of the same package
is referred to (`fix: as for AOTI003 above`) instead of repeated.
"""

from __future__ import annotations

import textwrap
from typing import Sequence

from ..core.findings import Finding, PackageError
from ..core.messages import REPORT
from ..core.untrusted import terminal, terminal_lines
from .common import BOLD, CYAN, DIM, SEVERITY_COLOR, detail, member, paint, primary, summary

WIDTH = 100  # the detail paragraph's wrap width


def render(
    findings: Sequence[Finding],
    *,
    packages: Sequence[object] = (),
    color: bool = False,
    rules: Sequence[type] | None = None,
    errors: Sequence[PackageError] = (),
) -> str:
    """Findings as blocks separated by blank lines, then `Found ...` or `All checks passed.`"""
    fixes: dict[tuple[str, str], str] = {}  # (package, fix) -> the code that printed it in full
    blocks = []
    for f in findings:
        seen = fixes.get((f.package, f.fix or ""))
        if f.fix and seen is None:
            fixes[(f.package, f.fix)] = f.code
        blocks.append(render_finding(f, color=color, fix_seen=seen))
    tail = summary(findings, packages, errors)
    if findings:
        tail = paint(tail, BOLD, color=color)
        return terminal_lines("\n\n".join(blocks) + "\n\n" + tail + "\n")
    return tail + "\n"


def where(f: Finding, *, color: bool = False) -> str:
    """`path:line:col` of the primary location."""
    loc = primary(f)
    out = paint(terminal(loc.path), BOLD, color=color)
    if loc.line:
        out += f":{loc.line}" + (f":{loc.column}" if loc.column else "")
    return out


def header(f: Finding, *, color: bool) -> str:
    """`path:line:col: CODE [rule-name] severity: headline`"""
    sev = SEVERITY_COLOR[f.severity]
    code = paint(f.code, BOLD, sev, color=color)
    level = paint(str(f.severity) + (" (accepted)" if f.accepted else ""), sev, color=color)
    return f"{where(f, color=color)}: {code} [{f.rule}] {level}: {terminal(f.message)}"


def render_finding(f: Finding, *, color: bool = False, fix_seen: str | None = None) -> str:
    """One finding's block; `fix_seen` is the code of an earlier finding of the package that
    printed the same fix in full."""
    lines = [header(f, color=color)]
    text = detail(f)
    if text:
        lines += textwrap.wrap(terminal(" ".join(text.split())), WIDTH, initial_indent="  ", subsequent_indent="  ",
                               break_long_words=False, break_on_hyphens=False)
    origin = f"  in {terminal(f.package)}, model {terminal(f.model)}" if f.package else f"  in model {terminal(f.model)}"
    inside = member(f)
    if inside:
        origin += f", member {terminal(inside)}"
    lines.append(paint(origin, DIM, color=color))
    if f.accepted:
        lines.append(f"  {paint('accepted', BOLD, color=color)}: {terminal(f.accepted)}")
    if f.source is not None:
        lines.append(f"  {paint('source', BOLD, color=color)}: {terminal(f.source.describe())}")
        if f.source.code:
            lines.append(f"    {terminal(f.source.code)}")
        called = getattr(f.source, "called_from", None)
        if called is not None:
            where = f.called_from.path if f.called_from is not None else called[0].replace(chr(92), "/").rsplit("/", 1)[-1]
            lines.append(f"  {paint('called from', BOLD, color=color)}: {terminal(where)}:{called[1]}"
                         + (f": {terminal(called[2])}" if called[2] else ""))
    lines.extend(f"    {terminal(step)}" for step in f.chain)
    lines.extend(_snippet(f, color=color))
    for kernel, loc in f.also:
        lines.append("  " + REPORT["also"].format(kernel=terminal(kernel),
                                                  where=f"{terminal(loc.path.rsplit('/', 1)[-1])}:{loc.line}"))
    if f.also_more:
        lines.append("  " + REPORT["also-more"].format(count=f.also_more))
    if f.witness:
        lines.append(f"  {paint('witness', BOLD, color=color)}: {terminal(f.witness)}")
        # AOTI002 covers 1 and 0 (and a size above the max): each is a call to try, one per line.
        for other in (w for w in f.witnesses if w != f.witness):
            lines.append(f"  {paint('witness', BOLD, color=color)}: {terminal(other)}")
    if f.fix:
        fix = REPORT["see-fix"].format(code=fix_seen) if fix_seen else f.fix
        lines.append(f"  {paint('fix', BOLD, CYAN, color=color)}: {terminal(fix)}")
    return "\n".join(lines)


def _snippet(f: Finding, *, color: bool) -> list[str]:
    """The source lines ending at the finding's line, numbered, with a caret under its column."""
    if not f.snippet:
        return []
    # Tabs expanded first (the caret is measured in the expanded line), then every other hidden
    # character made visible.
    raw = [line.rstrip("\r\n") for line in f.snippet]
    text = [terminal(line.expandtabs(4)) for line in raw]
    last = f.location.line
    if last <= 0:
        return [f"     | {line}".rstrip() for line in text]
    first = last - len(text) + 1
    width = max(len(str(last)), 3)
    bar = paint("|", DIM, color=color)
    out = [f"  {' ' * width} {bar}"]
    for number, line in enumerate(text, start=max(first, 1)):
        out.append(f"  {paint(str(number).rjust(width), DIM, color=color)} {bar} {line}".rstrip())
    column = f.location.column
    if column > 0:
        # Measure in the tab-expanded line so the caret stays under the column.
        pad = len(terminal(raw[-1][: column - 1].expandtabs(4)))
        caret = paint("^", BOLD, SEVERITY_COLOR.get(f.severity, ""), color=color)
        out.append(f"  {' ' * width} {bar} {' ' * pad}{caret}")
    return out
