"""run_impl's statements in order: kernel launches and shim calls (`Call`), each with the
`// Topologically Sorted Source Nodes: ...` comment before it. Most of a large run_impl is calls of
a few plain shapes, read from their text (`Launches._simple_call`); any other from its node.
"""

from __future__ import annotations

import re
from typing import Protocol, Sequence

from . import proxy, ts
from .call import Call
from ..core.findings import Location


_TOPO = re.compile(r"//\s*Topologically Sorted Source Nodes:.*")
# Allocation and bookkeeping shims: they create or move buffers but compute nothing from inputs.
_NON_PRODUCING_SHIMS = re.compile(
    r"aoti_torch_(empty_strided|delete_tensor_object|get_|new_tensor_handle|assign_tensors|"
    r"check_|dtype_|device_type_|grad_mode|zero_)"
)
_TENSOR_NAME = re.compile(r"^(buf\d+|arg\d+_\d+)$")
# An int list passed inline (`std::array<int64_t, 2>{1L, 1L}.cbegin()`: a convolution's padding,
# stride and dilation) -> `array(1, 1)`; a list of other things stays unknown.
_INT_ARRAY = re.compile(r"std::array<\s*int64_t\s*,\s*\d+\s*>\s*\{([-0-9Ll,\s]*)\}\s*\.\s*(?:cbegin|data)\s*\(\s*\)")
_INT_LITERAL = re.compile(r"\s*(-?\d+)[lL]*\s*")


def _int_array(raw: str) -> str | None:
    """`std::array<int64_t, 2>{1L, 1L}.cbegin()` -> `array(1, 1)`; None for anything else."""
    found = _INT_ARRAY.fullmatch(raw)
    if found is None:
        return None
    items = [_INT_LITERAL.fullmatch(item) for item in found.group(1).split(",")] if found.group(1).strip() else []
    if any(item is None for item in items):
        return None
    return f"array({', '.join(item.group(1) for item in items if item)})"


class WrapperFacts(Protocol):
    """What the launch reader fills in (wrapper.py's WrapperFacts has it; wrapper.py calls this
    module while it parses, so this module names the shape rather than importing the class)."""

    path: str
    calls: list[Call]
    zero_checks: list[tuple[str, str, Location]]


class Launches:
    """run_impl's statements in order, one handler per statement kind: kernel launches and shim
    calls, each with the `// Topologically Sorted Source Nodes: ...` comment that precedes it."""

    def __init__(self, facts: WrapperFacts, max_depth: int) -> None:
        self.facts = facts
        self.max_depth = max_depth
        self.pending_comment: str | None = None
        # Argument text -> (buffer it names, Python form): thousands of launches pass the same few
        # size expressions, and an expression's conversion depends on its text alone.
        self.converted: dict[str, tuple[str | None, str]] = {}
        self.pieces: dict[str, tuple[str | None, str, bool]] = {}  # `_piece` of an argument's text

    def walk(self, body: ts.Node, read: Sequence[tuple[int, Call]] = ()) -> None:
        """The body's statements in order; `read`: (offset, call) of the launches read from the
        text (wrappertext.py), left out of the tree, taken in their place among the statements."""
        handlers = {
            ts.Statement.COMMENT: self.comment,
            ts.Statement.CALL: self.call,
            ts.Statement.DECLARATION: self.keep,   # sizes and buffers between a comment and its launch
            ts.Statement.EXPRESSION: self.keep,
            ts.Statement.OTHER: self.other,
        }
        i = 0
        for kind, node in ts.statements(body):
            if i < len(read):
                start = ts.span(node)[0]
                while i < len(read) and read[i][0] < start:
                    self.read(read[i][1])
                    i += 1
            handlers[kind](node)
        for _, call in read[i:]:
            self.read(call)

    def read(self, call: Call) -> None:
        """A launch read from the text, with the comment before it."""
        call.comment = self.pending_comment
        self.facts.calls.append(call)
        self.pending_comment = None

    def keep(self, node: ts.Node) -> None:
        pass

    def other(self, node: ts.Node) -> None:
        self.pending_comment = None

    def comment(self, node: ts.Node) -> None:
        text = ts.text(node)
        if _TOPO.match(text):
            self.pending_comment = text.lstrip("/ ").strip()

    def call(self, node: ts.Node) -> None:
        if self._simple_call(node):
            return
        found = ts.call(node)
        if found is None:  # dispatched on calls: never
            return
        fn, args = found
        wrapped = False
        if fn == "AOTI_TORCH_ERROR_CODE_CHECK" and args:
            inner = ts.call(args[0])
            if inner is not None:
                (fn, args), wrapped = inner, True
        if not _FUNCTION_NAME.match(fn):
            return
        # Every aoti_torch_* shim returns an AOTITorchError; called bare, the error is dropped.
        checked = wrapped or not fn.startswith("aoti_torch_") or fn.startswith("aoti_torch_grad_mode")
        if _NON_PRODUCING_SHIMS.match(fn) and "empty_strided" not in fn:
            return
        made = _call(self.facts, fn, args, node, self.pending_comment, self.max_depth, self.converted)
        made.checked = checked
        if fn == "AOTI_TORCH_CHECK" and len(args) == 2:
            zero, message = _NOT_ZERO.fullmatch(ts.text(args[0]).strip()), ts.string_value(args[1])
            if zero is not None and message:
                self.facts.zero_checks.append((zero.group(1), message, made.location))
            elif message and ts.text(args[0]).rstrip().endswith("!= 0"):
                # `AOTI_TORCH_CHECK(1L + (-2L)*s45 + ... != 0, ...)`: a size expression, as Python
                # text (the model keeps it where no size in range makes it 0).
                try:
                    py = _PY_NOT_ZERO.fullmatch(ts.cpp_to_py(args[0], self.max_depth))
                except ts.ExprTooDeep:
                    py = None
                if py is not None:
                    self.facts.zero_checks.append((py.group(1), message, made.location))
        if fn == proxy.CALL and args:  # a custom op: its tensors are the last argument's names
            names = proxy.tensors([ts.text(i) for i in ts.identifiers(args[-1])])
            made.args, made.arg_names = made.args[:-1] + names, made.arg_names[:-1] + names
        self.facts.calls.append(made)
        self.pending_comment = None

    def _simple_call(self, node: ts.Node) -> bool:
        """A call of the shapes most of run_impl is, `f(a, 1024L, &b);` or
        `AOTI_TORCH_ERROR_CODE_CHECK(f(a, this->x));` (no parenthesis, bracket, brace, `<`, quote or
        comment inside), read from its text: each argument is a name, `&name`, or a text `converted`
        holds. Does what `call` does and returns True; False (nothing done) for any other call."""
        text = ts.text(node)
        m = _SIMPLE_CALL.fullmatch(text) or _CAST_CALL.fullmatch(text)
        if m is None or not ts.error_free(node):
            return False
        wrapped = m.re is _SIMPLE_CALL and m.group("args") is not None
        fn, inner = (m.group("fn"), m.group("args")) if wrapped else (m.group("bare"), m.group("bare_args"))
        fn = fn.strip()
        if not fn:
            return False
        if not _FUNCTION_NAME.match(fn):
            return True  # `buf0.reset();`: `call` reads nothing from it either
        if not _IDENTIFIER.fullmatch(fn) or fn in CPP_WORDS:
            return False
        if _NON_PRODUCING_SHIMS.match(fn) and "empty_strided" not in fn:
            return True
        if fn == proxy.CALL or fn == "AOTI_TORCH_ERROR_CODE_CHECK":
            return False
        args: list[str] = []
        names: list[str | None] = []
        outputs: list[str] = []
        for piece in inner.split(",") if inner.strip() else ():
            read = self.pieces.get(piece)
            if read is None:
                read = self._piece(piece.strip())
                if read is None:
                    return False  # first seen: `call` reads it from its node and keeps it
                self.pieces[piece] = read
            names.append(read[0])
            args.append(read[1])
            if read[2] and read[0] is not None:  # an out-argument always names its buffer
                outputs.append(read[0])
        made = entry(fn, args, names, outputs, _loc(self.facts.path, node), self.pending_comment)
        made.checked = wrapped or not fn.startswith("aoti_torch_") or fn.startswith("aoti_torch_grad_mode")
        self.facts.calls.append(made)
        self.pending_comment = None
        return True

    def _piece(self, raw: str) -> tuple[str | None, str, bool] | None:
        """(buffer it names, Python form, whether it is an out-argument) of an argument's text, as
        `_call` reads it from its node; None when only the node can tell."""
        read = plain_argument(raw)
        if read is not None or "(" in raw:
            return read
        known = self.converted.get(raw)
        return None if known is None else (known[0], known[1], False)


def plain_argument(raw: str) -> tuple[str | None, str, bool] | None:
    """(buffer it names, Python form, whether it is an out-argument) of an argument's text that
    tells them alone, as `read_argument` reads its node: a name, `&name`, or a CPU kernel's pointer
    `(const float*)(arg1_1.data_ptr())` (the tensor whose data it passes); None for any other."""
    out = raw.startswith("&")
    name = raw[1:].lstrip() if out else raw
    if "(" in raw:
        cast = DATA_POINTER.fullmatch(raw)
        return None if cast is None or cast.group(1) in CPP_WORDS else (cast.group(1), cast.group(1), False)
    if _IDENTIFIER.fullmatch(name) and name not in CPP_WORDS:
        name = name.removesuffix("_handle") if out else name  # `&buf1_handle`: an out-argument
        return name, name, out
    return None


# `f(args);` and `AOTI_TORCH_ERROR_CODE_CHECK(f(args));` with nothing inside the arguments that can
# hold a comma or a comment of its own: the arguments are the text between commas.
_PLAIN = r"[^()\[\]{}<\"'/\\#;]*"
_CALLEE = r"[^(),\[\]{}<\"'/\\#;]*"
_SIMPLE_CALL = re.compile(rf"(?:AOTI_TORCH_ERROR_CODE_CHECK\s*\(\s*(?P<fn>{_CALLEE})\((?P<args>{_PLAIN})\)\s*\)"
                          rf"|(?P<bare>{_CALLEE})\((?P<bare_args>{_PLAIN})\))\s*;")
# A CPU kernel's launch, `cpp_fused_0((const float*)(arg1_1.data_ptr()), (float*)(buf0.data_ptr()), s77);`:
# parentheses only in arguments of `DATA_POINTER`'s shape (`_piece` reads each argument alone, and
# declines any other piece holding a parenthesis, so no comma can hide inside one).
_CAST_CALL = re.compile(rf"(?P<bare>{_CALLEE})\((?P<bare_args>[^\[\]{{}}<\"'/\\#;]*)\)\s*;")
DATA_POINTER = re.compile(r"\((?:const )?[A-Za-z_][\w:]*\*\)\(([A-Za-z_]\w*)\.(?:data_ptr|get)\(\)\)")
_FUNCTION_NAME = re.compile(r"^[A-Za-z_]\w*$")
# The condition of run_impl's check before it divides by a size: `s27 != 0` (BLOOM's seq).
_NOT_ZERO = re.compile(r"\(?\s*([A-Za-z_]\w*)\s*!=\s*0L?\s*\)?")
_PY_NOT_ZERO = re.compile(r"\((.+) != 0\)", re.S)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Words tree-sitter-cpp does not read as an identifier (keywords, literals, primitive types): such
# an argument takes the node path.
CPP_WORDS = frozenset("""
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t
    class compl concept const consteval constexpr constinit const_cast continue co_await co_return
    co_yield decltype default delete do double dynamic_cast else enum explicit export extern false
    float for friend goto if inline int long mutable namespace new noexcept not not_eq nullptr operator
    or or_eq private protected public register reinterpret_cast requires return short signed sizeof
    static static_assert static_cast struct switch template this thread_local throw true try typedef
    typeid typename union unsigned using virtual void volatile wchar_t while xor xor_eq final override
    NULL TRUE FALSE size_t ssize_t ptrdiff_t intptr_t uintptr_t charptr_t nullptr_t max_align_t
    int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t _Atomic __restrict__ restrict
    __attribute__ __declspec __based __cdecl __clrcall __stdcall __fastcall __thiscall __vectorcall
    _unaligned __unaligned __extension__ __inline __inline__ __forceinline __asm __asm__ defined
    """.split())



def _call(facts: WrapperFacts, fn: str, arg_nodes: list[ts.Node], stmt: ts.Node,
          comment: str | None, max_depth: int, converted: dict[str, tuple[str | None, str]]) -> Call:
    args: list[str] = []
    names: list[str | None] = []
    outputs: list[str] = []
    for arg in arg_nodes:
        name, py, out = read_argument(arg, converted, max_depth)
        names.append(name)
        args.append(py)
        if out:
            assert name is not None  # an out-argument names its buffer
            outputs.append(name)
    return entry(fn, args, names, outputs, _loc(facts.path, stmt), comment)


def read_argument(arg: ts.Node, converted: dict[str, tuple[str | None, str]],
                  max_depth: int) -> tuple[str | None, str, bool]:
    """(buffer it names, Python form, whether it is an out-argument `&buf`) of a call's argument."""
    raw = ts.text(arg)
    if ts.is_identifier(arg):
        # Most launch arguments are bare names: no `&`, no method call, and a name converts to itself.
        return raw, raw, False
    out = ts.address_of(arg)
    if out is not None:
        out = out.removesuffix("_handle")
        return out, out, True
    # The query runs only where its method name can match (it is part of the argument's text).
    tensor = next((ts.text(c["object"]) for c in ts.matches("method_calls", arg)
                   if ts.text(c["method"]) in ("data_ptr", "get") and ts.text(c["args"]) == "()"), None) \
        if "data_ptr" in raw or "get" in raw else None
    if tensor:
        return tensor, tensor, False
    known = converted.get(raw)
    if known is None and "std::array" in raw:
        listed = _int_array(raw)
        if listed is not None:
            known = converted[raw] = (None, listed)
    if known is None:
        # Views passed inline (`reinterpret_tensor_wrapper(buf1, ...)`) still name their buffer.
        name = next((ts.text(i) for i in ts.identifiers(arg) if _TENSOR_NAME.match(ts.text(i))), None)
        try:
            known = converted[raw] = (name, ts.cpp_to_py(arg, max_depth))
        except ts.ExprTooDeep:
            known = converted[raw] = (name, "unknown()")
    return known[0], known[1], False


def entry(fn: str, args: list[str], names: list[str | None], outputs: list[str], location: Location,
          comment: str | None) -> Call:
    if not outputs and names and names[0] and (fn.endswith("_out") or fn.endswith("_")):
        # `aoti_torch_cpu_mm_out(buf0, a, b)` and in-place shims (`..._index_put_`, `copy_`) write
        # into their first argument.
        outputs.append(names[0])
    return Call(fn, tuple(args), tuple(names), location, comment, tuple(outputs))


def _loc(path: str, node: ts.Node) -> Location:
    line, col = ts.position(node)
    return Location(path, line, col)
