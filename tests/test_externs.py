"""What extern calls reject on their own (analyzer.query.externs) and the inline int lists they
are passed (`std::array<int64_t, 2>{1L, 1L}.cbegin()`), read by analyzer.parse.calls."""

from __future__ import annotations

import dataclasses

import pytest

from analyzer.app import api
from analyzer.core.model import DimRef
from analyzer.parse.calls import _int_array
from analyzer.query.externs import assumed_output, rejecting_call
from conftest import FIXTURES


@pytest.mark.parametrize(("raw", "read"), [
    ("std::array<int64_t, 2>{1L, 1L}.cbegin()", "array(1, 1)"),
    ("std::array<int64_t, 1>{14L}.cbegin()", "array(14)"),
    ("std::array<int64_t, 3>{0, -1L, 2}.data()", "array(0, -1, 2)"),
    ("std::array<int64_t, 0>{}.data()", "array()"),
    ("std::array<int64_t, 2>{s0, 1L}.cbegin()", None),        # not all literals: stays unknown
    ("std::array<AtenTensorHandle, 2>{buf0, buf1}.data()", None),
    ("int_array_3", None),
])
def test_inline_int_lists(raw: str, read: str | None) -> None:
    assert _int_array(raw) == read


def _stn():
    (model,) = api.load(str(FIXTURES / "stranger4" / "stn.cpu.stripped.pt2")).models
    return model


def test_a_convolution_rejects_an_input_smaller_than_its_kernel() -> None:
    model = _stn()   # conv 3x3, padding 1, on x [b, 1, h, w]: h + 2 >= 3 is what ATen accepts
    (first, *_) = [launch for launch in model.launches if launch.kernel == "aoti_torch_cpu_convolution"]
    assert first.args[5] == "array(1, 1)" and first.args[7] == "array(1, 1)"
    found = rejecting_call(model, {DimRef(0, 2): 0})
    assert found is not None and (found.padded, found.kernel) == (2, 3) and found.launch is first
    assert rejecting_call(model, {DimRef(0, 3): 0}) is not None
    assert rejecting_call(model, {DimRef(0, 2): 1}) is None      # 3 rows after padding: accepted
    assert rejecting_call(model, {DimRef(0, 0): 0}) is None      # an empty batch is no spatial size
    assert rejecting_call(model, None) is None


def test_a_topk_rejects_a_dim_shorter_than_k() -> None:
    """k-max pooling: `aoti_torch_cpu_topk(scores [b, t], 8, 1, ...)` raises for t < 8, before the gathers
    whose index checks t = 0 would empty (eager's topk raises the same)."""
    model = api.load(str(FIXTURES / "stranger17" / "kmax_pool.cpu.stripped.pt2")).models[0]
    (topk,) = [launch for launch in model.launches if launch.kernel == "aoti_torch_cpu_topk"]
    found = rejecting_call(model, {DimRef(0, 1): 7})
    assert found is not None and (found.op, found.padded, found.kernel) == ("topk", 7, 8) and found.launch is topk
    assert rejecting_call(model, {DimRef(0, 1): 8}) is None
    assert rejecting_call(model, {DimRef(0, 1): 0}, ops=("convolution",)) is None
    last = dataclasses.replace(topk, args=(topk.args[0], "8", "-1") + topk.args[3:])   # dim -1: the same dim
    assert rejecting_call(dataclasses.replace(model, launches=[last]), {DimRef(0, 1): 3}) is not None
    unknown = dataclasses.replace(topk, args=(topk.args[0], "k0", "1") + topk.args[3:])  # k not a literal
    assert rejecting_call(dataclasses.replace(model, launches=[unknown]), {DimRef(0, 1): 0}) is None


def test_dilation_and_transposed_convolutions() -> None:
    model = _stn()
    launches = [launch for launch in model.launches if launch.kernel == "aoti_torch_cpu_convolution"]
    for i, launch in enumerate(launches):
        args = list(launch.args)
        args[7] = "array(2, 2)"   # dilation 2: the 3x3 kernel spans 5, h = 2 pads to 4
        launches[i] = dataclasses.replace(launch, args=tuple(args))
    dilated = dataclasses.replace(model, launches=launches)
    found = rejecting_call(dilated, {DimRef(0, 2): 2})
    assert found is not None and (found.padded, found.kernel) == (4, 5)
    assert rejecting_call(dilated, {DimRef(0, 2): 3}) is None
    transposed = dataclasses.replace(model, launches=[
        dataclasses.replace(launch, args=launch.args[:9] + ("1",) + launch.args[10:]) for launch in launches])
    assert rejecting_call(transposed, {DimRef(0, 2): 0}) is None   # a transposed convolution grows its input
    unknown = dataclasses.replace(model, launches=[
        dataclasses.replace(launch, args=launch.args[:5] + ("unknown()",) + launch.args[6:]) for launch in launches])
    assert rejecting_call(unknown, {DimRef(0, 2): 0}) is None      # padding not known: nothing said


def test_a_one_dimensional_convolution() -> None:
    (model,) = api.load(str(FIXTURES / "stranger4" / "tdnn.cpu.stripped.pt2")).models
    convs = [launch for launch in model.launches if launch.kernel.endswith("_convolution")]
    assert convs and all(len(launch.arg_shapes[1]) == 3 for launch in convs)
    ref = next(DimRef(i.index, len(i.dims) - 1) for i in model.inputs if i.dims)
    assert rejecting_call(model, {ref: 0}) is not None


@pytest.mark.parametrize(("name", "known"), [
    ("aoti_torch_cpu_convolution", True), ("aoti_torch_cuda_convolution", True), ("aoti_torch_convolution", True),
    ("aoti_torch_cpu__convolution", True),            # aten._convolution: the same leading arguments
    ("aoti_torch_cpu_mkldnn__convolution", False),    # other entry points, other arguments
    ("aoti_torch_cpu_mkldnn__convolution_pointwise", False), ("aoti_torch_cuda_cudnn_convolution", False),
])
def test_which_calls_are_convolutions(name: str, known: bool) -> None:
    model = _stn()
    launches = [dataclasses.replace(launch, kernel=name) if launch.kernel.endswith("_convolution") else launch
                for launch in model.launches]
    found = rejecting_call(dataclasses.replace(model, launches=launches), {DimRef(0, 2): 0})
    assert (found is not None) == known


@pytest.mark.parametrize("name", ["swin_win", "dino_patch"])
def test_the_headline_says_a_convolution_rejects_size_0_first(name: str) -> None:
    """unenforced-lower-bound's headline about an image's height names the convolution's own error at
    0 (as eager's), not the empty tensors other ATen calls would get."""
    found = api.lint(str(FIXTURES / "recall" / f"{name}.cpu.stripped.pt2"), api.Options(select=("AOTI002",))).findings
    (lower,) = [f for f in found if f.dim == 2]
    assert lower.message.endswith("; at 0 a convolution raises, as in eager"), lower.message


def test_the_headline_of_a_batch_dim_keeps_the_empty_tensors() -> None:
    """At batch 0 no convolution raises (the batch is not a spatial size): the plain fact stays."""
    found = api.lint(str(FIXTURES / "stranger4" / "stn.cpu.stripped.pt2"), api.Options(select=("AOTI002",))).findings
    (lower,) = [f for f in found if f.dim == 0]
    assert lower.message.endswith("; at 0 ATen calls get empty tensors"), lower.message


def _jagged():
    (model,) = api.load(str(FIXTURES / "stranger6" / "jagged_pos.cpu.stripped.pt2")).models
    return model


def test_an_extern_output_sized_from_elsewhere_shrinks_with_its_empty_input() -> None:
    """jagged_pos: `repeat_interleave(lengths)` returns buf4, taken to hold values.shape[0] (s59)
    elements by an assert_size_stride that runs only with AOTI_RUNTIME_CHECK_INPUTS=1; with lengths
    empty it holds none while the package assumes 3 (the witness's other size)."""
    model = _jagged()
    writer = next(i for i, launch in enumerate(model.launches) if launch.kernel.endswith("repeat_interleave_Tensor"))
    empty, full = {DimRef(1, 0): 0, DimRef(0, 0): 3}, {DimRef(1, 0): 2, DimRef(0, 0): 3}
    found = assumed_output(model, "buf4", writer, empty)
    assert found is not None and (found.buffer, found.sizes, found.count) == ("buf4", ("s59",), 3)
    assert assumed_output(model, "buf4", writer, full) is None                 # no input of the call empty
    assert assumed_output(model, "buf4", writer, {DimRef(1, 0): 0, DimRef(0, 0): 0}) is None  # assumed 0 too
    assert assumed_output(model, "buf4", None, empty) is None and assumed_output(model, None, writer, empty) is None
    assert assumed_output(model, "buf9", writer, empty) is None                # not the call's output
    cumsum = next(i for i, launch in enumerate(model.launches) if launch.kernel.endswith("cumsum"))
    assert assumed_output(model, "buf2", cumsum, empty) is None                # sized from its input: s2
    kernel = next(i for i, launch in enumerate(model.launches) if not launch.extern)
    assert assumed_output(model, "buf5", kernel, empty) is None                # a generated kernel
    model.size_checks = [dataclasses.replace(c, gated=False) if c.tensor == "buf4" else c for c in model.size_checks]
    assert assumed_output(model, "buf4", writer, empty) is None                # checked at every call
