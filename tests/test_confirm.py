"""`aoti-lint confirm` runs the package (fresh CPU builds of tests/torch_models.py, with their
exported programs as the eager reference) and gives each finding a verdict from what happened."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from analyzer.app import output_schemas
from analyzer.app.cli import cli

from conftest import FIXTURES

CHECK_SCHEMA = jsonschema.Draft202012Validator(output_schemas.load("check"))


_RUNS: dict[tuple[str, ...], tuple[int, dict]] = {}


def confirm(*args: str) -> tuple[int, dict]:
    """One `confirm --format json` run per argument list in the session: each probe is a child
    process importing torch, seconds apiece."""
    if args not in _RUNS:
        result = CliRunner().invoke(cli, ["confirm", "--format", "json", *args])
        assert "Traceback" not in result.output, result.output
        doc = json.loads(result.stdout)
        CHECK_SCHEMA.validate(doc)
        _RUNS[args] = (result.exit_code, doc)
    return _RUNS[args]


def _ep(path: str) -> str:
    return str(Path(path).with_name(Path(path).name.replace(".cpu.pt2", ".ep.pt2")))


def verdicts(doc: dict) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in doc["findings"]:
        out.setdefault(f["code"], []).append(f["confirmation"]["verdict"])
    return out


@pytest.mark.torch
def test_a_table_overflow_that_eager_rejects_too(fresh_cpu_package) -> None:
    """pos_embedding at seq 513: torch 2.13's CPU package raises its own `index out of bounds`
    error, and eager raises IndexError on the same input: no worse than eager, so not confirmed
    as a failure of the package (an abort would be: the process dies where eager raises)."""
    path = fresh_cpu_package("pos_embedding")
    code, doc = confirm(path, "--exported-program", _ep(path))
    (overflow,) = [f for f in doc["findings"] if f["code"] == "AOTI003"]
    c = overflow["confirmation"]
    assert c["probe"] == "x.shape = (2, 513, 16)"
    assert c["outcome"]["message"].endswith("index out of bounds: tmp2 < 512L"), c
    assert c["outcome"]["status"] == "invalid-input" and "IndexError" in c["outcome"]["eager"], c
    assert c["verdict"] == "not-reproduced" and "eager rejects" in c["reason"]
    # The valid base shape runs like eager; the dims probed at 0 and 1 explain nothing new.
    (pkg,) = doc["confirm"]["packages"]
    assert pkg["probes"][0]["probe"] == "valid sizes" and pkg["probes"][0]["outcome"]["status"] == "ran"
    assert pkg["unexplained"] == []
    assert code == 0


@pytest.mark.torch
def test_an_empty_reduction_returns_where_eager_raises(fresh_cpu_package) -> None:
    path = fresh_cpu_package("empty_reduce")
    code, doc = confirm(path, "--exported-program", _ep(path))
    found = verdicts(doc)
    assert found["AOTI005"] == ["confirmed"] and found["AOTI004"] == ["confirmed"], found
    reduction = next(f for f in doc["findings"] if f["code"] == "AOTI005")["confirmation"]["outcome"]
    assert reduction["what"].startswith("returns NaN/inf where eager raises"), reduction
    assert code == 0  # both are warnings: below the default --fail-on error


@pytest.mark.torch
def test_an_input_eager_rejects_too_is_not_a_confirmation(fresh_cpu_package) -> None:
    """gather_dyn at x.shape[0] = 0 with index 0: eager raises IndexError as the package raises its
    own error, so the witness is not a failure of the package: such a finding overstates its severity."""
    path = fresh_cpu_package("gather_dyn")
    code, doc = confirm(path, "--exported-program", _ep(path))
    (empty,) = [f for f in doc["findings"] if f["code"] == "AOTI001"]
    outcome = empty["confirmation"]["outcome"]
    assert empty["confirmation"]["verdict"] == "not-reproduced"
    assert outcome["status"] == "invalid-input" and "IndexError" in outcome["eager"]
    assert set(verdicts(doc)["AOTI002"]) == {"not-reproduced"}  # sizes 1 run like eager
    assert code == 0


@pytest.mark.torch
def test_without_a_reference_errors_and_nan_still_confirm(fresh_cpu_package) -> None:
    path = fresh_cpu_package("pos_embedding")
    _, doc = confirm(path)
    (overflow,) = [f for f in doc["findings"] if f["code"] == "AOTI003"]
    assert overflow["confirmation"]["verdict"] == "confirmed"  # an error, and nothing to compare with
    assert overflow["confirmation"]["outcome"]["eager"] is None
    assert doc["confirm"]["packages"][0]["exported_program"] is None
    path = fresh_cpu_package("empty_reduce")
    _, doc = confirm(path)
    assert verdicts(doc)["AOTI004"] == ["confirmed"]  # NaN


@pytest.mark.torch
def test_text_says_it_ran_the_package(fresh_cpu_package) -> None:
    path = fresh_cpu_package("empty_reduce")
    result = CliRunner().invoke(cli, ["confirm", path, "--exported-program", _ep(path), "--fail-on", "warning"])
    assert result.exit_code == 1
    assert result.stdout.startswith("aoti-lint confirm (this RUNS the package")
    assert "  confirmed: returns NaN/inf where eager raises" in result.stdout


def _fake_child(tmp_path: Path, body: str) -> str:
    """A stand-in for `python -m analyzer.explain.confirm_child SPEC` (no torch): prints probe lines, then dies."""
    fake = tmp_path / "fake_python"
    fake.write_text("#!/usr/bin/env python3\nimport os, signal, sys\nM = 'AOTI-LINT-PROBE '\n" + body)
    fake.chmod(0o755)
    return str(fake)


# What a torch 2.13 CPU package printed when an int32 index reached its embedding (transformers
# OLMo, 2 layers): the message is on the `what():` line; the frames after it name c10::Error too.
_ABORT_STDERR = (
    "terminate called after throwing an instance of 'c10::Error'\n"
    "  what():  index out of bounds: 0 <= tmp2 < 200L\n"
    "Exception raised from cpp_fused_embedding_1 at /tmp/torchinductor_root/ck/ck6a.kernel.cpp:191 "
    "(most recent call first):\n"
    "frame #0: c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, "
    "std::allocator<char> >) + 0x9d (0x7f6049b6fb8d in /venv/lib/python3.11/site-packages/torch/lib/libc10.so)\n"
    "frame #1: c10::detail::torchCheckFail(char const*, char const*, unsigned int, char const*) + 0x69 "
    "(0x7f6049afc4ab in /venv/lib/python3.11/site-packages/torch/lib/libc10.so)\n"
    "frame #2: <unknown function> + 0x5cbc874 (0x7f60392bc874 in /venv/lib/python3.11/site-packages/torch/lib/"
    "libtorch_cpu.so)\n")


@pytest.mark.parametrize(("body", "status", "what"), [
    (f"sys.stderr.write({_ABORT_STDERR!r}); sys.stderr.flush()\n"
     "os.kill(os.getpid(), signal.SIGABRT)\n", "failed", "SIGABRT (index out of bounds: 0 <= tmp2 < 200L)"),
    ("print(M + '{\"kind\": \"eager\", \"ok\": false, \"error\": \"IndexError: x\"}', flush=True)\n"
     "print('index out of bounds: 0 <= tmp4 < ks0', file=sys.stderr, flush=True)\n"
     "os.kill(os.getpid(), signal.SIGABRT)\n", "failed", "SIGABRT (index out of bounds: 0 <= tmp4 < ks0)"),
    ("print(M + '{\"kind\": \"eager\", \"ok\": true, \"shapes\": [[3]], \"nan\": 0, \"inf\": 0}')\n"
     "print(M + '{\"kind\": \"package\", \"ok\": true, \"shapes\": [[3]], \"nan\": 0, \"inf\": 0, "
     "\"shape_mismatch\": false, \"max_abs_diff\": 10.5, \"close\": false}')\n",
     "failed", "returns values off by up to 10.5 from eager"),
    ("print(M + '{\"kind\": \"eager\", \"ok\": true, \"shapes\": [[3]], \"nan\": 0, \"inf\": 0}')\n"
     "print(M + '{\"kind\": \"package\", \"ok\": true, \"shapes\": [[3]], \"nan\": 0, \"inf\": 0, "
     "\"shape_mismatch\": false, \"max_abs_diff\": 0.0, \"close\": true}')\n", "ran", "ran like eager"),
    ("import time\ntime.sleep(30)\n", "failed", "no answer within 2 s (a hang)"),
])
def test_outcomes_are_read_from_the_child(tmp_path, body: str, status: str, what: str) -> None:
    """A signal is a failure whatever eager does (the process dies where eager raises); values are
    compared with the reference; a hang is killed at the probe's time limit."""
    from analyzer.app import api
    from analyzer.explain import confirm as confirm_module

    (model,) = api.load(str(FIXTURES / "gather_dyn.cpu.stripped.pt2")).models
    probe = confirm_module.dim_probes(model)[0]
    outcome = confirm_module.run_probe("pkg.pt2", model, probe, "ep.pt2", python=_fake_child(tmp_path, body),
                                       timeout_s=2)
    assert (outcome.status.value, outcome.what) == (status, what)


@pytest.mark.torch
def test_a_stripped_package_is_not_run() -> None:
    code, doc = confirm(str(FIXTURES / "gather_dyn.cpu.stripped.pt2"))
    assert {f["confirmation"]["verdict"] for f in doc["findings"]} == {"not-run"}
    assert "stripped" in doc["confirm"]["packages"][0]["not_run"]
    assert code == 0


@pytest.mark.parametrize("pair", [True, False])
def test_the_exported_program_beside_the_package_is_the_reference(tmp_path, pair: bool) -> None:
    """`X.ep.pt2` beside `X.pt2` is the eager reference, as `check` pairs it (unless --no-pair)."""
    import shutil

    package, ep = tmp_path / "model.pt2", tmp_path / "model.ep.pt2"
    shutil.copy(FIXTURES / "gather_dyn.cpu.stripped.pt2", package)
    shutil.copy(FIXTURES / "gather_dyn.ep.pt2", ep)
    fake = tmp_path / "python"  # answers the torch probe; a stripped package is never run
    fake.write_text("#!/bin/sh\necho '{\"cpu\": true, \"cuda\": false}'\n")
    fake.chmod(0o755)
    args = ["confirm", "--format", "json", "--python", str(fake), str(package)]
    result = CliRunner().invoke(cli, args if pair else [*args, "--no-pair"])
    (report,) = json.loads(result.stdout)["confirm"]["packages"]
    assert report["exported_program"] == (str(ep) if pair else None), report
    text = CliRunner().invoke(cli, args[:1] + args[3:] if pair else [*args[:1], *args[3:], "--no-pair"]).stdout
    assert text.splitlines()[0].endswith(f"eager reference: {ep}" if pair else "eager reference: none (crashes "
                                         "and NaN only, no value comparison)"), text


def test_no_torch_is_one_line_and_exit_2(tmp_path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named torch' >&2\nexit 1\n")
    fake.chmod(0o755)
    result = CliRunner().invoke(cli, ["confirm", "--python", str(fake), str(FIXTURES / "gather_dyn.cpu.stripped.pt2")])
    assert result.exit_code == 2
    assert "needs torch" in result.output and "aoti-lint[confirm]" in result.output


def test_torch_that_does_not_import_says_why(tmp_path) -> None:
    # e.g. a timeit.py in the working folder shadows the standard library's while torch imports
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'ImportError: cannot import name api from analyzer\x1b[31m' >&2\nexit 1\n")
    fake.chmod(0o755)
    result = CliRunner().invoke(cli, ["confirm", "--python", str(fake), str(FIXTURES / "gather_dyn.cpu.stripped.pt2")])
    assert result.exit_code == 2 and "could not import torch" in result.output
    assert "cannot import name api" in result.output and "\x1b" not in result.output
    assert "pip install" not in result.output


def test_check_never_runs_anything(monkeypatch) -> None:
    """`check` and the other static commands do not import the probe runner or torch."""
    import subprocess
    import sys

    code = ("import sys; sys.modules['torch'] = None\n"
            "from analyzer.app.cli import main\n"
            "try:\n    main(['check', '--exit-zero', %r])\nexcept SystemExit: pass\n"
            "assert 'analyzer.explain.confirm' not in sys.modules and 'analyzer.explain.confirm_child' not in sys.modules\n"
            % str(FIXTURES / "gather_dyn.cpu.stripped.pt2"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ})
    assert out.returncode == 0, out.stderr


def test_merge_gates_on_confirmed_findings_only(tmp_path) -> None:
    """A saved confirm report gates a later job: `merge --confirmed-only` counts confirmed findings."""
    from analyzer.report import render
    from analyzer.app import api

    # CLIP's text encoder: an empty sequence aborts the index (an error; gather_dyn's is an info now).
    findings = api.lint([str(FIXTURES / "stranger3" / "clip_text.cpu.stripped.pt2")]).findings
    doc = json.loads(render("json", findings))
    for f in doc["findings"]:
        f["confirmation"] = {"verdict": "not-reproduced", "probe": f["witness"], "outcome": None, "reason": None}
    report = tmp_path / "confirm.json"
    report.write_text(json.dumps(doc))
    merged = CliRunner().invoke(cli, ["merge", str(report)])
    assert merged.exit_code == 1  # the AOTI001 error, confirmed or not
    assert CliRunner().invoke(cli, ["merge", "--confirmed-only", str(report)]).exit_code == 0
    doc["findings"][0]["confirmation"]["verdict"] = "confirmed"
    report.write_text(json.dumps(doc))
    assert doc["findings"][0]["severity"] == "error"
    assert CliRunner().invoke(cli, ["merge", "--confirmed-only", str(report)]).exit_code == 1
    CHECK_SCHEMA.validate(json.loads(merged.stdout))
