"""`aoti-lint check` on real packages in every format: SARIF valid against the 2.1.0 schema,
fingerprints stable across rebuilds, GitHub annotations and exit codes."""

from __future__ import annotations

import json
import re
import zipfile

import pytest
from click.testing import CliRunner

from analyzer.app.cli import cli
from analyzer.rules import all_rules

from conftest import FIXTURES, SHARED, SHARED_PT2, require

SARIF_SCHEMA = SHARED / "schemas" / "sarif-schema-2.1.0.json"
PACKAGES = ["gather_dyn.cuda.pt2", "empty_reduce.cpu.stripped.pt2", "gather_static.cpu.stripped.pt2"]


def run(*args):
    return CliRunner().invoke(cli, list(args))


@pytest.mark.parametrize("name", PACKAGES)
def test_sarif_of_real_findings_is_valid(name):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(require(SARIF_SCHEMA).read_text())
    result = run("check", str(require(SHARED_PT2 / name)), "--format", "sarif", "--fail-on", "info")
    doc = json.loads(result.output)
    jsonschema.validate(doc, schema)
    (sarif_run,) = doc["runs"]
    rule_ids = [r["id"] for r in sarif_run["tool"]["driver"]["rules"]]
    assert len(rule_ids) == len(all_rules()) and rule_ids[0] == "AOTI001"
    for res in sarif_run["results"]:
        assert res["ruleId"] in rule_ids
        assert res["partialFingerprints"]


def test_sarif_fingerprints_survive_a_rebuild(tmp_path, monkeypatch):
    """The same model built twice has different hashed member names; fingerprints must not change.
    Both builds sit at the same path (the package path is part of the fingerprint)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    src = tmp_path / "a" / "gather_dyn.cuda.pt2"
    src.write_bytes(require(SHARED_PT2 / "gather_dyn.cuda.pt2").read_bytes())
    rebuilt = tmp_path / "b" / "gather_dyn.cuda.pt2"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(rebuilt, "w") as zout:
        for name in zin.namelist():
            zout.writestr(re.sub(r"/c[a-z0-9]{51}\.", "/cdifferenthash0000000000000000000000000000000000000.", name),
                          zin.read(name))

    def prints(path):
        monkeypatch.chdir(path.parent)
        doc = json.loads(run("check", path.name, "--format", "sarif").output)
        results = doc["runs"][0]["results"]
        uris = [l["physicalLocation"]["artifactLocation"]["uri"] for r in results for l in r["locations"]]
        assert uris and all(u == "gather_dyn.cuda.pt2" for u in uris)   # never a hashed member
        return sorted(json.dumps(r["partialFingerprints"]) for r in results)

    assert set(zipfile.ZipFile(src).namelist()).isdisjoint(
        n for n in zipfile.ZipFile(rebuilt).namelist() if "/data/aotinductor/" in n and "." in n.rsplit("/", 1)[-1][1:])
    assert prints(src) == prints(rebuilt)
    assert len(prints(src)) == 3   # AOTI001, AOTI002 (one for the model), AOTI019


def test_github_annotations():
    result = run("check", str(require(SHARED_PT2 / "gather_dyn.cuda.pt2")), "--format", "github")
    lines = result.output.splitlines()
    package = str(SHARED_PT2 / "gather_dyn.cuda.pt2").replace(":", "%3A").replace(",", "%2C")
    # Infos (x empty with idx not is an input eager rejects too) are notices.
    assert any(l.startswith(f"::notice file={package},title=AOTI001") for l in lines), lines
    assert not any("/data/aotinductor/" in l.split("::")[1] for l in lines)   # file= is never a member
    assert sum(l.startswith("::notice ") for l in lines) == 3


def test_markdown_comment_has_summary_and_chain():
    out = run("check", str(require(SHARED_PT2 / "gather_dyn.cuda.pt2")), "--format", "markdown").output
    assert "| error" in out.lower() or "error" in out
    assert "s77 = input 0 dim 0" in out
    assert "arg0_1.shape = (0, 8)" in out


@pytest.mark.parametrize("name,fail_on,code", [
    ("gather_dyn.cuda.pt2", "error", 0),      # its findings are infos (eager rejects the witness too)
    ("gather_dyn.cuda.pt2", "info", 1),
    ("empty_reduce.cpu.stripped.pt2", "error", 0),
    ("empty_reduce.cpu.stripped.pt2", "warning", 1),
    ("gather_static.cpu.stripped.pt2", "warning", 0),
    ("gather_static.cpu.stripped.pt2", "info", 1),   # unchecked-input-layout: info
])
def test_exit_codes_on_real_packages(name, fail_on, code):
    assert run("check", str(require(SHARED_PT2 / name)), "--fail-on", fail_on).exit_code == code


def test_shared_package_expectations():
    """The acceptance list of the check issue, on ../shared/pt2."""
    def rules(name):
        doc = json.loads(run("check", str(require(SHARED_PT2 / name)), "--format", "json").output)
        return doc["findings"]

    gather = [f for f in rules("gather_dyn.cuda.pt2") if f["rule"] == "empty-index-bound"]
    assert [(f["input"], f["dim"], f["severity"]) for f in gather] == [(0, 0, "info")]
    reduce_rules = {f["rule"] for f in rules("empty_reduce.cuda.stripped.pt2")}
    assert {"division-by-dynamic-size", "empty-reduction"} <= reduce_rules
    for name in ("gather_static.cuda.stripped.pt2", "gather_static.cpu.stripped.pt2",
                 "embedding.cuda.stripped.pt2", "embedding.cpu.stripped.pt2"):
        assert not [f for f in rules(name) if f["severity"] == "error"], name


def test_multiple_packages_and_output_file(tmp_path):
    out = tmp_path / "report.json"
    result = run("check", str(require(SHARED_PT2 / "gather_dyn.cuda.pt2")),
                 str(require(FIXTURES / "pos_embedding.cpu.stripped.pt2")), "--format", "json", "-o", str(out),
                 "--fail-on", "info")
    assert result.exit_code == 1
    findings = json.loads(out.read_text())["findings"]
    assert {f["rule"] for f in findings} >= {"empty-index-bound", "index-exceeds-constant-bound"}
