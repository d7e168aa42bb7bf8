"""`why` on failures produced right here: fresh CPU packages run through aoti_load_package, their
real output routed back to the assertion and input that caused it."""

from __future__ import annotations

import pytest

from analyzer.app import api
from analyzer.explain import why
from analyzer.core.model import DimRef

pytestmark = pytest.mark.torch


def _run(path, inputs, env=None):
    import torch_models

    proc = torch_models.run_package(path, inputs, env=env)
    assert proc.returncode != 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def test_empty_input_failure_routes_to_input0_dim0(fresh_cpu_package):
    path = fresh_cpu_package("gather_dyn")
    log = _run(path, [[[0, 8], "float32", 0], [[3], "int64", 0]])
    result = why.explain_failure(api.load(path, api.Options(input_names=("x", "idx"))), log)
    assert result.matched
    best = result.candidates[0]
    assert best.kind == "index-assert"
    assert best.message in log
    assert best.bound_sources == (DimRef(0, 0),) and best.index_sources == (1,)
    assert "x.shape[0]" in best.cause and "empty" in best.cause


def test_sequence_too_long_routes_to_the_sequence_dim(fresh_cpu_package):
    path = fresh_cpu_package("pos_embedding")
    log = _run(path, [[[2, 513, 16], "float32", 0]])
    result = why.explain_failure(api.load(path), log)
    assert result.matched
    best = result.candidates[0]
    assert best.message in log and "512" in best.message
    assert "512" in best.cause


def test_input_check_failure_routes_to_the_checked_dim(fresh_cpu_package):
    path = fresh_cpu_package("gather_dyn")
    log = _run(path, [[[0, 8], "float32", 0], [[3], "int64", 0]], env={"AOTI_RUNTIME_CHECK_INPUTS": "1"})
    result = why.explain_failure(api.load(path), log)
    assert result.matched
    best = result.candidates[0]
    assert best.kind == "input-check"
    assert best.bound_sources == (DimRef(0, 0),) or "input 0 dim 0" in best.cause, best


def test_unrelated_message_does_not_match(fresh_cpu_package):
    result = why.explain_failure(api.load(fresh_cpu_package("gather_dyn")),
                                 "RuntimeError: index out of bounds: 0 <= tmp99 < ks7")
    assert not result.matched
