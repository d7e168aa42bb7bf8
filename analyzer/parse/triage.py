"""The fast path: tell from a cheap text scan which Triton kernels need the full walk.

A transformer's thousands of kernels are mostly layer norms, GELUs and residual adds: no
assertion, no division by a size, no reduction the rules read. For those, `kernels.parse_triton`
would build and walk an AST (a third of a check's time on a 12 MB wrapper) only to return the
kernel's parameters and signature. `light_triton` returns those same facts from a regular-
expression scan, and returns None (walk it) whenever the scan cannot prove that the walk would
find nothing: any `device_assert`, any reduction-like call, any float division whose divisor may
depend on a size parameter or integer one whose dividend may also be loaded data, or a source
shaped differently from Inductor's. The scan over-approximates
`kernels`' own tests (`_division`, `_REDUCTIONS`), so the facts are the same either way. The
caller (api.py) still walks every kernel that a launch gives a constant: `read-past-constant` reads
its loads: for such a kernel the scan's answer is completed by `with_definitions`, a parse of
the function alone. One difference remains, on a kernel whose Python does not parse: the walk reports it
(`unparsed-member`), the scan cannot tell, and such a kernel holds nothing the rules could check.
"""

from __future__ import annotations

import ast
import functools
import keyword
import re

from ..core.findings import Location
from . import tritonlines
from .kernels import KernelFacts, assign_definitions, packed, parse_triton
from .stores import combine_op

_POINTER_PARAM = re.compile(r"^(in_out_ptr|in_ptr|out_ptr)\d+$")
_PARAM = re.compile(r"\s*([A-Za-z_]\w*)\s*(?::\s*[A-Za-z_][\w.]*\s*)?")
_DEF = re.compile(r"^def (\w+)\((.*)\):[ \t]*$", re.M)
_SIGNATURE = re.compile(r"triton_meta=\{'signature': (\{[^{}]*\})")
_SIGNATURE_DICT = re.compile(r"\{(?:'[\w.*]*': '[\w.*\[\], ]*'(?:, )?)*\}$")
# Calls whose facts the walk keeps: reductions (a superset of kernels._REDUCTIONS) and the
# `mod`/`floordiv`/`fmod` calls that are divisions; assertions are found by their name alone.
_WALKED_CALLS = frozenset({"max2", "max", "min2", "min", "argmax", "argmin", "prod", "max_with_index",
                           "min_with_index", "mod", "floordiv", "fmod"})
_WALKED_PARTS = ("max", "min", "prod", "mod", "floordiv")  # substrings of every name above
# A call of one of them: the whole name (not a word's tail) before `(`. One search (a findall of
# every `word(` retried each word at every character: a third of the scan's time).
_WALKED_CALL = re.compile(r"(?<!\w)(?:%s)\s*\(" % "|".join(sorted(_WALKED_CALLS, key=len, reverse=True)))
_TOKEN = re.compile(r"\d[\w.]*|[A-Za-z_]\w*|\*\*|//|\S")
_ASSIGN = re.compile(r"^\s+([A-Za-z_]\w*)\s*(?::[^=]*)?=(?!=)(.*)$")
_LOAD = re.compile(r"(?<![\w.])(?:tl\.)?load\(")
_QUOTES = "'" * 3


def light_triton(name: str, source: str, path: str, first_line: int, indent: int) -> KernelFacts | None:
    """The facts `kernels.parse_triton` would return for a kernel with nothing to walk, or None."""
    if "device_assert" in source or _QUOTES in source or '"""' in source or "\\" in source:
        return None
    defs = source.count("\ndef ") + source.startswith("def ")
    if defs != 1 and not _combine_helpers_above(name, source, defs):
        return None
    # The last line starting with `def `: the kernel's (any other is a scan's combine helper).
    at = 0 if defs == 1 and source.startswith("def ") else source.rfind("\ndef ") + 1
    found = _DEF.match(source, at)
    if found is None or found.group(1) != name:
        return None
    params = _params(found.group(2))
    if params is None:
        return None
    types = _signature(source)
    if types is None:
        return None
    newline = source.find("\n", at)
    body = source[newline + 1:] if newline >= 0 else ""
    if any(part in body for part in _WALKED_PARTS) and _WALKED_CALL.search(body):
        return None
    if not _one_statement_per_line(body) or _divides_by_size(body, params):
        return None
    def_line = source.count("\n", 0, at) + 1
    facts = KernelFacts(name, "triton", params, Location(path, first_line + def_line - 1, indent + 1))
    facts.param_types = types
    return facts


def _combine_helpers_above(name: str, source: str, defs: int) -> bool:
    """Whether every `def` but the last is a scan's combine helper (`_triton_helper_fn_add0`) and
    the last is the kernel's: the walk reads nothing else from those helpers than the operation
    they combine with (`without_helpers`), which only the values of a walked kernel use."""
    return (source.count("\ndef _triton_helper_fn_") + source.startswith("def _triton_helper_fn_") == defs - 1
            and source.rfind("\ndef ") == source.find(f"\ndef {name}("))


def without_decorator(name: str, source: str) -> tuple[str, dict[str, str]] | None:
    """For a kernel that must be walked: its source with every line above `def <name>(` left
    empty (the decorator's dicts are most of the text; the walk keeps the same line numbers) and
    its signature as the scan reads it; None when the source is not that one decorated def."""
    if source.count("\ndef ") != 1 or source.startswith("def "):
        return None
    at = source.find("\ndef ") + 1
    found = _DEF.match(source, at)
    types = _signature(source)
    if found is None or found.group(1) != name or types is None or source.find("triton_meta=", at) >= 0:
        return None
    return "\n" * source.count("\n", 0, at) + source[at:], types


def without_helpers(name: str, source: str) -> tuple[str, dict[str, str], dict[str, str]] | None:
    """For a kernel that must be walked and defines Triton helper functions above it (a scan's
    `_triton_helper_fn_add0`): `without_decorator`'s answer, and the helpers' combine operations
    (`kernels.parse_triton`'s `combines`) from a parse of the text above the kernel's decorators
    alone (a few lines). None unless the kernel is the last def and the lines between its
    decorators and its def are decorator lines."""
    at = source.rfind(f"\ndef {name}(") + 1
    if at <= 0 or source.find("\ndef ", at) >= 0 or source.find("triton_meta=", at) >= 0:
        return None
    found, types = _DEF.match(source, at), _signature(source)
    if found is None or found.group(1) != name or types is None:
        return None
    lines = source[:at].split("\n")[:-1]
    start = None
    for j in range(len(lines) - 1, -1, -1):
        line = lines[j]
        if line.startswith("@"):
            start = j
        elif line and line[0] not in " \t)":
            break  # the helper's `def` (or other code): the kernel's decorators begin below it
    if start is None:
        return None
    try:
        helpers = ast.parse("\n".join(lines[:start]))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    defs = [n for n in helpers.body if isinstance(n, ast.FunctionDef)]
    if any(d.name == name for d in defs):
        return None  # parse_triton would take that one
    combines = {d.name: op for d in defs if (op := combine_op(d))}
    return "\n" * source.count("\n", 0, at) + source[at:], types, combines


def with_definitions(light: KernelFacts, name: str, source: str, first_line: int, indent: int) -> KernelFacts | None:
    """`light` with the definitions `read-past-constant` reads in a kernel given a constant, as the
    walk collects them (`tmpN = ...` and annotated assignments to a name, in the walk's order and
    at the same lines), from a parse of the function alone: the decorator's dicts are most of an
    Inductor kernel's text, and `light_triton` already vouched that nothing else is to be found.
    None (walk it) when the function does not parse as the scan read it."""
    start = 0 if source.startswith(f"def {name}(") else source.find(f"\ndef {name}(") + 1
    if source.count("\ndef ", 0, start) or source.startswith("def _triton_helper_fn_"):
        # A scan: the values of its definitions read the combine helpers' operations, as the walk's.
        scan = without_helpers(name, source)
        if scan is None:
            return None
        light.combines = scan[2]
    offset = source.count("\n", 0, start)  # lines above the def: the walk's line numbers count them
    path = light.location.path
    light.locate = lambda line: Location(path, first_line + line - 1, indent + 1)
    flat = _line_definitions(source[start:], offset)
    if flat is not None:
        light.defs = packed(flat)
        return light
    try:
        tree = ast.parse(source[start:])
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    fn = tree.body[0] if tree.body else None
    if not isinstance(fn, ast.FunctionDef) or fn.name != name or tuple(a.arg for a in fn.args.args) != light.params:
        return None
    defs: dict[str, list[tuple[int, ast.expr]]] = {name: list(found) for name, found in light.defs.items()}
    for stmt in fn.body:
        # kernels.walk_statements' order restricted to statements (expressions hold none).
        stack: list[ast.AST] = [stmt]
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Assign):
                assign_definitions(defs, node, offset)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                defs.setdefault(node.target.id, []).append((node.lineno + offset, node.value))
            for field in node._fields:
                value = getattr(node, field, None)
                if isinstance(value, _BLOCKS):
                    stack.append(value)
                elif isinstance(value, list):
                    stack.extend(v for v in value if isinstance(v, _BLOCKS))
    light.defs = packed(defs)
    return light


# Nodes that hold statements (the walk's Assign/AnnAssign are statements).
_BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)
_SIMPLE_ASSIGN = re.compile(r"([A-Za-z_]\w*) = (.+)")
_ANNOTATED_ASSIGN = re.compile(r"([A-Za-z_]\w*): ([A-Za-z_][\w.]*) = (.+)")
_CALL_STATEMENT = re.compile(r"([A-Za-z_]\w*)(?:\.[A-Za-z_]\w*)*\(")


def _line_definitions(function: str, offset: int) -> dict[str, list[tuple[int, ast.expr]]] | None:
    """The definitions of a function whose body is flat, line by line: every statement one line at
    the body's indentation, either `name = <expression>` or a call (`tl.store(...)`); None for
    anything else (blocks, other statements), which the parse of the whole function reads. Each
    expression is parsed once per distinct text (`x0 = xindex % 768`, `xoffset = ...` recur in
    most kernels of a model). Statement order is source order, as the walk's for a flat body."""
    lines = function.split("\n")
    defs: dict[str, list[tuple[int, ast.expr]]] = {}
    body_indent = None
    for number, line in enumerate(lines[1:], start=offset + 2):
        kind = _line_kind(line)
        if kind is None:
            return None
        lead, target, value = kind
        if lead is None:
            continue  # blank or a comment
        if body_indent is None:
            body_indent = lead
        if not lead or lead != body_indent:
            return None
        if target is not None and value is not None:  # a target comes with its value
            defs.setdefault(target, []).append((number, value))
    return defs if body_indent is not None else None


@functools.lru_cache(maxsize=1 << 16)
def _line_kind(line: str) -> tuple[str | None, str | None, ast.expr | None] | None:
    """One line of a flat body, once per distinct text: (indent, assigned name, its value) for
    `name = <expression>`, (indent, None, None) for a call statement, (None, None, None) for a
    blank line or a comment; None for anything else."""
    stripped = line.strip()
    if not stripped or stripped[0] == "#":
        return None, None, None
    if stripped.endswith(":") or stripped.endswith("\\"):
        return None
    lead = line[:len(line) - len(line.lstrip())]
    m = _SIMPLE_ASSIGN.fullmatch(stripped)
    if m is not None and not keyword.iskeyword(m.group(1)):
        value = expression(m.group(2))
        return None if value is None else (lead, m.group(1), value)
    # `R0_BLOCK: tl.constexpr = 128` (persistent reductions): the walk keeps an annotated
    # assignment's value as it keeps a plain one's.
    m = _ANNOTATED_ASSIGN.fullmatch(stripped)
    if m is not None and not keyword.iskeyword(m.group(1)):
        value = expression(m.group(3))
        return None if value is None or expression(m.group(2)) is None else (lead, m.group(1), value)
    call = _CALL_STATEMENT.match(stripped)
    if call is None or keyword.iskeyword(call.group(1)) or expression(stripped) is None:
        return None
    return lead, None, None


@functools.lru_cache(maxsize=1 << 16)
def expression(text: str) -> ast.expr | None:
    """One line's expression (shared by every kernel holding that line: never mutated)."""
    try:
        return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@functools.lru_cache(maxsize=1024)
def _params(text: str) -> tuple[str, ...] | None:
    """`in_ptr0, ks0, XBLOCK : tl.constexpr` -> names; None for anything fancier (defaults,
    `*args`, `/`, nested annotations), which the walk handles."""
    if not text.strip():
        return ()
    out = []
    for part in text.split(","):
        m = _PARAM.fullmatch(part)
        if m is None:
            return None
        out.append(m.group(1))
    return tuple(out)


def _signature(source: str) -> dict[str, str] | None:
    """`triton_meta={'signature': {...}}` as `kernels._triton_signature` reads it; {} without one."""
    at = source.find("triton_meta=")
    if at < 0:
        return {}
    found = _SIGNATURE.match(source, at)  # (a search of the whole text: a tenth of the scan's time)
    if found is None or source.find("triton_meta=", at + 1) >= 0:
        return None
    value = _signature_dict(found.group(1))
    return None if value is None else dict(value)


@functools.lru_cache(maxsize=1024)
def _signature_dict(text: str) -> dict[str, str] | None:
    """Kernels of one model share a handful of signatures: read each once."""
    if not _SIGNATURE_DICT.match(text):
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return {str(k): str(v) for k, v in value.items()}


def _divides_by_size(body: str, params: tuple[str, ...]) -> bool:
    """True unless no `/`, `//` or `%` in the body can count as `values.division` counts them: a
    float `/` whose divisor may depend on a size parameter, or an integer `//` or `%` by such a
    divisor whose dividend may also be loaded data (index arithmetic like `(xindex // 32) % ks0`
    never runs for a lane that does not exist). Reach is over-approximated like `Values.sources`:
    a name reaches a size (loaded data) when any assignment to it mentions a size parameter (a
    load) or a name that does; the arguments of `load` are offsets, which the walk does not
    follow either; every name on a division's line may be its dividend."""
    if "/" not in body and "%" not in body:
        return False
    floats: set[str] = set()
    integers: list[tuple[str, tuple[str, ...]]] = []
    for line in body.split("\n"):
        if "/" not in line and "%" not in line:
            continue
        found = _line_divisors(line)
        if found is None:
            return True  # not understood: walk it
        floats.update(found[0])
        if found[1]:
            integers.append((line, found[1]))
    if not floats and not integers:
        return False  # only constant divisors (`xindex % 16`, `x / 16.0`)
    assigns = [assigned for line in body.split("\n") if (assigned := _assigned_names(line)) is not None]
    sized = _reach({p for p in params if not _POINTER_PARAM.match(p)}, assigns)
    if not sized.isdisjoint(floats):
        return True
    integers = [(line, names) for line, names in integers if not sized.isdisjoint(names)]
    if not integers:
        return False  # no integer division by a name reaching a size
    loaded = _reach({target for target, _, loads in assigns if loads}, assigns)
    return any("load" in line or not loaded.isdisjoint(_names(_drop_loads(line))) for line, _ in integers)


def _reach(names: set[str], assigns: list[tuple[str, frozenset[str], bool]]) -> set[str]:
    """`names` and every name assigned from one of them, transitively (order ignored)."""
    changed = True
    while changed:
        changed = False
        for target, used, _ in assigns:
            if target not in names and not names.isdisjoint(used):
                names.add(target)
                changed = True
    return names


@functools.lru_cache(maxsize=1 << 16)
def _assigned_names(line: str) -> tuple[str, frozenset[str], bool] | None:
    """`x1 = xindex // ks0` -> ("x1", {"xindex", "ks0"}, False) (names inside a load's offsets left
    out; True when the value may load: any `load` in it); None for a line that assigns nothing.
    Once per distinct line: kernels share most of theirs."""
    m = _ASSIGN.match(line)
    return (m.group(1), frozenset(_names(_drop_loads(m.group(2)))), "load" in m.group(2)) if m else None


@functools.lru_cache(maxsize=4096)
def _line_divisors(line: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The names in the divisors of one line's `/` and of its `//` and `%` (`<constant>` for a
    number); None when one is not understood. Once per distinct line: `x0 = xindex % 768` recurs
    in most kernels."""
    tokens = _TOKEN.findall(line)
    floats: list[str] = []
    integers: list[str] = []
    for i, tok in enumerate(tokens):
        if tok in ("/", "//", "%"):
            operand = _operand(tokens, i + 1)
            if not operand:
                return None
            (floats if tok == "/" else integers).extend(n for n in operand if n != "<constant>")
    return tuple(floats), tuple(integers)


def _one_statement_per_line(body: str) -> bool:
    """Inductor writes one statement per line; a bracket left open (a statement over several
    lines) or a `;` would hide names from the line-wise scan, so such a kernel is walked."""
    if ";" in body:
        return False
    # Each line reduced to its brackets: a kernel's lines come in a handful of shapes (`()`, `([])`).
    shapes = set(body.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKET).split(b"\n"))
    return all(map(_balanced, shapes))


@functools.lru_cache(maxsize=4096)
def _balanced(shape: bytes) -> bool:
    """Whether a line's brackets (`([])`) open as many of each kind as they close; once per shape."""
    return all(shape.count(opening) == shape.count(closing) for opening, closing in _BRACKETS)


_BRACKETS = ((b"(", b")"), (b"[", b"]"), (b"{", b"}"))
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"()[]{}\n")  # deleted by bytes.translate


def _names(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text) if t[0].isalpha() or t[0] == "_"]


def _drop_loads(text: str) -> str:
    """`tl.load(in_ptr0 + (x3), xmask)` -> `tl.load()`: the walk does not follow load offsets."""
    out, pos = [], 0
    for m in _LOAD.finditer(text):
        if m.start() < pos:
            continue
        out.append(text[pos:m.end()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        out.append(")")
        pos = j
    out.append(text[pos:])
    return "".join(out)


def _operand(tokens: list[str], i: int) -> list[str]:
    """The names in the right operand of a binary operator starting at token i (unary signs,
    a bracketed group or an atom with its trailers, then any `**` power); [] when unclear."""
    names: list[str] = []
    while i < len(tokens) and tokens[i] in ("-", "+", "~"):
        i += 1
    while True:
        if i >= len(tokens):
            return []
        if tokens[i] in ("(", "["):
            i = _close(tokens, i, names)
            if i < 0:
                return []
        elif tokens[i][0].isalnum() or tokens[i][0] == "_":
            if not tokens[i][0].isdigit():
                names.append(tokens[i])
            i += 1
        else:
            return []
        # Trailers: `.attr`, calls and subscripts bind tighter than the division.
        while i < len(tokens) and tokens[i] in (".", "(", "["):
            if tokens[i] == ".":
                i += 2
            else:
                i = _close(tokens, i, names)
                if i < 0:
                    return []
        if i < len(tokens) and tokens[i] == "**":
            i += 1
            while i < len(tokens) and tokens[i] in ("-", "+", "~"):
                i += 1
            continue
        return names or ["<constant>"]


def _close(tokens: list[str], i: int, names: list[str]) -> int:
    """Index past the bracket group opening at i, collecting its names; -1 when unbalanced."""
    depth = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok in ("(", "["):
            depth += 1
        elif tok in (")", "]"):
            depth -= 1
            if depth == 0:
                return i + 1
        elif tok[0].isalpha() or tok[0] == "_":
            names.append(tok)
        i += 1
    return -1


def walk_triton(name: str, source: str, path: str, first_line: int, indent: int,
                params: tuple[str, ...], fast_path: bool = True) -> KernelFacts:
    """The full walk of a Triton kernel (`kernels.parse_triton`); on the fast path without parsing
    its decorator (the same facts: tests/test_fast_path.py)."""
    short = without_decorator(name, source) if fast_path else None
    combines: dict[str, str] = {}
    if short is None and fast_path and source.count("\ndef ") > 1:
        scan = without_helpers(name, source)
        short, combines = (scan[:2], scan[2]) if scan is not None else (None, {})
    if short is not None:
        lines = tritonlines.walk(name, short[0], path, first_line, indent, short[1])
        if lines is not None and lines.problem is None:
            lines.combines = combines
            return lines
    facts = parse_triton(name, source if short is None else short[0], path, first_line, indent, params)
    if short is not None:
        if facts.problem is not None:  # reported as the whole source would be
            return parse_triton(name, source, path, first_line, indent, params)
        facts.param_types, facts.combines = short[1], combines
    return facts
