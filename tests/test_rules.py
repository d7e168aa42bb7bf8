"""The rules on real packages (shared/pt2 and fixtures/), their goldens, and the interval and
witness edge cases on small hand-built models that quote real values.

Goldens, keyed by rule: `tests/golden/check/<rule>/<origin>__<package stem>.json` (origin `shared`
or `fixtures`) hold that rule's findings in each package, as `check --format json --select ALL`
spells them but with each sentence made from templates (headline, detail, fix, chain lines,
witnesses) written as the template's table and key and the fields it was filled with
(`{"table", "key", "fields", "then"}`, `then` what was appended to it), run from the folder above
the package's folder (shared) or the repository (fixtures) so that `package` is a relative path
(`pt2/gather_dyn.cuda.pt2`, `fixtures/gather_dyn.cpu.stripped.pt2`). A rule without findings in a
package has no file. The templates' wording is in one reviewed file per rule,
`tests/golden/prose/<rule>.md` (and `shared.md`), so that a wording change touches that file and
not the rule's package goldens; a sentence is written as a template only where the catalog renders
it back exactly, so goldens and prose files together pin every character of the output.
Regenerate with `AOTI_LINT_UPDATE_GOLDEN=1` and review every change against the wrapper source.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from analyzer.app import api
from analyzer.expr import intervals
from analyzer.query import sizes
from analyzer.query import witness as W
from analyzer.core.findings import Location, Severity
from analyzer.core.model import Assertion, Dim, DimRef, Division, Enforcement, Input, Launch, Model, Package, Problem, Reduction, Symbol
from analyzer.core import messages
from analyzer.rules import DOC_SECTIONS, Context, all_rules, catalog, run_rules
from analyzer.report.json import finding_dict
from conftest import UPDATE_GOLDEN, compare_golden, fixture_packages, package_id, shared_packages

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PT2 = Path(__file__).resolve().parents[2] / "shared" / "pt2"
FIXTURES = REPO / "fixtures"
GOLDEN = HERE / "golden" / "check"
PROSE = HERE / "golden" / "prose"

SHARED = shared_packages()
FIXTURE_PACKAGES = fixture_packages()
ALL_PACKAGES = [("shared", p) for p in SHARED] + [("fixtures", p) for p in FIXTURE_PACKAGES]


def _stem(path: Path) -> str:
    return path.name[: -len(".pt2")]


def _named(name: str) -> list[Path]:
    """Packages of fixture `name` (any device, stripped or not) from both origins."""
    return [p for _, p in ALL_PACKAGES if _stem(p).split(".")[0] == name]


def _lint(path: Path, **ctx):
    options = api.Options(**ctx)
    return api.lint(str(path), options).findings


def _need(paths: list[Path], what: str) -> list[Path]:
    if not paths:
        pytest.skip(f"no {what} package in {PT2} or {FIXTURES}")
    return paths


# -- rules on real packages ---------------------------------------------------------------------

@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_gather_dyn_empty_index_bound(device):
    paths = _need([p for p in _named("gather_dyn") if f".{device}" in p.name], f"gather_dyn.{device}")
    for path in paths:
        found = [f for f in _lint(path) if f.rule == "empty-index-bound"]
        assert len(found) == 1, (path, found)
        f = found[0]
        # x empty, idx not: every index value is out of range for eager too, which raises as the
        # package does: an info that says so.
        assert (f.code, f.severity, f.input, f.dim) == ("AOTI001", Severity.INFO, 0, 0), path
        assert f.message_fields["eager_rejects"] and "eager PyTorch rejects this input too" in f.detail
        assert f.symbol and f.kernel and f.location.line > 0
        assert f.message_key == "empty-index-bound" and f.fix_key == "empty-index-bound"
        shapes = dict(W.parse_witness(f.witness))
        x, idx = list(shapes.values())
        assert x == (0, 8) and len(idx) == 1 and idx[0] >= 1, f.witness
        assert f.key.startswith("bound:in0.d0;index:in1")
        assert "AOTI_RUNTIME_CHECK_INPUTS=1" in f.fix and "== 0" in f.fix
        assert f.chain and f.chain[-2].startswith("with ") and f.chain[-1].startswith("eager rejects this input")


def test_index_select_2d_empty_index_bound():
    for path in _need(_named("index_select_2d"), "index_select_2d"):
        found = [f for f in _lint(path) if f.rule == "empty-index-bound"]
        # CPU kernels repeat the assertion in the vectorized loop and the tail: one finding.
        assert len(found) == 1, (path, found)
        f = found[0]
        assert (f.input, f.dim) == (0, 1), path
        shapes = [s for _, s in W.parse_witness(f.witness)]
        assert shapes[0][1] == 0 and shapes[0][0] > 0 and shapes[1][0] > 0, f.witness


def test_index_select_2d_cpu_keeps_first_location():
    paths = [p for p in _named("index_select_2d") if ".cpu" in p.name]
    for path in _need(paths, "index_select_2d.cpu"):
        model = api.load(str(path)).models[0]
        lines = sorted(a.location.line for a in model.assertions)
        assert len(lines) == 2, "the CPU kernel should assert in the main loop and the tail"
        (f,) = [f for f in _lint(path) if f.rule == "empty-index-bound"]
        assert f.location.line == lines[0]


def test_empty_reduce_warnings_and_no_error():
    for path in _need(_named("empty_reduce"), "empty_reduce"):
        found = _lint(path)
        rules = {f.rule for f in found}
        assert {"division-by-dynamic-size", "empty-reduction"} <= rules, (path, rules)
        assert not [f for f in found if f.severity == Severity.ERROR], path
        for f in found:
            if f.rule in ("division-by-dynamic-size", "empty-reduction"):
                assert (f.input, f.dim) == (0, 0) and f.witness == "arg0_1.shape = (0, 5)", f


@pytest.mark.parametrize("name", ["gather_static", "embedding"])
def test_no_error(name):
    for path in _need(_named(name), name):
        found = _lint(path)
        assert not [f for f in found if f.severity == Severity.ERROR], (path, found)
        assert not [f for f in found if f.rule in ("empty-index-bound", "index-exceeds-constant-bound")]


def test_gather_static_is_clean():
    """Nothing but the layout every package built without AOTI_RUNTIME_CHECK_INPUTS shares (info), and
    not even that when the deployment sets the variable."""
    for path in _need(_named("gather_static"), "gather_static"):
        assert [f.code for f in _lint(path)] == ["AOTI019"], path
        assert _lint(path, runtime_checks="on") == [], path


def test_pos_embedding_fixtures():
    """seq 513 past the 512-row table, whatever the range: the failed check raises (CPU, outside an
    OpenMP region) or asserts (CUDA) as eager's own lookup does, so an info each
    (test_extent_* below: the severities where the check aborts the process)."""
    expected = {"pos_embedding": Severity.INFO, "pos_embedding_capped": Severity.INFO,
                "pos_embedding_max1000": Severity.INFO}
    seen = False
    for name, severity in expected.items():
        for path in _named(name):
            seen = True
            found = [f for f in _lint(path) if f.rule == "index-exceeds-constant-bound"]
            if severity is None:
                assert found == [], path
                continue
            assert len(found) == 1 and found[0].severity == severity, (path, found)
            assert (found[0].input, found[0].dim) == (0, 1)
            assert [s for _, s in W.parse_witness(found[0].witness)][0][1] == 513
    if not seen:
        pytest.skip("no pos_embedding fixture yet")


def test_target_device_on_real_package():
    for path in _need([p for p in SHARED if p.name == "gather_dyn.cuda.pt2"], "gather_dyn.cuda.pt2"):
        assert not [f for f in _lint(path, target_device="cuda", target_sm="90") if f.rule == "target-device-mismatch"]
        assert not [f for f in _lint(path, target_device="cuda", target_sm="90a") if f.rule == "target-device-mismatch"]
        (f,) = [f for f in _lint(path, target_sm="80") if f.rule == "target-device-mismatch"]
        assert f.severity == Severity.ERROR and f.message_key == "target-device-mismatch.sm"
        assert f.key == "sm:90->80"
        (f,) = [f for f in _lint(path, target_device="cpu") if f.rule == "target-device-mismatch"]
        assert f.message_key == "target-device-mismatch.device" and f.key == "device:cuda->cpu"
        assert not [f for f in _lint(path) if f.rule == "target-device-mismatch"]


# -- goldens, keyed by rule -------------------------------------------------------------------

def _findings(origin: str, path: Path, monkeypatch):
    # Run from the folder above the package's folder: `package` is then `pt2/NAME.pt2` (shared) or
    # `fixtures/...` (the repository), never an absolute path.
    base = path.parents[1] if origin == "shared" else REPO
    assert base in path.parents
    monkeypatch.chdir(base)
    return api.lint(str(path.relative_to(base)), api.Options(select=("ALL",))).findings


def _golden_path(rule: str, origin: str, path: Path) -> Path:
    return GOLDEN / rule / f"{origin}__{_stem(path)}.json"


def _value(value: object) -> object:
    """A field's value in a golden: a filled template as its tree, a number as is, else its text."""
    if isinstance(value, (messages.Text, messages.Template)):
        return tree(value)
    if value is None or type(value) in (bool, int, float):
        return value
    return format(value, "")  # what str.format puts in the sentence


def tree(text: object) -> object:
    """`text` as the template that made it: `{"table", "key", "fields", "then"}` (only the fields the
    template names; `then` the texts appended to it, each a tree or a string), when the catalog renders
    it back exactly; else the text itself (a sentence code built, or one cut short)."""
    if text is None:
        return None
    table, key = getattr(text, "table", ""), getattr(text, "key", "")
    words = catalog()
    if not table or table not in words or key not in words[table]:
        return str(text)
    template = words[table][key]
    given = text.fields if isinstance(text, messages.Text) else {}
    if not template.fields <= set(given):
        return str(text)
    out: dict = {"table": table, "key": key, "fields": {name: _value(given[name]) for name in sorted(template.fields)}}
    if getattr(text, "parts", ()):
        out["then"] = [tree(part) for part in text.parts]
    return out if render(out) == str(text) else str(text)


def render(node: object) -> object:
    """The text of a tree (`tree`), from today's catalog."""
    if not isinstance(node, dict):
        return node
    fields = {name: render(value) for name, value in node["fields"].items()}
    return catalog()[node["table"]][node["key"]].format(**fields) + "".join(str(render(p)) for p in node.get("then", ()))


def _trees(doc: dict) -> list:
    """Every tree of a golden finding (to render them all back)."""
    return [doc["message"], doc["detail"], doc["fix"], doc["witness"], *doc["witnesses"], *doc["chain"]]


def golden_docs(findings) -> list[dict]:
    """The findings as `check --format json` spells them, each sentence as its template and fields
    (`tree`), plus their catalog keys."""
    docs = []
    for f in findings:
        doc = {**finding_dict(f), "message_key": f.message_key, "fix_key": f.fix_key}
        doc.update(message=tree(f.message), detail=tree(f.detail or f.message), fix=tree(f.fix),
                   witness=tree(f.witness), witnesses=[tree(w) for w in f.witnesses or ([f.witness] if f.witness else [])],
                   chain=[tree(line) for line in f.chain])
        # The tree is the sentence: rendered from the catalog it gives back the JSON's text exactly.
        assert rendered(doc) == finding_dict(f), f
        docs.append(doc)
    return docs


def rendered(doc: dict) -> dict:
    """A golden finding with its trees rendered: the finding as `check --format json` spells it."""
    out = {k: v for k, v in doc.items() if k != "fix_key"}
    out.update(message=render(doc["message"]), detail=render(doc["detail"]), fix=render(doc["fix"]),
               witness=render(doc["witness"]), witnesses=[render(w) for w in doc["witnesses"]],
               chain=[render(line) for line in doc["chain"]])
    return out


def _golden_text(findings) -> str:
    return dumps(golden_docs(findings))


def dumps(docs: object) -> str:
    """Indented JSON with each tree on one line (one sentence, one line, as the text was)."""
    trees: list[str] = []

    def hold(node: object) -> object:
        if isinstance(node, dict) and "table" in node and "key" in node:
            trees.append(json.dumps(node, ensure_ascii=False))
            return f"\0tree{len(trees) - 1}\0"
        if isinstance(node, dict):
            return {k: hold(v) for k, v in node.items()}
        if isinstance(node, list):
            return [hold(v) for v in node]
        return node

    text = json.dumps(hold(docs), indent=2, ensure_ascii=False) + "\n"
    return re.sub(r'"\\u0000tree(\d+)\\u0000"', lambda m: trees[int(m.group(1))], text)


@pytest.mark.parametrize("origin,path", ALL_PACKAGES, ids=[package_id(p) for _, p in ALL_PACKAGES])
def test_golden(origin, path, monkeypatch):
    """One file per (rule, package) with findings; no file means the rule finds nothing there, so
    one rule's wording change touches only that rule's files."""
    found = _findings(origin, path, monkeypatch)
    for rule in all_rules():
        mine = [f for f in found if f.rule == rule.name]
        golden = _golden_path(rule.name, origin, path)
        if mine:
            compare_golden(_golden_text(mine), golden)
        elif UPDATE_GOLDEN:
            golden.unlink(missing_ok=True)
        else:
            assert not golden.exists(), f"{rule.name} no longer finds anything in {path} ({golden})"


def test_goldens_render_from_the_catalog():
    """Every template a golden names exists and is given every field it takes: a golden written
    before a template was renamed or given a new field fails here, not only where it is compared."""
    for golden in sorted(GOLDEN.glob("*/*.json")):
        for doc in json.loads(golden.read_text()):
            for node in _trees(doc):
                assert isinstance(render(node), (str, type(None))), (golden, node)


def _prose(tables: dict, title: str, what: str) -> str:
    out = [f"# {title}", "", what, ""]
    for name, table in tables.items():
        if not len(table):
            continue
        out += [f"## {name}", ""]
        for key in sorted(table):
            out += [f"### {key}", "", "```text", str(table[key]), "```", ""]
    return "\n".join(out)


def prose_text(rule) -> str:
    """The rule's templates, one reviewed file per rule."""
    return _prose({t: getattr(rule, t) for t in messages.RULE_TABLES}, f"{rule.code} {rule.name}",
                  f"The wording of {rule.name} (its class in analyzer/rules/words_*.py): the templates its "
                  f"check goldens (tests/golden/check/{rule.name}/) name by table and key.")


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.name)
def test_prose(rule):
    """A rule's wording, reviewed in one file: a change of one template changes this file only."""
    compare_golden(prose_text(rule), PROSE / f"{rule.name}.md")


def test_prose_shared():
    compare_golden(_prose({c.name: c for c in messages.shared()}, "shared",
                          "The shared tables of analyzer/core/messages.py (chain lines the linker writes, "
                          "ranges, effects, `why`)."), PROSE / "shared.md")


def test_no_stray_prose():
    names = {r.name for r in all_rules()} | {"shared"}
    assert {p.stem for p in PROSE.glob("*.md")} == names


def test_goldens_exist_for_shared():
    if not SHARED:
        pytest.skip(f"{PT2} missing")
    stems = {_stem(p) for p in SHARED}
    covered = {g.stem.split("__", 1)[1] for g in GOLDEN.glob("*/shared__*.json")}
    assert covered, "no golden for any shared package"
    assert not covered - stems, f"goldens for packages that are gone: {covered - stems}"


def test_no_stray_goldens():
    names = {r.name for r in all_rules()}
    packages = {f"{origin}__{_stem(p)}" for origin, p in ALL_PACKAGES}
    for golden in GOLDEN.glob("*/*.json"):
        assert golden.parent.name in names, golden
        if golden.stem.startswith("shared__") and not SHARED:
            continue  # without ../shared its packages' goldens cannot be told stray or not
        assert golden.stem in packages, golden


# -- rule identity and documentation ------------------------------------------------------------

EXPECTED_RULES = [
    ("AOTI001", "empty-index-bound", Severity.ERROR),
    ("AOTI002", "unenforced-lower-bound", Severity.INFO),
    ("AOTI003", "index-exceeds-constant-bound", Severity.ERROR),
    ("AOTI004", "division-by-dynamic-size", Severity.WARNING),
    ("AOTI005", "empty-reduction", Severity.WARNING),
    ("AOTI006", "target-device-mismatch", Severity.ERROR),
    ("AOTI007", "no-kernel-source", Severity.INFO),
    ("AOTI008", "unlinked-assertion", Severity.WARNING),
    ("AOTI009", "unparsed-member", Severity.WARNING),
    ("AOTI010", "compiled-range-narrower-than-declared", Severity.INFO),
    ("AOTI011", "unchecked-extern-call", Severity.WARNING),
    ("AOTI012", "unenforced-dim-equality", Severity.INFO),
    ("AOTI013", "read-past-constant", Severity.ERROR),
    ("AOTI014", "unenforced-divisibility", Severity.ERROR),
    ("AOTI015", "index-exceeds-dynamic-bound", Severity.ERROR),
    ("AOTI016", "data-dependent-size-check", Severity.INFO),
    ("AOTI017", "store-into-empty-buffer", Severity.ERROR),
    ("AOTI018", "read-from-empty-buffer", Severity.ERROR),
    ("AOTI019", "unchecked-input-layout", Severity.INFO),
    ("AOTI020", "unchecked-export-guard", Severity.ERROR),
    ("AOTI021", "adaptive-pool-traced-size", Severity.ERROR),
    ("AOTI022", "stride-from-traced-size", Severity.ERROR),
    ("AOTI023", "ceil-mode-pool-traced-rounding", Severity.ERROR),
]


def test_rule_table():
    assert [(r.code, r.name, r.severity) for r in all_rules()] == EXPECTED_RULES


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.name)
def test_rule_docs(rule):
    assert rule.summary() and not rule.summary().startswith("#")
    sections = rule.sections()
    assert list(sections) == list(DOC_SECTIONS)
    assert all(sections.values())


# -- hand-built models (values quoted from the real packages) ----------------------------------

WRAPPER = "pos_embedding.cpu/data/aotinductor/model/cvt3.wrapper.cpp"
KERNEL = "pos_embedding.cpu/data/aotinductor/model/cw5g.kernel.cpp"


def _pos_model(seq_max=None, declared_max=None, enforced="env", extent="s27", bound=512, parallel=True) -> Model:
    """pos_embedding on CPU: x [b, seq, 16]; `AOTI_TORCH_CHECK(tmp2 < 512L, "index out of bounds: tmp2 < 512L")`
    with tmp2 = x1 ranging over [0, ks1), ks1 = s27 = arg1_1_size[1]. `parallel`: the check runs inside
    an OpenMP region (GPT-2's), so a failure aborts the process where eager raises; without it the
    check raises as eager does and every finding is an info."""
    x = Input(0, "arg1_1", [Dim(0, "s77", None, 2, None, enforced),
                            Dim(1, "s27", None, 2, seq_max, enforced, declared_max=declared_max),
                            Dim(2, None, 16, enforced=enforced)], dtype="float32")
    model = Model("model", device="cpu", wrapper_path=WRAPPER, inputs=[x])
    model.symbols = {"s77": Symbol("s77", "s77", DimRef(0, 0), Location(WRAPPER, 834, 5)),
                     "s27": Symbol("s27", "s27", DimRef(0, 1), Location(WRAPPER, 835, 5))}
    model.launches = [Launch("cpp_fused_add_arange_embedding_0", ("arg1_1", "pe_weight", "buf0", "s77", "s27"),
                             Location(WRAPPER, 844, 5))]
    model.assertions = [Assertion("cpp_fused_add_arange_embedding_0", f"index out of bounds: tmp2 < {bound}L",
                                  Location(KERNEL, 27, 29), index_var="tmp2", lower=None, bound=f"{bound}L",
                                  bound_expr=str(bound), bound_value=bound, index_extent=extent,
                                  index_extent_sources=(DimRef(0, 1),) if extent else (), parallel=parallel)]
    return model


def _run(model: Model, rule: str, **ctx) -> list:
    rules = [r for r in all_rules() if r.name == rule]
    return run_rules(Package("pkg.pt2", [model]), rules, Context(**ctx))


def test_extent_max_equal_to_bound_is_clean_when_always_checked():
    assert _run(_pos_model(seq_max=512, enforced="always"), "index-exceeds-constant-bound") == []
    # the tighter of the two wins either way
    assert _run(_pos_model(seq_max=400, declared_max=1000, enforced="always"), "index-exceeds-constant-bound") == []


def test_extent_max_equal_to_bound_checked_only_with_the_variable_is_warning():
    """GPT-2's 128-row position table: nothing stops 513 by default."""
    for model in (_pos_model(seq_max=512), _pos_model(seq_max=400, declared_max=1000)):
        (f,) = _run(model, "index-exceeds-constant-bound")
        assert f.severity == Severity.WARNING and f.witness == "arg1_1.shape = (3, 513, 16)", f
        assert "AOTI_RUNTIME_CHECK_INPUTS=1" in f.detail and "AOTI_RUNTIME_CHECK_INPUTS=1" in f.fix
        assert f.key == "extent-unenforced:in0.d1>512;kernel:cpp_fused_add_arange_embedding_0"


def test_extent_declared_max_equal_to_bound_never_checked_is_error():
    (f,) = _run(_pos_model(seq_max=None, declared_max=512), "index-exceeds-constant-bound")
    assert f.severity == Severity.ERROR and f.witness == "arg1_1.shape = (3, 513, 16)"
    assert "nothing checks" in f.detail


def test_extent_compiled_max_above_bound_is_error():
    # Compiled for [2, 1000] with 512 rows: 513 is compiled for and fails, with the variable too.
    (f,) = _run(_pos_model(seq_max=1000), "index-exceeds-constant-bound")
    assert f.severity == Severity.ERROR
    assert f.witness == "arg1_1.shape = (3, 513, 16)"
    assert f.message_key == "index-exceeds-constant-bound.bounded"
    assert f.key == "extent:in0.d1>512;kernel:cpp_fused_add_arange_embedding_0"
    assert f.chain[-1] == "tmp2 reaches arg1_1.size(1) - 1; with arg1_1.size(1) = 513 that is 512 >= 512"


def test_extent_declared_max_above_bound_is_error():
    # Declared up to 1000, compiled unbounded: the compiled range reaches past the table too.
    (f,) = _run(_pos_model(seq_max=None, declared_max=1000), "index-exceeds-constant-bound")
    assert f.severity == Severity.ERROR and f.message_key == "index-exceeds-constant-bound.bounded"


def test_extent_unbounded_is_error():
    (f,) = _run(_pos_model(seq_max=None), "index-exceeds-constant-bound")
    assert f.severity == Severity.ERROR and f.message_key == "index-exceeds-constant-bound.unbounded"
    assert (f.input, f.dim, f.symbol, f.kernel) == (0, 1, "s27", "cpp_fused_add_arange_embedding_0")
    assert f.location == Location(KERNEL, 27, 29)
    assert f.witness == "arg1_1.shape = (3, 513, 16)"


def test_extent_int32_max_counts_as_unbounded():
    # CUDA packages record 2147483647 as the max of some dims (32-bit indexing), not a user bound.
    (f,) = _run(_pos_model(seq_max=2**31 - 1), "index-exceeds-constant-bound")
    assert f.severity == Severity.ERROR and f.message_key == "index-exceeds-constant-bound.unbounded"
    assert "2147483647" in f.detail   # the NO_BOUND["int32"] field names the limit


def test_extent_of_expression_solved_for_smallest_size():
    # An index over [0, 2*seq - 1): 2*seq - 1 > 512 first at seq = 257.
    (f,) = _run(_pos_model(extent="2*s27 - 1"), "index-exceeds-constant-bound")
    assert [s for _, s in W.parse_witness(f.witness)][0][1] == 257


def test_data_index_is_not_a_shape_error():
    # embedding: `0 <= tmp7 < 100L` over loaded values: index_extent None.
    assert _run(_pos_model(extent=None, bound=100), "index-exceeds-constant-bound") == []


def test_extent_over_unknown_symbol_is_skipped():
    assert _run(_pos_model(extent="u0"), "index-exceeds-constant-bound") == []


def _gather_model(enforced="env", min_=2, bound_expr="s77", duplicate=False, bound_value=None) -> Model:
    """gather_dyn on CPU: `AOTI_TORCH_CHECK((0 <= tmp7) & (tmp7 < ks1), "index out of bounds: 0 <= tmp7 < ks1")`,
    ks1 = s77 = arg0_1_size[0]; x [n, 8], idx [m]."""
    x = Input(0, "arg0_1", [Dim(0, "s77", None, min_, None, enforced), Dim(1, None, 8, enforced=enforced)],
              dtype="float32")
    idx = Input(1, "arg1_1", [Dim(0, "s95", None, min_, None, enforced)], dtype="int64")
    model = Model("model", device="cpu", wrapper_path="g/w.wrapper.cpp", inputs=[x, idx])
    model.symbols = {"s77": Symbol("s77", "s77", DimRef(0, 0), Location("g/w.wrapper.cpp", 692, 5)),
                     "s95": Symbol("s95", "s95", DimRef(1, 0), Location("g/w.wrapper.cpp", 694, 5))}
    model.launches = [Launch("cpp_fused_index_mul_0", ("arg1_1", "arg0_1", "buf0", "s95", "s77"),
                             Location("g/w.wrapper.cpp", 702, 5))]
    sources = () if bound_value is not None else (DimRef(0, 0),)
    a = dict(kernel="cpp_fused_index_mul_0", message="index out of bounds: 0 <= tmp7 < ks1", index_var="tmp7",
             lower=0, bound="ks1", bound_expr=bound_expr, bound_value=bound_value, bound_sources=sources,
             index_sources=(1,), chain=("values of input 1 (arg1_1) -> tmp7 in cpp_fused_index_mul_0",))
    model.assertions = [Assertion(location=Location("g/k.kernel.cpp", 27, 25), **a)]
    if duplicate:
        model.assertions.append(Assertion(location=Location("g/k.kernel.cpp", 61, 25), **a))
    return model


def test_empty_index_bound_env_gated():
    (f,) = _run(_gather_model(), "empty-index-bound")
    assert (f.input, f.dim, f.symbol) == (0, 0, "s77")
    assert f.witness == "arg0_1.shape = (0, 8), arg1_1.shape = (3,)"
    assert f.key == "bound:in0.d0;index:in1;kernel:cpp_fused_index_mul_0"
    assert f.chain[0] == "values of input 1 (arg1_1) -> tmp7 in cpp_fused_index_mul_0"
    assert f.chain[-2] == "with arg0_1.size(0) = 0 the bound is 0: no index satisfies `tmp7 < 0`"
    assert "RuntimeError" in f.detail
    # idx's values index x: at x empty eager raises IndexError as the package raises RuntimeError.
    assert f.severity == Severity.INFO and f.chain[-1].startswith("eager rejects this input too")
    model = _gather_model()
    model.assertions[0].parallel = True   # inside an OpenMP region: the process aborts where eager raises
    (f,) = _run(model, "empty-index-bound")
    assert f.severity == Severity.ERROR and not f.message_fields.get("eager_rejects")


def test_empty_index_bound_unchecked():
    (f,) = _run(_gather_model(enforced="none"), "empty-index-bound")
    assert "not checked at run time" in f.detail
    assert "AOTI_RUNTIME_CHECK_INPUTS" not in f.fix  # there is no check to turn on
    (f,) = _run(_gather_model(), "empty-index-bound")
    assert "AOTI_RUNTIME_CHECK_INPUTS=1" in f.fix


def test_empty_index_bound_always_checked_is_clean():
    assert _run(_gather_model(enforced="always"), "empty-index-bound") == []


def test_empty_index_bound_always_checked_but_min_zero():
    (f,) = _run(_gather_model(enforced="always", min_=0), "empty-index-bound")
    assert "AOTI_RUNTIME_CHECK_INPUTS" not in f.fix  # the always-on check admits 0


def test_bound_that_stays_positive_is_clean():
    assert _run(_gather_model(bound_expr="s77 + 1"), "empty-index-bound") == []


def test_product_bound_zero_by_either_dim():
    model = _gather_model(bound_expr="8*s77")
    (f,) = _run(model, "empty-index-bound")
    assert f.witness == "arg0_1.shape = (0, 8), arg1_1.shape = (3,)"


def test_constant_bound_is_not_empty_index_bound():
    assert _run(_gather_model(bound_expr="10", bound_value=10), "empty-index-bound") == []


def test_duplicate_assertions_reported_once_at_first_location():
    (f,) = _run(_gather_model(duplicate=True), "empty-index-bound")
    assert f.location.line == 27


def test_index_input_dim_is_never_zeroed():
    # A bound over the index input's own size (`idx[i] < len(idx)`): zeroing it empties the index.
    model = _gather_model(bound_expr="s95")
    model.assertions[0].bound_sources = (DimRef(1, 0),)
    assert _run(model, "empty-index-bound") == []


def test_index_ranging_over_the_bound_itself_is_clean():
    # `y0 < ks0` with y0 over [0, s77) and ks0 = s77: an empty dim means no index at all.
    model = _gather_model()
    model.assertions[0].index_sources = ()
    model.assertions[0].index_extent = "s77"
    assert _run(model, "empty-index-bound") == []
    # ... but an index over another dim's range does fail when the bound is empty.
    model.assertions[0].index_extent = "s95"
    (f,) = _run(model, "empty-index-bound")
    assert f.witness == "arg0_1.shape = (0, 8), arg1_1.shape = (3,)"


def test_tied_dims_follow_the_assignment():
    # idx [m] and y [m, 8] share m: when the package says so (the same symbol), the witness keeps
    # them equal; and a bound dim tied to the index input is never zeroed (it would empty the index).
    model = _gather_model()
    model.inputs.append(Input(2, "arg2_1", [Dim(0, "s95", None, 2, None, "env"), Dim(1, None, 8, enforced="env")]))
    assert W.witness_shapes(model, {DimRef(1, 0): 5}) == [(3, 8), (5,), (5, 8)]
    model.inputs[0].dims[0].symbol = "s95"  # x's rows tied to idx's length
    model.symbols.pop("s77")
    model.assertions[0].bound_expr = "s95"
    assert _run(model, "empty-index-bound") == []


def test_user_names_in_witness_and_fix():
    model = _gather_model()
    model.inputs[0].user_name, model.inputs[1].user_name = "x", "idx"
    (f,) = _run(model, "empty-index-bound")
    assert f.witness == "x.shape = (0, 8), idx.shape = (3,)"
    assert "`if x.shape[0] == 0: ...`" in f.fix
    assert "x.shape[0] (input 0 dim 0)" in f.detail


def test_unenforced_lower_bound():
    (f,) = _run(_gather_model(), "unenforced-lower-bound")   # one finding per model, every input in it
    assert (f.input, f.dim, f.symbol, f.severity) == (0, 0, "s77", Severity.INFO)
    assert [(d.input, d.dim, d.witness) for d in f.dims] == [
        (0, 0, "arg0_1.shape = (1, 8), arg1_1.shape = (3,)"), (1, 0, "arg0_1.shape = (3, 8), arg1_1.shape = (1,)")]
    assert "cpp_fused_index_mul_0" in f.detail and "arg1_1.size(0) (input 1 dim 0" in f.detail
    assert f.location == Location("g/w.wrapper.cpp", 692, 5)
    assert f.key == "lower:in0.d0>=2;lower:in1.d0>=2"
    assert _run(_gather_model(enforced="always"), "unenforced-lower-bound") == []
    assert _run(_gather_model(min_=0), "unenforced-lower-bound") == []


def test_unenforced_lower_bound_skips_dims_without_their_own_symbol():
    # lifted_params: y [m, 8] is read as `assert_size_stride(arg6_1, {s17, 8L}, ...)`; its dim 0 has
    # no symbol of its own (it equals idx's s17), and is reported through idx's dim only.
    model = _gather_model()
    model.inputs.append(Input(2, "arg2_1", [Dim(0, None, None, 2, None, "env"), Dim(1, None, 8, enforced="env")]))
    (f,) = _run(model, "unenforced-lower-bound")
    assert [(d.input, d.dim) for d in f.dims] == [(0, 0), (1, 0)]


def test_unenforced_lower_bound_kernels_through_composite_symbols():
    # index_select_2d on CUDA launches with `triton_poi_..._xnumel` = s77*s95.
    model = _gather_model()
    model.symbols["k_xnumel"] = Symbol("k_xnumel", "s77 * s95", None, Location("g/w.wrapper.cpp", 700, 5))
    model.launches = [Launch("triton_k", ("arg1_1", "arg0_1", "buf0", "k_xnumel", "this", "stream"),
                             Location("g/w.wrapper.cpp", 702, 5))]
    model.assertions = []
    (f,) = _run(model, "unenforced-lower-bound")
    assert "triton_k" in f.detail and len(f.dims) == 2


def _reduce_model(enforced="env", op="max", integer=False, in_wrapper=False) -> Model:
    """empty_reduce on CUDA: `tmp7 = ks0.to(tl.float32)`, mean = tmp5 / tmp7; max over r0 < ks0."""
    x = Input(0, "arg0_1", [Dim(0, "s77", None, 2, None, enforced), Dim(1, None, 5, enforced=enforced)])
    model = Model("model", device="cuda", wrapper_path="e/w.wrapper.cpp", inputs=[x])
    model.symbols = {"s77": Symbol("s77", "s77", DimRef(0, 0), Location("e/w.wrapper.cpp", 799, 5))}
    model.divisions = [Division("triton_red_fused_add_amax_mean_0", "tmp7", "s77", (DimRef(0, 0),),
                                Location("e/w.wrapper.cpp", 667, 17), integer=integer, in_wrapper=in_wrapper)]
    model.reductions = [Reduction("triton_red_fused_add_amax_mean_0", op, "s77", (DimRef(0, 0),),
                                  Location("e/w.wrapper.cpp", 663, 16))]
    return model


def test_division_and_reduction():
    (d,) = _run(_reduce_model(), "division-by-dynamic-size")
    assert d.witness == "arg0_1.shape = (0, 5)" and "NaN" in d.detail and d.severity == Severity.WARNING
    (r,) = _run(_reduce_model(), "empty-reduction")
    assert r.witness == "arg0_1.shape = (0, 5)" and "-inf" in r.detail
    assert r.key == "reduce:max:in0.d0;kernel:triton_red_fused_add_amax_mean_0"


def test_integer_division_in_wrapper_variant():
    (d,) = _run(_reduce_model(integer=True, in_wrapper=True), "division-by-dynamic-size")
    assert "SIGFPE" in d.detail and d.kernel is None


def test_division_behind_a_tripped_index_assertion_is_not_reported():
    # interp_gather: `0 <= tmp10 < trunc(0.12*ks3)` fires for t = 0 before `ks3 / (0.12*ks3)` is used.
    model = _reduce_model()
    idx = Input(1, "arg1_1", [Dim(0, "s95", None, 2, None, "env")], dtype="int64")
    model.inputs.append(idx)
    model.symbols["s95"] = Symbol("s95", "s95", DimRef(1, 0))
    model.assertions = [Assertion("k", "index out of bounds: 0 <= tmp10 < ks0", Location("e/k.cpp", 54, 25),
                                  index_var="tmp10", lower=0, bound="ks0", bound_expr="trunc(0.12*s77)",
                                  bound_sources=(DimRef(0, 0),), index_sources=(1,))]
    assert _run(model, "division-by-dynamic-size") == []
    assert _run(model, "empty-reduction") == []
    assert len(_run(model, "empty-index-bound")) == 1
    # ... but when the index input is the empty one, the assertion has nothing to check.
    model.assertions[0].index_sources = (0,)
    assert len(_run(model, "division-by-dynamic-size")) == 1


def test_division_and_reduction_clean_when_always_checked():
    assert _run(_reduce_model(enforced="always"), "division-by-dynamic-size") == []
    assert _run(_reduce_model(enforced="always"), "empty-reduction") == []


@pytest.mark.parametrize("op,reported", [("max", True), ("min", True), ("argmax", True), ("argmin", True),
                                         ("prod", False), ("sum", False)])
def test_reduction_ops(op, reported):
    assert bool(_run(_reduce_model(op=op), "empty-reduction")) == reported


def test_reduction_over_static_extent_is_clean():
    model = _reduce_model()
    model.reductions[0] = Reduction("k", "max", "5", (), Location("e/w.wrapper.cpp", 663, 16))
    assert _run(model, "empty-reduction") == []


@pytest.mark.parametrize("package,target,bad", [
    ("90", "90", False), ("90", "90a", False), ("80", "86", False), ("86", "80", True),
    ("90", "80", True), ("80", "90", True), ("90a", "90", False), ("90a", "91", True), ("100", "100a", False),
    ("100", "90", True), ("8.6", "sm_86", False),
])
def test_target_sm(package, target, bad):
    model = _reduce_model()
    model.metadata = {"AOTI_DEVICE_KEY": "cuda", "AOTI_COMPUTE_CAPABILITY": package}
    found = _run(model, "target-device-mismatch", target_device="cuda", target_sm=target)
    assert bool(found) == bad, found


def test_target_device_quiet_without_target():
    model = _reduce_model()
    model.metadata = {"AOTI_DEVICE_KEY": "cuda", "AOTI_COMPUTE_CAPABILITY": "90"}
    assert _run(model, "target-device-mismatch") == []
    (f,) = _run(model, "target-device-mismatch", target_device="cpu")
    assert f.key == "device:cuda->cpu" and f.location == Location("e/w.wrapper.cpp")


def test_problems_become_findings():
    model = _reduce_model()
    model.problems = [Problem("kernel triton_x has no embedded Triton source", Location("e/w.wrapper.cpp", 10, 1),
                              kind="no-source"),
                      Problem("3 syntax error(s) inside run_impl", Location("e/w.wrapper.cpp", 700, 1), kind="parse"),
                      Problem("metadata is not valid JSON", Location("e/m.json"), kind="unreadable"),
                      Problem("too deep", None, kind="limit")]
    package = Package("pkg.pt2", [model], problems=[Problem("no wrapper source", Location("pkg/x"), kind="no-source")])
    found = run_rules(package, all_rules(), Context())
    by_rule = {}
    for f in found:
        by_rule.setdefault(f.rule, []).append(f)
    assert len(by_rule["no-kernel-source"]) == 2
    assert {f.severity for f in by_rule["no-kernel-source"]} == {Severity.INFO}
    assert len(by_rule["unparsed-member"]) == 3
    assert any(f.location == Location("e/w.wrapper.cpp") for f in by_rule["unparsed-member"])  # no location


def test_unlinked_assertion():
    model = _gather_model()
    model.assertions[0].linked = False
    model.assertions[0].unlinked_reason = "the bound could not be mapped to a launch argument"
    (f,) = _run(model, "unlinked-assertion")
    assert f.message_key == "unlinked-assertion" and f.kernel == "cpp_fused_index_mul_0"
    assert _run(model, "empty-index-bound") == []


# -- witness construction -----------------------------------------------------------------------

def test_valid_size_clips_to_range():
    assert W.valid_size(Dim(0, value=8)) == 8
    assert W.valid_size(Dim(0, "s0", None, 2, None)) == 3
    assert W.valid_size(Dim(0, "s0", None, 5, None)) == 5
    assert W.valid_size(Dim(0, "s0", None, 0, 2)) == 2
    assert W.valid_size(Dim(0, "s0", None, 2, None, declared_max=2)) == 2
    assert W.valid_size(Dim(0)) == 3


def test_witness_shapes_and_text_roundtrip():
    model = _gather_model()
    shapes = W.witness_shapes(model, {DimRef(0, 0): 0})
    assert shapes == [(0, 8), (3,)]
    text = W.format_witness(model, shapes)
    assert text == "arg0_1.shape = (0, 8), arg1_1.shape = (3,)"
    assert W.parse_witness(text) == [("arg0_1", (0, 8)), ("arg1_1", (3,))]
    assert W.parse_witness("x.shape = (), y.shape = (2, 3)") == [("x", ()), ("y", (2, 3))]


def test_smallest_exceeding():
    model = _pos_model(seq_max=None)
    ref = DimRef(0, 1)
    assert W.smallest_exceeding(model, "s27", ref, 512) == 513
    assert W.smallest_exceeding(model, "trunc(0.12*s27)", ref, 5) == 50   # trunc(0.12*50) = 6
    assert W.smallest_exceeding(model, "s27*s77", ref, 512) == 171        # s77 = 3: 3*171 = 513
    assert W.smallest_exceeding(_pos_model(seq_max=512), "s27", ref, 512) is None
    assert W.smallest_exceeding(model, "s27", DimRef(0, 2), 512) is None  # static dim


def test_interval_edges():
    ranges = W.dim_ranges(_pos_model(seq_max=512))
    assert intervals.evaluate_interval("s27", ranges)[1] == 512
    assert intervals.evaluate_interval("s27", W.dim_ranges(_pos_model()))[1] == float("inf")
    assert W.normalize_expr(_pos_model(), "s27*s77 - 1") == "in0.d1*in0.d0-1"
    assert W.display_expr(_pos_model(), "s27 - 1") == "arg1_1.size(1) - 1"


def test_can_be_zero():
    assert sizes.can_be_zero(Dim(0, "s0", None, 2, None, "env"))
    assert sizes.can_be_zero(Dim(0, "s0", None, 2, None, "none"))
    assert not sizes.can_be_zero(Dim(0, "s0", None, 2, None, "always"))
    assert sizes.can_be_zero(Dim(0, "s0", None, 0, None, "always"))
    assert not sizes.can_be_zero(Dim(0, None, 8))
    assert not sizes.can_be_zero(None)
    # The two cases the old predicates (witness.can_be_zero, why._accepts_zero) disagreed on:
    assert sizes.can_be_zero(Dim(0, None, 0))                    # a static 0 is always 0
    assert sizes.can_be_zero(Dim(0, "s0", None, None, None, "always"))  # checked, but no lower end


def test_accepts_and_min_possible():
    always = Dim(0, "s0", None, 2, 512, "always")
    assert [sizes.accepts(always, n) for n in (0, 1, 2, 512, 513)] == [False, False, True, True, False]
    gated = Dim(0, "s0", None, 2, 512, "env")
    assert all(sizes.accepts(gated, n) for n in (0, 1, 513)) and not sizes.accepts(gated, -1)
    assert sizes.accepts(Dim(0, None, 8), 8) and not sizes.accepts(Dim(0, None, 8), 7)
    assert [sizes.min_possible(d) for d in (always, gated, Dim(0, None, 8))] == [2, 0, 8]
    assert sizes.env_check_rejects_zero(gated) and not sizes.env_check_rejects_zero(always)


def test_enforcement_is_an_enum():
    dim = Dim(0, "s0", None, 2, None, "env")
    assert dim.enforced is Enforcement.ENV and dim.enforced == "env" and f"{dim.enforced}" == "env"
    assert json.dumps({"e": dim.enforced}) == '{"e": "env"}'
    with pytest.raises(ValueError):
        Dim(0, "s0", enforced="odd")
    with pytest.raises(ValueError):
        dim.tie_enforced = "sometimes"
    with pytest.raises(ValueError):
        Problem("x", kind="odd")


# -- robustness: any model the linker could produce, no exception ------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_EXPRS = st.sampled_from(["s0", "s1", "s0*s1", "s0 - 1", "s0 + 1", "trunc(0.12*s1)", "floordiv(s0, 2)", "s0 % s1",
                          "s0 / s1", "2*s0 - 1", "u0", "512", "0", "max(s0, s1)", "s0 - s1", "inf", "((", ""])
_DIMS = st.builds(lambda value, lo, span, enforced, dlo, dhi: (value, lo, None if span is None else lo + span,
                                                               enforced, dlo, dhi),
                  st.one_of(st.none(), st.integers(0, 8)), st.integers(0, 20),
                  st.one_of(st.none(), st.integers(-3, 2**31)), st.sampled_from(["env", "none", "always"]),
                  st.one_of(st.none(), st.integers(0, 3)), st.one_of(st.none(), st.integers(0, 600)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dims=st.lists(_DIMS, min_size=0, max_size=3), bound=_EXPRS, extent=st.one_of(st.none(), _EXPRS),
       divisor=_EXPRS, bound_value=st.one_of(st.none(), st.integers(-1, 1000)),
       index_sources=st.lists(st.integers(-1, 3), max_size=2), device=st.sampled_from(["cpu", "cuda", None, "x:1"]),
       sm=st.sampled_from([None, "80", "90a", "garbage", 90]), target_sm=st.sampled_from([None, "80", "90"]))
def test_rules_never_raise(dims, bound, extent, divisor, bound_value, index_sources, device, sm, target_sm):
    model = Model("m", device=device, metadata={"AOTI_COMPUTE_CAPABILITY": sm}, wrapper_path="w.cpp")
    model.inputs = [Input(0, "arg0_1", [Dim(i, f"s{i}", v, lo, hi, enf, dlo, dhi)
                                         for i, (v, lo, hi, enf, dlo, dhi) in enumerate(dims)]),
                    Input(1, "arg1_1", [Dim(0, None, 4)], dtype="int64")]
    model.symbols = {f"s{i}": Symbol(f"s{i}", f"s{i}", DimRef(0, i)) for i in range(len(dims))}
    refs = tuple(DimRef(0, i) for i in range(len(dims)))
    model.assertions = [Assertion("k", f"index out of bounds: tmp0 < {bound}", Location("k.cpp", 1, 1), "tmp0", None,
                                  bound, bound or None, bound_value, refs, tuple(index_sources), extent, refs)]
    model.divisions = [Division("k", "tmp1", divisor or None, refs, Location("k.cpp", 2, 1))]
    model.reductions = [Reduction("k", "max", divisor or None, refs, Location("k.cpp", 3, 1))]
    model.launches = [Launch("k", ("arg0_1", bound or "x", "this"), Location("w.cpp", 9, 1))]
    for f in run_rules(Package("p.pt2", [model]), all_rules(), Context(target_device=None, target_sm=target_sm)):
        assert f.message and f.code
        if f.witness:
            assert len(W.parse_witness(f.witness)) == len(model.inputs)


# --- compiled-range-narrower-than-declared (AOTI010) on real fixtures and their exported programs ---

def _declared_findings(name, device="cpu"):
    from analyzer.app import api as _api

    pkg = FIXTURES / f"{name}.{device}.stripped.pt2"
    ep = FIXTURES / f"{name}.ep.pt2"
    if not pkg.exists() or not ep.exists():
        pytest.skip(f"{pkg.name} or {ep.name} missing")
    result = _api.lint([pkg], _api.Options(exported_program=str(ep), select=("compiled-range-narrower-than-declared",)))
    return result.findings


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_declared_zero_min_but_compiled_for_two(device):
    findings = _declared_findings("gather_dyn", device)
    assert [(f.input, f.dim, f.code) for f in findings] == [(0, 0, "AOTI010"), (1, 0, "AOTI010")]
    first = findings[0]
    assert "x.shape[0]" in first.detail and "0, 1" in first.detail
    assert first.witness == "x.shape = (0, 8), idx.shape = (3,)"


def test_no_declared_range_finding_without_an_exported_program():
    from analyzer.app import api as _api

    result = _api.lint([FIXTURES / "gather_dyn.cpu.stripped.pt2"],
                       _api.Options(select=("compiled-range-narrower-than-declared",)))
    assert result.findings == []


def test_declared_min_at_compiled_min_is_quiet():
    # topk_index declares Dim("s", min=3) for a dim compiled for >= 3: only the other dims report.
    findings = _declared_findings("topk_index")
    assert all((f.input, f.dim) != (0, 1) for f in findings)


def test_declared_range_merged_into_lower_bound():
    """With both rules, the declared-but-not-compiled sizes below the minimum are said by
    unenforced-lower-bound (one finding per input); run alone, compiled-range-narrower-than-declared
    still says them (test_declared_zero_min_but_compiled_for_two)."""
    from analyzer.app import api as _api

    pkg, ep = FIXTURES / "gather_dyn.cpu.stripped.pt2", FIXTURES / "gather_dyn.ep.pt2"
    found = _api.lint([pkg], _api.Options(exported_program=str(ep))).findings
    assert not [f for f in found if f.code == "AOTI010"]
    (lower,) = [f for f in found if f.code == "AOTI002"]
    assert (lower.input, lower.dim, lower.key) == (0, 0, "lower:in0.d0>=2;lower:in1.d0>=2")
    assert lower.detail.count("declare") == 2   # each dim's declared range, said once
    # Witnesses: below the minimum (the primary) and 0, each rejected by the generated guard.
    assert lower.witnesses[:2] == ("x.shape = (1, 8), idx.shape = (3,)", "x.shape = (0, 8), idx.shape = (3,)")


def test_lower_bound_one_finding_per_model():
    model = _gather_model()
    model.inputs[0].dims[1] = Dim(1, "s27", None, 2, None, "env")
    model.symbols["s27"] = Symbol("s27", "s27", DimRef(0, 1), Location("g/w.wrapper.cpp", 693, 5))
    (first,) = _run(model, "unenforced-lower-bound")
    assert (first.input, first.dim) == (0, 0)
    assert first.key == "lower:in0.d0>=2;lower:in0.d1>=2;lower:in1.d0>=2"
    assert first.fix_key == "unenforced-lower-bound" and "`arg0_1.shape[1] >= 2 and arg1_1.shape[0] >= 2`" in first.fix
    assert [W.parse_witness(w)[0][1] for w in first.witnesses][:4] == [(1, 3), (0, 3), (3, 1), (3, 0)]
    assert "arg0_1.size(1) (input 0 dim 1" in first.detail
    assert first.message_fields["more_dims"] == 2 and first.message.startswith("input 0 dim 0 (and 2 more dims) < 2")


# --- witnesses outside the declared contract ---------------------------------------

def _with_exported(name: str, code: str) -> list:
    from analyzer.app import api as _api

    pkg, ep = FIXTURES / f"{name}.cpu.stripped.pt2", FIXTURES / f"{name}.ep.pt2"
    return [f for f in _api.lint([pkg], _api.Options(exported_program=str(ep))).findings if f.code == code]


def test_outside_contract_lowers_one_severity():
    # interp_gather: x.shape[2] declared [17, inf); AOTI001's witness empties it (0). (Its index values
    # are idx's: eager rejects the witness too, so the finding is an info either way.)
    (f,) = _with_exported("interp_gather", "AOTI001")
    assert (f.severity, f.input, f.dim) == (Severity.INFO, 0, 2)
    assert f.chain[-2].startswith("outside the contract: x.shape[2] = 0, declared [17, inf)")
    assert f.message_key == "empty-index-bound.expr"  # the key survives the note
    (plain,) = [f for f in api.lint([FIXTURES / "interp_gather.cpu.stripped.pt2"]).findings if f.code == "AOTI001"]
    assert plain.severity == Severity.INFO and not any("outside the contract" in c for c in plain.chain)
    # The severity policy itself: error -> warning outside the contract, warning -> info.
    from analyzer.query.severity import Consequence, severity_of
    assert severity_of(Consequence.FAILS, op="x", outside_contract=True) == Severity.WARNING
    assert severity_of(Consequence.SILENT, outside_contract=True) == Severity.INFO
    assert severity_of(Consequence.FAILS) == Severity.WARNING   # names no op: a warning at most


def test_outside_contract_only_some_witnesses_keeps_severity():
    # topk_index: scores.shape[1] declared [3, inf) (its witnesses 2 and 0 are outside), scores.shape[0]
    # declared [0, inf): one finding for the model, an info (no op known to fail), the outside witnesses named.
    lower = [f for f in _with_exported("topk_index", "AOTI002") if f.input == 0]
    (f,) = lower
    assert (f.severity, f.dim) == (Severity.INFO, 0)
    outside = [c for c in f.chain if c.startswith("outside the contract:")]
    assert len(outside) == 2 and all("scores.shape[1] = " in c for c in outside)


def test_outside_contract_hand_built():
    model = _gather_model()
    model.assertions[0].parallel = True    # the check aborts the process: not as eager's IndexError
    model.inputs[0].dims[0].declared_min = 2                      # x: the caller promised n >= 2
    model.inputs[1].dims[0].declared_min = 0
    found = {(f.code, f.input): f for f in run_rules(Package("pkg.pt2", [model]), all_rules(), Context())}
    assert found[("AOTI001", 0)].severity == Severity.WARNING     # error -> warning
    # One finding, an assumption (info), led by idx (its sizes 0 and 1 are declared), x's after.
    assert found[("AOTI002", 1)].severity == Severity.INFO
    assert ("AOTI002", 0) not in found
    assert [(w, W.outside_declared(model, w)) for w in found[("AOTI002", 1)].witnesses][2:] == [
        ("arg0_1.shape = (1, 8), arg1_1.shape = (3,)", [(DimRef(0, 0), 1)]),
        ("arg0_1.shape = (0, 8), arg1_1.shape = (3,)", [(DimRef(0, 0), 0)])]


# -- the composed prose, end to end ---------------------------------------------------------------

# Packages whose findings span most rules (index bounds, constant reads, lower bounds, divisions,
# reductions, layouts, derived dims, shim calls), with the user's names from the exported program
# where there is one: their `--format full` text pins the sentences as composed, the one place the
# check goldens' templates and fields are put together.
FULL_TEXT = ("fixtures/launches/enc_dec_pos.cpu.stripped.pt2", "fixtures/stress/pkgs/cross_entropy.cpu.stripped.pt2",
             "fixtures/stress/pkgs/derived_dims.cpu.stripped.pt2", "fixtures/empty_reduce.cpu.stripped.pt2",
             "fixtures/real/gpt2.cpu.stripped.pt2")


@pytest.mark.parametrize("package", FULL_TEXT, ids=lambda p: Path(p).name.split(".")[0])
def test_full_text(package, monkeypatch):
    from analyzer.report import render

    monkeypatch.chdir(REPO)
    beside = Path(package).with_name(Path(package).name.split(".")[0] + ".ep.pt2")
    options = api.Options(select=("ALL",), exported_program=str(beside) if beside.exists() else None)
    result = api.lint(package, options)
    text = render("full", result.findings, packages=result.packages)
    compare_golden(text, HERE / "golden" / "full" / f"{Path(package).name.split('.')[0]}.txt")
