"""fixtures/stranger19/cuda to fixtures/stranger21/cuda: the models of rounds 19 to 21 compiled for CUDA with
torch 2.11 on an H100 (`fixtures/real/generate.py --device cuda`, 2026-12-06), linted with the exported
programs of their CPU builds (the same models and dims). Not run: `aoti_load_package` is unusable on that
machine, so the CPU packages' probes (each round's runtime.json) stand for what the sizes do. Did not build
for CUDA: tisasrec and runlen_pos (`InductorError: AcceleratorError: CUDA error: device-side assert
triggered` while compiling; not looked into).

The findings are the CPU packages' but for the differences named below, each with why.
"""

from __future__ import annotations

import pytest

from conftest import FIXTURES, pin
from stranger_harness import Round

ROUNDS = {
    19: ["qwen3", "hubert", "swin2sr", "xlmr_xl", "segment_csr", "sort_pool", "pos_interp", "hrnet_fuse",
         "graph_readout"],
    20: ["megatron_bert", "mamba2", "reflect_pad", "histc_table", "cummax_table", "order_stats", "ceil_pool1d",
         "pixel_unshuffle", "index_copy", "lag_features"],
    21: ["bit", "splinter", "dilated_pool", "avg_ceil2d", "index_reduce", "masked_scatter", "scatter_mul",
         "roll_window", "frac_interp", "tensor_unfold", "neg_pad"],
}
CASES = [(r, name) for r, names in ROUNDS.items() for name in names]
_ROUND = {r: Round(FIXTURES / f"stranger{r}") for r in ROUNDS}

# A check that aborts inside an OpenMP region on CPU (an error where eager raises IndexError) is a
# device-side assert on CUDA, as eager's own CUDA lookup: an info.
_ASSERT = "the check aborts on CPU, a device-side assert on CUDA as eager's lookup"
# (round, name) -> (CPU only, CUDA only), each with why
DIFFERENCES: dict[tuple[int, str], tuple[set[tuple], set[tuple]]] = {
    (19, "xlmr_xl"): ({("AOTI003", "error", ((0, 1),))}, {("AOTI003", "info", ((0, 1),))}),   # _ASSERT
    (19, "pos_interp"): ({("AOTI003", "error", ((0, 2),)), ("AOTI003", "error", ((0, 3),))},
                         {("AOTI003", "info", ((0, 2),)), ("AOTI003", "info", ((0, 3),))}),   # _ASSERT
    (19, "graph_readout"): ({("AOTI001", "error", ((2, 0),))}, {("AOTI001", "info", ((2, 0),))}),   # _ASSERT
    # nb = 1: CPU reads repeat_interleave's short output before its check (a warning: outside the declared
    # [3, 33]); on CUDA the device assert where eager raises too is what is seen: an info.
    (19, "segment_csr"): ({("AOTI001", "warning", ((1, 0),))}, {("AOTI001", "info", ((1, 0),))}),
    # n = 0 (below the declared 10; both infos): the CPU mean's division by the empty count is seen, on
    # CUDA a gather's check against n instead.
    # n > 64, the rank into 64 rows: the CPU second sort's input shape is the one the wrapper asserts for the
    # first's indices; the CUDA wrapper (torch 2.11) asserts none.
    (19, "sort_pool"): ({("AOTI004", "info", ((0, 0),)), ("AOTI003", "info", ((0, 0),))},
                        {("AOTI001", "info", ((0, 0),))}),
    # The CPU group norm divides by the empty frame count in a kernel; the CPU build was compiled for
    # n <= 40979, the CUDA one for any n.
    (19, "hubert"): ({("AOTI004", "info", ((0, 1),)), ("AOTI010", "info", ((0, 1),))}, set()),
    # CPU's flash attention divides by zero at seq = 0 (SIGFPE); CUDA's returns. The table check: _ASSERT.
    (20, "megatron_bert"): ({("AOTI002", "error", ((0, 1),)), ("AOTI003", "error", ((0, 1),))},
                            {("AOTI002", "info", ((0, 1),)), ("AOTI003", "info", ((0, 1),))}),
    # seq = 0 (eager raises in the causal conv first): a Triton kernel's integer division by the chunk count.
    (20, "mamba2"): (set(), {("AOTI004", "info", ((0, 1),))}),
    # The median through the proxy executor, its error code discarded by torch 2.11's CUDA wrapper.
    (20, "order_stats"): (set(), {("AOTI011", "warning", ())}),
    # n = 0: the CPU reflection-pad kernel's read of the empty row is seen; the CUDA one, fused with the
    # convolution's input copy, gives no such finding (not looked into; both below the declared 4).
    (20, "reflect_pad"): ({("AOTI018", "info", ((0, 2),))}, set()),
    (21, "splinter"): ({("AOTI003", "error", ((0, 1),))}, {("AOTI003", "info", ((0, 1),))}),   # _ASSERT
    (21, "frac_interp"): ({("AOTI003", "error", ((0, 2),))}, {("AOTI003", "info", ((0, 2),))}),   # _ASSERT
    # l > 36: the 16-row frame table read at the frame count; the CPU check is seen, the Triton one is not
    # (not looked into; both raise where eager does: an info on CPU).
    (21, "tensor_unfold"): ({("AOTI003", "info", ((0, 1),))}, set()),
}


@pytest.mark.parametrize(("round_", "name"), CASES, ids=[f"{r}/{n}" for r, n in CASES])
def test_cuda_findings_are_the_cpu_ones_but_the_named_differences(round_: int, name: str) -> None:
    rnd = _ROUND[round_]
    cpu, cuda = {pin(f) for f in rnd.lint(name)}, {pin(f) for f in rnd.lint_cuda(name)}
    only_cpu, only_cuda = DIFFERENCES.get((round_, name), (set(), set()))
    assert cpu - cuda == only_cpu and cuda - cpu == only_cuda, (sorted(cpu - cuda), sorted(cuda - cpu))


def test_ceil_mode_pools_are_read_in_triton_packages_too() -> None:
    """The rounding is derived from the exported program; the CUDA builds' Triton kernels are named for
    the ops as the C++ ones are: hrnet_fuse's width (compiled down to w = 7 on CUDA, 9 on CPU: its smallest
    breaking width is 7 there) and ceil_pool1d's two poolings."""
    (hrnet,) = [f for f in _ROUND[19].lint_cuda("hrnet_fuse") if f.code == "AOTI023"]
    assert hrnet.witness == "x.shape = (3, 8, 7, 7)" and hrnet.kernel.startswith("triton_")
    pools = [f for f in _ROUND[20].lint_cuda("ceil_pool1d") if f.code == "AOTI023"]
    assert sorted(f.subject.op for f in pools) == ["avg_pool1d", "max_pool2d"]
    # Round 21's dilated and padded poolings: the CUDA builds were compiled down to smaller sizes, so their
    # smallest breaking heights are smaller than the CPU builds' (6 and 4 there, both probed: wrong).
    for name, witness in (("dilated_pool", "x.shape = (3, 8, 4, 5)"), ("avg_ceil2d", "x.shape = (3, 8, 2, 3)")):
        (f,) = [f for f in _ROUND[21].lint_cuda(name) if f.code == "AOTI023"]
        assert f.witness == witness, name


def test_proxy_median_is_an_unchecked_call() -> None:
    calls = [f.message for f in _ROUND[20].lint_cuda("order_stats") if f.code == "AOTI011"]
    assert calls == ["errors of `aten.median` are discarded: partial result, no message"]
