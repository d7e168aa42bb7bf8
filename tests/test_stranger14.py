"""The fourteenth stranger round (fixtures/stranger14): twelve model families of no earlier fixture set
(ERNIE with task-type ids, FSMT, Switch Transformers' encoder, SwiftFormer, DAC's encoder and
quantizer, and seven written here: a SuperPoint-style keypoint head, a MaxViT block, a Deep Interest
Network, DGCNN's EdgeConv, a histogram over data-derived bins, top-p sampling, chunked sliding-window
attention), compiled for CPU with torch 2.13 and linted from the wheel of f0f5baf before any change
was made for them.

What aoti-lint says is pinned next to what the packages did, from committed records only (nothing
here compiles): `runtime.json` (fixtures/real/probe.py: each package through `aoti_load_package` in
a child process against eager, every dynamic dim at 0, 1 and max + 1, the sizes that break a multiple
or reach a table's edge, and the primary size witness of every finding). Every failing probe is
explained by a finding (`Round.explained_by`): no known gap. One error's witness runs like eager:
MaxViT's AOTI020, a guard export kept from the crop's contiguity test (tensor metadata only)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, pin
from stranger_harness import Round, outcome

ROUND = Round(FIXTURES / "stranger14")
NAMES = ["ernie", "fsmt", "switch", "swiftformer", "dac", "keypoint", "maxvit_grid", "din", "edgeconv", "hist_bins",
         "nucleus", "chunk_attn"]
_lint, _record = ROUND.lint, ROUND.record

_LAYOUT = ("AOTI019", "info", ())
_IMAGE = {("AOTI002", "info", ((0, 0), (0, 2), (0, 3))), _LAYOUT}

FINDINGS: dict[str, set[tuple]] = {
    "ernie": {
        ("AOTI002", "error", ((0, 1),)),          # seq = 0: SIGFPE in flash attention
        ("AOTI013", "warning", ((0, 1),)),        # 65 past the 64-column position_ids buffer: returns
        ("AOTI012", "info", ((1, 1),)), ("AOTI012", "info", ((2, 1),)),
        _LAYOUT,
    },
    "fsmt": {
        ("AOTI002", "info", ((0, 1), (2, 1))),
        # 65 past the 66-row sinusoidal table (positions from the pad mask's cumsum), encoder and decoder:
        # the round's wheel said "eager rejects it too" (infos), but eager rebuilds the table and runs.
        ("AOTI003", "warning", ((0, 1),)), ("AOTI003", "warning", ((2, 1),)),
        # (the round's AOTI005 info, a softmax's max over an empty source, is no longer reported: at src = 0
        # it meets no element and the package returns eager's values)
        ("AOTI012", "info", ((1, 1),)),
        _LAYOUT,
    },
    "switch": {("AOTI002", "info", ((0, 1),)), ("AOTI012", "info", ((1, 1),)), _LAYOUT},
    "swiftformer": set(_IMAGE),
    "dac": {("AOTI002", "info", ((0, 0), (0, 2))), _LAYOUT},
    "keypoint": _IMAGE | {("AOTI001", "info", ((0, 2),)), ("AOTI001", "info", ((0, 3),))},
    # The round's wheel had an AOTI020 error at h = 9 (the crop's contiguity test: runs like eager).
    "maxvit_grid": set(_IMAGE),
    "din": {
        ("AOTI002", "info", ((0, 0), (0, 1))),
        ("AOTI003", "info", ()),                  # a value >= 65 in lengths (recency table), >= 50 in cats
        ("AOTI012", "info", ((1, 0),)), ("AOTI012", "info", ((2, 0),)), ("AOTI012", "info", ((3, 0),)),
        _LAYOUT,
    },
    "edgeconv": {("AOTI002", "info", ((0, 0), (0, 1))), _LAYOUT},
    "hist_bins": {
        ("AOTI002", "info", ((0, 0),)),
        ("AOTI005", "warning", ((0, 0),)),        # two: the min and the max of an empty track
        # scatter_reduce_two_out's error code unchecked (two calls), its bins checked later by the gather: an
        # info after the round (the round's wheel: a warning, "partial result, no message")
        ("AOTI011", "info", ()),
        _LAYOUT,
    },
    "nucleus": {
        ("AOTI002", "info", ((0, 0), (0, 1))),
        ("AOTI003", "info", ((0, 1),)),           # the argmax's token past the 512-row table from vocab 513
        ("AOTI005", "info", ((0, 1),)),           # the argmax of an empty vocab (the softmax's max: no longer)
        ("AOTI012", "info", ((1, 0),)), ("AOTI012", "info", ((1, 1),)),
        _LAYOUT,
    },
    "chunk_attn": {
        ("AOTI002", "info", ((0, 1),)),
        ("AOTI003", "error", ((0, 1),)),          # 129 tokens: chunk 16 of a 16-row table, abort
        _LAYOUT,
    },
}


@pytest.mark.parametrize("name", NAMES)
def test_findings_are_pinned(name: str) -> None:
    assert {pin(f) for f in _lint(name)} == FINDINGS[name]


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
# None after the round: maxvit_grid's AOTI020 error at h = 9 (a crop's contiguity test, which runs like
# eager) is no longer reported (guardforms.contiguity_guard).
NOT_REPRODUCED: dict[tuple[str, str, str], str] = {}


@pytest.mark.parametrize("name", NAMES)
def test_every_error_finding_witness_fails(name: str) -> None:
    ROUND.check_witnesses_fail(name, NOT_REPRODUCED)


def _findings(name: str, code: str) -> list:
    return [f for f in _lint(name) if f.code == code]


def _log(record: dict) -> str:
    return (ROUND.folder / "logs" / record["log"]).read_text(errors="replace")


def test_fsmt_positions_past_the_traced_range_raise_where_eager_rebuilds_its_table() -> None:
    """FSMT's sinusoidal positions (cumsum of the pad mask + 1, 66 rows for 64 tokens) are rebuilt longer
    in eager when `padding_idx + 1 + seq > weight.size(0)`: export took the other branch and kept
    `seq <= 64` (the declared max). At 65 the package raises `index out of bounds: 0 <= tmp18 < 66L`
    (no OpenMP region) where eager runs. AOTI003 names both launches of the embedding kernel (encoder and
    decoder) at 65, so the harness ties them; the round's wheel gave them as infos that said eager rejects
    the input too: the table is an `nn.Parameter` (`make_weight` wraps it in one), which
    `eager_rejects_past_range` read as a learned weight no model code changes. A lookup the exported
    program places in a sinusoidal table's module is no such weight now: warnings, no claim about eager."""
    for f in _findings("fsmt", "AOTI003"):
        assert str(f.severity) == "warning" and f.message_key == "index-exceeds-constant-bound.unenforced-max"
        assert "eager" not in f.message and "SinusoidalPositionalEmbedding" in f.source.module_class
    for label in ("src=max+1", "tgt=max+1"):
        run = _record("fsmt", label)
        assert run["eager"]["ok"] and outcome(run) == "raised", label
        assert "0 <= tmp18 < 66L" in run["aoti"]["error"], label
        (f,) = [f for f in _findings("fsmt", "AOTI003") if f.input == (0 if label.startswith("src") else 2)]
        assert f in ROUND.explained_by("fsmt", run), label
    for label in ("src=63", "tgt=63"):
        assert outcome(_record("fsmt", label)) == "ran", label


def test_maxvit_crop_contiguity_guard_breaks_and_runs_like_eager() -> None:
    """The MaxViT block pads the stem's map to multiples of 4 and crops it back; the example (h = 32: h' =
    16) needed no padding in height, and export kept the crop's contiguity test as a guard,
    `4*(1 + (h - 1)//8)*(64 + 64*((w - 1)//8)) == (1 + (h - 1)//2)*(64 + 64*((w - 1)//8))` (the slice's
    stride against its own sizes: one factor on both sides). The round's wheel reported it as an AOTI020
    error (a relation, witness h = 9); every size that breaks it (9, 17, 257) and every other probed size
    runs like eager, with a difference of 0: such a guard records a view's memory format, not a branch,
    and is left out now."""
    guards = ROUND.package("maxvit_grid").models[0].guards
    assert any("== ((1 + (((-1) + L['x'].size()[2]) // 2))*(64 + 64*" in g for g in guards)
    assert not _findings("maxvit_grid", "AOTI020")
    for label in ("witness:unchecked-export-guard:1", "h=9", "h=17", "h=max+1"):
        run = _record("maxvit_grid", label)
        assert outcome(run) == "ran" and run["aoti"]["max_abs_diff"] == 0.0, label


def test_chunk_table_aborts_past_128_tokens_and_multiples_of_8_run() -> None:
    """Chunked sliding-window attention with a 16-row chunk table (128 tokens) and seq `Dim.AUTO`: 129, 136,
    137 and 161 abort (SIGABRT; eager raises IndexError), AOTI003's error at 129. Export also kept
    `(256*max(1, (7 + seq) // 8)) != 32*seq` (the example, 20 tokens, is no multiple of 8): a stride guard
    AOTI020 leaves out by design, and rightly: 8 and 128 run like eager."""
    (f,) = _findings("chunk_attn", "AOTI003")
    assert str(f.severity) == "error" and f.witness == "ids.shape = (2, 129)"
    assert not _findings("chunk_attn", "AOTI020")
    for label in ("seq=8", "seq=127", "seq=128"):
        assert outcome(_record("chunk_attn", label)) == "ran", label
    for label in ("seq=129", "seq=136", "seq=137", "seq=max+1"):
        run = _record("chunk_attn", label)
        assert outcome(run) == "crash" and run["signal"] == "SIGABRT", label
        assert f in ROUND.explained_by("chunk_attn", run), label


def test_histogram_bins_past_the_grid_raise_eagers_own_error() -> None:
    """Bins from the track's own range, `floor((v - min) / (max - min + 1e-6) * 16)`: once a coordinate's
    range reaches 32 m the 1e-6 is lost in float32 and the farthest point gets bin 16 (n = 3000, 4096, 4097
    with these 0.5 m steps). The round's AOTI011 warned that `scatter_reduce_two_out`'s error code is
    discarded ("partial result, no message"), yet the package raises eager's own message, after the checked
    gather of the same bins (`0 <= tmp7 < 256L`, no OpenMP region) failed too. Now an info that says the
    later check reports them. An empty track returns where eager raises (AOTI005's warnings, reproduced)."""
    (f,) = _findings("hist_bins", "AOTI011")
    assert str(f.severity) == "info" and f.witness is None
    assert f.message_key == "unchecked-extern-call.checked-later" and "0 <= tmp7 < 256L" in f.detail
    assert outcome(_record("hist_bins", "n=2000")) == "ran"
    for label in ("n=3000", "n=4096", "n=max+1"):
        run = _record("hist_bins", label)
        assert outcome(run) == "rejected" and "is out of bounds for dimension 0 with size 256" in run["aoti"]["error"]
        assert run["aoti"]["error"] == run["eager"]["error"], label
        assert "index out of bounds: 0 <= tmp7 < 256L" in _log(run), label
    assert outcome(_record("hist_bins", "n=0")) == "silent"


def test_ernie_and_nucleus_edges() -> None:
    """ERNIE: seq = 0 kills the process in flash attention (AOTI002's error, SIGFPE) and 65 reads past the
    64-column position_ids buffer and returns where eager raises (AOTI013's warning). Top-p sampling: the
    argmax's token indexes a 512-row table under a vocab declared to 1024; at 513 the sampled token stayed
    below 512 and ran, at 600, 1024 and 1025 the package raises as eager (AOTI003's info); at vocab 0 it
    raises `numel: integer multiplication overflow` (the `drop[:, :-1]` alias of size vocab - 1 = -1),
    before the empty argmax that AOTI005's info describes."""
    for label in ("seq=0", "witness:unenforced-lower-bound:1"):
        assert _record("ernie", label)["signal"] == "SIGFPE", label
    assert outcome(_record("ernie", "seq=max+1")) == "silent"
    for label in ("vocab=512", "vocab=513"):
        assert outcome(_record("nucleus", label)) == "ran", label
    for label in ("vocab=600", "vocab=1024", "vocab=max+1"):
        run = _record("nucleus", label)
        assert outcome(run) == "rejected" and "0 <= tmp2 < 512L" in run["aoti"]["error"], label
    assert "numel: integer multiplication overflow" in _record("nucleus", "vocab=0")["aoti"]["error"]


def test_a_vector_loops_scalar_tail_is_no_second_reduced_dim() -> None:
    """torch 2.13 nests a reduction's scalar tail (`for x2_tail ...`) inside its vector loop over the
    same dim (`for x2 ... += 16`): the decoder's cross-attention max reduces over `ks1` = src, once. The
    round's tree read `s64 * s64` (both loops' extents)."""
    model = ROUND.package("fsmt").models[0]
    (r,) = [r for r in model.reductions if r.kernel.endswith("softmax_eq_masked_fill_unsqueeze_view_11")]
    assert (r.op, r.extent_expr) == ("max", "s64")
