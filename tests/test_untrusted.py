"""Untrusted text stays data: the hostile corpus of tests/untrusted_corpus.py (every field a
package, an exported program, a config or a log gives carrying HTML, markdown, terminal escapes,
newlines followed by CI commands, bidi overrides and lone surrogates) through every output format.

Each format is parsed or rendered the way its reader does (markdown by GitHub's renderer cmark-gfm
with raw HTML allowed, HTML by html.parser and headless Chromium, JSON/SARIF by json and the SARIF
schema, JUnit by ElementTree, terminal output byte by byte, workflow commands as the runner splits
them) and must keep its structure; and each check first asserts that the attack reached that
output (escaped), so that a corpus that stopped reaching a field fails instead of passing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from click.testing import CliRunner

from analyzer.app.cli import cli
from analyzer.core.untrusted import html_text, json_dumps, md_cell, md_code, md_fence, md_text, terminal, terminal_lines, uri, visible, workflow_data, workflow_property, xml_text

import untrusted_corpus as corpus
from untrusted_corpus import ATTACK, FULL, IMG, MARKER

REPO = Path(__file__).resolve().parents[1]
SARIF_SCHEMA = REPO.parent / "shared" / "schemas" / "sarif-schema-2.1.0.json"
CHECK_FORMATS = ["text", "full", "concise", "json", "sarif", "github", "markdown", "rdjson", "gitlab", "junit"]
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)

# What no line of human-readable output may hold raw: C0 controls but LF, DEL, C1, bidi controls,
# line/paragraph separators, lone surrogates.
HIDDEN = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                    "\ud800-\udfff]")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> corpus.Corpus:
    for base in (corpus.CUDA_BASE, corpus.CPU_BASE, corpus.EP_BASE):
        if not base.is_file():
            pytest.skip(f"{base} is not present")
    return corpus.build(tmp_path_factory.mktemp("untrusted"))


def _run(hostile: corpus.Corpus, *args: str) -> tuple[int, bytes, bytes]:
    """The command in the corpus folder (its pyproject.toml accepts a finding with a hostile
    reason), stdout and stderr as bytes."""
    old = os.getcwd()
    os.chdir(hostile.root)
    try:
        result = CliRunner().invoke(cli, list(args), prog_name="aoti-lint")
    finally:
        os.chdir(old)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.stdout_bytes, result.stderr_bytes


def _names(hostile: corpus.Corpus) -> list[str]:
    # Relative paths as a CI job passes them: the hostile file name, and a folder to search.
    return [hostile.cuda.name, hostile.folder.name]


def _check(hostile: corpus.Corpus, fmt: str) -> tuple[int, str, str]:
    code, out, err = _run(hostile, "check", "--format", fmt, "--exported-program", hostile.exported.name,
                          *_names(hostile))
    assert code == 1, (code, err)
    return code, out.decode("utf-8"), err.decode("utf-8")  # valid UTF-8 whatever the input held


@pytest.fixture(scope="module")
def findings(hostile: corpus.Corpus) -> list[dict]:
    """The findings as the JSON report gives them: the reference for every other format."""
    _, out, _ = _check(hostile, "json")
    found = json.loads(out)["findings"]
    assert len(found) >= 6 and {f["code"] for f in found} >= {"AOTI002", "AOTI008", "AOTI018"}
    return found


# -- the corpus reaches every field -----------------------------------------------------------------


def test_corpus_reaches_every_field(findings: list[dict], hostile: corpus.Corpus) -> None:
    """JSON is data: every hostile field comes back exactly, lone surrogates included."""
    packages = {f["package"] for f in findings}
    assert packages == {hostile.cuda.name, f"{hostile.folder.name}/{hostile.cpu.name}"}
    assert all("\udcff" in p for p in packages)  # the byte that is not UTF-8, still analysed
    assert any(f["model"] == corpus.SEGMENT for f in findings)  # the model folder
    assert any(corpus.SEGMENT in f["member"] for f in findings)  # member names
    assert any(("x" + FULL) in f["detail"] for f in findings)  # the input name, surrogate and all
    assert any(corpus.LITERAL in f["detail"] for f in findings if f["code"] == "AOTI008")  # both assertion messages
    assert sum(corpus.LITERAL in f["detail"] for f in findings if f["code"] == "AOTI008") == 2
    assert any(f.get("accepted") == corpus.REASON.strip() for f in findings)  # the accept reason
    assert any(f["source"] and IMG in (f["source"]["code"] or "") for f in findings)  # the stack trace


# -- terminal output ----------------------------------------------------------------------------------


def _assert_terminal(text: str, *, tabs: bool = False) -> list[str]:
    """No hidden character in any line, no line a CI runner would take for a workflow command."""
    allowed_tab = "\t" if tabs else ""
    for n, line in enumerate(text.split("\n"), 1):
        bad = [c for c in HIDDEN.findall(line) if c not in allowed_tab]
        assert not bad, (n, bad, line[:200])
        assert not line.lstrip().startswith("::"), (n, line[:200])
        assert "##[" not in line, (n, line[:200])
    return text.split("\n")


@pytest.mark.parametrize("fmt", ["text", "full"])
def test_text(hostile: corpus.Corpus, findings: list[dict], fmt: str) -> None:
    _, out, err = _check(hostile, fmt)
    lines = _assert_terminal(out)
    # Shown, escaped: the attack reached the output.
    assert "\\x1b]52;c;aGVsbG8=\\x07" in out and "\\u202e" in out and "\\ud800" in out and "\\udcff" in out
    assert "\\r\\n::error file=x::forged\\n" in out
    # Every line is where the layout puts it: a finding's header (its package's escaped path), an
    # indented detail line, a blank line between findings, the summary.
    places = {terminal(p) for p in {f["package"] for f in findings}}
    headers = [l for l in lines if any(l.startswith(p + ": AOTI") for p in places)]
    assert len(headers) == len(findings)
    for line in lines:
        assert line == "" or line.startswith("  ") or line in headers or line.startswith("Found "), line[:200]


def test_text_in_colour(hostile: corpus.Corpus) -> None:
    """With --color the only escape sequences are the tool's own SGR codes."""
    _, out, _ = _run(hostile, "check", "--color", "--exported-program", hostile.exported.name, *_names(hostile))
    text = out.decode("utf-8")
    assert "\x1b[" in text
    assert not re.search(r"\x1b(?!\[[0-9;]*m)", text)
    _assert_terminal(re.sub(r"\x1b\[[0-9;]*m", "", text))


def test_concise(hostile: corpus.Corpus, findings: list[dict]) -> None:
    _, out, _ = _check(hostile, "concise")
    lines = _assert_terminal(out)
    assert "\\udcff.pt2: AOTI" in out
    assert len(lines) == len(findings) + 2  # one line per finding, the summary, the final newline
    assert lines[-2].startswith("Found ") and lines[-1] == ""


def test_stderr_notes_and_errors(hostile: corpus.Corpus, tmp_path: Path) -> None:
    """Errors and notes on stderr name hostile files in one visible line."""
    broken = hostile.root / ("broken" + corpus.SEGMENT + "\udcfe.pt2")
    os.makedirs(os.fsencode(broken.parent), exist_ok=True)
    with open(os.fsencode(broken), "wb") as fh:
        fh.write(b"not a zip")
    try:
        code, out, err = _run(hostile, "check", broken.name)
    finally:
        os.unlink(os.fsencode(broken))
    assert code == 2
    text = err.decode("utf-8")
    assert "aoti-lint: error: " in text and "\\udcfe.pt2" in text
    _assert_terminal(text)
    assert text.count("\n") == len([l for l in text.split("\n") if l]) and text.endswith("\n")


def test_inspect_text_and_dot(hostile: corpus.Corpus) -> None:
    for args in ((), ("--format", "dot")):
        code, out, _ = _run(hostile, "inspect", *args, "--exported-program", hostile.exported.name, hostile.cuda.name)
        assert code == 0
        text = out.decode("utf-8")
        assert "HOSTILE_KEY" in text or args  # metadata keys and values (inspect text)
        assert "\\x1b]52;c;" in text and "\\udcff" in text
        _assert_terminal(text)
    code, out, _ = _run(hostile, "inspect", "--format", "dot", hostile.cuda.name)
    assert out.decode("utf-8").count("{") == out.decode("utf-8").count("}")  # clusters balanced


def test_inspect_json(hostile: corpus.Corpus) -> None:
    code, out, _ = _run(hostile, "inspect", "--format", "json", "--exported-program", hostile.exported.name,
                        hostile.cuda.name)
    assert code == 0
    doc = json.loads(out.decode("utf-8"))
    assert doc["package"] == hostile.cuda.name
    assert doc["models"][0]["metadata"]["HOSTILE_KEY" + FULL] == FULL


def test_contract(hostile: corpus.Corpus) -> None:
    code, out, _ = _run(hostile, "contract", "--exported-program", hostile.exported.name, hostile.cuda.name)
    assert code == 0
    text = out.decode("utf-8")
    assert "\\x1b]52;c;" in text and "\\ud800" in text  # the input name
    _assert_terminal(text)
    code, out, _ = _run(hostile, "contract", "--format", "json", "--exported-program", hostile.exported.name,
                        hostile.cuda.name)
    assert any(i["user_name"] == "x" + FULL for m in json.loads(out)["models"] for i in m["inputs"])


def test_why(hostile: corpus.Corpus) -> None:
    cpu = f"{hostile.folder.name}/{hostile.cpu.name}"
    code, out, _ = _run(hostile, "why", cpu, "--log", hostile.log.name)
    text = out.decode("utf-8")
    assert "aoti-lint-action" in text and "\\x1b]52;c;" in text  # the log's message and the package's names
    _assert_terminal(text)
    code, out, _ = _run(hostile, "why", "--format", "json", cpu, "--log", hostile.log.name)
    doc = json.loads(out.decode("utf-8"))
    assert doc["package"] == cpu


def test_diff(hostile: corpus.Corpus) -> None:
    """`diff` against the hostile build: its model, input and finding names in every format."""
    base = str(corpus.CUDA_BASE)
    code, out, _ = _run(hostile, "diff", base, hostile.cuda.name, "--exported-program", hostile.exported.name)
    text = out.decode("utf-8")
    assert code == 1 and "\\x1b]52;c;" in text and "\\udcff" in text
    _assert_terminal(text)
    code, out, _ = _run(hostile, "diff", base, hostile.cuda.name, "--format", "json")
    assert json.loads(out.decode("utf-8"))["new"] == hostile.cuda.name
    code, out, _ = _run(hostile, "diff", base, hostile.cuda.name, "--format", "markdown",
                        "--exported-program", hostile.exported.name)
    doc = _parse(_gfm(out.decode("utf-8")))
    assert {t for t, _ in doc.tags} <= MARKDOWN_TAGS and not doc.comments
    assert "aoti-lint-action" in "".join(doc.text) and "@someone" not in "".join(doc.outside)
    rows = [t for t, _ in doc.tags if t == "tr"]
    assert [t for t, _ in doc.tags].count("td") == 6 * (len(rows) - 1)  # no pipe split a cell


# -- markdown, rendered by GitHub's renderer -----------------------------------------------------------


class Html(HTMLParser):
    """Elements, attributes, comments and the text outside <code>/<pre> of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.ends: list[str] = []
        self.comments: list[str] = []
        self.code = 0
        self.outside: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in ("code", "pre"):
            self.code += 1

    def handle_endtag(self, tag):
        self.ends.append(tag)
        if tag in ("code", "pre"):
            self.code -= 1

    def handle_comment(self, data):
        self.comments.append(data)

    def handle_data(self, data):
        self.text.append(data)
        if not self.code:
            self.outside.append(data)


def _parse(html: str) -> Html:
    parser = Html()
    parser.feed(html)
    parser.close()
    return parser


def _gfm(markdown: str) -> str:
    cmarkgfm = pytest.importorskip("cmarkgfm")
    from cmarkgfm.cmark import Options

    # Raw HTML allowed: whatever input could smuggle in would show here (GitHub sanitizes after).
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


MARKDOWN_TAGS = {"h2", "p", "table", "thead", "tbody", "tr", "th", "td", "code", "pre", "details", "summary",
                 "strong", "ul", "li", "br"}
DOCS = "https://github.com/"  # the project's own rule docs are the only links allowed


def _assert_inert_markdown(markdown: str, findings: int) -> Html:
    doc = _parse(_gfm(markdown))
    tags = [t for t, _ in doc.tags]
    assert set(tags) <= MARKDOWN_TAGS, set(tags) - MARKDOWN_TAGS
    assert "img" not in tags and not any(a for t, a in doc.tags if t not in ("pre", "code") and a
                                         and not (t == "a" and a.get("href", "").startswith(DOCS)))
    assert tags.count("details") == doc.ends.count("details") == findings  # the bot's own, each closed
    assert not any("aoti-lint-action" in c for c in doc.comments)  # no forged marker
    outside = "".join(doc.outside)
    assert "@someone" not in outside and "#1" not in outside  # no mention, no issue reference
    assert "javascript:" not in "".join(str(a) for _, a in doc.tags)
    assert "aoti-lint-action" in "".join(doc.text)  # the attack reached the comment, as text
    return doc


def test_markdown(hostile: corpus.Corpus, findings: list[dict]) -> None:
    _, out, _ = _check(hostile, "markdown")
    doc = _assert_inert_markdown(out, len(findings))
    rows = [a for t, a in doc.tags if t == "tr"]
    assert len(rows) == len(findings) + 1  # the header row and one row per finding
    cells = [t for t, _ in doc.tags if t in ("td", "th")]
    assert len(cells) == 4 * (len(findings) + 1)  # no pipe from input split a cell
    assert IMG in "".join(doc.text)  # shown, not rendered


def test_sarif(hostile: corpus.Corpus, findings: list[dict]) -> None:
    _, out, _ = _check(hostile, "sarif")
    doc = json.loads(out)
    if SARIF_SCHEMA.is_file():
        jsonschema = pytest.importorskip("jsonschema")
        jsonschema.validate(doc, json.loads(SARIF_SCHEMA.read_text()))
    results = doc["runs"][0]["results"]
    assert len(results) == len(findings)
    for result in results:
        _assert_inert_markdown(result["message"]["markdown"], 0)
        assert not HIDDEN.search(result["message"]["text"].replace("\n", ""))  # shown as plain text
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert any("%FF.pt2" in u for u in uris)  # the file name's own byte, percent-encoded
    assert all(" " not in u and "\n" not in u for u in uris)


def test_rdjson_and_gitlab(hostile: corpus.Corpus, findings: list[dict]) -> None:
    _, out, _ = _check(hostile, "rdjson")
    diagnostics = json.loads(out)["diagnostics"]
    assert len(diagnostics) == len(findings)
    for d in diagnostics:  # reviewdog posts the message as markdown
        doc = _parse(_gfm(d["message"]))
        assert not any(t == "img" or "href" in a for t, a in doc.tags)
    assert any("aoti-lint-action" in d["message"] for d in diagnostics)
    _, out, _ = _check(hostile, "gitlab")
    issues = json.loads(out)
    assert len(issues) == len(findings) and len({i["fingerprint"] for i in issues}) == len(issues)
    assert {i["location"]["path"] for i in issues} == {f["package"] for f in findings}
    assert not any(HIDDEN.search(i["description"].replace("\n", "")) for i in issues)  # plain text in GitLab
    assert any("\\x1b]52;c;" in i["description"] for i in issues)


# -- HTML ---------------------------------------------------------------------------------------------

REPORT_TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "h4", "div", "main",
               "nav", "ul", "li", "a", "section", "table", "tr", "th", "td", "article", "span", "b", "p", "ol",
               "code", "pre"}
REPORT_ATTRS = {"class", "id", "href", "charset", "name", "content", "lang", "colspan"}


@pytest.fixture(scope="module")
def report_page(hostile: corpus.Corpus) -> Path:
    out = hostile.root / "report.html"
    code, _, err = _run(hostile, "report", "--exported-program", hostile.exported.name, *_names(hostile),
                        "-o", out.name)
    assert code == 0, err
    return out


def test_html_report(report_page: Path, findings: list[dict]) -> None:
    page = report_page.read_bytes().decode("utf-8")
    doc = _parse(page)
    tags = {t for t, _ in doc.tags}
    assert tags <= REPORT_TAGS, tags - REPORT_TAGS
    for tag, attrs in doc.tags:
        assert set(attrs) <= REPORT_ATTRS, (tag, attrs)
        assert not attrs.get("href") or attrs["href"].startswith("#"), attrs
    assert len([1 for t, a in doc.tags if t == "article"]) == len(findings)
    assert not doc.comments
    text = "".join(doc.text)
    assert IMG in text and MARKER in text  # shown as text
    assert not HIDDEN.search(text.replace("\n", "").replace("\t", ""))


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (.ci/run installs Debian's chromium)")
def test_html_report_in_chromium(report_page: Path, findings: list[dict], tmp_path: Path) -> None:
    probe = tmp_path / "probe.html"
    script = ("<script>const r = {img: document.images.length, on: [...document.querySelectorAll('*')]"
              ".filter(e => [...e.attributes].some(a => a.name.startsWith('on') || a.name === 'src')).length,"
              " articles: document.querySelectorAll('article').length, title: document.title};"
              "const p = document.createElement('pre'); p.id = 'r'; p.textContent = JSON.stringify(r);"
              "document.body.appendChild(p);</script>")
    probe.write_bytes(report_page.read_bytes().replace(b"</body>", script.encode() + b"</body>"))
    dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                          "--host-resolver-rules=MAP * ~NOTFOUND", "--dump-dom", probe.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    found = json.loads(re.search(r'<pre id="r">(.*?)</pre>', dom, re.S).group(1).replace("&quot;", '"'))
    assert found == {"img": 0, "on": 0, "articles": len(findings), "title": "aoti-lint report"}


# -- JUnit, GitHub workflow commands ----------------------------------------------------------------------


def test_junit(hostile: corpus.Corpus, findings: list[dict]) -> None:
    _, out, _ = _check(hostile, "junit")
    root = ET.fromstring(out.encode("utf-8"))
    cases = root.findall("testsuite/testcase")
    assert len(cases) == len(findings)
    text = "".join(e.text or "" for e in root.iter()) + "".join(v for e in root.iter() for v in e.attrib.values())
    assert "\\x1b]52;c;" in text and "\\ud800" in text  # shown as escapes
    assert not HIDDEN.search(text.replace("\n", "").replace("\t", ""))


def test_github_annotations(hostile: corpus.Corpus, findings: list[dict]) -> None:
    _, out, _ = _check(hostile, "github")
    lines = out.split("\n")
    assert lines[-1] == "" and len(lines) - 1 == len(findings)  # one line per finding, nothing else
    for line in lines[:-1]:
        m = re.fullmatch(r"::(error|warning|notice) ([^:]*)::(.*)", line)
        assert m, line[:200]  # the runner reads command, properties and data as the tool meant
        props = dict(p.split("=", 1) for p in m.group(2).split(","))
        assert set(props) <= {"file", "line", "col", "title"}, props
        assert "\r" not in line and not HIDDEN.search(line)
    assert "%0D%0A::error file=x::forged%0A" in out  # the newline that would start a command, encoded


# -- non-UTF-8 names in a real process, every format written to a file ----------------------------------


@pytest.mark.parametrize("fmt", CHECK_FORMATS)
def test_non_utf8_names_in_a_process(hostile: corpus.Corpus, fmt: str) -> None:
    """A folder holding a package whose name is not UTF-8: analysed, reported in every format,
    the -o file complete (and stdout the same bytes)."""
    out = hostile.root / f"out.{fmt}"
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1"}
    args = [sys.executable, "-m", "analyzer", "check", "--format", fmt, hostile.folder.name]
    to_file = subprocess.run([*args, "-o", out.name], cwd=hostile.root, env=env, capture_output=True, timeout=300)
    assert to_file.returncode == 1, to_file.stderr[-2000:]
    data = out.read_bytes()
    assert data and data.decode("utf-8")
    to_stdout = subprocess.run(args, cwd=hostile.root, env=env, capture_output=True, timeout=300)
    assert to_stdout.returncode == 1 and to_stdout.stdout == data
    if fmt in ("json", "sarif", "rdjson", "gitlab"):
        json.loads(data)
    elif fmt == "junit":
        ET.fromstring(data)


# -- the renderers themselves ---------------------------------------------------------------------------

ORDINARY = ["index bound `ks0` of \"index out of bounds: 0 <= tmp4 < ks0\" in triton_poi_fused_index_mul_0",
            "compiled for [2, inf), checked only with AOTI_RUNTIME_CHECK_INPUTS=1",
            "check `src.shape[0] == idx.shape[0]` before calling the model",
            "static_cast<int64_t>(x) & (tmp7 < ks1) | y", "gather_dyn.cuda/data/aotinductor/model/c.wrapper.cpp:656:9",
            "x.shape = (0, 8), idx.shape = (3,)", "café ünïcode ✓ 🔴"]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert terminal(text) == text and terminal_lines(text) == text
    assert md_text(text) == text
    assert xml_text(text) == text and workflow_data(text) == text
    assert json.loads(json_dumps(text)) == text


@pytest.mark.parametrize("attack", [ATTACK, FULL, "\\" + ATTACK, "`" + ATTACK, "``" + FULL + "`", "\\`@a `b` [c](d)",
                                    "[x]: https://attacker/", "&#64;someone &lt;img&gt;", "www.attacker.example",
                                    "a@b.example GH-12 owner/repo#3", "<https://attacker/>", "<!-- aoti-lint-action"])
def test_md_text_is_inert(attack: str) -> None:
    for markdown in (md_text(attack), "**Fix:** " + md_text(attack) + " `tool` " + md_code(attack),
                     md_cell(md_text(attack)), "\n".join(md_fence([attack, "```", attack], "text"))):
        doc = _parse(_gfm(markdown))
        assert not any(t not in ("p", "code", "pre", "strong") for t, _ in doc.tags), (attack, doc.tags)
        assert not doc.comments
        outside = "".join(doc.outside)
        assert not re.search(r"@\w|#\d|GH-\d|www\.|://", outside), (markdown, outside)


@pytest.mark.parametrize("attack", ["~~~ " + ATTACK, "```x", "# heading", "> quote", "1. item", "- item", "| a | b |",
                                    "---", "=== ", "    indented", "[x]: https://attacker/", "<details>"])
def test_md_text_opens_no_block(attack: str) -> None:
    """At the start of a line (a finding's detail paragraph), input text opens no block."""
    markdown = "<details><summary>s</summary>\n\n" + md_text(attack) + "\n\n</details>\n\nafter\n"
    tags = [t for t, _ in _parse(_gfm(markdown)).tags]
    assert tags[:3] == ["details", "summary", "p"] and tags[-1] == "p" and set(tags[3:-1]) <= {"code"}, (attack, tags)


def test_table_cell_keeps_its_row() -> None:
    row = "| a | " + md_cell(md_text("x | y \\| z\n| --- |")) + " | " + md_cell(md_code("p|q\\|r")) + " |"
    html = _gfm("| h | h | h |\n| --- | --- | --- |\n" + row + "\n")
    doc = _parse(html)
    assert [t for t, _ in doc.tags].count("td") == 3 and [t for t, _ in doc.tags].count("tr") == 2


def test_visible_escapes() -> None:
    assert terminal("a\nb\r\tc\x1b[2J\x7f\x85\u202e\u2066\udcff\ud800") == \
        "a\\nb\\r\\tc\\x1b[2J\\x7f\\x85\\u202e\\u2066\\udcff\\ud800"
    assert visible("a\tb\n", keep="\t") == "a\tb\\n"
    assert terminal("x ##[add-mask]y") == "x \\x23#[add-mask]y"
    assert terminal_lines("ok\n  ::error::x\n::add-mask::y\nstd::vector") == \
        "ok\n  \\x3a:error::x\n\\x3a:add-mask::y\nstd::vector"
    assert all(unicodedata.category(c) != "Cc" for c in terminal("".join(map(chr, range(0x00, 0xa0)))))


def test_html_json_xml_workflow_uri() -> None:
    assert html_text('<a href="x">\x1b') == "&lt;a href=&quot;x&quot;&gt;\\x1b"
    assert html_text("a\n\nb", keep="") == "a\\n\\nb"  # one line inside a markdown HTML block
    assert json_dumps({"k\udcff": "v\ud800"}) == '{"k\\udcff": "v\\ud800"}'
    assert json.loads(json_dumps({"k\udcff": "v\ud800"})) == {"k\udcff": "v\ud800"}
    json_dumps("x").encode("utf-8")
    ET.fromstring(f"<a b=\"{xml_text(chr(0) + chr(0xfffe) + chr(0xdc80))}\">{xml_text(chr(0x1b))}</a>")
    assert workflow_data("50%\r\n::error::x") == "50%25%0D%0A::error::x"
    assert workflow_property("a:b,c") == "a%3Ab%2Cc"
    assert uri("dir/a b\udcff.pt2") == "dir/a%20b%FF.pt2"
    assert uri("x\ud800") == "x%ED%A0%80"


def test_one_escaping_layer() -> None:
    """Escaping lives in analyzer/core/untrusted.py only: no reporter escapes for itself (html.escape,
    json.dumps keeping non-ASCII, its own URL quoting), and every reporter of findings, models,
    contracts or why results renders through it."""
    analyzer = REPO / "analyzer"
    for path in sorted(analyzer.rglob("*.py")):
        if path.name == "untrusted.py":
            continue
        source = path.read_text(encoding="utf-8")
        for banned in ("html.escape(", "ensure_ascii=False", "urllib.parse import quote"):
            assert banned not in source, f"{path.relative_to(REPO)}: {banned}"
    for name in ("text", "concise", "json", "sarif", "github", "markdown", "rdjson", "gitlab", "junit", "html",
                 "inspect", "why", "dot"):
        source = (analyzer / "report" / f"{name}.py").read_text(encoding="utf-8")
        assert "from ..core.untrusted import" in source, name
    # cli_diff renders nothing itself: diff.py does.
    for name in ("explain/contract", "report/diff", "app/cli_confirm", "app/merge", "app/cli"):
        assert "from ..core.untrusted import" in (analyzer / f"{name}.py").read_text(encoding="utf-8"), name
