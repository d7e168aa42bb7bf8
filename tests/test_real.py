"""Packages built from model code nobody here wrote (fixtures/real: transformers GPT-2, BERT,
DistilBERT, Llama, ViT, a wav2vec2 feature encoder, a ResNet-style net, models like those of PyTorch's
AOTI tests). Findings are asserted by rule, input, dim, severity and witness; where
fixtures/real/runtime.json holds the run of a witness through `aoti_load_package`, the outcome the
finding predicts is asserted too (the records come from fixtures/real/probe.py)."""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from analyzer.app import api
from analyzer.query import witness as W
from analyzer.core.findings import Severity
from conftest import FIXTURES

REAL = FIXTURES / "real"
RUNTIME = REAL / "runtime.json"
# Probe records: runtime.json, plus runtime.<topic>.json files written by other probe runs.
RUNTIMES = sorted(REAL.glob("runtime*.json"))


@lru_cache(maxsize=None)
def _lint(name: str, select: tuple[str, ...] = ()) -> list:
    pkg, ep = REAL / f"{name}.cpu.stripped.pt2", REAL / f"{name}.ep.pt2"
    return api.lint(str(pkg), api.Options(select=select, exported_program=str(ep))).findings


def _by_rule(name: str, rule: str) -> list:
    return [f for f in _lint(name) if f.rule == rule]


def _records(name: str) -> list[dict]:
    if not RUNTIME.exists():
        pytest.skip("fixtures/real/runtime.json is missing")
    return [r for path in RUNTIMES for r in json.loads(path.read_text()) if r["name"] == name]


def _record(name: str, **sizes: int) -> dict:
    """The default-environment probe of `name` at these dim sizes (others normal)."""
    for r in _records(name):
        if not r["env"] and all(r["sizes"].get(k) == v for k, v in sizes.items()) and \
                r["label"] != "normal" and not r["label"].startswith("witness:"):
            return r
    pytest.fail(f"no run-time record of {name} at {sizes}")


def _env_record(name: str, label: str) -> dict:
    (record,) = [r for r in _records(name) if r["label"] == label]
    return record


def _seq(finding, witness: str | None = None) -> int:
    ((_, shape),) = W.parse_witness(witness or finding.witness)
    return shape[1]


def _sizes(finding, dim: int) -> list[int]:
    """The size of `dim` (of the finding's input) in each of its witnesses, in order."""
    return [dict(enumerate(W.parse_witness(w)))[finding.input][1][dim] for w in finding.witnesses]


# -- a declared max that only AOTI_RUNTIME_CHECK_INPUTS=1 enforces ----------------

def test_gpt2_position_table_max_enforced_only_by_the_variable():
    found = _by_rule("gpt2", "index-exceeds-constant-bound")
    assert found and {f.severity for f in found} == {Severity.WARNING}
    assert {(f.input, f.dim, _seq(f)) for f in found} == {(0, 1, 129)}
    assert all("inner.wpe.weight" in f.detail and "(128x64" in f.detail for f in found)
    assert all("AOTI_RUNTIME_CHECK_INPUTS=1" in f.fix for f in found)
    # The table read that the assertion guards is not reported a second time.
    assert not _by_rule("gpt2", "read-past-constant")


def test_gpt2_witness_aborts_and_the_variable_rejects_it():
    record = _record("gpt2", seq=129)
    assert record["sizes"]["seq"] == 129 and not record["aoti"]["ok"]
    # The assertion's c10::Error is thrown inside an OpenMP region: the process aborts (raw stderr in
    # fixtures/real/logs).
    assert record.get("signal") == "SIGABRT", record
    assert "c10::Error" in (REAL / "logs" / record["log"]).read_text()
    assert not record["eager"]["ok"]
    checked = next(r for r in _records("gpt2") if r["label"] == "seq=max+1+env")
    assert "dim value is too large" in checked["aoti"]["error"]
    (normal,) = [r for r in _records("gpt2") if r["label"] == "normal"]
    assert normal["aoti"]["ok"] and normal["aoti"]["matches_eager"]


# -- read-past-constant --------------------------------------------------------------

@pytest.mark.parametrize("name", ["bert", "distilbert"])
def test_position_ids_buffer_read_past_its_end(name):
    (f,) = _by_rule(name, "read-past-constant")
    assert (f.code, f.severity, f.input, f.dim, _seq(f)) == ("AOTI013", Severity.WARNING, 0, 1, 129)
    assert "inner.embeddings.position_ids (1x128" in f.detail and f.kernel.startswith("cpp_fused_")
    record = _record(name, seq=129)
    # Predicted: no error from the package (nothing checks the read), where eager raises.
    assert record["aoti"]["ok"] and not record["eager"]["ok"], record
    assert record["aoti"]["shape"][1] == 129


@pytest.mark.parametrize("name", ["vit", "resnetish", "llama"])
def test_no_table_findings_on_packages_without_such_a_path(name):
    assert not [f for f in _lint(name) if f.rule in ("read-past-constant", "index-exceeds-constant-bound")]


# -- unchecked-extern-call names the input dim that empties its target ------------

@pytest.mark.parametrize("name, dims", [("scatter_reduce", {(0, 0)}), ("index_put", {(0, 0)})])
def test_unchecked_extern_call_gets_input_dim_and_witness(name, dims):
    (f,) = _by_rule(name, "unchecked-extern-call")
    assert (f.input, f.dim) in dims and f.witness
    shapes = dict(W.parse_witness(f.witness))
    assert shapes["x"][0] == 0 and all(s[0] > 0 for n, s in shapes.items() if n != "x"), f.witness
    assert any("is empty" in line for line in f.chain), f.chain
    # The message names them too.
    assert f.message_key == "unchecked-extern-call.empty-target" and "x.shape[0] (input 0 dim 0)" in f.detail
    assert f.witness in f.detail and "x.shape[0] == 0" in f.fix
    if name == "index_put":
        assert any("x.shape[1] (input 0 dim 1)" in line for line in f.chain)  # w = 0 empties it too


@pytest.mark.parametrize("name, label", [("scatter_reduce", "n=0"), ("index_put", "h=0"), ("index_put", "w=0")])
def test_emptied_target_returns_silently_where_eager_raises(name, label):
    (record,) = [r for r in _records(name) if r["label"] == label]
    assert record["aoti"]["ok"] and not record["eager"]["ok"], record


# -- unenforced-lower-bound names the shim calls fed an empty tensor at 0 ---------

@pytest.mark.parametrize("name", ["bert", "distilbert", "llama"])
def test_lower_bound_names_extern_calls_empty_at_zero(name):
    (f,) = [f for f in _by_rule(name, "unenforced-lower-bound") if (f.input, f.dim) == (0, 1)]
    assert "at size 0" in f.detail and _seq(f) == 0
    # The witnesses: 0 (the empty tensor CPU flash attention dies on: it leads) and 1 (below the
    # minimum, runs like eager). The finding is an error: size 0 is inside the declared [0, 128].
    assert _sizes(f, 1) == [0, 1] and f.witness == f.witnesses[0]
    assert f.severity == Severity.ERROR
    assert any(line.startswith("at size 0 (x.shape = (2, 0))") for line in f.chain), f.chain
    if name == "bert":
        assert "aoti_torch_cpu__scaled_dot_product_flash_attention_for_cpu" in f.detail
        assert "SIGFPE" in f.detail


@pytest.mark.parametrize("name", ["bert", "distilbert", "llama"])
def test_size_zero_kills_the_process(name):
    record = _record(name, seq=0)
    assert record.get("signal") == "SIGFPE", record
    assert _record(name, seq=1)["aoti"]["ok"]


# -- an always-on runtime assert rejects sizes below the minimum ------------------

def test_always_on_assert_is_named_instead_of_unchecked():
    (f,) = [f for f in _by_rule("nonzero_size", "unenforced-lower-bound") if (f.input, f.dim) == (0, 0)]
    assert f.severity == Severity.INFO and "Expected u0 >= 2" in f.detail
    assert "aoti_torch_cpu_nonzero" in f.detail and "unchecked" not in f.detail
    record = _record("nonzero_size", n=1)
    assert not record["aoti"]["ok"] and "Expected u0 >= 2 but received 1" in record["aoti"]["error"], record


# -- derived dims -----------------------------------------------------------------------------

@pytest.mark.parametrize("name, dim, n, size", [("wav2vec2_fe", 1, 20, 81), ("pairs", 0, 2, 5),
                                                ("patch_embed", 2, 8, 17), ("patch_embed", 3, 8, 17)])
def test_unenforced_divisibility(name, dim, n, size):
    found = [f for f in _by_rule(name, "unenforced-divisibility") if f.dim == dim]
    (f,) = found
    assert (f.code, f.severity, f.input) == ("AOTI014", Severity.ERROR, 0)
    ((_, shape),) = W.parse_witness(f.witness)
    assert shape[dim] == size and size % n and f"% {n} == 0" in f.fix


@pytest.mark.parametrize("name, label", [("wav2vec2_fe", "k:size=81"), ("wav2vec2_fe", "k:size=801"),
                                         ("pairs", "p:size=5"), ("patch_embed", "hp:size=17")])
def test_non_multiples_return_wrong_values_or_run_where_eager_raises(name, label):
    (record,) = [r for r in _records(name) if r["label"] == label]
    assert record["aoti"]["ok"], record
    assert record["aoti"].get("matches_eager") is False or not record["eager"]["ok"], record


def test_non_multiple_rejected_with_the_variable():
    (record,) = [r for r in _records("wav2vec2_fe") if r["label"] == "k:size=801+env"]
    assert not record["aoti"]["ok"] and "801==800" in record["aoti"]["error"]


def test_lower_bound_witness_keeps_the_multiple():
    (f,) = _by_rule("wav2vec2_fe", "unenforced-lower-bound")  # one finding for x: dims 0 and 1
    assert (f.input, f.dim) == (0, 0) and "x.shape[1] (input 0 dim 1, compiled for >= 80, size 60)" in f.detail
    assert _sizes(f, 0) == [1, 0, 3, 3] and _sizes(f, 1) == [80, 80, 60, 0]


def test_compiled_max_below_declared_is_reported():
    # batch declared [0, inf), compiled [2, 15]: unenforced-lower-bound names both ends, and
    # compiled-range-narrower-than-declared still says the sizes above 15 (its own, not a lower bound).
    (narrow,) = _by_rule("resnetish", "compiled-range-narrower-than-declared")
    assert narrow.message_key == "compiled-range-narrower-than-declared.above-only" and _sizes(narrow, 0) == [16]
    (f,) = _by_rule("resnetish", "unenforced-lower-bound")
    assert f.dim == 0 and "above 15" in f.detail and _sizes(f, 0) == [1, 0, 16]
    (above,) = [r for r in _records("resnetish") if r["label"] == "batch=16"]
    (checked,) = [r for r in _records("resnetish") if r["label"] == "batch=16+env"]
    assert above["aoti"]["ok"] and not checked["aoti"]["ok"] and "too large" in checked["aoti"]["error"]


def test_compiled_max_below_declared_max_only():
    """Batch declared [2, inf) and compiled [2, 15]: only sizes above 15 are in the
    contract but not compiled for; 16 runs by default and is rejected with the variable."""
    (f,) = _by_rule("resnetish_min2", "compiled-range-narrower-than-declared")
    assert (f.code, f.input, f.dim, f.message_key) == ("AOTI010", 0, 0, "compiled-range-narrower-than-declared.above-only")
    assert _sizes(f, 0) == [16] and "> 15" in f.fix
    above, checked, top = _record("resnetish_min2", batch=16), _env_record("resnetish_min2", "batch=16+env"), \
        _record("resnetish_min2", batch=15)
    assert above["aoti"]["ok"] and above["aoti"]["matches_eager"], above
    assert not checked["aoti"]["ok"] and "dim value is too large" in checked["aoti"]["error"], checked
    assert top["aoti"]["ok"] and top["aoti"]["matches_eager"], top
    # Sizes 1 and 0 are below the declared min 2: unenforced-lower-bound is outside the contract (info).
    (lower,) = _by_rule("resnetish_min2", "unenforced-lower-bound")
    assert lower.severity == Severity.INFO and _sizes(lower, 0) == [1, 0]
    assert any(c.startswith("outside the contract: x.shape[0] = 1 or 0, declared [2, inf)") for c in lower.chain)
    assert _record("resnetish_min2", batch=1)["aoti"]["ok"] and _record("resnetish_min2", batch=0)["aoti"]["ok"]


def test_lower_and_declared_ranges_merged_per_input():
    """One unenforced-lower-bound per input; compiled-range-narrower-than-declared
    only on sizes it does not cover."""
    for pkg in sorted(REAL.glob("*.cpu.stripped.pt2")):
        name = pkg.name.split(".")[0]
        lower = _by_rule(name, "unenforced-lower-bound")
        assert len({f.input for f in lower}) == len(lower), name
        covered = {(f.input, int(k.split(".d")[1].split(">=")[0])) for f in lower for k in f.key.split(";")}
        for f in _by_rule(name, "compiled-range-narrower-than-declared"):
            # On a dim it covers, only the sizes above the compiled max are left to say (resnetish_min2).
            assert (f.input, f.dim) not in covered or f.message_key.endswith(".above-only"), (name, f.input, f.dim)


@pytest.mark.parametrize("name", ["vit", "resnetish", "llama", "gpt2", "bert"])
def test_no_divisibility_findings_without_derived_dims(name):
    assert not _by_rule(name, "unenforced-divisibility")


# -- the CUDA builds (torch 2.11 on an H200, compiled only): the same findings on Triton kernels -----

@pytest.mark.parametrize("name, rule, severity", [
    # The CUDA check asserts as eager's own lookup does past the table (an info); the CPU check
    # aborts inside an OpenMP region (a warning: past the declared max).
    ("gpt2", "index-exceeds-constant-bound", Severity.INFO),
    ("bert", "read-past-constant", Severity.WARNING),
    ("wav2vec2_fe", "unenforced-divisibility", Severity.ERROR),
    ("pairs", "unenforced-divisibility", Severity.ERROR),
])
def test_cuda_packages_give_the_same_findings(name, rule, severity):
    pkg = REAL / "cuda" / f"{name}.cuda.stripped.pt2"
    if not pkg.exists():
        pytest.skip(f"{pkg} missing")
    found = [f for f in api.lint(str(pkg), api.Options(exported_program=str(REAL / f"{name}.ep.pt2"))).findings
             if f.rule == rule]
    assert found and {f.severity for f in found} == {severity}
    cpu = {(f.input, f.dim, f.witness) for f in _by_rule(name, rule)}
    assert {(f.input, f.dim, f.witness) for f in found} == cpu


# -- every witness of the range and extern-call rules, run through aoti_load_package ------------------

def _generate():
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("fixtures_real_generate", REAL / "generate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("fixtures_real_generate", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@lru_cache(maxsize=None)
def _specs() -> dict:
    return {name: fix.dims for name, fix in _generate().REAL.items()}


def _named_sizes(name: str, witness: str) -> dict[str, int]:
    """A witness's sizes by the model's dim names (first position of each dim, as probe.py maps them)."""
    shapes = [shape for _, shape in W.parse_witness(witness)]
    return {d.name: shapes[d.at[0][0]][d.at[0][1]] for d in _specs()[name] if d.at}


def _witness_record(name: str, finding, witness: str) -> dict | None:
    """The default-environment run of `witness`: its own `witness:` probe, else an edge probe with the
    same sizes on the dims the witness sets (the others at their normal, healthy sizes)."""
    records = [r for r in _records(name) if not r["env"]]
    for r in records:
        if r["label"].startswith("witness:") and r.get("finding", {}).get("witness") == witness:
            return r
    healthy = _named_sizes(name, W.witness(_model(name), {}))
    wanted = {k: v for k, v in _named_sizes(name, witness).items() if healthy.get(k) != v}
    for r in records:
        if r["label"] != "normal" and wanted and all(r["sizes"].get(k) == v for k, v in wanted.items()) and \
                all(r["sizes"][k] == n for k, n in _normal(name).items() if k not in wanted):
            return r
    return None


@lru_cache(maxsize=None)
def _model(name: str):
    ep = str(REAL / f"{name}.ep.pt2")
    (model,) = api.load(REAL / f"{name}.cpu.stripped.pt2", api.Options(exported_program=ep)).models
    return model


def _normal(name: str) -> dict[str, int]:
    (normal,) = [r for r in _records(name) if r["label"] == "normal" and not r["env"]]
    return normal["sizes"]


# What each rule predicts for its witnesses at run time (default environment).
PREDICTED = {
    # Never compiled for, not rejected: it runs, or fails past the skipped check (a shim, an assert).
    "unenforced-lower-bound": lambda r: "dim value is too small" not in r["aoti"].get("error", ""),
    "compiled-range-narrower-than-declared": lambda r: "dim value is too" not in r["aoti"].get("error", ""),
    # The shim's error is discarded: the package returns where eager raises.
    "unchecked-extern-call": lambda r: r["aoti"]["ok"] and not r["eager"]["ok"],
    # Wrong values, or a result where eager raises.
    "unenforced-divisibility": lambda r: r["aoti"]["ok"] and (not r["eager"]["ok"]
                                                              or r["aoti"].get("matches_eager") is False),
}
PROBED = ["bert", "distilbert", "llama", "vit", "resnetish", "resnetish_min2", "scatter_reduce", "index_put",
          "pairs", "patch_embed", "gpt2", "wav2vec2_fe", "nonzero_size"]


@pytest.mark.parametrize("name", PROBED)
def test_every_witness_ran_as_predicted(name):
    if not (REAL / f"{name}.cpu.stripped.pt2").exists():
        pytest.skip(f"{name} missing")
    checked = 0
    for f in _lint(name):
        if f.rule not in PREDICTED:
            continue
        for witness in f.witnesses:
            record = _witness_record(name, f, witness)
            assert record is not None, f"no run-time record of {name} {f.code} witness {witness}"
            assert PREDICTED[f.rule](record), (f.code, witness, record["label"], record["aoti"], record["eager"])
            checked += 1
    assert checked


@pytest.mark.parametrize("name", PROBED)
def test_healthy_inputs_still_pass(name):
    (normal,) = [r for r in _records(name) if r["label"] == "normal" and not r["env"]]
    assert normal["aoti"]["ok"] and normal["aoti"].get("matches_eager", True), normal


def test_declared_range_alone_names_both_ends():
    """Run alone (AOTI002 not selected), compiled-range-narrower-than-declared on
    resnetish's batch (declared [0, inf), compiled [2, 15]) has a witness at each end: 0, 1 and 16,
    each of which runs by default."""
    (f,) = _lint("resnetish", ("compiled-range-narrower-than-declared",))
    assert (f.input, f.dim, _sizes(f, 0)) == (0, 0, [0, 1, 16])
    for size in (0, 1, 16):
        assert _record("resnetish", batch=size)["aoti"]["ok"]
