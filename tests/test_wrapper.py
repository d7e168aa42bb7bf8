"""Wrapper fact extraction and linking on real wrapper snippets (quoted from ../shared/pt2 and
from torch's cpp_wrapper_cpu.py codegen), without a whole package."""

from __future__ import annotations

from analyzer import kernels, ts, wrapper
from analyzer.link import link_model

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
    return wrapper.parse(tree, "m.wrapper.cpp"), kernels.parse_cpp(tree, "m.wrapper.cpp")


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
