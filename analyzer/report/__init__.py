"""Reporters: findings in, text out. One module per format; rendering never lives on Finding.

Every entry of FORMATS is `render(findings, *, packages, color, rules) -> str`, where `packages`
are the checked packages (only their number is read) and `rules` the rules to document (SARIF
lists them all; None means every registered rule).
"""

from __future__ import annotations

from typing import Callable, Sequence

from ..findings import Finding
from . import concise, github, gitlab, json, junit, markdown, rdjson, sarif, text

Renderer = Callable[..., str]

FORMATS: dict[str, Renderer] = {
    "text": text.render,
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
) -> str:
    """`FORMATS[fmt](...)`, with a ValueError naming the formats for an unknown one."""
    try:
        renderer = FORMATS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r} (use {', '.join(FORMATS)})") from None
    return renderer(findings, packages=packages, color=color, rules=rules)
