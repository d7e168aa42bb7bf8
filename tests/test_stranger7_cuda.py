"""Five of the seventh stranger round's families compiled for CUDA with torch 2.11 on an H200
(fixtures/stranger7/cuda), linted with the CPU build's exported program (the same model and dims).
Run-time truth on the GPU is `torch.compile(dynamic=True)` of the same model against eager
(fixtures/stranger7/cuda_truth.py, one size per process; `aoti_load_package` crashes on that machine):
`cuda_truth.jsonl`."""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from analyzer.app import api
from conftest import FIXTURES, pin

FOLDER = FIXTURES / "stranger7" / "cuda"

FINDINGS: dict[str, set[tuple]] = {
    "roformer": {
        ("AOTI002", "info", ((0, 1),)),
        ("AOTI003", "info", ((0, 1),)),      # 65: a device-side assert, as eager's own lookup
        # The rotary table's check `tl.broadcast_to(x3, [YBLOCK, XBLOCK]) < 64` (a kernel tiled over two
        # axes) is linked: it fails before the kernel reads past the 64-row table (AOTI003's, above).
        ("AOTI019", "info", ()),
    },
    "tcn": {("AOTI002", "info", ((0, 0), (0, 2))), ("AOTI019", "info", ())},
    "regnet": {("AOTI002", "info", ((0, 0), (0, 2), (0, 3))), ("AOTI019", "info", ())},
    # No AOTI014: `ps0 = s0 // 8` is the k8 s8 patch convolution's own output size (runs like eager).
    "yolos": {("AOTI002", "info", ((0, 0), (0, 2), (0, 3))), ("AOTI019", "info", ())},
    "sage_mean": {
        ("AOTI001", "info", ((0, 0),)),
        ("AOTI002", "info", ((0, 0), (1, 1))),
        ("AOTI011", "warning", ()),          # bincount through the proxy executor, its error code unchecked
        ("AOTI019", "info", ()),
    },
}


@lru_cache(maxsize=None)
def _lint(name: str) -> tuple:
    return tuple(api.lint(str(FOLDER / f"{name}.cuda.stripped.pt2"),
                          api.Options(select=("ALL",), exported_program=str(FIXTURES / "stranger7" / f"{name}.ep.pt2"))).findings)


@lru_cache(maxsize=None)
def _truth() -> tuple[dict, ...]:
    return tuple(json.loads(line) for line in (FOLDER / "cuda_truth.jsonl").read_text().splitlines() if line.strip())


@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_findings_are_pinned(name: str) -> None:
    assert {pin(f) for f in _lint(name)} == FINDINGS[name]


def test_a_patch_convolution_floor_is_not_a_multiple_the_package_assumes() -> None:
    """YOLOS on CUDA reads `int64_t ps0 = c10::div_floor_integer(s0, 8L)` for its position-embedding
    interpolation; the k8 s8 patch convolution floors the same way, and the compiled model at
    widths and heights of no multiple of 8 returns eager's values on the GPU."""
    assert not [f for f in _lint("yolos") if f.code == "AOTI014"]
    odd = [r for r in _truth() if r["name"] == "yolos" and (r["sizes"]["h"] % 8 or r["sizes"]["w"] % 8)]
    assert len(odd) == 4 and all(r["eager"] == "ok" and r["compiled"] == "like eager" for r in odd)


def test_a_sequence_past_the_rotary_table_device_asserts() -> None:
    for f in _lint("roformer"):
        if f.code in ("AOTI003", "AOTI013"):
            assert f.witness == "x.shape = (2, 65)"
    past = [r for r in _truth() if r["name"] == "roformer" and r["sizes"]["seq"] > 64]
    assert past and all("device-side assert" in r["compiled"] for r in past)
    assert all(r["compiled"] == "like eager" for r in _truth() if r["name"] == "roformer" and r["sizes"]["seq"] <= 64)
