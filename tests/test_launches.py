"""A kernel launched more than once, linked at every launch; findings about several dims; compiled
ranges narrower than a declared or absent max (fixtures/launches, probed in its README)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from analyzer.app import api
from analyzer.query import witness as W
from analyzer.app.cli import cli
from analyzer.core.findings import Location, Severity
from analyzer.core.model import Dim, DimRef, Input, Model, Symbol
from conftest import FIXTURES, require

LAUNCHES = FIXTURES / "launches"
ENC_DEC = LAUNCHES / "enc_dec_pos.cpu.stripped.pt2"
NARROW = LAUNCHES / "narrow_max.cpu.stripped.pt2"
POS64 = LAUNCHES / "pos64_max4096.cpu.stripped.pt2"


def _lint(path, exported=None, select=("ALL",)):
    return api.lint(str(require(path)), api.Options(select=select, exported_program=exported)).findings


def test_every_launch_of_the_position_kernel_is_linked():
    """`pe(arange(S))` and `pe(arange(T))` run one kernel: its check is linked at both launches."""
    model = api.load(str(require(ENC_DEC))).models[0]
    kernel = "cpp_fused_add_arange_embedding_0"
    launches = [launch for launch in model.launches if launch.kernel == kernel]
    assert len(launches) == 2
    extents = {a.index_extent for a in model.assertions if a.kernel == kernel and a.bound_value == 64}
    src, tgt = (W.symbol_of(model, DimRef(i, 1)) for i in (0, 1))
    assert extents == {src, tgt}


@pytest.mark.parametrize("exported", [None, str(LAUNCHES / "enc_dec_pos.ep.pt2")])
def test_a_finding_for_each_launchs_dim(exported):
    found = [f for f in _lint(ENC_DEC, exported) if f.code == "AOTI003"]
    assert sorted((f.input, f.dim) for f in found) == [(0, 1), (1, 1)]
    # The encoder's length is compiled for [2, 4096] (64 rows), the decoder's unbounded; both checks
    # raise `RuntimeError` as eager's lookup raises IndexError (fixtures/launches/runtime.json S65, T65):
    # infos that say so.
    assert [f.severity for f in found] == [Severity.INFO, Severity.INFO]
    by_input = {f.input: f for f in found}
    assert by_input[1].witness.endswith("(3, 65, 16)") and "(3, 3, 16)" in by_input[1].witness
    assert "65" in by_input[0].witness.split(",")[1]
    # Each chain names its own launch of the kernel.
    launch_lines = {next(line for line in f.chain if "launch at" in line) for f in found}
    assert len(launch_lines) == 2
    # Different keys: a baseline of the encoder's finding still matches it, the decoder's is new.
    assert len({f.key for f in found}) == 2


def test_severity_follows_the_compiled_range():
    """64 rows under a range compiled (and declared) up to 4096: seq 65 is compiled for and fails,
    with the exported program too (inside the declared range); the check raises as eager's lookup
    does (runtime.json seq65), so an info that says so."""
    for exported in (None, str(LAUNCHES / "pos64_max4096.ep.pt2")):
        (f,) = [f for f in _lint(POS64, exported) if f.code == "AOTI003"]
        assert f.severity == Severity.INFO and f.message_key == "index-exceeds-constant-bound.bounded"
        assert f.message_fields["eager_rejects"]
        assert "65" in f.witness


def test_merged_lower_bound_finding_lists_every_dim_in_json():
    out = CliRunner().invoke(cli, ["check", str(require(ENC_DEC)), "--format", "json", "--select", "AOTI002"])
    assert out.exit_code == 0, out.output
    findings = json.loads(out.output)["findings"]
    (merged,) = findings   # one finding for the model, every input's dims in it
    assert (merged["input"], merged["dim"]) == (0, 0)
    assert [(d["input"], d["dim"], d["size"]) for d in merged["dims"]] == [(0, 0, 1), (0, 1, 1), (1, 1, 1)]
    assert all(d["witness"] in merged["witnesses"] for d in merged["dims"])


def test_compiled_max_without_a_declared_one():
    """`torch._check(n <= 15)` under Dim.DYNAMIC: without the exported program no max is declared
    (an info, witness 16); the exported program declares [2, 15] itself (nothing to say)."""
    (f,) = [f for f in _lint(NARROW) if f.code == "AOTI010"]
    assert (f.input, f.dim, f.severity) == (0, 0, Severity.INFO)
    assert f.message_key == "compiled-range-narrower-than-declared.undeclared-max"
    assert f.witness.startswith("arg0_1.shape = (16, 8)")
    assert not [f for f in _lint(NARROW, str(LAUNCHES / "narrow_max.ep.pt2")) if f.code == "AOTI010"]


def test_tied_dims_take_one_witness_size():
    """A dim with no size symbol of its own, tied by the package to another's (`assert_size_stride(
    arg1_1, {s0, ...})`), and its twin get the same size whichever of the two is assigned."""
    loc = Location("w.cpp", 1)
    model = Model(name="m", inputs=[
        Input(0, "arg0_1", [Dim(0, symbol="s0", min=2), Dim(1, value=8)]),
        Input(1, "arg1_1", [Dim(0, min=2, tied_expr="s0"), Dim(1, value=4)]),
    ])
    model.symbols["s0"] = Symbol("s0", "s0", DimRef(0, 0), loc)
    assert W.witness_shapes(model, {DimRef(1, 0): 1}) == [(1, 8), (1, 4)]
    assert W.witness_shapes(model, {DimRef(0, 0): 0}) == [(0, 8), (0, 4)]


def test_why_names_each_launchs_dim():
    """The decoder's overflow (tgt of 65 rows, probed: `RuntimeError: index out of bounds: tmp2 <
    64L`) is the same check at the same line as the encoder's: `why` offers both dims."""
    log = require(LAUNCHES / "logs" / "enc_dec_pos.T65.log")
    out = CliRunner().invoke(cli, ["why", str(require(ENC_DEC)), "--log", str(log), "--format", "json"])
    assert out.exit_code == 0, out.output
    causes = [c["cause"] for c in json.loads(out.output)["candidates"]]
    assert any("input 1 dim 1" in c for c in causes) and any("input 0 dim 1" in c for c in causes)
