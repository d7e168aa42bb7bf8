"""--format rdjson (reviewdog), gitlab (Code Quality) and junit on real packages."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from click.testing import CliRunner

from analyzer.app.cli import cli
from analyzer.core.findings import Finding, Location, Severity
from analyzer.report import junit

from conftest import FIXTURES, REPO

DYN = str(FIXTURES / "gather_dyn.cuda.stripped.pt2")      # 1 error, 2 warnings
CLEAN = str(FIXTURES / "gather_static.cpu.stripped.pt2")  # none


def run(*args: str):
    # Without unchecked-input-layout (info on every package): CLEAN stays clean.
    return CliRunner().invoke(cli, ["--ignore", "AOTI019", *args], prog_name="aoti-lint")


def test_rdjson() -> None:
    # gather_dyn's findings are infos (x empty with idx not is an input eager rejects too): exit 0.
    result = run("--format", "rdjson", DYN, CLEAN)
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["source"]["name"] == "aoti-lint"
    diags = doc["diagnostics"]
    assert [d["severity"] for d in diags] == ["INFO", "INFO"]
    for d in diags:
        # The path is the package file (a file of the repository); the member leads the message.
        assert d["location"] == {"path": DYN}
        assert d["message"].startswith("gather_dyn.cuda/data/aotinductor/model/")
        code, rule = d["code"]["value"].split()
        assert (REPO / "docs" / "rules" / f"{code}-{rule}.md").is_file()
        assert d["code"]["url"].endswith(f"/docs/rules/{code}-{rule}.md")
    assert "witness: arg0_1.shape = (0, 8), arg1_1.shape = (3,)" in diags[0]["message"]


def test_gitlab_code_quality() -> None:
    # The same package named twice is checked once; fingerprints are unique.
    result = run("--format", "gitlab", DYN, DYN)
    issues = json.loads(result.stdout)
    assert len(issues) == 2
    assert len({i["fingerprint"] for i in issues}) == 2
    assert [i["severity"] for i in issues] == ["info", "info"]
    for issue in issues:
        assert set(issue) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["location"] == {"path": DYN, "lines": {"begin": 1}}
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}
    assert issues[0]["check_name"] == "empty-index-bound"
    # Stable across runs: GitLab compares fingerprints between the base and the merge request.
    assert json.loads(run("--format", "gitlab", DYN).stdout)[0]["fingerprint"] == issues[0]["fingerprint"]


def test_junit() -> None:
    result = run("--format", "junit", DYN, CLEAN)
    root = ET.fromstring(result.stdout)
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("skipped")) == ("3", "2", "0")
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {DYN, CLEAN}
    failing = suites[DYN].findall("testcase")
    assert [c.find("failure").get("type") for c in failing] == ["info", "info"]
    assert failing[0].get("name").startswith("AOTI001 empty-index-bound gather_dyn.cuda/")
    assert "s77 = input 0 dim 0" in failing[0].find("failure").text
    (clean_case,) = suites[CLEAN].findall("testcase")
    assert clean_case.find("failure") is None


def test_junit_survives_control_characters() -> None:
    odd = Finding(code="AOTI009", rule="unparsed-member", severity=Severity.WARNING, model="m",
                  message="member \x00\x1b[31m could not be read", location=Location("a\x01b.cpp", 1, 1),
                  package="p.pt2")
    text = junit.render([odd], packages=[])
    root = ET.fromstring(text)  # well-formed XML
    # Shown as visible escapes (untrusted.xml_text), not dropped: the reader sees what was there.
    assert root.find("testsuite/testcase/failure").get("message") == "member \\x00\\x1b[31m could not be read"


@pytest.mark.parametrize("fmt", ["rdjson", "gitlab", "junit"])
def test_formats_from_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text(f'[tool.aoti-lint]\nformat = "{fmt}"\n')
    out = run(DYN).stdout
    assert out.startswith("<?xml") if fmt == "junit" else json.loads(out)
