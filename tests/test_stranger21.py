"""The twenty-first stranger round (fixtures/stranger21): twelve model families of no earlier fixture set
(BiT and Splinter from transformers configs, and ten written here: a dilated ceil-mode `max_pool2d`, a
ceil-mode `avg_pool2d` without the padding in its divisor, `index_reduce` segment maxima, `masked_scatter`
image-token splicing, `scatter(reduce="multiply")` slot gates, `torch.roll` shifted windows, a non-integer
`interpolate(scale_factor=2.5)` with a row table, run-length positions by cumsum / cummax, `Tensor.unfold`
frames with a frame-number table, and negative `F.pad` crops), compiled for CPU with torch 2.13 and
linted from the wheel of 0b7150d (equal to the tree at 0b7150d on every package).

What aoti-lint says is pinned next to what the packages did, from committed records only (nothing
here compiles): `runtime.json` (fixtures/real/probe.py: each package through `aoti_load_package` in
a child process against eager, every dynamic dim at 0, 1 and max + 1, the sizes that reach a table's
edge or break a multiple, and the primary size witness of every finding)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, pin
from stranger_harness import Round, outcome

ROUND = Round(FIXTURES / "stranger21")
NAMES = ["bit", "splinter", "dilated_pool", "avg_ceil2d", "index_reduce", "masked_scatter", "scatter_mul",
         "roll_window", "frac_interp", "runlen_pos", "tensor_unfold", "neg_pad"]
_lint, _record = ROUND.lint, ROUND.record

_LAYOUT = ("AOTI019", "info", ())

FINDINGS: dict[str, set[tuple]] = {
    "bit": {
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),   # batch < 2, h and w below Inductor's compiled 9
        _LAYOUT,
    },
    "splinter": {
        ("AOTI003", "error", ((0, 1),)),          # seq > 40: arange positions past the 40-row table (SIGABRT)
        ("AOTI002", "info", ((0, 1),)),           # seq < 2 (seq 0: silent, eager's padding warning raises)
        _LAYOUT,
    },
    "dilated_pool": {
        ("AOTI023", "error", ((0, 2), (0, 3))),   # h or w even: ceil mode dropped at the traced 9 (wrong, h 2 SIGSEGV)
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
        _LAYOUT,
    },
    "avg_ceil2d": {
        ("AOTI023", "error", ((0, 2), (0, 3))),   # h or w even: the same, count_include_pad=False (wrong)
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
        _LAYOUT,
    },
    "index_reduce": {
        ("AOTI001", "info", ((0, 0),)),           # m = 0: the segment read's bound (index_reduce raises first, as eager)
        ("AOTI002", "info", ((0, 0), (1, 0))),
        ("AOTI012", "info", ((2, 0),)),
        _LAYOUT,
    },
    "masked_scatter": {
        ("AOTI002", "info", ((0, 0), (0, 1), (2, 0))),   # nothing on k < mask.sum(): ATen's own check raises
        ("AOTI012", "info", ((1, 0),)),
        ("AOTI012", "info", ((1, 1),)),
        _LAYOUT,
    },
    "scatter_mul": {
        ("AOTI001", "info", ((0, 1),)),           # m = 0: the gather's bound (raises as eager)
        ("AOTI011", "info", ((0, 1),)),           # scatter_reduce_two_out's error code dropped; the gather raises
        ("AOTI002", "info", ((0, 0), (0, 1), (1, 1))),
        ("AOTI012", "info", ((2, 0),)),
        ("AOTI012", "info", ((2, 1),)),
        ("AOTI012", "info", ((1, 0),)),
        _LAYOUT,
    },
    "roll_window": {
        ("AOTI014", "error", ((0, 1),)),          # h not a multiple of 4: a map cut to 4 * (h // 4) (silent)
        ("AOTI014", "error", ((0, 2),)),          # w: the same
        ("AOTI002", "info", ((0, 0), (0, 1), (0, 2))),
        _LAYOUT,
    },
    "frac_interp": {
        ("AOTI003", "error", ((0, 2),)),          # h > 16: floor(2.5 h) rows past the 40-row table (SIGABRT)
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
        _LAYOUT,
    },
    "runlen_pos": {
        ("AOTI003", "info", ((0, 1),)),           # l > 16: the run number (cumsum) past 16 rows (raises as eager)
        ("AOTI003", "info", ((0, 1),)),           # l > 8: the position in a run (cummax) past 8 rows
        ("AOTI002", "info", ((0, 0), (0, 1))),
        _LAYOUT,
    },
    "tensor_unfold": {
        ("AOTI003", "info", ((0, 1),)),           # l > 36: the 17th frame past the 16-row table (raises as eager)
        ("AOTI002", "info", ((0, 0), (0, 1))),    # l < 7 (declared 7): l 4 SIGSEGV (no frames, read at -1)
        _LAYOUT,
    },
    "neg_pad": {
        ("AOTI002", "info", ((0, 0), (0, 2))),    # n < 8 (declared 8): every such n raises as eager does
        _LAYOUT,
    },
}


@pytest.mark.parametrize("name", NAMES)
def test_findings_are_pinned(name: str) -> None:
    assert {pin(f) for f in _lint(name)} == FINDINGS[name]


def test_runlen_pos_has_two_table_infos() -> None:
    """The set above folds runlen_pos's two AOTI003 infos (the 16-row run table and the 8-row in-run one)."""
    witnesses = sorted(f.witness for f in _lint("runlen_pos") if f.code == "AOTI003")
    assert witnesses == ["ids.shape = (3, 17)", "ids.shape = (3, 9)"]


# Failing probes no finding explains: (model, label) -> (outcome, why). None this round.
KNOWN_GAPS: dict[tuple[str, str], tuple[str, str]] = {}


@pytest.mark.parametrize("name", NAMES)
def test_every_failing_probe_is_explained_or_a_known_gap(name: str) -> None:
    ROUND.check_explained(name, KNOWN_GAPS)


def test_every_model_ran_like_eager_at_its_normal_sizes() -> None:
    ROUND.check_normal_sizes_ran(NAMES)


def test_every_dim_was_probed_at_0_1_and_past_its_max() -> None:
    ROUND.check_edges_probed(NAMES)


# Findings at warning or above whose witness runs like eager: (model, code, witness) -> why. None this round.
NOT_REPRODUCED: dict[tuple[str, str, str], str] = {}


@pytest.mark.parametrize("name", NAMES)
def test_every_error_finding_witness_fails(name: str) -> None:
    ROUND.check_witnesses_fail(name, NOT_REPRODUCED)


def _findings(name: str, code: str) -> list:
    return [f for f in _lint(name) if f.code == code]


def test_ceil_mode_2d_pools_even_sizes_are_wrong() -> None:
    """h and w are `Dim.AUTO` (declared [2, inf); compiled [5, inf) and [3, inf) by Inductor), traced at 9
    where ceil and floor agree: both pools allocate (h - 1) // 2 rows where eager (and the upsample that reads them, which
    asks for h // 2) has one more at even h, so every even size returns other values, as AOTI023's errors
    say; odd sizes run like eager. At h = 2 the dilated max pool has no rows at all and the nearest upsample
    reads its empty buffer (SIGSEGV) where eager runs."""
    for name in ("dilated_pool", "avg_ceil2d"):
        for label in ("normal", "h=3", "h=5", "h=11", "h=max+1", "w=7", "w=max+1"):
            assert outcome(_record(name, label)) == "ran", (name, label)
        for label in ("h=4", "h=6", "h=8", "h=10", "w=4", "w=12", "witness:ceil-mode-pool-traced-rounding:1"):
            assert outcome(_record(name, label)) == "wrong", (name, label)
    run = _record("dilated_pool", "h=2")
    assert outcome(run) == "crash" and run["signal"] == "SIGSEGV" and run["eager"]["ok"]
    assert outcome(_record("avg_ceil2d", "h=2")) == "wrong"
    assert [f.witness for f in _findings("dilated_pool", "AOTI023")] == ["x.shape = (3, 8, 6, 5)"]
    assert [f.witness for f in _findings("avg_ceil2d", "AOTI023")] == ["x.shape = (3, 8, 4, 3)"]
    assert [f.subject.op for f in _findings("dilated_pool", "AOTI023")] == ["max_pool2d"]
    assert [f.subject.op for f in _findings("avg_ceil2d", "AOTI023")] == ["avg_pool2d"]
    assert [f.source.line for f in _findings("dilated_pool", "AOTI023") + _findings("avg_ceil2d", "AOTI023")] == [83, 106]


def test_roll_window_sizes_off_the_multiple_return_a_cut_map() -> None:
    """h and w are declared `4 * Dim`; sizes off the multiple return a map cut to 4 * (h // 4) rows where
    eager's window view raises (silent), as AOTI014's errors say; size 0 and 68 run like eager."""
    for label in ("hp:size=1", "hp:size=2", "hp:size=6", "hp:size=13", "wp:size=1", "wp:size=5", "wp:size=10"):
        assert outcome(_record("roll_window", label)) == "silent", label
    assert _record("roll_window", "hp:size=6")["aoti"]["shape"] == [2, 4, 8, 16]
    for label in ("hp:size=0", "hp:size=4*(max+1)", "wp:size=0", "wp:size=4*(max+1)"):
        assert outcome(_record("roll_window", label)) == "ran", label
    assert sorted(f.witness for f in _findings("roll_window", "AOTI014")) == [
        "x.shape = (3, 8, 9, 16)", "x.shape = (3, 9, 8, 16)"]


def test_position_tables_abort_inside_openmp_and_raise_outside() -> None:
    """splinter's 40-row position table and frac_interp's 40-row row table (read at arange(floor(2.5 h)))
    are checked inside `#pragma omp parallel`: past them the process aborts (AOTI003 errors, witnesses seq
    41 and h 17); tensor_unfold's 16-row frame table and runlen_pos's run table raise where eager raises
    (AOTI003 infos)."""
    for name, labels in (("splinter", ("seq=41", "seq=max+1")), ("frac_interp", ("h=17", "h=max+1"))):
        for label in labels:
            run = _record(name, label)
            assert outcome(run) == "crash" and run["signal"] == "SIGABRT" and not run["eager"]["ok"], (name, label)
    for name, label in (("splinter", "seq=40"), ("frac_interp", "h=16"), ("tensor_unfold", "l=36"),
                        ("runlen_pos", "l=48")):
        assert outcome(_record(name, label)) == "ran", (name, label)
    for name, label in (("tensor_unfold", "l=37"), ("runlen_pos", "l=49")):
        run = _record(name, label)
        assert outcome(run) == "rejected" and "index out of bounds" in run["aoti"]["error"], (name, label)
    assert [f.witness for f in _findings("splinter", "AOTI003")] == ["ids.shape = (2, 41)"]
    assert [f.witness for f in _findings("frac_interp", "AOTI003")] == ["x.shape = (3, 4, 17, 3)"]
    assert {str(f.severity) for f in _findings("tensor_unfold", "AOTI003")} == {"info"}


def test_tensor_unfold_below_its_declared_minimum() -> None:
    """l is declared [7, 64] (export's guard: at least two frames of 5 every 2). Below it the frame count
    `(l - 5) // 2 + 1` is negative at l 0-2 (the package raises on the negative size, eager on the frame),
    0 at l 4 (the linear upsample reads frame 0 and -1 of an empty buffer: SIGSEGV) and 1 at l 5-6 (runs
    like eager): only AOTI002's info."""
    for label in ("l=0", "l=1", "l=2"):
        assert outcome(_record("tensor_unfold", label)) == "rejected", label
    run = _record("tensor_unfold", "l=4")
    assert outcome(run) == "crash" and run["signal"] == "SIGSEGV"
    for label in ("l=5", "l=6"):
        assert outcome(_record("tensor_unfold", label)) == "ran", label
    assert {str(f.severity) for f in _lint("tensor_unfold")} == {"info"}


def test_extern_fallbacks_raise_as_eager() -> None:
    """`masked_scatter` (`aoti_torch_cpu_masked_scatter`) and `index_reduce` (`aoti_torch_cpu_index_reduce`)
    run as ATen calls whose own checks raise where eager raises (too few features for the mask, a segment
    past an empty base); `scatter(reduce="multiply")`'s `scatter_reduce_two_out` drops its error code
    (AOTI011's info) but the gather after it raises at m = 0 as eager does. No probe of the three failed."""
    for name in ("masked_scatter", "index_reduce", "scatter_mul"):
        assert not ROUND.unexplained(name)
        assert all(outcome(r) in ("ran", "rejected") for r in ROUND.records() if r["name"] == name), name
    for label in ("k=0", "k=1", "k=7", "l=9", "l=max+1"):
        run = _record("masked_scatter", label)
        assert outcome(run) == "rejected" and "Number of elements of source" in run["aoti"]["error"], label
    assert outcome(_record("masked_scatter", "k=9")) == "ran"
