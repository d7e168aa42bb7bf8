"""`aoti-lint confirm` on the real-model CPU fixtures (fixtures/real/confirm.cpu.json, recorded by
fixtures/real/record_confirm.py from complete rebuilds of the same models): every error-level finding
the committed stripped packages get today is confirmed by running its witness, and no probe of any
model fails without a finding that explains it.

The record is matched to today's findings by key (code, message key, input, dim): a finding that
appears, goes away or changes severity fails here until confirm is run again on a rebuild.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from analyzer.app.cli import cli

from conftest import FIXTURES

REAL = FIXTURES / "real"
RECORD = json.loads((REAL / "confirm.cpu.json").read_text())
MODELS = sorted(p.name.split(".")[0] for p in REAL.glob("*.cpu.stripped.pt2"))


def _key(f: dict) -> tuple:
    return f["code"], f["message_key"], f["input"], f["dim"], f["severity"]


def _check(name: str) -> list[dict]:
    result = CliRunner().invoke(cli, ["check", "--format", "json", "--exported-program",
                                      str(REAL / f"{name}.ep.pt2"), str(REAL / f"{name}.cpu.stripped.pt2")])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)["findings"]


def test_every_real_cpu_model_is_recorded() -> None:
    assert sorted(RECORD["models"]) == MODELS


@pytest.mark.parametrize("name", MODELS)
def test_the_record_is_of_todays_findings(name: str) -> None:
    recorded = RECORD["models"][name]
    assert recorded["not_run"] is None, recorded["not_run"]
    assert Counter(_key(f) for f in recorded["findings"]) == Counter(_key(f) for f in _check(name))


@pytest.mark.parametrize("name", MODELS)
def test_errors_are_confirmed_and_nothing_fails_unexplained(name: str) -> None:
    recorded = RECORD["models"][name]
    for f in recorded["findings"]:
        if f["severity"] == "error":
            assert f["verdict"] == "confirmed", (name, f)
            assert f["outcome"]["status"] == "failed", (name, f)
    assert recorded["unexplained"] == [], (name, recorded["unexplained"])
    assert recorded["probes"], name


def test_the_record_has_errors_to_confirm() -> None:
    """Not vacuous: the real fixtures hold error findings of several rules, all run."""
    errors = [(name, f["code"]) for name, m in RECORD["models"].items() for f in m["findings"]
              if f["severity"] == "error"]
    assert len(errors) >= 8 and {code for _, code in errors} >= {"AOTI002", "AOTI014"}, errors
