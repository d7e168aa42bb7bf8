"""C++ kernels (`extern "C" void cpp_fused_<k>(...)` in a CPU package's .cpp, parsed with
tree-sitter) read into `KernelFacts`: parameters, `tmpN` definitions as Python `ast` expressions, loop
extents, `AOTI_TORCH_CHECK` assertions, divisions, reductions, stores and thrown messages."""

from __future__ import annotations

import ast
import bisect
import functools
import re
import sys
from array import array
from dataclasses import dataclass, field
from typing import Callable

from . import cpplines, ts
from ..core.findings import Location
from .cppfacts import (KERNEL_QUERIES, Expressions, accumulated, assertion, check_message, divisions, parameters,
                       problem_text, reductions, thrown_message, types_of)
from .kernels import KernelFacts, packed
from .stores import cpp_stores

_CPP_KERNEL = re.compile(r"^(cpp_\w+|kernel_\w+)$")


def parse_cpp(tree: ts.Tree, path: str, max_depth: int = 200,
              functions: list[dict[str, ts.Node]] | None = None, data: bytes | None = None,
              apart: "Apart | None" = None) -> list[KernelFacts]:
    """Every `extern "C" void cpp_fused_<k>(...)` definition in a C++ member (`functions`: its
    `ts.functions`, when the caller has them). `data`, the bytes `tree` was parsed from, lets the
    facts locate what the linker asks about without the tree, so that the caller can drop it.
    `apart`: kernels whose bodies `tree` was parsed without, each parsed on its own."""
    return plan_cpp(tree, path, max_depth, functions, data, apart).read()


class Planned:
    """A member's C++ kernels in order: those read from the member's tree already, and those to be
    parsed apart (name and span only), so that the member's tree can be dropped before they are
    read: beside the kernels' facts it was a sixth of a 50 MB member's peak."""

    def __init__(self, path: str, max_depth: int, lines: "Lines | None", apart: "Apart | None") -> None:
        self.path, self.max_depth, self.lines, self.apart = path, max_depth, lines, apart
        self.slots: list[KernelFacts | tuple[str, int, int, int]] = []
        self.reads = cpplines.Reads()

    def read(self) -> list[KernelFacts]:
        out = []
        for slot in self.slots:
            out.append(slot if isinstance(slot, KernelFacts) else self._apart(*slot))
        self.slots = []
        return out

    def _apart(self, name: str, start: int, body: int, end: int) -> KernelFacts:
        found = self.by_lines(name, start, body, end)
        return found if found is not None else self.by_tree(name, start, body, end)

    def by_lines(self, name: str, start: int, body: int, end: int) -> KernelFacts | None:
        """The kernel read line by line (cpplines.py); None where one of its lines is not of a shape read there."""
        apart = self.apart
        if apart is None or apart.data is None or apart.parse is None or self.lines is None \
                or not self.reads.worth_it():
            return None
        parse = apart.parse
        return cpplines.read(name, apart.data, start, body, end, self.path, self.max_depth, self.lines,
                             lambda: parse(start, end + 1, (body, end)), self.reads)

    def by_tree(self, name: str, start: int, body: int, end: int) -> KernelFacts:
        """The kernel parsed whole on its own."""
        # One tree per kernel, dropped once read: the member's tree never holds every kernel at once.
        assert self.apart is not None and self.apart.parse is not None  # planned only with both
        own = self.apart.parse(start, end + 1)
        inner = [f for f in ts.functions(own.root_node) if ts.text(f["name"]).strip() == name]
        if not inner:  # read as the member's tree has it: the definition with its body left out
            own = self.apart.parse(start, end + 1, (body, end))
            inner = [f for f in ts.functions(own.root_node) if ts.text(f["name"]).strip() == name]
        if not inner:
            raise ValueError(f"C++ kernel {name} could not be parsed on its own")
        return _cpp_kernel(name, inner[0], self.path, self.max_depth, self.lines)


def plan_apart(path: str, max_depth: int, apart: "Apart") -> Planned:
    """The kernels of a member that holds nothing else (`apart.heads`), read with no tree of the member."""
    planned = Planned(path, max_depth, apart.lines, apart)
    planned.slots.extend(apart.heads or ())
    return planned


def plan_cpp(tree: ts.Tree, path: str, max_depth: int = 200,
             functions: list[dict[str, ts.Node]] | None = None, data: bytes | None = None,
             apart: "Apart | None" = None) -> Planned:
    """parse_cpp in two steps: the kernels `tree` holds whole are read now, the others by `read()`,
    which needs no tree."""
    if apart is None or apart.parse is None:
        apart = None
    lines = apart.lines if apart is not None else Lines(data) if data is not None else None
    planned = Planned(path, max_depth, lines, apart)
    for m in ts.functions(tree.root_node) if functions is None else functions:
        name = ts.text(m["name"]).strip()
        if not _CPP_KERNEL.match(name):
            continue
        body = ts.span(m["body"])[0] + 1
        end = apart.bodies.get(body) if apart is not None else None
        if apart is None or end is None:
            planned.slots.append(_cpp_kernel(name, m, path, max_depth, lines))
        else:
            planned.slots.append((name, ts.span(m["function"])[0], body, end))
    return planned


class Lines:
    """1-based (line, column) of a byte offset, as tree-sitter counts them (rows by `\\n`, columns
    in bytes), from the offsets of the text's newlines (4 bytes a line), not the text: a kernel's
    `locate` holding its body node kept the whole tree alive until linking ended, and holding the
    text kept the member alive as long (the largest object of a check: it is dropped before)."""

    def __init__(self, data: bytes) -> None:
        # One search of the text (0.14 s over 42 MB and 834,000 lines; a loop of `find` costs twice that).
        self.newlines = array("I" if len(data) < 1 << 32 else "q", (m.start() for m in _NEWLINE.finditer(data)))
        self._locators: dict[str, Callable[[int], Location]] = {}

    def point(self, byte: int) -> tuple[int, int]:
        """0-based (row, byte column), as a tree-sitter point."""
        return _point(self.newlines, byte)

    def location(self, path: str, byte: int) -> Location:
        return _location(self.newlines, path, byte)

    def locator(self, path: str) -> Callable[[int], Location]:
        """`location` of `path`: one function for every kernel of the member (a kernel's `locate`),
        holding the newlines, not this object (which keeps it: no reference cycle)."""
        found = self._locators.get(path)
        if found is None:
            found = self._locators[path] = functools.partial(_location, self.newlines, path)
        return found


def _point(newlines: array, byte: int) -> tuple[int, int]:
    row = bisect.bisect_left(newlines, byte)
    return row, byte - (newlines[row - 1] + 1 if row else 0)


def _location(newlines: array, path: str, byte: int) -> Location:
    row, col = _point(newlines, byte)
    return Location(path, row + 1, col + 1)


_NEWLINE = re.compile(b"\n")


@dataclass
class Apart:
    """C++ kernels parsed one by one: `bodies` maps the start of each body's inside (the byte after
    its `{`, unread.unread_bodies' `kernels`) to its end (its `}`); `parse(start, end, *inside)` parses
    the member's bytes from `start` to `end` only, without the (start, end) spans `inside` (positions
    as in the whole member)."""

    bodies: dict[int, int] = field(default_factory=dict)
    lines: Lines | None = None
    # (name, head start, body start, body end) of each kernel, when the member holds nothing but
    # kernels (unread.Heads.only_kernels) and no tree of it was made.
    heads: list[tuple[str, int, int, int]] | None = None
    parse: Callable[..., ts.Tree] | None = None
    data: bytes | None = None  # the member's bytes, for the kernels read line by line


def _cpp_kernel(name: str, m: dict, path: str, max_depth: int, lines: Lines | None = None) -> KernelFacts:
    params = parameters(m["params"])
    facts = KernelFacts(name, "cpp", tuple(p for p, _ in params), Location(path, *ts.position(m["function"])),
                        param_types=types_of(params))
    body = m["body"]
    facts.locate = (lambda pos: _cpp_location(path, body, pos)) if lines is None else lines.locator(path)
    to_ast = Expressions(max_depth)
    matched: dict[str, list[dict[str, ts.Node]]] = {query: [] for query in KERNEL_QUERIES}
    for query, match in ts.matches_each(KERNEL_QUERIES, body):
        matched[query].append(match)
    _cpp_definitions(facts, matched, to_ast)
    _cpp_assertions(facts, matched["calls"], path)
    facts.stores = tuple(cpp_stores(facts.params, body, to_ast, matched["stores"]))
    divisions(facts, lambda pos: _cpp_location(path, body, pos), to_ast.dividing)
    _cpp_reductions(facts, body, path, max_depth, matched["assignments"])
    facts.messages = tuple((message, Location(path, *ts.position(t["throw"]))) for t in matched["throws"]
                           if (message := thrown_message(t)) is not None)
    facts.problem = problem_text(to_ast.problems, name)
    return facts


def _cpp_definitions(facts: KernelFacts, matched: dict[str, list[dict[str, ts.Node]]], to_ast: Expressions) -> None:
    """`auto tmp0 = ...;` definitions and `for` loop extents."""
    defs: dict[str, list[tuple[int, ast.expr]]] = {}
    extents: dict[str, list[tuple[int, int, str]]] = {}
    for d in matched["declarations"]:
        value = d["value"]
        if ts.is_direct_init(value):
            continue  # `T x(args)` constructs an object: no value to track
        if ts.is_loop_initializer(d["declaration"]):
            continue  # loop variables get their range from the loop (facts.extents), not the init
        defs.setdefault(sys.intern(ts.text(d["name"])), []).append((ts.span(d["declaration"])[0], to_ast(value)))
    for lp in matched["loops"]:
        start, end = ts.span(lp["loop"])
        try:
            extent = ts.cpp_to_py(lp["extent"], to_ast.max_depth)
        except ts.ExprTooDeep:
            to_ast.problems += 1
            continue
        extents.setdefault(sys.intern(ts.text(lp["var"])), []).append((start, end, sys.intern(extent)))
    facts.defs, facts.extents = packed(defs), packed(extents)


def _cpp_assertions(facts: KernelFacts, calls: list[dict[str, ts.Node]], path: str) -> None:
    """`AOTI_TORCH_CHECK(cond, "index out of bounds: ...")` statements."""
    facts.assertions = tuple(assertion(facts, message, Location(path, *ts.position(c["statement"])),
                                       ts.span(c["statement"])[0], ts.in_omp_parallel(c["statement"]))
                             for c in calls if (message := check_message(c)) is not None)


def _cpp_location(path: str, body: ts.Node, byte: int) -> Location:
    found = ts.position_at(body, byte)
    return Location(path, *found) if found is not None else Location(path)


def _cpp_reductions(facts: KernelFacts, body: ts.Node, path: str, max_depth: int,
                    assignments: list[dict[str, ts.Node]]) -> None:
    """The kernel's accumulations (cppfacts.reductions), with the loops around each from the tree."""
    found = ((*acc, ts.span(m["statement"])[0], list(ts.enclosing_loops(m["statement"], body)))
             for m in assignments if (acc := accumulated(m["left"], m["right"])) is not None)
    reductions(facts, found, lambda pos: _cpp_location(path, body, pos))
