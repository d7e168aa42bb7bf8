"""The third stranger round (fixtures/stranger3): Hugging Face models of no earlier fixture set (OPT,
BART's encoder, DeBERTa-v2, CLIP's text model, BLOOM, GPT-NeoX), compiled for CPU here (torch 2.13)
and for CUDA on the H200 (torch 2.11). What aoti-lint says is pinned next to what the packages did:
fixtures/stranger3/runtime.json (CPU, aoti_load_package at 0, 1, max+1 and each witness) and
cuda/cuda_probes.json (the same models under torch.compile on the GPU)."""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from analyzer.app import api
from analyzer.explain import why
from conftest import FIXTURES

HERE = FIXTURES / "stranger3"


@lru_cache(maxsize=None)
def _lint(name: str, device: str = "cpu") -> tuple:
    if device == "cuda":
        return tuple(api.lint(str(HERE / "cuda" / f"{name}.cuda.stripped.pt2"), api.Options(select=("ALL",))).findings)
    return tuple(api.lint(str(HERE / f"{name}.cpu.stripped.pt2"),
                          api.Options(select=("ALL",), exported_program=str(HERE / f"{name}.ep.pt2"))).findings)


def _codes(name: str, device: str = "cpu") -> set[str]:
    return {f.code for f in _lint(name, device)}


def _record(name: str, label: str) -> dict:
    [record] = [r for r in json.loads((HERE / "runtime.json").read_text())
                if r["name"] == name and r["label"] == label]
    return record


def _cuda(name: str, mode: str, size: int) -> dict:
    [record] = [r for r in json.loads((HERE / "cuda" / "cuda_probes.json").read_text())
                if r["name"] == name and r["mode"] == mode and r["size"] == size]
    return record


@pytest.mark.parametrize("name", ["bart_enc", "opt"])
def test_learned_positions_past_their_table_abort(name: str) -> None:
    """BART (`arange(seq) + 2`) and OPT (`cumsum(mask) + 2`) index a table of 130 rows: at seq 129 the
    CPU package aborts (SIGABRT, probed) and the CUDA kernel trips its device assert (probed under
    torch.compile). aoti-lint says AOTI003 on both builds: BART's check reads `2 + x0 < 130` (a
    computed index, once AOTI008 `unlinked-assertion` and a false `read-past-constant`); OPT's CPU
    index passes through float casts (once unknown: no finding)."""
    assert "SIGABRT" in _record(name, "seq=max+1")["aoti"]["error"]
    probe = _cuda(name, "dynamic", 129)
    assert probe["rc"] != 0 and any("index out of bounds" in a for a in probe["asserts"])
    for device, outcome in (("cpu", "cpu.abort"), ("cuda", "cuda")):
        codes = _codes(name, device)
        assert "AOTI008" not in codes and "AOTI013" not in codes, (name, device)
        [finding] = [f for f in _lint(name, device) if f.code == "AOTI003"]
        assert finding.message_key == "index-exceeds-constant-bound.unenforced-max"
        assert finding.witness.endswith("shape = (2, 129)") and finding.message_fields["outcome"] == outcome


def test_clip_pooled_output_at_an_empty_sequence_aborts() -> None:
    """CLIP's pooled output gathers each row at its argmax token: at seq 0 the argmax's index bound is
    0 and the package aborts (SIGABRT, probed); AOTI001 says so. Above 77 the package reads the
    position ids past their end and returns (eager raises): AOTI013."""
    assert "SIGABRT" in _record("clip_text", "seq=0")["aoti"]["error"]
    assert _record("clip_text", "seq=max+1")["aoti"]["ok"]
    assert {"AOTI001", "AOTI013"} <= _codes("clip_text")


def test_deberta_reads_past_its_position_ids_silently() -> None:
    """DeBERTa's position ids buffer has 128 entries: at 129 the package returns (eager raises a
    size mismatch), which AOTI013 `read-past-constant` names."""
    assert _record("deberta", "seq=max+1")["aoti"]["ok"]
    assert not _record("deberta", "seq=max+1")["eager"]["ok"]
    assert "AOTI013" in _codes("deberta")


def test_run_impl_division_checks_are_known() -> None:
    """BLOOM's run_impl checks `AOTI_TORCH_CHECK(s27 != 0, "Integer floor division by zero")` before
    dividing by the sequence length: at seq 0 the package raises that RuntimeError (probed). It is a
    check the analyzer knows (no AOTI008 `unlinked-assertion`), and `why` routes the error to the
    input dim."""
    assert "Integer floor division by zero" in _record("bloom", "seq=0")["aoti"]["error"]
    assert "AOTI008" not in _codes("bloom")
    [lower] = [f for f in _lint("bloom") if f.code == "AOTI002"]
    assert "Integer floor division by zero" in lower.message_fields["zero"]
    package = api.load(str(HERE / "bloom.cpu.stripped.pt2"), api.Options(exported_program=str(HERE / "bloom.ep.pt2")))
    model = package.models[0]
    assert {symbol for symbol, _, _ in model.zero_checks} == {model.inputs[0].dims[1].symbol}
    found = why.explain_failure(package, (HERE / "logs" / "bloom.seq=0.log").read_text())
    [cause] = [c for c in found.candidates if c.key == "why.zero-check"]
    assert cause.index_sources == (0,) and "x.shape[1]" in cause.cause


def test_gpt_neox_and_bloom_run_at_every_probed_size() -> None:
    """Rotary (GPT-NeoX) and ALiBi (BLOOM) positions have no table to overrun: max+1 returns as eager
    does, and aoti-lint says nothing beyond AOTI002's unchecked minimum."""
    for name in ("gpt_neox", "bloom"):
        assert _record(name, "seq=max+1")["aoti"]["ok"]
        assert _codes(name) <= {"AOTI002", "AOTI019"}  # AOTI019: info, the layout every package shares
