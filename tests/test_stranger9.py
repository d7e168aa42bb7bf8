"""The ninth stranger round (fixtures/stranger9): ten model families of no earlier fixture set (Funnel
with factorized relative attention, XLM, MBart, UMT5, SEW, a SegNet-style max_unpool2d net, an
optical-flow warp by grid_sample, an adaptive-pooling head, top-k token pruning with a gather and a
one-hot, a capacity-routed mixture of experts), compiled for CPU with torch 2.13 and linted from the
built wheel before any change was made for them.

What aoti-lint says is pinned next to what the packages did, from committed records only (nothing
here compiles): `runtime.json` (fixtures/real/probe.py: each package through `aoti_load_package` in
a child process against eager, every dynamic dim at 0, 1 and max + 1, the sizes that break a
multiple or a window or reach a table's edge, and the primary size witness of every finding).
Every probe that fails is explained by a finding about its dim, or is a known gap listed here with
its reason; a finding at warning or above whose witness does not fail is listed with its reason."""

from __future__ import annotations

import zipfile

import pytest

from conftest import FIXTURES, finding_refs, pin
from stranger_harness import FAILURES, Round, outcome

ROUND = Round(FIXTURES / "stranger9")
NAMES = ["funnel", "xlm", "mbart", "umt5", "sew", "segnet", "flow_warp", "adaptive_head", "topk_prune", "moe"]
_lint, _records, _record = ROUND.lint, ROUND.records, ROUND.record


# -- the findings ---------------------------------------------------------------------------------------

_LAYOUT = ("AOTI019", "info", ())
_IMAGE = {("AOTI002", "info", ((0, 0), (0, 2), (0, 3))), _LAYOUT}

# (code, severity, the (input, dim) pairs it names), per package; AOTI019 (the unchecked layout of
# every input) names no dim.
FINDINGS: dict[str, set[tuple]] = {
    "funnel": {
        ("AOTI020", "error", ((0, 1),)),          # (32 + 64*((seq-1)//2)) == (-32 + 32*seq): seq even, witness 7
        ("AOTI023", "error", ((0, 1),)),          # the ceil-mode avg_pool compiled as floor (traced at 16): witness 7
        ("AOTI002", "info", ((0, 1),)),           # < 6 (witnesses 5, 0 and 4097)
        ("AOTI004", "warning", ((0, 1),)),        # seq = 1: `x0 % (2*(ks0 // 2))` divides by 0 (SIGFPE)
        ("AOTI010", "info", ((0, 1),)),           # > 4096 never compiled for (Dim.AUTO)
        _LAYOUT,
    },
    "xlm": {
        ("AOTI002", "info", ((0, 1),)),
        ("AOTI013", "warning", ((0, 1),)),        # 65 past the 64-column position_ids: run_impl rejects first
        _LAYOUT,
    },
    "mbart": {
        ("AOTI002", "error", ((0, 1), (1, 1))),   # src or tgt = 0: SIGFPE in CPU flash attention
        ("AOTI003", "info", ((0, 1),)),           # 65 past the 64 + 2-row tables: raises, as eager
        ("AOTI003", "info", ((1, 1),)),
        _LAYOUT,
    },
    "umt5": {
        ("AOTI002", "error", ((0, 1), (1, 1))),   # src or tgt = 0: SIGFPE
        _LAYOUT,
    },
    "sew": {
        ("AOTI020", "info", ((0, 1),)),           # witness t = 60 (an even frame count): the traced pad is by 0
        ("AOTI002", "warning", ((0, 0), (0, 1))),  # t < 60 (Dim.AUTO's min): at 59 a SIGFPE
        ("AOTI004", "info", ((0, 1),)),           # t = 0: group_norm divides by 0
        _LAYOUT,
    },
    "segnet": set(_IMAGE),
    "flow_warp": _IMAGE | {
        ("AOTI012", "info", ((1, 0),)),           # b's dims are never compared with a's
        ("AOTI012", "info", ((1, 2),)),
        ("AOTI012", "info", ((1, 3),)),
    },
    "adaptive_head": _IMAGE | {
        ("AOTI021", "error", ((0, 2), (0, 3))),   # the pooling's bins are the traced 16x16 map's: h or w = 3
    },
    "topk_prune": {
        ("AOTI002", "info", ((0, 0), (0, 1))),
        ("AOTI003", "info", ((0, 1),)),           # > 64 past the position table: raises, as eager
        ("AOTI004", "info", ((0, 1),)),           # seq = 0: the mean divides by 0
        ("AOTI010", "info", ((0, 1),)),           # > 8193 never compiled for (Dim.AUTO)
        _LAYOUT,
    },
    "moe": {
        ("AOTI002", "info", ((0, 1),)),
        _LAYOUT,
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
    ("xlm", "AOTI013", "x.shape = (2, 65)"): (
        "the read past `inner.position_ids` (64 columns, sliced `[:, :seq]`) is behind run_impl's check of an "
        "unbacked size: `if (!(u0 <= 64L)) throw ... \"Expected u0 <= 64\"`, u0 the largest row length "
        "`(ids != pad).sum(1).max()` (XLM's `assert lengths.max() <= slen`); the probe's ids hold no padding, so "
        "u0 = 65 is rejected before any kernel, as eager raises (`The expanded size of the tensor (65) must "
        "match the existing size (64)`): `rejected`. Only ids with padding (every row at most 64 tokens long at "
        "seq > 64) reach the read, and there the package returns where eager raises (one pad per row at "
        "seq = 65, checked by hand: silent); a size alone cannot"),
}


@pytest.mark.parametrize("name", NAMES)
def test_every_error_finding_witness_fails(name: str) -> None:
    ROUND.check_witnesses_fail(name, NOT_REPRODUCED)


# -- what the findings say, against what happened -------------------------------------------------------

def _finding(name: str, code: str, ref: tuple[int, int] | None = None):
    (f,) = [f for f in _lint(name) if f.code == code and (ref is None or ref in finding_refs(f))]
    return f


def _member(name: str, suffix: str) -> str:
    with zipfile.ZipFile(FIXTURES / "stranger9" / f"{name}.cpu.stripped.pt2") as z:
        (member,) = [m for m in z.namelist() if m.endswith(suffix)]
        return z.read(member).decode()


def _outcomes(name: str, labels) -> dict[str, str]:
    return {label: outcome(_record(name, label)) for label in labels}


def test_adaptive_pooling_bins_are_those_of_the_traced_feature_map() -> None:
    """AdaptiveAvgPool2d((7, 7)) and AdaptiveMaxPool2d((7, 7)) over a feature map of dynamic size
    ((h - 1)//2 + 1 by (w - 1)//2 + 1, after a stride-2 conv): Inductor's lowering read the map's size
    with `guard_int`, so the fused kernel's bins are the traced 16x16 map's (`16L*x1 // 7` to
    `(22L + 16L*x1) // 7`) while its strides are the map's own, and nothing checks the guard. At h or
    w = 31 (a 16-wide map, as traced) the package runs like eager; any other size inside the declared
    [3, 256] returns other values (garbage read past the map where it is smaller, its top-left 16x16
    where larger). The round's wheel said nothing of it (a known gap then); AOTI021 now names both
    sides, witness h = w = 3 (a 2x2 map: NaN where eager returns), an error."""
    kernel = _member("adaptive_head", ".kernel.cpp")
    assert "c10::div_floor_integer(static_cast<int64_t>(16L*x1), static_cast<int64_t>(7L))" in kernel
    assert "c10::div_floor_integer(static_cast<int64_t>(22L + 16L*x1), static_cast<int64_t>(7L))" in kernel
    assert "AOTI_TORCH_CHECK" not in kernel
    for side in "hw":
        assert _outcomes("adaptive_head", [f"{side}=31"]) == {f"{side}=31": "ran"}
        sizes = [f"{side}={n}" for n in (5, 13, 14, 15, 27, 29, "max+1")]
        assert set(_outcomes("adaptive_head", sizes).values()) == {"wrong"}
    assert _record("adaptive_head", "h=5")["aoti"]["max_abs_diff"] > 1e30  # h = 5: a 3x3 map, read past
    f = _finding("adaptive_head", "AOTI021")
    assert (str(f.severity), f.witness) == ("error", "x.shape = (3, 3, 3, 3)")
    assert [(d.input, d.dim, d.size) for d in f.dims] == [(0, 2, 3), (0, 3, 3)]
    assert "bins compiled for 16 rows" in f.message and f.source.line == 182
    run = _record("adaptive_head", "witness:adaptive-pool-traced-size:1")
    assert outcome(run) == "wrong" and run["aoti"]["nan"] == 30 and run["eager"]["nan"] == 0
    assert f in ROUND.explained_by("adaptive_head", _record("adaptive_head", "h=max+1"))
    assert f not in ROUND.explained_by("adaptive_head", _record("adaptive_head", "h=31"))


def test_funnel_odd_lengths_break_the_pooling_guard() -> None:
    """Funnel's sequence (Dim.AUTO, traced at 16) is pooled by 2 with the cls token kept apart: export
    assumed `(32 + 64*((seq-1)//2)) == (-32 + 32*seq)` (seq even), a relation (AOTI020, witness 7). Every
    odd length returns other values (NaN rows among them), every even one at or above 4 runs like eager.
    seq = 1 kills the process (SIGFPE: `x0 % (2L*(ks0 // 2))` in the decoder's upsampling kernel, a
    modulo by 0, in loops over `2 + 2*((ks0 - 1) // 2)` that still run) where eager returns. The round's
    wheel said only AOTI002's info about sizes below 6 (words about empty tensors at 0); AOTI004 now
    names the modulo, witness seq = 1 (a warning: below the compiled 6). The pooling behind the guard,
    `avg_pool2d((2, 1), ceil_mode=True)` over the sequence, was compiled with floor's count (16 rounds
    alike both ways): AOTI023, at the same witness (added in round 19's follow-up)."""
    f = _finding("funnel", "AOTI020")
    assert f.witness == "x.shape = (2, 7)" and "a relation" in f.message
    pool = _finding("funnel", "AOTI023")
    assert pool.witness == "x.shape = (2, 7)" and pool.message.startswith("`x.shape[1]` = 7: `avg_pool2d` pools into 3 where eager pools into 4")
    odd = ["seq=3", "seq=5", "seq=17", "seq=33", "seq=max+1", "witness:unchecked-export-guard:1"]
    assert set(_outcomes("funnel", odd).values()) == {"wrong"}
    assert _outcomes("funnel", ["seq=4", "normal"]) == {"seq=4": "ran", "normal": "ran"}
    run = _record("funnel", "seq=1")
    assert outcome(run) == "crash" and run["signal"] == "SIGFPE" and run["eager"]["ok"]
    low = _finding("funnel", "AOTI002")
    assert str(low.severity) == "info" and "SIGFPE" not in low.message
    div = _finding("funnel", "AOTI004")
    assert (str(div.severity), div.witness, div.message_key) == ("warning", "x.shape = (2, 1)",
                                                                 "division-by-dynamic-size.index")
    assert "SIGFPE" in div.detail and div in ROUND.explained_by("funnel", run)
    assert "% static_cast<int64_t>(2L*(c10::div_floor_integer(static_cast<int64_t>(ks0)" in _member("funnel", ".kernel.cpp")


def test_offset_position_tables_raise_as_eager_and_empty_sequences_kill_the_process() -> None:
    """MBart's learned tables have 64 + 2 rows, read at arange(seq) + 2: 65 source or target tokens raise
    `index out of bounds: tmp9 < 66L` (eager: IndexError), an info each naming the 66-row table and
    "> 64"; 0 tokens reach CPU flash attention, SIGFPE (eager raises a reshape error), an error. UMT5's
    relative position buckets have no table edge: 129 runs like eager."""
    for ref, dim, side in (((0, 1), "src", "encoder"), ((1, 1), "tgt", "decoder")):
        f = _finding("mbart", "AOTI003", ref)
        assert str(f.severity) == "info" and f.message.endswith("(eager rejects it too)")
        assert "> 64" in f.message and "tmp9 < 66L" in f.detail
        assert (f.source.module, f.source.rows) == (f"inner.model.{side}.embed_positions", 66)
        for size in ("65", "max+1"):
            run = _record("mbart", f"{dim}={size}")
            assert outcome(run) == "rejected" and "tmp9 < 66L" in run["aoti"]["error"], (dim, size)
        assert outcome(_record("mbart", f"{dim}=64")) == "ran"
        for name in ("mbart", "umt5"):
            run = _record(name, f"{dim}=0")
            assert outcome(run) == "crash" and run["signal"] == "SIGFPE", (name, dim)
        assert outcome(_record("umt5", f"{dim}=max+1")) == "ran"
    for name in ("mbart", "umt5"):
        f = _finding(name, "AOTI002")
        assert str(f.severity) == "error" and "SIGFPE" in f.message
    assert not [f for f in _lint("umt5") if f.code == "AOTI003"]


def test_xlm_read_past_its_position_ids_is_rejected_by_an_unbacked_check_first() -> None:
    """XLM slices its 64-column `position_ids` buffer to the sequence: AOTI013 (warning) says 65 reads past
    it. The package never gets there with unpadded ids: run_impl checks the unbacked u0 (the largest row
    length, XLM's `assert lengths.max() <= slen`) against 64 and raises, as eager raises (NOT_REPRODUCED)."""
    f = _finding("xlm", "AOTI013")
    assert str(f.severity) == "warning" and f.witness == "x.shape = (2, 65)"
    assert "inner.position_ids" in f.message
    assert 'throw std::runtime_error("Expected u0 <= 64 but received "' in _member("xlm", ".wrapper.cpp")
    for label in ("seq=max+1", "witness:read-past-constant:1"):
        run = _record("xlm", label)
        assert outcome(run) == "rejected" and run["aoti"]["error"] == "RuntimeError: Expected u0 <= 64 but received 65"
    assert _outcomes("xlm", ["seq=63", "seq=64"]) == {"seq=63": "ran", "seq=64": "ran"}


def test_sew_squeeze_guards_are_no_minimums_and_run_like_eager() -> None:
    """SEW's squeeze (mean-pool by 2) and upsampling kept two guards on the frame count (t // 20 - 1):
    the pad branch after upsampling (odd counts) and the squeezed length > 1. The round's wheel called
    both "a minimum" (witnesses 100 and 60); the first, `2*((n - 1) // 2) < n - 1` with n = t // 20,
    holds and fails by turns (t = 60, 100, 140, 420 break it, 419 keeps it): now "a relation". The
    second, `min(...) > 1`, is export's 0/1 specialization of the squeezed length (it is 1 at t = 60,
    never 0): read as `> 0`, no size the package accepts breaks it, and the relation's smallest witness
    is 60. There the package returns eager's values, as at 100, 140, 420: the guard is the pad's test, and the
    exported graph's pad amount, `(t // 20 - 1) - 2*min(...)`, is its margin, 0 wherever it breaks (an info).
    Below the compiled 60, t = 49 and 59 kill the process (SIGFPE), AOTI002's warning."""
    (guard,) = [f for f in _lint("sew") if f.code == "AOTI020"]
    assert (str(guard.severity), guard.witness) == ("info", "x.shape = (2, 60)") and "a relation" in guard.message
    assert "pads by nothing" in guard.chain[-1]
    assert "> 1" not in guard.message_fields["guard"]
    sizes = ["t=69", "t=100", "t=140", "t=419", "t=420", "witness:unchecked-export-guard:1",
             "witness:unchecked-export-guard:2"]
    assert set(_outcomes("sew", sizes).values()) == {"ran"}
    assert _record("sew", "witness:unchecked-export-guard:2")["sizes"] == {"batch": 2, "t": 60}
    for label in ("t=49", "t=59"):
        run = _record("sew", label)
        assert outcome(run) == "crash" and run["signal"] == "SIGFPE"
    low = _finding("sew", "AOTI002")
    assert str(low.severity) == "warning" and "SIGFPE" in low.message


def test_positions_of_kept_tokens_raise_as_eager_past_their_table() -> None:
    """topk_prune reads a 64-row position table at the kept tokens' original indices (topk, sorted): at
    65 tokens or more the kernel's `0 <= tmp7 < 64L` raises (eager: IndexError), outside any OpenMP
    region. The round's wheel named no table: the index is topk's indices sorted (`sort_stable`'s values
    output), which the linker gave no range. A sort's values now keep its input's range ([0, seq - 1]
    for topk's indices): AOTI003 says seq > 64, an info (the check raises, as eager's lookup)."""
    kernel = _member("topk_prune", ".kernel.cpp")
    assert 'AOTI_TORCH_CHECK((0 <= tmp7) & (tmp7 < 64L), "index out of bounds: 0 <= tmp7 < 64L")' in kernel
    for label in ("seq=65", "seq=127", "seq=max+1"):
        run = _record("topk_prune", label)
        assert outcome(run) == "rejected" and "tmp7 < 64L" in run["aoti"]["error"], label
    assert outcome(_record("topk_prune", "seq=64")) == "ran"
    (f,) = [f for f in _lint("topk_prune") if f.code in ("AOTI003", "AOTI013")]
    assert (f.code, str(f.severity), f.witness) == ("AOTI003", "info", "x.shape = (3, 65, 32)")
    assert (f.source.rows, f.source.code) == (64, "h = h + self.pos(kept) + self.bucket(F.one_hot(order % 8, "
                                                  "8).to(x.dtype))")


def test_unpooling_warping_and_routing_run_like_eager_inside_their_ranges() -> None:
    """SegNet's max_unpool2d (indices from max_pool2d, output_size given), the flow warp's grid_sample and
    the capacity-routed experts (cumsum slots, index_put into a buffer sized by seq) run like eager at
    every probed size where eager runs, but where AOTI002's lower bounds cover them (flow_warp h, w = 1:
    the grid divides by h - 1 = 0)."""
    for name in ("segnet", "flow_warp", "moe"):
        for r in _records():
            if r["name"] != name or outcome(r) not in FAILURES:
                continue
            assert any(f.code == "AOTI002" for f in ROUND.explained_by(name, r)), (name, r["label"])
    assert outcome(_record("segnet", "h=3")) == "silent"  # the second pooling is empty: eager raises
    assert _outcomes("moe", ["seq=0", "seq=1", "seq=max+1"]) == {"seq=0": "ran", "seq=1": "ran", "seq=max+1": "ran"}
