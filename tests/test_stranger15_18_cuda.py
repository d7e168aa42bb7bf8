"""fixtures/stranger15-18/cuda: the models of rounds 15 to 18 compiled for CUDA with torch 2.11 on an H100
(`fixtures/real/generate.py --device cuda`, 2026-12-06), linted with the exported programs of their CPU
builds (the same models and dims). Not run: `aoti_load_package` is unusable on that machine, so the CPU
packages' probes (each round's runtime.json) stand for what the sizes do. Did not build for CUDA: yoso,
timesformer and starcoder2 (torch 2.11's export found guards the declared ranges break: `min(16*seq,
32*seq) == 16*seq` and the like), codegen (a reshape to `[2, s27, 4, 0, 16]`), rnnt_joint (an
`AssertionError` inside Inductor), jagged_dense and segsum (`InductorError: AcceleratorError: CUDA error:
device-side assert triggered` while compiling; not looked into).

The findings are the CPU packages' but for the differences named below, each with why. These packages
showed four faults of the CUDA reading, fixed with them:
- a one-sided check of an index Inductor proved non-negative, written inline, `tl_math.abs(r0_3 +
  ((-1)*x0)) < 64` (clamp_relpos' distance table), was an unlinked assertion, and the table read it
  guards was reported as a silent read past the table (AOTI013) instead of the device assert it is;
- a clamp printed as products with comparisons, `((y0) * ((y0) <= ((-1) + ks1)) + ((-1) + ks1) *
  (((-1) + ks1) < (y0))) < ks1` (delay_pattern's gather), was an unlinked assertion;
- Python's modulo in Triton, `where((r != 0) & (sign(r) != sign(b)), r + b, r)` of `r = a % b`, with the
  sign test written `(libdevice.signbit(r) != 0) if (r).dtype is tl.float32 else r < 0`, read as
  reaching 2b - 1: autocorr's `(i + lag) % t` an AOTI015 info, hash_slice's `ids % m` a read past its
  64-row table (AOTI013) at m = 33;
- calls through the proxy executor of ops that fail on no value (`aten._conj`, `aten.clone` of the
  FFT's spectrum) were AOTI011 warnings.
"""

from __future__ import annotations

import pytest

from conftest import FIXTURES, pin
from stranger_harness import Round

ROUNDS = {
    15: ["bucketize", "canine", "dcn", "nystromformer", "pegasus_x", "ptr_net", "two_tower", "univnet"],
    16: ["clamp_relpos", "hiera", "levit", "one_hot_codes", "unfold_local"],
    17: ["coo_spmm", "hash_slice", "kmax_pool", "pvt_v2", "rembert"],
    18: ["autocorr", "deepfm", "degree_emb", "delay_pattern", "dilated_na", "encodec", "longt5", "sasrec"],
}
CASES = [(r, name) for r, names in ROUNDS.items() for name in names]
_ROUND = {r: Round(FIXTURES / f"stranger{r}") for r in ROUNDS}

# A check that aborts inside an OpenMP region on CPU (an error where eager raises IndexError) is a
# device-side assert on CUDA, as eager's own CUDA lookup: an info.
_ASSERT = "the check aborts on CPU, a device-side assert on CUDA as eager's lookup"
# (round, name) -> (CPU only, CUDA only), each with why
DIFFERENCES: dict[tuple[int, str], tuple[set[tuple], set[tuple]]] = {
    # batch = 0: the CUDA attention's row max over no keys returns -inf where eager's reshape raises;
    # the CPU kernels take the max elsewhere.
    (15, "nystromformer"): (set(), {("AOTI005", "warning", ((0, 0),))}),
    # A CPU transpose kernel reads the empty mel; the CUDA build has none.
    (15, "univnet"): ({("AOTI018", "info", ((0, 1),))}, set()),
    (16, "clamp_relpos"): ({("AOTI003", "error", ((0, 1),))}, {("AOTI003", "info", ((0, 1),))}),   # _ASSERT
    # t = 0 (outside the declared [8, 256]): the CUDA gathers' checks against t are reported, the CPU
    # build's like checks are not; both infos: the checked `aoti_torch_cuda_topk(..., 8L, ...)` before them
    # raises for t < 8, as eager's topk does (one was a warning until top-k's own check was known).
    (17, "kmax_pool"): (set(), {("AOTI001", "info", ((0, 1),))}),
    # The CPU build was compiled for h <= 4100, the CUDA one for any h.
    (17, "pvt_v2"): ({("AOTI010", "info", ((0, 2),))}, set()),
    # CPU's flash attention divides by zero at seq = 0 (SIGFPE); CUDA's returns.
    (17, "rembert"): ({("AOTI002", "error", ((0, 1),))}, {("AOTI002", "info", ((0, 1),))}),
    # The inverse FFT through the proxy executor, its error code discarded.
    (18, "autocorr"): (set(), {("AOTI011", "warning", ())}),
    (18, "degree_emb"): ({("AOTI001", "error", ((0, 0),))}, {("AOTI001", "info", ((0, 0),))}),   # _ASSERT
    (18, "delay_pattern"): ({("AOTI003", "error", ((0, 2),))}, {("AOTI003", "info", ((0, 2),))}),   # _ASSERT
    # oneDNN's LSTM divides by the batch on CPU (SIGFPE at 0), cuDNN's does not; a CPU pad kernel reads
    # the empty audio; the CUDA build was compiled for n up to int32's range.
    (18, "encodec"): ({("AOTI002", "error", ((0, 0), (0, 2))), ("AOTI018", "info", ((0, 2),))},
                      {("AOTI002", "info", ((0, 0), (0, 2))), ("AOTI010", "info", ((0, 2),))}),
    # seq = 0 (outside the compiled [8, inf)): a Triton kernel divides by it; on CPU run_impl raises first.
    (18, "longt5"): (set(), {("AOTI004", "info", ((0, 1),))}),
    (18, "sasrec"): ({("AOTI003", "error", ((0, 1),))}, {("AOTI003", "info", ((0, 1),))}),   # _ASSERT
}


@pytest.mark.parametrize(("round_", "name"), CASES, ids=[f"{r}/{n}" for r, n in CASES])
def test_cuda_findings_are_the_cpu_ones_but_the_named_differences(round_: int, name: str) -> None:
    rnd = _ROUND[round_]
    cpu, cuda = {pin(f) for f in rnd.lint(name)}, {pin(f) for f in rnd.lint_cuda(name)}
    only_cpu, only_cuda = DIFFERENCES.get((round_, name), (set(), set()))
    assert cpu - cuda == only_cpu and cuda - cpu == only_cuda, (sorted(cpu - cuda), sorted(cuda - cpu))


def test_an_inline_abs_index_is_linked_and_its_table_read_is_checked() -> None:
    found = _ROUND[16].lint_cuda("clamp_relpos")
    assert not [f for f in found if f.code in ("AOTI008", "AOTI013")]
    (f,) = [f for f in found if f.code == "AOTI003"]
    assert f.witness == "x.shape = (3, 65, 32)" and "tl_math.abs(" in f.detail


def test_a_clamp_written_with_comparisons_is_linked() -> None:
    assert not [f for f in _ROUND[18].lint_cuda("delay_pattern") if f.code == "AOTI008"]


def test_pythons_modulo_in_triton_stays_below_the_divisor() -> None:
    """autocorr's `(i + lag) % t` gathers inside [0, t); hash_slice's `ids % m` (ids of any sign) reads the
    64-row table at most at m - 1, and a kernel check `0 <= tmp14 < 64` guards that read."""
    assert not [f for f in _ROUND[18].lint_cuda("autocorr") if f.code == "AOTI015"]
    assert not [f for f in _ROUND[17].lint_cuda("hash_slice") if f.code == "AOTI013"]


def test_proxy_calls_that_fail_on_no_value_are_not_unchecked_calls() -> None:
    calls = [f.message for f in _ROUND[18].lint_cuda("autocorr") if f.code == "AOTI011"]
    assert calls == ["errors of `aten._fft_c2r` are discarded: partial result, no message"]
