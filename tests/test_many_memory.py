"""-j within one memory limit: a package is handed to a worker only while the workers' resident
memory plus what it will need fits the limit; otherwise it waits for one in flight (never a worker
killed, never a package lost), and the results are those of -j 1."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from analyzer.app import api, many
from analyzer.read import archive
from analyzer.core import budget as core_budget

from conftest import SHARED_PT2

PACKAGES = sorted(SHARED_PT2.glob("*.stripped.pt2"))[:4]
pytestmark = pytest.mark.skipif(len(PACKAGES) < 4, reason=f"real packages not found at {SHARED_PT2}")


def test_package_need_is_three_times_its_largest_text_member_plus_100_mb(tmp_path: Path) -> None:
    with zipfile.ZipFile(PACKAGES[0]) as zf:
        largest = max(i.file_size for i in zf.infolist() if i.filename.endswith(".cpp"))
    assert many.package_need(many.Target(str(PACKAGES[0]))) == 3 * largest + 100 * 2**20
    assert many.package_need(many.Target(str(tmp_path))) == 100 * 2**20  # a folder: no hint
    (tmp_path / "broken.pt2").write_bytes(b"PK\x03\x04 not a zip")
    assert archive.text_bytes_hint(tmp_path / "broken.pt2") == 0


def test_the_hint_reads_a_hostile_package_through_the_bounded_reader(tmp_path: Path) -> None:
    """The parent process schedules with the hint: a package over the member-count limit or an
    overlap bomb gives no hint (0) instead of a central directory read in full or sizes it lies about."""
    import hostile

    many_members = hostile._too_many_members(tmp_path)
    bomb = hostile._overlap_bomb(tmp_path, members=4, mib=1)
    with zipfile.ZipFile(bomb) as zf:
        assert max(i.file_size for i in zf.infolist() if i.filename.endswith(".cpp")) >= 2**20  # zipfile believes it
    assert archive.text_bytes_hint(many_members) == 0
    assert archive.text_bytes_hint(bomb) == 0
    assert many.package_need(many.Target(str(bomb))) == 100 * 2**20


def test_admits_within_the_budget_only() -> None:
    assert many.admits(100, 50, 150) and not many.admits(101, 50, 150)


def _findings(result: api.Result) -> list:
    return [(f.rule, f.message, f.location) for f in result.findings]


def test_a_package_that_would_pass_the_limit_waits_for_one_in_flight(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [str(p) for p in PACKAGES]
    serial = api.lint(paths, jobs=1, keep_going=True)
    asked: list[tuple[int, int, int]] = []

    def refuse(rss: int, need: int, budget: int) -> bool:
        asked.append((rss, need, budget))
        return False  # every package past the first in flight waits: the run goes one at a time

    monkeypatch.setattr(many, "admits", refuse)
    gated = api.lint(paths, jobs=2, keep_going=True)
    assert asked and all(budget == archive.Limits().max_memory for _, _, budget in asked)
    assert all(rss > 0 for rss, _, _ in asked)  # the workers' memory is read
    assert not gated.errors and _findings(gated) == _findings(serial)


def test_jobs_under_a_tight_memory_limit_give_the_serial_results() -> None:
    paths = [str(p) for p in PACKAGES]
    # Tight for this process as it is now (forked workers start at its size, a test run's process
    # holds hundreds of MB): room for one worker and one package, not for two.
    budget = max(core_budget.MIN_MEMORY, core_budget.rss_bytes() + 300 * 2**20)
    options = api.Options(limits=archive.Limits(max_memory=budget))
    serial = api.lint(paths, options, jobs=1, keep_going=True)
    parallel = api.lint(paths, options, jobs=2, keep_going=True)
    assert not parallel.errors and _findings(parallel) == _findings(serial)
