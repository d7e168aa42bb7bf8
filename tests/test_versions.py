"""Packages built by every torch minor from 2.6 (fixtures/versions/<X.Y>/, see fixtures/README.md).

Per version: golden `inspect` and `check` JSON; the producing version the package reveals; every
assertion linked; the recorded run-time logs of the complete CPU packages (built and run with that
torch by fixtures/versions/build.py) route back, through `why`, to the very assertion or input check
the analyzer links. Plus: a package whose layout is not understood but which holds source is never
a clean pass (exit 2).
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from analyzer.app import api
from analyzer.explain import why
from analyzer.app.cli import cli
from analyzer.report.inspect import render_json

from analyzer.report.common import ordered
import test_rules as TR
from conftest import FIXTURES, GOLDEN, REPO, compare_golden

VERSIONS = FIXTURES / "versions"
VERSION_DIRS = sorted((d for d in VERSIONS.glob("2.*") if (d / "build.json").is_file()),
                      key=lambda d: tuple(int(p) for p in d.name.split(".")))
PACKAGES = [p for d in VERSION_DIRS for p in sorted(d.glob("*.cpu.stripped.pt2"))]


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name[:-len('.cpu.stripped.pt2')]}"


def _golden(kind: str, path: Path) -> Path:
    return GOLDEN / "versions" / kind / (_id(path).replace("/", "__") + ".json")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def test_every_minor_has_fixtures():
    assert [d.name for d in VERSION_DIRS][:2] == ["2.6", "2.7"], "fixtures/versions/ lost a torch version"
    for d in VERSION_DIRS:
        built = json.loads((d / "build.json").read_text())
        assert built["torch"].startswith(d.name + "."), (d, built["torch"])
        assert (d / "gather_dyn.cpu.stripped.pt2").exists(), d


@pytest.mark.parametrize("path", PACKAGES, ids=_id)
def test_inspect_golden(path):
    doc = json.loads(render_json(api.load(path)))
    doc["package"] = path.relative_to(REPO).as_posix()
    compare_golden(json.dumps(doc, indent=2) + "\n", _golden("inspect", path))


@pytest.mark.parametrize("path", PACKAGES, ids=_id)
def test_check_golden(path, monkeypatch):
    """`check --format json`, each sentence as its template and fields (tests/test_rules.py `tree`;
    the wording is in tests/golden/prose/): the command's output is the golden rendered."""
    monkeypatch.chdir(REPO)
    package = str(path.relative_to(REPO))
    result = CliRunner().invoke(cli, ["check", "--format", "json", "--select", "ALL", package])
    assert result.exit_code in (0, 1), result.output
    out = json.loads(result.output)
    docs = TR.golden_docs(ordered(api.lint(package, api.Options(select=("ALL",))).findings))
    assert [TR.rendered(doc) for doc in docs] == out["findings"]
    compare_golden(TR.dumps({**out, "findings": docs}), _golden("check", path))


@pytest.mark.parametrize("path", PACKAGES, ids=_id)
def test_linked_and_never_degraded(path):
    package = api.load(path)
    for model in package.models:
        assert model.wrapper_path, path
        for a in model.assertions:
            assert a.linked, (path, a.message, a.unlinked_reason)
    rules = {f.rule for f in api.lint([path]).findings}
    assert not rules & {"no-kernel-source", "unlinked-assertion", "unparsed-member"}, (path, rules)


@pytest.mark.parametrize("folder", VERSION_DIRS, ids=lambda d: d.name)
def test_producing_version(folder):
    """The version the layout reveals contains the version that built it."""
    made_by = api.load(folder / "gather_dyn.cpu.stripped.pt2").torch
    assert made_by is not None
    if made_by.startswith(">="):
        assert _version(folder.name) >= _version(made_by[2:]), made_by
    elif "-" in made_by:
        low, high = made_by.split("-")
        assert _version(low) <= _version(folder.name) <= _version(high), made_by
    else:
        assert made_by == folder.name
    expected = {"2.6": "2.6", "2.7": "2.7"}
    if folder.name in expected:
        assert made_by == expected[folder.name]


def _witnesses():
    for d in VERSION_DIRS:
        built = json.loads((d / "build.json").read_text())
        for w in built["witnesses"]:
            if w.get("log"):
                yield pytest.param(d, w, id=f"{d.name}/{w['name']}.{w['label']}")


@pytest.mark.parametrize("folder,witness", list(_witnesses()))
def test_recorded_runtime_failure_is_the_linked_one(folder, witness):
    """The assertion (or input check) a witness tripped at run time, in that torch's own log, is the
    one `why` routes it to, and it is the assertion the package's finding points at."""
    log = (folder / witness["log"]).read_text()
    pkg_path = folder / f"{witness['name']}.cpu.stripped.pt2"
    package = api.load(pkg_path)
    result = why.explain_failure(package, log)
    assert result.candidates, log[-500:]
    top = result.candidates[0]
    (model,) = package.models
    shown = re.search(r"^Error: (.*)$", log, re.M) or re.search(r"RuntimeError: (.*)$", log, re.M)
    assert shown is not None
    gated = any(d.enforced == "env" and not d.lower_unchecked for i in model.inputs for d in i.dims if d.min)
    if witness["env"] and gated:
        # AOTI_RUNTIME_CHECK_INPUTS=1 on a package whose lower bound is checked: the input check fires.
        assert top.kind == "input-check", top
        assert "too small" in shown.group(1)
        return
    # Otherwise the kernel's own assertion fires, with or without the variable (torch 2.6 records
    # no check at all; check_lowerbound=False packages never check the lower bound).
    assert top.kind == "index-assert", top
    (linked,) = {(a.location.path, a.location.line) for a in model.assertions
                 if a.linked and a.message == shown.group(1).strip()} or {None}
    assert linked is not None, (shown.group(1), [a.message for a in model.assertions])
    assert top.message == shown.group(1).strip()
    findings = [f for f in api.lint([pkg_path]).findings
                if f.rule in ("empty-index-bound", "index-exceeds-constant-bound")]
    assert any((f.location.path, f.location.line) == (top.location.path, top.location.line) for f in findings), \
        (top.location, [(f.rule, f.location) for f in findings])


def _nolb_packages():
    return [d / "gather_nolb.cpu.stripped.pt2" for d in VERSION_DIRS if (d / "gather_nolb.cpu.stripped.pt2").exists()]


@pytest.mark.parametrize("path", _nolb_packages(), ids=_id)
def test_check_lowerbound_false_is_never_checked(path):
    (model,) = api.load(path).models
    dim = model.inputs[0].dims[0]
    assert (dim.min, dim.lower_unchecked) == (2, "disabled")
    (finding,) = [f for f in api.lint([path]).findings if f.rule == "unenforced-lower-bound" and f.input == 0]
    assert "never checked" in finding.detail and "not even with AOTI_RUNTIME_CHECK_INPUTS=1" in finding.detail


def _rewrite(src: Path, dst: Path, edit) -> Path:
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = edit(info.filename, zin.read(info.filename))
            if data is not None:
                zout.writestr(info.filename, data)
    return dst


def _first(version: str, name: str = "gather_dyn") -> Path:
    path = VERSIONS / version / f"{name}.cpu.stripped.pt2"
    if not path.exists():
        pytest.skip(f"{path} not built")
    return path


@pytest.mark.parametrize("version", ["2.6", "2.7"])
def test_unknown_layout_holding_source_is_never_a_pass(version, tmp_path):
    """No member defines AOTInductorModel::run_impl any more (a renamed entry point): the package still
    holds C++ with an index assertion, so every command refuses it (exit 2, one line)."""
    pkg = _rewrite(_first(version), tmp_path / "renamed.pt2",
                   lambda n, d: d.replace(b"AOTInductorModel::run_impl", b"AOTInductorModel::run_v2"))
    for args in (["check"], ["inspect"], ["check", "--select", "ALL", "--fail-on", "error"]):
        result = CliRunner().invoke(cli, [*args, str(pkg)])
        assert result.exit_code == 2, (args, result.output)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and "layout is not understood" in lines[0], result.output


def test_check_text_outside_parsed_code_is_reported(tmp_path):
    """An assertion in a member no parser reads is an unlinked-assertion naming member and line."""
    src = _first("2.7")

    def add(name, data):
        return data

    pkg = _rewrite(src, tmp_path / "extra.pt2", add)
    with zipfile.ZipFile(pkg, "a") as z:
        z.writestr("data/aotinductor/model/extra.h",
                   '#pragma once\n\ninline void f(long i) {\n  AOTI_TORCH_CHECK(i < 4, "index out of bounds: i < 4");\n}\n')
    findings = api.lint([pkg]).findings
    unlinked = [f for f in findings if f.rule == "unlinked-assertion"]
    assert [(f.location.path, f.location.line) for f in unlinked] == [("data/aotinductor/model/extra.h", 4)]
    unparsed = [f for f in findings if f.rule == "unparsed-member"]
    assert [f.location.path for f in unparsed] == ["data/aotinductor/model/extra.h"]
    # why finds it too, rather than saying that nothing in the package produces the message
    result = CliRunner().invoke(cli, ["why", str(pkg), "index out of bounds: i < 4"])
    assert "extra.h" in result.output


def test_why_searches_every_text_member(tmp_path):
    src = _first("2.7")
    pkg = _rewrite(src, tmp_path / "note.pt2", lambda n, d: d)
    with zipfile.ZipFile(pkg, "a") as z:
        z.writestr("data/aotinductor/model/notes.txt", "raises: dim value is too odd at 3\n")
    result = CliRunner().invoke(cli, ["why", str(pkg), "input_handles[0]: dim value is too odd at 3"])
    assert result.exit_code == 1
    assert "nothing in the package" not in result.output


def test_no_kernel_source_claims_binaries_only_when_there_are_some(tmp_path):
    pkg = _rewrite(_first("2.7"), tmp_path / "nothing.pt2", lambda n, d: None if n.endswith(".cpp") else d)
    package = api.load(pkg)
    assert not [p for m in package.models for p in m.problems if p.kind == "no-source"]
    assert not [f for f in api.lint([pkg]).findings if f.rule == "no-kernel-source"]


# Every package of the two layouts that `models/model.json` replaced, one of each later minor.
EXPORTED = [(p, p.with_name(p.name.replace(".cpu.stripped.pt2", ".ep.pt2"))) for p in PACKAGES
            if p.with_name(p.name.replace(".cpu.stripped.pt2", ".ep.pt2")).is_file()
            and (p.parent.name in ("2.6", "2.7") or p.name.startswith("gather_dyn."))]


@pytest.mark.parametrize("package,program", EXPORTED, ids=[_id(p) for p, _ in EXPORTED])
def test_every_version_s_exported_program_names_the_inputs(package, program):
    """`torch.export.save` of every minor is read (2.6/2.7: `serialized_exported_program.json` at the
    top; later: `models/model.json`) and fits its package: findings speak of the user's inputs
    (`x.shape[0]`), never of `arg0_1` or "input 0 dim 0". A torch 2.6 package checks no input, so
    its inputs show only the dims the code reads: the exported program may have more."""
    result = CliRunner().invoke(cli, ["check", "--format", "json", "--exported-program", str(program), str(package)])
    assert result.exit_code in (0, 1), result.output
    findings = json.loads(result.output)["findings"]
    assert not [f for f in findings if "does not match the package" in (f.get("detail") or "")]
    for f in findings:
        assert not re.search(r"\binput \d+ dim \d+|\barg\d+_\d+", f["message"]), f["message"]
    assert api.lint([package], api.Options(exported_program=str(program))).packages[0].models[0].inputs[0].user_name


def test_a_file_that_is_not_an_exported_program_is_one_line_exit_2(tmp_path):
    package = _first("2.6")
    for given in (package, REPO / "README.md"):
        result = CliRunner().invoke(cli, ["check", "--exported-program", str(given), str(package)])
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and str(given) in lines[0] and "internal error" not in lines[0], result.output
