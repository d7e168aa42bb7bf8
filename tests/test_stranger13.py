"""The thirteenth stranger round (fixtures/stranger13): eleven model families of no earlier fixture set
(LiLT, FNet, Decision Transformer, Pix2Struct's vision encoder, SigLIP's vision tower, EfficientNet,
LUKE, and four written here: a CTC greedy decoder, rotary positions from a cumsum of the attention
mask, a point voxelizer, a crop-and-resize head), compiled for CPU with torch 2.13 and linted from the
wheel of 0fcf935 before any change was made for them.

What aoti-lint says is pinned next to what the packages did, from committed records only (nothing
here compiles): `runtime.json` (fixtures/real/probe.py: each package through `aoti_load_package` in
a child process against eager, every dynamic dim at 0, 1 and max + 1, the sizes that break a multiple
or reach a table's edge, and the primary size witness of every finding). The failing probes no
finding explains, as `Round.explained_by` ties them, are KNOWN_GAPS (the round had three, none left: a
float column of the input cast to row ids past a 64-row table, an AOTI003 info since; and two aborts past
a rotary cache whose position is a cumsum of the mask, which the round's AOTI003 read as the mask's own
value, read since as the running sum it is); no finding at warning or above
has a witness that runs like eager."""

from __future__ import annotations

import pytest

from analyzer.core.model import DimRef
from conftest import FIXTURES, pin
from stranger_harness import Round, outcome

ROUND = Round(FIXTURES / "stranger13")
NAMES = ["lilt", "fnet", "decision", "pix2struct", "siglip", "efficientnet", "luke", "ctc_greedy", "rope_cumsum",
         "voxelize", "crop_resize"]
_lint, _record = ROUND.lint, ROUND.record

_LAYOUT = ("AOTI019", "info", ())
_IMAGE = {("AOTI002", "info", ((0, 0), (0, 2), (0, 3))), _LAYOUT}

FINDINGS: dict[str, set[tuple]] = {
    "lilt": {
        ("AOTI002", "info", ((0, 1),)),
        ("AOTI003", "warning", ((0, 1),)),        # 65 past the 66-row position table (pad offset): abort
        ("AOTI003", "info", ((0, 1),)),           # the same positions into the layout stream's box table
        ("AOTI012", "info", ((1, 1),)),
        _LAYOUT,
    },
    "fnet": {
        ("AOTI002", "info", ((0, 1),)),
        ("AOTI013", "warning", ((0, 1),)),        # two: position_ids and token_type_ids (128 columns)
        _LAYOUT,
    },
    "decision": {
        ("AOTI002", "info", ((0, 0), (0, 1))),
        ("AOTI012", "info", ((1, 0),)), ("AOTI012", "info", ((1, 1),)),
        ("AOTI012", "info", ((2, 0),)), ("AOTI012", "info", ((2, 1),)),
        ("AOTI012", "info", ((3, 0),)), ("AOTI012", "info", ((3, 1),)),
        _LAYOUT,
    },
    "pix2struct": {
        ("AOTI002", "error", ((0, 0), (0, 1))),   # seq = 0: SIGFPE in flash attention
        ("AOTI003", "info", ()),                  # after the round: row ids from a float column, 64 rows
        ("AOTI012", "info", ((1, 0),)), ("AOTI012", "info", ((1, 1),)),
        _LAYOUT,
    },
    "siglip": _IMAGE | {("AOTI014", "error", ((0, 2),)), ("AOTI014", "error", ((0, 3),))},
    "efficientnet": _IMAGE | {("AOTI004", "info", ((0, 2),))},
    "luke": {
        ("AOTI002", "info", ((0, 1), (1, 1))),
        ("AOTI003", "warning", ((0, 1),)),        # 65 past the 66-row word position table: abort
        ("AOTI003", "info", ()),                  # a value >= 66 in the entity positions
        ("AOTI012", "info", ((2, 1),)),
        _LAYOUT,
    },
    "ctc_greedy": {("AOTI002", "info", ((0, 0), (0, 1))), _LAYOUT},
    "rope_cumsum": {
        ("AOTI002", "info", ((0, 1),)),
        # The position is the running sum of the mask (after the round: at most seq * v - 1), its second
        # witness a mask of ones at seq 65; the round's wheel read the cumsum as the value ("a value >= 65").
        ("AOTI003", "info", ((0, 1),)),
        ("AOTI012", "info", ((1, 1),)),
        _LAYOUT,
    },
    "voxelize": {("AOTI002", "info", ((0, 0),)), ("AOTI003", "info", ()), _LAYOUT},
    "crop_resize": set(_IMAGE),
}


@pytest.mark.parametrize("name", NAMES)
def test_findings_are_pinned(name: str) -> None:
    assert {pin(f) for f in _lint(name)} == FINDINGS[name]


# After the round: none (pix2struct at 505 patches, a float column cast to row ids, is an AOTI003 info).
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


def _log(record: dict) -> str:
    return (ROUND.folder / "logs" / record["log"]).read_text(errors="replace")


def test_rotary_cache_from_a_mask_cumsum_aborts_inside_the_declared_range() -> None:
    """Rotary positions `cumsum(mask) - 1` into a 64-row cos/sin cache, seq declared [0, 128]: 63 and 64 run
    like eager, every size from 65 aborts (SIGABRT; eager raises IndexError). The round's AOTI003 read the
    cumsum's output as the mask's own value ("a value >= 65", `at most max(v - 1, 0)`), and two of the five
    aborts (86, 87: two OpenMP threads threw at once, no `what():` in the log) were tied to nothing. Now the
    linker reads the loaded buffer through the cumsum with the input's value as v: at most `seq * v - 1`,
    and the finding has a second witness, a mask of ones at seq 65, which covers every size from 65 on.
    Still an info: the same lookup past the table raises in eager."""
    (f,) = _findings("rope_cumsum", "AOTI003")
    assert str(f.severity) == "info" and f.message_key == "index-exceeds-constant-bound.input-values"
    chain = "\n".join(f.chain)
    assert "aoti_torch_cpu_cumsum" in chain and "at most max(ids.shape[1] * v - 1, 0)" in chain
    assert f.witnesses[1] == "ids.shape = (2, 65), mask.shape = (2, 65); with a value of 1 in input 1 (mask)"
    for label in ("seq=63", "seq=64"):
        assert outcome(_record("rope_cumsum", label)) == "ran", label
    for label in ("seq=65", "seq=80", "seq=86", "seq=87", "seq=max+1"):
        run = _record("rope_cumsum", label)
        assert outcome(run) == "crash" and run["signal"] == "SIGABRT", label
        assert f in ROUND.explained_by("rope_cumsum", run), label


def test_pix2struct_row_ids_from_a_float_column_abort() -> None:
    """Pix2Struct reads its row and column tables (64 rows) at the first two columns of the float input,
    cast to int64 in the kernel. The inputs here number rows i // 8 + 1: 504 patches reach row 63 and run,
    505 reach 64 and abort (eager raises). The round's wheel said nothing (a lookup of an input's own value
    is left to the caller, as token ids are); a float cast to an index is no id, and AOTI003 now says a
    value of 64 in `patches` aborts the embedding (an info: eager raises there too). seq = 0 is AOTI002's
    error (flash attention divides by zero: SIGFPE at both the edge and the witness)."""
    (f,) = _findings("pix2struct", "AOTI003")
    assert str(f.severity) == "info" and f.message_key == "index-exceeds-constant-bound.cast-values"
    assert f.witness == "patches.shape = (3, 3, 50), mask.shape = (3, 3); with a value of 64 in input 0 (patches)"
    assert "float32 value of input 0 (patches) cast to an integer" in f.detail
    assert outcome(_record("pix2struct", "seq=504")) == "ran"
    run = _record("pix2struct", "seq=505")
    assert outcome(run) == "crash" and run["signal"] == "SIGABRT"
    assert "index out of bounds: 0 <= tmp6 < 64L" in _log(run) and "IndexError" in run["eager"]["error"]
    assert f in ROUND.explained_by("pix2struct", run)
    (f,) = _findings("pix2struct", "AOTI002")
    assert str(f.severity) == "error" and f.witness == "patches.shape = (3, 0, 50), mask.shape = (3, 0)"
    for label in ("seq=0", "witness:unenforced-lower-bound:1"):
        assert _record("pix2struct", label)["signal"] == "SIGFPE", label


def test_siglip_interpolated_positions_wrong_off_multiples_of_the_patch() -> None:
    """SigLIP with interpolated positions, declared `8 * Dim(min=1, max=32)`: export compiled [2, 32]
    patches (the bicubic resize of the 4 x 4 table), yet one patch (8 pixels) runs like eager. Sizes no
    multiple of 8 return wrong values (AOTI014's errors, both witnesses reproduced); 1 and 7 raise as
    eager (the package's conv sees 8 * (size // 8) = 0 rows)."""
    model = ROUND.package("siglip").models[0]
    assert (model.dim(DimRef(0, 2)).min, model.dim(DimRef(0, 2)).max) == (16, 256)
    for label in ("h:size=9", "h:size=15", "h:size=17", "w:size=9", "w:size=33"):
        assert outcome(_record("siglip", label)) == "wrong", label
    for label in ("h:size=8", "w:size=8", "h:size=8*(max+1)", "w:size=8*(max+1)"):
        assert outcome(_record("siglip", label)) == "ran", label
    for label in ("h:size=1", "h:size=7"):
        run = _record("siglip", label)
        assert outcome(run) == "rejected" and "(0 x 40)" in run["aoti"]["error"], label
    assert all(str(f.severity) == "error" for f in _findings("siglip", "AOTI014"))


def test_fnet_and_the_layout_models_abort_past_their_tables() -> None:
    """FNet (Fourier mixing compiled through fft externs) slices two 128-column buffers to the sequence: two
    AOTI013 warnings at 129, where it aborts. LiLT and LUKE read RoBERTa-style positions (pad offset, 66
    rows): AOTI003 warnings at 65, where both abort. Every witness reproduces."""
    cases = {"fnet": ("AOTI013", "seq=max+1", "x.shape = (2, 129)"),
             "lilt": ("AOTI003", "seq=max+1", "ids.shape = (2, 65), bbox.shape = (2, 65, 4)"),
             "luke": ("AOTI003", "seq=max+1", "ids.shape = (2, 65), ents.shape = (2, 3), epos.shape = (2, 3, 4)")}
    for name, (code, label, witness) in cases.items():
        warned = [f for f in _findings(name, code) if str(f.severity) == "warning"]
        assert warned and {f.witness for f in warned} == {witness}, name
        run = _record(name, label)
        assert outcome(run) == "crash" and run["signal"] == "SIGABRT", name
        assert set(warned) <= set(ROUND.explained_by(name, run)), name


def test_ctc_decoder_scatter_past_its_buffer_raises_as_eager_unreported() -> None:
    """The greedy CTC decoder scatters each kept step at its rank (cumsum of the kept mask) into a 65-column
    buffer, frames declared [5, 256]: at 200, 255 and 257 frames the random weights keep more than 64 steps
    and the scatter's check raises `index out of bounds: 0 <= tmp17 < 65L` (no OpenMP region: an exception),
    as eager raises; 160 runs. No finding names it (the rank is a cumsum of a kernel's 0/1 store, bounded by
    (frames + 1) // 2, and the index is a store's: an info at frames > 130 would)."""
    assert {f.code for f in _lint("ctc_greedy")} == {"AOTI002", "AOTI019"}
    assert outcome(_record("ctc_greedy", "frames=160")) == "ran"
    for label in ("frames=200", "frames=255", "frames=max+1"):
        run = _record("ctc_greedy", label)
        assert outcome(run) == "rejected" and "0 <= tmp17 < 65L" in run["aoti"]["error"], label


def test_models_with_no_failure_past_their_edges() -> None:
    """The Decision Transformer's GPT-2 gets zero position ids (its timesteps have their own table): 3t
    tokens never meet the 128-row position table (t = 43, 63, 65 run). EfficientNet, the voxelizer and the
    crop-and-resize head run like eager at every probed size that eager runs."""
    for label in ("t=43", "t=63", "t=max+1"):
        assert outcome(_record("decision", label)) == "ran", label
    for name in ("efficientnet", "voxelize", "crop_resize"):
        assert all(outcome(r) in ("ran", "rejected") for r in ROUND.records() if r["name"] == name), name
