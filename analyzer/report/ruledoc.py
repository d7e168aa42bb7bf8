"""`aoti-lint rules` (a table) and `aoti-lint explain RULE` (the rule's docstring, for a terminal)."""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from .. import REPOSITORY
from .common import BOLD, SEVERITY_COLOR, paint


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
    options, limitations = _notes(rule)
    for section, text in (("Options that change the verdict", options), ("Known limitations", limitations)):
        if text:
            lines += ["", paint(section, BOLD, color=color), text.replace("`", "")]
    lines += ["", f"Documentation: {doc_path(rule)} ({doc_url(rule)})"]
    return "\n".join(lines).rstrip() + "\n"


# -- docs/rules/<code>-<name>.md: one page per rule, generated from its docstring ---------------

DOCS_DIR = "docs/rules"
# Where the repository's docs are published; SARIF `helpUri` and `explain` point here.
DOCS_URL = f"{REPOSITORY}/blob/main/{DOCS_DIR}/"
GENERATED_NOTE = ("<!-- Generated from the rule's docstring and analyzer/report/rulenotes.py; do not edit. "
                  "Regenerate: AOTI_LINT_UPDATE_GOLDEN=1 python -m pytest tests/test_rule_docs.py -->")


def doc_name(rule: Any) -> str:
    """`AOTI001-empty-index-bound.md`."""
    return f"{rule.code}-{rule.name}.md"


def doc_path(rule: Any) -> str:
    """The page's path in the repository."""
    return f"{DOCS_DIR}/{doc_name(rule)}"


def doc_url(rule: Any) -> str:
    return DOCS_URL + doc_name(rule)


def _notes(rule: Any) -> tuple[str, str]:
    from .rulenotes import LIMITATIONS, OPTIONS

    return OPTIONS.get(rule.name, ""), LIMITATIONS.get(rule.name, "")


def render_page(rule: Any) -> str:
    """The rule's page: title, severity, the docstring's sections, then the options that change its
    verdict and its known limitations."""
    doc = rule.doc().splitlines()
    body = "\n".join(doc[1:]).strip()
    family = rule.__module__.rsplit(".", 1)[-1]
    options, limitations = _notes(rule)
    parts = [
        f"# {rule.code} `{rule.name}`",
        GENERATED_NOTE,
        f"**Severity**: {rule.severity} · **Family**: {family} · [All rules](README.md)",
        doc[0].strip() if doc else rule.name,
        body,
        f"## Options that change the verdict\n\n{options or 'None.'}",
        f"## Known limitations\n\n{limitations or 'None known.'}",
        f"Select or ignore it with `--select {rule.code}` / `--ignore {rule.name}`; "
        f"show this text with `aoti-lint explain {rule.code}`.",
    ]
    return "\n\n".join(p for p in parts if p) + "\n"


def render_index(rules: Sequence[Any]) -> str:
    lines = ["# Rules", "", GENERATED_NOTE, "",
             "| code | name | severity | summary |", "| --- | --- | --- | --- |"]
    for r in rules:
        lines.append(f"| {r.code} | [`{r.name}`]({doc_name(r)}) | {r.severity} | {r.summary()} |")
    return "\n".join(lines) + "\n"


def render_docs(rules: Sequence[Any]) -> dict[str, str]:
    """`{file name: text}` for every page in docs/rules, the index included."""
    pages = {doc_name(r): render_page(r) for r in rules}
    pages["README.md"] = render_index(rules)
    return pages


def write_docs(folder: str, rules: Sequence[Any]) -> list[str]:
    """Write the pages into `folder` and delete stale `AOTI*.md` pages; the names written."""
    from pathlib import Path

    from ..core.atomic import write_atomic

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    pages = render_docs(rules)
    for stale in out.glob("*.md"):
        if stale.name not in pages:
            stale.unlink()
    for name, text in pages.items():
        write_atomic(out / name, text)
    return sorted(pages)

