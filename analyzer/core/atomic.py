"""Every file aoti-lint writes goes through `write_atomic`: the target is either its old self or the
complete new content, never a truncated report.

The data is written to a temporary file in the target's folder (on Linux an unnamed `O_TMPFILE`
inode, which a SIGKILL or a power cut leaves nowhere; elsewhere `.NAME.XXXXXX`), flushed,
`fsync`ed and renamed over the target. On any error (a full disk, a signal raised as an exception)
the temporary file is removed and the old target is untouched. A target that exists keeps its
permission bits; a new one gets the umask's default (0666 & ~umask), not mkstemp's 0600.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from typing import Callable


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Replace `path` with `data` (str: UTF-8) atomically. Raises OSError naming `path` on failure.

    A target that is not a regular file (`/dev/null`, `/dev/stdout`, a FIFO) is written in place:
    it cannot be renamed over and has no old content to keep.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    target = os.fspath(path)
    try:
        # A link is written through, as `open(path, "w")` did: the file it names is replaced.
        real = os.path.realpath(target) if os.path.islink(target) else target
        try:
            st = os.stat(real)
        except FileNotFoundError:
            st = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            _write_in_place(real, payload)
            return
        mode = stat.S_IMODE(st.st_mode) if st is not None else None
        _replace(real, payload, mode)
    except OSError as exc:
        if exc.filename is None or exc.filename != target:
            # The user named `path`: the message names it, not a temporary file.
            raise OSError(exc.errno, exc.strerror or str(exc), target) from None
        raise


def _write_in_place(path: str, payload: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        _write_all(fd, payload)
    finally:
        os.close(fd)


def _replace(path: str, payload: bytes, mode: int | None) -> None:
    folder = os.path.dirname(path) or "."
    name = os.path.basename(path)
    fd = _unnamed(folder)
    if fd is not None:
        unnamed: int = fd  # the closure's own name: `fd` is rebound below
        try:
            temp = _complete(fd, payload, mode, lambda: _link_unnamed(unnamed, folder, name))
        except _CannotLink:
            temp = None  # /proc is not there or cannot link: a named temporary file instead
        if temp is not None:
            _rename(temp, path)
            return
    fd, temp = tempfile.mkstemp(dir=folder, prefix=f".{name}.")
    try:
        # mkstemp makes 0600; a new report reads like any other new file.
        _complete(fd, payload, mode if mode is not None else 0o666 & ~_umask(), lambda: temp)
    except BaseException:
        _unlink(temp)
        raise
    _rename(temp, path)


class _CannotLink(Exception):
    """The unnamed file could not be given a name (no /proc, or a file system that refuses)."""


def _complete(fd: int, payload: bytes, mode: int | None, name: Callable[[], str]) -> str:
    """Write, chmod and fsync `fd`, name it (`name()`), close it; the name."""
    try:
        _write_all(fd, payload)
        if mode is not None:
            os.fchmod(fd, mode)
        os.fsync(fd)
        return name()
    finally:
        os.close(fd)


def _rename(temp: str, path: str) -> None:
    try:
        os.replace(temp, path)
    except BaseException:
        _unlink(temp)
        raise
    _sync_folder(os.path.dirname(path) or ".")


def _unlink(temp: str) -> None:
    try:
        os.unlink(temp)
    except OSError:
        pass


def _unnamed(folder: str) -> int | None:
    """An `O_TMPFILE` inode in `folder` (mode 0666 & ~umask), or None where unsupported."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(folder, flag | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
            return None  # the file system has no O_TMPFILE
        raise


def _link_unnamed(fd: int, folder: str, name: str) -> str:
    """A name in `folder` for the complete unnamed file: linkat(AT_SYMLINK_FOLLOW) of its /proc
    link (an explicit src_dir_fd makes Python call linkat rather than link, which cannot)."""
    try:
        folder_fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise _CannotLink from exc
    try:
        for _ in range(100):
            temp = f".{name}.{os.urandom(6).hex()}"
            try:
                os.link(f"/proc/self/fd/{fd}", temp, src_dir_fd=folder_fd, dst_dir_fd=folder_fd,
                        follow_symlinks=True)
                return os.path.join(folder, temp)
            except FileExistsError:
                continue
            except OSError as exc:
                raise _CannotLink from exc
        raise _CannotLink
    finally:
        os.close(folder_fd)


def _write_all(fd: int, payload: bytes) -> None:
    view = memoryview(payload)
    while view:
        written = os.write(fd, view[: 1 << 20])
        view = view[written:]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _sync_folder(folder: str) -> None:
    """Make the rename durable; a folder that cannot be opened or synced is not an error."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
