"""SIGINT and SIGTERM stop the command line, and a time limit on rendering.

The command line (cli.main) turns both signals into `Interrupted`, a BaseException that no
`except Exception` catches: it unwinds the run (writes are atomic, so no report is left half
written), stops the worker processes, and exits 128 + the signal number: 130 for SIGINT, 143 for
SIGTERM, never 0 or 1 (which mean "no findings" and "findings"). Worker processes ignore SIGINT (a
terminal sends it to the whole process group; the parent decides) and die on SIGTERM, which is what
the parent sends them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Iterator

SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name))

# The first signal received, for an exit that races it (a worker killed by the same signal first).
received: int | None = None
_main_pid: int | None = None  # the process install() ran in; a forked child is a worker


class Interrupted(BaseException):
    """SIGINT or SIGTERM arrived: stop, write nothing more, exit `exit_code`."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    @property
    def name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"


def _raise(signum: int, frame: object) -> None:
    global received
    if os.getpid() != _main_pid:
        # A worker forked before it set its own handlers (in_worker): as those would.
        if signum == getattr(signal, "SIGINT", None):
            return
        os._exit(128 + signum)
    if received is not None:
        os._exit(128 + received)  # a second Ctrl-C while the first unwinds: stop now
    received = signum
    raise Interrupted(signum)


def install() -> None:
    """Raise Interrupted on SIGINT and SIGTERM in this process (the main thread only)."""
    global _main_pid
    if threading.current_thread() is not threading.main_thread():
        return
    _main_pid = os.getpid()
    for signum in SIGNALS:
        signal.signal(signum, _raise)


def in_worker() -> None:
    """In a forked or spawned worker: SIGINT ignored, SIGTERM ends it at once."""
    if hasattr(signal, "SIGINT"):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


class RenderTimeout(Exception):
    """Rendering took longer than its budget."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise RenderTimeout in the main thread once `seconds` have passed (SIGALRM: it stops pure
    Python loops anywhere, without every reporter polling). Nothing where there is no SIGALRM or
    off the main thread; `seconds` <= 0 means no limit."""
    if seconds <= 0 or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: object) -> None:
        raise RenderTimeout

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def exit_now(code: int) -> None:
    """Leave without waiting for threads or atexit handlers (a parse thread, a pool's joins)."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe: nothing more to say
            pass
    os._exit(code)
