"""The fourth stranger round (fixtures/stranger4): eleven model families of no earlier fixture set
(torchvision MobileNetV3 with dynamic height and width, Marian and T5 encoder-decoders,
positions restarted from the data, a GCN over an edge list, jagged rows, expert-choice routing, DLRM,
an audio TDNN, an RNN-free linear scan, a spatial transformer), compiled for CPU with torch 2.13.

What aoti-lint says is pinned next to what the packages did, from committed records only (nothing
here compiles): `runtime.json` (fixtures/real/probe.py: each package through `aoti_load_package` in
a child process against eager, every dynamic dim at 0, 1 and max + 1, the sizes that break a
multiple or a minimum, and every size witness aoti-lint prints) and `confirm.json`
(fixtures/stranger4/confirm_record.py: `aoti-lint confirm` on the complete packages). Every probe
that fails is explained by a finding about its dim, or is a known gap listed here with its reason."""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from conftest import FIXTURES, pin
from stranger_harness import FAILURES, Round, outcome

ROUND = Round(FIXTURES / "stranger4")
HERE = ROUND.folder
NAMES = ["tv_mobilenet", "marian", "t5", "packed_pos", "gcn", "ragged_pool", "expert_choice", "dlrm",
         "tdnn", "linear_scan", "stn"]
# The round's readers (tests/stranger_harness.py), under the names the tests below use.
_dims, _lint, _records = ROUND.dims, ROUND.lint, ROUND.records


# -- the findings ---------------------------------------------------------------------------------------

# (code, severity, the (input, dim) pairs it names), per package; AOTI019 (the unchecked layout of
# every input) names no dim.
FINDINGS: dict[str, set[tuple]] = {
    "tv_mobilenet": {
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
        ("AOTI019", "info", ()),
    },
    "marian": {
        ("AOTI002", "info", ((0, 1), (1, 1))),
        ("AOTI003", "info", ((0, 1),)),
        ("AOTI003", "info", ((1, 1),)),
        # (after the round: a softmax's max over an empty source is no longer reported: it meets no element)
        ("AOTI019", "info", ()),
    },
    "t5": {
        ("AOTI002", "info", ((0, 1), (1, 1))),
        # (after the round: a softmax's max over an empty source is no longer reported: it meets no element)
        ("AOTI019", "info", ()),
    },
    "packed_pos": {
        ("AOTI002", "info", ((0, 1),)),
        ("AOTI003", "error", ((0, 1),)),   # the cummax positions past the 64-row table
        ("AOTI019", "info", ()),
    },
    "gcn": {
        ("AOTI001", "info", ((0, 0),)),
        ("AOTI002", "info", ((0, 0), (1, 1))),
        ("AOTI019", "info", ()),
    },
    "ragged_pool": {
        ("AOTI002", "info", ((0, 0), (1, 0))),
        ("AOTI015", "info", ((1, 0),)),
        ("AOTI019", "info", ()),
    },
    "expert_choice": {
        ("AOTI002", "info", ((0, 0),)),
        ("AOTI019", "info", ()),
    },
    "dlrm": {
        ("AOTI002", "info", ((0, 0), (1, 0), (3, 0))),
        ("AOTI012", "info", ((2, 0),)),
        ("AOTI012", "info", ((4, 0),)),
        ("AOTI019", "info", ()),
    },
    "tdnn": {
        ("AOTI002", "info", ((0, 0), (0, 2))),
        ("AOTI004", "info", ((0, 2),)),
        ("AOTI010", "info", ((0, 0),)),
        ("AOTI019", "info", ()),
    },
    "linear_scan": {
        ("AOTI002", "info", ((0, 0), (0, 1))),
        ("AOTI019", "info", ()),
    },
    "stn": {
        ("AOTI002", "info", ((0, 0), (0, 2), (0, 3))),
        ("AOTI004", "info", ((0, 2),)),
        ("AOTI019", "info", ()),
    },
}


@pytest.mark.parametrize("name", NAMES)
def test_findings_are_pinned(name: str) -> None:
    assert {pin(f) for f in _lint(name)} == FINDINGS[name]


# -- what the packages did --------------------------------------------------------------------------------

# Failed probes that no finding explains: (model, probe label) -> why.
KNOWN_GAPS: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("name", NAMES)
def test_every_failing_probe_is_explained_or_a_known_gap(name: str) -> None:
    unexplained = ROUND.unexplained(name)
    gaps = {label for model, label in KNOWN_GAPS if model == name}
    assert set(unexplained) == gaps, unexplained
    assert all(unexplained[label] == "crash" for label in gaps)


def test_every_model_ran_like_eager_at_its_normal_sizes() -> None:
    for name in NAMES:
        [normal] = [r for r in _records() if r["name"] == name and r["label"] == "normal"]
        assert outcome(normal) == "ran", name


def test_every_dim_was_probed_at_0_1_and_past_its_max() -> None:
    for name in NAMES:
        labels = {r["label"] for r in _records() if r["name"] == name}
        for dim in _dims()[name]:
            assert {f"{dim}=0", f"{dim}=1"} <= labels, (name, dim)


# Findings at warning or above whose witness runs like eager (or is rejected as eager rejects it):
# (model, code) -> why. Under the severity policy a witness eager rejects too makes a finding an info,
# so gcn's AOTI001, marian's two AOTI003 (the package raises its own RuntimeError where eager raises
# IndexError) and stn's AOTI004 (its convolution rejects the empty input first, in eager too) are infos
# and not listed.
NOT_REPRODUCED: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("name", NAMES)
def test_every_error_finding_witness_fails(name: str) -> None:
    for f in _lint(name):
        if str(f.severity) not in ("error", "warning"):
            continue
        runs = ROUND.witness_runs(name, f)
        failed = any(outcome(r) in FAILURES for r in runs)
        assert runs, (name, f.code, f.witness)
        assert failed != ((name, f.code) in NOT_REPRODUCED), (name, f.code, [outcome(r) for r in runs])


def test_packed_positions_are_bounded_by_the_row_they_count_in() -> None:
    """position = arange(seq) - cummax(where(ids == 0, arange, 0)): the running max of positions lies in
    [0, seq - 1], so the position reaches seq - 1 and an unpacked row of 65 tokens indexes the 64-row
    table past its end (SIGABRT inside the OpenMP region; eager raises IndexError)."""
    (f,) = [f for f in _lint("packed_pos") if f.code == "AOTI003"]
    assert str(f.severity) == "error" and f.witness == "ids.shape = (2, 65)"
    assert any("written by aoti_torch_cpu_cummax" in line and "[0, max(s27 - 1, 0)]" in line for line in f.chain)
    (run,) = [r for r in _records() if r["name"] == "packed_pos" and r["label"] == "seq=65"]
    assert outcome(run) == "crash" and "SIGABRT" in run["aoti"]["error"]
    assert outcome([r for r in _records() if r["name"] == "packed_pos" and r["label"] == "seq=64"][0]) == "ran"


def test_lower_bound_says_which_empty_sizes_a_convolution_rejects() -> None:
    """stn's batch at 0 reaches the convolutions as an empty batch (they run); its h or w at 0 is
    smaller than the 3x3 kernel after padding: ATen raises, in eager and in the package."""
    (f,) = [f for f in _lint("stn") if f.code == "AOTI002"]
    zero = [line for line in f.chain if line.startswith("at size 0")]
    assert len(zero) == 3, f.chain
    assert "convolution rejects" not in zero[0] and "x.shape = (0, 1, 3, 3)" in zero[0]
    assert all(line.endswith("a convolution rejects it first, as eager does") for line in zero[1:])
    for label in ("h=0", "w=0"):
        (run,) = [r for r in _records() if r["name"] == "stn" and r["label"] == label]
        assert outcome(run) == "rejected" and "Kernel size can't be greater" in run["aoti"]["error"]


def test_a_division_a_convolution_rejects_first_is_an_info_that_says_so() -> None:
    """stn divides by h * w (its average pool), but h = 0 never gets there: the first convolution's
    padded input (2 rows) is smaller than its 3x3 kernel, and ATen raises, in eager and in the package."""
    (f,) = [f for f in _lint("stn") if f.code == "AOTI004"]
    assert str(f.severity) == "info" and f.message.endswith("(eager rejects it too)")
    assert any("Kernel size can't be greater than actual input size" in line and "2 after padding" in line
               and "kernel 3" in line for line in f.chain)
    (run,) = [r for r in _records() if r["name"] == "stn" and r["label"].startswith("witness:")
              and r["finding"]["witness"] == f.witness]
    for side in ("eager", "aoti"):
        assert "Kernel size can't be greater than actual input size" in run[side]["error"], run


# -- aoti-lint confirm on the complete packages --------------------------------------------------------

# (model, code) error-level findings that `confirm` does not confirm, and (model, probe) failures
# that it reports as unexplained: each with why.
CONFIRM_GAPS: dict[tuple[str, str], str] = {}


@lru_cache(maxsize=None)
def _confirm() -> dict[str, dict]:
    return {r["name"]: r for r in json.loads((HERE / "confirm.json").read_text())}


def test_confirm_record_covers_a_few_models() -> None:
    assert len(_confirm()) >= 3


@pytest.mark.parametrize("name", ["gcn", "linear_scan", "marian"])
def test_confirm_confirms_every_error_and_explains_every_failure(name: str) -> None:
    rec = _confirm()[name]
    # The record was taken before the severity policy; its verdicts are joined to the findings check
    # gives now by code and dims, and each error now must be confirmed.
    verdicts = {(f["code"], tuple(f.get("dims_key") or ())): f for f in rec["findings"]}
    by_code = {f["code"]: f for f in rec["findings"]}
    for f in _lint(name):
        if str(f.severity) == "error":
            seen = verdicts.get((f.code, ())) or by_code.get(f.code)
            assert seen is not None and (seen["verdict"] == "confirmed") != ((name, f.code) in CONFIRM_GAPS), f
    for f in rec["findings"]:
        if f["verdict"] != "confirmed" and f["severity"] == "error":
            # what confirm did not confirm is an input eager rejects too: an info under the policy
            assert f["outcome"]["status"] == "invalid-input", f
            assert all(str(g.severity) == "info" for g in _lint(name) if g.code == f["code"]), f
    for probe in rec["unexplained"]:
        assert (name, probe["probe"]) in CONFIRM_GAPS, probe
    # The record is of these packages: confirm saw the rules check reports now (the counts differ:
    # unenforced-lower-bound is one finding per model under the policy, it was one per input).
    assert {f["code"] for f in rec["findings"]} - RETIRED.get(name, set()) == {f.code for f in _lint(name)}


# Codes the record has that check no longer reports: Marian's AOTI005 was a softmax's max over an empty
# source, which meets no element (the package returns eager's values where eager returns).
RETIRED = {"marian": {"AOTI005"}}


def test_marian_position_findings_name_each_launch_table() -> None:
    """Marian launches one kernel for the encoder's and the decoder's sinusoidal tables: the finding
    about the target length names the decoder's table (its launch's constant), the one about the
    source length the encoder's; before, both named the encoder's, "ambiguous"."""
    by_dim = {(f.input, f.dim): f for f in _lint("marian") if f.code == "AOTI003"}
    assert by_dim[0, 1].source.module == "inner.model.encoder.embed_positions"
    assert by_dim[1, 1].source.module == "inner.model.decoder.embed_positions"
    assert not by_dim[0, 1].source.ambiguous and not by_dim[1, 1].source.ambiguous
