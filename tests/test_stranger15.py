"""The fifteenth stranger round (fixtures/stranger15): ten model families of no earlier fixture set
(Nystromformer, CANINE, PEGASUS-X, YOSO, UnivNet, and five written here: a pointer network, feature
bucketing into caller-given boundaries, an RNN-T joint network, DCN-v2 and a two-tower retrieval
scorer), compiled for CPU with torch 2.13 and linted from the wheel of HEAD (250e8c4) before any change
was made for them.

What aoti-lint says is pinned next to what the packages did, from committed records only (nothing
here compiles): `runtime.json` (fixtures/real/probe.py: each package through `aoti_load_package` in
a child process against eager, every dynamic dim at 0, 1 and max + 1, the sizes that break a multiple
or reach a table's edge, and the primary size witness of every finding)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, pin
from stranger_harness import Round, outcome

ROUND = Round(FIXTURES / "stranger15")
NAMES = ["nystromformer", "canine", "pegasus_x", "yoso", "univnet", "ptr_net", "bucketize", "rnnt_joint", "dcn",
         "two_tower"]
_lint, _record = ROUND.lint, ROUND.record

_LAYOUT = ("AOTI019", "info", ())

FINDINGS: dict[str, set[tuple]] = {
    "nystromformer": {("AOTI002", "info", ((0, 0),)), ("AOTI012", "info", ((1, 0),)), _LAYOUT},
    "canine": {("AOTI002", "info", ((0, 0),)), ("AOTI012", "info", ((1, 0),)), _LAYOUT},
    "pegasus_x": {
        ("AOTI002", "info", ((0, 1), (2, 1))),
        ("AOTI014", "error", ((0, 1),)),          # src no multiple of 8: wrong values (reproduced at 1, 7, 9, 12, 127)
        ("AOTI012", "info", ((1, 1),)),
        _LAYOUT,
    },
    "yoso": {
        ("AOTI002", "info", ((0, 1),)),
        ("AOTI013", "warning", ((0, 1),)),        # two: past the 66-column token_type_ids and position_ids buffers
        ("AOTI012", "info", ((1, 1),)),
        _LAYOUT,
    },
    "univnet": {
        ("AOTI002", "info", ((0, 0), (0, 1))),
        ("AOTI012", "info", ((1, 0),)), ("AOTI012", "info", ((1, 1),)),
        ("AOTI018", "info", ((0, 1),)),           # frames = 0: SIGSEGV (eager raises: below the declared min 4)
        _LAYOUT,
    },
    "ptr_net": {
        ("AOTI001", "info", ((0, 1),)),           # n = 0: an argmax over no points, eager raises too (below)
        ("AOTI002", "info", ((0, 0), (0, 1))),
        _LAYOUT,
    },
    "bucketize": {
        ("AOTI002", "info", ((0, 0), (1, 0))),
        ("AOTI003", "info", ((1, 0),)),           # more than 32 bounds: bucket 33 of the 33-row table
        _LAYOUT,
    },
    "rnnt_joint": {
        ("AOTI002", "info", ((0, 0), (0, 1), (1, 1))),
        ("AOTI018", "error", ((1, 1),)),          # u = 0: the pad's masked load reads the empty tokens (SIGSEGV)
        ("AOTI012", "info", ((1, 0),)),
        _LAYOUT,
    },
    "dcn": {("AOTI002", "info", ((0, 0), (2, 1))), ("AOTI012", "info", ((1, 0),)), ("AOTI012", "info", ((2, 0),)),
            _LAYOUT},
    "two_tower": {
        ("AOTI002", "info", ((0, 0), (0, 1), (1, 1))),
        ("AOTI004", "info", ((0, 1),)),           # an empty history: the mean divides by 0
        ("AOTI012", "info", ((1, 0),)),
        _LAYOUT,
    },
}


@pytest.mark.parametrize("name", NAMES)
def test_findings_are_pinned(name: str) -> None:
    assert {pin(f) for f in _lint(name)} == FINDINGS[name]


# Failing probes no finding explains: (model, label) -> (outcome, why).
KNOWN_GAPS: dict[tuple[str, str], tuple[str, str]] = {
}


@pytest.mark.parametrize("name", NAMES)
def test_every_failing_probe_is_explained_or_a_known_gap(name: str) -> None:
    ROUND.check_explained(name, KNOWN_GAPS)


def test_every_model_ran_like_eager_at_its_normal_sizes() -> None:
    ROUND.check_normal_sizes_ran(NAMES)


def test_every_dim_was_probed_at_0_1_and_past_its_max() -> None:
    ROUND.check_edges_probed(NAMES)


# Findings at warning or above whose witness runs like eager: (model, code, witness) -> why.
NOT_REPRODUCED: dict[tuple[str, str, str], str] = {}


@pytest.mark.parametrize("name", NAMES)
def test_every_error_finding_witness_fails(name: str) -> None:
    ROUND.check_witnesses_fail(name, NOT_REPRODUCED)


def _findings(name: str, code: str) -> list:
    return [f for f in _lint(name) if f.code == code]


def test_pegasus_x_sources_no_multiple_of_8_return_wrong_values() -> None:
    """src declared `8 * Dim("src", min=2, max=16)` (export's guard `src % 8 == 0`: eager pads the source to
    blocks of 8 itself); any other size runs as the multiple below it, wrong values, no message (AOTI014).
    The mask is declared the same `8 * Dim`: the witness gives it src's size, not the 16 the package reads
    for it (the round's wheel said 16; probed after the change at 17 and 17: wrong)."""
    (f,) = _findings("pegasus_x", "AOTI014")
    assert str(f.severity) == "error" and f.witness == "src.shape = (2, 17), mask.shape = (2, 17), tgt.shape = (2, 3)"
    assert outcome(_record("pegasus_x", "witness:unenforced-divisibility:1")) == "wrong"
    for label in ("src:size=1", "src:size=7", "src:size=9", "src:size=12", "src:size=127"):
        run = _record("pegasus_x", label)
        assert outcome(run) == "wrong" and f in ROUND.explained_by("pegasus_x", run), label


def test_rnnt_joint_empty_token_prefix_segfaults_inside_the_declared_range() -> None:
    """tokens [batch, u] declared [0, 32], compiled u >= 2: u = 0 (eager runs: the blank-prefixed prediction has
    one step) kills the process with SIGSEGV. The tail loop of the pad's kernel loads `tokens` under the left
    pad's mask only (`x2 - 2 + lane >= 0`), which holds for the lanes past the tail's count: it reads the empty
    tensor. AOTI018 names it, an error, witness u = 0 (probed: SIGSEGV); the round's wheel had only AOTI002's
    info ("at 0 ATen calls get empty tensors")."""
    run = _record("rnnt_joint", "u=0")
    assert run["eager"]["ok"] and outcome(run) == "crash" and run["signal"] == "SIGSEGV"
    assert [(f.code, str(f.severity)) for f in ROUND.explained_by("rnnt_joint", run)] == [("AOTI018", "error"),
                                                                                       ("AOTI002", "info")]
    assert outcome(_record("rnnt_joint", "witness:read-from-empty-buffer:1")) == "crash"
    assert outcome(_record("rnnt_joint", "u=1")) == "ran"


def test_yoso_past_its_66_column_buffers_returns_where_eager_raises() -> None:
    """YOSO's token_type_ids and position_ids buffers have 66 columns (declared seq <= 64): 65 runs like eager,
    67 (AOTI013's witness) returns where eager raises."""
    assert outcome(_record("yoso", "seq=max+1")) == "ran"
    for label in ("witness:read-past-constant:1", "witness:read-past-constant:2"):
        assert outcome(_record("yoso", label)) == "silent", label


def test_ptr_net_empty_points_raise_at_the_argmax_in_eager() -> None:
    """n = 0: the package's check of the argmax's index raises (`0 <= tmp2 < ks1`) where eager's argmax over no
    points raises first: an info that says so, at the gather it guards (the round's wheel: an error at the
    first step's kernel, whose index it did not trace to the input, and "the select" of a step's table row)."""
    (f,) = _findings("ptr_net", "AOTI001")
    assert str(f.severity) == "info" and "`argmax` over the emptied dim" in f.detail and "gather" in f.message
    assert outcome(_record("ptr_net", "n=0")) == "rejected"


def test_bucketize_counts_scatter_by_insertion_points_is_not_reported() -> None:
    """counts per bucket: `scatter_add` (its error code unchecked) by bucketize's insertion points, 0..m, into
    m + 1 cells: never out of range (the round's wheel: an AOTI011 warning, "partial result, no message").
    m past the 33-row table raises as eager does (AOTI003 info)."""
    assert not _findings("bucketize", "AOTI011")
    for label in ("m=33", "m=40", "m=max+1"):
        assert outcome(_record("bucketize", label)) == "rejected", label
