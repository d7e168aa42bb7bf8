"""Triton kernels walked line by line, each distinct line parsed once for every kernel.

`kernels.parse_triton` parses a kernel's function and walks its nodes: about 0.8 ms a kernel, half
of it `ast.parse`. Inductor writes one statement per line, and a model's kernels repeat most of
their lines (`xoffset = tl.program_id(0) * XBLOCK`, `x0 = xindex % 768`, `tmp0 = tl.load(...)`).
Here each line's statement is parsed, and its nodes listed in the walk's order, once per distinct
text; a kernel is then its lines' node lists placed at their lines (`kernels.triton_facts` reads
them, as it reads the walk of the whole parse, so the facts are the same:
tests/test_tritonlines.py compares them on every fixture kernel).

Blocks (`for r0_offset in range(...):`, `if ...:` with an `else:`) are rebuilt from the
indentation, and their nodes given in the walk's order (a block's statements last to first, then
its header's expressions). Anything else (a statement over several lines, `;`, `elif`, `while`,
`with`, a nested `def`, tabs, an indentation Python would reject, a line that does not parse
alone) returns None: the caller parses the whole function.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from ..core.findings import Location
from .kernels import KernelFacts, walk_statements, triton_facts

_MAX_DEPTH = 40          # nested blocks; deeper ones are parsed whole (which bounds recursion)
_MAX_JOINED = 50         # lines of one statement; longer ones are parsed whole (bounds the joining)


@dataclass(frozen=True)
class _Simple:
    """A one-line statement: its parse (at line 1) and the nodes under it in walk order (those
    `kernels.triton_facts` reads)."""

    stmt: ast.stmt
    nodes: tuple[ast.AST, ...]
    # id(node) -> its text, for the nodes helper_worker sends as text (assigned and stored values).
    segments: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class _Header:
    """`for T in E:` or `if E:`: the statement (its body a placeholder) and the nodes of its own
    expressions in walk order (after its block's)."""

    stmt: ast.For | ast.If
    tail: tuple[ast.AST, ...]


@dataclass
class _Row:
    number: int          # the line's number in the source given
    column: int          # its indentation (the column shift of its nodes)
    entry: _Simple | _Header
    body: list["_Row"] | None = None
    orelse: list["_Row"] | None = None


def walk(name: str, source: str, path: str, first_line: int, indent: int,
         param_types: dict[str, str]) -> KernelFacts | None:
    """The facts `kernels.parse_triton` gives for `source` (one `def <name>(...)` at column 0 with
    nothing above it but blank lines, as `triage.without_decorator` returns), or None."""
    at = source.find(f"def {name}(")
    if at < 0 or (at and source[at - 1] != "\n") or source[:at].strip():
        return None
    def_line = source.count("\n", 0, at) + 1
    end = source.find("\n", at)
    header = _function(source[at:] if end < 0 else source[at:end])
    if header is None or header.name != name:
        return None
    rows = _rows(source[end + 1:] if end >= 0 else "", def_line + 1)
    if rows is None:
        return None
    facts = KernelFacts(name, "triton", tuple(a.arg for a in header.args.args),
                        Location(path, first_line + def_line - 1, indent + 1))
    facts.param_types = dict(param_types)
    events: list[tuple[ast.AST, int, int, int]] = []
    segments: dict[int, str] = {}
    for row in rows:
        _emit(row, row.number, events, segments)
    facts = triton_facts(facts, events, path, first_line, indent)
    facts.segments = segments
    return facts


def _emit(row: _Row, line: int, events: list, segments: dict[int, str]) -> None:
    """`row`'s nodes as `kernels.walk_statements` yields them: the statement at its parent's
    line (`line`), the nodes under it at its own."""
    entry, own, dl, dc = row.entry, row.number, row.number - 1, row.column
    events.append((entry.stmt, line, dl, dc))
    if isinstance(entry, _Simple):
        events.extend((node, own, dl, dc) for node in entry.nodes)
        segments.update(entry.segments)
        return
    # The walk pushes a block's fields in order and pops them last first: `else:` then the body,
    # each last statement first, then the header's expressions.
    for block in (row.orelse or (), row.body or ()):
        for inner in reversed(block):
            _emit(inner, own, events, segments)
    events.extend((node, own, dl, dc) for node in entry.tail)


def _rows(body: str, first: int) -> list[_Row] | None:
    """The function body's statements (a tree by indentation), or None."""
    lines: list[tuple[int, str, str]] = []
    physical = body.split("\n")
    i = 0
    while i < len(physical):
        found = _line(physical[i])
        if found is None:
            return None
        lead, stripped, opens = found
        if not stripped:
            i += 1
            continue  # Python ignores these lines' indentation too
        number = first + i
        # A statement over several lines (`welford_reduce(` ... `)`): its lines as they stand
        # after its first, until the brackets balance. Counting brackets inside a string can
        # only make the statement not parse alone (two statements, or an error): parsed whole.
        start = i
        while opens and _open(stripped):
            i += 1
            if i >= len(physical) or "\r" in physical[i] or i - start > _MAX_JOINED:
                return None
            stripped += "\n" + physical[i]
        lines.append((number, lead, stripped))
        i += 1
    if not lines or not lines[0][1]:
        return None
    block = _block(lines, 0, lines[0][1], 0)
    return block[0] if block is not None and block[1] == len(lines) else None


@functools.lru_cache(maxsize=1 << 14)
def _line(line: str) -> tuple[str, str, bool] | None:
    """One physical line, once per distinct text: (indentation, the text without it and trailing
    blanks, whether it opens more brackets than it closes); ("", "", False) for a blank line or a
    comment; None for tabs, form feeds or other line breaks (Python's own rules, not these)."""
    text = line.lstrip(" ")
    stripped = text.rstrip(" \t")
    if stripped.strip() != stripped or "\r" in stripped:
        return None
    if not stripped or stripped[0] == "#":
        return "", "", False
    return line[:len(line) - len(text)], stripped, _open(stripped)


def _open(text: str) -> bool:
    """True when `text` opens more brackets than it closes."""
    return ("(" in text and text.count("(") > text.count(")")) or \
        ("[" in text and text.count("[") > text.count("]")) or \
        ("{" in text and text.count("{") > text.count("}"))


def segment(node: ast.AST, lines: list[bytes]) -> str | None:
    """`node`'s source text from the lines its parse read (bracketed when over several, as it stood
    in the source: the brackets around a node are not part of it); None without positions."""
    lineno, end_lineno = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    start, end = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
    if lineno is None or end_lineno is None or start is None or end is None:
        return None
    first, last = lineno - 1, end_lineno - 1
    if not 0 <= first <= last < len(lines):
        return None
    if first == last:
        return lines[first][start:end].decode("utf-8", "surrogatepass")
    return "(" + b"\n".join([lines[first][start:], *lines[first + 1:last], lines[last][:end]]).decode(
        "utf-8", "surrogatepass") + ")"


def _block(lines: list[tuple[int, str, str]], i: int, lead: str, depth: int) -> tuple[list[_Row], int] | None:
    """The statements of the block starting at line i at indentation `lead`, and the index after
    it (at a line indented less); None for an indentation Python would reject."""
    if depth > _MAX_DEPTH:
        return None
    out: list[_Row] = []
    while i < len(lines):
        number, row_lead, text = lines[i]
        if row_lead != lead:
            if len(row_lead) < len(lead) and lead.startswith(row_lead):
                return out, i  # a dedent: the caller checks it matches its own level
            return None
        is_else = text == "else:"
        entry: _Header | _Simple | None = None
        if is_else:
            if not out or not isinstance(out[-1].entry.stmt, ast.If) or out[-1].orelse is not None:
                return None
        elif text.endswith(":"):
            entry = _header(text)
        else:
            entry = _simple(text)
        if not is_else and entry is None:
            return None
        if is_else or text.endswith(":"):
            if i + 1 >= len(lines):
                return None
            inner = lines[i + 1][1]
            if len(inner) <= len(lead) or not inner.startswith(lead):
                return None
            found = _block(lines, i + 1, inner, depth + 1)
            if found is None:
                return None
            block, i = found
            if is_else:
                out[-1].orelse = block
            else:
                assert entry is not None  # None only for `else:`
                out.append(_Row(number, len(lead), entry, block))
            continue
        assert entry is not None  # None only for `else:`
        out.append(_Row(number, len(lead), entry))
        i += 1
    return out, i


@functools.lru_cache(maxsize=1 << 14)
def _simple(text: str) -> _Simple | None:
    """One line's statement, once per distinct text (shared by every kernel holding it: never
    mutated); None unless it is exactly one statement."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(tree.body) != 1 or isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None
    stmt = tree.body[0]
    nodes = tuple(node for node, _ in walk_statements(stmt) if _read(node))[1:]
    lines = text.encode("utf-8", "surrogatepass").split(b"\n")
    segments = []
    for node in (stmt, *nodes):
        value = None
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            value = node.value
        elif isinstance(node, ast.Call) and len(node.args) >= 2:
            value = node.args[1]  # a store's value (kernels.triton_facts keeps those of stores)
        if value is not None and (found := segment(value, lines)) is not None:
            segments.append((id(value), found))
    return _Simple(stmt, nodes, tuple(segments))


@functools.lru_cache(maxsize=1 << 12)
def _header(text: str) -> _Header | None:
    """`for T in E:` (no `else`) or `if E:`, once per distinct text; None for other blocks."""
    try:
        tree = ast.parse(text + " pass")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(tree.body) != 1:
        return None
    stmt = tree.body[0]
    if isinstance(stmt, ast.For):
        parts: tuple[ast.AST, ...] = (stmt.iter, stmt.target)
    elif isinstance(stmt, ast.If):
        parts = (stmt.test,)
    else:
        return None
    return _Header(stmt, tuple(node for part in parts for node, _ in walk_statements(part) if _read(node)))


def _read(node: ast.AST) -> bool:
    """The nodes `kernels.triton_facts` reads (it passes over every other kind): listed once per
    line, not offered again in every kernel holding it."""
    return isinstance(node, (ast.stmt, ast.Call, ast.BinOp)) or \
        (isinstance(node, ast.Name) and node.id.startswith("out_ptr"))


def _function(line: str) -> ast.FunctionDef | None:
    try:
        tree = ast.parse(line + " pass")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    fn = tree.body[0] if len(tree.body) == 1 else None
    return fn if isinstance(fn, ast.FunctionDef) and not fn.decorator_list else None
