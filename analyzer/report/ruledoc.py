"""`aoti-lint rules` (a table) and `aoti-lint explain RULE` (the rule's docstring, for a terminal)."""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from ._common import BOLD, SEVERITY_COLOR, paint


def render_table(rules: Sequence[Any], *, color: bool = False) -> str:
    """`CODE  name  severity  summary`, one rule a line, columns aligned."""
    if not rules:
        return "No rules registered.\n"
    rows = [("CODE", "NAME", "SEVERITY", "SUMMARY")]
    rows += [(r.code, r.name, str(r.severity), r.summary()) for r in rules]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = []
    for n, row in enumerate(rows):
        cells = [row[i].ljust(widths[i]) for i in range(3)]
        if color and n == 0:
            cells = [paint(c, BOLD, color=True) for c in cells]
        elif color:
            cells[2] = paint(cells[2], SEVERITY_COLOR[rules[n - 1].severity], color=True)
        lines.append("  ".join([*cells, row[3]]).rstrip())
    return "\n".join(lines) + "\n"


def render_table_json(rules: Sequence[Any]) -> str:
    doc = [
        {"code": r.code, "name": r.name, "severity": str(r.severity), "summary": r.summary()}
        for r in rules
    ]
    return json.dumps(doc, indent=2) + "\n"


def render_explain(rule: Any, *, color: bool = False) -> str:
    """The docstring with its `## ` headings as terminal headings and fences dropped."""
    title = f"{rule.code} {rule.name} ({rule.severity})"
    lines = [paint(title, BOLD, color=color), ""]
    body = rule.doc().splitlines()
    in_code = False
    for line in body:
        if line.strip().startswith("```"):
            in_code = not in_code
            continue
        heading = re.match(r"^#+\s+(.*)$", line)
        if heading and not in_code:
            lines.append(paint(heading.group(1), BOLD, color=color))
        elif in_code:
            lines.append(f"    {line}".rstrip())  # code blocks indented, as in a man page
        else:
            lines.append(line)
    return "\n".join(lines).rstrip() + "\n"
