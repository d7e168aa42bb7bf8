"""Wrapper fact extraction and linking on real wrapper snippets (quoted from ../shared/pt2 and
from torch's cpp_wrapper_cpu.py codegen), without a whole package."""

from __future__ import annotations

from analyzer.parse import cppkernel, ts, wrapper
from analyzer.link.link import link_model

CONSTRUCTOR = b'''
AOTInductorModel::AOTInductorModel(std::shared_ptr<ConstantMap> constants_map,
                                   std::shared_ptr<std::vector<ConstantHandle>> constants_array,
                                   const std::string& device_str,
                                   std::optional<std::string> cubin_dir)
    : AOTInductorModelBase(2, 1, 1, device_str, std::move(cubin_dir), true) {
    inputs_info_[0].name = "arg1_1";
    inputs_info_[1].name = "arg2_1";
    constants_info_[0].name = "e_weight";
    constants_info_[0].shape = {100, 16};
    constants_info_[0].original_fqn = "e.weight";
    in_spec_ = R"([1, {"type": "builtins.tuple"}])";
}
'''

CHECKS = b'''
AOTI_NOINLINE static void check_input_0(
    AtenTensorHandle* input_handles
) {
    ConstantHandle arg1_1 = ConstantHandle(input_handles[0]);
    int32_t arg1_1_expected_dtype = aoti_torch_dtype_int64();
    auto arg1_1_size = arg1_1.sizes();
    if (arg1_1_size[0] < 2) {
        std::stringstream ss;
        ss << "input_handles[0]: dim value is too small at 0, "
           << "expected it to be >= 2, " << "but got: "
           << arg1_1_size[0] << "\\n";
        throw std::runtime_error(ss.str());
    }
    if (arg1_1_size[0] > 2147483647) {
        throw std::runtime_error("too large");
    }
    int32_t arg1_1_expected_device_type = 1;
}
AOTI_NOINLINE static void check_input_1(
    AtenTensorHandle* input_handles
) {
    auto arg2_1_size = arg2_1.sizes();
    if (16 != arg2_1_size[1]) {
        throw std::runtime_error("unmatched dim value");
    }
}
static bool _check_aoti_runtime_check_inputs_env() {
    const static char* env_var_value = getenv("AOTI_RUNTIME_CHECK_INPUTS");
    const static bool result = env_var_value != nullptr && env_var_value[0] != '0';
    return result;
}
AOTI_NOINLINE static void __check_inputs_outputs(
    AtenTensorHandle* input_handles,
    AtenTensorHandle* output_handles) {
    if (!_check_aoti_runtime_check_inputs_env()){
        return;
    }
    check_input_0(input_handles);
    check_input_1(input_handles);
}
'''

RUN_IMPL = b'''
void AOTInductorModel::run_impl(
    AtenTensorHandle* input_handles,
    AtenTensorHandle* output_handles,
    DeviceStreamType stream,
    AOTIProxyExecutorHandle proxy_executor
) {
    __check_inputs_outputs(input_handles, output_handles);
    auto inputs = steal_from_raw_handles_to_raii_handles(input_handles, 2);
    auto arg1_1 = std::move(inputs[0]);
    auto arg2_1 = std::move(inputs[1]);
    auto arg1_1_size = arg1_1.sizes();
    int64_t s11 = arg1_1_size[0];
    int64_t s17 = s11;
    auto arg2_1_size = arg2_1.sizes();
    int64_t s23 = arg2_1_size[0];
    AtenTensorHandle buf1_handle;
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cpu_searchsorted_Tensor(e_weight, arg1_1, 0, 0, nullptr, nullptr, &buf1_handle));
    RAIIAtenTensorHandle buf1(buf1_handle);
    auto buf2 = std::move(buf1);  // reuse
    int64_t u0_raw;
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_item_int64(arg2_1, &u0_raw));
    auto u0 = u0_raw;
    int64_t cpp_fused_gather_0_xnumel = s17*s23;
    cpp_fused_gather_0((const int64_t*)(buf2.data_ptr()), (const float*)(arg2_1.data_ptr()), (float*)(buf3.data_ptr()), s17, s23, cpp_fused_gather_0_xnumel);
} // AOTInductorModel::run_impl
'''

KERNEL = b'''
extern "C"  void  cpp_fused_gather_0(const int64_t* in_ptr0, const float* in_ptr1, float* out_ptr0, const int64_t ks0, const int64_t ks1, const int64_t ks2)
{
    for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(ks2); x0+=static_cast<int64_t>(1L))
    {
        auto tmp0 = in_ptr0[static_cast<int64_t>(x0)];
        AOTI_TORCH_CHECK((0 <= tmp0) & (tmp0 < ks1), "index out of bounds: 0 <= tmp0 < ks1");
    }
}
'''


def _facts():
    tree, _ = ts.parse(CONSTRUCTOR + CHECKS + RUN_IMPL + KERNEL)
    return wrapper.parse(tree, "m.wrapper.cpp"), cppkernel.parse_cpp(tree, "m.wrapper.cpp")


def test_constructor_inputs_constants_in_spec():
    facts, _ = _facts()
    assert facts.inputs == {0: "arg1_1", 1: "arg2_1"}
    assert facts.constants[0] == {"name": "e_weight", "shape": (100, 16), "original_fqn": "e.weight"}
    assert facts.in_spec == '[1, {"type": "builtins.tuple"}]'


def test_check_input_ranges_and_gate():
    facts, _ = _facts()
    c0, c1 = facts.checks[0], facts.checks[1]
    assert (c0.dims[0].min, c0.dims[0].max, c0.dtype, c0.device) == (2, 2147483647, "int64", "cuda")
    assert c1.dims[1].value == 16
    assert facts.checks_gated is True and facts.checks_called == {0, 1}


def test_run_impl_symbols_aliases_and_calls():
    facts, _ = _facts()
    symbols = {s.name: (s.expr, s.buffer, s.dim) for s in facts.symbols}
    assert symbols["s11"] == ("s11", "arg1_1", 0)
    assert symbols["s17"] == ("s11", None, None)
    assert symbols["cpp_fused_gather_0_xnumel"][0] == "(s17 * s23)"
    assert "u0" in symbols
    assert facts.aliases["buf2"] == "buf1"
    calls = {c.function: c for c in facts.calls}
    assert calls["aoti_torch_cpu_searchsorted_Tensor"].outputs == ("buf1",)
    assert calls["cpp_fused_gather_0"].arg_names[:3] == ("buf2", "arg2_1", "buf3")


def test_linking_through_an_extern_buffer_and_an_alias():
    facts, kfacts = _facts()
    model = link_model("model", {"AOTI_DEVICE_KEY": "cpu"}, facts, kfacts, problems=[])
    (a,) = model.assertions
    # The bound ks1 is the 5th argument, s23 = input 1 dim 0.
    assert a.bound_expr == "s23"
    assert [(r.input, r.dim) for r in a.bound_sources] == [(1, 0)]
    # The index comes from buf2 = buf1 = searchsorted(e_weight, arg1_1): input 0's values.
    assert a.index_sources == (0,)
    assert model.symbols["s17"].expr == "s11"
    assert model.symbols["u0"].unbacked
    assert model.inputs[0].dims[0].enforced == "env"
    assert [c.name for c in model.constants] == ["e_weight"]


# --- run_impl's calls read from their text (calls.Launches._simple_call) -------------------------

EDGE_CALLS = b'''
void AOTInductorModel::run_impl(AtenTensorHandle* input_handles, AtenTensorHandle* output_handles) {
    int64_t s11 = arg1_1_size[0];
    AtenTensorHandle buf0_handle;
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(2, int_array_0, int_array_1, cached_torch_dtype_float32, this->device_idx_, &buf0_handle));
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(2, int_array_0, int_array_1, cached_torch_dtype_float32, this->device_idx_, & buf1_handle));
    // Topologically Sorted Source Nodes: [gather], Original ATen: [aten.gather]
    call_triton_k(buf0, arg1_1, 2L*s11, this->device_idx_, stream, kernels, this->cubin_dir_);
    call_triton_k(buf0, arg1_1, 2L*s11, this->device_idx_, stream, kernels, this->cubin_dir_);
    call_triton_k(buf0, true, NULL, nullptr, this);
    call_triton_k(buf0, true, NULL, nullptr, this);
    cpp_fused_k(s11 ? 1 : 2, -s11, s11 * 2L);
    cpp_fused_k(s11 ? 1 : 2, -s11, s11 * 2L);
    call_triton_k(buf0, /* a comment */ s11);
    AOTI_TORCH_ERROR_CODE_CHECK((aoti_torch_cpu_mm_out)(buf2, buf0, buf1));
    AOTI_TORCH_ERROR_CODE_CHECK(buf2);
    AOTI_TORCH_ERROR_CODE_CHECK(a, aoti_torch_cpu_mm_out(buf2, buf0, buf1));
    aoti_torch_cpu_index_put_(buf2, buf0, buf1);
    aoti_torch_cpu_mm_out( );
    buf0.reset();
    aoti_torch_delete_tensor_object(buf0);
    cpp_fused_k(arg1_1.data_ptr(), s11);
    cpp_fused_k(s11 ? 1 : 2, -s11, (s11));
    cpp_fused_k(x, y,);
    caf\xc3\xa9(buf0);
    cpp_fused_k((const float*)(arg1_1.data_ptr()), (float*)(buf0.data_ptr()), s11);
    cpp_fused_k((const float*)(arg1_1.data_ptr()), (float*)(buf0.data_ptr()), s11);
    cpp_fused_k((const at::BFloat16*)(arg1_1.get()), (int64_t*)(buf1.data_ptr()));
    cpp_fused_k((float*)(this.data_ptr()), (float*)(int.data_ptr()));
    cpp_fused_k((float*)(buf0.data_ptr()) + 1L, (float*)(buf0->data_ptr()), (float *)(buf0.data_ptr()));
    cpp_fused_k((float*)(buf0.data_ptr(1)), (int)(s11), ((float*)(buf0.data_ptr())));
    cpp_fused_k((float*)(buf0.data_ptr(), s11));
    cpp_fused_k((float*)(buf0.data_ptr()), (s11, 2L));
    cpp_fused_k((float*)(buf0.data_ptr()) s11);
}
'''


def _run_impl_facts(data: bytes, simple: bool, monkeypatch) -> wrapper.WrapperFacts:
    from analyzer.parse import calls

    if not simple:
        monkeypatch.setattr(calls.Launches, "_simple_call", lambda self, node: False)
    tree, _ = ts.parse(data)
    facts = wrapper.parse(tree, "m.wrapper.cpp")
    monkeypatch.undo()
    return facts


def test_calls_read_from_text_are_the_calls_read_from_nodes(monkeypatch):
    # Every edge the text reading must leave to the nodes (comments, parentheses, words that are not
    # names, a first sight of an expression, a syntax error) gives the node path's facts.
    from analyzer.parse import calls

    taken = []
    original = calls.Launches._simple_call
    monkeypatch.setattr(calls.Launches, "_simple_call", lambda self, node: taken.append(original(self, node)) or taken[-1])
    fast = wrapper.parse(ts.parse(RUN_IMPL + EDGE_CALLS)[0], "m.wrapper.cpp")
    monkeypatch.undo()
    slow = _run_impl_facts(RUN_IMPL + EDGE_CALLS, False, monkeypatch)
    assert fast.calls == slow.calls and fast == slow
    assert taken.count(True) >= 5 and taken.count(False) >= 5  # both paths ran
    cast = [c for c in fast.calls if c.function == "cpp_fused_k" and c.args[:1] == ("arg1_1",)]
    assert [c.args for c in cast[1:4]] == [("arg1_1", "buf0", "s11")] * 2 + [("arg1_1", "buf1")]
    assert [c.outputs for c in cast[1:4]] == [()] * 3
    launches = [c for c in fast.calls if c.function == "call_triton_k"]
    assert launches[1].args == ("buf0", "arg1_1", "(2 * s11)", "this", "stream", "kernels", "this")
    assert launches[0].comment is not None and launches[1].comment is None
    empty = [c for c in fast.calls if c.function == "aoti_torch_empty_strided"]
    assert [c.outputs for c in empty] == [("buf0",), ("buf1",)]


def test_calls_read_from_text_on_real_wrappers(monkeypatch):
    from conftest import FIXTURES, require

    from analyzer.read import archive, layout
    from analyzer.app.pipeline import _read

    for name in ("large/gpt2_48.cuda.stripped.pt2", "small_transformer.cpu.stripped.pt2", "index_add.cuda.stripped.pt2"):
        with archive.open_package(require(FIXTURES / name), archive.Limits()) as pkg:
            sources: dict[str, bytes] = {}
            sourced = layout.pick_sources(pkg.models[0], lambda m: _read(pkg, m, sources))  # noqa: B023 - called here
            data = _read(pkg, sourced.wrappers[0], sources)
        fast, slow = (_run_impl_facts(data, simple, monkeypatch) for simple in (True, False))
        assert fast.calls and fast == slow, name


def test_cpu_kernel_launches_are_read_from_their_text(monkeypatch):
    # `cpp_fused_0((const float*)(arg1_1.data_ptr()), ..., s77);`: every launch of a CPU package
    # of thousands of kernels is read without its node, with the node path's facts.
    from conftest import FIXTURES, require

    from analyzer.parse import calls
    from analyzer.read import archive, layout
    from analyzer.app.pipeline import _read

    for name in ("versions/2.8/pos_embedding.cpu.stripped.pt2", "stranger3/opt.cpu.stripped.pt2"):
        with archive.open_package(require(FIXTURES / name), archive.Limits()) as pkg:
            sources: dict[str, bytes] = {}
            sourced = layout.pick_sources(pkg.models[0], lambda m: _read(pkg, m, sources))  # noqa: B023 - called here
            data = _read(pkg, sourced.wrappers[0], sources)
        taken: dict[str, list[bool]] = {}
        original = calls.Launches._simple_call

        def spy(self, node, taken=taken, original=original):
            return taken.setdefault(ts.text(node).split("(", 1)[0].strip(), []).append(original(self, node)) \
                or taken[ts.text(node).split("(", 1)[0].strip()][-1]
        monkeypatch.setattr(calls.Launches, "_simple_call", spy)
        fast = wrapper.parse(ts.parse(data)[0], "m.wrapper.cpp")
        monkeypatch.undo()
        slow = _run_impl_facts(data, False, monkeypatch)
        assert fast.calls and fast == slow, name
        kernels = [k for k in taken if k.startswith("cpp_fused")]
        assert kernels and all(all(taken[k]) for k in kernels), name


NESTED_DECLARATIONS = b'''
void AOTInductorModel::run_impl(AtenTensorHandle* input_handles, AtenTensorHandle* output_handles) {
    int64_t s11 = arg1_1_size[0];
    if (s11 > 2) {
        int64_t s12 = 2L*s11;
        {
            const int64_t int_array_0[] = {s12, 4L};
        }
    }
    {
        auto buf3 = std::move(buf2);
    }
    for (int64_t i = 0; i < s11; ++i) { int64_t s13 = i; }
    const int64_t int_array_1[] = {s11, 1L};
    int64_t s14 = s11 + 1;
}
'''


def test_run_impl_declarations_in_blocks_and_branches_in_document_order():
    # Read from the body's statements and from inside its blocks and control flow, as a walk of
    # every node finds them (ts.statement_matches against ts.matches_each).
    for data in (NESTED_DECLARATIONS, RUN_IMPL):
        body = next(f for f in ts.functions(ts.parse(data)[0].root_node) if ts.text(f["name"]).endswith("run_impl"))["body"]
        found = [(name, ts.text(m["name"])) for name, m in ts.statement_matches(("declarations", "arrays"), body)]
        assert found == [(name, ts.text(m["name"])) for name, m in ts.matches_each(("declarations", "arrays"), body)]
    assert [n for _, n in found if n.startswith(("s", "int_array", "buf"))] != []
    facts = wrapper.parse(ts.parse(NESTED_DECLARATIONS)[0], "m.wrapper.cpp")
    assert [s.name for s in facts.symbols] == ["s11", "s12", "i", "s13", "s14"]
    assert list(facts.int_arrays) == ["int_array_0", "int_array_1"] and facts.aliases == {"buf3": "buf2"}
