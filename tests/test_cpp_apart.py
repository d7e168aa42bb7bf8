"""C++ kernels parsed one by one (cppkernel.Apart): the same facts as from the member's whole tree,
and a peak memory bounded by the largest member, not by every kernel's tree at once."""

from __future__ import annotations

import ast
import importlib.util
import sys
import zipfile
from pathlib import Path

import pytest

from analyzer.app import pipeline
from analyzer.core.budget import Deadline
from analyzer.parse import cppkernel, ts
from analyzer.read import archive

from conftest import FIXTURES, REPO

import test_hostile_text as hostile


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


bench = _load("aoti_lint_bench", REPO / "bench" / "bench.py")

# Packages whose C++ kernels live in a member of their own (OPT) and beside the wrapper (torch 2.8).
PACKAGES = [FIXTURES / "stranger3" / "opt.cpu.stripped.pt2", FIXTURES / "stranger" / "mixtral.cpu.stripped.pt2",
            FIXTURES / "versions" / "2.8" / "pos_embedding.cpu.stripped.pt2"]


def _members(path: Path) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(path) as zf:
        return [(n, zf.read(n)) for n in zf.namelist() if n.endswith(".cpp") and b"cpp_fused" in zf.read(n)]


def _facts_key(f) -> tuple:
    """Everything a kernel's facts hold, with the `ast` trees dumped and `locate` asked at each definition."""
    defs = {v: [(pos, ast.dump(e)) for pos, e in d] for v, d in f.defs.items()}
    stores = [(s.pointer, s.pos, ast.dump(s.value) if s.value is not None else None) for s in f.stores or ()]
    located = [f.locate(pos) for d in f.defs.values() for pos, _ in d]
    return (f.name, f.params, f.location, f.param_types, defs, f.extents, f.assertions, f.divisions,
            f.reductions, stores, f.messages, f.problem, located)


@pytest.mark.parametrize("path", PACKAGES, ids=lambda p: p.parent.name + "/" + p.name)
def test_kernels_parsed_apart_read_as_from_the_whole_tree(path: Path) -> None:
    kernels = 0
    with archive.open_package(path, deadline=Deadline(60)) as pkg:
        for member, data in _members(path):
            whole, _ = ts.parse(data)
            expected = [_facts_key(f) for f in cppkernel.parse_cpp(whole, member)]
            apart = cppkernel.Apart()
            tree = pipeline._parse_bytes(pkg, member, data, apart)  # the parse check runs
            got = [_facts_key(f) for f in cppkernel.parse_cpp(tree, member, data=data, apart=apart)]
            assert len(apart.bodies) == len(expected)  # every kernel was parsed on its own
            assert got == expected
            kernels += len(expected)
    assert kernels > 0, path


def test_a_grown_cpu_package_peaks_within_its_target(tmp_path: Path) -> None:
    """Mixtral's kernels replicated to 6 MB of C++: one tree per kernel, dropped once read (the
    member's whole tree peaked at 3.5 times its target at 12 MB)."""
    built = bench.build(FIXTURES / "stranger" / "mixtral.cpu.stripped.pt2", 6, 0, 50, tmp_path)
    code, seconds, peak, report = hostile.measured_check(built.path)
    assert code in (0, 1) and report["findings"]
    assert peak < hostile.target(built.path), (peak / 2**20, hostile.target(built.path) / 2**20)
