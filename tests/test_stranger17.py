"""The seventeenth stranger round (fixtures/stranger17): six model families of no earlier fixture set
(RemBERT, Starcoder2, PVTv2, and three written here: a sparse COO matmul by `index_select` and
`index_add`, k-max pooling by `topk` then `gather` with a clamped position table and an `argsort`
rank table, a hashed embedding at `ids % m` with m an input's length), compiled for CPU with torch
2.13 and linted from the wheel of 104711f (equal to the tree at 104711f on every package).

What aoti-lint says is pinned next to what the packages did, from committed records only (nothing
here compiles): `runtime.json` (fixtures/real/probe.py: each package through `aoti_load_package` in
a child process against eager, every dynamic dim at 0, 1 and max + 1, the sizes that reach a table's
edge, and the primary size witness of every finding)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, pin
from stranger_harness import Round, outcome

ROUND = Round(FIXTURES / "stranger17")
NAMES = ["rembert", "starcoder2", "pvt_v2", "coo_spmm", "kmax_pool", "hash_slice"]
_lint, _record = ROUND.lint, ROUND.record

_LAYOUT = ("AOTI019", "info", ())

FINDINGS: dict[str, set[tuple]] = {
    "rembert": {
        ("AOTI002", "error", ((0, 1),)),          # seq = 0: SIGFPE in CPU flash attention (reproduced)
        ("AOTI013", "warning", ((0, 1),)),        # seq > 64: past the 64-row position_ids (raises, as eager does)
        _LAYOUT,
    },
    "starcoder2": {
        ("AOTI002", "error", ((0, 1),)),          # seq = 0: SIGFPE in CPU flash attention (reproduced)
        _LAYOUT,
    },
    "pvt_v2": {
        ("AOTI002", "info", ((0, 0), (0, 2))),    # batch = 0 returns where eager raises
        ("AOTI010", "info", ((0, 2),)),           # h: Dim.AUTO, compiled [13, 4100]
        _LAYOUT,
    },
    "coo_spmm": {
        ("AOTI001", "info", ((0, 0),)),           # n = 0: index_select from no rows (raises, as eager does)
        ("AOTI002", "info", ((0, 0), (1, 0))),
        ("AOTI012", "info", ((2, 0),)),           # cols shorter than rows: read past its end
        ("AOTI012", "info", ((3, 0),)),           # vals shorter than rows
        _LAYOUT,
    },
    "kmax_pool": {("AOTI002", "info", ((0, 0), (0, 1))), _LAYOUT},
    "hash_slice": {
        ("AOTI001", "info", ((1, 0),)),           # m = 0: the bucket weights indexed in no rows
        ("AOTI002", "info", ((0, 1), (1, 0))),
        ("AOTI004", "info", ((0, 1),)),           # l = 0: the mean over no steps
        _LAYOUT,
    },
}


@pytest.mark.parametrize("name", NAMES)
def test_findings_are_pinned(name: str) -> None:
    assert {pin(f) for f in _lint(name)} == FINDINGS[name]


# Failing probes no finding explains: (model, label) -> (outcome, why).
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
    ("rembert", "AOTI013", "ids.shape = (2, 65)"):
        "the package raises `index out of bounds: 0 <= tmp9 < 64L` where eager raises too (size 65 against 64)",
}


@pytest.mark.parametrize("name", NAMES)
def test_every_error_finding_witness_fails(name: str) -> None:
    ROUND.check_witnesses_fail(name, NOT_REPRODUCED)


def _findings(name: str, code: str) -> list:
    return [f for f in _lint(name) if f.code == code]


def test_empty_sequence_kills_the_process_in_flash_attention() -> None:
    """seq = 0 (declared [0, 64] and [0, 128], compiled >= 2): SIGFPE in both decoders' and encoders'
    CPU flash attention, as AOTI002's error says (eager raises IndexError); seq = 1 runs like eager."""
    for name in ("rembert", "starcoder2"):
        (f,) = _findings(name, "AOTI002")
        assert str(f.severity) == "error" and "SIGFPE" in f.message, name
        run = _record(name, "seq=0")
        assert outcome(run) == "crash" and run["signal"] == "SIGFPE", name
        assert outcome(_record(name, "seq=1")) == "ran", name


def test_starcoder2_sliding_window_and_rotary_past_max_positions_run_like_eager() -> None:
    """The sliding-window mask (8) and rotary (computed, no table) at 8, 9, 64, 65 and 129 (past the
    declared 128 and the configured 64 positions): every size runs like eager, no finding."""
    for label in ("seq=8", "seq=9", "seq=64", "seq=65", "seq=max+1"):
        assert outcome(_record("starcoder2", label)) == "ran", label


def test_pvt_v2_empty_batch_returns_where_eager_raises() -> None:
    """batch = 0 returns where eager raises (`cannot reshape tensor of 0 elements`): only AOTI002's info
    says batch < 2 runs unchecked. h (Dim.AUTO, compiled [13, 4100]) at 8 and 12 below the compiled min
    runs like eager; 0 and 1 raise as eager does (kernel larger than the input)."""
    assert outcome(_record("pvt_v2", "batch=0")) == "silent"
    (f,) = _findings("pvt_v2", "AOTI002")
    assert str(f.severity) == "info"
    for label in ("h=8", "h=12", "h=13", "h=max+1"):
        assert outcome(_record("pvt_v2", label)) == "ran", label
    for label in ("h=0", "h=1"):
        assert outcome(_record("pvt_v2", label)) == "rejected", label


def test_hash_slice_zero_buckets_raises_as_eager() -> None:
    """m = 0: `ids % 0`; the package raises its index check (`0 <= tmp15 < ks1`) where eager raises
    ZeroDivisionError, no SIGFPE; m = 97 raises `0 <= tmp6 < 64L` where eager raises IndexError."""
    assert outcome(_record("hash_slice", "m=0")) == "rejected"
    assert outcome(_record("hash_slice", "m=max+1")) == "rejected"
    assert outcome(_record("hash_slice", "m=65")) == "ran"
