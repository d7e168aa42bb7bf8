"""Loads of one buffer that step one loop variable by two different strides (C++ kernels, from text).

Inductor simplifies an index with the traced sizes' properties it never guards: ball query's
centroids `xyz[:, ::4]` read at `12*x0*((3 + n) // 4)` (ceil(n / 4) * 12, which is `3*n` only when n
is a multiple of 4, as the traced 64 is) beside the neighbours' `3*n*x0` of the same buffer. Two
strides over the same size symbol that agree at some sizes and differ at others are such a
simplification: where they differ, one of the loads reads other elements than eager's (and the
last rows past the buffer). Read from the kernel's text with Python's `ast` (never executed); only
kernels that floor a size (`div_floor_integer`) are read.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..core.budget import poll
from ..core.findings import Location
from ..expr import intervals

# Without a leading `\b` the search starts at each literal `in_` (40x faster over a member);
# `_loads` checks the character before.
_LOAD = re.compile(r"(in_ptr\d+|in_out_ptr\d+)(\[|\s\+\s)")
_LONG = re.compile(r"\b(\d+)L\b")
_LOOP = re.compile(r"x\d+(?:_inner)?")
_SIZE = re.compile(r"ks\d+")
_FOR = re.compile(r"for\s*\(\s*int64_t\s+(x\d+)\s*=\s*static_cast<int64_t>\(0L\);\s*\1\s*<\s*"
                  r"static_cast<int64_t>\((.{1,500}?)\);\s*\1\s*\+=")
MAX_LOADS = 2000          # loads read per kernel
MAX_MEMBER_LOADS = 20000  # and per member: a hostile member's cost stays a scan
MAX_CHARS = 2000          # characters of one index
TRY = range(1, 257)       # sizes at which two strides are compared


@dataclass(frozen=True)
class RawStride:
    """`pointer` stepped by `var` with stride `first` at one load and `second` at another (kernel
    parameters, Python syntax); `location` is the second load's."""

    pointer: str
    var: str
    first: str
    second: str
    location: Location
    extent: str | None = None     # the loop's extent (from 0), Python syntax


def _balanced(text: str, start: int, close: str) -> int:
    """The index of the bracket closing the one before `start` (-1: none within MAX_CHARS)."""
    depth = 0
    for i in range(start, min(len(text), start + MAX_CHARS)):
        c = text[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            if depth == 0:
                return i if c == close else -1
            depth -= 1
    return -1


def _index(text: str, m: re.Match) -> str | None:
    """The index text of a load at `m`: `in_ptr0[...]` or `loadu(in_ptr0 + ..., n)`."""
    if m.group(2) == "[":
        end = _balanced(text, m.end(), "]")
        return text[m.end():end] if end > 0 else None
    end = _balanced(text, m.end(), ")")
    inner = text[m.end():end] if end > 0 else ""
    # `loadu(in_ptr0 + static_cast<int64_t>(x3 + ...), static_cast<int64_t>(16))`: the first argument.
    depth = 0
    for i, c in enumerate(inner):
        depth += c in "(["
        depth -= c in ")]"
        if c == "," and depth == 0:
            return inner[:i]
    return inner or None


def _loads(text: str) -> Iterator[re.Match]:
    """`_LOAD`'s matches that start a word (not after a letter, a digit or `_`), as a word boundary would."""
    for m in _LOAD.finditer(text):
        start = m.start()
        if start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_"):
            yield m


@functools.lru_cache(maxsize=2048)  # indexes are at most MAX_CHARS: a few MB at most
def _index_strides(index: str) -> tuple[tuple[str, str], ...]:
    """`_strides` of one index text: kernels repeat their index expressions (a layer's shapes in every
    layer), each parsed once."""
    node = _python(index)
    return () if node is None else tuple(_strides(node).items())


def _python(index: str) -> ast.expr | None:
    text = index.replace("static_cast<int64_t>", "").replace("c10::div_floor_integer", "_floordiv") \
        .replace("std::max", "max").replace("std::min", "min")
    text = _LONG.sub(r"\1", text)
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return _Floor().visit(node)


class _Floor(ast.NodeTransformer):
    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "_floordiv" and len(node.args) == 2:
            return ast.BinOp(node.args[0], ast.FloorDiv(), node.args[1])
        return node


def _terms(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _terms(node.left) + _terms(node.right)
    return [node]


def _factors(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _strides(node: ast.expr) -> dict[str, str]:
    """Loop variable -> its stride (the product of the other factors of its one term), for the terms
    that hold one loop variable and otherwise only constants and size parameters."""
    out: dict[str, str] = {}
    for term in _terms(node):
        factors = _factors(term)
        loops = [f for f in factors if isinstance(f, ast.Name) and _LOOP.fullmatch(f.id)]
        rest = [f for f in factors if f not in loops]
        names = {n.id for f in rest for n in ast.walk(f) if isinstance(n, ast.Name)}
        if len(loops) != 1 or any(not _SIZE.fullmatch(n) and n not in ("max", "min") for n in names):
            continue
        stride = " * ".join(f"({ast.unparse(f)})" for f in rest) or "1"
        out.setdefault(loops[0].id, stride)
    return out


@functools.lru_cache(maxsize=4096)
def _differ_by_size(first: str, second: str) -> bool:
    """Two strides over the same one size parameter that agree at some sizes and differ at others where
    both step (at least 1: a stride of 0 is a dim of no rows, read by no iteration)."""
    symbols = intervals.names(first) | intervals.names(second)
    sizes = {n for n in symbols if _SIZE.fullmatch(n)}
    if len(sizes) != 1 or intervals.names(first) & sizes != intervals.names(second) & sizes:
        return False
    (symbol,) = sizes
    agree = differ = False
    for n in TRY:
        try:
            a, b = intervals.evaluate(first, {symbol: n}), intervals.evaluate(second, {symbol: n})
        except (ValueError, ZeroDivisionError, OverflowError):
            return False
        agree, differ = agree or a == b, differ or (a != b and min(a, b) >= 1)
        if agree and differ:
            return True
    return False


def stride_pairs(text: str, path: str, first_line: int, max_loads: int = MAX_LOADS) -> tuple[list[RawStride], int]:
    """The loads of `text` (one C++ kernel, starting at `first_line` of `path`) that step a pointer by
    a loop variable with a stride another load of it disagrees with at some sizes, and how many loads
    were read (at most `max_loads`: a member's kernels share MAX_MEMBER_LOADS)."""
    if "div_floor_integer" not in text:
        return [], 0
    # C++ kernels reuse `x1` for successive loops: a variable is the loop opened last before the load.
    loops: dict[str, list[tuple[int, str]]] = {}
    for found in _FOR.finditer(text):
        loops.setdefault(found.group(1), []).append((found.start(), found.group(2)))
    seen: dict[tuple[str, str, int], str] = {}
    out: list[RawStride] = []
    reported: set[tuple[str, str, str, str]] = set()
    count = 0
    for count, m in enumerate(_loads(text), start=1):
        if count > min(max_loads, MAX_LOADS):
            break
        if count % 256 == 0:
            poll("reading the loads of a kernel")
        index = _index(text, m)
        # Only an index over a size parameter can step by a stride that depends on one.
        for var, stride in _index_strides(index) if index and "ks" in index else ():
            starts = loops.get(var.removesuffix("_inner"), [])
            at = bisect.bisect_left(starts, (m.start(), "")) - 1
            opened = starts[at][0] if at >= 0 else -1
            first = seen.setdefault((m.group(1), var, opened), stride)
            key = (m.group(1), var, first, stride)
            if first != stride and key not in reported and _differ_by_size(first, stride):
                reported.add(key)
                line = first_line + text.count("\n", 0, m.start())
                extent = _python(starts[at][1]) if at >= 0 else None
                out.append(RawStride(m.group(1), var, first, stride, Location(path, line, 1),
                                     ast.unparse(extent) if extent is not None else None))
    return out, count


# -- Triton: the same simplification over one flattened index -----------------------------------------
# A Triton kernel's loop is `xindex`, cut into digits by the size parameters: ball query's centroids are
# `tl.load(in_ptr0 + (12*x3))` with `x3 = xindex // ks0` (point-major rows of ceil(n / 4) centroids), the
# points `tl.load(in_ptr0 + (3*x0 + 3*ks0*x2))` with `x2 = xindex // ks1`. Stepping xindex by one of its
# divisors (ks1, the batch) moves each load by its stride there: 12*(ks1 // ks0) and 3*ks0, equal only
# where ks1 = ks0 * ks0 // 4, which the launch decides (ks0 = n, ks1 = n * ((n + 3) // 4)). The pairs
# are kept per (pointer, divisor) when their texts differ; the linker keeps those that agree at some
# sizes and differ at others.
_TRITON_LOAD = re.compile(r"tl\.load\((in_ptr\d+|in_out_ptr\d+) \+ \(")
_XDEF = re.compile(r"^\s+(x\d+) = (.+?)\s*$", re.M)
_DIGIT = re.compile(r"\(?\(?xindex(?: // (\w+))?\)?(?: % (\w+))?\)?")


def triton_stride_pairs(source: str, path: str, first_line: int, indent: int) -> list[RawStride]:
    """The loads of one Triton kernel's `source` that step a pointer, along a divisor of `xindex`, by
    texts another load of it does not share; located at `first_line` (source line 1) of `path`."""
    if "xindex // ks" not in source:
        return []  # no digit of xindex that a size sets
    # The loads are in the kernel's body: the decorator's dicts above it are most of the text.
    body = max(0, source.rfind("\ndef "))
    pointers = _TRITON_LOAD.findall(source, body)
    twice = {p for p in pointers if pointers.count(p) > 1}
    if not twice:
        return []  # no pointer loaded twice
    digits: dict[str, str] = {}
    divisors: list[str] = []
    for found in _XDEF.finditer(source, body):
        var, text = found.group(1), found.group(2)
        shape = _DIGIT.fullmatch(text)
        if shape is None or "xindex" not in text:
            continue
        digits[var] = text
        if shape.group(1):
            divisors.append(shape.group(1))
    if not divisors:
        return []
    out: list[RawStride] = []
    seen: dict[tuple[str, str], str] = {}
    reported: set[tuple[str, str, str]] = set()
    for count, m in enumerate(_TRITON_LOAD.finditer(source, body), start=1):
        if count > MAX_LOADS:
            break
        if m.group(1) not in twice:
            continue
        end = _balanced(source, m.end(), ")")
        index = _digit_index(source[m.end():end] if end > 0 else "", digits)
        if index is None:
            continue
        for divisor in dict.fromkeys(divisors):
            try:
                step = intervals.simplify(f"({_at(index, divisor)}) - ({_at(index, '0')})")
            except ValueError:
                continue
            first = seen.setdefault((m.group(1), divisor), step)
            if first != step and (m.group(1), divisor, step) not in reported:
                reported.add((m.group(1), divisor, step))
                line = first_line + source.count("\n", 0, m.start())
                out.append(RawStride(m.group(1), f"xindex // {divisor}", first, step,
                                     Location(path, line, indent + 1)))
    return out


def _digit_index(text: str, digits: dict[str, str]) -> str | None:
    """A load's index with each digit of xindex written out (`12*x3` -> `12*(xindex // ks0)`); None
    unless it reads only digits, size parameters and constants."""
    names = set(_WORD.findall(text))  # the words of an index are its names (`tl.` calls are not digits)
    if not names & digits.keys() or any(n not in digits and not _SIZE.fullmatch(n) for n in names):
        return None
    return _WORD.sub(lambda w: f"({digits[w.group(0)]})" if w.group(0) in digits else w.group(0), text.strip())


def _at(index: str, value: str) -> str:
    """`index` at xindex = `value`, its digits at 0 and at a whole divisor written out (`0 // ks0` is
    0, `ks1 % ks1` is 0, `ks1 // ks1` is 1)."""
    text = _WORD.sub(lambda w: f"({value})" if w.group(0) == "xindex" else w.group(0), index)
    text = re.sub(r"\(\(0\) (?://|%) \w+\)", "0", text)
    return re.sub(r"\(\((\w+)\) (//|%) \1\)", lambda w: "1" if w.group(2) == "//" else "0", text)


_WORD = re.compile(r"[A-Za-z_]\w*")
