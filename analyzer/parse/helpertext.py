"""The wrapper's `call_triton_*` helpers read without tree-sitter (the fast path's first step).

A large wrapper is mostly its helpers (a 12 MB wrapper of 2,900 kernels holds about 11 MB of them),
and the analysis needs four things from each: its name, parameter names, position and source
comment. `split_helpers` reads those from helpers of Inductor's exact shape and replaces each by
its newlines alone in the copy tree-sitter parses: a helper spans whole lines, so every other
node keeps its line and column (byte offsets shift, and are only compared within that copy); a
helper of any other shape stays in the text and is read from the tree.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

@dataclass(frozen=True)
class HelperText:
    name: str
    params: tuple[str, ...]
    line: int              # 1-based line of `static inline void call_...(`, as the tree gives it
    comment: str           # the `/* async_compile.triton(...) */` comment
    comment_row: int       # its 0-based row


_HELPER_HEAD = re.compile(rb"template <[^\n]*>\nstatic inline void (call_triton_\w+)\(\n")
_COMMENT_OPEN = b"    /*\n    async_compile.triton("
_HELPER_PARAM = re.compile(rb"    (?:const )?[\w:<>]+&? (\w+)(?: = [\w:]+)?,?")
_NOT_BRACE = bytes(b for b in range(256) if b not in b"{}")  # deleted by bytes.translate
_UNSAFE_BODY = (b"/*", b"*/", b"//", b'R"', b"\\\n", b"#", b"'")


def split_helpers(data: bytes) -> tuple[bytes, list[HelperText]]:
    """(the wrapper with recognised helpers reduced to their newlines, those helpers in order).

    A helper is recognised in exactly this shape, anything else is left to the tree:

        template <...>                          (one line, at column 0)
        static inline void call_triton_<k>(
            <one parameter per line>
        ){
            /*
            async_compile.triton(...)           (the comment ends at the first `*/`)
            */
            <body: no comments, strings with braces, raw strings, continuations, directives>
        }                                       (the first `}` at column 0)
    """
    if b"static inline void call_triton_" not in data:
        return data, []
    pieces: list[bytes] = []
    kept = 0  # data[kept:] is not yet in pieces
    found: list[HelperText] = []
    line, last, pos = 1, 0, 0
    while True:
        head = data.find(b"\ntemplate <", pos)
        if head < 0:
            break
        start = pos = head + 1
        m = _HELPER_HEAD.match(data, start)
        if m is None:
            continue
        close = data.find(b"\n){\n", m.end() - 1)
        if close < 0:
            break
        comment_start = close + 4
        if not data.startswith(_COMMENT_OPEN, comment_start):
            continue
        comment_end = data.find(b"*/", comment_start + 6)
        if comment_end < 0 or data[comment_end + 2:comment_end + 3] != b"\n":
            continue
        end = data.find(b"\n}\n", comment_end)
        if end < 0:
            break
        end += 3
        params = _helper_params(data[m.end():close + 1])
        rest = data[comment_end + 3:end - 2]
        if params is None or _unsafe_body(rest) or not _balanced_body(rest):
            continue
        try:
            comment = data[comment_start + 4:comment_end + 2].decode("utf-8")
        except UnicodeDecodeError:
            continue  # the tree path decodes with replacement characters: leave it to the tree
        line += data.count(b"\n", last, start)
        last = start
        found.append(HelperText(m.group(1).decode("ascii"), params, line + 1, comment, line + 2 + len(params)))
        pieces += [data[kept:start], b"\n" * data.count(b"\n", start, end)]
        kept = end
        pos = end - 1
    if not found:
        return data, []
    pieces.append(data[kept:])
    return b"".join(pieces), found


def _unsafe_body(rest: bytes) -> bool:
    """Any of _UNSAFE_BODY in the body (written out: this runs once per helper)."""
    return b"/*" in rest or b"*/" in rest or b"//" in rest or b'R"' in rest or b"\\\n" in rest \
        or b"#" in rest or b"'" in rest


@functools.lru_cache(maxsize=1024)
def _helper_params(block: bytes) -> tuple[str, ...] | None:
    """A helper's parameter names, one per line; once per distinct block (helpers share a few)."""
    names = []
    for raw in block.split(b"\n")[:-1]:
        m = _HELPER_PARAM.fullmatch(raw)
        if m is None:
            return None
        names.append(m.group(1).decode("ascii"))
    return tuple(names)


def _balanced_body(rest: bytes) -> bool:
    """The body after the comment: braces balanced, never closed before they open, and never on a
    line with a string literal, so the `}` ending the match is the one closing the function."""
    if b'"' in rest:
        for line in rest.split(b"\n"):
            if b'"' in line and (b"{" in line or b"}" in line):
                return False
    depth = 0
    for ch in rest.translate(None, _NOT_BRACE):
        depth += 1 if ch == 0x7B else -1
        if depth < 0:
            return False
    return depth == 0
