"""Packages built from model code nobody here wrote and never tuned against (fixtures/stranger):
Hugging Face T5 encoder, Qwen2, RoBERTa and Mixtral, a torch.nn TransformerEncoder with a learned
64-row position table, and nn.EmbeddingBag. What aoti-lint says about them is pinned here, next to
what the packages did at run time (fixtures/stranger/runtime.json, from fixtures/stranger's probe)."""

from __future__ import annotations

import json
import re
from functools import lru_cache

import pytest

from analyzer.app import api
from analyzer.query import witness as W
from analyzer.core.findings import Severity
from conftest import FIXTURES

STRANGER = FIXTURES / "stranger"


@lru_cache(maxsize=None)
def _lint(name: str, device: str = "cpu") -> tuple:
    folder = STRANGER if device == "cpu" else STRANGER / "cuda"
    pkg, ep = folder / f"{name}.{device}.stripped.pt2", STRANGER / f"{name}.ep.pt2"
    return tuple(api.lint(str(pkg), api.Options(exported_program=str(ep))).findings)


def _codes(name: str, device: str = "cpu") -> list[str]:
    return sorted(f.code for f in _lint(name, device))


def test_mixtral_batch_zero_empties_the_checks_own_loop():
    """The MoE routing kernel checks `tmp10 < 2L*ks0*ks1` (batch * seq * top-2) inside
    `for x0 < ks0*ks1`: with batch 0 the bound is 0, but so is the loop, so the check never runs
    (the package returns an empty result at batch 0). No empty-index-bound."""
    assert "AOTI001" not in _codes("mixtral")
    model = api.load(str(STRANGER / "mixtral.cpu.stripped.pt2")).models[0]
    routed = [a for a in model.assertions if a.bound == "2L*ks0*ks1"]
    assert routed and all(a.space_expr for a in routed)
    zero_batch = {ref: 0 for ref in routed[0].bound_sources if ref.dim == 0}
    assert zero_batch and all(W.empties(model, a.space_expr, zero_batch) for a in routed)


# -- run-time records (fixtures/stranger/runtime.json: aoti_load_package and eager, CPU) ----------------

def _records(name: str) -> dict[str, dict]:
    path = STRANGER / "runtime.json"
    if not path.exists():
        pytest.skip("fixtures/stranger/runtime.json is missing")
    return {r["label"]: r for r in json.loads(path.read_text()) if r["name"] == name}


def _sizes(witness: str) -> list[tuple[int, ...]]:
    return [tuple(int(v) for v in re.findall(r"-?\d+", shape)) for shape in re.findall(r"\(([^)]*)\)", witness)]


@pytest.mark.parametrize("name", ["t5_enc", "qwen2", "roberta", "mixtral", "nn_tfm"])
def test_empty_sequence_kills_the_process_and_the_finding_says_size_zero(name):
    """seq = 0 ends every attention package with SIGFPE (CPU flash attention divides by the length),
    whether or not eager raises first (nn_tfm: eager returns an empty result). The dim's
    unenforced-lower-bound finding carries a witness of size 0 among its witnesses."""
    record = _records(name)["seq=0"]
    assert record["rc"] == -8 and record["signal"] == "SIGFPE"
    [finding] = [f for f in _lint(name) if f.code == "AOTI002" and f.input == 0]  # one per input
    shapes = [_sizes(w)[0] for w in finding.witnesses]
    assert (2, 0) in shapes or (3, 0) in shapes    # seq = 0, the other dim a healthy size
    assert (2, 1) in shapes or (3, 1) in shapes
    # With the variable set the package rejects 0 itself.
    assert "dim value is too small" in _records(name)["seq=0+env"]["aoti"]["error"]


def test_mixtral_batch_zero_runs():
    """The record behind test_mixtral_batch_zero_empties_the_checks_own_loop: batch 0 returns."""
    record = _records("mixtral")["batch=0"]
    assert record["rc"] == 0 and record["aoti"]["ok"]


def test_nn_tfm_reads_past_its_position_table_silently():
    """seq = 65 (declared max 64, checked only with the variable): the package returns a result
    where eager raises (size mismatch); read-past-constant names exactly that size."""
    found = [f for f in _lint("nn_tfm") if f.code == "AOTI013"]
    assert found and {f.witness for f in found} == {"x.shape = (2, 65)"}
    assert {f.severity for f in found} == {Severity.WARNING}  # the declared max is 64: gated, not absent
    record = _records("nn_tfm")["seq=max+1"]
    assert record["aoti"]["ok"] and not record["eager"]["ok"]
    assert "dim value is too large" in _records("nn_tfm")["seq=max+1+env"]["aoti"]["error"]


def test_embedding_bag_is_quiet_but_for_the_contract():
    """EmbeddingBag runs at n, b in {0, 1} in both eager and the package: nothing but the
    compiled-for->=2 contract (one info for the model, both inputs in it) and the layout every
    package shares (info): `--fail-on warning` passes."""
    records = _records("bag")
    for label in ("n=0", "n=1", "b=0", "b=1"):
        assert records[label]["aoti"]["ok"] and records[label]["eager"]["ok"], label
    assert _codes("bag") == ["AOTI002", "AOTI019"]
    [lower] = [f for f in _lint("bag") if f.code == "AOTI002"]
    assert {(d.input, d.dim) for d in lower.dims} == {(0, 0), (1, 0)}
    assert {f.severity for f in _lint("bag")} == {Severity.INFO}


def test_nn_tfm_cuda_reads_past_its_position_table():
    """The same read on CUDA: the Triton kernel loads `pos` at `x0 + 32*x2` with `x2 = xindex // 64`
    and `xindex < xnumel = 64*seq`; the index's range comes from xnumel (xindex itself is
    `xoffset + tl.arange(...)`, which alone says nothing)."""
    found = [f for f in _lint("nn_tfm", "cuda") if f.code == "AOTI013"]
    # Two kernels read past `pos`: one finding, the second kernel under `also` (rules.merging).
    assert len(found) == 1 and len(found[0].also) == 1 and found[0].witness == "x.shape = (2, 65)"


# -- RoBERTa: position ids from a cumsum over the input, past a 130-row table ---------------------

@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_roberta_position_ids_past_the_table(device):
    """RoBERTa's position ids are cumsum(ids != 1) * mask + 1 into the 130-row position table: `x != 1`
    is stored as 0/1 (buf0), the cumsum along seq (an ATen shim on CPU, a Triton scan on CUDA) holds
    [0, seq], the index [1, seq + 1]. Declared max 128, checked only with the variable: at seq = 129
    the index reaches 130; the package aborts (CPU) and fires a device assert (CUDA, torch.compile on
    the H200: `index out of bounds: 0 <= tmp20 < 130`)."""
    found = [f for f in _lint("roberta", device) if f.code == "AOTI003"]
    # CPU aborts where eager raises (a warning: past the declared max); CUDA asserts as eager does (info).
    assert [(f.input, f.dim, f.message_key, f.severity) for f in found] == [
        (0, 1, "index-exceeds-constant-bound.unenforced-max", Severity.WARNING if device == "cpu" else Severity.INFO)]
    assert _sizes(found[0].witness) == [(2, 129)]
    # The chain says which buffer holds the running count: [0, seq] (the cumsum's output).
    assert any("[0, s27]" in step for step in found[0].chain)
    records = _records("roberta")
    assert records["seq=max+1"]["rc"] == -6 and records["seq=max+1"]["sizes"]["seq"] == 129
    assert "dim value is too large" in records["seq=max+1+env"]["aoti"]["error"]
    assert records["normal"]["aoti"]["ok"]
    if device == "cuda":  # the H200 probe (torch.compile, the same kernels) at seq = 129
        probes = json.loads((STRANGER / "cuda" / "cuda_probes.json").read_text())
        [probe] = [p for p in probes if p["name"] == "roberta" and p["size"] == 129]
        assert probe["rc"] != 0 and any("0 <= tmp20 < 130` failed" in line for line in probe["tail"])


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_roberta_position_index_range_is_over_sizes(device):
    """The assertion on the position table gets an index extent over seq (s27 + 2: the index
    reaches seq + 1), not "data"; the word-embedding lookup of raw token ids stays data."""
    model = api.load(str(STRANGER / ("cuda" if device == "cuda" else "") / f"roberta.{device}.stripped.pt2")).models[0]
    table = [a for a in model.assertions if a.bound_value == 130]
    assert table and {a.index_extent for a in table} == {"s27 + 2"}
    words = [a for a in model.assertions if a.bound_value == 1000]
    assert words and all(a.index_extent is None and a.index_sources == (0,) for a in words)


def test_roberta_abort_log_routes_to_the_sequence_length():
    """`why` on the real abort log of seq = 129 names the size, not the token values: the index is
    a running count of non-padding tokens, whose range the length sets."""
    from analyzer.explain.why.explain import explain_failure

    package = api.load(str(STRANGER / "roberta.cpu.stripped.pt2"))
    result = explain_failure(package, (STRANGER / "logs" / "roberta.seq=max+1.log").read_text())
    first = result.candidates[0]
    assert first.message == "index out of bounds: 0 <= tmp15 < 130L"
    assert first.key == "why.index.extent-expr" and "> 128`" in first.fix


def test_roberta_cuda_producer_skipped_by_the_fast_path_is_walked_for_its_stores(monkeypatch):
    """A producer kernel the fast path did not walk (no stores read) is walked when a buffer it
    writes is loaded by an index: the range, and the finding, do not depend on the fast path."""
    from analyzer.parse import kernels, triage

    original = triage.light_triton
    producer = "triton_per_fused__to_copy_cumsum_ne_0"

    def light(name, source, *rest):
        if name != producer:
            return original(name, source, *rest)
        facts = kernels.parse_triton(name, source, *rest)
        facts.defs, facts.stores, facts.combines = {}, None, {}  # what the scan would give
        return facts

    monkeypatch.setattr(triage, "light_triton", light)
    model = api.load(str(STRANGER / "cuda" / "roberta.cuda.stripped.pt2")).models[0]
    assert {a.index_extent for a in model.assertions if a.bound_value == 130} == {"s27 + 2"}


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_read_past_constant_points_at_the_line_that_slices_the_table(device):
    """The kernel fuses the token embedding and the position slice; the read past `pos` is the slice
    `self.pos[:, : x.shape[1]]` (export's placeholder `p_pos`), not the embedding of `tok`."""
    for f in (f for f in _lint("nn_tfm", device) if f.code == "AOTI013"):
        assert f.source.op == "aten.slice.Tensor" and not f.source.ambiguous
        assert "self.pos[:, : x.shape[1]]" in f.source.code and f.source.module == ""
    bert = api.lint(str(FIXTURES / "real" / "bert.cpu.stripped.pt2"),
                    api.Options(exported_program=str(FIXTURES / "real" / "bert.ep.pt2"))).findings
    [read] = [f for f in bert if f.code == "AOTI013"]
    assert read.source.op == "aten.slice.Tensor" and read.source.module == "inner.embeddings"
