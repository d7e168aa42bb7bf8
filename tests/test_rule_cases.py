"""Each rule's own VALID and INVALID cases (real packages, `Rule.VALID` / `Rule.INVALID`), as Fixit
runs a lint rule's cases: a VALID case gives no finding of the rule, an INVALID case at least one,
and one of them has every field the case expects (message keys and fields, never prose)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest

from analyzer.app import api
from analyzer.rules import Case, Rule, all_rules
from conftest import REPO, SHARED_PT2, require

RULES = all_rules()
CASES = [(rule, kind, i, case) for rule in RULES for kind in ("VALID", "INVALID")
         for i, case in enumerate(getattr(rule, kind))]


def _path(package: str) -> Path:
    if package.startswith("shared/"):
        return require(SHARED_PT2 / package.split("/", 1)[1])
    return require(REPO / package)


def _edited(case: Case, tmp_path: Path) -> Path:
    """The case's package, with its one-member edit applied to a copy."""
    src = _path(case.package)
    if case.edit is None:
        return src
    suffix, pattern, replacement = case.edit
    dst = tmp_path / src.name
    hits = 0
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            data = zin.read(name)
            if name.endswith(suffix):
                if pattern is None:
                    hits += 1
                    continue
                data, n = re.subn(pattern, replacement, data, flags=re.S)
                hits += n
            zout.writestr(name, data)
    assert hits, f"the edit {case.edit!r} changed nothing in {src}"
    return dst


def _findings(rule: type[Rule], case: Case, tmp_path: Path):
    options = api.Options(select=(rule.name,), target_device=case.target_device, target_sm=case.target_sm,
                          exported_program=None if case.exported is None else str(_path(case.exported)),
                          runtime_checks=case.runtime_checks)
    return api.lint(str(_edited(case, tmp_path)), options).findings


@pytest.mark.parametrize("rule,kind,i,case", CASES, ids=[f"{r.code}-{k}-{i}" for r, k, i, _ in CASES])
def test_rule_case(rule, kind, i, case, tmp_path):
    found = [f for f in _findings(rule, case, tmp_path) if f.rule == rule.name]
    if kind == "VALID":
        assert found == [], (case, found)
        return
    assert found, f"{rule.name} finds nothing in {case}"
    assert all(f.message_key.startswith(rule.name) and f.fix_key for f in found), found
    # Each finding carries the model record it is about (what source attribution and the contract read).
    assert all(f.subject is not None for f in found), found
    wanted = case.expect
    matching = [f for f in found if all(getattr(f, k) == v for k, v in wanted.items())]
    assert matching, f"no finding with {wanted}: {[(f.message_key, f.input, f.dim, f.kernel) for f in found]}"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_every_rule_has_valid_and_invalid_cases(rule):
    assert rule.VALID, f"{rule.name} has no VALID case"
    assert rule.INVALID, f"{rule.name} has no INVALID case"
    assert all(case.expect.get("message_key", rule.name).startswith(rule.name) for case in rule.INVALID)
