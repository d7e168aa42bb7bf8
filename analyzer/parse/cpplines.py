"""C++ kernels read line by line, as tritonlines.py reads Triton kernels: each distinct line of a
kernel's body (`auto tmp0 = in_ptr0[static_cast<int64_t>(x1)];`, a `for(...)` head, a pragma) is
parsed by tree-sitter once for every kernel holding it, and its facts kept relative to the line;
the blocks come from the `{` and `}` lines. A package repeats most of its lines across kernels (half
the bytes of the committed CPU packages' kernels are lines another kernel already has), and
parsing each kernel whole cost as much as one parse of the member.

A kernel with a line of any other shape (a lambda over several lines, a comment after a statement,
a line with a syntax error) is not read here: `read` returns None and the caller parses it whole
(cppkernel.py). Both give the same facts (tests/test_cpplines.py, on every committed package)."""

from __future__ import annotations

import ast
import enum
import re
import sys
from dataclasses import dataclass
from typing import Callable

from . import ts
from . import cppfacts
from .cppfacts import (KERNEL_QUERIES, Expressions, Known, accumulated, assertion, check_message, divisions, parameters,
                       problem_text, python_of, thrown_message, types_of)
from .kernels import KernelFacts, RawAssertion, packed
from ..core.findings import Location
from .stores import RawStore, store_target, unmatched_stores

_PREFIX, _SUFFIX = b"void _(){\n", b"\n}"
# Distinct lines (and heads) remembered, across kernels and packages, and the longest line read
# here: a longer one sends its kernel to the whole parse, whose time and memory the budget bounds
# (one line here is parsed in one call that cannot be stopped), and the cache stays within 20 MB.
_KEPT = 20_000
_LONGEST = 1024


class _Kind(enum.Enum):
    STATEMENT = "statement"
    FOR = "for"
    IF = "if"
    OPEN = "{"
    CLOSE = "}"
    PRAGMA = "pragma"
    COMMENT = "comment"


@dataclass(frozen=True, slots=True)
class _Line:
    """One distinct line's facts, positions relative to its first non-blank byte."""

    kind: _Kind
    parallel: bool = False                      # `#pragma omp parallel ...`
    # (name, position, AST and its division nodes; None: not readable)
    defs: tuple[tuple[str, int, Known | None], ...] = ()
    loop: tuple[str, str | None] | None = None  # a `for` head: (variable, extent; None: too deep)
    checks: tuple[tuple[str, int], ...] = ()    # AOTI_TORCH_CHECK messages
    # (pointer, position, whether a plain `=`, its value's AST as `defs`)
    stores: tuple[tuple[str, int, bool, Known | None], ...] = ()
    accumulates: tuple[tuple[str, str, int], ...] = ()        # (accumulator, reduction, position)
    throws: tuple[tuple[str, int], ...] = ()
    rare: bool = False  # it does more than define (most lines of a kernel only define a `tmpN`)


@dataclass(slots=True)
class Reads:
    """The lines a member's kernels read here, and how many of them were new (parsed)."""

    lines: int = 0
    new: int = 0

    def worth_it(self) -> bool:
        """Whether reading by lines still pays: a new line costs up to twice its share of parsing its
        kernel whole, a known one about a third (measured on 40,000 distinct lines and on 6,248
        copies of one kernel), so a member whose kernels share fewer than half their lines is parsed
        kernel by kernel after its first 2,000 lines. The twelve largest committed CPU packages
        share 58 to 84 % of their kernels' lines."""
        return self.lines < 2000 or 2 * self.new <= self.lines


_MISSING = _Line(_Kind.COMMENT)  # (a line not yet read: compared by identity)
_LINES: dict[int, dict[bytes, _Line | None]] = {}  # max_depth -> line -> its facts
_HEADS: dict[bytes, tuple[int, tuple[tuple[str, str], ...], dict[str, str]] | None] = {}


def _remember(cache: dict, key, value):
    if len(cache) >= _KEPT:
        cache.clear()
    cache[key] = value
    return value


def _read_line(text: bytes, max_depth: int) -> _Line | None:
    if len(text) > _LONGEST:
        return None
    if text == b"{":
        return _Line(_Kind.OPEN)
    if text == b"}":
        return _Line(_Kind.CLOSE)
    if b"/*" in text or b"*/" in text:
        return None
    if text.startswith(b"//"):
        return _Line(_Kind.COMMENT)
    if b"//" in text:
        return None
    if text.startswith(b"#"):
        if not text.startswith(b"#pragma"):
            return None
        return _Line(_Kind.PRAGMA, parallel=bool(ts.OMP_PARALLEL.match(text.decode("utf-8", "replace"))))
    head = text.startswith((b"for(", b"for (", b"if(", b"if ("))
    tree, _ = ts.parse(_PREFIX + text + (b"{}" if head else b"") + _SUFFIX)
    statements = ts.body_statements(tree.root_node) if tree is not None else None
    if statements is None or len(statements) != 1 or ts.span(statements[0]) != (len(_PREFIX), len(_PREFIX) + len(text) + 2 * head):
        return None
    statement = statements[0]
    if head:
        kind = _Kind.FOR if statement.type == "for_statement" else _Kind.IF if statement.type == "if_statement" else None
        if kind is None:
            return None
    elif statement.type not in ("declaration", "expression_statement", "throw_statement"):
        return None
    else:
        kind = _Kind.STATEMENT
    return _facts(kind, statement, max_depth)


def _facts(kind: _Kind, statement: ts.Node, max_depth: int) -> _Line | None:
    def rel(node: ts.Node) -> int:
        return ts.span(node)[0] - len(_PREFIX)

    defs, checks, stores, accumulates, throws, loops = [], [], [], [], [], []
    for query, m in ts.matches_each(KERNEL_QUERIES, statement):
        if query == "declarations":
            if ts.is_loop_initializer(m["declaration"]) or ts.is_direct_init(m["value"]):
                continue
            defs.append((sys.intern(ts.text(m["name"])), rel(m["declaration"]), python_of(m["value"], max_depth)))
        elif query == "loops":
            try:
                extent: str | None = sys.intern(ts.cpp_to_py(m["extent"], max_depth))
            except ts.ExprTooDeep:
                extent = None
            loops.append((sys.intern(ts.text(m["var"])), extent))
        elif query == "calls":
            if (message := check_message(m)) is not None:
                checks.append((message, rel(m["statement"])))
        elif query == "assignments":
            found = accumulated(m["left"], m["right"])
            if found is not None:
                accumulates.append((*found, rel(m["statement"])))
        elif query == "stores":
            if (target := store_target(m)) is not None:
                pointer, plain = target
                stores.append((pointer, rel(m["statement"]), plain, python_of(m["value"], max_depth) if plain else None))
        elif query == "throws":
            if (message := thrown_message(m)) is not None:
                throws.append((message, rel(m["throw"])))
    if kind is _Kind.FOR:
        if len(loops) != 1 or defs or checks or stores or accumulates or throws:
            return None  # a loop of another shape, or a head that does more than loop
        return _Line(kind, loop=loops[0])
    if kind is _Kind.IF and (defs or checks or stores or accumulates or throws or loops):
        return None
    return _Line(kind, defs=tuple(defs), checks=tuple(checks), stores=tuple(stores), accumulates=tuple(accumulates),
                 throws=tuple(throws), rare=bool(checks or stores or accumulates or throws))


@dataclass(slots=True)
class _Block:
    loop: list | None          # the loop this block is the body of: [start, end, extent, variable]
    inside_parallel: bool      # in an OpenMP parallel region (an enclosing item follows its pragma)
    after_parallel: bool = False  # the previous item of the block is `#pragma omp parallel`


def _head(name: str, data: bytes, start: int, body: int, parse_head: Callable[[], ts.Tree]
          ) -> tuple[int, tuple[tuple[str, str], ...], dict[str, str]] | None:
    """(offset of the definition from `start`, its parameters, their types) of a kernel's head, read
    once per distinct head (the kernel's own name left out of the key)."""
    key = data[start:body].replace(name.encode(), b"\0")
    if key in _HEADS:
        return _HEADS[key]
    found = [f for f in ts.functions(parse_head().root_node) if ts.text(f["name"]).strip() == name]
    value = None
    if found:
        params = parameters(found[0]["params"])
        value = (ts.span(found[0]["function"])[0] - start, params, types_of(params))
    return _remember(_HEADS, key, value)


# A body's non-blank lines: group 1 is the line from its first non-blank byte, its trailing blanks
# (` \t\r`) stripped after. (A lazy group before `[ \t\r]*$` tried the end at every byte: two
# thirds of the walk over a kernel's lines.)
_TEXT_LINE = re.compile(rb"[ \t]*(\S[^\n]*)")


def read(name: str, data: bytes, start: int, body: int, end: int, path: str, max_depth: int,
         lines, parse_head: Callable[[], ts.Tree], reads: Reads | None = None) -> KernelFacts | None:
    """The facts of the kernel `name` whose head starts at `start` and whose body's inside is
    `data[body:end]`; None when a line of it is of a shape not read here (before its head is parsed)."""
    defs: dict[str, list[tuple[int, ast.expr]]] = {}
    walked = _walk(defs, data, body, end, max_depth, reads or Reads())
    head = _head(name, data, start, body, parse_head) if walked is not None else None
    if walked is None or head is None:
        return None
    offset, params, types = head
    facts = KernelFacts(name, "cpp", tuple(p for p, _ in params), lines.location(path, start + offset),
                        param_types=types, defs=packed(defs))
    facts.locate = lines.locator(path)
    _finish(facts, *walked, data[body - 1:end + 1], path, lines)
    return facts


def _new(known_lines: dict[bytes, _Line | None], text: bytes, max_depth: int, reads: Reads) -> _Line | None:
    """A line not read before: its facts; None also when, inside one long kernel, reading by lines
    stops paying (`reads.lines` counts this line)."""
    reads.new += 1
    if not reads.new % 1024 and not reads.worth_it():
        return None
    return _remember(known_lines, text, _read_line(text, max_depth))


def _walk(defs: dict[str, list[tuple[int, ast.expr]]], data: bytes, body: int, end: int,
          max_depth: int, reads: Reads) -> tuple[Expressions, list[list], list] | None:
    """The definitions of the lines of `data[body:end]` into `defs`; their expressions, loops and
    the lines with more to read; None when a line is not of a shape read here or the blocks do
    not nest as the lines say."""
    to_ast = Expressions(max_depth)
    known_lines = _LINES.setdefault(max_depth, {})
    block = _Block(None, False)
    blocks = [block]
    pending: tuple[list | None, bool] | None = None   # a `for`/`if` head waiting for its `{`
    loops: list[list] = []
    rare: list[tuple[int, _Line, bool, list[tuple[str, int]]]] = []
    for m in _TEXT_LINE.finditer(data, body, end):
        text = m.group(1).rstrip(b" \t\r")
        reads.lines += 1
        if (line := known_lines.get(text, _MISSING)) is _MISSING:
            line = _new(known_lines, text, max_depth, reads)
        if line is None:
            return None
        at, kind = m.start(1), line.kind
        if kind is _Kind.STATEMENT:
            if pending is not None:
                return None  # a head whose body is not a block
            own = block.after_parallel
            block.after_parallel = False
            for name, rel, known in line.defs:
                defs.setdefault(name, []).append((at + rel, to_ast.add(known)))
            if line.rare:
                rare.append((at, line, block.inside_parallel or own,
                             [(b.loop[3], b.loop[0]) for b in reversed(blocks) if b.loop is not None]))
        elif kind is _Kind.OPEN:
            if pending is not None:
                block = _Block(pending[0], block.inside_parallel or pending[1])
                pending = None
            else:
                inside = block.inside_parallel or block.after_parallel
                block.after_parallel = False
                block = _Block(None, inside)
            blocks.append(block)
        elif pending is not None:
            return None
        elif kind is _Kind.CLOSE:
            if len(blocks) == 1:
                return None
            closed = blocks.pop()
            block = blocks[-1]
            if closed.loop is not None:
                closed.loop[1] = at + 1
        else:
            own = block.after_parallel
            block.after_parallel = kind is _Kind.PRAGMA and line.parallel
            if kind is _Kind.FOR:
                assert line.loop is not None
                loops.append([at, None, line.loop[1], line.loop[0]])
                pending = (loops[-1], own)
            elif kind is _Kind.IF:
                pending = (None, own)
    if len(blocks) != 1 or pending is not None:
        return None
    return to_ast, loops, rare


def _finish(facts: KernelFacts, to_ast: Expressions, loops: list[list], rare: list, body_text: bytes, path: str,
            lines) -> None:
    """The loops' extents, then the checks, stores, throws and reductions of the lines that have them."""
    extents: dict[str, list[tuple[int, int, str]]] = {}
    for start, stop, extent, var in loops:
        if extent is None:
            to_ast.problems += 1
        else:
            extents.setdefault(var, []).append((start, stop, extent))
    facts.extents = packed(extents)
    assertions: list[RawAssertion] = []
    messages: list[tuple[str, Location]] = []
    stores: list[tuple[str, int, bool, Known | None]] = []
    reductions: list[tuple[str, str, int, list[tuple[str, int]]]] = []
    for at, line, parallel, enclosing in rare:
        assertions.extend(assertion(facts, message, lines.location(path, at + rel), at + rel, parallel)
                          for message, rel in line.checks)
        stores.extend((pointer, at + rel, plain, known) for pointer, rel, plain, known in line.stores)
        reductions.extend((acc, op, at + rel, enclosing) for acc, op, rel in line.accumulates)
        messages.extend((message, lines.location(path, at + rel)) for message, rel in line.throws)
    facts.assertions, facts.messages = tuple(assertions), tuple(messages)
    outs = [p for p in facts.params if p.startswith("out_ptr")]
    if outs:
        found = [RawStore(pointer, pos, to_ast.add(known) if plain else None) for pointer, pos, plain, known in stores]
        facts.stores = tuple(unmatched_stores(outs, found, body_text.decode("utf-8", "replace")))
    else:
        facts.stores = ()
    locate = lines.locator(path)
    divisions(facts, locate, to_ast.dividing)
    cppfacts.reductions(facts, reductions, locate)
    facts.problem = problem_text(to_ast.problems, facts.name)
