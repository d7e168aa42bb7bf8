"""The model constructor's tables read from the text, not parsed.

The constructor of a wrapper is mostly `constants_info_[i].<field> = <value>;` lines, eleven per
constant (a 48-layer transformer: 6,400 lines, 380 KB, a fifth of what tree-sitter parses of a
wrapper once its helpers are cut out), and the analysis reads four of those fields (`name`,
`original_fqn`, `shape`, `type`) and the inputs' names. `read_tables` reads the run of such lines
that opens the constructor's body, each of a strict shape whose tree wrapper.py would read the same
way, and gives its span, which the parse leaves out (`Parser.included_ranges`: every other node
keeps its offset, line and column); the first line of any other shape ends the run, and it and
everything after it are parsed and read from the tree as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .calls import CPP_WORDS

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
    while pos < end:
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
