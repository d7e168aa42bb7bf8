"""The sixteenth stranger round (fixtures/stranger16): eight model families of no earlier fixture set
(LeViT, CodeGen, TimeSformer, Hiera, and four written here: attention with a clipped relative-position
bias and an unclipped distance table, segment means by lengths through `index_add`, one-hot codes and
one-hot positions, sliding-window attention by `unfold`), compiled for CPU with torch 2.13 and linted
from the wheel of 686c24e (equal to the tree at 25bd04b on every package) before any change was made for them.

What aoti-lint says is pinned next to what the packages did, from committed records only (nothing
here compiles): `runtime.json` (fixtures/real/probe.py: each package through `aoti_load_package` in
a child process against eager, every dynamic dim at 0, 1 and max + 1, the sizes that reach a table's
edge, and the primary size witness of every finding)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, pin
from stranger_harness import Round, outcome

ROUND = Round(FIXTURES / "stranger16")
NAMES = ["levit", "codegen", "timesformer", "hiera", "clamp_relpos", "segsum", "one_hot_codes", "unfold_local"]
_lint, _record = ROUND.lint, ROUND.record

_LAYOUT = ("AOTI019", "info", ())

FINDINGS: dict[str, set[tuple]] = {
    "levit": {("AOTI002", "info", ((0, 0),)), _LAYOUT},
    "codegen": {
        ("AOTI002", "error", ((0, 1),)),          # seq = 0: SIGFPE in CPU flash attention (reproduced)
        ("AOTI003", "warning", ((0, 1),)),        # seq > 128: the 128-row sin/cos table (raises, as eager does)
        _LAYOUT,
    },
    "timesformer": {("AOTI002", "info", ((0, 0), (0, 1))), _LAYOUT},
    "hiera": {("AOTI002", "info", ((0, 0),)), _LAYOUT},
    "clamp_relpos": {
        ("AOTI002", "info", ((0, 0), (0, 1))),
        ("AOTI003", "error", ((0, 1),)),          # n > 64: the 64-row distance table at |i - j| (SIGABRT): below
        _LAYOUT,
    },
    "segsum": {
        ("AOTI001", "info", ((1, 0),)),           # s = 0: index_add into no rows (raises, as eager does)
        ("AOTI002", "info", ((0, 0), (1, 0))),
        _LAYOUT,
    },
    "one_hot_codes": {
        ("AOTI002", "info", ((0, 0), (0, 1))),
        ("AOTI004", "info", ((0, 1),)),           # l = 0: the mean over no steps
        _LAYOUT,
    },
    "unfold_local": {("AOTI002", "info", ((0, 0), (0, 1))), _LAYOUT},
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
NOT_REPRODUCED: dict[tuple[str, str, str], str] = {
    ("codegen", "AOTI003", "ids.shape = (2, 129)"):
        "the package raises `index out of bounds: tmp2 < 128L` where eager raises IndexError too (outside [0, 128])",
}


@pytest.mark.parametrize("name", NAMES)
def test_every_error_finding_witness_fails(name: str) -> None:
    ROUND.check_witnesses_fail(name, NOT_REPRODUCED)


def _findings(name: str, code: str) -> list:
    return [f for f in _lint(name) if f.code == code]


def test_clamp_relpos_distance_table_aborts_inside_the_declared_range() -> None:
    """n declared [0, 128]; the distance table has 64 rows, read at |i - j| <= n - 1: n = 64 runs like eager,
    65 (inside the declared range) and 129 abort the process (the check's c10::Error thrown inside an OpenMP
    region: SIGABRT) where eager raises IndexError. The clipped 33-row table is never out of range (n = 17
    runs like eager). The round's wheel named nothing (`std::abs(x2 + (-1)*x3)` had no range); AOTI003 now
    does, an error, witness n = 65 (probed after the change: SIGABRT)."""
    for label in ("n=17", "n=64"):
        assert outcome(_record("clamp_relpos", label)) == "ran", label
    for label in ("n=65", "n=max+1", "witness:index-exceeds-constant-bound:1"):
        run = _record("clamp_relpos", label)
        assert outcome(run) == "crash" and run["signal"] == "SIGABRT" and not run["eager"]["ok"], label
    (f,) = _findings("clamp_relpos", "AOTI003")
    assert str(f.severity) == "error" and f.witness == "x.shape = (3, 65, 32)" and "`dist`" in f.message


def test_segsum_no_segments_raises_as_eager() -> None:
    """s = 0 segments with rows: the segment ids (a sum of comparisons, loaded back by the kernel that stored
    them) index no rows; the package raises its check as eager's index_add raises IndexError: an info that
    says so (the round's wheel: an error, its index not traced to an input)."""
    (f,) = _findings("segsum", "AOTI001")
    assert str(f.severity) == "info" and "eager" in f.detail


def test_codegen_empty_sequence_kills_the_process_in_flash_attention() -> None:
    """seq = 0 (declared [0, 128], compiled >= 2): SIGFPE, as AOTI002's error says (eager raises IndexError)."""
    (f,) = _findings("codegen", "AOTI002")
    assert str(f.severity) == "error" and "SIGFPE" in f.message
    run = _record("codegen", "seq=0")
    assert outcome(run) == "crash" and run["signal"] == "SIGFPE"
    assert outcome(_record("codegen", "seq=1")) == "ran"


def test_one_hot_positions_past_32_raise_as_eager() -> None:
    """one_hot(arange(l), 32) with l declared to 48: l = 33 and 49 raise `Class values must be smaller than
    num_classes` in the package as eager does (rejected, no finding needed); 32 runs like eager."""
    assert outcome(_record("one_hot_codes", "l=32")) == "ran"
    for label in ("l=33", "l=max+1"):
        assert outcome(_record("one_hot_codes", label)) == "rejected", label
