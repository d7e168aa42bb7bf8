"""Bodies of C++ functions that no reader looks at, found from the text alone.

The readers (wrapper.parse, kernels.parse_cpp) look at a fixed set of functions by name: the
model's constructor, run_impl, check_input_N, __check_inputs_outputs, call_triton_* helpers and the
C++ kernels. Every other function body (the runtime's boilerplate, or a hostile member's 55 MiB of
statements nobody reads) costs tree-sitter a tree of about 60 bytes per input byte and gives
nothing, so `unread_bodies` lists them and ts.parse leaves them out of the parse
(`Parser.included_ranges`): the function stays a definition with an empty body, every other node
keeps its bytes, lines and columns, and the text scans (layout.scan_text) still read every byte.

The scan is conservative: a function is left out only when its head is plainly a function
definition at file or namespace level and its body's braces are matched through strings, character
literals, comments and `#pragma` lines; on anything it does not understand (another directive inside
a body, a line continuation, an unterminated literal, unbalanced braces) it stops and keeps the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# The names some reader looks at (short name: after the last `::`); anything that could be one is kept.
_READ = re.compile(r"AOTInductorModel|run_impl|const_run_impl|check_input_\d+|__check_inputs_outputs"
                   r"|call_triton_\w+|cpp_\w+|kernel_\w+")
_KERNEL = re.compile(r"cpp_\w+|kernel_\w+")  # as kernels.py's _CPP_KERNEL, unqualified
_OUTER = re.compile(rb"[{}\"'/#;]")
_INNER = re.compile(rb"[{}\"'/#]")
_STRING = re.compile(rb'"(?:[^"\\\n]|\\.)*"')
_CHAR = re.compile(rb"'(?:[^'\\\n]|\\.){1,8}'")
_RAW = re.compile(rb'R"([^()\\ \t\n"]{0,16})\(')
_HEAD_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_TRANSPARENT = re.compile(r'(?:inline\s+)?namespace(?:\s+[\w:]+)?|extern\s*"C"')
_FUNCTION = re.compile(
    r'(?:extern\s*"C"\s*)?(?:template\s*<[^{};"]*>\s*)?(?:[A-Za-z_][\w:<>,\s*&]*?[\s*&])?'
    r"(?P<name>~?[A-Za-z_]\w*(?:\s*::\s*~?[A-Za-z_]\w*)*)\s*\([^{};\"]*\)"
    r"(?:\s*(?:const|noexcept|override|final))*")
_IDENT = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_DIGITS = frozenset(b"0123456789abcdefABCDEF")
_LEADING = re.compile(rb"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)  # blanks and comments before a declaration
# One kernel's declaration.
_KERNEL_DECLARATION = re.compile(rb'extern\s*"C"\s+(?:[A-Za-z_]\w*\s+)*?void\s+(?:cpp|kernel)_\w+\s*\([^{};"/#]*\)\s*;')
# The model constructor's head (its member initializers keep it from being a plain `_FUNCTION`).
_CONSTRUCTOR = re.compile(r"(?:[A-Za-z_]\w*\s*::\s*)*AOTInductorModel\s*::\s*AOTInductorModel\s*\(")
MIN_BODY = 256  # smaller bodies are not worth a range of their own


class _Stop(Exception):
    """Text the scan does not understand: keep everything from here on."""


def is_read(name: str) -> bool:
    """Whether a reader may look at the function named `name` (qualified or not)."""
    short = re.split(r"\s*::\s*", name.strip())[-1]
    return _READ.fullmatch(short) is not None


@dataclass
class Heads:
    """What the scan saw at file and namespace level besides the bodies: each C++ kernel's name and
    where its head starts (after the `;`, `}` or directive before it), in the order of the kernels'
    spans; how many other blocks it passed (functions, classes, initializers); whether it read the
    whole member. A member of kernels alone, read whole, needs no tree of its own."""

    kernels: list[tuple[str, int]] = field(default_factory=list)
    others: int = 0
    complete: bool = False

    def only_kernels(self) -> bool:
        return self.complete and self.others == 0


def unread_bodies(data: bytes, kernels: list[tuple[int, int]] | None = None,
                  heads: Heads | None = None, bodies: dict[str, tuple[int, int]] | None = None
                  ) -> list[tuple[int, int]]:
    """Sorted, disjoint (start, end) byte spans: the insides of function bodies (between `{` and
    `}`) that no reader looks at, at least MIN_BODY bytes each. `kernels`, when given, receives the
    same spans of the C++ kernels' bodies (`cpp_*`, `kernel_*`), which kernels.py reads one by one,
    and `heads` their names and heads; `bodies` the (`{`, `}`) offsets of the first body of the
    model's constructor ("constructor") and of run_impl ("run_impl"), which wrappertext.py reads."""
    out: list[tuple[int, int]] = []
    try:
        _scan(data, out, kernels, heads, bodies)
    except _Stop:
        pass
    else:
        if heads is not None:
            heads.complete = True
    return out


def _skip(data: bytes, at: int) -> int:
    """The end of the literal, comment or directive starting at `at` (a `"`, `'`, `/` or `#`), or
    `at + 1` when none starts there. Raises _Stop on text the scan does not understand."""
    c = data[at]
    if c == 0x22:  # "
        if at and data[at - 1] == 0x52:  # R"delim( ... )delim"
            m = _RAW.match(data, at - 1)
            if m is None:
                raise _Stop
            end = data.find(b")" + m.group(1) + b'"', m.end())
            if end < 0:
                raise _Stop
            return end + len(m.group(1)) + 2
        m = _STRING.match(data, at)
        if m is None:
            raise _Stop
        return m.end()
    if c == 0x27:  # '
        if at and data[at - 1] in _DIGITS:  # a digit separator (1'000) or a hex digit before it
            if at + 1 < len(data) and data[at + 1] in _DIGITS:
                return at + 1
        m = _CHAR.match(data, at)
        if m is None:
            raise _Stop
        return m.end()
    if c == 0x2F:  # /
        nxt = data[at + 1:at + 2]
        if nxt == b"/":
            end = data.find(b"\n", at)
            end = len(data) if end < 0 else end
            if data[end - 1:end] == b"\\":
                raise _Stop
            return end
        if nxt == b"*":
            end = data.find(b"*/", at + 2)
            if end < 0:
                raise _Stop
            return end + 2
        return at + 1
    # '#': a directive when only blanks precede it on its line
    line_start = data.rfind(b"\n", 0, at) + 1
    if data[line_start:at].strip(b" \t"):
        raise _Stop  # `#` inside code (stringizing outside a directive line) is not C++ we know
    end = data.find(b"\n", at)
    while end > 0 and data[end - 1:end] == b"\\":
        end = data.find(b"\n", end + 1)
    return len(data) if end < 0 else end


def _block_end(data: bytes, open_at: int) -> int:
    """The position of the `}` that closes the `{` at `open_at`."""
    depth, pos = 1, open_at + 1
    search = _INNER.search
    while True:
        m = search(data, pos)
        if m is None:
            raise _Stop
        at = m.start()
        c = data[at]
        if c == 0x7B:
            depth += 1
            pos = at + 1
        elif c == 0x7D:
            depth -= 1
            if depth == 0:
                return at
            pos = at + 1
        elif c == 0x23:  # '#'
            end = _skip(data, at)
            if not data[at:end].lstrip(b"# \t").startswith(b"pragma"):
                raise _Stop  # #if/#else inside a body: its braces cannot be counted from the text
            pos = end
        else:
            pos = _skip(data, at)


def _declaration(data: bytes, head: int, end: int, out: list[tuple[int, int]], declared: list[int]) -> None:
    """A C++ kernel's declaration at file level (`extern "C" void cpp_fused_0(const float* in_ptr0,
    ...);`, one per kernel in a wrapper whose kernels live in their own member) is read by no one:
    left out of the parse (the comments before it kept) with the declarations just before it (only
    blanks between them), as one span. `declared[0]`: where the last declaration left out ends."""
    text = data[head:end]
    start = _LEADING.match(text).end()  # type: ignore[union-attr]  # matches the empty string
    if not _KERNEL_DECLARATION.fullmatch(text, start):
        return
    if out and out[-1][1] == declared[0] and not data[declared[0]:head + start].strip():
        out[-1] = (out[-1][0], end)
    else:
        out.append((head + start, end))
    declared[0] = end


def _scan(data: bytes, out: list[tuple[int, int]], kernels: list[tuple[int, int]] | None,
          heads: Heads | None = None, bodies: dict[str, tuple[int, int]] | None = None) -> None:
    pos, head = 0, 0  # head: where the text before the next `{` at this level starts
    open_blocks = 0   # namespace and extern "C" blocks we are inside
    declared = [-1]   # the end of the last kernel declaration left out
    search = _OUTER.search
    while True:
        m = search(data, pos)
        if m is None:
            return
        at = m.start()
        c = data[at]
        if c == 0x3B:  # ;
            _declaration(data, head, at + 1, out, declared)
            pos = head = at + 1
        elif c == 0x7D:  # } closing a namespace block (or stray)
            if open_blocks == 0:
                raise _Stop
            open_blocks -= 1
            pos = head = at + 1
        elif c == 0x7B:  # {
            text = _HEAD_COMMENTS.sub(" ", data[head:at].decode("latin-1")).strip()
            if _TRANSPARENT.fullmatch(text):
                open_blocks += 1
                pos = head = at + 1
                continue
            end = _block_end(data, at)
            f = _FUNCTION.fullmatch(text)
            if f is not None and not is_read(f.group("name")) and end - at - 1 >= MIN_BODY:
                out.append((at + 1, end))
            elif f is not None and kernels is not None and _KERNEL.fullmatch(f.group("name")):
                kernels.append((at + 1, end))
                if heads is not None:
                    heads.kernels.append((f.group("name"), head))
                pos = head = end + 1
                continue
            if bodies is not None:
                if _CONSTRUCTOR.match(text):
                    bodies.setdefault("constructor", (at, end))
                elif f is not None and re.split(r"\s*::\s*", f.group("name"))[-1] == "run_impl":
                    bodies.setdefault("run_impl", (at, end))
            if heads is not None:
                heads.others += 1
            pos = head = end + 1
        elif c == 0x23:  # a directive ends the head before it
            pos = head = _skip(data, at)
        else:
            pos = _skip(data, at)
