"""What a user checks before adopting the tool: one repository URL everywhere, the licence, the
project metadata. The wheel's side (LICENSE in .dist-info/licenses/) is in test_packaging.py."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from analyzer import REPOSITORY
from analyzer.report.ruledoc import DOCS_URL
from analyzer.report.sarif import INFORMATION_URI

from conftest import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

OWNER, NAME = REPOSITORY.removeprefix("https://github.com/").split("/")
# Every way a text can name the repository: a github.com URL (any scheme, `www.`, `.git`), an
# Action's `uses: OWNER/NAME@ref` and a placeholder owner.
GITHUB_URL = re.compile(r"(?:https?://|git@)?(?:www\.)?github\.com[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?(?=[/#?\s\"')\]>`]|$)")
USES = re.compile(r"uses:\s*([\w.-]+)/([\w.-]+)@")
SKIP_DIRS = {".git", ".venv", "build", "dist", "__pycache__", ".pytest_cache", ".ci-venv"}
TEXT_SUFFIXES = {".py", ".md", ".toml", ".yml", ".yaml", ".json", ".sarif", ".txt", ".cfg", ".html", ".xml", ""}


def _texts() -> list[Path]:
    """The repository's own text files: code, docs, the action, the hooks, goldens (SARIF helpUri)."""
    roots = [REPO / "analyzer", REPO / "docs", REPO / "action", REPO / "tests", REPO / ".ci", REPO / "grammars"]
    files = [REPO / n for n in ("README.md", "action.yml", ".pre-commit-hooks.yaml", "pyproject.toml", "LICENSE")]
    files += [REPO / "fixtures" / "README.md", REPO / "bench" / "README.md"]
    for root in roots:
        if root.is_dir():
            files += [p for p in root.rglob("*") if p.is_file() and not SKIP_DIRS & set(p.parts)
                      and p.suffix in TEXT_SUFFIXES and p.stat().st_size < 4 << 20]
    this = Path(__file__).resolve()  # its own examples of wrong spellings
    return [p for p in files if p.is_file() and p.resolve() != this]


def _mentions(text: str) -> list[tuple[str, str]]:
    """(owner, name) of every reference to a repository called like this one."""
    found = [(m.group(1), m.group(2)) for m in GITHUB_URL.finditer(text)]
    found += [(m.group(1), m.group(2)) for m in USES.finditer(text)]
    return [(owner, name) for owner, name in found if name.lower().replace("_", "-") == NAME]


def test_the_constant_is_a_github_repository():
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", REPOSITORY)
    assert NAME == "aoti-lint"


def test_every_repository_url_is_the_constant():
    """No second spelling of the repository anywhere (a placeholder owner, another owner, the
    PyPI page standing in for it): they drift apart as soon as one is changed."""
    wrong, seen = [], 0
    for path in _texts():
        text = path.read_text("utf-8", errors="replace")
        if "OWNER/" in text:
            wrong.append(f"{path.relative_to(REPO)}: OWNER/ placeholder")
        for owner, name in _mentions(text):
            seen += 1
            if (owner, name) != (OWNER, NAME):
                wrong.append(f"{path.relative_to(REPO)}: {owner}/{name}")
    assert not wrong, wrong
    assert seen >= 5  # README, docs/integrations.md, goldens: the scan sees them


def test_the_scan_catches_a_variant():
    assert _mentions("see https://github.com/someone/aoti-lint.git for more") == [("someone", "aoti-lint")]
    assert _mentions("  - uses: OWNER/aoti-lint@main") == [("OWNER", "aoti-lint")]
    assert _mentions("git@github.com:aoti-lint/aoti-lint.git") == [(OWNER, NAME)]
    assert _mentions("https://github.com/aoti-lint/aoti-lint-extras") == []


def test_derived_urls():
    assert DOCS_URL == f"{REPOSITORY}/blob/main/docs/rules/"
    assert INFORMATION_URI == REPOSITORY
    for line in (REPO / "README.md").read_text().splitlines():
        if "uses:" in line and NAME in line:
            assert f"uses: {OWNER}/{NAME}@" in line


def test_project_urls_and_classifiers():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    urls = project["urls"]
    assert urls["Homepage"] == urls["Repository"] == REPOSITORY
    assert urls["Issues"] == f"{REPOSITORY}/issues"
    assert all(u == REPOSITORY or u.startswith((REPOSITORY + "/", REPOSITORY + "#")) for u in urls.values()), urls
    classifiers = project["classifiers"]
    minimum = tuple(int(x) for x in re.fullmatch(r">=(\d+)\.(\d+)", project["requires-python"]).groups())
    versions = [tuple(int(x) for x in c.rsplit(" ", 1)[1].split("."))
                for c in classifiers if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    assert min(versions) == minimum and versions == sorted(versions)
    assert not any(c.startswith("License ::") for c in classifiers)  # PEP 639: the expression says it
    # No "Typing :: Typed" without a py.typed marker.
    assert any(c == "Typing :: Typed" for c in classifiers) == (REPO / "analyzer" / "py.typed").exists()


def test_license_file_matches_the_metadata():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License")
    assert "aoti-lint contributors" in text
    assert "Neither the name of the copyright holder" in text  # the third clause
