"""Helpers shared by the reporters: counts, the summary line, colours, rule lookup."""

from __future__ import annotations

import hashlib
from contextvars import ContextVar
from typing import Any, Iterable, Sequence

from ..core.findings import Finding, Severity
from ..core.model import input_position
from ..core.untrusted import utf8

# Styles a reporter may ask for (click.style's names), used only when it is asked for colour.
BOLD = "bold"
DIM = "dim"
RED = "red"
YELLOW = "yellow"
BLUE = "blue"
CYAN = "cyan"

SEVERITY_COLOR = {Severity.ERROR: RED, Severity.WARNING: YELLOW, Severity.INFO: BLUE}


def paint(text: str, *styles: str, color: bool) -> str:
    """`text` styled with click.style when `color`, unchanged otherwise. Whether to colour at all
    (--color/--no-color, NO_COLOR, a terminal) is the caller's decision; `text` must already be
    through the terminal renderer (click.style adds only its own escape sequences)."""
    if not color or not styles or not text:
        return text
    import click  # lazy: reporters are imported by library users who never colour

    colours = [s for s in styles if s not in (BOLD, DIM)]
    return click.style(text, fg=colours[-1] if colours else None, bold=BOLD in styles or None,
                       dim=DIM in styles or None)


def called_from(finding: Finding) -> tuple[str, str | None] | None:
    """(`file:line`, the code there) of the frame that called into the model (the outermost user
    frame of the exported program's stack trace): the file as found (analyzer.locate), else its
    name. None without one. Untrusted: each medium escapes both."""
    called = getattr(finding.source, "called_from", None) if finding.source is not None else None
    if called is None:
        return None
    path = finding.called_from.path if finding.called_from is not None else \
        str(called[0]).replace("\\", "/").rsplit("/", 1)[-1]
    return f"{path}:{called[1]}", called[2] or None


def confirmation_text(finding: Finding) -> str | None:
    """`confirmed: SIGABRT at x.shape = (2, 129); eager: IndexError ...`: what `aoti-lint confirm`
    saw when it ran the finding's witness (None when it did not run). Untrusted: it quotes what the
    package printed, so each medium escapes it."""
    c = finding.confirmation
    if not isinstance(c, dict):
        return None
    verdict = str(c.get("verdict") or "not-run")
    found = c.get("outcome")
    outcome: dict[str, Any] = found if isinstance(found, dict) else {}
    what = str(outcome.get("what") or c.get("reason") or "")
    at = f" at {c['probe']}" if c.get("probe") and verdict != "not-run" else ""
    eager = outcome.get("eager")
    ref = f"; eager: {eager}" if eager and verdict == "confirmed" else ""
    return f"{verdict}: {what}{at}{ref}" if what else f"{verdict}{at}{ref}"


def counts(findings: Iterable[Finding]) -> dict[Severity, int]:
    """Findings per severity, most severe first."""
    out = {Severity.ERROR: 0, Severity.WARNING: 0, Severity.INFO: 0}
    for f in findings:
        if not f.accepted:  # accepted on purpose: shown, not counted
            out[f.severity] += 1
    return out


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# The deployment setting the findings assume (`check --runtime-checks on|off`): "on", "off" or "unset".
# `render` sets it for the reporters; every report says it (summary line, JSON, SARIF, markdown).
RUNTIME_CHECKS: ContextVar[str] = ContextVar("runtime_checks", default="unset")


def summary(findings: Sequence[Finding], packages: Sequence[object], errors: Sequence[object] = ()) -> str:
    """`Found 1 error, 0 warnings, 2 infos in 1 package (runtime checks: unset).` or `All checks
    passed (runtime checks: unset).`, with `N accepted; ` in the parenthesis when findings were accepted
    on purpose, then `N packages could not be read.` when some could not."""
    accepted = sum(1 for f in findings if f.accepted)
    note = f" ({accepted} accepted; runtime checks: {RUNTIME_CHECKS.get()})" if accepted else \
        f" (runtime checks: {RUNTIME_CHECKS.get()})"
    unread = f" {plural(len(errors), 'package')} could not be read." if errors else ""
    if len(findings) == accepted:
        return ("All checks passed" if packages or not errors else "Nothing checked") + f"{note}." + unread
    c = counts(findings)
    return (
        f"Found {plural(c[Severity.ERROR], 'error')}, {plural(c[Severity.WARNING], 'warning')}, "
        f"{plural(c[Severity.INFO], 'info')} in {plural(len(packages), 'package')}{note}." + unread
    )


def ordered(findings: Sequence[Finding]) -> list[Finding]:
    """The report order: packages as given, then by severity (errors first), then by location
    (the primary one: a model source line, else the package), then code; stable otherwise."""
    first: dict[str, int] = {}
    for f in findings:
        first.setdefault(f.package, len(first))

    def key(item: tuple[int, Finding]) -> tuple:
        i, f = item
        loc = primary(f)
        return (first[f.package], -int(f.severity), loc.path, loc.line, loc.column, f.code, i)

    return [f for _, f in sorted(enumerate(findings), key=key)]


def detail(finding: Finding) -> str | None:
    """The full explanation, when it says more than the headline."""
    text = finding.detail
    return text if text and text != finding.message else None


def primary(finding: Finding):
    """The location a user can open (model source line or package path); the member otherwise."""
    return finding.primary or finding.location


def member(finding: Finding) -> str | None:
    """`member:line:col` inside the package, when the primary location is elsewhere."""
    if finding.primary is None or finding.primary == finding.location:
        return None
    loc = finding.location
    return f"{loc.path}:{loc.line}:{loc.column}" if loc.line and loc.column else \
        f"{loc.path}:{loc.line}" if loc.line else loc.path


def position(finding: Finding) -> str:
    """`member:line:col`, `member:line` or `member` inside the package."""
    loc = finding.location
    if loc.line and loc.column:
        return f"{loc.path}:{loc.line}:{loc.column}"
    if loc.line:
        return f"{loc.path}:{loc.line}"
    return loc.path


def about(finding: Finding) -> str:
    """`model m, kernel k, input 0 dim 0 (s77)`: what the finding is about, for prose formats."""
    parts = [f"model {finding.model}"]
    if finding.kernel:
        parts.append(f"kernel {finding.kernel}")
    if finding.input is not None:
        parts.append(input_position(finding.input, finding.dim))
    if finding.symbol:
        parts.append(f"symbol {finding.symbol}")
    return ", ".join(parts)


def fingerprint(finding: Finding) -> str:
    """A build-stable identity: package path, rule, input, dim, normalized expression, model.

    Never the member path (it holds a build hash) nor the message. When a rule leaves `key` empty,
    the kernel name (stable across builds of the same graph) stands in to keep findings apart.
    """
    parts = [
        finding.package.replace("\\", "/"),
        finding.rule,
        "" if finding.input is None else str(finding.input),
        "" if finding.dim is None else str(finding.dim),
        finding.key or (finding.kernel or ""),
        finding.model,
    ]
    return hashlib.sha256(utf8("\x1f".join(parts))).hexdigest()


def rules_or_all(rules: Sequence[type] | None) -> list:
    """The rules a reporter documents: those given, else every registered rule."""
    if rules is not None:
        return list(rules)
    from ..rules import all_rules  # lazy: rendering findings needs no rule modules

    return all_rules()


def location_json(loc) -> dict | None:
    """`{"path", "line", "column"}` of a Location (None stays None): one shape in every JSON output."""
    if loc is None:
        return None
    return {"path": loc.path, "line": loc.line, "column": loc.column}
