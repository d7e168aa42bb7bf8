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

from analyzer.app.cli import cli

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
CPU = FIXTURES / "gather_dyn.cpu.stripped.pt2"
EP = FIXTURES / "gather_dyn.ep.pt2"
LAYOUT = "AOTI019"  # unchecked-input-layout: info on every package with input checks; not what these test


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
    assert result.exit_code == 0   # infos: x empty with idx not is an input eager rejects too
    assert {f["code"] for f in json.loads(result.stdout)["findings"]} - {LAYOUT} == {"AOTI001", "AOTI002"}


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
    result = run("check", "models", "--format", "json", "--fail-on", "info")   # gather's findings are infos
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
    result = run("check", *paths, "--format", "json", "--fail-on", "info")
    assert result.exit_code == 1, result.stderr
    assert sorted(_packages(result)) == ["models/embed.pt2", "models/gather.pt2"]
    (note,) = result.stderr.splitlines()
    assert note.startswith("aoti-lint: note: models/eps/lonely.ep.pt2: an exported program (torch.export.save), "
                           "not a package: skipped (pass it with --exported-program")


def test_exported_program_alone_checks_its_package(models):
    # pre-commit passes only the staged files: a changed exported program re-checks its package.
    result = run("check", "models/gather.ep.pt2", "--format", "json", "--fail-on", "info")
    assert result.exit_code == 1 and sorted(_packages(result)) == ["models/gather.pt2"]


def test_no_pair(models):
    result = run("check", "models", "--no-pair", "--format", "json")
    found = _packages(result)
    assert not any("x.shape" in m for m in found["models/gather.pt2"])
    result = run("check", "models/gather.pt2", "models/gather.ep.pt2", "--no-pair", "--format", "json",
                 "--fail-on", "info")
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
    assert run("check", "models/gather.pt2", "--no-pair", "--fail-on", "info").exit_code == 1


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
    assert run("check", "models", "--baseline", "ci/baseline.json", "--fail-on", "info").exit_code == 1


def test_old_baselines_keyed_by_the_path_as_given_still_match(models):
    from analyzer.app import baseline

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


# -- ruff's conventions -------------------------------------------------------------------------------

def _codes(result) -> list[str]:
    return [f["code"] for f in json.loads(result.stdout)["findings"] if f["code"] != LAYOUT]


def test_quiet_prints_only_findings(models):
    loud = run("check", "models", "--format", "concise", "--fail-on", "info")
    quiet = run("check", "models", "--format", "concise", "-q", "--fail-on", "info")
    assert quiet.exit_code == loud.exit_code == 1
    assert loud.stdout.splitlines()[:-1] == quiet.stdout.splitlines()
    assert "Found" in loud.stdout and "Found" not in quiet.stdout
    text = run("check", "models/gather.pt2", "--quiet").stdout
    assert text.rstrip().endswith("expected") is False and "Found" not in text and not text.endswith("\n\n")
    clean = run("check", "models/gather.pt2", "--select", "AOTI006", "--quiet")
    assert clean.exit_code == 0 and clean.stdout == ""
    # notes (an exported program skipped, baseline counts) are not printed either; errors are
    assert run("check", "models/eps/lonely.ep.pt2", "models/gather.pt2", "-q").stderr == ""
    broken = models / "broken.pt2"
    broken.write_bytes(b"PK\x03\x04 no")
    assert "broken.pt2" in run("check", "models", "-q").stderr


def test_extend_select_and_extend_ignore(models, here):
    assert "AOTI002" not in _codes(run("check", "models/gather.pt2", "--extend-ignore", "AOTI002", "--format", "json"))
    (here / "pyproject.toml").write_text('[tool.aoti-lint]\nignore = ["unenforced-lower-bound"]\n')
    assert "AOTI002" not in _codes(run("check", "models/gather.pt2", "--format", "json"))
    # the command line takes back what the file ignores; --select would have replaced it all
    again = _codes(run("check", "models/gather.pt2", "--extend-select", "AOTI002", "--format", "json"))
    assert "AOTI002" in again and "AOTI001" in again
    only = _codes(run("check", "models/gather.pt2", "--select", "AOTI001", "--extend-select", "AOTI002",
                      "--format", "json"))
    assert set(only) == {"AOTI001", "AOTI002"}
    (here / "pyproject.toml").write_text('[tool.aoti-lint]\nextend-ignore = ["AOTI001"]\n')
    assert "AOTI001" not in _codes(run("check", "models/gather.pt2", "--format", "json"))
    bad = run("check", "models/gather.pt2", "--extend-select", "AOTI999")
    assert bad.exit_code == 2 and "AOTI999" in _error_line(bad)


def test_exclude_globs_apply_to_folder_walks(models, here):
    (models / "legacy").mkdir()
    shutil.copy(CPU, models / "legacy" / "old.pt2")
    def found(*args: str) -> list[str]:
        return sorted(_packages(run("check", *args, "--format", "json")))

    assert "models/legacy/old.pt2" in found("models")
    assert found("models", "--exclude", "legacy/*") == ["models/embed.pt2", "models/gather.pt2"]
    assert found("models", "--exclude", "embed.pt2,legacy") == ["models/gather.pt2"]
    (here / "pyproject.toml").write_text('[tool.aoti-lint]\nexclude = ["legacy/*", "embed*"]\n')
    assert found("models") == ["models/gather.pt2"]
    assert found("models", "--exclude", "gather*") == ["models/embed.pt2", "models/legacy/old.pt2"]
    # a package named on the command line is checked whatever the globs say
    assert found("models/embed.pt2") == ["models/embed.pt2"]


def test_show_settings(models, here):
    (here / "pyproject.toml").write_text('[tool.aoti-lint]\nfail-on = "warning"\nignore = ["AOTI007"]\n')
    result = run("check", "--show-settings", "--extend-ignore", "AOTI002", "--timeout", "30")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert f"# configuration file: {here / 'pyproject.toml'}" in lines
    row = {line.split("=")[0].strip(): line for line in lines if "=" in line and not line.startswith("#")}
    assert row["fail-on"].endswith(f'"warning"  # {here / "pyproject.toml"}')
    assert row["ignore"].endswith(f'["AOTI007"]  # {here / "pyproject.toml"}')
    assert row["extend-ignore"].endswith('["AOTI002"]  # command line')
    assert row["timeout"].endswith("30.0  # command line")
    assert row["target-device"].endswith("(unset)  # default")
    assert lines[-1] == '# rules run: select ["ALL"], ignore ["AOTI007", "AOTI002"]'
    # shorthand without `check`, and nothing is read
    assert run("--show-settings").exit_code == 0
    assert run("check").exit_code == 2


def test_configuration_per_package_directory(models, here):
    """CLI > the package's nearest pyproject.toml > the working directory's, key by key."""
    (here / "pyproject.toml").write_text('[tool.aoti-lint]\nfail-on = "info"\nignore = ["AOTI001"]\n')
    team = models / "team"
    team.mkdir()
    shutil.copy(CPU, team / "t.pt2")
    (team / "pyproject.toml").write_text('[tool.aoti-lint]\nignore = ["AOTI002"]\n')
    (models / "pyproject.toml").write_text("[project]\nname = 'not ours'\n")  # no table: skipped
    result = run("check", "models/gather.pt2", "models/team/t.pt2", "--format", "json")
    by = {}
    for f in json.loads(result.stdout)["findings"]:
        if f["code"] != LAYOUT:
            by.setdefault(f["package"], set()).add(f["code"])
    assert by == {"models/gather.pt2": {"AOTI002"}, "models/team/t.pt2": {"AOTI001"}}
    assert list(by) == ["models/gather.pt2", "models/team/t.pt2"]  # the order given
    assert result.exit_code == 1  # fail-on info (the working directory's) for both
    # a folder walk finds each package's own configuration
    walked = run("check", "models", "--format", "json")
    codes = {(f["package"], f["code"]) for f in json.loads(walked.stdout)["findings"]}
    assert ("models/team/t.pt2", "AOTI001") in codes and ("models/team/t.pt2", "AOTI002") not in codes
    assert ("models/gather.pt2", "AOTI001") not in codes
    # the command line wins over both (--select is a fresh selection; --ignore alone adds)
    cli = run("check", "models/team/t.pt2", "--select", "ALL", "--ignore", "AOTI001", "--format", "json")
    assert set(_codes(cli)) == {"AOTI002"}
    assert _codes(run("check", "models/team/t.pt2", "--ignore", "AOTI001", "--format", "json")) == []
    # single-package commands read it too
    contract = run("contract", "models/team/t.pt2", "--format", "json")
    assert contract.exit_code == 0
    # a package's own fail-on decides for its findings
    (team / "pyproject.toml").write_text('[tool.aoti-lint]\nignore = ["AOTI001"]\nfail-on = "error"\n')
    assert run("check", "models/team/t.pt2").exit_code == 0
    shown = run("check", "--show-settings", "models/team/t.pt2").stdout
    assert "# settings for models/team/t.pt2" in shown and f'"error"  # {team / "pyproject.toml"}' in shown


def test_progress_bar_is_clicks_and_only_on_a_terminal(monkeypatch):
    import io
    import sys

    from analyzer.app import many

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    with many.progress_bar() as bar:
        bar._start -= 10  # past PROGRESS_AFTER_S
        for done in range(1, 4):
            bar(done, 3)
    assert "packages" in err.getvalue() and "3/3" in err.getvalue()
    plain = io.StringIO()
    monkeypatch.setattr(sys, "stderr", plain)
    with many.progress_bar() as bar:
        assert bar is None
    quick = Terminal()
    monkeypatch.setattr(sys, "stderr", quick)
    with many.progress_bar() as bar:
        bar(1, 3)
    assert quick.getvalue() == ""


@pytest.mark.parametrize("module", ["tree_sitter", "tree_sitter_cpp"])
def test_a_missing_parser_dependency_is_one_line_and_exit_2(module):
    # None in sys.modules makes the import fail as an uninstalled distribution does
    code = (f"import sys; sys.modules[{module!r}] = None; "
            "sys.argv = ['aoti-lint', 'check', sys.argv[1]]; "
            "from analyzer.app.cli import main; main()")
    import subprocess
    import sys

    package = str(Path(__file__).parent.parent / "fixtures" / "embedding.cpu.stripped.pt2")
    proc = subprocess.run([sys.executable, "-c", code, package], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"aoti-lint: error: cannot import {module}: reinstall aoti-lint or "
        f"`pip install {module.replace('_', '-')}`"]
