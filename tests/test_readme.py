"""The README as a stranger uses it: its first command block runs from a bare clone, and every
generated example block is the real output of the command it shows.

A generated block is a ```text block right after `<!-- generated: tests/test_readme.py -->` whose first
line is `$ aoti-lint ...`; the rest is that command's stdout, run in the repository root.
AOTI_LINT_UPDATE_GOLDEN=1 rewrites those blocks (review the README diff).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.app.cli import cli

from conftest import REPO, UPDATE_GOLDEN

README = REPO / "README.md"
MARKER = "<!-- generated: tests/test_readme.py -->"
GENERATED = re.compile(re.escape(MARKER) + r"\n```text\n\$ (?P<command>[^\n]+)\n(?P<output>.*?)```\n", re.S)
FIRST_SH_BLOCK = re.compile(r"```sh\n(?P<body>.*?)```\n", re.S)


def generated_blocks(text: str) -> list[re.Match[str]]:
    return list(GENERATED.finditer(text))


def first_command_block(text: str) -> list[str]:
    """The README's first ```sh block as command lines (comments and blank lines dropped)."""
    match = FIRST_SH_BLOCK.search(text)
    assert match, "README has no ```sh block"
    lines = [line.strip() for line in match["body"].splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def run_example(command: str) -> tuple[str, int]:
    argv = shlex.split(command)
    assert argv[0] == "aoti-lint", command
    result = CliRunner().invoke(cli, argv[1:], prog_name="aoti-lint")
    assert "Traceback" not in result.output
    return result.stdout, result.exit_code


def test_readme_examples_are_real_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.delenv("NO_COLOR", raising=False)
    text = README.read_text()
    blocks = generated_blocks(text)
    commands = [b["command"] for b in blocks]
    # The first example is the first command block's check, and it is one of the generated ones.
    assert first_command_block(text)[-1] in commands
    assert len(blocks) >= 2
    updated = text
    for block in reversed(blocks):
        output, _ = run_example(block["command"])
        if UPDATE_GOLDEN:
            start, end = block.span("output")
            updated = updated[:start] + output + updated[end:]
        else:
            assert block["output"] == output, (
                f"README block for `{block['command']}` differs from the command's output "
                "(AOTI_LINT_UPDATE_GOLDEN=1 rewrites it)")
    if UPDATE_GOLDEN and updated != text:
        README.write_text(updated)


def test_readme_states_the_first_commands_exit_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    text = README.read_text()
    check = first_command_block(text)[-1]
    _, code = run_example(check)
    assert code == 1  # findings, by design: the README says so right beside it
    after = text[text.index(check):text.index(MARKER)]
    assert "exits 1" in after
    for code_word in ("**0**", "**1**", "**2**"):
        assert code_word in after


def _throwaway_venv(root: Path) -> Path:
    """A venv without pip of its own that sees the test environment's packages (pip, setuptools,
    click, tree-sitter) through a .pth line, so `pip install .` needs no network; its own
    site-packages comes first, so the clone's install is what runs."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = bin_dir / "pip"
    pip.write_text(f"#!{python}\nimport sys\nfrom pip._internal.cli.main import main\nsys.exit(main())\n")
    pip.chmod(0o755)
    return bin_dir


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_first_command_block_runs_from_a_bare_clone(tmp_path: Path) -> None:
    """Clone into a folder with nothing beside it and run the README's first block verbatim."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "bare" / "aoti-lint"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    assert os.listdir(clone.parent) == ["aoti-lint"]
    bin_dir = _throwaway_venv(tmp_path)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0", "PIP_QUIET": "1"}
    env.pop("NO_COLOR", None)
    env.pop("PYTHONPATH", None)
    readme = (clone / "README.md").read_text()
    lines = first_command_block(readme)
    results = [subprocess.run(line, shell=True, cwd=clone, env=env, capture_output=True, text=True, timeout=120)
               for line in lines]
    *setup, check = results
    for line, result in zip(lines, setup):
        assert result.returncode == 0, f"{line}: {result.stderr}"
    assert check.returncode == 1, check.stderr
    assert "Traceback" not in check.stderr
    shown = {b["command"]: b["output"] for b in generated_blocks(readme)}
    assert check.stdout == shown[lines[-1]]
    # The clone's own install ran, not the test environment's.
    where = subprocess.run(["python", "-c", "import analyzer; print(analyzer.__file__)"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, check=True).stdout
    assert str(tmp_path / "venv") in where


DEV_SECTION = "## Development set-up and tests"
NO_NETWORK = ("Failed to establish a new connection", "Name or service not known", "Temporary failure in name",
              "Network is unreachable", "No matching distribution found for torch")


def development_commands(text: str) -> list[str]:
    """The development section's first ```sh block as command lines: the set-up, then the test command."""
    section = text[text.index(DEV_SECTION):]
    match = FIRST_SH_BLOCK.search(section)
    assert match, f"README's {DEV_SECTION!r} has no ```sh block"
    lines = [line.strip() for line in match["body"].splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


@pytest.mark.torch
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.skipif(not (os.environ.get("CI") or os.environ.get("AOTI_LINT_SETUP_TEST")),
                    reason="installs torch into a fresh virtualenv (minutes): runs in CI, or with AOTI_LINT_SETUP_TEST=1")
def test_development_setup_runs_from_a_bare_clone(tmp_path: Path) -> None:
    """A contributor's first minutes: clone with nothing beside it, a fresh virtualenv, the README's
    set-up lines verbatim, then its test command verbatim (on one test file: the whole suite is what
    `.ci/run` runs)."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "bare" / "aoti-lint"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PIP_NO_INDEX")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    *setup, test_command = development_commands((clone / "README.md").read_text())
    assert setup and test_command.startswith("python -m pytest")
    for line in setup:
        result = subprocess.run(line, shell=True, cwd=clone, env=env, capture_output=True, text=True, timeout=900)
        if result.returncode != 0 and any(word in result.stdout + result.stderr for word in NO_NETWORK):
            pytest.skip(f"`{line}` needs a package index this machine cannot reach")
        assert result.returncode == 0, f"{line}: {result.stdout}{result.stderr}"
    result = subprocess.run(f"{test_command} -p no:cacheprovider tests/test_readme.py -k exit_code", shell=True,
                            cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"\b1 passed\b", result.stdout), result.stdout
