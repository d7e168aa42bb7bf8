"""Size expressions of an exported program: sympy's `srepr` as torch 2.13 writes it
(`Mul(Integer(2), Symbol('s77', positive=True))`) parsed by a small tokenizer (never evaluated) and
written back as plain infix text (`2*s77`), and the declared range of an affine one (`2*s77 + 1`).
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<num>-?\d+)|(?P<str>'[^']*'|\"[^\"]*\")"
                    r"|(?P<punct>[(),=]))")


def norm(text: str) -> str:
    return re.sub(r"\s+", "", text)


def expr_text(expr: str) -> str:
    """Plain infix text for a size expression; srepr is parsed, anything else returned as is."""
    if "Symbol(" not in expr and "Integer(" not in expr:
        return expr.strip()
    try:
        node, pos = _parse_srepr(expr, 0, depth=0)
    except (ValueError, IndexError, RecursionError):
        return expr.strip()
    if expr[pos:].strip():
        return expr.strip()
    return _render(node)


def _parse_srepr(text: str, pos: int, depth: int) -> tuple[tuple, int]:
    """One srepr call: ("sym", name) | ("int", n) | (head, [args]). Keyword args are dropped."""
    if depth > 64:
        raise ValueError("too deep")
    match = _TOKEN.match(text, pos)
    if not match:
        raise ValueError("bad token")
    pos = match.end()
    if match.group("num") is not None:
        return ("int", int(match.group("num"))), pos
    if match.group("str") is not None:
        return ("str", match.group("str")[1:-1]), pos
    head = match.group("name")
    if head is None:
        raise ValueError("expected a name")
    nxt = _TOKEN.match(text, pos)
    if not nxt or nxt.group("punct") != "(":
        return ("name", head), pos            # a bare word: True, False, oo
    pos = nxt.end()
    args: list[tuple] = []
    while True:
        tok = _TOKEN.match(text, pos)
        if not tok:
            raise ValueError("unterminated call")
        if tok.group("punct") == ")":
            pos = tok.end()
            break
        if tok.group("punct") == ",":
            pos = tok.end()
            continue
        # keyword argument: name '=' value -> skip
        after = _TOKEN.match(text, tok.end())
        if tok.group("name") and after and after.group("punct") == "=":
            _, pos = _parse_srepr(text, after.end(), depth + 1)
            continue
        arg, pos = _parse_srepr(text, pos, depth + 1)
        args.append(arg)
    if head == "Symbol" and args and args[0][0] == "str":
        return ("sym", args[0][1]), pos
    if head == "Integer" and args and args[0][0] == "int":
        return ("int", args[0][1]), pos
    return (head, args), pos


_INFIX = {"Mul": "*", "Add": " + "}
_FUNCS = {"FloorDiv": "//", "Mod": "%", "PythonMod": "%", "CleanDiv": "//"}


def _render(node: tuple) -> str:
    kind, payload = node
    if kind == "sym":
        return payload
    if kind == "int":
        return str(payload)
    if kind in ("str", "name"):
        return str(payload)
    args = payload
    if kind == "Mul":
        # Mul(Integer(-1), x) prints as -x
        if len(args) == 2 and args[0] == ("int", -1):
            return "-" + _wrap(args[1], for_mul=True)
        return "*".join(_wrap(arg, for_mul=True) for arg in args)
    if kind == "Add":
        text = _render(args[0]) if args else "0"
        for arg in args[1:]:
            piece = _render(arg)
            text += f" - {piece[1:]}" if piece.startswith("-") else f" + {piece}"
        return text
    if kind in _FUNCS and len(args) == 2:
        return f"{_wrap(args[0], True)}{_FUNCS[kind]}{_wrap(args[1], True)}"
    if kind == "Pow" and len(args) == 2:
        return f"{_wrap(args[0], True)}**{_wrap(args[1], True)}"
    if kind == "Rational" and len(args) == 2:
        return f"{_render(args[0])}/{_render(args[1])}"
    name = {"Max": "max", "Min": "min"}.get(kind, kind)
    return f"{name}({', '.join(_render(arg) for arg in args)})"


def _wrap(node: tuple, for_mul: bool) -> str:
    text = _render(node)
    if for_mul and node[0] == "Add":
        return f"({text})"
    return text


_AFFINE = re.compile(r"^(?:(?P<a>\d+)\*)?(?P<sym>[A-Za-z_]\w*)(?:(?P<op>[+-])(?P<b>\d+))?$")


def declared_range(text: str, ranges: dict) -> tuple[int | None, int | None]:
    """A dim's range: its own range_constraints entry, else derived from `a*s + b` of one root."""
    key = norm(text)
    if key in ranges:
        return ranges[key]
    match = _AFFINE.match(key)
    if not match or match.group("sym") not in ranges:
        return None, None
    a = int(match.group("a") or 1)
    b = int(match.group("b") or 0) * (-1 if match.group("op") == "-" else 1)
    lo, hi = ranges[match.group("sym")]
    return (None if lo is None else a * lo + b), (None if hi is None else a * hi + b)
