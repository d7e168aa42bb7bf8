"""`check --also-output FORMAT=FILE`: several formats from one analysis (the Action's one run), and
`--runtime-checks` on the commands that read a package's contract (contract, why, diff)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from analyzer.app.cli import cli

from conftest import FIXTURES

DYN = str(FIXTURES / "gather_dyn.cuda.stripped.pt2")
GPT2 = str(FIXTURES / "real" / "gpt2.cpu.stripped.pt2")


def run(*args: str):
    return CliRunner().invoke(cli, list(args), prog_name="aoti-lint")


def test_also_output_writes_each_format_as_check_would(tmp_path: Path) -> None:
    sarif, md = tmp_path / "out.sarif", tmp_path / "out.md"
    both = run("check", DYN, "--format", "json", "--also-output", f"sarif={sarif}", "--also-output", f"markdown={md}",
               "--runtime-checks", "off", "--fail-on", "warning")
    assert both.exit_code == 1, both.output
    for fmt, path in (("sarif", sarif), ("markdown", md)):
        alone = run("check", DYN, "--format", fmt, "--runtime-checks", "off")
        assert path.read_text() == alone.stdout
    assert both.stdout == run("check", DYN, "--format", "json", "--runtime-checks", "off").stdout


def test_also_output_usage_errors_name_the_option() -> None:
    for value in ("sarif", "nope=x.txt", "json="):
        result = run("check", DYN, "--also-output", value)
        assert result.exit_code == 2 and "--also-output" in result.output and "Traceback" not in result.output


def test_runtime_checks_reach_contract_why_and_diff() -> None:
    default = run("contract", GPT2, "--format", "json")
    on = run("contract", GPT2, "--format", "json", "--runtime-checks", "on")
    assert default.exit_code == on.exit_code == 0
    # With the checks on in production, what AOTI_RUNTIME_CHECK_INPUTS enables is enforced: the
    # calls that fail unchecked are fewer.
    assert json.loads(on.stdout) != json.loads(default.stdout)
    log = str(FIXTURES / "logs" / "embedding.cpu.oob.log")
    why = run("why", str(FIXTURES / "embedding.cpu.stripped.pt2"), "--log", log, "--runtime-checks", "on")
    assert why.exit_code == 0, why.output
    pair = [str(FIXTURES / "diff" / "gather_f32.cpu.stripped.pt2"), str(FIXTURES / "diff" / "gather_f64.cpu.stripped.pt2")]
    diff = run("diff", *pair, "--runtime-checks", "off")
    assert diff.exit_code == 1 and "dtype-changed" in diff.stdout
    bad = run("contract", GPT2, "--runtime-checks", "maybe")
    assert bad.exit_code == 2 and "--runtime-checks" in bad.output
