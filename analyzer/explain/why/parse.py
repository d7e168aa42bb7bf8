"""Recognise the failure lines AOTInductor packages print, in untrusted log text.

- index asserts: the CUDA device assert (one line per failing thread, deduplicated here), the CPU
  `RuntimeError:`/`Error:` forms, the `terminate called ... what():` abort form, and a bare
  `index out of bounds: ...` message;
- input checks (`check_input_N`, run with AOTI_RUNTIME_CHECK_INPUTS=1): too small / too large /
  unmatched dim / stride / dtype / device type, and `assert_size_stride`;
- device mismatches (host pointers, `Expected all tensors to be on the same device`, ...);
- a failed ATen shim call in the wrapper (`... API call failed at <file>, line N`);
- run_impl's checks of data-dependent sizes (`Expected u0 >= 2 but received 1`).

The text is hostile (anyone can paste a log): every pattern here runs in time linear in the line.
Each starts at a literal (found by `str.find` or the regex engine's literal-prefix scan), and no two
adjacent pieces can match the same characters, so a mismatch never backtracks over a long run
(`tests/test_why.py` feeds 200 KB lines of spaces and of repeated prefixes to each of them).
A `deadline` (anything with `check(what)`, e.g. `budget.Deadline`) is polled between lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Protocol

from ...parse.kernels import parse_message
from ...core.model import TextEnum


class FailureKind(TextEnum):
    INDEX_ASSERT = "index-assert"
    INPUT_CHECK = "input-check"
    DEVICE_MISMATCH = "device-mismatch"
    EXTERN_CALL = "extern-call"
    KERNEL_CHECK = "kernel-check"   # a kernel's own literal check (found by `explain`, not here)
    SYMBOL_ASSERT = "symbol-assert"  # run_impl's `Expected u0 >= 2 but received 1`


class CheckKind(TextEnum):
    """Which input check failed."""

    TOO_SMALL = "too-small"
    TOO_LARGE = "too-large"
    DIM = "dim"
    STRIDE = "stride"
    DTYPE = "dtype"
    DEVICE = "device"
    SIZE = "size"       # assert_size_stride: no input index in the text


class Deadline(Protocol):
    def check(self, what: str) -> None: ...


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

    kind: FailureKind
    message: str
    raw: str                          # the first line it was found on
    index_var: str | None = None      # index-assert: "tmp4"
    lower: int | None = None          # index-assert: 0 for `0 <= tmp4 < ks0`, None when one-sided
    bound: str | None = None          # index-assert: "ks0", "100L"
    kernel: str | None = None         # kernel hint: "cpp_fused_index_mul_0" (CPU `Exception raised from`)
    file: str | None = None           # file hint: the kernel file (CPU) or Triton's .py (CUDA)
    line: int | None = None
    count: int = 1                    # device asserts: how many threads printed it
    check: CheckKind | None = None    # input-check
    input: int | None = None          # input-check: position in inputs_info_
    dim: int | None = None
    expected: str | None = None
    got: str | None = None
    devices: tuple[str, ...] = ()     # device-mismatch: devices named in the message
    symbol: str | None = None         # symbol-assert: "u0" (`expected`: ">= 2", `got`: "1")

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", FailureKind(self.kind))
        if self.check is not None:
            object.__setattr__(self, "check", CheckKind(self.check))

    @property
    def lost(self) -> bool:
        """An index assert whose text was lost (only `device-side assert triggered` or
        `terminate called recursively` survived)."""
        return self.kind == FailureKind.INDEX_ASSERT and not self.message

    @property
    def lost_on_cpu(self) -> bool:
        return self.lost and TERMINATE_RECURSIVELY in self.raw


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# ``<file>:<line>: <func>: block: [x,y,z], thread: [x,y,z] Assertion `<message>` failed``. The file
# starts a line or follows a space (scanning from every position would be quadratic), so each token
# is tried once and backtracks at most over itself.
_DEVICE_ASSERT = re.compile(
    r"(?:^|(?<=\s))(?P<file>[^\s:]+):(?P<line>\d+): (?P<func>\S+): "
    r"block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] Assertion `(?P<msg>[^`]*)` failed")
INDEX_PREFIX = "index out of bounds: "
# Where an index message ends inside a log line (its fields are read by kernels.parse_message).
# After INDEX_PREFIX: `[L <=] var < bound`. The bound runs to the first quote or backtick (greedy,
# one character class: linear); its trailing spaces are stripped in Python, not by the pattern.
_INDEX_REST = re.compile(r"(?:(?P<lower>-?\d+)L? <= )?(?P<var>[A-Za-z_]\w*) < (?P<bound>[^`\"'\n]*)")
_RAISED_FROM = re.compile(r"Exception raised from (?P<func>\S+) at (?P<file>\S+?):(?P<line>\d+)")
DEVICE_ASSERT_GENERIC = "device-side assert triggered"
# Two OpenMP threads threw at once: the message is lost, only this survives.
TERMINATE_RECURSIVELY = "terminate called recursively"
_HANDLE = r"(?:input|output)_handles\[(?P<input>\d+)\]: "
_CHECKS = [
    (CheckKind.TOO_SMALL, re.compile(
        _HANDLE + r"dim value is too small at (?P<dim>\d+), expected it to be >= (?P<expected>-?\d+), "
        r"but got: (?P<got>-?\d+)")),
    (CheckKind.TOO_LARGE, re.compile(
        _HANDLE + r"dim value is too large at (?P<dim>\d+), expected to be <= (?P<expected>-?\d+), "
        r"but got: (?P<got>-?\d+)")),
    (CheckKind.DIM, re.compile(
        _HANDLE + r"unmatched dim value at (?P<dim>\d+), expected: (?P<expected>-?\d+), but got: (?P<got>-?\d+)")),
    (CheckKind.STRIDE, re.compile(
        _HANDLE + r"unmatched stride value at (?P<dim>\d+), expected: (?P<expected>-?\d+), "
        r"but got: (?P<got>-?\d+)")),
    (CheckKind.DTYPE, re.compile(
        _HANDLE + r"unmatched dtype, expected: (?P<expected>\d+)(?:\((?P<ename>[^)]*)\))?, but got: (?P<got>\d+)")),
    # The codegen prints the expected number twice (`expected: 11(cuda)`, or `1 1(cuda)`).
    (CheckKind.DEVICE, re.compile(
        _HANDLE + r"unmatched device type, expected: (?P<expected>[\d ]+?)(?:\((?P<ename>\w+)\))?, "
        r"but got: (?P<got>\d+)")),
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
# failed at /tmp/.../x.wrapper.cpp, line 865` (the line is the wrapper's, as packaged). Matched in
# three linear steps (the call, then each `) API call failed at` after it), never as one `.*?`.
_API_CALL = re.compile(r"aoti_torch_\w+\(")
API_FAILED = ") API call failed at "
_API_TAIL = re.compile(r"(?P<file>\S+?),? line (?P<line>\d+)")
# run_impl's check of an unbacked (data-dependent) size: `Expected u0 >= 2 but received 1`, also
# `Expected u0 >= 2 to be True but received 1`. Starts at a literal; each piece is one token.
_SYMBOL_ASSERT = re.compile(r"Expected (?P<symbol>u\d+) (?P<op>>=|<=|==|!=|>|<) (?P<expected>-?\d+)"
                            r"(?: to be True)? but received (?P<got>-?\d+)")
_DEVICE_NAME = re.compile(r"\b(cuda:\d+|cuda|cpu|meta|mps|xpu:\d+|xpu)\b")
KERNEL_NAME = re.compile(r"\b((?:triton|cpp)_\w+)")
_SUFFIX = re.compile(r"\b(\d+)(?:LL|UL|L|U)\b")
_SPACE = re.compile(r"\s+")


def parse_failure(text: str, deadline: Deadline | None = None) -> list[Failure]:
    """Every distinct failure in `text`, in order of first appearance. Empty when none is found."""
    found: dict[tuple, Failure] = {}
    last_key: tuple | None = None
    generic_line: str | None = None
    after_index_line = False  # the previous non-empty line was an index-assert message
    for n, raw_line in enumerate(text.splitlines()):
        if deadline is not None and n % 256 == 0:
            deadline.check("reading the log")
        line = _ANSI.sub("", raw_line).rstrip() if "\x1b" in raw_line else raw_line.rstrip()
        if not line:
            continue
        follows_index, after_index_line = after_index_line, False
        # Cheap literal tests first: the regexes only run on lines that can match.
        match = _DEVICE_ASSERT.search(line) if "Assertion `" in line else None
        if match:
            last_key = _count_device_assert(found, match, line)
            continue
        match = _RAISED_FROM.search(line) if follows_index and "Exception raised from " in line else None
        if match and last_key is not None and found[last_key].kernel is None:
            # `Exception raised from <kernel> at <file>:<line>` comes right after the message it
            # belongs to (CPU `AOTI_TORCH_CHECK` in a kernel); elsewhere it names something else.
            found[last_key] = replace(found[last_key], kernel=match.group("func"),
                                      file=match.group("file"), line=int(match.group("line")))
            continue
        msg = index_message(line) if INDEX_PREFIX in line else None
        if msg is not None:
            key: tuple[object, ...] = (FailureKind.INDEX_ASSERT, normalize(msg))
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
        match = _SYMBOL_ASSERT.search(line) if "Expected u" in line and " but received " in line else None
        if match:
            failure = _symbol_failure(match, line)
            found.setdefault((failure.kind, failure.symbol, failure.expected), failure)
            continue
        failure = _extern_failure(line) if API_FAILED in line else None
        if failure is not None:
            key = (failure.kind, failure.kernel, failure.line)
            found.setdefault(key, failure)
            last_key = key
            continue
        if generic_line is None and (DEVICE_ASSERT_GENERIC in line or TERMINATE_RECURSIVELY in line):
            generic_line = line.strip()
    failures = list(found.values())
    if generic_line is not None and not any(f.kind in (FailureKind.INDEX_ASSERT, FailureKind.EXTERN_CALL)
                                            for f in failures):
        # The assertion text was lost (CUDA: the per-thread lines went to another stream; CPU: two
        # OpenMP threads threw at once, `terminate called recursively`): any index assertion of a
        # model on that device could be the one.
        failures.append(Failure(kind=FailureKind.INDEX_ASSERT, message="", raw=generic_line))
    return failures


def _symbol_failure(match: re.Match, line: str) -> Failure:
    """`Expected u0 >= 1 but received 0`: an unbacked size's run-time check."""
    return Failure(kind=FailureKind.SYMBOL_ASSERT, message=match.group(0), raw=line.strip(),
                   symbol=match.group("symbol"), expected=f"{match.group('op')} {match.group('expected')}",
                   got=match.group("got"))


def _count_device_assert(found: dict[tuple, Failure], match: re.Match, line: str) -> tuple[object, ...]:
    """A device assertion's line (one per failing thread): the first makes the failure, the rest
    count; its key."""
    msg = match.group("msg")
    key: tuple[object, ...] = (FailureKind.INDEX_ASSERT, normalize(msg))
    func = match.group("func")
    if key in found:
        found[key] = replace(found[key], count=found[key].count + 1)
    else:
        found[key] = _index_failure(msg, line.strip(), file=match.group("file"),
                                    line=int(match.group("line")),
                                    kernel=None if func == "unknown" else func)
    return key


def _index_match(text: str) -> tuple[int, re.Match] | None:
    """The first `index out of bounds: [L <=] var < bound` in `text`: (start, match of the rest)."""
    start = text.find(INDEX_PREFIX)
    while start >= 0:
        match = _INDEX_REST.match(text, start + len(INDEX_PREFIX))
        if match:
            return start, match
        start = text.find(INDEX_PREFIX, start + 1)
    return None


def index_message(line: str) -> str | None:
    """`index out of bounds: 0 <= tmp4 < ks0` as printed inside `line`, without quotes or trailing spaces."""
    found = _index_match(line)
    if found is None:
        return None
    start, match = found
    return line[start:match.end()].rstrip("`\"' \t\r\f\v")


def _index_failure(msg: str, raw: str, **hints) -> Failure:
    # The message is read as the kernel's own assertion is (one grammar: kernels.parse_message).
    lower, var, bound = parse_message(msg)
    if var is None:
        return Failure(kind=FailureKind.INDEX_ASSERT, message=msg, raw=raw, **hints)
    return Failure(kind=FailureKind.INDEX_ASSERT, message=msg, raw=raw, index_var=var, lower=lower, bound=bound,
                   **hints)


def _check_failure(line: str) -> Failure | None:
    if "_handles[" in line:
        for check, pattern in _CHECKS:
            match = pattern.search(line)
            if match:
                return _input_check(check, match, line)
    # One chunk per dim (`expected size 2==2, stride 801==800 at dim=0; expected size 801==800, ...`):
    # the first whose size differs says which size was wrong, else the first.
    chunks = list(_SIZE_STRIDE.finditer(line)) if "expected size " in line else []
    match = next((m for m in chunks if m.group("got") != m.group("expected")), chunks[0] if chunks else None)
    if match:
        return Failure(kind=FailureKind.INPUT_CHECK, message=match.group(0), raw=line.strip(), check=CheckKind.SIZE,
                       dim=int(match.group("dim")), expected=match.group("expected"), got=match.group("got"))
    return None


def _input_check(check: CheckKind, match: re.Match, line: str) -> Failure:
    groups = match.groupdict()
    expected = groups["expected"].strip()
    got = groups["got"]
    if check == CheckKind.DTYPE:
        expected = SCALAR_TYPES.get(int(expected), groups.get("ename") or expected)
        got = SCALAR_TYPES.get(int(got), got)
    elif check == CheckKind.DEVICE:
        number = expected.split()[0]
        half = len(number) // 2
        if " " not in expected and len(number) % 2 == 0 and number[:half] == number[half:]:
            number = number[:half]  # `11(cuda)`: the codegen prints the number twice
        expected = groups.get("ename") or DEVICE_TYPES.get(int(number), expected)
        got = DEVICE_TYPES.get(int(got), got)
    return Failure(kind=FailureKind.INPUT_CHECK, message=match.group(0), raw=line.strip(), check=check,
                   input=int(groups["input"]), dim=int(groups["dim"]) if groups.get("dim") else None,
                   expected=expected, got=got)


def _device_failure(line: str) -> Failure | None:
    for pattern in _DEVICE_MSGS:
        match = pattern.search(line)
        if match:
            msg = match.group(0).strip()
            devices = tuple(dict.fromkeys(_DEVICE_NAME.findall(msg)))
            if "host memory" in msg or "cpu tensor" in msg:
                devices = devices or ("cpu",)
            return Failure(kind=FailureKind.DEVICE_MISMATCH, message=msg, raw=line.strip(), devices=devices)
    return None


def _extern_failure(line: str) -> Failure | None:
    """`aoti_torch_X(...) API call failed at FILE, line N`: the first call, then the first tail
    after it that names a file and a line."""
    call = _API_CALL.search(line)
    if call is None:
        return None
    at = line.find(API_FAILED, call.end())
    while at >= 0:
        tail = _API_TAIL.match(line, at + len(API_FAILED))
        if tail:
            return Failure(kind=FailureKind.EXTERN_CALL, message=line[call.start():tail.end()], raw=line.strip(),
                           kernel=call.group(0)[:-1], file=tail.group("file"), line=int(tail.group("line")))
        at = line.find(API_FAILED, at + 1)
    return None


def normalize(message: str) -> str:
    """Compare CPU (`< 100L`) and CUDA (`< 100`) spellings: drop integer suffixes and spaces."""
    return _SPACE.sub("", _SUFFIX.sub(r"\1", message))
