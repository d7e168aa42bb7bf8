"""The twelfth stranger round (fixtures/stranger12): twelve model families, nine of no earlier fixture
set (DeBERTa-v2, BLOOM and GPT-NeoX are stranger3's with other configs; TAPAS, Reformer, ConvBERT, MarkupLM, CvT, Wav2Vec2-Conformer, an
EmbeddingBag over ragged bags, a pixel-shuffle / unfold-fold super-resolution net, a FastSpeech
length regulator), compiled for CPU with torch 2.13 and linted from the wheel of 56bb35a before any
change was made for them.

What aoti-lint says is pinned next to what the packages did, from committed records only (nothing
here compiles): `runtime.json` (fixtures/real/probe.py: each package through `aoti_load_package` in
a child process against eager, every dynamic dim at 0, 1 and max + 1, the sizes that break a multiple
or reach a table's edge, and the primary size witness of every finding). The failing probes no
finding explains, as `Round.explained_by` ties them, would be KNOWN_GAPS (the round had three: a
constant viewed past its end in the wrapper, and two aborts past a table whose finding gave a frame
count, not a size; both read since); the findings at warning or
above whose witness runs like eager are listed with their reason."""

from __future__ import annotations

import pytest

from analyzer.core.model import DimRef
from conftest import FIXTURES, pin
from stranger_harness import Round, outcome

ROUND = Round(FIXTURES / "stranger12")
NAMES = ["deberta_v2", "bloom", "gpt_neox", "tapas", "reformer", "convbert", "markuplm", "cvt", "w2v2_conformer",
         "emb_bag", "fold_sr", "length_reg"]
_lint, _record = ROUND.lint, ROUND.record

_LAYOUT = ("AOTI019", "info", ())
_SEQ = {("AOTI002", "info", ((0, 1),)), _LAYOUT}
_IMAGE = {("AOTI002", "info", ((0, 0), (0, 2), (0, 3))), _LAYOUT}

FINDINGS: dict[str, set[tuple]] = {
    "deberta_v2": set(_SEQ),
    "bloom": set(_SEQ),
    "gpt_neox": set(_SEQ),
    "tapas": {
        ("AOTI002", "error", ((0, 1),)),          # seq = 0: SIGFPE in flash attention
        ("AOTI003", "info", ()),                  # a column id >= 8 in `types`: abort, as eager raises
        ("AOTI011", "warning", ()),               # the per-cell segment minimum's scatter_reduce unchecked
        ("AOTI012", "info", ((1, 1),)),
        _LAYOUT,
    },
    "reformer": {
        ("AOTI002", "info", ((0, 1),)),
        ("AOTI005", "info", ((0, 1),)),
        ("AOTI008", "warning", ()),               # the axial position check `tmp1 < 8 + 8*(u0 // 8)`
        ("AOTI014", "error", ((0, 1),)),          # seq no multiple of 8 (8 * Dim): wrong or raises
        _LAYOUT,
    },
    "convbert": _SEQ | {("AOTI013", "warning", ((0, 1),))},  # two: position_ids and token_type_ids
    "markuplm": _SEQ | {
        ("AOTI003", "warning", ((0, 1),)),        # 65 past the 66-row position table (pad offset): abort
        ("AOTI012", "info", ((1, 1),)),
        ("AOTI012", "info", ((2, 1),)),
    },
    "cvt": _IMAGE | {("AOTI014", "error", ((0, 2),)), ("AOTI014", "error", ((0, 3),))},
    "w2v2_conformer": {
        ("AOTI002", "info", ((0, 0), (0, 1))), ("AOTI004", "info", ((0, 1),)), _LAYOUT,
        # After the round: the `pe` view into mm_out reaches past the buffer above 1319 (Dim.AUTO's max).
        ("AOTI013", "info", ((0, 1),)),
    },
    "emb_bag": {("AOTI002", "info", ((0, 0), (1, 0))), ("AOTI003", "info", ((1, 0),)), _LAYOUT},
    "fold_sr": _IMAGE | {("AOTI014", "error", ((0, 2),)), ("AOTI014", "error", ((0, 3),))},
    "length_reg": {
        ("AOTI002", "info", ((0, 0),)),
        # The frame count u0 (repeat_interleave of durations clamped to [1, 8]) at most 8n: past the 256-row
        # table only above the declared n <= 32 (the round's wheel: an error at n = 3 with u0 = 257).
        ("AOTI003", "warning", ((0, 0),)),
        _LAYOUT,
    },
}


@pytest.mark.parametrize("name", NAMES)
def test_findings_are_pinned(name: str) -> None:
    assert {pin(f) for f in _lint(name)} == FINDINGS[name]


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
NOT_REPRODUCED: dict[tuple[str, str, str], str] = {
    ("length_reg", "AOTI003", "x.shape = (33, 32)"): (
        "the data, not the size: u0, the frame count, is the sum of the n durations clamped to [1, 8], at most "
        "8n = 264 at n = 33, which passes the 256-row table only where the durations sum past 256; with these "
        "weights they average about 3 (n = 33: about 100 frames, runs like eager), and the abort needs n >= 82 "
        "(n = 90: 283 frames, n = 100: 312, both SIGABRT at the check this finding names). A shape cannot say "
        "which durations the model predicts"),
}


@pytest.mark.parametrize("name", NAMES)
def test_every_error_finding_witness_fails(name: str) -> None:
    ROUND.check_witnesses_fail(name, NOT_REPRODUCED)


def _findings(name: str, code: str) -> list:
    return [f for f in _lint(name) if f.code == code]


def test_conformer_reads_around_its_position_buffer_above_the_compiled_max() -> None:
    """Wav2Vec2-Conformer, samples Dim.AUTO: export bounded it by the relative position buffer (127 rows:
    at most 64 frames) and the package checks 1319 only with AOTI_RUNTIME_CHECK_INPUTS=1. 1299 and 1301
    (63, 64 frames) run like eager, 1320 (65) returns wrong values. The round's wheel said nothing of
    sizes above 1319 (the buffer is no kernel's load: run_impl passes `reinterpret_tensor_wrapper(pe, 2,
    {2*(s27 // 20) - 3, 32}, {32, 1}, 2080 - 32*(s27 // 20))` to `aoti_torch_cpu_mm_out`, at 1320 one row
    before the buffer and one past it); AOTI013 now reads such views: an info (Dim.AUTO's range is the
    exported program's, 1320 outside it), witness 1320."""
    dim = ROUND.package("w2v2_conformer").models[0].dim(DimRef(0, 1))
    assert (dim.min, dim.max) == (60, 1319)
    for label in ("samples=1299", "samples=1301", "samples=max+1"):
        assert outcome(_record("w2v2_conformer", label)) == "ran", label
    run = _record("w2v2_conformer", "samples=1320")
    assert outcome(run) == "wrong" and run["aoti"]["shape"] == run["eager"]["shape"] == [2, 65, 32]
    (f,) = ROUND.explained_by("w2v2_conformer", run)
    assert f.message_key == "read-past-constant.view" and f.witness == "x.shape = (3, 1320)"


def test_length_regulator_overrun_aborts_at_the_check_aoti003_names() -> None:
    """FastSpeech's length regulator: the frame count is data-derived (repeat_interleave of predicted
    durations, clamped to [1, 8]). The round's wheel gave an error at n = 3 "with u0 = 257", a frame
    count no 3 durations can reach; now u0 is read at its bound 8n (the repeats' range times their
    count): past the table only above the declared 32, a warning, witness n = 33. The probes past it
    (n = 90, 100) abort at that very check; n = 80 (252 frames), max + 1 and the witness run like eager."""
    (f,) = _findings("length_reg", "AOTI003")
    assert str(f.severity) == "warning" and f.message_key == "index-exceeds-constant-bound.unenforced-max"
    assert "at most 8 * x.shape[0]" in "\n".join(f.chain)
    for label in ("n=90", "n=100"):
        run = _record("length_reg", label)
        assert outcome(run) == "crash" and run["signal"] == "SIGABRT"
        assert f"what():  {f.subject.message}" in (ROUND.folder / "logs" / run["log"]).read_text()
    for label in ("n=80", "n=max+1", "witness:index-exceeds-constant-bound:1"):
        assert outcome(_record("length_reg", label)) == "ran", label


def test_convbert_reads_past_two_buffers_and_aborts() -> None:
    """ConvBERT slices two 128-column buffers (position_ids, token_type_ids) to the sequence: two AOTI013
    warnings at 129, and the package aborts there (SIGABRT; eager raises)."""
    fs = _findings("convbert", "AOTI013")
    assert len(fs) == 2 and {f.witness for f in fs} == {"x.shape = (2, 129)"}
    run = _record("convbert", "seq=max+1")
    assert outcome(run) == "crash" and run["signal"] == "SIGABRT" and set(fs) <= set(ROUND.explained_by("convbert", run))


def test_multiples_of_a_derived_dim_fail_three_ways() -> None:
    """Three models declared with a multiple (`k * Dim`): AOTI014 names each. Reformer (8) returns a
    shorter output at 9, 12, 63 and raises `Expected u0 >= 0` below 8 (the max of an empty arange)
    where eager pads; CvT (4) returns wrong values; the super-resolution net (2) returns where eager's
    pixel_unshuffle raises."""
    for label in ("seq:size=9", "seq:size=12", "seq:size=63"):
        assert outcome(_record("reformer", label)) == "wrong", label
    for label in ("seq:size=1", "seq:size=7"):
        run = _record("reformer", label)
        assert outcome(run) == "raised" and "Expected u0 >= 0" in run["aoti"]["error"]
    for label in ("h:size=17", "h:size=18", "h:size=21", "h:size=31", "w:size=18", "w:size=33"):
        assert outcome(_record("cvt", label)) == "wrong", label
    for label in ("h:size=3", "h:size=5", "h:size=127", "w:size=5", "w:size=17"):
        run = _record("fold_sr", label)
        assert outcome(run) == "silent" and "pixel_unshuffle" in run["eager"]["error"], label
    for name in ("reformer", "cvt", "fold_sr"):
        assert all(str(f.severity) == "error" for f in _findings(name, "AOTI014")), name


def test_tapas_empty_sequence_kills_the_process() -> None:
    """TAPAS at seq = 0: flash attention divides by zero (SIGFPE); AOTI002's error says so and its
    witness reproduces it."""
    (f,) = _findings("tapas", "AOTI002")
    assert str(f.severity) == "error" and f.witness == "ids.shape = (2, 0), types.shape = (2, 0, 7)"
    assert _record("tapas", "seq=0")["signal"] == "SIGFPE"
    assert _record("tapas", "witness:unenforced-lower-bound:1")["signal"] == "SIGFPE"
