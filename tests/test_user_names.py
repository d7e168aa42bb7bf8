"""An exported program saved beside a fixture gives the user's input names in every output."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from analyzer.app.cli import cli

from conftest import FIXTURES, require

FORMATS = ["text", "concise", "json", "sarif", "github", "markdown"]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_check_uses_user_names(fmt, device):
    pkg = require(FIXTURES / f"gather_dyn.{device}.stripped.pt2")
    ep = require(FIXTURES / "gather_dyn.ep.pt2")
    result = CliRunner().invoke(cli, ["check", str(pkg), "--exported-program", str(ep), "--format", fmt,
                                      "--no-color"])
    # Every finding is an info (x empty with idx not is an input eager rejects too): exit 0.
    assert result.exit_code == 0, result.output
    out = result.output
    assert "x.shape[0]" in out
    # AOTI's own names survive only inside quoted source lines (`if (arg0_1_size[0] < 2)`).
    for line in out.splitlines():
        if re.search(r"\barg\d+_1\b", line):
            pytest.fail(f"AOTI input name in {fmt} output: {line}")


def test_check_json_witness_in_user_terms():
    pkg = require(FIXTURES / "gather_dyn.cpu.stripped.pt2")
    result = CliRunner().invoke(cli, ["check", str(pkg), "--exported-program", str(FIXTURES / "gather_dyn.ep.pt2"),
                                      "--format", "json", "--select", "empty-index-bound"])
    (finding,) = json.loads(result.output)["findings"]
    assert finding["witness"] == "x.shape = (0, 8), idx.shape = (3,)"


def test_keyword_only_input_names():
    pkg = require(FIXTURES / "kwonly.cpu.stripped.pt2")
    result = CliRunner().invoke(cli, ["inspect", str(pkg), "--exported-program", str(FIXTURES / "kwonly.ep.pt2"),
                                      "--format", "json"])
    inputs = json.loads(result.output)["models"][0]["inputs"]
    assert [i.get("user_name") for i in inputs] == ["x", "idx"]


def test_why_uses_user_names():
    pkg = require(FIXTURES / "gather_dyn.cpu.stripped.pt2")
    log = require(FIXTURES / "logs" / "gather_dyn.cpu.empty.log")
    result = CliRunner().invoke(cli, ["why", str(pkg), "--log", str(log), "--exported-program",
                                      str(FIXTURES / "gather_dyn.ep.pt2"), "--format", "json"])
    assert result.exit_code == 0, result.output
    best = json.loads(result.output)["candidates"][0]
    assert "x.shape[0]" in best["cause"]


def test_input_names_option_without_exported_program():
    pkg = require(FIXTURES / "gather_dyn.cpu.stripped.pt2")
    result = CliRunner().invoke(cli, ["check", str(pkg), "--input-names", "table,ids", "--format", "concise",
                                      "--select", "empty-index-bound"])
    assert "table.shape[0]" in result.output


def _merge(dst, parts):
    """Write one zip from (source zip, member filter, rename) parts."""
    import zipfile

    with zipfile.ZipFile(dst, "w") as out:
        for src, keep, rename in parts:
            with zipfile.ZipFile(src) as z:
                for name in z.namelist():
                    if keep(name):
                        out.writestr(rename(name), z.read(name))
    return dst


def test_exported_program_inside_the_package_is_used(tmp_path):
    pkg = require(FIXTURES / "gather_dyn.cpu.stripped.pt2")
    ep = require(FIXTURES / "gather_dyn.ep.pt2")
    both = _merge(tmp_path / "both.pt2", [
        (pkg, lambda n: True, lambda n: n),
        # torch.export.save's archive root differs; models/*.json moves under the package's root.
        (ep, lambda n: "/models/" in n and n.endswith(".json"),
         lambda n: "gather_dyn.cpu/models/" + n.rsplit("/models/", 1)[1]),
    ])
    result = CliRunner().invoke(cli, ["check", str(both), "--format", "concise", "--select", "empty-index-bound"])
    assert "x.shape[0]" in result.output, result.output


def test_package_with_two_models(tmp_path):
    from analyzer.app import api

    a = require(FIXTURES / "gather_dyn.cpu.stripped.pt2")
    b = require(FIXTURES / "pos_embedding.cpu.stripped.pt2")
    both = _merge(tmp_path / "two.pt2", [
        (a, lambda n: True, lambda n: n.replace("gather_dyn.cpu/", "pkg/").replace("/aotinductor/model/", "/aotinductor/gather/")),
        (b, lambda n: "/data/aotinductor/" in n,
         lambda n: n.replace("pos_embedding.cpu/", "pkg/").replace("/aotinductor/model/", "/aotinductor/posemb/")),
    ])
    package = api.load(both)
    models = {m.name: m for m in package.models}
    assert sorted(models) == ["gather", "posemb"]
    assert [(r.input, r.dim) for r in models["gather"].assertions[0].bound_sources] == [(0, 0)]
    assert models["posemb"].assertions[0].bound_value == 512
    rules = {(f.model, f.rule) for f in api.lint([both]).findings}
    assert ("gather", "empty-index-bound") in rules and ("posemb", "index-exceeds-constant-bound") in rules


def test_exported_program_given_as_the_package_gets_a_hint():
    result = CliRunner().invoke(cli, ["check", str(require(FIXTURES / "gather_dyn.ep.pt2"))])
    assert result.exit_code == 2
    assert "--exported-program" in result.output
    assert "Traceback" not in result.output


def test_exported_program_ties_dims_the_package_forgot():
    """repeat_interleave on CUDA (torch 2.11): x and repeats share Dim("n"), but the wrapper keeps no
    symbol for repeats' dim. Without the exported program the empty-x witness looks like a failure;
    with it, both dims are empty together and no index is ever computed."""
    from analyzer.app import api

    pkg = require(FIXTURES / "stress" / "pkgs" / "repeat_interleave.cuda.stripped.pt2")
    ep = require(FIXTURES / "stress" / "pkgs" / "repeat_interleave.ep.pt2")
    without = {f.rule for f in api.lint([pkg]).findings}
    with_ep = {f.rule for f in api.lint([pkg], api.Options(exported_program=str(ep))).findings}
    assert "empty-index-bound" in without
    assert "empty-index-bound" not in with_ep
    (model,) = api.load(pkg, api.Options(exported_program=str(ep))).models
    assert model.inputs[1].dims[0].symbol == model.inputs[0].dims[0].symbol == "s25"
