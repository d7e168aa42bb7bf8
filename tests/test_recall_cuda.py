"""fixtures/recall/cuda: the data-derived index packages compiled for CUDA (torch 2.11, an H200), where
Inductor computes bucketize and argmax inside Triton kernels (`triton_helpers.bucketize_binary_search`,
`max_with_index`) instead of calling ATen: the index ranges come from those helpers, and the findings
are the CPU packages' (tests/test_recall.py). runtime.cuda.json: the same models on the GPU, eager and
`torch.compile(dynamic=True)` (`models.py probe-cuda`), since `aoti_load_package` cannot run there."""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from analyzer.app import api
from conftest import FIXTURES, pin

HERE = FIXTURES / "recall"
NAMES = ["bucketize_table", "argmax_table", "topk_table"]


@lru_cache(maxsize=None)
def _lint(name: str, device: str) -> tuple:
    pkg = HERE / "cuda" / f"{name}.cuda.stripped.pt2" if device == "cuda" else HERE / f"{name}.cpu.stripped.pt2"
    return tuple(api.lint(str(pkg), api.Options(exported_program=str(HERE / f"{name}.ep.pt2"))).findings)


def _pins(name: str, device: str) -> set[tuple]:
    return {pin(f) for f in _lint(name, device)}


@pytest.mark.parametrize("name", NAMES)
def test_cuda_findings_are_the_cpu_ones(name: str) -> None:
    # torch 2.13's run_impl ties vals to boundaries (`assert_size_stride`, with the variable); torch
    # 2.11 writes no such assert for inputs: the tie is the exported program's shared Dim, checked nowhere.
    assert _pins(name, "cpu") == _pins(name, "cuda")


@lru_cache(maxsize=None)
def _records() -> dict[tuple[str, str], dict]:
    return {(r["name"], r["label"]): r for r in json.loads((HERE / "cuda" / "runtime.cuda.json").read_text())}


def test_the_in_kernel_bucketize_reaches_the_boundaries_length() -> None:
    (f,) = [f for f in _lint("bucketize_table", "cuda") if f.code == "AOTI015"]
    assert str(f.severity) == "info" and "`bucketize`" in f.detail
    assert any("in [0, boundaries.shape[0]]" in line for line in f.chain)
    # A value past the last boundary: eager's own lookup device-asserts, as the compiled model does.
    past = _records()[("bucketize_table", "past")]
    assert "device-side assert" in past["eager"] and "device-side assert" in past["compiled"]
    assert _records()[("bucketize_table", "inside")]["compiled"] == "ok (3,)"


@pytest.mark.parametrize("name", ["argmax_table", "topk_table"])
def test_reduction_and_topk_indices_past_the_16_row_table(name: str) -> None:
    (f,) = [f for f in _lint(name, "cuda") if f.code == "AOTI003"]
    assert f.witness == "scores.shape = (3, 17)" and str(f.severity) == "info"
    assert any("reaches that maximum for" in line for line in f.chain)
    n17, n16 = _records()[(name, "n17")], _records()[(name, "n16")]
    assert "device-side assert" in n17["eager"] and "device-side assert" in n17["compiled"]
    assert n16["eager"] == n16["compiled"] and n16["compiled"].startswith("ok")
