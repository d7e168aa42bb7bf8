"""Packages built from model code nobody here wrote and never tuned against (fixtures/stranger):
Hugging Face T5 encoder, Qwen2, RoBERTa and Mixtral, a torch.nn TransformerEncoder with a learned
64-row position table, and nn.EmbeddingBag. What aoti-lint says about them is pinned here, next to
what the packages did at run time (fixtures/stranger/runtime.json, from fixtures/stranger's probe)."""

from __future__ import annotations

from functools import lru_cache

import pytest

from analyzer import api
from analyzer import witness as W
from conftest import FIXTURES

STRANGER = FIXTURES / "stranger"


@lru_cache(maxsize=None)
def _lint(name: str, device: str = "cpu") -> tuple:
    folder = STRANGER if device == "cpu" else STRANGER / "cuda"
    pkg, ep = folder / f"{name}.{device}.stripped.pt2", STRANGER / f"{name}.ep.pt2"
    return tuple(api.lint(str(pkg), api.Options(exported_program=str(ep))).findings)


def _codes(name: str, device: str = "cpu") -> list[str]:
    return sorted(f.code for f in _lint(name, device))


def test_mixtral_batch_zero_empties_the_checks_own_loop():
    """The MoE routing kernel checks `tmp10 < 2L*ks0*ks1` (batch * seq * top-2) inside
    `for x0 < ks0*ks1`: with batch 0 the bound is 0, but so is the loop, so the check never runs
    (the package returns an empty result at batch 0). No empty-index-bound."""
    assert "AOTI001" not in _codes("mixtral")
    model = api.load(str(STRANGER / "mixtral.cpu.stripped.pt2")).models[0]
    routed = [a for a in model.assertions if a.bound == "2L*ks0*ks1"]
    assert routed and all(a.space_expr for a in routed)
    zero_batch = {ref: 0 for ref in routed[0].bound_sources if ref.dim == 0}
    assert zero_batch and all(W.empties(model, a.space_expr, zero_batch) for a in routed)
