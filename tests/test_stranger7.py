"""The seventh stranger round (fixtures/stranger7): ten model families of no earlier fixture set
(RoFormer, CTRL, GPT-BigCode, SqueezeBERT, a temporal convolutional network, RegNet, YOLOS, Swin V2 with
`Dim.AUTO` height and width, a GraphSAGE mean aggregator, a segment max), compiled for CPU with torch
2.13 and linted from the built wheel before any change was made for them.

What aoti-lint says is pinned next to what the packages did, from committed records only (nothing
here compiles): `runtime.json` (fixtures/real/probe.py: each package through `aoti_load_package` in
a child process against eager, every dynamic dim at 0, 1 and max + 1, the sizes that break a
multiple or a minimum or reach a table's edge, and the primary size witness of every finding).
Every probe that fails is explained by a finding about its dim, or is a known gap listed here with
its reason; a finding at warning or above whose witness does not fail is listed with its reason."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, finding_refs, pin
from stranger_harness import Round, outcome

ROUND = Round(FIXTURES / "stranger7")
NAMES = ["roformer", "ctrl", "bigcode", "squeezebert", "tcn", "regnet", "yolos", "swinv2", "sage_mean", "seg_max"]
_lint, _records, _record = ROUND.lint, ROUND.records, ROUND.record


# -- the findings ---------------------------------------------------------------------------------------

# (code, severity, the (input, dim) pairs it names), per package; AOTI019 (the unchecked layout of
# every input) names no dim.
FINDINGS: dict[str, set[tuple]] = {
    "roformer": {
        ("AOTI002", "info", ((0, 1),)),
        ("AOTI003", "info", ((0, 1),)),      # 65 past the 64-row sinusoidal table: raises, as eager
        ("AOTI019", "info", ()),
    },
    "ctrl": {
        ("AOTI002", "error", ((0, 1),)),     # seq = 0: SIGFPE in CPU flash attention
        ("AOTI003", "error", ((0, 1),)),     # 65 past the 64-row position buffer: SIGABRT
        ("AOTI019", "info", ()),
    },
    "bigcode": {
        ("AOTI002", "error", ((0, 1),)),     # seq = 0: SIGFPE
        ("AOTI003", "error", ((0, 1),)),     # 65 past the 64-row learned table: SIGABRT
        ("AOTI019", "info", ()),
    },
    "squeezebert": {
        ("AOTI002", "info", ((0, 1),)),
        ("AOTI013", "warning", ((0, 1),)),   # 65 reads past the 64 position_ids: SIGABRT
        ("AOTI019", "info", ()),
    },
    "tcn": {
        ("AOTI002", "info", ((0, 0), (0, 2))),
        # t = 0 (below the declared 6): the causal left pad's masked load reads the empty input (crash
        # probed); eager's convolution rejects the size.
        ("AOTI018", "info", ((0, 2),)),
        ("AOTI019", "info", ()),
    },
    "regnet": {
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
        ("AOTI019", "info", ()),
    },
    "yolos": {
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
        ("AOTI019", "info", ()),
    },
    "swinv2": {
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
        ("AOTI019", "info", ()),
        ("AOTI020", "error", ((0, 2),)),     # four guards on h (x4 findings), see below: two errors
        ("AOTI020", "info", ((0, 2),)),      # and the two bottom pads' (h = 4, 8), the outer of two pads
        ("AOTI020", "error", ((0, 3),)),     # and the same four on w, all errors
    },
    "sage_mean": {
        ("AOTI001", "info", ((0, 0),)),
        ("AOTI002", "info", ((0, 0), (1, 1))),
        ("AOTI019", "info", ()),
    },
    "seg_max": {
        ("AOTI002", "info", ((0, 0), (2, 0))),
        ("AOTI003", "info", ((2, 0),)),      # 33 segments past the 32-row table: raises, as eager
        ("AOTI011", "info", ((2, 0),)),      # k = 0: scatter_reduce's error discarded, a result
        ("AOTI012", "info", ((1, 0),)),
        ("AOTI019", "info", ()),
    },
}


@pytest.mark.parametrize("name", NAMES)
def test_findings_are_pinned(name: str) -> None:
    assert {pin(f) for f in _lint(name)} == FINDINGS[name]


# -- what the packages did --------------------------------------------------------------------------------

# Failed probes that no finding explains: (model, probe label) -> (their outcome, why).
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
}


@pytest.mark.parametrize("name", NAMES)
def test_every_error_finding_witness_fails(name: str) -> None:
    ROUND.check_witnesses_fail(name, NOT_REPRODUCED)


# -- what the findings say, against what happened -------------------------------------------------------

def _finding(name: str, code: str, ref: tuple[int, int] | None = None):
    (f,) = [f for f in _lint(name) if f.code == code and (ref is None or ref in finding_refs(f))]
    return f


def test_a_table_past_its_rows_aborts_inside_a_parallel_region_and_raises_outside() -> None:
    """CTRL's position buffer and GPT-BigCode's learned table are read inside an OpenMP region: 65
    tokens abort the process (an error); RoFormer's and the segment table's checks raise as eager's
    lookup does (an info that says so)."""
    for name, label in (("ctrl", "seq=65"), ("bigcode", "seq=65")):
        assert str(_finding(name, "AOTI003").severity) == "error"
        run = _record(name, label)
        assert outcome(run) == "crash" and run["signal"] == "SIGABRT"
    for name, label in (("roformer", "seq=65"), ("seg_max", "k=33")):
        f = _finding(name, "AOTI003")
        assert str(f.severity) == "info" and f.message.endswith("(eager rejects it too)")
        assert outcome(_record(name, label)) == "rejected"


def test_an_empty_sequence_reaches_flash_attention() -> None:
    for name in ("ctrl", "bigcode"):
        f = _finding(name, "AOTI002")
        assert str(f.severity) == "error" and "SIGFPE" in f.message
        run = _record(name, "seq=0")
        assert outcome(run) == "crash" and run["signal"] == "SIGFPE"


def test_swin_v2_auto_guards_each_have_a_size_that_breaks_them() -> None:
    """Swin V2 exported with `Dim.AUTO`: export kept four guards per side (even, and the patch grid a
    multiple of the window at both stages), none checked. Each AOTI020 names its own smallest size;
    the guards' probes at the usual odd and near-multiple sizes (15, 17, 30, 31, 33) returned wrong
    values or shapes on both sides, and 1 raises a convolution error where eager pads and returns."""
    guards = [f for f in _lint("swinv2") if f.code == "AOTI020"]
    assert sorted((f.dim, f.witness, str(f.severity)) for f in guards) == sorted(
        (dim, "x.shape = " + str((2, 3, size, 32) if dim == 2 else (2, 3, 32, size)),
         "info" if dim == 2 and size in (4, 8) else "error")
        for dim in (2, 3) for size in (4, 5, 6, 8))
    # h = 4 and 8 break the bottom pad's guards and ran like eager (so did 12, 20, 24, 28 and 40 in a
    # probe of the complete package); w = 4 and 8, the right pad's, returned wrong values.
    assert outcome(_record("swinv2", "witness:unchecked-export-guard:1")) == "ran"
    assert outcome(_record("swinv2", "witness:unchecked-export-guard:5")) == "wrong"
    for side in ("h", "w"):
        for size in (15, 17, 30, 31, 33):
            assert outcome(_record("swinv2", f"{side}={size}")) == "wrong", (side, size)
        assert outcome(_record("swinv2", f"{side}=1")) == "raised"


def test_a_segment_count_of_zero_returns_where_eager_raises() -> None:
    """seg_max at k = 0 with rows: scatter_reduce into an empty target fails, its error code is not
    checked, and the package returns an empty result where eager raises; AOTI011 names that size."""
    f = _finding("seg_max", "AOTI011")
    assert f.witness and "slots.shape = (0,)" in f.witness
    assert outcome(_record("seg_max", "k=0")) == "silent"


def test_a_size_tied_to_a_dim_is_checked_at_every_call() -> None:
    """sage_mean: u2, bincount's output size with minlength = nodes, must equal nodes (`Expected Eq(s77,
    u2)`) and be >= 2 at every call: nodes = 1 raises `Expected u2 >= 2` whatever the edges, where eager
    returns. AOTI002 says that size 1 fails with that error (not that it runs unchecked)."""
    (model,) = _models("sage_mean")
    (u2,) = [s for s in model.symbols.values() if s.unbacked]
    assert (u2.min, u2.max, u2.tied) == (2, 1024, "s77")
    f = _finding("sage_mean", "AOTI002")
    assert f.message_key == "unenforced-lower-bound.rejected-tied" and (f.input, f.dim) == (0, 0)
    assert "Expected u2 >= 2" in f.detail and "bincount" in f.detail
    run = _record("sage_mean", "nodes=1")
    assert outcome(run) == "raised" and "Expected u2 >= 2" in run["aoti"]["error"]


def test_a_tied_size_rejects_past_the_declared_max_at_every_call() -> None:
    """sage_mean nodes = 1025, past the declared max 1024: run_impl's always-on `Expected u2 <= 1024`
    (u2 must equal nodes) raises where eager returns. The contract says the package rejects it at every
    call with that check (not "only with AOTI_RUNTIME_CHECK_INPUTS=1"), and `why` routes the error to
    nodes, not to bincount's input."""
    from analyzer.explain import contract
    from analyzer.explain.why import explain_failure

    run = _record("sage_mean", "nodes=max+1")
    assert outcome(run) == "raised" and ROUND.rejected_by_contract("sage_mean", run)
    assert "nodes=max+1" not in ROUND.unexplained("sage_mean")
    (model,) = _models("sage_mean")
    reasons = [c.reason for c in contract.build("sage_mean", model).conditions if (c.ref.input, c.ref.dim) == (0, 0)]
    assert any("rejected at every call by run_impl's `Expected u2 <= 1024`" in r for r in reasons), reasons
    assert any("rejected at every call by run_impl's `Expected u2 >= 2`" in r for r in reasons), reasons
    (cand,) = explain_failure(api_package("sage_mean"), run["aoti"]["error"]).candidates
    assert cand.key == "why.symbol.tied" and [(r.input, r.dim) for r in cand.bound_sources] == [(0, 0)]
    assert "x.shape[0] was 1025" in cand.cause or "arg2_1.size(0) was 1025" in cand.cause


def api_package(name: str):
    from analyzer.app import api

    return api.load(str(FIXTURES / "stranger7" / f"{name}.cpu.stripped.pt2"),
                    api.Options(exported_program=str(FIXTURES / "stranger7" / f"{name}.ep.pt2")))


def _models(name: str):
    from analyzer.app import api

    return api.load(str(FIXTURES / "stranger7" / f"{name}.cpu.stripped.pt2")).models
