"""The twentieth stranger round (fixtures/stranger20): ten model families of no earlier fixture set
(MegatronBERT and Mamba2 from transformers configs, and eight written here: reflect / circular /
replicate padding of a dynamic length, `histc` counts into a count table, `cummax` positions into
"steps since the best" tables, `median` / `kthvalue` positions into a position table, ceil-mode
1-d pooling traced at an odd length, `pixel_unshuffle` space-to-depth with a row table, `index_copy`
into a slot memory, and Informer-style lag / calendar features), compiled for CPU with torch 2.13 and
linted from the wheel of 92d73a5 (equal to the tree at 92d73a5 on every package).

What aoti-lint says is pinned next to what the packages did, from committed records only (nothing
here compiles): `runtime.json` (fixtures/real/probe.py: each package through `aoti_load_package` in
a child process against eager, every dynamic dim at 0, 1 and max + 1, the sizes that reach a table's
edge or break a multiple, and the primary size witness of every finding)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, pin
from stranger_harness import Round, outcome

ROUND = Round(FIXTURES / "stranger20")
NAMES = ["megatron_bert", "mamba2", "reflect_pad", "histc_table", "cummax_table", "order_stats", "ceil_pool1d",
         "pixel_unshuffle", "index_copy", "lag_features"]
_lint, _record = ROUND.lint, ROUND.record

_LAYOUT = ("AOTI019", "info", ())

FINDINGS: dict[str, set[tuple]] = {
    "megatron_bert": {
        ("AOTI003", "error", ((0, 1),)),          # seq > 40: arange positions past the 40-row table (SIGABRT)
        ("AOTI002", "error", ((0, 1),)),          # seq < 2: at 0 CPU flash attention divides by zero (SIGFPE)
        _LAYOUT,
    },
    "mamba2": {
        ("AOTI020", "info", ((0, 1),)),           # seq 8: no padding breaks `pad > 0` (runs like eager)
        ("AOTI002", "info", ((0, 1),)),
        _LAYOUT,
    },
    "reflect_pad": {
        ("AOTI018", "info", ((0, 2),)),           # n = 0: the reflection pad reads an empty input (SIGSEGV)
        ("AOTI002", "info", ((0, 0), (0, 2))),    # batch < 2, n < 4 (below the declared 4: n 1-3 silent)
        _LAYOUT,
    },
    "histc_table": {
        ("AOTI002", "info", ((0, 0),)),
        ("AOTI003", "info", ((0, 0),)),           # a histc count (up to n) into the 12-row table: raises as eager
        _LAYOUT,
    },
    "cummax_table": {
        ("AOTI002", "info", ((0, 0), (0, 1))),
        ("AOTI003", "info", ((0, 1),)),           # l > 32: steps since the running best, 32-row table
        ("AOTI003", "info", ((0, 1),)),           # l > 48: the best's position, 48-row table
        _LAYOUT,
    },
    "order_stats": {
        ("AOTI001", "info", ((0, 1),)),           # l = 0: the gather's bound (median raises first, as eager)
        ("AOTI002", "info", ((0, 0), (0, 1))),
        ("AOTI012", "info", ((1, 0),)),
        ("AOTI012", "info", ((1, 1),)),
        ("AOTI003", "info", ((0, 1),)),           # l > 16: kthvalue's position into 16 rows (raises as eager)
        _LAYOUT,                                  # nothing on the median's (the proxy executor's call)
    },
    "ceil_pool1d": {
        ("AOTI023", "error", ((0, 2),)),          # n even: ceil mode dropped at the traced 9 (wrong values)
        ("AOTI002", "info", ((0, 0), (0, 2))),    # batch < 2, n < 4 (compiled by Inductor; declared Dim.AUTO)
        _LAYOUT,
    },
    "pixel_unshuffle": {
        ("AOTI014", "error", ((0, 2),)),          # h odd: returns where eager raises (silent)
        ("AOTI014", "error", ((0, 3),)),          # w odd: the same
        ("AOTI003", "info", ((0, 2),)),           # h > 49: the 24-row row table (raises as eager)
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
        _LAYOUT,
    },
    "index_copy": {
        ("AOTI001", "info", ((0, 0),)),           # m = 0: index_copy's bound (raises; eager raises too)
        ("AOTI002", "info", ((0, 0), (1, 0))),
        ("AOTI012", "info", ((2, 0),)),
        _LAYOUT,
    },
    "lag_features": {
        ("AOTI003", "info", ((0, 1),)),           # l > 56: the week t // 7 past the 8-row table (raises as eager)
        ("AOTI002", "info", ((0, 0), (0, 1))),
        _LAYOUT,
    },
}


@pytest.mark.parametrize("name", NAMES)
def test_findings_are_pinned(name: str) -> None:
    assert {pin(f) for f in _lint(name)} == FINDINGS[name]


def test_cummax_table_has_two_table_infos() -> None:
    """The set above folds cummax_table's two AOTI003 infos (the 32-row and the 48-row table)."""
    witnesses = sorted(f.witness for f in _lint("cummax_table") if f.code == "AOTI003")
    assert witnesses == ["x.shape = (3, 33)", "x.shape = (3, 49)"]


# Failing probes no finding explains: (model, label) -> (outcome, why). None this round.
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


def test_megatron_position_table_aborts_and_empty_sequence_sigfpe() -> None:
    """Positions passed as `arange(seq)` read a 40-row table (seq declared to 64): 40 runs like eager, 41
    and 65 abort (the check inside `#pragma omp parallel`) where eager raises IndexError, as AOTI003's error
    says at 41; seq 0 kills the process in CPU flash attention (SIGFPE), AOTI002's error."""
    for label in ("normal", "seq=1", "seq=39", "seq=40"):
        assert outcome(_record("megatron_bert", label)) == "ran", label
    for label in ("seq=41", "seq=max+1"):
        run = _record("megatron_bert", label)
        assert outcome(run) == "crash" and run["signal"] == "SIGABRT" and not run["eager"]["ok"], label
    run = _record("megatron_bert", "seq=0")
    assert outcome(run) == "crash" and run["signal"] == "SIGFPE"
    assert [f.witness for f in _findings("megatron_bert", "AOTI003")] == ["ids.shape = (2, 41)"]
    assert [f.witness for f in _findings("megatron_bert", "AOTI002")] == ["ids.shape = (2, 0)"]


def test_mamba2_runs_like_eager_at_every_probed_length() -> None:
    """seq is `Dim.AUTO` (compiled [2, inf)); the chunked scan pads to a multiple of 8: lengths of one
    chunk (1, 2, 7, 8), exact multiples (8, 16) and off ones (9, 17, 65) all run like eager, so neither
    AOTI020 (the reshape's `8 < padded` and the padding's `pad > 0`) is reproduced; seq 0 raises in the
    causal conv as eager does. The round's wheel gave the reshape's `8 < padded` an error at seq 2 (one
    chunk: not reproduced); `8 < Q` with Q a multiple of 8 is now read as export's 0/1 specialization of the
    chunk count, as `Q // 8 > 1` is (guardforms.above_one), so only the padding's info remains."""
    for run in (r for r in ROUND.records() if r["name"] == "mamba2"):
        assert outcome(run) == ("rejected" if run["label"] == "seq=0" else "ran"), run["label"]
    assert sorted(str(f.severity) for f in _findings("mamba2", "AOTI020")) == ["info"]


def test_ceil_pool_even_lengths_are_wrong() -> None:
    """n is `Dim.AUTO` (compiled [4, inf) by Inductor), traced at 9 where ceil and floor agree: Inductor
    dropped ceil mode, so every even n (where eager pools one window more) returns other values, as
    AOTI023's error says (witness 4); odd n run like eager. The round's wheel named the `max_pool2d` only;
    the `avg_pool1d` beside it (decomposed into the same lowering, fused into the same kernel) has its own
    AOTI023 since, at its own line."""
    for label in ("normal", "n=3", "n=5", "n=11", "n=max+1"):
        assert outcome(_record("ceil_pool1d", label)) == "ran", label
    for label in ("n=4", "n=8", "n=10", "n=12", "witness:ceil-mode-pool-traced-rounding:1"):
        assert outcome(_record("ceil_pool1d", label)) == "wrong", label
    avg, pool = _findings("ceil_pool1d", "AOTI023")
    assert {f.witness for f in (avg, pool)} == {"x.shape = (3, 8, 4)"}
    assert [f.subject.op for f in (avg, pool)] == ["avg_pool1d", "max_pool2d"]
    assert [f.source.line for f in (avg, pool)] == [183, 184]


def test_reflect_pad_below_its_padding_is_silent() -> None:
    """n is declared [4, 512] (export's guard for the reflect pad of 3); at n 1-3 the reflect index
    `(n - 1) - |(n - 1) - |x - 3||` (wrapped by n where negative) returns values where eager raises
    `Padding size should be less than the corresponding input dimension`; n 0 SIGSEGV. Below the
    declared minimum: only AOTI002's info (and AOTI018's at 0)."""
    for label in ("n=1", "n=2", "n=3"):
        assert outcome(_record("reflect_pad", label)) == "silent", label
    run = _record("reflect_pad", "n=0")
    assert outcome(run) == "crash" and run["signal"] == "SIGSEGV"
    assert {str(f.severity) for f in _lint("reflect_pad")} == {"info"}


def test_data_derived_positions_into_short_tables_raise_as_eager() -> None:
    """histc counts (`aoti_torch_cpu_histc`, values in [0, n]) into a 12-row table, and the positions of
    `median` (proxy executor) and `kthvalue` (`aoti_torch_cpu_kthvalue`, values in [0, l - 1]) into a 16-row
    table: each check is outside an OpenMP region, so the package raises where eager raises IndexError (a
    rejection, not a failure). The round's wheel named neither (no value transfer for either op); histc's
    counts and kthvalue's indices have one since: an AOTI003 info each, at n = 12 and l = 17 (where the
    values must take the op to its largest result: l = 17 ran, l = 19 raised); the median's proxy call has none."""
    for name, labels in (("histc_table", ("n=64", "n=128", "n=max+1")),
                         ("order_stats", ("l=19", "l=33", "l=34", "l=max+1"))):
        for label in labels:
            run = _record(name, label)
            assert outcome(run) == "rejected" and "index out of bounds" in run["aoti"]["error"], (name, label)
    assert [(str(f.severity), f.witness) for f in _findings("histc_table", "AOTI003")] == [("info", "x.shape = (12, 16)")]
    (kth,) = _findings("order_stats", "AOTI003")
    assert str(kth.severity) == "info" and "aoti_torch_cpu_kthvalue" in " ".join(kth.chain)
    for label in ("l=16", "l=17", "l=18"):
        assert outcome(_record("order_stats", label)) == "ran", label


def test_pixel_unshuffle_odd_sizes_return_where_eager_raises() -> None:
    """h and w are declared `2 * Dim`; odd sizes return an image from the package where eager's
    `pixel_unshuffle` raises (silent), as AOTI014's errors say; the 24-row row table raises at h = 50 as
    eager does (AOTI003's info)."""
    for label in ("hp:size=3", "hp:size=5", "hp:size=49", "wp:size=3", "wp:size=7"):
        assert outcome(_record("pixel_unshuffle", label)) == "silent", label
    assert sorted(f.witness for f in _findings("pixel_unshuffle", "AOTI014")) == [
        "x.shape = (3, 3, 4, 5)", "x.shape = (3, 3, 5, 4)"]
    assert outcome(_record("pixel_unshuffle", "hp:size=50")) == "rejected"
