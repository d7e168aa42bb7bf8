"""The eighteenth stranger round (fixtures/stranger18): nine model families of no earlier fixture set
(LongT5's transient-global encoder, EnCodec's encoder, residual quantizer and decoder, and seven
written here: Autoformer-style auto-correlation by FFT and `topk` lags, a MusicGen delay pattern, SASRec
with positions from a `cumsum` of the padding mask, DeepFM with per-field offsets into one table,
Graphormer-style degree tables from `index_add`, a jagged batch made dense by `searchsorted` of offsets
and `index_put`, dilated neighbourhood attention by `F.unfold`), compiled for CPU with torch 2.13 and
linted from the wheel of 099c867 (equal to the tree at 099c867 on every package).

What aoti-lint says is pinned next to what the packages did, from committed records only (nothing
here compiles): `runtime.json` (fixtures/real/probe.py: each package through `aoti_load_package` in
a child process against eager, every dynamic dim at 0, 1 and max + 1, the sizes that reach a table's
edge or break a multiple, and the primary size witness of every finding)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, pin
from stranger_harness import Round, outcome

ROUND = Round(FIXTURES / "stranger18")
NAMES = ["longt5", "encodec", "autocorr", "delay_pattern", "sasrec", "deepfm", "degree_emb", "jagged_dense",
         "dilated_na"]
_lint, _record = ROUND.lint, ROUND.record

_LAYOUT = ("AOTI019", "info", ())

FINDINGS: dict[str, set[tuple]] = {
    "longt5": {
        ("AOTI020", "error", ((0, 1),)),          # guards `seq // 4 == 4` and `seq % 5 != 0`: 8 and 10 (wrong values)
        ("AOTI002", "info", ((0, 1),)),           # seq < 8 (Dim.AUTO's compiled min)
        ("AOTI005", "info", ((0, 1),)),           # seq = 0: a max over nothing (raises, as eager does)
        _LAYOUT,
    },
    "encodec": {
        ("AOTI020", "error", ((0, 2),)),          # frames == 32 (n in (248, 256]) assumed: n = 2 SIGABRT
        ("AOTI002", "error", ((0, 0), (0, 2))),   # batch = 0: SIGFPE in oneDNN's LSTM (reproduced at its witness)
        ("AOTI018", "info", ((0, 2),)),           # n = 0: the first pad reads an empty input (eager raises first)
        _LAYOUT,
    },
    "autocorr": {
        ("AOTI002", "info", ((0, 0), (0, 1))),
        _LAYOUT,
    },
    "delay_pattern": {
        ("AOTI003", "error", ((0, 2),)),          # t > 61: the 64-row position table over t + 3 steps (SIGABRT)
        ("AOTI018", "error", ((0, 2),)),          # t = 0: the gather reads the empty codes (SIGSEGV)
        ("AOTI003", "info", ()),                  # a code >= 33 (eager rejects it too)
        ("AOTI002", "info", ((0, 0), (0, 2))),
        _LAYOUT,
    },
    "sasrec": {
        ("AOTI003", "error", ((0, 1),)),          # l > 50: cumsum positions past the 51-row table (SIGABRT)
        ("AOTI002", "info", ((0, 0), (0, 1))),    # l = 0: SIGSEGV in mm at a negative view offset (only this info)
        _LAYOUT,
    },
    "deepfm": {
        ("AOTI003", "info", ()),                  # an id past its field (eager rejects it too)
        ("AOTI004", "info", ((0, 2),)),           # m = 0: the mean over no ids (NaN, as eager)
        ("AOTI002", "info", ((0, 0), (0, 2))),
        _LAYOUT,
    },
    "degree_emb": {
        ("AOTI001", "error", ((0, 0),)),          # n = 0 with edges: SIGABRT in the index_select (eager raises)
        ("AOTI002", "info", ((0, 0), (1, 0))),
        ("AOTI011", "info", ((0, 0),)),
        ("AOTI012", "info", ((2, 0),)),           # dst shorter than src
        _LAYOUT,
    },
    "jagged_dense": {
        ("AOTI001", "warning", ((2, 0),)),        # L = 0: every column index fails, SIGABRT (below the declared 1)
        ("AOTI015", "info", ((1, 0),)),           # the row from searchsorted past nb - 2 (offsets[-1] < total)
        ("AOTI015", "info", ()),                  # the column x0 - offsets[row] reaching L: a row longer than L
        ("AOTI002", "info", ((0, 0), (1, 0), (2, 0))),
        _LAYOUT,
    },
    "dilated_na": {("AOTI002", "info", ((0, 0), (0, 2), (0, 3))), _LAYOUT},
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
NOT_REPRODUCED: dict[tuple[str, str, str], str] = {}


@pytest.mark.parametrize("name", NAMES)
def test_every_error_finding_witness_fails(name: str) -> None:
    ROUND.check_witnesses_fail(name, NOT_REPRODUCED)


def _findings(name: str, code: str) -> list:
    return [f for f in _lint(name) if f.code == code]


def test_longt5_runs_wrong_off_the_traced_global_block_count() -> None:
    """seq is `Dim.AUTO` (a declared range was refused), compiled [8, inf), but the program keeps the guards
    `1 + seq // 4 == 5` (one_hot over the traced 5 global blocks: the package's check compares with `5`) and
    `seq % 5 != 0`: 7, 8, 9, 10 return wrong values, 129 raises `one_hot: Class values must be smaller than
    num_classes` where eager runs; 16 and 17 (4 global blocks) run like eager. AOTI020's errors name 8 and 10."""
    assert {f.witness for f in _findings("longt5", "AOTI020")} == {"ids.shape = (2, 8)", "ids.shape = (2, 10)"}
    for label in ("seq=7", "seq=8", "seq=9", "witness:unchecked-export-guard:1"):
        assert outcome(_record("longt5", label)) == "wrong", label
    assert outcome(_record("longt5", "seq=max+1")) == "raised"
    for label in ("normal", "seq=17"):
        assert outcome(_record("longt5", label)) == "ran", label


def test_encodec_is_compiled_for_32_frames() -> None:
    """n is `Dim.AUTO`, compiled [2, inf), but the quantizer's kernel reads its argmax codes at `32L*(x1 // F)`
    (the traced 32 frames): n = 1, 2, 7, 8, 9 abort the process (`index out of bounds: 0 <= tmp3 < 32L` on
    garbage codes inside an OpenMP region) and 4097 returns 256 samples where eager returns 4104; 255 and 256
    run like eager. batch = 0: SIGFPE in oneDNN's LSTM (`mkldnn_rnn_layer`) where eager returns an empty
    batch. The round's wheel said only "at 0 ATen calls get empty tensors" (an info); oneDNN's RNN layer is
    now one of the calls known to divide by a size (its batch): AOTI002 is an error whose witness, batch 0 at
    n = 249, kills the process (SIGFPE, re-probed)."""
    (guard,) = _findings("encodec", "AOTI020")
    assert guard.witness == "audio.shape = (2, 1, 2)"
    for label in ("n=1", "n=7", "n=8", "n=9", "witness:unchecked-export-guard:1"):
        run = _record("encodec", label)
        assert outcome(run) == "crash" and run["signal"] == "SIGABRT", label
    assert outcome(_record("encodec", "n=max+1")) == "wrong"
    assert outcome(_record("encodec", "n=255")) == "ran"
    run = _record("encodec", "batch=0")
    assert outcome(run) == "crash" and run["signal"] == "SIGFPE" and run["eager"]["ok"]
    (lower,) = _findings("encodec", "AOTI002")
    assert str(lower.severity) == "error" and "oneDNN's RNN layer" in lower.message
    assert lower.witness == "audio.shape = (0, 1, 249)"
    run = _record("encodec", "witness:unenforced-lower-bound:1")
    assert run["sizes"] == {"batch": 0, "n": 249} and outcome(run) == "crash" and run["signal"] == "SIGFPE"


def test_position_tables_shorter_than_the_declared_range_abort() -> None:
    """delay_pattern reads a 64-row table at arange(t + 3) (t declared to 64), sasrec a 51-row table at
    `cumsum(ids != 0)` (l declared to 64): t = 61 and l = 50 run like eager, t = 62 and l = 51 abort
    (SIGABRT) where eager raises IndexError, at AOTI003's error witnesses."""
    for name, edge, past, witness in (("delay_pattern", "t=61", "t=62", "codes.shape = (3, 4, 62)"),
                                      ("sasrec", "l=50", "l=51", "ids.shape = (3, 51)")):
        assert outcome(_record(name, edge)) == "ran", name
        run = _record(name, past)
        assert outcome(run) == "crash" and run["signal"] == "SIGABRT", name
        assert [f.witness for f in _findings(name, "AOTI003") if str(f.severity) == "error"] == [witness]


def test_empty_steps_read_outside_their_buffers() -> None:
    """t = 0 (delay_pattern) SIGSEGV in the gather kernel, as AOTI018's error says; l = 0 (sasrec) SIGSEGV in
    the final `mm` over `h[:, -1]`, a view at storage offset `-32 + 32*l` (negative at 0) of an empty buffer,
    which only AOTI002's info covers. Eager raises IndexError at both."""
    (read,) = _findings("delay_pattern", "AOTI018")
    assert str(read.severity) == "error"
    for name, label in (("delay_pattern", "t=0"), ("sasrec", "l=0")):
        run = _record(name, label)
        assert outcome(run) == "crash" and run["signal"] == "SIGSEGV" and not run["eager"]["ok"], name


def test_degree_table_overflow_raises_as_eager() -> None:
    """Out-degrees from `index_add` (unclamped) into a 64-row table: e = 252, 300, 4097 over 4 hub nodes
    raise `index out of bounds: 0 <= tmp11 < 64L` where eager raises IndexError (rejected, no finding); n = 0
    with edges aborts the process, as AOTI001's error says."""
    for label in ("e=252", "e=300", "e=max+1"):
        assert outcome(_record("degree_emb", label)) == "rejected", label
    run = _record("degree_emb", "n=0")
    assert outcome(run) == "crash" and run["signal"] == "SIGABRT"


def test_autocorr_lag_index_stays_below_t() -> None:
    """`(arange(t) + lag) % t` stays in [0, t - 1]: at t = 3 topk(3) returns every lag, 2 included, and the
    package runs like eager, as at t = 4, 24 and 257. The round's wheel read it as reaching 2t - 2 (the
    kernel's Python modulo: `mod` then `tmp6 + tmp5` where the signs differ, which they never do for a
    remainder and a divisor never negative) and said AOTI015 (an info); no finding now."""
    assert not _findings("autocorr", "AOTI015")
    for label in ("t=3", "t=4", "normal", "t=max+1"):
        assert outcome(_record("autocorr", label)) == "ran", label
