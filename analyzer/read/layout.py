"""Package layouts across torch versions, recognised by content (never by a version string).

Three questions, answered from what the members hold:

- `pick_sources`: which C++ member of a model folder is the wrapper and which hold kernels. torch 2.6
  writes one `<hash>.cpp` (wrapper and C++ kernels together); 2.7 and later split it into
  `<hash>.wrapper.cpp` and `<hash>.kernel.cpp`. The wrapper is the member defining
  `AOTInductorModel::run_impl`, whatever its name.
- `producer`: the torch release(s) whose layout and codegen the package shows (`"2.6"`, `">=2.10"`),
  with the evidence for it.
- `account`: the never-silent pass. Every member holding C++ or Triton source and every line holding
  assertion or check text (`index out of bounds`, `AOTI_TORCH_CHECK`, `tl.device_assert`,
  `TORCH_CHECK`) in any text member must be covered by what the parsers linked; whatever is not
  becomes an unlinked assertion (inside a model) or an unparsed-member problem (elsewhere), naming
  the member and line.

Both `account` and `keep_source_lines` (the lines findings point at, for reporters) read again, a
MiB at a time, the members whose bytes the check dropped before linking (`dropped`: C++ kernels).
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, field
from typing import Callable, Container, Iterable, Iterator, Mapping

from . import archive
from ..core import budget
from ..core.findings import Location
from ..core.model import Assertion, Model, Package, Problem, ProblemKind

__all__ = ["Sources", "pick_sources", "WrapperMarks", "producer", "account", "keep_source_lines", "scan_text", "SOURCE_SUFFIXES"]

# Members whose name says "source code".
SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".c", ".cu", ".h", ".hpp", ".cuh", ".py")
_CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".c", ".cu")
# Content that says "source code" whatever the member is called.
_SOURCE_MARK = re.compile(rb'#include\s*[<"]|extern\s+"C"|@triton\.jit|\bdef\s+triton_|__global__\s+void')
_WRAPPER_MARK = re.compile(rb"AOTInductorModel::run_impl\s*\(")
# Assertion or check text; one hit per line is enough.
CHECK_TEXT = re.compile(r"index out of bounds|\bAOTI_TORCH_CHECK\b|tl\.device_assert|\bTORCH_CHECK\b")
# A literal of each alternative above: a line without one of these cannot match CHECK_TEXT.
_CHECK_LITERALS = (b"index out of bounds", b"TORCH_CHECK", b"tl.device_assert")
# Lines that mention a check without being one: macro definitions and includes.
_NOT_A_CHECK = re.compile(r"^\s*#\s*(define|include|undef|ifn?def|if|endif)\b")
# Sequential size symbols (torch <= 2.7): `int64_t s0 = arg0_1_size[0];`; hashed ones (2.8+): `s77`.
_SIZE_SYMBOL = re.compile(rb"int64_t (s\d+) = \w+_size\[\d+\];")
# `\bint64_t (s\d+) = (s\d+);`, written to start with a literal (a leading `\b` makes the regex
# engine try every position of a 12 MB wrapper); the word boundary is checked in _has_alias.
_ALIAS = re.compile(rb"int64_t (s\d+) = (s\d+);")


@dataclass
class Sources:
    wrappers: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)


def is_source(member: str, data: bytes | None) -> bool:
    """A member holding C++ or Triton source: by name, or by content for other names."""
    if member.endswith(SOURCE_SUFFIXES):
        return True
    return data is not None and _SOURCE_MARK.search(data[:1 << 16]) is not None


def pick_sources(members: "archive.ModelMembers", read: Callable[[str], bytes]) -> Sources:
    """The wrapper and kernel members of one model folder, by content.

    Named members (`*.wrapper.cpp`, `*.kernel.cpp`) keep their roles; any other C++ member is read:
    the one defining `AOTInductorModel::run_impl` is a wrapper (torch 2.6's `<hash>.cpp`, which also
    holds the kernels), the others are kernel sources."""
    found = Sources(list(members.wrappers), list(members.kernels))
    for member in members.other:
        if not member.endswith(_CPP_SUFFIXES) or "/" in member[len(members.prefix):]:
            continue
        data = read(member)
        (found.wrappers if _WRAPPER_MARK.search(data) else found.kernels).append(member)
    return found


# --- producing version --------------------------------------------------------------------------

# First releases whose codegen shows these markers (checked on fixtures/versions/: absent in the
# packages of every earlier minor, present in those of every later one that had a dim to show it).
ASSERT_SIZE_STRIDE_SINCE = "2.13"
ALIAS_SINCE = "2.13"
# Metadata keys written by torch 2.10 and later (platform and ISA of the build).
_PLATFORM_KEYS = ("AOTI_PLATFORM", "AOTI_CPU_ISA", "AOTI_MACHINE")


@dataclass
class Producer:
    torch: str | None
    evidence: list[str] = field(default_factory=list)


class WrapperMarks:
    """What `producer` reads of a wrapper's text, each mark read when first asked (most packages
    tell their torch before the costlier ones: a 12 MB wrapper's alias scan is 12 ms); `settle`
    reads them all before the text goes (a CPU package's wrapper, dropped before linking)."""

    def __init__(self, data: bytes) -> None:
        self._data: bytes | None = data

    def _text(self) -> bytes:
        assert self._data is not None  # every mark is read before the text goes (settle)
        return self._data

    @functools.cached_property
    def check_input_n(self) -> bool:
        return b"check_input_0(" in self._text()

    @functools.cached_property
    def gate_fn(self) -> bool:
        return b"__check_inputs_outputs(" in self._text()

    @functools.cached_property
    def symbols(self) -> tuple[bytes, ...]:
        return tuple(_SIZE_SYMBOL.findall(self._text()))

    @functools.cached_property
    def assert_size_stride(self) -> bool:
        return b"assert_size_stride(" in self._text()

    @functools.cached_property
    def alias(self) -> bool:
        return _has_alias(self._text())

    def settle(self) -> None:
        """Every mark read now, and the text let go."""
        _ = (self.check_input_n, self.gate_fn, self.symbols, self.assert_size_stride, self.alias)
        self._data = None


def producer(pkg: "archive.Package", models: list[Model], marks: Mapping[str, WrapperMarks]) -> Producer:
    """The torch release(s) that produced the package, from its layout and codegen markers (`marks`:
    of each wrapper member read)."""
    wrappers = [marks[m.wrapper_path] for m in models if m.wrapper_path is not None and m.wrapper_path in marks]
    if not wrappers:
        return Producer(None, ["no wrapper source: nothing tells the producing version"])
    root = pkg.root
    evidence: list[str] = []
    single_file = all(not m.wrapper_path.endswith(".wrapper.cpp") for m in models if m.wrapper_path)
    check_input_n = any(w.check_input_n for w in wrappers)
    gate_fn = any(w.gate_fn for w in wrappers)
    symbols = [s for w in wrappers for s in w.symbols]
    sequential = bool(symbols) and all(int(s[1:]) < len(symbols) + 2 for s in symbols)
    evidence.append("archive root folder" if root else "no archive root folder (members start at data/)")
    if single_file:
        evidence.append("wrapper and kernels in one <hash>.cpp")
    if symbols:
        evidence.append("sequential size symbols (" + ", ".join(sorted({s.decode() for s in symbols})[:3]) + ")"
                        if sequential else "hashed size symbols")
    if single_file and not check_input_n and not gate_fn:
        evidence.append("no input checks in the wrapper")
        return Producer("2.6", evidence)
    if not check_input_n and gate_fn:
        evidence.append("one __check_inputs_outputs without check_input_N")
        return Producer("2.7", evidence)
    if not check_input_n:
        return Producer(None, evidence + ["no input-check functions of a known form"])
    evidence.append("check_input_N functions")
    meta = {k for m in models for k in m.metadata}
    low = "2.8"
    if any(k in meta for k in _PLATFORM_KEYS):
        evidence.append("platform/ISA metadata")
        low = "2.10"
    elif meta:
        # 2.10 and later write AOTI_PLATFORM / AOTI_MACHINE / AOTI_CPU_ISA into every metadata file.
        evidence.append("metadata without platform/ISA keys")
        return Producer("2.8-2.9", evidence)
    if any(w.assert_size_stride for w in wrappers):
        evidence.append("assert_size_stride on inputs in run_impl")
        low = max(low, ASSERT_SIZE_STRIDE_SINCE, key=_version_key)
    elif low == "2.10" and all(m.device == "cpu" and m.inputs for m in models):
        # CPU wrappers of 2.13 and later assert every input's sizes and strides in run_impl.
        evidence.append("no assert_size_stride on the inputs of a CPU wrapper")
        return Producer("2.10-2.12", evidence)
    if any(w.alias for w in wrappers):
        evidence.append("size-symbol aliases (int64_t sA = sB;)")
        low = max(low, ALIAS_SINCE, key=_version_key)
    return Producer(f">={low}", evidence)


def _has_alias(data: bytes) -> bool:
    for m in _ALIAS.finditer(data):
        before = data[m.start() - 1:m.start()]
        if not before or not (before.isalnum() or before == b"_"):
            return True
    return False


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


# --- never a silent pass ------------------------------------------------------------------------

def scan_text(data: bytes, first: int = 1, skip: Container[int] = ()) -> Iterator[tuple[int, str]]:
    """(line, stripped text) of every line holding assertion or check text, in order, the lines
    numbered from `first`; those numbered in `skip` (checks already linked) are not decoded."""
    # Only lines holding one of CHECK_TEXT's literals can match it: find those in the bytes (no
    # decoded copy of a 50 MB member; a regex search of it, with its `\b` alternatives, costs about
    # a second), then decode and test each such line as a whole. Lines are the same either way:
    # UTF-8 decoding with replacement never joins or splits them at a "\n".
    starts: set[int] = set()
    for literal in _CHECK_LITERALS:
        at = data.find(literal)
        while at >= 0:
            starts.add(data.rfind(b"\n", 0, at) + 1)
            end = data.find(b"\n", at)
            at = -1 if end < 0 else data.find(literal, end)
    number, counted = first, 0
    for start in sorted(starts):
        number += data.count(b"\n", counted, start)
        counted = start
        if number in skip:
            continue
        end = data.find(b"\n", start)
        line = data[start:len(data) if end < 0 else end].decode("utf-8", "replace")
        if CHECK_TEXT.search(line) and not _NOT_A_CHECK.match(line):
            yield number, line.strip()[:300]


def defines_run_impl(data: bytes) -> bool:
    return _WRAPPER_MARK.search(data) is not None


def account(pkg: "archive.Package", package: Package, sources: dict[str, bytes],
            dropped: Iterable[str] = ()) -> list[str]:
    """Cover every source member and every check text in every text member (see the module doc).

    Reads the text members the parsers did not read (bounded like every read) and streams the
    `dropped` ones again; appends unlinked assertions to the model owning the member and package
    problems for members outside models. Returns the members holding source."""
    dropped = frozenset(dropped)
    source_members: list[str] = []
    owner: dict[str, Model] = {}
    for model_members, model in zip(pkg.models, package.models):
        for member in pkg.members:
            if member.startswith(model_members.prefix):
                owner[member] = model
    parsed, covered = _coverage(package)
    for member in pkg.members:
        if member in pkg.symlinks or pkg.is_binary(member):
            continue
        data = sources.get(member)
        if data is None and member not in dropped:
            try:
                data = pkg.read_bytes(member)
            except budget.ArchiveError as exc:
                if pkg.deadline.expired:
                    raise
                _problem(package, owner.get(member), Problem(
                    f"member not scanned for source or assertions: {exc}", Location(member),
                    kind=ProblemKind.UNREADABLE))
                continue
        if is_source(member, data):
            source_members.append(member)
        if member not in parsed and is_source(member, data):
            _problem(package, owner.get(member), Problem(
                "member holds C++/Triton source that no parser read (not a wrapper or kernel of a known "
                "layout); its assertions are not checked", Location(member), kind=ProblemKind.PARSE))
        linked = covered.get(member, set())
        checks = scan_text(data, skip=linked) if data is not None else _streamed_checks(pkg, member, linked)
        _uncovered_checks(package, owner.get(member), member, checks, member in parsed, linked)
    return source_members


def keep_source_lines(pkg: "archive.Package", model: Model, sources: dict[str, bytes],
                      dropped: Iterable[str] = ()) -> None:
    """Copy the lines that findings point at, so reporters can show snippets without the archive."""
    dropped = frozenset(dropped)
    # Lists, not sets, of the wanted lines (sorted below): a package with 26,000 kernels points at
    # 130,000 lines, and sets of them were the peak of a whole check.
    wanted: dict[str, list[int]] = {}
    located = itertools.chain(
        (a.location for a in model.assertions), (d.location for d in model.divisions),
        (r.location for r in model.reductions), (l.location for l in model.launches),
        (p.location for p in model.problems), (s.location for s in model.symbols.values()),
        (d.check_location for i in model.inputs for d in i.dims), (d.tie_location for i in model.inputs for d in i.dims),
        (a.location for a in model.accesses))
    for loc in located:
        if loc is not None and loc.line > 0 and (loc.path in sources or loc.path in dropped):
            wanted.setdefault(loc.path, []).append(loc.line)
    texts: dict[str, str] = {}  # equal lines held once (a check's line in every kernel that copies it)
    for path, lines in wanted.items():
        data = sources.get(path)
        table = model.source_lines.setdefault(path, {})
        lines.sort()
        targets, ti = lines, 0
        # Members can be tens of MB with thousands of wanted lines: split a block of whole lines
        # at a time (numbered by "\n" as tree-sitter does); a block holding no wanted line is only counted.
        blocks = _windows(data) if data is not None else \
            (window for first, block in _line_blocks(pkg.stream(path)) for window in _windows(block, first))
        for first, block, count in blocks:
            if targets[ti] < first + count:
                split = block.split(b"\n")
                while ti < len(targets) and targets[ti] < first + count:
                    if targets[ti] not in table:
                        text = split[targets[ti] - first].decode("utf-8", "replace")[:400]
                        table[targets[ti]] = texts.setdefault(text, text)
                    ti += 1
                if ti == len(targets):
                    break


def _windows(data: bytes, line_no: int = 1) -> Iterator[tuple[int, bytes, int]]:
    """`_line_blocks` of bytes in hand (whose first line is `line_no`), about 16 KB each, with
    how many lines each holds."""
    pos = 0
    while pos <= len(data):
        end = data.find(b"\n", min(pos + _WINDOW, len(data)))
        end = len(data) if end < 0 else end
        block = data[pos:end]
        count = block.count(b"\n") + 1
        yield line_no, block, count
        line_no, pos = line_no + count, end + 1


_WINDOW = 1 << 14


def _streamed_checks(pkg: "archive.Package", member: str, skip: Container[int] = ()) -> Iterator[tuple[int, str]]:
    """`scan_text` of a dropped member, read again: the same lines, block by block."""
    for first, block in _line_blocks(pkg.stream(member)):
        yield from scan_text(block, first, skip)


def _line_blocks(chunks: Iterable[bytes]) -> Iterator[tuple[int, bytes]]:
    """(its first line's number, whole lines without their last newline) over inflated chunks: the
    lines `data.split(b"\\n")` gives, a block at a time (the last block is the text after the last
    newline, empty when the member ends with one)."""
    first, parts = 1, []
    for chunk in chunks:
        cut = chunk.rfind(b"\n")
        if cut < 0:
            parts.append(chunk)  # a line longer than a chunk
            continue
        parts.append(chunk[:cut])
        block = b"".join(parts)
        parts = [chunk[cut + 1:]]
        yield first, block
        first += block.count(b"\n") + 1
    yield first, b"".join(parts)


def _coverage(package: Package) -> tuple[set[str], dict[str, set[int]]]:
    """(the members a parser read, member -> the lines the linked facts cover)."""
    parsed: set[str] = set()
    covered: dict[str, set[int]] = {}
    for model in package.models:
        if model.wrapper_path:
            parsed.add(model.wrapper_path)
        parsed.update(model.kernel_paths)
        located = [a.location for a in model.assertions] + [loc for _, _, loc in model.kernel_messages] \
            + [loc for _, _, loc in model.zero_checks]
        for loc in located:
            if loc is not None and loc.line > 0:
                # An assertion's message may sit a few lines below its call.
                covered.setdefault(loc.path, set()).update(range(loc.line, loc.line + 4))
    return parsed, covered


def _uncovered_checks(package: Package, owner_model: Model | None, member: str, checks: Iterable[tuple[int, str]],
                      parsed: bool, covered: set[int]) -> None:
    """Each check text of `member` (`scan_text`'s lines) outside the `covered` lines: an unlinked
    assertion of the model owning it, else a package problem; past MAX_LISTED only counted."""
    listed = 0
    for line, text in checks:
        if line in covered:
            continue
        listed += 1
        if listed > MAX_LISTED:
            continue  # counted, and said once below
        reason = (f"check text at {member}:{line} is not in any kernel the analyzer parsed"
                  if not parsed else
                  f"check text at {member}:{line} was not recognised as an assertion the analyzer links")
        if owner_model is not None:
            owner_model.assertions.append(Assertion(kernel="(unparsed code)", message=_message_of(text),
                                                    location=Location(member, line, 1), linked=False,
                                                    unlinked_reason=reason))
        else:
            package.problems.append(Problem(f"{reason}: {text}", Location(member, line, 1), kind=ProblemKind.PARSE))
    if listed > MAX_LISTED:
        _problem(package, owner_model, Problem(
            f"{listed - MAX_LISTED:,} more lines of check text in {member} are not checked (the first "
            f"{MAX_LISTED:,} are listed)", Location(member), kind=ProblemKind.PARSE))


# Check lines listed one by one per member; past this (hostile text: a real member holds hundreds)
# the rest is counted, so that the report's size stays bounded by the limit and not by the input.
MAX_LISTED = 10_000


_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'')


def _message_of(line: str) -> str:
    """The check's message: its string literal when the line has one (what a run-time log repeats)."""
    literals = [a or b for a, b in _LITERAL.findall(line)]
    for literal in literals:
        if CHECK_TEXT.search(literal) or literal.strip():
            return literal
    return line


def _problem(package: Package, model: Model | None, problem: Problem) -> None:
    (model.problems if model is not None else package.problems).append(problem)


# --- minimums that no check records -------------------------------------------------------------

SPECIALIZED_MIN = 2  # torch.export specializes sizes 0 and 1: a dynamic dim is compiled for >= 2


def infer_minimums(model: Model, wrapper) -> None:
    """Dynamic dims whose compiled minimum the package never checks, in any environment.

    - No input checks at all (torch 2.6: neither check_input_N nor __check_inputs_outputs): the
      package records no range, yet export's 0/1 specialization still made the code assume >= 2.
    - Input checks present but a dynamic dim without its `< N` test: built with
      `aot_inductor.check_lowerbound=False` (the codegen emits that test for every dynamic dim
      otherwise); the minimum is still at least 2.
    """
    if wrapper is None:
        return
    no_checks = not wrapper.checks and wrapper.checks_gated is None
    for inp in model.inputs:
        checked_input = inp.index in wrapper.checks
        for dim in inp.dims:
            if dim.value is not None or dim.symbol is None or dim.min is not None:
                continue
            if no_checks:
                dim.lower_unchecked = "unrecorded"
            elif checked_input:
                dim.lower_unchecked = "disabled"
            else:
                continue
            dim.min = SPECIALIZED_MIN


def find_text(pkg: "archive.Package", needle: str, limit: int = 20) -> list[Location]:
    """Where `needle` occurs in any text member (every member that is not binary), line by line."""
    found: list[Location] = []
    raw = needle.encode("utf-8")
    if not raw:
        return found
    for member in pkg.members:
        if member in pkg.symlinks or pkg.is_binary(member):
            continue
        try:
            data = pkg.read_bytes(member)
        except budget.ArchiveError:
            if pkg.deadline.expired:
                raise
            continue
        at = data.find(raw)
        while at >= 0 and len(found) < limit:
            line = data.count(b"\n", 0, at) + 1
            col = at - (data.rfind(b"\n", 0, at) + 1) + 1
            found.append(Location(member, line, col))
            at = data.find(raw, data.find(b"\n", at) + 1 if data.find(b"\n", at) >= 0 else len(data))
    return found
