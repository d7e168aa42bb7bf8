"""Command-line conventions on real packages: usage errors naming the option, exported programs
paired by name, folders and globs, ruff-style options and configuration (CliRunner, as
tests/test_cli.py, but with the real analyzer on the committed fixtures)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.cli import cli

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
CPU = FIXTURES / "gather_dyn.cpu.stripped.pt2"
EP = FIXTURES / "gather_dyn.ep.pt2"


def run(*args: str, cwd: Path | None = None):
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, [str(a) for a in args], prog_name="aoti-lint")
    finally:
        os.chdir(old)


def _error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("aoti-lint: error: ") and "Traceback" not in result.output
    assert "internal error" not in lines[0]
    return lines[0]


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no pyproject.toml from the repository leaks in
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path


# -- usage errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("command", ["check", "inspect", "contract"])
def test_one_input_name_too_many_is_a_usage_error(here, command):
    result = run(command, CPU, "--input-names", "x,idx,extra")
    assert result.exit_code == 2
    line = _error_line(result)
    assert "--input-names" in line and "3 names given but model 'model' has 2 inputs" in line


@pytest.mark.parametrize("command", ["check", "inspect", "contract"])
def test_exported_program_of_another_model_is_a_usage_error(here, command):
    result = run(command, CPU, "--exported-program", FIXTURES / "embedding.ep.pt2")
    assert result.exit_code == 2
    line = _error_line(result)
    assert "--exported-program" in line and "embedding.ep.pt2 does not match" in line
    assert "1 user inputs (idx) but the package has 2" in line and "truncated" not in line
    assert result.stdout == ""


def test_matching_exported_program_still_works(here):
    result = run("check", CPU, "--exported-program", EP, "--format", "json")
    assert result.exit_code == 1
    assert {f["code"] for f in json.loads(result.stdout)["findings"]} == {"AOTI001", "AOTI002"}
