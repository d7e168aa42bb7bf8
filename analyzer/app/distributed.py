"""A registry of packages checked as tasks of Dask's distributed engine, merged into one report.

One task per shard of packages: each task runs `aoti-lint check` in a child process of its worker
(a crash, a memory blow-up or a hang kills only that child), writes the shard's JSON or SARIF report
into a shared folder and returns its path. A task that fails (the child died, timed out, or the
worker was lost) becomes an unreadable-package entry for each of its packages, so the merged report
still says what was not checked and its exit code is 2; one shard never stops the others. The
reports are merged by `aoti-lint merge`'s own code. The scheduler is Dask's: nothing here schedules.

The engine is an optional extra (`pip install 'aoti-lint[dask]'`); `check` never imports this module.

    from distributed import Client
    from analyzer import distributed as registry
    with Client("tcp://scheduler:8786") as client:
        result = registry.check_registry(client, packages, "reports/", shard_size=16)
    print(result.exit_code, result.report)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from . import merge as merging
from ..core.atomic import write_atomic
from ..core.findings import PackageError, Severity

FORMATS = ("json", "sarif")
TIMEOUT_S = 3600.0  # per shard: the per-package --timeout bounds each package inside it


@dataclass(frozen=True)
class ShardOutcome:
    """What one task returns: its report's path, or why it has none."""

    index: int
    packages: tuple[str, ...]
    report: str | None
    exit_code: int | None
    failure: str | None = None  # one line: the child's last stderr line, a timeout, a lost worker


@dataclass
class RegistryResult:
    report: str  # the merged report's path
    exit_code: int  # as `aoti-lint merge`: 2 when a package was not checked, 1 findings, 0 clean
    shards: list[ShardOutcome] = field(default_factory=list)

    @property
    def failed(self) -> list[ShardOutcome]:
        return [s for s in self.shards if s.failure is not None]


def shards(packages: Iterable[str | os.PathLike[str]], size: int) -> list[tuple[str, ...]]:
    """Consecutive shards of at most `size` packages, in the order given."""
    if size < 1:
        raise ValueError("shard size must be at least 1")
    paths = [os.fspath(p) for p in packages]
    return [tuple(paths[i:i + size]) for i in range(0, len(paths), size)]


def check_shard(index: int, packages: Sequence[str], out_dir: str, fmt: str = "json",
                args: Sequence[str] = (), timeout_s: float = TIMEOUT_S) -> ShardOutcome:
    """Run `aoti-lint check` on one shard in a child process; never raises for the child's sake."""
    report = os.path.join(out_dir, f"shard-{index:05d}.{fmt}")
    argv = [sys.executable, "-m", "analyzer", "check", "--format", fmt, "-o", report, "--exit-zero", "-j", "1",
            *args, "--", *packages]
    try:
        child = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout_s,
                               stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return ShardOutcome(index, tuple(packages), None, None, f"the shard ran past {timeout_s:g} s")
    # Exit 2 with a report: some packages were unreadable and the report lists them; without one,
    # the child itself failed (a usage error, a crash).
    if child.returncode in (0, 1, 2) and os.path.isfile(report):
        return ShardOutcome(index, tuple(packages), report, child.returncode)
    last = (child.stderr.strip().splitlines() or [f"exit {child.returncode}"])[-1]
    return ShardOutcome(index, tuple(packages), None, child.returncode, last[:300])


def _failure_report(outcome: ShardOutcome, out_dir: str, fmt: str) -> str:
    """A report of the shard's packages as unreadable, so the merge says what was not checked."""
    errors = [PackageError(p, f"not checked: {outcome.failure}") for p in outcome.packages]
    if fmt == "sarif":
        from ..report import sarif
        text = sarif.render([], errors=errors)
    else:
        from ..report import json as json_report
        text = json_report.render([], errors=errors)
    path = os.path.join(out_dir, f"shard-{outcome.index:05d}.failed.{fmt}")
    write_atomic(path, text)
    return path


def check_registry(client: Any, packages: Iterable[str | os.PathLike[str]], out_dir: str | os.PathLike[str], *,
                   shard_size: int = 8, fmt: str = "json", args: Sequence[str] = (),
                   fail_on: Severity = Severity.ERROR, timeout_s: float = TIMEOUT_S) -> RegistryResult:
    """Check every package as tasks of `client` (a `distributed.Client`), then merge the shards'
    reports into `out_dir/report.<fmt>`. `args` are further `check` options (`--select`, limits).

    The workers and this process must see the packages and `out_dir` at the same paths (one
    machine, or a shared file system)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}")
    out = os.fspath(out_dir)
    os.makedirs(out, exist_ok=True)
    parts = shards(packages, shard_size)
    if not parts:
        raise ValueError("no package to check")
    futures = [client.submit(check_shard, i, part, out, fmt, tuple(args), timeout_s, pure=False,
                             key=f"aoti-lint-shard-{i}-{os.getpid()}") for i, part in enumerate(parts)]
    outcomes: list[ShardOutcome] = []
    for i, (part, future) in enumerate(zip(parts, futures)):
        try:
            outcomes.append(future.result())
        except Exception as exc:  # noqa: BLE001 - a lost worker (KilledWorker) or a task error: this shard only
            reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
            outcomes.append(ShardOutcome(i, part, None, None, f"the task failed ({reason})"))
    reports = [o.report if o.failure is None and o.report else _failure_report(o, out, fmt) for o in outcomes]
    merged = merging.merge(reports)
    final = os.path.join(out, f"report.{fmt}")
    write_atomic(final, merged.text())
    if merged.errors:
        code = 2
    else:
        code = 1 if any(s >= fail_on for s in merged.severities) else 0
    return RegistryResult(final, code, outcomes)


def _main(argv: Sequence[str] | None = None) -> int:
    """`python -m analyzer.app.distributed SCHEDULER OUT_DIR PKG...`: the recipe as a command."""
    import argparse

    from distributed import Client

    parser = argparse.ArgumentParser(prog="python -m analyzer.app.distributed", description=__doc__.split("\n")[0])
    parser.add_argument("scheduler", help="the scheduler's address (tcp://host:8786), or `local` for a LocalCluster")
    parser.add_argument("out_dir")
    parser.add_argument("packages", nargs="+")
    parser.add_argument("--shard-size", type=int, default=8)
    parser.add_argument("--format", choices=FORMATS, default="json")
    ns = parser.parse_args(argv)
    client = Client(processes=True) if ns.scheduler == "local" else Client(ns.scheduler)
    with client:
        result = check_registry(client, ns.packages, ns.out_dir, shard_size=ns.shard_size, fmt=ns.format)
    for shard in result.failed:
        print(f"aoti-lint: error: shard {shard.index} ({len(shard.packages)} packages): {shard.failure}",
              file=sys.stderr)
    print(json.dumps({"report": result.report, "exit_code": result.exit_code, "shards": len(result.shards),
                      "failed": len(result.failed)}))
    return result.exit_code


if __name__ == "__main__":  # pragma: no cover - exercised through tests' subprocess
    sys.exit(_main())
