"""C++ kernels parsed one by one (cppkernel.Apart): the same facts as from the member's whole tree,
and no kernel's tree kept once it is read."""

from __future__ import annotations

import ast
import functools
import zipfile
from pathlib import Path

import pytest

from analyzer.app import parsing
from analyzer.core.budget import Deadline
from analyzer.parse import cppkernel, ts
from analyzer.read import archive

from conftest import FIXTURES

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
            tree = parsing.parse_bytes(pkg, member, data, apart)  # the parse check runs
            got = [_facts_key(f) for f in cppkernel.parse_cpp(tree, member, data=data, apart=apart)]
            assert len(apart.bodies) == len(expected)  # every kernel was parsed on its own
            assert got == expected
            kernels += len(expected)
    assert kernels > 0, path


@pytest.mark.parametrize("path", PACKAGES, ids=lambda p: p.parent.name + "/" + p.name)
def test_a_member_of_kernels_alone_is_read_without_a_tree_of_its_own(path: Path) -> None:
    """A member holding nothing but kernels (a torch 2.8 or 2.13 `.kernel.cpp`) gets no tree: the
    text scan lists the kernels, each is parsed on its own, with the facts of the whole tree; a
    wrapper (other functions beside its kernels) still gets its tree."""
    treeless = 0
    with archive.open_package(path, deadline=Deadline(60)) as pkg:
        for member, data in _members(path):
            whole, _ = ts.parse(data)
            expected = [_facts_key(f) for f in cppkernel.parse_cpp(whole, member)]
            apart = cppkernel.Apart()
            tree = parsing.parse_bytes(pkg, member, data, apart, whole=False)
            if member.endswith(".wrapper.cpp"):
                assert tree is not None and apart.heads is None
                continue
            assert tree is None and apart.heads is not None
            assert [_facts_key(f) for f in cppkernel.plan_apart(member, 200, apart).read()] == expected
            treeless += 1
    assert treeless > 0, path


def test_a_member_with_anything_but_kernels_keeps_its_tree() -> None:
    """Another function, a class, or text the scan stops at: the member is parsed as before."""
    kernel = b'extern "C" void cpp_fused_0(float* out_ptr0, const int64_t ks0)\n{\n    out_ptr0[0] = 1;\n}\n'
    with archive.open_package(PACKAGES[0], deadline=Deadline(60)) as pkg:
        for extra in (b"static int helper() { return 1; }\n", b"struct S { int x; };\n", b"}\n"):
            apart = cppkernel.Apart()
            tree = parsing.parse_bytes(pkg, "k.kernel.cpp", kernel + extra, apart, whole=False)
            assert tree is not None and apart.heads is None, extra
            (facts,) = cppkernel.parse_cpp(tree, "k.kernel.cpp", data=kernel + extra, apart=apart)
            assert facts.name == "cpp_fused_0" and facts.params == ("out_ptr0", "ks0")
        apart = cppkernel.Apart()
        assert parsing.parse_bytes(pkg, "k.kernel.cpp", b"#include <x.h>\n" + kernel, apart, whole=False) is None
        (facts,) = cppkernel.plan_apart("k.kernel.cpp", 200, apart).read()
        assert facts.name == "cpp_fused_0" and facts.location.line == 2


def _holds_a_tree(value: object, seen: set[int], depth: int = 0) -> bool:
    """Whether `value` reaches a tree-sitter node or tree through containers, dataclass fields,
    partials, bound methods and closures (ast trees are the facts' own and hold none)."""
    if id(value) in seen or depth > 12 or isinstance(value, (str, bytes, int, float, ast.AST)) or value is None:
        return False
    seen.add(id(value))
    if type(value).__module__.startswith("tree_sitter"):
        return True
    if isinstance(value, dict):
        parts: list = [*value.keys(), *value.values()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        parts = list(value)
    elif isinstance(value, functools.partial):
        parts = [value.func, *value.args, *value.keywords.values()]
    else:
        parts = [getattr(value, "__self__", None), *(c.cell_contents for c in getattr(value, "__closure__", None) or ())]
        parts += list(getattr(value, "__dict__", {}).values())
        # slotted dataclasses (the facts' records) keep their fields in slots, not in a __dict__
        parts += [getattr(value, name, None) for cls in type(value).__mro__ for name in getattr(cls, "__slots__", ())]
    return any(_holds_a_tree(p, seen, depth + 1) for p in parts)


@pytest.mark.parametrize("path", PACKAGES[:2], ids=lambda p: p.parent.name + "/" + p.name)
def test_no_tree_outlives_its_kernel(path: Path) -> None:
    """Each kernel's tree is dropped once read: nothing its facts keep (`locate` included) refers to
    a tree, so the member never holds every kernel's tree at once (peak RSS: bench/bench.py)."""
    read = 0
    with archive.open_package(path, deadline=Deadline(60)) as pkg:
        for member, data in _members(path):
            apart = cppkernel.Apart()
            tree = parsing.parse_bytes(pkg, member, data, apart)  # the parse check runs
            facts = cppkernel.parse_cpp(tree, member, data=data, apart=apart)
            del tree
            if not facts:
                continue  # a wrapper whose kernels live in a member of their own
            read += len(facts)
            assert not any(_holds_a_tree(f, set()) for f in facts), member
            # Read from the member's whole tree, a kernel's `locate` keeps that tree: the walk sees it.
            whole, _ = ts.parse(data)
            assert any(_holds_a_tree(f, set()) for f in cppkernel.parse_cpp(whole, member))
    assert read > 5, path
