"""Many packages in one run: which packages the paths name, and checking them, in worker
processes when asked. `api.lint` is the entry point; this module is its driver."""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..read import archive
from ..core import budget
from ..parse import helper_worker
from ..core import interrupt
from . import locate
from . import pipeline
from .pipeline import InternalError, Options
from ..core.findings import Finding, PackageError
from ..core.model import Package

# Errors that mean "this package cannot be read": one line each, the other packages go on.
_PACKAGE_ERRORS = (budget.ArchiveError, ValueError, OSError)

Progress = Callable[[int, int], None]  # (packages done, packages in all)


@dataclass(frozen=True)
class Target:
    """One package to check: its path as the user will read it, and whether a folder walk found it
    (an archive without a model is then skipped rather than an error)."""

    path: str
    walked: bool = False
    # The exported program beside it (`X.ep.pt2` for `X.pt2`), used as --exported-program would be.
    exported_program: str | None = None


@dataclass
class Outcome:
    package: Package | None = None
    findings: list[Finding] = field(default_factory=list)
    error: PackageError | None = None
    # An InternalError in a worker process, as text (where, exception type, message, traceback):
    # the exception itself does not survive pickling.
    crash: tuple[str, str, str, str] | None = None


def discover(paths: Iterable[str | os.PathLike[str] | Target], *, pair: bool = True, exclude: Sequence[str] = (),
             notes: list[str] | None = None) -> list[Target]:
    """The packages named: each path as given, except that a folder which is not itself an
    extracted package is searched (sorted, links never followed) for `*.pt2` files and extracted
    packages. The same file or folder named twice (or found twice) is kept once, first place. A
    folder without any package stays a target, so that reading it says why (empty, no model).

    Exported programs (`*.ep.pt2`) are never packages: a walk skips them; named, one stands for the
    package beside it (`X.pt2` for `X.ep.pt2`) when pairing, else it is skipped with a note. With
    `pair`, each package's `X.ep.pt2` beside it becomes its exported program. `exclude` globs
    (fnmatch, over the path below the folder walked and over the name) leave out what a walk finds.
    """
    targets: list[Target] = []
    seen: set[object] = set()
    notes = notes if notes is not None else []

    def add(path: str, walked: bool) -> None:
        key = _identity(path)
        if key not in seen:
            seen.add(key)
            targets.append(Target(path, walked, exported_program=paired_exported_program(path) if pair else None))

    for raw in paths:
        if isinstance(raw, Target):  # already found (the command line groups walked packages by configuration)
            add(raw.path, raw.walked)
            continue
        path = os.fspath(raw)
        if is_exported_program(path) and os.path.isfile(path):
            package = path[: -len(EP_SUFFIX)] + ".pt2"
            if pair and os.path.isfile(package):
                add(package, False)  # the exported program of a package: check that package with it
            else:
                notes.append(f"{path}: an exported program (torch.export.save), not a package: skipped "
                             "(pass it with --exported-program, or name it after its package: X.ep.pt2 beside X.pt2)")
            continue
        found = [p for p in _walk(path, 0) if not _excluded(p, path, exclude)] \
            if os.path.isdir(path) and not is_package_dir(path) else []
        for one in found:
            add(one, True)
        if not found:
            add(path, False)  # a file, a package folder, or a missing path (its error comes later)
    return targets


EP_SUFFIX = ".ep.pt2"


def paired_exported_program(path: str | os.PathLike[str]) -> str | None:
    """`X.ep.pt2` beside the package `X.pt2` (or the extracted folder `X`), when it is a file."""
    text = os.fspath(path).rstrip("/\\") or os.fspath(path)
    if text.endswith(".ep.pt2"):
        return None
    stem = text[:-4] if text.endswith(".pt2") else text if os.path.isdir(text) else None
    if stem is None:
        return None
    candidate = stem + ".ep.pt2"
    return candidate if os.path.isfile(candidate) and not os.path.islink(candidate) else None


def is_exported_program(path: str) -> bool:
    return os.path.basename(os.path.normpath(path)).endswith(EP_SUFFIX)


def _excluded(path: str, root: str, patterns: Sequence[str]) -> bool:
    """Whether a glob matches the path below the folder walked, a folder on the way to it (its
    path or its name, as ruff excludes folders), or the file's name."""
    if not patterns:
        return False
    parts = os.path.relpath(path, root).replace(os.sep, "/").split("/")
    for i, name in enumerate(parts):
        prefix = "/".join(parts[: i + 1])
        if any(fnmatch.fnmatchcase(prefix, pat) or fnmatch.fnmatchcase(name, pat) for pat in patterns):
            return True
    return False


_MAX_WALK_DEPTH = 32


def _walk(folder: str, depth: int) -> Iterator[str]:
    if depth > _MAX_WALK_DEPTH:
        return
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        path = os.path.join(folder, entry.name)
        if entry.is_symlink():
            continue  # as inside packages: links are never followed
        if entry.is_dir(follow_symlinks=False):
            if is_package_dir(path):
                yield path
            else:
                yield from _walk(path, depth + 1)
        elif entry.name.endswith(".pt2") and not entry.name.endswith(EP_SUFFIX) \
                and entry.is_file(follow_symlinks=False):
            yield path


def is_package_dir(path: str) -> bool:
    """An extracted package: `data/aotinductor/` in the folder or in one of its children."""
    def aoti(base: str) -> bool:
        return os.path.isdir(os.path.join(base, "data", "aotinductor")) and not os.path.islink(base)

    if aoti(path):
        return True
    try:
        with os.scandir(path) as it:
            return any(e.is_dir(follow_symlinks=False) and aoti(e.path) for e in it)
    except OSError:
        return False


def _identity(path: str) -> object:
    """The same file reached by two spellings (`a.pt2`, `./a.pt2`, a link) is one package."""
    try:
        st = os.stat(path)
        return (st.st_dev, st.st_ino)
    except OSError:
        return os.path.normpath(path)


def check_one(target: Target, options: Options, keep_going: bool = True) -> Outcome:
    """Load one package and run the selected rules. A package that cannot be read raises, or with
    `keep_going` is returned as an error."""
    from .. import rules

    if target.exported_program and not options.exported_program:
        options = dataclasses.replace(options, exported_program=target.exported_program, paired=True)
    deadline = pipeline.deadline(target.path, options)  # one budget from opening the package to its last rule
    try:
        package = pipeline.load_package(target.path, options, deadline)
    except archive.NoModelError as exc:
        if target.walked:
            return Outcome()  # e.g. an exported program next to its package
        if not keep_going:
            raise
        return Outcome(error=PackageError(target.path, _one_line(exc)))
    except _PACKAGE_ERRORS as exc:
        if not keep_going:
            raise
        return Outcome(error=PackageError(target.path, _one_line(exc)))
    ctx = rules.Context(target_device=options.target_device, target_sm=options.target_sm, package=target.path,
                        runtime_checks=options.runtime_checks)
    selected = rules.select_rules(options.select, options.ignore)
    with pipeline.unexpected(f"{target.path} (rules)"), budget.polling(deadline):
        found = rules.run_rules(package, selected, ctx)  # with each finding's source and headline
        return Outcome(package, list(locate.locate(found, source_root=options.source_root)))


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}"
    return " ".join(text.split())


def outcomes(targets: list[Target], options: Options, jobs: int, progress: Progress | None,
              keep_going: bool) -> Iterator[Outcome]:
    """Each target's outcome, in input order; in worker processes when that can pay."""
    total = len(targets)
    if jobs <= 1 or total <= 1:
        for done, target in enumerate(targets, start=1):
            yield check_one(target, options, keep_going)
            if progress is not None:
                progress(done, total)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # fork: workers start in milliseconds with the analyzer already imported; spawn elsewhere.
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    # The cores are busy with packages: no worker inside a package's worker (helper_worker.py).
    options = dataclasses.replace(options, worker=helper_worker.Mode.OFF)
    with ProcessPoolExecutor(max_workers=min(jobs, total), mp_context=multiprocessing.get_context(method),
                             initializer=interrupt.in_worker) as pool:
        try:
            yield from _scheduled(pool, targets, options, keep_going, progress, min(jobs, total))
        except BaseException:
            # SIGINT/SIGTERM (interrupt.Interrupted) or a crash: the packages in flight are not
            # waited for (the pool's exit would join its workers), their workers are ended.
            processes = list((getattr(pool, "_processes", None) or {}).values())  # shutdown forgets them
            pool.shutdown(wait=False, cancel_futures=True)
            _stop_workers(processes)
            raise


def _scheduled(pool: Any, targets: list[Target], options: Options, keep_going: bool, progress: Progress | None,
               workers: int) -> Iterator[Outcome]:
    """Each target's outcome from `pool`, in input order. A package is handed out only while the
    workers' resident memory plus what it will need (`package_need`) stays within the memory limit,
    so that -j never multiplies one package's memory by the worker count: past it the next package
    waits for one in flight to end (a worker is refused it, never killed); with nothing in flight it
    runs anyway, under its own limit."""
    from concurrent.futures import FIRST_COMPLETED, wait

    budget = options.limits.max_memory
    waiting = list(enumerate(targets))
    waiting.reverse()  # popped from the end: input order
    in_flight: dict[Any, int] = {}
    ready: dict[int, Outcome] = {}
    yielded = done = 0
    while waiting or in_flight:
        while waiting and len(in_flight) < workers:
            index, target = waiting[-1]
            if in_flight and not admits(workers_rss(pool), package_need(target), budget):
                break
            waiting.pop()
            in_flight[pool.submit(_check_in_worker, target, options, keep_going)] = index
        finished, _ = wait(list(in_flight), return_when=FIRST_COMPLETED)
        for future in finished:
            ready[in_flight.pop(future)] = future.result()
            done += 1
            if progress is not None:
                progress(done, len(targets))
        while yielded in ready:
            outcome = ready.pop(yielded)
            yielded += 1
            if outcome.crash is not None:
                raise _internal_error(*outcome.crash)
            yield outcome


def package_need(target: Target) -> int:
    """The resident memory a check of `target` may add: three times its largest text member plus
    100 MB (the bound the benchmark holds every check to)."""
    return 3 * archive.text_bytes_hint(target.path) + 100 * 2**20


def admits(rss: int, need: int, budget: int) -> bool:
    """Whether a package needing `need` more bytes fits beside `rss` bytes held within `budget`."""
    return rss + need <= budget


def workers_rss(pool: Any) -> int:
    """The resident memory of the pool's worker processes now."""
    processes = getattr(pool, "_processes", None) or {}
    return sum(budget.process_rss_bytes(pid) for pid in list(processes))


def _stop_workers(processes: list) -> None:
    """SIGTERM to each worker (they die at once: interrupt.in_worker), then reap them."""
    for process in processes:
        try:
            process.terminate()
        except (OSError, ValueError, AttributeError):
            pass
    for process in processes:
        try:
            process.join(5)
        except (OSError, ValueError, AssertionError, AttributeError):
            pass


def _check_in_worker(target: Target, options: Options, keep_going: bool) -> Outcome:
    try:
        return check_one(target, options, keep_going)
    except InternalError as exc:
        import traceback

        cause = exc.__cause__ or exc
        return Outcome(crash=(exc.where, type(cause).__name__, str(cause),
                              "".join(traceback.format_exception(cause))))


def _internal_error(where: str, kind: str, text: str, trace: str) -> InternalError:
    """The worker's InternalError again: same message; its traceback as a note for --debug."""
    cause = type(kind, (Exception,), {})(text)
    if hasattr(cause, "add_note"):
        cause.add_note("in a worker process:\n" + trace.rstrip())
    error = InternalError(where, cause)
    error.__cause__ = cause
    return error


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class ProgressBar:
    """click's progress bar over the packages, on stderr: only on a terminal, and only once the run
    has taken PROGRESS_AFTER_S (a quick run prints nothing)."""

    PROGRESS_AFTER_S = 1.5

    def __init__(self) -> None:
        self._clock = time.monotonic
        self._start = self._clock()
        self._bar: Any = None
        self._done = 0

    def __call__(self, done: int, total: int) -> None:
        if total < 2:
            return
        if self._bar is None:
            if self._clock() - self._start < self.PROGRESS_AFTER_S:
                return
            import click

            self._bar = click.progressbar(length=total, label="packages", file=sys.stderr, show_pos=True)
            self._bar.__enter__()
        self._bar.update(done - self._done)
        self._done = done

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


@contextlib.contextmanager
def progress_bar():
    """A progress callback for api.lint when stderr is a terminal, else None."""
    isatty = getattr(sys.stderr, "isatty", None)
    if not (isatty and isatty()):
        yield None
        return
    bar = ProgressBar()
    try:
        yield bar
    finally:
        bar.close()
