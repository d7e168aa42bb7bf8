"""fixtures/strided_table: two 128-row constant tables read through `as_strided` for each input's
length, where the compiled and declared ranges themselves let the read pass the table (no guard is
exported for it). What read-past-constant says is pinned next to what the complete package did when
run at the findings' witnesses (fixtures/strided_table.runtime.json, from fixtures/strided_table.py)."""

from __future__ import annotations

import json
from functools import lru_cache

from analyzer.app import api
from analyzer.core.findings import Severity
from conftest import FIXTURES

PACKAGE = FIXTURES / "strided_table.cpu.stripped.pt2"
EXPORTED = FIXTURES / "strided_table.ep.pt2"


@lru_cache(maxsize=None)
def _reads() -> dict[int, object]:
    findings = api.lint(str(PACKAGE), api.Options(exported_program=str(EXPORTED))).findings
    reads = [f for f in findings if f.code == "AOTI013"]
    assert len(reads) == 2, reads
    return {f.input: f for f in reads}


def _record(label: str) -> dict:
    (record,) = [r for r in json.loads((FIXTURES / "strided_table.runtime.json").read_text()) if r["label"] == label]
    return record


def test_unbounded_size_past_the_table_is_an_error():
    """x's length has no max compiled or declared: 129 rows read one row past `table_x`, and the
    package returns a result where eager raises (setStorage out of bounds)."""
    f = _reads()[0]
    assert (f.severity, f.dim, f.witness) == (Severity.ERROR, 0, "x.shape = (129, 16), y.shape = (3, 16)")
    assert "(no max compiled or declared)" in f.detail
    record = _record("n=129")
    assert record["aoti"]["ok"] and record["aoti"]["outputs"][0]["shape"] == [129, 16]
    assert not record["eager"]["ok"] and "out of bounds for storage" in record["eager"]["error"]
    assert _record("n=128")["aoti"]["matches_eager"]


def test_declared_max_above_the_table_is_a_warning():
    """y's length is declared max=256: 129 is inside that range, so even AOTI_RUNTIME_CHECK_INPUTS=1
    lets it read past `table_y`; only sizes above 256 are rejected with the variable set."""
    f = _reads()[1]
    assert (f.severity, f.dim, f.witness) == (Severity.WARNING, 0, "x.shape = (3, 16), y.shape = (129, 16)")
    for label in ("m=129", "m=129+env"):
        record = _record(label)
        assert record["aoti"]["ok"] and not record["eager"]["ok"], label
    assert "dim value is too large" in _record("m=257+env")["aoti"]["error"]
