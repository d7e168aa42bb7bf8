"""A C++ kernel parsed on its own (cppkernel.Planned) whose own parse shows no definition of it: it
is parsed again with its body left out, as the member's tree has it, and keeps the facts of its head;
when that shows none either, the member cannot be read (a ValueError, an unparsed-member finding).

tree-sitter reads both texts below as a declaration: `&&` opening a body makes the definition a
declaration with a brace initializer, and `void x, cpp_fused_0(...)` declares two names. The tests
of the parse check that first, so that a grammar that recovers otherwise fails there, not further on."""

from __future__ import annotations

from pathlib import Path

import pytest

from analyzer.app import api, parsing
from analyzer.core.budget import Deadline
from analyzer.parse import cppkernel, ts
from analyzer.parse.kernels import KernelFacts
from analyzer.read import archive

from conftest import FIXTURES
from hostile import edited

MEMBER = "k.kernel.cpp"
HEAD = b'extern "C"  void  cpp_fused_0(const float* in_ptr0, float* out_ptr0, const int64_t ks0)\n'
# Past unread.MIN_BODY, so that the body is parsed apart.
STATEMENTS = (b"    auto tmp0 = in_ptr0[static_cast<int64_t>(ks0)];\n"
              + b"    out_ptr0[static_cast<int64_t>(0L)] = tmp0;\n" * 6)
# torch 2.8: one C++ kernel (with an index check) in a member of its own.
PACKAGE = FIXTURES / "versions" / "2.8" / "pos_embedding.cpu.stripped.pt2"
KERNEL = "cpp_fused_add_arange_embedding_0"


def _kernel(head: bytes = HEAD, opening: bytes = b"") -> bytes:
    return head + b"{\n" + opening + STATEMENTS + b"}\n"


def _defines(data: bytes, name: str = "cpp_fused_0") -> bool:
    tree, _ = ts.parse(data)
    return any(ts.text(f["name"]).strip() == name for f in ts.functions(tree.root_node))


def _read(data: bytes, whole: bool) -> tuple[list[KernelFacts], list[tuple], cppkernel.Apart]:
    """The member's kernels as the pipeline reads them (whole: with a tree of the member, else as a
    member of kernels alone), and the spans left out of each parse of a kernel on its own."""
    with archive.open_package(PACKAGE, deadline=Deadline(60)) as pkg:
        apart = cppkernel.Apart()
        tree = parsing.parse_bytes(pkg, MEMBER, data, apart, whole=whole)
        assert (tree is None) != whole and apart.parse is not None
        parses: list[tuple] = []
        parse = apart.parse

        def recorded(start: int, end: int, *inside: tuple[int, int]) -> ts.Tree:
            parses.append(inside)
            return parse(start, end, *inside)

        apart.parse = recorded
        planned = cppkernel.plan_apart(MEMBER, 200, apart) if tree is None else \
            cppkernel.plan_cpp(tree, MEMBER, 200, None, data, apart)
        return planned.read(), parses, apart


@pytest.mark.parametrize("whole", [True, False], ids=["member-tree", "kernels-alone"])
def test_a_kernel_its_own_parse_does_not_show_keeps_the_facts_of_its_head(whole: bool, monkeypatch) -> None:
    broken = _kernel(opening=b"    &&\n")
    assert _defines(_kernel()) and not _defines(broken)
    (by_lines,), parses, apart = _read(_kernel(), whole)
    # Read line by line (cpplines.py): at most its head parsed, without its body (a head read
    # before comes from the cache).
    assert parses in ([], [tuple(apart.bodies.items())]) and by_lines.defs and by_lines.stores
    monkeypatch.setattr(cppkernel.Planned, "by_lines", lambda *args: None)
    (plain,), parses, _ = _read(_kernel(), whole)
    assert parses == [()] and plain.defs and plain.stores   # parsed whole: the body read, in one parse
    assert (by_lines.params, by_lines.location, len(by_lines.defs), len(by_lines.stores)) == \
        (plain.params, plain.location, len(plain.defs), len(plain.stores))
    (facts,), parses, apart = _read(broken, whole)
    # Parsed again without its body (the span unread.unread_bodies gave): its head is read as usual.
    assert parses == [(), tuple(apart.bodies.items())]
    assert (facts.name, facts.params, facts.param_types, facts.location) == \
        (plain.name, plain.params, plain.param_types, plain.location)
    # ... and nothing of the body but that its text names out_ptr0: a write of unknown value.
    assert not (facts.defs or facts.extents or facts.assertions or facts.problem)
    assert [(s.pointer, s.value) for s in facts.stores] == [("out_ptr0", None)]


def test_a_kernel_no_parse_shows_is_a_value_error() -> None:
    head = HEAD.replace(b"void  cpp_fused_0", b"void x, cpp_fused_0")
    assert not _defines(_kernel(head)) and not _defines(head + b"{}\n")
    with pytest.raises(ValueError, match=r"^C\+\+ kernel cpp_fused_0 could not be parsed on its own$"):
        _read(_kernel(head), whole=False)   # the text scan took it for a kernel's head
    # With a tree of the member, the member's tree shows no kernel and none is parsed apart.
    assert _read(_kernel(head), whole=True)[:2] == ([], [])


def _lint(path: Path) -> tuple[list, list[str]]:
    result = api.lint(path)
    (model,) = result.packages[0].models
    return result.findings, [p.message for p in model.problems]


def test_the_package_as_built_links_its_kernels_index_check() -> None:
    findings, problems = _lint(PACKAGE)
    assert not problems and "AOTI003" in {f.code for f in findings}


def test_a_member_whose_kernel_no_parse_shows_is_an_unparsed_member(tmp_path: Path) -> None:
    head = 'extern "C"  void ' + KERNEL
    findings, problems = _lint(edited(PACKAGE, ".kernel.cpp", head, 'extern "C"  void x, ' + KERNEL, "head")(tmp_path))
    reason = f"C++ kernel {KERNEL} could not be parsed on its own"
    assert f"cannot be analysed: {reason}" in problems
    [unparsed] = [f for f in findings if f.code == "AOTI009"]
    assert reason in unparsed.detail and unparsed.location.path.endswith(".kernel.cpp")
    assert "AOTI003" not in {f.code for f in findings}   # nothing of the member was read


def test_a_kernel_read_from_its_head_is_launched_without_its_index_check(tmp_path: Path) -> None:
    body = edited(PACKAGE, ".kernel.cpp", "ks1)\n{\n", "ks1)\n{\n    &&\n    out_ptr0[0] = in_ptr0[0];\n", "body")
    result = api.lint(body(tmp_path))
    (model,) = result.packages[0].models
    assert not model.problems and model.kernels[KERNEL].params == ("in_ptr0", "in_ptr1", "out_ptr0", "ks0", "ks1")
    codes = {f.code for f in result.findings}
    assert "AOTI009" not in codes and "AOTI003" not in codes
