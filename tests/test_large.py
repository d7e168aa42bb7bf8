"""Deep real models (fixtures/large: GPT-2 with 48 layers, BERT with 24, CUDA, torch 2.11): what
aoti-lint says of them is what it says of their 2-layer versions in fixtures/real, whose witnesses
were run (fixtures/real/runtime.json: GPT-2 aborts at seq 129; BERT returns a wrong-length result at
129 past its 128-row position table, here 513 past 512)."""

from __future__ import annotations

import pytest

from analyzer.app import api
from conftest import FIXTURES

LARGE = FIXTURES / "large"


@pytest.mark.parametrize("name, code, witness", [
    ("gpt2_48", "AOTI003", "(2, 129)"),
    ("bert_24", "AOTI013", "(2, 513)"),
])
def test_deep_models_say_what_their_small_versions_say(name, code, witness):
    findings = api.lint([LARGE / f"{name}.cuda.stripped.pt2"]).findings
    # AOTI010: an info, seq compiled up to the table's rows with no declared max (no exported program).
    assert sorted(f.code for f in findings) == sorted(["AOTI002", "AOTI010", code, "AOTI019"])
    (f,) = [f for f in findings if f.code == code]
    assert (f.input, f.dim) == (0, 1) and f.witnesses[0].endswith(witness), f.witnesses
    (lower,) = [f for f in findings if f.code == "AOTI002"]
    assert [w.rsplit("= ", 1)[1] for w in lower.witnesses] == ["(2, 1)", "(2, 0)"]
