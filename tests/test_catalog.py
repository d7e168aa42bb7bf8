"""The message catalog (`rules.catalog()`: the rules' own templates and the shared tables of
analyzer/core/messages.py): every template is used, every field of every template is filled with
something at least once, every key follows the one grammar and belongs to its rule (or is shared),
and the catalog is built once, frozen, the same whatever the order.

A workload of real packages (each rule's INVALID cases), hand-built models for the variants no
real package shows (integer division, every reduction op, every compute-capability mismatch) and
`why` on each failure form is run with the catalog's tracing on."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

import test_rules as TR
from test_ceil_pool import ceil_branch_model
import test_why as TW
from analyzer.app import api
from analyzer.core.findings import Location, Severity
from analyzer.core.dimtext import range_text
from analyzer.core.model import Assertion, Dim, DimRef, Input, Launch, Model, Package, Problem, ProblemKind, Symbol
from analyzer.report.inspect import render_text as inspect_text
from analyzer.report.why import render_text
from analyzer.query import headline
from analyzer.core import messages
from analyzer.query.source import Source
from analyzer.rules import Case, all_rules, build_catalog, catalog, run_rules
from analyzer.explain.why import CheckKind, explain_failure
from analyzer.report import markdown, render
from conftest import COMPILER_NAME, FIXTURES, REPO, SHARED_PT2

LOGS = REPO / "tests" / "data"
STRESS = REPO / "fixtures" / "stress"


def _real(case: Case, rule) -> None:
    path = REPO / case.package
    if not path.exists():
        pytest.skip(f"{path} missing")
    exported = None if case.exported is None else str(REPO / case.exported)
    options = api.Options(select=(rule.name,), target_device=case.target_device, target_sm=case.target_sm,
                          exported_program=exported, runtime_checks=case.runtime_checks)
    api.lint(str(path), options)
    # With the exported program beside the package too: headlines then name the user's module.
    beside = path.with_name(path.name.split(".")[0] + ".ep.pt2")
    if exported is None and beside.exists() and "versions" not in path.parts:
        api.lint(str(path), replace(options, exported_program=str(beside)))


def _with_source(model: Model, findings) -> None:
    """Headlines of hand-built findings as if an exported program named their module."""
    src = Source(file="/home/u/model.py", line=3, code="y = x % n", module="block.mod",
                 module_class="torch.nn.Module", op="aten.remainder.Tensor", node="remainder")
    for f in findings:
        headline.headline(model, replace(f, source=src), catalog()["HEADLINES"])


def _hand_built() -> None:
    run = TR._run
    for integer, in_wrapper in ((False, False), (True, False), (True, True)):
        model = TR._reduce_model(integer=integer, in_wrapper=in_wrapper)
        _with_source(model, run(model, "division-by-dynamic-size"))
    for op in ("max", "min", "argmax", "argmin"):
        run(TR._reduce_model(op=op), "empty-reduction")
    for package, target in (("90", "80"), ("86", "80"), ("90a", "91")):
        model = TR._reduce_model()
        model.metadata = {"AOTI_DEVICE_KEY": "cuda", "AOTI_COMPUTE_CAPABILITY": package}
        run(model, "target-device-mismatch", target_device="cuda", target_sm=target)
    # Effects by device, the 32-bit limit, where a max comes from, how a range is enforced.
    for device in ("cuda", "cpu", None):
        model = TR._gather_model()
        model.device = device
        run(model, "empty-index-bound")
    run(TR._pos_model(seq_max=2**31 - 1), "index-exceeds-constant-bound")
    for enforced in ("env", "none", "always"):
        run(TR._pos_model(seq_max=1000, enforced=enforced), "index-exceeds-constant-bound")
        model = TR._gather_model(enforced=enforced)
        model.inputs[0].dims[0].declared_min = 0
        run(model, "compiled-range-narrower-than-declared")
        model.inputs[0].dims[0].tied_expr, model.inputs[0].dims[0].tie_enforced = "s95", enforced
        run(model, "unenforced-dim-equality")
        run(model, "unenforced-lower-bound")
    run(TR._pos_model(seq_max=1000, declared_max=1000), "index-exceeds-constant-bound")
    run(TR._gather_model(min_=1), "unenforced-lower-bound")  # compiled for >= 1: only size 0 is below
    # A bound `nb - 1` witnessed at nb = 1 where no check rejects 1, even with the variable.
    (csr,) = api.load(FIXTURES / "stranger19/segment_csr.cpu.stripped.pt2").models
    csr.inputs[1].dims[0].enforced = "none"
    (f,) = run(csr, "empty-index-bound")
    assert f.fix_key == "empty-index-bound.at-size-unchecked", f.fix_key
    # A ceil-mode pooling traced where its last window's correction was decided (no real package).
    run(ceil_branch_model(), "ceil-mode-pool-traced-rounding")
    # One finding per model: led by a dim no kernel reads only when no dim of the model is read.
    model = TR._gather_model()
    model.assertions.clear()
    model.launches.clear()
    (f,) = run(model, "unenforced-lower-bound")
    assert f.message_key == "unenforced-lower-bound.no-kernels"
    # An unchecked shim call whose tensors are not linked to input sizes: the message without a witness.
    model = TR._gather_model()
    model.launches.append(Launch("aoti_torch_cpu_x", ("arg1_1",), Location("w.cpp", 3, 1), extern=True,
                                 error_checked=False))
    (f,) = run(model, "unchecked-extern-call")
    assert f.message_key == "unchecked-extern-call" and f.witness is None
    model = TR._gather_model()
    model.assertions[0].linked = False
    _with_source(model, run(model, "unlinked-assertion"))
    # A bound that only both dims together make 0 (`s77 + s88`).
    model = TR._gather_model(bound_expr="s77 + s88")
    model.inputs.append(Input(2, "arg2_1", [Dim(0, "s88", None, 2, None, "env")]))
    model.symbols["s88"] = Symbol("s88", "s88", DimRef(2, 0))
    model.assertions[0].bound_sources = (DimRef(0, 0), DimRef(2, 0))
    (f,) = run(model, "empty-index-bound")
    assert f.message_key == "empty-index-bound.expr" and (f.input, f.dim) == (0, 0)
    # Ranges in words, as `inspect` shows them.
    for enforced in ("env", "none", "always"):
        inspect_text(Package("p.pt2", [TR._gather_model(enforced=enforced)]))
    range_text(None), range_text(Dim(0, value=8))


def _why() -> None:
    model = TW._gather_model("cpu")
    pkg = TW._package(model)
    texts = [
        TW._log(name) for name in ("cpu-gather-empty.log", "cpu-check-too-small.log", "cpu-check-dim.log",
                                   "cpu-check-stride.log", "cpu-check-dtype.log")
    ] + [
        "input_handles[1]: dim value is too large at 0, expected to be <= 64, but got: 65",
        "input_handles[0]: unmatched device type, expected: 11(cuda), but got: 0",
        "input_handles[0]: dim value is too small at 0, expected it to be >= 1, but got: 0",
        "expected size 3==4, stride 1==1 at dim=0",
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
        "terminate called recursively",
        "CUDA driver error: The specified pointer resides on host memory and is not registered",
        "unrelated",
        "",
    ]
    for text in texts:
        render_text(explain_failure(pkg, text))
    # A derived dim's assert_size_stride (`801==800`: not a multiple of 20).
    render_text(explain_failure(api.load(FIXTURES / "real" / "wav2vec2_fe.cpu.stripped.pt2"),
                                "expected size 2==2, stride 801==800 at dim=0; expected size 801==800, stride 1==1 at dim=1"))
    # run_impl's check of a data-dependent size: a count an op returns (nms), a value read by `.item()`.
    render_text(explain_failure(api.load(FIXTURES / "stranger2" / "tv_nms_iou.cpu.stripped.pt2"),
                                "RuntimeError: Expected u0 >= 2 but received 1"))
    render_text(explain_failure(api.load(FIXTURES / "stress" / "pkgs" / "item_arange.cpu.stripped.pt2"),
                                "RuntimeError: Expected u0 <= 64 but received 65"))
    # A size run_impl ties to an input dim (bincount's, `Expected Eq(s77, u2)`) past its bound.
    render_text(explain_failure(api.load(FIXTURES / "stranger7" / "sage_mean.cpu.stripped.pt2", api.Options(
        exported_program=str(FIXTURES / "stranger7" / "sage_mean.ep.pt2"))),
                                "RuntimeError: Expected u2 <= 1024 but received 1025"))
    # A position computed from an input's values (left-padded rows) past its 64-row table.
    render_text(explain_failure(api.load(FIXTURES / "stranger8" / "lpad_pos.cpu.stripped.pt2"),
                                "what():  index out of bounds: 0 <= tmp15 < 64L"))
    # run_impl's check of a size it divides by (BLOOM's seq).
    render_text(explain_failure(api.load(FIXTURES / "stranger3" / "bloom.cpu.stripped.pt2"),
                                "RuntimeError: Integer floor division by zero"))
    cuda = TW._package(TW._gather_model("cuda"))
    render_text(explain_failure(cuda, "CUDA error: device-side assert triggered"))
    render_text(explain_failure(TW._package(Model(name="m", device="cuda")), "index out of bounds: 0 <= t < ks0"))
    # Index causes: constant bounds over values and extents, unlinked, several index inputs, a
    # bound that stays positive.
    x = Input(0, "arg1_1", [Dim(0, "s77", min=2, enforced="env"),
                            Dim(1, "s27", min=2, max=1000, enforced="env", declared_min=0, declared_max=1000)],
              user_name="x")
    ext = Assertion(kernel="k", message="index out of bounds: tmp2 < 512L", location=Location("k.cpp", 1, 1),
                    index_var="tmp2", bound="512L", bound_expr="512", bound_value=512, index_extent="s27",
                    index_extent_sources=(DimRef(0, 1),))
    two = Assertion(kernel="k", message="index out of bounds: tmp3 < 9", location=Location("k.cpp", 2, 1),
                    index_var="tmp3", bound="9", bound_expr="9", bound_value=9, index_extent="s27*s77",
                    index_extent_sources=(DimRef(0, 1), DimRef(0, 0)))
    val = Assertion(kernel="k", message="index out of bounds: 0 <= tmp4 < 100", location=Location("k.cpp", 3, 1),
                    index_var="tmp4", lower=0, bound="100", bound_expr="100", bound_value=100, index_sources=(0,))
    val1 = Assertion(kernel="k", message="index out of bounds: tmp5 < 100", location=Location("k.cpp", 4, 1),
                     index_var="tmp5", bound="100", bound_expr="100", bound_value=100, index_sources=(0,))
    lost = Assertion(kernel="k", message="index out of bounds: tmp6 < 7", location=Location("k.cpp", 5, 1),
                     index_var="tmp6", bound="7", bound_expr="7", bound_value=7)
    unl = Assertion(kernel="k", message="index out of bounds: tmp8 < zz1", location=Location("k.cpp", 6, 1),
                    index_var="tmp8", bound="zz1", linked=False)
    pos = Assertion(kernel="k", message="index out of bounds: 0 <= tmp9 < ks0 + 1", location=Location("k.cpp", 7, 1),
                    index_var="tmp9", lower=0, bound="ks0 + 1", bound_expr="s77 + 1", bound_sources=(DimRef(0, 0),))
    pos2 = Assertion(kernel="k", message="index out of bounds: tmp10 < ks0 + 2", location=Location("k.cpp", 8, 1),
                     index_var="tmp10", bound="ks0 + 2", bound_expr="s77 + 2", bound_sources=(DimRef(0, 0),),
                     index_sources=(0,))
    pos3 = Assertion(kernel="k", message="index out of bounds: tmp11 < ks0 + 3", location=Location("k.cpp", 9, 1),
                     index_var="tmp11", bound="ks0 + 3", bound_expr="s77 + 3", bound_sources=(DimRef(0, 0),))
    model = Model(name="model", device="cpu", inputs=[x], assertions=[ext, two, val, val1, lost, unl, pos, pos2, pos3])
    for a in model.assertions:
        explain_failure(Package(path="p.pt2", models=[model]), a.message)
    model.assertions[0].index_extent_sources = ()
    explain_failure(Package(path="p.pt2", models=[model]), ext.message)
    for name, log in (("embedding_bag", "embedding_bag.oob.log"), ("one_hot", "one_hot.oob.log")):
        path = STRESS / "pkgs" / f"{name}.cpu.stripped.pt2"
        if path.exists():
            render_text(explain_failure(api.load(path), (STRESS / "logs" / log).read_text()))
    shim = TW._gather_model("cpu")
    shim.launches.append(Launch("aoti_torch_cpu_x", ("buf0",), Location("w.cpp", 3, 1), extern=True))
    unchecked = TW._gather_model("cpu")  # an unchecked call's headline
    unchecked.launches.append(Launch("aoti_torch_cpu_x", ("arg1_1",), Location("w.cpp", 3, 1), extern=True,
                                     error_checked=False))
    _with_source(unchecked, run_rules(TW._package(unchecked), all_rules()))
    explain_failure(TW._package(shim), "Error: aoti_torch_cpu_x(buf0) API call failed at w.cpp, line 3")
    multi = TW._gather_model("cuda")
    multi.assertions[0].index_sources = (0, 1)
    explain_failure(TW._package(multi), multi.assertions[0].message)
    # the log's own call: values outside the bound it shows, and values inside it (ruled out)
    for call in ("f(torch.randn(6, 8), torch.full((3,), 9))", "f(torch.randn(6, 8), torch.tensor([1, 2]))"):
        explain_failure(TW._package(TW._gather_model("cuda")), f"{call}\n{multi.assertions[0].message}")
    pos = FIXTURES / "pos_embedding.cpu.stripped.pt2"
    for seq in (600, 100):  # an iteration range past its bound, and within it
        explain_failure(api.load(pos), f"f(torch.randn(2, {seq}, 16))\nError: index out of bounds: tmp2 < 512L")
    # no candidate, but the message is in a text member nothing links (layout.find_text)
    unlinked = explain_failure(TW._package(TW._gather_model("cpu")), "index out of bounds: i < 4")
    render_text(replace(unlinked, text_hits=(Location("extra.h", 4, 3),)))
    # check_lowerbound=False with an upper bound (checked only with the variable)
    assert "upper bound" in range_text(Dim(0, symbol="s0", min=2, max=100, enforced="env", lower_unchecked="disabled"))


def _undefined_index(tmp: Path) -> Path:
    """gather_dyn.cpu with its check over a temporary that nothing defines: the index is unknown."""
    src, dst = FIXTURES / "gather_dyn.cpu.stripped.pt2", tmp / "undefined_index.pt2"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            data = zin.read(name)
            zout.writestr(name, data.replace(b"tmp7 < ks1", b"tmp99 < ks1").replace(b"0 <= tmp7", b"0 <= tmp99")
                          if name.endswith(".kernel.cpp") else data)
    return dst


@pytest.fixture(scope="module")
def used(tmp_path_factory):
    messages.USED.clear()
    messages.TRACE = True
    try:
        for rule in all_rules():
            for case in rule.INVALID:
                if case.edit is None:
                    _real(case, rule)
        _hand_built()
        _why()
        if (SHARED_PT2 / "gather_dyn.cuda.pt2").exists():
            api.lint(str(SHARED_PT2 / "gather_dyn.cuda.pt2"))
        # Chains through an intermediate buffer (bucketize) and of an index that is neither data
        # nor an iteration range (pos_embedding_capped's one-sided check).
        for name in ("stress/pkgs/bucketize.cpu.stripped.pt2", "pos_embedding_capped.cpu.stripped.pt2"):
            api.load(FIXTURES / name)
        (model,) = api.load(_undefined_index(tmp_path_factory.mktemp("catalog"))).models
        assert model.assertions[0].chain[0] == "tmp99 in cpp_fused_index_mul_0"
        # The text report refers to a fix printed above (GPT-2's three AOTI003 share one).
        gpt2 = api.lint(str(REPO / "fixtures/real/gpt2.cpu.stripped.pt2"),
                        api.Options(exported_program=str(REPO / "fixtures/real/gpt2.ep.pt2")))
        render("text", gpt2.findings, packages=gpt2.packages)
        # Two findings with one fix (GPT-2's three AOTI003 are merged into one: rules.merge_repeats).
        first = next(f for f in gpt2.findings if f.code == "AOTI003")
        render("text", [first, replace(first, message="another", location=replace(first.location, line=1))],
               packages=gpt2.packages)
        markdown.render(gpt2.findings, packages=gpt2.packages, budget=3000)  # cut: "N more findings"
        # Lists cut at LIST_LIMIT: "and N more", "read by N more kernels", "also in N more kernels".
        limit, messages.LIST_LIMIT = messages.LIST_LIMIT, 1
        try:
            for small in (api.lint(str(FIXTURES / "small_transformer.cuda.stripped.pt2")),
                          api.lint(str(REPO / "fixtures/real/gpt2.cpu.stripped.pt2"))):
                render("text", small.findings, packages=small.packages)
                markdown.render(small.findings, packages=small.packages)
        finally:
            messages.LIST_LIMIT = limit
        # Repeats of a finding at other places of the wrapper, outside any kernel (Swin's run_impl divisions).
        swin = api.lint(str(FIXTURES / "stranger11/cuda/swin.cuda.stripped.pt2"))
        render("text", swin.findings, packages=swin.packages)
        markdown.render(swin.findings, packages=swin.packages)
        # A dim a convolution rejects at 0 (its padded input below the kernel), first and not first.
        # An index read from an extern output that an empty input shrinks (repeat_interleave's); a
        # size run_impl ties to a dim and checks at every call (bincount's).
        for name in ("recall/swin_win.cpu.stripped.pt2", "stranger4/stn.cpu.stripped.pt2",
                     "stranger6/jagged_pos.cpu.stripped.pt2", "stranger7/sage_mean.cpu.stripped.pt2"):
            api.lint(str(FIXTURES / name))
        scatter = api.load(STRESS / "pkgs" / "scatter_add.cpu.stripped.pt2")
        _with_source(scatter.models[0], run_rules(scatter, all_rules()))
        for name in ("gather_dyn.cuda.stripped.pt2", "gather_dyn.cpu.stripped.pt2"):
            pkg = api.load(FIXTURES / name)
            pkg.problems.extend(Problem(f"problem {kind}", kind=kind) for kind in ProblemKind)
            run_rules(pkg, all_rules())
        # The contract's and the diff's words for who checks: a 2.13 CPU package (checks gated by
        from analyzer.explain import contract, guard
        from analyzer.report import diff as diff_report

        # the variable, an unchecked dtype), the same deployed with the variable set, and a 2.6
        # package that records no checks at all.
        from analyzer.query import sizes

        for name in ("gather_dyn.cpu.stripped.pt2", "versions/2.6/gather_dyn.cpu.stripped.pt2", "real/gpt2.cpu.stripped.pt2"):
            linted = api.lint(str(FIXTURES / name))
            for setting in (None, "on"):
                deployed = [sizes.as_deployed(p, setting) for p in linted.packages]
                built = [contract.build(p.path, m, linted.findings) for p in deployed for m in p.models]
                contract.render_text(built)
                guard.render_python(built)
        # the same model built twice with a changed dtype
        old_pkg, new_pkg = (api.lint(str(FIXTURES / "diff" / f"gather_{t}.cpu.stripped.pt2"),
                                     api.Options(exported_program=str(FIXTURES / "diff" / f"gather_{t}.ep.pt2")))
                            for t in ("f32", "f64"))
        sides = [[contract.build(p.path, m, r.findings) for p in r.packages for m in p.models] for r in (old_pkg, new_pkg)]
        changes = diff_report.compare("old.pt2", "new.pt2", *sides, old_pkg.findings, new_pkg.findings)
        diff_report.render_text(changes, Severity.ERROR)
        diff_report.render_markdown(changes, Severity.ERROR)
        # Guards of the exported program that restate one another: AOTI020's `.also` clause.
        from analyzer.rules import Context
        from analyzer.rules.exportguards import UncheckedExportGuard

        (guarded,) = api.load(FIXTURES / "gather_dyn.cpu.stripped.pt2",
                              api.Options(exported_program=str(FIXTURES / "gather_dyn.ep.pt2"))).models
        guarded.guards = ["(L['x'].size()[0] % 2) == 1", "(L['x'].size()[0] % 2) != 0", "(L['x'].size()[0] % 2) > 0"]
        list(UncheckedExportGuard().check(guarded, Context()))
        return {key: set(fields) for key, fields in messages.USED.items()}
    finally:
        messages.TRACE = False


def test_every_template_is_used(used):
    entries = {(c.name, key) for c in catalog().values() for key in c}
    missing = sorted(entries - set(used))
    assert not missing, f"catalog entries nothing uses: {missing}"


def test_every_field_is_filled(used):
    """No placeholder is dead: each field of each template is given a non-empty value somewhere."""
    for table in catalog().values():
        for key, template in table.items():
            if (table.name, key) in used:
                empty = template.fields - used[(table.name, key)]
                assert not empty, f"{table.name}[{key!r}]: fields never filled: {sorted(empty)}"


def test_every_message_has_a_headline():
    """Each whole message of MESSAGES (not a fragment filled into another) has its headline under
    the same key, and nothing else has one: a rule that adds a message must add its headline."""
    for rule in all_rules():  # each rule's own tables: a rule's headline is for its own message
        assert rule.FRAGMENTS <= set(rule.MESSAGES), (rule.name, sorted(rule.FRAGMENTS - set(rule.MESSAGES)))
        wanted = set(rule.MESSAGES) - rule.FRAGMENTS
        assert not wanted - set(rule.HEADLINES), f"{rule.name}: messages without a headline: {sorted(wanted - set(rule.HEADLINES))}"
        assert not set(rule.HEADLINES) - wanted, f"{rule.name}: headlines of no message: {sorted(set(rule.HEADLINES) - wanted)}"
    words = catalog()
    assert set(words["HEADLINES"]) == set(words["MESSAGES"]) - frozenset().union(*(r.FRAGMENTS for r in all_rules()))


def test_headline_templates_name_no_compiler_symbol():
    """Headlines speak the user's names: their fixed text, and the message fields they take, never
    hold a compiler name (the detail does)."""
    compiler_fields = {"kernel", "bound", "symbol", "symbols", "assertion", "call", "divisor", "divisor_expr",
                       "where", "dim_display", "extent", "table", "kernels", "calls", "check_expr", "inputs"}
    for key, template in catalog()["HEADLINES"].items():
        assert not template.fields & compiler_fields, (key, sorted(template.fields & compiler_fields))
        assert not COMPILER_NAME.search(template.format_map(_Blank())), key


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return ""


def test_one_template_per_input_check():
    for check in CheckKind:
        assert f"why.check.{check}" in messages.WHY and f"why.check.{check}.fix" in messages.WHY


def test_keys_belong_to_a_rule_or_why():
    names = {r.name for r in all_rules()}
    shared = {"env"}   # the AOTI_RUNTIME_CHECK_INPUTS clause appended to several rules' fixes
    words = catalog()
    for table in (words["MESSAGES"], words["FIXES"], words["HEADLINES"]):
        for key in table:
            assert key.split(".")[0] in names or key in shared, (table.name, key)
    assert all(key.startswith("why.") for key in messages.WHY)


def test_one_key_grammar():
    """`<name>` or `<name>.<variant>`, kebab-case words: every key of every table; a rule's own keys
    start with its name."""
    for table in catalog().values():
        for key in table:
            assert messages.KEY.match(key), (table.name, key)
    for rule in all_rules():
        for table in (rule.HEADLINES, rule.MESSAGES, rule.FIXES, rule.CHAIN):
            assert all(key == rule.name or key.startswith(rule.name + ".") for key in table), (rule.name, table.name)
    for bad in ("Empty-index-bound", "empty_index_bound", "empty-index-bound.", "empty-index-bound..x", "a.b_c", "-a"):
        assert not messages.KEY.match(bad), bad


def test_catalog_is_frozen():
    words = catalog()
    table = words["MESSAGES"]
    for write in (lambda: table.__setitem__("empty-index-bound", "x"), lambda: table.update({"x": "y"}),
                  lambda: table.setdefault("x", "y"), lambda: table.pop("empty-index-bound"),
                  table.popitem, table.clear, lambda: table.__delitem__("empty-index-bound"),
                  lambda: setattr(table, "name", "OTHER")):
        with pytest.raises((TypeError, AttributeError)):
            write()
    with pytest.raises(TypeError):
        words["MESSAGES"] = table  # type: ignore[index]
    for rule in all_rules():
        with pytest.raises(TypeError):
            rule.FIXES["x"] = "y"  # type: ignore[index]
    assert messages.Catalog("X", {"a": "b"})["a"] == "b"


def test_catalog_is_the_same_in_any_order():
    rules = all_rules()
    once = build_catalog(rules)
    assert build_catalog(list(reversed(rules))) == once == build_catalog(sorted(rules, key=lambda r: r.name))
    assert build_catalog(rules) == once and catalog() == once
    assert catalog() is catalog()  # built once


def test_catalog_refuses_bad_keys():
    from analyzer.rules import Rule, register

    def words(key: str, table: str = "FIXES"):
        return [("empty-index-bound", [messages.Catalog(table, {key: "text"})])]

    with pytest.raises(ValueError, match="kebab-case"):
        messages.build([], words("empty-index-bound.Odd"))
    with pytest.raises(ValueError, match="start with the rule"):
        messages.build([], words("other-rule.x"))
    with pytest.raises(ValueError, match="defined by"):
        messages.build(messages.shared(), [("env", [messages.Catalog("FIXES", {"env": "again"})])])
    with pytest.raises(ValueError, match="defined by"):
        messages.build([], words("empty-index-bound") * 2)

    class Stray(Rule):
        name, code = "stray-rule", "AOTI999"
        MESSAGES = messages.Catalog("MESSAGES", {"empty-index-bound": "not its own"})

    with pytest.raises(TypeError, match="start with the rule"):
        register(Stray)


def test_no_code_writes_into_a_catalog():
    """Templates are declared, never added at import time: no `X[key] = ...`, `X[key] += ...`,
    `X.update(...)`, `.add(...)`, `.setdefault(...)` on a table name anywhere in analyzer/."""
    import ast

    tables = set(catalog()) | {"FRAGMENTS"}
    found = []
    for path in sorted((REPO / "analyzer").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                base = target.value if isinstance(target, (ast.Subscript, ast.Attribute)) else None
                if isinstance(base, ast.Attribute):
                    base_name = base.attr
                else:
                    base_name = getattr(base, "id", None)
                if base_name in tables:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in ("update", "add", "setdefault", "pop", "clear", "__setitem__"):
                owner = node.func.value
                name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", None)
                if name in tables:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not found, f"code that writes into a catalog: {found}"
