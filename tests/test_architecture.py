"""The architecture in the README, enforced on the real import graph of analyzer/.

Layers are subpackages, each importing only from itself and the layers below it:
core -> expr -> read -> parse -> link -> query -> rules -> explain -> report -> app. Every import counts
(module level, inside functions and under TYPE_CHECKING): a lazy import is still a dependency. Only
parse/ts.py knows tree-sitter (imports it, calls its node API); only read/archive.py opens zip files.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import REPO

PACKAGE = REPO / "analyzer"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
LAYERS = ("core", "expr", "read", "parse", "link", "query", "rules", "explain", "report", "app")
# The two modules of the package root: the version (imported by anyone) and `python -m analyzer`.
ROOT_BOTTOM, ROOT_TOP = "analyzer", "analyzer.__main__"
TS, ARCHIVE = "analyzer.parse.ts", "analyzer.read.archive"
# tree-sitter Node attributes that no other Python object in analyzer/ has.
NODE_API = {
    "child_by_field_name", "children_by_field_name", "named_children", "named_child", "named_child_count",
    "start_byte", "end_byte", "start_point", "end_point", "has_error", "is_error", "is_missing",
    "descendant_for_byte_range", "descendant_for_point_range", "next_sibling", "prev_sibling",
    "next_named_sibling", "prev_named_sibling", "field_name_for_child", "grammar_name",
}


def _name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


NAMES = {_name(p): p for p in MODULES}


def _package_of(path: Path) -> list[str]:
    package = _name(path).split(".")
    return package if path.name == "__init__.py" else package[:-1]


def _imports(path: Path) -> dict[str, set[str]]:
    """Each module `path` imports -> the names it takes from it (relative imports resolved; `from . import
    x` imports module x when x is one). Names of a plain `import m` are empty."""
    tree = ast.parse(path.read_text("utf-8"))
    package = _package_of(path)
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.setdefault(alias.name, set())
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                full = f"{module}.{alias.name}"
                if full in NAMES:
                    found.setdefault(full, set())
                else:
                    found.setdefault(module, set()).add(alias.name)
    return found


IMPORTS = {name: _imports(path) for name, path in NAMES.items()}


def _internal(name: str) -> dict[str, set[str]]:
    return {m: names for m, names in IMPORTS[name].items() if m in NAMES and m != name}


def _layer(name: str) -> int:
    if name == ROOT_BOTTOM:
        return -1
    if name == ROOT_TOP:
        return len(LAYERS)
    return LAYERS.index(name.split(".")[1])


def _top(names) -> set[str]:
    return {n.split(".")[0] for n in names}


def test_the_scan_sees_the_package():
    # A scan that found nothing, or resolved nothing, would make every test below pass.
    assert {TS, ARCHIVE, "analyzer.parse.wrapper", "analyzer.rules", "analyzer.report", "analyzer.app.cli"} <= set(NAMES)
    assert "tree_sitter" in _top(IMPORTS[TS])
    assert "zipfile" in _top(IMPORTS[ARCHIVE])
    assert TS in _internal("analyzer.parse.wrapper")
    assert "analyzer.core.findings" in _internal("analyzer.rules")
    edges = sum(len(_internal(n)) for n in NAMES)
    assert edges > 200
    ts_attrs = {n.attr for n in ast.walk(ast.parse(NAMES[TS].read_text("utf-8"))) if isinstance(n, ast.Attribute)}
    assert {"child_by_field_name", "named_children", "start_byte"} <= ts_attrs & NODE_API


def test_every_module_is_in_a_layer():
    flat = sorted(n for n in NAMES if n not in (ROOT_BOTTOM, ROOT_TOP) and n.split(".")[1] not in LAYERS)
    assert not flat, f"modules outside the layer folders {LAYERS}: {flat}"
    assert not [p for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists() and p.name not in LAYERS]


@pytest.mark.parametrize("name", sorted(NAMES))
def test_imports_only_from_below(name):
    upward = sorted(m for m in _internal(name) if _layer(m) > _layer(name))
    assert not upward, f"{name} ({LAYERS[_layer(name)] if 0 <= _layer(name) < len(LAYERS) else 'root'}) imports upward: {upward}"


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph = {n: sorted(_internal(n)) for n in NAMES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_no_import_cycles():
    assert not _cycles()


def test_the_cycle_check_can_fail():
    saved = IMPORTS["analyzer.core.findings"]
    IMPORTS["analyzer.core.findings"] = {**saved, "analyzer.core.records": set()}
    try:
        assert ["analyzer.core.findings", "analyzer.core.records"] in _cycles()
    finally:
        IMPORTS["analyzer.core.findings"] = saved


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@pytest.mark.parametrize("name", sorted(NAMES))
def test_no_private_name_crosses_modules(name):
    """A private name (or a private module) belongs to its module (its package): what another
    module needs is public API."""
    tree = ast.parse(NAMES[name].read_text("utf-8"))
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {(a.asname or a.name): a.name for a in node.names if a.name in NAMES}
        elif isinstance(node, ast.ImportFrom):
            package = _package_of(NAMES[name])
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            aliases |= {(a.asname or a.name): f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in NAMES}
    own_package = ".".join(_package_of(NAMES[name]))
    crossing = set()
    for module, names in _internal(name).items():
        crossing |= {f"{module}.{n}" for n in names if _private(n)}
        private_part = next((p for p in module.split(".") if _private(p)), None)
        if private_part and not module.startswith(own_package + "."):
            crossing.add(module)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr):
            target = aliases.get(node.value.id)
            if target and target != name:
                crossing.add(f"{target}.{node.attr}")
    assert not crossing


@pytest.mark.parametrize("name", sorted(NAMES))
def test_only_ts_imports_tree_sitter(name):
    if name != TS:
        assert not {"tree_sitter", "tree_sitter_cpp"} & _top(IMPORTS[name])


@pytest.mark.parametrize("name", sorted(NAMES))
def test_only_ts_touches_nodes(name):
    if name == TS:
        return
    used = {n.attr for n in ast.walk(ast.parse(NAMES[name].read_text("utf-8"))) if isinstance(n, ast.Attribute)}
    assert not used & NODE_API, "node shapes belong in parse/ts.py helpers or grammars/*.scm queries"


@pytest.mark.parametrize("name", sorted(NAMES))
def test_only_archive_imports_zipfile(name):
    if name != ARCHIVE:
        assert "zipfile" not in _top(IMPORTS[name])


def test_how_it_works_names_every_module():
    """The README's map of the code lists every module under its layer's folder."""
    readme = (REPO / "README.md").read_text("utf-8")
    section = readme.split("## How it works", 1)[1].split("\n## ", 1)[0]
    block = section.split("```", 2)[1]
    folder = None
    named: set[str] = set()
    for line in block.splitlines():
        head = re.match(r"^(\w+)/", line)
        if head:
            folder = head.group(1)
        for word in re.findall(r"(?<![\w/])([\w/]+)\.py\b", line):
            if folder:
                named.add(f"analyzer.{folder}.{word.replace('/', '.')}".removesuffix(".__init__"))
    # A layer's own __init__ holds only its docstring, except rules/ (the framework) and report/.
    wanted = {n for n in NAMES if n not in (ROOT_BOTTOM, ROOT_TOP)}
    wanted -= {f"analyzer.{layer}" for layer in LAYERS if layer not in ("rules", "report")}
    assert "analyzer.explain.why" in wanted and "analyzer.rules" in wanted
    missing = sorted(wanted - named)
    assert not missing, f"How it works does not name {missing}"


# Units over the limits today, with the length they may not outgrow: the split is owed, and the
# ceiling keeps it from getting worse. A unit not listed may not pass the limits at all.
FUNCTION_LIMIT, CLASS_LIMIT, MODULE_LIMIT = 60, 200, 500


def _units():
    """(unit, lines) of every module, class and function; nested units are named by their path."""
    for name, path in NAMES.items():
        source = path.read_text("utf-8")
        yield name, source.count("\n")
        work = [(node, "") for node in ast.parse(source).body]
        while work:
            node, prefix = work.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                kind = "class" if isinstance(node, ast.ClassDef) else "def"
                qual = f"{prefix}{node.name}"
                yield f"{name}:{qual}@{kind}", node.end_lineno - node.lineno + 1
                work.extend((child, qual + ".") for child in ast.iter_child_nodes(node))
            else:
                work.extend((child, prefix) for child in ast.iter_child_nodes(node))


def _limit(unit: str) -> int:
    if ":" not in unit:
        return MODULE_LIMIT
    return CLASS_LIMIT if unit.endswith("@class") else FUNCTION_LIMIT


def test_long_units_do_not_grow():
    from long_units import CEILINGS

    over = {}
    for unit, length in _units():
        if length > _limit(unit) and length > CEILINGS.get(unit, 0):
            over[unit] = length
    assert not over, f"over the length limits (split them; {FUNCTION_LIMIT}/{CLASS_LIMIT}/{MODULE_LIMIT} lines): {over}"


def test_long_unit_ceilings_are_current():
    # A ceiling left behind by a split would let the unit grow back unnoticed.
    from long_units import CEILINGS

    units = dict(_units())
    stale = {u: c for u, c in CEILINGS.items() if u not in units or units[u] <= _limit(u) or units[u] < c}
    assert not stale, f"lower or remove these ceilings in tests/long_units.py: {stale}"


# -- one answer per question: each fact worded or decided in one place -----------------------------

def _trees():
    for name, path in sorted(NAMES.items()):
        yield name, ast.parse(path.read_text("utf-8"))


def _functions_at(tree: ast.AST) -> dict[int, str]:
    """Line -> the innermost function defined around it."""
    out: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                if line not in out or out[line] in _enclosing(tree, node):
                    out[line] = node.name
    return out


def _enclosing(tree: ast.AST, inner: ast.AST) -> set[str]:
    return {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n is not inner and n.lineno <= inner.lineno and (n.end_lineno or 0) >= (inner.end_lineno or 0)}


def _formatted_after(pattern: str, owner: str):
    """f-strings outside core.model's `owner` with a literal part matching `pattern` before a field."""
    for name, tree in _trees():
        functions = _functions_at(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.JoinedStr):
                continue
            for part, after in zip(node.values, node.values[1:]):
                if isinstance(part, ast.Constant) and isinstance(part.value, str) \
                        and isinstance(after, ast.FormattedValue) and re.search(pattern, part.value):
                    if (name, functions.get(node.lineno)) != ("analyzer.core.model", owner):
                        yield f"{name}:{node.lineno}"


def test_input_positions_are_worded_in_one_place():
    # `input 0 dim 1` is core.model.input_position's; everyone else asks it (where(), describe()).
    found = list(_formatted_after(r"(?<!user )\binput $", "input_position"))
    assert not found, f"build `input N dim M` with core.model.input_position / where: {found}"


def test_shape_expressions_are_worded_in_one_place():
    # `x.shape[0]` (what the caller's code reads) is core.model.shape_text's.
    found = [f for f in _formatted_after(r"\.shape\[$", "shape_text")]
    assert not found, f"build `x.shape[0]` with core.model.shape_text: {found}"


_ENFORCEMENT_VALUES = {"always", "env", "none"}


def _string_values(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {v for e in node.elts for v in _string_values(e)}
    return set()


def test_enforcement_is_compared_as_the_enum():
    # Enforcement is a str enum: `dim.enforced == "env"` works, and hides which states exist.
    found = []
    for name, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and any(
                    _string_values(side) & _ENFORCEMENT_VALUES for side in (node.left, *node.comparators)):
                found.append(f"{name}:{node.lineno}")
    assert not found, f"compare with Enforcement.ALWAYS/ENV/NONE, not its strings: {found}"


_COUNTING_NAMES = {"nonzero", "argwhere", "masked_select", "unique", "_unique2", "nms", "torchvision.nms"}


def test_counting_ops_are_listed_in_one_place():
    # The ops whose output length the data decides, and what they can return: query/counting.py.
    found = []
    for name, tree in _trees():
        if name == "analyzer.query.counting":
            continue
        for node in ast.walk(tree):
            keys = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None) \
                if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else None
            if keys and len({v for k in keys if k is not None for v in _string_values(k)} & _COUNTING_NAMES) >= 2:
                found.append(f"{name}:{node.lineno}")
    assert not found, f"ask analyzer.query.counting instead of listing counting ops: {found}"


def test_one_binary_search_for_exceeding_sizes():
    # witness.smallest_exceeding is the search (first_exceeding asks it per dim); a copy drifts.
    found = [f"{name}:{i}" for name, path in sorted(NAMES.items())
             for i, line in enumerate(path.read_text("utf-8").splitlines(), 1)
             if re.search(r"\(lo \+ hi\) // 2|hi - lo > 1", line)]
    assert [f.split(":")[0] for f in found] == ["analyzer.query.witness"] * 2, found


def test_severities_are_decided_by_the_policy():
    # query/severity.py decides; Rule.finding passes its answer on. No rule sets its own severity,
    # and no finding is copied with another one.
    found = []
    for name, tree in _trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name != "Rule" and name.startswith("analyzer.rules"):
                for stmt in node.body:
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else \
                        [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
                    if any(isinstance(t, ast.Name) and t.id == "severity" for t in targets):
                        found.append(f"{name}:{stmt.lineno} ({node.name}.severity)")
            if isinstance(node, ast.Call) and any(k.arg == "severity" for k in node.keywords) \
                    and (name, getattr(node.func, "id", None)) != ("analyzer.rules", "Finding"):
                found.append(f"{name}:{node.lineno}")
    assert not found, f"severities come from analyzer.query.severity (severity_of, lowered): {found}"


def test_a_dims_ranges_are_worded_in_one_place():
    # A dim's `span(dim.min, dim.max)` is compiled_span, `span(dim.declared_min, dim.declared_max)`
    # declared_span (a symbol's checked range is a span of its own).
    found = []
    for name, tree in _trees():
        if name == "analyzer.core.dimtext":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "span" and len(node.args) == 2:
                ends = tuple(getattr(a, "attr", None) for a in node.args)
                owner = getattr(getattr(node.args[0], "value", None), "id", None)
                if ends == ("declared_min", "declared_max") or ends == ("min", "max") and owner in ("dim", "d", "self"):
                    found.append(f"{name}:{node.lineno}")
    assert not found, f"use core.dimtext.compiled_span / declared_span: {found}"
# A rule's code as a literal (`"AOTI001"`), in the code that compares, tests membership or keys a table
# with it. Outside rules/, such a switch answers for a rule what the rule should declare itself (its
# user ops, its guard condition) and silently misses a rule added later.
RULE_CODE = re.compile(r"^AOTI\d{3}$")


def _code_switches(source: str) -> list[str]:
    """`line: code` of each rule code the source compares with, tests membership in, keys a dict by,
    subscripts with or lists in a tuple, list or set; docstrings and message text are free."""
    found: dict[int, str] = {}

    def codes(node: ast.AST) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and RULE_CODE.match(node.value):
            found[id(node)] = f"{node.lineno}: {node.value}"
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            for element in node.elts:
                codes(element)

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                codes(operand)
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                if key is not None:
                    codes(key)
        elif isinstance(node, ast.Subscript):
            codes(node.slice)
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            codes(node)
    return sorted(found.values())


@pytest.mark.parametrize("name", sorted(n for n in NAMES if not (n + ".").startswith("analyzer.rules.")))
def test_no_code_outside_rules_switches_on_rule_codes(name):
    """What a finding's rule knows (its user ops, its guard condition) is asked of the rule or read
    from the finding (`subject`, `user_ops`), never looked up by its code."""
    assert not _code_switches(NAMES[name].read_text("utf-8"))


def test_the_rule_code_check_can_fail():
    source = '''"""Docstrings may say AOTI001."""
TABLE = {"AOTI004": 1}
CODES = ("AOTI001", "AOTI003")


def wanted(f, table):
    """`"AOTI005"` in a docstring is text."""
    if f.code == "AOTI005" or f.code in ("AOTI017", "AOTI018"):
        return table["AOTI016"]
    return f"AOTI002 {f.code}", print("AOTI013")
'''
    assert _code_switches(source) == ["2: AOTI004", "3: AOTI001", "3: AOTI003", "8: AOTI005", "8: AOTI017",
                                      "8: AOTI018", "9: AOTI016"]
