"""Triton kernel sources in the wrapper's comments.

On CUDA each `call_triton_<kernel>` helper carries its kernel's Python source in a comment,
`/* async_compile.triton('<name>', '''<source>''', device_str='cuda') */`, indented like the code
around it: `triton_comment` gives the source dedented and the wrapper line of its line 1. Read from
helpers found in the tree (wrapper.py) and from those split off the text (triage.py, api.py).
"""

from __future__ import annotations

import ast
import re
from operator import itemgetter

_Q3 = "'" * 3
# Blank lines, then `async_compile.triton('<name>', '''<source>''', device_str='cuda')` at column 0.
_PLAIN_TRITON_OPEN = re.compile(r"(?:[ \t]*\n)*async_compile\.triton\('\w+', " + _Q3)
_PLAIN_TRITON_CLOSE = re.compile(_Q3 + r"(?:, \w+='\w+')*\)\s*")


# A line's leading spaces when something other than whitespace follows on it.
_LEADING = re.compile(r"^( *)(?=[^\n]*\S)", re.M)


def _indent(text: str) -> int:
    """The fewest leading spaces of a line of `text` that is not blank (0 for none), as
    `min(len(l) - len(l.lstrip(" ")) for l in text.split("\\n") if l.strip())`: the first such
    line's count, checked against the other lines by one search (a line-by-line count of every
    helper's comment was a tenth of reading a CUDA wrapper's helpers)."""
    first = _LEADING.search(text)
    if first is None:
        return 0
    indent = len(first.group(1))
    if indent == 0 or re.search(r"^ {0,%d}(?! )(?=[^\n]*\S)" % (indent - 1), text, re.M) is None:
        return indent
    return min(len(m.group(1)) for m in _LEADING.finditer(text))


def _dedented(body: str) -> tuple[int, str]:
    """(`_indent(body)`, `body` with that many leading characters cut from each line, and a line
    shorter than that cut of its leading spaces), by one pass over the lines where every line is
    blank or starts with the first indented line's spaces (an Inductor comment: a regular
    expression's substitution line by line was half of reading it); by the regular expressions
    otherwise."""
    first = _LEADING.search(body)
    indent = len(first.group(1)) if first is not None else 0
    if indent:
        lines = body.split("\n")
        # Every line starts with the indent or is blank (a shorter blank line loses it all) when
        # every line's first `indent` characters are spaces; itemgetter keeps both loops in C.
        if not any(head.strip(" ") for head in set(map(itemgetter(slice(None, indent)), lines))):
            return indent, "\n".join(map(itemgetter(slice(indent, None)), lines))
    indent = _indent(body)
    return indent, re.sub(r"^(?:[^\n]{%d}| *)" % indent, "", body, flags=re.M) if indent else body


def triton_comment(comment: str, row0: int) -> tuple[str | None, int, int, str | None]:
    """The kernel source inside `/* async_compile.triton('<name>', '''...''', ...) */`.

    Returns (source, wrapper line of source line 1, stripped indent, problem). The outer call is
    parsed with `ast` (never evaluated) to get the source string; positions map back to the wrapper.
    """
    body = comment
    if body.startswith("/*"):
        body = "  " + body[2:]
    if body.rstrip().endswith("*/"):
        body = body.rstrip()[:-2]
    indent, dedented = _dedented(body)
    # The usual shape, one call around a plain triple-quoted string, read without building an AST
    # of the kernel (the walk below gives the same value and line for it).
    opening = _PLAIN_TRITON_OPEN.match(dedented)
    if opening is not None and "\r" not in dedented and "\0" not in dedented:
        start = opening.end()
        end = dedented.find(_Q3, start)
        source = dedented[start:end]
        if end >= 0 and "\\" not in source and _PLAIN_TRITON_CLOSE.fullmatch(dedented, end):
            return source, row0 + dedented.count("\n", 0, start) + 1, indent, None
    try:
        tree = ast.parse(dedented)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return None, 0, indent, f"cannot parse the async_compile.triton comment: {type(exc).__name__}"
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "triton" and len(node.args) >= 2):
            continue
        src_node = node.args[1]
        if isinstance(src_node, ast.Constant) and isinstance(src_node.value, str):
            # Source line 1 is the rest of the line holding the opening quotes.
            return src_node.value, row0 + src_node.lineno, indent, None
    return None, 0, indent, "no kernel source string in the async_compile.triton comment"
