"""fixtures/stranger14/cuda: seven of the fourteenth round's models (ERNIE, SwitchTransformers, the grid
attention, DIN, EdgeConv, top-p sampling, the chunked attention) compiled for CUDA with torch 2.11 on an
H100, linted with the exported programs of their CPU builds (the same models and dims). Not run:
`aoti_load_package` is unusable on that machine, so the CPU packages' probes
(fixtures/stranger14/runtime.json) stand for what the sizes do. FSMT, hist_bins and the keypoint head did
not build for CUDA (export refused FSMT's ranges; hist_bins and keypoint build CPU tensors in forward or
use cuDNN's grid sampler), nor did round 13's Pix2Struct.

The findings are the CPU packages' (tests/test_stranger14.py) but for the differences named below, each
with why. These packages showed three faults of the CUDA reading, fixed with them: EdgeConv's pairwise
distances read `pts` at steps `3*(n*n // n)` and `3*n`, which the interval arithmetic took for 144 and
147 at n = 49 (a quotient computed as a product with 1/49, floored one too low): an AOTI022 error on
equal strides; the grid attention kept `16 + 16*((w - 1)//8) < (4 + 4*((w - 1)//8))*(4 + 4*((h - 1)//8))`,
export's "more than one row of windows" scaled by the row's width, an AOTI020 error at h = 2 (on CPU, h =
1 and 7 run like eager); top-p sampling scatters its kept mask back by the sort's own indices, an AOTI011
warning about an index that is always in range.
"""

from __future__ import annotations

import pytest

from analyzer.app import api
from analyzer.core.model import DimRef
from conftest import FIXTURES, pin
from stranger_harness import Round, outcome

ROUND = Round(FIXTURES / "stranger14")
NAMES = ["ernie", "switch", "maxvit_grid", "din", "edgeconv", "nucleus", "chunk_attn"]


def _lint(name: str, device: str) -> tuple:
    return ROUND.lint_cuda(name) if device == "cuda" else ROUND.lint(name)


def _pins(name: str, device: str) -> set[tuple]:
    return {pin(f) for f in _lint(name, device)}


# name -> (CPU only, CUDA only)
DIFFERENCES: dict[str, tuple[set[tuple], set[tuple]]] = {
    # CPU's flash attention divides by zero at seq = 0 (SIGFPE, probed): an error there, an info on CUDA.
    "ernie": ({("AOTI002", "error", ((0, 1),))}, {("AOTI002", "info", ((0, 1),))}),
    # The chunk table's check aborts inside an OpenMP region on CPU (an error past 128 tokens); on CUDA it
    # is a device assert, as eager's own lookup raises: an info.
    "chunk_attn": ({("AOTI003", "error", ((0, 1),))}, {("AOTI003", "info", ((0, 1),))}),
    # Both outside the declared n >= 8: the amax over an empty cloud and run_impl's division by n (the
    # CPU kernels reduce and divide elsewhere).
    "edgeconv": (set(), {("AOTI005", "info", ((0, 1),)), ("AOTI004", "info", ((0, 1),))}),
}


@pytest.mark.parametrize("name", NAMES)
def test_cuda_findings_are_the_cpu_ones_but_the_named_differences(name: str) -> None:
    cpu, cuda = _pins(name, "cpu"), _pins(name, "cuda")
    only_cpu, only_cuda = DIFFERENCES.get(name, (set(), set()))
    assert cpu - cuda == only_cpu and cuda - cpu == only_cuda, (sorted(cpu - cuda), sorted(cuda - cpu))


def test_equal_strides_with_a_quotient_are_equal() -> None:
    """EdgeConv's distance kernel loads point i at `3*x3` (`x3 = xindex // n`) and point j at `3*x0 +
    3*n*x2` (`x2 = xindex // (n*n)`): along a batch both step 3n. No AOTI022."""
    assert not [f for f in _lint("edgeconv", "cuda") if f.code == "AOTI022"]


def test_one_row_of_windows_scaled_by_the_width_is_no_guard_finding() -> None:
    """torch 2.11 compiled the grid attention for h >= 2 (2.13: 9) and kept `4 W' < W' H'` (H' the padded
    height, a multiple of 4): broken at h = 2..8 (one row of windows), which CPU runs like eager."""
    model = api.load(str(ROUND.folder / "cuda" / "maxvit_grid.cuda.stripped.pt2"),
                     api.Options(exported_program=str(ROUND.folder / "maxvit_grid.ep.pt2"))).models[0]
    assert model.dim(DimRef(0, 2)).min == 2
    assert any(g.startswith("16 + 16*(((-1) + L['x'].size()[3]) // 8) < ") for g in model.guards)
    assert not [f for f in _lint("maxvit_grid", "cuda") if f.code == "AOTI020"]
    for label in ("h=1", "h=7"):
        assert outcome(ROUND.record("maxvit_grid", label)) == "ran", label


def test_a_scatter_by_the_sorts_own_indices_is_not_an_unchecked_call() -> None:
    """Top-p sampling: `aoti_torch_cuda_scatter_src_out(buf7, buf7, 1, buf3, buf8)` without an error check,
    its index `buf3` the indices `aoti_torch_cuda_sort_stable` returned along the same dim of a tensor of
    the same sizes: never out of range. No AOTI011."""
    assert not [f for f in _lint("nucleus", "cuda") if f.code == "AOTI011"]
