"""The registry recipe on a real engine: Dask's distributed LocalCluster (worker processes on this
machine), one task per shard, the shards' reports merged into one; a failing shard is reported and
the others still count."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")

from analyzer.app import distributed as registry  # noqa: E402 - only with the engine installed

PACKAGES = ["gather_dyn.cuda.stripped.pt2", "empty_reduce.cpu.stripped.pt2", "gather_static.cpu.stripped.pt2",
            "pos_embedding.cpu.stripped.pt2", "topk_index.cpu.stripped.pt2"]


@pytest.fixture(scope="module")
def client():
    env = {"PYTHONPATH": str(REPO)}  # the workers import this tree's analyzer, as the driver does
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  env=env) as cluster, distributed.Client(cluster) as c:
        yield c


def _direct(paths: list[str], fmt: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "analyzer", "check", "--format", fmt, "-j", "1", *paths],
                         capture_output=True, text=True, cwd=REPO)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def test_shards_are_consecutive_and_bounded() -> None:
    assert registry.shards(["a", "b", "c"], 2) == [("a", "b"), ("c",)]
    with pytest.raises(ValueError):
        registry.shards(["a"], 0)


def test_merged_report_equals_one_check_of_every_package(client, tmp_path: Path) -> None:
    paths = [str(FIXTURES / name) for name in PACKAGES]
    result = registry.check_registry(client, paths, tmp_path / "reports", shard_size=2)
    assert len(result.shards) == 3 and not result.failed
    assert result.exit_code == 0  # gather_dyn's findings are infos (eager rejects its witness too)
    merged = json.loads(Path(result.report).read_text())
    assert merged == _direct(paths, "json")


def test_sarif_shards_merge_into_one_run_each(client, tmp_path: Path) -> None:
    paths = [str(FIXTURES / name) for name in PACKAGES[:3]]
    result = registry.check_registry(client, paths, tmp_path / "reports", shard_size=1, fmt="sarif")
    log = json.loads(Path(result.report).read_text())
    assert len(log["runs"]) == 3
    assert [len(r["results"]) for r in log["runs"]] == [len(r["results"]) for p in paths
                                                        for r in _direct([p], "sarif")["runs"]]


def test_a_failing_shard_is_reported_and_not_fatal(client, tmp_path: Path) -> None:
    broken = tmp_path / "broken.pt2"
    broken.write_bytes(b"not a zip")
    good = str(FIXTURES / "gather_dyn.cuda.stripped.pt2")
    # Shard 0 cannot be read at all (no report: the task fails); shard 1 is a real package.
    result = registry.check_registry(client, [str(broken), good], tmp_path / "reports", shard_size=1)
    assert [s.failure is not None for s in result.shards] == [True, False]
    assert result.exit_code == 2
    merged = json.loads(Path(result.report).read_text())
    assert merged["errors"][0]["package"] == str(broken)
    assert "broken.pt2" in merged["errors"][0]["message"]
    assert {f["package"] for f in merged["findings"]} == {good}
    # The merged report is what `aoti-lint merge` exits on: 2, a package was not checked.
    again = subprocess.run([sys.executable, "-m", "analyzer", "merge", result.report], capture_output=True,
                           text=True, cwd=REPO)
    assert again.returncode == 2


def test_a_task_that_dies_fails_only_its_shard(client, tmp_path: Path, monkeypatch) -> None:
    """A worker process killed mid-task (an OOM kill, a segfault in a dependency) is one failed shard."""
    good = str(FIXTURES / "empty_reduce.cpu.stripped.pt2")
    doomed = tmp_path / "doomed.pt2"
    shutil.copy(good, doomed)

    def dies_on_doomed(index, packages, out_dir, fmt="json", args=(), timeout_s=registry.TIMEOUT_S):
        if any(p.endswith("doomed.pt2") for p in packages):
            os._exit(1)  # the worker process itself dies; its nanny starts a new one
        return registry.check_shard(index, packages, out_dir, fmt, args, timeout_s)

    monkeypatch.setattr(registry, "check_shard", dies_on_doomed)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        result = registry.check_registry(client, [str(doomed), good], tmp_path / "reports", shard_size=1)
    assert [s.failure is not None for s in result.shards] == [True, False]
    assert "KilledWorker" in result.shards[0].failure
    merged = json.loads(Path(result.report).read_text())
    assert [e["package"] for e in merged["errors"]] == [str(doomed)]
    assert {f["package"] for f in merged["findings"]} == {good}


def test_the_recipe_as_a_command(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-m", "analyzer.app.distributed", "local", str(tmp_path / "r"),
                          str(FIXTURES / "gather_static.cpu.stripped.pt2"), "--shard-size", "1"],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["failed"] == 0 and summary["exit_code"] == 0
    # A clean model: only its unchecked layout, an info below the gate.
    assert [f["code"] for f in json.loads(Path(summary["report"]).read_text())["findings"]] == ["AOTI019"]
