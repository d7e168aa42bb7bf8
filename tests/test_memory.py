"""Checking a package leaves no reference cycles.

The command line runs with the cyclic collector off (analyzer/app/cli.py `main`): whatever a check
builds must be freed by reference counting alone. A cycle through the linker once kept every
kernel's facts and syntax trees alive until the collector ran, and made it traverse them (0.1 s of
CPU on a 12 MB wrapper); `ast.dump` leaves a closure cycle per call.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from analyzer.app import api

ROOT = Path(__file__).resolve().parent.parent

PACKAGES = [
    "fixtures/small_transformer.cuda.stripped.pt2",   # Triton helpers, constants read by kernels
    "fixtures/real/bert.cpu.stripped.pt2",            # C++ kernels, read-past-constant
    "fixtures/stranger/roberta.cpu.stripped.pt2",     # buffer value ranges (the linker's BufferRanges)
    "fixtures/gather_dyn.cpu.cpponly.pt2",            # package_cpp_only layout
    "fixtures/versions/2.6/gather_dyn.cpu.stripped.pt2",
]


@pytest.mark.parametrize("package", PACKAGES)
def test_a_check_leaves_no_reference_cycles(package: str) -> None:
    path = ROOT / package
    enabled = gc.isenabled()
    gc.disable()
    try:
        api.lint([path])          # the first check also fills the caches that live on
        gc.collect()
        result = api.lint([path])
        assert result.packages[0].models[0].launches   # it really read and linked something
        del result
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def test_a_chain_line_said_of_many_checks_is_held_once() -> None:
    """The bound's and the dims' lines of a check fused into several kernels are one object each
    (gpt2.cpu: 21 such lines, 3 distinct); a kernel's own line stays its own."""
    (model,) = api.load(str(ROOT / "fixtures" / "real" / "gpt2.cpu.stripped.pt2"), api.Options(pair=False)).models
    shared = [line for a in model.assertions for line in a.chain if getattr(line, "key", "") in ("range", "bound-constant")]
    assert len(shared) >= 20 and len({id(line) for line in shared}) == len(set(shared)) == 3
    own = [a.chain[0] for a in model.assertions]
    assert len({id(line) for line in own}) == len(own)
