"""Many packages in one run: folders searched, unreadable packages reported and skipped, duplicates
checked once, `-j` workers, `--statistics`, and `aoti-lint merge` of shard reports.

Every test runs real fixture packages; results must not depend on `-j` (checked on every package).
"""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.app import api
from analyzer.app.cli import cli
from conftest import FIXTURES, every_package, require

GATHER = FIXTURES / "gather_dyn.cuda.stripped.pt2"
EMBED = FIXTURES / "embedding.cpu.stripped.pt2"
REDUCE = FIXTURES / "empty_reduce.cuda.stripped.pt2"
EP = FIXTURES / "gather_dyn.ep.pt2"


def run(*args: str):
    return CliRunner().invoke(cli, list(args), prog_name="aoti-lint")


def _findings(result) -> list[dict]:
    return json.loads(result.stdout)["findings"]


def _single(path: Path, *args: str) -> list[dict]:
    result = run("check", "--format", "json", "--select", "ALL", *args, str(path))
    assert result.exit_code in (0, 1), result.output
    return _findings(result)


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """reg/ with two zips (one nested), an extracted package, an exported program, a broken zip,
    a link to a package (never followed) and a text file; cwd is tmp_path."""
    for path in (GATHER, EMBED, REDUCE, EP):
        require(path)
    reg = tmp_path / "reg"
    (reg / "team_a").mkdir(parents=True)
    shutil.copy(GATHER, reg / "b_gather.pt2")
    shutil.copy(EMBED, reg / "team_a" / "embed.pt2")
    shutil.copy(EP, reg / "team_a" / "gather.ep.pt2")  # no gather.pt2 beside it: not a pair
    with zipfile.ZipFile(REDUCE) as z:
        z.extractall(reg / "a_reduce_extracted")
    (reg / "c_broken.pt2").write_bytes(b"PK\x03\x04 not really a zip")
    (reg / "notes.txt").write_text("not a package")
    os.symlink(GATHER, reg / "d_link.pt2")
    monkeypatch.chdir(tmp_path)
    return reg


def test_folder_is_searched_in_order_and_keeps_going(registry: Path) -> None:
    result = run("check", "--format", "json", "--select", "ALL", "reg")
    assert result.exit_code == 2, result.output
    doc = json.loads(result.stdout)
    packages = list(dict.fromkeys(f["package"] for f in doc["findings"]))
    # Sorted walk; the broken zip is an error, the exported program and the link are skipped.
    assert packages == ["reg/a_reduce_extracted", "reg/b_gather.pt2", "reg/team_a/embed.pt2"]
    assert [e["package"] for e in doc["errors"]] == ["reg/c_broken.pt2"]
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("aoti-lint: error: reg/c_broken.pt2: ")
    # The same findings as each package checked alone.
    for package in packages:
        alone = _single(Path(package))
        assert [f for f in doc["findings"] if f["package"] == package] == alone


def test_unreadable_packages_between_good_ones(registry: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    result = run("check", "--format", "json", "-o", str(out), "reg/b_gather.pt2", "missing.pt2",
                 "reg/c_broken.pt2", "reg/team_a/embed.pt2")
    assert result.exit_code == 2
    doc = json.loads(out.read_text())  # -o is still written
    assert [e["package"] for e in doc["errors"]] == ["missing.pt2", "reg/c_broken.pt2"]
    assert "no such file" in doc["errors"][0]["message"]
    assert {f["package"] for f in doc["findings"]} == {"reg/b_gather.pt2", "reg/team_a/embed.pt2"}
    errors = result.stderr.splitlines()
    assert [line.split(":")[2].strip() for line in errors] == ["missing.pt2", "reg/c_broken.pt2"]
    # An exported program named on the command line is skipped with a note, never read as a
    # package; with nothing else to check, that is exit 2 with one line.
    result = run("check", "reg/team_a/gather.ep.pt2")
    assert result.exit_code == 2 and "an exported program (torch.export.save), not a package" in result.stderr
    assert "no package found in reg/team_a/gather.ep.pt2" in result.stderr


def test_same_package_twice_is_checked_once(registry: Path) -> None:
    once = _single(Path("reg/b_gather.pt2"))
    result = run("check", "--format", "json", "--select", "ALL", "reg/b_gather.pt2", "./reg/b_gather.pt2",
                 "reg/../reg/b_gather.pt2", "reg")
    assert result.exit_code == 2  # reg/ holds the broken zip
    found = [f for f in _findings(result) if f["package"].endswith("b_gather.pt2")]
    assert found == once
    assert len(_findings(result)) < 3 * len(once) + 100


@pytest.mark.parametrize("fmt", ["sarif", "markdown", "text", "concise", "github"])
def test_each_format_reports_unreadable_packages(registry: Path, fmt: str) -> None:
    result = run("check", "--format", fmt, "reg/b_gather.pt2", "reg/c_broken.pt2")
    assert result.exit_code == 2
    out = result.stdout
    if fmt == "sarif":
        (run_,) = json.loads(out)["runs"]
        (invocation,) = run_["invocations"]
        assert invocation["executionSuccessful"] is False
        (note,) = invocation["toolExecutionNotifications"]
        assert note["level"] == "error"
        assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "reg/c_broken.pt2"
        assert run_["results"]
    elif fmt == "markdown":
        rows = [line for line in out.splitlines() if "unreadable-package" in line]
        assert len(rows) == 1 and "reg/c_broken.pt2" in rows[0]
    elif fmt == "github":
        assert out.splitlines()[-1].startswith("::error file=reg/c_broken.pt2,")
    else:
        assert out.splitlines()[-1].endswith("1 package could not be read.")


def test_jobs_and_fast_path_give_identical_results_on_every_package() -> None:
    """The slow baseline (one process, every kernel walked) against -j 2 with the fast path: the
    same findings (snippets too) and the same linked models, on every committed package."""
    packages = [str(p) for p in every_package()]
    assert len(packages) > 200
    slow = api.lint(packages, api.Options(select=("ALL",), fast_path=False), jobs=1, keep_going=True)
    fast = api.lint(packages, api.Options(select=("ALL",), fast_path=True), jobs=2, keep_going=True)
    assert not slow.errors and not fast.errors
    assert [p.path for p in fast.packages] == packages
    assert fast.findings == slow.findings
    assert [f.snippet for f in fast.findings] == [f.snippet for f in slow.findings]
    assert fast.packages == slow.packages


def test_jobs_option_on_the_command_line(registry: Path) -> None:
    args = ["check", "--format", "json", "--select", "ALL", "reg"]
    assert run(*args, "-j", "2").stdout == run(*args, "-j", "1").stdout
    assert run(*args, "-j", "0").exit_code == 2  # usage error


def test_statistics_count_per_rule(registry: Path) -> None:
    args = ["reg/b_gather.pt2", "reg/team_a/embed.pt2", "reg/a_reduce_extracted", "--select", "ALL"]
    expected = Counter(f["code"] for f in _findings(run("check", "--format", "json", *args)))
    result = run("check", "--statistics", "--fail-on", "info", *args)   # gather's findings are infos
    assert result.exit_code == 1
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert {code: int(n) for n, code, _, _ in rows} == expected
    assert [int(r[0]) for r in rows] == sorted((int(r[0]) for r in rows), reverse=True)
    as_json = json.loads(run("check", "--statistics", "--format", "json", *args).stdout)
    assert {r["code"]: r["count"] for r in as_json} == expected


def test_merge_of_shards_equals_one_run(registry: Path, tmp_path: Path) -> None:
    shards = [["reg/b_gather.pt2"], ["reg/c_broken.pt2", "reg/team_a/embed.pt2"]]
    outs = []
    for i, shard in enumerate(shards):
        out = tmp_path / f"shard{i}.json"
        run("check", "--format", "json", "-o", str(out), *shard)
        outs.append(str(out))
    whole = json.loads(run("check", "--format", "json", *shards[0], *shards[1]).stdout)
    merged = run("merge", *outs)
    assert merged.exit_code == 2  # a shard could not read a package
    assert json.loads(merged.stdout) == whole
    clean = run("merge", "--fail-on", "info", outs[0])
    assert clean.exit_code == 1 and json.loads(clean.stdout)["findings"]
    assert run("merge", "--exit-zero", outs[0]).exit_code == 0


def test_merge_sarif_is_multi_run(registry: Path, tmp_path: Path) -> None:
    outs = []
    for i, pkg in enumerate(["reg/b_gather.pt2", "reg/team_a/embed.pt2"]):
        out = tmp_path / f"s{i}.sarif"
        run("check", "--format", "sarif", "-o", str(out), pkg)
        outs.append(str(out))
    merged = run("merge", "--fail-on", "info", *outs)
    assert merged.exit_code == 1, merged.output
    doc = json.loads(merged.stdout)
    assert doc["version"] == "2.1.0" and len(doc["runs"]) == 2
    assert [r["results"] for r in doc["runs"]] == [json.loads(Path(o).read_text())["runs"][0]["results"] for o in outs]


def test_merge_refuses_what_it_cannot_merge(registry: Path, tmp_path: Path) -> None:
    j, s, bad = tmp_path / "a.json", tmp_path / "a.sarif", tmp_path / "bad.json"
    run("check", "--format", "json", "-o", str(j), "reg/b_gather.pt2")
    run("check", "--format", "sarif", "-o", str(s), "reg/b_gather.pt2")
    bad.write_text('{"schema": "something-else"}')
    for args, needle in (([j, s], "cannot be merged"), ([j, bad], "bad.json"), ([tmp_path / "none.json"], "none.json")):
        result = run("merge", *map(str, args))
        assert result.exit_code == 2, result.output
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("aoti-lint: error: ") and needle in lines[0]


def test_internal_error_in_a_worker_is_the_same_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug while checking one package ends the run with the same one-line InternalError, with
    or without workers (forked workers inherit the patched rule runner)."""
    from analyzer import rules

    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(rules, "run_rules", broken)
    paths = [str(require(GATHER)), str(require(EMBED))]
    messages = []
    for jobs in (1, 2):
        with pytest.raises(api.InternalError) as info:
            api.lint(paths, jobs=jobs, keep_going=True)
        messages.append(str(info.value))
        assert info.value.__cause__ is not None
    assert messages[0] == messages[1] == f"internal error in {paths[0]} (rules): ZeroDivisionError: boom"
