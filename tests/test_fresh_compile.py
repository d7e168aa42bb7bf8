"""Compile fresh CPU packages with the installed torch, link them, and run them.

Catches codegen drift (a new torch emitting a shape the parsers miss) and proves the linked
assertion is the one that really fires for an empty input.
"""

from __future__ import annotations

import pytest

from analyzer.app import api

pytestmark = pytest.mark.torch


def test_fresh_gather_links_bound_to_input0_dim0(fresh_cpu_package):
    (model,) = api.load(fresh_cpu_package("gather_dyn")).models
    assert model.device == "cpu"
    assert [i.name for i in model.inputs] == ["arg0_1", "arg1_1"]
    linked = [a for a in model.assertions if a.linked]
    assert linked and len(linked) == len(model.assertions)
    for a in linked:
        assert a.message.startswith("index out of bounds: 0 <= tmp")
        assert [(r.input, r.dim) for r in a.bound_sources] == [(0, 0)]
        assert a.index_sources == (1,)
    x = model.inputs[0]
    assert x.dims[0].symbol and x.dims[0].min == 2 and x.dims[0].enforced == "env"
    assert x.dims[1].value == 8


def test_empty_input_trips_the_linked_assertion(fresh_cpu_package):
    import torch_models

    path = fresh_cpu_package("gather_dyn")
    (model,) = api.load(path).models
    (message,) = {a.message for a in model.assertions}
    # x of shape (0, 8): the bound input 0 dim 0 is empty; idx = [0, 0, 0] is otherwise valid.
    proc = torch_models.run_package(path, [[[0, 8], "float32", 0], [[3], "int64", 0]])
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output
    assert message in output, output
    # With the same shapes but a non-empty x, nothing fails: the failure is the empty dim.
    ok = torch_models.run_package(path, [[[6, 8], "float32", 0], [[3], "int64", 0]])
    assert ok.returncode == 0 and ok.stdout.startswith("OK"), ok.stdout + ok.stderr


def test_env_gate_turns_the_failure_into_the_input_check(fresh_cpu_package):
    import torch_models

    path = fresh_cpu_package("gather_dyn")
    proc = torch_models.run_package(path, [[[0, 8], "float32", 0], [[3], "int64", 0]],
                                    env={"AOTI_RUNTIME_CHECK_INPUTS": "1"})
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "input_handles[0]: dim value is too small at 0, expected it to be >= 2" in output, output


def test_fresh_pos_embedding_one_sided_assertion(fresh_cpu_package):
    (model,) = api.load(fresh_cpu_package("pos_embedding")).models
    assert model.assertions, "expected the positional-embedding bound check"
    for a in model.assertions:
        assert a.bound_value == 512
        assert a.index_extent is not None, a
        # The index ranges over the sequence length: input 0 dim 1.
        assert [(r.input, r.dim) for r in a.index_extent_sources] == [(0, 1)]


def test_fresh_package_links_like_the_committed_fixture(fresh_cpu_package):
    """The committed fixture (built by fixtures/generate.py with the same torch) and a fresh build
    of the same model link identically, so the runtime results above speak for the fixture."""
    from conftest import FIXTURES, require

    def links(path):
        (model,) = api.load(path).models
        return sorted({(a.message, a.bound_sources, a.index_sources) for a in model.assertions})

    fixture = require(FIXTURES / "gather_dyn.cpu.stripped.pt2")
    assert links(fresh_cpu_package("gather_dyn")) == links(fixture)
