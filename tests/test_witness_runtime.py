"""Witnesses really trigger what their findings predict.

For each rule that predicts a run-time failure from shapes alone, compile a fresh CPU package
(tests/torch_models.py, through conftest's session fixture: one compile per model per session), lint
it, build tensors of the witness's shapes (index inputs filled with 0, a valid index for any
non-empty table) and run the package in a subprocess (some CPU index failures abort the process).
Each witness is paired with a control: the same shapes with the finding's dim at a valid size,
which must run cleanly, so that the failure is proven to come from the dim the finding names.
"""

from __future__ import annotations

import json

import pytest

from analyzer.app import api
from analyzer.query import witness as W
from analyzer.core.model import DimRef

pytestmark = pytest.mark.torch


def _lint(path: str, rule: str):
    (model,) = api.load(path).models
    findings = api.lint(path, api.Options(select=(rule,))).findings
    return model, findings


def _inputs(model, shapes) -> list:
    """[(shape, dtype, fill)] for torch_models.run_package: int inputs are all-0 indices."""
    out = []
    for inp, shape in zip(model.inputs, shapes):
        dtype = "int64" if (inp.dtype or "").startswith("int") else "float32"
        out.append([list(shape), dtype, 0])
    return out


def _witness_shapes(model, finding) -> list[tuple[int, ...]]:
    parsed = W.parse_witness(finding.witness)
    assert [name for name, _ in parsed] == [i.display for i in model.inputs], finding.witness
    return [shape for _, shape in parsed]


def _control_shapes(model, finding, size: int | None = None) -> list[tuple[int, ...]]:
    """The witness with the finding's dim set to `size` (default: a valid size)."""
    shapes = [list(s) for s in _witness_shapes(model, finding)]
    ref = DimRef(finding.input, finding.dim)
    shapes[ref.input][ref.dim] = W.valid_size(model.dim(ref)) if size is None else size
    return [tuple(s) for s in shapes]


def _run(path, model, shapes):
    import torch_models

    proc = torch_models.run_package(path, _inputs(model, shapes))
    return proc, proc.stdout + proc.stderr


def _ok(proc) -> dict:
    assert proc.returncode == 0 and proc.stdout.startswith("OK"), proc.stdout + proc.stderr
    return json.loads(proc.stdout.split(" ", 1)[1])


def _assertion_message(model, finding) -> str:
    (message,) = {a.message for a in model.assertions
                  if a.kernel == finding.kernel and a.location == finding.location}
    return message


def test_empty_index_bound_witness_trips_the_named_assertion(fresh_cpu_package):
    path = fresh_cpu_package("gather_dyn")
    model, findings = _lint(path, "empty-index-bound")
    (finding,) = findings
    shapes = _witness_shapes(model, finding)
    assert shapes[finding.input][finding.dim] == 0
    proc, output = _run(path, model, shapes)
    message = _assertion_message(model, finding)
    assert proc.returncode != 0, output
    assert "index out of bounds" in output and message in output, output
    assert f'"{message}"' in finding.detail
    _ok(_run(path, model, _control_shapes(model, finding))[0])


def test_index_exceeds_constant_bound_witness_is_the_smallest_failing_size(fresh_cpu_package):
    path = fresh_cpu_package("pos_embedding")
    model, findings = _lint(path, "index-exceeds-constant-bound")
    (finding,) = findings
    shapes = _witness_shapes(model, finding)
    size = shapes[finding.input][finding.dim]
    assert size == 513
    proc, output = _run(path, model, shapes)
    message = _assertion_message(model, finding)
    assert proc.returncode != 0, output
    assert message in output, output
    # One less is the largest size that works: the witness is the boundary, not just some big size.
    _ok(_run(path, model, _control_shapes(model, finding, size - 1))[0])


@pytest.mark.parametrize("rule", ["division-by-dynamic-size", "empty-reduction"])
def test_empty_reduce_witness_gives_nan(fresh_cpu_package, rule):
    # x.amax(0) + x.mean(0): over an empty dim amax gives -inf and mean 0/0 = NaN; eager raises.
    path = fresh_cpu_package("empty_reduce")
    model, findings = _lint(path, rule)
    (finding,) = findings
    shapes = _witness_shapes(model, finding)
    assert shapes[finding.input][finding.dim] == 0
    result = _ok(_run(path, model, shapes)[0])
    assert result["nan"], result
    control = _ok(_run(path, model, _control_shapes(model, finding))[0])
    assert not control["nan"] and not control["inf"], control


def test_unenforced_dim_equality_is_only_caught_with_the_env_check(fresh_cpu_package):
    """AOTI012's witness (values shorter than the indices) passes unchecked by default; the package's
    own gated assert_size_stride rejects exactly that input when AOTI_RUNTIME_CHECK_INPUTS=1."""
    import torch_models
    from analyzer.app import api
    from analyzer.query.witness import parse_witness

    path = fresh_cpu_package("index_put")
    findings = [f for f in api.lint([path]).findings if f.rule == "unenforced-dim-equality"]
    (finding,) = findings
    assert (finding.input, finding.dim) == (2, 0)
    shapes = [shape for _, shape in parse_witness(finding.witness)]
    assert shapes[2][0] == shapes[1][0] - 1
    inputs = [[list(shapes[0]), "float32", 0], [list(shapes[1]), "int64", "arange"], [list(shapes[2]), "float32", 0]]
    checked = torch_models.run_package(path, inputs, env={"AOTI_RUNTIME_CHECK_INPUTS": "1"})
    assert checked.returncode != 0
    assert f"expected size {shapes[2][0]}=={shapes[1][0]}" in checked.stdout + checked.stderr
    unchecked = torch_models.run_package(path, inputs)
    # Without the check nothing reports the mismatch: the call returns normally (having read past
    # the end of v).
    assert unchecked.returncode == 0 and unchecked.stdout.startswith("OK"), unchecked.stdout + unchecked.stderr
