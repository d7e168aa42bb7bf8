"""The sixth stranger round (fixtures/stranger6): ten model families of no earlier fixture set (MPNet,
ESM, GPT-J, Speech2Text, ConvNeXt, PoolFormer, MobileViT, ViTMAE, a Swin-style window attention with
its padding, a ragged batch with positions inside each sequence), compiled for CPU with torch 2.13.

What aoti-lint says is pinned next to what the packages did, from committed records only (nothing
here compiles): `runtime.json` (fixtures/real/probe.py: each package through `aoti_load_package` in
a child process against eager, every dynamic dim at 0, 1 and max + 1, the sizes that break a
multiple or a minimum or reach a table's edge, and the primary size witness of every finding).
Every probe that fails is explained by a finding about its dim, or is a known gap listed here with
its reason; a finding at warning or above whose witness does not fail is listed with its reason."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, finding_refs, pin
from stranger_harness import FAILURES, Round, outcome

ROUND = Round(FIXTURES / "stranger6")
NAMES = ["mpnet", "esm", "gptj", "speech2text", "convnext", "poolformer", "mobilevit", "vitmae", "win_attn",
         "jagged_pos"]
_lint, _records, _record = ROUND.lint, ROUND.records, ROUND.record


# -- the findings ---------------------------------------------------------------------------------------

# (code, severity, the (input, dim) pairs it names), per package; AOTI019 (the unchecked layout of
# every input) names no dim.
FINDINGS: dict[str, set[tuple]] = {
    "mpnet": {
        ("AOTI002", "info", ((0, 1),)),
        ("AOTI003", "warning", ((0, 1),)),   # 65 tokens past the 66-row learned table: SIGABRT
        ("AOTI019", "info", ()),
    },
    "esm": {
        ("AOTI002", "error", ((0, 1),)),     # seq = 0: SIGFPE in CPU flash attention
        ("AOTI019", "info", ()),
    },
    "gptj": {
        ("AOTI002", "error", ((0, 1),)),     # seq = 0: SIGFPE
        ("AOTI003", "info", ((0, 1),)),      # 65 past the 64-row sinusoidal table: raises, as eager
        ("AOTI019", "info", ()),
    },
    "speech2text": {
        ("AOTI002", "info", ((0, 0), (0, 1), (1, 1))),
        ("AOTI003", "warning", ((0, 1),)),   # 257 frames: 65 positions past a buffer eager rebuilds
        ("AOTI003", "warning", ((1, 1),)),
        # (after the round: a softmax's max over an empty source is no longer reported: it meets no element)
        ("AOTI012", "info", ((1, 0),)),
        ("AOTI019", "info", ()),
    },
    "convnext": {
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
        ("AOTI019", "info", ()),
    },
    "poolformer": {
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
        ("AOTI019", "info", ()),
    },
    "mobilevit": {
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
        ("AOTI004", "warning", ((0, 2), (0, 3))),   # h or w = 1: an index `%` by a floor that is 0 (SIGFPE)
        ("AOTI013", "warning", ((0, 2), (0, 3))),   # x10: see test_mobilevit_...
        ("AOTI019", "info", ()),
        ("AOTI020", "error", ((0, 2),)),     # h = 17 breaks export's (1 + (h - 1) // 8) == 4
    },
    "vitmae": {
        ("AOTI002", "info", ((0, 0),)),
        ("AOTI012", "info", ((1, 0),)),
        ("AOTI019", "info", ()),
    },
    "win_attn": {
        ("AOTI002", "info", ((0, 0), (0, 1), (0, 2))),
        ("AOTI019", "info", ()),
    },
    "jagged_pos": {
        ("AOTI001", "error", ((1, 0),)),     # n = 0 with tokens: SIGSEGV, eager raises (see below)
        ("AOTI002", "info", ((0, 0), (1, 0))),
        ("AOTI019", "info", ()),
    },
}


@pytest.mark.parametrize("name", NAMES)
def test_findings_are_pinned(name: str) -> None:
    assert {pin(f) for f in _lint(name)} == FINDINGS[name]


# -- what the packages did --------------------------------------------------------------------------------

# Failed probes that no finding explains: (model, probe label) -> (their outcome, why).
KNOWN_GAPS: dict[tuple[str, str], tuple[str, str]] = {
}
# Failed probes a finding explains (its witness is the probe's size) in words the record contradicts:
# (model, probe label) -> (their outcome, why).
WRONG_WORDS: dict[tuple[str, str], tuple[str, str]] = {
}


@pytest.mark.parametrize("name", NAMES)
def test_every_failing_probe_is_explained_or_a_known_gap(name: str) -> None:
    unexplained = ROUND.unexplained(name)
    gaps = {label for model, label in KNOWN_GAPS if model == name}
    assert set(unexplained) == gaps, unexplained
    assert all(unexplained[label] == KNOWN_GAPS[name, label][0] for label in gaps)
    for model, label in WRONG_WORDS:
        if model == name:
            record = _record(name, label)
            assert outcome(record) == WRONG_WORDS[name, label][0] and ROUND.explained_by(name, record), label


def test_every_model_ran_like_eager_at_its_normal_sizes() -> None:
    for name in NAMES:
        assert outcome(_record(name, "normal")) == "ran", name


def test_every_dim_was_probed_at_0_1_and_past_its_max() -> None:
    for name in NAMES:
        labels = {r["label"] for r in _records() if r["name"] == name}
        for dim in ROUND.dims()[name]:
            assert {f"{dim}=0", f"{dim}=1", f"{dim}=max+1"} <= labels, (name, dim)


# Findings at warning or above whose witness runs like eager (or is rejected as eager rejects it):
# (model, code) -> why.
NOT_REPRODUCED: dict[tuple[str, str], str] = {
}


@pytest.mark.parametrize("name", NAMES)
def test_every_error_finding_witness_fails(name: str) -> None:
    for f in _lint(name):
        if str(f.severity) not in ("error", "warning") or not f.witness:
            continue
        runs = ROUND.witness_runs(name, f)
        failed = any(outcome(r) in FAILURES for r in runs)
        assert runs, (name, f.code, f.witness)
        assert failed != ((name, f.code) in NOT_REPRODUCED), (name, f.code, [outcome(r) for r in runs])


# -- what the findings say, against what happened -------------------------------------------------------

def _finding(name: str, code: str, ref: tuple[int, int] | None = None):
    (f,) = [f for f in _lint(name) if f.code == code and (ref is None or ref in finding_refs(f))]
    return f


def test_a_table_eager_rebuilds_gets_no_eager_claim_past_the_declared_max() -> None:
    """Speech2Text's sinusoidal positions are a buffer eager rebuilds longer: past the declared max the
    package raises where eager returns, a warning that says nothing of eager. GPT-J's 64-row table
    inside the declared 128: the same lookup in eager raises too (re-probed), an info that says so."""
    for ref, label in (((0, 1), "frames=max+1"), ((1, 1), "tgt=max+1")):
        f = _finding("speech2text", "AOTI003", ref)
        assert str(f.severity) == "warning" and "eager" not in f.message
        run = _record("speech2text", label)
        assert outcome(run) == "raised" and run["eager"]["ok"], label
    f = _finding("gptj", "AOTI003")
    assert str(f.severity) == "info" and f.message.endswith("(eager rejects it too)")
    assert outcome(_record("gptj", "seq=65")) == "rejected"


def test_a_window_padded_to_a_multiple_is_never_an_empty_division() -> None:
    """The window attention pads h and w up to a multiple of 7; run_impl checks `(hp // 7) != 0` before
    dividing. Every size from 2 up is proved nonzero (the first 65 tried, the rest by intervals): no
    unlinked-assertion warning. h = 0 (below the compiled 2) makes it 0: the package raises `Integer
    floor division by zero` where eager returns an empty result; AOTI002 covers the size, led by h and
    saying that run_impl's check raises there (batch 0 passes it)."""
    codes = {f.code for f in _lint("win_attn")}
    assert "AOTI008" not in codes and "AOTI020" not in codes
    lower = _finding("win_attn", "AOTI002")
    assert (lower.input, lower.dim) == (0, 1) and lower.message_fields["zero_check"] == "yes"
    assert "run_impl raises" in lower.message
    for label in ("h=0", "w=0"):
        run = _record("win_attn", label)
        assert outcome(run) == "raised" and "Integer floor division by zero" in run["aoti"]["error"]
    # The guards `(hp // 7) != 1` (more than one window) that h = 2 breaks: like eager, re-probed.
    for label in ("witness:unchecked-export-guard:1", "witness:unchecked-export-guard:2"):
        assert outcome(_record("win_attn", label)) == "ran"


def test_mobilevit_patch_grid_guard_and_the_reads_past_it() -> None:
    """MobileViT exported with `Dim.AUTO`: export kept `(1 + (h - 1) // 8) == 4` (h in [25, 32]) inside
    a range of [2, 32], and the package checks neither. AOTI020 names h = 17; ten AOTI013 warnings say
    that the kernels' index of a 16-element layer norm weight grows with the patch grid over h and w,
    each with its own smallest size: w = 33 (its probe returned wrong values) as well as h."""
    f = _finding("mobilevit", "AOTI020")
    assert str(f.severity) == "error" and f.witness == "x.shape = (2, 3, 17, 25)"
    reads = [f for f in _lint("mobilevit") if f.code == "AOTI013"]
    assert len(reads) == 10 and {str(f.severity) for f in reads} == {"warning"}
    assert {(d.input, d.dim) for f in reads for d in f.dims} == {(0, 2), (0, 3)}
    assert any(d.dim == 3 and d.size == 33 for f in reads for d in f.dims)
    assert outcome(_record("mobilevit", "w=33")) == "wrong"


def test_an_index_read_from_an_extern_output_an_empty_input_shrinks() -> None:
    """jagged_pos at n = 0 with tokens: `repeat_interleave(lengths)` (an extern call) returns an empty
    tensor, which the package takes to hold values.shape[0] elements (`assert_size_stride(buf4, {s59})`
    only with AOTI_RUNTIME_CHECK_INPUTS=1); the kernel reads its index from there past the end: SIGSEGV
    where eager raises a size error. AOTI001 says the read runs past the buffer (not that the check
    raises), an error: eager raises a catchable error for the same input, the package dies, as a CPU
    check aborting inside an OpenMP region does (CTRL's AOTI003, stranger7)."""
    f = _finding("jagged_pos", "AOTI001")
    assert f.message_fields["outcome"] == "overread" and str(f.severity) == "error"
    assert "eager rejects" not in f.message and "overruns a buffer" in f.message and "buf4" in f.detail
    run = _record("jagged_pos", "n=0")
    assert outcome(run) == "crash" and run["signal"] == "SIGSEGV" and not run["eager"]["ok"]
    assert ROUND.explained_by("jagged_pos", run)


def test_mobilevit_one_row_divides_its_patch_count_by_zero() -> None:
    """MobileViT at h or w = 1 (eager returns): the unfolding kernels index patches with `%` by
    `4 * ((1 + (h - 1) // 8) // 2) * ((1 + (w - 1) // 8) // 2)`, 0 for h or w in 1..8 while their loops
    run: SIGFPE. AOTI004 names it (each dim, smallest size 1; the fix rejects sizes below 9). Its
    witness was probed after the round on a rebuild of the same model: SIGFPE."""
    f = _finding("mobilevit", "AOTI004")
    assert (str(f.severity), f.message_key) == ("warning", "division-by-dynamic-size.index")
    assert {(d.dim, d.size) for d in f.dims} == {(2, 1), (3, 1)} and "< 9" in f.fix
    for label in ("h=1", "w=1", "witness:division-by-dynamic-size:1"):
        run = _record("mobilevit", label)
        assert outcome(run) == "crash" and run["signal"] == "SIGFPE" and run["eager"]["ok"]
