"""The README's tables say what the code says: the limits table what `archive.Limits` defaults to, the
rules table every registered rule (the code is the one home; the README is checked against it)."""

from __future__ import annotations

import re

from analyzer.read.archive import Limits
from analyzer.rules import all_rules
from conftest import REPO

FIELDS = {"--max-members": "max_members", "--max-member-size": "max_member_bytes",
          "--max-total-size": "max_total_bytes", "--max-nesting": "max_nesting", "--timeout": "timeout_s",
          "--max-memory": "max_memory"}
UNITS = {"": 1, "s": 1, "MiB": 2**20, "GiB": 2**30}


def _value(cell: str) -> float:
    m = re.match(r"([\d ]+)\s*(MiB|GiB|s)?\b", cell.strip())
    assert m, cell
    return int(m.group(1).replace(" ", "")) * UNITS[m.group(2) or ""]


def test_readme_limits_table_matches_the_defaults():
    rows = {}
    for line in (REPO / "README.md").read_text("utf-8").splitlines():
        option = re.search(r"`(--[a-z-]+)` / `[a-z-]+`", line)
        if line.startswith("|") and option and option.group(1) in FIELDS:
            rows[option.group(1)] = _value(line.split("|")[2])
    assert set(rows) == set(FIELDS), f"README limits table lacks {set(FIELDS) - set(rows)}"
    defaults = Limits()
    for option, field in FIELDS.items():
        assert rows[option] == getattr(defaults, field), f"README says {option} defaults to {rows[option]}"


def test_readme_rule_table_lists_every_rule():
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| (AOTI\d{3}) \| `([a-z-]+)` \|",
                                                        (REPO / "README.md").read_text("utf-8"), re.M)}
    assert rows == {rule.code: rule.name for rule in all_rules()}
