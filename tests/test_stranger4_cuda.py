"""fixtures/stranger4/cuda: six of stranger4's models compiled for CUDA on an H200 (torch 2.11), checked
with the exported programs of their CPU builds, against what the same models did on the GPU under
`torch.compile(dynamic=True)` (runtime.cuda.json, probe_compile.py; `aoti_load_package` cannot run
there).

The findings are the CPU packages' (tests/test_stranger4.py), but where the device or the torch
version changes what the package shows, each difference named below with why.
"""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from analyzer.app import api
from conftest import FIXTURES, pin

HERE = FIXTURES / "stranger4" / "cuda"
NAMES = ["packed_pos", "gcn", "tdnn", "expert_choice", "dlrm", "linear_scan"]


@lru_cache(maxsize=None)
def _lint(name: str, device: str) -> tuple:
    pkg = HERE / f"{name}.cuda.stripped.pt2" if device == "cuda" else FIXTURES / "stranger4" / f"{name}.cpu.stripped.pt2"
    return tuple(api.lint(str(pkg), api.Options(exported_program=str(FIXTURES / "stranger4" / f"{name}.ep.pt2"))).findings)


def _pins(name: str, device: str) -> set[tuple]:
    return {pin(f) for f in _lint(name, device)}


# (name) -> (only on CPU, only on CUDA), each with why.
DIFFERENCES: dict[str, tuple[set[tuple], set[tuple]]] = {
    # The same table overflow at an unpacked row of 65 tokens: on CPU the check aborts inside an OpenMP
    # region (SIGABRT, where eager raises IndexError), on CUDA it device-asserts as eager's own lookup
    # does (runtime.cuda.json: eager and the compiled model both assert at seq 65): an info.
    "packed_pos": ({("AOTI003", "error", ((0, 1),))}, {("AOTI003", "info", ((0, 1),))}),
    # Inductor compiled the CPU batch for [2, 15] and the CUDA one for [2, 16] (the declared max).
    "tdnn": ({("AOTI010", "info", ((0, 0),))}, set()),
    # dlrm: torch 2.13's run_impl ties off0/off1 to dense's batch (`assert_size_stride(arg12_1, {s37, }, ...)`,
    # with the variable); torch 2.11 writes no such assert: the exported program's shared Dim ties them.
}


@pytest.mark.parametrize("name", NAMES)
def test_cuda_findings_are_the_cpu_ones_but_the_named_differences(name: str) -> None:
    cpu, cuda = _pins(name, "cpu"), _pins(name, "cuda")
    only_cpu, only_cuda = DIFFERENCES.get(name, (set(), set()))
    assert cpu - cuda == only_cpu and cuda - cpu == only_cuda, (sorted(cpu - cuda), sorted(cuda - cpu))


@lru_cache(maxsize=None)
def _records() -> tuple[dict, ...]:
    return tuple(json.loads((HERE / "runtime.cuda.json").read_text()))


def _record(name: str, label: str) -> dict:
    (record,) = [r for r in _records() if r["name"] == name and r["label"] == label]
    return record


def test_every_model_was_probed_on_the_gpu_at_0_1_and_past_its_max() -> None:
    labels = {(r["name"], r["label"]) for r in _records()}
    assert {("packed_pos", f"seq={s}") for s in ("0", "1", "max+1", "64", "65")} <= labels
    assert all(("gcn", f"{d}={s}") in labels for d in "ne" for s in ("0", "1", "max+1"))
    assert not [r for r in _records() if "died" in r]


def test_the_cummax_positions_device_assert_at_65_tokens_as_eager_does() -> None:
    """The CUDA package's cummax is a Triton scan whose helper selects (value, index) pairs: the
    running max keeps [0, seq - 1], so the position reaches seq - 1 past the 64-row table at 65."""
    (f,) = [f for f in _lint("packed_pos", "cuda") if f.code == "AOTI003"]
    assert f.witness == "ids.shape = (2, 65)" and f.message.endswith("(eager rejects it too)")
    assert any("written by triton_per_fused_arange_cummax" in line and "[0, max(s27 - 1, 0)]" in line
               for line in f.chain)
    for label in ("seq=65", "seq=max+1"):
        record = _record("packed_pos", label)
        assert not record["eager"]["ok"] and "device-side assert" in record["compiled"]["error"], record
    assert _record("packed_pos", "seq=64")["compiled"]["matches_eager"]


def test_what_runs_like_eager_on_the_gpu_gets_no_finding_above_info() -> None:
    """Every CUDA package's findings are infos; on the GPU each model ran like eager (or failed as
    eager did) at every probe, but gcn at n = 1, whose 0.15 differs by float atomics' order (the
    CPU package at n = 1 matches eager exactly), and tdnn at t = 15 (NaN in both: the std of one frame)."""
    for name in NAMES:
        assert {str(f.severity) for f in _lint(name, "cuda")} == {"info"}, name
    for r in _records():
        eager, compiled = r["eager"], r["compiled"]
        if (r["name"], r["label"]) in {("gcn", "n=1"), ("tdnn", "t=15")}:
            continue
        assert compiled["ok"] == eager["ok"] and compiled.get("matches_eager", True), r
