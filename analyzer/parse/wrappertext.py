"""Parts of a wrapper read from the text, not parsed: the model constructor's tables and run_impl's
kernel launches. Each part is read where its lines are of a strict shape whose tree wrapper.py
would read the same way, and its bytes are left out of the parse (`Parser.included_ranges`: every
other node keeps its offset, line and column); a line of any other shape is parsed and read from
the tree as before.

The constructor is mostly `constants_info_[i].<field> = <value>;` lines, eleven per constant (a
48-layer transformer: 6,400 lines, 380 KB, a fifth of what tree-sitter parses of a wrapper once its
helpers are cut out), of which the analysis reads four fields (`name`, `original_fqn`, `shape`,
`type`) and the inputs' names: `read_tables` reads the run of such lines opening its body.

run_impl is mostly one line per kernel launch, `call_triton_k(buf0, s27, 2L*s27, ...);` or
`cpp_fused_k((const float*)(arg1_1.data_ptr()), ..., s77);` (GPT-2 at 12 MB: 2,300 lines, 530 KB,
a third of the parse): `read_launches` reads those at the body's own level whose line before ends
a statement, each argument read as calls.py reads it from its node (an argument of another shape
than a name, `&name` or a data pointer is parsed alone, once per distinct text, and must parse
without error).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import ts
from ..core.budget import poll
from .calls import CPP_WORDS, entry, plain_argument, read_argument
from .call import Call
from ..core.findings import Location

# One table line; its value is one of the plain shapes below (anything else ends the run).
_LINE = re.compile(rb"[ \t]*(inputs_info_|constants_info_|outputs_info_)\[(0|[1-9][0-9]*)\]\.([A-Za-z_][A-Za-z0-9_]*)"
                   rb" = ([^;\n]*);[ \t]*\r?$", re.M)
_BLANK = re.compile(rb"[ \t\r]*$", re.M)
_STRING = re.compile(rb'"([^"\\\n]*)"')
_INTS = re.compile(rb"\{(?:-?[0-9]+L?(?:, -?[0-9]+L?)*)?\}")
_INT = re.compile(rb"-?[0-9]+L?")
_NAME = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_CAST = re.compile(rb"static_cast<int32_t>\([A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*\)")
_CONSTANT_TYPE = re.compile(rb"static_cast<int32_t>\(torch::aot_inductor::ConstantType::([A-Za-z_][A-Za-z0-9_]*)\)")
# Values that are a word: an identifier, or one of these literals (any other keyword is not a value).
_LITERALS = frozenset({"true", "false", "nullptr", "this"})


@dataclass
class Tables:
    """What the run of table lines gives, as wrapper.py's `_constructor` reads it from the tree."""

    body: int = -1                      # offset of the constructor body's `{` (-1: none read)
    span: tuple[int, int] | None = None  # the run's bytes, left out of the parse
    inputs: dict[int, str] = field(default_factory=dict)
    # index -> {"name" | "original_fqn": str | None, "shape": tuple, "type": str}, in text order
    constants: dict[int, dict] = field(default_factory=dict)


def read_tables(data: bytes, body: int, end: int) -> Tables | None:
    """The table lines opening the body `data[body + 1:end]` (`data[body]` is its `{`); None when
    the body does not open with one."""
    line_end = data.find(b"\n", body, end)
    if line_end < 0 or data[body + 1:line_end].strip():
        return None
    tables = Tables(body=body)
    pos, first, last = line_end + 1, -1, -1
    lines = 0
    while pos < end:
        lines += 1
        if not lines & 4095:
            poll("reading the model constructor's tables")
        m = _LINE.match(data, pos, end)
        if m is None:
            blank = _BLANK.match(data, pos, end)
            if blank is None:
                break
            pos = blank.end() + 1  # a blank line inside the run
            continue
        if not _read_line(tables, m):
            break
        first = m.start() if first < 0 else first
        last = m.end()
        pos = m.end() + 1
    if first < 0:
        return None
    tables.span = (first, last)
    return tables


def _read_line(tables: Tables, m: re.Match[bytes]) -> bool:
    """Record one table line; False (ending the run) for a value of another shape."""
    table, index, fld, value = m.group(1), int(m.group(2)), m.group(3), m.group(4)
    string = _STRING.fullmatch(value)
    if string is not None:
        try:
            text: str | None = string.group(1).decode("utf-8")
        except UnicodeDecodeError:
            return False
    elif _INTS.fullmatch(value) or _INT.fullmatch(value) or _CAST.fullmatch(value) \
            or (_NAME.fullmatch(value) and _word(value.decode("ascii"))):
        text = None
    else:
        return False
    if table == b"inputs_info_":
        if fld == b"name" and text is not None:
            tables.inputs[index] = text
    elif table == b"constants_info_":
        return _constant(tables.constants, index, fld.decode("ascii"), value, string is not None, text)
    return True


def _word(word: str) -> bool:
    return word in _LITERALS or word not in CPP_WORDS


def _constant(constants: dict[int, dict], index: int, fld: str, value: bytes, is_string: bool,
              text: str | None) -> bool:
    if fld in ("name", "original_fqn"):
        constants.setdefault(index, {})[fld] = text if is_string else None
    elif fld == "shape":
        if not _INTS.fullmatch(value):
            return False
        constants.setdefault(index, {})["shape"] = tuple(int(n.rstrip(b"L")) for n in _INT.findall(value))
    elif fld == "type":
        kind = _CONSTANT_TYPE.fullmatch(value)
        if kind is None:
            return False
        constants.setdefault(index, {})["type"] = kind.group(1).decode("ascii")
    else:
        constants.setdefault(index, {})
    return True


# --- run_impl's launches ------------------------------------------------------------------------

# A launch alone on its line: the callee, then arguments holding no bracket, brace, quote, `<`,
# comment or directive (parentheses only in data pointers, checked argument by argument).
_LAUNCH = re.compile(rb"[ \t]*((?:call_triton_|cpp_)[A-Za-z0-9_]+)\(([^\[\]{}<\"'/\\#;]*)\);[ \t]*\r?")
# Literals and comments on a line whose braces are counted (one without a quote or `/` is counted
# as it is); a raw string, a block comment or a directive makes the whole body the tree's.
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.){1,8}\'|//.*|[{}"\'#]|/\*')
# A code line that ends a statement: `;` or a brace, then maybe a comment with no quote.
_ENDED = re.compile(rb"[;{}][ \t]*(?://[^\"']*)?\r?$")
_LAUNCH_HEADS = (b"call_triton_", b"cpp_")
_LAUNCH_STARTS = frozenset(head[:4] for head in _LAUNCH_HEADS)


@dataclass(frozen=True)
class TextLaunch:
    at: int                      # byte offset of the statement
    call: Call                   # as calls.Launches reads it, without the comment before it


@dataclass
class LaunchLines:
    body: int                                   # offset of run_impl's body `{`
    found: list[TextLaunch] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)  # left out of the parse


@dataclass
class WrapperText:
    """What a wrapper's parse leaves out, read from its text (parsing.parse_bytes fills it)."""

    max_depth: int
    tables: Tables | None = None
    launches: LaunchLines | None = None
    # The tree's functions (ts.functions) where checking run_impl for a syntax error searched them
    # and that tree is the one returned: its readers need not search it again.
    functions: list | None = None


def read_launches(data: bytes, path: str, body: int, end: int, max_depth: int) -> LaunchLines | None:
    """The launches of run_impl's body `data[body + 1:end]` read from their lines: those at the
    body's own level whose code line before ends a statement. None when the body holds text whose
    braces the scan cannot count, or no such launch."""
    text = data[body + 1:end]
    if b"call_triton_" not in text and b"cpp_" not in text or b"\\\n" in text or b"\\\r\n" in text:
        return None
    lines = LaunchLines(body)
    reader = _Arguments(max_depth)
    depth, ended, row, pos = 1, True, data.count(b"\n", 0, body + 1), body + 1
    found, spans = lines.found, lines.spans
    for line in text.split(b"\n"):
        at = pos
        pos += len(line) + 1
        row += 1
        if not row & 4095:
            poll("reading run_impl's launches")
        code = line.lstrip()
        if not code:
            continue
        if code[:4] in _LAUNCH_STARTS and depth == 1 and ended and code.startswith(_LAUNCH_HEADS):
            m = _LAUNCH.fullmatch(line)
            call = reader.call(m, Location(path, row, len(line) - len(code) + 1)) if m is not None else None
            if call is not None:
                start = at + m.start(1)  # type: ignore[union-attr]  # a call implies a match
                found.append(TextLaunch(start, call))
                stop = at + m.end(2) + 2  # type: ignore[union-attr]  # through `);`
                if spans and not data[spans[-1][1]:start].strip():
                    spans[-1] = (spans[-1][0], stop)  # only blanks between: one span
                else:
                    spans.append((start, stop))
                continue  # a launch's line ends its statement and holds no brace
        if b"{" not in line and b"}" not in line and b'"' not in line and b"'" not in line \
                and b"/" not in line and b"#" not in line:
            ended = line.rstrip().endswith(b";")
            continue
        counted = _braces(line)
        if counted is None:
            return None
        depth += counted
        if not code.startswith(b"//"):  # a comment line leaves the statement before it as it was
            ended = line.rstrip().endswith((b";", b"{", b"}")) or b"//" in line and _ENDED.search(line) is not None
    return lines if lines.found else None


def _braces(line: bytes) -> int | None:
    """`{` less `}` on a line outside its literals and comments; None at one the scan does not read."""
    if b'"' not in line and b"'" not in line and b"/" not in line and b"#" not in line:
        return line.count(b"{") - line.count(b"}")
    change = 0
    for token in _TOKEN.finditer(line):
        text = token.group()
        if text == b"{":
            change += 1
        elif text == b"}":
            change -= 1
        elif text in (b'"', b"'", b"#", b"/*") or (text[:1] in b"\"'" and line[token.start() - 1:token.start()].isalnum()):
            # Unterminated, a directive, a block comment, a raw or prefixed string, a digit separator.
            return None
    return change


class _Arguments:
    """A launch's arguments as calls.py reads them from their nodes, each distinct text read once."""

    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        self.converted: dict[str, tuple[str | None, str]] = {}
        self.pieces: dict[bytes, tuple[str | None, str, bool] | None] = {}

    def call(self, m: re.Match[bytes], location: Location) -> Call | None:
        """The launch `m` as a Call; None when an argument is of another shape or does not parse
        alone without error."""
        fn = m.group(1).decode("ascii")
        inner = m.group(2)
        known = self.pieces
        reads = [known[p] if p in known else known.setdefault(p, self._piece(p))
                 for p in (inner.split(b",") if inner.strip() else ())]
        if None in reads:
            return None
        return entry(fn, [r[1] for r in reads], [r[0] for r in reads], [r[1] for r in reads if r[2]],  # type: ignore[index]
                     location, None)  # (None is not among the reads)

    def _piece(self, piece: bytes) -> tuple[str | None, str, bool] | None:
        poll("reading run_impl's launches")  # each distinct argument: one may cost a parse
        try:
            raw = piece.decode("utf-8").strip()
        except UnicodeDecodeError:
            return None
        read = plain_argument(raw)
        if read is not None or "(" in raw or ")" in raw or raw.startswith("&"):
            return read
        # Parsed alone, as the one argument of a call statement (its context in run_impl).
        tree, _ = ts.parse(b"void f() {\n    g(" + raw.encode("utf-8") + b");\n}\n")
        statements = ts.body_statements(tree.root_node) if tree is not None else None  # None: a syntax error
        found = ts.call(statements[0]) if statements is not None and len(statements) == 1 else None
        if found is None or len(found[1]) != 1:
            return None
        name, py, out = read_argument(found[1][0], self.converted, self.max_depth)
        return None if out else (name, py, False)  # an out-argument of another shape: the tree's
