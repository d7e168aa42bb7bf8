"""The eleventh stranger round (fixtures/stranger11): twelve model families of no earlier fixture set
(Gemma 2, XLNet, MobileBERT, BigBird, Swin, ConvNeXt V2, FocalNet, WavLM, a cropping U-Net, top-k
graph pooling, a segment softmax, a mixture-of-depths router), compiled for CPU with torch 2.13 and
linted from the wheel of e9c05f8 before any change was made for them.

What aoti-lint says is pinned next to what the packages did, from committed records only (nothing
here compiles): `runtime.json` (fixtures/real/probe.py: each package through `aoti_load_package` in
a child process against eager, every dynamic dim at 0, 1 and max + 1, the sizes that break a multiple
or reach a table's edge, and the primary size witness of every finding). Every failing probe is
explained by a finding about its dim; the findings at warning or above whose witness runs like eager
are listed with their reason."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, pin
from stranger_harness import Round, outcome

ROUND = Round(FIXTURES / "stranger11")
NAMES = ["gemma2", "xlnet", "mobilebert", "big_bird", "swin", "convnextv2", "focalnet", "wavlm", "unet_crop",
         "topk_pool", "seg_softmax", "mod_router"]
_lint, _record = ROUND.lint, ROUND.record

_LAYOUT = ("AOTI019", "info", ())
_IMAGE = {("AOTI002", "info", ((0, 0), (0, 2), (0, 3))), _LAYOUT}

FINDINGS: dict[str, set[tuple]] = {
    "gemma2": {("AOTI002", "info", ((0, 1),)), _LAYOUT},
    "xlnet": {("AOTI002", "info", ((0, 1),)), ("AOTI010", "info", ((0, 1),)), _LAYOUT},
    "mobilebert": {
        ("AOTI002", "warning", ((0, 1),)),        # seq = 0: SIGFPE (below the declared 3)
        ("AOTI013", "warning", ((0, 1),)),        # 65 past the 64-column position_ids: the check aborts
        _LAYOUT,
    },
    "big_bird": {("AOTI002", "info", ((0, 0),)), _LAYOUT},
    "swin": _IMAGE | {
        ("AOTI014", "error", ((0, 2),)),          # h, w not a multiple of 8 (8 * Dim): wrong values
        ("AOTI014", "error", ((0, 3),)),
        ("AOTI020", "info", ((0, 2),)),           # stage 2's pad_bottom <= 0 (h = 24): ran like eager
        ("AOTI020", "error", ((0, 3),)),          # pad_right <= 0 (w = 24): wrong
        ("AOTI020", "error", ((0, 2), (0, 3))),   # min(...) > 4, the window set to the map (h = 16): ran
    },
    "convnextv2": set(_IMAGE),
    "focalnet": _IMAGE | {
        ("AOTI004", "info", ((0, 2),)),
        ("AOTI010", "info", ((0, 2),)),
        ("AOTI010", "info", ((0, 3),)),
        ("AOTI020", "error", ((0, 2),)),          # h % 4 == 0 and (h // 4) % 2 == 0 (witnesses 17, 20)
        ("AOTI020", "error", ((0, 3),)),
    },
    "wavlm": {("AOTI002", "info", ((0, 0), (0, 1))), ("AOTI004", "info", ((0, 1),)), ("AOTI010", "info", ((0, 1),)),
              _LAYOUT},
    "unet_crop": set(_IMAGE),
    "topk_pool": {("AOTI002", "info", ((0, 0),)), ("AOTI010", "info", ((0, 0),)), ("AOTI012", "info", ((1, 0),)),
                  ("AOTI012", "info", ((1, 1),)), _LAYOUT},
    "seg_softmax": {("AOTI001", "info", ((2, 0),)), ("AOTI002", "info", ((0, 0), (2, 0))),
                    ("AOTI011", "info", ((2, 0),)), ("AOTI012", "info", ((1, 0),)), _LAYOUT},
    "mod_router": {
        ("AOTI002", "info", ((0, 0), (0, 1))),
        ("AOTI003", "info", ((0, 1),)),           # 65 past the 64-row table: raises, as eager
        ("AOTI010", "info", ((0, 1),)),
        ("AOTI011", "warning", ()),               # scatter_reduce's errors discarded (cannot fail: below)
        _LAYOUT,
    },
}


@pytest.mark.parametrize("name", NAMES)
def test_findings_are_pinned(name: str) -> None:
    assert {pin(f) for f in _lint(name)} == FINDINGS[name]


KNOWN_GAPS: dict[tuple[str, str], tuple[str, str]] = {}


@pytest.mark.parametrize("name", NAMES)
def test_every_failing_probe_is_explained_or_a_known_gap(name: str) -> None:
    ROUND.check_explained(name, KNOWN_GAPS)


def test_every_model_ran_like_eager_at_its_normal_sizes() -> None:
    ROUND.check_normal_sizes_ran(NAMES)


def test_every_dim_was_probed_at_0_1_and_past_its_max() -> None:
    ROUND.check_edges_probed(NAMES)


# Findings at warning or above whose witness runs like eager: (model, code, witness) -> why.
NOT_REPRODUCED: dict[tuple[str, str, str], str] = {
    ("swin", "AOTI020", "x.shape = (2, 3, 16, 32)"): (
        "`min((1 + w//2)//2, (1 + h//2)//2) > 4` is `set_shift_and_window_size`'s `if min(resolution) <= "
        "window`: at h = 16 eager sets stage 2's window to 4, the traced one, and its shift to 0, which that "
        "block's is anyway; the branch differs only where eager itself raises (below the declared range)"),
}


@pytest.mark.parametrize("name", NAMES)
def test_every_error_finding_witness_fails(name: str) -> None:
    ROUND.check_witnesses_fail(name, NOT_REPRODUCED)


def _finding(name: str, code: str):
    (f,) = [f for f in _lint(name) if f.code == code]
    return f


def test_focalnet_multiples_export_assumed_return_other_shapes() -> None:
    """FocalNet pads to a multiple of its patch in eager; export (Dim.AUTO) kept `h % 4 == 0` and
    `(h // 4) % 2 == 0` as guards only: every h or w no multiple of 8 probed returns another output
    (12, 15, 17, 20, 31, 33, 255, 257), with no check. Four AOTI020 errors, each witness wrong."""
    guards = [f for f in _lint("focalnet") if f.code == "AOTI020"]
    assert sorted(f.witness for f in guards) == ["x.shape = (3, 3, 16, 17)", "x.shape = (3, 3, 16, 20)",
                                                 "x.shape = (3, 3, 17, 16)", "x.shape = (3, 3, 20, 16)"]
    for side in "hw":
        for n in (12, 15, 17, 20, 31, 33, 255, "max+1"):
            assert outcome(_record("focalnet", f"{side}={n}")) == "wrong", (side, n)
    for i in range(1, 5):
        assert outcome(_record("focalnet", f"witness:unchecked-export-guard:{i}")) == "wrong"


def test_mobilebert_read_past_its_position_ids_aborts() -> None:
    """MobileBERT slices a 64-column `position_ids` buffer to the sequence; at 65 the read past it feeds
    the table's index check inside an OpenMP region: SIGABRT (eager raises). AOTI013's warning names it;
    seq = 0 kills the process in flash attention (SIGFPE), AOTI002's warning (0 is below the declared 3)."""
    f = _finding("mobilebert", "AOTI013")
    assert str(f.severity) == "warning" and f.witness == "x.shape = (2, 65)"
    run = _record("mobilebert", "seq=max+1")
    assert outcome(run) == "crash" and run["signal"] == "SIGABRT" and f in ROUND.explained_by("mobilebert", run)
    assert _record("mobilebert", "seq=0")["signal"] == "SIGFPE"


def test_the_mixture_of_depths_scatter_is_unchecked_but_in_range() -> None:
    """mod_router scatters the routed tokens back with `scatter_reduce_two_out` outside
    AOTI_TORCH_ERROR_CODE_CHECK (AOTI011's warning, no witness): its indices are topk's over the same
    dim it scatters into, sorted, never out of range; every probe of seq ran like eager but 65, where
    the 64-row table's index check raises as eager does (AOTI003's info)."""
    f = _finding("mod_router", "AOTI011")
    assert str(f.severity) == "warning" and f.witness is None and "scatter_reduce_two_out" in f.message
    for label in ("seq=0", "seq=1", "seq=2", "seq=63", "seq=64"):
        assert outcome(_record("mod_router", label)) == "ran", label
    assert outcome(_record("mod_router", "seq=max+1")) == "rejected"
