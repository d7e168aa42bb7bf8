"""The symbolic ints an exported graph computes, as guard text over input sizes.

`torch.export` writes a size the model computes from its inputs as a chain of nodes:
`sym_size.int(x, 1)`, `_operator.floordiv(s, 20)`, `torch.sym_min(a, b)`, `_operator.sub(a, b)`, and
an op such as `aten.pad` takes the chain's last name in a symbolic int list. Each is recorded as text
in the guards' vocabulary (`L['x'].size()[1]`), parsed with `ast` over analyzer.query.guards'
whitelist later and never evaluated as code; an op outside this table leaves its output unread.
"""

from __future__ import annotations

from typing import Any

_OPS = {"_operator.add": "+", "_operator.sub": "-", "_operator.mul": "*", "_operator.floordiv": "//",
        "_operator.mod": "%", "torch.sym_min": "min", "torch.sym_max": "max"}
MAX_TEXT = 4096   # a chain nests its operands' texts: past this, unread


def record(target: str, operands: list, out: Any, syms: dict[str, str]) -> None:
    """Record the symbolic int `out` that node `target` computes from `operands` (each the node
    input's `(kind, value)` union, or None) in `syms`, by name; unread ones are left out."""
    if not isinstance(out, str):
        return
    text = None
    if target == "torch.ops.aten.sym_size.int" and len(operands) == 2 and operands[0] and operands[1] \
            and operands[0][0] == "as_tensor" and operands[1][0] == "as_int" and type(operands[1][1]) is int:
        tensor = operands[0][1].get("name") if isinstance(operands[0][1], dict) else None
        text = f"L[{tensor!r}].size()[{operands[1][1]}]" if isinstance(tensor, str) else None
    elif target in _OPS and len(operands) == 2:
        a, b = (operand(o[1], syms) if o and o[0] in ("as_int", "as_sym_int") else None for o in operands)
        op = _OPS[target]
        if a is not None and b is not None:
            text = f"{op}({a}, {b})" if op in ("min", "max") else f"({a}) {op} ({b})"
    if text is not None and len(text) <= MAX_TEXT:
        syms[out] = text


def entry(value: Any, syms: dict[str, str]) -> int | str:
    """One entry of a symbolic int list: an int, a symbol's text, or "?" where unknown."""
    constant = value.get("as_int") if isinstance(value, dict) else value
    if type(constant) is int:
        return constant
    return operand(value, syms) or "?"


def operand(value: Any, syms: dict[str, str]) -> str | None:
    """An int argument's text: a constant (`3`, `{"as_int": 3}`) or a symbolic int the graph computed
    before (`{"as_name": "sub"}`, `{"as_sym_int": {"as_name": "sub"}}`); None where unknown."""
    for _ in range(2):
        if type(value) is int:
            return str(value)
        if not isinstance(value, dict):
            return None
        if isinstance(value.get("as_name"), str):
            return syms.get(value["as_name"])
        value = value.get("as_int", value.get("as_sym_int"))
    return None
