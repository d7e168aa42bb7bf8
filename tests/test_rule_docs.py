"""docs/rules/ is generated from the rule docstrings (and report/rulenotes.py) and kept in sync;
`explain` and the SARIF helpUri point at the pages."""

from __future__ import annotations

import json

from click.testing import CliRunner

from analyzer.app.cli import cli
from analyzer.report import ruledoc, rulenotes
from analyzer.rules import DOC_SECTIONS, all_rules

from conftest import FIXTURES, REPO, UPDATE_GOLDEN

DOCS = REPO / "docs" / "rules"


def test_rule_docs_are_in_sync() -> None:
    rules = all_rules()
    if UPDATE_GOLDEN:
        ruledoc.write_docs(str(DOCS), rules)
    expected = ruledoc.render_docs(rules)
    on_disk = {p.name: p.read_text() for p in DOCS.glob("*.md")}
    assert sorted(on_disk) == sorted(expected), "stale or missing pages (AOTI_LINT_UPDATE_GOLDEN=1 regenerates)"
    for name, text in expected.items():
        assert on_disk[name] == text, f"docs/rules/{name} is out of date (AOTI_LINT_UPDATE_GOLDEN=1 regenerates)"


def test_every_rule_has_a_page_with_its_sections_and_notes() -> None:
    for rule in all_rules():
        page = (DOCS / f"{rule.code}-{rule.name}.md").read_text()
        for section in (*DOC_SECTIONS, "Options that change the verdict", "Known limitations"):
            assert f"\n## {section}\n" in page, (rule.code, section)
        # Every rule has its own notes: a new rule without them fails here.
        assert rule.name in rulenotes.OPTIONS and rule.name in rulenotes.LIMITATIONS, rule.name
        assert f"| [`{rule.name}`]({rule.code}-{rule.name}.md) |" in (DOCS / "README.md").read_text()
    assert set(rulenotes.OPTIONS) == set(rulenotes.LIMITATIONS) == {r.name for r in all_rules()}


def test_explain_points_at_the_page() -> None:
    result = CliRunner().invoke(cli, ["explain", "AOTI006"])
    assert result.exit_code == 0
    assert "Options that change the verdict\n--target-device" in result.stdout
    assert "Known limitations\n" in result.stdout
    assert "docs/rules/AOTI006-target-device-mismatch.md" in result.stdout.splitlines()[-1]


def test_sarif_help_uri_is_the_rule_page() -> None:
    result = CliRunner().invoke(cli, ["--format", "sarif", str(FIXTURES / "gather_dyn.cuda.stripped.pt2")])
    driver = json.loads(result.stdout)["runs"][0]["tool"]["driver"]
    for descriptor in driver["rules"]:
        uri = descriptor["helpUri"]
        assert uri.startswith("https://") and uri.endswith(f"/docs/rules/{descriptor['id']}-{descriptor['name']}.md")
        assert (DOCS / uri.rsplit("/", 1)[1]).is_file()
