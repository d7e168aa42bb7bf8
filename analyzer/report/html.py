"""`aoti-lint report PKG... -o report.html`: one self-contained page (no network, no script): per
package and model the inputs and their ranges, the findings with their chains, and each kernel's
source with its assertions highlighted; every finding links to its line in the source, and every
highlighted line links back to its findings.

Kernel blocks run from a kernel's first line to the next kernel of the same member (at most
`KERNEL_LINES` lines past its last checked line); a finding whose line lies outside every kernel
block gets an excerpt of its own, so that every link has a target.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Sequence

from .. import __version__
from ..core.findings import Finding
from ..core.model import Dim, Model, Package
from ..core.dimtext import range_text
from ..core.untrusted import html_text
from .common import called_from, confirmation_text, ordered, position, summary

KERNEL_LINES = 60     # a kernel block's length when nothing else ends it
EXCERPT_CONTEXT = 4   # lines around a finding outside every kernel block

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header.top{background:#1d2330;color:#fff;padding:14px 24px}header.top h1{margin:0;font-size:20px}
main{padding:8px 24px 48px;max-width:1400px}
section.package{background:#fff;border:1px solid #d9dde3;border-radius:6px;margin:16px 0;padding:4px 18px 14px}
h2{font-size:17px;word-break:break-all}h3{font-size:15px;margin-top:18px}h4{font-size:14px;margin:14px 0 6px}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #d9dde3;padding:3px 8px;text-align:left}
th{background:#eef0f3}code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
article.finding{border-left:5px solid #888;background:#fafbfc;margin:10px 0;padding:6px 12px}
article.error{border-color:#d73a49}article.warning{border-color:#dbab09}article.info{border-color:#0366d6}
article.accepted{opacity:.75;border-style:dashed}
.badge{display:inline-block;border-radius:3px;padding:0 6px;font-size:12px;font-weight:600;color:#fff;background:#888}
.badge.error{background:#d73a49}.badge.warning{background:#b08800}.badge.info{background:#0366d6}.badge.acc{background:#6a737d}
ol.chain{list-style:none;padding:0;margin:6px 0;display:flex;flex-wrap:wrap;align-items:center;gap:4px}
ol.chain li{background:#eef3fb;border:1px solid #c8d6ee;border-radius:4px;padding:2px 8px;font-size:12.5px}
ol.chain li+li::before{content:"\\2192";margin:0 6px 0 -2px;color:#555}
.msg{margin:4px 0}.meta{color:#555;font-size:12.5px}
pre.source{background:#0f1420;color:#d6deeb;padding:8px 0;overflow-x:auto;border-radius:4px;margin:4px 0 12px}
pre.source .line{display:block;padding:0 10px;white-space:pre}
pre.source .ln{display:inline-block;width:5ch;color:#6b7a90;text-align:right;margin-right:12px;user-select:none}
pre.source .assert{box-shadow:inset 4px 0 #ff7b72}pre.source .hl{background:#5a1d24;color:#fff}pre.source .hl.warning{background:#4d4214}pre.source .hl.info{background:#1c3557}
pre.source .hl a{color:#ffd6dc;margin-left:12px;font-size:11.5px}
pre.source .line:target{outline:2px solid #ffcc00}
a.src{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
pre.user{background:#eef0f3;padding:4px 8px;margin:2px 0;overflow-x:auto}
p.confirm{font-size:12.5px;font-weight:600}p.confirm.confirmed{color:#b31d28}p.confirm.not-reproduced{color:#22863a}
"""


def _e(text: object) -> str:
    """Every string that enters the page: entities for markup, visible escapes for hidden
    characters and lone surrogates (untrusted.html_text)."""
    return html_text(text)


class _Page:
    """Ids and the source lines a page shows, per package and model."""

    def __init__(self) -> None:
        self.members: dict[tuple[int, int, str], int] = {}

    def line_id(self, p: int, m: int, path: str, line: int) -> str:
        key = (p, m, path)
        if key not in self.members:
            self.members[key] = len(self.members)
        return f"p{p}-m{m}-s{self.members[key]}-L{line}"


def _spans(model: Model, findings: Sequence[Finding]) -> list[tuple[str, str, int, int]]:
    """(kernel, member, first line, last line) of each kernel block, in source order."""
    related: dict[str, list[int]] = defaultdict(list)
    for a in model.assertions:
        related[a.kernel].append(a.location.line)
    for f in findings:
        if f.kernel:
            related[f.kernel].append(f.location.line)
    starts: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for kernel in model.kernels.values():
        if kernel.location is not None and kernel.location.line > 0 and kernel.location.path in model.source_lines:
            starts[kernel.location.path].append((kernel.location.line, kernel.name))
    out = []
    for path, items in starts.items():
        items.sort()
        last_line = max(model.source_lines[path]) if model.source_lines[path] else 0
        for n, (start, name) in enumerate(items):
            nxt = items[n + 1][0] - 1 if n + 1 < len(items) else last_line
            inside = [l for l in related.get(name, []) if start <= l <= nxt]
            end = min(nxt, max([start + KERNEL_LINES, *(l + 10 for l in inside)]))
            out.append((name, path, start, end))
    return out


def _source_block(page: _Page, p: int, m: int, model: Model, path: str, first: int, last: int,
                  marks: dict[int, list[tuple[str, Finding]]], shown: set[tuple[str, int]]) -> str:
    lines = model.source_lines.get(path, {})
    asserts = {a.location.line for a in model.assertions if a.location.path == path}
    rows = []
    for n in range(first, last + 1):
        if n not in lines or (path, n) in shown:
            continue
        shown.add((path, n))
        here = marks.get(n, [])
        cls = "line" + (" assert" if n in asserts else "")
        back = ""
        if here:
            worst = max(f.severity for _, f in here)
            cls += f" hl {worst}"
            back = "".join(f'<a href="#{fid}">{_e(f.code)}</a>' for fid, f in here)
        rows.append(f'<span class="{cls}" id="{page.line_id(p, m, path, n)}"><span class="ln">{n}</span>'
                    f"{_e(lines[n])}{back}</span>")
    return f'<pre class="source">{"".join(rows)}</pre>' if rows else ""


def _inputs_table(model: Model) -> str:
    rows = ["<tr><th>#</th><th>name</th><th>dtype</th><th>dim</th><th>symbol</th><th>range</th></tr>"]
    for inp in model.inputs:
        dims: list[Dim | None] = [*inp.dims] or [None]
        for dim in dims:
            if dim is None:
                rows.append(f"<tr><td>{inp.index}</td><td>{_e(inp.display)}</td><td>{_e(inp.dtype or '')}</td>"
                            "<td colspan=3>scalar</td></tr>")
                continue
            rows.append(f"<tr><td>{inp.index}</td><td>{_e(inp.display)}</td><td>{_e(inp.dtype or '')}</td>"
                        f"<td>{dim.dim}</td><td>{_e(dim.symbol or '')}</td><td>{_e(range_text(dim))}</td></tr>")
    return f'<table class="inputs">{"".join(rows)}</table>'


def _finding(fid: str, f: Finding, target: str | None) -> str:
    sev = str(f.severity)
    cls = f"finding {sev}" + (" accepted" if f.accepted else "")
    parts = [f'<article class="{cls}" id="{fid}">',
             f'<div><span class="badge {sev}">{_e(sev)}</span> <b>{_e(f.code)}</b> {_e(f.rule)}'
             + (' <span class="badge acc">accepted</span>' if f.accepted else "") + "</div>",
             f'<p class="msg">{_e(f.message)}</p>']
    if f.detail and f.detail != f.message:
        parts.append(f'<p class="detail">{_e(f.detail)}</p>')
    if f.accepted:
        parts.append(f'<p class="meta">accepted: {_e(f.accepted)}</p>')
    if f.chain:
        parts.append('<ol class="chain">' + "".join(f"<li>{_e(step)}</li>" for step in f.chain) + "</ol>")
    if f.source is not None:
        parts.append(f'<p class="meta">source: {_e(f.source.describe())}</p>')
        if f.source.code:
            parts.append(f'<pre class="user">{_e(f.source.code)}</pre>')
        called = called_from(f)
        if called is not None:
            place, code = called
            parts.append(f'<p class="meta">called from: <code>{_e(place)}</code>'
                         + (f": <code>{_e(code)}</code>" if code else "") + "</p>")
    for w in (f.witness, *(w for w in f.witnesses if w != f.witness)) if f.witness else ():
        parts.append(f'<p class="meta">witness: <code>{_e(w)}</code></p>')
    if f.fix:
        parts.append(f'<p class="meta">fix: {_e(f.fix)}</p>')
    confirmed = confirmation_text(f)
    if confirmed is not None:  # `aoti-lint confirm` ran the witness (it quotes the package's output)
        verdict = str((f.confirmation or {}).get("verdict") or "not-run")
        parts.append(f'<p class="confirm {_e(verdict)}">confirm: {_e(confirmed)}</p>')
    label = _e(position(f))
    parts.append(f'<a class="src" href="#{target}">{label}</a>' if target else f'<span class="meta">{label}</span>')
    parts.append("</article>")
    return "".join(parts)


def _model_section(page: _Page, p: int, m: int, model: Model, findings: list[tuple[str, Finding]]) -> str:
    marks: dict[str, dict[int, list[tuple[str, Finding]]]] = defaultdict(lambda: defaultdict(list))
    for fid, f in findings:
        if f.location.line > 0:
            marks[f.location.path][f.location.line].append((fid, f))
    shown: set[tuple[str, int]] = set()
    kernel_html = []
    for name, path, first, last in _spans(model, [f for _, f in findings]):
        kernel = model.kernels[name]
        block = _source_block(page, p, m, model, path, first, last, marks[path], shown)
        kernel_html.append(f'<section class="kernel" id="p{p}-m{m}-k-{_e(name)}"><h4>{_e(kernel.kind)} kernel '
                           f"<code>{_e(name)}</code> <span class=meta>{_e(path)}:{first}</span></h4>{block}</section>")
    excerpts = []
    for _, f in findings:  # lines outside every kernel block
        loc = f.location
        if loc.line > 0 and (loc.path, loc.line) not in shown and loc.line in model.source_lines.get(loc.path, {}):
            block = _source_block(page, p, m, model, loc.path, loc.line - EXCERPT_CONTEXT, loc.line + EXCERPT_CONTEXT,
                                  marks[loc.path], shown)
            excerpts.append(f"<h4><code>{_e(loc.path)}</code></h4>{block}")
    items = []
    for fid, f in findings:
        loc = f.location
        target = page.line_id(p, m, loc.path, loc.line) if (loc.path, loc.line) in shown else None
        items.append(_finding(fid, f, target))
    title = f"model {model.name!r}" + (f" ({model.device})" if model.device else "")
    out = [f'<h3 id="p{p}-m{m}">{_e(title)}</h3>', "<h4>Inputs</h4>", _inputs_table(model),
           f"<h4>Findings ({len(findings)})</h4>", "".join(items) or "<p>No findings.</p>"]
    if kernel_html:
        out += ["<h4>Kernels</h4>", *kernel_html]
    if excerpts:
        out += ["<h4>Other checked lines</h4>", *excerpts]
    return "".join(out)


def render_html(packages: Sequence[Package], findings: Iterable[Finding]) -> str:
    findings = ordered(list(findings))  # the order of every other format
    page = _Page()
    body = []
    for p, pkg in enumerate(packages):
        own = [f for f in findings if f.package == pkg.path]
        section = [f'<section class="package" id="p{p}"><h2>{_e(pkg.path)}</h2>']
        by_model: dict[str, list[tuple[str, Finding]]] = defaultdict(list)
        for n, f in enumerate(own):
            by_model[f.model].append((f"p{p}-f{n}", f))
        known = {model.name for model in pkg.models}
        for m, model in enumerate(pkg.models):
            section.append(_model_section(page, p, m, model, by_model.get(model.name, [])))
        orphans = [(fid, f) for name, items in by_model.items() if name not in known for fid, f in items]
        if orphans:  # package-level findings (unreadable parts, missing models)
            section.append("<h3>Package</h3>" + "".join(_finding(fid, f, None) for fid, f in orphans))
        section.append("</section>")
        body.append("".join(section))
    head = (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>aoti-lint report</title><style>{CSS}</style></head><body>"
            f'<header class="top"><h1>aoti-lint report</h1><div>{_e(summary(findings, packages))} '
            f"· aoti-lint {_e(__version__)}</div></header><main>")
    toc = "<nav><ul>" + "".join(f'<li><a href="#p{p}">{_e(pkg.path)}</a></li>' for p, pkg in enumerate(packages)) \
        + "</ul></nav>"
    return head + toc + "".join(body) + "</main></body></html>\n"
