"""Run a call on a thread with a big stack: for C code that recurses as deep as its input."""

from __future__ import annotations

import threading
from typing import Callable, TypeVar

T = TypeVar("T")

STACK_BYTES = 1 << 30  # reserved address space, not memory: pages are touched only as used


def on_big_stack(work: Callable[[], T]) -> T:
    """`work()` on a thread with a 1 GiB stack; its exception is re-raised here.

    tree-sitter recurses in C on some ambiguous chains (`(T)(a)*(T)(a)*...`): 2 MB of them overflow
    the main thread's 8 MB stack, a segfault rather than an exception; 1 GiB holds what the time
    limit lets it parse (measured: 2 MB in 45 s)."""
    result: list[T] = []
    error: list[BaseException] = []

    def run() -> None:
        try:
            result.append(work())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            error.append(exc)

    try:
        previous = threading.stack_size(STACK_BYTES)
    except (ValueError, RuntimeError):  # a platform without settable thread stacks
        return work()
    try:
        # A daemon: an interrupted run (SIGINT) exits without waiting for the parse to end.
        thread = threading.Thread(target=run, name="aoti-lint-parse", daemon=True)
        thread.start()
    finally:
        threading.stack_size(previous)
    thread.join()
    if error:
        raise error[0]
    return result[0]
