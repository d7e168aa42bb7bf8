"""The second stranger round (fixtures/stranger2): packages built from torchvision (resnet18, an
FPN, roi_align, nms + box_iou) and from models shaped after PyTorch's test_aot_inductor.py (scatter,
index_put with None indices, _embedding_bag, repeat_interleave + index_select, masked_select,
nonzero + mm). What aoti-lint says about them is pinned here next to what the packages did at run
time (fixtures/stranger2/runtime.json and runtime.ties.json, from the probes its README names)."""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from analyzer.app import api
from analyzer.query import witness as W
from analyzer.core.findings import Severity
from analyzer.core.model import DimRef
from conftest import FIXTURES

HERE = FIXTURES / "stranger2"


@lru_cache(maxsize=None)
def _load(name: str):
    return api.load(str(HERE / f"{name}.cpu.stripped.pt2")).models[0]


@lru_cache(maxsize=None)
def _lint(name: str) -> tuple:
    pkg, ep = HERE / f"{name}.cpu.stripped.pt2", HERE / f"{name}.ep.pt2"
    return tuple(api.lint(str(pkg), api.Options(exported_program=str(ep))).findings)


def _found(name: str, code: str) -> list:
    return [f for f in _lint(name) if f.code == code]


@lru_cache(maxsize=None)
def _records(file: str = "runtime.json") -> tuple:
    return tuple(json.loads((HERE / file).read_text()))


def _record(name: str, label: str, file: str = "runtime.json") -> dict:
    [record] = [r for r in _records(file) if r["name"] == name and r["label"] == label]
    return record


# -- nms: the count of kept boxes (u0) sizes the loop around the index check ---------------------------

def test_nms_gather_check_never_runs_when_the_boxes_are_empty():
    """boxes[keep] checks `0 <= tmp7 < ks1` (ks1 = n boxes) inside `for x0 < u0: for x1 < n`: at
    n = 0 the loop around the check is empty whatever u0 (nms's count, unbacked) is, so the check
    never runs. The package raises run_impl's `Expected u0 >= 2` there, no index error: no
    empty-index-bound (it claimed "aborts the index" before the loop's unbacked factor counted)."""
    assert not _found("tv_nms_iou", "AOTI001")
    model = _load("tv_nms_iou")
    checks = [a for a in model.assertions if a.bound_expr == "s68"]
    assert checks and all("u0" in a.space_expr for a in checks)
    assert all(W.empties(model, a.space_expr, {DimRef(0, 0): 0}) for a in checks)
    assert not any(W.empties(model, a.space_expr, {DimRef(0, 0): 3}) for a in checks)
    record = _record("tv_nms_iou", "n=0")
    assert record["aoti"]["error"] == "RuntimeError: Expected u0 >= 2 but received 0"
    assert record["eager"]["ok"]


def test_nms_below_two_boxes_is_rejected_by_the_count_check():
    """nms keeps at most one index per box, so with n < 2 boxes its count u0 < 2 and run_impl's
    always-on `Expected u0 >= 2` rejects the call: unenforced-lower-bound says so (info, the
    `rejected` message) instead of "runs unchecked"; the records at n = 0 and 1 are that error."""
    [finding] = _found("tv_nms_iou", "AOTI002")
    assert (finding.input, finding.dim, finding.message_key, finding.severity) == (
        0, 0, "unenforced-lower-bound.rejected", Severity.INFO)
    assert finding.message_fields["call"] == "torchvision.nms"
    for n in (0, 1):
        assert _record("tv_nms_iou", f"n={n}")["aoti"]["error"] == f"RuntimeError: Expected u0 >= 2 but received {n}"


# -- custom ops through the proxy executor are extern calls ------------------------------------------

@pytest.mark.parametrize("name, op, inputs", [("tv_roi_align", "torchvision.roi_align", ("arg0_1", "arg1_1")),
                                              ("tv_nms_iou", "torchvision.nms", ("arg0_1", "arg1_1"))])
def test_proxy_executor_call_is_an_extern_launch_of_its_op(name, op, inputs):
    """`aoti_torch_proxy_executor_call_function(..., std::array<AtenTensorHandle, 3>{arg0_1, arg1_1,
    buf1}.data())` after `aoti_torch_new_uninitialized_tensor(&buf1_handle)`: one extern launch named
    after the op (the allocation's `Original ATen:` comment), reading the inputs, writing buf1; the
    allocation itself is no launch."""
    launches = _load(name).launches
    assert not any(launch.kernel.startswith("aoti_torch_new_uninitialized") for launch in launches)
    [call] = [launch for launch in launches if launch.kernel == op]
    assert call.extern and call.args == (*inputs, "buf1") and call.outputs == ("buf1",)
    assert call.arg_shapes[0] is not None  # the input's shape, for the empty-tensor checks


def test_roi_align_at_zero_names_the_op_that_gets_the_empty_feature_map():
    """feat.shape[0], [2], [3] = 0 reach torchvision.roi_align with an empty feature map (the process
    dies with SIGSEGV there, eager's own kernel as well): no generated kernel reads the dims, so the
    finding names the op (`empty-calls-only`), with witnesses at 0; it said "accepted unchecked by
    the compiled code" before the proxy call counted. An info: what roi_align does with an empty
    map is not something the analyzer knows (and eager dies on the same input)."""
    [feat] = [f for f in _found("tv_roi_align", "AOTI002") if f.input == 0]
    assert feat.message_key == "unenforced-lower-bound.empty-calls-only" and feat.severity == Severity.INFO
    assert feat.message_fields["calls"] == "torchvision.roi_align"
    zeros = {"feat.shape = (0, 4, 3, 3), rois.shape = (3, 5)", "feat.shape = (3, 4, 0, 3), rois.shape = (3, 5)",
             "feat.shape = (3, 4, 3, 0), rois.shape = (3, 5)"}
    assert zeros <= set(feat.witnesses)
    for label in ("batch=0", "h=0", "w=0"):
        record = _record("tv_roi_align", label)
        assert record["signal"] == "SIGSEGV" and "eager" not in record  # eager died first
        alone = _record("tv_roi_align", label, "runtime.aoti_only.json")  # the package alone
        assert alone["signal"] == "SIGSEGV"


# -- broken dim equalities: who reads the shorter tensor ----------------------------------------------

def test_tie_read_only_by_an_op_that_sees_both_tensors_is_no_finding():
    """scores must be as long as boxes, but only torchvision.nms reads scores, and it gets boxes too:
    it raises the same error as eager (`boxes and scores should have same number of elements`), no
    kernel reads past an end. No unenforced-dim-equality (it claimed "read past its end")."""
    assert not _found("tv_nms_iou", "AOTI012")
    record = _record("tv_nms_iou", "tie:1.0", "runtime.ties.json")
    assert record["aoti"]["error"] == record["eager"]["error"] and "same number of elements" in record["eager"]["error"]


@pytest.mark.parametrize("name, ref, sizes", [("tv_fpn", (1, 0), (3, 2)), ("tai_repeat_index", (1, 0), (3, 2)),
                                             ("tai_index_put_none", (3, 0), (3, 2)), ("tai_shifted", (1, 0), (3, 3))])
def test_tie_read_by_generated_code_keeps_its_finding(name, ref, sizes):
    """Where the shorter tensor reaches generated code (FPN's c3 through a conv whose output a kernel
    indexes with c2's batch; `repeats` of repeat_interleave, which never sees `values`; index_put's
    values, through an unchecked shim; test_shifted_constraint_ranges' y, summed over x's rows + 1),
    the package returns a result where eager raises, at the finding's own witness."""
    [finding] = _found(name, "AOTI012")
    assert (finding.input, finding.dim) == ref
    record = _record(name, f"tie:{ref[0]}.{ref[1]}", "runtime.ties.json")
    assert record["aoti"]["ok"] and not record["eager"]["ok"]
    # The witness's sizes for the pair (input 0 dim 0 and the shorter one); other dims at normal sizes.
    shapes = [shape for _, shape in W.parse_witness(finding.witness)]
    assert (record["shapes"][0][0], record["shapes"][ref[0]][ref[1]]) == (shapes[0][0], shapes[ref[0]][ref[1]]) == sizes


# -- what the witnesses did -----------------------------------------------------------------------------

def _witness_records(code: str) -> list[dict]:
    return [r for r in _records() if r["label"].startswith("witness:") and r["finding"]["code"] == code]


def test_every_empty_index_bound_witness_fails_at_run_time():
    """AOTI001's witnesses (tai_scatter c = 0: `index out of bounds` raised; tai_repeat_index e = 0:
    SIGABRT) never return, and each is still a finding of the same package, dim and witness."""
    records = _witness_records("AOTI001")
    assert {r["name"] for r in records} == {"tai_scatter", "tai_repeat_index"}
    for r in records:
        assert not r["aoti"]["ok"] and not r["eager"]["ok"]
        assert any((f.input, f.dim, f.witness) == (r["finding"]["input"], r["finding"]["dim"], r["finding"]["witness"])
                   for f in _found(r["name"], "AOTI001"))
    assert {r.get("signal") for r in records} == {None, "SIGABRT"}


def test_unchecked_index_put_returns_where_eager_raises():
    """AOTI011's witness (x.shape[2] = 0): the index_put_out shim's error is dropped, the package
    returns, eager raises an IndexError."""
    [record] = _witness_records("AOTI011")
    [finding] = _found("tai_index_put_none", "AOTI011")
    assert record["finding"]["witness"] == finding.witness and (finding.input, finding.dim) == (0, 2)
    assert record["aoti"]["ok"] and record["eager"]["error"].startswith("IndexError")


def test_why_routes_the_data_dependent_size_check_to_nms():
    """`aoti-lint why` on the real log of n = 0 (`Expected u0 >= 2 but received 0`, run_impl's check of
    nms's count): the cause is the op that returned u0 and the inputs it read (it said "no recognised
    failure" before)."""
    from analyzer.explain.why.explain import explain_failure
    from analyzer.explain.why.parse import FailureKind

    package = api.load(str(HERE / "tv_nms_iou.cpu.stripped.pt2"))
    result = explain_failure(package, (HERE / "logs" / "tv_nms_iou.n=0.log").read_text())
    [failure] = result.failures
    assert (failure.kind, failure.symbol, failure.expected, failure.got) == (FailureKind.SYMBOL_ASSERT, "u0", ">= 2", "0")
    [cand] = result.candidates
    assert (cand.key, cand.kernel, cand.index_sources) == ("why.symbol", "torchvision.nms", (0, 1))


def test_resize_at_zero_is_outside_the_contract_and_crashes():
    """torchvision's bilinear resize (test_aot_inductor's transforms test): at h = 0 the kernel reads
    `in_ptr0[... + w*min(i + 1, h - 1)]` (Inductor's _unsafe_index, no assertion), a negative offset:
    SIGSEGV. The exported program declares h, w in [1, 4000], so 0 is outside the contract: AOTI002's
    witnesses at 0 say so; size 1 (declared, compiled for >= 2) returns what eager returns."""
    [finding] = _found("tai_resize", "AOTI002")
    model = api.load(str(HERE / "tai_resize.cpu.stripped.pt2"),
                     api.Options(exported_program=str(HERE / "tai_resize.ep.pt2"))).models[0]
    zeros = [w for w in finding.witnesses if W.parse_witness(w)[0][1] in ((3, 0, 3), (3, 3, 0))]
    assert len(zeros) == 2 and all(W.outside_declared(model, w) for w in zeros)
    for label in ("h=0", "w=0"):
        assert _record("tai_resize", label)["signal"] == "SIGSEGV"
    for label in ("h=1", "w=1"):
        assert _record("tai_resize", label)["aoti"]["matches_eager"]


def test_why_routes_a_failed_proxy_call_to_the_custom_op():
    """The log of the scores/boxes mismatch names `aoti_torch_proxy_executor_call_function(...) API call
    failed at ..., line 889`; the launch there is torchvision.nms (named after the op): `why` gives
    it, with the inputs it read (it said "nothing in the package produces this message")."""
    from analyzer.explain.why.explain import explain_failure

    package = api.load(str(HERE / "tv_nms_iou.cpu.stripped.pt2"))
    result = explain_failure(package, (HERE / "logs" / "tv_nms_iou.tie-1.0.log").read_text())
    [cand] = result.candidates
    assert (cand.key, cand.kernel, cand.index_sources, cand.location.line) == ("why.extern-call", "torchvision.nms",
                                                                               (0, 1), 889)


# -- an index the kernel clamps to a constant, against a table of dynamic size ------------------------

def test_clamped_index_against_a_smaller_table_is_index_exceeds_dynamic_bound():
    """index_select(embeddings, 0, clamp(..., 0, 400)) with embeddings.shape[0] compiled for [2, 2048]:
    the kernel keeps the index in [0, 400] whatever was loaded (the C++ ternary that wraps negative
    indices never fires on a clamped value), so every size up to 400 fails for values the model clamps
    by design. AOTI015 names the dim and its largest failing size; before, only AOTI001 (e = 0) and
    AOTI002 (e = 1) named it. At run time (runtime.values.json): e = 400 with a value of 400 aborts
    (SIGABRT, eager raises IndexError), e = 401 returns what eager returns even for a value of 9999."""
    [finding] = _found("tai_repeat_index", "AOTI015")
    assert (finding.input, finding.dim, finding.message_key, finding.severity) == (
        2, 0, "index-exceeds-dynamic-bound", Severity.ERROR)
    assert finding.message_fields["limit"] == 400 and finding.message_fields["high"] == 400
    assert finding.message.startswith("`embeddings.shape[0]` <= 400 aborts the index_select")
    assert W.parse_witness(finding.witness)[2] == ("embeddings", (400, 8)) and "`values`" in finding.witness
    model = _load("tai_repeat_index")
    [a] = [a for a in model.assertions if a.kernel == finding.kernel and a.bound_expr == "s95"]
    assert a.index_extent == "401" and a.index_sources == (0,) and not a.index_extent_sources
    fails = _record("tai_repeat_index", "e=400,v=400", "runtime.values.json")
    assert fails["signal"] == "SIGABRT" and not fails["eager"]["ok"]
    for label in ("e=401,v=400", "e=401,v=9999", "e=400,v=399"):
        assert _record("tai_repeat_index", label, "runtime.values.json")["aoti"]["matches_eager"]


# -- sizes the input's values decide, compiled for a range the values can leave ------------------------

def test_nms_keeping_one_box_is_data_dependent_size_check():
    """nms's count u0 is compiled for >= 2 and run_impl checks it at every call: three boxes that
    overlap make nms keep one at any n, and the package raises `Expected u0 >= 2 but received 1`
    where eager returns (runtime.values.json, at n = 3 and n = 20; three disjoint boxes return what
    eager returns). AOTI016 names the op and the bound (info: the check raises, and the same bound
    may be the model's own torch._check, as in fixtures/real/nonzero_size, where eager raises too)."""
    [finding] = _found("tv_nms_iou", "AOTI016")
    assert (finding.kernel, finding.message_key, finding.severity) == (
        "torchvision.nms", "data-dependent-size-check.min", Severity.INFO)
    assert (finding.message_fields["min"], finding.message_fields["value"]) == (2, 1)
    assert finding.message.startswith("`torchvision.nms` at models.py:100 returning < 2 elements")
    assert W.parse_witness(finding.witness) == [("boxes", (3, 4)), ("scores", (3,))]
    for label in ("n=3,kept=1", "n=20,kept=1"):
        record = _record("tv_nms_iou", label, "runtime.values.json")
        assert record["aoti"]["error"] == "RuntimeError: Expected u0 >= 2 but received 1" and record["eager"]["ok"]
    assert _record("tv_nms_iou", "n=3,kept=3", "runtime.values.json")["aoti"]["matches_eager"]


@pytest.mark.parametrize("name, size, limit, over, under", [
    ("tai_nonzero_mm", 1025, 1024, "n=1025,nonzero=1025", "n=1025,nonzero=1024"),
    ("tai_masked_select", 101, 3500, "d0=101,d1=7,selected=3535", "d0=101,d1=7,selected=3500")])
def test_count_above_its_checked_max_is_data_dependent_size_check(name, size, limit, over, under):
    """nonzero's and masked_select's counts are checked <= their input's largest compiled numel
    (1024; 100 * 7 * 5): only an input above its compiled max (accepted unchecked) can exceed it,
    and then the package raises about u0, not about the input (eager returns). The witness is the
    smallest such size, the other dims at their max; both are outside the declared range (info)."""
    [finding] = _found(name, "AOTI016")
    assert (finding.input, finding.dim, finding.message_key, finding.severity) == (
        0, 0, "data-dependent-size-check.max", Severity.INFO)
    assert (finding.message_fields["size"], finding.message_fields["max"]) == (size, limit)
    assert W.parse_witness(finding.witness)[0][1][0] == size
    record = _record(name, over, "runtime.values.json")
    assert record["aoti"]["error"].startswith(f"RuntimeError: Expected u0 <= {limit} but received")
    assert record["eager"]["ok"]
    assert _record(name, under, "runtime.values.json")["aoti"]["matches_eager"]


def test_count_checked_by_the_model_itself_is_still_said_but_eager_agrees():
    """fixtures/real/nonzero_size checks `torch._check(idx.shape[0] >= 2)` itself: the package's
    `Expected u0 >= 2` is then what the model asked for, and eager raises too (runtime.values.json).
    The exported program attributes that assert to the nonzero line exactly as it does nms's assumed
    one, so the two cannot be told apart: AOTI016 is info and its message says "unless the model
    itself checks that bound"."""
    findings = [f for f in api.lint(str(FIXTURES / "real" / "nonzero_size.cpu.stripped.pt2")).findings
                if f.code == "AOTI016"]
    assert [(f.input, f.message_key, f.severity) for f in findings] == [
        (1, "data-dependent-size-check.min", Severity.INFO)]
    record = _record("nonzero_size", "n=3,nonzero=1", "runtime.values.json")
    assert record["aoti"]["error"] == "RuntimeError: Expected u0 >= 2 but received 1" and not record["eager"]["ok"]
    assert _record("nonzero_size", "n=8,nonzero=2", "runtime.values.json")["aoti"]["matches_eager"]


# -- writes into a buffer an empty input leaves without elements ----------------------------------------

def test_scatter_into_an_empty_target_is_store_into_empty_buffer():
    """scatter(inp, 1, index, src), index [1, 4]: the kernel's second loop runs over the index's static
    1x4 and writes `out_ptr0[tmp1]` into buf0 of r*c elements; at r = 0 buf0 is empty and the four
    writes land outside it: SIGSEGV (runtime.json `r=0`, runtime.values.json; eager raises). The
    first loop (the copy of inp, over r*c) empties with it and is no finding; at c = 0 the index check
    fails first (AOTI001, raised). Before, only AOTI002's witness named r = 0 ("runs unchecked")."""
    [finding] = _found("tai_scatter", "AOTI017")
    assert (finding.input, finding.dim, finding.kernel, finding.message_key, finding.severity) == (
        0, 0, "cpp_fused_scatter_0", "store-into-empty-buffer", Severity.ERROR)
    assert W.parse_witness(finding.witness)[0] == ("inp", (0, 3))
    stores = [s for s in _load("tai_scatter").accesses if s.kernel == "cpp_fused_scatter_0" and s.write]
    assert sorted(s.space_expr for s in stores) == ["4", "s5 * s54", "s5 * s54"]
    assert {s.numel for s in stores} == {"s54 * s5"} and {s.buffer for s in stores} == {"buf0"}
    assert _record("tai_scatter", "r=0")["signal"] == "SIGSEGV"
    record = _record("tai_scatter", "r=0,c=3", "runtime.values.json")
    assert record["signal"] == "SIGSEGV" and not record["eager"]["ok"]
    assert _record("tai_scatter", "r=1,c=3", "runtime.values.json")["aoti"]["matches_eager"]


def test_resize_of_an_empty_image_is_read_from_empty_buffer():
    """torchvision's bilinear resize: the kernel loops over 3 x th x tw (th, tw from `.tolist()`,
    checked >= 1 at every call) and reads the image (3 x h x w elements) through `_unsafe_index`, with
    no assertion: at h = 0 the image is empty and the reads land outside it, SIGSEGV (runtime.json
    `h=0`; runtime.values.json at the witness (3, 0, 3), with targets 3x3 and 1x1; eager raises), h = 1
    returns = eager. h = 0 is outside the declared [1, 4000]: a warning, said to be outside the
    contract. Before, only AOTI002's witness at 0 named it."""
    [finding] = _found("tai_resize", "AOTI018")
    assert (finding.input, finding.dim, finding.message_key, finding.severity) == (
        0, 1, "read-from-empty-buffer", Severity.WARNING)
    assert finding.message_fields["outside_contract"] and finding.source.op == "aten.upsample_bilinear2d.vec"
    assert W.parse_witness(finding.witness)[0] == ("image", (3, 0, 3))
    [read] = {(a.buffer, a.space_expr) for a in _load("tai_resize").accesses
              if not a.write and a.kernel == finding.kernel}
    assert read == ("arg0_1", "3 * u0 * u1")
    for label in ("h=0,w=3", "h=0,w=3,target=1x1"):
        record = _record("tai_resize", label, "runtime.values.json")
        assert record["signal"] == "SIGSEGV" and not record["eager"]["ok"]
    assert _record("tai_resize", "h=1,w=3", "runtime.values.json")["aoti"]["matches_eager"]


@pytest.mark.parametrize("package, why", [("real/unet_skip", "the conv (an extern call) raises first"),
                                          ("real/nonzero_size", "`Expected u0 >= 2` fails first")])
def test_read_from_an_empty_buffer_that_fails_earlier_is_no_finding(package, why):
    """unet_skip at x.shape[2] = 0 reads x in loops of 8 + ...: the conv before it raises
    `Kernel size can't be greater than actual input size` (runtime.values.json, as eager);
    nonzero_size at n = 0: nonzero's count 0 fails run_impl's `u0 >= 2` before the kernel reads x."""
    findings = api.lint(str(FIXTURES / f"{package}.cpu.stripped.pt2")).findings
    assert not [f for f in findings if f.code in ("AOTI017", "AOTI018")], why
    model = api.load(str(FIXTURES / f"{package}.cpu.stripped.pt2")).models[0]
    assert any(not a.write for a in model.accesses)
    if package == "real/unet_skip":  # runtime.values.json: the conv's error, as eager's
        record = _record("unet_skip", "k=0", "runtime.values.json")
        assert "Kernel size can't be greater than actual input size" in record["aoti"]["error"]
