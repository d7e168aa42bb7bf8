"""Source lines of a wrapped model: the primary source is the innermost frame outside torch (the
line whose op the kernel runs), the outermost one the user's call into the model ("called from").

fixtures/wrapped (built by fixtures/wrapped/build.py, torch 2.13 CPU): `Wrapper.forward` is one line,
`return self.model(x, idx)` (build.py:43), and `Inner.forward` does the indexing,
`return x[idx] * 2 + rows` (build.py:34).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.query import source
from analyzer.app.cli import cli

REPO = Path(__file__).resolve().parents[1]
HERE = REPO / "fixtures" / "wrapped"
PKG = "fixtures/wrapped/wrapped.cpu.stripped.pt2"
EP = "fixtures/wrapped/wrapped.ep.pt2"


@pytest.fixture
def in_repo(monkeypatch):
    monkeypatch.chdir(REPO)


def run(*args: str):
    return CliRunner().invoke(cli, list(args), prog_name="aoti-lint")


def _empty_index(doc: dict) -> dict:
    return next(f for f in doc["findings"] if f["code"] == "AOTI001")


def test_trace_frames():
    trace = ('File "/home/u/serve.py", line 99, in forward\n    out = self.inner(x)\n'
             '  File "/venv/lib/python3.11/site-packages/transformers/models/gpt2/modeling_gpt2.py", line 576, '
             'in forward\n    position_embeds = self.wpe(position_ids)\n'
             '  File "/venv/lib/python3.11/site-packages/torch/nn/modules/sparse.py", line 189, in forward\n'
             '    return F.embedding(\n')
    assert source.frame(trace) == ("/venv/lib/python3.11/site-packages/transformers/models/gpt2/modeling_gpt2.py",
                                   576, "position_embeds = self.wpe(position_ids)")
    assert source.called_from(trace) == ("/home/u/serve.py", 99, "out = self.inner(x)")
    one = 'File "/home/u/model.py", line 5, in forward\n    return x[idx]\n'
    assert source.frame(one) == ("/home/u/model.py", 5, "return x[idx]") and source.called_from(one) is None
    assert source.called_from(None) is None and source.called_from("") is None


def test_json_primary_source_and_called_from(in_repo):
    result = run("check", PKG, "--exported-program", EP, "--format", "json", "--fail-on", "info")
    assert result.exit_code == 1, result.output
    f = _empty_index(json.loads(result.stdout))
    src = f["source"]
    assert src["file"].endswith("fixtures/wrapped/build.py") and src["line"] == 34
    assert src["code"] == "return x[idx] * 2 + rows" and src["module"] == "model"
    called = src["called_from"]
    assert called["file"].endswith("fixtures/wrapped/build.py") and called["line"] == 43
    assert called["code"] == "return self.model(x, idx)"
    assert f["location"] == {"path": "fixtures/wrapped/build.py", "line": 34, "column": 0}
    # the keys `source` had before are all still there
    assert {"file", "line", "code", "module", "module_class", "op", "node", "ambiguous"} <= set(src)


def test_single_frame_has_no_called_from(in_repo):
    result = run("check", "fixtures/gather_dyn.cpu.stripped.pt2", "--exported-program", "fixtures/gather_dyn.ep.pt2",
                 "--format", "json")
    f = _empty_index(json.loads(result.stdout))
    assert f["source"]["called_from"] is None


def test_sarif_related_location(in_repo):
    result = run("check", PKG, "--exported-program", EP, "--format", "sarif")
    (res,) = [r for r in json.loads(result.stdout)["runs"][0]["results"] if r["ruleId"] == "AOTI001"]
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "fixtures/wrapped/build.py" and loc["region"]["startLine"] == 34
    (related,) = res["relatedLocations"]
    assert related["message"]["text"] == "called from"
    assert related["physicalLocation"]["artifactLocation"]["uri"] == "fixtures/wrapped/build.py"
    assert related["physicalLocation"]["region"] == {"startLine": 43, "snippet": {"text": "return self.model(x, idx)"}}
    without = run("check", "fixtures/gather_dyn.cpu.stripped.pt2", "--exported-program", "fixtures/gather_dyn.ep.pt2",
                  "--format", "sarif")
    assert all("relatedLocations" not in r for r in json.loads(without.stdout)["runs"][0]["results"])


def test_text(in_repo):
    text = run("check", PKG, "--exported-program", EP).stdout
    assert text.startswith("fixtures/wrapped/build.py:34: AOTI001")
    assert "  source: `model` (Inner) at build.py:34 (index)\n    return x[idx] * 2 + rows\n" \
           "  called from: fixtures/wrapped/build.py:43: return self.model(x, idx)\n" in text


def test_called_from_outside_the_checkout_keeps_the_recorded_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # build.py is not here: the recorded file's name is shown
    text = run("check", str(REPO / PKG), "--exported-program", str(REPO / EP)).stdout
    assert "  called from: build.py:43: return self.model(x, idx)\n" in text


def test_markdown_and_html(in_repo):
    """The pull-request comment and the HTML page name the caller too (text, JSON and SARIF above)."""
    md = run("check", PKG, "--exported-program", EP, "--format", "markdown").stdout
    assert "**Called from:** `fixtures/wrapped/build.py:43`: `return self.model(x, idx)`" in md
    html = run("report", PKG, "--exported-program", EP).stdout
    assert "called from: <code>fixtures/wrapped/build.py:43</code>: <code>return self.model(x, idx)</code>" in html
    assert '<pre class="user">return x[idx] * 2 + rows</pre>' in html
    for fmt in ("text", "full"):
        assert "  called from: fixtures/wrapped/build.py:43: return self.model(x, idx)\n" in run(
            "check", PKG, "--exported-program", EP, "--format", fmt).stdout
