"""Primary locations (analyzer.app.locate): findings point at a file the user has, the member and its
line inside the package come second; SARIF and GitHub never name a hashed member."""

from __future__ import annotations

import json
import zipfile

from click.testing import CliRunner

from analyzer.app.cli import cli
from analyzer.app.locate import find_source_file, relative
from conftest import FIXTURES, REPO, require

PKG = "fixtures/gather_dyn.cpu.stripped.pt2"
EP = "fixtures/gather_dyn.ep.pt2"


def _check(*args: str) -> str:
    result = CliRunner().invoke(cli, ["check", *args])
    assert result.exit_code in (0, 1), result.output
    return result.output


def test_package_path_is_primary_member_secondary(monkeypatch):
    monkeypatch.chdir(REPO)
    require(REPO / PKG)
    doc = json.loads(_check(PKG, "--format", "json"))
    first = doc["findings"][0]
    assert first["location"] == {"path": PKG, "line": 0, "column": 0}
    assert first["member"].startswith("gather_dyn.cpu/data/aotinductor/model/") and first["member_line"] == 29
    text = _check(PKG)
    assert text.startswith(f"{PKG}: AOTI001")
    # The member inside the package is a reviewer's detail: in `--format full`.
    full = _check(PKG, "--format", "full")
    assert full.startswith(f"{PKG}: AOTI001")
    assert f"in {PKG}, model model, member gather_dyn.cpu/data/aotinductor/model/" in full


def test_model_source_line_is_primary_when_the_file_is_here(monkeypatch, tmp_path):
    """The exported program recorded /work/main/fixtures/generate.py; from the repository root its
    trailing part fixtures/generate.py exists, so the finding points at line 62 there."""
    monkeypatch.chdir(REPO)
    doc = json.loads(_check(PKG, "--exported-program", EP, "--format", "json"))
    located = {f["code"]: f["location"] for f in doc["findings"]}
    assert located["AOTI001"] == {"path": "fixtures/generate.py", "line": 62, "column": 0}
    assert located["AOTI002"]["path"] == PKG            # no kernel, no source line: the package
    github = _check(PKG, "--exported-program", EP, "--format", "github")
    assert "::notice file=fixtures/generate.py,line=62,title=AOTI001" in github   # an info: eager rejects it too
    # Elsewhere, the source file is found only through --source-root.
    monkeypatch.chdir(tmp_path)
    pkg, ep = str(REPO / PKG), str(REPO / EP)
    elsewhere = json.loads(_check(pkg, "--exported-program", ep, "--format", "json"))
    assert next(f for f in elsewhere["findings"] if f["code"] == "AOTI001")["location"]["path"] == pkg
    rooted = json.loads(_check(pkg, "--exported-program", ep, "--source-root", str(REPO), "--format", "json"))
    hit = next(f for f in rooted["findings"] if f["code"] == "AOTI001")["location"]
    assert hit == {"path": str(REPO / "fixtures" / "generate.py"), "line": 62, "column": 0}


def test_sarif_never_names_a_hashed_member(monkeypatch):
    monkeypatch.chdir(REPO)
    doc = json.loads(_check(PKG, "--exported-program", EP, "--format", "sarif"))
    results = doc["runs"][0]["results"]
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"] for r in results for loc in r["locations"]}
    assert uris == {PKG, "fixtures/generate.py"}
    for r in results:
        logical = r["locations"][0]["logicalLocations"]
        assert any(l["kind"] == "resource" and "/data/aotinductor/" in l["fullyQualifiedName"] for l in logical)
        assert r["properties"]["member_line"] > 0
        assert "/data/aotinductor/" not in json.dumps(r["partialFingerprints"])
    source_hit = next(r for r in results if r["ruleId"] == "AOTI001")
    region = source_hit["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == 62 and region["snippet"]["text"] == "return x[idx] * 2"


def test_extracted_folder_member_opens_from_here(monkeypatch, tmp_path):
    with zipfile.ZipFile(require(FIXTURES / "gather_dyn.cpu.stripped.pt2")) as zf:
        zf.extractall(tmp_path)
    folder = tmp_path / "gather_dyn.cpu"
    for cwd, given in ((tmp_path, "gather_dyn.cpu"), (folder, ".")):
        monkeypatch.chdir(cwd)
        doc = json.loads(_check(given, "--format", "json"))
        for f in doc["findings"]:
            path = f["location"]["path"]
            assert (cwd / path).is_file(), (given, path)
            assert f["location"]["line"] == f["member_line"]


def test_find_source_file_and_relative(tmp_path):
    (tmp_path / "pkg" / "models").mkdir(parents=True)
    (tmp_path / "pkg" / "models" / "m.py").write_text("x = 1\n")
    cwd = str(tmp_path)
    assert find_source_file("/build/machine/pkg/models/m.py", [cwd], cwd) == "pkg/models/m.py"
    assert find_source_file("C:\\work\\pkg\\models\\m.py", [cwd], cwd) == "pkg/models/m.py"
    assert find_source_file("/build/other.py", [cwd], cwd) is None
    assert find_source_file("../../etc/passwd", [cwd], cwd) is None
    assert relative(str(tmp_path / "a.pt2"), cwd) == "a.pt2"
    assert relative("/elsewhere/a.pt2", cwd) == "/elsewhere/a.pt2"


def test_installed_library_code_is_never_a_user_source(tmp_path):
    """A stack trace through transformers names site-packages: a checkout with its own `.venv` (or any
    virtualenv / site-packages folder under the root) must not turn that into a repository path."""
    site = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages" / "transformers"
    site.mkdir(parents=True)
    (tmp_path / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (site / "modeling_gpt2.py").write_text("x = 1\n")
    recorded = "/opt/venv/lib/python3.11/site-packages/transformers/modeling_gpt2.py"
    cwd = str(tmp_path)
    assert find_source_file(recorded, [cwd], cwd) is None
    assert find_source_file(str(site / "modeling_gpt2.py"), [cwd], cwd) is None
    env = tmp_path / "env" / "transformers"      # a virtualenv not named site-packages
    env.mkdir(parents=True)
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (env / "modeling_gpt2.py").write_text("x = 1\n")
    assert find_source_file("/x/env/transformers/modeling_gpt2.py", [cwd], cwd) is None
    (tmp_path / "transformers").mkdir()                  # the user's own copy still counts
    (tmp_path / "transformers" / "modeling_gpt2.py").write_text("x = 1\n")
    assert find_source_file(recorded, [cwd], cwd) == "transformers/modeling_gpt2.py"


def test_a_file_whose_recorded_line_differs_is_not_the_source(tmp_path):
    """A build elsewhere recorded `fixtures/real/generate.py:3`; a file here with that path but other
    code on line 3 is not the model's source (the comment would land on unrelated code)."""
    (tmp_path / "fixtures" / "real").mkdir(parents=True)
    (tmp_path / "fixtures" / "real" / "generate.py").write_text("a = 1\nb = 2\nc = 3\n")
    cwd, recorded = str(tmp_path), "/build/fixtures/real/generate.py"
    assert find_source_file(recorded, [cwd], cwd, 3, "  c = 3") == "fixtures/real/generate.py"
    assert find_source_file(recorded, [cwd], cwd, 3, "return self.enc(x)") is None
    assert find_source_file(recorded, [cwd], cwd, 9, "c = 3") is None      # past the end
    assert find_source_file(recorded, [cwd], cwd) == "fixtures/real/generate.py"  # nothing to compare


def test_stranger_stack_trace_does_not_land_on_this_repository(monkeypatch):
    """fixtures/stranger's nn_tfm was built from another checkout's fixtures/real/generate.py; this
    repository has a file of that name with other code at the recorded line: the package is primary."""
    monkeypatch.chdir(REPO)
    pkg, ep = "fixtures/stranger/cuda/nn_tfm.cuda.stripped.pt2", "fixtures/stranger/nn_tfm.ep.pt2"
    doc = json.loads(_check(pkg, "--exported-program", ep, "--format", "json"))
    reads = [f for f in doc["findings"] if f["code"] == "AOTI013"]
    assert reads and all(f["location"]["path"] == pkg for f in reads)
    assert all(f["source"]["file"].endswith("fixtures/real/generate.py") for f in reads)
