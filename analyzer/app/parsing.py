"""A member's tree-sitter parse under the package's budget: the bodies no reader looks at left out
(unread.py), C++ kernels parsed apart (cppkernel.Apart), a member of kernels alone left without a
tree of its own, and the parse stopped when the time or memory budget is spent."""

from __future__ import annotations

import time
from typing import overload

from ..read import archive
from ..core import budget
from ..core.bigstack import on_big_stack
from ..parse import cppkernel, wrappertext, ts


# Each check statement costs about 0.1 ms and 6 KB from its parse to its linked assertion; past this
# many in one member (a real kernel holds a handful) the member is refused from its text, before a
# parse that would run past the time and memory limits.
MAX_CHECKS = 100_000


def refuse_many_checks(data: bytes) -> None:
    checks = data.count(b"AOTI_TORCH_CHECK")
    if checks > MAX_CHECKS:
        raise ValueError(f"{checks:,} AOTI_TORCH_CHECK statements, more than the {MAX_CHECKS:,} one member "
                         "is read for")


@overload
def parse_bytes(pkg: "archive.Package", member: str, data: bytes,
                 kernels: "cppkernel.Apart | None" = None, *,
                 text: "wrappertext.WrapperText | None" = None) -> "ts.Tree": ...
@overload
def parse_bytes(pkg: "archive.Package", member: str, data: bytes,
                 kernels: "cppkernel.Apart", whole: bool) -> "ts.Tree | None": ...
def parse_bytes(pkg: "archive.Package", member: str, data: bytes,
                 kernels: "cppkernel.Apart | None" = None, whole: bool = True,
                 text: "wrappertext.WrapperText | None" = None) -> "ts.Tree | None":
    """The member's tree without the bodies no reader looks at; with `kernels` (empty bodies), also
    without the C++ kernels' bodies, which it fills in for each kernel to be parsed on its own.
    Without `whole`, a member that holds nothing but C++ kernels gets no tree (None): their names
    and spans go to `kernels.heads` (its tree only listed them, and parsing their heads cost a
    tenth of a kernel member's parse and a sixth of its peak memory). With `text` (a wrapper), the
    constructor's tables and run_impl's launches are read from the text into it and left out too."""
    from ..parse import unread  # a text scan: function bodies no reader looks at are not parsed

    spans: list[tuple[int, int]] = []
    heads = unread.Heads() if not whole else None
    bodies: dict[str, tuple[int, int]] | None = {} if text is not None else None
    exclude = unread.unread_bodies(data, spans if kernels is not None else None, heads, bodies)
    launches: list[tuple[int, int]] = []
    if text is not None and bodies:
        exclude, launches = _read_text(data, member, bodies, text, exclude)
    if kernels is None or not spans:
        tree = parse_span(pkg, member, data, sorted(exclude + launches))
        if launches and _run_impl_error(tree, text):
            # A syntax error may join a launch's line to the statement before it: read every line
            # from the tree, as a parse of all of them sees them.
            tree = parse_span(pkg, member, data, exclude)
        return tree
    lines = kernels.lines = cppkernel.Lines(data)
    kernels.bodies.update(spans)
    kernels.data = data
    kernels.parse = lambda start, end, *inside: parse_span(pkg, member, data, [(0, start), *inside, (end, len(data))],
                                                            lines.point, stoppable=end - start > MAX_UNSTOPPABLE)
    if heads is not None and heads.only_kernels() and len(heads.kernels) == len(spans):
        kernels.heads = [(name, head, body, end) for (name, head), (body, end) in zip(heads.kernels, spans)]
        return None
    tree = parse_span(pkg, member, data, sorted(exclude + launches + spans), lines.point)
    if launches and _run_impl_error(tree, text):  # as above
        tree = parse_span(pkg, member, data, sorted(exclude + spans), lines.point)
    return tree


def _run_impl_error(tree: "ts.Tree", text: "wrappertext.WrapperText | None") -> bool:
    """Whether run_impl, parsed without the launches read from the text, holds a syntax error
    (then `text` drops them)."""
    if text is None or text.launches is None:
        return False
    at = text.launches.body
    found = ts.functions(tree.root_node)
    if all(ts.error_free(m["body"]) for m in found if ts.span(m["body"])[0] == at):
        text.functions = found  # the tree returned: its readers take these
        return False
    text.launches = None
    return True


def _read_text(data: bytes, member: str, bodies: dict[str, tuple[int, int]], text: "wrappertext.WrapperText",
               exclude: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The constructor's tables and run_impl's launches read into `text`: (`exclude` with the
    tables' span, the launches' spans)."""
    if "constructor" in bodies:
        text.tables = wrappertext.read_tables(data, *bodies["constructor"])
        if text.tables is not None and text.tables.span is not None:
            exclude = sorted(exclude + [text.tables.span])
    if "run_impl" in bodies:
        text.launches = wrappertext.read_launches(data, member, *bodies["run_impl"], text.max_depth)
    return exclude, text.launches.spans if text.launches is not None else []


# A kernel parsed on its own up to this size is parsed in one call that cannot be stopped (bounded:
# about 5 s at tree-sitter's worst rate; the budget is checked before each): a stoppable parse of a
# span (read through a callback) grew the process by about 1.4 MB per parse, never given back
# (measured over the 2,000 kernels of a 12 MB package), and one without the callback by nothing.
MAX_UNSTOPPABLE = 256 * 1024
# ... and up to this size on the caller's stack: tree-sitter's deepest recursion (bigstack.py's
# `(T)(a)*` chains) needs 8 to 16 bytes of stack per byte of input (64 KB of it crashed a thread of
# 512 KB and ran in 1 MB), so 512 KB at most here, against the 8 MB of a main thread.
MAX_ON_STACK = 32 * 1024


def _call(work):
    return work()


def parse_span(pkg: "archive.Package", member: str, data: bytes, exclude: list[tuple[int, int]],
                points=None, stoppable: bool = True) -> "ts.Tree":
    pkg.deadline.check(f"parsing {member}")
    if not stoppable:
        size = len(data) - sum(hi - lo for lo, hi in exclude)
        # Deep recursion needs the big stack (bigstack.py) past a few pages of input; a thread with
        # one costs about 2 ms to start, as much as parsing a typical kernel.
        whole = (on_big_stack if size > MAX_ON_STACK else _call)(lambda: ts.parse(data, None, exclude, points))[0]
        assert whole is not None  # None only when stopped
        return whole
    started, rss = time.monotonic(), budget.rss_bytes()
    tree, stopped = ts.parse(data, should_stop=pkg.deadline.should_stop, exclude=exclude, points=points)
    if stopped:
        del tree
        if pkg.deadline.expired:
            pkg.deadline.check(f"parsing {member}")
        pkg.deadline.raise_memory(f"parsing {member}")
    assert tree is not None  # None only when stopped
    # Node text of the stoppable parse's tree costs 15x a slice; the tree re-parsed with itself as
    # the old tree holds its bytes. That re-parse cannot be stopped and at worst repeats the parse:
    # it runs only when twice the time and the memory the parse took are still in the budget.
    spent, grew, now = time.monotonic() - started, budget.rss_bytes() - rss, budget.rss_bytes()
    limit = pkg.deadline.max_memory
    if pkg.deadline.remaining > 2 * spent + 1 and (limit is None or now + 2 * max(grew, 0) < limit):
        tree = ts.with_own_text(tree, data, exclude, points)
    return tree
