"""SIGINT and SIGTERM stop the run (workers included), write nothing and exit 130 / 143; the time
limit covers rendering; the report grows with the findings, not with the kernels or assertions a
package repeats one check in."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.core import interrupt, messages
from analyzer.app.cli import cli
from analyzer.core.findings import Finding, Location, Severity
from analyzer.rules.merging import merge_repeats

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "fixtures" / "gather_dyn.cuda.stripped.pt2"
CPU_FIXTURE = REPO / "fixtures" / "gather_dyn.cpu.stripped.pt2"
OLD = "the previous report\n"

# The command line with one package's analysis held up, so that a signal lands in the middle of it:
# the place to stop prints `busy PID` (in a -j worker too: fork keeps the patch) and sleeps.
_SLOW_CLI = textwrap.dedent("""
    import os, sys, time
    from analyzer.parse import helper_worker
    from analyzer.app import many
    where = os.environ["SLOW_AT"]
    def busy(*args, **kwargs):
        os.write(1, f"busy {os.getpid()}\\n".encode())  # one write: two workers' lines never interleave
        time.sleep(60)
    if where == "check_one":
        many.check_one = busy
    else:  # the helper worker's child, while its parent parses the wrapper
        helper_worker._reads = busy
    from analyzer.app.cli import main
    sys.argv[0] = "aoti-lint"
    main(sys.argv[1:])
""")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead: its parent just has not reaped it
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _interrupt(tmp_path: Path, args: list[str], signum: int, *, group: bool = False, busy: int = 1,
               slow_at: str = "check_one", env: dict[str, str] | None = None):
    out = tmp_path / "out.json"
    out.write_text(OLD)
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_CLI, *args], cwd=tmp_path,
                            env={**os.environ, "SLOW_AT": slow_at, **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    pids = []
    try:
        for _ in range(busy):
            line = proc.stdout.readline()
            assert line.startswith("busy "), (line, proc.stderr.read() if proc.poll() is not None else "")
            pids.append(int(line.split()[1]))
        start = time.monotonic()
        if group:
            os.killpg(proc.pid, signum)  # a terminal's Ctrl-C: every process of the group
        else:
            proc.send_signal(signum)  # a CI runner's cancel, `kill PID`: the parent alone
        stdout, stderr = proc.communicate(timeout=30)
        elapsed = time.monotonic() - start
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in pids if p != proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc.returncode, stdout, stderr, elapsed, [p for p in pids if p != proc.pid and _alive(p)], out


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_a_serial_run_and_writes_nothing(tmp_path, signum, code):
    rc, stdout, stderr, elapsed, alive, out = _interrupt(
        tmp_path, ["check", "--format", "json", "-o", "out.json", str(FIXTURE)], signum)
    assert rc == code, stderr
    assert elapsed < 10  # stopped, not finished
    assert f"interrupted by {signal.Signals(signum).name} (exit {code})" in stderr
    assert "Aborted!" not in stderr and "Traceback" not in stderr and stdout == ""
    assert out.read_text() == OLD and sorted(os.listdir(tmp_path)) == ["out.json"]


@pytest.mark.parametrize("signum, code, group", [(signal.SIGTERM, 143, False), (signal.SIGINT, 130, True),
                                                 (signal.SIGINT, 130, False)])
def test_a_signal_stops_the_worker_pool(tmp_path, signum, code, group):
    """-j 2: both workers are busy; the parent ends them rather than waiting for their packages."""
    rc, stdout, stderr, elapsed, alive, out = _interrupt(
        tmp_path, ["check", "-j", "2", "--write-baseline", "out.json", str(FIXTURE), str(CPU_FIXTURE)],
        signum, group=group, busy=2)
    assert rc == code, stderr
    assert elapsed < 10 and alive == []
    assert "Aborted!" not in stderr and "Traceback" not in stderr
    assert out.read_text() == OLD and sorted(os.listdir(tmp_path)) == ["out.json"]


def test_a_signal_ends_the_helper_worker(tmp_path):
    """The forked child reading a wrapper's helpers (helper_worker.py) ends with its parent."""
    rc, stdout, stderr, elapsed, alive, out = _interrupt(
        tmp_path, ["check", "-o", "out.json", str(FIXTURE)], signal.SIGINT, group=True,
        slow_at="helper_worker", env={"AOTI_LINT_WORKER": "always"})
    assert rc == 130, stderr
    assert elapsed < 10 and alive == []
    assert out.read_text() == OLD


def test_exit_codes_are_documented():
    result = CliRunner().invoke(cli, ["--help"])
    assert "130, 143  interrupted by SIGINT, SIGTERM" in result.output
    readme = (REPO / "README.md").read_text()
    assert "**130**" in readme and "**143**" in readme


def test_interrupted_is_not_an_exception():
    """`except Exception` (the internal-error guard, the rules' guards) never swallows a signal."""
    assert not issubclass(interrupt.Interrupted, Exception)
    assert interrupt.Interrupted(signal.SIGINT).exit_code == 130
    assert interrupt.Interrupted(signal.SIGTERM).exit_code == 143


def test_rendering_is_within_the_time_limit(tmp_path, monkeypatch):
    """A renderer that runs past --timeout is stopped: exit 2, one line, the old report kept."""
    from analyzer import report

    def slow(*args, **kwargs):
        time.sleep(30)

    monkeypatch.setattr(report, "render", slow)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out.txt").write_text(OLD)
    start = time.monotonic()
    result = CliRunner().invoke(cli, ["check", "--timeout", "2", "-o", "out.txt", str(FIXTURE)])
    assert time.monotonic() - start < 15
    assert result.exit_code == 2
    assert "rendering the report exceeded the 2 s time limit per package (--timeout)" in result.output
    assert (tmp_path / "out.txt").read_text() == OLD


def _finding(kernel: str, line: int) -> Finding:
    return Finding(code="AOTI001", rule="empty-index-bound", severity=Severity.ERROR, message="empty x",
                   model="model", location=Location("m/w.cpp", line, 1), kernel=kernel, package="p.pt2",
                   witness="x.shape = (0,)", fix="fix it")


def test_repeats_merge_in_linear_time_and_are_counted():
    """50,000 copies of one check (one per kernel) are one finding listing LIST_LIMIT of them."""
    findings = [_finding(f"k{i}", i + 1) for i in range(50_000)]
    start = time.monotonic()
    (merged,) = merge_repeats(findings)
    assert time.monotonic() - start < 10  # quadratic, this took minutes
    assert len(merged.also) == messages.LIST_LIMIT
    assert merged.also_more == 50_000 - 1 - messages.LIST_LIMIT
    assert merged.also[0][0] == "k1"


def _replicated(tmp_path: Path, mb: float) -> Path:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from bench import build
    finally:
        sys.path.pop(0)
    return build(FIXTURE, mb, 0, 1, tmp_path).path  # every copy holds the assertion


@pytest.fixture(scope="module")
def replicated(tmp_path_factory):
    folder = tmp_path_factory.mktemp("replicated")
    return _replicated(folder, 0.25), _replicated(folder, 1.0)


def test_output_grows_with_findings_not_kernels(replicated):
    """gather_dyn's kernel copied ~50 and ~200 times: the same 3 findings, reports of one size."""
    small, large = replicated
    sizes = {}
    for fmt in ("text", "full", "json", "markdown"):
        for path in (small, large):
            result = CliRunner().invoke(cli, ["check", "--format", fmt, "--fail-on", "info", str(path)])
            assert result.exit_code == 1, result.output
            sizes[fmt, path] = len(result.output.replace(str(path), "PKG"))
        assert abs(sizes[fmt, small] - sizes[fmt, large]) < 200, (fmt, sizes)
    result = CliRunner().invoke(cli, ["check", "--format", "json", str(large)])
    findings = json.loads(result.output)["findings"]
    assert [f["code"] for f in findings] == ["AOTI001", "AOTI002", "AOTI019"]
    first = findings[0]
    assert len(first["also"]) == messages.LIST_LIMIT and first["also_more"] > 100
    kernels = 1 + len(first["also"]) + first["also_more"]
    for lower in findings[1:2]:  # the lower bounds, one finding for the model (AOTI019 names inputs)
        read_by = [line for line in lower["chain"] if line.startswith("read by")]
        assert len(read_by) == len(lower["dims"]) * (messages.LIST_LIMIT + 1)   # each dim's list cut
        assert read_by[-1] == f"read by {kernels - messages.LIST_LIMIT} more kernels"
        assert f" and {kernels - messages.LIST_LIMIT} more" in lower["detail"]
    text = CliRunner().invoke(cli, ["check", "--format", "full", str(large)]).output
    assert f"also in {first['also_more']} more kernels" in text
