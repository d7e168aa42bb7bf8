"""The nineteenth stranger round (fixtures/stranger19): ten model families of no earlier fixture set
(Qwen3, HuBERT, Swin2SR and XLM-RoBERTa-XL from transformers configs, and six written here: segment sums
by a cumsum read at CSR offsets with `repeat_interleave` segment ids, DGCNN SortPooling with an `argsort`
rank table, a learned position grid resized by `interpolate` beside row/column tables, TiSASRec-style
time intervals bucketed by `searchsorted`, HRNet-style fusion by strided convs, `max_pool2d(ceil_mode)` and
`interpolate(size=...)`, and a graph readout by `index_add`/`scatter_reduce` into per-graph targets),
compiled for CPU with torch 2.13 and linted from the wheel of 9eb6d35 (equal to the tree at 9eb6d35 on
every package).

What aoti-lint says is pinned next to what the packages did, from committed records only (nothing
here compiles): `runtime.json` (fixtures/real/probe.py: each package through `aoti_load_package` in
a child process against eager, every dynamic dim at 0, 1 and max + 1, the sizes that reach a table's
edge or break a multiple, and the primary size witness of every finding)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, pin
from stranger_harness import Round, outcome

ROUND = Round(FIXTURES / "stranger19")
NAMES = ["qwen3", "hubert", "swin2sr", "xlmr_xl", "segment_csr", "sort_pool", "pos_interp", "tisasrec",
         "hrnet_fuse", "graph_readout"]
_lint, _record = ROUND.lint, ROUND.record

_LAYOUT = ("AOTI019", "info", ())

FINDINGS: dict[str, set[tuple]] = {
    "qwen3": {
        ("AOTI002", "info", ((0, 1),)),           # seq < 2: seq = 0 returns where eager raises (silent)
        _LAYOUT,
    },
    "hubert": {
        ("AOTI002", "info", ((0, 0), (0, 1))),    # batch < 2 (batch 0 returns where eager raises), n < 30
        ("AOTI004", "info", ((0, 1),)),           # n = 0: the group norm over no frames (eager raises first)
        ("AOTI010", "info", ((0, 1),)),           # n > 40979: never compiled for
        _LAYOUT,
    },
    "swin2sr": {
        ("AOTI014", "error", ((0, 2),)),          # h no multiple of 4: returns where eager raises (silent)
        ("AOTI014", "error", ((0, 3),)),          # the same of w
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
        _LAYOUT,
    },
    "xlmr_xl": {
        ("AOTI003", "error", ((0, 1),)),          # seq > 38: cumsum positions + pad id past the 40-row table
        ("AOTI002", "info", ((0, 1),)),
        _LAYOUT,
    },
    "segment_csr": {
        ("AOTI001", "warning", ((1, 0),)),        # nb = 1: the bound nb - 1 is 0 (SIGSEGV: repeat_interleave's short output)
        ("AOTI002", "info", ((0, 0), (1, 0))),    # nb < 3 (nb = 1: SIGSEGV reading repeat_interleave's short output)
        _LAYOUT,
    },
    "sort_pool": {
        ("AOTI004", "info", ((0, 0),)),           # n = 0: the mean over no nodes (SIGSEGV where eager returns NaN)
        ("AOTI002", "info", ((0, 0),)),           # n < 10 (below the declared 10): raises where eager runs
        ("AOTI003", "info", ((0, 0),)),           # n > 64: the rank (argsort of the order) into 64 rows, as eager
        _LAYOUT,
    },
    "pos_interp": {
        ("AOTI003", "error", ((0, 2),)),          # h > 32: the 32-row row table (SIGABRT)
        ("AOTI003", "error", ((0, 3),)),          # w > 24: the 24-row column table (SIGABRT)
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
        _LAYOUT,
    },
    "tisasrec": {
        ("AOTI003", "info", ((0, 1),)),           # l > 50: reversed positions past the 50-row table (raises, as eager)
        ("AOTI003", "error", ()),                 # searchsorted's bucket 16 past the 16-row interval table (SIGABRT)
        ("AOTI002", "info", ((0, 0), (0, 1))),
        ("AOTI012", "info", ((1, 0),)),
        ("AOTI012", "info", ((1, 1),)),
        _LAYOUT,
    },
    "hrnet_fuse": {
        ("AOTI023", "error", ((0, 3),)),          # the ceil-mode max_pool compiled as floor (traced at w = 9): w = 11
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),  # h < 7, w < 9 (Inductor's compiled minimums)
        _LAYOUT,
    },
    "graph_readout": {
        ("AOTI001", "error", ((2, 0),)),          # ng = 0: the index_add's bound (SIGABRT)
        ("AOTI001", "error", ((2, 0),)),          # ng = 0: the index_select's bound (SIGABRT)
        ("AOTI011", "info", ((2, 0),)),           # index_put_out / scatter_reduce_two_out errors discarded
        ("AOTI002", "info", ((0, 0), (2, 0))),
        ("AOTI012", "info", ((1, 0),)),
        _LAYOUT,
    },
}


@pytest.mark.parametrize("name", NAMES)
def test_findings_are_pinned(name: str) -> None:
    assert {pin(f) for f in _lint(name)} == FINDINGS[name]


def test_graph_readout_has_two_empty_bound_errors() -> None:
    """The set above folds the two AOTI001 errors (index_add, index_select) and the two AOTI011 infos."""
    pins = [pin(f) for f in _lint("graph_readout")]
    assert pins.count(("AOTI001", "error", ((2, 0),))) == 2
    assert pins.count(("AOTI011", "info", ((2, 0),))) == 2


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
NOT_REPRODUCED: dict[tuple[str, str, str], str] = {}


@pytest.mark.parametrize("name", NAMES)
def test_every_error_finding_witness_fails(name: str) -> None:
    ROUND.check_witnesses_fail(name, NOT_REPRODUCED)


def _findings(name: str, code: str) -> list:
    return [f for f in _lint(name) if f.code == code]


def test_position_tables_shorter_than_the_declared_range_abort() -> None:
    """xlmr_xl reads a 40-row table at `cumsum(ids != 1) + 1` (seq declared to 64), pos_interp a 32-row row
    table at arange(h) and a 24-row column table at arange(w) (declared to 48): the last size that fits runs
    like eager, the next aborts (SIGABRT) where eager raises IndexError, at AOTI003's error witnesses."""
    for name, edge, past, witness in (("xlmr_xl", "seq=38", "seq=39", "ids.shape = (2, 39)"),
                                      ("pos_interp", "h=32", "h=33", "x.shape = (3, 3, 33, 4)"),
                                      ("pos_interp", "w=24", "w=25", "x.shape = (3, 3, 4, 25)")):
        assert outcome(_record(name, edge)) == "ran", (name, edge)
        run = _record(name, past)
        assert outcome(run) == "crash" and run["signal"] == "SIGABRT" and not run["eager"]["ok"], (name, past)
        assert witness in [f.witness for f in _findings(name, "AOTI003") if str(f.severity) == "error"]


def test_tisasrec_interval_bucket_past_its_table_aborts() -> None:
    """The reversed positions (`l - 1 - arange(l)`, 50 rows) raise at l = 51 as eager does, outside an OpenMP
    region: AOTI003's info. The intervals bucketed by `searchsorted` into 16 boundaries (1 .. 32) take 17
    values, one more than the 16-row table: once two items are more than 32 apart (l = 40, 50 with steps of
    about 1) the check inside `#pragma omp parallel` aborts the process where eager raises IndexError: an
    AOTI003 error whose witness is such a value (found in round 19 unexplained, fixed with it)."""
    table, op = sorted(_findings("tisasrec", "AOTI003"), key=lambda f: str(f.severity) == "error")
    assert str(table.severity) == "info" and table.witness == "ids.shape = (3, 51), times.shape = (3, 51)"
    assert str(op.severity) == "error" and op.message_key == "index-exceeds-constant-bound.op-values"
    assert op.message == "the `searchsorted` result reaching 16 aborts the embedding in `interval` (Embedding)"
    assert op.witness.endswith("; with a value above the last element of the sorted sequence (`searchsorted` "
                               "returns its length)") and op.input == 1
    for label in ("l=51", "l=max+1"):
        assert outcome(_record("tisasrec", label)) == "rejected", label
    for label in ("l=40", "l=50"):
        run = _record("tisasrec", label)
        assert outcome(run) == "crash" and run["signal"] == "SIGABRT" and not run["eager"]["ok"], label
    for label in ("normal", "l=20", "l=30"):
        assert outcome(_record("tisasrec", label)) == "ran", label


def test_hrnet_pooled_width_is_compiled_for_w_1_mod_4() -> None:
    """w is `Dim.AUTO` (compiled [9, inf) by Inductor, h [7, inf)); the ceil-mode pool's width is
    `((w - 1) // 2 - 1) // 2 + 1` in the program but `(w - 1) // 4` in the package's buffer and loop: equal at
    w = 5, 9, 13 (they run like eager), not at 11 and 12 (wrong values: unexplained in the round, now
    AOTI023's error, witness w = 11, probed after the round: wrong); below the compiled 9, w = 7 and 8 are
    wrong and w = 3 SIGSEGV (the buffer 0 wide), covered by AOTI002's info. The exported program's size
    hints give the traced map (5 columns, 6 rows): the rows were compiled with ceil mode's count."""
    for label in ("normal", "w=5", "w=13", "w=max+1", "h=5", "h=3"):
        assert outcome(_record("hrnet_fuse", label)) == "ran", label
    for label in ("w=7", "w=8", "w=11", "w=12"):
        assert outcome(_record("hrnet_fuse", label)) == "wrong", label
    run = _record("hrnet_fuse", "w=3")
    assert outcome(run) == "crash" and run["signal"] == "SIGSEGV" and run["eager"]["ok"]
    (pool,) = [f for f in _lint("hrnet_fuse") if f.code == "AOTI023"]
    assert (str(pool.severity), pool.witness) == ("error", "x.shape = (3, 8, 7, 11)")
    assert outcome(_record("hrnet_fuse", "witness:ceil-mode-pool-traced-rounding:1")) == "wrong"
    assert {f for f in _lint("hrnet_fuse") for label in ("w=11", "w=12") if f in ROUND.explained_by(
        "hrnet_fuse", _record("hrnet_fuse", label))} == {pool}


def test_swin2sr_off_multiples_return_where_eager_raises() -> None:
    """h and w are declared `4 * Dim` (Swin2SR's reflect padding to the window made Inductor fail otherwise);
    sizes no multiple of 4 return an image from the package where eager raises (a view of the padded
    windows), as AOTI014's errors say at 9."""
    for label in ("hp:size=5", "hp:size=7", "wp:size=6", "wp:size=9", "witness:unenforced-divisibility:1"):
        run = _record("swin2sr", label)
        assert outcome(run) == "silent", label
    assert sorted(f.witness for f in _findings("swin2sr", "AOTI014")) == [
        "pixels.shape = (3, 3, 8, 9)", "pixels.shape = (3, 3, 9, 8)"]


def test_sort_pool_below_k_fails_where_eager_runs() -> None:
    """n is declared [10, 256] (export refused 0: the guard `10 <= n` from `order[:10]`); at n = 1 and 9 the
    package raises `index out of bounds: 0 <= tmp7 < ks0` and at 0 it SIGSEGV, where eager pads to 10 rows
    and runs. The `argsort` rank into the 64-row table raises at n = 65 as eager does: no finding in the
    round (the second sort's input, the first's indices, had no shape: the shim allocates it); an AOTI003
    info since, its shape being the one the wrapper's `assert_size_stride` states for it."""
    for label in ("n=1", "n=9"):
        run = _record("sort_pool", label)
        assert outcome(run) == "raised" and "tmp7 < ks0" in run["aoti"]["error"], label
    run = _record("sort_pool", "n=0")
    assert outcome(run) == "crash" and run["signal"] == "SIGSEGV" and run["eager"]["ok"]
    for label in ("n=65", "n=max+1"):
        run = _record("sort_pool", label)
        assert outcome(run) == "rejected" and "tmp3 < 64L" in run["aoti"]["error"], label
    (rank,) = _findings("sort_pool", "AOTI003")
    assert (str(rank.severity), rank.witness) == ("info", "x.shape = (65, 16)") and not _findings("sort_pool", "AOTI015")
