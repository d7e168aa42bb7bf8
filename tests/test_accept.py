"""[tool.aoti-lint] per-package-ignores and [[tool.aoti-lint.accept]] on real packages: accepted
findings stay visible in every format, marked with their reason, and do not fail the gate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.app.cli import cli

from conftest import FIXTURES, SHARED

CONFIG = """
[tool.aoti-lint.per-package-ignores]
"legacy_*.pt2" = ["AOTI005", "unenforced-lower-bound"]

[[tool.aoti-lint.accept]]
package = "ranker*.pt2"
rule = "empty-index-bound"
input = 0
dim = 1
reason = "the server rejects empty batches before the model"
"""


def run(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="aoti-lint")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    # CLIP's text encoder: an empty sequence aborts the index (1 error), a long one reads past a
    # constant (1 warning), 3 infos.
    shutil.copy(FIXTURES / "stranger3" / "clip_text.cpu.stripped.pt2", tmp_path / "ranker.pt2")
    shutil.copy(FIXTURES / "empty_reduce.cpu.stripped.pt2", tmp_path / "legacy_a.pt2")  # AOTI002, 004, 005
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    return tmp_path


def _findings(*args: str) -> tuple[list[dict], int]:
    result = run("--format", "json", *args)
    return json.loads(result.stdout)["findings"], result.exit_code


def test_accepted_finding_is_shown_and_does_not_fail(project: Path) -> None:
    findings, code = _findings("ranker.pt2")
    accepted = [f for f in findings if "accepted" in f]
    assert [(f["code"], f["input"], f["dim"]) for f in accepted] == [("AOTI001", 0, 1)]
    assert accepted[0]["accepted"] == "the server rejects empty batches before the model"
    assert len(findings) == 5  # nothing dropped (AOTI001, AOTI002, AOTI010, AOTI013, AOTI019)
    assert code == 0  # the only error is accepted
    assert run("--fail-on", "warning", "ranker.pt2").exit_code == 1  # the warning still counts


def test_without_the_entry_the_error_fails(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.aoti-lint]\n")
    assert run("ranker.pt2").exit_code == 1


@pytest.mark.parametrize("fmt,needle", [
    ("text", "error (accepted)"),
    ("concise", "error (accepted)"),
    ("markdown", "**Accepted:** the server rejects empty batches"),
    ("github", "::notice file="),
])
def test_every_format_marks_it(project: Path, fmt: str, needle: str) -> None:
    out = run("--format", fmt, "ranker.pt2").stdout
    assert needle in out
    if fmt in ("text", "concise"):
        assert out.rstrip().endswith("in 1 package (1 accepted; runtime checks: unset).")
    if fmt == "github":
        assert "title=AOTI001 empty-index-bound (accepted)" in out and "::error " not in out


def test_sarif_suppression(project: Path) -> None:
    doc = json.loads(run("--format", "sarif", "ranker.pt2").stdout)
    results = doc["runs"][0]["results"]
    suppressed = [r for r in results if r.get("suppressions")]
    assert [r["ruleId"] for r in suppressed] == ["AOTI001"]
    assert suppressed[0]["suppressions"] == [{"kind": "external", "status": "accepted",
                                              "justification": "the server rejects empty batches before the model"}]
    schema = SHARED / "schemas" / "sarif-schema-2.1.0.json"
    if schema.is_file():
        import jsonschema

        jsonschema.validate(doc, json.loads(schema.read_text()))


def test_per_package_ignores(project: Path) -> None:
    findings, _ = _findings("--fail-on", "info", "legacy_a.pt2", "ranker.pt2")
    legacy = sorted(f["code"] for f in findings if f["package"] == "legacy_a.pt2")
    # AOTI002 and AOTI005 are off for legacy_*.pt2 (AOTI010: an info, n compiled <= 4096, none declared)
    assert legacy == ["AOTI004", "AOTI010", "AOTI019"]
    ranker = sorted(f["code"] for f in findings if f["package"] == "ranker.pt2")
    assert ranker == ["AOTI001", "AOTI002", "AOTI010", "AOTI013", "AOTI019"]  # other packages keep every rule


def test_unused_accept_entry_is_reported(project: Path) -> None:
    (project / "pyproject.toml").write_text(CONFIG.replace("input = 0", "input = 1"))
    result = run("ranker.pt2")
    assert result.exit_code == 1
    assert "accept entry matches no finding (remove it): package 'ranker*.pt2', rule empty-index-bound, input 1" \
        in result.stderr
    # Not reported when no checked package matches its glob.
    assert "accept entry" not in run("legacy_a.pt2").stderr


def test_accepted_findings_are_not_baselined(project: Path) -> None:
    assert run("--write-baseline", "base.json", "ranker.pt2").exit_code == 0
    entries = json.loads((project / "base.json").read_text())["entries"]
    assert sorted(e["rule"] for e in entries) == ["compiled-range-narrower-than-declared", "read-past-constant",
                                                       "unchecked-input-layout", "unenforced-lower-bound"]
    findings, code = _findings("--baseline", "base.json", "--fail-on", "info", "ranker.pt2")
    assert [f["code"] for f in findings] == ["AOTI001"] and findings[0]["accepted"] and code == 0


@pytest.mark.parametrize("config,needle", [
    ('[[tool.aoti-lint.accept]]\npackage = "*"\nrule = "empty-index-bound"\n', "'reason' is required"),
    ('[[tool.aoti-lint.accept]]\npackage = "*"\nrule = "nope"\nreason = "r"\n', "unknown rule 'nope'"),
    ('[[tool.aoti-lint.accept]]\npackage = "*"\nrule = "AOTI001"\nreason = "r"\ndim = -1\n', "'dim' must be a position"),
    ('[[tool.aoti-lint.accept]]\npackage = "*"\nrule = "AOTI001"\nreason = "r"\nline = 3\n', "unknown key 'line'"),
    ('[tool.aoti-lint.per-package-ignores]\n"*" = ["AOTI999"]\n', "per-package-ignores '*'"),
    # Hostile accept entries: one line naming the file, never a traceback or an internal error.
    ('[[tool.aoti-lint.accept]]\npackage = "*"\nrule = "AOTI001"\nreason = ' + "[" * 50_000 + "]" * 50_000 + "\n",
     "nested too deeply"),
    ('[[tool.aoti-lint.accept]]\npackage = "*"\nrule = "AOTI001"\nreason = 7\n', "'reason' is required"),
    ('[[tool.aoti-lint.accept]]\npackage = ["*"]\nrule = "AOTI001"\nreason = "r"\n', "'package' is required"),
    ('[[tool.aoti-lint.accept]]\npackage = "*"\nrule = {a = 1}\nreason = "r"\n', "'rule' is required"),
    ('[[tool.aoti-lint.accept]]\npackage = "*"\nrule = "AOTI001"\nreason = "r"\ninput = true\n',
     "'input' must be a position"),
    ('[[tool.aoti-lint.accept]]\npackage = "*"\nrule = "AOTI001"\nreason = "r"\ninput = ' + "9" * 5000 + "\n",
     "invalid TOML"),
    ('[[tool.aoti-lint.accept]]\npackage = "*"\nrule = "AOTI001"\nreason = "r"\nmodel = 3\n', "'model' must be a string"),
    ('[tool.aoti-lint]\naccept = "everything"\n', "accept must be an array of tables"),
    ('[tool.aoti-lint]\naccept = [1]\n', "accept #1 must be a table"),
    ('[tool.aoti-lint.per-package-ignores]\n"*" = [1]\n', "per-package-ignores '*' must be a list"),
])
def test_bad_entries_are_one_line_exit_2(project: Path, config: str, needle: str) -> None:
    (project / "pyproject.toml").write_text(config)
    result = run("ranker.pt2")
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("aoti-lint: error: ") and needle in lines[0], lines
    assert "pyproject.toml" in lines[0] and len(lines[0]) < 400


def test_hostile_config_files_are_one_line_exit_2(project: Path) -> None:
    """Not UTF-8, or larger than a configuration file can be: refused naming the file."""
    from analyzer.app import config

    (project / "pyproject.toml").write_bytes(b'[tool.aoti-lint]\nselect = ["\xff"]\n')
    result = run("ranker.pt2")
    assert result.exit_code == 2 and "pyproject.toml: not UTF-8" in result.stderr
    (project / "pyproject.toml").write_text("[tool.aoti-lint]\n" + "#" * (config.MAX_CONFIG_BYTES + 1) + "\n")
    result = run("ranker.pt2")
    assert result.exit_code == 2 and "pyproject.toml: larger than" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
