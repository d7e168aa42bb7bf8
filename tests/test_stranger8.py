"""The eighth stranger round (fixtures/stranger8): ten model families of no earlier fixture set (PVT,
DPT, ViTDet, an ESPCN-style pixel-shuffle upsampler, GPT-Neo with local attention, Pegasus,
BlenderbotSmall, left-padded positions from per-row lengths, a GIN, a segment mean by
repeat_interleave), compiled for CPU with torch 2.13 and linted from the built wheel before any change
was made for them.

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
from stranger_harness import Round, outcome

ROUND = Round(FIXTURES / "stranger8")
NAMES = ["pvt", "dpt", "vitdet", "espcn", "gpt_neo", "pegasus", "blenderbot_small", "lpad_pos", "gin", "seg_mean"]
_lint, _records, _record = ROUND.lint, ROUND.records, ROUND.record


# -- the findings ---------------------------------------------------------------------------------------

_IMAGE = {
    ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
    ("AOTI019", "info", ()),
}

# (code, severity, the (input, dim) pairs it names), per package; AOTI019 (the unchecked layout of
# every input) names no dim.
FINDINGS: dict[str, set[tuple]] = {
    "pvt": _IMAGE | {
        ("AOTI020", "error", ((0, 2),)),          # (64 % (h // 4)) == 0, witness 20; (16 % (h // 8)) == 0, 256
        ("AOTI020", "error", ((0, 2), (0, 3))),   # (w // 4) == 64 // (h // 4), witness 16 (and w = 20)
    },
    "dpt": _IMAGE | {
        ("AOTI020", "error", ((0, 2),)),          # 128 < 32*(w//8)*(h//8), witness 16; 512 == ..., witness 24
        ("AOTI020", "error", ((0, 2), (0, 3))),   # 512 >= 32*(w//8)*(h//8), witness 72 (and w = 24)
    },
    "vitdet": _IMAGE | {
        ("AOTI020", "error", ((0, 2),)),          # (h // 8) == 4, witness 16
        ("AOTI020", "error", ((0, 3),)),          # (w // 8) == 4, witness 16
        ("AOTI003", "error", ((0, 2),)),          # h > 39 past the 7-row relative positions: SIGABRT
        ("AOTI003", "error", ((0, 3),)),          # w > 39: raises where eager returns
    },
    "espcn": _IMAGE | {
        ("AOTI020", "error", ((0, 2),)),          # (h % (h // 2)) == 0, witness 5
        ("AOTI020", "error", ((0, 3),)),
    },
    "gpt_neo": {
        ("AOTI002", "info", ((0, 1),)),
        ("AOTI003", "warning", ((0, 1),)),        # 65 past the 64-row wpe: SIGABRT (seq's AUTO max is 64)
        ("AOTI019", "info", ()),
    },
    "pegasus": {
        ("AOTI002", "error", ((0, 1), (1, 1))),   # src or tgt = 0: SIGFPE in CPU flash attention
        ("AOTI003", "info", ((0, 1),)),           # 65 past the 64-row sinusoidal table: raises, as eager
        ("AOTI003", "info", ((1, 1),)),
        ("AOTI019", "info", ()),
    },
    "blenderbot_small": {
        ("AOTI002", "error", ((0, 1), (1, 1))),
        ("AOTI003", "info", ((0, 1),)),
        ("AOTI003", "info", ((1, 1),)),
        ("AOTI019", "info", ()),
    },
    "lpad_pos": {
        ("AOTI002", "error", ((0, 0), (0, 1))),   # seq = 0: SIGFPE in CPU flash attention
        ("AOTI003", "info", ()),                  # a value >= 65 in lengths: SIGABRT where eager raises
        ("AOTI012", "info", ((1, 0),)),
        ("AOTI019", "info", ()),
    },
    "gin": {
        ("AOTI001", "info", ((0, 0),)),           # nodes = 0: the index check raises, as eager
        ("AOTI002", "info", ((0, 0), (1, 1))),
        ("AOTI011", "info", ((0, 0),)),           # x2, one per scatter_add
        ("AOTI019", "info", ()),
    },
    "seg_mean": {
        ("AOTI001", "error", ((1, 0),)),          # b = 0: SIGSEGV (eager raises), see below
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
    ("lpad_pos", "seq=63"): (
        "wrong", "the data, not the size: lengths = [3, 0] makes row 1 all padding; eager's "
                 "nn.MultiheadAttention fast path (`_native_multi_head_attention`, taken in eval under no_grad) "
                 "returns NaN for it, while export traced the slow path (SDPA), which returns 0 there: "
                 "`ep.module()` and eager with `torch.backends.mha.set_fastpath_enabled(False)` return the "
                 "package's values. (seq = 1, explained by AOTI002 here, differs for the same reason)"),
    ("lpad_pos", "batch=max+1"): (
        "wrong", "the data, not the size, as at seq = 63: one of the 5 rows has length 0 (all padding), where "
                 "eager's MultiheadAttention fast path returns NaN and the package 0. Outside the declared "
                 "batch range [0, 4] as well; AOTI012's witness (lengths of another batch size) does not cover "
                 "it: the probe keeps the tied dims equal"),
}


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


# -- what the findings say, against what happened -------------------------------------------------------

def _finding(name: str, code: str, ref: tuple[int, int] | None = None):
    (f,) = [f for f in _lint(name) if f.code == code and (ref is None or ref in finding_refs(f))]
    return f


def _member(name: str, suffix: str) -> str:
    with zipfile.ZipFile(FIXTURES / "stranger8" / f"{name}.cpu.stripped.pt2") as z:
        (member,) = [m for m in z.namelist() if m.endswith(suffix)]
        return z.read(member).decode()


def test_auto_guards_of_the_vision_models_each_have_a_size_that_breaks_them() -> None:
    """PVT, ViTDet and the ESPCN upsampler exported with `Dim.AUTO` height and width, DPT with
    [16, 128]: export kept guards none of the packages checks (PVT's grid must divide its 64-patch
    position table, DPT's patch grid must be 4x4 for its `sqrt(tokens)` reshape, ViTDet's grid must be
    4 for its uninterpolated relative positions, the upsampler's sides even). Each guard's witness, and
    the usual off-multiple sizes, return where eager raises (`silent`) or return other values."""
    for name, sizes in (("pvt", (16, 20, 256)), ("dpt", (16, 24, 72)), ("vitdet", (16,)), ("espcn", (5,))):
        guards = [f for f in _lint(name) if f.code == "AOTI020"]
        assert {int(f.witness.split(", ")[2]) for f in guards if f.dim == 2} == set(sizes), name
    for name, side, size, what in (("pvt", "h", 17, "silent"), ("dpt", "w", 17, "silent"), ("dpt", "h", "max+1", "wrong"),
                                   ("vitdet", "h", 17, "wrong"), ("vitdet", "w", 31, "wrong"),
                                   ("espcn", "h", 17, "silent"), ("espcn", "w", 33, "silent")):
        assert outcome(_record(name, f"{side}={size}")) == what, (name, side, size)


def test_encoder_decoder_position_tables_raise_as_eager_and_empty_sequences_kill_the_process() -> None:
    """Pegasus' sinusoidal and BlenderbotSmall's learned 64-row tables: 65 source or target tokens raise
    `index out of bounds: ... < 64L` (eager: IndexError), an info each; 0 tokens reach CPU flash
    attention, SIGFPE (eager raises a reshape error), an error."""
    for name in ("pegasus", "blenderbot_small"):
        for ref, dim in (((0, 1), "src"), ((1, 1), "tgt")):
            f = _finding(name, "AOTI003", ref)
            assert str(f.severity) == "info" and f.message.endswith("(eager rejects it too)")
            assert f.source.rows == 64
            for size in ("65", "max+1"):
                run = _record(name, f"{dim}={size}")
                assert outcome(run) == "rejected" and "< 64L" in run["aoti"]["error"], (name, dim, size)
            run = _record(name, f"{dim}=0")
            assert outcome(run) == "crash" and run["signal"] == "SIGFPE"
        f = _finding(name, "AOTI002")
        assert str(f.severity) == "error" and "SIGFPE" in f.message


def test_a_position_finding_names_the_table_its_launch_reads() -> None:
    """The AOTI003 findings of the two encoder-decoders name the table their check guards, read at the
    launch whose sizes they are about: Pegasus' src finding (`tmp9 < 64L`) names the encoder's position
    table, not the 100-row token table fused into the same kernel; both target findings are about
    kernels the wrapper launches with `inner_model_decoder_embed_positions_weight` (Pegasus: the
    encoder's kernel launched a second time with s59) and name the decoder's table. The wheel of the
    round named `encoder.embed_tokens` and the encoder's table there."""
    src = _finding("pegasus", "AOTI003", (0, 1))
    assert (src.source.module, src.source.rows, src.kernel) == (
        "inner.model.encoder.embed_positions", 64, "cpp_fused_add_arange_embedding_mul_native_layer_norm_0")
    assert "tmp9 < 64L" in src.detail and not src.source.ambiguous
    for name, kernel in (("pegasus", "cpp_fused_add_arange_embedding_mul_native_layer_norm_view_2"),
                         ("blenderbot_small", "cpp_fused_add_arange_embedding_native_layer_norm_view_4")):
        tgt = _finding(name, "AOTI003", (1, 1))
        assert (tgt.source.module, tgt.kernel) == ("inner.model.decoder.embed_positions", kernel)
        assert not tgt.source.ambiguous
        wrapper = _member(name, ".wrapper.cpp")
        (launch,) = [ln for ln in wrapper.splitlines() if f"    {kernel}(" in ln and "s59" in ln]
        assert "inner_model_decoder_embed_positions_weight" in launch


def test_an_empty_segment_count_crashes_the_process() -> None:
    """seg_mean at b = 0 with rows: repeat_interleave of an empty `lengths` returns an empty buffer
    whatever `output_size`, the index_add kernel reads `total` ids from it and the process dies
    (SIGSEGV) where eager raises index_add's size error. AOTI001 describes exactly that (a read past
    the end of repeat_interleave's buffer, "a crash such as SIGSEGV"), an error: the package is worse
    than eager's catchable error, as a CTRL-style abort (stranger7) is. The wheel of the round made it an
    info ("eager rejects it too")."""
    f = _finding("seg_mean", "AOTI001")
    assert str(f.severity) == "error" and "SIGSEGV" in f.detail and "repeat_interleave" in f.detail
    assert "eager rejects" not in f.message
    assert f.witness == "values.shape = (3, 16), lengths.shape = (0,)"
    for label in ("b=0", "witness:empty-index-bound:1"):
        run = _record("seg_mean", label)
        assert outcome(run) == "crash" and run["signal"] == "SIGSEGV"
        assert run["eager"]["error"].startswith("RuntimeError: index_add_(): Number of indices (0)")


def test_a_position_table_read_at_lengths_is_a_values_finding() -> None:
    """lpad_pos: the position index comes from an input's values (`arange(seq) + lengths - seq`), its
    64-row table check runs in a parallel region: seq = 129 with lengths up to 129 aborts (eager:
    IndexError). No size breaks it: AOTI003 gives the value (65; at the normal sizes 64 runs, 65
    aborts: checked by hand with the complete package) as an info, eager rejecting it too."""
    kernel = _member("lpad_pos", ".kernel.cpp")
    assert "AOTI_TORCH_CHECK((0 <= tmp15) & (tmp15 < 64L)" in kernel and "#pragma omp parallel" in kernel
    run = _record("lpad_pos", "seq=max+1")
    assert outcome(run) == "crash" and run["signal"] == "SIGABRT"
    assert run["eager"]["error"].startswith("IndexError: index out of range")
    (f,) = [f for f in _lint("lpad_pos") if f.code == "AOTI003"]
    assert (str(f.severity), f.input, f.dim, f.message_key) == ("info", 1, None,
                                                                 "index-exceeds-constant-bound.input-values")
    assert f.witness.endswith("with a value of 65 in input 1 (lengths)") and "tmp15 < 64L" in f.detail
    assert "kills the process" in f.detail or "abort" in f.detail, f.detail
    assert ROUND.explained_by("lpad_pos", run) == [f]
    # A token id is the caller's data: its own lookup (`tmp2 < 100L`) gets no finding.
    assert not [f for f in _lint("lpad_pos") if f.code in ("AOTI008", "AOTI016")]
    f = _finding("lpad_pos", "AOTI002")
    assert str(f.severity) == "error" and "SIGFPE" in f.message
    assert outcome(_record("lpad_pos", "seq=0")) == "crash" and _record("lpad_pos", "seq=0")["signal"] == "SIGFPE"


def test_gpt_neo_past_its_position_table_aborts() -> None:
    """GPT-Neo's sequence exported as `Dim.AUTO` (export refused `Dim("seq", max=64)`): compiled [2, 64];
    65 aborts inside the learned 64-row table's parallel read (AOTI003 warning: above the max), 0 returns
    where eager raises (AOTI002 info, outside the range)."""
    f = _finding("gpt_neo", "AOTI003")
    assert str(f.severity) == "warning" and "SIGABRT" in f.detail
    run = _record("gpt_neo", "seq=max+1")
    assert outcome(run) == "crash" and run["signal"] == "SIGABRT"
    assert outcome(_record("gpt_neo", "seq=0")) == "silent"
    assert outcome(_record("gpt_neo", "seq=64")) == "ran"


def test_a_guard_broken_from_above_is_called_a_maximum() -> None:
    """DPT's position grid: `128 < 32*(w//8)*(h//8)` breaks at h = 16 (below the size where every guard
    holds: a minimum), `512 >= 32*(w//8)*(h//8)` at h = 72 (above it: a maximum, whose fix names
    `Dim(..., max=...)`), `512 == ...` at 24 (a relation). The wheel of the round called all three
    comparisons minimums."""
    kinds = {f.witness: (f.message, f.fix) for f in _lint("dpt") if f.code == "AOTI020"}
    assert set(kinds) == {"x.shape = (2, 3, 16, 16)", "x.shape = (2, 3, 24, 16)", "x.shape = (2, 3, 72, 16)"}
    assert "a minimum" in kinds["x.shape = (2, 3, 16, 16)"][0] and "min=" in kinds["x.shape = (2, 3, 16, 16)"][1]
    assert "a relation" in kinds["x.shape = (2, 3, 24, 16)"][0]
    assert "a maximum" in kinds["x.shape = (2, 3, 72, 16)"][0] and "max=" in kinds["x.shape = (2, 3, 72, 16)"][1]


def test_a_relative_position_table_the_export_fixed_is_read_past() -> None:
    """ViTDet's global block reads its 7-row relative position tables at `(x0 - x1) * (g / g) + (g - 1) *
    (g / g)` (g = h // 8, the grid; `g / g` the resize of the table to the grid the trace saw), wrapped
    when negative: 2g - 1 rows, past 7 from h = 40. Export fixed the grid (`(h // 8) == 4`), so eager
    interpolates the table there and returns; the package aborts along h (a check inside an OpenMP
    region) and raises along w. Both AOTI003 are errors: past an export guard eager's rejection is not
    known. The wheel of the round said nothing of the 7-row check (its index had no range: `x / x`)."""
    by_dim = {(f.input, f.dim): f for f in _lint("vitdet") if f.code == "AOTI003"}
    assert by_dim[0, 2].witness == "x.shape = (3, 3, 40, 16)" and "aborts" in by_dim[0, 2].message
    assert by_dim[0, 3].witness == "x.shape = (3, 3, 16, 40)" and "raises" in by_dim[0, 3].message
    assert "eager rejects" not in by_dim[0, 3].message
    crash, raised = (_record("vitdet", f"witness:index-exceeds-constant-bound:{n}") for n in (1, 2))
    assert outcome(crash) == "crash" and crash["signal"] == "SIGABRT" and outcome(raised) == "raised"
    assert all("< 7L" in f.detail for f in by_dim.values()) and "0 <= tmp19 < 7L" in _member("vitdet", ".kernel.cpp")
    for label, result in (("h=40", "crash"), ("h=max+1", "crash"), ("w=40", "raised"), ("w=max+1", "raised")):
        run = _record("vitdet", label)
        assert outcome(run) == result and run["eager"]["ok"], label
    assert outcome(_record("vitdet", "normal")) == "ran"


def test_why_names_the_value_a_position_computed_from_it_fails_at() -> None:
    """`why` on lpad_pos's abort (seq = 129's log): a length of 65 or more (64 passes: the position is
    at most `max(v - 1, 0)`), not "a value outside [0, 64)" as for a token id."""
    from analyzer.explain.why import explain_failure

    log = (ROUND.folder / "logs" / _record("lpad_pos", "seq=max+1")["log"]).read_text()
    (cause, *_) = explain_failure(ROUND.package("lpad_pos"), log).candidates
    assert cause.key == "why.index.position"
    assert "of 65 or more" in cause.cause and "max(v - 1, 0)" in cause.cause
    assert "`lengths.max() < 65`" in cause.fix
