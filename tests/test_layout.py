"""The input layout contract read from packages (strides, dtype, who checks them), shown by inspect and
contract, checked by the emitted guard, and the deployment setting `--runtime-checks on|off`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import FIXTURES, REPO

from analyzer.app import api
from analyzer.explain import contract
from analyzer.app.cli import cli
from analyzer.core.findings import Severity
from analyzer.core.model import Enforcement

GATHER = FIXTURES / "gather_dyn.cpu.stripped.pt2"
GATHER_EP = FIXTURES / "gather_dyn.ep.pt2"
BERT = FIXTURES / "real" / "bert.cpu.stripped.pt2"
BERT_EP = FIXTURES / "real" / "bert.ep.pt2"
VERSIONS = FIXTURES / "versions"


def run(*args: str, cwd: Path | None = None):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _inputs(path: Path):
    return api.load(path).models[0].inputs


@pytest.mark.parametrize("version", sorted(p.name for p in VERSIONS.iterdir() if p.is_dir()))
def test_strides_in_every_layout(version):
    """torch 2.7 checks every input in __check_inputs_outputs, 2.8+ in check_input_N; 2.6 records none."""
    inputs = _inputs(VERSIONS / version / "gather_dyn.cpu.stripped.pt2")
    got = [(i.strides, i.dtype, i.layout_enforced) for i in inputs]
    if version == "2.6":
        assert got == [(None, None, Enforcement.NONE)] * 2
    else:
        assert got == [((8, 1), "float32", Enforcement.ENV), ((1,), "int64", Enforcement.ENV)]


def test_dynamic_stride_from_assert_size_stride():
    """BERT's input_ids [2, seq]: check_input_N checks only the static stride 1; run_impl's
    assert_size_stride(arg39_1, {2L, s27}, {s27, 1L}) gives the other, in size symbols."""
    (inp,) = _inputs(BERT)
    assert inp.strides == ("s27", 1) and inp.layout_enforced == Enforcement.ENV and inp.layout_location is not None


def test_strides_of_every_committed_cpu_real_model_are_read():
    for path in sorted((FIXTURES / "real").glob("*.cpu.stripped.pt2")):
        for model in api.load(path).models:
            for inp in model.inputs:
                assert inp.strides is not None and len(inp.strides) == len(inp.dims), (path, inp.name)
                assert all(s is not None for s in inp.strides), (path, inp.name, inp.strides)


def test_inspect_shows_strides():
    doc = json.loads(run("inspect", str(BERT), "--format", "json").stdout)
    (inp,) = doc["models"][0]["inputs"]
    assert inp["strides"] == ["s27", 1] and inp["layout_enforced"] == "env"
    text = run("inspect", str(GATHER)).stdout
    assert "layout: arg0_1 float32 strides (8, 1) (only with AOTI_RUNTIME_CHECK_INPUTS=1), arg1_1 int64 strides (1,)" in text


def test_contract_json_strides_are_additive():
    doc = json.loads(run("contract", str(BERT), "--exported-program", str(BERT_EP), "--format", "json").stdout)
    (inp,) = doc["models"][0]["inputs"]
    assert inp["strides"] == ["x.shape[1]", 1] and inp["layout_enforced"] == "env"
    assert {"index", "name", "user_name", "dtype", "device", "dtype_enforced", "dims"} <= set(inp)
    text = run("contract", str(GATHER), "--exported-program", str(GATHER_EP)).stdout
    assert "    strides (8, 1) (checked: only with AOTI_RUNTIME_CHECK_INPUTS=1)" in text
    assert "x with strides other than (8, 1) or not float32: the kernels index it as compiled" in text


class Fake:
    """A tensor stand-in: the guard reads `.shape`, `.dtype`, `.device` and `.stride()` only."""

    def __init__(self, shape, strides=None, dtype="torch.float32", device="cpu"):
        self.shape, self.dtype, self.device = tuple(shape), dtype, device
        if strides is not None:
            self.stride = lambda: tuple(strides)


def _guard(path: Path, tmp_path: Path, *extra: str):
    out = tmp_path / "guard.py"
    assert run("contract", str(path), *extra, "--emit", "python", "-o", str(out)).exit_code == 0
    namespace: dict = {}
    exec(compile(out.read_text(), str(out), "exec"), namespace)  # the generated module, as a user imports it
    return namespace["check_inputs"]


def test_guard_checks_static_strides_and_dtype(tmp_path):
    check = _guard(GATHER, tmp_path, "--exported-program", str(GATHER_EP))
    idx = Fake((3,), (1,), "torch.int64")
    check(Fake((6, 8), (8, 1)), idx)
    check(Fake((6, 8)), idx)                                 # no .stride(): not checked
    for bad, words in [(Fake((6, 8), (1, 6)), "must have strides (8, 1)"),       # x.t()
                       (Fake((6, 8), (16, 1)), "must have strides (8, 1)"),      # a row slice
                       (Fake((6, 8), (8, 1), "torch.float64"), "must be float32, got float64")]:
        with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
            check(bad, idx)
    with pytest.raises(ValueError, match="must have strides"):
        check(Fake((6, 8), (8, 1)), Fake((3,), (2,), "torch.int64"))          # idx[::2]


def test_guard_computes_dynamic_strides_from_the_shape(tmp_path):
    check = _guard(BERT, tmp_path, "--exported-program", str(BERT_EP))
    check(Fake((2, 5), (5, 1), "torch.int64"))
    with pytest.raises(ValueError, match=r"must have strides \(5, 1\)"):
        check(Fake((2, 5), (10, 1), "torch.int64"))  # a slice of a padded [2, 10] batch
    with pytest.raises(ValueError, match=r"got \(1, 2\)"):
        check(Fake((2, 5), (1, 2), "torch.int64"))


def test_layout_finding_by_setting():
    def layout(**options):
        found = api.lint(str(GATHER), api.Options(exported_program=str(GATHER_EP), **options)).findings
        return [f for f in found if f.code == "AOTI019"]

    (unset,) = layout()
    assert unset.severity == Severity.INFO and unset.input == 0
    assert unset.message == "`x`, `idx`: another layout or dtype (e.g. `x.t()`) returns wrong values unchecked"
    assert any("torch.randn(8, 3).t()" in w for w in unset.witnesses)
    assert any("torch.randn(3, 16)[:, :8]" in w for w in unset.witnesses)
    assert any("float64" in w for w in unset.witnesses)
    (off,) = layout(runtime_checks="off")
    assert off.severity == Severity.WARNING and "does not set AOTI_RUNTIME_CHECK_INPUTS" in off.detail
    assert layout(runtime_checks="on") == []


def test_channels_last_witness_for_a_4d_input():
    found = api.lint(str(FIXTURES / "real" / "resnetish.cpu.stripped.pt2"),
                     api.Options(exported_program=str(FIXTURES / "real" / "resnetish.ep.pt2"))).findings
    (f,) = [f for f in found if f.code == "AOTI019"]
    assert "channels_last" in f.witnesses[0] and "`x.to(memory_format=torch.channels_last)`" in f.message


def _codes(path: Path, **options) -> list[tuple[str, Severity]]:
    return sorted((f.code, f.severity) for f in api.lint(str(path), api.Options(**options)).findings)


def test_runtime_checks_on_keeps_only_what_fails_anyway():
    """With the variable set, sizes below the compiled minimum are rejected: the empty index bound
    (AOTI001, compiled for >= 2), AOTI002 and the gated dim equality (AOTI012) are gone."""
    assert [c for c, _ in _codes(GATHER)] == ["AOTI001", "AOTI002", "AOTI019"]
    assert _codes(GATHER, runtime_checks="on") == []
    index_put = FIXTURES / "real" / "index_put.cpu.stripped.pt2"
    assert "AOTI012" in [c for c, _ in _codes(index_put)]
    assert "AOTI012" not in [c for c, _ in _codes(index_put, runtime_checks="on")]
    # A constant table overflow inside the compiled range (seq unbounded) fails whatever is set.
    pos = FIXTURES / "pos_embedding.cpu.stripped.pt2"
    # (an info: the check raises as eager's own lookup does)
    assert ("AOTI003", Severity.INFO) in _codes(pos, runtime_checks="on")


def test_runtime_checks_off_reports_a_gated_max_at_its_consequence():
    """GPT-2: seq declared and compiled for <= 128, checked only with the variable, and 129 aborts the
    process (the check runs in an OpenMP region): a warning by default (the variable would stop 129),
    an error when production does not set it, none when it does."""
    gpt2, ep = FIXTURES / "real" / "gpt2.cpu.stripped.pt2", str(FIXTURES / "real" / "gpt2.ep.pt2")
    assert ("AOTI003", Severity.WARNING) in _codes(gpt2, exported_program=ep)
    assert ("AOTI003", Severity.ERROR) in _codes(gpt2, exported_program=ep, runtime_checks="off")
    assert "AOTI003" not in [c for c, _ in _codes(gpt2, exported_program=ep, runtime_checks="on")]


def test_the_setting_does_not_change_the_model_shown():
    """inspect and contract describe the package: `on` changes what the rules assume, not the model."""
    package = api.load(GATHER)
    from analyzer.rules import Context, all_rules, run_rules

    run_rules(package, all_rules(), Context(runtime_checks="on"))
    assert [d.enforced for d in package.models[0].inputs[0].dims] == [Enforcement.ENV, Enforcement.ENV]
    assert package.models[0].inputs[0].layout_enforced == Enforcement.ENV


def test_every_report_says_the_setting():
    for setting, args in (("unset", ()), ("on", ("--runtime-checks", "on")), ("off", ("--runtime-checks", "off"))):
        text = run("check", "--exit-zero", str(GATHER), *args).stdout
        assert text.rstrip().endswith(f"in 1 package (runtime checks: {setting}).") or \
            text.rstrip() == f"All checks passed (runtime checks: {setting}).", text[-200:]
        doc = json.loads(run("check", "--exit-zero", "--format", "json", str(GATHER), *args).stdout)
        assert doc["runtime_checks"] == setting
        sarif = json.loads(run("check", "--exit-zero", "--format", "sarif", str(GATHER), *args).stdout)
        assert sarif["runs"][0]["properties"]["runtime_checks"] == setting
        markdown = run("check", "--exit-zero", "--format", "markdown", str(GATHER), *args).stdout
        assert f"runtime checks: {setting})" in markdown


def test_sarif_with_the_setting_is_valid():
    schema = REPO.parent / "shared" / "schemas" / "sarif-schema-2.1.0.json"
    if not schema.is_file():
        pytest.skip("no SARIF schema")
    import jsonschema

    doc = json.loads(run("check", "--exit-zero", "--format", "sarif", "--runtime-checks", "off", str(GATHER)).stdout)
    jsonschema.validate(doc, json.loads(schema.read_text()))


def test_config_key_and_the_command_line_wins(tmp_path, monkeypatch):
    pkg = tmp_path / "m.pt2"
    pkg.write_bytes(GATHER.read_bytes())
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.aoti-lint]\nruntime-checks = "on"\n')
    result = run("check", "m.pt2")
    assert result.exit_code == 0 and result.stdout == "All checks passed (runtime checks: on).\n"
    result = run("check", "m.pt2", "--runtime-checks", "off", "--fail-on", "warning")   # AOTI019 a warning
    assert result.exit_code == 1 and result.stdout.rstrip().endswith("(runtime checks: off).")
    (tmp_path / "pyproject.toml").write_text("[tool.aoti-lint]\nruntime-checks = true\n")
    assert run("check", "m.pt2").exit_code == 0
    (tmp_path / "pyproject.toml").write_text('[tool.aoti-lint]\nruntime-checks = "sometimes"\n')
    result = CliRunner().invoke(cli, ["check", "m.pt2"])
    assert result.exit_code == 2 and "runtime-checks must be on or off" in result.stderr
    result = CliRunner().invoke(cli, ["check", "m.pt2", "--runtime-checks", "maybe"])
    assert result.exit_code == 2


def test_help_documents_the_option():
    assert "--runtime-checks [on|off]" in run("check", "--help").stdout
    assert "--runtime-checks [on|off]" in run("report", "--help").stdout


def test_merge_keeps_the_setting(tmp_path):
    paths = []
    for name, setting in (("a", "on"), ("b", "on"), ("c", "off")):
        out = tmp_path / f"{name}.json"
        run("check", "--exit-zero", "--format", "json", "--runtime-checks", setting, str(GATHER), "-o", str(out))
        paths.append(str(out))
    assert json.loads(run("merge", "--exit-zero", *paths[:2]).stdout)["runtime_checks"] == "on"
    assert json.loads(run("merge", "--exit-zero", *paths).stdout)["runtime_checks"] == "mixed"


def test_contract_object_carries_strides():
    model = api.load(BERT).models[0]
    (inp,) = contract.build(str(BERT), model).inputs
    assert inp.strides == ("s27", 1) and inp.layout_enforced == Enforcement.ENV
