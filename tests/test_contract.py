"""`aoti-lint contract`: the enforced input contract and the generated `check_inputs` guard.

On every fixture package: each witness of each AOTI001-005/010/012 finding, run through the generated
guard, is rejected with a ValueError naming the finding's input dim; the inputs the fixture was
exported with and its "normal" run-time probe (fixtures/README.md, runtime.cpu.json) are accepted.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.app import api
from analyzer.explain import contract, guard
from analyzer.app.cli import cli
from analyzer.query.witness import parse_witness
from analyzer.rules import find_rule
from conftest import FIXTURES, require

GUARDED = ("AOTI001", "AOTI002", "AOTI003", "AOTI004", "AOTI005", "AOTI010", "AOTI012")


def _generate():
    spec = importlib.util.spec_from_file_location("fixtures_generate", FIXTURES / "generate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("fixtures_generate", module)
    spec.loader.exec_module(module)
    return module


GENERATE = _generate()
FIXTURE_DEFS = GENERATE._fixtures()


def _cases():
    for fix in FIXTURE_DEFS:
        for device in ("cpu", "cuda"):
            name = fix.stripped_name(device) if fix.strip else fix.package_name(device)
            path = FIXTURES / name
            if path.exists():
                yield pytest.param(fix, path, id=name)


class Shape:
    """Anything with `.shape` (and optionally `.dtype`/`.device`): what the guard accepts."""

    def __init__(self, shape, dtype=None, device=None):
        self.shape = tuple(shape)
        if dtype is not None:
            self.dtype = dtype
        if device is not None:
            self.device = device


def _guard(source: str):
    namespace: dict = {}
    exec(compile(source, "<guard>", "exec"), namespace)  # our own generated code, tested here
    return namespace["check_inputs"]


def _load(fix, path: Path):
    ep = FIXTURES / f"{fix.stem or fix.name}.ep.pt2"
    options = api.Options(exported_program=str(ep) if ep.exists() else None)
    result = api.lint([str(path)], options)
    contracts = [contract.build(str(path), m, result.findings) for p in result.packages for m in p.models]
    return result, contracts


@pytest.mark.parametrize("fix,path", list(_cases()))
def test_witnesses_rejected_examples_accepted(fix, path):
    result, contracts = _load(fix, path)
    check = _guard(guard.render_python(contracts))
    model = result.packages[0].models[0]
    guarded = [f for f in result.findings if f.code in GUARDED and f.witness
               and "read from the values" not in f.witness]
    for finding in guarded:
        if find_rule(finding.code).guarded:  # every such fix points at the guard
            assert "aoti-lint contract" in (finding.fix or ""), finding.code
        # Every witness, not only the primary one (AOTI002: below the minimum and 0; AOTI010: both ends).
        assert finding.witnesses[0] == finding.witness
        for witness in finding.witnesses:
            shapes = [shape for _, shape in parse_witness(witness)]
            assert len(shapes) == len(model.inputs), witness
            with pytest.raises(ValueError) as info:
                check(*[Shape(s) for s in shapes])
            shown = model.inputs[finding.input].dim_display(finding.dim)
            # A finding about several inputs' dims (AOTI002: one for the model) names any of them.
            inputs = {finding.input, *(d.input for d in finding.dims)}
            assert any(f"{model.inputs[i].display}.shape[" in str(info.value) for i in inputs), \
                (finding.code, shown, witness)

    import torch  # the examples are built with torch (CPU tensors)

    cuda = ".cuda" in path.name
    torch.manual_seed(0)
    runs = [fix.example()] + [p.make() for p in fix.probes if p.label == "normal"]
    for args, kwargs in runs:
        if cuda:  # same shapes and dtypes, on the device the package was built for
            args = [Shape(a.shape, a.dtype, "cuda:0") for a in args]
            kwargs = {k: Shape(v.shape, v.dtype, "cuda:0") for k, v in kwargs.items()}
        check(*args, **kwargs)


def test_guard_names_inputs_and_rejects_wrong_device_dtype():
    path = require(FIXTURES / "gather_dyn.cpu.stripped.pt2")
    fix = next(f for f in FIXTURE_DEFS if f.name == "gather_dyn")
    _, contracts = _load(fix, path)
    check = _guard(guard.render_python(contracts))
    with pytest.raises(ValueError, match=r"^x\.shape\[0\] = 0: .*AOTI001"):
        check(Shape((0, 8)), Shape((3,)))
    with pytest.raises(ValueError, match=r"^idx\.shape\[0\] = 1: .*>= 2"):
        check(Shape((4, 8)), idx=Shape((1,)))
    with pytest.raises(ValueError, match=r"x\.shape\[1\] = 9"):
        check(Shape((4, 9)), Shape((3,)))
    with pytest.raises(ValueError, match="must be int64"):
        check(Shape((4, 8), "torch.float32", "cpu"), Shape((3,), "torch.float32", "cpu"))
    with pytest.raises(ValueError, match="must be on cpu"):
        check(Shape((4, 8), "torch.float32", "cuda:0"), Shape((3,)))
    with pytest.raises(ValueError, match="expected 2 inputs"):
        check(Shape((4, 8)), Shape((3,)), Shape((3,)))
    with pytest.raises(ValueError, match="missing input 'idx'"):
        check(Shape((4, 8)))
    assert check(Shape((4, 8), "torch.float32", "cpu"), idx=Shape((3,), "torch.int64", "cpu")) is None


def test_contract_kinds_on_real_packages():
    """Each kind of unchecked failure the guard knows, on the fixture that has it."""
    kinds = {}
    for name in ("gather_dyn", "pos_embedding", "empty_reduce", "index_add"):
        fix = next(f for f in FIXTURE_DEFS if f.name == name)
        _, contracts = _load(fix, require(FIXTURES / fix.stripped_name("cpu")))
        kinds[name] = {c.kind for c in contracts[0].conditions}
    assert contract.Kind.EMPTY_INDEX in kinds["gather_dyn"]
    assert contract.Kind.TABLE in kinds["pos_embedding"]
    assert {contract.Kind.DIVISION, contract.Kind.REDUCTION} <= kinds["empty_reduce"]
    assert contract.Kind.RANGE in kinds["empty_reduce"]  # compiled for n <= 4096, unchecked


def test_cli_contract_text_json_and_emit(tmp_path):
    pkg = require(FIXTURES / "gather_dyn.cpu.stripped.pt2")
    ep = str(FIXTURES / "gather_dyn.ep.pt2")
    runner = CliRunner()
    text = runner.invoke(cli, ["contract", str(pkg), "--exported-program", ep])
    assert text.exit_code == 0, text.output
    assert "x.shape[0]  [2, inf)" in text.output
    assert "(checked: only with AOTI_RUNTIME_CHECK_INPUTS=1)" in text.output
    data = json.loads(runner.invoke(cli, ["contract", str(pkg), "--format", "json"]).output)
    assert data["schema"] == "aoti-lint.contract/1"
    dims = data["models"][0]["inputs"][0]["dims"]
    assert dims[0]["min"] == 2 and dims[0]["enforced"] == "env" and dims[1]["value"] == 8
    out = tmp_path / "guard.py"
    emitted = runner.invoke(cli, ["contract", str(pkg), "--exported-program", ep, "--emit", "python", "-o", str(out)])
    assert emitted.exit_code == 0, emitted.output
    check = _guard(out.read_text())
    with pytest.raises(ValueError, match=r"^x\.shape\[0\] = 0"):
        check(Shape((0, 8)), Shape((3,)))
    # Without the exported program the package's own names are used.
    plain = runner.invoke(cli, ["contract", str(pkg), "--emit", "python"]).output
    with pytest.raises(ValueError, match=r"^arg0_1\.shape\[0\] = 0"):
        _guard(plain)(Shape((0, 8)), Shape((3,)))
    missing = runner.invoke(cli, ["contract", str(tmp_path / "nope.pt2")])
    assert missing.exit_code == 2 and "Traceback" not in missing.output


def test_hostile_names_stay_data():
    """Names and messages from the package reach the generated module only through repr()."""
    from analyzer.core.model import Dim, Input, Model

    model = Model(name="m'); import os; ('", device="cpu", checks_gated=True)
    model.inputs = [Input(0, "arg0_1", [Dim(0, symbol="s0", min=2, enforced="env")], dtype="float32",
                          user_name="x\"\n__import__('os')")]
    source = guard.render_python([contract.build("p\"\"\"\nimport os", model)])
    compile(source, "<guard>", "exec")
    assert "import os\n" not in source.replace("import os;", "")
    check = _guard(source)
    with pytest.raises(ValueError, match="compiled for"):
        check(Shape((1,)))


REAL = FIXTURES / "real"


@pytest.mark.parametrize("pkg", sorted(REAL.glob("*.cpu.stripped.pt2")), ids=lambda p: p.name.split(".")[0])
def test_real_packages_every_witness_rejected(pkg):
    """fixtures/real (with their exported programs): every witness of every guarded finding, the
    extra ones too (AOTI002 at 0, AOTI010 above the compiled max), is rejected; healthy sizes pass."""
    from analyzer.query import witness as W

    ep = REAL / f"{pkg.name.split('.')[0]}.ep.pt2"
    result = api.lint([str(pkg)], api.Options(exported_program=str(ep)))
    (model,) = result.packages[0].models
    check = _guard(guard.render_python([contract.build(str(pkg), model, result.findings)]))
    witnesses = [w for f in result.findings if f.code in GUARDED for w in f.witnesses if "read from the values" not in w]
    for witness in witnesses:
        with pytest.raises(ValueError):
            check(*[Shape(shape) for _, shape in parse_witness(witness)])
    check(*[Shape(shape) for shape in W.witness_shapes(model, {})])
    assert witnesses


def test_each_launch_of_a_shared_check_gets_its_own_condition():
    """One position kernel launched for the encoder's length and again for the decoder's: each
    finding's condition is its own launch's assertion (the finding's subject), not the first record
    at the same kernel and line, so the decoder's witness is rejected too, in the decoder's names."""
    pkg = require(FIXTURES / "launches" / "enc_dec_pos.cpu.stripped.pt2")
    result = api.lint([str(pkg)], api.Options(exported_program=str(FIXTURES / "launches" / "enc_dec_pos.ep.pt2")))
    (model,) = result.packages[0].models
    check = _guard(guard.render_python([contract.build(str(pkg), model, result.findings)]))
    table = [f for f in result.findings if f.rule == "index-exceeds-constant-bound"]
    assert sorted(f.input for f in table) == [0, 1]
    for finding in table:
        with pytest.raises(ValueError) as info:
            check(*[Shape(shape) for _, shape in parse_witness(finding.witness)])
        shown = model.inputs[finding.input].display
        assert str(info.value).startswith(f"{shown}.shape[{finding.dim}] = ") and f"up to {shown}." in str(info.value)


def _two_models(first: str, second: str):
    """Two models of one package: `first` takes one input with dim 0 >= 2, `second` two inputs."""
    from analyzer.core.model import Dim, Input, Model

    one = Model(name=first, device="cpu", checks_gated=True)
    one.inputs = [Input(0, "arg0_1", [Dim(0, symbol="s0", min=2, enforced="env")], dtype="float32")]
    two = Model(name=second, device="cpu", checks_gated=True)
    two.inputs = [Input(0, "arg0_1", [Dim(0, value=4)], dtype="float32"),
                  Input(1, "arg1_1", [Dim(0, value=3)], dtype="float32")]
    return [contract.build("p.pt2", one), contract.build("p.pt2", two)]


def test_colliding_model_names_get_their_own_guards():
    """`m-1` and `m_1` would both be check_inputs_m_1: the second is suffixed, each checks its own."""
    source = guard.render_python(_two_models("m-1", "m_1"))
    namespace: dict = {}
    exec(compile(source, "<guard>", "exec"), namespace)
    functions = [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
    assert functions.count("check_inputs_m_1") == 1 and functions.count("check_inputs_m_1_2") == 1
    checks = namespace["CHECKS"]
    assert checks["m-1"] is namespace["check_inputs_m_1"] and checks["m_1"] is namespace["check_inputs_m_1_2"]
    assert namespace["check_inputs"] is checks["m-1"]
    with pytest.raises(ValueError, match="compiled for"):
        checks["m-1"](Shape((1,)))
    assert checks["m-1"](Shape((5,))) is None
    with pytest.raises(ValueError, match="expected 2 inputs|missing input"):
        checks["m_1"](Shape((5,)))
    assert checks["m_1"](Shape((4,)), Shape((3,))) is None
    # A third name that is the suffixed one's spelling moves on again.
    third = guard.render_python([*_two_models("m-1", "m_1"), _two_models("m_1_2", "x")[0]])
    names = [n.name for n in ast.parse(third).body if isinstance(n, ast.FunctionDef)]
    assert len(set(n for n in names if n.startswith("check_inputs_"))) == 3


def test_every_string_in_the_guard_is_a_literal():
    """No f-string, no name built from package text: each string constant is a plain literal, and
    a hostile model name does not add a statement to the module."""
    hostile = 'm"""\n__import__("os").system("x")\n#'
    source = guard.render_python(_two_models(hostile, "m\u2028\\x00\x1b[2J"))
    tree = ast.parse(source)
    assert not any(isinstance(n, ast.JoinedStr) for n in ast.walk(tree))
    assert not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "system"
                   for n in ast.walk(tree))
    top = [type(n).__name__ for n in tree.body]
    assert top.count("ImportFrom") == 1 and "Import" not in top
    namespace: dict = {}
    exec(compile(source, "<guard>", "exec"), namespace)
    assert set(namespace["CHECKS"]) == {hostile, "m\u2028\\x00\x1b[2J"}
