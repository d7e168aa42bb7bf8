"""The architecture in the README, enforced on the imports and attribute uses of analyzer/.

One direction of data: archive -> wrapper/kernels (facts) -> link -> model -> rules -> report.
Only ts.py knows tree-sitter (imports it, calls its node API); only archive.py opens zip files;
rules and reporters read the linked model, never the parsers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import REPO

PACKAGE = REPO / "analyzer"
MODULES = sorted(PACKAGE.rglob("*.py"))
PARSERS = {"analyzer.ts", "analyzer.wrapper", "analyzer.kernels", "analyzer.link", "analyzer.values"}
# tree-sitter Node attributes that no other Python object in analyzer/ has.
NODE_API = {
    "child_by_field_name", "children_by_field_name", "named_children", "named_child", "named_child_count",
    "start_byte", "end_byte", "start_point", "end_point", "has_error", "is_error", "is_missing",
    "descendant_for_byte_range", "descendant_for_point_range", "next_sibling", "prev_sibling",
    "next_named_sibling", "prev_named_sibling", "field_name_for_child", "grammar_name",
}
LINE_LIMIT = 500
# The sentence that excuses a module over LINE_LIMIT lines (in its docstring).
LONG_REASON = "Long module:"


def _name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of every module `path` imports (relative imports resolved; `from . import x`
    counts as importing the package's module x)."""
    tree = ast.parse(path.read_text("utf-8"))
    package = _name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.add(module)
            found |= {f"{module}.{alias.name}" for alias in node.names}
    return found


def _top(names: set[str]) -> set[str]:
    return {n.split(".")[0] for n in names}


def test_the_scan_sees_the_package():
    # A glob that found nothing would make every test below pass.
    names = {_name(p) for p in MODULES}
    assert {"analyzer.ts", "analyzer.wrapper", "analyzer.archive", "analyzer.rules", "analyzer.report"} <= names
    assert "tree_sitter" in _top(_imports(PACKAGE / "ts.py"))
    assert "zipfile" in _top(_imports(PACKAGE / "archive.py"))
    assert "analyzer.ts" in _imports(PACKAGE / "wrapper.py")
    ts_attrs = {n.attr for n in ast.walk(ast.parse((PACKAGE / "ts.py").read_text("utf-8"))) if isinstance(n, ast.Attribute)}
    assert {"child_by_field_name", "named_children", "start_byte"} <= ts_attrs & NODE_API


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_only_ts_imports_tree_sitter(path):
    if path.name == "ts.py":
        return
    assert not {"tree_sitter", "tree_sitter_cpp"} & _top(_imports(path))


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_only_ts_touches_nodes(path):
    if path.name == "ts.py":
        return
    used = {n.attr for n in ast.walk(ast.parse(path.read_text("utf-8"))) if isinstance(n, ast.Attribute)}
    assert not used & NODE_API, "node shapes belong in ts.py helpers or grammars/*.scm queries"


@pytest.mark.parametrize("path", MODULES, ids=_name)
def test_only_archive_imports_zipfile(path):
    if path.name == "archive.py":
        return
    assert "zipfile" not in _top(_imports(path))


@pytest.mark.parametrize("path", [p for p in MODULES if p.parent.name in ("rules", "report")], ids=_name)
def test_rules_and_reporters_never_import_parsers(path):
    imported = _imports(path)
    assert not imported & PARSERS, "rules and reporters read the linked model (analyzer.model) only"


def test_parsers_import_no_rules_or_reporters():
    for name in PARSERS:
        path = PACKAGE / f"{name.split('.')[-1]}.py"
        assert not {n for n in _imports(path) if n.startswith(("analyzer.rules", "analyzer.report", "analyzer.cli"))}


# Modules over the limit today whose split belongs to another part of issue 8.
_LONG_PENDING = {
}


def _long_case(path: Path):
    reason = _LONG_PENDING.get(_name(path))
    return pytest.param(path, marks=pytest.mark.xfail(strict=False, reason=reason)) if reason else path


@pytest.mark.parametrize("path", [_long_case(p) for p in MODULES], ids=_name)
def test_long_modules_say_why(path):
    source = path.read_text("utf-8")
    if source.count("\n") <= LINE_LIMIT:
        return
    doc = ast.get_docstring(ast.parse(source)) or ""
    assert LONG_REASON in doc, f"{path.name} is over {LINE_LIMIT} lines: split it or give the reason in its docstring"
