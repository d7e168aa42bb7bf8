"""Facts from the generated C++ wrapper (`*.wrapper.cpp`), read with tree-sitter queries.

Only the model-specific functions are visited: the AOTInductorModel constructor (inputs, constants,
in_spec), `check_input_N` / `__check_inputs_outputs` (compiled ranges and whether they are gated by
AOTI_RUNTIME_CHECK_INPUTS), `run_impl` (size symbols, buffers; launches: calls.py) and the
`call_triton_<kernel>` helpers (parameter lists and the embedded Triton source). tree-sitter-cpp
reports ERROR nodes in the runtime boilerplate (the CONVERT_EXCEPTION_TO_ERROR_CODE macro calls);
those functions are never read, so the errors are only counted when they fall inside one we read.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from . import proxy, wrappertext, ts
from .call import Call
from .calls import Launches
from ..core.findings import Location
from .tritonsrc import triton_comment as _triton_comment

_CHECK_INPUT = re.compile(r"check_input_(\d+)$")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_DTYPE_FN = re.compile(r"aoti_torch_dtype_(\w+)\(\)")
_INPUT_HANDLE = re.compile(r"^ConstantHandle\(\s*input_handles\[(\d+)\]\s*\)$")


@dataclass
class DimCheck:
    min: int | None = None
    max: int | None = None
    value: int | None = None
    location: Location | None = None   # the first `if (argN_size[d] ...)` checking this dim


@dataclass
class SizeAssert:
    """`assert_size_stride(arg6_1, {s17, 8L}, {8L, 1L}, "input");` in run_impl (torch >= 2.13,
    gated by AOTI_RUNTIME_CHECK_INPUTS): it ties a dim that has no symbol of its own to one."""

    tensor: str
    sizes: tuple[str, ...]
    location: Location
    gated: bool = False            # inside `if (_check_aoti_runtime_check_inputs_env()) { ... }`
    strides: tuple[str, ...] = ()  # `{20L*s6, 1L}` as `20*s6`, `1` (a derived dim's relation)


@dataclass
class InputCheck:
    index: int
    name: str
    dims: dict[int, DimCheck] = field(default_factory=dict)
    dtype: str | None = None
    device: str | None = None
    location: Location | None = None
    # `if (8 != arg0_1_stride[0])`: the strides the code was compiled for, by dim. Inductor checks
    # only the static ones here; a stride in size symbols is in run_impl's assert_size_stride.
    strides: dict[int, int] = field(default_factory=dict)
    stride_location: Location | None = None   # the first stride check


@dataclass
class SymbolDecl:
    name: str
    expr: str                      # Python-syntax expression (see ts.cpp_to_py)
    location: Location
    buffer: str | None = None      # for `arg0_1_size[0]`: the tensor name
    kind: str | None = None        # "size" | "stride" for direct reads
    dim: int | None = None


@dataclass
class Helper:
    """A `call_triton_<kernel>` helper: parameter names and the Triton source comment."""

    name: str
    params: tuple[str, ...]
    location: Location
    triton_source: str | None = None
    source_first_line: int = 0     # wrapper line of the kernel source's line 1
    source_indent: int = 0         # columns stripped from the comment before parsing
    source_problem: str | None = None


@dataclass
class WrapperFacts:
    path: str
    inputs: dict[int, str] = field(default_factory=dict)
    constants: dict[int, dict] = field(default_factory=dict)
    in_spec: str | None = None
    checks: dict[int, InputCheck] = field(default_factory=dict)
    checks_called: set[int] = field(default_factory=set)
    checks_gated: bool | None = None
    symbols: list[SymbolDecl] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)   # buffer -> buffer it shares storage with
    # A view declared on its own line (`auto buf60 = ...reinterpret_tensor_wrapper(buf55, 4, int_array_36,
    # ...)`) -> the int_array of its own sizes: its storage is buf55's, its shape is not.
    views: dict[str, str] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    helpers: dict[str, Helper] = field(default_factory=dict)
    size_asserts: list[SizeAssert] = field(default_factory=list)
    # Deferred runtime asserts on symbols, always run: `if (!(u0 <= 64L)) { throw ... }` ->
    # {"u0": (None, 64)} (inclusive bounds).
    symbol_bounds: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)
    symbol_ties: dict[str, str] = field(default_factory=dict)   # run_impl's `Expected Eq(s77, u2)`
    # Checks of a size before run_impl divides by it, always run: `AOTI_TORCH_CHECK(s27 != 0,
    # "Integer floor division by zero");` -> ("s27", "Integer floor division by zero", location).
    zero_checks: list[tuple[str, str, Location]] = field(default_factory=list)
    # `const int64_t int_array_12[] = {2L, 2L, s27, 32L};` -> {"int_array_12": ("2", "2", "s27", "32")}:
    # the sizes of buffers (`aoti_torch_empty_strided(4, int_array_12, ...)`) and inline views.
    int_arrays: dict[str, tuple[str, ...]] = field(default_factory=dict)
    run_impl_found: bool = False
    errors_in_model_code: int = 0
    error_location: Location | None = None


def _loc(path: str, node: ts.Node) -> Location:
    line, col = ts.position(node)
    return Location(path, line, col)


def parse(tree: ts.Tree, path: str, max_depth: int = 200,
          functions: list[dict[str, ts.Node]] | None = None, text: wrappertext.WrapperText | None = None) -> WrapperFacts:
    """Extract wrapper facts from a parsed `*.wrapper.cpp` tree (`functions`: its `ts.functions`,
    when the caller has them; `text`: what its parse left out, read from the text)."""
    tables = text.tables if text is not None else None
    launches = text.launches if text is not None else None
    facts = WrapperFacts(path=path)
    for m in ts.functions(tree.root_node) if functions is None else functions:
        name = ts.text(m["name"]).strip()
        body = m["body"]
        short = name.split("::")[-1]
        if name.endswith("AOTInductorModel::AOTInductorModel") or name == "AOTInductorModel::AOTInductorModel":
            if tables is not None and ts.span(body)[0] == tables.body:
                _text_tables(facts, tables)  # the lines before any the tree holds
            _constructor(facts, body)
        elif short == "run_impl" and "const_run_impl" not in name:
            facts.run_impl_found = True
            _note_errors(facts, m["function"])
            read = launches.found if launches is not None and ts.span(body)[0] == launches.body else ()
            _run_impl(facts, body, max_depth, [(t.at, t.call) for t in read])
        elif (cm := _CHECK_INPUT.match(short)) is not None:
            _check_input(facts, int(cm.group(1)), body, m["function"])
        elif short == "__check_inputs_outputs":
            _check_gate(facts, body)
        elif short.startswith("call_triton_"):
            _helper(facts, short, m, m["function"])
    return facts


def _note_errors(facts: WrapperFacts, node: ts.Node) -> None:
    errors = ts.count_errors(node)
    if errors:
        facts.errors_in_model_code += errors
        if facts.error_location is None:
            facts.error_location = _loc(facts.path, node)


# --- constructor -------------------------------------------------------------------------------

def _constructor(facts: WrapperFacts, body: ts.Node) -> None:
    indices: dict[str, int | None] = {}  # by text: ten fields of each of hundreds of constants
    for m in ts.matches("constructor", body):
        value = m["value"]
        if "in_spec" in m:
            facts.in_spec = ts.string_value(value)
            continue
        table, fld, at = ts.text(m["table"]), ts.text(m["field"]), m["index"]
        key = ts.text(at)
        index = indices[key] if key in indices else indices.setdefault(key, ts.integer(at))
        if index is None:
            continue
        if table == "inputs_info_" and fld == "name":
            name = ts.string_value(value)
            if name is not None:
                facts.inputs[index] = name
        elif table == "constants_info_":
            entry = facts.constants.setdefault(index, {})
            if fld in ("name", "original_fqn"):
                entry[fld] = ts.string_value(value)
            elif fld == "shape":
                entry["shape"] = tuple(n for n in map(ts.integer, ts.children(value)) if n is not None)
            elif fld == "type":  # `static_cast<int32_t>(torch::aot_inductor::ConstantType::Buffer)`
                entry["type"] = ts.text(value).rsplit("::", 1)[-1].rstrip(") ")


def _text_tables(facts: WrapperFacts, tables: wrappertext.Tables) -> None:
    """The table lines read from the text, as `_constructor` records them from the tree."""
    for index, name in tables.inputs.items():
        facts.inputs[index] = name
    for index, entry in tables.constants.items():
        facts.constants.setdefault(index, {}).update(entry)


# --- check_input_N -----------------------------------------------------------------------------

def _check_input(facts: WrapperFacts, index: int, body: ts.Node, function: ts.Node, only: str | None = None) -> None:
    """`only`: read just this tensor's checks (torch 2.7 checks every input in one function)."""
    check = facts.checks.setdefault(index, InputCheck(index=index, name="", location=_loc(facts.path, function)))
    for m in filter(None, map(ts.size_check, ts.descendants(body, "if_statement"))):
        sizes, limit, dim_index = ts.text(m["sizes"]), ts.integer(m["limit"]), ts.integer(m["dim"])
        if limit is None or dim_index is None or only is not None and sizes != f"{only}_size":
            continue
        check.name = sizes.removesuffix("_size")
        dim = check.dims.setdefault(dim_index, DimCheck())
        dim.location = dim.location or _loc(facts.path, m["check"])
        setattr(dim, _CHECK_FIELD[ts.text(m["operator"])], limit)
    for m in filter(None, (ts.size_check(n, "_stride") for n in ts.descendants(body, "if_statement"))):
        strides, value, dim_index = ts.text(m["sizes"]), ts.integer(m["limit"]), ts.integer(m["dim"])
        if value is None or dim_index is None or ts.text(m["operator"]) != "!=" \
                or only is not None and strides != f"{only}_stride":
            continue
        check.strides.setdefault(dim_index, value)
        check.stride_location = check.stride_location or _loc(facts.path, m["check"])
    for m in ts.matches("declarations", body):
        name = ts.text(m["name"])
        declared = ts.text(m["value"])
        if only is not None and not name.startswith(only + "_"):
            continue
        if name.endswith("_expected_dtype"):
            dm = _DTYPE_FN.search(declared)
            if dm:
                check.dtype = dm.group(1)
        elif name.endswith("_expected_device_type"):
            v = declared.strip()
            check.device = {"0": "cpu", "1": "cuda"}.get(v, f"device_type {v}")


# `if (size < L)` rejects sizes below L (the compiled minimum), `>` above, `!=` all but one value.
_CHECK_FIELD = {"<": "min", ">": "max", "!=": "value"}


def _check_gate(facts: WrapperFacts, body: ts.Node) -> None:
    facts.checks_gated = any(map(ts.skips_unless_checking, ts.descendants(body, "if_statement")))
    for function in filter(None, map(ts.called_function, ts.descendants(body, "expression_statement"))):
        cm = _CHECK_INPUT.match(ts.text(function).strip())
        if cm:
            facts.checks_called.add(int(cm.group(1)))
    if not facts.checks_called:
        # torch 2.7: no check_input_N; each input's checks follow its
        # `ConstantHandle arg0_1 = ConstantHandle(input_handles[0]);` in this function.
        for m in ts.matches("declarations", body):
            hm = _INPUT_HANDLE.match(ts.text(m["value"]))
            if hm:
                _check_input(facts, int(hm.group(1)), body, m["declaration"], only=ts.text(m["name"]))


# --- run_impl ----------------------------------------------------------------------------------

def _run_impl(facts: WrapperFacts, body: ts.Node, max_depth: int, read: list[tuple[int, Call]]) -> None:
    found: dict[str, list[dict]] = {"declarations": [], "arrays": []}
    for name, m in ts.statement_matches(("declarations", "arrays"), body):  # one walk of run_impl for both
        found[name].append(m)
    _declarations(facts, found["declarations"], max_depth)
    # Each query walks all of run_impl (thousands of launches): run it only where the words it
    # matches (`assert_size_stride`, a `throw`) are in the text.
    text = ts.text(body)
    if "assert_size_stride" in text:
        _size_asserts(facts, body)
    if "throw" in text:
        _symbol_asserts(facts, body)
    _int_arrays(facts, found["arrays"], max_depth)
    Launches(facts, max_depth).walk(body, read)
    facts.calls = proxy.normalize(facts.calls)


_SIZE_TYPES = ("int64_t", "const int64_t", "int32_t", "long", "int64_t const")
_UNBACKED_NAME = re.compile(r"^(u|s|ps)\d+$")
_BUFFER_NAME = re.compile(r"(buf\d+|arg\d+_\d+|\w+_handle)$")


def _declarations(facts: WrapperFacts, found: list[dict], max_depth: int) -> None:
    """Size symbols and buffer aliases, from run_impl's `declarations` matches."""
    # A value's reading depends on its text alone (parsed without error): a 48-layer wrapper
    # declares 1,500 `int64_t xnumel = 256L*s27;` over a handful of texts.
    symbol_values: dict[tuple[bool, str], tuple[str, str, int] | str] = {}
    for m in found:
        type_text = ts.text(m["type"])
        name = ts.text(m["name"])
        value = m["value"]
        value_text = ts.text(value)
        # Size symbols: `int64_t s77 = ...`, and unbacked symbols read from a tensor
        # (`auto u0 = u0_raw;` after `aoti_torch_item_int64(buf, &u0_raw)`).
        if type_text in _SIZE_TYPES or (type_text == "auto" and _UNBACKED_NAME.match(name)):
            loc = _loc(facts.path, m["declaration"])
            key = (type_text != "auto", value_text)
            clean = ts.error_free(value)
            read = symbol_values.get(key) if clean else None
            if read is None:
                read = _symbol_value(value, type_text != "auto", max_depth)
                if clean:
                    symbol_values[key] = read
            if isinstance(read, tuple):
                facts.symbols.append(SymbolDecl(name, name, loc, buffer=read[0], kind=read[1], dim=read[2]))
            else:
                facts.symbols.append(SymbolDecl(name, read, loc))
        elif type_text == "auto" or "Handle" in type_text:
            # Buffer aliases: `auto buf2 = std::move(buf0);  // reuse`,
            # `RAIIAtenTensorHandle buf0(buf0_handle);`, reinterpret_tensor views of a buffer.
            if value_text.endswith(".sizes()") or value_text.endswith(".strides()"):
                continue
            names = [ts.text(i) for i in ts.identifiers(value)]
            tensors = [n for n in names if _BUFFER_NAME.match(n) or n in facts.inputs.values()]
            if tensors:
                target = tensors[0].removesuffix("_handle")
                if target != name:
                    facts.aliases[name] = target
                view = _VIEW_SIZES.search(value_text)
                if view is not None and view.group(1) == tensors[0]:
                    facts.views[name] = view.group(2)


_VIEW_SIZES = re.compile(r"\breinterpret_tensor_wrapper\(\s*(\w+)\s*,\s*\d+\s*,\s*(int_array_\d+)\b")


def _symbol_value(value: ts.Node, integral: bool, max_depth: int) -> tuple[str, str, int] | str:
    """A size symbol's value: a direct read (`_size_read`), else its expression."""
    read = _size_read(value)
    if read is not None:
        return read
    try:
        return _integral(ts.cpp_to_py(value, max_depth)) if integral else ts.cpp_to_py(value, max_depth)
    except ts.ExprTooDeep:
        return "unknown()"


def _size_read(value: ts.Node) -> tuple[str, str, int] | None:
    """`arg0_1_size[0]` -> ("arg0_1", "size", 0); `arg0_1_stride[1]` -> ("arg0_1", "stride", 1)."""
    element = ts.element(value)
    if element is None:
        return None
    array, index = element
    buffer, _, kind = array.rpartition("_")
    return (buffer, kind, index) if buffer and kind in ("size", "stride") else None


def _int_arrays(facts: WrapperFacts, found: list[dict], max_depth: int) -> None:
    """`const int64_t int_array_12[] = {2L, 2L, s27, 32L};` -> int_arrays["int_array_12"]."""
    read: dict[str, tuple[str, ...] | None] = {}  # by the list's text: 1,400 arrays, 26 texts (GPT-2)
    for m in found:
        value = m["value"]
        text = ts.text(value)
        clean = ts.error_free(value)
        sizes = read[text] if clean and text in read else _int_array(value, max_depth)
        if clean:
            read[text] = sizes
        if sizes is not None:
            facts.int_arrays[ts.text(m["name"])] = sizes


def _int_array(value: ts.Node, max_depth: int) -> tuple[str, ...] | None:
    try:
        return tuple(_integral(ts.cpp_to_py(v, max_depth)) for v in ts.children(value))
    except ts.ExprTooDeep:
        return None


def _size_asserts(facts: WrapperFacts, body: ts.Node) -> None:
    gates = [ts.span(m["only_if_set"]) for m in ts.matches("gates", body)]
    for m in ts.matches("size_asserts", body):
        start, _ = ts.span(m["statement"])
        sizes = _literal_list(m["sizes"])
        strides = _literal_list(m["strides"]) if "strides" in m else ()
        gated = any(low <= start < high for low, high in gates)
        facts.size_asserts.append(SizeAssert(ts.text(m["tensor"]), sizes, _loc(facts.path, m["statement"]), gated,
                                             strides))


def _literal_list(node: ts.Node) -> tuple[str, ...]:
    """`{s77, 20L*s6}` -> ("s77", "20*s6"): each entry as written, `L` suffixes dropped."""
    return tuple(re.sub(r"(?<=\d)L\b", "", ts.text(v).strip()) for v in ts.children(node))


def _symbol_asserts(facts: WrapperFacts, body: ts.Node) -> None:
    """`if (!(u0 <= 64L)) { throw ...; }` -> symbol_bounds["u0"] = (None, 64); `if (!(s77 == u2))`
    -> symbol_ties["u2"] = "s77" (and the other way round)."""
    for m in ts.matches("symbol_asserts", body):
        value = ts.integer(m["limit"])
        name, op = ts.text(m["symbol"]), ts.text(m["operator"])
        if op == "==":
            other = ts.text(m["limit"])
            if value is None and _IDENTIFIER.fullmatch(other):
                facts.symbol_ties.setdefault(name, other)
                facts.symbol_ties.setdefault(other, name)
            continue
        if value is None:
            continue
        low, high = facts.symbol_bounds.get(name, (None, None))
        if op in ("<=", "<"):
            cap = value if op == "<=" else value - 1
            high = cap if high is None else min(high, cap)
        else:
            floor = value if op == ">=" else value + 1
            low = floor if low is None else max(low, floor)
        facts.symbol_bounds[name] = (low, high)


@functools.lru_cache(maxsize=4096)  # one expression per launch's numel, repeated thousands of times
def _integral(expr: str) -> str:
    """`int64_t s69 = (1.0/2.0)*arg0_1_size_0;` truncates: keep that in the expression
    (`trunc((1.0 / 2.0) * arg0_1_size_0)`), or a size of 1 would read as a bound of 0.5."""
    import ast

    try:
        tree = ast.parse(expr, mode="eval")
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return expr
    if any(isinstance(n, ast.Constant) and isinstance(n.value, float) or isinstance(n, ast.BinOp)
           and isinstance(n.op, ast.Div) for n in ast.walk(tree)):
        return f"trunc({expr})"
    return expr


# --- call_triton_<kernel> helpers --------------------------------------------------------------

def _helper(facts: WrapperFacts, name: str, match: dict, function: ts.Node) -> None:
    params = tuple(pname for pname, _ in ts.parameters(match["params"]))
    helper = Helper(name=name, params=params, location=_loc(facts.path, function))
    for m in ts.matches("comments", match["body"]):
        text = ts.text(m["comment"])
        if "async_compile.triton(" not in text:
            continue
        row0 = ts.position(m["comment"])[0] - 1
        source, first_line, indent, problem = _triton_comment(text, row0)
        helper.triton_source, helper.source_first_line = source, first_line
        helper.source_indent, helper.source_problem = indent, problem
        break
    facts.helpers[name] = helper
