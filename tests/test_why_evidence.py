"""`why` by evidence: the shapes and values a crash log itself shows rank the causes.

Real texts: ../shared/logs/cuda-device-assert.log (its traceback quotes the call
`f(torch.randn(6, 8), torch.full((3,), 9))`) and the committed CPU probe logs in fixtures/logs,
whose traceback quotes only `compiled(*args, **kwargs)` (no shape, no value): those keep both causes.
The CPU empty and out-of-bounds logs of gather_dyn are byte-identical but for addresses, so only
a line that shows the call (added here as a user's script would print it) can tell them apart.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.app import api
from analyzer.app.cli import cli
from analyzer.explain.why import explain_failure
from analyzer.explain.why.evidence import read_evidence

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
LOGS = FIXTURES / "logs"
CUDA_LOG = REPO.parent / "shared" / "logs" / "cuda-device-assert.log"
CPU_PKG = FIXTURES / "gather_dyn.cpu.stripped.pt2"
CUDA_PKG = FIXTURES / "gather_dyn.cuda.stripped.pt2"
EP = FIXTURES / "gather_dyn.ep.pt2"


def _why(pkg: Path, text: str, ep: Path | None = EP):
    return explain_failure(api.load(pkg, api.Options(exported_program=str(ep) if ep else None)), text)


def _with_call(log: str, call: str) -> str:
    """A probe log with the user's call quoted in its traceback, as a script's own frame shows it."""
    return f'Traceback (most recent call last):\n  File "run.py", line 9, in <module>\n    {call}\n' + \
        (LOGS / log).read_text()


# -- reading the log ------------------------------------------------------------------------------

def test_reads_the_cuda_log_call():
    if not CUDA_LOG.exists():
        pytest.skip("../shared/logs is not present")
    ev = read_evidence(CUDA_LOG.read_text())
    x, idx = ev.args
    assert (x.position, x.shape, x.low) == (0, (6, 8), None)
    assert (idx.position, idx.shape, idx.low, idx.high) == (1, (3,), 9, 9)
    assert "torch.full((3,), 9" in idx.text and ev.line.startswith("out = f(")


@pytest.mark.parametrize("line, shape, low, high", [
    ("out = m(torch.zeros(2, 3))", (2, 3), 0, 0),
    ("out = m(torch.ones((4,)).cuda())", (4,), 1, 1),
    ("out = m(torch.tensor([[1, 2], [3, -4]]))", (2, 2), -4, 3),
    ("out = m(torch.arange(5, 0, -2))", (3,), 1, 5),
    ("out = m(torch.randint(3, 7, (2, 5)).to('cuda'))", (2, 5), 3, 6),
    ("out = m(torch.randint(10, size=(4,)))", (4,), 0, 9),
    ("out = m(torch.empty(0, 8))", (0, 8), None, None),
    ("out = m(torch.full(size=[2], fill_value=-1))", (2,), -1, -1),
    (">>> m(torch.randn(3, 4, dtype=torch.float32))", (3, 4), None, None),
])
def test_constructors(line, shape, low, high):
    (obs,) = read_evidence(line).args
    assert (obs.shape, obs.low, obs.high) == (shape, low, high)


def test_assignments_name_their_tensor():
    ev = read_evidence("    x = torch.randn(6, 8)\n    idx = torch.tensor([9, 1])\n    out = f(x, idx)")
    by = {o.name: o for o in ev.args}
    assert by["x"].shape == (6, 8) and (by["idx"].shape, by["idx"].high) == ((2,), 9)
    (c,) = _why(CPU_PKG, "    x = torch.randn(6, 8)\n    idx = torch.tensor([9, 1])\n"
                + (LOGS / "gather_dyn.cpu.oob.log").read_text()).candidates
    assert c.key == "why.index.value" and "9 is outside [0, 6)" in c.cause  # by the exported program's names


def test_keywords_and_printed_shapes():
    ev = read_evidence("x.shape = (6, 8)\nidx: torch.Size([3])\ny.size() = [0, 4]\nblock: [0,0,0]\n"
                       "out = m(torch.randn(6, 8), idx=torch.tensor([7, 1, 2]))")
    by = {o.name or o.position: o for o in ev.args}
    assert by[0].shape == (6, 8)
    assert (by["idx"].shape, by["idx"].high) == ((3,), 7)  # the call wins over the printed shape
    assert by["y"].shape == (0, 4) and "x" in by and "block" not in by


@pytest.mark.parametrize("text", [
    "out = f(*args, **kwargs)", "x = torch.randn(n, 8)", "f(torch.randn(" + "(" * 300 + "))",
    "f(torch.tensor([[1, 2], [3]]))", "import os; os.system('rm -rf /')", "f(torch.randn(-1, 3))",
    "f(torch.arange(0, 1e300, 1e-300))", "f(torch.arange(0, 10, 0))", "f(torch.arange(1e30))",
    "f(torch.randn(" + "1, " * 40 + "1))",  # more dims than any tensor has
])
def test_no_evidence_from_what_it_cannot_read(text):
    assert not read_evidence(text)


def test_hostile_lines_stay_linear():
    text = "\n".join(["x.shape = (" * 20_000, "a" * 200_000, "torch.(" * 30_000, " " * 200_000,
                      "f(torch.tensor([" + "1, " * 600 + "]))"])
    start = time.perf_counter()
    read_evidence(text)
    assert time.perf_counter() - start < 2.0


# -- ranking --------------------------------------------------------------------------------------

def test_cuda_log_leads_with_the_out_of_range_value():
    if not CUDA_LOG.exists():
        pytest.skip("../shared/logs is not present")
    (c,) = _why(CUDA_PKG, CUDA_LOG.read_text()).candidates
    assert c.cause.startswith("a value of input 1 (idx) was outside [0, x.shape[0])")
    assert "was empty" not in c.cause
    assert "input 0 (x) of shape (6, 8)" in c.cause and "9 is outside [0, 6)" in c.cause


def test_committed_cpu_logs_without_the_call_keep_both_causes():
    # Nothing in these logs tells an empty x from an out-of-range idx: the answer says both.
    for log in ("gather_dyn.cpu.empty.log", "gather_dyn.cpu.oob.log"):
        (c,) = _why(CPU_PKG, (LOGS / log).read_text()).candidates
        assert c.key == "why.index.zero" and "; otherwise a value of input 1 (idx)" in c.cause
        assert c.evidence == "" and not c.ruled_out


def test_cpu_logs_with_their_call_rank_differently():
    empty = _why(CPU_PKG, _with_call("gather_dyn.cpu.empty.log",
                                     "out = compiled(torch.randn(0, 8), torch.tensor([0, 0, 0]))")).candidates[0]
    oob = _why(CPU_PKG, _with_call("gather_dyn.cpu.oob.log",
                                   "out = compiled(torch.randn(10, 8), torch.tensor([12]))")).candidates[0]
    assert empty.key == "why.index.zero" and empty.cause.startswith("input 0 dim 0 (x.shape[0]) was empty")
    assert "otherwise" not in empty.cause and "of shape (0, 8)" in empty.cause
    assert "x.shape[0] == 0" in empty.fix
    assert oob.key == "why.index.value" and oob.cause.startswith("a value of input 1 (idx) was outside")
    assert "was empty" not in oob.cause and "12 is outside [0, 10)" in oob.cause
    assert "x.shape[0] == 0" not in oob.fix


def test_shape_alone_rules_out_empty():
    (c,) = _why(CPU_PKG, _with_call("gather_dyn.cpu.oob.log", "out = compiled(torch.randn(10, 8), idx)")).candidates
    assert c.key == "why.index.value" and "was empty" not in c.cause
    assert "of shape (10, 8)" in c.cause and "was 10" in c.cause and not c.ruled_out


def test_values_inside_the_bound_rank_the_cause_last():
    text = _with_call("gather_static.cpu.oob.log", "out = compiled(torch.randn(10, 8), torch.tensor([1, 2, 3, 4]))")
    (c,) = _why(FIXTURES / "gather_static.cpu.stripped.pt2", text, FIXTURES / "gather_static.ep.pt2").candidates
    assert c.ruled_out and "rule this out" in c.cause and "1..4 is inside [0, 10)" in c.cause


def test_ruled_out_candidate_goes_last():
    from tests.test_why import _gather_model, _package
    ok, bad = _gather_model("cuda"), _gather_model("cuda")
    ok.name, bad.name = "first", "second"
    # In `first` the index reads input 0's values: the log shows them inside its bound.
    ok.assertions[0].index_sources = (0,)
    ok.inputs[0].dtype = "int64"
    text = "out = f(torch.ones(6, 8, dtype=torch.int64), torch.full((3,), 9))\n" + ok.assertions[0].message
    candidates = explain_failure(_package(ok, bad), text).candidates
    assert [c.model for c in candidates] == ["second", "first"]
    assert candidates[1].ruled_out and not candidates[0].ruled_out


def test_cli_json_and_text():
    if not CUDA_LOG.exists():
        pytest.skip("../shared/logs is not present")
    runner = CliRunner()
    out = runner.invoke(cli, ["why", str(CUDA_PKG), "--log", str(CUDA_LOG), "--format", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert [o["shape"] for o in doc["observed"]] == [[6, 8], [3]]
    assert doc["observed"][1]["min"] == doc["observed"][1]["max"] == 9
    (c,) = doc["candidates"]
    assert c["evidence"]["ruled_out"] is False and "9 is outside [0, 6)" in c["evidence"]["facts"]
    text = runner.invoke(cli, ["why", str(CUDA_PKG), "--log", str(CUDA_LOG)]).output
    assert "cause:   a value of input 1 (arg1_1) was outside [0, arg0_1.size(0)); the log shows" in text
    plain = runner.invoke(cli, ["why", str(CPU_PKG), "--log", str(LOGS / "gather_dyn.cpu.oob.log"),
                                 "--format", "json"])
    assert json.loads(plain.output)["observed"] == [] and json.loads(plain.output)["candidates"][0]["evidence"] is None


@pytest.mark.parametrize("seq, past", [(600, True), (100, False)])
def test_an_iteration_range_the_log_shows(seq, past):
    text = _with_call("pos_embedding.cpu.seq600.log", f"out = compiled(torch.randn(2, {seq}, 16))")
    (c,) = _why(FIXTURES / "pos_embedding.cpu.stripped.pt2", text, FIXTURES / "pos_embedding.ep.pt2").candidates
    assert c.cause.startswith("input 0 dim 1 (x.shape[1]) was above 512")
    assert f"of shape (2, {seq}, 16), so tmp2 ran over [0, {seq}), " + ("past 512" if past else "within 512") in c.cause
    assert c.ruled_out is not past
