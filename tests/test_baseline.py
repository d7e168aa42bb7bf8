"""--write-baseline / --baseline on real packages: a rebuild keeps its baseline, new findings fail,
entries that match nothing are reported as stale, a broken baseline is one line and exit 2."""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.app.cli import cli

from conftest import FIXTURES, SHARED_PT2, require

DYN = FIXTURES / "gather_dyn.cuda.stripped.pt2"  # 1 error, 2 warnings


def run(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="aoti-lint")


@pytest.fixture
def pkg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    shutil.copy(DYN, tmp_path / "model.pt2")
    return Path("model.pt2")


def _codes(result) -> list[str]:
    return sorted(f["code"] for f in json.loads(result.stdout)["findings"])


def test_baseline_accepts_todays_findings(pkg: Path) -> None:
    written = run("--write-baseline", "base.json", pkg)
    assert written.exit_code == 0 and written.stdout == ""
    doc = json.loads(Path("base.json").read_text())
    assert doc["schema"] == "aoti-lint.baseline/1"
    # One unenforced-lower-bound finding for the model (both inputs' dims in it).
    assert sorted(e["rule"] for e in doc["entries"]) == ["empty-index-bound", "unchecked-input-layout",
                                                          "unenforced-lower-bound"]
    # Never a hashed member name or a line number in an entry.
    assert not re.search(r"wrapper\.cpp|:\d+:\d+", json.dumps(doc))
    assert run("--fail-on", "info", pkg).exit_code == 1
    checked = run("--baseline", "base.json", "--fail-on", "info", "--format", "json", pkg)
    assert checked.exit_code == 0, checked.output
    assert _codes(checked) == []
    assert "3 baselined finding(s) not shown, 0 new, 0 stale" in checked.stderr


def _renamed_rebuild(src: Path, dest: Path) -> None:
    """The hashed member names of another build (the content of the same graph)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w") as zout:
        for name in zin.namelist():
            zout.writestr(re.sub(r"/c[a-z0-9]{51}\.", "/cdifferenthash0000000000000000000000000000000000000.", name),
                          zin.read(name))


def test_a_rebuild_keeps_its_baseline(pkg: Path) -> None:
    assert run("--write-baseline", "base.json", pkg).exit_code == 0
    _renamed_rebuild(DYN, pkg)
    result = run("--baseline", "base.json", "--fail-on", "info", pkg)
    assert result.exit_code == 0 and "0 new, 0 stale" in result.stderr


def test_a_real_rebuild_keeps_its_baseline(pkg: Path) -> None:
    """../shared's gather_dyn.cuda.pt2 is another build of the same model (other hashes and lines)."""
    other = require(SHARED_PT2 / "gather_dyn.cuda.pt2")
    assert run("--write-baseline", "base.json", pkg).exit_code == 0
    shutil.copy(other, pkg)
    result = run("--baseline", "base.json", "--fail-on", "info", pkg)
    assert result.exit_code == 0 and "3 baselined finding(s) not shown, 0 new, 0 stale" in result.stderr


def test_new_findings_are_reported_and_fail(pkg: Path) -> None:
    assert run("--write-baseline", "base.json", "--ignore", "unenforced-lower-bound", pkg).exit_code == 0
    result = run("--baseline", "base.json", "--fail-on", "info", "--format", "json", pkg)
    assert result.exit_code == 1
    assert _codes(result) == ["AOTI002"]   # an info: one finding for the model
    assert "2 baselined finding(s) not shown, 1 new, 0 stale" in result.stderr


def test_stale_entries_are_reported(pkg: Path) -> None:
    assert run("--write-baseline", "base.json", pkg).exit_code == 0
    shutil.copy(FIXTURES / "gather_static.cpu.stripped.pt2", pkg)  # the bug is gone
    result = run("--baseline", "base.json", pkg)
    assert result.exit_code == 0
    stale = [l for l in result.stderr.splitlines() if "stale baseline entry" in l]
    assert len(stale) == 2   # AOTI002's and AOTI001's (gather_static has AOTI019 too)
    assert any("model.pt2: empty-index-bound, model model, input 0 dim 0" in l for l in stale)
    # Entries for packages not checked in this run are not stale.
    other = run("--baseline", "base.json", FIXTURES / "gather_static.cpu.stripped.pt2")
    assert other.exit_code == 0 and "stale baseline entry" not in other.stderr


@pytest.mark.parametrize(("content", "needle"), [
    (None, "No such file"),
    ("{", "not a baseline file (invalid JSON"),
    ('{"schema": "other"}', "not a baseline file (expected schema"),
    ('{"schema": "aoti-lint.baseline/1", "entries": [1]}', "baseline entry #1 is not an object"),
    # Hostile files: each refused in one line naming the file, never `internal error: RecursionError`.
    ("[" * 100_000 + "]" * 100_000, "not a baseline file (invalid JSON: nested too deeply)"),
    ('{"schema": "aoti-lint.baseline/1", "entries": [' + "[" * 50_000 + "]" * 50_000 + "]}",
     "not a baseline file (invalid JSON: nested too deeply)"),
    ('{"schema": "aoti-lint.baseline/1", "entries": [{"package": 1, "fingerprint": "f"}]}',
     "baseline entry #1: 'package' must be a string"),
    ('{"schema": "aoti-lint.baseline/1", "entries": [{"package": "p", "fingerprint": ["f"]}]}',
     "baseline entry #1: 'fingerprint' must be a string"),
    ('{"schema": "aoti-lint.baseline/1", "entries": [{"package": "p", "fingerprint": "f", "rule": {}}]}',
     "baseline entry #1: 'rule' must be a string"),
    ('{"schema": "aoti-lint.baseline/1", "entries": [{"package": "p", "fingerprint": "f", "input": true}]}',
     "baseline entry #1: 'input' must be a position"),
    ('{"schema": "aoti-lint.baseline/1", "entries": [{"package": "p", "fingerprint": "f", "dim": "0"}]}',
     "baseline entry #1: 'dim' must be a position"),
    ('{"schema": "aoti-lint.baseline/1", "entries": [], "n": ' + "9" * 5000 + "}", "not a baseline file (invalid JSON"),
    ('{"schema": "aoti-lint.baseline/1", "entries": ["\\udc80"]}', "baseline entry #1 is not an object"),
    (b'{"schema": "aoti-lint.baseline/1", "entries": ["\xff"]}', "not a baseline file (not UTF-8 at byte"),
])
def test_broken_baseline_is_one_line_exit_2(pkg: Path, content: str | None, needle: str) -> None:
    if isinstance(content, bytes):
        Path("base.json").write_bytes(content)
    elif content is not None:
        Path("base.json").write_text(content)
    result = run("--baseline", "base.json", pkg)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("aoti-lint: error: base.json") and needle in lines[0], lines
    assert len(lines[0]) < 300


def test_huge_baseline_is_refused(pkg: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from analyzer.app import baseline

    monkeypatch.setattr(baseline, "MAX_BASELINE_BYTES", 1000)
    Path("base.json").write_text('{"schema": "aoti-lint.baseline/1", "entries": []}' + " " * 2000)
    result = run("--baseline", "base.json", pkg)
    assert result.exit_code == 2
    assert result.stderr.strip().startswith("aoti-lint: error: base.json: not a baseline file (larger than")
