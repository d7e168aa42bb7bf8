"""Reporters: findings in, text out. One module per format; rendering never lives on Finding.

Every entry of FORMATS is `render(findings, *, packages, color, rules, errors) -> str`, where
`packages` are the checked packages (only their number is read), `rules` the rules to document
(SARIF lists them all; None means every registered rule) and `errors` the packages that could not
be read (`PackageError`s; each format says so in its own way).
"""

from __future__ import annotations

from typing import Callable, Sequence

from ..core.findings import Finding, PackageError
from . import concise, github, gitlab, json, junit, markdown, rdjson, sarif, text
from .common import RUNTIME_CHECKS, ordered

Renderer = Callable[..., str]

FORMATS: dict[str, Renderer] = {
    "text": text.render,
    "full": text.render_full,
    "concise": concise.render,
    "json": json.render,
    "sarif": sarif.render,
    "github": github.render,
    "markdown": markdown.render,
    "rdjson": rdjson.render,
    "gitlab": gitlab.render,
    "junit": junit.render,
}


def render(
    fmt: str,
    findings: Sequence[Finding],
    *,
    packages: Sequence[object] = (),
    color: bool = False,
    rules: Sequence[type] | None = None,
    errors: Sequence[PackageError] = (),
    runtime_checks: str | None = None,
) -> str:
    """`FORMATS[fmt](...)` over the findings in report order (`_common.ordered`: by package, then
    severity, then location), with a ValueError naming the formats for an unknown one.
    `runtime_checks`: the deployment setting the findings assume ("on", "off"; None: unset)."""
    try:
        renderer = FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r} (use {', '.join(FORMATS)})") from None
    token = RUNTIME_CHECKS.set(runtime_checks or "unset")
    try:
        return renderer(ordered(findings), packages=packages, color=color, rules=rules, errors=errors)
    finally:
        RUNTIME_CHECKS.reset(token)


def render_statistics(fmt: str, findings: Sequence[Finding], *, errors: Sequence[PackageError] = ()) -> str:
    """`--statistics`: findings per rule, most frequent first (ruff's layout); a JSON list with
    `--format json`, the text table for every other format."""
    rows: dict[tuple[str, str], list] = {}
    for f in findings:
        row = rows.setdefault((f.code, f.rule), [0, f.severity])
        row[0] += 1
        row[1] = max(row[1], f.severity)
    ordered = sorted(rows.items(), key=lambda item: (-item[1][0], item[0][0]))
    if fmt == "json":
        import json as _json

        doc = [{"code": code, "rule": rule, "severity": str(sev), "count": n} for (code, rule), (n, sev) in ordered]
        return _json.dumps(doc, indent=2) + "\n"
    width = max((len(str(n)) for _, (n, _) in ordered), default=1)
    lines = [f"{n:>{width}}\t{code}\t{rule}\t{sev}" for (code, rule), (n, sev) in ordered]
    if errors:
        lines.append(f"{len(errors):>{width}}\t-\tunreadable-package\terror")
    return "".join(line + "\n" for line in lines)
