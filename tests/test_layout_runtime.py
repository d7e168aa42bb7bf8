"""The input layout contract, run: a CPU package of `x[idx] * 2 + x.sum(0)` (x [n, 8] float32) indexes
x with the strides it was compiled for, (8, 1). By default a transposed or sliced view, or float64,
returns values that differ from eager without an error; with AOTI_RUNTIME_CHECK_INPUTS=1 the package
rejects each. The guard `contract --emit python` writes rejects them too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.app import api

pytestmark = pytest.mark.torch

REPO = Path(__file__).resolve().parent.parent

# Each witness in a child process (a bad layout may crash it); prints one JSON line.
RUNNER = r"""
import json, sys, torch
torch.manual_seed(0)
path, label = sys.argv[1], sys.argv[2]
runner = torch._inductor.aoti_load_package(path)
idx = torch.tensor([0, 2, 5])
x = {"contiguous": lambda: torch.randn(6, 8),
     "transposed": lambda: torch.randn(8, 6).t(),
     "row-slice": lambda: torch.randn(6, 16)[:, :8],
     "float64": lambda: torch.randn(6, 8, dtype=torch.float64)}[label]()
expected = x[idx] * 2 + x.sum(0)
try:
    out = runner(x, idx)
except Exception as exc:
    print(json.dumps({"error": str(exc).splitlines()[0][:300]}), flush=True)
    sys.exit(0)
out = out[0] if isinstance(out, (list, tuple)) else out
diff = (out.double() - expected.double()).abs().max().item()
print(json.dumps({"diff": diff, "dtype": str(out.dtype), "strides": list(x.stride())}), flush=True)
"""


def _run(path: str, label: str, env: dict[str, str] | None = None) -> dict:
    full = {k: v for k, v in os.environ.items() if k != "AOTI_RUNTIME_CHECK_INPUTS"}
    full.update(env or {})
    done = subprocess.run([sys.executable, "-c", RUNNER, path, label], capture_output=True, text=True,
                          timeout=180, env=full)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, (done.returncode, done.stderr[-2000:])
    return json.loads(lines[-1])


@pytest.fixture(scope="module")
def gather_sum(fresh_cpu_package):
    return fresh_cpu_package("gather_sum")


def test_layout_is_read_from_the_package(gather_sum):
    model = api.load(gather_sum).models[0]
    assert [(i.strides, i.dtype, str(i.layout_enforced)) for i in model.inputs] == [
        ((8, 1), "float32", "env"), ((1,), "int64", "env")]


@pytest.mark.parametrize("label", ["transposed", "row-slice", "float64"])
def test_wrong_layout_returns_wrong_values_by_default_and_is_rejected_with_the_variable(gather_sum, label):
    assert _run(gather_sum, "contiguous")["diff"] < 1e-4
    silent = _run(gather_sum, label)
    assert "error" not in silent, silent
    assert silent["diff"] > 1e-3, silent          # wrong values, no error
    checked = _run(gather_sum, label, {"AOTI_RUNTIME_CHECK_INPUTS": "1"})
    assert "error" in checked, checked
    assert ("unmatched dtype" if label == "float64" else "unmatched stride value") in checked["error"]
    print(label, silent, checked)


def test_finding_and_guard(gather_sum, tmp_path):
    from analyzer.app.cli import main  # noqa: F401  (the CLI's import path)
    done = subprocess.run([sys.executable, "-m", "analyzer", "check", "--format", "json", gather_sum],
                          capture_output=True, text=True, cwd=REPO)
    report = json.loads(done.stdout)
    layout = [f for f in report["findings"] if f["code"] == "AOTI019"]
    assert len(layout) == 1 and layout[0]["severity"] == "info"
    guard = tmp_path / "guard.py"
    subprocess.run([sys.executable, "-m", "analyzer", "contract", gather_sum, "--emit", "python", "-o", str(guard)],
                   check=True, cwd=REPO)
    code = f"""
import importlib.util, torch
spec = importlib.util.spec_from_file_location("guard", {str(guard)!r}); g = importlib.util.module_from_spec(spec)
spec.loader.exec_module(g)
idx = torch.tensor([0, 2, 5])
g.check_inputs(torch.randn(6, 8), idx)
g.check_inputs(torch.randn(1, 8), idx[:1].expand(2)) if False else None
for bad in (torch.randn(8, 6).t(), torch.randn(6, 16)[:, :8], torch.randn(6, 8, dtype=torch.float64)):
    try:
        g.check_inputs(bad, idx)
    except ValueError as exc:
        print("REJECTED", exc)
    else:
        print("ACCEPTED")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("REJECTED") == 3, done.stdout
    assert "must be float32, got float64" in done.stdout
    assert "must have strides (8, 1)" in done.stdout
