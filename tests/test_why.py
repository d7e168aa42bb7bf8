"""analyzer.explain.why: failure messages and crash logs routed to candidate causes.

Real texts: ../shared/logs/cuda-device-assert.log (H200, torch 2.11) and tests/data/cpu-*.log,
captured from packages built with torch 2.13 on CPU (tests/data/capture_cpu_failures.py).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from analyzer.core.findings import Location
from analyzer.core.model import Assertion, Dim, DimRef, Input, Model, Package
from analyzer.report.why import render_json, render_text
from analyzer.explain.why import Failure, explain_failure, parse_failure

DATA = Path(__file__).resolve().parent / "data"
SHARED = Path(__file__).resolve().parents[2] / "shared"
CUDA_LOG = SHARED / "logs" / "cuda-device-assert.log"

WRAPPER = "gather_dyn.cuda/data/aotinductor/model/ckaicpk46vp7tedo4uq3knwg75rzaht3kn7uure54km2eevnd6v5.wrapper.cpp"


def _log(name: str) -> str:
    return (DATA / name).read_text()


def _cuda_log() -> str:
    if not CUDA_LOG.exists():
        pytest.skip(f"{CUDA_LOG} is not present (the repo is expected beside ../shared)")
    return CUDA_LOG.read_text()


# ---------------------------------------------------------------------------------------------
# parse_failure on real logs


def test_cuda_device_assert_log_deduplicated():
    failures = parse_failure(_cuda_log())
    assert len(failures) == 1
    f = failures[0]
    assert f.kind == "index-assert"
    assert f.message == "index out of bounds: 0 <= tmp4 < ks0"
    assert (f.index_var, f.lower, f.bound) == ("tmp4", 0, "ks0")
    assert f.count == 24  # one line per failing thread
    assert f.file.endswith("cqpve2qjtftwl7cojnjnbzztou7qyv23nf4slahbym32uz5riy3m.py") and f.line == 32
    assert f.kernel is None  # Triton prints `unknown` for the function


@pytest.mark.parametrize("log, message, kernel, line", [
    ("cpu-gather-empty.log", "index out of bounds: 0 <= tmp7 < ks1", "cpp_fused_index_mul_0", 29),
    ("cpu-gather-static-oob.log", "index out of bounds: 0 <= tmp7 < 10L", "cpp_fused_index_mul_0", 27),
    ("cpu-embedding-oob.log", "index out of bounds: 0 <= tmp2 < 100L", "cpp_fused_embedding_sum_0", 26),
    # `terminate called after throwing an instance of 'c10::Error'` / `what():` (OpenMP region)
    ("cpu-abort-omp.log", "index out of bounds: 0 <= tmp7 < ks1", "cpp_fused_index_mul_0", 32),
])
def test_cpu_index_assert_logs(log, message, kernel, line):
    failures = parse_failure(_log(log))
    assert len(failures) == 1  # `Error:` and `RuntimeError:` lines are one failure
    f = failures[0]
    assert (f.kind, f.message, f.kernel, f.line) == ("index-assert", message, kernel, line)
    assert f.file.endswith(".kernel.cpp")


@pytest.mark.parametrize("log, check, dim, expected, got", [
    ("cpu-check-too-small.log", "too-small", 0, "2", "0"),
    ("cpu-check-dim.log", "dim", 1, "8", "9"),
    ("cpu-check-stride.log", "stride", 0, "8", "1"),
    ("cpu-check-dtype.log", "dtype", None, "float32", "float64"),
])
def test_cpu_input_check_logs(log, check, dim, expected, got):
    (f,) = parse_failure(_log(log))
    assert (f.kind, f.check, f.input, f.dim, f.expected, f.got) == ("input-check", check, 0, dim, expected, got)
    assert f.message.startswith("input_handles[0]: ")


# ---------------------------------------------------------------------------------------------
# parse_failure on hand-written forms


def test_abort_form_one_sided_with_noise():
    text = ("\x1b[31mINFO something unrelated\x1b[0m\r\n"
            "terminate called after throwing an instance of 'c10::Error'\r\n"
            "  what():  index out of bounds: tmp6 < 512L\r\n"
            "Exception raised from cpp_fused_add_embedding_0 at /tmp/xx/abc.kernel.cpp:31 (most recent call first):\r\n"
            "frame #0: c10::Error::Error(...)\r\n")
    (f,) = parse_failure(text)
    assert (f.message, f.index_var, f.lower, f.bound) == ("index out of bounds: tmp6 < 512L", "tmp6", None, "512L")
    assert (f.kernel, f.file, f.line) == ("cpp_fused_add_embedding_0", "/tmp/xx/abc.kernel.cpp", 31)


def test_raised_from_only_right_after_the_message():
    text = ("RuntimeError: index out of bounds: 0 <= tmp7 < ks1\n"
            "some other line\n"
            "Exception raised from unrelated_function at /x/y.cpp:10 (most recent call first):\n")
    (f,) = parse_failure(text)
    assert f.kernel is None and f.line is None


def test_device_check_without_name():
    (f,) = parse_failure("input_handles[2]: unmatched device type, expected: 11, but got: 0")
    assert (f.input, f.expected, f.got) == (2, "cuda", "cpu")


def test_bare_message():
    (f,) = parse_failure("index out of bounds: 0 <= tmp4 < ks0")
    assert (f.kind, f.message, f.bound, f.count) == ("index-assert", "index out of bounds: 0 <= tmp4 < ks0", "ks0", 1)


def test_message_inside_quotes_and_compound_bound():
    (f,) = parse_failure('tl.device_assert(mask, "index out of bounds: 0 <= tmp3 < ks0*ks1")')
    assert f.message == "index out of bounds: 0 <= tmp3 < ks0*ks1" and f.bound == "ks0*ks1"


@pytest.mark.parametrize("line, check, expected, got", [
    ("input_handles[1]: dim value is too large at 0, expected to be <= 64, but got: 65", "too-large", "64", "65"),
    ("input_handles[0]: unmatched device type, expected: 1 1(cuda), but got: 0", "device", "cuda", "cpu"),
    ("input_handles[0]: unmatched device type, expected: 11(cuda), but got: 0", "device", "cuda", "cpu"),
    ("input_handles[0]: unmatched dtype, expected: 6(at::kFloat), but got: 4", "dtype", "float32", "int64"),
])
def test_input_check_forms(line, check, expected, got):
    (f,) = parse_failure("RuntimeError: " + line + "\n")
    assert (f.check, f.expected, f.got) == (check, expected, got)


@pytest.mark.parametrize("text, devices", [
    ("CUDA driver error: The specified pointer resides on host memory and is not registered with any CUDA device.",
     ("cpu",)),
    ("RuntimeError: Expected out tensor to have device cuda:0, but got cpu instead", ("cuda:0", "cpu")),
    ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
     ("cuda:0", "cpu")),
])
def test_device_mismatch_forms(text, devices):
    (f,) = parse_failure(text)
    assert f.kind == "device-mismatch" and f.devices == devices


def test_generic_device_assert_without_assertion_lines():
    (f,) = parse_failure("torch.AcceleratorError: CUDA error: device-side assert triggered\n")
    assert (f.kind, f.message) == ("index-assert", "")
    # With the assertion lines present, the generic line adds nothing.
    assert len(parse_failure(_log("cpu-gather-empty.log") + "CUDA error: device-side assert triggered")) == 1


def test_nothing_recognised():
    assert parse_failure("Traceback (most recent call last):\nValueError: something else\n") == []
    assert parse_failure("") == []


def test_several_failures_in_order():
    text = ("input_handles[0]: dim value is too small at 0, expected it to be >= 2, but got: 0\n"
            "RuntimeError: index out of bounds: 0 <= tmp7 < 10L\n")
    assert [f.kind for f in parse_failure(text)] == ["input-check", "index-assert"]


# ---------------------------------------------------------------------------------------------
# explain_failure on hand-built linked models


def _gather_model(device: str = "cuda", *, named: bool = True) -> Model:
    """gather_dyn as linked: `x[idx] * 2`, x f32 [n, 8], idx i64 [m], compiled for n, m >= 2."""
    x = Input(0, "arg0_1", [Dim(0, "s77", min=2, enforced="env", declared_min=0), Dim(1, value=8, enforced="env")],
              dtype="float32", device=device, user_name="x" if named else None)
    idx = Input(1, "arg1_1", [Dim(0, "s95", min=2, enforced="env", declared_min=0)], dtype="int64", device=device,
                user_name="idx" if named else None)
    a = Assertion(kernel="triton_poi_fused_index_mul_0", message="index out of bounds: 0 <= tmp4 < ks0",
                  location=Location(WRAPPER, 656, 9), index_var="tmp4", lower=0, bound="ks0", bound_expr="s77",
                  bound_sources=(DimRef(0, 0),), index_sources=(1,),
                  # As the linker writes it: user names are applied before linking.
                  chain=(f"values of input 1 ({'idx' if named else 'arg1_1'}) -> tmp4 in triton_poi_fused_index_mul_0",
                         "must be < ks0: ks0 is argument 3 of the launch at w.cpp:868, passed s77",
                         f"s77 = input 0 dim 0 ({'x.shape[0]' if named else 'arg0_1.size(0)'}), compiled for "
                         "[2, inf), checked only with AOTI_RUNTIME_CHECK_INPUTS=1"))
    return Model(name="model", device=device, metadata={"AOTI_DEVICE_KEY": device}, wrapper_path=WRAPPER,
                 inputs=[x, idx], assertions=[a], checks_gated=True)


def _package(*models: Model) -> Package:
    return Package(path="gather_dyn.cuda.pt2", models=list(models))


def test_explain_cuda_log_against_gather_dyn():
    result = explain_failure(_package(_gather_model()), _cuda_log())
    assert result.matched
    (c,) = result.candidates
    assert (c.kernel, c.message) == ("triton_poi_fused_index_mul_0", "index out of bounds: 0 <= tmp4 < ks0")
    assert c.bound_sources == (DimRef(0, 0),) and c.index_sources == (1,)
    # The log's own call (`f(torch.randn(6, 8), torch.full((3,), 9))`) shows x non-empty and the
    # index 9 past its 6 rows: the value is the cause, quoted, and "empty" is not said at all.
    assert c.key == "why.index.value"
    assert c.cause.startswith("a value of input 1 (idx) was outside [0, x.shape[0])")
    assert "was empty" not in c.cause
    assert "input 0 (x) of shape (6, 8)" in c.cause and "value(s) 9" in c.cause
    assert "9 is outside [0, 6)" in c.cause and not c.ruled_out
    assert "AOTI_RUNTIME_CHECK_INPUTS=1" not in c.fix and "idx" in c.fix
    assert c.location == Location(WRAPPER, 656, 9)
    assert c.chain[0] == "values of input 1 (idx) -> tmp4 in triton_poi_fused_index_mul_0"
    assert "input 0 dim 0 (x.shape[0])" in c.chain[2]


def test_explain_cuda_assert_without_the_call_line_keeps_both_causes():
    text = "\n".join(line for line in _cuda_log().splitlines() if "torch.randn" not in line)
    (c,) = explain_failure(_package(_gather_model()), text).candidates
    assert c.key == "why.index.zero"
    assert c.cause.startswith("input 0 dim 0 (x.shape[0]) was empty (size 0): every index fails `0 <= tmp4 < 0`")
    assert "a value of input 1 (idx) was outside [0, x.shape[0])" in c.cause
    assert "AOTI_RUNTIME_CHECK_INPUTS=1" in c.fix and "x.shape[0] == 0" in c.fix


def test_json_shape():
    doc = json.loads(render_json(explain_failure(_package(_gather_model()), "index out of bounds: 0 <= tmp4 < ks0")))
    assert doc["schema"] == "aoti-lint.why/1" and doc["matched"] is True
    (c,) = doc["candidates"]
    assert {"kernel", "message", "bound_sources", "index_sources", "cause", "fix", "location"} <= c.keys()
    assert c["bound_sources"] == [{"input": 0, "dim": 0}]
    assert c["index_sources"] == [{"input": 1}]
    assert c["location"] == {"path": WRAPPER, "line": 656, "column": 9}
    assert doc["failures"][0]["message"] == "index out of bounds: 0 <= tmp4 < ks0"


def test_render_text():
    text = render_text(explain_failure(_package(_gather_model()), _cuda_log()))
    assert "24 threads" in text and "1 candidate cause(s)" in text
    assert f"triton_poi_fused_index_mul_0 at {WRAPPER}:656:9" in text
    assert "cause:   a value of input 1 (idx) was outside [0, x.shape[0]); the log shows" in text


def test_unmatched_message():
    result = explain_failure(_package(_gather_model()), "RuntimeError: index out of bounds: 0 <= tmp9 < ks3")
    assert not result.matched and result.candidates == () and len(result.failures) == 1
    assert "no match" in render_text(result)
    assert json.loads(render_json(result))["candidates"] == []
    nothing = explain_failure(_package(_gather_model()), "just some text")
    assert not nothing.matched and "no recognised failure" in render_text(nothing)


def _constant_assertion(kernel: str, message: str, bound: int, index_input: int) -> Assertion:
    return Assertion(kernel=kernel, message=message, location=Location("k.kernel.cpp", 25, 25), index_var="tmp7",
                     lower=0, bound=f"{bound}L", bound_expr=str(bound), bound_value=bound, index_sources=(index_input,))


def test_constant_bound_cause_and_cpu_suffix_normalised():
    model = _gather_model(device="cpu")
    model.assertions = [_constant_assertion("cpp_fused_embedding_0", "index out of bounds: 0 <= tmp7 < 100L", 100, 1)]
    # A CUDA-spelled message (no `L`) still matches the CPU package's assertion, and vice versa.
    for text in ("index out of bounds: 0 <= tmp7 < 100", "RuntimeError: index out of bounds: 0 <= tmp7 < 100L"):
        (c,) = explain_failure(_package(model), text).candidates
        assert c.key == "why.index.value" and c.cause == "a value of input 1 (idx) was outside [0, 100)"
        assert "idx.max() < 100" in c.fix


def test_dynamic_bound_that_can_be_zero_ranks_first():
    model = _gather_model()
    dynamic = model.assertions[0]
    constant = _constant_assertion("triton_poi_fused_embedding_1", dynamic.message, 10, 1)
    model.assertions = [constant, dynamic]
    first, second = explain_failure(_package(model), dynamic.message).candidates
    assert first.kernel == dynamic.kernel and second.kernel == constant.kernel


def test_kernel_hint_narrows():
    model = _gather_model(device="cpu")
    a = model.assertions[0]
    other = dataclasses.replace(a, kernel="cpp_fused_index_mul_1", location=Location("b.kernel.cpp", 40, 1))
    model.assertions = [a, other]
    text = (f"RuntimeError: {a.message}\n"
            "Exception raised from cpp_fused_index_mul_1 at /tmp/t/b.kernel.cpp:40 (most recent call first):\n")
    (c,) = explain_failure(_package(model), text).candidates
    assert c.kernel == "cpp_fused_index_mul_1"


def test_kernel_named_elsewhere_in_log_ranks_first():
    model = _gather_model()
    a = model.assertions[0]
    other = dataclasses.replace(a, kernel="triton_poi_fused_index_mul_1")
    model.assertions = [a, other]
    log = _cuda_log() + "\nwhile running triton_poi_fused_index_mul_1\n"
    first, second = explain_failure(_package(model), log).candidates
    assert first.kernel == "triton_poi_fused_index_mul_1"


def test_bound_not_zero_when_enforced_always():
    model = _gather_model()
    model.inputs[0].dims[0].enforced = "always"
    (c,) = explain_failure(_package(model), model.assertions[0].message).candidates
    assert c.key == "why.index.value" and c.cause == "a value of input 1 (idx) was outside [0, x.shape[0])"


def test_unnamed_inputs_use_aoti_names():
    (c,) = explain_failure(_package(_gather_model(named=False)), "index out of bounds: 0 <= tmp4 < ks0").candidates
    assert c.cause.startswith("input 0 dim 0 (arg0_1.size(0)) was empty")


def test_generic_device_assert_lists_cuda_assertions():
    result = explain_failure(_package(_gather_model()), "CUDA error: device-side assert triggered")
    assert [c.kernel for c in result.candidates] == ["triton_poi_fused_index_mul_0"]
    assert not explain_failure(_package(_gather_model("cpu")), "CUDA error: device-side assert triggered").matched


def test_one_sided_extent_bound_cause():
    """Positional embedding: `tmp2 < 512L` over arange(seq); the exported program allows seq <= 1000."""
    x = Input(0, "arg1_1", [Dim(0, "s77", min=2, enforced="env"), Dim(1, "s27", min=2, max=1000, enforced="env",
                                                                     declared_min=0, declared_max=1000),
                            Dim(2, value=16)], user_name="x")
    a = Assertion(kernel="cpp_fused_add_arange_embedding_0", message="index out of bounds: tmp2 < 512L",
                  location=Location("k.kernel.cpp", 27, 29), index_var="tmp2", lower=None, bound="512L",
                  bound_expr="512", bound_value=512, index_extent="s27", index_extent_sources=(DimRef(0, 1),))
    model = Model(name="model", device="cpu", inputs=[x], assertions=[a])
    (c,) = explain_failure(_package(model), "RuntimeError: index out of bounds: tmp2 < 512L").candidates
    assert c.key == "why.index.extent-dim"
    assert c.cause == ("input 0 dim 1 (x.shape[1]) was above 512 (the exported program allows up to 1000): "
                       "tmp2 ranges over [0, x.shape[1]) and must stay < 512")
    assert "Dim(..., max=512)" in c.fix


def test_duplicate_copies_dropped_when_the_line_is_known():
    """One check emitted twice in a kernel (vectorized body and tail): the log's line picks one."""
    model = _gather_model(device="cpu")
    a = model.assertions[0]
    model.assertions = [dataclasses.replace(a, kernel="cpp_fused_index_0", location=Location(p, line, 1))
                        for p, line in (("m/c1.kernel.cpp", 53), ("m/c1.kernel.cpp", 105))]
    text = (f"Error: {a.message}\n"
            "Exception raised from cpp_fused_index_0 at /tmp/t/c1.kernel.cpp:105 (most recent call first):\n")
    (c,) = explain_failure(_package(model), text).candidates
    assert c.location.line == 105
    # Without a line both copies stay candidates.
    assert len(explain_failure(_package(model), a.message).candidates) == 2


def test_index_from_several_inputs():
    model = _gather_model()
    model.assertions[0].index_sources = (0, 1)
    (c,) = explain_failure(_package(model), model.assertions[0].message).candidates
    # x is an index input itself: emptying it removes the index too, so the empty bound is not the
    # cause (the same answer as empty-index-bound: witness.empty_bound_choice).
    assert c.key == "why.index.values"
    assert "an index computed from the values of input 0 (x) and input 1 (idx) was outside [0, x.shape[0])" in c.cause


def test_explain_input_check_too_small():
    (c,) = explain_failure(_package(_gather_model("cpu")), _log("cpu-check-too-small.log")).candidates
    assert c.kind == "input-check" and c.key == "why.check.too-small" and c.bound_sources == (DimRef(0, 0),)
    assert c.cause.startswith("input 0 dim 0 (x.shape[0]) was 0, below the compiled range [2, inf); "
                              "the exported program declared [0, inf)")
    assert "x.shape[0] < 2" in c.fix
    assert c.location == Location(WRAPPER)


def test_explain_input_check_device_and_dtype():
    text = ("input_handles[1]: unmatched device type, expected: 11(cuda), but got: 0\n"
            "input_handles[0]: unmatched dtype, expected: 6(at::kFloat), but got: 7\n")
    device, dtype = explain_failure(_package(_gather_model()), text).candidates
    assert (device.key, dtype.key) == ("why.check.device", "why.check.dtype")
    assert device.cause == "input 1 (idx) is on cpu, but the package was compiled for cuda (AOTI_DEVICE_KEY=cuda)"
    assert "to('cuda')" in device.fix
    assert dtype.cause == "input 0 (x) is float64, but the package was compiled for float32"


def test_explain_input_check_out_of_range_input_is_no_match():
    text = "input_handles[5]: dim value is too small at 0, expected it to be >= 2, but got: 0"
    assert not explain_failure(_package(_gather_model()), text).matched


def test_explain_device_mismatch():
    text = ("RuntimeError: Expected all tensors to be on the same device, "
            "but found at least two devices, cuda:0 and cpu!")
    (c,) = explain_failure(_package(_gather_model()), text).candidates
    assert c.kind == "device-mismatch"
    assert c.key == "why.device"
    assert c.cause.startswith("model 'model' was compiled for cuda (AOTI_DEVICE_KEY=cuda) but a tensor it received "
                              "was on cpu")
    assert "AOTI_RUNTIME_CHECK_INPUTS=1" in c.fix


def test_failure_is_frozen():
    f = Failure(kind="index-assert", message="m", raw="m")
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.message = "x"  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------
# Integration with the real linked model (skipped when analyzer.app.api or ../shared is missing)


def _load(name: str):
    api = pytest.importorskip("analyzer.app.api")
    path = SHARED / "pt2" / name
    if not path.exists():
        pytest.skip(f"{path} is not present")
    return api.load(path, api.Options(input_names=("x", "idx")))


def test_integration_cuda_log_against_shared_package():
    result = explain_failure(_load("gather_dyn.cuda.pt2"), _cuda_log())
    c = result.candidates[0]
    assert (c.kernel, c.bound_sources, c.index_sources) == ("triton_poi_fused_index_mul_0", (DimRef(0, 0),), (1,))
    assert "x.shape[0]" in c.cause and c.location.path.endswith(".wrapper.cpp")


def test_integration_cpu_log_against_shared_package():
    # The shared CPU package (torch 2.11) asserts the same `0 <= tmp7 < ks1` as the 2.13 build the log came from.
    result = explain_failure(_load("gather_dyn.cpu.stripped.pt2"), _log("cpu-gather-empty.log"))
    c = result.candidates[0]
    assert (c.kernel, c.bound_sources, c.index_sources) == ("cpp_fused_index_mul_0", (DimRef(0, 0),), (1,))
    assert c.location.path.endswith(".kernel.cpp")


def test_integration_cli_exit_codes(tmp_path):
    pytest.importorskip("analyzer.app.api")
    cli = pytest.importorskip("analyzer.app.cli")
    from click.testing import CliRunner

    package = SHARED / "pt2" / "gather_dyn.cuda.pt2"
    if not package.exists():
        pytest.skip(f"{package} is not present")
    runner = CliRunner()
    hit = runner.invoke(cli.cli, ["why", str(package), "--log", str(_cuda_log_path()), "--format", "json"])
    assert hit.exit_code == 0, hit.output
    assert json.loads(hit.output)["candidates"][0]["kernel"] == "triton_poi_fused_index_mul_0"
    miss = runner.invoke(cli.cli, ["why", str(package), "index out of bounds: 0 <= tmp9 < ks3"])
    assert miss.exit_code == 1


def _cuda_log_path() -> Path:
    _cuda_log()
    return CUDA_LOG


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.parametrize("log", sorted((FIXTURES / "logs").glob("*.cpu.*.log")) if (FIXTURES / "logs").is_dir()
                         else [], ids=lambda p: p.name)
def test_integration_fixture_logs(log):
    """Every CPU probe log of the fixtures is matched to its own package, the logged kernel first."""
    api = pytest.importorskip("analyzer.app.api")
    name = log.name.split(".")[0]
    package = FIXTURES / f"{name}.cpu.stripped.pt2"
    ep = FIXTURES / f"{name}.ep.pt2"
    if not package.exists():
        pytest.skip(f"{package} is not present")
    options = api.Options(exported_program=str(ep)) if ep.exists() else api.Options()
    result = explain_failure(api.load(package, options), log.read_text())
    assert result.matched, render_text(result)
    (failure,) = result.failures
    top = result.candidates[0]
    assert top.kind == failure.kind
    if failure.kind == "index-assert":
        assert top.kernel == failure.kernel
        assert top.location.line == failure.line  # the package's kernel.cpp is the file that failed
    assert "arg" not in top.cause.replace("argument", "")  # user names from the exported program


# --- logs from the stress corpus (fixtures/stress/logs, real CPU runs with torch 2.13) ---

STRESS = FIXTURES / "stress"


def _stress_why(name, log):
    from analyzer.app import api

    pkg = STRESS / "pkgs" / f"{name}.cpu.stripped.pt2"
    path = STRESS / "logs" / log
    if not pkg.exists() or not path.exists():
        pytest.skip("stress corpus missing")
    return explain_failure(api.load(pkg), path.read_text())


def test_extern_call_failure_maps_to_the_launch_at_the_logged_line():
    result = _stress_why("embedding_bag", "embedding_bag.oob.log")
    best = result.candidates[0]
    assert best.kind == "extern-call" and best.kernel == "aoti_torch_cpu__embedding_bag"
    assert best.location.line == 865 and best.index_sources == (0, 1)


def test_lost_cpu_message_falls_back_to_cpu_assertions():
    result = _stress_why("nonzero_index", "nonzero_index.empty_table.log")
    assert result.matched
    assert result.candidates[0].kernel.startswith("cpp_fused_")
    assert "lost" in render_text(result)


def test_kernel_literal_check_message_is_routed():
    result = _stress_why("one_hot", "one_hot.oob.log")
    assert result.matched
    (best,) = [c for c in result.candidates if c.kind == "kernel-check"]
    assert best.message == "one_hot: Class values must be smaller than num_classes."
    assert best.location.line == 77 and best.kernel.startswith("cpp_fused_")


# ---------------------------------------------------------------------------------------------
# hostile logs: every pattern is linear in the line, parsing obeys a deadline

_BIG = 200_000
# One generated line per pattern: a long run that a backtracking pattern would rescan from every
# start (runs of spaces after a prefix, repeated prefixes without their ending).
HOSTILE_LINES = {
    "index-spaces": "index out of bounds: 0 <= tmp4 < ks0" + " " * _BIG + "x",
    "index-spaces-no-bound": "index out of bounds: 0 <= tmp4 < " + " " * _BIG,
    "index-repeated": "index out of bounds: " * (_BIG // 21),
    "index-var-repeated": "index out of bounds: a" * (_BIG // 22),
    "api-call-repeated": "aoti_torch_x(" * (_BIG // 13) + " API call failed",
    "api-call-tails": "aoti_torch_x(a" + ") API call failed at " * (_BIG // 21),
    "api-call-spaces": "aoti_torch_x(" + " " * _BIG + ") API call failed at f line",
    "device-assert-repeated": "f:1: g: block: [1,1,1], thread: [1,1,1] Assertion `" * (_BIG // 50),
    "device-assert-token": "Assertion `" + "a" * _BIG + ":1: " + "b" * _BIG,
    "device-assert-spaces": "Assertion `" + " " * _BIG,
    "raised-from": "index out of bounds: 0 <= t < 1\nException raised from " + "x at " * (_BIG // 5),
    "input-check-spaces": "input_handles[0]: unmatched device type, expected: " + " " * _BIG + "1",
    "input-check-digits": "input_handles[0]: dim value is too small at " + "1" * _BIG,
    "size-stride": "expected size " + "1" * _BIG + "==",
    "device-msg": "Expected out tensor to have device " + "a" * _BIG,
    "ansi": "\x1b[" + ";" * _BIG,
    "suffixes": "index out of bounds: 0 <= t < " + "1L " * (_BIG // 3),
    "symbol-digits": "Expected u" + "1" * _BIG + " but received ",
    "symbol-repeated": "Expected u0 >= 2 " * (_BIG // 17) + " but received x",
}


@pytest.mark.parametrize("name", sorted(HOSTILE_LINES))
def test_hostile_lines_parse_in_linear_time(name):
    import time

    text = HOSTILE_LINES[name]
    start = time.perf_counter()
    parse_failure(text)
    explain_failure(_package(_gather_model()), text)
    # A quadratic pattern takes minutes on 200 KB (the old index pattern: 22 s on 20 KB); linear
    # ones take milliseconds. The bound is generous so that a loaded machine does not fail it.
    assert time.perf_counter() - start < 5.0, name


def test_hostile_lines_still_parse_the_real_message():
    (f,) = parse_failure(HOSTILE_LINES["index-spaces"])
    assert (f.message, f.bound) == ("index out of bounds: 0 <= tmp4 < ks0" + " " * _BIG + "x",
                                    "ks0" + " " * _BIG + "x")
    (f,) = parse_failure("Error: aoti_torch_cpu_x(a, b) API call failed at /tmp/w.wrapper.cpp, line 865")
    assert (f.kind, f.kernel, f.line) == ("extern-call", "aoti_torch_cpu_x", 865)
    assert f.message == "aoti_torch_cpu_x(a, b) API call failed at /tmp/w.wrapper.cpp, line 865"


class _Deadline:
    def __init__(self, after: int) -> None:
        self.calls, self.after = 0, after

    def check(self, what: str) -> None:
        self.calls += 1
        if self.calls > self.after:
            raise TimeoutError(what)


def test_log_parsing_checks_the_deadline():
    text = "noise\n" * 10_000
    deadline = _Deadline(after=1_000_000)
    parse_failure(text, deadline)
    assert deadline.calls >= 10_000 // 256
    with pytest.raises(TimeoutError, match="log"):
        parse_failure(text, _Deadline(after=3))
    with pytest.raises(TimeoutError):
        explain_failure(_package(_gather_model()), text, _Deadline(after=3))
