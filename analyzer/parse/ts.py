"""The one module that imports tree_sitter or touches its nodes (tests/test_architecture.py).

It holds the language, the parser, the compiled `grammars/*.scm` queries, positions, a few typed
helpers that answer questions about a node (`string_value`, `parameters`, `statements`, ...) and
`cpp_to_py`, which rewrites C++ expressions into the Python-syntax language of analyzer.expr.values;
other modules hold nodes only as opaque handles to pass back here (so it is long). py-tree-sitter
0.25 and 0.26. Positions: 0-based rows and byte columns; `position()` converts them to 1-based."""

from __future__ import annotations

import contextlib
import enum
import functools
import keyword
import re
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path

import tree_sitter
import tree_sitter_cpp

from . import readchunks
from ..core import strict
from ..core.budget import poll
from ..core.bigstack import on_big_stack
from ..expr.syntax import CPP_PASS_THROUGH_CALLS, CPP_RENAMED_CALLS, POINTER_PARAM

Node = tree_sitter.Node
Tree = tree_sitter.Tree

LANGUAGE = tree_sitter.Language(tree_sitter_cpp.language())


@functools.lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(LANGUAGE)


_PARSE_CHUNK = 1 << 20  # bytes handed to tree-sitter per read while parsing
_TEXT_CHUNK = 1 << 12   # ... and afterwards, when node text is read back through the same callback
_POLL_EVERY = 256       # progress callbacks (one per ~50 bytes parsed) between two should_stop polls


def parse(data: bytes, should_stop=None, exclude: list[tuple[int, int]] | None = None,
          points: Callable[[int], tuple[int, int]] | None = None) -> tuple[Tree | None, bool]:
    """Parse C++ bytes. With `should_stop` the parse is fed through a read callback and polls it
    through tree-sitter's progress callback (about every 12 KB of input, whatever the content: the
    parser can spend seconds and GBs on one adversarial line), stopping once it returns True.
    Returns (tree, stopped); the tree is None when stopped. Such a tree reads node text back through
    the callback, in small chunks (1 MiB per node text would cost 10x the analysis): `with_own_text`.
    `exclude`: sorted, disjoint byte spans tree-sitter skips (unread function bodies, analyzer.unread);
    every node keeps the offset, line and column it has in `data` (`points`: byte -> 0-based (row,
    column), when the caller has a line table: counting lines is O(offset) per span)."""
    with _ranges(data, exclude, points):
        return _parse(data, should_stop)


@contextlib.contextmanager
def _ranges(data: bytes, exclude: list[tuple[int, int]] | None, points=None) -> Iterator[None]:
    """The parser reads `data` less the `exclude` spans while the block runs."""
    if not exclude:
        yield
        return
    ranges, start, row, counted, line_start = [], 0, 0, 0, 0

    def point(at: int) -> tuple[int, int]:
        nonlocal row, counted, line_start
        row += data.count(b"\n", counted, at)
        counted = at
        line_start = data.rfind(b"\n", 0, at) + 1
        return row, at - line_start

    where = points or point
    for lo, hi in exclude:
        if lo > start:
            ranges.append(tree_sitter.Range(where(start), where(lo), start, lo))
        start = hi
    if start < len(data):
        ranges.append(tree_sitter.Range(where(start), where(len(data)), start, len(data)))
    parser = _parser()
    parser.included_ranges = ranges
    try:
        yield
    finally:
        parser.included_ranges = []


def _parse(data: bytes, should_stop) -> tuple[Tree | None, bool]:
    if should_stop is None:
        return _parser().parse(data), False
    # (The probe: a parser of its own, without the ranges set on this one.)
    chunks = readchunks.Chunks(data, _PARSE_CHUNK, keep=readchunks.binding_keeps(tree_sitter.Parser(LANGUAGE).parse))
    polls, stopped = [0], False

    def progress(_offset: int, _has_error: bool) -> bool:
        nonlocal stopped
        polls[0] += 1
        if polls[0] % _POLL_EVERY == 0 and should_stop():
            stopped = True
        return stopped

    try:
        tree = on_big_stack(lambda: _parser().parse(chunks.read, progress_callback=progress))
    except ValueError:  # "Parsing failed": the progress callback cancelled it
        _parser().reset()
        if not stopped:
            raise
        return None, True
    finally:
        chunks.release(_TEXT_CHUNK)
    return tree, stopped


def with_own_text(tree: Tree, data: bytes, exclude: list[tuple[int, int]] | None = None, points=None) -> Tree:
    """`tree` re-parsed with itself as the old tree (reused whole, ~0.1 ms per MB), holding `data`: node text is a
    slice (0.3 us), not a callback (4 us). Not stoppable, at worst a full parse. `exclude`, `points`: as parsed."""
    with _ranges(data, exclude, points):
        return _parser().parse(data, old_tree=tree)


def _grammar_text(name: str) -> str:
    # Installed wheels ship the queries as analyzer/grammars/*.scm; a source checkout has them in
    # the top-level grammars/ folder.
    try:
        return resources.files("analyzer.grammars").joinpath(f"{name}.scm").read_text("utf-8")
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        path = Path(__file__).resolve().parents[2] / "grammars" / f"{name}.scm"
        return path.read_text("utf-8")


# Queries compiled as one (a compile has ~4.5 ms of fixed cost, plus up to 7 ms a pattern; patterns
# rooted at other node types cost a walk next to nothing: the constructor's, 0.3 ms over a run_impl
# of 6,000 statements against 5 ms of a compile of their own), which `matches_each` can run in one
# walk: run_impl's declarations and int arrays. The input-size asserts of torch >= 2.13 and their
# gate are read together, only where a wrapper has them.
_GROUP = ("declarations", "arrays", "constructor")
_GROUPS = {name: _GROUP for name in _GROUP} | {name: ("size_asserts", "gates") for name in ("size_asserts", "gates")}


@functools.lru_cache(maxsize=None)
def _compiled(names: tuple[str, ...]) -> tuple[tree_sitter.Query, tuple[str, ...]]:
    """`grammars/<name>.scm` of each name as one query (once per process), and each pattern's name."""
    texts = [_grammar_text(name).encode("utf-8") + b"\n" for name in names]
    query = tree_sitter.Query(LANGUAGE, b"".join(texts).decode("utf-8"))
    ends = [sum(map(len, texts[:i + 1])) for i in range(len(texts))]
    return query, tuple(names[sum(query.start_byte_for_pattern(i) >= e for e in ends)] for i in range(query.pattern_count))


def matches(name: str, node: Node) -> Iterator[dict[str, Node]]:
    """Matches of query `name` inside `node`, each as {capture: first node}."""
    return (m for _, m in matches_each((name,), node))


def matches_each(names: tuple[str, ...], node: Node) -> Iterator[tuple[str, dict[str, Node]]]:
    """Matches of the queries `names` (of one group) in one walk of `node`: (query name, {capture: first node})."""
    query, owners = _compiled(_GROUPS.get(names[0], names))
    yield from _read_matches(tree_sitter.QueryCursor(query).matches(node), names, owners)


def _read_matches(found: list, names: tuple[str, ...], owners: tuple[str, ...]) -> Iterator[tuple[str, dict[str, Node]]]:
    for i, (index, captures) in enumerate(found):
        if not i % 64:  # (a match costs about 2 us: the budget polled every 64)
            poll(f"reading matches of the {owners[index]} query")
        if owners[index] in names:
            yield owners[index], {key: nodes[0] for key, nodes in captures.items() if nodes}


# Statements that hold no statement of their own (but in a lambda's body).
_FLAT_STATEMENTS = ("declaration", "expression_statement", "comment")


def statement_matches(names: tuple[str, ...], body: Node) -> Iterator[tuple[str, dict[str, Node]]]:
    """`matches_each` for queries rooted at a statement, in a function body: the body's own
    statements, and those of its blocks and control flow (`if`, `for`, `{ ... }`), in document order;
    not those of a lambda inside a statement. A walk that stops at the body's statements costs half
    one of every node of run_impl (17 against 35 ms on GPT-2-48 at 12 MB)."""
    query, owners = _compiled(_GROUPS.get(names[0], names))
    cursor = tree_sitter.QueryCursor(query)
    if not hasattr(cursor, "set_max_start_depth"):  # (py-tree-sitter without it: every node)
        yield from matches_each(names, body)
        return
    cursor.set_max_start_depth(1)
    found = cursor.matches(body)
    nested = [c for c in body.named_children if c.type not in _FLAT_STATEMENTS]
    for child in nested:
        found.extend(tree_sitter.QueryCursor(query).matches(child))
    if nested:
        found.sort(key=lambda match: min(n.start_byte for nodes in match[1].values() for n in nodes))
    yield from _read_matches(found, names, owners)


def functions(root: Node) -> list[dict[str, Node]]:
    """Function definitions at file, namespace, linkage, template, class and preprocessor level, in
    document order, each as {"function", "name", "params", "body"}: a `function_declarator` (its
    declarator is the name, a parameter list) and a `{ ... }` body. Function bodies are not searched
    (C++ nests a definition there only in a local class): a query walk of a whole wrapper visits
    run_impl's every node (40 ms on 12 MB) and compiling one costs 10 ms; this walk visits only the
    nodes outside bodies (6 ms)."""
    found: list[dict[str, Node]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type != "function_definition":
            stack.extend(reversed(node.children))
            continue
        declarator, body = node.child_by_field_name("declarator"), node.child_by_field_name("body")
        if declarator is None or declarator.type != "function_declarator" or body is None \
                or body.type != "compound_statement":
            continue
        name, params = declarator.child_by_field_name("declarator"), declarator.child_by_field_name("parameters")
        if name is not None and name.is_named and params is not None and params.type == "parameter_list":
            found.append({"function": node, "name": name, "params": params, "body": body})
    return found


def descendants(node: Node, kind: str) -> Iterator[Node]:
    """Every node of type `kind` under `node` (itself included), in document order (iterative). For
    the small functions whose statements a query would cost more to
    compile (about 5 ms a pattern) than to walk (check_input_N, __check_inputs_outputs)."""
    stack = [node]
    seen = 0
    while stack:
        n = stack.pop()
        seen += 1
        if seen % 65536 == 0:
            poll(f"searching for {kind} nodes")
        if n.type == kind:
            yield n
        stack.extend(reversed(n.named_children))


def size_check(node: Node, suffix: str = "_size") -> dict[str, Node] | None:
    """check_input_N's size check `if (arg0_1_size[0] < 2)` (min), `if (arg0_1_size[0] > 64)` (max),
    `if (8 != arg0_1_size[1])` or `if (arg0_1_size[1] != 8)` (exact) as {"check", "sizes", "dim",
    "operator", "limit"}: `sizes` the `<input>_size` array, `dim` its one literal index; else None.
    With `suffix="_stride"`: the stride check `if (8 != arg0_1_stride[0])` of the same function."""
    if node.type != "if_statement":
        return None
    condition = node.child_by_field_name("condition")
    value = condition.child_by_field_name("value") if condition is not None and condition.type == "condition_clause" \
        else None
    if value is None or value.type != "binary_expression":
        return None
    left, operator, right = (value.child_by_field_name(f) for f in ("left", "operator", "right"))
    if left is None or operator is None or right is None:
        return None
    op = text(operator)
    if left.type == "subscript_expression" and op in ("<", ">", "!=") and right.type == "number_literal":
        element, limit = left, right
    elif left.type == "number_literal" and op == "!=" and right.type == "subscript_expression":
        element, limit = right, left
    else:
        return None
    array, indices = element.child_by_field_name("argument"), element.child_by_field_name("indices")
    if array is None or array.type != "identifier" or not text(array).endswith(suffix) or indices is None \
            or indices.type != "subscript_argument_list":
        return None
    inner = indices.named_children
    if len(inner) != 1 or inner[0].type != "number_literal":
        return None
    return {"check": node, "sizes": array, "dim": inner[0], "operator": operator, "limit": limit}


_CHECK_ENV = "_check_aoti_runtime_check_inputs_env"


def skips_unless_checking(node: Node) -> bool:
    """`if (!_check_aoti_runtime_check_inputs_env()){ return; }`: the AOTI_RUNTIME_CHECK_INPUTS gate
    at the top of __check_inputs_outputs (a return in the branch's block)."""
    if node.type != "if_statement":
        return False
    condition, branch = node.child_by_field_name("condition"), node.child_by_field_name("consequence")
    value = condition.child_by_field_name("value") if condition is not None and condition.type == "condition_clause" \
        else None
    if value is None or value.type != "unary_expression" or branch is None or branch.type != "compound_statement":
        return False
    operator, argument = value.child_by_field_name("operator"), value.child_by_field_name("argument")
    if operator is None or text(operator) != "!" or argument is None or argument.type != "call_expression":
        return False
    function = argument.child_by_field_name("function")
    return function is not None and function.type == "identifier" and text(function) == _CHECK_ENV \
        and any(c.type == "return_statement" for c in branch.named_children)


def called_function(node: Node) -> Node | None:
    """The callee of a statement that is a call, `f(args);` (an `expression_statement` holding a
    `call_expression` with an argument list); else None."""
    if node.type != "expression_statement":
        return None
    for inner in node.named_children:
        if inner.type == "call_expression":
            function, args = inner.child_by_field_name("function"), inner.child_by_field_name("arguments")
            if function is not None and function.is_named and args is not None and args.type == "argument_list":
                return function
    return None


def text(node: Node | None) -> str:
    if node is None:
        return ""
    raw = node.text  # None only for a tree parsed without its source bytes
    return raw.decode("utf-8", "replace") if raw is not None else ""


OMP_PARALLEL = re.compile(r"#\s*pragma\s+omp\s+parallel\b")


def body_statements(root: Node) -> list[Node] | None:
    """The statements of the body of `root`'s one function; None for more or a syntax error (cpplines.py)."""
    return found[0]["body"].named_children if len(found := functions(root)) == 1 and not root.has_error else None


def in_omp_parallel(node: Node) -> bool:
    """Inside a `#pragma omp parallel` region: the pragma is the previous sibling of the node or of
    one of its ancestors (the region's block, or the loop of `omp parallel for`)."""
    n: Node | None = node
    while n is not None:
        prev = n.prev_named_sibling
        if prev is not None and prev.type == "preproc_call" and OMP_PARALLEL.match(text(prev)):
            return True
        n = n.parent
    return False


def position(node: Node) -> tuple[int, int]:
    """1-based (line, column) of a node's start."""
    return node.start_point[0] + 1, node.start_point[1] + 1


def error_free(node: Node) -> bool:
    """Parsed without recovering from a syntax error: only then is its reading a function of its text."""
    return not node.has_error


def count_errors(node: Node, limit: int = 100_000) -> int:
    """ERROR/MISSING nodes under `node` (iterative: deeply nested input must not recurse)."""
    if not node.has_error:
        return 0
    count = 0
    stack = [node]
    seen = 0
    while stack and seen < limit:
        current = stack.pop()
        seen += 1
        if current.is_error or current.is_missing:
            count += 1
            continue
        if current.has_error:
            stack.extend(current.children)
    return count


# --- typed facts about nodes ------------------------------------------------------------------
# The parsers (wrapper.py, kernels.py) hold nodes only as opaque handles to pass back here: every
# question about a node's shape is one of these helpers or a query in grammars/*.scm.

def span(node: Node) -> tuple[int, int]:
    """(start byte, end byte) of a node: positions inside one member, comparable across nodes."""
    return node.start_byte, node.end_byte


def position_at(root: Node, byte: int) -> tuple[int, int] | None:
    """1-based (line, column) of the smallest node under `root` at byte offset `byte`."""
    node = root.descendant_for_byte_range(byte, byte)
    return position(node) if node is not None else None


def children(node: Node) -> list[Node]:
    """Named children without comments: the arguments of an argument list, the elements of an
    initializer list, the parameters of a parameter list."""
    return [c for c in node.named_children if c.type != "comment"]


def is_identifier(node: Node) -> bool:
    return node.type == "identifier"


_RAW_STRING = re.compile(r'^R"([^(]*)\((.*)\)\1"$', re.S)
_STRING_PART = re.compile(r'"((?:[^"\\]|\\.)*)"')
_INTEGER = re.compile(r"(-?)\s*(\d+)[uUlL]*")


def string_value(node: Node) -> str | None:
    """The value of a C++ string literal (`"a" "b"` concatenated, `R"(...)"` raw) as written, escapes
    kept; None when the node is not a string literal."""
    raw = text(node)
    if node.type == "raw_string_literal":
        m = _RAW_STRING.match(raw)
        return m.group(2) if m else raw
    if node.type in ("string_literal", "concatenated_string"):
        return "".join(_STRING_PART.findall(raw))
    return None


def integer(node: Node) -> int | None:
    """An integer literal (`64`, `64L`, `-1L`), else None."""
    m = _INTEGER.fullmatch(text(node).strip())
    return int(m.group(1) + m.group(2)) if m else None


def element(node: Node) -> tuple[str, int] | None:
    """`arg0_1_size[0]` -> ("arg0_1_size", 0): an array named by an identifier at a literal index."""
    if node.type != "subscript_expression":
        return None
    array, indices = node.child_by_field_name("argument"), node.child_by_field_name("indices")
    if array is None or array.type != "identifier" or indices is None:
        return None
    inner = children(indices)
    index = integer(inner[0]) if len(inner) == 1 else None
    return (text(array), index) if index is not None and index >= 0 else None


def address_of(node: Node) -> str | None:
    """`&buf1_handle` -> "buf1_handle"; None for anything else."""
    if node.type == "pointer_expression":
        raw = text(node)
        if raw.startswith("&"):
            return raw[1:].strip()
    return None


def call(node: Node) -> tuple[str, list[Node]] | None:
    """(callee text, arguments) of a call expression, or of a statement that is one call; None
    otherwise."""
    if node.type == "expression_statement":
        inner = node.named_children
        node = inner[0] if inner else node
    if node.type != "call_expression":
        return None
    args = node.child_by_field_name("arguments")
    return text(node.child_by_field_name("function")).strip(), children(args) if args is not None else []


def is_direct_init(value: Node) -> bool:
    """The value of a declaration written `T x(args)`: a constructor call, not an expression."""
    return value.type == "argument_list"


def is_loop_initializer(declaration: Node) -> bool:
    """The `int64_t x0 = 0` of `for (int64_t x0 = 0; ...)`."""
    return declaration.parent is not None and declaration.parent.type == "for_statement"


def enclosing_loops(node: Node, within: Node) -> Iterator[tuple[str, int]]:
    """(loop variable, loop start byte) of each `for` around `node` up to and including `within`,
    innermost first; the variable is "" when the loop declares none."""
    stop = within.parent
    current = node.parent
    while current is not None and current != stop:
        if current.type == "for_statement":
            init = current.child_by_field_name("initializer")
            decl = init.child_by_field_name("declarator") if init is not None else None
            var = decl.child_by_field_name("declarator") if decl is not None else None
            yield text(var), current.start_byte
        current = current.parent


def parameters(params: Node) -> list[tuple[str, str]]:
    """(name, declaration text) of each named parameter in a parameter list: the declarator's
    first identifier (`const T& in_ptr0` -> in_ptr0, `const int64_t* __restrict__ in_ptr0` ->
    in_ptr0), else the parameter's last identifier."""
    out = []
    for p in params.named_children:
        decl = p.child_by_field_name("declarator")
        name = None
        if decl is not None:
            name = next((text(i) for i in identifiers(decl)), None)
        if name is None:
            idents = [text(i) for i in identifiers(p)]
            name = idents[-1] if idents else None
        if name:
            out.append((name, text(p)))
    return out


class Statement(enum.Enum):
    """What a statement of a function body is, for the parsers that walk bodies in order."""

    COMMENT = "comment"
    CALL = "call"                  # `f(...);`
    DECLARATION = "declaration"
    EXPRESSION = "expression"      # any other expression statement (`x = y;`, `buf.reset();` is a CALL)
    OTHER = "other"                # control flow and anything else


_STATEMENT_KINDS = {
    "comment": Statement.COMMENT,
    "declaration": Statement.DECLARATION,
    **{kind: Statement.OTHER for kind in (
        "if_statement", "for_statement", "for_range_loop", "while_statement", "do_statement",
        "return_statement", "throw_statement", "try_statement", "switch_statement", "break_statement",
        "continue_statement", "goto_statement", "labeled_statement", "alias_declaration",
        "type_definition", "using_declaration", "static_assert_declaration", "ERROR")},
}


def statements(body: Node) -> Iterator[tuple[Statement, Node]]:
    """The statements of a function body in order, descending into plain `{ ... }` blocks (not
    into the branches of control flow)."""
    stack = list(reversed(body.named_children))
    while stack:
        node = stack.pop()
        kind = node.type
        if kind == "compound_statement":
            stack.extend(reversed(node.named_children))
        elif kind == "expression_statement":
            inner = node.named_children
            yield (Statement.CALL if inner and inner[0].type == "call_expression" else Statement.EXPRESSION), node
        else:
            found = _STATEMENT_KINDS.get(kind)
            if found is None:
                strict.unknown("ts.statements", kind)
                found = Statement.OTHER
            yield found, node


# --- C++ expressions to a small Python-syntax expression language ---------------------------
# Kernels and the wrapper are analysed with one value-range engine (analyzer.expr.values) that reads
# Python `ast` expressions; C++ expressions are rewritten into that syntax here, so only this
# module knows tree-sitter node types.

_NUMBER_SUFFIX = re.compile(r"(?<=[0-9.])(?:[uU]?[lL]{1,2}|[lL]{1,2}[uU]?|[uU]|[fF])$")


class ExprTooDeep(Exception):
    """An expression nested past the configured limit (hostile input)."""


def _last_name(function: Node) -> str:
    """`at::vec::Vectorized<float>::loadu` -> `loadu`; `static_cast<int64_t>` -> `static_cast`."""
    raw = text(function)
    raw = re.sub(r"<[^<>()]*>", "", raw)   # drop template arguments (one level is what codegen emits)
    raw = re.sub(r"<[^<>()]*>", "", raw)
    return raw.strip()


def cpp_to_py(node: Node, max_depth: int = 200) -> str:
    """Rewrite a C++ expression node as Python-syntax text for `ast.parse(..., mode="eval")`.

    Loads become `load(ptr, offset)`; unknown constructs become `unknown()` (or raise
    `strict.UnknownNodeKind` in strict mode); immediately invoked lambdas (vectorized gathers)
    become `copy(<identifiers they read>)`. One handler per node kind (`_CPP_HANDLERS`).
    """
    return _CppToPy(max_depth).conv(node, 0)


class _CppToPy:
    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth

    def conv(self, n: Node | None, depth: int) -> str:
        if n is None:  # a field that error recovery left out (`a +` with no right operand)
            return "unknown()"
        if depth > self.max_depth:
            raise ExprTooDeep("expression nested too deeply")
        handler = _CPP_HANDLERS.get(n.type)
        if handler is None:
            strict.unknown("ts.cpp_to_py", n.type)
            return "unknown()"
        return handler(self, n, depth + 1)

    def number(self, n: Node, d: int) -> str:
        raw = text(n).replace("'", "")
        raw = _NUMBER_SUFFIX.sub("", raw)
        if raw.lower().startswith("0x"):
            raw = re.sub(r"[uUlL]+$", "", raw)
        return raw if re.fullmatch(r"[0-9a-fA-FxX.eE+-]+", raw) else "unknown()"

    def name(self, n: Node, d: int) -> str:
        return text(n)

    def boolean(self, n: Node, d: int) -> str:
        return "True" if n.type == "true" else "False"

    def this(self, n: Node, d: int) -> str:
        return "this"

    def unknown(self, n: Node, d: int) -> str:
        """Kinds that carry no integer value: strings, lambdas that are not called, literals of
        other types."""
        return "unknown()"

    def parenthesized(self, n: Node, d: int) -> str:
        inner = _named(n)
        return f"({self.conv(inner[0], d)})" if inner else "unknown()"

    def binary(self, n: Node, d: int) -> str:
        op = text(n.child_by_field_name("operator"))
        op = {"&&": "and", "||": "or"}.get(op, op)
        left = self.conv(n.child_by_field_name("left"), d)
        right = self.conv(n.child_by_field_name("right"), d)
        return f"({left} {op} {right})"

    def unary(self, n: Node, d: int) -> str:
        op = text(n.child_by_field_name("operator"))
        arg = self.conv(n.child_by_field_name("argument"), d)
        op = {"!": "not "}.get(op, op)
        return f"({op}{arg})"

    def conditional(self, n: Node, d: int) -> str:
        c = self.conv(n.child_by_field_name("condition"), d)
        a = self.conv(n.child_by_field_name("consequence"), d)
        b = self.conv(n.child_by_field_name("alternative"), d)
        return f"({a} if {c} else {b})"

    def cast(self, n: Node, d: int) -> str:
        return self.conv(n.child_by_field_name("value"), d)

    def subscript(self, n: Node, d: int) -> str:
        base = n.child_by_field_name("argument")
        idx = n.child_by_field_name("indices")
        inner = idx.named_children if idx else []
        base_py = self.conv(base, d)
        if base is not None and base.type == "identifier" and POINTER_PARAM.match(text(base)):
            return f"load({base_py}, {self.conv(inner[0], d) if inner else '0'})"
        return base_py

    def field(self, n: Node, d: int) -> str:
        # `tmp7.template cast<int64_t,2>()` and friends are handled at the call; a bare field
        # access is only ever a value of the object.
        arg = n.child_by_field_name("argument")
        return self.conv(arg, d) if arg is not None else "unknown()"

    def argument_list(self, n: Node, d: int) -> str:
        inner = _named(n)
        return self.conv(inner[0], d) if len(inner) == 1 else "unknown()"

    def pointer(self, n: Node, d: int) -> str:
        return self.conv(n.child_by_field_name("argument"), d)

    def call(self, n: Node, d: int) -> str:
        function = n.child_by_field_name("function")
        args_node = n.child_by_field_name("arguments")
        args = _named(args_node) if args_node else []
        if function is None:
            return "unknown()"
        if function.type == "lambda_expression":
            names = sorted({text(i) for i in identifiers(function)
                            if re.match(r"(tmp\d+|in_out_ptr\d+|in_ptr\d+)$", text(i))})
            loads = [nm for nm in names if "ptr" in nm]
            values = [nm for nm in names if "ptr" not in nm]
            parts = [f"load({p}, unknown())" for p in loads] + values
            return f"copy({', '.join(parts)})"
        if function.type == "field_expression":
            field = text(function.child_by_field_name("field"))
            obj = function.child_by_field_name("argument")
            if field in ("store",):
                return "unknown()"
            if re.sub(r"^template\s+|<[^<>()]*>", "", field) in ("loadu", "load") and args and obj is not None:
                # `mask.template loadu<T,N>(in_ptr0 + i)`: the pointer under the mask (a tail loop reads each lane
                # it allows, past its count); the offset runs only where a lane is in (left out, its divisions too).
                first = args[0].child_by_field_name("left") if args[0].type == "binary_expression" else args[0]
                return f"masked_load({self.conv(first, d)}, {self.conv(obj, d)})"
            # x.to(...), mask.all_masked(), vec.template cast<...>() keep the object's value.
            return self.conv(obj, d) if obj is not None else "unknown()"
        name = _last_name(function)
        short = name.split("::")[-1]
        if name in CPP_RENAMED_CALLS or short in CPP_RENAMED_CALLS:
            fn = CPP_RENAMED_CALLS.get(name, CPP_RENAMED_CALLS.get(short))
            return f"{fn}({', '.join(self.conv(a, d) for a in args)})"
        if short in ("loadu", "load") and args:
            first = args[0]
            if first.type == "binary_expression" and text(first.child_by_field_name("operator")) == "+":
                ptr = self.conv(first.child_by_field_name("left"), d)
                off = self.conv(first.child_by_field_name("right"), d)
                return f"load({ptr}, {off})"
            return f"load({self.conv(first, d)}, 0)"
        if short == "blendv" and len(args) == 3:
            return f"({self.conv(args[1], d)} if {self.conv(args[2], d)} else {self.conv(args[0], d)})"
        if name in CPP_PASS_THROUGH_CALLS or short in CPP_PASS_THROUGH_CALLS or short.startswith("int") and args:
            return self.conv(args[0], d) if args else "unknown()"
        safe = re.sub(r"\W", "_", short) or "call"
        if keyword.iskeyword(safe):  # `VecMask<...>::from(0)` must not become `from(0)`
            safe += "_"
        return f"{safe}({', '.join(self.conv(a, d) for a in args)})"


_CPP_HANDLERS = {
    "number_literal": _CppToPy.number,
    "identifier": _CppToPy.name,
    "field_identifier": _CppToPy.name,
    "true": _CppToPy.boolean,
    "false": _CppToPy.boolean,
    "this": _CppToPy.this,
    "parenthesized_expression": _CppToPy.parenthesized,
    "binary_expression": _CppToPy.binary,
    "unary_expression": _CppToPy.unary,
    "conditional_expression": _CppToPy.conditional,
    "cast_expression": _CppToPy.cast,
    "subscript_expression": _CppToPy.subscript,
    "field_expression": _CppToPy.field,
    "call_expression": _CppToPy.call,
    "argument_list": _CppToPy.argument_list,
    "pointer_expression": _CppToPy.pointer,
    **{kind: _CppToPy.unknown for kind in ("string_literal", "concatenated_string", "raw_string_literal",
                                           "char_literal", "null", "nullptr", "initializer_list",
                                           # Not a size: `Vectorized<float>{...}`, an uncalled lambda,
                                           # and text tree-sitter could not parse (fixtures/real).
                                           "compound_literal_expression", "lambda_expression", "ERROR")},
}


def _named(node: Node) -> list[Node]:
    """Named children without comments."""
    return [c for c in node.named_children if c.type != "comment"]


def identifiers(node: Node) -> Iterator[Node]:
    """Every identifier under `node` in document order (iterative; at most 100,000 nodes visited)."""
    stack = [node]
    seen = 0
    while stack and seen < 100_000:
        n = stack.pop()
        seen += 1
        if n.type == "identifier":
            yield n
        stack.extend(reversed(n.children))
