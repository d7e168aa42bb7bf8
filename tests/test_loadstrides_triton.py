"""Triton loads stepped along a divisor of the flattened index (analyzer/parse/loadstrides.py's
`triton_stride_pairs`), from kernel sources written as Inductor writes them."""

from __future__ import annotations

from analyzer.parse.loadstrides import triton_stride_pairs

# The CUDA ball query's first kernel (torch 2.11), trimmed: centroids and points of one buffer.
BALL_QUERY = """\
@triton.jit
def triton_poi_fused_neg_pow_slice_sub_sum_unsqueeze_0(in_ptr0, out_ptr0, ks0, ks1, xnumel, XBLOCK : tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x3 = xindex // ks0
    x0 = (xindex % ks0)
    x2 = xindex // ks1
    tmp0 = tl.load(in_ptr0 + (12*x3), xmask, eviction_policy='evict_last')
    tmp1 = tl.load(in_ptr0 + (3*x0 + 3*ks0*x2), xmask, eviction_policy='evict_last')
    tl.store(out_ptr0 + (x0), tmp0 - tmp1, xmask)
"""


def test_the_batch_step_of_two_loads_of_one_buffer() -> None:
    pairs = {(p.pointer, p.var): (p.first, p.second) for p in triton_stride_pairs(BALL_QUERY, "w.cpp", 100, 4)}
    assert pairs[("in_ptr0", "xindex // ks1")] == ("12 * (ks1 // ks0)", "3 * (ks1 % ks0) + 3 * ks0 - 3 * ks0 * 0")
    (located,) = [p for p in triton_stride_pairs(BALL_QUERY, "w.cpp", 100, 4) if p.var == "xindex // ks1"]
    assert located.location.line == 109 and located.location.column == 5


def test_kernels_without_a_second_load_or_a_size_digit_give_nothing() -> None:
    one_load = BALL_QUERY.replace("tmp1 = tl.load(in_ptr0 + (3*x0 + 3*ks0*x2), xmask, eviction_policy='evict_last')",
                                  "tmp1 = tmp0")
    assert triton_stride_pairs(one_load, "w.cpp", 1, 0) == []
    static = BALL_QUERY.replace("xindex // ks0", "xindex // 16").replace("xindex // ks1", "xindex // 64")
    assert triton_stride_pairs(static, "w.cpp", 1, 0) == []
    # A load through data (`tmp4`) is not an index of digits: not compared.
    data = BALL_QUERY.replace("(12*x3)", "(12*tmp4)")
    assert [p for p in triton_stride_pairs(data, "w.cpp", 1, 0)] == []
