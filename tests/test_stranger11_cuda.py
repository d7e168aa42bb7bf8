"""fixtures/stranger11/cuda: three of the eleventh round's vision models (Swin, FocalNet, the cropping
U-Net) compiled for CUDA with torch 2.11 on an H100, linted with the exported programs of their CPU
builds (the same models and dims). Not run: `aoti_load_package` is unusable on that machine, so the
CPU packages' probes (fixtures/stranger11/runtime.json) stand for what the sizes do.

The findings are the CPU packages' (tests/test_stranger11.py) but for the differences named below,
each with why. These packages showed three faults of the CUDA reading, fixed with them: Swin's
cyclic-shift check `((x1 + 4*x3 + ((2 + ks1) % ks1)) % ks1) < 4*ks0` was not linked (an index with
`%`); with no `assert_size_stride` in torch 2.11, Swin's `8 * Dim` multiples were searched past as
guard witnesses (17, 18, 20: seven AOTI020 errors that AOTI014 already says); the U-Net's guard `h >= 10`
was an error at 8, where a convolution raises in eager and in the package alike.
"""

from __future__ import annotations

import pytest

from conftest import FIXTURES, pin
from stranger_harness import Round

ROUND = Round(FIXTURES / "stranger11")
NAMES = ["swin", "focalnet", "unet_crop"]


def _lint(name: str, device: str) -> tuple:
    return ROUND.lint_cuda(name) if device == "cuda" else ROUND.lint(name)


def _pins(name: str, device: str) -> set[tuple]:
    return {pin(f) for f in _lint(name, device)}


# name -> (CPU only, CUDA only)
DIFFERENCES: dict[str, tuple[set[tuple], set[tuple]]] = {
    # torch 2.13 compiled the CPU package for h, w <= 16387 (a 4096-patch limit of its codegen); the
    # CUDA one has no maximum below the declared none.
    "focalnet": ({("AOTI010", "info", ((0, 2),)), ("AOTI010", "info", ((0, 3),))}, set()),
    # The CUDA run_impl computes each padded window count (`div_floor_integer(2*s45 + pad, 4)`) as a
    # launch's size and divides by it: 0 at an empty map, where a convolution raises first (eager too).
    "swin": (set(), {("AOTI004", "info", ((0, 2),)), ("AOTI004", "info", ((0, 3),))}),
    # Compiled for h >= 8 on CUDA (10 on CPU): the guard `2*(h // 2) - 6 >= 3` (h >= 10) is checked by
    # nothing, and at 8 and 9 the decoder's valid convolution gets 2 rows and raises, as in eager (the
    # CPU probes h = 8, 9: the same error in both): an info.
    "unet_crop": (set(), {("AOTI020", "info", ((0, 2),))}),
}


@pytest.mark.parametrize("name", NAMES)
def test_cuda_findings_are_the_cpu_ones_but_the_named_differences(name: str) -> None:
    cpu, cuda = _pins(name, "cpu"), _pins(name, "cuda")
    only_cpu, only_cuda = DIFFERENCES.get(name, (set(), set()))
    assert cpu - cuda == only_cpu and cuda - cpu == only_cuda, (sorted(cpu - cuda), sorted(cuda - cpu))


def test_swin_multiples_are_divisibility_not_guards() -> None:
    """`8 * Dim` for h and w: each non-multiple is AOTI014's (the package reads `s45 = h / 8`); the
    guards AOTI020 reports are those the multiples keep (h = 16 a minimum, 24 a pad), as on CPU."""
    guards = sorted(f.witness for f in _lint("swin", "cuda") if f.code == "AOTI020")
    assert guards == ["x.shape = (2, 3, 16, 32)", "x.shape = (2, 3, 24, 32)", "x.shape = (2, 3, 32, 24)"]
    assert not [f for f in _lint("swin", "cuda") if f.code == "AOTI008"]


def test_focalnet_patch_floor_keeps_its_guards() -> None:
    """FocalNet's patch convolution floors h by 4 from the size the graph reads itself: no assumed
    multiple, so `h % 4 == 0` and `(h // 4) % 2 == 0` stay AOTI020's errors (17 and 20 return other
    shapes on CPU)."""
    guards = sorted(f.witness for f in _lint("focalnet", "cuda") if f.code == "AOTI020")
    assert guards == ["x.shape = (3, 3, 16, 17)", "x.shape = (3, 3, 16, 20)", "x.shape = (3, 3, 17, 16)",
                      "x.shape = (3, 3, 20, 16)"]
    assert all(str(f.severity) == "error" for f in _lint("focalnet", "cuda") if f.code == "AOTI020")


def test_unet_guard_below_a_convolution_kernel_is_an_info() -> None:
    (f,) = [f for f in _lint("unet_crop", "cuda") if f.code == "AOTI020"]
    assert str(f.severity) == "info" and f.witness == "x.shape = (2, 3, 8, 10)"
    assert "convolution" in f.detail and "eager" in f.detail


def test_swin_run_impl_divisions_are_one_finding_per_dim() -> None:
    """run_impl divides by the padded window count at four launches per dim: one AOTI004 per dim, the
    other three lines listed as repeats outside any kernel."""
    divisions = [f for f in _lint("swin", "cuda") if f.code == "AOTI004"]
    assert sorted(f.dim for f in divisions) == [2, 3]
    for f in divisions:
        assert f.kernel is None and len(f.also) == 3 and all(kernel is None for kernel, _ in f.also)
