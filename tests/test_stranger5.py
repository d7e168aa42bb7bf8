"""The fifth stranger round (fixtures/stranger5): thirteen model families of no earlier fixture set
(M2M100 and Whisper encoder-decoders, XGLM, LayoutLM's box tables, BEiT's relative position bias over
a dynamic patch grid, SegFormer with dynamic height and width, MPT's ALiBi, Mistral's sliding window,
Falcon, a DGCNN EdgeConv with kNN by topk, a graph attention layer, a GRU, PatchTST-like patching),
compiled for CPU with torch 2.13.

What aoti-lint says is pinned next to what the packages did, from committed records only (nothing
here compiles): `runtime.json` (fixtures/real/probe.py: each package through `aoti_load_package` in
a child process against eager, every dynamic dim at 0, 1 and max + 1, the sizes that break a
multiple or a minimum or reach a table's edge, and the primary size witness of every finding).
Every probe that fails is explained by a finding about its dim, or is a known gap listed here with
its reason; a finding at warning or above whose witness does not fail is listed with its reason."""

from __future__ import annotations

import pytest

from analyzer.app import api
from conftest import FIXTURES, finding_refs, pin
from stranger_harness import FAILURES, Round, outcome

ROUND = Round(FIXTURES / "stranger5")
HERE = ROUND.folder
NAMES = ["m2m100", "whisper", "layoutlm", "beit", "segformer", "mpt", "mistral", "xglm", "falcon",
         "pointnet_knn", "gat", "gru", "patchtst"]
# The round's readers (tests/stranger_harness.py), under the names the tests below use.
_dims, _lint, _records, _record = ROUND.dims, ROUND.lint, ROUND.records, ROUND.record


# -- the findings ---------------------------------------------------------------------------------------

# (code, severity, the (input, dim) pairs it names), per package; AOTI019 (the unchecked layout of
# every input) and AOTI008 (an index check linked to no input) name no dim.
FINDINGS: dict[str, set[tuple]] = {
    "m2m100": {
        ("AOTI002", "info", ((0, 1), (1, 1))),
        ("AOTI003", "warning", ((0, 1),)),   # 65 tokens past the 66-row table: see test_m2m100_...
        ("AOTI003", "warning", ((1, 1),)),
        # (after the round: a softmax's max over an empty source is no longer reported: it meets no element)
        ("AOTI019", "info", ()),
    },
    "whisper": {
        ("AOTI002", "error", ((0, 0), (1, 1))),   # tgt = 0: SIGFPE in the cross-attention
        ("AOTI003", "info", ((1, 1),)),   # tgt 33 past the 32-row decoder table, as eager
        ("AOTI012", "info", ((1, 0),)),
        ("AOTI019", "info", ()),
    },
    "layoutlm": {
        ("AOTI002", "error", ((0, 1),)),   # seq 0: SIGFPE in flash attention
        ("AOTI012", "info", ((1, 1),)),
        ("AOTI013", "warning", ((0, 1),)),  # seq 65 reads past the 64-entry position_ids buffer
        ("AOTI019", "info", ()),
    },
    "beit": {
        # infos: at h = 0 the 8x8 patch convolution rejects the input, as eager's does
        ("AOTI001", "info", ((0, 2),)),
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
        ("AOTI014", "error", ((0, 2),)),
        ("AOTI014", "error", ((0, 3),)),
        ("AOTI017", "info", ((0, 2),)),
        ("AOTI019", "info", ()),
        ("AOTI020", "error", ((0, 2),)),
        ("AOTI020", "error", ((0, 3),)),
    },
    "segformer": {
        # info: at h or w = 0 the first convolution raises before the flash attention divides by 0
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
        ("AOTI014", "error", ((0, 2),)),
        ("AOTI014", "error", ((0, 3),)),
        ("AOTI019", "info", ()),
    },
    "mpt": {
        ("AOTI002", "info", ((0, 1),)),
        ("AOTI019", "info", ()),
    },
    "mistral": {
        ("AOTI002", "info", ((0, 1),)),
        ("AOTI019", "info", ()),
    },
    "xglm": {
        ("AOTI002", "info", ((0, 1),)),
        ("AOTI003", "warning", ((0, 1),)),  # 65 tokens past the 66-row table: SIGABRT
        ("AOTI019", "info", ()),
    },
    "falcon": {
        ("AOTI002", "info", ((0, 1),)),
        ("AOTI019", "info", ()),
    },
    "pointnet_knn": {
        ("AOTI002", "info", ((0, 0), (0, 1))),
        ("AOTI019", "info", ()),
    },
    "gat": {
        ("AOTI001", "info", ((0, 0),)),
        ("AOTI002", "info", ((0, 0), (1, 1))),
        ("AOTI011", "info", ((0, 0),)),
        ("AOTI019", "info", ()),
    },
    "gru": {
        ("AOTI002", "info", ((0, 0),)),
        ("AOTI019", "info", ()),
    },
    "patchtst": {
        ("AOTI002", "warning", ((0, 0), (0, 1))),   # t = 7: 0 patches into flash attention, SIGFPE
        ("AOTI003", "error", ((0, 1),)),   # 65 patches past the 64-row position table: SIGABRT
        ("AOTI019", "info", ()),
    },
}


@pytest.mark.parametrize("name", NAMES)
def test_findings_are_pinned(name: str) -> None:
    assert {pin(f) for f in _lint(name)} == FINDINGS[name]


# -- what the packages did --------------------------------------------------------------------------------

# Failed probes that no finding explains: (model, probe label) -> (their outcome, why).
_MPT_GAP = ("silent", "above the declared max (31) MPT's ALiBi is not a table in the package: the fused kernel "
            "computes (-31 + key + max(0, 32 - seq)) * slope for every key, defined at any seq, and reads no "
            "buffer past its end; eager slices its 32-column alibi buffer and fails to broadcast it against 33 "
            "or more keys (`The size of tensor a (33) must match the size of tensor b (32)`). The package is "
            "more permissive than the model outside the declared range; no rule speaks of that (without "
            "--exported-program AOTI010 says `> 31: never compiled for`)")
KNOWN_GAPS: dict[tuple[str, str], tuple[str, str]] = {
    ("mpt", "seq=33"): _MPT_GAP,
    ("mpt", "seq=40"): _MPT_GAP,
}


@pytest.mark.parametrize("name", NAMES)
def test_every_failing_probe_is_explained_or_a_known_gap(name: str) -> None:
    unexplained = ROUND.unexplained(name)
    gaps = {label for model, label in KNOWN_GAPS if model == name}
    assert set(unexplained) == gaps, unexplained
    assert all(unexplained[label] == KNOWN_GAPS[name, label][0] for label in gaps)


def test_every_model_ran_like_eager_at_its_normal_sizes() -> None:
    for name in NAMES:
        assert outcome(_record(name, "normal")) == "ran", name


def test_every_dim_was_probed_at_0_1_and_past_its_max() -> None:
    for name in NAMES:
        labels = {r["label"] for r in _records() if r["name"] == name}
        for dim, at in _dims()[name].items():
            if not at:
                continue  # gru's t: export specialized it (torch.nn.GRU), declared static
            assert {f"{dim}=0", f"{dim}=1"} <= labels or {f"{dim}:size=0", f"{dim}:size=1"} <= labels, (name, dim)


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


def test_m2m100_table_bound_makes_no_claim_about_eager_past_the_traced_range() -> None:
    """M2M100's sinusoidal table has 64 + 2 rows, and eager builds a longer one when an input needs it
    (`if max_pos > self.weights.size(0): self.make_weights(...)`); export traced the branch not taken, so
    the package raises at 65 tokens where eager returns. The table is a buffer (`ConstantType::Buffer`),
    which model code may rebuild past the traced range, so AOTI003 does not say that eager rejects the
    input: a warning (past the declared max). XGLM, the same table growth with positions from arange,
    aborts at 65 and gets a warning that makes no claim about eager either."""
    for ref, label in (((0, 1), "src=max+1"), ((1, 1), "tgt=max+1")):
        f = _finding("m2m100", "AOTI003", ref)
        assert str(f.severity) == "warning" and "eager" not in f.message and "eager" not in f.detail
        run = _record("m2m100", label)
        assert outcome(run) == "raised" and run["eager"]["ok"], run
        assert "index out of bounds: 0 <= tmp23 < 66L" in run["aoti"]["error"]
    f = _finding("xglm", "AOTI003")
    assert str(f.severity) == "warning" and "eager" not in f.message and f.witness == "ids.shape = (2, 65)"
    run = _record("xglm", "seq=max+1")
    assert outcome(run) == "crash" and run["signal"] == "SIGABRT" and run["eager"]["ok"]
    assert outcome(_record("xglm", "seq=63")) == "ran"


def test_beit_guard_holds_only_at_the_example_patch_grid() -> None:
    """BEiT's relative position bias is interpolated to (2 * grid - 1) rows and columns; export kept the
    example's grid (4 x 3 patches) as a guard, so every other grid breaks it. AOTI020 (error) gives the
    guard and a witness at 16; every grid probed other than 4 x 3 fails, inside the declared range too."""
    f = _finding("beit", "AOTI020", (0, 2))
    assert "((-1) + 2*(L['x'].size()[2] // 8)) == 7" in " ".join([*f.chain, f.detail])
    for label in ("hp:size=8", "hp:size=12", "wp:size=8", "wp:size=20", "witness:unchecked-export-guard:1"):
        assert outcome(_record("beit", label)) == "raised", label
    for label in ("hp:size=8*(max+1)", "wp:size=8*(max+1)"):
        run = _record("beit", label)
        assert outcome(run) == "crash" and run["signal"] == "SIGSEGV", label
    # 33 keeps the guard (33 // 8 == 4) and is not a multiple of 8: wrong values, AOTI014's words
    assert outcome(_record("beit", "hp:size=33")) == "wrong"
    # AOTI014's witness keeps export's guards (h // 8 == 4, w // 8 == 3): the smallest non-multiple
    # there, 33, returns wrong values, as its words say (17, the smallest overall, breaks the guard
    # and raises)
    f = _finding("beit", "AOTI014", (0, 2))
    assert f.message.endswith("silently returns wrong values") and f.witness == "x.shape = (3, 3, 33, 24)"
    assert outcome(_record("beit", "witness:unenforced-divisibility:1")) == "wrong"
    f = _finding("beit", "AOTI014", (0, 3))
    assert f.witness == "x.shape = (3, 3, 32, 25)" and outcome(_record("beit", "witness:unenforced-divisibility:2")) == "wrong"


def test_flash_attention_over_no_queries_kills_the_process() -> None:
    """An empty sequence reaches CPU flash attention: SIGFPE. LayoutLM's self-attention gets an error
    that says so; Whisper's decoder length reaches the cross-attention's queries (a view of its own
    sizes, `reinterpret_tensor_wrapper(buf55, 4, int_array_36, ...)`) and dies the same way: the
    finding leads with that dim, an error that says so."""
    f = _finding("layoutlm", "AOTI002")
    assert str(f.severity) == "error" and "flash attention kills the process (SIGFPE)" in f.message
    assert _record("layoutlm", "seq=0")["signal"] == "SIGFPE"
    f = _finding("whisper", "AOTI002")
    assert str(f.severity) == "error" and (f.input, f.dim) == (1, 1) and "flash attention kills" in f.message
    run = _record("whisper", "tgt=0")
    assert outcome(run) == "crash" and run["signal"] == "SIGFPE"
    assert outcome(_record("whisper", "batch=0")) == "silent"   # eager raises, the package returns


def test_mpt_alibi_past_max_seq_len_is_a_known_gap() -> None:
    assert not [f for f in _lint("mpt") if f.code not in ("AOTI002", "AOTI019")]
    assert outcome(_record("mpt", "seq=max+1")) == "ran"   # 32 keys: eager's buffer still fits
    for label in ("seq=33", "seq=40"):
        run = _record("mpt", label)
        assert outcome(run) == "silent" and "must match the size of tensor b (32)" in run["eager"]["error"]


def test_patchtst_position_table_and_empty_patches() -> None:
    """PatchTST-like: p = (t - 8) // 4 + 1 patches index a 64-row table, so t >= 264 (p = 65) aborts the
    embedding (AOTI003 error, witness 264; eager raises IndexError); 260 and 263 run. Below the compiled
    minimum 12, t = 4..7 give p = 0, the flash attention's length: the package dies (SIGFPE) where eager's
    unfold raises, and AOTI002 leads with t = 7 (a warning: the declared minimum is 12). t = 0 and 1 give
    p = -1, a buffer of negative size the package rejects as eager's unfold does: the mean's division by
    t = 0 never returns its NaN, so AOTI004 is not reported."""
    f = _finding("patchtst", "AOTI003")
    assert str(f.severity) == "error" and f.witness == "x.shape = (3, 264, 3)"
    for label in ("t=264", "t=max+1", "witness:index-exceeds-constant-bound:1"):
        run = _record("patchtst", label)
        assert outcome(run) == "crash" and run["signal"] == "SIGABRT", label
    assert {outcome(_record("patchtst", label)) for label in ("t=260", "t=263", "t=8", "t=11")} == {"ran"}
    f = _finding("patchtst", "AOTI002")
    assert str(f.severity) == "warning" and f.message_key == "unenforced-lower-bound.sdpa-at"
    assert f.witnesses[0] == "x.shape = (3, 7, 3)" and "x.shape = (3, 0, 3)" in f.witnesses
    for label in ("t=7", "witness:unenforced-lower-bound:1"):
        run = _record("patchtst", label)
        assert outcome(run) == "crash" and run["signal"] == "SIGFPE" and not run["eager"]["ok"], label
    assert not [f for f in _lint("patchtst") if f.code == "AOTI004"]
    for label in ("t=0", "t=1"):
        run = _record("patchtst", label)
        assert outcome(run) == "rejected" and "negative dimension" in run["aoti"]["error"], label


def test_layoutlm_reads_past_its_position_buffer_silently() -> None:
    f = _finding("layoutlm", "AOTI013")
    assert str(f.severity) == "warning" and f.witness == "ids.shape = (2, 65), bbox.shape = (2, 65, 4)"
    run = _record("layoutlm", "witness:read-past-constant:1")
    assert outcome(run) == "silent" and "must match the size of tensor b (64)" in run["eager"]["error"]


def test_a_division_check_no_size_in_range_can_fail_is_linked() -> None:
    """BEiT's run_impl checks `1 - 2*s45 - 2*s84 + 4*s45*s84 != 0` ("Integer floor division by
    zero") before dividing: that is (2*s45 - 1)*(2*s84 - 1), 0 for no integer size. Every point of
    s45, s84 in [2, 16] is tried, so it covers its lines instead of an unlinked-assertion warning; a
    check some size in range breaks stays unlinked."""
    from analyzer.query import zeros as Z

    (model,) = api.load(str(HERE / "beit.cpu.stripped.pt2")).models
    exprs = {expr for expr, message, _ in model.zero_checks if message == "Integer floor division by zero"}
    (expr,) = exprs
    assert Z.never_zero(model, expr) and not any(f.code == "AOTI008" for f in _lint("beit"))
    assert not Z.never_zero(model, "s45 - 3")        # s45 = h // 8 is 3 at h = 24
    assert not Z.never_zero(model, "s45 - unknown")  # not a size in range


def test_a_lower_bound_witness_keeps_export_guards() -> None:
    """unenforced-lower-bound's witness for BEiT's batch puts h and w where export's patch-grid guard
    holds (h // 8 == 4, w // 8 == 3): batch 1 there runs like eager, as the info says, instead of
    raising the guard's view error at h = w = 16."""
    f = _finding("beit", "AOTI002")
    assert f.witness == "x.shape = (1, 3, 32, 24)"
    assert outcome(_record("beit", "witness:unenforced-lower-bound:1")) == "ran"


def test_gat_unchecked_scatter_says_the_gather_raises_at_its_witness() -> None:
    """GAT: x empty (n = 0) with edges empties scatter_reduce's target, whose error code is discarded,
    but the gather h[src] checks its index against n too: the package raises that index error, as
    eager raises IndexError. AOTI011 says so (an info), and AOTI001 reports the check itself."""
    f = _finding("gat", "AOTI011")
    assert str(f.severity) == "info" and f.message_key == "unchecked-extern-call.empty-target.checked-first"
    assert "raises an index error anyway" in f.message and "fail unseen" not in f.message
    assert f.witness == "x.shape = (0, 16), edge_index.shape = (2, 3)"
    run = _record("gat", "witness:unchecked-extern-call:1")
    assert outcome(run) == "rejected" and "index out of bounds" in run["aoti"]["error"] and not run["eager"]["ok"]
    assert str(_finding("gat", "AOTI001").severity) == "info"
