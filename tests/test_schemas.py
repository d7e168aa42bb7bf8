"""The shipped JSON Schemas (analyzer/schemas/) against every JSON output, on every committed package.

One lint of every package (in process, `-j 2`) feeds the check, inspect and contract documents and
the `why` of every committed log; the commands themselves (CliRunner) run on a few packages, with
the cases one lint does not reach: unreadable packages, accepted findings, `merge`, `--statistics`,
a message that matches nothing. Each output family also has to reach the schema's optional parts
(`also`, `source`, relations, every condition kind...), so a schema too loose to see them fails.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from analyzer import REPOSITORY
from analyzer.app import api, merge, output_schemas
from analyzer.explain import contract
from analyzer.report import diff
from analyzer.app.cli import cli
from analyzer.report import inspect as inspect_report
from analyzer.report import json as json_report
from analyzer.report import render
from analyzer.report import why as why_report
from analyzer.explain.why import explain_failure

from conftest import FIXTURES, REPO, SHARED, SHARED_PT2, every_package, require

jsonschema = pytest.importorskip("jsonschema")

SCHEMA_DIR = REPO / "analyzer" / "schemas"


def run(*args: Any):
    return CliRunner().invoke(cli, [str(a) for a in args], prog_name="aoti-lint")


@pytest.fixture(scope="module")
def validators() -> dict[str, Any]:
    return {name: jsonschema.Draft202012Validator(output_schemas.load(name)) for name in output_schemas.NAMES}


def _errors(validators: dict[str, Any], name: str, doc: Any) -> list[str]:
    return [f"{e.json_path}: {e.message[:300]}" for e in validators[name].iter_errors(doc)]


def _valid(validators: dict[str, Any], name: str, doc: Any, where: str = "") -> None:
    errors = _errors(validators, name, doc)
    assert not errors, f"{where}: {errors[:5]}"


# -- the schemas themselves -----------------------------------------------------------------------

@pytest.mark.parametrize("name", output_schemas.NAMES)
def test_schema_is_valid_draft_2020_12(name: str) -> None:
    schema = output_schemas.load(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == f"{REPOSITORY}/blob/main/analyzer/schemas/{name}.schema.json"
    assert output_schemas.text(name) == (SCHEMA_DIR / f"{name}.schema.json").read_text()


def test_every_schema_file_is_known() -> None:
    assert sorted(p.name for p in SCHEMA_DIR.iterdir()) == sorted(f"{n}.schema.json" for n in output_schemas.NAMES)
    with pytest.raises(ValueError, match="unknown schema"):
        output_schemas.load("../pyproject")


def test_schema_tags_are_the_emitters() -> None:
    """Each `schema` const is the tag the code writes (a version bump must change both)."""
    emitted = {json_report.SCHEMA, merge.JSON_SCHEMA, inspect_report.SCHEMA, why_report.SCHEMA,
               json.loads(contract.render_json([]))["schema"], diff.SCHEMA}
    assert emitted == set(output_schemas.TAGS)
    for tag, name in output_schemas.TAGS.items():
        schema = output_schemas.load(tag)
        assert schema["title"] == tag and schema["properties"]["schema"] == {"const": tag}, name


def test_readme_names_the_schemas() -> None:
    readme = (REPO / "README.md").read_text()
    for name in output_schemas.NAMES:
        assert f"{name}.schema.json" in readme, name


# -- validation can fail --------------------------------------------------------------------------

def _check_doc() -> dict:
    result = run("check", "--format", "json", "--select", "ALL", FIXTURES / "gather_dyn.cuda.stripped.pt2")
    return json.loads(result.stdout)


def test_validation_rejects_what_the_contract_excludes(validators: dict[str, Any]) -> None:
    doc = _check_doc()
    _valid(validators, "check", doc)
    assert doc["findings"]

    def broken(change) -> dict:
        bad = copy.deepcopy(doc)
        change(bad)
        return bad

    finding = 'findings'
    rejected = {
        "missing code": broken(lambda d: d[finding][0].pop("code")),
        "unknown key": broken(lambda d: d[finding][0].update(extra=1)),
        "severity": broken(lambda d: d[finding][0].update(severity="fatal")),
        "line type": broken(lambda d: d[finding][0]["location"].update(line="3")),
        "another version": broken(lambda d: d.update(schema="aoti-lint.check/2")),
        "empty errors": broken(lambda d: d.update(errors=[])),
        "empty also": broken(lambda d: d[finding][0].update(also=[])),
    }
    for what, bad in rejected.items():
        assert _errors(validators, "check", bad), what


def test_validation_rejects_bad_inspect_contract_why(validators: dict[str, Any]) -> None:
    path = FIXTURES / "gather_dyn.cpu.stripped.pt2"
    inspect_doc = json.loads(run("inspect", "--format", "json", path).stdout)
    contract_doc = json.loads(run("contract", "--format", "json", path).stdout)
    why_doc = json.loads(run("why", "--format", "json", path, "--log", FIXTURES / "logs" / "gather_dyn.cpu.oob.log").stdout)
    for name, doc in (("inspect", inspect_doc), ("contract", contract_doc), ("why", why_doc)):
        _valid(validators, name, doc, name)

    dims = [d for d in inspect_doc["models"][0]["inputs"][0]["dims"] if "symbol" in d]
    dims[0]["value"] = 3  # a dim is static or dynamic, never both
    assert _errors(validators, "inspect", inspect_doc)
    contract_doc["models"][0]["inputs"][0]["dims"][0]["enforced"] = "sometimes"
    assert _errors(validators, "contract", contract_doc)
    why_doc["candidates"][0]["kind"] = "guess"
    assert _errors(validators, "why", why_doc)


# -- every committed package, in process ----------------------------------------------------------

@pytest.fixture(scope="module")
def linted() -> api.Result:
    """Every committed package, each with its exported program where one is committed beside it
    (`NAME.ep.pt2`: user names and `source`), every rule selected."""
    packages, findings = [], []
    for path in every_package():
        ep = path.with_name(path.name.split(".")[0] + ".ep.pt2")
        options = api.Options(select=("ALL",), exported_program=str(ep) if ep.exists() else None)
        result = api.lint([str(path)], options)
        assert not result.errors and len(result.packages) == 1, path
        packages += result.packages
        findings += result.findings
    return api.Result(packages, findings)


def test_check_json_of_every_package(validators: dict[str, Any], linted: api.Result) -> None:
    doc = json.loads(render("json", linted.findings, packages=linted.packages, errors=linted.errors))
    _valid(validators, "check", doc)
    findings = doc["findings"]
    assert len(findings) > 300
    # The schema's optional and nullable parts are reached.
    assert any("also" in f for f in findings)
    assert any(f["source"] is not None for f in findings) and any(f["source"] is None for f in findings)
    assert any(f["kernel"] is None for f in findings) and any(f["symbol"] is None for f in findings)
    assert {f["severity"] for f in findings} == {"error", "warning", "info"}


def test_inspect_json_of_every_package(validators: dict[str, Any], linted: api.Result) -> None:
    seen: Counter[str] = Counter()
    for package in linted.packages:
        doc = json.loads(inspect_report.render_json(package))
        _valid(validators, "inspect", doc, package.path)
        for model in doc["models"]:
            for inp in model["inputs"]:
                for dim in inp["dims"]:
                    seen.update(k for k in ("value", "relation", "lower_unchecked", "declared_min") if k in dim)
            seen["assertion"] += len(model["assertions"])
            seen["sourced"] += sum(a["source"] is not None for a in model["assertions"])
            seen["unlinked"] += sum(not a["linked"] for a in model["assertions"])
            seen["symbol"] += len(model["symbols"])
            seen.update(k["kind"] for k in model["kernels"])
            seen["problem"] += len(model["problems"])
        seen["package problem"] += len(doc["problems"])
    # (no committed package has problems or unlinked assertions: test_degraded_packages)
    expected = {"value", "relation", "lower_unchecked", "declared_min", "assertion", "sourced", "symbol", "cpp",
                "triton"}
    assert expected <= {k for k, n in seen.items() if n}, seen


def test_contract_json_of_every_package(validators: dict[str, Any], linted: api.Result) -> None:
    by_package: dict[str, list] = {}
    for f in linted.findings:
        by_package.setdefault(f.package, []).append(f)
    kinds: Counter[str] = Counter()
    for package in linted.packages:
        contracts = [contract.build(package.path, m, by_package.get(package.path, [])) for m in package.models]
        doc = json.loads(contract.render_json(contracts))
        _valid(validators, "contract", doc, package.path)
        kinds.update(c["kind"] for m in doc["models"] for c in m["conditions"])
    every = set(output_schemas.load("contract")["properties"]["models"]["items"]["properties"]["conditions"]
                ["items"]["properties"]["kind"]["enum"])
    assert set(kinds) == every, kinds


def _log_package(log: Path, packages: dict[str, Any]) -> Any:
    """The CPU package a committed log was recorded from: `NAME.*.log` under `DIR/logs/` is
    `DIR/NAME.cpu.stripped.pt2` (or `DIR/pkgs/...`), else the one of that name elsewhere."""
    root = next(p for p in log.parents if p.name == "logs").parent
    name = f"{log.name.split('.')[0]}.cpu.stripped.pt2"
    for path in (root / name, root / "pkgs" / name):
        if str(path) in packages:
            return packages[str(path)]
    return next((pkg for path, pkg in packages.items() if Path(path).name == name), None)


def test_why_json_of_every_committed_log(validators: dict[str, Any], linted: api.Result) -> None:
    packages = {p.path: p for p in linted.packages}
    logs = sorted(FIXTURES.rglob("*.log"))
    assert len(logs) > 300
    kinds: Counter[str] = Counter()
    matched = 0
    for log in logs:
        package = _log_package(log, packages)
        assert package is not None, log
        doc = why_report.to_json(explain_failure(package, log.read_text(errors="replace")))
        _valid(validators, "why", json.loads(json.dumps(doc)), str(log))
        matched += doc["matched"]
        kinds.update(c["kind"] for c in doc["candidates"])
        kinds.update(f"failure {f['kind']}" for f in doc["failures"])
    assert matched > len(logs) * 3 // 4
    assert {"index-assert", "input-check", "extern-call", "kernel-check", "failure index-assert",
            "failure input-check"} <= set(kinds), kinds


# -- the commands, on a few packages --------------------------------------------------------------

def test_check_command_with_unreadable_and_accepted(validators: dict[str, Any], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURES / "gather_dyn.cuda.stripped.pt2", "ranker.pt2")
    (tmp_path / "broken.pt2").write_bytes(b"PK\x03\x04 not a zip")
    (tmp_path / "pyproject.toml").write_text(
        '[[tool.aoti-lint.accept]]\npackage = "ranker.pt2"\nrule = "empty-index-bound"\nreason = "on purpose"\n')
    result = run("check", "--format", "json", "ranker.pt2", "broken.pt2")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    _valid(validators, "check", doc)
    assert [e["package"] for e in doc["errors"]] == ["broken.pt2"]
    assert [f["accepted"] for f in doc["findings"] if "accepted" in f] == ["on purpose"]

    stats = run("check", "--statistics", "--format", "json", "ranker.pt2", "broken.pt2")
    rows = json.loads(stats.stdout)
    _valid(validators, "check-statistics", rows)
    assert sum(r["count"] for r in rows) == len(doc["findings"]) > 0
    assert _errors(validators, "check-statistics", [{**rows[0], "count": 0}])


def test_merge_output_is_a_check_report(validators: dict[str, Any], tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "broken.pt2").write_bytes(b"not a package")
    shards = []
    for n, args in enumerate([[FIXTURES / "gather_dyn.cuda.stripped.pt2", "broken.pt2"],
                              [FIXTURES / "small_transformer.cpu.stripped.pt2", "--exported-program",
                               FIXTURES / "small_transformer.ep.pt2"]]):
        out = tmp_path / f"shard{n}.json"
        run("check", "--format", "json", "--select", "ALL", "-o", out, *args)
        _valid(validators, "check", json.loads(out.read_text()), out.name)
        shards.append(out)
    result = run("merge", *shards)
    doc = json.loads(result.stdout)
    _valid(validators, "check", doc)
    assert doc["errors"] and {f["package"] for f in doc["findings"]} >= {str(FIXTURES / "gather_dyn.cuda.stripped.pt2")}


def _rewrite(src: Path, dst: Path, edit) -> Path:
    """A copy of a zip with each (name, bytes) passed through `edit` (None drops the member)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            data = edit(name, zin.read(name))
            if data is not None:
                zout.writestr(name, data)
    return dst


def test_degraded_packages(validators: dict[str, Any], tmp_path: Path) -> None:
    """Problems, unlinked assertions and unreadable metadata: parts no committed package has."""
    base = FIXTURES / "gather_dyn.cuda.stripped.pt2"
    no_source = _rewrite(base, tmp_path / "no_source.pt2", lambda n, d: None if n.endswith(".cpp") else d)
    unlaunched = _rewrite(base, tmp_path / "unlaunched.pt2", lambda n, d: re.sub(
        rb"\n\s*call_triton_\w+\([^\n]*", b"\n", d) if n.endswith(".wrapper.cpp") else d)
    bad_meta = _rewrite(base, tmp_path / "bad_meta.pt2",
                        lambda n, d: b"{not json" if n.endswith("_metadata.json") else d)
    problems, unlinked = 0, 0
    for path in (no_source, unlaunched, bad_meta):
        inspect_doc = json.loads(run("inspect", "--format", "json", path).stdout)
        _valid(validators, "inspect", inspect_doc, path.name)
        problems += sum(len(m["problems"]) for m in inspect_doc["models"]) + len(inspect_doc["problems"])
        unlinked += sum(not a["linked"] for m in inspect_doc["models"] for a in m["assertions"])
        _valid(validators, "check", json.loads(run("check", "--format", "json", "--select", "ALL", path).stdout))
        _valid(validators, "contract", json.loads(run("contract", "--format", "json", path).stdout))
    assert problems and unlinked


REPRESENTATIVE = [
    ("gather_dyn.cuda.stripped.pt2", None),
    ("small_transformer.cpu.stripped.pt2", "small_transformer.ep.pt2"),
    ("empty_reduce.cpu.stripped.pt2", "empty_reduce.ep.pt2"),
    ("real/bert.cpu.stripped.pt2", "real/bert.ep.pt2"),
]


@pytest.mark.parametrize("name,ep", REPRESENTATIVE, ids=[n for n, _ in REPRESENTATIVE])
def test_inspect_and_contract_commands(validators: dict[str, Any], name: str, ep: str | None) -> None:
    path = require(FIXTURES / name)
    extra = ["--exported-program", FIXTURES / ep] if ep else []
    for command, schema in (("inspect", "inspect"), ("contract", "contract")):
        result = run(command, "--format", "json", path, *extra)
        assert result.exit_code == 0, result.output
        _valid(validators, schema, json.loads(result.stdout), f"{command} {name}")


def _why_cases() -> list[tuple[Path, Path]]:
    cases = []
    for log in sorted((FIXTURES / "logs").glob("*.log")):
        cases.append((FIXTURES / f"{log.name.split('.')[0]}.cpu.stripped.pt2", log))
    for log in sorted((SHARED / "logs").glob("*.log")) if (SHARED / "logs").is_dir() else []:
        cases.append((SHARED_PT2 / "gather_dyn.cuda.pt2", log))
    return cases


@pytest.mark.parametrize("package,log", _why_cases(), ids=lambda p: p.name)
def test_why_command_on_committed_logs(validators: dict[str, Any], package: Path, log: Path) -> None:
    ep = package.with_name(package.name.split(".")[0] + ".ep.pt2")
    extra = ["--exported-program", ep] if ep.exists() else []
    result = run("why", "--format", "json", require(package), "--log", log, *extra)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    _valid(validators, "why", doc, log.name)
    assert doc["matched"]


def test_why_command_with_a_message(validators: dict[str, Any]) -> None:
    path = FIXTURES / "gather_dyn.cpu.stripped.pt2"
    for message in ("index out of bounds: 0 <= tmp4 < ks0", "something no package says",
                    "cpp_fused_gather_0"):  # a kernel name: found as text, not as a failure
        result = run("why", "--format", "json", path, message)
        assert result.exit_code in (0, 1), result.output
        _valid(validators, "why", json.loads(result.stdout), message)
