"""`aoti-lint diff OLD NEW` on pairs of real builds of one model: changed Dim bounds
(fixtures/pos_embedding*), check_lowerbound and the torch version (fixtures/versions/), a changed
dtype (fixtures/diff/, built by its generate.py)."""

from __future__ import annotations

import json

import jsonschema
import pytest
from click.testing import CliRunner

from analyzer.app import output_schemas
from analyzer.app.cli import cli
from analyzer.report.diff import code_span

from conftest import FIXTURES, require

DIFF_SCHEMA = jsonschema.Draft202012Validator(output_schemas.load("diff"))
VERSIONS = FIXTURES / "versions"


def diff(old: str, new: str, *args: str, eps: bool = True):
    argv = ["diff", str(require(FIXTURES / f"{old}.cpu.stripped.pt2")), str(require(FIXTURES / f"{new}.cpu.stripped.pt2"))]
    if eps:
        argv += ["--old-exported-program", str(FIXTURES / f"{old.split('.')[0]}.ep.pt2"),
                 "--exported-program", str(FIXTURES / f"{new.split('.')[0]}.ep.pt2")]
    return CliRunner().invoke(cli, [*argv, *args])


def changes(result) -> list[tuple[str, str, str | None, str | None]]:
    doc = json.loads(result.stdout)
    DIFF_SCHEMA.validate(doc)
    return [(c["change"], c["where"], c["old"], c["new"]) for c in doc["changes"]]


def test_a_max_that_narrows_fails_the_gate() -> None:
    result = diff("pos_embedding", "pos_embedding_capped", "--format", "json")
    assert result.exit_code == 1, result.output
    found = changes(result)
    assert ("range-narrowed", "x.shape[1]", "[2, inf)", "[2, 512]") in found
    assert ("declared-range-changed", "x.shape[1]", "[0, inf)", "[0, 512]") in found
    # The table overflow is the same finding with another verdict (its max is now compiled in); an
    # info in both builds (the check raises as eager's own lookup does).
    assert [c for c in found if c[0].startswith("finding")] == [
        ("finding-changed", next(c[1] for c in found if c[0] == "finding-changed"), "info", "info")]


def test_a_wider_range_passes_unless_a_finding_gets_worse() -> None:
    # A wider range that the 512-row table cannot hold: the overflow is compiled for once the range
    # reaches 1000, but it raises as eager does (an info in both builds): nothing new at the gate.
    wider = diff("pos_embedding_capped", "pos_embedding_max1000", "--format", "json")
    assert wider.exit_code == 0, wider.output
    assert ("range-widened", "x.shape[1]", "[2, 512]", "[2, 1000]") in changes(wider)
    (same,) = [c for c in json.loads(wider.stdout)["changes"] if c["change"] == "finding-changed"]
    assert (same["was"]["severity"], same["finding"]["severity"]) == ("info", "info")
    # Another dim of the same model widened with nothing new at the gate passes.
    assert diff("gather_dyn", "gather_dyn").exit_code == 0
    # Dropping the cap: the range widens and the finding changes, an info still: nothing new at the
    # gate, and at --fail-on info the old build's info already met it.
    assert diff("pos_embedding_capped", "pos_embedding").exit_code == 0
    assert diff("pos_embedding_capped", "pos_embedding", "--fail-on", "info").exit_code == 0


def test_the_same_build_has_no_change() -> None:
    result = diff("gather_dyn", "gather_dyn", "--format", "json")
    assert result.exit_code == 0
    assert changes(result) == []
    text = diff("gather_dyn", "gather_dyn")
    assert "no change in the contract or the findings" in text.stdout


def test_check_lowerbound_off_weakens_the_check_without_narrowing() -> None:
    old, new = VERSIONS / "2.15" / "gather_dyn.cpu.stripped.pt2", VERSIONS / "2.15" / "gather_nolb.cpu.stripped.pt2"
    result = CliRunner().invoke(cli, ["diff", str(require(old)), str(require(new)), "--format", "json",
                                      "--old-exported-program", str(VERSIONS / "2.15" / "gather_dyn.ep.pt2"),
                                      "--exported-program", str(VERSIONS / "2.15" / "gather_nolb.ep.pt2")])
    assert result.exit_code == 0, result.output
    found = changes(result)
    assert ("check-weakened", "x.shape[0]", "only with AOTI_RUNTIME_CHECK_INPUTS=1", "never") in found
    assert not [c for c in found if c[0] in ("range-narrowed", "dtype-changed")]


def test_a_torch_upgrade_of_the_same_model() -> None:
    """torch 2.6 emits no input checks for this model; 2.15 emits gated ones: dims a build does not
    state are not changes, and the checks it adds are."""
    old, new = VERSIONS / "2.6" / "gather_dyn.cpu.stripped.pt2", VERSIONS / "2.15" / "gather_dyn.cpu.stripped.pt2"
    result = CliRunner().invoke(cli, ["diff", str(require(old)), str(require(new)), "--format", "json"])
    assert result.exit_code == 0, result.output
    kinds = {c[0] for c in changes(result)}
    assert kinds == {"check-strengthened", "finding-added"}
    # What 2.15 adds is the layout its input checks state (and only they check): an info.
    (added,) = [c for c in json.loads(result.stdout)["changes"] if c["change"] == "finding-added"]
    assert (added["finding"]["code"], added["finding"]["severity"]) == ("AOTI019", "info")


def test_a_changed_dtype_narrows() -> None:
    old = require(FIXTURES / "diff" / "gather_f32.cpu.stripped.pt2")
    new = require(FIXTURES / "diff" / "gather_f64.cpu.stripped.pt2")
    result = CliRunner().invoke(cli, ["diff", str(old), str(new), "--format", "json"])
    assert result.exit_code == 1, result.output
    assert ("dtype-changed", "input 0 arg0_1", "float32", "float64") in changes(result)
    assert CliRunner().invoke(cli, ["diff", str(new), str(new)]).exit_code == 0


def test_markdown_is_inert(tmp_path) -> None:
    result = diff("pos_embedding", "pos_embedding_capped", "--format", "markdown")
    assert result.exit_code == 1
    assert result.stdout.startswith("**aoti-lint diff**") and "| range-narrowed |" in result.stdout
    # Untrusted text stays one code span inside its cell.
    assert code_span("a|b`<img src=x>`\n::error x") == "``a\\|b`<img src=x>`\\n::error x``"
    assert code_span("`x`") == "`` `x` ``"


def test_unreadable_package_is_exit_2(tmp_path) -> None:
    broken = tmp_path / "broken.pt2"
    broken.write_bytes(b"junk")
    result = CliRunner().invoke(cli, ["diff", str(broken), str(FIXTURES / "gather_dyn.cpu.stripped.pt2")])
    assert result.exit_code == 2
    assert "broken.pt2" in result.output


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_every_format_runs(fmt: str) -> None:
    result = diff("gather_dyn", "pos_embedding", "--format", fmt, eps=False)
    assert result.exit_code == 1  # another model altogether: its inputs changed
    assert "Traceback" not in result.output
