"""Packages with parts missing or broken: reported as problems, the rest still analyzed."""

from __future__ import annotations

import re
import zipfile

from analyzer.app import api

from conftest import SHARED_PT2, require


def rewrite(src, dst, edit):
    """Copy a zip, passing each (name, bytes) through `edit` (None drops the member)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for name in zin.namelist():
            data = edit(name, zin.read(name))
            if data is not None:
                zout.writestr(name, data)
    return dst


def test_no_wrapper_source_is_a_problem(tmp_path):
    pkg = rewrite(require(SHARED_PT2 / "gather_dyn.cuda.pt2"), tmp_path / "bin_only.pt2",
                  lambda n, d: None if n.endswith(".cpp") else d)
    (model,) = api.load(pkg).models
    assert model.assertions == []
    (problem,) = [p for p in model.problems if p.kind == "no-source"]
    assert "no wrapper source" in problem.message and "binaries" in problem.message


def test_cubin_without_embedded_triton_source(tmp_path):
    def strip_comment(name, data):
        if name.endswith(".wrapper.cpp"):
            return re.sub(rb"/\*\s*async_compile\.triton.*?\*/", b"", data, flags=re.S)
        return data

    pkg = rewrite(require(SHARED_PT2 / "gather_dyn.cuda.pt2"), tmp_path / "no_src.pt2", strip_comment)
    (model,) = api.load(pkg).models
    assert model.assertions == []
    kernel = model.kernels["triton_poi_fused_index_mul_0"]
    assert not kernel.has_source
    assert any(p.kind == "no-source" and "triton_poi_fused_index_mul_0" in p.message for p in model.problems)
    # The inputs and launches are still there.
    assert [i.name for i in model.inputs] == ["arg0_1", "arg1_1"]
    assert len(model.launches) == 1


def test_missing_cpu_kernel_member(tmp_path):
    pkg = rewrite(require(SHARED_PT2 / "gather_dyn.cpu.stripped.pt2"), tmp_path / "no_kernel.pt2",
                  lambda n, d: None if n.endswith(".kernel.cpp") else d)
    (model,) = api.load(pkg).models
    assert any("launched but its source is not in the package" in p.message for p in model.problems)


def test_syntax_error_in_run_impl_keeps_the_rest(tmp_path):
    def break_run_impl(name, data):
        if name.endswith(".wrapper.cpp"):
            return data.replace(b"inputs.clear();", b"inputs.clear(; }}} ((", 1)
        return data

    pkg = rewrite(require(SHARED_PT2 / "gather_dyn.cuda.pt2"), tmp_path / "broken.pt2", break_run_impl)
    (model,) = api.load(pkg).models
    assert any(p.kind == "parse" for p in model.problems)
    # The Triton kernel and its assertion are still read.
    assert [a.message for a in model.assertions] == ["index out of bounds: 0 <= tmp4 < ks0"]


def test_bad_metadata_json_is_a_problem(tmp_path):
    pkg = rewrite(require(SHARED_PT2 / "gather_dyn.cuda.pt2"), tmp_path / "meta.pt2",
                  lambda n, d: b"{not json" if n.endswith("_metadata.json") else d)
    (model,) = api.load(pkg).models
    assert any(p.kind == "unreadable" and "metadata" in p.message for p in model.problems)
    assert model.device == "cuda"  # still known from the Triton helpers


# --- the rules on these packages: a broken part becomes a finding, the rest is still checked ---

def _rules(path):
    return sorted({(f.rule, f.severity.name) for f in api.lint([path]).findings})


def test_rules_on_binary_only_kernel(tmp_path):
    def strip_comment(name, data):
        if name.endswith(".wrapper.cpp"):
            return re.sub(rb"/\*\s*async_compile\.triton.*?\*/", b"", data, flags=re.S)
        return data

    pkg = rewrite(require(SHARED_PT2 / "gather_dyn.cuda.pt2"), tmp_path / "no_src.pt2", strip_comment)
    rules = _rules(pkg)
    assert ("no-kernel-source", "INFO") in rules
    assert ("unenforced-lower-bound", "INFO") in rules     # the inputs are still checked
    assert not any(r == "empty-index-bound" for r, _ in rules)  # nothing to link it to


def test_rules_on_kernel_never_launched(tmp_path):
    def drop_launch(name, data):
        if name.endswith(".wrapper.cpp"):
            return re.sub(rb"\n\s*call_triton_poi_fused_index_mul_0\(arg1_1[^\n]*", b"\n", data)
        return data

    pkg = rewrite(require(SHARED_PT2 / "gather_dyn.cuda.pt2"), tmp_path / "unlaunched.pt2", drop_launch)
    findings = [f for f in api.lint([pkg]).findings if f.rule == "unlinked-assertion"]
    (f,) = findings
    assert "never launched" in f.detail and f.location.line == 656


def test_rules_on_broken_parts(tmp_path):
    pkg = rewrite(require(SHARED_PT2 / "gather_dyn.cuda.pt2"), tmp_path / "meta.pt2",
                  lambda n, d: b"{not json" if n.endswith("_metadata.json") else d)
    rules = _rules(pkg)
    assert ("unparsed-member", "WARNING") in rules
    assert ("empty-index-bound", "INFO") in rules  # the rest is still analyzed (an info: eager rejects it too)


def test_real_packages_have_no_degraded_findings():
    from conftest import all_packages

    for path in all_packages():
        rules = {f.rule for f in api.lint([path]).findings}
        assert not rules & {"no-kernel-source", "unlinked-assertion", "unparsed-member"}, (path.name, rules)
