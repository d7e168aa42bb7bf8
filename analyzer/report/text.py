"""The terminal formats of `check`: one block per finding, ruff-like, then a summary line.

`text` (the default, `render`) is what a person reads: per finding the headline
(`path:line:col: CODE [rule] severity: headline`), where in which package when the headline does
not say it, the user's source line and the frame that called into the model, the witness and a fix
of at most FIX_LINES lines, every line within WIDTH columns except the user's code. `full`
(`render_full`, ruff's `full`) adds what a reviewer digs into: the full explanation, the member
inside the package, the linking chain, the snippet with its caret, every witness and the whole fix.
In both, a fix already printed for an earlier finding of the same package is referred to
(`fix: as for AOTI003 above`) instead of repeated.
"""

from __future__ import annotations

import textwrap
from typing import Callable, Sequence

from ..core.findings import Finding, PackageError
from ..query.headline import ELLIPSIS, shorten
from ..core.messages import REPORT
from ..core.untrusted import terminal, terminal_lines
from .common import BOLD, CYAN, DIM, SEVERITY_COLOR, called_from, confirmation_text, detail, member, paint, primary, summary

WIDTH = 100  # the wrap width of every line but the user's code
FIX_LINES = 2  # the default format's fix: at most this many lines
BLOCK_LINES = 8  # the default format's block: the fix gets one line when two would pass this


def render(
    findings: Sequence[Finding],
    *,
    packages: Sequence[object] = (),
    color: bool = False,
    rules: Sequence[type] | None = None,
    errors: Sequence[PackageError] = (),
) -> str:
    """The default format: short blocks separated by blank lines, then `Found ...` or
    `All checks passed.`"""
    return _render(findings, packages, errors, color, short_finding)


def render_full(
    findings: Sequence[Finding],
    *,
    packages: Sequence[object] = (),
    color: bool = False,
    rules: Sequence[type] | None = None,
    errors: Sequence[PackageError] = (),
) -> str:
    """`--format full`: every detail of every finding, then the summary line."""
    return _render(findings, packages, errors, color, render_finding)


def _render(findings: Sequence[Finding], packages: Sequence[object], errors: Sequence[PackageError],
            color: bool, block: Callable[..., str]) -> str:
    fixes: dict[tuple[str, str], str] = {}  # (package, fix) -> the code that printed it in full
    blocks = []
    for f in findings:
        seen = fixes.get((f.package, f.fix or ""))
        if f.fix and seen is None:
            fixes[(f.package, f.fix)] = f.code
        blocks.append(block(f, color=color, fix_seen=seen))
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


def header(f: Finding, *, color: bool, rule: bool = True) -> str:
    """`path:line:col: CODE [rule-name] severity: headline` (without `[rule-name]` unless `rule`)"""
    sev = SEVERITY_COLOR[f.severity]
    code = paint(f.code, BOLD, sev, color=color)
    level = paint(str(f.severity) + (" (accepted)" if f.accepted else ""), sev, color=color)
    name = f" [{f.rule}]" if rule else ""
    return f"{where(f, color=color)}: {code}{name} {level}: {terminal(f.message)}"


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
        where = f"{terminal(loc.path.rsplit('/', 1)[-1])}:{loc.line}"
        lines.append("  " + (REPORT["also"].format(kernel=terminal(kernel), where=where) if kernel is not None
                             else REPORT["also-at"].format(where=where)))
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
    confirmed = confirmation_text(f)
    if confirmed is not None:
        lines.append(f"  {paint('confirm', BOLD, color=color)}: {terminal(confirmed)}")
    return "\n".join(lines)


def _wrapped(label: str, text: str, *, color: bool, style: tuple[str, ...] = (BOLD,)) -> list[str]:
    """`  label: text` wrapped at WIDTH (continuations indented 4), `text` already escaped."""
    lines = textwrap.wrap(f"  {label}: {' '.join(text.split())}", WIDTH, subsequent_indent="    ",
                          break_long_words=False, break_on_hyphens=False) or [f"  {label}:"]
    # The label is styled after wrapping, so that colour codes never count as columns.
    lines[0] = lines[0].replace(f"{label}:", f"{paint(label, *style, color=color)}:", 1)
    return lines


def _short_fix(fix: str, room: int = FIX_LINES) -> list[str]:
    """The fix's leading clauses (`; `-separated) that fit `room` wrapped lines, else its start
    cut with an ellipsis; `fix` already escaped. The whole fix is in `--format full`."""
    clauses = fix.split("; ")
    for n in range(len(clauses), 0, -1):
        text = "; ".join(clauses[:n]) + ("; " + ELLIPSIS if n < len(clauses) else "")
        lines = _wrapped("fix", text, color=False)
        if len(lines) <= room:
            return lines
    lines = _wrapped("fix", fix, color=False)[:room]
    last = lines[-1]
    if len(last) > WIDTH - 2:  # room for " …": end at the last word that leaves it
        cut = last.rfind(" ", 0, WIDTH - 2)
        last = last[:cut] if cut > 4 else shorten(last, WIDTH - 2)
    return [*lines[:-1], last.rstrip(" ,;:(" + ELLIPSIS) + " " + ELLIPSIS]


def short_finding(f: Finding, *, color: bool = False, fix_seen: str | None = None) -> str:
    """One finding as a person reads it (the default format): the headline, the package and
    model when the headline's path is not the package, the user's source line and its caller, the
    witness (the others counted) and a short fix; `fix_seen` as for `render_finding`."""
    lines = _short_header(f, color=color)
    place = primary(f)
    if f.package and (place.path != f.package or f.model != "model"):
        origin = f"  in {terminal(f.package)}, model {terminal(f.model)}"
        lines += [paint(line, DIM, color=color) for line in textwrap.wrap(
            origin, WIDTH, subsequent_indent="    ", break_long_words=False, break_on_hyphens=False)]
    if f.accepted:
        lines += _wrapped("accepted", terminal(f.accepted), color=color)
    if f.source is not None:
        lines += _wrapped("source", terminal(f.source.describe()), color=color)
        if f.source.code:
            lines.append(f"    {terminal(f.source.code)}")  # the user's code, never cut
        caller = called_from(f)
        if caller is not None:
            lines += _wrapped("called from", terminal(caller[0]) + (f": {terminal(caller[1])}" if caller[1] else ""),
                              color=color)
    if f.witness:
        lines += _witness_line(f, color=color)
    if f.fix:
        room = max(1, min(FIX_LINES, BLOCK_LINES - len(lines) - (f.confirmation is not None)))
        fix = [f"  fix: {REPORT['see-fix'].format(code=fix_seen)}"] if fix_seen else _short_fix(terminal(f.fix), room)
        fix[0] = fix[0].replace("fix:", f"{paint('fix', BOLD, CYAN, color=color)}:", 1)
        lines += fix
    confirmed = confirmation_text(f)
    if confirmed is not None:
        lines += _wrapped("confirm", terminal(confirmed), color=color)
    return "\n".join(lines)


def _witness_line(f: Finding, *, color: bool) -> list[str]:
    """`witness: A; B (and 2 more)`: the primary witness, then the others that fit on its line."""
    others = [terminal(w) for w in f.witnesses if w != f.witness]
    shown = terminal(f.witness)
    for n, other in enumerate(others):
        rest = len(others) - n - 1
        more = f" (and {rest} more)" if rest else ""
        if len(f"  witness: {shown}; {other}{more}") > WIDTH:
            shown += f" (and {len(others) - n} more)"
            break
        shown += f"; {other}"
    return _wrapped("witness", shown, color=color)


def _short_header(f: Finding, *, color: bool) -> list[str]:
    """The header with its message wrapped at WIDTH: `path:line:col: CODE [rule] severity:` stays
    whole on the first line (the layout tools and people grep for), the message continues on lines
    indented 4."""
    message = terminal(f.message)
    rule = len(header(f, color=False)) - len(message) <= WIDTH  # else the code alone names the rule
    head = header(f, color=False, rule=rule)
    prefix = head[: len(head) - len(message)]
    words = message.split()
    first, rest = prefix.rstrip(" "), 0
    # A prefix too long for one word of the message (a long path): the message starts below.
    while rest < len(words) and len(f"{first} {words[rest]}") <= WIDTH:
        first, rest = f"{first} {words[rest]}", rest + 1
    more = textwrap.wrap(" ".join(words[rest:]), WIDTH, initial_indent="    ", subsequent_indent="    ",
                         break_long_words=False, break_on_hyphens=False)
    if color:
        styled = header(f, color=True, rule=rule)
        first = styled[: len(styled) - len(message)] + " ".join(words[:rest]) if rest else \
            styled[: len(styled) - len(message)].rstrip(" ")
    return [first, *more]


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
