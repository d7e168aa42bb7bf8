"""analyzer.read.exported: exported-program JSON read without torch, and applied to the linked model.

The `*.ep.json` files in tests/data are real `models/model.json` members written by
`torch.export.save` (torch 2.13.0); the tests wrap them in zips laid out as torch lays them out.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from analyzer.read import exported, sympytext
from analyzer.read.exported import DeclaredDim, ExportedProgram, ExportedInput, parse_exported_json, read_exported_program, read_exported_programs
from analyzer.read.exported_apply import apply
from analyzer.core.findings import Location
from analyzer.core.model import Dim, Input, Model

DATA = Path(__file__).resolve().parent / "data"
SHARED_PT2 = Path(__file__).resolve().parents[2] / "shared" / "pt2"


def _json(name: str) -> str:
    return (DATA / f"{name}.ep.json").read_text()


def _ep_zip(path: Path, jsons: dict[str, str], root: str = "ep", extra: dict[str, bytes] | None = None) -> Path:
    """A zip shaped like torch.export.save's: `<root>/models/<name>.json` plus payload members."""
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in jsons.items():
            zf.writestr(f"{root}/models/{name}.json", text)
        zf.writestr(f"{root}/archive_format", "pt2")
        zf.writestr(f"{root}/archive_version", "0")
        # Not a pickle at all: reading it (or unpickling it) would fail the test.
        zf.writestr(f"{root}/data/sample_inputs/model.pt", b"\x80\x04NOT A PICKLE")
        zf.writestr(f"{root}/data/weights/model_weights_config.json", "{}")
        for member, data in (extra or {}).items():
            zf.writestr(member, data)
    return path


# ---------------------------------------------------------------------------------------------
# Parsing real torch 2.13 JSON


def test_gather_dyn_names_shapes_and_ranges():
    ep = parse_exported_json(_json("gather_dyn"))
    assert [i.name for i in ep.inputs] == ["x", "idx"]
    x, idx = ep.inputs
    # torch 2.13 records Dim("n") as [0, int_oo]: min_val 0, max_val null.
    assert x.dims == (DeclaredDim(0, "s77", None, 0, None), DeclaredDim(1, None, 8, 8, 8))
    assert idx.dims == (DeclaredDim(0, "s95", None, 0, None),)
    assert (x.dtype, idx.dtype, x.device) == ("float32", "int64", "cpu")
    assert ep.torch_version == "2.13.0+cpu"


def test_parameters_buffers_skipped_and_explicit_range():
    # forward(self, x, *, idx) with a parameter and a buffer; idx: Dim("m", min=1, max=1000)
    ep = parse_exported_json(_json("gather_kwargs"))
    assert [i.name for i in ep.inputs] == ["x", "idx"]
    assert ep.inputs[1].dims == (DeclaredDim(0, "s95", None, 1, 1000),)


def test_keyword_and_constant_inputs_follow_aoti_order():
    # forward(self, x, *, idx, flag=True) called with idx and flag as keywords: AOTI's inputs_info_
    # holds x then idx (arg2_1, arg3_1 after the lifted parameter and buffer); flag is a constant.
    ep = parse_exported_json(_json("kwargs_const"))
    assert [i.name for i in ep.inputs] == ["x", "idx"]


def test_constant_user_input_left_out():
    ep = parse_exported_json(_json("constant_input"))
    assert [i.name for i in ep.inputs] == ["x"]
    assert ep.inputs[0].dims == (DeclaredDim(0, None, 3, 3, 3),)


def test_derived_dims_auto_symint_and_max():
    ep = parse_exported_json(_json("derived_dims"))
    by_name = {i.name: i for i in ep.inputs}
    assert [i.name for i in ep.inputs] == ["x", "y", "k", "z"]
    assert by_name["x"].dims[1] == DeclaredDim(1, "s27", None, 2, None)       # Dim.AUTO: min 2
    assert by_name["y"].dims[0] == DeclaredDim(0, "2*s77", None, 0, None)     # derived 2*n
    assert by_name["y"].dims[2] == DeclaredDim(2, "s48", None, 2, None)       # Dim.DYNAMIC
    assert by_name["k"].kind == "symint" and by_name["k"].dims == ()
    assert by_name["z"].dims[0] == DeclaredDim(0, "s68", None, 2, 2**40)      # explicit max kept


@pytest.mark.parametrize("expr, text", [
    ("Symbol('s77', positive=True, integer=True)", "s77"),
    ("Mul(Integer(2), Symbol('s77', positive=True, integer=True))", "2*s77"),
    ("Add(Symbol('s77', integer=True), Integer(-1))", "s77 - 1"),
    ("Add(Mul(Integer(2), Symbol('s1')), Integer(3))", "2*s1 + 3"),
    ("FloorDiv(Symbol('s0'), Integer(2))", "s0//2"),
    ("Mul(Integer(-1), Symbol('s0'))", "-s0"),
    ("s0", "s0"),                                   # older writers: plain str(expr)
    ("2*s0 + 1", "2*s0 + 1"),
])
def test_size_expression_text(expr, text):
    assert sympytext.expr_text(expr) == text


def test_range_derived_from_root_when_not_listed():
    doc = json.loads(_json("gather_dyn"))
    tv = doc["graph_module"]["graph"]["tensor_values"]["x"]
    tv["sizes"][0] = {"as_expr": {"expr_str": "Add(Mul(Integer(3), Symbol('s77')), Integer(1))", "hint": None}}
    doc["range_constraints"] = {"s77": {"min_val": 2, "max_val": 10}, "s95": {"min_val": 0, "max_val": None}}
    ep = parse_exported_json(json.dumps(doc))
    assert ep.inputs[0].dims[0] == DeclaredDim(0, "3*s77 + 1", None, 7, 31)


@pytest.mark.parametrize("max_val", [9223372036854775806, 2**63 - 1, "Infinity", None])
def test_unbounded_max_reads_as_none(max_val):
    doc = json.loads(_json("gather_dyn"))
    doc["range_constraints"]["s77"] = {"min_val": 2, "max_val": max_val}
    assert parse_exported_json(json.dumps(doc)).inputs[0].dims[0].max is None


# ---------------------------------------------------------------------------------------------
# Archives


def test_read_zip_with_root_folder(tmp_path):
    path = _ep_zip(tmp_path / "ep.pt2", {"model": _json("gather_dyn")})
    ep = read_exported_program(path)
    assert ep.path == str(path) and ep.member == "ep/models/model.json" and ep.name == "model"
    assert [i.name for i in ep.inputs] == ["x", "idx"]


def test_read_zip_picks_by_name(tmp_path):
    path = _ep_zip(tmp_path / "two.pt2", {"encoder": _json("gather_dyn"), "decoder": _json("constant_input")})
    assert sorted(read_exported_programs(path)) == ["decoder", "encoder"]
    assert [i.name for i in read_exported_program(path, "decoder").inputs] == ["x"]
    with pytest.raises(ValueError, match="several exported programs"):
        read_exported_program(path)
    with pytest.raises(ValueError, match="no exported program named 'nope'"):
        read_exported_program(path, "nope")


def test_package_with_aoti_model_and_exported_program(tmp_path):
    """A .pt2 holding both: the AOTI members are ignored here, models/*.json is read."""
    extra = {
        "pkg/data/aotinductor/model/abc.wrapper.cpp": b"// wrapper",
        "pkg/data/aotinductor/model/abc.wrapper_metadata.json": b'{"AOTI_DEVICE_KEY": "cpu"}',
        "pkg/data/aotinductor/model/abc.wrapper.so": b"\x7fELF",
    }
    path = _ep_zip(tmp_path / "both.pt2", {"model": _json("gather_dyn")}, root="pkg", extra=extra)
    assert [i.name for i in read_exported_program(path).inputs] == ["x", "idx"]
    # The same through archive.open_package, when that module is present.
    archive = pytest.importorskip("analyzer.read.archive")
    with archive.open_package(path) as pkg:
        assert pkg.exported_programs == ["pkg/models/model.json"]
        assert [i.name for i in read_exported_program(pkg).inputs] == ["x", "idx"]


def test_extracted_directory(tmp_path):
    models = tmp_path / "root" / "models"
    models.mkdir(parents=True)
    (models / "model.json").write_text(_json("gather_kwargs"))
    assert read_exported_program(tmp_path).inputs[1].dims[0].max == 1000


def test_errors_are_one_line_value_errors(tmp_path):
    from analyzer.core.budget import ArchiveError

    (tmp_path / "text.pt2").write_text("not a zip")
    cases = {
        tmp_path / "missing.pt2": "no such file",
        tmp_path / "text.pt2": "not a zip file",
        _ep_zip(tmp_path / "none.pt2", {}): "no exported program",
        _ep_zip(tmp_path / "bad.pt2", {"model": "{not json"}): "not valid JSON",
        _ep_zip(tmp_path / "layout.pt2", {"model": json.dumps({"graph_module": {}})}):
            "unknown exported-program layout",
        _ep_zip(tmp_path / "list.pt2", {"model": "[1, 2]"}): "unknown exported-program layout",
    }
    for path, needle in cases.items():
        with pytest.raises((ValueError, ArchiveError)) as info:  # archive problems: ArchiveError
            read_exported_program(path)
        assert needle in str(info.value) and "\n" not in str(info.value)
        assert str(info.value).startswith(str(path))


def test_unknown_input_spec_kind_is_refused():
    doc = json.loads(_json("gather_dyn"))
    doc["graph_module"]["signature"]["input_specs"].insert(0, {"future_kind": {"arg": {"name": "q"}}})
    with pytest.raises(ValueError, match="unknown input spec kind 'future_kind'"):
        parse_exported_json(json.dumps(doc))


def test_oversized_json_member_refused(tmp_path, monkeypatch):
    path = _ep_zip(tmp_path / "big.pt2", {"model": _json("gather_dyn")})
    monkeypatch.setattr(exported, "MAX_JSON_BYTES", 100)
    from analyzer.core.budget import ArchiveError

    with pytest.raises(ArchiveError, match="past the 100 bytes per-member limit"):
        read_exported_program(path)


def test_wrapper_metadata_json_is_not_an_exported_program():
    assert exported._model_name("pkg/data/aotinductor/model/abc.wrapper_metadata.json") is None
    assert exported._model_name("pkg/models/model.json") == "model"
    assert exported._model_name("models/model.json") == "model"
    assert exported._model_name("pkg/data/models/x.json") is None


# ---------------------------------------------------------------------------------------------
# apply()


def _gather_model() -> Model:
    """The linked model of gather_dyn as the package describes it (compiled for n, m >= 2)."""
    return Model(name="model", device="cuda", inputs=[
        Input(0, "arg0_1", [Dim(0, "s77", min=2, enforced="env"), Dim(1, value=8, enforced="env")],
              dtype="float32", device="cuda"),
        Input(1, "arg1_1", [Dim(0, "s95", min=2, max=2147483647, enforced="env")], dtype="int64", device="cuda"),
    ])


def test_apply_sets_names_and_declared_ranges():
    model = _gather_model()
    apply(model, parse_exported_json(_json("gather_kwargs")))
    x, idx = model.inputs
    assert (x.user_name, idx.user_name) == ("x", "idx")
    assert (x.dims[0].declared_min, x.dims[0].declared_max) == (0, None)
    assert (x.dims[1].declared_min, x.dims[1].declared_max) == (8, 8)
    assert (idx.dims[0].declared_min, idx.dims[0].declared_max) == (1, 1000)
    assert x.dim_display(0) == "x.shape[0]"
    assert model.problems == []


def test_apply_input_names_override_and_work_without_ep():
    model = _gather_model()
    apply(model, parse_exported_json(_json("gather_dyn")), ["table", ""])
    assert [i.user_name for i in model.inputs] == ["table", "idx"]
    model = _gather_model()
    apply(model, None, ["a", "b"])
    assert [i.user_name for i in model.inputs] == ["a", "b"]
    assert model.inputs[0].dims[0].declared_min is None
    with pytest.raises(ValueError, match="3 names given"):
        apply(_gather_model(), None, ["a", "b", "c"])


@pytest.mark.parametrize("fixture, needle", [
    ("constant_input", "1 user inputs (x) but the package has 2"),
    ("derived_dims", "4 user inputs"),
])
def test_apply_refuses_a_program_that_does_not_fit(fixture, needle):
    model = _gather_model()
    apply(model, parse_exported_json(_json(fixture)))
    assert [i.user_name for i in model.inputs] == [None, None]
    assert len(model.problems) == 1 and needle in model.problems[0].message


def test_apply_refuses_static_size_disagreement():
    model = _gather_model()
    model.inputs[0].dims[1].value = 16
    apply(model, parse_exported_json(_json("gather_dyn")))
    assert model.inputs[0].user_name is None
    assert "dim 1 is 8 in the exported program but 16 in the package" in model.problems[0].message


def test_apply_hand_built_program():
    ep = ExportedProgram(inputs=(ExportedInput("tokens", (DeclaredDim(0, "s0", None, 1, 64),)),), path="x")
    model = Model(name="m", inputs=[Input(0, "arg0_1", [Dim(0, "s0", min=2)])])
    apply(model, ep)
    assert model.inputs[0].dims[0].declared_max == 64


# ---------------------------------------------------------------------------------------------
# With torch / the rest of the analyzer (skipped when absent)


def test_real_torch_export_save(tmp_path):
    torch = pytest.importorskip("torch")
    from torch.export import Dim as TDim

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(8))

        def forward(self, x, *, idx):
            return x[idx] * self.w

    ep = torch.export.export(M(), (torch.randn(10, 8),), {"idx": torch.tensor([0, 1, 2])},
                             dynamic_shapes={"x": {0: TDim("n")}, "idx": {0: TDim("m", min=1, max=64)}})
    torch.export.save(ep, tmp_path / "m.pt2")
    got = read_exported_program(tmp_path / "m.pt2")
    assert [i.name for i in got.inputs] == ["x", "idx"]
    assert got.inputs[0].dims[0].min == 0 and got.inputs[0].dims[0].max is None
    assert (got.inputs[1].dims[0].min, got.inputs[1].dims[0].max) == (1, 64)


def test_api_load_applies_exported_program(tmp_path):
    api = pytest.importorskip("analyzer.app.api")
    package = SHARED_PT2 / "gather_dyn.cuda.pt2"
    if not package.exists():
        pytest.skip(f"{package} is not present")
    ep_path = _ep_zip(tmp_path / "gather_dyn.ep.pt2", {"model": _json("gather_dyn")})
    pkg = api.load(package, api.Options(exported_program=str(ep_path)))
    x, idx = pkg.models[0].inputs
    assert (x.user_name, idx.user_name) == ("x", "idx")
    assert (x.dims[0].min, x.dims[0].declared_min) == (2, 0)   # compiled >= 2, declared >= 0
    assert isinstance(pkg.models[0].assertions[0].location, Location)
