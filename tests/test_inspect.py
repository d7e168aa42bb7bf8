"""`aoti-lint inspect` on real packages: golden JSON per package, plus hand-reviewed facts.

The goldens in tests/golden/inspect/ were reviewed against each wrapper: the assertion's line, the
`ksM` parameter position in the kernel signature, the launch argument at that position, the
`int64_t sNN = argK_1_size[d]` binding and the `inputs_info_` table.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from analyzer.app import api
from analyzer.app.cli import cli
from analyzer.report.inspect import render_json, render_text

from conftest import FIXTURES, GOLDEN, SHARED_PT2, all_packages, compare_golden, package_id, require


def normalized_json(path) -> str:
    doc = json.loads(render_json(api.load(path)))
    doc["package"] = package_id(path)
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"


@pytest.mark.parametrize("path", all_packages(), ids=package_id)
def test_inspect_golden(path):
    golden = GOLDEN / "inspect" / (package_id(path).replace("/", "__") + ".json")
    compare_golden(normalized_json(path), golden)


# (package, kernel, message, bound_expr, bound_sources, index_sources, bound_value)
REVIEWED = [
    ("gather_dyn.cuda.pt2", "triton_poi_fused_index_mul_0", "index out of bounds: 0 <= tmp4 < ks0",
     "s77", [(0, 0)], [1], None),
    ("gather_dyn.cuda.cpponly.pt2", "triton_poi_fused_index_mul_0", "index out of bounds: 0 <= tmp4 < ks0",
     "s77", [(0, 0)], [1], None),
    ("gather_dyn.cpu.stripped.pt2", "cpp_fused_index_mul_0", "index out of bounds: 0 <= tmp7 < ks1",
     "s77", [(0, 0)], [1], None),
    ("index_select_2d.cuda.stripped.pt2", "triton_poi_fused_add_index_select_0",
     "index out of bounds: 0 <= tmp4 < ks1", "s27", [(0, 1)], [1], None),
    ("index_select_2d.cpu.stripped.pt2", "cpp_fused_add_index_select_0",
     "index out of bounds: 0 <= tmp10 < ks2", "s27", [(0, 1)], [1], None),
    ("gather_static.cuda.stripped.pt2", "triton_poi_fused_index_mul_0", "index out of bounds: 0 <= tmp4 < 10",
     "10", [], [1], 10),
    ("gather_static.cpu.stripped.pt2", "cpp_fused_index_mul_0", "index out of bounds: 0 <= tmp7 < 10L",
     "10", [], [1], 10),
    # nn.Embedding's weight is lifted as arg0_1, so the only user input is arg1_1 at position 0.
    ("embedding.cuda.stripped.pt2", "triton_per_fused_embedding_sum_0", "index out of bounds: 0 <= tmp4 < 100",
     "100", [], [0], 100),
    ("embedding.cpu.stripped.pt2", "cpp_fused_embedding_sum_0", "index out of bounds: 0 <= tmp7 < 100L",
     "100", [], [0], 100),
]


@pytest.mark.parametrize("name,kernel,message,bound_expr,bound_sources,index_sources,bound_value", REVIEWED,
                         ids=[r[0] for r in REVIEWED])
def test_reviewed_assertion_links(name, kernel, message, bound_expr, bound_sources, index_sources, bound_value):
    package = api.load(require(SHARED_PT2 / name))
    (model,) = package.models
    found = [a for a in model.assertions if a.message == message]
    assert found, [a.message for a in model.assertions]
    for a in found:
        assert a.linked, a.unlinked_reason
        assert a.kernel == kernel
        assert a.bound_expr == bound_expr
        assert [(r.input, r.dim) for r in a.bound_sources] == bound_sources
        assert list(a.index_sources) == index_sources
        assert a.bound_value == bound_value


def test_gather_dyn_cuda_details():
    (model,) = api.load(require(SHARED_PT2 / "gather_dyn.cuda.pt2")).models
    assert model.device == "cuda"
    assert model.metadata["AOTI_COMPUTE_CAPABILITY"] == "90"
    assert [i.name for i in model.inputs] == ["arg0_1", "arg1_1"]
    x, idx = model.inputs
    assert (x.dtype, x.device) == ("float32", "cuda")
    assert (x.dims[0].symbol, x.dims[0].min, x.dims[0].max, x.dims[0].enforced) == ("s77", 2, None, "env")
    assert (x.dims[1].value, x.dims[1].symbol) == (8, None)
    assert (idx.dims[0].symbol, idx.dims[0].min, idx.dims[0].max) == ("s95", 2, 2147483647)
    assert model.checks_gated is True
    (a,) = model.assertions
    assert a.location.path.endswith(".wrapper.cpp")
    assert (a.location.line, a.location.column) == (656, 9)
    (launch,) = model.launches
    assert launch.kernel == "triton_poi_fused_index_mul_0"
    assert launch.args[:6] == ("arg1_1", "arg0_1", "buf0", "s77", "s95", "8")
    assert launch.location.line == 868
    assert launch.comment.startswith("Topologically Sorted Source Nodes: [index, mul]")
    # The cubin and .so are listed, never read.
    assert any(b.endswith(".cubin") for b in model.binaries)
    assert any(b.endswith(".so") for b in model.binaries)


def test_index_select_composite_numel_symbol():
    (model,) = api.load(require(SHARED_PT2 / "index_select_2d.cuda.stripped.pt2")).models
    sym = model.symbols["triton_poi_fused_add_index_select_0_xnumel"]
    assert sym.expr == "s77 * s95"
    assert sym.source is None


def test_cpu_vectorized_kernel_keeps_both_assertion_sites():
    (model,) = api.load(require(SHARED_PT2 / "index_select_2d.cpu.stripped.pt2")).models
    lines = sorted(a.location.line for a in model.assertions)
    assert lines == [51, 103]  # the vectorized main loop and its tail both check the index


def test_cpponly_package_is_recognised():
    (model,) = api.load(require(SHARED_PT2 / "gather_dyn.cuda.cpponly.pt2")).models
    assert model.cpp_only
    assert not any(b.endswith(".so") for b in model.binaries)


def test_empty_reduce_has_reduction_and_division_but_no_assertion():
    for name in ("empty_reduce.cuda.stripped.pt2", "empty_reduce.cpu.stripped.pt2"):
        (model,) = api.load(require(SHARED_PT2 / name)).models
        assert model.assertions == []
        assert [(d.divisor_expr, d.sources[0].input, d.sources[0].dim) for d in model.divisions] == [("s77", 0, 0)]
        assert [(r.op, r.extent_expr) for r in model.reductions] == [("max", "s77")]


def test_inspect_text_shows_the_chain():
    text = render_text(api.load(require(SHARED_PT2 / "gather_dyn.cuda.pt2")))
    assert "s77 = input 0 dim 0 (arg0_1.size(0)), compiled for [2, inf), checked only with AOTI_RUNTIME_CHECK_INPUTS=1" in text
    assert "values of input 1 (arg1_1) -> tmp4 in triton_poi_fused_index_mul_0" in text
    assert ".wrapper.cpp:656:9" in text


def test_inspect_cli_json_contract():
    result = CliRunner().invoke(cli, ["inspect", str(require(SHARED_PT2 / "gather_dyn.cuda.pt2")), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["schema"] == "aoti-lint.inspect/1"
    (model,) = doc["models"]
    assert model["inputs"][0]["dims"] == [
        {"dim": 0, "symbol": "s77", "min": 2, "max": None, "enforced": "env"},
        {"dim": 1, "value": 8},
    ]
    (a,) = model["assertions"]
    assert {k: a[k] for k in ("kernel", "message", "index_var", "bound", "bound_expr", "bound_sources",
                               "index_sources")} == {
        "kernel": "triton_poi_fused_index_mul_0",
        "message": "index out of bounds: 0 <= tmp4 < ks0",
        "index_var": "tmp4", "bound": "ks0", "bound_expr": "s77",
        "bound_sources": [{"input": 0, "dim": 0}],
        "index_sources": [{"input": 1}],
    }
    assert a["location"]["line"] == 656 and a["location"]["column"] == 9


# fixtures/ (fixtures/README.md): (package, message, bound_expr, bound_sources, index_sources,
# bound_value, index_extent). Reviewed against each wrapper's launch and its `sNN = argK_1_size[d]`.
FIXTURE_FACTS = [
    ("torch_gather.cpu.stripped.pt2", "index out of bounds: 0 <= tmp2 < ks2", "s27", [(0, 1)], [1], None, None),
    ("torch_gather.cuda.stripped.pt2", "index out of bounds: 0 <= tmp4 < ks0", "s27", [(0, 1)], [1], None, None),
    ("index_add.cpu.stripped.pt2", "index out of bounds: 0 <= tmp7 < ks0", "s77", [(0, 0)], [1], None, None),
    ("index_add.cuda.stripped.pt2", "index out of bounds: 0 <= tmp4 < ks0", "s77", [(0, 0)], [1], None, None),
    ("col_gather.cuda.stripped.pt2", "index out of bounds: 0 <= tmp4 < ks1", "s27", [(0, 1)], [1], None, None),
    ("kwonly.cpu.stripped.pt2", "index out of bounds: 0 <= tmp7 < ks1", "s77", [(0, 0)], [1], None, None),
    ("mod_index.cuda.stripped.pt2", "index out of bounds: 0 <= tmp13 < ks0", "s77", [(0, 0)], [1], None, None),
    # Parameters are lifted first (arg0_1..arg3_1): the user inputs are arg4_1, arg5_1, arg6_1.
    ("lifted_params.cpu.stripped.pt2", "index out of bounds: 0 <= tmp7 < ks1", "s77", [(0, 0)], [1], None, None),
    ("lifted_params.cpu.stripped.pt2", "index out of bounds: 0 <= tmp49 < 20L", "20", [], [1], 20, None),
    ("lifted_params.cuda.stripped.pt2", "index out of bounds: 0 <= tmp58 < 20", "20", [], [1], 20, None),
    # The index is produced by an extern searchsorted (CPU) or its own Triton kernel (CUDA).
    ("searchsorted_index.cpu.stripped.pt2", "index out of bounds: 0 <= tmp7 < ks1", "s70", [(2, 0)], [0, 1], None, "s99 + 1"),  # searchsorted in [0, s99]
    # Triton-lowered (`triton_helpers.bucketize_binary_search` stored by its own kernel): in [0, s99] too.
    ("searchsorted_index.cuda.stripped.pt2", "index out of bounds: 0 <= tmp4 < ks0", "s70", [(2, 0)], [0, 1], None, "s99 + 1"),
    ("topk_index.cpu.stripped.pt2", "index out of bounds: 0 <= tmp7 < ks1", "s70", [(1, 0)], [0], None, "s69"),  # topk indices in [0, s69 - 1]
    ("topk_index.cuda.stripped.pt2", "index out of bounds: 0 <= tmp4 < ks0", "s70", [(1, 0)], [0], None, "s69"),
    # One-sided: the index ranges over the sequence length (input 0 dim 1).
    ("pos_embedding.cpu.stripped.pt2", "index out of bounds: tmp2 < 512L", "512", [], [], 512, "s27"),
    ("pos_embedding.cuda.stripped.pt2", "index out of bounds: x1 < 512", "512", [], [], 512, "s27"),
    ("small_transformer.cuda.stripped.pt2", "index out of bounds: x0 < 64", "64", [], [], 64, "s27"),
    ("small_transformer.cpu.stripped.pt2", "index out of bounds: 0 <= tmp2 < 50L", "50", [], [0], 50, None),
    # A computed bound: trunc(0.12 * t) from interpolate's scale factor.
    ("interp_gather.cpu.stripped.pt2",
     "index out of bounds: 0 <= tmp10 < static_cast<int64_t>(std::trunc(0.12000000000000000*static_cast<double>(ks3)))",
     "trunc(0.12 * s53)", [(0, 2)], [1], None, None),
    ("interp_gather.cuda.stripped.pt2",
     "index out of bounds: 0 <= tmp4 < libdevice.trunc(tl.full([], 0.120000000000000, tl.float64)*ks1.to(tl.float64)).to(tl.int32)",
     "trunc(0.12 * s53)", [(0, 2)], [1], None, None),
]


@pytest.mark.parametrize("name,message,bound_expr,bound_sources,index_sources,bound_value,extent", FIXTURE_FACTS,
                         ids=[f"{r[0]}:{r[1][-12:]}" for r in FIXTURE_FACTS])
def test_fixture_assertion_links(name, message, bound_expr, bound_sources, index_sources, bound_value, extent):
    (model,) = api.load(require(FIXTURES / name)).models
    found = [a for a in model.assertions if a.message == message]
    assert found, [a.message for a in model.assertions]
    for a in found:
        assert a.linked, a.unlinked_reason
        assert a.bound_expr == bound_expr
        assert [(r.input, r.dim) for r in a.bound_sources] == bound_sources
        assert list(a.index_sources) == index_sources
        assert a.bound_value == bound_value
        assert a.index_extent == extent
        if extent:  # searchsorted's range is the boundaries' length (input 0 dim 0)
            want = [(0, 0)] if name.startswith("searchsorted_index") else [(0, 1)]
            assert [(r.input, r.dim) for r in a.index_extent_sources] == want


def test_every_assertion_in_every_package_is_linked():
    for path in all_packages():
        for model in api.load(path).models:
            for a in model.assertions:
                assert a.linked, (path.name, a.message, a.unlinked_reason)
                assert a.bound_value is not None or a.bound_sources, (path.name, a.message)


def test_lifted_parameters_do_not_shift_input_positions():
    (model,) = api.load(require(FIXTURES / "lifted_params.cpu.stripped.pt2")).models
    assert [i.name for i in model.inputs] == ["arg4_1", "arg5_1", "arg6_1"]
    (model,) = api.load(require(FIXTURES / "small_transformer.cpu.stripped.pt2")).models
    assert [i.name for i in model.inputs] == ["arg16_1"]


def test_capped_sequence_dims_carry_their_compiled_max():
    for name, cap in (("pos_embedding_capped", 512), ("pos_embedding_max1000", 1000)):
        for device in ("cpu", "cuda"):
            (model,) = api.load(require(FIXTURES / f"{name}.{device}.stripped.pt2")).models
            seq = model.inputs[0].dims[1]
            assert (seq.min, seq.max, seq.enforced) == (2, cap, "env")


def test_precomputed_size_symbol():
    # `int64_t ps0 = 16L*s27;` in run_impl, passed to the Triton kernel as an argument.
    (model,) = api.load(require(FIXTURES / "pos_embedding.cuda.stripped.pt2")).models
    ps0 = model.symbols["ps0"]
    assert ps0.expr == "16 * s27" and ps0.source is None and not ps0.unbacked
    assert "ps0" in model.launches[0].args


def test_unbacked_symbol_from_item():
    # `aoti_torch_item_int64(arg2_1, &u0_raw); auto u0 = u0_raw;`, bounded below by a runtime assert.
    (model,) = api.load(require(FIXTURES / "stress" / "pkgs" / "item_arange.cpu.stripped.pt2")).models
    u0 = model.symbols["u0"]
    assert u0.unbacked and u0.value_inputs == (1,) and (u0.min, u0.max) == (0, None)
    (a,) = model.assertions
    assert a.index_extent == "u0" and a.index_extent_value_inputs == (1,) and a.bound_value == 64
