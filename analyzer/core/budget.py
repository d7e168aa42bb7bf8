"""The time and memory budget of one package (`Deadline`, made active by `polling` and checked by
`poll()` from every loop whose length grows with the input), and the errors that end a package's
analysis. Every layer polls it, so it sits in core rather than in the archive reader that first
needed it.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import time
from typing import NoReturn

class ArchiveError(Exception):
    """A package that cannot be read safely. `str(e)` is one user-facing line."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


class TimeLimitError(ArchiveError):
    """The package's time budget is spent: never turned into a finding, always ends the package."""


class MemoryLimitError(ArchiveError):
    """The process grew past `max_memory`. Raised while parsing one member, that member becomes an
    unparsed-member finding (its tree is dropped and the rest is analysed); elsewhere it ends the
    package."""


def rss_bytes() -> int:
    """Resident memory of this process now (Linux /proc), else its peak so far (getrusage)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        import resource
        import sys

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


# Below this the interpreter, tree-sitter and the reader's buffers alone would trip max_memory.
MIN_MEMORY = 256 * 2**20

class Deadline:
    """Wall-clock and memory budget of one package; `check()` raises once either is spent.

    Memory is the process's resident size, read at most every 20 ms (a /proc read costs ~10 us),
    so polling it from hot loops is cheap."""

    def __init__(self, timeout_s: float, label: str = "", max_memory: int | None = None) -> None:
        self.timeout_s = timeout_s
        self.label = label
        self.max_memory = max_memory
        self._end = time.monotonic() + timeout_s
        self._next_memory_check = 0.0
        self._over_memory = 0

    @property
    def remaining(self) -> float:
        return max(0.0, self._end - time.monotonic())

    @property
    def expired(self) -> bool:
        return time.monotonic() >= self._end

    def over_memory(self) -> bool:
        """True when the process is past max_memory (checked at most every 20 ms)."""
        if self.max_memory is None:
            return False
        if self._over_memory:
            return True  # sticky until raise_memory reports it
        now = time.monotonic()
        if now >= self._next_memory_check:
            self._next_memory_check = now + 0.02
            rss = rss_bytes()
            self._over_memory = rss if rss > self.max_memory else 0
        return bool(self._over_memory)

    def should_stop(self) -> bool:
        """For stoppable steps (the C++ parse): time or memory spent."""
        return self.expired or self.over_memory()

    def check(self, what: str) -> None:
        if self.expired:
            raise TimeLimitError(
                f"{self.label}: analysis exceeded the {self.timeout_s:g} s time limit (while {what})"
            )
        if self.over_memory():
            self.raise_memory(what)

    def raise_memory(self, what: str) -> NoReturn:
        used = self._over_memory or rss_bytes()
        self._over_memory = 0  # the caller frees what it built: measure afresh next time
        self._next_memory_check = 0.0
        raise MemoryLimitError(
            f"{self.label}: analysis needed more than the {size_text(self.max_memory or 0)} memory limit "
            f"(while {what}; {used / 2**20:.0f} MiB resident)"
        )


_ACTIVE: contextvars.ContextVar["Deadline | None"] = contextvars.ContextVar("aoti_lint_deadline", default=None)


@contextlib.contextmanager
def polling(deadline: Deadline):
    """Make `deadline` the one `poll()` checks while the block runs (parsing, linking, rules)."""
    token = _ACTIVE.set(deadline)
    try:
        yield deadline
    finally:
        _ACTIVE.reset(token)


def poll(what: str) -> None:
    """Check the active package's time and memory budget; for every loop whose length grows with
    the input (matches, assertions, launches, rules). About 0.2 us when nothing is spent."""
    deadline = _ACTIVE.get()
    if deadline is not None:
        deadline.check(what)


def size_text(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    if n >= 2**20:
        return f"{n / 2**20:.1f} MiB"
    return f"{n} bytes"


def one_line(text: str) -> str:
    return "".join(ch if ch.isprintable() else " " for ch in text)


def process_rss_bytes(pid: int) -> int:
    """Resident memory of process `pid` now (Linux /proc; 0 where it cannot be read)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0
