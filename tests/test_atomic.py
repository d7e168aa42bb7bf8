"""Writes that cannot lose a report: every file aoti-lint writes is either the old one or the complete
new one, whatever happens while it is written (a full disk, an exception, SIGKILL), and no
temporary file is left behind."""

from __future__ import annotations

import errno
import json
import os
import re
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.core import atomic
from analyzer.core.atomic import write_atomic
from analyzer.app.cli import cli

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "fixtures" / "gather_dyn.cuda.stripped.pt2"
OLD = "the previous report, which must survive\n"


def _full_disk_after(monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    """os.write as on a disk with `limit` bytes free: short writes, then ENOSPC."""
    real_write = os.write
    left = [limit]

    def write(fd: int, data) -> int:
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = real_write(fd, bytes(data[: left[0]]))
        left[0] -= n
        return n

    monkeypatch.setattr(atomic.os, "write", write)


def _only(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


@pytest.mark.parametrize("tmpfile", [True, False], ids=["o_tmpfile", "mkstemp"])
def test_full_disk_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch, tmpfile):
    if not tmpfile:
        monkeypatch.setattr(atomic, "_unnamed", lambda folder: None)
    target = tmp_path / "report.json"
    target.write_text(OLD)
    _full_disk_after(monkeypatch, 4096)
    with pytest.raises(OSError) as info:
        write_atomic(target, "x" * 100_000)
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(target)
    assert target.read_text() == OLD
    assert _only(tmp_path) == ["report.json"]


@pytest.mark.parametrize("tmpfile", [True, False], ids=["o_tmpfile", "mkstemp"])
def test_an_exception_mid_write_keeps_the_old_file(tmp_path, monkeypatch, tmpfile):
    """A signal turned into an exception (KeyboardInterrupt) while writing is the same case."""
    if not tmpfile:
        monkeypatch.setattr(atomic, "_unnamed", lambda folder: None)
    target = tmp_path / "report.json"
    target.write_text(OLD)

    def interrupted(fd: int, data) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, "new")
    assert target.read_text() == OLD and _only(tmp_path) == ["report.json"]


@pytest.mark.parametrize("tmpfile", [True, False], ids=["o_tmpfile", "mkstemp"])
def test_permissions_kept_or_umask_default(tmp_path, monkeypatch, tmpfile):
    if not tmpfile:
        monkeypatch.setattr(atomic, "_unnamed", lambda folder: None)
    kept = tmp_path / "kept.json"
    kept.write_text(OLD)
    kept.chmod(0o640)
    write_atomic(kept, "new")
    assert kept.read_text() == "new" and stat.S_IMODE(kept.stat().st_mode) == 0o640
    old_mask = os.umask(0o027)
    try:
        fresh = tmp_path / "fresh.json"
        write_atomic(fresh, b"new")
    finally:
        os.umask(old_mask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o640  # 0666 & ~027, not mkstemp's 0600
    assert _only(tmp_path) == ["fresh.json", "kept.json"]


def test_a_link_is_written_through_and_a_device_in_place(tmp_path):
    real = tmp_path / "real.json"
    real.write_text(OLD)
    link = tmp_path / "link.json"
    link.symlink_to(real.name)
    write_atomic(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    write_atomic(os.devnull, "nothing")  # not renamed over: /dev/null stays a device
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert _only(tmp_path) == ["link.json", "real.json"]


def test_missing_folder_names_the_target(tmp_path):
    with pytest.raises(OSError) as info:
        write_atomic(tmp_path / "no" / "report.json", "x")
    assert info.value.filename == str(tmp_path / "no" / "report.json")


_KILLED_WRITER = textwrap.dedent("""
    import os, sys, time
    from analyzer.core import atomic
    if sys.argv[2] == "mkstemp":
        atomic._unnamed = lambda folder: None
    real_write = os.write
    def slow(fd, data):
        n = real_write(fd, bytes(data[:65536]))
        print("writing", flush=True)
        time.sleep(0.05)
        return n
    atomic.os.write = slow
    atomic.write_atomic(sys.argv[1], "y" * (64 << 20))
""")


@pytest.mark.parametrize("tmpfile", ["o_tmpfile", "mkstemp"])
def test_sigkill_mid_write_keeps_the_old_file(tmp_path, tmpfile):
    """SIGKILL runs no cleanup: with O_TMPFILE the half-written data never had a name. With a named
    temporary file (other systems) only that file can be left, and the old report is intact."""
    if tmpfile == "o_tmpfile":
        probe = atomic._unnamed(str(tmp_path))
        if probe is None:
            pytest.skip("no O_TMPFILE here")
        os.close(probe)
    target = tmp_path / "report.json"
    target.write_text(OLD)
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(target), tmpfile], cwd=REPO,
                            stdout=subprocess.PIPE, text=True)
    try:
        for _ in range(3):
            assert proc.stdout.readline() == "writing\n"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert target.read_text() == OLD
    left = _only(tmp_path)
    if tmpfile == "o_tmpfile":
        assert left == ["report.json"]
    else:
        assert left[-1] == "report.json" and all(re.fullmatch(r"\.report\.json\..+", n) for n in left[:-1])


_KILLED_CLI = textwrap.dedent("""
    import os, sys, time
    from analyzer.core import atomic
    real = atomic._write_all
    def slow(fd, payload):
        # The report written a few bytes at a time, announced, so that the kill lands mid-write.
        for start in range(0, len(payload), 64):
            real(fd, payload[start:start + 64])
            os.write(1, b"writing\\n")
            time.sleep(0.05)
    atomic._write_all = slow
    from analyzer.app.cli import main
    main(sys.argv[1:])
""")


@pytest.mark.parametrize("args", [["check", "--format", "json", "-o", "report.json"],
                                  ["check", "--write-baseline", "report.json"],
                                  ["report", "-o", "report.json"]])
def test_cli_killed_mid_write_keeps_the_old_report(tmp_path, args):
    probe = atomic._unnamed(str(tmp_path))
    if probe is None:
        pytest.skip("no O_TMPFILE here: a SIGKILL can leave the named temporary file")
    os.close(probe)
    target = tmp_path / "report.json"
    target.write_text(OLD)
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_CLI, *args, str(FIXTURE)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        for _ in range(3):
            assert proc.stdout.readline() == b"writing\n"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert target.read_text() == OLD
    assert _only(tmp_path) == ["report.json"]  # O_TMPFILE: the half-written report had no name


def _check(args: list[str], monkeypatch, cwd: Path):
    monkeypatch.chdir(cwd)
    return CliRunner().invoke(cli, args)


@pytest.mark.parametrize("args", [
    ["check", "--format", "json", "-o", "out.txt"],
    ["check", "--write-baseline", "out.txt"],
    ["report", "-o", "out.txt"],
    ["contract", "--emit", "python", "-o", "out.txt"],
    ["inspect", "--format", "json", "-o", "out.txt"],
])
def test_every_command_keeps_the_old_file_on_a_full_disk(tmp_path, monkeypatch, args):
    (tmp_path / "out.txt").write_text(OLD)
    _full_disk_after(monkeypatch, 100)
    result = _check([*args, str(FIXTURE)], monkeypatch, tmp_path)
    assert result.exit_code == 2, result.output
    assert "out.txt: No space left on device" in result.output
    assert "Traceback" not in result.output
    assert (tmp_path / "out.txt").read_text() == OLD
    assert _only(tmp_path) == ["out.txt"]


def test_merge_keeps_the_old_file_on_a_full_disk(tmp_path, monkeypatch):
    shard = tmp_path / "a.json"
    shard.write_text(json.dumps({"schema": "aoti-lint.check/1", "findings": []}))
    (tmp_path / "out.json").write_text(OLD)
    _full_disk_after(monkeypatch, 10)
    result = _check(["merge", "a.json", "-o", "out.json"], monkeypatch, tmp_path)
    assert result.exit_code == 2 and "out.json: No space left on device" in result.output
    assert (tmp_path / "out.json").read_text() == OLD and _only(tmp_path) == ["a.json", "out.json"]


def test_the_commands_replace_the_file_whole(tmp_path, monkeypatch):
    (tmp_path / "out.json").write_text(OLD)
    result = _check(["check", "--format", "json", "-o", "out.json", "--fail-on", "info", str(FIXTURE)], monkeypatch,
                    tmp_path)
    assert result.exit_code == 1
    assert json.loads((tmp_path / "out.json").read_text())["findings"]
    assert _only(tmp_path) == ["out.json"]


def test_nothing_else_in_the_analyzer_writes_files():
    """One helper writes files: no other module opens a file for writing."""
    pattern = re.compile(r"write_text\(|write_bytes\(|open_file\(|open\([^)]*['\"][wax]b?\+?['\"]")
    offenders = []
    for path in sorted((REPO / "analyzer").rglob("*.py")):
        if path.name == "atomic.py":
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if pattern.search(line) and "helper_worker.py" not in str(path):
                offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert offenders == []
