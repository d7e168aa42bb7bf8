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


# -- exported programs paired by name, folders, globs -----------------------------------------------

@pytest.fixture
def models(here):
    """models/ with gather.pt2 + gather.ep.pt2 (a pair), embed.pt2 alone, and eps/ holding only an
    exported program."""
    root = here / "models"
    (root / "eps").mkdir(parents=True)
    shutil.copy(CPU, root / "gather.pt2")
    shutil.copy(EP, root / "gather.ep.pt2")
    shutil.copy(FIXTURES / "embedding.cpu.stripped.pt2", root / "embed.pt2")
    shutil.copy(FIXTURES / "embedding.ep.pt2", root / "eps" / "lonely.ep.pt2")
    return root


def _packages(result) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for f in json.loads(result.stdout)["findings"]:
        out.setdefault(f["package"], set()).add(f["message"])
    return out


def test_folder_walk_pairs_the_exported_program(models):
    result = run("check", "models", "--format", "json")
    assert result.exit_code == 1 and result.stderr == ""
    found = _packages(result)
    assert sorted(found) == ["models/embed.pt2", "models/gather.pt2"]
    assert any("`x.shape[0]`" in m for m in found["models/gather.pt2"])  # the user's names: paired
    assert not any("x.shape" in m for m in found["models/embed.pt2"])
    alone = _packages(run("check", "models/gather.pt2", "--exported-program", "models/gather.ep.pt2",
                          "--format", "json"))
    assert alone["models/gather.pt2"] == found["models/gather.pt2"]


def test_glob_with_exported_programs(models):
    # What a shell makes of `models/*.pt2` (and the Action of `models/**/*.pt2`): packages and their
    # exported programs; each package once, with its pair; the exported program is no error.
    paths = sorted(str(p.relative_to(models.parent)) for p in models.rglob("*.pt2"))
    assert "models/gather.ep.pt2" in paths
    result = run("check", *paths, "--format", "json")
    assert result.exit_code == 1, result.stderr
    assert sorted(_packages(result)) == ["models/embed.pt2", "models/gather.pt2"]
    (note,) = result.stderr.splitlines()
    assert note.startswith("aoti-lint: note: models/eps/lonely.ep.pt2: an exported program (torch.export.save), "
                           "not a package: skipped (pass it with --exported-program")


def test_exported_program_alone_checks_its_package(models):
    # pre-commit passes only the staged files: a changed exported program re-checks its package.
    result = run("check", "models/gather.ep.pt2", "--format", "json")
    assert result.exit_code == 1 and sorted(_packages(result)) == ["models/gather.pt2"]


def test_no_pair(models):
    result = run("check", "models", "--no-pair", "--format", "json")
    found = _packages(result)
    assert not any("x.shape" in m for m in found["models/gather.pt2"])
    result = run("check", "models/gather.pt2", "models/gather.ep.pt2", "--no-pair", "--format", "json")
    assert result.exit_code == 1 and sorted(_packages(result)) == ["models/gather.pt2"]
    assert "models/gather.ep.pt2: an exported program" in result.stderr and "--exported-program" in result.stderr
    # --exported-program wins over the pair
    inspect = run("inspect", "models/gather.pt2", "--format", "json")
    assert json.loads(inspect.stdout)["models"][0]["inputs"][0]["user_name"] == "x"
    unpaired = run("inspect", "models/gather.pt2", "--no-pair", "--format", "json")
    assert json.loads(unpaired.stdout)["models"][0]["inputs"][0].get("user_name") is None


def test_mismatched_pair_is_a_usage_error(models):
    shutil.copy(FIXTURES / "embedding.ep.pt2", models / "gather.ep.pt2")
    result = run("check", "models/gather.pt2")
    assert result.exit_code == 2
    line = _error_line(result)
    assert "the exported program models/gather.ep.pt2 beside the package (--no-pair: not used)" in line
    assert run("check", "models/gather.pt2", "--no-pair").exit_code == 1


@pytest.mark.parametrize("args", [["models/eps"], ["models/eps/lonely.ep.pt2"], ["empty"]])
def test_no_package_found_is_exit_2(models, args):
    (models.parent / "empty").mkdir()
    result = run("check", *args)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines()[-1].startswith("aoti-lint: error: ")
    assert "All checks passed" not in result.output


# -- baselines from another directory ---------------------------------------------------------------

def test_baseline_keys_are_relative_to_the_baseline_file(models):
    root = models.parent
    (root / "ci").mkdir()
    wrote = run("check", "models", "--write-baseline", "ci/baseline.json")
    assert wrote.exit_code == 0, wrote.output
    keys = {e["package"] for e in json.loads((root / "ci/baseline.json").read_text())["entries"]}
    assert keys == {"../models/gather.pt2", "../models/embed.pt2"}
    # from the repository root, from ci/ and from models/: nothing new
    for cwd, pkgs, base in ((root, "models", "ci/baseline.json"), (root / "ci", "../models", "baseline.json"),
                            (models, ".", "../ci/baseline.json")):
        result = run("check", pkgs, "--baseline", base, "--fail-on", "info", cwd=cwd)
        assert result.exit_code == 0, (cwd, result.output)
        assert "0 new, 0 stale" in result.stderr
    # a finding that is new is still new
    (root / "ci/baseline.json").write_text(json.dumps({"schema": "aoti-lint.baseline/1", "entries": []}))
    assert run("check", "models", "--baseline", "ci/baseline.json").exit_code == 1


def test_old_baselines_keyed_by_the_path_as_given_still_match(models):
    from analyzer import baseline

    # An old baseline: keys and fingerprints from the path as given, not relative to the file.
    (models.parent / "ci").mkdir()
    old = run("check", "models/gather.pt2", "--write-baseline", "old.json")
    assert old.exit_code == 0
    doc = json.loads(Path("old.json").read_text())
    assert {e["package"] for e in doc["entries"]} == {"models/gather.pt2"}  # same folder: same keys
    Path("ci/old.json").write_text(Path("old.json").read_text())  # as an old version wrote it from here
    result = run("check", "models/gather.pt2", "--baseline", "ci/old.json", "--fail-on", "info")
    assert result.exit_code == 0, result.output
    assert baseline.package_key("models/gather.pt2") == "models/gather.pt2"
