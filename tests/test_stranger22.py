"""The twenty-second stranger round (fixtures/stranger22): transformers OpenAI GPT and Flaubert, compiled
for CPU with torch 2.13 and for CUDA with torch 2.11 (on an H100), each linted with the exported program of
its CPU build. What aoti-lint says is pinned next to what the CPU packages did (`runtime.json`: each
probe through `aoti_load_package` in a child process, with AOTI_RUNTIME_CHECK_INPUTS unset and set);
nothing here compiles.

Both layers of OpenAI GPT run one generated softmax kernel, each launch passing its own causal-mask
buffer (`m.h.0.attn.bias`, `m.h.1.attn.bias`): each read past its end is the code of its own layer."""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from conftest import FIXTURES, pin
from stranger_harness import Round

ROUND = Round(FIXTURES / "stranger22")
_LAYOUT = ("AOTI019", "info", ())

FINDINGS: dict[str, set[tuple]] = {
    "openai_gpt": {
        # seq > 64 (declared to 63): the position ids and both layers' 64 x 64 causal masks (65: SIGABRT)
        ("AOTI013", "warning", ((0, 1),)),
        ("AOTI002", "info", ((0, 0), (0, 1))),  # sizes 0 and 1 run unchecked (seq 0 returns where eager raises)
        _LAYOUT,                                # transposed: wrong values; int32: SIGABRT
    },
    "flaubert": {
        ("AOTI005", "warning", ((0, 0),)),      # batch 0: the lengths' max over nothing; eager raises
        ("AOTI013", "warning", ((0, 1),)),      # seq > 64: the position ids (65: the `u0 <= 64` check raises)
        ("AOTI002", "info", ((0, 0), (0, 1))),
        _LAYOUT,
    },
}


@lru_cache(maxsize=None)
def _records() -> tuple[dict, ...]:
    return tuple(json.loads((ROUND.folder / "runtime.json").read_text()))


def _run(name: str, spec: str, checks: str = "unset") -> dict:
    (record,) = [r for r in _records() if (r["name"], r["input"], r["AOTI_RUNTIME_CHECK_INPUTS"]) == (name, spec, checks)]
    return record


@pytest.mark.parametrize("name", sorted(FINDINGS))
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_findings_are_pinned(name: str, device: str) -> None:
    found = ROUND.lint(name) if device == "cpu" else ROUND.lint_cuda(name)
    assert {pin(f) for f in found} == FINDINGS[name]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_shared_kernel_reading_each_layers_mask_names_each_layer(device: str) -> None:
    """The CUDA wrapper names the graph nodes of each launch (`// Topologically Sorted Source Nodes`): the
    read of layer 1's mask is attributed among the nodes of the launch that passes it, not of the first."""
    found = ROUND.lint("openai_gpt") if device == "cpu" else ROUND.lint_cuda("openai_gpt")
    masks = sorted((f.subject.fqn, f.source.module, f.source.op, f.source.ambiguous) for f in found
                   if f.code == "AOTI013" and f.subject.fqn.endswith("attn.bias"))
    assert masks == [("m.h.0.attn.bias", "m.h.0.attn", "aten.slice.Tensor", False),
                     ("m.h.1.attn.bias", "m.h.1.attn", "aten.slice.Tensor", False)]
    kernels = {f.kernel for f in found if f.code == "AOTI013" and f.subject.fqn.endswith("attn.bias")}
    assert len(kernels) == 1  # one kernel, launched once per layer
    assert all(f"in `{f.subject.fqn.rsplit('.', 1)[0]}`" in f.message for f in found
               if f.code == "AOTI013" and f.subject.fqn.endswith("attn.bias"))


def test_past_the_tables_the_packages_fail_as_said() -> None:
    """OpenAI GPT's 64 positions: 64 (past the declared 63) runs like eager, 65 aborts, as AOTI013's witness
    (3, 65) says. Flaubert at 65 stops at run_impl's check of `u0` (the lengths' max, a `.item()`), a
    RuntimeError; its batch 0 returns where eager raises, as AOTI005 says."""
    assert _run("openai_gpt", "shape:2,64")["result"]["maxdiff"] < 1e-5
    assert _run("openai_gpt", "shape:2,65")["exit"] == "signal SIGABRT"
    witnesses = {f.witness for f in ROUND.lint("openai_gpt") if f.code == "AOTI013"}
    assert witnesses == {"x.shape = (3, 65)"}
    assert "Expected u0 <= 64 but received 65" in _run("flaubert", "shape:2,65")["error"]
    batch0 = _run("flaubert", "shape:0,16")["result"]
    assert batch0["out_shape"] == [0, 16, 64] and "max()" in batch0["eager_error"]


def test_another_layout_or_dtype() -> None:
    """AOTI019's witnesses: a transposed view returns wrong values; int32 ids abort (the finding says wrong
    values: a known gap of its words). With AOTI_RUNTIME_CHECK_INPUTS=1 the package rejects both."""
    for name in FINDINGS:
        assert _run(name, "transposed")["result"]["maxdiff"] > 1.0
        assert _run(name, "int32")["exit"] == "signal SIGABRT"
        for spec in ("transposed", "int32"):
            assert _run(name, spec, "1")["exit"] == 1


def test_every_probe_outside_the_compiled_range_is_rejected_when_checked() -> None:
    """With AOTI_RUNTIME_CHECK_INPUTS=1 every size outside the compiled range raises `dim value is too ...`."""
    for record in _records():
        if record["AOTI_RUNTIME_CHECK_INPUTS"] != "1" or not record["input"].startswith("shape:"):
            continue
        batch, seq = (int(v) for v in record["input"][6:].split(","))
        inside = 2 <= batch <= 8 and 2 <= seq <= {"openai_gpt": 63, "flaubert": 64}[record["name"]]
        assert (record["exit"] == 0) == inside, record
        if not inside:
            assert "dim value is too" in record["error"], record
