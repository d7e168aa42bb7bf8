"""What a failed index check does on CPU, told from the kernel's C++ and checked against what the
packages did when run (the probes' records): inside a `#pragma omp parallel` region the check's
exception cannot leave the region and the process aborts (SIGABRT); outside one it reaches the
caller as `RuntimeError`. The finding's `outcome` field says which, and the headline's verb follows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analyzer.app import api
from conftest import FIXTURES

# (package, its runtime records, the record's model name and label, the rule whose witness it ran)
CASES = [
    ("gather_dyn.cpu.stripped.pt2", "runtime.cpu.json", "gather_dyn", "empty", "AOTI001"),
    ("real/gpt2.cpu.stripped.pt2", "real/runtime.json", "gpt2", "seq=max+1", "AOTI003"),
    ("stranger2/tai_scatter.cpu.stripped.pt2", "stranger2/runtime.json", "tai_scatter", "c=0", "AOTI001"),
    ("stranger2/tai_repeat_index.cpu.stripped.pt2", "stranger2/runtime.json", "tai_repeat_index", "e=0", "AOTI001"),
]


def _recorded(records: str, name: str, label: str) -> str:
    """"cpu.abort" or "cpu.raise", from what the package did."""
    (record,) = [r for r in json.loads((FIXTURES / records).read_text()) if r["name"] == name and r["label"] == label]
    error = record["aoti"].get("error", "")
    if record.get("rc") == -6 or "SIGABRT" in error:
        return "cpu.abort"
    assert error.startswith("RuntimeError: index out of bounds"), record
    return "cpu.raise"


def _exported(package: Path) -> str:
    return str(package.with_name(package.name.split(".")[0] + ".ep.pt2"))


@pytest.mark.parametrize("package, records, name, label, code", CASES, ids=[c[2] for c in CASES])
def test_the_outcome_is_what_the_package_did(package, records, name, label, code):
    path = FIXTURES / package
    findings = api.lint([path], api.Options(exported_program=_exported(path))).findings
    (f,) = [f for f in findings if f.code == code]
    expected = _recorded(records, name, label)
    assert f.message_fields["outcome"] == expected
    assert ("aborts" if expected == "cpu.abort" else "raises an error in") in f.message


def test_every_cpu_index_check_knows_its_outcome():
    """Every C++ kernel's index check is either inside an OpenMP parallel region or not; Triton's
    have no such question (the device-side assert)."""
    seen = set()
    for folder in ("", "real", "stranger", "stranger2"):
        for path in sorted((FIXTURES / folder).glob("*.stripped.pt2")):
            for f in api.lint([path]).findings:
                if f.code in ("AOTI001", "AOTI003", "AOTI008"):
                    expected = {"cpu.abort", "cpu.raise"} if ".cpu." in path.name else {"cuda"}
                    assert f.message_fields["outcome"] in expected, (path.name, f.code)
                    seen.add(f.message_fields["outcome"])
    assert seen == {"cpu.abort", "cpu.raise", "cuda"}
