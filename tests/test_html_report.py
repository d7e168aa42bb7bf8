"""`aoti-lint report`: one self-contained HTML page, checked structurally and in headless Chromium
(every finding visible, its link reaching its highlighted line in the kernel source; a screenshot)."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.app.cli import cli

from conftest import FIXTURES

PACKAGES = [FIXTURES / "gather_dyn.cuda.stripped.pt2", FIXTURES / "small_transformer.cpu.stripped.pt2",
            FIXTURES / "empty_reduce.cpu.stripped.pt2", FIXTURES / "pos_embedding.cuda.stripped.pt2"]
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)


def run(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="aoti-lint")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    result = run("report", *PACKAGES, "-o", out)
    assert result.exit_code == 0, result.output
    assert f"wrote {out}" in result.stderr
    return out


def _check_findings() -> list[dict]:
    return json.loads(run("--format", "json", "--fail-on", "info", *PACKAGES).stdout)["findings"]


class Elements(HTMLParser):
    """id -> (tag, classes, text), plus every finding's link target and every external reference."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[str, dict] = {}
        self.stack: list[dict] = []
        self.links: list[tuple[str, str]] = []  # (finding id, href)
        self.external: list[str] = []
        self.finding: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        node = {"tag": tag, "class": (a.get("class") or "").split(), "text": "", "parents": [n["tag"] + "." + ".".join(n["class"]) for n in self.stack]}
        if "id" in a:
            self.ids[a["id"]] = node
        if tag == "article":
            self.finding = a.get("id")
        for key in ("src", "href"):
            if key in a and not a[key].startswith("#"):
                self.external.append(a[key])
        if tag == "a" and "src" in node["class"]:
            self.links.append((self.finding, a["href"]))
        self.stack.append(node)

    def handle_endtag(self, tag):
        while self.stack:
            node = self.stack.pop()
            if node["tag"] == tag:
                break

    def handle_data(self, data):
        for node in self.stack:
            node["text"] += data


def test_page_is_self_contained_and_links_reach_the_source(page: Path) -> None:
    text = page.read_text()
    parser = Elements()
    parser.feed(text)
    assert parser.external == []  # no network: nothing loaded from elsewhere
    assert "url(" not in text and "@import" not in text and "<script" not in text
    findings = _check_findings()
    articles = [i for i, n in parser.ids.items() if n["tag"] == "article"]
    assert len(articles) == len(findings) >= 8
    linked = dict(parser.links)
    for fid, finding in zip(articles, findings):
        node = parser.ids[fid]
        assert finding["code"] in node["text"] and finding["message"] in node["text"] and finding["detail"] in node["text"]
        target = parser.ids[linked[fid][1:]]
        assert "hl" in target["class"] and "pre.source" in target["parents"]
        # The target line is the finding's line: its number and its source text.
        assert target["text"].startswith(str(finding["member_line"]))


def test_every_assertion_of_a_shown_kernel_is_highlighted(page: Path) -> None:
    from analyzer.app import api

    text = page.read_text()
    pkg = api.load(str(PACKAGES[1]))
    for a in pkg.models[0].assertions:
        assert re.search(rf'<span class="line assert[^"]*" id="p1-m0-s\d+-L{a.location.line}">', text), a.message


def test_inputs_and_ranges_are_listed(page: Path) -> None:
    text = page.read_text()
    assert "<td>s77</td><td>compiled for [2, inf), checked only with AOTI_RUNTIME_CHECK_INPUTS=1</td>" in text
    assert text.count('<section class="package"') == len(PACKAGES)


CHECK_SCRIPT = """<script>
const out = [];
for (const art of document.querySelectorAll('article.finding')) {
  const r = art.getBoundingClientRect(), cs = getComputedStyle(art);
  const a = art.querySelector('a.src');
  const res = {id: art.id, visible: r.width > 0 && r.height > 0 && cs.visibility !== 'hidden' && cs.display !== 'none'};
  if (a) {
    location.hash = a.getAttribute('href');
    const t = document.querySelector(':target');
    res.reached = !!t && t.id === a.getAttribute('href').slice(1);
    if (t) {
      const tr = t.getBoundingClientRect();
      res.inSource = !!t.closest('pre.source'); res.hl = t.classList.contains('hl');
      res.targetVisible = tr.width > 0 && tr.height > 0;
      res.text = t.textContent;
    }
  }
  out.push(res);
}
const pre = document.createElement('pre'); pre.id = 'results'; pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"""


def _chromium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--host-resolver-rules=MAP * ~NOTFOUND", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs Debian's chromium)")
def test_in_headless_chromium(page: Path, tmp_path: Path) -> None:
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace("</body>", CHECK_SCRIPT + "</body>"))
    dom = _chromium("--window-size=1280,900", "--dump-dom", probe.as_uri()).stdout
    results = json.loads(re.search(r'<pre id="results">(.*?)</pre>', dom, re.S).group(1).replace("&quot;", '"')
                         .replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    findings = _check_findings()
    assert len(results) == len(findings)
    for res, finding in zip(results, findings):
        assert res["visible"], res
        assert res["reached"] and res["inSource"] and res["hl"] and res["targetVisible"], res
        assert res["text"].startswith(str(finding["member_line"])), (res, finding["member"])


def _png_pixels(data: bytes) -> tuple[int, int, bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    idat, pos = b"", 8
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    return width, height, zlib.decompress(idat)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs Debian's chromium)")
def test_screenshot(page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    _chromium("--window-size=1280,1600", f"--screenshot={shot}", page.as_uri())
    width, height, raw = _png_pixels(shot.read_bytes())
    assert (width, height) == (1280, 1600)
    # Not a blank page: the dark header band, text and the coloured finding borders give many values.
    assert len(set(raw)) > 50


def test_accepted_findings_are_marked_and_exit_is_zero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(PACKAGES[0], tmp_path / "ranker.pt2")
    (tmp_path / "pyproject.toml").write_text('[[tool.aoti-lint.accept]]\npackage = "ranker.pt2"\n'
                                             'rule = "AOTI001"\nreason = "rejected upstream"\n')
    result = run("report", "ranker.pt2", "-o", "r.html")
    assert result.exit_code == 0  # a page, not a gate
    text = (tmp_path / "r.html").read_text()
    assert '<article class="finding info accepted"' in text   # an info: eager rejects its witness too and "accepted: rejected upstream" in text
    assert "(1 accepted; runtime checks: unset)" in text


def test_missing_package_is_one_line_exit_2(tmp_path: Path) -> None:
    result = run("report", tmp_path / "missing.pt2", "-o", tmp_path / "r.html")
    assert result.exit_code == 2 and result.stderr.startswith("aoti-lint: error: ")
    assert not (tmp_path / "r.html").exists()


def test_package_content_is_escaped() -> None:
    """Archive content is hostile: names, messages and source lines never become markup."""
    from analyzer.core.findings import Finding, Location, Severity
    from analyzer.core.model import Model, Package
    from analyzer.report.html import render_html

    evil = "<script>alert(1)</script>"
    model = Model(name=evil, source_lines={"m/<x>.cpp": {1: evil, 2: "ok"}})
    finding = Finding(code="AOTI009", rule="unparsed-member", severity=Severity.WARNING, message=evil,
                      model=evil, location=Location("m/<x>.cpp", 1, 1), package="p.pt2", chain=(evil,))
    text = render_html([Package(path="p.pt2", models=[model])], [finding])
    assert "<script" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
