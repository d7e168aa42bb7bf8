"""The default text format is what a person reads: on every committed package (and the real models
with their exported programs, which add source lines and callers) each finding is at most
MAX_LINES lines, every line within 100 columns except the user's own code; `--format full` keeps
what the default leaves out (chain, snippet, every witness, the whole fix)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analyzer.app import api
from analyzer.report import render

from conftest import FIXTURES, REPO, every_package

MAX_LINES = 8
WIDTH = 100
REAL = FIXTURES / "real"


def _blocks(text: str) -> list[list[str]]:
    """The findings' blocks of a text report (its summary line left out)."""
    blocks = [block.splitlines() for block in text.rstrip("\n").split("\n\n")]
    return blocks[:-1]


def _check_limits(text: str, code_lines: set[str]) -> int:
    """Assert the limits on every block; the number of blocks."""
    blocks = _blocks(text)
    for block in blocks:
        assert len(block) <= MAX_LINES, "\n".join(block)
        for line in block:
            # The user's code under `source:` is shown as it is, however long.
            assert len(line) <= WIDTH or line.strip() in code_lines, line
    return len(blocks)


def _code_lines(findings) -> set[str]:
    return {f.source.code.strip() for f in findings if f.source is not None and f.source.code}


def test_default_text_limits_on_every_committed_package(monkeypatch: pytest.MonkeyPatch) -> None:
    # As a user names them: relative to the working directory (the repository).
    packages = [os.path.relpath(p, REPO) for p in every_package()]
    monkeypatch.chdir(REPO)
    result = api.lint(packages, api.Options(pair=False), jobs=1, keep_going=True)
    assert result.findings
    text = render("text", result.findings, packages=result.packages)
    assert _check_limits(text, _code_lines(result.findings)) == len(result.findings)
    full = render("full", result.findings, packages=result.packages)
    # What the default leaves out is still in `full`.
    assert len(full.splitlines()) > 2 * len(text.splitlines())
    for f in result.findings[:50]:
        for step in f.chain:
            assert step.split()[0] in full


@pytest.mark.parametrize("ep", sorted(REAL.glob("*.ep.pt2")) + [FIXTURES / "wrapped" / "wrapped.ep.pt2"],
                         ids=lambda p: p.name)
def test_default_text_limits_with_exported_programs(ep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the exported program a finding also names the user's line and its caller."""
    monkeypatch.chdir(REPO)  # where fixtures/wrapped's source files are found
    pkg = ep.with_name(ep.name.replace(".ep.pt2", ".cpu.stripped.pt2"))
    result = api.lint([os.path.relpath(pkg, REPO)], api.Options(exported_program=str(ep)), jobs=1)
    text = render("text", result.findings, packages=result.packages)
    assert _check_limits(text, _code_lines(result.findings)) == len(result.findings)
    for f in result.findings:
        if f.source is not None:
            assert f"  source: {f.source.describe()}"[:60] in text
            if f.source.code:
                assert f"    {f.source.code}" in text.splitlines()
            if f.source.called_from is not None:
                assert "  called from: " in text
