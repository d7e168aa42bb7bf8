"""Primary locations: a file the user has, for every finding.

A finding's `location` is a member inside the package (`<root>/data/aotinductor/<model>/<hash>.
wrapper.cpp`): the hash changes on every build and the member cannot be opened from a pull request.
The primary location is instead

- the model source line (`Finding.source`), when that file exists under the working directory or
  under `--source-root DIR` (matched by the longest trailing part of the recorded path, since the
  exported program records the path of the machine that exported it);
- else the package path as given on the command line, relative to the working directory; for an
  extracted folder, the member itself when it exists on disk (so that it opens from there).

Only `os.path` checks are made here (no file is opened); the archive is never read again.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import PurePosixPath, PureWindowsPath
from typing import Iterable

from ..core.findings import Finding, Location


def relative(path: str, cwd: str) -> str:
    """`path` relative to `cwd` when it lies under it, else unchanged; always with `/`."""
    try:
        absolute = os.path.abspath(path)
        rel = os.path.relpath(absolute, cwd)
    except ValueError:  # another drive on Windows
        return path.replace(os.sep, "/")
    if rel == os.curdir:
        return "."
    if rel.startswith(os.pardir + os.sep) or rel == os.pardir:
        return path.replace(os.sep, "/")
    return rel.replace(os.sep, "/")


def find_source_file(recorded: str, roots: Iterable[str], cwd: str, line: int | None = None,
                     code: str | None = None) -> str | None:
    """The file a recorded source path names, under one of `roots`, relative to `cwd`: the path as
    recorded when it exists under a root, else its longest trailing part that does. With the
    recorded `line` and its `code`, a file whose line differs is not it (a build elsewhere whose
    path happens to end like a file here: the review comment would land on unrelated code)."""
    parts = [p for p in (PureWindowsPath(recorded).parts if "\\" in recorded else PurePosixPath(recorded).parts)
             if p not in ("/", "\\")]
    if not parts or ".." in parts:
        return None
    for root in roots:
        root_abs = os.path.abspath(root)
        if os.path.isabs(recorded) and os.path.isfile(recorded):
            rel = relative(recorded, root_abs)
            if (not os.path.isabs(rel) and not rel.startswith("..") and not _installed(root_abs, rel)
                    and _holds(recorded, line, code)):
                return relative(recorded, cwd)
        for start in range(len(parts)):
            candidate = os.path.join(root_abs, *parts[start:])
            if (os.path.isfile(candidate) and not _installed(root_abs, os.path.join(*parts[start:]))
                    and _holds(candidate, line, code)):
                return relative(candidate, cwd)
    return None


_MAX_SOURCE_BYTES = 16 << 20  # a user's source file; anything larger is not read to compare a line


def _holds(path: str, line: int | None, code: str | None) -> bool:
    """Does line `line` of `path` read `code` (whitespace aside)? True when there is nothing to compare."""
    if not line or not code or not code.strip():
        return True
    try:
        if os.path.getsize(path) > _MAX_SOURCE_BYTES:
            return False
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, text in enumerate(handle, 1):
                if number == line:
                    return text.strip() == code.strip()
    except OSError:
        return False
    return False


_INSTALL_DIRS = frozenset({"site-packages", "dist-packages"})


def _installed(root: str, rel: str) -> bool:
    """Whether `rel` under `root` is installed library code (a site-packages folder or a virtualenv,
    e.g. the `.venv` in a checkout), not a file of the user's repository: a stack trace through
    transformers must not point a review comment into `.venv/lib/.../modeling_gpt2.py`."""
    parts = PurePosixPath(rel.replace(os.sep, "/")).parts
    if _INSTALL_DIRS.intersection(parts):
        return True
    folder = root
    for part in parts[:-1]:
        folder = os.path.join(folder, part)
        if os.path.isfile(os.path.join(folder, "pyvenv.cfg")):
            return True
    return False


def member_on_disk(package: str, member: str) -> str | None:
    """For an extracted folder: the member as a path that opens from the working directory."""
    if not os.path.isdir(package):
        return None
    member_parts = PurePosixPath(member).parts
    for start in (0, 1):  # members are named under the folder, or under its own top folder
        if len(member_parts) > start:
            candidate = os.path.join(package, *member_parts[start:])
            if os.path.isfile(candidate):
                return candidate
    return None


def locate(findings: Iterable[Finding], *, source_root: str | None = None, cwd: str | None = None) -> list[Finding]:
    """Findings with `primary` set (see the module docstring)."""
    cwd = os.path.abspath(cwd or os.getcwd())
    roots = [cwd] + ([source_root] if source_root else [])
    cache: dict[tuple, str | None] = {}
    out = []
    for f in findings:
        primary = None
        src = f.source
        if src is not None and getattr(src, "file", None):
            key = (src.file, src.line, getattr(src, "code", None))
            if key not in cache:
                cache[key] = find_source_file(src.file, roots, cwd, src.line, getattr(src, "code", None))
            found = cache[key]
            if found is not None:
                primary = Location(found, src.line or 0, 0)
        called = getattr(src, "called_from", None) if src is not None else None
        called_at = None
        if called is not None:
            key = called
            if key not in cache:
                cache[key] = find_source_file(called[0], roots, cwd, called[1], called[2])
            found_called = cache[key]
            if found_called is not None:
                called_at = Location(found_called, called[1] or 0, 0)
        if primary is None and f.package:
            on_disk = member_on_disk(f.package, f.location.path)
            if on_disk is not None:
                primary = Location(relative(on_disk, cwd), f.location.line, f.location.column)
            else:
                primary = Location(relative(f.package, cwd))
        if called_at is not None:
            f = replace(f, called_from=called_at)
        out.append(replace(f, primary=primary) if primary is not None else f)
    return out
