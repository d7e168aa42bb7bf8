"""Safe, bounded reader over a `.pt2` package: a zip archive or an extracted directory.

What this module never does, whatever the package holds: extract anything to disk, write any file,
open a binary member (`.so`, `.cubin`, `.o`, weights, `.pt`, constants), unpickle, follow a symlink
inside the package, or build a filesystem path from a member name. Every read is capped (member
count, inflated bytes per member and per package, directory depth, wall-clock time) and every way a
hostile or broken package can fail surfaces as an `ArchiveError` whose text is one line.

It is also the one reader of `torch.export.save` archives (`open_archive`); the budget it reads
under (`Deadline`, `poll`) is core/budget.py's.

Long module: the bounded reader is kept in one file on purpose, so that every byte read from an
untrusted archive (package or exported program) goes through one set of limits and checks; its
parts (limits and budget, sources, central-directory checks, names) are sections below.
"""

from __future__ import annotations

import io
import os
import re
import stat
import struct
import zipfile
from dataclasses import dataclass, field
from typing import IO, BinaryIO, Callable, Iterator, TypeVar

from ..core.budget import MIN_MEMORY, ArchiveError, Deadline, size_text

__all__ = [
    "Archive", "NoModelError", "Limits", "ModelMembers", "Package", "open_archive", "open_package", "BINARY_SUFFIXES",
]

AOTI_DIR = ("data", "aotinductor")

# Members listed but never opened: compiled code, device images, weights and pickles.
BINARY_SUFFIXES = (
    ".so", ".dll", ".dylib", ".a", ".o", ".obj", ".cubin", ".fatbin", ".ptx", ".hsaco", ".spv",
    ".pt", ".pth", ".bin", ".pkl", ".pickle",
)
# Folders (relative to the archive root) whose payloads are tensors or pickles; only their JSON
# configs are text.
OPAQUE_DIRS = (
    "data/weights/", "data/constants/", "data/sample_inputs/", "data/executorch/", "data/mtia/",
    "xl_model_weights/",
)

# torch writes stored members (PyTorchFileWriter) or deflated ones (zipfile); its loader (miniz)
# reads nothing else. bzip2 and LZMA are refused on purpose: zipfile feeds their decompressors whole
# input chunks without an output cap, so a few KiB of bzip2 can inflate to GiBs in one call.
_SUPPORTED_COMPRESSION = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}

_CHUNK = 1 << 20

# Zip record layouts (APPNOTE 4.3): end of central directory, its zip64 locator and record, and
# one central directory header.
_EOCD = struct.Struct("<4s4H2LH")
_EOCD64_LOCATOR = struct.Struct("<4sLQL")
_EOCD64 = struct.Struct("<4sQ2H2L4Q")
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")


# The deepest bracket nesting the parsers may walk: they recurse about twice per level inside a call
# stack that is already deep, so more would run out of Python's recursion limit (1000) instead of
# reporting a limit. `max_nesting` may be lowered, never raised past this.
MAX_NESTING_CAP = 500


class NoModelError(ArchiveError):
    """A readable archive without any data/aotinductor/<model>/ folder (e.g. an exported program):
    an error when named, skipped when met while walking a folder of packages."""


@dataclass(frozen=True)
class Limits:
    """Bounds applied to one package. Every one turns into an ArchiveError when exceeded."""

    max_members: int = 100_000              # zip members, or entries walked in a directory
    max_member_bytes: int = 256 * 2**20     # inflated bytes read from one member
    max_total_bytes: int = 1024 * 2**20     # inflated bytes read from the whole package
    max_nesting: int = 500                  # bracket nesting accepted before parsing C++/Python (parsers)
    timeout_s: float = 120.0                # wall-clock per package (parsers poll Deadline)
    max_depth: int = 32                     # folder depth walked under an extracted package
    max_memory: int = 4 * 2**30             # resident memory of the process (parsers poll Deadline)

    def __post_init__(self) -> None:
        for name in ("max_members", "max_member_bytes", "max_total_bytes", "max_nesting", "max_depth"):
            if getattr(self, name) < 1:
                raise ValueError(f"limit {name} must be at least 1 (got {getattr(self, name)})")
        if self.max_nesting > MAX_NESTING_CAP:
            raise ValueError(f"limit max_nesting must be at most {MAX_NESTING_CAP} (got {self.max_nesting}): "
                             "deeper nesting would exhaust Python's recursion limit")
        if self.max_memory < MIN_MEMORY:
            raise ValueError(f"limit max_memory must be at least {MIN_MEMORY // 2**20} MiB (got {self.max_memory})")
        if self.timeout_s < 0:
            raise ValueError(f"limit timeout_s must not be negative (got {self.timeout_s})")


@dataclass
class ModelMembers:
    """The members of one `data/aotinductor/<name>/` folder, classified by file name."""

    name: str
    prefix: str
    wrappers: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    metadata: list[str] = field(default_factory=list)
    cmake: str | None = None
    binaries: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)


class Archive:
    """An opened archive (zip or folder) with bounded reads and no layout requirement.

    `open_archive` builds one (for `torch.export.save` archives); `open_package` builds a `Package`,
    which also finds the AOTInductor models. Close it (or use `with`) when done.
    """

    def __init__(self, path: str, kind: str, source: "_ZipSource | _DirSource", limits: Limits,
                 deadline: Deadline, label: str) -> None:
        self.path = path
        self.kind = kind
        self.limits = limits
        self.deadline = deadline
        self.members: list[str] = list(source.members)
        self.symlinks: list[str] = list(source.symlinks)   # listed, never read or followed
        _refuse_case_collisions(self.members, label)
        self._source = source
        self._label = label
        self._symlinks = frozenset(self.symlinks)
        self._total_read = 0
        self._read: set[str] = set()  # members read whole: `stream` reads them again uncounted
        self._binaries: frozenset[str] = frozenset()
        self.root = ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.path!r}, kind={self.kind!r}, members={len(self.members)})"

    def __enter__(self) -> "Archive":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._source.close()

    @property
    def label(self) -> str:
        """The path as shown in messages."""
        return self._label

    @property
    def bytes_read(self) -> int:
        """Inflated bytes read so far (counted against `max_total_bytes`)."""
        return self._total_read

    def is_binary(self, member: str) -> bool:
        """True for members this reader refuses to open (compiled code, weights, pickles)."""
        relative = member[len(self.root):] if member.startswith(self.root) else member
        return member in self._binaries or _is_opaque(relative)

    def read_bytes(self, member: str) -> bytes:
        """The member's inflated bytes, bounded by the limits; raises ArchiveError."""
        return b"".join(self.stream(member))

    def stream(self, member: str) -> Iterator[bytes]:
        """`read_bytes` a MiB at a time, counted in the total once read to its end; a member read
        whole before is not counted again (a caller that dropped its copy streams it once more)."""
        q = _q(member)
        if member not in self._source.entries:
            raise ArchiveError(f"{self._label}: no member {q} in the package")
        if member in self._symlinks:
            raise ArchiveError(f"{self._label}: member {q} is a symbolic link; links are never followed")
        if self.is_binary(member):
            raise ArchiveError(f"{self._label}: member {q} is binary (compiled code, weights or a pickle); it is never read")
        self.deadline.check(f"reading {q}")
        again = member in self._read
        budget = self.limits.max_total_bytes - (0 if again else self._total_read)
        cap = min(self.limits.max_member_bytes, budget)
        declared = self._source.declared_size(member)
        if declared is not None and declared > cap:
            # The header (or stat) already says too much: refuse before inflating a single byte.
            raise self._cap_error(member, declared, budget, declared_only=True)
        size = 0
        try:
            with self._source.open(member) as stream:
                for chunk in _capped_chunks(stream, cap, lambda: self.deadline.check(f"reading {q}")):
                    size += len(chunk)
                    yield chunk
        except ArchiveError:
            raise
        except _TooLarge as exc:
            raise self._cap_error(member, exc.args[0], budget, declared_only=False) from None
        except Exception as exc:  # noqa: BLE001 - zipfile/zlib/OS errors on hostile bytes: all mean "unreadable member"
            raise ArchiveError(f"{self._label}: cannot read member {q}: {_reason(exc)}") from None
        if declared is not None and self.kind == "zip" and size != declared:
            raise ArchiveError(f"{self._label}: member {q} inflates to {size} bytes but its header says {declared}")
        if not again:
            self._total_read += size
            self._read.add(member)

    def read_text(self, member: str) -> str:
        """The member decoded as UTF-8; undecodable bytes become U+FFFD instead of failing."""
        return self.read_bytes(member).decode("utf-8", errors="replace")

    def _cap_error(self, member: str, size: int, budget: int, declared_only: bool) -> ArchiveError:
        q = _q(member)
        what = f"declares {size_text(size)}, past" if declared_only else "inflates past"
        if self.limits.max_member_bytes <= budget:
            return ArchiveError(f"{self._label}: member {q} {what} the {size_text(self.limits.max_member_bytes)} "
                                "per-member limit")
        return ArchiveError(f"{self._label}: member {q} {what} the {size_text(self.limits.max_total_bytes)} limit on "
                            f"bytes read from the whole package ({size_text(self._total_read)} already read)")


class Package(Archive):
    """An opened AOTInductor package: an Archive plus its models. Build it with `open_package`."""

    def __init__(self, path: str, kind: str, source: "_ZipSource | _DirSource", limits: Limits,
                 deadline: Deadline, label: str) -> None:
        super().__init__(path, kind, source, limits, deadline, label)
        self.root, self.models = _discover_models(self.members, label)
        self.exported_programs = [
            m for m in self.members
            if m.startswith(self.root + "models/") and m.endswith(".json")
            and "/" not in m[len(self.root) + len("models/"):]
        ]
        self._binaries = frozenset(b for model in self.models for b in model.binaries)

    def __repr__(self) -> str:
        return f"Package({self.path!r}, kind={self.kind!r}, models={[m.name for m in self.models]})"

    def __enter__(self) -> "Package":
        return self


_ArchiveT = TypeVar("_ArchiveT", bound="Archive")


def open_package(path: str | os.PathLike[str], limits: Limits | None = None,
                 deadline: Deadline | None = None) -> Package:
    """Open a `.pt2` zip or an extracted package folder; raises ArchiveError with one line."""
    return _open(path, limits or Limits(), deadline, Package, AOTI_DIR)


def open_archive(path: str | os.PathLike[str], limits: Limits | None = None,
                 deadline: Deadline | None = None, marker: tuple[str, ...] = ("models",)) -> Archive:
    """Open any zip (or a folder holding `marker`, directly or in one child) with the same bounds as
    a package but no AOTInductor layout: the reader of `torch.export.save` archives."""
    return _open(path, limits or Limits(), deadline, Archive, marker)


def _open(path: str | os.PathLike[str], limits: Limits, deadline: Deadline | None,
          cls: type[_ArchiveT], marker: tuple[str, ...]) -> _ArchiveT:
    shown = os.fspath(path)
    label = shown if shown.isprintable() else repr(shown)
    deadline = deadline or Deadline(limits.timeout_s, label, limits.max_memory)
    try:
        st = os.stat(shown)  # the user's own path: following a link there is their choice
    except FileNotFoundError:
        raise ArchiveError(f"{label}: no such file or directory") from None
    except OSError as exc:
        raise ArchiveError(f"{label}: cannot open: {_reason(exc)}") from None
    if stat.S_ISDIR(st.st_mode):
        source: _ZipSource | _DirSource = _DirSource(shown, label, limits, deadline, marker)
        kind = "dir"
    elif stat.S_ISREG(st.st_mode):
        if st.st_size == 0:
            raise ArchiveError(f"{label}: empty file (not a zip archive)")
        source = _ZipSource(shown, label, limits, deadline)
        kind = "zip"
    else:
        raise ArchiveError(f"{label}: not a regular file or directory")
    try:
        return cls(shown, kind, source, limits, deadline, label)
    except BaseException:
        source.close()
        raise


# --------------------------------------------------------------------------------------------
# Sources: where member bytes come from.


class _TooLarge(Exception):
    """More than the cap came: `args[0]` bytes."""


def _capped_chunks(stream: IO[bytes], cap: int, poll: Callable[[], None] | None = None) -> Iterator[bytes]:
    """`stream` to its end in chunks, raising _TooLarge as soon as more than `cap` bytes came."""
    seen = 0
    while True:
        if poll is not None:
            poll()
        chunk = stream.read(min(_CHUNK, cap + 1 - seen))
        if not chunk:
            return
        seen += len(chunk)
        if seen > cap:
            raise _TooLarge(seen)
        yield chunk


class _ZipSource:
    """Members of a zip file, by normalized name; reads go through zipfile's streaming reader."""

    def __init__(self, path: str, label: str, limits: Limits, deadline: Deadline) -> None:
        self.label = label
        self.entries: dict[str, zipfile.ZipInfo] = {}
        self.members: list[str] = []
        self.symlinks: list[str] = []
        try:
            self._fp: BinaryIO = open(path, "rb")
        except OSError as exc:
            raise ArchiveError(f"{label}: cannot open: {_reason(exc)}") from None
        try:
            self._zf = self._open_zip(limits, deadline)
            self._index(limits)
        except BaseException:
            self.close()
            raise

    def _open_zip(self, limits: Limits, deadline: Deadline) -> zipfile.ZipFile:
        deadline.check("listing members")
        try:
            size = self._fp.seek(0, io.SEEK_END)
            # Count central-directory records first: zipfile builds one object per record and
            # would take GiBs of memory for a few million of them before we could check len().
            count = _count_central_records(self._fp, size, limits.max_members)
        except (OSError, struct.error) as exc:
            raise ArchiveError(f"{self.label}: cannot read: {_reason(exc)}") from None
        if count > limits.max_members:
            raise ArchiveError(f"{self.label}: more than {limits.max_members} members (the member-count limit)")
        try:
            self._fp.seek(0)
            return zipfile.ZipFile(self._fp)
        except zipfile.BadZipFile as exc:
            if str(exc) == "File is not a zip file":
                raise ArchiveError(f"{self.label}: not a zip file (or truncated: no end-of-archive record)") from None
            raise ArchiveError(f"{self.label}: corrupt zip archive: {_reason(exc)}") from None
        except Exception as exc:  # noqa: BLE001 - zipfile parsing hostile bytes: any failure means "unreadable"
            raise ArchiveError(f"{self.label}: corrupt zip archive: {_reason(exc)}") from None

    def _index(self, limits: Limits) -> None:
        infos = self._zf.infolist()
        if len(infos) > limits.max_members:  # a central directory that the pre-count misjudged
            raise ArchiveError(f"{self.label}: more than {limits.max_members} members (the member-count limit)")
        for info in infos:
            name = _normalize_member(info.filename, self.label)
            if name is None:
                continue  # a folder entry
            if name in self.entries:
                raise ArchiveError(f"{self.label}: duplicate member {_q(name)} (the archive is ambiguous; refusing it)")
            self.entries[name] = info
            self.members.append(name)
            if stat.S_ISLNK(info.external_attr >> 16):
                self.symlinks.append(name)
        self._refuse_overlap(infos)

    def _refuse_overlap(self, infos: list[zipfile.ZipInfo]) -> None:
        """Refuse members whose bytes overlap another member's or the central directory.

        The non-recursive zip bomb points many central-directory entries at one compressed body
        (or lets each body hold the next entry's header), so 157 KB inflate to GBs although every
        member is within its own limit; zipfile does not notice. A member spans its local header
        (30 bytes and its name; a local extra field only adds to it) and its compressed data.
        """
        spans = []
        for info in infos:
            name_len = len(info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437",
                                                    "surrogateescape"))
            start = info.header_offset
            spans.append((start, start + 30 + name_len + info.compress_size, info.orig_filename))
        spans.sort()
        end_of_data = getattr(self._zf, "start_dir", None)
        previous_end, previous = 0, ""
        for start, end, name in spans:
            if start < previous_end:
                raise ArchiveError(f"{self.label}: members {_q(previous)} and {_q(name)} overlap in the archive "
                                   "(a zip bomb's shared data; refusing the package)")
            previous_end, previous = end, name
        if spans and end_of_data is not None and previous_end > end_of_data:
            raise ArchiveError(f"{self.label}: member {_q(previous)} overlaps the central directory "
                               "(a zip bomb or a damaged archive; refusing the package)")

    def declared_size(self, member: str) -> int | None:
        return self.entries[member].file_size

    def open(self, member: str) -> IO[bytes]:
        info = self.entries[member]
        q = _q(member)
        if info.flag_bits & 0x1:
            raise ArchiveError(f"{self.label}: member {q} is encrypted")
        if info.compress_type not in _SUPPORTED_COMPRESSION:
            raise ArchiveError(
                f"{self.label}: member {q} uses unsupported compression method {info.compress_type} "
                "(only stored and deflated members are read)"
            )
        return self._zf.open(info)

    def close(self) -> None:
        zf = getattr(self, "_zf", None)
        if zf is not None:
            zf.close()
        fp = getattr(self, "_fp", None)
        if fp is not None:
            fp.close()


def _count_central_records(fp: BinaryIO, size: int, cap: int) -> int:
    """Central-directory records in the zip, counted up to cap + 1 without building any object.

    Returns 0 when the end records cannot be found: zipfile then reports the archive as broken.
    """
    tail_len = min(size, _EOCD.size + 0xFFFF)
    fp.seek(size - tail_len)
    tail = fp.read(tail_len)
    # Same search order as zipfile: a record ending the file without a comment first, then the last
    # signature in the tail; both readers must agree on which central directory they walk.
    if tail[-_EOCD.size:-_EOCD.size + 4] == b"PK\x05\x06" and tail[-2:] == b"\0\0":
        at = len(tail) - _EOCD.size
    else:
        at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + _EOCD.size > len(tail):
        return 0
    eocd_pos = size - tail_len + at
    size_cd = _EOCD.unpack_from(tail, at)[5]
    cd_end = eocd_pos
    if eocd_pos >= _EOCD64_LOCATOR.size + _EOCD64.size:
        fp.seek(eocd_pos - _EOCD64_LOCATOR.size)
        if fp.read(4) == b"PK\x06\x07":
            fp.seek(eocd_pos - _EOCD64_LOCATOR.size - _EOCD64.size)
            rec = fp.read(_EOCD64.size)
            if rec[:4] == b"PK\x06\x06":
                size_cd = _EOCD64.unpack(rec)[8]
                cd_end = eocd_pos - _EOCD64_LOCATOR.size - _EOCD64.size
    start = cd_end - size_cd  # as zipfile computes it: data prepended to the zip shifts all offsets
    if start < 0:
        return 0
    fp.seek(start)
    count = pos = 0
    while pos + _CENTRAL.size <= size_cd and count <= cap:
        head = fp.read(_CENTRAL.size)
        if len(head) < _CENTRAL.size or head[:4] != b"PK\x01\x02":
            break
        name_len, extra_len, comment_len = struct.unpack_from("<3H", head, 28)
        skip = name_len + extra_len + comment_len
        fp.seek(skip, io.SEEK_CUR)
        pos += _CENTRAL.size + skip
        count += 1
    return count


class _DirSource:
    """Regular files under an extracted package folder, walked without following any link."""

    def __init__(self, path: str, label: str, limits: Limits, deadline: Deadline,
                 marker: tuple[str, ...] = AOTI_DIR) -> None:
        self.label = label
        self._marker = marker
        self.entries: dict[str, str] = {}  # member -> absolute path found by the walk (never built from a name)
        self.members: list[str] = []
        self.symlinks: list[str] = []
        self._limits = limits
        self._deadline = deadline
        self._walked = 0
        base = os.path.realpath(path)
        root_dir = self._find_root(base)
        self._root_real = root_dir
        name = os.path.basename(root_dir)
        self._walk(root_dir, _display_name(name) + "/" if name else "", 0)

    def _find_root(self, base: str) -> str:
        """The package folder: `base` itself when it holds data/aotinductor/, else its one child that does."""
        if _is_real_dir(base, *self._marker):
            return base
        candidates = []
        try:
            with os.scandir(base) as it:
                for entry in it:
                    self._count_entry()
                    if entry.is_dir(follow_symlinks=False) and _is_real_dir(entry.path, *self._marker):
                        candidates.append(entry.path)
        except OSError as exc:
            raise ArchiveError(f"{self.label}: cannot list the directory: {_reason(exc)}") from None
        if not candidates:
            if self._marker != AOTI_DIR:
                raise ArchiveError(f"{self.label}: no {'/'.join(self._marker)}/ folder in the directory")
            if self._walked == 0:
                raise ArchiveError(f"{self.label}: empty directory (no AOTInductor model found)")
            raise ArchiveError(f"{self.label}: no AOTInductor model found (no data/aotinductor/<model>/ folder)")
        if len(candidates) > 1:
            names = ", ".join(_q(_display_name(os.path.basename(c))) for c in sorted(candidates)[:5])
            raise ArchiveError(f"{self.label}: holds {len(candidates)} extracted packages ({names}); point at one of them")
        return candidates[0]

    def _count_entry(self) -> None:
        self._walked += 1
        if self._walked > self._limits.max_members:
            raise ArchiveError(
                f"{self.label}: more than {self._limits.max_members} entries under the directory "
                "(the member-count limit)"
            )

    def _walk(self, folder: str, prefix: str, depth: int) -> None:
        if depth > self._limits.max_depth:
            raise ArchiveError(f"{self.label}: folders nested deeper than {self._limits.max_depth} levels")
        self._deadline.check("listing members")
        entries = []
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    self._count_entry()  # counted while listing: a folder of millions stops early
                    entries.append(entry)
        except OSError as exc:
            raise ArchiveError(f"{self.label}: cannot list {_q(prefix or '.')}: {_reason(exc)}") from None
        for entry in sorted(entries, key=lambda e: e.name):
            member = prefix + _display_name(entry.name)
            if entry.is_symlink():
                self._add(member, entry.path)
                self.symlinks.append(member)
            elif entry.is_dir(follow_symlinks=False):
                self._walk(entry.path, member + "/", depth + 1)
            elif entry.is_file(follow_symlinks=False):
                self._add(member, entry.path)
            # FIFOs, sockets and devices are skipped: opening one could block or never end.

    def _add(self, member: str, full: str) -> None:
        if member in self.entries:  # two file names that only differ in undecodable bytes
            raise ArchiveError(f"{self.label}: duplicate member {_q(member)} (the folder is ambiguous; refusing it)")
        self.entries[member] = full
        self.members.append(member)

    def declared_size(self, member: str) -> int | None:
        try:
            return os.lstat(self.entries[member]).st_size
        except OSError:
            return None  # open() reports the problem

    def open(self, member: str) -> BinaryIO:
        full = self.entries[member]
        q = _q(member)
        real = os.path.realpath(full)
        if real == self._root_real or os.path.commonpath([real, self._root_real]) != self._root_real:
            # Only reachable if the tree changed since the walk (a folder swapped for a link).
            raise ArchiveError(f"{self.label}: member {q} resolves outside the package folder")
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(full, flags)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ArchiveError(f"{self.label}: member {q} is not a regular file")
            return io.FileIO(fd, "rb", closefd=True)
        except BaseException:
            os.close(fd)
            raise

    def close(self) -> None:
        pass  # nothing is held open between reads


# --------------------------------------------------------------------------------------------
# Names, models and messages.


_DRIVE = re.compile(r"^[A-Za-z]:")


def _normalize_member(name: str, label: str) -> str | None:
    """A zip member name as a clean relative posix name; None for folder entries.

    Names that are absolute or climb with `..` (either separator, as torch's extraction on another
    OS would read them) are refused: they are never used as paths here, but a package carrying them
    is hostile to whatever extracts it next.
    """
    pieces = re.split(r"[\\/]", name)
    if name.startswith(("/", "\\")) or _DRIVE.match(name) or ".." in pieces:
        raise ArchiveError(f"{label}: member {_q(name)} escapes the archive root (absolute or '..' path); refusing the package")
    if name.endswith("/"):
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    return "/".join(parts) or None


def _discover_models(members: list[str], label: str) -> tuple[str, list[ModelMembers]]:
    """Every `[<root>/]data/aotinductor/<model>/` folder, with its members classified."""
    by_prefix: dict[str, list[str]] = {}
    roots: set[str] = set()
    for member in members:
        parts = member.split("/")
        for depth in (0, 1):  # no root folder (old archives) or exactly one
            if len(parts) >= depth + 4 and tuple(parts[depth:depth + 2]) == AOTI_DIR:
                root = "".join(p + "/" for p in parts[:depth])
                roots.add(root)
                prefix = root + "/".join(AOTI_DIR) + "/" + parts[depth + 2] + "/"
                by_prefix.setdefault(prefix, []).append(member)
                break
    if not by_prefix:
        hint = ""
        if any(re.search(r"(^|/)models/[^/]+\.json$", m) for m in members):
            # A torch.export.save archive: the user probably meant the package built from it.
            hint = "; this looks like an exported program (torch.export.save): pass it with --exported-program"
        raise NoModelError(f"{label}: no AOTInductor model found (no data/aotinductor/<model>/ folder){hint}")
    if len(roots) > 1:
        shown = ", ".join(_q(r or "/") for r in sorted(roots))
        raise ArchiveError(f"{label}: models under more than one archive root ({shown}); refusing an ambiguous package")
    root = roots.pop()
    models = [_classify(prefix, files) for prefix, files in sorted(by_prefix.items())]
    return root, models


def _classify(prefix: str, files: list[str]) -> ModelMembers:
    model = ModelMembers(name=prefix.rstrip("/").rsplit("/", 1)[-1], prefix=prefix)
    for member in sorted(files):
        base = member.rsplit("/", 1)[-1]
        nested = "/" in member[len(prefix):]
        if base.endswith(BINARY_SUFFIXES):
            model.binaries.append(member)
        elif nested:
            model.other.append(member)
        elif base.endswith(".wrapper.cpp"):
            model.wrappers.append(member)
        elif base.endswith(".kernel.cpp"):
            model.kernels.append(member)
        elif base.endswith("_metadata.json"):
            model.metadata.append(member)
        elif base == "CMakeLists.txt" and model.cmake is None:
            model.cmake = member
        else:
            model.other.append(member)
    model.metadata.sort(key=lambda m: (not m.endswith("wrapper_metadata.json"), m))
    return model


def _is_opaque(relative: str) -> bool:
    """Binary by suffix, or a payload inside a weights/constants folder (its JSON configs are text)."""
    if relative.rsplit("/", 1)[-1].endswith(BINARY_SUFFIXES):
        return True
    return relative.startswith(OPAQUE_DIRS) and not relative.endswith(".json")


def _is_real_dir(base: str, *parts: str) -> bool:
    """`base/parts...` is a folder reached without following any link."""
    path = base
    for part in parts:
        path = os.path.join(path, part)
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return False
        except OSError:
            return False
    return True


def _display_name(name: str) -> str:
    """A file name as text: undecodable bytes (surrogate escapes) become U+FFFD."""
    return os.fsencode(name).decode("utf-8", errors="replace")


def _refuse_case_collisions(members: list[str], label: str) -> None:
    """Refuse two members whose names differ only in case (`a.wrapper.cpp`, `A.wrapper.cpp`):
    extracted on a case-insensitive file system (macOS, Windows; what `aoti_load_package` does) one
    replaces the other, so which one runs is not the one analysed. As for duplicates, the archive is
    ambiguous."""
    seen: dict[str, str] = {}
    for name in members:
        folded = name.casefold()
        other = seen.setdefault(folded, name)
        if other != name:
            raise ArchiveError(
                f"{label}: members {_q(other)} and {_q(name)} differ only in case (extracted on a "
                "case-insensitive file system one replaces the other: the archive is ambiguous; refusing it)"
            )


def _q(name: str) -> str:
    """A name quoted for a message: control characters (newlines too) escaped."""
    return repr(name)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror[0].lower() + exc.strerror[1:]
    text = str(exc)
    return text or type(exc).__name__


def text_bytes_hint(path: str | os.PathLike[str]) -> int:
    """The inflated size of the largest C++ member a package's zip directory declares (0 for a
    folder or anything unreadable): what a check of it will hold, before it is opened. A hint for
    scheduling only (the declared size may lie; reading still enforces the limits)."""
    if not os.path.isfile(path):
        return 0
    try:  # the bounded reader: a hostile central directory costs the parent its pre-count only
        source = _ZipSource(os.fspath(path), "package", Limits(), Deadline(Limits().timeout_s))
    except ArchiveError:
        return 0
    try:
        return max((i.file_size for n, i in source.entries.items() if n.endswith(".cpp")), default=0)
    finally:
        source.close()
