"""The first word: a command, a package path, or a typo answered like an unknown command; and the
help texts that say what the exit codes mean."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.app.cli import cli

from conftest import FIXTURES

PKG = FIXTURES / "gather_static.cpu.stripped.pt2"  # clean when the deployment sets AOTI_RUNTIME_CHECK_INPUTS


def run(*args: str):
    return CliRunner().invoke(cli, list(args), prog_name="aoti-lint")


@pytest.fixture(autouse=True)
def _empty_cwd(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize(("word", "suggestion"), [("insepct", "inspect"), ("chek", "check"), ("rule", "rules"),
                                                  ("expalin", "explain")])
def test_typo_of_a_command_is_an_unknown_command_with_did_you_mean(word: str, suggestion: str) -> None:
    result = run(word, "pkg")
    assert result.exit_code == 2
    assert f"No such command '{word}'" in result.stderr
    assert f"Did you mean '{suggestion}'" in result.stderr
    assert "no such file" not in result.output.lower()


def test_unknown_bare_word_is_an_unknown_command() -> None:
    result = run("frobnicate")
    assert result.exit_code == 2 and "No such command 'frobnicate'" in result.stderr


def test_missing_path_is_a_missing_package() -> None:
    result = run("missing.pt2")
    assert result.exit_code == 2
    assert result.stderr.startswith("aoti-lint: error: missing.pt2") and "No such command" not in result.stderr


def test_existing_path_always_means_a_package(tmp_path: Path) -> None:
    # A package whose name is a typo of a command still is a package when it exists.
    (tmp_path / "insepct").write_bytes(PKG.read_bytes())
    result = run("insepct", "--runtime-checks", "on")
    assert result.exit_code == 0, result.output
    assert result.stdout == "All checks passed (runtime checks: on).\n"


def test_commands_still_win_and_options_go_to_check() -> None:
    assert run("rules").exit_code == 0
    result = run("--fail-on", "info", "--runtime-checks", "on", str(PKG))
    assert result.exit_code == 0 and result.stdout == "All checks passed (runtime checks: on).\n"


def test_help_states_the_exit_codes() -> None:
    for args in (["--help"], ["check", "--help"]):
        text = " ".join(run(*args).stdout.split())
        for needle in ("0", "1", "2", "--fail-on", "unreadable" if args[0] == "check" else "could not be read"):
            assert needle in text
    group = " ".join(run("--help").stdout.split())
    assert "Exit codes: 0 no finding at or above --fail-on" in group
    assert "1 findings at or above --fail-on" in group
    assert "2 usage error" in group


def test_exit_zero_help_does_not_mention_error_findings() -> None:
    text = " ".join(run("check", "--help").stdout.split())
    start = text.index("--exit-zero")
    help_text = text[start:text.index("--target-device")]
    assert "errors still exit 2" not in help_text
    assert "usage errors and unreadable packages still exit 2" in help_text


@pytest.mark.parametrize("prefix", [["check"], []], ids=["check", "bare"])
def test_paths_after_double_dash_are_packages(tmp_path: Path, prefix: list[str]) -> None:
    """`--` ends the options (the Action passes its files so): `--write-baseline=x.pt2` and `-o`
    are packages there, and nothing is written."""
    (tmp_path / "x.pt2").write_bytes(PKG.read_bytes())
    (tmp_path / "--write-baseline=x.pt2").write_bytes(PKG.read_bytes())
    (tmp_path / "-o").write_bytes(PKG.read_bytes())
    result = run(*prefix, "--format", "json", "--ignore", "AOTI019", "--", "--write-baseline=x.pt2", "-o")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["--write-baseline=x.pt2", "-o", "x.pt2"]
    assert (tmp_path / "x.pt2").read_bytes() == PKG.read_bytes()
    assert '"findings": []' in result.stdout
