"""The one module that imports tree_sitter: language, parser, compiled `.scm` queries, positions.

Supports py-tree-sitter 0.25 and 0.26 (`Query(lang, src)` + `QueryCursor(query).matches(node)`).
Positions: tree-sitter points are 0-based rows and byte columns; `position()` converts them once to
1-based line/column.
"""

from __future__ import annotations

import functools
import keyword
import re
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import tree_sitter
import tree_sitter_cpp

Node = tree_sitter.Node
Tree = tree_sitter.Tree

LANGUAGE = tree_sitter.Language(tree_sitter_cpp.language())


@functools.lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(LANGUAGE)


_CHUNK = 1 << 16


def parse(data: bytes, should_stop=None) -> tuple[Tree, bool]:
    """Parse C++ bytes. With `should_stop` (polled every 64 KiB) the source is fed in chunks and
    parsing ends early once it returns True: tree-sitter 0.26 has no timeout of its own.
    Returns (tree, stopped)."""
    if should_stop is None:
        return _parser().parse(data), False
    stopped = False

    def read(offset: int, _point) -> bytes:
        nonlocal stopped
        if stopped or should_stop():
            stopped = True
            return b""
        return data[offset:offset + _CHUNK]

    return _parser().parse(read), stopped


def _grammar_text(name: str) -> str:
    # Installed wheels ship the queries as analyzer/grammars/*.scm; a source checkout has them in
    # the top-level grammars/ folder.
    try:
        return resources.files("analyzer.grammars").joinpath(f"{name}.scm").read_text("utf-8")
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError):
        path = Path(__file__).resolve().parent.parent / "grammars" / f"{name}.scm"
        return path.read_text("utf-8")


@functools.lru_cache(maxsize=None)
def query(name: str) -> tree_sitter.Query:
    """The compiled query `grammars/<name>.scm` (compiled once per process)."""
    return tree_sitter.Query(LANGUAGE, _grammar_text(name))


def matches(name: str, node: Node) -> Iterator[dict[str, Node]]:
    """Matches of query `name` inside `node`, each as {capture: first node}."""
    cursor = tree_sitter.QueryCursor(query(name))
    for _, captures in cursor.matches(node):
        yield {key: nodes[0] for key, nodes in captures.items() if nodes}


def text(node: Node | None) -> str:
    if node is None:
        return ""
    return node.text.decode("utf-8", "replace")


def position(node: Node) -> tuple[int, int]:
    """1-based (line, column) of a node's start."""
    row, col = node.start_point
    return row + 1, col + 1


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


# --- C++ expressions to a small Python-syntax expression language ---------------------------
# Kernels and the wrapper are analysed with one value-range engine (analyzer.kernels) that reads
# Python `ast` expressions; C++ expressions are rewritten into that syntax here, so only this
# module knows tree-sitter node types.

_NUMBER_SUFFIX = re.compile(r"(?<=[0-9.])(?:[uU]?[lL]{1,2}|[lL]{1,2}[uU]?|[uU]|[fF])$")
_PASS_THROUGH_CALLS = {
    "static_cast", "reinterpret_cast", "c10::convert", "convert", "int64_t", "int32_t",
    "VecMask", "Vectorized", "VectorizedN", "std::move", "move", "c10::load",
    "wrap_with_raii_handle_if_needed",
}
_RENAMED_CALLS = {
    "c10::div_floor_integer": "floordiv", "div_floor_integer": "floordiv",
    "c10::div_floor_floating": "floordiv", "std::max": "max", "std::min": "min",
    "max_propagate_nan": "max", "min_propagate_nan": "min",
}


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

    Loads become `load(ptr, offset)`; unknown constructs become `unknown()`; immediately invoked
    lambdas (vectorized gathers) become `copy(<identifiers they read>)`.
    """

    def conv(n: Node, depth: int) -> str:
        if depth > max_depth:
            raise ExprTooDeep("expression nested too deeply")
        t = n.type
        d = depth + 1
        if t == "number_literal":
            raw = text(n).replace("'", "")
            raw = _NUMBER_SUFFIX.sub("", raw)
            if raw.lower().startswith("0x"):
                raw = re.sub(r"[uUlL]+$", "", raw)
            return raw if re.fullmatch(r"[0-9a-fA-FxX.eE+-]+", raw) else "unknown()"
        if t in ("identifier", "field_identifier"):
            return text(n)
        if t in ("true", "false"):
            return "True" if t == "true" else "False"
        if t == "parenthesized_expression":
            inner = [c for c in n.named_children if c.type != "comment"]
            return f"({conv(inner[0], d)})" if inner else "unknown()"
        if t == "binary_expression":
            op = text(n.child_by_field_name("operator"))
            op = {"&&": "and", "||": "or"}.get(op, op)
            left = conv(n.child_by_field_name("left"), d)
            right = conv(n.child_by_field_name("right"), d)
            return f"({left} {op} {right})"
        if t == "unary_expression":
            op = text(n.child_by_field_name("operator"))
            arg = conv(n.child_by_field_name("argument"), d)
            op = {"!": "not "}.get(op, op)
            return f"({op}{arg})"
        if t == "conditional_expression":
            c = conv(n.child_by_field_name("condition"), d)
            a = conv(n.child_by_field_name("consequence"), d)
            b = conv(n.child_by_field_name("alternative"), d)
            return f"({a} if {c} else {b})"
        if t == "cast_expression":
            return conv(n.child_by_field_name("value"), d)
        if t == "subscript_expression":
            base = n.child_by_field_name("argument")
            idx = n.child_by_field_name("indices")
            inner = [c for c in (idx.named_children if idx else [])]
            base_py = conv(base, d)
            if base.type == "identifier" and re.match(r"(in_out|in|out)_ptr\d+$", text(base)):
                return f"load({base_py}, {conv(inner[0], d) if inner else '0'})"
            return base_py
        if t == "field_expression":
            # `tmp7.template cast<int64_t,2>()` and friends are handled at the call; a bare
            # field access is only ever a value of the object.
            arg = n.child_by_field_name("argument")
            return conv(arg, d) if arg is not None else "unknown()"
        if t == "call_expression":
            function = n.child_by_field_name("function")
            args_node = n.child_by_field_name("arguments")
            args = [c for c in (args_node.named_children if args_node else []) if c.type != "comment"]
            if function.type == "lambda_expression":
                names = sorted({text(i) for i in _identifiers(function, max_depth)
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
                # x.to(...), mask.all_masked(), vec.template cast<...>() keep the object's value.
                return conv(obj, d) if obj is not None else "unknown()"
            name = _last_name(function)
            short = name.split("::")[-1]
            if name in _RENAMED_CALLS or short in _RENAMED_CALLS:
                fn = _RENAMED_CALLS.get(name, _RENAMED_CALLS.get(short))
                return f"{fn}({', '.join(conv(a, d) for a in args)})"
            if short in ("loadu", "load") and args:
                first = args[0]
                if first.type == "binary_expression" and text(first.child_by_field_name("operator")) == "+":
                    ptr = conv(first.child_by_field_name("left"), d)
                    off = conv(first.child_by_field_name("right"), d)
                    return f"load({ptr}, {off})"
                return f"load({conv(first, d)}, 0)"
            if short == "blendv" and len(args) == 3:
                return f"({conv(args[1], d)} if {conv(args[2], d)} else {conv(args[0], d)})"
            if name in _PASS_THROUGH_CALLS or short in _PASS_THROUGH_CALLS or short.startswith("int") and args:
                return conv(args[0], d) if args else "unknown()"
            safe = re.sub(r"\W", "_", short) or "call"
            if keyword.iskeyword(safe):  # `VecMask<...>::from(0)` must not become `from(0)`
                safe += "_"
            return f"{safe}({', '.join(conv(a, d) for a in args)})"
        if t == "argument_list":
            inner = [c for c in n.named_children if c.type != "comment"]
            return conv(inner[0], d) if len(inner) == 1 else "unknown()"
        if t == "pointer_expression":
            return conv(n.child_by_field_name("argument"), d)
        if t == "this":
            return "this"
        return "unknown()"

    return conv(node, 0)


def _identifiers(node: Node, limit: int) -> Iterator[Node]:
    stack = [node]
    seen = 0
    while stack and seen < 100_000:
        n = stack.pop()
        seen += 1
        if n.type == "identifier":
            yield n
        stack.extend(reversed(n.children))  # document order


def identifiers(node: Node) -> Iterator[Node]:
    """Every identifier under `node` (iterative)."""
    return _identifiers(node, 0)
