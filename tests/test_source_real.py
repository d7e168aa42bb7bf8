"""Source attribution on a real Hugging Face model (fixtures/real, built from a `transformers`
config with random weights): GPT-2's position table is named in the user's terms."""

from __future__ import annotations

import os
from pathlib import Path

from analyzer.app import api
from analyzer.query import source
from conftest import FIXTURES, require

REAL = Path(os.environ.get("AOTI_LINT_REAL_FIXTURES", FIXTURES / "real"))


def test_gpt2_position_and_token_tables():
    pkg = api.load(require(REAL / "gpt2.cpu.stripped.pt2"),
                   api.Options(exported_program=str(require(REAL / "gpt2.ep.pt2"))))
    model = pkg.models[0]
    attributor = source.Attributor(model)
    found = {a.bound_value: source.for_assertion(attributor, a) for a in model.assertions if a.bound_value}
    wpe = found[128]
    assert wpe.module.endswith("wpe") and wpe.class_name == "Embedding" and wpe.rows == 128
    assert wpe.file.endswith("modeling_gpt2.py") and "self.wpe(position_ids)" in wpe.code
    assert wpe.index_from == "arange" and not wpe.ambiguous
    assert "(Embedding, 128 rows) indexed by `arange` at modeling_gpt2.py:" in wpe.describe()
    wte = found[1000]
    assert wte.module.endswith("wte") and wte.rows == 1000 and "self.wte(input_ids)" in wte.code
