"""Route a runtime failure (a message or a whole crash log) to its candidate causes in a package.

`parse_failure(text)` recognises the failure lines AOTInductor packages print:
- index asserts: the CUDA device assert (one line per failing thread, deduplicated here), the CPU
  `RuntimeError:`/`Error:` forms, the `terminate called ... what():` abort form, and a bare
  `index out of bounds: ...` message;
- input checks (`check_input_N`, run with AOTI_RUNTIME_CHECK_INPUTS=1): too small / too large /
  unmatched dim / stride / dtype / device type;
- device mismatches (host pointers, `Expected all tensors to be on the same device`, ...).

`explain_failure(package, text)` matches them against the linked model (`model.Package`) and
ranks candidate causes, best first. `render_text`/`render_json` format the result.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from . import sizes
from . import witness as W
from .findings import Location
from .model import Assertion, Dim, DimRef, Input, Model, Package, span
from .report._common import location_json

SCHEMA = "aoti-lint.why/1"

# c10::ScalarType numbering, as the input-check messages print it (`but got: 7`).
SCALAR_TYPES = {
    0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32",
    7: "float64", 8: "complex32", 9: "complex64", 10: "complex128", 11: "bool", 12: "qint8",
    13: "quint8", 14: "qint32", 15: "bfloat16", 16: "quint4x2", 17: "quint2x4", 18: "bits1x8",
    19: "bits2x4", 20: "bits4x2", 21: "bits8", 22: "bits16", 23: "float8_e5m2",
    24: "float8_e4m3fn", 25: "float8_e5m2fnuz", 26: "float8_e4m3fnuz", 27: "uint16", 28: "uint32",
    29: "uint64",
}
# c10::DeviceType numbering (`unmatched device type, expected: 1..., but got: 0`).
DEVICE_TYPES = {0: "cpu", 1: "cuda", 2: "mkldnn", 3: "opengl", 4: "opencl", 5: "ideep", 6: "hip",
                7: "fpga", 8: "maia", 9: "xla", 10: "vulkan", 11: "metal", 12: "xpu", 13: "mps",
                14: "meta", 15: "hpu", 16: "ve", 17: "lazy", 18: "ipu", 19: "mtia", 20: "privateuseone"}


@dataclass(frozen=True)
class Failure:
    """One recognised failure. `message` is the assertion/check text exactly as printed."""

    kind: str                         # "index-assert" | "input-check" | "device-mismatch"
    message: str
    raw: str                          # the first line it was found on
    index_var: str | None = None      # index-assert: "tmp4"
    lower: int | None = None          # index-assert: 0 for `0 <= tmp4 < ks0`, None when one-sided
    bound: str | None = None          # index-assert: "ks0", "100L"
    kernel: str | None = None         # kernel hint: "cpp_fused_index_mul_0" (CPU `Exception raised from`)
    file: str | None = None           # file hint: the kernel file (CPU) or Triton's .py (CUDA)
    line: int | None = None
    count: int = 1                    # device asserts: how many threads printed it
    check: str | None = None          # input-check: too-small | too-large | dim | stride | dtype | device | size
    input: int | None = None          # input-check: position in inputs_info_
    dim: int | None = None
    expected: str | None = None
    got: str | None = None
    devices: tuple[str, ...] = ()     # device-mismatch: devices named in the message


@dataclass(frozen=True)
class Candidate:
    """One candidate cause, as it appears in the output (best first)."""

    kind: str
    model: str
    message: str
    cause: str
    fix: str
    kernel: str | None = None
    location: Location | None = None
    bound_sources: tuple[DimRef, ...] = ()
    index_sources: tuple[int, ...] = ()
    chain: tuple[str, ...] = ()
    failure: Failure | None = field(default=None, compare=False)


@dataclass(frozen=True)
class WhyResult:
    package: str
    failures: tuple[Failure, ...]
    candidates: tuple[Candidate, ...]

    @property
    def matched(self) -> bool:
        return bool(self.candidates)

    def __bool__(self) -> bool:
        return self.matched

    def to_json(self) -> dict:
        return {
            "schema": SCHEMA,
            "package": self.package,
            "matched": self.matched,
            "failures": [_failure_json(f) for f in self.failures],
            "candidates": [_candidate_json(c) for c in self.candidates],
        }


# ---------------------------------------------------------------------------------------------
# Parsing

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# ``<file>:<line>: <func>: block: [x,y,z], thread: [x,y,z] Assertion `<message>` failed.``
_DEVICE_ASSERT = re.compile(
    # The file starts a line or follows a space: scanning from every position would be quadratic.
    r"(?:^|(?<=\s))(?P<file>[^\s:]+):(?P<line>\d+): (?P<func>\S+): "
    r"block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] Assertion `(?P<msg>[^`]*)` failed")
# `index out of bounds: [L <=] var < bound`; the bound runs to the end of the message.
_INDEX_MSG = re.compile(
    r"index out of bounds: (?:(?P<lower>-?\d+)L? <= )?(?P<var>[A-Za-z_]\w*) < (?P<bound>[^`\"'\n]*?)"
    r"\s*(?:`|\"|'|$)")
_RAISED_FROM = re.compile(r"Exception raised from (?P<func>\S+) at (?P<file>\S+?):(?P<line>\d+)")
_DEVICE_ASSERT_GENERIC = re.compile(r"device-side assert triggered")
_HANDLE = r"(?:input|output)_handles\[(?P<input>\d+)\]: "
_CHECKS = [
    ("too-small", re.compile(_HANDLE + r"dim value is too small at (?P<dim>\d+), expected it to be >= "
                             r"(?P<expected>-?\d+), but got: (?P<got>-?\d+)")),
    ("too-large", re.compile(_HANDLE + r"dim value is too large at (?P<dim>\d+), expected to be <= "
                             r"(?P<expected>-?\d+), but got: (?P<got>-?\d+)")),
    ("dim", re.compile(_HANDLE + r"unmatched dim value at (?P<dim>\d+), expected: (?P<expected>-?\d+), "
                       r"but got: (?P<got>-?\d+)")),
    ("stride", re.compile(_HANDLE + r"unmatched stride value at (?P<dim>\d+), expected: "
                          r"(?P<expected>-?\d+), but got: (?P<got>-?\d+)")),
    ("dtype", re.compile(_HANDLE + r"unmatched dtype, expected: (?P<expected>\d+)(?:\((?P<ename>[^)]*)\))?, "
                         r"but got: (?P<got>\d+)")),
    # The codegen prints the expected number twice (`expected: 11(cuda)`, or `1 1(cuda)`).
    ("device", re.compile(_HANDLE + r"unmatched device type, expected: (?P<expected>[\d ]+?)"
                          r"(?:\((?P<ename>\w+)\))?, but got: (?P<got>\d+)")),
]
# assert_size_stride (also gated by AOTI_RUNTIME_CHECK_INPUTS): no input index in the text.
_SIZE_STRIDE = re.compile(r"expected size (?P<got>\d+)==(?P<expected>\d+), stride (?P<gs>\d+)==(?P<es>\d+) "
                          r"at dim=(?P<dim>\d+)")
_DEVICE_MSGS = [
    re.compile(r"The specified pointer resides on host memory[^\n]*"),
    re.compile(r"Expected out tensor to have device (?P<a>[\w:]+), but got (?P<b>[\w:]+) instead"),
    re.compile(r"Expected all tensors to be on the same device[^\n]*"),
    re.compile(r"Pointer argument \(at \d+\) cannot be accessed from Triton \(cpu tensor\?\)"),
]
# A shim call in the wrapper that failed: `Error: aoti_torch_cpu__embedding_bag(w, arg1_1, ...) API call
# failed at /tmp/.../x.wrapper.cpp, line 865` (the line is the wrapper's, as packaged).
_API_FAILED = re.compile(r"(?P<call>aoti_torch_\w+)\(.*?\) API call failed at (?P<file>\S+?),? line (?P<line>\d+)")
# Two OpenMP threads threw at once: the message is lost, only this survives.
_TERMINATE_RECURSIVELY = re.compile(r"terminate called recursively")
_DEVICE_NAME = re.compile(r"\b(cuda:\d+|cuda|cpu|meta|mps|xpu:\d+|xpu)\b")
_KERNEL_NAME = re.compile(r"\b((?:triton|cpp)_\w+)")


def parse_failure(text: str) -> list[Failure]:
    """Every distinct failure in `text`, in order of first appearance. Empty when none is found."""
    found: dict[tuple, Failure] = {}
    last_key: tuple | None = None
    generic_line: str | None = None
    after_index_line = False  # the previous non-empty line was an index-assert message
    for raw_line in text.splitlines():
        line = _ANSI.sub("", raw_line).rstrip()
        if not line:
            continue
        follows_index, after_index_line = after_index_line, False
        # Cheap literal tests first: the regexes only run on lines that can match.
        match = _DEVICE_ASSERT.search(line) if "Assertion `" in line else None
        if match:
            msg = match.group("msg")
            key = ("index-assert", _normalize(msg))
            func = match.group("func")
            if key in found:
                found[key] = replace(found[key], count=found[key].count + 1)
            else:
                found[key] = _index_failure(msg, line.strip(), file=match.group("file"),
                                            line=int(match.group("line")),
                                            kernel=None if func == "unknown" else func)
            last_key = key
            continue
        match = _RAISED_FROM.search(line) if follows_index else None
        if match and last_key is not None and found[last_key].kernel is None:
            # `Exception raised from <kernel> at <file>:<line>` comes right after the message it
            # belongs to (CPU `AOTI_TORCH_CHECK` in a kernel); elsewhere it names something else.
            found[last_key] = replace(found[last_key], kernel=match.group("func"),
                                      file=match.group("file"), line=int(match.group("line")))
            continue
        match = _INDEX_MSG.search(line)
        if match:
            msg = match.group(0).rstrip("`\"' ").rstrip()
            key = ("index-assert", _normalize(msg))
            if key not in found:  # the CPU logs repeat it (`Error:`, then `RuntimeError:`)
                found[key] = _index_failure(msg, line.strip())
            last_key = key
            after_index_line = True
            continue
        failure = _check_failure(line) or _device_failure(line)
        if failure is not None:
            key = (failure.kind, failure.message)
            found.setdefault(key, failure)
            last_key = key
            continue
        match = _API_FAILED.search(line) if "API call failed" in line else None
        if match:
            key = ("extern-call", match.group("call"), match.group("line"))
            found.setdefault(key, Failure(kind="extern-call", message=match.group(0), raw=line.strip(),
                                          kernel=match.group("call"), file=match.group("file"),
                                          line=int(match.group("line"))))
            last_key = key
            continue
        if generic_line is None and (_DEVICE_ASSERT_GENERIC.search(line) or _TERMINATE_RECURSIVELY.search(line)):
            generic_line = line.strip()
    failures = list(found.values())
    if generic_line is not None and not any(f.kind in ("index-assert", "extern-call") for f in failures):
        # The assertion text was lost (CUDA: the per-thread lines went to another stream; CPU: two
        # OpenMP threads threw at once, `terminate called recursively`): any index assertion of a
        # model on that device could be the one.
        failures.append(Failure(kind="index-assert", message="", raw=generic_line))
    return failures


def _index_failure(msg: str, raw: str, **hints) -> Failure:
    match = _INDEX_MSG.search(msg + "\n")
    if not match:
        return Failure(kind="index-assert", message=msg, raw=raw, **hints)
    lower = int(match.group("lower")) if match.group("lower") is not None else None
    return Failure(kind="index-assert", message=msg, raw=raw, index_var=match.group("var"), lower=lower,
                   bound=match.group("bound").strip(), **hints)


def _check_failure(line: str) -> Failure | None:
    for check, pattern in _CHECKS:
        match = pattern.search(line)
        if not match:
            continue
        groups = match.groupdict()
        expected = groups["expected"].strip()
        got = groups["got"]
        if check == "dtype":
            expected = SCALAR_TYPES.get(int(expected), groups.get("ename") or expected)
            got = SCALAR_TYPES.get(int(got), got)
        elif check == "device":
            number = expected.split()[0]
            half = len(number) // 2
            if " " not in expected and len(number) % 2 == 0 and number[:half] == number[half:]:
                number = number[:half]  # `11(cuda)`: the codegen prints the number twice
            expected = groups.get("ename") or DEVICE_TYPES.get(int(number), expected)
            got = DEVICE_TYPES.get(int(got), got)
        return Failure(kind="input-check", message=match.group(0), raw=line.strip(), check=check,
                       input=int(groups["input"]), dim=int(groups["dim"]) if groups.get("dim") else None,
                       expected=expected, got=got)
    match = _SIZE_STRIDE.search(line)
    if match:
        return Failure(kind="input-check", message=match.group(0), raw=line.strip(), check="size",
                       dim=int(match.group("dim")), expected=match.group("expected"), got=match.group("got"))
    return None


def _device_failure(line: str) -> Failure | None:
    for pattern in _DEVICE_MSGS:
        match = pattern.search(line)
        if match:
            msg = match.group(0).strip()
            devices = tuple(dict.fromkeys(_DEVICE_NAME.findall(msg)))
            if "host memory" in msg or "cpu tensor" in msg:
                devices = devices or ("cpu",)
            return Failure(kind="device-mismatch", message=msg, raw=line.strip(), devices=devices)
    return None


def _normalize(message: str) -> str:
    """Compare CPU (`< 100L`) and CUDA (`< 100`) spellings: drop integer suffixes and spaces."""
    text = re.sub(r"\b(\d+)(?:LL|UL|L|U)\b", r"\1", message)
    return re.sub(r"\s+", "", text)


# ---------------------------------------------------------------------------------------------
# Explaining


def explain_failure(package: Package, text: str) -> WhyResult:
    """Parse `text` and rank the package's candidate causes for each failure, best first."""
    failures = parse_failure(text)
    mentioned = set(_KERNEL_NAME.findall(text))
    candidates: list[Candidate] = []
    seen: set[tuple] = set()
    for failure in failures:
        if failure.kind == "index-assert":
            found = _index_candidates(package, failure, mentioned)
        elif failure.kind == "input-check":
            found = _check_candidates(package, failure)
        elif failure.kind == "extern-call":
            found = _extern_candidates(package, failure)
        else:
            found = _device_candidates(package, failure)
        for cand in found:
            key = (cand.kind, cand.model, cand.kernel, cand.message, cand.location)
            if key not in seen:
                seen.add(key)
                candidates.append(cand)
    for cand in _kernel_message_candidates(package, text):
        key = (cand.kind, cand.model, cand.kernel, cand.message, cand.location)
        if key not in seen:
            seen.add(key)
            candidates.append(cand)
    return WhyResult(package=package.path, failures=tuple(failures), candidates=tuple(candidates))


def _kernel_message_candidates(package: Package, text: str) -> list[Candidate]:
    """Kernels' own literal checks (`throw std::runtime_error("one_hot: Class values must be smaller
    than num_classes.")`) whose message appears in the log."""
    out = []
    for model in package.models:
        for kernel, message, location in model.kernel_messages:
            if message and message in text:
                out.append(Candidate(
                    kind="kernel-check", model=model.name, message=message, kernel=kernel, location=location,
                    cause=f"{kernel} checks its input values itself and rejected them: \"{message}\"",
                    fix="keep the input values within what the operation accepts (the message says which); "
                        "eager PyTorch raises the same error for the same input"))
    return out


def _index_candidates(package: Package, failure: Failure, mentioned: set[str]) -> list[Candidate]:
    scored: list[tuple[tuple, Candidate]] = []
    generic = failure.message == ""
    for model in package.models:
        lost_on = "cpu" if _TERMINATE_RECURSIVELY.search(failure.raw) else "cuda"
        if generic and (model.device or "").split(":")[0] != lost_on:
            continue
        pool = [a for a in model.assertions
                if generic or _normalize(a.message) == _normalize(failure.message)]
        if failure.kernel and any(a.kernel == failure.kernel for a in pool):
            # A kernel named by the failure itself (`Exception raised from <kernel>`) narrows for sure.
            pool = [a for a in pool if a.kernel == failure.kernel]
        for order, a in enumerate(pool):
            zero = _bound_can_be_zero(model, a)
            exact = a.message == failure.message
            same_file = bool(failure.file) and _basename(failure.file) == _basename(a.location.path)
            same_line = same_file and failure.line == a.location.line
            rank = (not same_line, not same_file, a.kernel not in mentioned, not zero,
                    a.bound_value is not None, not exact, not a.linked, order)
            scored.append((rank, _index_candidate(model, a, failure, zero)))
    scored.sort(key=lambda pair: pair[0])
    exact_lines = {(c.model, c.kernel, c.message) for rank, c in scored if not rank[0]}
    # The codegen repeats one check in a kernel (vectorized body and tail loop); when the log
    # names the line, the other copies are the same cause and only add noise.
    return [c for rank, c in scored if not rank[0] or (c.model, c.kernel, c.message) not in exact_lines]


def _index_candidate(model: Model, a: Assertion, failure: Failure, zero: bool) -> Candidate:
    cause, fix = _index_cause(model, a, zero)
    return Candidate(kind="index-assert", model=model.name, message=a.message, cause=cause, fix=fix,
                     kernel=a.kernel, location=a.location, bound_sources=a.bound_sources,
                     index_sources=a.index_sources, chain=_chain(model, a), failure=failure)


def _chain(model: Model, a: Assertion) -> tuple[str, ...]:
    """The linking chain with the user's names: it is built while linking, before the exported
    program's names are applied, so `arg1_1`/`arg0_1.size(0)` are renamed here."""
    steps = a.chain
    for inp in model.inputs:
        if not inp.user_name or inp.user_name == inp.name:
            continue
        name, user = re.escape(inp.name), inp.user_name
        # Function replacements: a user name is data, never a regex template.
        steps = tuple(re.sub(rf"\({name}\)", lambda _m: f"({user})",
                             re.sub(rf"\b{name}\.size\((\d+)\)", lambda m: f"{user}.shape[{m.group(1)}]", step))
                      for step in steps)
    return steps


def _bound_can_be_zero(model: Model, a: Assertion) -> bool:
    """The bound can reach 0 at run time: a constant 0, or sizes the package accepts make it <= 0."""
    if a.bound_value is not None:
        return a.bound_value == 0
    return W.empty_bound_choice(model, a) is not None


def _inputs_text(model: Model, indices: tuple[int, ...]) -> str:
    parts = [f"input {i} ({model.inputs[i].display})" if 0 <= i < len(model.inputs) else f"input {i}"
             for i in indices]
    return " or ".join(parts)


def _dim_expr(model: Model, ref: DimRef) -> str:
    if 0 <= ref.input < len(model.inputs):
        return model.inputs[ref.input].dim_display(ref.dim)
    return f"input{ref.input}.size({ref.dim})"


def _user_expr(model: Model, expr: str, refs: tuple[DimRef, ...]) -> str:
    """A size expression over root symbols in user terms: `s27` -> `x.shape[1]`."""
    text = expr.strip()
    for ref in refs:
        dim = model.dim(ref)
        if dim is not None and dim.symbol:
            if text == dim.symbol:
                return _dim_expr(model, ref)
            shown = _dim_expr(model, ref)
            text = re.sub(rf"\b{re.escape(dim.symbol)}\b", lambda _m: shown, text)
    return text


def _bound_text(model: Model, a: Assertion) -> str:
    """The bound as the user sees it: `x.shape[0]` rather than `s77` where it is one dim."""
    if a.bound_value is not None:
        return str(a.bound_value)
    if a.bound_expr:
        return _user_expr(model, a.bound_expr, a.bound_sources)
    return a.bound or "?"


def _values_text(model: Model, a: Assertion, span: str) -> str | None:
    if not a.index_sources:
        return None
    if len(a.index_sources) == 1:
        return f"a value of {_inputs_text(model, a.index_sources)} was outside {span}"
    who = " and ".join(_inputs_text(model, (i,)) for i in a.index_sources)
    return f"an index computed from the values of {who} was outside {span}"


def _extent_text(model: Model, a: Assertion, bound: str) -> str | None:
    """For an index over an iteration range (`arange(seq)`): which size pushed it past the bound."""
    if not a.index_extent or a.index_sources:
        return None
    extent = _user_expr(model, a.index_extent, a.index_extent_sources)
    var = a.index_var or "the index"
    refs = a.index_extent_sources
    if len(refs) == 1 and extent == _dim_expr(model, refs[0]):
        dim = model.dim(refs[0])
        allowed = ""
        if dim is not None and dim.declared_max is not None and a.bound_value is not None \
                and dim.declared_max > a.bound_value:
            allowed = f" (the exported program allows up to {dim.declared_max})"
        return (f"{model.describe(refs[0])} was above {bound}{allowed}: {var} ranges over [0, {extent}) "
                f"and must stay < {bound}")
    who = " or ".join(model.describe(r) for r in refs) or "an input size"
    return f"{who} made {extent} exceed {bound}: {var} ranges over [0, {extent}) and must stay < {bound}"


def _index_cause(model: Model, a: Assertion, zero: bool) -> tuple[str, str]:
    lower = f"{a.lower} <= " if a.lower is not None else ""
    bound = _bound_text(model, a)
    span = f"[{a.lower if a.lower is not None else 0}, {bound})"
    values = _values_text(model, a, span)
    extent = _extent_text(model, a, bound)
    who = _inputs_text(model, a.index_sources) if len(a.index_sources) == 1 else \
        " and ".join(_inputs_text(model, (i,)) for i in a.index_sources)
    if a.bound_value is None and a.bound_sources:
        dims = [r for r in a.bound_sources if sizes.can_be_zero(model.dim(r))] or list(a.bound_sources)
        empty = " or ".join(f"{model.describe(r)} was empty (size 0)" for r in dims)
        every = f"every index fails `{lower}{a.index_var or 'idx'} < 0`"
        checks = " or ".join(f"{_dim_expr(model, r)} == 0" for r in dims)
        gated = any((model.dim(r) or Dim(0)).enforced == "env" for r in dims)
        env = (", or run with AOTI_RUNTIME_CHECK_INPUTS=1 so that the package's own check rejects it with a "
               "clear error" if gated else "")
        other = values or extent
        keep = f"keep the values of {who} in {span}" if a.index_sources else None
        if zero:
            cause = f"{empty}: {every}" + (f"; otherwise {other}" if other else "")
            fix = f"reject empty inputs before calling the model (`if {checks}: ...`){env}" + \
                (f"; and {keep}" if keep else "")
        else:
            cause = other or f"the index {a.index_var or ''} left {span}".replace("  ", " ")
            fix = f"{keep} (check them before calling the model)" if keep else \
                f"keep {bound} large enough for the index"
        return cause, fix
    if a.bound_value is not None:
        if extent:
            limit = " and ".join(_dim_expr(model, r) for r in a.index_extent_sources) or "the size"
            return (extent, f"reject inputs with {limit} above {a.bound_value} before calling the model, or "
                            f"declare it when exporting (Dim(..., max={a.bound_value})) and run with "
                            f"AOTI_RUNTIME_CHECK_INPUTS=1, or size the indexed table for the longest input")
        if values:
            name = model.inputs[a.index_sources[0]].display \
                if len(a.index_sources) == 1 and a.index_sources[0] < len(model.inputs) else None
            example = (f" (e.g. `0 <= {name}.min()` and `{name}.max() < {a.bound_value}`)"
                       if name and a.lower is not None else
                       f" (e.g. `{name}.max() < {a.bound_value}`)" if name else "")
            return (values, f"check that every value of {who} lies in {span} before calling the "
                            f"model{example}, or map invalid ids to a valid one")
        return (f"the index {a.index_var} left {span} (its source is not linked to an input)",
                "check the index values fed to this kernel")
    reason = a.unlinked_reason or "its bound is not linked to an input"
    return (f"the assertion failed, but {reason}", "check the inputs that reach this kernel by hand")


def _extern_candidates(package: Package, failure: Failure) -> list[Candidate]:
    """An ATen shim that failed inside the wrapper: the launch at the logged wrapper line (the
    packaged wrapper is the file that was compiled, so its lines match), else every call of it."""
    out: list[tuple[tuple, Candidate]] = []
    for model in package.models:
        for launch in model.launches:
            if launch.kernel != failure.kernel:
                continue
            exact = launch.location.line == failure.line
            inputs = sorted({inp.index for inp in model.inputs if inp.name in launch.args})
            who = ", ".join(f"input {i} ({model.inputs[i].display})" for i in inputs) or "its inputs"
            cause = (f"the ATen op {launch.kernel} (called from the wrapper, not a generated kernel) rejected "
                     f"its arguments, which come from {who}: an index out of range, an empty or mismatched "
                     "tensor; the op's own message, if any, precedes this line in the log")
            fix = (f"check {who} against what {launch.kernel.replace('aoti_torch_', '')} accepts (run the same "
                   "inputs through the eager model: it raises the op's full error) before calling the package")
            chain = tuple(c for c in (launch.comment,) if c)
            out.append(((not exact,), Candidate(kind="extern-call", model=model.name, message=failure.message,
                                                cause=cause, fix=fix, kernel=launch.kernel,
                                                location=launch.location, index_sources=tuple(inputs),
                                                chain=chain, failure=failure)))
    out.sort(key=lambda pair: pair[0])
    return [cand for _, cand in out]


def _check_candidates(package: Package, failure: Failure) -> list[Candidate]:
    out: list[tuple[tuple, Candidate]] = []
    for model in package.models:
        if failure.input is not None and not (0 <= failure.input < len(model.inputs)):
            continue
        inp = model.inputs[failure.input] if failure.input is not None else None
        dim = None
        if inp is not None and failure.dim is not None and failure.dim < len(inp.dims):
            dim = inp.dims[failure.dim]
        consistent = _check_consistent(failure, inp, dim)
        cause, fix = _check_cause(model, failure, inp, dim)
        refs = (DimRef(failure.input, failure.dim),) if failure.input is not None and failure.dim is not None \
            and failure.check in ("too-small", "too-large", "dim", "stride") else ()
        # The failing check itself (`if (arg1_1_size[0] < 2)` in check_input_N) when it was located.
        location = (dim.check_location if dim is not None and dim.check_location is not None
                    else Location(model.wrapper_path) if model.wrapper_path else None)
        out.append(((not consistent,), Candidate(kind="input-check", model=model.name, message=failure.message,
                                                 cause=cause, fix=fix, location=location,
                                                 bound_sources=refs, failure=failure)))
    out.sort(key=lambda pair: pair[0])
    return [cand for _, cand in out]


def _check_consistent(failure: Failure, inp: Input | None, dim: Dim | None) -> bool:
    """Does this model's compiled input agree with what the check printed?"""
    if inp is None:
        return True
    try:
        if failure.check == "too-small" and dim is not None:
            return dim.min is None or dim.min == int(failure.expected or 0)
        if failure.check == "too-large" and dim is not None:
            return dim.max is None or dim.max == int(failure.expected or 0)
        if failure.check == "dim" and dim is not None:
            return dim.value is None or dim.value == int(failure.expected or 0)
    except ValueError:
        return True
    if failure.check == "dtype" and inp.dtype:
        return inp.dtype == failure.expected
    if failure.check == "device" and inp.device:
        return inp.device.split(":")[0] == (failure.expected or "").split(":")[0]
    return True


def _range(dim: Dim | None) -> str:
    if dim is None:
        return "unknown"
    if dim.value is not None:
        return f"static {dim.value}"
    return span(dim.min, dim.max)


def _declared(dim: Dim | None) -> str:
    if dim is None or (dim.declared_min is None and dim.declared_max is None):
        return ""
    return f"; the exported program declared {span(dim.declared_min, dim.declared_max)}"


def _check_cause(model: Model, f: Failure, inp: Input | None, dim: Dim | None) -> tuple[str, str]:
    who = f"input {f.input} ({inp.display})" if inp is not None else \
        (f"input {f.input}" if f.input is not None else "an input")
    where = f"{model.describe(DimRef(f.input, f.dim))}" if f.input is not None and f.dim is not None \
        else f"{who} dim {f.dim}"
    expr = inp.dim_display(f.dim) if inp is not None and f.dim is not None else f"dim {f.dim}"
    if f.check == "too-small":
        special = (" (torch.export's Dim starts at 0, but Inductor specializes sizes 0 and 1, so a dynamic "
                   "dim is compiled for >= 2)") if str(f.expected) == "2" else ""
        return (f"{where} was {f.got}, below the compiled range {_range(dim)}{_declared(dim)}{special}",
                f"handle {expr} < {f.expected} outside the model (pad the input, or take another path "
                f"for small inputs); the package cannot run it")
    if f.check == "too-large":
        return (f"{where} was {f.got}, above the compiled range {_range(dim)}{_declared(dim)}",
                f"split the input so that {expr} <= {f.expected}, or re-export with a larger "
                f"Dim(..., max=...) and recompile")
    if f.check == "dim":
        return (f"{where} was {f.got}, but the package was compiled with it static at {f.expected}",
                f"pass {expr} == {f.expected}, or re-export with that dim dynamic (Dim(...)) and recompile")
    if f.check == "stride":
        return (f"{who} has stride {f.got} at dim {f.dim}, but the package was compiled for stride "
                f"{f.expected} (a non-contiguous or transposed tensor)",
                f"pass a contiguous tensor (`{inp.display if inp else 'x'}.contiguous()`)")
    if f.check == "dtype":
        return (f"{who} is {f.got}, but the package was compiled for {f.expected}",
                f"cast it before the call (`.to(torch.{f.expected})`)")
    if f.check == "device":
        compiled = model.device or f.expected
        return (f"{who} is on {f.got}, but the package was compiled for {f.expected} "
                f"(AOTI_DEVICE_KEY={model.metadata.get('AOTI_DEVICE_KEY', compiled)})",
                f"move every input to {f.expected} before the call (`.to('{f.expected}')`)")
    if f.check == "size":
        return (f"an input's size at dim {f.dim} was {f.got}, but the package was compiled for {f.expected}",
                "pass inputs of the compiled shape (run with AOTI_RUNTIME_CHECK_INPUTS=1 to learn which input)")
    return (f"an input check failed: {f.message}", "compare the inputs with the compiled ones")


def _device_candidates(package: Package, failure: Failure) -> list[Candidate]:
    out = []
    for model in package.models:
        compiled = model.device or "unknown"
        key = model.metadata.get("AOTI_DEVICE_KEY")
        others = [d for d in failure.devices if d.split(":")[0] != compiled.split(":")[0]]
        on = others[0] if others else "another device"
        per_input = ", ".join(f"input {i.index} ({i.display}) on {i.device}" for i in model.inputs if i.device)
        cause = (f"model '{model.name}' was compiled for {compiled}"
                 + (f" (AOTI_DEVICE_KEY={key})" if key else "")
                 + f" but a tensor it received was on {on}"
                 + (f"; the package expects {per_input}" if per_input else ""))
        fix = (f"first checks: (1) move every input to {compiled} before the call "
               f"(`x.to('{compiled}')`), outputs you pass in too; (2) load the package on the device it "
               f"was compiled for (AOTI_DEVICE_KEY={key or compiled}); (3) run once with "
               f"AOTI_RUNTIME_CHECK_INPUTS=1 so that each input's device is checked and named")
        location = Location(model.wrapper_path) if model.wrapper_path else None
        out.append(Candidate(kind="device-mismatch", model=model.name, message=failure.message, cause=cause,
                             fix=fix, location=location, failure=failure))
    return out


def _basename(path: str) -> str:
    return PurePosixPath(path.replace("\\", "/")).name


# ---------------------------------------------------------------------------------------------
# Rendering




def _candidate_json(c: Candidate) -> dict:
    return {
        "kind": c.kind,
        "model": c.model,
        "kernel": c.kernel,
        "message": c.message,
        "bound_sources": [{"input": r.input, "dim": r.dim} for r in c.bound_sources],
        "index_sources": [{"input": i} for i in c.index_sources],
        "cause": c.cause,
        "fix": c.fix,
        "location": location_json(c.location),
        "chain": list(c.chain),
    }


def _failure_json(f: Failure) -> dict:
    out = {"kind": f.kind, "message": f.message, "count": f.count}
    for name in ("index_var", "lower", "bound", "kernel", "file", "line", "check", "input", "dim",
                 "expected", "got"):
        value = getattr(f, name)
        if value is not None:
            out[name] = value
    if f.devices:
        out["devices"] = list(f.devices)
    return out


def render_json(result: WhyResult) -> str:
    return json.dumps(result.to_json(), indent=2) + "\n"


def _failure_line(f: Failure) -> str:
    if f.kind == "index-assert" and not f.message:
        if _TERMINATE_RECURSIVELY.search(f.raw):
            return f"CPU kernel error whose message was lost (two threads threw at once): {f.raw}"
        return f"CUDA device-side assert (the assertion text is not in the log): {f.raw}"
    extra = []
    if f.count > 1:
        extra.append(f"{f.count} threads")
    if f.kernel:
        extra.append(f"kernel {f.kernel}")
    if f.file:
        extra.append(f"{_basename(f.file)}:{f.line}" if f.line else _basename(f.file))
    return f.message + (f" ({'; '.join(extra)})" if extra else "")


def render_text(result: WhyResult) -> str:
    lines: list[str] = []
    if not result.failures and not result.candidates:
        lines.append("no recognised failure in the text (expected an `index out of bounds: ...` assertion, an "
                     "input check such as `input_handles[0]: dim value is too small ...`, or a device mismatch)")
        return "\n".join(lines) + "\n"
    for f in result.failures:
        lines.append(f"failure: {_failure_line(f)}")
    if not result.candidates:
        lines.append(f"no match in {result.package}: nothing in the package produces this message "
                     "(was the log produced by another build of the model?)")
        return "\n".join(lines) + "\n"
    lines.append(f"{len(result.candidates)} candidate cause(s) in {result.package}, most likely first:")
    for n, c in enumerate(result.candidates, 1):
        head = f"{n}. [{c.kind}] model '{c.model}'"
        if c.kernel:
            head += f", {c.kernel}"
        if c.location is not None:
            head += f" at {c.location}"
        lines.append("")
        lines.append(head)
        lines.append(f"   message: {c.message}")
        lines.append(f"   cause:   {c.cause}")
        lines.append(f"   fix:     {c.fix}")
        if c.chain:
            lines.append("   chain:")
            lines.extend(f"     {step}" for step in c.chain)
    return "\n".join(lines) + "\n"
