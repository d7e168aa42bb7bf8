"""The second core inside one package: the wrapper's Triton helpers read in a forked worker.

A large wrapper is mostly its `call_triton_*` helpers. Once `helpertext.split_helpers` has cut them
out of the text, what each one gives (its kernel source, read from the comment; the fast path's
verdict and facts; the full walk of the kernels that need one) depends on its text alone, not on
the wrapper's parse tree. So while this process parses the rest of the wrapper with tree-sitter and
reads its facts, a forked child reads the helpers from the front; this process, once its own part
is read, reads them from the back until the two meet (`_Split`). The child sends back plain facts:
strings, numbers and `Location`s, each Triton expression as its source text (parsed again here
once per distinct text, as `triage.with_definitions` shares them), never an `ast` or tree-sitter
object.

Results are identical with and without it (tests/test_helper_worker.py compares every fixture
package): the child runs the functions the serial path runs, and whatever it cannot give (no
fork, a crash, a time or memory limit, an expression whose text does not parse back alone) is done
again here, serially, which then fails or succeeds as it always would. It runs only where it pays
(MIN_HELPERS, two CPUs, no other thread running), never inside a `-j` worker (many.py), and
AOTI_LINT_WORKER=0 turns it off (`always`: for every package with a helper read from the text,
whatever else runs: for tests).
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import functools
import mmap
import os
import pickle
import select
import signal
import struct
import threading
from dataclasses import dataclass
from typing import Callable, Sequence

from ..core import budget
from . import helpertext, kernels, triage, tritonlines, tritonsrc
from ..core import interrupt
from ..core.findings import Location
from .stores import RawStore


class Mode(enum.Enum):
    OFF = "0"
    AUTO = "1"        # when the package has MIN_HELPERS helpers read from the text
    ALWAYS = "always"


def mode_from_env() -> Mode:
    value = os.environ.get("AOTI_LINT_WORKER", "1").strip().lower()
    return {"0": Mode.OFF, "off": Mode.OFF, "always": Mode.ALWAYS}.get(value, Mode.AUTO)


# Below this many helpers the child's share of the work (about 65 us of CPU per helper) does not
# repay forking, the copy-on-write of pages both processes touch, and sending the facts back
# (bench/bench.py; a 1 MB wrapper holds about 230 helpers, 12 MB about 2,900).
MIN_HELPERS = 600
# Below this many helpers this process does not read a share of them (Job.share).
MIN_SHARED = 64
# Longest wait for the child's answer beyond the package's own deadline (None: the deadline).
MAX_WAIT_S: float | None = None


@dataclass
class HelperRead:
    """What one helper's text gives, as the serial path computes it in api.py."""

    source: str | None                         # the kernel source (tritonsrc.triton_comment)
    first_line: int
    indent: int
    problem: str | None
    light: kernels.KernelFacts | None = None   # the fast path's facts (triage.light_triton)
    # The full walk's facts (triage.walk_triton) with expressions as text; None: walk it here.
    walked: kernels.KernelFacts | None = None
    located: bool = False                      # the walk set `walked.locate`


def read_helper(text: helpertext.HelperText, path: str) -> HelperRead:
    """One helper's source, fast-path facts and, when the fast path cannot answer, its walk (its
    expressions as text, as sent)."""
    source, first_line, indent, problem = tritonsrc.triton_comment(text.comment, text.comment_row)
    read = HelperRead(source, first_line, indent, problem)
    if source is not None:
        name = text.name[len("call_"):]
        read.light = triage.light_triton(name, source, path, first_line, indent)
        if read.light is None:
            walked = triage.walk_triton(name, source, path, first_line, indent, text.params)
            read.located = walked.locate is not None
            read.walked = _as_text(walked, source)
    return read


# --- this process --------------------------------------------------------------------------------

class _Split:
    """Who reads which helper: the child takes them from the front, this process (once its own
    part of the wrapper is read) from the back, until they meet. Two counters in memory both
    processes share: `front` (the child's next) and `back` (below this process's last taken).
    Each side writes only its own counter and takes an index only below (above) the other's, so
    no index is left out; at the meeting point both may read one helper, which gives the same
    facts either way (the child's are used)."""

    def __init__(self, count: int) -> None:
        self.memory = mmap.mmap(-1, 16)   # anonymous and shared: the child sees the same pages
        self.memory[:16] = struct.pack("qq", 0, count)

    @property
    def front(self) -> int:
        return struct.unpack_from("q", self.memory, 0)[0]

    @property
    def back(self) -> int:
        return struct.unpack_from("q", self.memory, 8)[0]

    def take_front(self) -> int | None:
        i = self.front
        if i >= self.back:
            return None
        struct.pack_into("q", self.memory, 0, i + 1)
        return i

    def take_back(self) -> int | None:
        j = self.back - 1
        if j < self.front:
            return None
        struct.pack_into("q", self.memory, 8, j)
        return j

    def close(self) -> None:
        self.memory.close()


class Job:
    """A forked child reading helper texts; `share()` reads the last ones here meanwhile,
    `result()` waits for the child's answer, `close()` ends it."""

    def __init__(self, pid: int, fd: int, texts: Sequence[helpertext.HelperText], path: str,
                 split: _Split) -> None:
        self.pid, self.fd, self.texts, self.path, self.split = pid, fd, texts, path, split
        self.own: dict[int, HelperRead] = {}   # index -> read here

    def share(self, deadline: budget.Deadline) -> None:
        """Read helpers from the back until the child's front is reached (nothing when the child
        is done first): this process would otherwise wait for it idle. Not for a few helpers,
        which the child reads in the time this process takes to look."""
        if len(self.texts) < MIN_SHARED:
            return
        while (j := self.split.take_back()) is not None:
            deadline.check(f"parsing Triton kernel {self.texts[j].name}")
            try:
                # In the form the child sends: `restore` then shares each expression's parse
                # between kernels, which the walk's own trees would not (270 against 370 MB of peak
                # RSS at 50 MB of GPT-2).
                self.own[j] = read_helper(self.texts[j], self.path)
            except budget.ArchiveError:
                raise  # a time or memory limit: as on the serial path
            except Exception:  # noqa: BLE001 - as in the child: the serial path reads the rest
                return

    def result(self, deadline: budget.Deadline) -> list[HelperRead | None] | None:
        """One read per text: the child's (a prefix of the texts), then those read here; None
        where neither has one (the child gave none in time: crashed, killed, stopped by a
        limit), which the caller reads itself; None when nothing was read at all."""
        try:
            wire = None
            wait = deadline.remaining + 1 if MAX_WAIT_S is None else min(deadline.remaining + 1, MAX_WAIT_S)
            if _readable(self.fd, wait):
                # Streamed: the pickle is never held whole here (tens of MB of sources at 50 MB).
                with open(self.fd, "rb", buffering=1 << 16, closefd=False) as stream:
                    wire = pickle.load(stream)
                if not isinstance(wire, list) or len(wire) > len(self.texts):
                    wire = None
            reads: list[HelperRead | None] = [None] * len(self.texts)
            for i, item in enumerate(wire or ()):
                reads[i] = _from_wire(item, self.texts[i], self.path)
            for j, read in self.own.items():
                if reads[j] is None:
                    reads[j] = read
            return reads if any(r is not None for r in reads) else None
        except Exception:  # noqa: BLE001 - any failure of the worker means: read them here
            return [self.own.get(i) for i in range(len(self.texts))] if self.own else None
        finally:
            self.close()

    def close(self) -> None:
        """Close the pipe; kill the child if it still runs, and reap it (no zombie)."""
        if not self.split.memory.closed:
            self.split.close()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.pid:
            pid, self.pid = self.pid, 0
            try:
                os.kill(pid, signal.SIGKILL)  # done or not, it has nothing more to give
            except OSError:
                pass
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _readable(fd: int, wait: float) -> bool:
    """True once `fd` has data or its end (the child wrote or exited), False after `wait` s."""
    if hasattr(select, "poll"):  # any fd number (select() stops at FD_SETSIZE)
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(max(0, int(wait * 1000))))
    return bool(select.select([fd], [], [], wait)[0])


def start(texts: Sequence[helpertext.HelperText], path: str, mode: Mode) -> Job | None:
    """Fork a child reading `texts` (None: not worth it here, or no fork on this platform)."""
    if mode is Mode.OFF or not texts or not hasattr(os, "fork"):
        return None
    # AUTO: where it pays, and where a fork is safe (it copies only this thread: another thread's
    # locks would stay held in the child; the command line runs none, a host program may).
    if mode is Mode.AUTO and (len(texts) < MIN_HELPERS or _cpus() < 2 or threading.active_count() > 1):
        return None
    try:
        read_fd, write_fd = os.pipe()
        split = _Split(len(texts))
    except (OSError, ValueError):
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        split.close()
        return None
    if pid == 0:  # the child: never returns
        _child(texts, path, read_fd, write_fd, split)
    os.close(write_fd)
    return Job(pid, read_fd, texts, path, split)


def _cpus() -> int:
    """The CPUs this process may run on (on one, a worker only adds its cost)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _child(texts: Sequence[helpertext.HelperText], path: str, read_fd: int, write_fd: int,
           split: _Split) -> None:
    code = 1
    try:
        interrupt.in_worker()  # the parent decides about SIGINT and ends this child itself
        os.close(read_fd)
        blob = pickle.dumps(_reads(texts, path, split), protocol=pickle.HIGHEST_PROTOCOL)
        with open(write_fd, "wb", closefd=True) as out:
            out.write(blob)
        code = 0
    except BaseException:  # noqa: BLE001 - a limit, a crash: the parent reads the helpers itself
        pass
    finally:
        os._exit(code)  # never the parent's cleanup (its buffered output, atexit, open files)


def _reads(texts: Sequence[helpertext.HelperText], path: str, split: _Split) -> list[tuple]:
    """In the child: the texts from the front until the parent's share begins, polling the
    package's time and memory budget as the serial path does (a limit reached here is reached
    again there), in the form sent."""
    out = []
    same: dict = {}
    while (i := split.take_front()) is not None:
        budget.poll(f"parsing Triton kernel {texts[i].name}")
        out.append(_to_wire(read_helper(texts[i], path), same))
    return out



# What is sent for one helper: (source, first line, indent, problem, light, walked, located), the
# fast path's facts as (params, line, column, signature items). Kernels share a handful of
# parameter lists and signatures: sent once each (`same`: pickle writes one object once), they
# cost a tenth of the dataclasses (measured: 25 ms against 3 for 2,900 kernels).

def _to_wire(read: HelperRead, same: dict) -> tuple:
    light = read.light
    wire_light = None
    if light is not None:
        params, types = tuple(light.params), tuple(light.param_types.items())
        wire_light = (same.setdefault(params, params), light.location.line, light.location.column,
                      same.setdefault(types, types))
    return (read.source, read.first_line, read.indent, read.problem, wire_light, read.walked, read.located)


def _from_wire(item: tuple, text: helpertext.HelperText, path: str) -> HelperRead:
    source, first_line, indent, problem, light, walked, located = item
    read = HelperRead(source, first_line, indent, problem, None, walked, located)
    if light is not None:
        params, line, column, types = light
        read.light = kernels.KernelFacts(text.name[len("call_"):], "triton", params, Location(path, line, column))
        read.light.param_types = dict(types)
    return read


# --- expressions as text -------------------------------------------------------------------------
#
# A walked kernel's definitions and stored values are `ast` expressions. Each is sent as its source
# segment (the lines and columns the parser recorded; one over several lines in brackets, as it
# stood in the source) and parsed again alone here; the scan's `tmp7, = tl.associative_scan(...)`
# items, built by the walk, as (segment, index). A segment that cannot be cut (a source with "\r",
# where lines count differently) sends no facts; one that does not parse back alone makes
# `restore` return None: either way the kernel is walked here.

def _as_text(facts: kernels.KernelFacts, source: str) -> kernels.KernelFacts | None:
    cut: Callable[[ast.AST], object]
    if facts.segments is not None:  # read line by line: each value's text is known
        cut = functools.partial(_known, segments=facts.segments)
    else:
        if "\r" in source:
            return None
        try:
            lines = source.encode("utf-8").split(b"\n")
        except UnicodeEncodeError:
            return None
        cut = _segments(lines)
    try:
        # The wire form: each expression's text (or (text, item)) in place of its node.
        facts.defs = {name: [(line, cut(expr)) for line, expr in entries]  # type: ignore[misc]
                      for name, entries in facts.defs.items()}
        if facts.stores is not None:
            facts.stores = [RawStore(s.pointer, s.pos, None if s.value is None else cut(s.value))  # type: ignore[arg-type]
                            for s in facts.stores]
    except (_NoSegment, UnicodeDecodeError):
        return None
    facts.locate = None
    facts.segments = None  # node ids: nothing in another process
    return facts


class _NoSegment(Exception):
    pass


def _segments(lines: list[bytes]) -> Callable[[ast.AST], object]:
    # A partial, not a closure calling itself: that would be a reference cycle per kernel.
    return functools.partial(_cut, lines=lines)


def _cut(node: ast.AST, lines: list[bytes]) -> object:
    if isinstance(node, ast.Subscript) and getattr(node, "lineno", None) is None \
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
        return (_cut(node.value, lines), node.slice.value)  # a scan's item, built by the walk
    text = tritonlines.segment(node, lines)
    if text is None:
        raise _NoSegment
    return text


def _known(node: ast.AST, segments: dict[int, str]) -> object:
    if isinstance(node, ast.Subscript) and getattr(node, "lineno", None) is None \
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
        return (_known(node.value, segments), node.slice.value)  # a scan's item, built by the walk
    text = segments.get(id(node))
    if text is None:
        raise _NoSegment
    return text


def restore(read: HelperRead, path: str) -> kernels.KernelFacts | None:
    """The walked facts with their expressions parsed again (None: walk the kernel here)."""
    facts = read.walked
    if facts is None:
        return None
    try:
        facts.defs = {name: tuple((line, _node(value)) for line, value in entries)
                      for name, entries in facts.defs.items()}
        if facts.stores is not None:
            facts.stores = tuple(RawStore(s.pointer, s.pos, None if s.value is None else _node(s.value))
                                 for s in facts.stores)
    except _NoSegment:
        return None
    if read.located:
        first_line, indent = read.first_line, read.indent
        facts.locate = lambda line: Location(path, first_line + line - 1, indent + 1)
    read.walked = None  # restored once
    return facts


def shared(facts: kernels.KernelFacts, source: str, path: str, first_line: int,
           indent: int) -> kernels.KernelFacts:
    """A kernel walked here, with its expressions replaced by the one parse of their text that
    kernels share, as the child's answers are (`restore`): a transformer's kernels repeat most lines
    (`x0 = xindex % ks0`), and each walk's own trees would stay in memory until linking ends (490
    against 270 MB of peak RSS at 50 MB of GPT-2). The facts as walked where that cannot be done."""
    if facts.problem is not None or facts.segments is not None:
        return facts  # (read line by line: its lines' parses are already shared)
    copy = dataclasses.replace(facts)
    located = copy.locate is not None
    text = _as_text(copy, source)
    if text is None:
        return facts
    restored = restore(HelperRead(source, first_line, indent, None, walked=text, located=located), path)
    return facts if restored is None else restored


def _node(value: object) -> ast.expr:
    if isinstance(value, tuple):
        return ast.Subscript(_node(value[0]), ast.Constant(value[1]), ast.Load())
    node = triage.expression(value) if isinstance(value, str) else None
    if node is None:
        raise _NoSegment
    return node
