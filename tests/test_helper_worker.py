"""The second core inside one package (analyzer/parse/helper_worker.py): a wrapper's Triton helpers read
in a forked worker give the same report and the same linked models as read here, on every
fixture package; a worker that crashes, hangs, cannot fork or answers wrongly is replaced by the
serial path; small packages and `-j` workers never fork one."""

from __future__ import annotations

import ast
import dataclasses
import os
import pickle
import time
from pathlib import Path

import pytest

from analyzer.app import api
from analyzer.read import archive
from analyzer.core import budget
from analyzer.parse import helper_worker, helpertext, triage
from analyzer.report import json as json_report
from conftest import FIXTURES, every_package

OFF, ALWAYS = helper_worker.Mode.OFF, helper_worker.Mode.ALWAYS
CUDA = FIXTURES / "gather_dyn.cuda.stripped.pt2"


def _every_package() -> list[str]:
    return [str(p) for p in every_package()]


def _report(packages, worker: helper_worker.Mode, **options) -> tuple[str, list]:
    result = api.lint(packages, api.Options(select=("ALL",), worker=worker, **options), keep_going=True)
    return json_report.render(result.findings, errors=result.errors), result.packages


@pytest.fixture
def answers(monkeypatch):
    """Counts the worker's answers: [jobs waited for, answers used] (an answer: at least one read
    the child made; those this process read meanwhile, `Job.own`, are not the child's)."""
    count = [0, 0]
    original = helper_worker.Job.result

    def result(self, deadline):
        reads = original(self, deadline)
        count[0] += 1
        count[1] += reads is not None and any(r is not None and i not in self.own for i, r in enumerate(reads))
        return reads

    monkeypatch.setattr(helper_worker.Job, "result", result)
    return count


def test_worker_gives_the_same_json_and_models_on_every_package(answers) -> None:
    packages = _every_package()
    assert len(packages) > 150 and any("versions" in p for p in packages) and any("stranger" in p for p in packages)
    serial = _report(packages, OFF)
    assert answers == [0, 0]
    worker = _report(packages, ALWAYS)
    assert answers[0] >= 40 and answers[1] == answers[0]  # every CUDA package's helpers went to a worker
    assert worker[0] == serial[0]
    assert worker[1] == serial[1]


@pytest.mark.parametrize("wrong", ["assertion_line", "param_types"])
def test_the_comparison_sees_a_wrong_answer(wrong: str, monkeypatch, answers) -> None:
    """A worker whose answer is off by one line, or lacks the kernel's signature, changes the
    report or the linked model: the test above can fail."""
    original = helper_worker.read_helper

    def off_by_one(text, path):
        read = original(text, path)
        if wrong == "param_types":
            read.walked.param_types = {}
            return read
        for raw in read.walked.assertions:
            raw.location = dataclasses.replace(raw.location, line=raw.location.line + 1)
        return read

    monkeypatch.setattr(helper_worker, "read_helper", off_by_one)
    worker, serial = _report([str(CUDA)], ALWAYS), _report([str(CUDA)], OFF)
    assert answers == [1, 1]
    if wrong == "assertion_line":
        assert worker[0] != serial[0]
    assert worker[1] != serial[1]


def test_facts_survive_the_trip_on_every_kernel() -> None:
    """Every helper read from the text, through the form sent (pickled) and back: the fast path's
    facts are equal; a walked kernel's facts (expressions sent as text and parsed back) equal the
    walk's (definitions and stored values compared as ASTs), and none is left to walk again."""
    light = walked = 0
    for path in _every_package():
        with archive.open_package(path) as pkg:
            for members in pkg.models:
                for member in members.wrappers[:1]:
                    same: dict = {}
                    for text in helpertext.split_helpers(pkg.read_bytes(member))[1]:
                        read = helper_worker.read_helper(text, member)
                        sent = pickle.loads(pickle.dumps(helper_worker._to_wire(read, same)))
                        back = helper_worker._from_wire(sent, text, member)
                        assert (back.source, back.first_line, back.indent, back.problem) == \
                            (read.source, read.first_line, read.indent, read.problem)
                        if read.light is not None:
                            assert back.light == read.light and back.walked is None, (path, text.name)
                            light += 1
                        if read.source is None or read.light is not None:
                            continue
                        direct = triage.walk_triton(text.name[len("call_"):], read.source, member, read.first_line,
                                                    read.indent, text.params)
                        facts = helper_worker.restore(back, member)
                        assert facts is not None, (path, text.name)
                        _assert_same(facts, direct, (path, text.name))
                        walked += 1
    assert walked >= 60 and light >= 30


def _assert_same(back, direct, where) -> None:
    def dumped(defs):
        return {k: [(line, ast.dump(e)) for line, e in v] for k, v in defs.items()}

    assert dumped(back.defs) == dumped(direct.defs), where
    assert back.stores == direct.stores, where  # RawStore compares values as ASTs
    for field in dataclasses.fields(direct):
        if field.name not in ("defs", "stores", "locate", "segments"):  # segments: node ids
            assert getattr(back, field.name) == getattr(direct, field.name), (where, field.name)
    assert (back.locate is None) == (direct.locate is None), where
    if direct.locate is not None:
        assert [back.locate(n) for n in (1, 7)] == [direct.locate(n) for n in (1, 7)], where


def _children_reaped(pids: list[int]) -> None:
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


@pytest.fixture
def forks(monkeypatch):
    """The pids of the workers forked."""
    pids: list[int] = []
    original = helper_worker.start

    def start(texts, path, mode):
        job = original(texts, path, mode)
        if job is not None:
            pids.append(job.pid)
        return job

    monkeypatch.setattr(helper_worker, "start", start)
    return pids


def _counted(function, results: list):
    def run(*args):
        results.append(function(*args))
        return results[-1]
    return run


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd")) if Path("/proc/self/fd").is_dir() else 0


@pytest.mark.parametrize("failure", ["crash", "exception", "wrong_length", "hang", "text_does_not_parse"])
def test_a_failing_worker_falls_back_to_the_serial_path(failure: str, monkeypatch, answers, forks) -> None:
    expected = _report([str(CUDA)], OFF)
    monkeypatch.setattr(helper_worker.Job, "share", lambda self, deadline: None)  # the child's answer alone
    if failure == "crash":
        monkeypatch.setattr(helper_worker, "_reads", lambda texts, path, split: os._exit(3))
    elif failure == "exception":
        monkeypatch.setattr(helper_worker, "read_helper", lambda text, path: 1 / 0)
    elif failure == "wrong_length":
        monkeypatch.setattr(helper_worker, "_reads", lambda texts, path, split: [None, None])
    elif failure == "hang":
        monkeypatch.setattr(helper_worker, "_reads", lambda texts, path, split: time.sleep(60))
        monkeypatch.setattr(helper_worker, "MAX_WAIT_S", 0.5)
    else:  # an answer whose walked kernel must be walked again here
        original = helper_worker.read_helper

        def unparsable(text, path):
            read = original(text, path)
            read.walked.defs["tmp2"] = [(line, "tmp0 +") for line, _ in read.walked.defs["tmp2"]]
            return read

        monkeypatch.setattr(helper_worker, "read_helper", unparsable)
        monkeypatch.setattr(helper_worker, "restore", _counted(helper_worker.restore, restored := []))
    fds = _open_fds()
    started = time.monotonic()
    assert _report([str(CUDA)], ALWAYS) == expected
    assert time.monotonic() - started < 20
    if failure == "text_does_not_parse":
        assert answers == [1, 1] and restored[0] is None  # then walked here (and shared, restored again)
    else:
        assert answers == [1, 0]
    assert len(forks) == 1
    _children_reaped(forks)  # killed if need be, and reaped: no zombie
    assert _open_fds() == fds  # no pipe left open


@pytest.mark.parametrize("child", ["late", "crashes"])
def test_this_process_reads_a_share_while_the_child_reads_the_rest(child: str, monkeypatch, forks) -> None:
    """Once its own part of the wrapper is read, this process reads helpers from the back while the
    child reads them from the front: the same report, whoever reads which (here the child starts
    late, so this process reads a share, or dies at once, so it reads them all)."""
    package = str(FIXTURES / "large" / "gpt2_48.cuda.stripped.pt2")   # 12 helpers, 7 walked in full
    expected = _report([package], OFF)
    monkeypatch.setattr(helper_worker, "MIN_SHARED", 1)
    if child == "late":  # the forked child runs this patched module too
        reads = helper_worker._reads

        def late(texts, path, split):
            # Until this process has taken a helper from the back (however loaded the machine is).
            deadline = time.monotonic() + 20
            while split.back == len(texts) and time.monotonic() < deadline:
                time.sleep(0.005)
            return reads(texts, path, split)

        monkeypatch.setattr(helper_worker, "_reads", late)
    else:
        monkeypatch.setattr(helper_worker, "_reads", lambda texts, path, split: os._exit(3))
    shares = []
    original = helper_worker.Job.result

    def result(self, deadline):
        shares.append(len(self.own))
        return original(self, deadline)

    monkeypatch.setattr(helper_worker.Job, "result", result)
    assert _report([package], ALWAYS) == expected
    assert len(forks) == 1 and shares and shares[0] >= 1
    if child == "crashes":
        assert shares == [12]
    _children_reaped(forks)


def test_no_fork_means_serial(monkeypatch, answers) -> None:
    expected = _report([str(CUDA)], OFF)
    fork = os.fork

    def no_fork():
        raise OSError("fork refused")

    monkeypatch.setattr(os, "fork", no_fork)
    assert _report([str(CUDA)], ALWAYS) == expected
    monkeypatch.delattr(os, "fork")
    assert _report([str(CUDA)], ALWAYS) == expected
    monkeypatch.setattr(os, "fork", fork, raising=False)
    monkeypatch.setattr(helper_worker, "MIN_HELPERS", 1)
    monkeypatch.setattr(helper_worker, "_cpus", lambda: 2)
    monkeypatch.setattr(helper_worker.threading, "active_count", lambda: 2)  # another thread: no fork
    assert _report([str(CUDA)], helper_worker.Mode.AUTO) == expected
    assert answers == [0, 0]
    monkeypatch.setattr(helper_worker.threading, "active_count", lambda: 1)
    assert _report([str(CUDA)], helper_worker.Mode.AUTO) == expected
    assert answers == [1, 1]


def test_only_where_it_pays(monkeypatch, forks) -> None:
    """AUTO forks only for a wrapper with MIN_HELPERS helpers read from the text, on a machine
    with two CPUs or more; OFF never."""
    auto = helper_worker.Mode.AUTO
    monkeypatch.setattr(helper_worker.threading, "active_count", lambda: 1)  # torch's tests leave threads
    _report([str(CUDA)], auto)
    assert forks == []
    monkeypatch.setattr(helper_worker, "MIN_HELPERS", 1)
    monkeypatch.setattr(helper_worker, "_cpus", lambda: 1)
    _report([str(CUDA)], auto)  # one CPU: the worker would only add its cost
    assert forks == []
    monkeypatch.setattr(helper_worker, "_cpus", lambda: 2)
    _report([str(CUDA)], auto)
    assert len(forks) == 1
    _report([str(CUDA)], OFF)
    _report([str(FIXTURES / "gather_dyn.cpu.stripped.pt2")], ALWAYS)  # no Triton helper
    assert len(forks) == 1
    _children_reaped(forks)


def test_the_environment_switch(monkeypatch) -> None:
    for value, mode in [("0", OFF), ("always", ALWAYS), ("1", helper_worker.Mode.AUTO), ("", helper_worker.Mode.AUTO)]:
        monkeypatch.setenv("AOTI_LINT_WORKER", value)
        assert api.Options().worker is mode
    monkeypatch.delenv("AOTI_LINT_WORKER")
    assert api.Options().worker is helper_worker.Mode.AUTO


def test_no_worker_inside_a_jobs_worker(monkeypatch) -> None:
    """-j N: the packages' worker processes never fork one of their own (forked from here, they
    run this patched start: a worker asked for would fail the run)."""
    def start(texts, path, mode):
        assert mode is OFF, "a worker inside a -j worker"
        return None

    monkeypatch.setattr(helper_worker, "start", start)
    packages = [str(CUDA), str(FIXTURES / "embedding.cuda.stripped.pt2")]
    result = api.lint(packages, api.Options(select=("ALL",), worker=ALWAYS), jobs=2, keep_going=True)
    assert not result.errors and len(result.packages) == 2


# Kernel sources the text transport must not get wrong, or must hand back to be walked here: each
# edit goes into the one Triton kernel of gather_dyn's CUDA wrapper (body lines indented 8).
_LINE = "        tmp2 = tmp0 + tmp1\n"
_EDITS = {
    "multi_line": "        tmp2 = (tmp0 +\n            tmp1)\n",
    "strings_over_lines": _LINE + '        tmp9 = ("a"\n            "b")\n',
    "non_ascii": _LINE + "        tmp9 = ('\u00e9\u4e2d', tmp0 + tmp1)\n",
    "tabs": "        tmp2 = tmp0\t+\ttmp1\n",
    "carriage_return": "        tmp2 = tmp0 + tmp1\r\n",
    "scan_item": _LINE + "        tmp9, = tl.associative_scan((tmp2,), 0, _triton_helper_fn_add0)\n",
    "digits_5000": "        tmp2 = tmp0 + " + "7" * 5000 + "\n",
    "nested_150": "        tmp2 = " + "(" * 150 + "tmp0" + ")" * 150 + " + tmp1\n",
    "nested_300": "        tmp2 = " + "(" * 300 + "tmp0" + ")" * 300 + " + tmp1\n",
    "unparsable": "        tmp2 = tmp0 +\n",
}


@pytest.mark.parametrize("edit", sorted(_EDITS))
def test_odd_kernels_give_the_same_report(edit: str, tmp_path: Path, monkeypatch, answers) -> None:
    from hostile import edited

    path = edited(CUDA, ".wrapper.cpp", _LINE, _EDITS[edit], edit)(tmp_path)
    serial = _report([str(path)], OFF)
    monkeypatch.setattr(helper_worker, "restore", _counted(helper_worker.restore, restored := []))
    assert _report([str(path)], ALWAYS) == serial
    assert answers == [1, 1]
    assert len(restored) == 1 and restored[0] is not None  # sent as text, and parsed back


def test_time_limit_spent_in_the_worker_refuses_the_package(monkeypatch, answers, forks) -> None:
    """A worker still reading when the package's time is up is killed, and the package is refused
    with the time limit's one line, as a serial check that ran out of time is."""
    original = helper_worker.read_helper

    def slow(text, path):
        time.sleep(30)
        return original(text, path)

    monkeypatch.setattr(helper_worker, "read_helper", slow)
    started = time.monotonic()
    result = api.lint([str(CUDA)], api.Options(worker=ALWAYS, limits=archive.Limits(timeout_s=1.0)), keep_going=True)
    assert time.monotonic() - started < 10
    (error,) = result.errors
    assert "exceeded the 1 s time limit" in error.message and not result.packages
    assert answers == [1, 0]
    _children_reaped(forks)


def test_memory_limit_reached_in_the_worker_falls_back(monkeypatch, answers, forks) -> None:
    """The worker polls the package's memory budget as the serial path does: past it (here only
    in the child), it stops without an answer and this process reads the helpers itself."""
    parent = os.getpid()
    original = budget.Deadline.over_memory
    monkeypatch.setattr(budget.Deadline, "over_memory",
                        lambda self: os.getpid() != parent or original(self))
    packages = [str(CUDA), str(FIXTURES / "large" / "gpt2_48.cuda.stripped.pt2")]
    assert _report(packages, ALWAYS) == _report(packages, OFF)
    assert answers == [2, 0] and len(forks) == 2, answers  # no answer: every helper read serially
    _children_reaped(forks)
